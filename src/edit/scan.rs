//! The lines of the YAML, what kind each is, and the `key:` at the start of one: what the
//! editor reads the block structure from.

/// `(start, end, next)` of every line from `from`: `end` excludes the line break, `next` is
/// the start of the following line.
pub(super) fn line_starts(
    text: &str,
    from: usize,
) -> impl Iterator<Item = (usize, usize, usize)> + Clone + '_ {
    let bytes = text.as_bytes();
    let mut pos = from;
    std::iter::from_fn(move || {
        if pos >= bytes.len() {
            return None;
        }
        let start = pos;
        let (mut end, next) = match memchr::memchr(b'\n', &bytes[pos..]) {
            Some(i) => (pos + i, pos + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        pos = next;
        Some((start, end, next))
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Blank,
    /// A comment, a `---` document marker or a `%` directive.
    Comment,
    Content,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Line {
    pub(super) start: usize,
    /// End of the line's text, before `\n` or `\r\n`.
    pub(super) end: usize,
    /// Start of the next line (== `end` when the line has no line break).
    pub(super) next: usize,
    /// Leading spaces.
    pub(super) indent: usize,
    pub(super) kind: Kind,
}

/// What follows `key:` on its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rest {
    /// Nothing, or only a comment: the value is on the next lines, or null.
    Empty,
    /// `~`, `null`: the token ends at `end`.
    Null { end: usize },
    /// A flow sequence starting at the offset.
    FlowSeq(usize),
    /// A flow mapping starting at the offset.
    FlowMap(usize),
    /// A scalar, a block scalar, an anchor, a tag or an alias.
    Other,
}

/// The key at the start of `s` (a line after its indentation), and the offset in `s` just
/// after its `:`. `None` when the line does not start with a `key:`.
pub(super) fn block_key(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    let first = *b.first()?;
    let after_colon = |i: usize| b.get(i).is_none_or(|c| *c == b' ' || *c == b'\t');
    match first {
        b'"' | b'\'' => {
            let end = quoted_end(b, 0)?;
            let key: String = serde_yaml::from_str(&s[..end]).ok()?;
            let mut i = end;
            while b.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
                i += 1;
            }
            (b.get(i) == Some(&b':') && after_colon(i + 1)).then_some((key, i + 1))
        }
        b'-' | b'?' | b':' if after_colon(1) => None,
        b'#' | b'[' | b']' | b'{' | b'}' | b',' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%'
        | b'@' | b'`' => None,
        _ => {
            let mut from = 0;
            let colon = loop {
                let i = from + memchr::memchr(b':', &b[from..])?;
                if after_colon(i + 1) {
                    break i;
                }
                from = i + 1;
            };
            let key = &s[..colon];
            if key.contains(" #") || key.contains("\t#") {
                return None;
            }
            Some((key.trim_end().to_owned(), colon + 1))
        }
    }
}

/// The offset just after the closing quote of the quoted scalar opening at `start`.
pub(super) fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
    let quote = *b.get(start)?;
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            c if c == quote => {
                if quote == b'\'' && b.get(i + 1) == Some(&b'\'') {
                    i += 2;
                } else {
                    return Some(i + 1);
                }
            }
            _ => i += 1,
        }
    }
    None
}

pub(super) fn is_dash(s: &str) -> bool {
    s.starts_with('-') && matches!(s.as_bytes().get(1), None | Some(b' ') | Some(b'\t'))
}

pub(super) fn is_null_token(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL")
}
