//! New values and new lists as YAML text: a value is written plain when it reads back as the
//! same string, else quoted like the items of the list it joins; a new list is written in
//! flow (`key: [a, b]`) or block (`- a` lines) style.

use serde_yaml::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ListStyle {
    /// `key: [a, b]`
    Flow,
    /// `key:` then `- a` lines
    Block,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    Double,
    Single,
}

/// How the items of the list being extended are written: when all are quoted alike, new ones
/// are too; otherwise new ones are plain unless YAML needs quotes, then quoted like the
/// list's quoted items (double quotes when none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct QuotePref {
    always: Option<Quote>,
    fallback: Quote,
}

impl QuotePref {
    pub(super) const MINIMAL: QuotePref = QuotePref {
        always: None,
        fallback: Quote::Double,
    };

    /// From the first bytes of the existing items.
    pub(super) fn of(firsts: &[u8]) -> QuotePref {
        let double = firsts.iter().filter(|&&c| c == b'"').count();
        let single = firsts.iter().filter(|&&c| c == b'\'').count();
        let fallback = if single > double {
            Quote::Single
        } else {
            Quote::Double
        };
        let always = match (firsts.len(), double, single) {
            (0, _, _) => None,
            (n, d, _) if d == n => Some(Quote::Double),
            (n, _, s) if s == n => Some(Quote::Single),
            _ => None,
        };
        QuotePref { always, fallback }
    }
}

/// `v` as a YAML scalar that parses back to the string `v`, in a flow collection (`flow`) or
/// in a block list.
pub(super) fn render(v: &str, flow: bool, pref: QuotePref) -> String {
    match pref.always {
        Some(quote) => quoted(v, quote),
        None if plain_ok(v, flow) => v.to_owned(),
        None => quoted(v, pref.fallback),
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn quoted(v: &str, quote: Quote) -> String {
    if quote == Quote::Single && !v.chars().any(needs_escape) {
        return format!("'{}'", v.replace('\'', "''"));
    }
    let mut s = String::with_capacity(v.len() + 2);
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\r' => s.push_str("\\r"),
            '\0' => s.push_str("\\0"),
            c if needs_escape(c) && (c as u32) <= 0xffff => {
                s.push_str(&format!("\\u{:04X}", c as u32))
            }
            c if needs_escape(c) => s.push_str(&format!("\\U{:08X}", c as u32)),
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

/// Whether `v` can be written unquoted and still read back as the same string, in YAML 1.2
/// (what serde_yaml reads) and in YAML 1.1 (so `yes`, `on` stay strings for older readers).
fn plain_ok(v: &str, flow: bool) -> bool {
    let Some(first) = v.chars().next() else {
        return false;
    };
    if v.trim() != v
        || v.chars().any(needs_escape)
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || v.contains(": ")
        || v.contains(" #")
        || v.ends_with(':')
        || (flow && v.contains([',', '[', ']', '{', '}']))
    {
        return false;
    }
    let yaml11 = [
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
        "OFF", "true", "True", "TRUE", "false", "False", "FALSE", "=",
    ];
    if yaml11.contains(&v) {
        return false;
    }
    let want = Value::Sequence(vec![Value::String(v.to_owned())]);
    let probe = if flow {
        format!("[{v}]")
    } else {
        format!("- {v}\n")
    };
    serde_yaml::from_str::<Value>(&probe).is_ok_and(|x| x == want)
}

/// The lines for `path` (one key a line, the last holding the list) at `indent`.
pub(super) fn build_block(
    path: &[&str],
    indent: usize,
    unit: usize,
    seq_off: usize,
    style: ListStyle,
    values: &[String],
    nl: &str,
) -> String {
    let mut s = String::new();
    for (depth, key) in path.iter().enumerate() {
        let ind = " ".repeat(indent + depth * unit);
        if depth + 1 < path.len() {
            s.push_str(&format!("{ind}{key}:{nl}"));
            continue;
        }
        match style {
            ListStyle::Flow => {
                s.push_str(&format!("{ind}{key}: {}{nl}", flow_list(values)));
            }
            ListStyle::Block => {
                s.push_str(&format!("{ind}{key}:{nl}"));
                let dash = " ".repeat(indent + depth * unit + seq_off);
                for v in values {
                    s.push_str(&format!(
                        "{dash}- {}{nl}",
                        render(v, false, QuotePref::MINIMAL)
                    ));
                }
            }
        }
    }
    s
}

/// `[a, "b"]`
pub(super) fn flow_list(values: &[String]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| render(v, true, QuotePref::MINIMAL))
        .collect();
    format!("[{}]", items.join(", "))
}

/// `{k1: {k2: [a, b]}}` for `path` = `[k1, k2]`, `[a, b]` for an empty path.
pub(super) fn build_flow(path: &[&str], values: &[String]) -> String {
    match path.split_first() {
        None => flow_list(values),
        Some((key, rest)) => format!("{{{key}: {}}}", build_flow(rest, values)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::tests::edited;
    use crate::edit::{DocKind, Section};

    #[test]
    fn values_quoted_only_when_yaml_needs_it() {
        // (value, in a block list, in a flow list)
        let cases: &[(&str, &str, &str)] = &[
            ("/x/**", "/x/**", "/x/**"),
            ("~/src/**", "~/src/**", "~/src/**"),
            ("git log", "git log", "git log"),
            ("it's", "it's", "it's"),
            ("a:b", "a:b", "a:b"),
            ("x,y", "x,y", "\"x,y\""),
            ("a[1]", "a[1]", "\"a[1]\""),
            ("**/.env", "\"**/.env\"", "\"**/.env\""),
            ("*", "\"*\"", "\"*\""),
            ("*.md", "\"*.md\"", "\"*.md\""),
            ("#tag", "\"#tag\"", "\"#tag\""),
            ("a #b", "\"a #b\"", "\"a #b\""),
            ("a: b", "\"a: b\"", "\"a: b\""),
            ("key:", "\"key:\"", "\"key:\""),
            ("-rf", "\"-rf\"", "\"-rf\""),
            ("&x", "\"&x\"", "\"&x\""),
            ("!x", "\"!x\"", "\"!x\""),
            ("%x", "\"%x\"", "\"%x\""),
            ("@x", "\"@x\"", "\"@x\""),
            ("`x`", "\"`x`\"", "\"`x`\""),
            ("'q'", "\"'q'\"", "\"'q'\""),
            ("\"q\"", "\"\\\"q\\\"\"", "\"\\\"q\\\"\""),
            ("yes", "\"yes\"", "\"yes\""),
            ("on", "\"on\"", "\"on\""),
            ("true", "\"true\"", "\"true\""),
            ("null", "\"null\"", "\"null\""),
            ("~", "\"~\"", "\"~\""),
            ("123", "\"123\"", "\"123\""),
            ("1.5", "\"1.5\"", "\"1.5\""),
            ("0x1F", "\"0x1F\"", "\"0x1F\""),
            (".inf", "\".inf\"", "\".inf\""),
            (" lead", "\" lead\"", "\" lead\""),
            ("trail ", "\"trail \"", "\"trail \""),
            ("tab\there", "\"tab\\there\"", "\"tab\\there\""),
            ("line\nbreak", "\"line\\nbreak\"", "\"line\\nbreak\""),
            ("back\\slash", "back\\slash", "back\\slash"),
            ("bell\u{7}", "\"bell\\u0007\"", "\"bell\\u0007\""),
            ("日本/🦀", "日本/🦀", "日本/🦀"),
        ];
        for &(v, block, flow) in cases {
            assert_eq!(render(v, false, QuotePref::MINIMAL), block, "block {v:?}");
            assert_eq!(render(v, true, QuotePref::MINIMAL), flow, "flow {v:?}");
            // Each rendering reads back as the string itself.
            for (text, wrap) in [(block, format!("- {block}\n")), (flow, format!("[{flow}]"))] {
                let back: Vec<String> =
                    serde_yaml::from_str(&wrap).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(back, [v], "{text}");
            }
        }
        // Through a real edit: a block list and a flow list.
        let values = ["**/.env", "yes", "x,y", "plain"];
        assert_eq!(
            edited("paths:\n  read:\n    - ~/a\n", DocKind::Yaml, Section::PathsRead, &values),
            "paths:\n  read:\n    - ~/a\n    - \"**/.env\"\n    - \"yes\"\n    - x,y\n    - plain\n"
        );
        assert_eq!(
            edited(
                "paths:\n  read: [~/a]\n",
                DocKind::Yaml,
                Section::PathsRead,
                &values
            ),
            "paths:\n  read: [~/a, \"**/.env\", \"yes\", \"x,y\", plain]\n"
        );
        // Single-quoted lists get single quotes, except where only double quotes can say it.
        let single = QuotePref::of(b"''");
        assert_eq!(render("a'b", false, single), "'a''b'");
        assert_eq!(render("a\nb", false, single), "\"a\\nb\"");
        // A list with some single-quoted items quotes new ones, when needed, the same way.
        let mixed = QuotePref::of(b"'x");
        assert_eq!(render("*.md", true, mixed), "'*.md'");
        assert_eq!(render("plain", true, mixed), "plain");
    }
}
