//! A fast path for the YAML that scope documents are written in.
//!
//! serde_yaml (libyaml underneath) took about 60% of loading a 1,000-pattern `scope.yml`.
//! Scope documents use a small part of YAML: block mappings, block sequences of one-line
//! nodes, flow collections (on one line, or broken after a comma), plain and quoted scalars
//! on one line, comments and blank lines. [`parse`] reads exactly that part, builds the
//! [`Value`] serde_yaml would build, and answers `None` ("not handled") for anything else, so
//! that the caller falls back to serde_yaml, which then gives its usual value or its usual
//! error (with its line).
//!
//! The rule this module lives by: `parse(text) == Some(v)` only when
//! `serde_yaml::from_str::<Value>(text)` is `Ok(v)`, with the same mapping order. Whatever is
//! not certain is declined rather than guessed: anchors and aliases, tags, block scalars,
//! scalars over several lines, directives and document markers, tabs, carriage returns,
//! control characters, duplicate keys, floats, integers beyond 64 bits, unusual escapes, and
//! every indentation this grammar does not expect. `tests/yaml_fast.rs` holds the parser to
//! serde_yaml on a table of hostile cases, on every YAML text of the repository and of
//! ../shared, and on tens of thousands of generated documents; `fuzz/fuzz_targets/yaml.rs`
//! does the same on arbitrary input.

use serde_yaml::{Mapping, Number, Value};

/// Deepest nesting handled (serde_yaml's own limit is 128 levels).
const MAX_DEPTH: usize = 32;

/// Longest implicit key handled: libyaml refuses a simple key longer than 1024 characters,
/// and no scope key comes near this.
const MAX_KEY: usize = 256;

/// The value serde_yaml would read from `text`, when `text` keeps to the subset above and
/// its top level is a mapping (or it holds nothing but comments and blank lines: `Null`).
/// `None`: not handled here; ask serde_yaml.
pub fn parse(text: &str) -> Option<Value> {
    if !characters_handled(text) {
        return None;
    }
    let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
    for raw in text.split('\n') {
        // Document markers: a second document, or an explicit start; libyaml's business.
        if raw.starts_with("---") || raw.starts_with("...") {
            return None;
        }
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        let content = raw[indent..].trim_end_matches(' ');
        // A line whose first character is `#` is a comment whatever its indentation: no
        // scalar handled here spans lines (a flow collection that does breaks only between
        // two of its tokens), so it cannot be inside one.
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        lines.push(Line { indent, text: content });
    }
    let Some(first) = lines.first() else {
        return Some(Value::Null);
    };
    // A top-level sequence or scalar is refused by the caller; serde_yaml reads it for the
    // error message.
    if is_item(first.text) {
        return None;
    }
    let indent = first.indent;
    let mut parser = Parser { lines, pos: 0 };
    let mapping = parser.mapping(indent, 0)?;
    (parser.pos == parser.lines.len()).then_some(Value::Mapping(mapping))
}

/// One line with content: its indentation (spaces) and the rest, trailing spaces removed.
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

impl Parser<'_> {
    /// A block mapping whose keys are at column `indent`.
    fn mapping(&mut self, indent: usize, depth: usize) -> Option<Mapping> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut map = Mapping::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent < indent {
                break;
            }
            // Deeper than the keys: the continuation of a multi-line scalar, or bad YAML.
            // An item at the keys' column after a key that already has a value: bad YAML.
            if line.indent > indent || is_item(line.text) {
                return None;
            }
            let (key, rest) = block_key(line.text)?;
            self.pos += 1;
            let value = if rest.is_empty() { self.block_value(indent, depth)? } else { self.inline(rest, indent, depth + 1)? };
            // serde_yaml refuses duplicate keys; let it say so, with its line.
            if map.contains_key(&key) {
                return None;
            }
            map.insert(key, value);
        }
        Some(map)
    }

    /// The value of a key at column `indent` written on the lines after it: a nested
    /// mapping or sequence, a sequence at the key's own column, or nothing (`Null`).
    fn block_value(&mut self, indent: usize, depth: usize) -> Option<Value> {
        match self.lines.get(self.pos) {
            Some(l) if l.indent > indent => {
                let inner = l.indent;
                if is_item(l.text) {
                    Some(Value::Sequence(self.sequence(inner, depth + 1)?))
                } else {
                    Some(Value::Mapping(self.mapping(inner, depth + 1)?))
                }
            }
            Some(l) if l.indent == indent && is_item(l.text) => Some(Value::Sequence(self.sequence(indent, depth + 1)?)),
            _ => Some(Value::Null),
        }
    }

    /// A block sequence whose `-` are at column `indent`; each item a one-line node.
    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Vec<Value>> {
        if depth > MAX_DEPTH {
            return None;
        }
        // Room for the items that follow (a large scope's lists have hundreds).
        let rest = self.lines.get(self.pos..).unwrap_or_default();
        let mut items = Vec::with_capacity(rest.iter().take_while(|l| l.indent == indent && is_item(l.text)).count());
        while let Some(line) = self.lines.get(self.pos) {
            // Deeper than the dashes: an item spread over lines; not handled.
            if line.indent > indent {
                return None;
            }
            if line.indent < indent || !is_item(line.text) {
                break;
            }
            let rest = line.text[1..].trim_start_matches(' ');
            // `-` alone (an empty item, or one whose value follows on the next lines).
            if rest.is_empty() || rest.starts_with('#') {
                return None;
            }
            self.pos += 1;
            items.push(self.inline(rest, indent, depth + 1)?);
        }
        Some(items)
    }
}

impl<'a> Parser<'a> {
    /// The node written after `key: ` or `- ` on the line just read (`text`), whose key or
    /// `-` is at column `owner`. A flow collection may go on over the next lines (deeper
    /// than `owner`), which it then consumes.
    fn inline(&mut self, text: &'a str, owner: usize, depth: usize) -> Option<Value> {
        let mut lines = Lines { lines: &self.lines, next: self.pos, owner };
        let value = inline(text, &mut lines, depth)?;
        self.pos = lines.next;
        Some(value)
    }
}

/// The lines a flow collection may continue on (`read_only: [ls, cat,` then `head]`). The
/// flow parsers ask for the next one only where a line break is mere separation: right after
/// `[`, `{` or `,`, when nothing but spaces is left of the line. A line break anywhere else
/// (inside or after a scalar, where YAML folds lines or a comment may end the line) is left to
/// libyaml. Comment and blank lines between were dropped already: between two tokens of a
/// flow collection they are separation too.
struct Lines<'p, 'a> {
    lines: &'p [Line<'a>],
    next: usize,
    /// The column of the key or `-` the collection belongs to: the lines it goes on over must
    /// be deeper.
    owner: usize,
}

impl<'a> Lines<'_, 'a> {
    fn more(&mut self) -> Option<&'a str> {
        let line = self.lines.get(self.next).filter(|l| l.indent > self.owner)?;
        self.next += 1;
        Some(line.text)
    }

    /// `rest` without leading spaces; when that leaves nothing, the next line.
    fn skip_space(&mut self, rest: &'a str) -> Option<&'a str> {
        let rest = rest.trim_start_matches(' ');
        if rest.is_empty() {
            self.more()
        } else {
            Some(rest)
        }
    }
}

/// Whether a line (indentation removed) is a block sequence item.
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// Characters this parser leaves to libyaml: tabs and carriage returns (indentation and
/// line-break rules differ), characters libyaml refuses (C0 and C1 controls, DEL,
/// U+FFFE, U+FFFF), the byte order mark, and the line breaks of YAML 1.1 (U+0085, U+2028,
/// U+2029), which libyaml honours.
fn characters_handled(text: &str) -> bool {
    let ascii_ok = |b: u8| b == b'\n' || (0x20..0x7f).contains(&b);
    // Printable ASCII, checked a block at a time without stopping early, which the compiler
    // turns into vector instructions: most documents are all ASCII.
    if text.as_bytes().chunks(64).all(|block| block.iter().fold(true, |ok, &b| ok & ascii_ok(b))) {
        return true;
    }
    text.chars().all(|c| {
        if c.is_ascii() {
            ascii_ok(c as u8)
        } else {
            c >= '\u{a0}' && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}')
        }
    })
}

/// The key of a block mapping line and what follows its `:` (spaces and a comment
/// removed; empty when the value is on the next lines).
fn block_key(text: &str) -> Option<(Value, &str)> {
    let (key, after) = match text.as_bytes().first()? {
        b'"' => {
            let (k, after) = double_quoted(text)?;
            (Value::String(k), after.strip_prefix(':')?)
        }
        b'\'' => {
            let (k, after) = single_quoted(text)?;
            (Value::String(k), after.strip_prefix(':')?)
        }
        _ => {
            let (k, after) = plain_key(text)?;
            (resolve_plain(k)?, after)
        }
    };
    // A quoted key is an implicit key too, bound by libyaml's limit.
    if text.len() - after.len() > MAX_KEY {
        return None;
    }
    // `:` must be followed by a space or the end of the line to be a key's indicator.
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    let rest = after.trim_start_matches(' ');
    Some((key, if rest.starts_with('#') { "" } else { rest }))
}

/// A plain key: up to the first `:` followed by a space or the end of the line. Keys
/// start with a letter, a digit or one of `_ . / $ ~`, and hold no `#`, bracket, brace
/// or quote (all legal in YAML, none needed by a scope, each a source of special cases).
fn plain_key(text: &str) -> Option<(&str, &str)> {
    let bytes = text.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_alphanumeric() || matches!(first, b'_' | b'.' | b'/' | b'$' | b'~')) {
        return None;
    }
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b':' if i + 1 == bytes.len() || bytes[i + 1] == b' ' => {
                let key = &text[..i];
                if key.ends_with(' ') || key.len() > MAX_KEY {
                    return None;
                }
                return Some((key, &text[i + 1..]));
            }
            b'#' | b'[' | b']' | b'{' | b'}' | b'"' | b'\'' | b',' => return None,
            _ => {}
        }
    }
    // No `:` indicator: a bare scalar where a key belongs.
    None
}

/// A node in block context after `key: ` or `- ` (a scalar, or a flow collection that may go
/// on over the next lines), followed by nothing but spaces and a comment on its last line.
fn inline<'a>(text: &'a str, lines: &mut Lines<'_, 'a>, depth: usize) -> Option<Value> {
    let (value, after) = match text.as_bytes().first()? {
        b'"' => {
            let (s, after) = double_quoted(text)?;
            (Value::String(s), after)
        }
        b'\'' => {
            let (s, after) = single_quoted(text)?;
            (Value::String(s), after)
        }
        b'[' => flow_sequence(text, lines, depth)?,
        b'{' => flow_mapping(text, lines, depth)?,
        _ => return plain_block(text),
    };
    let rest = after.trim_start_matches(' ');
    // `"a"b`, `"a"#b`, `"a": b` and `[a] x` are errors or other structures.
    (rest.is_empty() || (rest.len() < after.len() && rest.starts_with('#'))).then_some(value)
}

/// Whether a plain scalar may start with these bytes. Indicators cannot start one; `-`
/// can when a character other than a space or a flow indicator follows (`-n`, `--stat`).
fn plain_start(bytes: &[u8]) -> bool {
    match bytes.first() {
        None | Some(b' ') => false,
        Some(b'-') => bytes.get(1).is_some_and(|&b| !matches!(b, b' ' | b',' | b'[' | b']' | b'{' | b'}' | b'#')),
        Some(b) => !matches!(
            b,
            b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`'
        ),
    }
}

/// A plain scalar in block context, to the end of the line or a ` #` comment.
fn plain_block(text: &str) -> Option<Value> {
    if !plain_start(text.as_bytes()) {
        return None;
    }
    let end = text.find(" #").unwrap_or(text.len());
    let s = text[..end].trim_end_matches(' ');
    // `a: b` here would be a nested mapping (an error after a key), and a trailing `:` a
    // key: not scalars.
    if s.ends_with(':') || s.contains(": ") {
        return None;
    }
    resolve_plain(s)
}

/// A double-quoted scalar closed on its line, and the text after the closing quote. Only
/// the common escapes are handled; `\x`, `\u`, `\U`, line continuations and the rest go
/// to libyaml.
fn double_quoted(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let first = memchr::memchr2(b'"', b'\\', bytes)?;
    // The common case, no escape: one allocation of the right size.
    if bytes[first] == b'"' {
        return Some((body[..first].to_string(), &body[first + 1..]));
    }
    let mut out = String::with_capacity(body.len());
    let mut start = 0;
    loop {
        let i = start + memchr::memchr2(b'"', b'\\', &bytes[start..])?;
        out.push_str(&body[start..i]);
        if bytes[i] == b'"' {
            return Some((out, &body[i + 1..]));
        }
        out.push(match bytes.get(i + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'0' => '\0',
            _ => return None,
        });
        start = i + 2;
    }
}

/// A single-quoted scalar closed on its line (`''` is a quote), and the text after it.
fn single_quoted(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('\'')?;
    let bytes = body.as_bytes();
    let first = memchr::memchr(b'\'', bytes)?;
    if bytes.get(first + 1) != Some(&b'\'') {
        return Some((body[..first].to_string(), &body[first + 1..]));
    }
    let mut out = String::with_capacity(body.len());
    let mut start = 0;
    loop {
        let i = start + memchr::memchr(b'\'', &bytes[start..])?;
        out.push_str(&body[start..i]);
        if bytes.get(i + 1) == Some(&b'\'') {
            out.push('\'');
            start = i + 2;
        } else {
            return Some((out, &body[i + 1..]));
        }
    }
}

/// A flow sequence (`[a, "b c", -n]`), and the rest of the line it ends on.
fn flow_sequence<'a>(text: &'a str, lines: &mut Lines<'_, 'a>, depth: usize) -> Option<(Value, &'a str)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut rest = text.strip_prefix('[')?;
    let mut items = Vec::new();
    loop {
        rest = lines.skip_space(rest)?;
        // `]` right after `[`; after a `,` it would be a trailing comma: not handled.
        if items.is_empty() {
            if let Some(after) = rest.strip_prefix(']') {
                return Some((Value::Sequence(items), after));
            }
        }
        let (item, after) = flow_node(rest, lines, depth + 1)?;
        items.push(item);
        rest = after.trim_start_matches(' ');
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else {
            return Some((Value::Sequence(items), rest.strip_prefix(']')?));
        }
    }
}

/// A flow mapping (`{read: [a], mode: warn}`), and the rest of the line it ends on. Every
/// key has a value, written after `: ` on the key's line.
fn flow_mapping<'a>(text: &'a str, lines: &mut Lines<'_, 'a>, depth: usize) -> Option<(Value, &'a str)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let mut rest = text.strip_prefix('{')?;
    let mut map = Mapping::new();
    loop {
        rest = lines.skip_space(rest)?;
        if map.is_empty() {
            if let Some(after) = rest.strip_prefix('}') {
                return Some((Value::Mapping(map), after));
            }
        }
        let (key, after) = match rest.as_bytes().first()? {
            b'"' => {
                let (k, after) = double_quoted(rest)?;
                (Value::String(k), after)
            }
            b'\'' => {
                let (k, after) = single_quoted(rest)?;
                (Value::String(k), after)
            }
            _ => {
                if !plain_start(rest.as_bytes()) {
                    return None;
                }
                let end = rest.find([':', ',', '[', ']', '{', '}', '#'])?;
                let k = &rest[..end];
                if k.ends_with(' ') || k.len() > MAX_KEY {
                    return None;
                }
                (resolve_plain(k)?, &rest[end..])
            }
        };
        if rest.len() - after.len() > MAX_KEY {
            return None;
        }
        let after = after.strip_prefix(": ")?.trim_start_matches(' ');
        if after.is_empty() {
            return None;
        }
        let (value, after) = flow_node(after, lines, depth + 1)?;
        if map.contains_key(&key) {
            return None;
        }
        map.insert(key, value);
        rest = after.trim_start_matches(' ');
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else {
            return Some((Value::Mapping(map), rest.strip_prefix('}')?));
        }
    }
}

/// One node inside a flow collection, and the rest of the line it ends on.
fn flow_node<'a>(text: &'a str, lines: &mut Lines<'_, 'a>, depth: usize) -> Option<(Value, &'a str)> {
    match text.as_bytes().first()? {
        b'"' => double_quoted(text).map(|(s, after)| (Value::String(s), after)),
        b'\'' => single_quoted(text).map(|(s, after)| (Value::String(s), after)),
        b'[' => flow_sequence(text, lines, depth),
        b'{' => flow_mapping(text, lines, depth),
        _ => {
            if !plain_start(text.as_bytes()) {
                return None;
            }
            let end = text.find([',', ']', '}', '[', '{', '#', ':']).unwrap_or(text.len());
            // `:` may make a pair (`[a: b]`) and `#` a comment; brackets and braces inside
            // a plain scalar are errors in flow context. All left to libyaml.
            if matches!(text.as_bytes().get(end), None | Some(b'[' | b'{' | b'#' | b':')) {
                return None;
            }
            Some((resolve_plain(text[..end].trim_end_matches(' '))?, &text[end..]))
        }
    }
}

/// The value of a plain scalar, resolved as serde_yaml resolves an untagged plain scalar
/// (`visit_untagged_scalar` in serde_yaml 0.9's `de.rs`): null, booleans, integers, floats,
/// else a string. Floats and integers beyond 64 bits are not handled (serde_yaml's `Value`
/// refuses 128-bit integers; floats appear nowhere in a scope).
fn resolve_plain(s: &str) -> Option<Value> {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        _ => {}
    }
    // Only text starting with a digit, a sign or a dot can be a number (Rust's float
    // grammar also takes `inf` and `nan`, which serde_yaml then rejects as not finite).
    let numeric = s.as_bytes().first().is_some_and(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.'));
    if !numeric {
        return Some(Value::String(s.to_string()));
    }
    if let Some(n) = number::unsigned::<u64>(s, u64::from_str_radix) {
        return Some(Value::Number(Number::from(n)));
    }
    if let Some(n) = number::negative::<i64>(s, i64::from_str_radix) {
        return Some(Value::Number(Number::from(n)));
    }
    if number::unsigned::<u128>(s, u128::from_str_radix).is_some() || number::negative::<i128>(s, i128::from_str_radix).is_some() {
        return None;
    }
    if !number::digits_but_not_number(s) && number::is_float(s) {
        return None;
    }
    Some(Value::String(s.to_string()))
}

/// serde_yaml 0.9.34's number recognition (`de.rs`: `parse_unsigned_int`,
/// `parse_negative_int`, `parse_f64`, `digits_but_not_number`), copied as written so that
/// a plain scalar is a number here exactly when it is one there.
mod number {
    use std::num::ParseIntError;

    pub(super) fn unsigned<T>(scalar: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
        let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
            if let Some(rest) = unpositive.strip_prefix(prefix) {
                if rest.starts_with(['+', '-']) {
                    return None;
                }
                if let Ok(int) = from_str_radix(rest, radix) {
                    return Some(int);
                }
            }
        }
        if unpositive.starts_with(['+', '-']) {
            return None;
        }
        if digits_but_not_number(scalar) {
            return None;
        }
        from_str_radix(unpositive, 10).ok()
    }

    pub(super) fn negative<T>(scalar: &str, from_str_radix: fn(&str, u32) -> Result<T, ParseIntError>) -> Option<T> {
        for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
            if let Some(rest) = scalar.strip_prefix(prefix) {
                let negative = format!("-{rest}");
                if let Ok(int) = from_str_radix(&negative, radix) {
                    return Some(int);
                }
            }
        }
        if digits_but_not_number(scalar) {
            return None;
        }
        from_str_radix(scalar, 10).ok()
    }

    /// Whether `parse_f64` reads a float.
    pub(super) fn is_float(scalar: &str) -> bool {
        let unpositive = match scalar.strip_prefix('+') {
            Some(u) if u.starts_with(['+', '-']) => return false,
            Some(u) => u,
            None => scalar,
        };
        matches!(unpositive, ".inf" | ".Inf" | ".INF")
            || matches!(scalar, "-.inf" | "-.Inf" | "-.INF" | ".nan" | ".NaN" | ".NAN")
            || unpositive.parse::<f64>().is_ok_and(f64::is_finite)
    }

    pub(super) fn digits_but_not_number(scalar: &str) -> bool {
        // Leading zeros followed by digits is a string (YAML 1.2).
        let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
        scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
    }
}
