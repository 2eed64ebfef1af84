//! Denied entries under a tree: a bounded walk of names that finds what a deny pattern
//! covers below a directory a command would traverse (`grep -r`, `find -exec`, the
//! sandbox's bound directories).
//!
//! The walk reads names only (never content), does not follow symlinks (a symlink is judged
//! by its own path: one named `.env` is denied whatever it points to), does not skip hidden
//! or ignored files (a `.gitignore`d `.env` is still read by `grep -r`), and does not descend
//! into a denied directory (it is reported as a whole). It is bounded: past
//! [`Limits::max_entries`] entries or [`Limits::max_time`], or on a directory it cannot read,
//! the answer is [`Reach::CannotTell`], which callers treat as a refusal.
//!
//! The deny test is the file tools' (`list_dir`, `grep_files`): [`walked`] makes the path
//! an entry is judged by, [`Matcher::check`] judges it; one notion of what a deny pattern
//! covers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::policy::paths::{resolve, Access, Matcher, PathVerdict, Resolved};

/// How far a walk may go before it answers [`Reach::CannotTell`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most entries looked at, over all roots.
    pub max_entries: usize,
    /// Longest time the walk may take.
    pub max_time: Duration,
}

impl Default for Limits {
    /// 100,000 entries and 200 ms. An ordinary repository holds a few thousand files
    /// (this crate's tree, target/ aside, about 300): its walk takes a few milliseconds, well
    /// under the cost of starting the command it guards. The entry limit keeps the memory
    /// and the time of a walk bounded on a tree with millions of names (a home directory, a
    /// `node_modules` farm); the time limit bounds it on a slow or cold file system (a network
    /// mount) where even 100,000 names would take seconds. Past either the answer is "cannot
    /// tell", and the caller refuses: the user narrows the read scope or the command's roots.
    fn default() -> Limits {
        Limits {
            max_entries: 100_000,
            max_time: Duration::from_millis(200),
        }
    }
}

/// What a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// No entry under the roots is denied; `scanned` entries were looked at.
    Clean { scanned: usize },
    /// Entries a deny pattern covers (paths as reached through the roots as given), sorted;
    /// [`denied_under`] keeps the first [`EXAMPLES`], [`all_denied_under`] every one.
    Denied { found: Vec<PathBuf>, scanned: usize },
    /// The walk could not finish (a limit, an unreadable directory): the caller refuses.
    CannotTell { why: String },
}

/// How many denied entries [`denied_under`] reports.
pub const EXAMPLES: usize = 5;

/// The path a walked entry `path` (lying under `root.target`) is judged by: its own path,
/// not followed if it is a symlink, both as reached through the root as written
/// (`root.literal`) and as it is on the file system (`root.target`). The walks of the file
/// tools and this module all use it.
pub fn walked(root: &Resolved, path: &Path) -> Resolved {
    let literal = match path.strip_prefix(&root.target) {
        Ok(rel) if root.literal != root.target => {
            if rel.as_os_str().is_empty() {
                root.literal.clone()
            } else {
                root.literal.join(rel)
            }
        }
        _ => path.to_path_buf(),
    };
    Resolved {
        literal,
        target: path.to_path_buf(),
    }
}

/// The deny pattern that covers `r` (its path as written or where it leads), if one does:
/// [`Matcher::check`]'s deny verdict.
pub fn deny_pattern(matcher: &Matcher, r: &Resolved) -> Option<String> {
    match matcher.check(r, Access::Read) {
        PathVerdict::Denied(p) => Some(p),
        _ => None,
    }
}

/// Walks `roots` (absolute paths) for entries a deny pattern of `matcher` covers, within
/// `limits`; reports the first [`EXAMPLES`] of them.
pub fn denied_under(roots: &[PathBuf], matcher: &Matcher, limits: &Limits) -> Reach {
    walk(roots, matcher, limits, EXAMPLES)
}

/// As [`denied_under`], reporting every denied entry (what the sandbox masks).
pub fn all_denied_under(roots: &[PathBuf], matcher: &Matcher, limits: &Limits) -> Reach {
    walk(roots, matcher, limits, usize::MAX)
}

fn walk(roots: &[PathBuf], matcher: &Matcher, limits: &Limits, keep: usize) -> Reach {
    let start = Instant::now();
    let mut found: Vec<PathBuf> = Vec::new();
    let mut scanned = 0usize;
    for root in roots {
        if !root.is_absolute() {
            return Reach::CannotTell {
                why: format!("the path {} is not absolute", root.display()),
            };
        }
        let r = resolve(root);
        if deny_pattern(matcher, &r).is_some() {
            found.push(r.literal.clone());
            continue;
        }
        let meta = match std::fs::symlink_metadata(&r.target) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Reach::CannotTell {
                    why: format!("{}: {e}", r.target.display()),
                }
            }
        };
        if !meta.is_dir() {
            scanned += 1;
            continue;
        }
        if let Err(why) = walk_dir(&r, matcher, limits, start, &mut scanned, &mut found) {
            return Reach::CannotTell { why };
        }
    }
    if found.is_empty() {
        return Reach::Clean { scanned };
    }
    found.sort();
    found.dedup();
    found.truncate(keep);
    Reach::Denied { found, scanned }
}

/// Walks the directory `root` (its target), adding the denied entries to `found`.
fn walk_dir(
    root: &Resolved,
    matcher: &Matcher,
    limits: &Limits,
    start: Instant,
    scanned: &mut usize,
    found: &mut Vec<PathBuf>,
) -> Result<(), String> {
    // The filter sees every entry before the walk descends into it: a denied directory is
    // recorded there and not entered.
    let hits: Arc<Mutex<Vec<PathBuf>>> = Arc::new(Mutex::new(Vec::new()));
    let filter = {
        let hits = Arc::clone(&hits);
        let matcher = matcher.clone();
        let root = root.clone();
        move |e: &ignore::DirEntry| {
            if e.depth() == 0 {
                return true;
            }
            let r = walked(&root, e.path());
            if deny_pattern(&matcher, &r).is_none() {
                return true;
            }
            if let Ok(mut h) = hits.lock() {
                h.push(r.literal);
            }
            false
        }
    };
    let walk = ignore::WalkBuilder::new(&root.target)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(filter)
        .build();
    let mut result = Ok(());
    for entry in walk {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                result = Err(format!(
                    "cannot read every entry under {}: {e}",
                    root.literal.display()
                ));
                break;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        *scanned += 1;
        if *scanned > limits.max_entries {
            result = Err(format!(
                "more than {} entries under {}; the walk for denied entries stops there",
                limits.max_entries,
                root.literal.display()
            ));
            break;
        }
        if scanned.is_multiple_of(256) && start.elapsed() > limits.max_time {
            result = Err(format!(
                "the walk for denied entries under {} took longer than {} ms ({} entries seen)",
                root.literal.display(),
                limits.max_time.as_millis(),
                scanned
            ));
            break;
        }
    }
    match hits.lock() {
        Ok(mut h) => {
            *scanned += h.len();
            found.append(&mut h);
        }
        Err(_) => return Err("the walk for denied entries failed".into()),
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Paths;
    use std::os::unix::fs::symlink;

    fn matcher(root: &Path, deny: &[&str]) -> Matcher {
        let paths = Paths {
            read: vec![format!("{}/**", root.display())],
            write: vec![],
            deny: deny.iter().map(|s| s.to_string()).collect(),
        };
        Matcher::new(&paths, Some(Path::new("/home/u")), Some(root)).unwrap()
    }

    /// A tree of files (`a/b/c`), directories (ending in `/`) and symlinks (`name -> target`,
    /// target relative to the tree unless absolute).
    fn tree(root: &Path, entries: &[&str]) {
        for e in entries {
            if let Some((name, target)) = e.split_once(" -> ") {
                let p = root.join(name);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                let t = if target.starts_with('/') {
                    PathBuf::from(target)
                } else {
                    root.join(target)
                };
                symlink(t, p).unwrap();
            } else if let Some(d) = e.strip_suffix('/') {
                std::fs::create_dir_all(root.join(d)).unwrap();
            } else {
                let p = root.join(e);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "x").unwrap();
            }
        }
    }

    /// What the walk reports, with paths relative to the tree.
    #[derive(Debug, PartialEq, Eq)]
    enum Got {
        Clean(usize),
        Denied(Vec<String>, usize),
        CannotTell,
    }

    fn got(root: &Path, reach: Reach) -> Got {
        match reach {
            Reach::Clean { scanned } => Got::Clean(scanned),
            Reach::Denied { found, scanned } => Got::Denied(
                found
                    .iter()
                    .map(|p| {
                        p.strip_prefix(root)
                            .unwrap_or(p)
                            .to_string_lossy()
                            .into_owned()
                    })
                    .collect(),
                scanned,
            ),
            Reach::CannotTell { .. } => Got::CannotTell,
        }
    }

    #[test]
    fn denied_under_table() {
        let outside = tempfile::tempdir().unwrap();
        let outside_secret = outside.path().join("secret.txt");
        std::fs::write(&outside_secret, "s").unwrap();
        let outside_deny = format!("{}/**", outside.path().display());
        let big = Limits::default();
        let tiny = Limits {
            max_entries: 3,
            max_time: Duration::from_secs(60),
        };
        /// Name, tree, deny patterns, the root under the tree ("" for the tree), limits, answer.
        type Row<'a> = (
            &'a str,
            &'a [&'a str],
            &'a [&'a str],
            &'a str,
            &'a Limits,
            Got,
        );
        #[rustfmt::skip]
        let table: &[Row] = &[
            ("clean tree", &["src/a.rs", "src/b/c.rs", "README"], &["**/.env", "**/*.pem"], "", &big, Got::Clean(5)),
            (".env at depth 0", &[".env", "a.rs"], &["**/.env"], "", &big, Got::Denied(vec![".env".into()], 2)),
            (".env at depth 3", &["a/b/c/.env", "a/b/c/x"], &["**/.env"], "", &big, Got::Denied(vec!["a/b/c/.env".into()], 5)),
            ("**/*.pem", &["k.pem", "a/b/key.pem", "a/b/key.pem.txt"], &["**/*.pem"], "", &big,
             Got::Denied(vec!["a/b/key.pem".into(), "k.pem".into()], 5)),
            ("a denied directory is reported, not entered", &["secrets/a", "secrets/b/c", "x"], &["**/secrets/**"], "", &big,
             Got::Denied(vec!["secrets".into()], 2)),
            ("relative deny pattern under the project root", &["conf/prod.key", "conf/dev"], &["conf/*.key"], "", &big,
             Got::Denied(vec!["conf/prod.key".into()], 3)),
            ("hidden and gitignored files are looked at", &[".gitignore", ".hidden/.env"], &["**/.env"], "", &big,
             Got::Denied(vec![".hidden/.env".into()], 3)),
            ("entry limit hit", &["a", "b", "c", "d", "e"], &["**/.env"], "", &tiny, Got::CannotTell),
            ("a symlink to a denied file outside is not followed", &["link -> OUTSIDE"], &["OUTSIDE_DENY"], "", &big, Got::Clean(1)),
            ("a symlink named .env is reported", &["real", ".env -> real"], &["**/.env"], "", &big, Got::Denied(vec![".env".into()], 2)),
            ("the root itself is denied", &["secrets/a"], &["**/secrets/**"], "secrets", &big, Got::Denied(vec!["secrets".into()], 0)),
            ("a root that is a file is checked alone", &["a/.env", "a/x"], &["**/.env"], "a/x", &big, Got::Clean(1)),
            ("a denied file as the root", &["a/.env"], &["**/.env"], "a/.env", &big, Got::Denied(vec!["a/.env".into()], 0)),
            ("a missing root is clean", &["a"], &["**/.env"], "missing", &big, Got::Clean(0)),
        ];
        for (name, entries, deny, sub, limits, want) in table {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            let entries: Vec<String> = entries
                .iter()
                .map(|e| e.replace("OUTSIDE", &outside_secret.display().to_string()))
                .collect();
            tree(
                &root,
                &entries.iter().map(String::as_str).collect::<Vec<_>>(),
            );
            let deny: Vec<&str> = deny
                .iter()
                .map(|d| {
                    if *d == "OUTSIDE_DENY" {
                        outside_deny.as_str()
                    } else {
                        d
                    }
                })
                .collect();
            let m = matcher(&root, &deny);
            let start = if sub.is_empty() {
                root.clone()
            } else {
                root.join(sub)
            };
            assert_eq!(
                &got(&root, denied_under(&[start], &m, limits)),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn a_few_examples_sorted_or_all() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let names: Vec<String> = (0..9).rev().map(|i| format!("d{i}/.env")).collect();
        tree(&root, &names.iter().map(String::as_str).collect::<Vec<_>>());
        let m = matcher(&root, &["**/.env"]);
        let limits = Limits::default();
        let want: Vec<String> = (0..9).map(|i| format!("d{i}/.env")).collect();
        assert_eq!(
            got(
                &root,
                denied_under(std::slice::from_ref(&root), &m, &limits)
            ),
            Got::Denied(want[..EXAMPLES].to_vec(), 18)
        );
        assert_eq!(
            got(
                &root,
                all_denied_under(std::slice::from_ref(&root), &m, &limits)
            ),
            Got::Denied(want, 18)
        );
    }

    #[test]
    fn a_root_reached_through_a_symlink_is_judged_as_written_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        tree(&root, &["real/conf/x", "view -> real"]);
        // The pattern names the path through the link only.
        let m = matcher(&root, &[&format!("{}/view/conf/**", root.display())]);
        assert_eq!(
            got(
                &root,
                denied_under(&[root.join("view")], &m, &Limits::default())
            ),
            Got::Denied(vec!["view/conf".into()], 1)
        );
    }

    #[test]
    fn an_unreadable_directory_cannot_tell() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        tree(&root, &["locked/x", "a"]);
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let readable = std::fs::read_dir(root.join("locked")).is_ok(); // root reads everything
        let reach = denied_under(
            std::slice::from_ref(&root),
            &matcher(&root, &["**/.env"]),
            &Limits::default(),
        );
        std::fs::set_permissions(root.join("locked"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        if readable {
            assert_eq!(got(&root, reach), Got::Clean(3));
        } else {
            assert!(
                matches!(&reach, Reach::CannotTell { why } if why.contains("locked")),
                "{reach:?}"
            );
        }
    }

    #[test]
    fn a_time_limit_hit_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let names: Vec<String> = (0..600).map(|i| format!("f{i}")).collect();
        tree(&root, &names.iter().map(String::as_str).collect::<Vec<_>>());
        let limits = Limits {
            max_entries: 1_000_000,
            max_time: Duration::ZERO,
        };
        let reach = denied_under(
            std::slice::from_ref(&root),
            &matcher(&root, &["**/.env"]),
            &limits,
        );
        assert!(
            matches!(&reach, Reach::CannotTell { why } if why.contains("took longer than 0 ms")),
            "{reach:?}"
        );
    }
}
