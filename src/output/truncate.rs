//! Truncation of command output before it goes to the model (SPEC §4).
//!
//! Two limiters:
//!
//! - [`truncate_chars`]: the model limit of `run_bash_command` (`bash_tools.max_output_chars`,
//!   B32-B34). Over the limit, the first characters are kept (cut at the last newline when that
//!   keeps at least 80 % of the limit) and a notice gives the shown and total sizes and suggests
//!   `head`, `grep` or `tail`.
//! - [`truncate_stream`]: the seeds/004 limiter of the shell and PTY tools (8 KB or 200 lines,
//!   whichever comes first, F07), ending with a `[truncated]` marker line. [`StreamBudget`]
//!   applies it per poll and in total per session (F10).
//!
//! Both are UTF-8 safe (a character is never split) and fast: lines are counted with `memchr`,
//! characters with the standard library's word-at-a-time counter, and the cut point is found
//! without decoding the whole text.

use memchr::{memchr_iter, memrchr};

/// The marker that ends a line cut by `read_file` or `grep_files` (what the redactor knows
/// may follow a cut).
pub const LINE_MARKER: &str = "… [truncated line]";

/// The result of a truncation: the text to hand on, and the sizes for the notice and for
/// events (SPEC §7: `truncated`, bytes).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Truncated {
    /// The text to return: the input unchanged, or its kept part followed by the notice.
    pub output: String,
    /// Whether anything was cut.
    pub truncated: bool,
    /// Characters of the input that `output` shows (the notice not counted).
    pub shown_chars: usize,
    /// Characters of the input.
    pub total_chars: usize,
    /// Lines of the input that `output` shows; a partly shown line counts.
    pub shown_lines: usize,
    /// Lines of the input; a last line without a newline counts.
    pub total_lines: usize,
    /// Bytes of the input that `output` shows (the notice not counted).
    pub shown_bytes: usize,
    /// Bytes of the input.
    pub total_bytes: usize,
}

/// Lines in `text`: one per newline, plus a last line that has none. `""` has no line.
pub fn count_lines(text: &str) -> usize {
    let newlines = memchr_iter(b'\n', text.as_bytes()).count();
    if text.is_empty() || text.ends_with('\n') {
        newlines
    } else {
        newlines + 1
    }
}

/// The largest character boundary at or below `index` (clamped to the text).
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut i = index;
    // A UTF-8 character is at most 4 bytes: at most 3 steps back.
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset where character number `n` (0-based) starts, or the text's length when it
/// has no more than `n` characters. Work is proportional to the bytes up to that offset: the
/// prefix is counted in chunks of `remaining` bytes, each holding at most `remaining`
/// characters, so every chunk consumes at least a quarter of what is left.
fn char_offset(text: &str, n: usize) -> usize {
    let mut pos = 0;
    let mut remaining = n;
    while remaining > 0 && pos < text.len() {
        let mut end = floor_char_boundary(text, pos.saturating_add(remaining));
        if end == pos {
            // Fewer bytes asked for than the next character has: take that one character.
            end = pos + 1;
            while end < text.len() && !text.is_char_boundary(end) {
                end += 1;
            }
        }
        let chars = text[pos..end].chars().count();
        remaining -= chars.min(remaining);
        pos = end;
    }
    pos
}

/// What to keep of a text and what to say about it; computed on the borrowed text, then
/// applied to a copy ([`truncate_chars`]) or in place ([`truncate_chars_owned`]).
struct Plan {
    truncated: bool,
    shown_bytes: usize,
    shown_chars: usize,
    total_chars: usize,
    shown_lines: usize,
    total_lines: usize,
    total_bytes: usize,
    marker: Marker,
}

#[derive(Clone, Copy)]
enum Marker {
    /// The B33 notice, after a blank line.
    Notice,
    /// The seeds/004 `[truncated]` line.
    Stream,
}

impl Plan {
    /// `shown` holds exactly the kept part of the text.
    fn finish(self, mut shown: String) -> Truncated {
        if self.truncated {
            let Plan {
                shown_chars,
                total_chars,
                shown_lines,
                total_lines,
                ..
            } = self;
            match self.marker {
                Marker::Notice => {
                    if !shown.is_empty() {
                        shown.push_str("\n\n");
                    }
                    shown.push_str(&format!(
                        "[Output truncated: showing {shown_chars} of {total_chars} characters \
                         ({shown_lines} of {total_lines} lines). Narrow the output with filters \
                         such as 'head', 'grep' or 'tail'.]"
                    ));
                }
                Marker::Stream => {
                    if !shown.is_empty() && !shown.ends_with('\n') {
                        shown.push('\n');
                    }
                    shown.push_str(&format!(
                        "[truncated] showing {} of {} bytes, {shown_lines} of {total_lines} lines",
                        self.shown_bytes, self.total_bytes
                    ));
                }
            }
            if shown.capacity() > 2 * shown.len() + 4096 {
                shown.shrink_to_fit();
            }
        }
        Truncated {
            output: shown,
            truncated: self.truncated,
            shown_chars: self.shown_chars,
            total_chars: self.total_chars,
            shown_lines: self.shown_lines,
            total_lines: self.total_lines,
            shown_bytes: self.shown_bytes,
            total_bytes: self.total_bytes,
        }
    }

    fn whole(text: &str, total_chars: usize, total_lines: usize, marker: Marker) -> Self {
        Plan {
            truncated: false,
            shown_bytes: text.len(),
            shown_chars: total_chars,
            total_chars,
            shown_lines: total_lines,
            total_lines,
            total_bytes: text.len(),
            marker,
        }
    }

    /// Room for the notice, so that adding it does not reallocate.
    const RESERVE: usize = 200;
}

fn plan_chars(text: &str, max_chars: usize) -> Plan {
    let total_lines = count_lines(text);
    let total_chars = text.chars().count();
    plan_chars_of(text, max_chars, total_chars, total_lines, text.len())
}

/// The plan of [`plan_chars`] for a text of which `text` is the beginning (all of it when it
/// has no more than `max_chars` characters, else at least its first `max_chars`), with the
/// whole text's totals: what is kept depends on nothing further.
fn plan_chars_of(
    text: &str,
    max_chars: usize,
    total_chars: usize,
    total_lines: usize,
    total_bytes: usize,
) -> Plan {
    if total_chars <= max_chars {
        return Plan::whole(text, total_chars, total_lines, Marker::Notice);
    }
    let cut = char_offset(text, max_chars);
    let (mut shown_end, mut shown_chars) = (cut, max_chars);
    if let Some(newline) = memrchr(b'\n', &text.as_bytes()[..cut]) {
        // Characters from the newline (included) to the cut: a short tail, cheap to count.
        let dropped = text[newline..cut].chars().count();
        let kept = max_chars - dropped.min(max_chars);
        if (kept as u128) * 5 >= (max_chars as u128) * 4 {
            shown_end = newline;
            shown_chars = kept;
        }
    }
    Plan {
        truncated: true,
        shown_bytes: shown_end,
        shown_chars,
        total_chars,
        shown_lines: count_lines(&text[..shown_end]),
        total_lines,
        total_bytes,
        marker: Marker::Notice,
    }
}

fn plan_stream(text: &str, max_bytes: usize, max_lines: usize) -> Plan {
    let total_lines = count_lines(text);
    let total_chars = text.chars().count();
    let by_bytes = floor_char_boundary(text, max_bytes);
    let by_lines = match max_lines {
        0 => 0,
        n => memchr_iter(b'\n', text.as_bytes())
            .nth(n - 1)
            .map_or(text.len(), |i| i + 1),
    };
    let cut = by_bytes.min(by_lines);
    if cut >= text.len() {
        return Plan::whole(text, total_chars, total_lines, Marker::Stream);
    }
    let shown = &text[..cut];
    Plan {
        truncated: true,
        shown_bytes: cut,
        shown_chars: shown.chars().count(),
        total_chars,
        shown_lines: count_lines(shown),
        total_lines,
        total_bytes: text.len(),
        marker: Marker::Stream,
    }
}

fn copy_prefix(text: &str, plan: &Plan) -> String {
    let shown = &text[..plan.shown_bytes];
    let mut out =
        String::with_capacity(shown.len() + if plan.truncated { Plan::RESERVE } else { 0 });
    out.push_str(shown);
    out
}

fn cut_in_place(mut text: String, plan: &Plan) -> String {
    if plan.truncated {
        text.truncate(plan.shown_bytes);
        text.reserve(Plan::RESERVE);
    }
    text
}

/// Keep at most `max_chars` characters of `text` (B32-B34).
///
/// Within the limit the text is returned unchanged. Over it, the first `max_chars` characters
/// are kept, cut back to the last newline among them when that still keeps at least 80 % of
/// the limit, and followed by a blank line and a notice:
///
/// ```text
/// [Output truncated: showing 20000 of 1234567 characters (500 of 90000 lines). Narrow the output with filters such as 'head', 'grep' or 'tail'.]
/// ```
pub fn truncate_chars(text: &str, max_chars: usize) -> Truncated {
    let plan = plan_chars(text, max_chars);
    let shown = copy_prefix(text, &plan);
    plan.finish(shown)
}

/// [`truncate_chars`] on an owned text, cut in place: no copy of the kept part.
pub fn truncate_chars_owned(text: String, max_chars: usize) -> Truncated {
    let plan = plan_chars(&text, max_chars);
    let shown = cut_in_place(text, &plan);
    plan.finish(shown)
}

/// [`truncate_chars_owned`] of a text that is not held whole (output read in chunks): `head`
/// is its beginning, all of it when it has no more than `max_chars` characters and else at
/// least its first `max_chars`; `total_chars`, `total_lines` (as [`count_lines`] counts) and
/// `total_bytes` are the whole text's.
pub fn truncate_chars_head(
    head: String,
    max_chars: usize,
    total_chars: usize,
    total_lines: usize,
    total_bytes: usize,
) -> Truncated {
    let plan = plan_chars_of(&head, max_chars, total_chars, total_lines, total_bytes);
    let shown = cut_in_place(head, &plan);
    plan.finish(shown)
}

/// Keep at most `max_bytes` bytes and `max_lines` lines of `text`, whichever limit comes
/// first (seeds/004: 8 KB or 200 lines; F07).
///
/// The line limit cuts after the newline that ends line `max_lines`; the byte limit cuts at
/// the last character boundary within it (never inside a character). When anything is cut,
/// the kept part is followed by a marker on a line of its own:
///
/// ```text
/// [truncated] showing 8192 of 1048576 bytes, 200 of 90000 lines
/// ```
pub fn truncate_stream(text: &str, max_bytes: usize, max_lines: usize) -> Truncated {
    let plan = plan_stream(text, max_bytes, max_lines);
    let shown = copy_prefix(text, &plan);
    plan.finish(shown)
}

/// [`truncate_stream`] on an owned text, cut in place: no copy of the kept part.
pub fn truncate_stream_owned(text: String, max_bytes: usize, max_lines: usize) -> Truncated {
    let plan = plan_stream(&text, max_bytes, max_lines);
    let shown = cut_in_place(text, &plan);
    plan.finish(shown)
}

/// The output caps of one PTY session (F10): every poll is capped on its own
/// (`per_poll_bytes`, `per_poll_lines`), and all polls together may not show more than the
/// session's total (`session_bytes`, `session_lines`). Once the session's budget is spent, a
/// poll shows only the marker with that poll's sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamBudget {
    pub per_poll_bytes: usize,
    pub per_poll_lines: usize,
    pub session_bytes: usize,
    pub session_lines: usize,
    /// Bytes shown so far in this session.
    pub used_bytes: usize,
    /// Lines shown so far in this session (a line split across polls counts in each).
    pub used_lines: usize,
}

impl StreamBudget {
    pub fn new(
        per_poll_bytes: usize,
        per_poll_lines: usize,
        session_bytes: usize,
        session_lines: usize,
    ) -> Self {
        StreamBudget {
            per_poll_bytes,
            per_poll_lines,
            session_bytes,
            session_lines,
            used_bytes: 0,
            used_lines: 0,
        }
    }

    /// Cap one poll's output against the per-poll limits and what is left of the session's.
    pub fn take(&mut self, chunk: &str) -> Truncated {
        let bytes = self
            .per_poll_bytes
            .min(self.session_bytes.saturating_sub(self.used_bytes));
        let lines = self
            .per_poll_lines
            .min(self.session_lines.saturating_sub(self.used_lines));
        let result = truncate_stream(chunk, bytes, lines);
        self.used_bytes = self.used_bytes.saturating_add(result.shown_bytes);
        self.used_lines = self.used_lines.saturating_add(result.shown_lines);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HINT: &str = "Narrow the output with filters such as 'head', 'grep' or 'tail'.]";

    #[test]
    fn b32_output_within_limit_returned_fully() {
        let cases: &[(&str, usize, usize, usize)] = &[
            // text, max_chars, total_chars, total_lines
            ("", 0, 0, 0),
            ("", 10, 0, 0),
            ("hello\n", 6, 6, 1),
            ("hello", 5, 5, 1),
            ("a\nb\nc", 100, 5, 3),
            ("héllo wörld\n", 12, 12, 1),
            ("日本語\n日本語\n", 8, 8, 2),
            ("🦀🦀🦀", 3, 3, 1),
        ];
        for &(text, max, chars, lines) in cases {
            let t = truncate_chars(text, max);
            assert_eq!(
                t,
                Truncated {
                    output: text.to_owned(),
                    truncated: false,
                    shown_chars: chars,
                    total_chars: chars,
                    shown_lines: lines,
                    total_lines: lines,
                    shown_bytes: text.len(),
                    total_bytes: text.len(),
                },
                "{text:?} / {max}"
            );
        }
    }

    #[test]
    fn b33_output_over_limit_truncated_with_counts() {
        struct Case {
            text: String,
            max: usize,
            output: String,
            shown_chars: usize,
            shown_lines: usize,
        }
        let ten_lines: String = (0..10).map(|i| format!("line {i:03}\n")).collect(); // 9 chars each
        let cases = vec![
            // Cut mid-line: the last newline (after 17 characters) would keep < 80 % of 25.
            Case {
                text: ten_lines.clone(),
                max: 25,
                output: format!(
                    "line 000\nline 001\nline 00\n\n[Output truncated: showing 25 of 90 \
                     characters (3 of 10 lines). {HINT}"
                ),
                shown_chars: 25,
                shown_lines: 3,
            },
            // Cut at the newline: 35 of 40 characters kept (87.5 %).
            Case {
                text: ten_lines.clone(),
                max: 40,
                output: format!(
                    "line 000\nline 001\nline 002\nline 003\n\n[Output truncated: showing 35 \
                     of 90 characters (4 of 10 lines). {HINT}"
                ),
                shown_chars: 35,
                shown_lines: 4,
            },
            // Exactly 80 % kept at the newline: 8 of 10.
            Case {
                text: "abcdefgh\nijklmnop".into(),
                max: 10,
                output: format!(
                    "abcdefgh\n\n[Output truncated: showing 8 of 17 characters (1 of 2 lines). \
                     {HINT}"
                ),
                shown_chars: 8,
                shown_lines: 1,
            },
            // 7 of 10 is below 80 %: cut mid-line instead.
            Case {
                text: "abcdefg\nijklmnop".into(),
                max: 10,
                output: format!(
                    "abcdefg\nij\n\n[Output truncated: showing 10 of 16 characters (2 of 2 \
                     lines). {HINT}"
                ),
                shown_chars: 10,
                shown_lines: 2,
            },
            // No newline at all.
            Case {
                text: "x".repeat(30),
                max: 20,
                output: format!(
                    "{}\n\n[Output truncated: showing 20 of 30 characters (1 of 1 lines). {HINT}",
                    "x".repeat(20)
                ),
                shown_chars: 20,
                shown_lines: 1,
            },
            // A zero limit shows only the notice.
            Case {
                text: "abc\n".into(),
                max: 0,
                output: format!(
                    "[Output truncated: showing 0 of 4 characters (0 of 1 lines). {HINT}"
                ),
                shown_chars: 0,
                shown_lines: 0,
            },
        ];
        for c in cases {
            let t = truncate_chars(&c.text, c.max);
            assert!(t.truncated);
            assert_eq!(t.output, c.output, "{:?} / {}", c.text, c.max);
            assert_eq!(t.shown_chars, c.shown_chars);
            assert_eq!(t.shown_lines, c.shown_lines);
            assert_eq!(t.total_chars, c.text.chars().count());
            assert_eq!(t.total_bytes, c.text.len());
            assert_eq!(t.total_lines, c.text.lines().count());
        }
    }

    #[test]
    fn b33_multibyte_text_never_split() {
        // Every character is 1 to 4 bytes; every limit must cut on a boundary and count
        // characters, not bytes.
        let text = "aé日🦀".repeat(50); // 200 characters, 500 bytes, one line
        for max in 0..200 {
            let t = truncate_chars(&text, max);
            assert!(t.truncated);
            assert_eq!(t.shown_chars, max);
            assert_eq!(
                t.shown_bytes,
                text.chars().take(max).map(char::len_utf8).sum::<usize>()
            );
            assert!(t.output.starts_with(&text[..t.shown_bytes]));
            assert_eq!(t.total_chars, 200);
            assert_eq!(t.total_bytes, 500);
        }
        assert!(!truncate_chars(&text, 200).truncated);
    }

    #[test]
    fn b34_notice_names_counts_and_filters() {
        let text = "0123456789\n".repeat(10_000); // 110000 characters, 10000 lines
        let t = truncate_chars(&text, 20_000);
        let notice = t.output.rsplit("\n\n").next().unwrap_or_default();
        assert_eq!(
            notice,
            format!(
                "[Output truncated: showing 19997 of 110000 characters (1818 of 10000 lines). \
                 {HINT}"
            )
        );
        for word in ["'head'", "'grep'", "'tail'", "19997", "110000"] {
            assert!(notice.contains(word), "{word}");
        }
        assert_eq!(t.output.len(), 19_997 + 2 + notice.len());
    }

    #[test]
    fn f07_stream_capped_by_bytes_or_lines_first() {
        struct Case {
            text: String,
            max_bytes: usize,
            max_lines: usize,
            output: String,
        }
        let lines300: String = (0..300).map(|i| format!("{i}\n")).collect(); // 1090 bytes
        let long_lines = "y".repeat(100) + "\n";
        let cases = vec![
            // Within both limits: unchanged.
            Case {
                text: "a\nb\n".into(),
                max_bytes: 8192,
                max_lines: 200,
                output: "a\nb\n".into(),
            },
            // Exactly 200 lines: unchanged.
            Case {
                text: "l\n".repeat(200),
                max_bytes: 8192,
                max_lines: 200,
                output: "l\n".repeat(200),
            },
            // 300 short lines: the line limit comes first.
            Case {
                text: lines300.clone(),
                max_bytes: 8192,
                max_lines: 200,
                output: (0..200).map(|i| format!("{i}\n")).collect::<String>()
                    + "[truncated] showing 690 of 1090 bytes, 200 of 300 lines",
            },
            // 100 lines of 101 bytes: the byte limit comes first, cut mid-line.
            Case {
                text: long_lines.repeat(100),
                max_bytes: 8192,
                max_lines: 200,
                output: long_lines.repeat(81)
                    + &"y".repeat(11)
                    + "\n[truncated] showing 8192 of 10100 bytes, 82 of 100 lines",
            },
            // A two-byte character straddling the byte limit is left out whole.
            Case {
                text: "abcé".into(),
                max_bytes: 4,
                max_lines: 200,
                output: "abc\n[truncated] showing 3 of 5 bytes, 1 of 1 lines".into(),
            },
            // Zero lines allowed.
            Case {
                text: "abc".into(),
                max_bytes: 10,
                max_lines: 0,
                output: "[truncated] showing 0 of 3 bytes, 0 of 1 lines".into(),
            },
        ];
        for c in cases {
            let t = truncate_stream(&c.text, c.max_bytes, c.max_lines);
            assert_eq!(
                t.output, c.output,
                "{} bytes / {} lines",
                c.max_bytes, c.max_lines
            );
            assert_eq!(t.truncated, c.output != c.text);
            assert!(t.shown_bytes <= c.max_bytes && t.shown_lines <= c.max_lines);
            assert_eq!(t.total_bytes, c.text.len());
        }
    }

    #[test]
    fn f07_stream_multibyte_never_split() {
        let text = "é日🦀\n".repeat(100); // 10 bytes a line
        for max_bytes in 0..200 {
            let t = truncate_stream(&text, max_bytes, 200);
            assert!(t.truncated);
            assert!(t.shown_bytes <= max_bytes && max_bytes - t.shown_bytes < 4);
            assert!(text.is_char_boundary(t.shown_bytes));
            assert!(t.output.starts_with(&text[..t.shown_bytes]));
            assert_eq!(t.shown_chars, text[..t.shown_bytes].chars().count());
        }
    }

    #[test]
    fn f10_caps_apply_per_poll_and_per_session() {
        // 5 lines a poll, 12 lines in the whole session.
        let mut budget = StreamBudget::new(8192, 5, 1 << 20, 12);
        let poll = "a\nb\nc\nd\ne\nf\ng\n";
        let expected = [
            "a\nb\nc\nd\ne\n[truncated] showing 10 of 14 bytes, 5 of 7 lines",
            "a\nb\nc\nd\ne\n[truncated] showing 10 of 14 bytes, 5 of 7 lines",
            "a\nb\n[truncated] showing 4 of 14 bytes, 2 of 7 lines",
            "[truncated] showing 0 of 14 bytes, 0 of 7 lines",
        ];
        for want in expected {
            assert_eq!(budget.take(poll).output, want);
        }
        assert_eq!((budget.used_bytes, budget.used_lines), (24, 12));

        // The byte budget of the session, across polls.
        let mut budget = StreamBudget::new(6, 200, 10, 200);
        let outputs: Vec<String> = ["abcd", "efgh", "ijkl"]
            .iter()
            .map(|p| budget.take(p).output)
            .collect();
        assert_eq!(
            outputs,
            [
                "abcd",
                "efgh",
                "ij\n[truncated] showing 2 of 4 bytes, 1 of 1 lines"
            ]
        );
    }

    #[test]
    fn owned_variants_equal_borrowed_ones() {
        let texts = [
            String::new(),
            "abc\n".into(),
            "line\n".repeat(500),
            "aé日🦀\n".repeat(300),
            "x".repeat(10_000),
        ];
        for text in &texts {
            for max in [0, 1, 7, 100, 2047, 5000, 100_000] {
                assert_eq!(
                    truncate_chars_owned(text.clone(), max),
                    truncate_chars(text, max)
                );
                for lines in [0, 1, 3, 200] {
                    assert_eq!(
                        truncate_stream_owned(text.clone(), max, lines),
                        truncate_stream(text, max, lines)
                    );
                }
            }
        }
    }

    #[test]
    fn char_offset_matches_char_indices() {
        let texts = ["", "abc", "aé日🦀", &"xé".repeat(1000), &"🦀".repeat(37)];
        for text in texts {
            let n = text.chars().count();
            for k in 0..=n + 2 {
                let want = text.char_indices().nth(k).map_or(text.len(), |(i, _)| i);
                assert_eq!(char_offset(text, k), want, "{text:?} {k}");
            }
        }
    }
}
