//! Truncating command output for the model: by characters (B32-B34), or by bytes and lines
//! per stream (F07, F10). UTF-8 safe; a notice says what was shown of how much and how to
//! narrow the output.

use serde::Serialize;

/// Output after truncation, with the sizes the notice reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Truncated {
    pub output: String,
    pub truncated: bool,
    pub shown_chars: usize,
    pub total_chars: usize,
    pub shown_lines: usize,
    pub total_lines: usize,
    pub shown_bytes: usize,
    pub total_bytes: usize,
}

impl Truncated {
    /// All of `text`, nothing cut.
    fn whole(text: &str, chars: usize, lines: usize) -> Truncated {
        Truncated {
            output: text.to_string(),
            truncated: false,
            shown_chars: chars,
            total_chars: chars,
            shown_lines: lines,
            total_lines: lines,
            shown_bytes: text.len(),
            total_bytes: text.len(),
        }
    }
}

/// Lines in `s`: newlines, plus one for a last line without one.
fn count_lines(s: &str) -> usize {
    let n = memchr::memchr_iter(b'\n', s.as_bytes()).count();
    if s.is_empty() || s.ends_with('\n') {
        n
    } else {
        n + 1
    }
}

/// Characters in `s` (count of bytes that do not continue a UTF-8 sequence).
fn count_chars(s: &str) -> usize {
    s.as_bytes().iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// The byte index after the first `n` characters of `s`.
fn char_boundary_after(s: &str, n: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in s.as_bytes().iter().enumerate() {
        if (b as i8) >= -0x40 {
            if seen == n {
                return i;
            }
            seen += 1;
        }
    }
    s.len()
}

/// Keeps the first `max_chars` characters of `text` (cut at the last newline when that keeps
/// at least 80% of them) and appends a notice with the shown and total sizes.
pub fn truncate_chars(text: &str, max_chars: usize) -> Truncated {
    let total_bytes = text.len();
    // Fast path: fewer bytes than the limit means fewer characters.
    let total_chars = if total_bytes <= max_chars { total_bytes.min(count_chars(text)) } else { count_chars(text) };
    let total_lines = count_lines(text);
    if total_chars <= max_chars {
        return Truncated::whole(text, total_chars, total_lines);
    }
    let mut end = char_boundary_after(text, max_chars);
    if let Some(nl) = memchr::memrchr(b'\n', &text.as_bytes()[..end]) {
        if (nl + 1) * 5 >= end * 4 {
            end = nl + 1;
        }
    }
    let shown = &text[..end];
    let shown_chars = count_chars(shown);
    let shown_lines = count_lines(shown);
    let mut output = String::with_capacity(end + 200);
    output.push_str(shown);
    if !output.ends_with('\n') {
        output.push('\n');
    }
    output.push_str(&format!(
        "\n[Output truncated: showing {shown_chars} of {total_chars} characters ({shown_lines} of {total_lines} lines). \
         Narrow the output with filters such as 'head', 'grep' or 'tail'.]"
    ));
    Truncated { output, truncated: true, shown_chars, total_chars, shown_lines, total_lines, shown_bytes: end, total_bytes }
}

/// Keeps at most `max_bytes` bytes and `max_lines` lines of one stream, whichever comes
/// first, never splitting a character, and ends with a `[truncated]` marker line.
pub fn truncate_stream(text: &str, max_bytes: usize, max_lines: usize) -> Truncated {
    let total_bytes = text.len();
    let total_lines = count_lines(text);
    let total_chars = count_chars(text);
    let mut end = total_bytes.min(max_bytes);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // The end of line `max_lines`, if it comes before the byte cap.
    if max_lines == 0 {
        end = 0;
    } else if let Some(pos) = memchr::memchr_iter(b'\n', &text.as_bytes()[..end]).nth(max_lines - 1) {
        end = pos + 1;
    }
    if end >= total_bytes {
        return Truncated::whole(text, total_chars, total_lines);
    }
    let shown = &text[..end];
    let shown_lines = count_lines(shown);
    let mut output = String::with_capacity(end + 120);
    output.push_str(shown);
    if !output.is_empty() && !output.ends_with('\n') {
        output.push('\n');
    }
    output.push_str(&format!("[truncated] showing {end} of {total_bytes} bytes, {shown_lines} of {total_lines} lines"));
    Truncated {
        output,
        truncated: true,
        shown_chars: count_chars(shown),
        total_chars,
        shown_lines,
        total_lines,
        shown_bytes: end,
        total_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b32_output_within_limit_returned_fully() {
        for text in ["", "short", "a\nb\n", "héllo wörld"] {
            let t = truncate_chars(text, 11);
            assert!(!t.truncated, "{text}");
            assert_eq!(t.output, text);
        }
    }

    #[test]
    fn b33_output_over_limit_truncated_with_counts() {
        let text = "0123456789\n".repeat(100); // 1100 chars, 100 lines
        let t = truncate_chars(&text, 105);
        assert!(t.truncated);
        assert_eq!(t.output, format!("{}\n[Output truncated: showing 99 of 1100 characters (9 of 100 lines). Narrow the output with filters such as 'head', 'grep' or 'tail'.]", "0123456789\n".repeat(9)));
        let t = truncate_chars(&"x".repeat(50), 10);
        assert!(t.output.starts_with("xxxxxxxxxx\n\n[Output truncated: showing 10 of 50 characters (1 of 1 lines)."), "{}", t.output);
    }

    #[test]
    fn b34_truncation_notice_suggests_filtering() {
        let t = truncate_chars(&"y\n".repeat(1000), 100);
        for word in ["'head'", "'grep'", "'tail'"] {
            assert!(t.output.contains(word), "{word}");
        }
    }

    #[test]
    fn truncation_never_splits_a_character() {
        let text = "é".repeat(100) + "日本語".repeat(50).as_str();
        for max in [1, 7, 99, 100, 101, 151, 249] {
            let t = truncate_chars(&text, max);
            assert!(t.truncated);
            assert_eq!(t.shown_chars, max, "max {max}");
            assert!(t.output.is_char_boundary(t.shown_bytes));
        }
    }

    #[test]
    fn f07_stream_capped_at_bytes_or_lines() {
        let lines = "line\n".repeat(300); // 1500 bytes
        let t = truncate_stream(&lines, 8192, 200);
        assert!(t.truncated);
        assert_eq!(t.shown_lines, 200);
        assert_eq!(t.output, format!("{}[truncated] showing 1000 of 1500 bytes, 200 of 300 lines", "line\n".repeat(200)));
        let long = "z".repeat(10_000);
        let t = truncate_stream(&long, 8192, 200);
        assert_eq!(t.shown_bytes, 8192);
        assert!(t.output.ends_with("[truncated] showing 8192 of 10000 bytes, 1 of 1 lines"));
        let small = "a\nb\n";
        assert_eq!(truncate_stream(small, 8192, 200).output, small);
    }

    #[test]
    fn f10_stream_cap_is_utf8_safe() {
        let text = "ü".repeat(5000);
        let t = truncate_stream(&text, 8191, 200);
        assert_eq!(t.shown_bytes, 8190);
        assert_eq!(t.shown_chars, 4095);
    }
}
