//! Resolution of paths on the file system: `lstat` and `readlink` through symlinks and `..`,
//! each path asked about once per decision (the memo), and lexical normalization.
//! The lowest layer: it uses no other module of the crate.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

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
/// Within a [`memo`], each path is resolved once.
pub fn resolve(path: &Path) -> Resolved {
    let known = RESOLVED.with(|r| r.borrow().as_ref().and_then(|m| m.get(key(path)).cloned()));
    if let Some(r) = known {
        return r;
    }
    let literal = normalize(path);
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
pub(crate) enum Probe {
    Missing,
    /// Not a symlink; whether it is a directory.
    Present(bool),
    /// A symlink, with its target (`None`: unreadable).
    Link(Option<PathBuf>),
}

/// A memo table keyed by a path's bytes (two spellings of one path are two entries: a
/// second probe, never a wrong answer).
type PathMemo<V> = HashMap<Vec<u8>, V>;

fn key(path: &Path) -> &[u8] {
    path.as_os_str().as_bytes()
}

thread_local! {
    /// The probes of the decision under way on this thread (see [`memo`]).
    static PROBES: RefCell<Option<PathMemo<Probe>>> = const { RefCell::new(None) };
    /// The paths it resolved (the working directory is resolved for every command).
    static RESOLVED: RefCell<Option<PathMemo<Resolved>>> = const { RefCell::new(None) };
    /// How many times this thread asked the file system about a path.
    static ASKED: Cell<u64> = const { Cell::new(0) };
}

/// How many times this thread asked the file system about a path (`lstat`): what the memo
/// of a decision saves is seen here.
pub fn probes_asked() -> u64 {
    ASKED.with(Cell::get)
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
    ASKED.with(|a| a.set(a.get() + 1));
    let found = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Probe::Link(std::fs::read_link(path).ok()),
        Ok(meta) => Probe::Present(meta.is_dir()),
        Err(_) => Probe::Missing,
    };
    PROBES.with(|p| {
        if let Some(m) = p.borrow_mut().as_mut() {
            m.insert(key(path).to_vec(), found.clone());
        }
    });
    found
}

/// Whether `path`, a working directory, leads to a directory through its symlinks, as
/// `Path::is_dir` says; within a [`memo`], the probes of resolving it answer, and nothing
/// more is asked.
pub fn is_dir(path: &Path) -> bool {
    let target = resolve(path).target;
    probe(&target) == Probe::Present(true)
}

/// Whether something (a file, directory or symlink, dangling or not) is at `path`.
pub fn exists(path: &Path) -> bool {
    probe(path) != Probe::Missing
}

/// `path` with every symlink followed.
fn physical(path: &Path, links: &mut usize) -> Option<PathBuf> {
    let mut out = PathBuf::from("/");
    let mut depth = 0usize;
    // The depth of the first component found missing: nothing below it exists, so it is
    // not asked about, until a `..` climbs back above it.
    let mut missing_at: Option<usize> = None;
    let mut pending = parts(path);
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            depth = depth.saturating_sub(1);
            if missing_at.is_some_and(|m| depth < m) {
                missing_at = None;
            }
            continue;
        }
        let next = out.join(&part);
        if missing_at.is_some() {
            out = next;
            depth += 1;
            continue;
        }
        match probe(&next) {
            Probe::Link(link) => {
                *links += 1;
                if *links > MAX_LINKS {
                    return None;
                }
                let link = link?;
                if link.is_absolute() {
                    out = PathBuf::from("/");
                    depth = 0;
                }
                let mut expanded = parts(&link);
                expanded.extend(pending.drain(..));
                pending = expanded;
            }
            Probe::Missing => {
                out = next;
                depth += 1;
                missing_at = Some(depth);
            }
            Probe::Present(_) => {
                out = next;
                depth += 1;
            }
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

/// Normalizes a path lexically: removes `.` and resolves `..` against what precedes it.
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
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
            // Below a missing component nothing is looked up, until `..` climbs above it.
            ("repo/missing/a/../link", "repo/missing/link"),
            ("repo/missing/a/../../link/.ssh", "home/.ssh"),
            ("repo/rel/missing/../../link/.ssh", "home/.ssh"),
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
