//! Paths: matching against the scope's patterns, and the protected paths; resolution
//! through symlinks is [`crate::resolve`]'s (re-exported here).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::policy::git::config as gitconfig;
use crate::scope::Paths;

pub use crate::resolve::{exists, is_dir, memo, probes_asked, resolve, Memo, Resolved};

/// Expands `~`, `${project_root}` and a trailing `/` in a scope pattern.
pub fn expand_pattern(pattern: &str, home: Option<&Path>, project_root: Option<&Path>) -> String {
    crate::scope::config::expand_pattern(pattern, home, project_root)
}

/// The patterns of a scope, compiled.
#[derive(Debug, Clone)]
pub struct Matcher {
    read: Set,
    write: Set,
    deny: Set,
    /// The patterns a read may match (the read ones, then the write ones not among them),
    /// each once: what a refusal lists, made once.
    readable: Vec<String>,
    /// Files and directories that hold rules (scope documents, profiles, the trust list):
    /// never written, whatever the scope says. Each as given and where it leads.
    protected: Vec<PathBuf>,
    /// The home directory and the project root: where git's configuration is looked for
    /// ([`gitconfig`]), which is protected like the paths above.
    home: Option<PathBuf>,
    root: Option<PathBuf>,
}

/// The name of the scope documents the upward search finds: a file so named anywhere is
/// never written by a tool (the search could pick any of them).
pub const SCOPE_FILE_NAME: &str = "scope.yml";

/// Whether `p` is named like a scope document (`scope.yml`, in any case: a case-insensitive
/// file system finds `SCOPE.YML` under that name).
pub fn named_like_scope_document(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.eq_ignore_ascii_case(SCOPE_FILE_NAME))
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
    fn build(
        patterns: &[String],
        home: Option<&Path>,
        root: Option<&Path>,
        shortcuts: bool,
    ) -> Result<Set, String> {
        let mut expanded = Vec::with_capacity(patterns.len());
        for p in patterns {
            let mut e = expand_pattern(p, home, root);
            if !e.starts_with('/') && !e.starts_with("**") {
                match root {
                    Some(r) => e = format!("{}/{}", r.to_string_lossy().trim_end_matches('/'), e),
                    None => e = format!("**/{e}"),
                }
            }
            expanded.push(e);
        }
        let mut simple = if shortcuts {
            Simple::with_room(&expanded)
        } else {
            Simple::default()
        };
        let mut b = GlobSetBuilder::new();
        let mut origin = Vec::new();
        for (i, (p, e)) in patterns.iter().zip(&expanded).enumerate() {
            // `DIR/**` stands for `DIR` too, and `**/NAME/**` for `**/NAME`: shapes known
            // without another look at the pattern.
            match Shape::of(e).filter(|_| shortcuts) {
                Some(Shape::Below(dir)) => {
                    simple.insert_below_and_whole(false, dir, i);
                    continue;
                }
                Some(Shape::UnderName(name)) => {
                    simple.insert_below_and_whole(true, name, i);
                    continue;
                }
                _ => {}
            }
            for v in variants(e) {
                if let Some(shape) = Shape::of(v).filter(|_| shortcuts) {
                    simple.insert(shape, i);
                    continue;
                }
                let g = glob(v).map_err(|err| format!("pattern `{p}`: {err}"))?;
                b.add(g);
                origin.push(i);
            }
        }
        let globs = b.build().map_err(|e| e.to_string())?;
        Ok(Set {
            simple,
            globs,
            patterns: expanded,
            origin,
        })
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
    /// By path: `LIT` (the whole path) and `DIR/**` (anything below DIR). One entry for
    /// both, as `DIR/**` also stands for `DIR`.
    paths: HashMap<Box<[u8]>, Slots>,
    /// By component name: `**/NAME` (a last component; NAME has no `/`) and `**/NAME/**`
    /// (anything below a component NAME), which also stands for `**/NAME`.
    names: HashMap<Box<[u8]>, Slots>,
    /// `DIR/F` where F is literal text and single `*`s: a file of DIR. F, and the pattern.
    in_dir: HashMap<Box<[u8]>, Vec<StarredFile>>,
    /// Which shapes are present: the lookups for the others are skipped.
    has: Has,
}

/// The smallest pattern number of each of the two shapes that share a key.
#[derive(Debug, Clone, Copy, Default)]
struct Slots {
    /// `LIT`, or `**/NAME`.
    whole: Option<usize>,
    /// `DIR/**`, or `**/NAME/**`.
    below: Option<usize>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Has {
    exact: bool,
    below: bool,
    name: bool,
    under_name: bool,
}

/// A file pattern with its stars, and the pattern's number.
type StarredFile = (Box<[u8]>, usize);

/// Text with nothing globset treats specially.
fn literal(s: &str) -> bool {
    !s.is_empty() && !s.bytes().any(special)
}

/// A byte globset treats specially. (A table: compiling a scope scans every pattern a few
/// times, and one load per byte is the cheapest test.)
fn special(b: u8) -> bool {
    const SPECIAL: [bool; 256] = {
        let mut t = [false; 256];
        let mut k = 0;
        let bytes = *b"*?[]{}\\";
        while k < bytes.len() {
            t[bytes[k] as usize] = true;
            k += 1;
        }
        t
    };
    SPECIAL[usize::from(b)]
}

/// Sets the slot of `key` that `pick` chooses to `i`, unless a smaller number is there.
fn keep_min(
    map: &mut HashMap<Box<[u8]>, Slots>,
    key: &str,
    i: usize,
    pick: fn(&mut Slots) -> &mut Option<usize>,
) {
    keep(pick(map.entry(Box::from(key.as_bytes())).or_default()), i);
}

fn keep(slot: &mut Option<usize>, i: usize) {
    *slot = Some(slot.map_or(i, |s| s.min(i)));
}

/// The patterns an expanded pattern stands for: itself, and for `dir/**` also `dir` (which
/// `dir/**` covers too).
fn variants(e: &str) -> impl Iterator<Item = &str> {
    std::iter::once(e).chain(e.strip_suffix("/**").filter(|b| !b.is_empty()))
}

/// A pattern of one of the shapes [`Simple`] matches without a regex, with its key.
#[derive(Debug, Clone, Copy)]
enum Shape<'p> {
    /// `LIT`.
    Exact(&'p str),
    /// `**/NAME`.
    Name(&'p str),
    /// `**/NAME/**`.
    UnderName(&'p str),
    /// `DIR/**`.
    Below(&'p str),
    /// `DIR/F`, F literal text and single stars.
    InDir(&'p str, &'p str),
}

impl<'p> Shape<'p> {
    /// The shape of the pattern `v`, when it has a simple one.
    fn of(v: &'p str) -> Option<Shape<'p>> {
        if let Some(rest) = v.strip_prefix("**/") {
            if literal(rest) && !rest.contains('/') {
                return Some(Shape::Name(rest));
            }
            if let Some(n) = rest.strip_suffix("/**") {
                if literal(n) && !n.contains('/') {
                    return Some(Shape::UnderName(n));
                }
            }
            return None;
        }
        // One scan for the first special byte answers whether `v`, or the part of it before
        // a `/`, is literal (a large scope's patterns are long, and all are looked at).
        let Some(first) = v.bytes().position(special) else {
            return (!v.is_empty()).then_some(Shape::Exact(v));
        };
        if let Some(dir) = v.strip_suffix("/**") {
            // DIR literal: not empty, and the suffix's `*` is the first special byte.
            return (!dir.is_empty() && first == dir.len() + 1).then_some(Shape::Below(dir));
        }
        if let Some((dir, file)) = v.rsplit_once('/') {
            // Literal text and single stars, at least one character besides the stars (what
            // `literal` says of `file` with its stars removed, without building that string).
            let starred = !file.contains("**")
                && file.bytes().any(|b| b != b'*')
                && file.bytes().all(|b| b == b'*' || !special(b));
            if !dir.is_empty() && first > dir.len() && starred {
                return Some(Shape::InDir(dir, file));
            }
        }
        None
    }
}

impl Simple {
    /// Room for the keys of `expanded`, so that no table grows while a scope is compiled.
    /// A pattern gives at most one key (`DIR/**` and `DIR`, `**/NAME/**` and `**/NAME`
    /// share theirs), to `names` only when it starts with `**/` and never otherwise.
    fn with_room(expanded: &[String]) -> Simple {
        let names = expanded.iter().filter(|e| e.starts_with("**/")).count();
        let others = expanded.len() - names;
        Simple {
            paths: HashMap::with_capacity(others),
            names: HashMap::with_capacity(names),
            in_dir: HashMap::with_capacity(others),
            has: Has::default(),
        }
    }

    /// Takes `DIR/**` and `DIR` (`names` false), or `**/NAME/**` and `**/NAME` (`names`
    /// true), as pattern number `i`: one key for both.
    fn insert_below_and_whole(&mut self, names: bool, key: &str, i: usize) {
        let map = if names {
            self.has.under_name = true;
            self.has.name = true;
            &mut self.names
        } else {
            self.has.below = true;
            self.has.exact = true;
            &mut self.paths
        };
        let slots = map.entry(Box::from(key.as_bytes())).or_default();
        keep(&mut slots.below, i);
        keep(&mut slots.whole, i);
    }

    /// Takes a pattern (number `i`) of a simple shape.
    fn insert(&mut self, shape: Shape<'_>, i: usize) {
        match shape {
            Shape::Exact(k) => {
                self.has.exact = true;
                keep_min(&mut self.paths, k, i, |s| &mut s.whole);
            }
            Shape::Below(k) => {
                self.has.below = true;
                keep_min(&mut self.paths, k, i, |s| &mut s.below);
            }
            Shape::Name(k) => {
                self.has.name = true;
                keep_min(&mut self.names, k, i, |s| &mut s.whole);
            }
            Shape::UnderName(k) => {
                self.has.under_name = true;
                keep_min(&mut self.names, k, i, |s| &mut s.below);
            }
            Shape::InDir(dir, file) => {
                self.in_dir
                    .entry(Box::from(dir.as_bytes()))
                    .or_default()
                    .push((Box::from(file.as_bytes()), i));
            }
        }
    }

    /// The smallest pattern number that matches the path `p`.
    fn first(&self, p: &[u8]) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut hit = |i: Option<usize>| {
            if let Some(i) = i {
                best = Some(best.map_or(i, |b| b.min(i)));
            }
        };
        if self.has.exact {
            hit(self.paths.get(p).and_then(|s| s.whole));
        }
        let last_slash = p.iter().rposition(|&b| b == b'/');
        if self.has.name {
            let start = last_slash.map_or(0, |k| k + 1);
            hit(self.names.get(&p[start..]).and_then(|s| s.whole));
        }
        if let Some(k) = last_slash {
            if let Some(list) = self.in_dir.get(&p[..k]) {
                let file = &p[k + 1..];
                for (pattern, i) in list {
                    if star_match(pattern, file) {
                        hit(Some(*i));
                    }
                }
            }
        }
        if self.has.below || self.has.under_name {
            let mut start = 0;
            for (j, _) in p.iter().enumerate().filter(|(_, &b)| b == b'/') {
                if self.has.below {
                    hit(self.paths.get(&p[..j]).and_then(|s| s.below));
                }
                if self.has.under_name {
                    hit(self.names.get(&p[start..j]).and_then(|s| s.below));
                }
                start = j + 1;
            }
        }
        best
    }
}

/// Whether `name` matches `pattern`, literal text and single `*`s (runs of anything: `*`
/// matches no `/`, and `name` holds none).
fn star_match(pattern: &[u8], name: &[u8]) -> bool {
    let (Some(star), Some(last_star)) = (
        pattern.iter().position(|&b| b == b'*'),
        pattern.iter().rposition(|&b| b == b'*'),
    ) else {
        return name == pattern;
    };
    let (first, last) = (&pattern[..star], &pattern[last_star + 1..]);
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    // Leftmost match of each middle part (none are empty: no `**`).
    if last_star > star {
        for part in pattern[star + 1..last_star].split(|&b| b == b'*') {
            if part.is_empty() {
                return false;
            }
            match rest.windows(part.len()).position(|w| w == part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
    }
    true
}

fn glob(p: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(p)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
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
    /// A write to a scope document (or under a protected path): never allowed, whatever the
    /// scope says; the protected path it concerns.
    ScopeDocument(String),
}

/// The message of a refused write to a scope document or to git's configuration
/// ([`gitconfig`]), which tells which it is; the home directory is the environment's (the
/// engine's decisions use [`Matcher::scope_document_message`], which knows the request's).
pub fn scope_document_message(what: &str, resolved: &Path, protected: &str) -> String {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    protection_message(what, resolved, Path::new(protected), home.as_deref(), None)
}

fn protection_message(
    what: &str,
    resolved: &Path,
    protected: &Path,
    home: Option<&Path>,
    root: Option<&Path>,
) -> String {
    if let Some(detail) = git_configuration(resolved, protected, home, root) {
        return format!(
            "{what} would write {}, which is git's configuration{detail}: git runs the programs it names (hooks, core.fsmonitor, pagers, diff and merge drivers, aliases), here and outside the sandbox the next time the user runs git in this repository. Git's configuration is never written by a tool, whatever the scope says: it is the user's to change. Do not try another route (git config, git -c, GIT_* variables, another repository or copy of it); if git needs a setting or a hook, ask the user to make the change.",
            resolved.display()
        );
    }
    let doc = if resolved == protected {
        String::new()
    } else {
        format!(" (it protects {})", protected.display())
    };
    format!(
        "{what} would write {}, which holds the rules this session runs under{doc}. Scope documents (every scope.yml, the session's preset.md, the profiles and the trust list) are never written by a tool, whatever the scope says: the scope is the user's to change. Do not try another route; if the scope must change, call request_scope_expansion for the command or path you need, or ask the user to edit the scope.",
        resolved.display()
    )
}

/// Whether the protected path `protected` (reached by writing `resolved`) is git's
/// configuration, and how, for a message: `Some("")` by its name, `Some(" (...)")` when the
/// configuration names it or the path written lies below it.
fn git_configuration(
    resolved: &Path,
    protected: &Path,
    home: Option<&Path>,
    root: Option<&Path>,
) -> Option<String> {
    if gitconfig::by_name(protected, home).is_some() {
        return Some(if resolved == protected {
            String::new()
        } else {
            format!(" (it protects {})", protected.display())
        });
    }
    let places: Vec<&Path> = [Some(resolved), Some(protected), root]
        .into_iter()
        .flatten()
        .collect();
    gitconfig::named(&places, home)
        .describe(protected)
        .map(|d| format!(" ({d})"))
}

impl Matcher {
    pub fn new(
        paths: &Paths,
        home: Option<&Path>,
        project_root: Option<&Path>,
    ) -> Result<Matcher, String> {
        let (read, write) = (
            Set::new(&paths.read, home, project_root)?,
            Set::new(&paths.write, home, project_root)?,
        );
        let known: std::collections::HashSet<&str> =
            read.patterns.iter().map(String::as_str).collect();
        let readable = read
            .patterns
            .iter()
            .chain(
                write
                    .patterns
                    .iter()
                    .filter(|p| !known.contains(p.as_str())),
            )
            .cloned()
            .collect();
        Ok(Matcher {
            read,
            write,
            deny: Set::new(&paths.deny, home, project_root)?,
            readable,
            protected: Vec::new(),
            home: home.map(Path::to_path_buf),
            root: project_root.map(Path::to_path_buf),
        })
    }

    /// This matcher with `paths` protected: a write to one of them, or to anything under
    /// one of them, is [`PathVerdict::ScopeDocument`]. Each is kept as given (normalized) and
    /// where it leads through symlinks.
    pub fn with_protected<P: AsRef<Path>>(mut self, paths: &[P]) -> Matcher {
        for p in paths {
            let p = p.as_ref();
            if !p.is_absolute() {
                continue;
            }
            let r = resolve(p);
            for q in [r.literal, r.target] {
                if !self.protected.contains(&q) {
                    self.protected.push(q);
                }
            }
        }
        self
    }

    /// Whether a write pattern covers `p` (deny patterns and protection aside).
    pub fn in_write_scope(&self, p: &Path) -> bool {
        self.write.first_match(p).is_some()
    }

    /// The protected paths (as given and resolved).
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// Why writing `r` would change the rules, if it would: it is named `scope.yml`, or is
    /// (or lies under) a protected path, or is git's configuration ([`gitconfig`]: by its
    /// name, or named by the configuration of the repository holding it, of the project's
    /// or of the user), or is a hard link of a protected file. Returns the protected path it
    /// concerns.
    pub fn scope_document(&self, r: &Resolved) -> Option<PathBuf> {
        for p in [&r.literal, &r.target] {
            if named_like_scope_document(p) {
                return Some(p.clone());
            }
            if let Some(e) = self.protected.iter().find(|e| p.starts_with(e)) {
                return Some(e.clone());
            }
            if let Some(g) = gitconfig::by_name(p, self.home.as_deref()) {
                return Some(g);
            }
        }
        let named = gitconfig::named(
            &self.git_places(&[&r.literal, &r.target]),
            self.home.as_deref(),
        );
        if let Some((x, _)) = [&r.literal, &r.target]
            .into_iter()
            .find_map(|p| named.holding(p))
        {
            return Some(x.to_path_buf());
        }
        self.hard_link_of_protected(&r.target)
    }

    /// The places whose repositories' configuration is read: `paths`, and the project root.
    fn git_places<'p>(&'p self, paths: &[&'p Path]) -> Vec<&'p Path> {
        paths.iter().copied().chain(self.root.as_deref()).collect()
    }

    /// The message of a refused write to `protected` (reached by writing `resolved`): a
    /// scope document's, or git configuration's.
    pub fn scope_document_message(&self, what: &str, resolved: &Path, protected: &str) -> String {
        protection_message(
            what,
            resolved,
            Path::new(protected),
            self.home.as_deref(),
            self.root.as_deref(),
        )
    }

    /// A protected file that `p` is another name of (the same inode), when `p` has more
    /// than one link.
    fn hard_link_of_protected(&self, p: &Path) -> Option<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::symlink_metadata(p)
            .ok()
            .filter(|m| m.is_file() && m.nlink() > 1)?;
        self.protected
            .iter()
            .find(|e| {
                std::fs::metadata(e).is_ok_and(|pm| pm.dev() == m.dev() && pm.ino() == m.ino())
            })
            .cloned()
    }

    /// A protected path lying strictly under the directory `dir` (the target of a write
    /// that replaces or removes what is below it: `rm -r`, `mv`, `tar x`): a scope document,
    /// git's configuration, or a repository (`dir/.git`).
    pub fn protected_below(&self, dir: &Path) -> Option<PathBuf> {
        self.protected_below_but_repositories(dir).or_else(|| {
            let g = dir.join(".git");
            crate::resolve::exists(&g).then_some(g)
        })
    }

    /// As [`Matcher::protected_below`], but for a write by git itself into its work tree
    /// (`git checkout -- DIR`, `git apply`), which never writes a path with a `.git`
    /// component (git refuses one): a repository below is not reached, the scope documents,
    /// hooks directories and included configuration files there are.
    pub fn protected_below_but_repositories(&self, dir: &Path) -> Option<PathBuf> {
        if let Some(e) = self
            .protected
            .iter()
            .find(|e| e.as_path() != dir && e.starts_with(dir))
        {
            return Some(e.clone());
        }
        if let Some(u) = gitconfig::user_files_below(dir, self.home.as_deref()) {
            return Some(u);
        }
        gitconfig::named(&self.git_places(&[dir]), self.home.as_deref())
            .below(dir)
            .map(Path::to_path_buf)
    }

    /// A protected path a write scope covers (a command whose paths are unseen, `xargs sed
    /// -i`, could write it): a protected path, else the configuration of the project's
    /// repository or a hooks directory it names.
    pub fn writable_protected(&self) -> Option<PathBuf> {
        if let Some(p) = self.protected.iter().find(|p| self.in_write_scope(p)) {
            return Some(p.clone());
        }
        let root = self.root.as_deref()?;
        let top = gitconfig::work_tree_top(root)?;
        let named = gitconfig::named(&[root], self.home.as_deref());
        gitconfig::repository_files(&top)
            .into_iter()
            .chain(named.hooks.into_iter().map(|(h, _)| h))
            .find(|p| self.in_write_scope(p))
    }

    /// Judges a resolved path for an access: deny wins (literal or target), then the target
    /// must match a write pattern (write) or a read or write pattern (read, B07).
    pub fn check(&self, r: &Resolved, access: Access) -> PathVerdict {
        if access == Access::Write {
            if let Some(doc) = self.scope_document(r) {
                return PathVerdict::ScopeDocument(doc.to_string_lossy().into_owned());
            }
        }
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

    /// The deny patterns, expanded (absolute, or starting with `**`).
    pub fn deny_patterns(&self) -> &[String] {
        &self.deny.patterns
    }

    /// The patterns that grant an access (for messages: `allowed_patterns`).
    pub fn patterns_for(&self, access: Access) -> Vec<String> {
        match access {
            Access::Write => self.write.patterns.clone(),
            Access::Read => self.readable.clone(),
        }
    }
}

/// Files that are safe to read or write whatever the scope.
pub fn is_safe_device(p: &Path, access: Access) -> bool {
    let s = p.to_string_lossy();
    match access {
        Access::Write => matches!(
            &*s,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2"
        ),
        Access::Read => matches!(
            &*s,
            "/dev/null" | "/dev/zero" | "/dev/urandom" | "/dev/random" | "/dev/stdin" | "/dev/fd/0"
        ),
    }
}

#[cfg(test)]
mod matcher_tests {
    use super::*;

    fn m(read: &[&str], write: &[&str], deny: &[&str]) -> Matcher {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect();
        Matcher::new(
            &Paths {
                read: v(read),
                write: v(write),
                deny: v(deny),
            },
            Some(Path::new("/home/u")),
            Some(Path::new("/p")),
        )
        .unwrap()
    }

    fn check(m: &Matcher, p: &str, a: Access) -> PathVerdict {
        m.check(
            &Resolved {
                literal: PathBuf::from(p),
                target: PathBuf::from(p),
            },
            a,
        )
    }

    #[test]
    fn b06_b07_dir_pattern_covers_the_dir_itself_and_write_implies_read() {
        let m = m(&["/p/**"], &["/p/out/**"], &[]);
        assert_eq!(
            check(&m, "/p", Access::Read),
            PathVerdict::Allowed("/p/**".into())
        );
        assert_eq!(
            check(&m, "/p/a/b", Access::Read),
            PathVerdict::Allowed("/p/**".into())
        );
        assert_eq!(
            check(&m, "/p/out", Access::Read),
            PathVerdict::Allowed("/p/out/**".into())
        );
        assert_eq!(check(&m, "/p/a", Access::Write), PathVerdict::OutOfScope);
        assert_eq!(check(&m, "/pq", Access::Read), PathVerdict::OutOfScope);
    }

    #[test]
    fn b10_deny_wins_on_literal_or_target() {
        let m = m(&["/p/**"], &["/p/**"], &["**/.env", "~/.ssh/**"]);
        assert_eq!(
            check(&m, "/p/.env", Access::Read),
            PathVerdict::Denied("**/.env".into())
        );
        let r = Resolved {
            literal: PathBuf::from("/p/link"),
            target: PathBuf::from("/home/u/.ssh/id"),
        };
        assert_eq!(
            m.check(&r, Access::Read),
            PathVerdict::Denied("/home/u/.ssh/**".into())
        );
    }

    #[test]
    fn patterns_expand_home_root_and_relative() {
        let m = m(
            &["src/", "${project_root}/doc/*.md", "~/notes/**"],
            &[],
            &[],
        );
        assert_eq!(
            check(&m, "/p/src/a/b", Access::Read),
            PathVerdict::Allowed("/p/src/**".into())
        );
        assert_eq!(
            check(&m, "/p/doc/a.md", Access::Read),
            PathVerdict::Allowed("/p/doc/*.md".into())
        );
        assert_eq!(
            check(&m, "/p/doc/x/a.md", Access::Read),
            PathVerdict::OutOfScope,
            "* stays in one directory"
        );
        assert_eq!(
            check(&m, "/home/u/notes/x", Access::Read),
            PathVerdict::Allowed("/home/u/notes/**".into())
        );
    }

    /// The patterns matched without globset give globset's answers (the first matching
    /// pattern) on every path of up to three components from a set chosen to hit the
    /// edges: newlines, dots, empty components, prefixes and suffixes of the names.
    #[test]
    fn simple_patterns_answer_as_globset() {
        let names = ["a", ".env", "x.txt", "a\nb", "é"];
        let mut pats: Vec<String> = Vec::new();
        for n in names {
            for f in [
                "/{n}",
                "/{n}/**",
                "**/{n}",
                "**/{n}/**",
                "/a/{n}",
                "/a/{n}/**",
                "/a\nb/{n}/**",
            ] {
                pats.push(f.replace("{n}", n));
            }
        }
        for f in [
            "*", "*.txt", "x*", "*a*", "x*t*t", "*.e*v", "a*\nb*", "*a*a*",
        ] {
            for d in ["/a", "", "/a\nb", "/a/b"] {
                pats.push(format!("{d}/{f}"));
            }
        }
        pats.extend(
            [
                "/a/**/b", "/[ab]/x", "**/*.txt", "/a/?", "**", "/**", "a", "x.txt/**",
            ]
            .map(String::from),
        );
        let comps = [
            "a", "b", ".env", "x.txt", "a\nb", "é", "xay", "", "xtt", "aa", "a.ev", "x.txtx",
        ];
        let mut paths = vec![String::from("/"), String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..3 {
            frontier = frontier
                .iter()
                .flat_map(|p| comps.iter().map(move |c| format!("{p}/{c}")))
                .collect();
            paths.extend(frontier.iter().cloned());
        }
        paths.extend(["a", "a/b", "a\nb", "x.txt"].map(String::from));
        let mut reversed = pats.clone();
        reversed.reverse();
        let mut hits = 0;
        for list in [&pats, &reversed] {
            let fast = Set::build(list, None, None, true).unwrap();
            let reference = Set::build(list, None, None, false).unwrap();
            assert!(
                fast.globs.len() < 20,
                "most patterns are simple: {}",
                fast.globs.len()
            );
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
                assert_eq!(
                    fast.first_match(Path::new(p)),
                    reference.first_match(Path::new(p)),
                    "{pat:?} on {p:?}"
                );
            }
        }
    }

    #[test]
    fn bad_pattern_is_an_error() {
        let e = Matcher::new(
            &Paths {
                read: vec!["/p/[".into()],
                write: vec![],
                deny: vec![],
            },
            None,
            None,
        )
        .unwrap_err();
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
