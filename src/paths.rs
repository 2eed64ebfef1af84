//! Paths: resolution through symlinks, and matching against the scope's patterns.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

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
    let literal = crate::shell::normalize(path);
    let mut links = 0;
    let target = physical(path, &mut links).unwrap_or_else(|| literal.clone());
    Resolved { literal, target }
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
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                *links += 1;
                if *links > MAX_LINKS {
                    return None;
                }
                let link = std::fs::read_link(&next).ok()?;
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
    globs: GlobSet,
    /// The expanded patterns, in order, for evidence.
    patterns: Vec<String>,
    /// Which expanded pattern each glob of `globs` came from.
    origin: Vec<usize>,
}

impl Set {
    fn new(patterns: &[String], home: Option<&Path>, root: Option<&Path>) -> Result<Set, String> {
        let mut b = GlobSetBuilder::new();
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
                let g = glob(&v).map_err(|err| format!("pattern `{p}`: {err}"))?;
                b.add(g);
                origin.push(i);
            }
            expanded.push(e);
        }
        let globs = b.build().map_err(|e| e.to_string())?;
        Ok(Set { globs, patterns: expanded, origin })
    }

    /// The first pattern that matches `path`.
    fn first_match(&self, path: &Path) -> Option<&str> {
        let hits = self.globs.matches(path);
        hits.iter()
            .filter_map(|&g| self.origin.get(g).copied())
            .min()
            .and_then(|i| self.patterns.get(i).map(String::as_str))
    }
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
