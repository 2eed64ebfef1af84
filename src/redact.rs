//! Redaction: the values of the variables a command does not get ([`crate::env`]) never
//! reach the model. Every occurrence in a tool result becomes `[redacted: NAME]`.
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

/// `name` as shown in a replacement: characters other than letters, digits, `_`, `-` and
/// `.` become `?`, so that the replacement is plain text inside any JSON string.
fn shown_name(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '?' })
        .collect()
}

/// `value` as `json-serialize` writes it inside a string, without the quotes.
fn json_escaped(value: &str) -> String {
    let s = serde_json::to_string(value).unwrap_or_default();
    s.get(1..s.len().saturating_sub(1)).unwrap_or_default().to_string()
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
                    .map_err(|e| ScopeError::InvalidArgument(format!("cannot build the redactor: {e}")))?,
            )
        };
        Ok(Redactor { automaton, replacements, patterns })
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

    /// The start of the longest end of `text` that is a proper beginning of a secret (the
    /// length of `text` when there is none): what a cut just after `text` would leave of a
    /// secret that continued.
    pub fn partial_tail(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut start = text.len();
        for p in &self.patterns {
            let p = p.as_bytes();
            let from = text.len().saturating_sub(p.len().saturating_sub(1));
            for i in from..start {
                if bytes[i] == p[0] && p.starts_with(&bytes[i..]) {
                    start = i;
                    break;
                }
            }
        }
        // A beginning made of whole characters: `start` is on a boundary since it starts a
        // match of a valid UTF-8 pattern's first byte.
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(secrets: &[(&str, &str)]) -> Redactor {
        Redactor::new(&secrets.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn redact_table() {
        let red = r(&[("OPENAI_API_KEY", "sk-0123456789"), ("DB_PASSWORD", "pa\"ss\\word"), ("LONG", "sk-0123456789-long"), ("odd name", "zzzzzzzz")]);
        let cases = [
            ("nothing here", None),
            ("key=sk-0123456789\n", Some("key=[redacted: OPENAI_API_KEY]\n")),
            ("sk-0123456789sk-0123456789", Some("[redacted: OPENAI_API_KEY][redacted: OPENAI_API_KEY]")),
            ("sk-0123456789-long!", Some("[redacted: LONG]!")),
            ("raw pa\"ss\\word", Some("raw [redacted: DB_PASSWORD]")),
            ("{\"output\":\"pa\\\"ss\\\\word\"}", Some("{\"output\":\"[redacted: DB_PASSWORD]\"}")),
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
    fn partial_tail_table() {
        let red = r(&[("A", "sk-0123456789"), ("B", "ééé-secret")]);
        let cases = [
            ("output", 6),
            ("output s", 7),
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
