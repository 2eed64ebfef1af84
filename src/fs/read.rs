//! `read_file(path, offset, limit, mode)` (F03): a slice of a text file's lines, or the
//! block around a line chosen by indentation. Long lines are cut with a marker; binary
//! files are refused.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

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
            Some(o) => Err(FsError::InvalidArgument(format!(
                "unknown mode `{o}`: use \"slice\" or \"indentation\""
            ))),
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
    /// Lines in the file: known when the read reached its end, or the file is at most
    /// [`COUNT_ALL_UP_TO`] bytes (counted then); `None` for a larger file read in part.
    pub total_lines: Option<usize>,
    /// Lines after `end_line` exist.
    pub has_more: bool,
    /// The `offset` that reads on after this result, when there is more.
    pub next_offset: Option<usize>,
    /// How many shown lines were cut at [`MAX_LINE_CHARS`].
    pub cut_lines: usize,
    /// Bytes of `content`.
    pub bytes: usize,
    /// Invalid UTF-8 was replaced.
    pub lossy: bool,
}

/// Reads `path` (checked for read access) as described by [`Mode`].
pub fn read_file(
    guard: &Guard,
    path: &str,
    offset: usize,
    limit: Option<usize>,
    mode: Mode,
) -> Result<ReadResult, FsError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(FsError::InvalidArgument(format!(
            "limit must be between 1 and {MAX_LIMIT} (got {limit})"
        )));
    }
    let checked = guard.check(path, Access::Read)?;
    let target = &checked.target;
    let meta = std::fs::metadata(target).map_err(|e| io_error(target, &e))?;
    if meta.is_dir() {
        return Err(FsError::NotFound {
            path: path.into(),
            message: "is a directory: use list_dir".into(),
        });
    }
    if !meta.is_file() {
        return Err(FsError::NotFound {
            path: path.into(),
            message: "is not a regular file".into(),
        });
    }
    // Opened without blocking, and judged again on the descriptor: a FIFO swapped in after
    // the look above is refused, not waited on.
    let file = match crate::bounded::open(target) {
        Ok((f, _)) => f,
        Err(crate::error::ReadError::NotRegular { .. }) => {
            return Err(FsError::NotFound {
                path: path.into(),
                message: "is not a regular file".into(),
            })
        }
        Err(e) => {
            return Err(FsError::NotFound {
                path: path.into(),
                message: e.to_string(),
            })
        }
    };
    let mut lines = Lines::new(file);
    if let Some(at) = looks_binary(lines.head().map_err(|e| io_error(target, &e))?) {
        return Err(FsError::Binary {
            path: path.into(),
            detail: format!("a NUL byte at offset {at}"),
        });
    }
    let count_all = meta.len() <= COUNT_ALL_UP_TO;
    let span = match mode {
        Mode::Slice => lines.slice(offset, limit).map(Some),
        Mode::Indentation => lines.block(offset, limit),
    }
    .map_err(|e| io_error(target, &e))?;
    let Some(Span {
        lines: shown,
        start,
        end,
        total,
    }) = span
    else {
        return Err(FsError::InvalidArgument(format!(
            "offset {offset} is past the end of the file ({} lines)",
            lines.seen
        )));
    };
    let total = match total {
        None if count_all => Some(lines.count_to_end().map_err(|e| io_error(target, &e))?),
        t => t,
    };
    let has_more = match total {
        Some(t) => end < t,
        None => true,
    };
    let mut cut = 0;
    let mut lossy = false;
    let mut content = String::new();
    for (i, raw) in shown.iter().enumerate() {
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
        has_more,
        next_offset: has_more.then_some(end),
        cut_lines: cut,
        lossy,
    })
}

/// Files up to this size are counted to their end, so that `total_lines` is known (about a
/// millisecond); a larger one is read only as far as the lines shown, and one byte more to
/// know whether there is more.
pub const COUNT_ALL_UP_TO: u64 = 4 << 20;

/// The lines a result shows, `[start, end)` (0-based), and the file's line count when the
/// read reached its end.
struct Span {
    lines: Vec<Vec<u8>>,
    start: usize,
    end: usize,
    total: Option<usize>,
}

/// A file read forward a line at a time, skipping the lines it does not show a whole buffer
/// at a time. A last line without `\n` counts as a line.
struct Lines<R> {
    reader: BufReader<R>,
    /// Lines consumed so far.
    seen: usize,
    /// Bytes consumed so far.
    pos: u64,
}

/// How far [`Lines::read_from`] reads.
#[derive(Clone, Copy)]
enum Until {
    /// To the end of the file.
    End,
    /// To the end of the body of a block whose header is indented this much (its closing
    /// line included, trailing blank lines not).
    BlockOf(usize),
}

impl<R: Read + Seek> Lines<R> {
    fn new(inner: R) -> Self {
        Lines {
            reader: BufReader::with_capacity(64 * 1024, inner),
            seen: 0,
            pos: 0,
        }
    }

    /// The first bytes of the file (for the binary check), consuming nothing.
    fn head(&mut self) -> std::io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    /// Whether any byte is left.
    fn more(&mut self) -> std::io::Result<bool> {
        Ok(!self.reader.fill_buf()?.is_empty())
    }

    /// The next line into `buf` without its `\n`; false at the end. The line is cut as it
    /// is read: at most [`KEPT_LINE_BYTES`] of it are kept (more than a cut line shows), the
    /// rest only counted past, so memory stays bounded whatever the line's length (a line
    /// of a gigabyte is never held).
    fn next_line(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        buf.clear();
        let mut read = 0u64;
        let mut dropped = 0u64;
        loop {
            let chunk = self.reader.fill_buf()?;
            if chunk.is_empty() {
                break;
            }
            let (used, ends) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let body = &chunk[..if ends { used - 1 } else { used }];
            let room = KEPT_LINE_BYTES.saturating_sub(buf.len()).min(body.len());
            buf.extend_from_slice(&body[..room]);
            dropped += (body.len() - room) as u64;
            self.reader.consume(used);
            read += used as u64;
            if ends {
                break;
            }
        }
        if read == 0 {
            return Ok(false);
        }
        if dropped > 0 {
            // A character cut in the middle is not shown as a replacement character.
            buf.truncate(whole_chars(buf));
        }
        self.pos += read;
        self.seen += 1;
        Ok(true)
    }

    /// Consumes lines until `n` have been consumed in all, counting the newlines of a
    /// buffer at once; false when the file ends first.
    fn skip_to(&mut self, n: usize) -> std::io::Result<bool> {
        let mut partial = false;
        while self.seen < n {
            let buf = self.reader.fill_buf()?;
            if buf.is_empty() {
                if partial {
                    // The last line has no `\n`.
                    self.seen += 1;
                }
                return Ok(self.seen >= n);
            }
            let want = n - self.seen;
            let newlines = count_newlines(buf);
            let (used, counted) = if newlines >= want {
                (
                    memchr::memchr_iter(b'\n', buf)
                        .nth(want - 1)
                        .map_or(buf.len(), |i| i + 1),
                    want,
                )
            } else {
                (buf.len(), newlines)
            };
            partial = buf[..used].last() != Some(&b'\n');
            self.reader.consume(used);
            self.pos += used as u64;
            self.seen += counted;
        }
        Ok(true)
    }

    /// The number of lines in the file, reading on from here.
    fn count_to_end(&mut self) -> std::io::Result<usize> {
        self.skip_to(usize::MAX)?;
        Ok(self.seen)
    }

    /// `limit` lines from line `start` (none when the file has fewer lines).
    fn slice(&mut self, start: usize, limit: usize) -> std::io::Result<Span> {
        let mut lines = Vec::new();
        if self.skip_to(start)? {
            let mut buf = Vec::new();
            while lines.len() < limit && self.next_line(&mut buf)? {
                lines.push(buf.clone());
            }
        }
        let start = start.min(self.seen - lines.len());
        let total = if self.more()? { None } else { Some(self.seen) };
        Ok(Span {
            end: start + lines.len(),
            lines,
            start,
            total,
        })
    }

    /// The block of code holding line `at`, at most `limit` lines: from its header (the line
    /// itself when the next non-blank line is indented more, else the nearest line above
    /// indented less) to the end of its indented body. The lines above that could be a
    /// header are kept on a stack while reading up to `at` (their indents strictly
    /// increase), so nothing before is read twice. `None` when `at` is past the end.
    fn block(&mut self, at: usize, limit: usize) -> std::io::Result<Option<Span>> {
        let mut enclosing: Vec<(usize, usize, u64)> = Vec::new();
        let mut at_pos = None;
        let mut anchor = None;
        let mut buf = Vec::new();
        loop {
            let (line, pos) = (self.seen, self.pos);
            if line == at {
                at_pos = Some(pos);
            }
            if !self.next_line(&mut buf)? {
                break;
            }
            let Some(n) = indent(&buf) else { continue };
            if line >= at {
                anchor = Some((line, n, pos));
                break;
            }
            while enclosing.last().is_some_and(|&(_, i, _)| i >= n) {
                enclosing.pop();
            }
            enclosing.push((line, n, pos));
        }
        let Some((anchor, level, anchor_pos)) = anchor else {
            // Nothing but blank lines from `at` on: they are what is shown.
            return match at_pos {
                Some(pos) if at < self.seen => self.read_from(at, pos, limit, Until::End).map(Some),
                _ => Ok(None),
            };
        };
        let mut opens = false;
        while self.next_line(&mut buf)? {
            if let Some(n) = indent(&buf) {
                opens = n > level;
                break;
            }
        }
        if opens {
            return self
                .read_from(anchor, anchor_pos, limit, Until::BlockOf(level))
                .map(Some);
        }
        while enclosing.last().is_some_and(|&(_, i, _)| i >= level) {
            enclosing.pop();
        }
        match enclosing.last() {
            Some(&(header, head_level, pos)) => self
                .read_from(header, pos, limit, Until::BlockOf(head_level))
                .map(Some),
            // No header above: from the line to the end of the file.
            None => self
                .read_from(anchor, anchor_pos, limit, Until::End)
                .map(Some),
        }
    }

    /// At most `limit` lines from line `first`, which starts at byte `pos`, as far as
    /// `until` says.
    fn read_from(
        &mut self,
        first: usize,
        pos: u64,
        limit: usize,
        until: Until,
    ) -> std::io::Result<Span> {
        self.reader.seek(SeekFrom::Start(pos))?;
        (self.seen, self.pos) = (first, pos);
        let mut lines: Vec<Vec<u8>> = Vec::new();
        let mut last_body = 0;
        let mut ended = false;
        let mut buf = Vec::new();
        while lines.len() < limit {
            if !self.next_line(&mut buf)? {
                ended = true;
                break;
            }
            lines.push(buf.clone());
            let Until::BlockOf(head) = until else {
                continue;
            };
            match indent(&buf) {
                _ if lines.len() == 1 => {}
                None => {}
                Some(n) if n > head => last_body = lines.len() - 1,
                Some(_) => {
                    if closes(&buf) {
                        last_body = lines.len() - 1;
                    } else {
                        lines.pop();
                    }
                    ended = true;
                    break;
                }
            }
        }
        if let Until::BlockOf(head) = until {
            // Cut by the limit after blank lines: they belong to the block only if a line
            // of its body follows them.
            while !ended && last_body + 1 < lines.len() {
                if !self.next_line(&mut buf)? {
                    ended = true;
                    break;
                }
                match indent(&buf) {
                    None => {}
                    Some(n) if n > head || closes(&buf) => break,
                    Some(_) => ended = true,
                }
            }
            if ended {
                lines.truncate(last_body + 1);
            }
        }
        let total = if self.more()? { None } else { Some(self.seen) };
        Ok(Span {
            end: first + lines.len(),
            lines,
            start: first,
            total,
        })
    }
}

/// The most bytes of a line [`Lines`] keeps: room for one character more than
/// [`MAX_LINE_CHARS`] at four bytes each, so a line cut while read still shows as cut.
pub const KEPT_LINE_BYTES: usize = 4 * (MAX_LINE_CHARS + 1);

/// The length of `bytes` without a UTF-8 sequence left incomplete at its end.
fn whole_chars(bytes: &[u8]) -> usize {
    let n = bytes.len();
    // The start of the last sequence: at most three continuation bytes back.
    let Some(lead) = (n.saturating_sub(4)..n)
        .rev()
        .find(|&i| bytes[i] & 0xc0 != 0x80)
    else {
        return n;
    };
    let want = match bytes[lead] {
        b if b >= 0xf0 => 4,
        b if b >= 0xe0 => 3,
        b if b >= 0xc0 => 2,
        _ => 1,
    };
    if n - lead < want {
        lead
    } else {
        n
    }
}

/// Newlines in `bytes`, with memchr's vectorized search (it counted the 274 MB log of
/// `make bench` in 12 ms in memory, where a byte-by-byte filter took 138 ms).
fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
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
    t.starts_with(['}', ')', ']'])
        || ["end", "fi", "done", "esac", "endif", "#endif"]
            .iter()
            .any(|w| t == *w || t.starts_with(&format!("{w} ")) || t.starts_with(&format!("{w};")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines(text: &str) -> Vec<Vec<u8>> {
        text.split('\n').map(|l| l.as_bytes().to_vec()).collect()
    }

    /// The rule of [`Lines::block`] on lines in memory: `[start, end)` of the block holding
    /// line `at`, before the limit. The streaming reader must agree with it.
    fn block(lines: &[Vec<u8>], at: usize) -> (usize, usize) {
        let next_nonblank =
            |from: usize| (from..lines.len()).find(|&i| indent(&lines[i]).is_some());
        let Some(anchor) = next_nonblank(at) else {
            return (at, lines.len());
        };
        let level = indent(&lines[anchor]).unwrap_or(0);
        let opens = next_nonblank(anchor + 1)
            .and_then(|i| indent(&lines[i]))
            .is_some_and(|n| n > level);
        let header = if opens {
            anchor
        } else {
            match (0..anchor)
                .rev()
                .find(|&i| indent(&lines[i]).is_some_and(|n| n < level))
            {
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

    /// `[start, end)`, the lines shown and the total, as the streaming reader gives them.
    type Streamed = (usize, usize, Vec<Vec<u8>>, Option<usize>);

    /// `[start, end)` and the lines shown by the streaming reader.
    fn streamed(text: &str, at: usize, limit: usize) -> Option<Streamed> {
        let span = Lines::new(Cursor::new(text.as_bytes().to_vec()))
            .block(at, limit)
            .expect("read");
        span.map(|s| (s.start, s.end, s.lines, s.total))
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
            let (s, e, shown, _) = streamed(src, at, 2000).expect("a block");
            assert_eq!((s, e), want, "line {at}, streamed");
            assert_eq!(shown, l[s..e].to_vec(), "line {at}, streamed");
        }
        assert_eq!(streamed(src, 8, 10), None, "past the end");
        assert_eq!(
            streamed(src, 1, 3).map(|(s, e, _, _)| (s, e)),
            Some((0, 3)),
            "the limit cuts the block"
        );
    }

    /// The streaming reader agrees with the in-memory rule on every line of generated
    /// texts (indents, blank lines, closing lines, a last line with and without `\n`).
    #[test]
    fn streamed_blocks_agree_with_the_rule_everywhere() {
        let pieces = [
            "a", "  b", "    c", "", "  ", "}", "  end", "\tt", "      d", "x {",
        ];
        let mut seed = 7u64;
        for case in 0..400 {
            let n = 1 + case % 23;
            let mut text = String::new();
            for i in 0..n {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if i > 0 {
                    text.push('\n');
                }
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            if case % 2 == 0 {
                text.push('\n');
            }
            let l = lines(text.strip_suffix('\n').unwrap_or(&text));
            let total = if text.is_empty() { 0 } else { l.len() };
            for at in 0..total + 1 {
                for limit in [1, 3, 2000] {
                    let got = streamed(&text, at, limit);
                    if at >= total {
                        assert_eq!(got, None, "{text:?} at {at}");
                        continue;
                    }
                    let (s, e) = block(&l, at);
                    let e = e.min(s + limit);
                    let (gs, ge, shown, _) =
                        got.unwrap_or_else(|| panic!("{text:?} at {at}: no block"));
                    assert_eq!((gs, ge), (s, e), "{text:?} at {at} limit {limit}");
                    assert_eq!(shown, l[s..e].to_vec(), "{text:?} at {at} limit {limit}");
                }
            }
        }
    }

    /// A line longer than [`KEPT_LINE_BYTES`] is kept cut, at a whole character, and the
    /// lines after it are read as before.
    #[test]
    fn long_lines_are_cut_as_they_are_read() {
        for (line, kept) in [
            ("x".repeat(1 << 20), "x".repeat(KEPT_LINE_BYTES)),
            ("é".repeat(5_000), "é".repeat(KEPT_LINE_BYTES / 2)),
            (
                format!("x{}", "é".repeat(5_000)),
                format!("x{}", "é".repeat(KEPT_LINE_BYTES / 2 - 1)),
            ),
            ("y".repeat(KEPT_LINE_BYTES), "y".repeat(KEPT_LINE_BYTES)),
        ] {
            let text = format!("a\n{line}\nb");
            let mut r = Lines {
                reader: BufReader::with_capacity(100, Cursor::new(text.as_bytes().to_vec())),
                seen: 0,
                pos: 0,
            };
            let span = r.slice(1, 2).expect("read");
            assert_eq!(
                span.lines,
                vec![kept.into_bytes(), b"b".to_vec()],
                "{}",
                line.len()
            );
            assert_eq!(
                (span.start, span.end, span.total, r.pos),
                (1, 3, Some(3), text.len() as u64)
            );
        }
        for (bytes, want) in [
            (&b"ab"[..], 2),
            (b"a\xc3", 1),
            (b"a\xc3\xa9", 3),
            (b"\xf0\x9f\x98", 0),
            (b"\xf0\x9f\x98\x80", 4),
            (b"\x80\x80\x80\x80\x80", 5),
        ] {
            assert_eq!(whole_chars(bytes), want, "{bytes:?}");
        }
    }

    #[test]
    fn newlines_are_counted_at_every_length_and_alignment() {
        let text: Vec<u8> = (0..20_000u32)
            .map(|i| {
                if i % 7 == 0 || i % 13 == 0 {
                    b'\n'
                } else {
                    b'a'
                }
            })
            .collect();
        for start in [0, 1, 5, 31] {
            for len in [
                0,
                1,
                31,
                32,
                33,
                255 * 32 - 1,
                255 * 32,
                255 * 32 + 1,
                9_000,
                19_000,
            ] {
                let bytes = &text[start..start + len];
                assert_eq!(
                    count_newlines(bytes),
                    bytes.iter().filter(|&&b| b == b'\n').count(),
                    "{start} {len}"
                );
            }
        }
        // Every byte a newline: no lane overflows.
        assert_eq!(count_newlines(&[b'\n'; 255 * 32 * 3 + 7]), 255 * 32 * 3 + 7);
    }

    /// Slices and line counts agree with splitting the text, for every offset, with and
    /// without a last `\n`, through buffers smaller than the text.
    #[test]
    fn slices_agree_with_splitting() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "\n\n",
            "one\ntwo\nthree\n",
            "x\n\ny",
        ] {
            let l = lines(text.strip_suffix('\n').unwrap_or(text));
            let total = if text.is_empty() { 0 } else { l.len() };
            for start in 0..total + 2 {
                for limit in [1, 2, 5] {
                    let mut r = Lines {
                        reader: BufReader::with_capacity(2, Cursor::new(text.as_bytes().to_vec())),
                        seen: 0,
                        pos: 0,
                    };
                    let span = r.slice(start, limit).expect("read");
                    let (s, e) = (start.min(total), (start + limit).min(total));
                    assert_eq!((span.start, span.end), (s, e), "{text:?} {start} {limit}");
                    assert_eq!(
                        span.lines,
                        l.get(s..e).map(<[Vec<u8>]>::to_vec).unwrap_or_default(),
                        "{text:?} {start} {limit}"
                    );
                    let counted = match span.total {
                        Some(t) => t,
                        None => r.count_to_end().expect("count"),
                    };
                    assert_eq!(counted, total, "{text:?} {start} {limit}");
                }
            }
        }
    }
}
