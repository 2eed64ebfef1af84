//! Redaction: the values of the secrets of the environment ([`crate::scope::env`]: the
//! secret-looking variables a command does not get, those the scope's `redact` names, and
//! gptel's keys) never reach the model. Every occurrence in a tool result becomes `[redacted: NAME]`.
//!
//! One Aho-Corasick automaton (leftmost-longest) holds every value, and its form inside a
//! JSON string when that differs (a value with `"`, `\` or a control character), so a result
//! is searched once whatever the number of secrets, at the speed of a memchr-like scan when
//! nothing matches. A text without any occurrence is not copied.
//!
//! Output that is cut (truncated, capped, or shown in pieces as a terminal session prints
//! it) must not show a secret's beginning: [`Redactor::partial_tail`] finds a text's end that
//! is the start of a secret, so that the caller can hold it back or drop it.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::{Result, ScopeError};

/// The values to hide and the names they are shown as.
#[derive(Debug, Clone)]
pub struct Redactor {
    automaton: Option<AhoCorasick>,
    /// Per pattern: the replacement text.
    replacements: Vec<String>,
    /// Per pattern: its text (for [`Redactor::partial_tail`]).
    patterns: Vec<String>,
}

/// The shortest beginning of a secret that [`Redactor::partial_tail`] finds at the end of a
/// text: a shorter one (a space, `s`) begins some value by chance all the time, and would hold
/// back or hide ordinary output; it shows at most 3 bytes of the secret.
pub const MIN_PARTIAL: usize = 4;

/// `name` as shown in a replacement: characters other than letters, digits, `_`, `-` and
/// `.` become `?`, so that the replacement is plain text inside any JSON string.
fn shown_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// `value` as `json-serialize` writes it inside a string, without the quotes.
fn json_escaped(value: &str) -> String {
    let s = serde_json::to_string(value).unwrap_or_default();
    s.get(1..s.len().saturating_sub(1))
        .unwrap_or_default()
        .to_string()
}

impl Redactor {
    /// A redactor of `secrets`, (name, value) pairs. Empty values are ignored; a value that
    /// occurs under several names is shown as the first.
    pub fn new(secrets: &[(String, String)]) -> Result<Redactor> {
        let mut patterns: Vec<String> = Vec::new();
        let mut replacements = Vec::new();
        for (name, value) in secrets {
            let escaped = json_escaped(value);
            for v in [value.clone(), escaped] {
                if !v.is_empty() && !patterns.contains(&v) {
                    patterns.push(v);
                    replacements.push(format!("[redacted: {}]", shown_name(name)));
                }
            }
        }
        let automaton = if patterns.is_empty() {
            None
        } else {
            Some(
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&patterns)
                    .map_err(|e| {
                        ScopeError::InvalidArgument(format!("cannot build the redactor: {e}"))
                    })?,
            )
        };
        Ok(Redactor {
            automaton,
            replacements,
            patterns,
        })
    }

    /// Whether there is anything to hide.
    pub fn is_empty(&self) -> bool {
        self.automaton.is_none()
    }

    /// The number of values hidden (with their JSON forms).
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// `text` with every secret replaced, or `None` when it holds none.
    pub fn redact(&self, text: &str) -> Option<String> {
        let ac = self.automaton.as_ref()?;
        let mut matches = ac.find_iter(text).peekable();
        matches.peek()?;
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for m in matches {
            out.push_str(&text[last..m.start()]);
            out.push_str(&self.replacements[m.pattern().as_usize()]);
            last = m.end();
        }
        out.push_str(&text[last..]);
        Some(out)
    }

    /// [`Redactor::redact`], or `text` itself when it holds no secret.
    pub fn redact_owned(&self, text: String) -> String {
        self.redact(&text).unwrap_or(text)
    }

    /// The start of the longest end of `text`, of [`MIN_PARTIAL`] bytes or more, that is a
    /// proper beginning of a secret (the length of `text` when there is none): what a cut
    /// just after `text` would leave of a secret that continued.
    pub fn partial_tail(&self, text: &str) -> usize {
        self.partial_tail_of(text).0
    }

    /// The end of the longest beginning of `text`, of [`MIN_PARTIAL`] bytes or more, that is
    /// a proper end of a secret (0 when there is none): what a cut just before `text` left of
    /// a secret that began before it.
    pub fn partial_head(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut end = 0;
        for p in &self.patterns {
            let p = p.as_bytes();
            let longest = p.len().saturating_sub(1).min(bytes.len());
            let mut l = longest;
            while l >= MIN_PARTIAL && l > end {
                if bytes[..l] == p[p.len() - l..] {
                    end = l;
                    break;
                }
                l -= 1;
            }
        }
        // `end` ends a match of a pattern's last byte, which ends a character.
        while end < text.len() && !text.is_char_boundary(end) {
            end += 1;
        }
        end
    }

    /// [`Redactor::partial_tail`] and the pattern whose beginning it is.
    fn partial_tail_of(&self, text: &str) -> (usize, Option<usize>) {
        let bytes = text.as_bytes();
        let mut start = text.len();
        let mut which = None;
        for (k, p) in self.patterns.iter().enumerate() {
            let p = p.as_bytes();
            let from = text.len().saturating_sub(p.len().saturating_sub(1));
            // An end shorter than MIN_PARTIAL bytes is too likely to begin a secret by chance.
            let to = start.min(text.len().saturating_sub(MIN_PARTIAL - 1));
            for i in from..to {
                if bytes[i] == p[0] && p.starts_with(&bytes[i..]) {
                    start = i;
                    which = Some(k);
                    break;
                }
            }
        }
        // `start` begins a match of a pattern's first byte, which starts a character.
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        (start, which)
    }

    /// A tool result with every secret replaced, and also the beginning of a secret that a
    /// line cut left just before [`CUT_MARKERS`] (`read_file` and `grep_files` cut long
    /// lines): `None` when there is nothing to hide.
    pub fn redact_result(&self, text: &str) -> Option<String> {
        self.automaton.as_ref()?;
        let mut cut: Option<String> = None;
        for marker in CUT_MARKERS {
            let src = cut.as_deref().unwrap_or(text);
            if !src.contains(marker) {
                continue;
            }
            let mut out = String::with_capacity(src.len());
            let mut last = 0;
            for (m, _) in src.match_indices(marker) {
                let (start, which) = self.partial_tail_of(&src[last..m]);
                out.push_str(&src[last..last + start]);
                if let Some(k) = which {
                    out.push_str(&self.replacements[k]);
                } else {
                    out.push_str(&src[last + start..m]);
                }
                last = m;
            }
            out.push_str(&src[last..]);
            cut = Some(out);
        }
        match cut {
            Some(c) => Some(self.redact_owned(c)).filter(|r| r != text),
            None => self.redact(text),
        }
    }
}

/// Markers that follow a cut in tool results: `read_file`'s and `grep_files`' cut lines.
pub const CUT_MARKERS: &[&str] = &[crate::output::truncate::LINE_MARKER];

#[cfg(test)]
mod tests {
    use super::*;

    fn r(secrets: &[(&str, &str)]) -> Redactor {
        Redactor::new(
            &secrets
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn redact_table() {
        let red = r(&[
            ("OPENAI_API_KEY", "sk-0123456789"),
            ("DB_PASSWORD", "pa\"ss\\word"),
            ("LONG", "sk-0123456789-long"),
            ("odd name", "zzzzzzzz"),
        ]);
        let cases = [
            ("nothing here", None),
            (
                "key=sk-0123456789\n",
                Some("key=[redacted: OPENAI_API_KEY]\n"),
            ),
            (
                "sk-0123456789sk-0123456789",
                Some("[redacted: OPENAI_API_KEY][redacted: OPENAI_API_KEY]"),
            ),
            ("sk-0123456789-long!", Some("[redacted: LONG]!")),
            ("raw pa\"ss\\word", Some("raw [redacted: DB_PASSWORD]")),
            (
                "{\"output\":\"pa\\\"ss\\\\word\"}",
                Some("{\"output\":\"[redacted: DB_PASSWORD]\"}"),
            ),
            ("é zzzzzzzz é", Some("é [redacted: odd?name] é")),
            ("sk-012345678", None),
        ];
        for (text, want) in cases {
            assert_eq!(red.redact(text).as_deref(), want, "{text}");
        }
        assert!(r(&[]).is_empty());
        assert_eq!(r(&[]).redact("anything"), None);
    }

    #[test]
    fn cut_lines_hide_the_beginning() {
        let red = r(&[("KEY", "sk-0123456789")]);
        let m = crate::output::truncate::LINE_MARKER;
        let cases = [
            (
                format!("a:1:xx sk-0123{m}\\nb"),
                Some(format!("a:1:xx [redacted: KEY]{m}\\nb")),
            ),
            (
                format!("xx{m} and sk-0123456789"),
                Some(format!("xx{m} and [redacted: KEY]")),
            ),
            (
                format!("xx sk-0{m}"),
                Some(format!("xx [redacted: KEY]{m}")),
            ),
            (format!("xx sk-{m}"), None),
            (format!("xx q{m}"), None),
        ];
        for (text, want) in cases {
            assert_eq!(red.redact_result(&text), want, "{text}");
        }
    }

    #[test]
    fn partial_head_table() {
        let red = r(&[("A", "sk-0123456789"), ("B", "ééé-secret")]);
        let cases = [
            ("output", 0),
            ("9 output", 0),
            ("789 output", 0),
            ("6789 output", 4),
            ("-0123456789 output", 11),
            ("k-0123456789 output", 12),
            ("sk-0123456789 output", 0),
            ("é-secret!", 9),
            ("", 0),
        ];
        for (text, want) in cases {
            assert_eq!(red.partial_head(text), want, "{text}");
        }
    }

    #[test]
    fn partial_tail_table() {
        let red = r(&[("A", "sk-0123456789"), ("B", "ééé-secret")]);
        let cases = [
            ("output", 6),
            ("output s", 8),
            ("output sk-", 10),
            ("output sk-0", 7),
            ("output sk-0123", 7),
            ("output sk-012345678", 7),
            ("output sk-0123456789", 20),
            ("x éé", 2),
            ("", 0),
        ];
        for (text, want) in cases {
            assert_eq!(red.partial_tail(text), want, "{text}");
        }
    }
}
