//! `grep_files(pattern, path, include, limit)` (F04): a recursive regex search in the
//! module, `file:line:match` lines, stopping at the limit. The walk honours `.gitignore`
//! (as ripgrep does), skips hidden files, binary files and symlinks, and everything the
//! scope denies or does not cover.

use std::io::{BufRead, BufReader};
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::bytes::{Regex, RegexBuilder};
use serde::Serialize;

use super::{io_error, looks_binary, FsError, Guard};
use crate::policy::denied::walked;
use crate::policy::paths::{Access, Resolved};

pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 2000;
/// Files larger than this are skipped (and counted).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most files searched by one call.
pub const MAX_FILES: usize = 100_000;
/// A matching line longer than this is cut with the `read_file` marker.
pub const MAX_LINE_CHARS: usize = super::read::MAX_LINE_CHARS;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GrepResult {
    pub pattern: String,
    pub path: String,
    /// `file:line:match`, one a line; files relative to `path`.
    pub content: String,
    pub matches: usize,
    /// The search stopped at `limit`; more matches may exist.
    pub truncated: bool,
    pub files_searched: usize,
    /// Files left out: denied or outside the scope, binary, or too large.
    pub files_skipped: usize,
    pub bytes: usize,
}

fn include_set(include: &[String]) -> Result<Option<GlobSet>, FsError> {
    if include.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in include {
        let g = g.trim();
        if g.is_empty() {
            continue;
        }
        // A glob without `/` matches the file name anywhere (`*.rs`), as ripgrep's -g does.
        let pat = if g.contains('/') { g.trim_start_matches("./").to_string() } else { format!("**/{g}") };
        let glob = GlobBuilder::new(&pat)
            .literal_separator(true)
            .build()
            .map_err(|e| FsError::InvalidArgument(format!("include glob `{g}`: {e}")))?;
        b.add(glob);
    }
    b.build().map(Some).map_err(|e| FsError::InvalidArgument(format!("include globs: {e}")))
}

/// Searches the files under `path` (or the file `path`) for `pattern`.
pub fn grep_files(guard: &Guard, pattern: &str, path: &str, include: &[String], limit: Option<usize>) -> Result<GrepResult, FsError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(FsError::InvalidArgument(format!("limit must be between 1 and {MAX_LIMIT} (got {limit})")));
    }
    if pattern.is_empty() {
        return Err(FsError::InvalidArgument("the pattern is empty".into()));
    }
    let re = RegexBuilder::new(pattern)
        .size_limit(10 << 20)
        .dfa_size_limit(10 << 20)
        .build()
        .map_err(|e| FsError::InvalidArgument(format!("the pattern is not a valid regular expression (Rust regex syntax): {e}")))?;
    let includes = include_set(include)?;
    let checked = guard.check(path, Access::Read)?;
    let root = checked.target.clone();
    let root_as_written = Resolved { literal: checked.literal.clone(), target: root.clone() };
    let meta = std::fs::metadata(&root).map_err(|e| io_error(&root, &e))?;
    let mut out = Search { re: &re, lines: Vec::new(), limit, truncated: false, searched: 0, skipped: 0 };
    if meta.is_file() {
        let name = Path::new(path).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.into());
        out.file(&root, &name);
    } else {
        let walk = ignore::WalkBuilder::new(&root)
            .follow_links(false)
            .hidden(true)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .require_git(false)
            .parents(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in walk {
            if out.truncated || out.searched >= MAX_FILES {
                out.truncated |= out.searched >= MAX_FILES;
                break;
            }
            let Ok(entry) = entry else { continue };
            let p = entry.path();
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            // Judged as every walk judges its entries (a symlink by its own path).
            if !guard.visible(&walked(&root_as_written, p)) {
                out.skipped += 1;
                continue;
            }
            let rel = p.strip_prefix(&root).unwrap_or(p);
            if let Some(set) = &includes {
                if !set.is_match(rel) {
                    continue;
                }
            }
            out.file(p, &rel.to_string_lossy());
        }
    }
    let content = out.lines.join("\n");
    Ok(GrepResult {
        pattern: pattern.into(),
        path: path.into(),
        matches: out.lines.len(),
        truncated: out.truncated,
        files_searched: out.searched,
        files_skipped: out.skipped,
        bytes: content.len(),
        content,
    })
}

struct Search<'a> {
    re: &'a Regex,
    lines: Vec<String>,
    limit: usize,
    truncated: bool,
    searched: usize,
    skipped: usize,
}

impl Search<'_> {
    fn file(&mut self, p: &Path, shown: &str) {
        let Ok(meta) = std::fs::metadata(p) else {
            self.skipped += 1;
            return;
        };
        if meta.len() > MAX_FILE_BYTES {
            self.skipped += 1;
            return;
        }
        let Ok(f) = std::fs::File::open(p) else {
            self.skipped += 1;
            return;
        };
        let mut reader = BufReader::with_capacity(64 * 1024, f);
        match reader.fill_buf() {
            Ok(head) if looks_binary(head).is_some() => {
                self.skipped += 1;
                return;
            }
            Ok(_) => {}
            Err(_) => {
                self.skipped += 1;
                return;
            }
        }
        self.searched += 1;
        let mut buf = Vec::new();
        let mut n = 0usize;
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            n += 1;
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !self.re.is_match(line) {
                continue;
            }
            if self.lines.len() >= self.limit {
                self.truncated = true;
                return;
            }
            let text = String::from_utf8_lossy(line);
            let text = match text.char_indices().nth(MAX_LINE_CHARS) {
                Some((at, _)) => format!("{}{}", &text[..at], crate::output::truncate::LINE_MARKER),
                None => text.into_owned(),
            };
            self.lines.push(format!("{shown}:{n}:{text}"));
        }
    }
}
