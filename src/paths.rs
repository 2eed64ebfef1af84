//! Paths: resolution through symlinks, and matching against the scope's patterns.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::os::unix::ffi::OsStrExt;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::scope::Paths;

/// Most symlinks followed while resolving one path (as the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// A path as written (normalized lexically) and where it really leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Absolute, `.` and `..` removed lexically.
    pub literal: PathBuf,
    /// Every existing symlink followed; the part that does not exist yet kept as written.
    pub target: PathBuf,
}

/// Resolves an absolute path through symlinks as far as it exists (like `realpath -m`,
/// but `..` after a symlink goes to the parent of the link's target, as the kernel does).
pub fn resolve(path: &Path) -> Resolved {
    let known = RESOLVED.with(|r| r.borrow().as_ref().and_then(|m| m.get(key(path)).cloned()));
    if let Some(r) = known {
        return r;
    }
    let literal = crate::shell::normalize(path);
    let mut links = 0;
    let target = physical(path, &mut links).unwrap_or_else(|| literal.clone());
    let r = Resolved { literal, target };
    RESOLVED.with(|m| {
        if let Some(m) = m.borrow_mut().as_mut() {
            m.insert(key(path).to_vec(), r.clone());
        }
    });
    r
}

/// What one `lstat` (and `readlink`) of a path found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Probe {
    Missing,
    Present,
    /// A symlink, with its target (`None`: unreadable).
    Link(Option<PathBuf>),
}

/// rustc's Fx hash, for the memo tables of one decision: a few dozen paths, hashed on every
/// probe, where SipHash and `Path`'s component-wise hashing cost more than the lookups save.
/// (A command is at most 64 KiB, so crafted collisions can only slow one decision.)
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A memo table keyed by a path's bytes (two spellings of one path are two entries: a
/// second probe, never a wrong answer).
type PathMemo<V> = HashMap<Vec<u8>, V, std::hash::BuildHasherDefault<FxHasher>>;

fn key(path: &Path) -> &[u8] {
    path.as_os_str().as_bytes()
}

thread_local! {
    /// The probes of the decision under way on this thread (see [`memo`]).
    static PROBES: RefCell<Option<PathMemo<Probe>>> = const { RefCell::new(None) };
    /// The paths it resolved (the working directory is resolved for every command).
    static RESOLVED: RefCell<Option<PathMemo<Resolved>>> = const { RefCell::new(None) };
}

/// While the returned guard lives, this thread remembers what it found on the file system:
/// one decision asks about each path once and sees one state of the file system. Nothing
/// is remembered from one decision to the next.
pub fn memo() -> Memo {
    PROBES.with(|p| {
        let mut p = p.borrow_mut();
        let outer = p.is_none();
        if outer {
            *p = Some(PathMemo::default());
            RESOLVED.with(|r| *r.borrow_mut() = Some(PathMemo::default()));
        }
        Memo { outer }
    })
}

/// The guard of [`memo`]; the outermost one forgets on drop.
pub struct Memo {
    outer: bool,
}

impl Drop for Memo {
    fn drop(&mut self) {
        if self.outer {
            PROBES.with(|p| *p.borrow_mut() = None);
            RESOLVED.with(|r| *r.borrow_mut() = None);
        }
    }
}

fn probe(path: &Path) -> Probe {
    let known = PROBES.with(|p| p.borrow().as_ref().and_then(|m| m.get(key(path)).cloned()));
    if let Some(k) = known {
        return k;
    }
    let found = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Probe::Link(std::fs::read_link(path).ok()),
        Ok(_) => Probe::Present,
        Err(_) => Probe::Missing,
    };
    PROBES.with(|p| {
        if let Some(m) = p.borrow_mut().as_mut() {
            m.insert(key(path).to_vec(), found.clone());
        }
    });
    found
}

/// Whether something (a file, directory or symlink, dangling or not) is at `path`.
pub fn exists(path: &Path) -> bool {
    probe(path) != Probe::Missing
}

fn physical(path: &Path, links: &mut usize) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    let mut pending = parts(path);
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match probe(&next) {
            Probe::Link(link) => {
                *links += 1;
                if *links > MAX_LINKS {
                    return None;
                }
                let link = link?;
                if link.is_absolute() {
                    out = PathBuf::from("/");
                }
                let mut expanded = parts(&link);
                expanded.extend(pending.drain(..));
                pending = expanded;
            }
            _ => out = next,
        }
    }
    Some(out)
}

/// The normal and `..` components of a path (`.` and the root dropped).
fn parts(p: &Path) -> VecDeque<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

/// Expands `~`, `${project_root}` and a trailing `/` in a scope pattern.
pub fn expand_pattern(pattern: &str, home: Option<&Path>, project_root: Option<&Path>) -> String {
    crate::config::expand_pattern(pattern, home, project_root)
}

/// The patterns of a scope, compiled.
#[derive(Debug, Clone)]
pub struct Matcher {
    read: Set,
    write: Set,
    deny: Set,
}

#[derive(Debug, Clone)]
struct Set {
    /// The patterns matched without a regex.
    simple: Simple,
    /// The other patterns.
    globs: GlobSet,
    /// The expanded patterns, in order, for evidence.
    patterns: Vec<String>,
    /// Which expanded pattern each glob of `globs` came from.
    origin: Vec<usize>,
}

impl Set {
    fn new(patterns: &[String], home: Option<&Path>, root: Option<&Path>) -> Result<Set, String> {
        Set::build(patterns, home, root, true)
    }

    /// With `shortcuts` false every pattern goes to globset (the reference of the tests).
    fn build(patterns: &[String], home: Option<&Path>, root: Option<&Path>, shortcuts: bool) -> Result<Set, String> {
        let mut b = GlobSetBuilder::new();
        let mut simple = Simple::with_capacity(patterns.len());
        let mut expanded = Vec::new();
        let mut origin = Vec::new();
        for (i, p) in patterns.iter().enumerate() {
            let mut e = expand_pattern(p, home, root);
            if !e.starts_with('/') && !e.starts_with("**") {
                match root {
                    Some(r) => e = format!("{}/{}", r.to_string_lossy().trim_end_matches('/'), e),
                    None => e = format!("**/{e}"),
                }
            }
            // `dir/**` also covers `dir` itself.
            let mut variants = vec![e.clone()];
            if let Some(base) = e.strip_suffix("/**") {
                if !base.is_empty() {
                    variants.push(base.to_string());
                }
            }
            for v in variants {
                if shortcuts && simple.add(&v, i) {
                    continue;
                }
                let g = glob(&v).map_err(|err| format!("pattern `{p}`: {err}"))?;
                b.add(g);
                origin.push(i);
            }
            expanded.push(e);
        }
        let globs = b.build().map_err(|e| e.to_string())?;
        Ok(Set { simple, globs, patterns: expanded, origin })
    }

    /// The first pattern that matches `path`.
    fn first_match(&self, path: &Path) -> Option<&str> {
        let mut best = self.simple.first(path.as_os_str().as_encoded_bytes());
        if !self.globs.is_empty() {
            for g in self.globs.matches(path) {
                if let Some(&i) = self.origin.get(g) {
                    best = Some(best.map_or(i, |b| b.min(i)));
                }
            }
        }
        best.and_then(|i| self.patterns.get(i).map(String::as_str))
    }
}

/// Patterns of the common shapes, matched with hash lookups instead of a regex, with the
/// answers globset gives them (`literal_separator`, `backslash_escape`; a newline is an
/// ordinary character): compiling 1,000 patterns into a regex set takes milliseconds, these
/// take microseconds. The tests hold them to globset.
#[derive(Debug, Clone, Default)]
struct Simple {
    /// `LIT`: the whole path.
    exact: HashMap<Vec<u8>, usize>,
    /// `DIR/**`: anything below DIR.
    below: HashMap<Vec<u8>, usize>,
    /// `**/NAME`: a last component (NAME has no `/`).
    name: HashMap<Vec<u8>, usize>,
    /// `**/NAME/**`: anything below a component NAME.
    under_name: HashMap<Vec<u8>, usize>,
    /// `DIR/F` where F is literal text and single `*`s: a file of DIR. The parts of F
    /// between the stars, and the pattern.
    in_dir: HashMap<Vec<u8>, Vec<(Vec<Vec<u8>>, usize)>>,
}

/// Text with nothing globset treats specially.
fn literal(s: &str) -> bool {
    !s.is_empty() && !s.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b'\\'))
}

fn keep_min(map: &mut HashMap<Vec<u8>, usize>, key: &str, i: usize) {
    let slot = map.entry(key.as_bytes().to_vec()).or_insert(i);
    *slot = (*slot).min(i);
}

impl Simple {
    /// Room for `n` patterns of each shape: no table grows while a scope is compiled.
    fn with_capacity(n: usize) -> Simple {
        Simple {
            exact: HashMap::with_capacity(n),
            below: HashMap::with_capacity(n),
            name: HashMap::with_capacity(n),
            under_name: HashMap::with_capacity(n),
            in_dir: HashMap::with_capacity(n),
        }
    }

    /// Takes the pattern `v` (number `i`) when it has one of the simple shapes.
    fn add(&mut self, v: &str, i: usize) -> bool {
        if literal(v) {
            keep_min(&mut self.exact, v, i);
            return true;
        }
        if let Some(rest) = v.strip_prefix("**/") {
            if literal(rest) && !rest.contains('/') {
                keep_min(&mut self.name, rest, i);
                return true;
            }
            if let Some(n) = rest.strip_suffix("/**") {
                if literal(n) && !n.contains('/') {
                    keep_min(&mut self.under_name, n, i);
                    return true;
                }
            }
            return false;
        }
        if let Some(dir) = v.strip_suffix("/**") {
            if literal(dir) {
                keep_min(&mut self.below, dir, i);
                return true;
            }
            return false;
        }
        if let Some((dir, file)) = v.rsplit_once('/') {
            let starred = !file.is_empty() && !file.contains("**") && literal(&file.replace('*', ""));
            if literal(dir) && starred {
                let parts = file.split('*').map(|p| p.as_bytes().to_vec()).collect();
                self.in_dir.entry(dir.as_bytes().to_vec()).or_default().push((parts, i));
                return true;
            }
        }
        false
    }

    /// The smallest pattern number that matches the path `p`.
    fn first(&self, p: &[u8]) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut hit = |i: usize| best = Some(best.map_or(i, |b| b.min(i)));
        if let Some(&i) = self.exact.get(p) {
            hit(i);
        }
        let last_slash = p.iter().rposition(|&b| b == b'/');
        if !self.name.is_empty() {
            let start = last_slash.map_or(0, |k| k + 1);
            if let Some(&i) = self.name.get(&p[start..]) {
                hit(i);
            }
        }
        if let Some(k) = last_slash {
            if let Some(list) = self.in_dir.get(&p[..k]) {
                let file = &p[k + 1..];
                for (parts, i) in list {
                    if star_match(parts, file) {
                        hit(*i);
                    }
                }
            }
        }
        if !self.below.is_empty() || !self.under_name.is_empty() {
            let mut start = 0;
            for (j, _) in p.iter().enumerate().filter(|(_, &b)| b == b'/') {
                if let Some(&i) = self.below.get(&p[..j]) {
                    hit(i);
                }
                if let Some(&i) = self.under_name.get(&p[start..j]) {
                    hit(i);
                }
                start = j + 1;
            }
        }
        best
    }
}

/// Whether `name` is the parts joined by runs of anything (`*`, which matches no `/`;
/// `name` holds none).
fn star_match(parts: &[Vec<u8>], name: &[u8]) -> bool {
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else { return false };
    if parts.len() == 1 {
        return name == first.as_slice();
    }
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    // Leftmost match of each middle part: the inner parts are not empty (no `**`).
    for part in &parts[1..parts.len() - 1] {
        match rest.windows(part.len()).position(|w| w == part.as_slice()) {
            Some(at) if !part.is_empty() => rest = &rest[at + part.len()..],
            _ => return false,
        }
    }
    true
}

fn glob(p: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(p).literal_separator(true).backslash_escape(true).build()
}

/// What a path may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// The verdict on one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathVerdict {
    /// In scope, by this pattern.
    Allowed(String),
    /// Matches a deny pattern (the literal path or its target).
    Denied(String),
    /// Not covered by any pattern of the needed access.
    OutOfScope,
}

impl Matcher {
    pub fn new(paths: &Paths, home: Option<&Path>, project_root: Option<&Path>) -> Result<Matcher, String> {
        Ok(Matcher {
            read: Set::new(&paths.read, home, project_root)?,
            write: Set::new(&paths.write, home, project_root)?,
            deny: Set::new(&paths.deny, home, project_root)?,
        })
    }

    /// Judges a resolved path for an access: deny wins (literal or target), then the target
    /// must match a write pattern (write) or a read or write pattern (read, B07).
    pub fn check(&self, r: &Resolved, access: Access) -> PathVerdict {
        for p in [&r.literal, &r.target] {
            if let Some(d) = self.deny.first_match(p) {
                return PathVerdict::Denied(d.to_string());
            }
        }
        if let Some(w) = self.write.first_match(&r.target) {
            return PathVerdict::Allowed(w.to_string());
        }
        if access == Access::Read {
            if let Some(rd) = self.read.first_match(&r.target) {
                return PathVerdict::Allowed(rd.to_string());
            }
        }
        PathVerdict::OutOfScope
    }

    /// The patterns that grant an access (for messages: `allowed_patterns`).
    pub fn patterns_for(&self, access: Access) -> Vec<String> {
        match access {
            Access::Write => self.write.patterns.clone(),
            Access::Read => {
                let mut v = self.read.patterns.clone();
                v.extend(self.write.patterns.iter().cloned());
                v
            }
        }
    }
}

/// Files that are safe to read or write whatever the scope.
pub fn is_safe_device(p: &Path, access: Access) -> bool {
    let s = p.to_string_lossy();
    match access {
        Access::Write => matches!(&*s, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2"),
        Access::Read => matches!(&*s, "/dev/null" | "/dev/zero" | "/dev/urandom" | "/dev/random" | "/dev/stdin" | "/dev/fd/0"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_follows_symlinks_and_dotdot_after_link() {
        let d = std::env::temp_dir().join(format!("gs-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("repo/sub")).unwrap();
        std::fs::create_dir_all(d.join("home/.ssh")).unwrap();
        std::os::unix::fs::symlink(d.join("home"), d.join("repo/link")).unwrap();
        std::os::unix::fs::symlink("sub", d.join("repo/rel")).unwrap();
        let real = std::fs::canonicalize(&d).unwrap();
        let cases = [
            ("repo/link/.ssh/id_rsa", "home/.ssh/id_rsa"),
            ("repo/link/../repo/x", "repo/x"),
            ("repo/rel/new/file", "repo/sub/new/file"),
            ("repo/sub/../../home", "home"),
            ("repo/missing/../x", "repo/x"),
        ];
        for (input, want) in cases {
            let r = resolve(&real.join(input));
            assert_eq!(r.target, real.join(want), "{input}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[cfg(test)]
mod memo_tests {
    use super::*;

    /// Within one decision a path is looked at once; the next decision looks again, so a
    /// symlink moved in between is followed to its new target.
    #[test]
    fn probes_are_remembered_within_one_decision_only() {
        let d = std::env::temp_dir().join(format!("gs-memo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("inside")).unwrap();
        std::fs::create_dir_all(d.join("outside")).unwrap();
        let d = std::fs::canonicalize(&d).unwrap();
        std::os::unix::fs::symlink(d.join("inside"), d.join("link")).unwrap();
        let first = {
            let _m = memo();
            let a = resolve(&d.join("link/f")).target;
            std::fs::remove_file(d.join("link")).unwrap();
            std::os::unix::fs::symlink(d.join("outside"), d.join("link")).unwrap();
            // Same decision: the same answer.
            assert_eq!(resolve(&d.join("link/f")).target, a);
            a
        };
        assert_eq!(first, d.join("inside/f"));
        assert_eq!(resolve(&d.join("link/f")).target, d.join("outside/f"));
        {
            let _m = memo();
            assert_eq!(resolve(&d.join("link/f")).target, d.join("outside/f"));
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}

#[cfg(test)]
mod matcher_tests {
    use super::*;

    fn m(read: &[&str], write: &[&str], deny: &[&str]) -> Matcher {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        Matcher::new(&Paths { read: v(read), write: v(write), deny: v(deny) }, Some(Path::new("/home/u")), Some(Path::new("/p"))).unwrap()
    }

    fn check(m: &Matcher, p: &str, a: Access) -> PathVerdict {
        m.check(&Resolved { literal: PathBuf::from(p), target: PathBuf::from(p) }, a)
    }

    #[test]
    fn b06_b07_dir_pattern_covers_the_dir_itself_and_write_implies_read() {
        let m = m(&["/p/**"], &["/p/out/**"], &[]);
        assert_eq!(check(&m, "/p", Access::Read), PathVerdict::Allowed("/p/**".into()));
        assert_eq!(check(&m, "/p/a/b", Access::Read), PathVerdict::Allowed("/p/**".into()));
        assert_eq!(check(&m, "/p/out", Access::Read), PathVerdict::Allowed("/p/out/**".into()));
        assert_eq!(check(&m, "/p/a", Access::Write), PathVerdict::OutOfScope);
        assert_eq!(check(&m, "/pq", Access::Read), PathVerdict::OutOfScope);
    }

    #[test]
    fn b10_deny_wins_on_literal_or_target() {
        let m = m(&["/p/**"], &["/p/**"], &["**/.env", "~/.ssh/**"]);
        assert_eq!(check(&m, "/p/.env", Access::Read), PathVerdict::Denied("**/.env".into()));
        let r = Resolved { literal: PathBuf::from("/p/link"), target: PathBuf::from("/home/u/.ssh/id") };
        assert_eq!(m.check(&r, Access::Read), PathVerdict::Denied("/home/u/.ssh/**".into()));
    }

    #[test]
    fn patterns_expand_home_root_and_relative() {
        let m = m(&["src/", "${project_root}/doc/*.md", "~/notes/**"], &[], &[]);
        assert_eq!(check(&m, "/p/src/a/b", Access::Read), PathVerdict::Allowed("/p/src/**".into()));
        assert_eq!(check(&m, "/p/doc/a.md", Access::Read), PathVerdict::Allowed("/p/doc/*.md".into()));
        assert_eq!(check(&m, "/p/doc/x/a.md", Access::Read), PathVerdict::OutOfScope, "* stays in one directory");
        assert_eq!(check(&m, "/home/u/notes/x", Access::Read), PathVerdict::Allowed("/home/u/notes/**".into()));
    }

    /// The patterns matched without globset give globset's answers (the first matching
    /// pattern) on every path of up to three components from a set chosen to hit the
    /// edges: newlines, dots, empty components, prefixes and suffixes of the names.
    #[test]
    fn simple_patterns_answer_as_globset() {
        let names = ["a", ".env", "x.txt", "a\nb", "é"];
        let mut pats: Vec<String> = Vec::new();
        for n in names {
            for f in ["/{n}", "/{n}/**", "**/{n}", "**/{n}/**", "/a/{n}", "/a/{n}/**", "/a\nb/{n}/**"] {
                pats.push(f.replace("{n}", n));
            }
        }
        for f in ["*", "*.txt", "x*", "*a*", "x*t*t", "*.e*v", "a*\nb*", "*a*a*"] {
            for d in ["/a", "", "/a\nb", "/a/b"] {
                pats.push(format!("{d}/{f}"));
            }
        }
        pats.extend(["/a/**/b", "/[ab]/x", "**/*.txt", "/a/?", "**", "/**", "a", "x.txt/**"].map(String::from));
        let comps = ["a", "b", ".env", "x.txt", "a\nb", "é", "xay", "", "xtt", "aa", "a.ev", "x.txtx"];
        let mut paths = vec![String::from("/"), String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..3 {
            frontier = frontier.iter().flat_map(|p| comps.iter().map(move |c| format!("{p}/{c}"))).collect();
            paths.extend(frontier.iter().cloned());
        }
        paths.extend(["a", "a/b", "a\nb", "x.txt"].map(String::from));
        let mut reversed = pats.clone();
        reversed.reverse();
        let mut hits = 0;
        for list in [&pats, &reversed] {
            let fast = Set::build(list, None, None, true).unwrap();
            let reference = Set::build(list, None, None, false).unwrap();
            assert!(fast.globs.len() < 20, "most patterns are simple: {}", fast.globs.len());
            for p in &paths {
                let want = reference.first_match(Path::new(p));
                assert_eq!(fast.first_match(Path::new(p)), want, "{p:?}");
                hits += usize::from(want.is_some());
            }
        }
        assert!(hits > 1000, "{hits}");
        // One pattern at a time too: no other pattern hides a wrong answer.
        for pat in &pats {
            let one = std::slice::from_ref(pat);
            let fast = Set::build(one, None, None, true).unwrap();
            let reference = Set::build(one, None, None, false).unwrap();
            for p in &paths {
                assert_eq!(fast.first_match(Path::new(p)), reference.first_match(Path::new(p)), "{pat:?} on {p:?}");
            }
        }
    }

    #[test]
    fn bad_pattern_is_an_error() {
        let e = Matcher::new(&Paths { read: vec!["/p/[".into()], write: vec![], deny: vec![] }, None, None).unwrap_err();
        assert!(e.contains("/p/["), "{e}");
    }

    #[test]
    fn safe_devices() {
        assert!(is_safe_device(Path::new("/dev/null"), Access::Write));
        assert!(!is_safe_device(Path::new("/dev/sda"), Access::Write));
        assert!(!is_safe_device(Path::new("/dev/zero"), Access::Write));
        assert!(is_safe_device(Path::new("/dev/urandom"), Access::Read));
    }
}
