//! Patch application (F05): every target judged for write scope first, every hunk applied
//! in memory strictly (unified hunks exactly at their line, no fuzz and no offset; envelope
//! hunks at the one place their context matches), then all files written or none.
//!
//! Writing: each new content goes to a temporary sibling, is flushed and `fsync`ed; only
//! when every temporary file exists are they renamed over their targets. A rename that fails
//! puts back the files already replaced (their old content is in memory), so a failure at
//! any point leaves the tree as it was.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::patch::{FilePatch, Hunk, Kind, Patch};
use super::{io_error, looks_binary, FsError, Guard};
use crate::policy::paths::Access;

/// What happened to one file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FileStat {
    /// As written in the patch.
    pub path: String,
    /// The file written or deleted.
    pub resolved: String,
    /// `add`, `update`, `delete` or `move`.
    pub action: &'static str,
    pub moved_to: Option<String>,
    pub hunks: usize,
    pub added: usize,
    pub removed: usize,
    /// Bytes of the new content (0 for a deletion).
    pub bytes: usize,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ApplyResult {
    pub files: Vec<FileStat>,
    pub added: usize,
    pub removed: usize,
    pub bytes: usize,
}

/// A file's text as lines, and whether it ends with a newline.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Text {
    lines: Vec<String>,
    final_newline: bool,
    crlf: bool,
}

impl Text {
    fn parse(bytes: &[u8], shown: &str) -> Result<Text, FsError> {
        if looks_binary(bytes).is_some() {
            return Err(FsError::PatchApply {
                file: shown.into(),
                message: "is a binary file; patches apply to text only".into(),
            });
        }
        let s = std::str::from_utf8(bytes).map_err(|e| FsError::PatchApply {
            file: shown.into(),
            message: format!("is not UTF-8 text ({e})"),
        })?;
        if s.is_empty() {
            return Ok(Text {
                lines: Vec::new(),
                final_newline: false,
                crlf: false,
            });
        }
        let final_newline = s.ends_with('\n');
        let body = s.strip_suffix('\n').unwrap_or(s);
        // CRLF only when every line has it: a file of mixed endings keeps its `\r`s as text.
        let crlf = body.split('\n').all(|l| l.ends_with('\r'));
        let lines = body
            .split('\n')
            .map(|l| {
                if crlf {
                    l.strip_suffix('\r').unwrap_or(l)
                } else {
                    l
                }
                .to_string()
            })
            .collect();
        Ok(Text {
            lines,
            final_newline,
            crlf,
        })
    }

    fn render(&self) -> Vec<u8> {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut s = self.lines.join(eol);
        if self.final_newline && !self.lines.is_empty() {
            s.push_str(eol);
        }
        s.into_bytes()
    }
}

fn apply_err(file: &str, message: String) -> FsError {
    FsError::PatchApply {
        file: file.into(),
        message,
    }
}

/// A short view of lines for error messages.
fn excerpt(lines: &[&str]) -> String {
    let mut s: Vec<String> = lines
        .iter()
        .take(4)
        .map(|l| format!("  |{}", l.chars().take(100).collect::<String>()))
        .collect();
    if lines.len() > 4 {
        s.push(format!("  ... ({} lines)", lines.len()));
    }
    s.join("\n")
}

/// Applies `hunks` to `old`, strictly. Returns the new text and (added, removed).
fn apply_hunks(file: &str, old: &Text, hunks: &[Hunk]) -> Result<(Text, usize, usize), FsError> {
    let mut out: Vec<String> = Vec::with_capacity(old.lines.len());
    let mut cursor = 0; // next old line not yet copied
    let (mut added, mut removed) = (0, 0);
    let mut new_final = old.final_newline;
    for (n, h) in hunks.iter().enumerate() {
        let want = h.old_lines();
        let at = match h.old_start {
            Some(start) => {
                // `@@ -0,0` inserts at the top; otherwise line `start` is where the old lines begin.
                let at = if want.is_empty() {
                    start
                } else {
                    start.saturating_sub(1)
                };
                if at < cursor {
                    return Err(apply_err(
                        file,
                        format!(
                            "hunk {} (patch line {}) overlaps or precedes the hunk before it",
                            n + 1,
                            h.line
                        ),
                    ));
                }
                if at > old.lines.len() {
                    return Err(apply_err(
                        file,
                        format!("hunk {} (patch line {}) starts at line {}, past the end of the file ({} lines)", n + 1, h.line, at + 1, old.lines.len()),
                    ));
                }
                let here: Vec<&str> = old
                    .lines
                    .iter()
                    .skip(at)
                    .take(want.len())
                    .map(String::as_str)
                    .collect();
                if here != want {
                    return Err(apply_err(
                        file,
                        format!(
                            "hunk {} (patch line {}) does not match at line {}: it expects\n{}\nbut the file has\n{}",
                            n + 1,
                            h.line,
                            at + 1,
                            excerpt(&want),
                            excerpt(&here)
                        ),
                    ));
                }
                at
            }
            None => locate(file, old, h, n, cursor)?,
        };
        out.extend(old.lines[cursor..at].iter().cloned());
        out.extend(h.new_lines().into_iter().map(str::to_string));
        added += h
            .lines
            .iter()
            .filter(|l| matches!(l, super::patch::Line::Add(_)))
            .count();
        removed += h
            .lines
            .iter()
            .filter(|l| matches!(l, super::patch::Line::Remove(_)))
            .count();
        cursor = at + want.len();
        if cursor == old.lines.len() {
            if h.old_no_newline && old.final_newline {
                return Err(apply_err(
                    file,
                    format!(
                        "hunk {} says the file has no final newline, but it has one",
                        n + 1
                    ),
                ));
            }
            if h.old_start.is_some() {
                new_final = !h.new_no_newline;
            }
        } else if h.old_no_newline {
            return Err(apply_err(
                file,
                format!(
                    "hunk {} says its last line ends the file, but {} lines follow",
                    n + 1,
                    old.lines.len() - cursor
                ),
            ));
        }
    }
    out.extend(old.lines[cursor..].iter().cloned());
    if old.lines.is_empty()
        && !out.is_empty()
        && hunks
            .iter()
            .all(|h| h.old_start.is_none() || !h.new_no_newline)
    {
        new_final = true;
    }
    Ok((
        Text {
            lines: out,
            final_newline: new_final,
            crlf: old.crlf,
        },
        added,
        removed,
    ))
}

/// Where an envelope hunk applies: the one place at or after `cursor` (after its `@@`
/// anchor line, when it has one) where its old lines match exactly.
fn locate(file: &str, old: &Text, h: &Hunk, n: usize, cursor: usize) -> Result<usize, FsError> {
    let mut from = cursor;
    if let Some(anchor) = &h.anchor {
        let found: Vec<usize> = (cursor..old.lines.len())
            .filter(|&i| old.lines[i] == *anchor || old.lines[i].trim() == anchor.trim())
            .collect();
        match found.as_slice() {
            [] => return Err(apply_err(file, format!("hunk {} (patch line {}): the line `@@ {anchor}` is not in the file after line {cursor}", n + 1, h.line))),
            [i, ..] => from = i + 1,
        }
    }
    let want = h.old_lines();
    if want.is_empty() {
        return Ok(if h.anchor.is_some() {
            from
        } else {
            old.lines.len()
        });
    }
    if h.at_eof {
        let at = old.lines.len().saturating_sub(want.len());
        let here: Vec<&str> = old.lines[at..].iter().map(String::as_str).collect();
        if at < from || here != want {
            return Err(apply_err(
                file,
                format!(
                    "hunk {} (patch line {}) should end the file, but the file ends with\n{}",
                    n + 1,
                    h.line,
                    excerpt(&here)
                ),
            ));
        }
        return Ok(at);
    }
    let hits: Vec<usize> = (from..=old.lines.len().saturating_sub(want.len()))
        .filter(|&i| {
            i + want.len() <= old.lines.len()
                && old.lines[i..i + want.len()]
                    .iter()
                    .zip(&want)
                    .all(|(a, b)| a == b)
        })
        .take(2)
        .collect();
    match hits.as_slice() {
        [at] => Ok(*at),
        [] => Err(apply_err(file, format!("hunk {} (patch line {}): these lines are not in the file (after line {from}):\n{}", n + 1, h.line, excerpt(&want)))),
        [a, b, ..] => Err(apply_err(
            file,
            format!("hunk {} (patch line {}) matches at lines {} and {}; add context lines or an `@@ LINE` anchor so it matches once", n + 1, h.line, a + 1, b + 1),
        )),
    }
}

/// One file's planned change.
struct Planned {
    stat: FileStat,
    /// Where the new content goes (`None`: nothing written, e.g. a deletion).
    write: Option<(PathBuf, Vec<u8>, u32)>,
    /// Files removed after the writes (a deletion, or the source of a move).
    remove: Option<PathBuf>,
    /// The old content of a file overwritten or removed, to put back on failure.
    original: Option<(PathBuf, Vec<u8>, u32)>,
}

fn read_existing(target: &Path, shown: &str) -> Result<(Vec<u8>, u32), FsError> {
    let meta = std::fs::metadata(target).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => apply_err(
            shown,
            "does not exist; to create it, use `--- /dev/null` or `*** Add File:`".into(),
        ),
        _ => io_error(target, &e),
    })?;
    if !meta.is_file() {
        return Err(apply_err(shown, "is not a regular file".into()));
    }
    // Read without blocking and within a bound (a FIFO swapped in is refused, a huge file is
    // not slurped).
    let (bytes, meta) = crate::bounded::read(target, MAX_TARGET_BYTES).map_err(|e| match e {
        crate::error::ReadError::TooLarge { .. } => apply_err(
            shown,
            format!(
                "is larger than {} MiB: patch it with a command the scope allows, or split it",
                MAX_TARGET_BYTES >> 20
            ),
        ),
        crate::error::ReadError::NotRegular { .. } => {
            apply_err(shown, "is not a regular file".into())
        }
        other => apply_err(shown, other.to_string()),
    })?;
    Ok((bytes, meta.permissions().mode()))
}

/// The largest file apply_patch changes: 64 MiB, read whole into memory and written back.
pub const MAX_TARGET_BYTES: u64 = 64 << 20;

fn plan(guard: &Guard, f: &FilePatch) -> Result<Planned, FsError> {
    let checked = guard.check(&f.path, Access::Write)?;
    let target = checked.target.clone();
    let shown = f.path.as_str();
    let stat = |action, moved_to: Option<String>, added, removed, bytes| FileStat {
        path: f.path.clone(),
        resolved: target.display().to_string(),
        action,
        moved_to,
        hunks: f.hunks.len(),
        added,
        removed,
        bytes,
    };
    match f.kind {
        Kind::Add => {
            if std::fs::symlink_metadata(&target).is_ok() {
                return Err(apply_err(shown, "already exists; change it with an update (`--- a/PATH`, `*** Update File:`) instead".into()));
            }
            let empty = Text {
                lines: Vec::new(),
                final_newline: false,
                crlf: false,
            };
            let (text, added, _) = apply_hunks(shown, &empty, &f.hunks)?;
            let bytes = text.render();
            Ok(Planned {
                stat: stat("add", None, added, 0, bytes.len()),
                write: Some((target.clone(), bytes, 0o644)),
                remove: None,
                original: None,
            })
        }
        Kind::Delete => {
            let (bytes, mode) = read_existing(&target, shown)?;
            let old = Text::parse(&bytes, shown)?;
            // A unified deletion lists every line: they must be the file's.
            let removed = if f.hunks.is_empty() {
                old.lines.len()
            } else {
                let (rest, _, removed) = apply_hunks(shown, &old, &f.hunks)?;
                if !rest.lines.is_empty() {
                    return Err(apply_err(
                        shown,
                        format!(
                            "the deletion does not remove the whole file ({} lines would remain)",
                            rest.lines.len()
                        ),
                    ));
                }
                removed
            };
            Ok(Planned {
                stat: stat("delete", None, 0, removed, 0),
                write: None,
                remove: Some(target.clone()),
                original: Some((target, bytes, mode)),
            })
        }
        Kind::Update => {
            let (bytes, mode) = read_existing(&target, shown)?;
            let old = Text::parse(&bytes, shown)?;
            let (new, added, removed) = apply_hunks(shown, &old, &f.hunks)?;
            let new_bytes = new.render();
            match &f.move_to {
                None => Ok(Planned {
                    stat: stat("update", None, added, removed, new_bytes.len()),
                    write: Some((target.clone(), new_bytes, mode)),
                    remove: None,
                    original: Some((target, bytes, mode)),
                }),
                Some(to) => {
                    let dest = guard.check(to, Access::Write)?.target;
                    if std::fs::symlink_metadata(&dest).is_ok() && dest != target {
                        return Err(apply_err(
                            to,
                            "the move's destination already exists".into(),
                        ));
                    }
                    Ok(Planned {
                        stat: FileStat {
                            moved_to: Some(dest.display().to_string()),
                            ..stat("move", None, added, removed, new_bytes.len())
                        },
                        write: Some((dest, new_bytes, mode)),
                        remove: Some(target.clone()),
                        original: Some((target, bytes, mode)),
                    })
                }
            }
        }
    }
}

/// A temporary sibling of `target`, written and synced.
fn stage(
    target: &Path,
    bytes: &[u8],
    mode: u32,
    n: usize,
    created_dirs: &mut Vec<PathBuf>,
) -> Result<PathBuf, FsError> {
    let dir = target.parent().ok_or_else(|| {
        FsError::InvalidArgument(format!("{} has no parent directory", target.display()))
    })?;
    if !dir.exists() {
        // Record each directory created so a failure can remove them again.
        let mut missing = Vec::new();
        let mut d = dir.to_path_buf();
        while !d.exists() {
            missing.push(d.clone());
            if !d.pop() {
                break;
            }
        }
        // Recorded before they are made: a creation that fails halfway leaves some of them,
        // and the caller's cleanup removes those too.
        created_dirs.extend(missing.into_iter().rev());
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, &e))?;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.gptel-scope-{}-{n}.tmp",
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
        f.sync_all()
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(&tmp, &e)
    })?;
    Ok(tmp)
}

fn put_back(path: &Path, bytes: &[u8], mode: u32) {
    let mut dirs = Vec::new();
    if let Ok(tmp) = stage(path, bytes, mode, usize::MAX, &mut dirs) {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Applies a parsed patch: all files or none.
pub fn apply(guard: &Guard, patch: &Patch) -> Result<ApplyResult, FsError> {
    // 1. Judge and compute everything; nothing is touched yet.
    let mut seen = std::collections::HashSet::new();
    let mut planned = Vec::new();
    for f in &patch.files {
        let p = plan(guard, f)?;
        for t in [p.write.as_ref().map(|w| w.0.clone()), p.remove.clone()]
            .into_iter()
            .flatten()
        {
            if !seen.insert(t.clone()) {
                return Err(apply_err(&f.path, format!("{} is changed twice in this patch; put all its hunks under one file header", t.display())));
            }
        }
        planned.push(p);
    }
    // 2. Stage every new content beside its target.
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut created_dirs = Vec::new();
    let cleanup = |staged: &[(PathBuf, PathBuf)], dirs: &[PathBuf]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_file(tmp);
        }
        for d in dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    };
    for (n, p) in planned.iter().enumerate() {
        if let Some((target, bytes, mode)) = &p.write {
            match stage(target, bytes, *mode, n, &mut created_dirs) {
                Ok(tmp) => staged.push((tmp, target.clone())),
                Err(e) => {
                    cleanup(&staged, &created_dirs);
                    return Err(apply_err(&p.stat.path, format!("nothing was written: {e}")));
                }
            }
        }
    }
    // 3. Commit: rename each over its target; on failure put back what was replaced.
    let originals: std::collections::HashMap<&Path, (&[u8], u32)> = planned
        .iter()
        .filter_map(|p| {
            p.original
                .as_ref()
                .map(|(t, b, m)| (t.as_path(), (b.as_slice(), *m)))
        })
        .collect();
    for (i, (tmp, target)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, target) {
            for (_, done) in &staged[..i] {
                match originals.get(done.as_path()) {
                    Some((bytes, mode)) => put_back(done, bytes, *mode),
                    None => {
                        let _ = std::fs::remove_file(done);
                    }
                }
            }
            cleanup(&staged[i..], &created_dirs);
            return Err(apply_err(
                &target.display().to_string(),
                format!("nothing was written: {}", io_error(target, &e)),
            ));
        }
    }
    // 4. Removals (deletions and the sources of moves) come last.
    for (i, p) in planned.iter().enumerate() {
        if let Some(path) = &p.remove {
            if let Err(e) = std::fs::remove_file(path) {
                for (_, done) in &staged {
                    match originals.get(done.as_path()) {
                        Some((bytes, mode)) => put_back(done, bytes, *mode),
                        None => {
                            let _ = std::fs::remove_file(done);
                        }
                    }
                }
                for q in &planned[..i] {
                    if let (Some(r), Some((_, bytes, mode))) = (&q.remove, &q.original) {
                        put_back(r, bytes, *mode);
                    }
                }
                return Err(apply_err(
                    &p.stat.path,
                    format!("nothing was written: {}", io_error(path, &e)),
                ));
            }
        }
    }
    for d in planned.iter().filter_map(|p| {
        p.write
            .as_ref()
            .and_then(|w| w.0.parent().map(Path::to_path_buf))
    }) {
        if let Ok(f) = std::fs::File::open(&d) {
            let _ = f.sync_all();
        }
    }
    let files: Vec<FileStat> = planned.into_iter().map(|p| p.stat).collect();
    Ok(ApplyResult {
        added: files.iter().map(|f| f.added).sum(),
        removed: files.iter().map(|f| f.removed).sum(),
        bytes: files.iter().map(|f| f.bytes).sum(),
        files,
    })
}
