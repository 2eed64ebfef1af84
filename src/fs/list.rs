//! `list_dir(path, depth, offset, limit)` (F02): breadth-first, sorted by name within each
//! directory, one entry a line relative to `path`, with markers `/` (directory), `*`
//! (executable file) and `@` (symlink, never followed). Entries the scope denies or does
//! not cover are left out and counted.

use std::collections::VecDeque;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde::Serialize;

use super::{io_error, FsError, Guard};
use crate::policy::denied::walked;
use crate::policy::paths::{self, Access};

pub const DEFAULT_DEPTH: usize = 2;
pub const MAX_DEPTH: usize = 10;
pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 2000;
/// Most entries visited by one call, whatever `offset` and `limit` are.
pub const MAX_VISITED: usize = 20_000;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ListResult {
    pub path: String,
    pub resolved: String,
    /// One entry a line.
    pub content: String,
    /// Entries shown.
    pub entries: usize,
    /// Entries found in all (up to [`MAX_VISITED`]).
    pub total: usize,
    /// More entries follow `offset + entries`.
    pub has_more: bool,
    /// Entries left out because the scope denies or does not cover them.
    pub hidden: usize,
    /// The walk stopped at [`MAX_VISITED`].
    pub incomplete: bool,
    pub bytes: usize,
}

fn marker(ft: &std::fs::FileType, meta: Option<&std::fs::Metadata>) -> &'static str {
    if ft.is_symlink() {
        "@"
    } else if ft.is_dir() {
        "/"
    } else if meta.is_some_and(|m| m.permissions().mode() & 0o111 != 0) {
        "*"
    } else {
        ""
    }
}

/// Lists `path` (checked for read access) to `depth` levels (1: its entries only).
pub fn list_dir(
    guard: &Guard,
    path: &str,
    depth: Option<usize>,
    offset: usize,
    limit: Option<usize>,
) -> Result<ListResult, FsError> {
    let depth = depth.unwrap_or(DEFAULT_DEPTH);
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if depth == 0 || depth > MAX_DEPTH {
        return Err(FsError::InvalidArgument(format!(
            "depth must be between 1 and {MAX_DEPTH} (got {depth})"
        )));
    }
    if limit == 0 || limit > MAX_LIMIT {
        return Err(FsError::InvalidArgument(format!(
            "limit must be between 1 and {MAX_LIMIT} (got {limit})"
        )));
    }
    let checked = guard.check(path, Access::Read)?;
    let root = checked.target.clone();
    let root_as_written = paths::Resolved {
        literal: checked.literal.clone(),
        target: root.clone(),
    };
    let meta = std::fs::metadata(&root).map_err(|e| io_error(&root, &e))?;
    if !meta.is_dir() {
        return Err(FsError::NotFound {
            path: path.into(),
            message: "is not a directory: use read_file".into(),
        });
    }
    let mut lines: Vec<String> = Vec::new();
    let mut total = 0;
    let mut hidden = 0;
    let mut incomplete = false;
    let mut queue: VecDeque<(PathBuf, PathBuf, usize)> =
        VecDeque::from([(root.clone(), PathBuf::new(), 1)]);
    'walk: while let Some((dir, rel, level)) = queue.pop_front() {
        let Ok(read) = std::fs::read_dir(&dir) else {
            continue; // unreadable subdirectory: skipped, as `ls -R` reports and goes on
        };
        let mut entries: Vec<_> = read.filter_map(|e| e.ok()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let full = dir.join(e.file_name());
            // Its directory is resolved already; a symlink is judged by its own path (it is
            // shown with `@`, never followed, so listing it reveals only its name), as every
            // walk judges its entries.
            if !guard.visible(&walked(&root_as_written, &full)) {
                hidden += 1;
                continue;
            }
            if total >= MAX_VISITED {
                incomplete = true;
                break 'walk;
            }
            let Ok(ft) = e.file_type() else { continue };
            let meta = if ft.is_file() {
                e.metadata().ok()
            } else {
                None
            };
            let name = rel.join(e.file_name());
            if total >= offset && lines.len() < limit {
                lines.push(format!(
                    "{}{}",
                    name.to_string_lossy(),
                    marker(&ft, meta.as_ref())
                ));
            }
            total += 1;
            if ft.is_dir() && level < depth {
                queue.push_back((full, name, level + 1));
            }
        }
    }
    let content = lines.join("\n");
    Ok(ListResult {
        path: path.into(),
        resolved: root.display().to_string(),
        entries: lines.len(),
        has_more: total > offset + lines.len(),
        total,
        hidden,
        incomplete,
        bytes: content.len(),
        content,
    })
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::fs::grep::grep_files;
    use crate::fs::Boundary;
    use crate::policy::denied::{all_denied_under, Limits, Reach};
    use crate::policy::paths::Matcher;
    use crate::scope::{FsMode, Paths};

    fn guard<'a>(root: &Path, matcher: &'a Matcher) -> Guard<'a> {
        Guard {
            boundary: Boundary::new(FsMode::Unrestricted, root).unwrap(),
            matcher,
            base: root.to_path_buf(),
            home: None,
            grants: &[],
            tool: "list_dir",
            used: Default::default(),
        }
    }

    fn matcher(root: &Path, deny: &[String]) -> Matcher {
        let paths = Paths {
            read: vec![format!("{}/**", root.display())],
            write: vec![],
            deny: deny.to_vec(),
        };
        Matcher::new(&paths, None, Some(root)).unwrap()
    }

    /// list_dir leaves out exactly the entries the walk for denied entries finds: one notion
    /// of what a deny pattern covers.
    #[test]
    fn list_dir_hides_what_the_deny_walk_finds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for f in [
            ".env",
            "a/b/c/.env",
            "a/key.pem",
            "a/ok.txt",
            "secrets/x",
            "src/main.rs",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "K=1\n").unwrap();
        }
        std::os::unix::fs::symlink(root.join("a/ok.txt"), root.join("link.pem")).unwrap();
        let m = matcher(
            &root,
            &["**/.env".into(), "**/*.pem".into(), "**/secrets/**".into()],
        );
        let listed = list_dir(
            &guard(&root, &m),
            root.to_str().unwrap(),
            Some(MAX_DEPTH),
            0,
            Some(MAX_LIMIT),
        )
        .unwrap();
        let Reach::Denied { found, .. } =
            all_denied_under(std::slice::from_ref(&root), &m, &Limits::default())
        else {
            panic!("denied entries")
        };
        let found: Vec<PathBuf> = found
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            found,
            [".env", "a/b/c/.env", "a/key.pem", "link.pem", "secrets"].map(PathBuf::from)
        );
        assert_eq!(listed.hidden, found.len());
        for f in &found {
            assert!(
                !listed
                    .content
                    .lines()
                    .any(|l| Path::new(l.trim_end_matches(['/', '@', '*'])) == f),
                "{f:?} listed"
            );
        }
    }

    /// A directory reached through a symlink: its entries are judged as written too, by the
    /// file tools as by the walk.
    #[test]
    fn a_root_through_a_symlink_is_judged_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("real/conf")).unwrap();
        std::fs::write(root.join("real/conf/x"), "K=1\n").unwrap();
        std::fs::write(root.join("real/y"), "K=2\n").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("view")).unwrap();
        let m = matcher(&root, &[format!("{}/view/conf/**", root.display())]);
        let g = guard(&root, &m);
        let listed = list_dir(&g, "view", Some(3), 0, None).unwrap();
        assert_eq!((listed.content.as_str(), listed.hidden), ("y", 1));
        let found = grep_files(&g, "K", "view", &[], None).unwrap();
        assert_eq!(
            (found.content.as_str(), found.files_skipped),
            ("y:1:K=2", 1)
        );
        let walked = all_denied_under(&[root.join("view")], &m, &Limits::default());
        assert_eq!(
            walked,
            Reach::Denied {
                found: vec![root.join("view/conf")],
                scanned: 2
            }
        );
    }
}
