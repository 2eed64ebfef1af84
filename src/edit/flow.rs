//! Flow collections (`[a, "b"]`, `{read: []}`, on one line or several): where each node
//! starts and ends in the text, so that the editor can append to a flow list or walk down a
//! flow mapping.

use super::scan::quoted_end;

#[derive(Debug, Clone)]
pub(super) enum Flow {
    Seq {
        open: usize,
        close: usize,
        items: Vec<Flow>,
    },
    Map {
        open: usize,
        close: usize,
        entries: Vec<FlowEntry>,
    },
    Scalar {
        start: usize,
        end: usize,
    },
}

#[derive(Debug, Clone)]
pub(super) struct FlowEntry {
    pub(super) key: String,
    /// End of the entry: of its value, or of its key when it has none.
    pub(super) end: usize,
    pub(super) value: Option<Flow>,
}

impl Flow {
    pub(super) fn start(&self) -> usize {
        match self {
            Flow::Seq { open, .. } | Flow::Map { open, .. } => *open,
            Flow::Scalar { start, .. } => *start,
        }
    }

    pub(super) fn end(&self) -> usize {
        match self {
            Flow::Seq { close, .. } | Flow::Map { close, .. } => close + 1,
            Flow::Scalar { end, .. } => *end,
        }
    }
}

/// A parser of the flow collections this editor changes: nested `[...]` and `{...}`, plain
/// and quoted scalars, comments between lines. Anchors, aliases, tags and `?` keys are
/// refused.
pub(super) struct FlowParser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    hi: usize,
}

impl<'a> FlowParser<'a> {
    pub(super) fn new(text: &'a str, pos: usize, hi: usize) -> Self {
        FlowParser {
            text,
            b: text.as_bytes(),
            pos,
            hi,
        }
    }

    fn peek(&self) -> Option<u8> {
        (self.pos < self.hi).then(|| self.b[self.pos])
    }

    fn space(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => self.pos += 1,
                b'#' if self.pos == 0 || self.b[self.pos - 1].is_ascii_whitespace() => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn fail<T>(&self, what: &str) -> std::result::Result<T, String> {
        let line = self.text[..self.pos.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        Err(format!("{what} (line {line})"))
    }

    pub(super) fn node(&mut self) -> std::result::Result<Flow, String> {
        self.space();
        match self.peek() {
            None => self.fail("unexpected end of a flow collection"),
            Some(b'[') => self.seq(),
            Some(b'{') => self.map(),
            Some(b'"') | Some(b'\'') => self.quoted(),
            Some(b'&') | Some(b'*') | Some(b'!') => {
                self.fail("anchors, aliases and tags are not supported here")
            }
            Some(b']') | Some(b'}') | Some(b',') | Some(b'?') | Some(b'|') | Some(b'>') => {
                self.fail("unexpected character in a flow collection")
            }
            Some(_) => self.plain(),
        }
    }

    fn seq(&mut self) -> std::result::Result<Flow, String> {
        let open = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.space();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(Flow::Seq {
                    open,
                    close: self.pos - 1,
                    items,
                });
            }
            items.push(self.node()?);
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {}
                _ => return self.fail("expected ',' or ']' in a flow list"),
            }
        }
    }

    fn map(&mut self) -> std::result::Result<Flow, String> {
        let open = self.pos;
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.space();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(Flow::Map {
                    open,
                    close: self.pos - 1,
                    entries,
                });
            }
            let key_node = match self.peek() {
                Some(b'"') | Some(b'\'') => self.quoted()?,
                Some(b'[') | Some(b'{') | Some(b'?') | Some(b'&') | Some(b'*') | Some(b'!') => {
                    return self.fail("unsupported key in a flow mapping")
                }
                _ => self.plain()?,
            };
            let raw = &self.text[key_node.start()..key_node.end()];
            let key = match raw.as_bytes().first() {
                Some(b'"') | Some(b'\'') => serde_yaml::from_str::<String>(raw)
                    .map_err(|e| format!("bad quoted key {raw}: {e}"))?,
                _ => raw.to_owned(),
            };
            self.space();
            let value = if self.peek() == Some(b':') {
                self.pos += 1;
                self.space();
                match self.peek() {
                    Some(b',') | Some(b'}') => None,
                    _ => Some(self.node()?),
                }
            } else {
                None
            };
            let end = value.as_ref().map_or(key_node.end(), Flow::end);
            entries.push(FlowEntry { key, end, value });
            self.space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return self.fail("expected ',' or '}' in a flow mapping"),
            }
        }
    }

    fn quoted(&mut self) -> std::result::Result<Flow, String> {
        let start = self.pos;
        match quoted_end(&self.b[..self.hi], start) {
            Some(end) => {
                self.pos = end;
                Ok(Flow::Scalar { start, end })
            }
            None => self.fail("unterminated quoted string"),
        }
    }

    fn plain(&mut self) -> std::result::Result<Flow, String> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let next = self.b.get(self.pos + 1).copied();
            let ends_plain = match c {
                b',' | b'[' | b']' | b'{' | b'}' | b'\n' | b'\r' => true,
                b':' => matches!(
                    next,
                    None | Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}')
                ),
                b'#' => self.pos > 0 && matches!(self.b[self.pos - 1], b' ' | b'\t'),
                _ => false,
            };
            if ends_plain {
                break;
            }
            self.pos += 1;
        }
        let end = start + self.text[start..self.pos].trim_end().len();
        if end == start {
            return self.fail("empty value in a flow collection");
        }
        Ok(Flow::Scalar { start, end })
    }
}
