//! `read_file(path, offset, limit, mode)` (F03): a slice of a text file's lines, or the
//! block around a line chosen by indentation. Long lines are cut with a marker; binary
//! files are refused.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};

use serde::Serialize;

use super::{io_error, looks_binary, FsError, Guard};
use crate::policy::paths::Access;

/// Lines longer than this many characters are cut.
pub const MAX_LINE_CHARS: usize = 400;
/// The marker that ends a cut line (a truncation marker: [`crate::output::truncate`] holds it).
pub use crate::output::truncate::LINE_MARKER;
/// Default and largest `limit`.
pub const DEFAULT_LIMIT: usize = 400;
pub const MAX_LIMIT: usize = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `limit` lines from line `offset` (0-based).
    Slice,
    /// The block of code that holds line `offset`: from its header line (the nearest line
    /// above that is indented less) to the end of its indented body.
    Indentation,
}

impl Mode {
    pub fn parse(s: Option<&str>) -> Result<Mode, FsError> {
        match s {
            None | Some("") | Some("slice") => Ok(Mode::Slice),
            Some("indentation") => Ok(Mode::Indentation),
            Some(o) => Err(FsError::InvalidArgument(format!("unknown mode `{o}`: use \"slice\" or \"indentation\""))),
        }
    }
}

/// What `read_file` answers.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReadResult {
    pub path: String,
    pub resolved: String,
    pub mode: Mode,
    /// The lines shown, joined with `\n`.
    pub content: String,
    /// 1-based numbers of the first and last line shown (0 and 0 when none).
    pub start_line: usize,
    pub end_line: usize,
    pub total_lines: usize,
    /// Lines after `end_line` exist.
    pub has_more: bool,
    /// How many shown lines were cut at [`MAX_LINE_CHARS`].
    pub cut_lines: usize,
    /// Bytes of `content`.
    pub bytes: usize,
    /// Invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// Reads `path` (checked for read access) as described by [`Mode`].
pub fn read_file(guard: &Guard, path: &str, offset: usize, limit: Option<usize>, mode: Mode) -> Result<ReadResult, FsError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(FsError::InvalidArgument(format!("limit must be between 1 and {MAX_LIMIT} (got {limit})")));
    }
    let checked = guard.check(path, Access::Read)?;
    let target = &checked.target;
    let meta = std::fs::metadata(target).map_err(|e| io_error(target, &e))?;
    if meta.is_dir() {
        return Err(FsError::NotFound { path: path.into(), message: "is a directory: use list_dir".into() });
    }
    if !meta.is_file() {
        return Err(FsError::NotFound { path: path.into(), message: "is not a regular file".into() });
    }
    let file = File::open(target).map_err(|e| io_error(target, &e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader.fill_buf().map_err(|e| io_error(target, &e))?;
    if let Some(at) = looks_binary(head) {
        return Err(FsError::Binary { path: path.into(), detail: format!("a NUL byte at offset {at}") });
    }
    let (lines, total, start, end) = match mode {
        Mode::Slice => {
            let start = offset;
            let end = offset.saturating_add(limit);
            let (kept, total) = slice_lines(&mut reader, start, end).map_err(|e| io_error(target, &e))?;
            (kept, total, start.min(total), end.min(total))
        }
        Mode::Indentation => {
            if meta.len() > MAX_BLOCK_FILE {
                return Err(FsError::InvalidArgument(format!(
                    "indentation mode reads files up to {} MiB; {path} has {} bytes: use mode \"slice\"",
                    MAX_BLOCK_FILE >> 20,
                    meta.len()
                )));
            }
            let all = read_lines(&mut reader).map_err(|e| io_error(target, &e))?;
            let total = all.len();
            if offset >= total {
                return Err(FsError::InvalidArgument(format!("offset {offset} is past the end of the file ({total} lines)")));
            }
            let (s, e) = block(&all, offset);
            let e = e.min(s + limit);
            (all[s..e].to_vec(), total, s, e)
        }
    };
    let mut cut = 0;
    let mut lossy = false;
    let mut content = String::new();
    for (i, raw) in lines.iter().enumerate() {
        if i > 0 {
            content.push('\n');
        }
        let text = String::from_utf8_lossy(raw);
        lossy |= matches!(text, std::borrow::Cow::Owned(_));
        let text = text.trim_end_matches('\r');
        match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((at, _)) => {
                cut += 1;
                content.push_str(&text[..at]);
                content.push_str(LINE_MARKER);
            }
            None => content.push_str(text),
        }
    }
    Ok(ReadResult {
        path: path.into(),
        resolved: target.display().to_string(),
        mode,
        bytes: content.len(),
        content,
        start_line: if end > start { start + 1 } else { 0 },
        end_line: if end > start { end } else { 0 },
        total_lines: total,
        has_more: end < total,
        cut_lines: cut,
        lossy,
    })
}

/// Largest file indentation mode reads whole.
const MAX_BLOCK_FILE: u64 = 32 << 20;

/// Lines `[start, end)` without their `\n`, and the number of lines in all (streamed).
fn slice_lines(reader: &mut impl BufRead, start: usize, end: usize) -> std::io::Result<(Vec<Vec<u8>>, usize)> {
    let mut kept = Vec::new();
    let mut buf = Vec::new();
    let mut n = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        if n >= start && n < end {
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            kept.push(buf.clone());
        }
        n += 1;
    }
    Ok((kept, n))
}

/// The file's lines, without their `\n`.
fn read_lines(reader: &mut impl Read) -> std::io::Result<Vec<Vec<u8>>> {
    let mut all = Vec::new();
    reader.read_to_end(&mut all)?;
    if all.is_empty() {
        return Ok(Vec::new());
    }
    let body = all.strip_suffix(b"\n").unwrap_or(&all);
    Ok(body.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect())
}

fn indent(line: &[u8]) -> Option<usize> {
    let mut n = 0;
    for &b in line {
        match b {
            b' ' => n += 1,
            b'\t' => n += 8 - n % 8,
            b'\r' => return None,
            _ => return Some(n),
        }
    }
    None // blank
}

/// Closing lines that belong to the block they end (`}`, `end`, `fi`, ...).
fn closes(line: &[u8]) -> bool {
    let t = String::from_utf8_lossy(line);
    let t = t.trim();
    t.starts_with(['}', ')', ']']) || ["end", "fi", "done", "esac", "endif", "#endif"].iter().any(|w| t == *w || t.starts_with(&format!("{w} ")) || t.starts_with(&format!("{w};")))
}

/// `[start, end)` of the block holding line `at`.
fn block(lines: &[Vec<u8>], at: usize) -> (usize, usize) {
    let next_nonblank = |from: usize| (from..lines.len()).find(|&i| indent(&lines[i]).is_some());
    let Some(anchor) = next_nonblank(at) else {
        return (at, lines.len());
    };
    let level = indent(&lines[anchor]).unwrap_or(0);
    let opens = next_nonblank(anchor + 1).and_then(|i| indent(&lines[i])).is_some_and(|n| n > level);
    let header = if opens {
        anchor
    } else {
        match (0..anchor).rev().find(|&i| indent(&lines[i]).is_some_and(|n| n < level)) {
            Some(h) => h,
            None => return (anchor, lines.len()),
        }
    };
    let head_level = indent(&lines[header]).unwrap_or(0);
    let mut end = header + 1;
    let mut last_body = header;
    while end < lines.len() {
        match indent(&lines[end]) {
            None => {}
            Some(n) if n > head_level => last_body = end,
            Some(_) => {
                if closes(&lines[end]) {
                    last_body = end;
                }
                break;
            }
        }
        end += 1;
    }
    (header, last_body + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.split('\n').map(|l| l.as_bytes().to_vec()).collect()
    }

    #[test]
    fn f03_indentation_block_table() {
        let src = "fn a() {\n    let x = 1;\n    if x {\n        y();\n    }\n}\n\nfn b() {}";
        let l = lines(src);
        for (at, want) in [
            (0, (0, 6)), // a header: its whole body and the closing brace
            (1, (0, 6)), // a body line: the enclosing block
            (3, (2, 5)), // inside the if
            (2, (2, 5)), // the if itself opens a block
            (7, (7, 8)), // a top-level line without a body
        ] {
            assert_eq!(block(&l, at), want, "line {at}");
        }
    }
}
