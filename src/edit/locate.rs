//! The editor, and how it finds where the values go: the lines of the YAML with the keys on
//! them, the extent of each value, the indentation and list style the document uses, and the
//! walk down the section's key path (`plan`, `in_block`, `at_key`) to the list, or to the
//! place where the missing keys are to be added. The change made there is in `forms.rs`.

use super::flow::{Flow, FlowParser};
use super::forms::Splice;
use super::region::Region;
use super::render::{build_block, ListStyle};
use super::scan::{block_key, is_dash, is_null_token, line_starts, Kind, Line, Rest};

pub(super) struct Editor<'a> {
    pub(super) text: &'a str,
    pub(super) lo: usize,
    pub(super) hi: usize,
    pub(super) nl: &'static str,
    pub(super) lines: Vec<Line>,
    /// The full key path, for messages.
    path: &'a [&'a str],
    pub(super) values: &'a [String],
    /// Spaces a nested mapping is indented by.
    pub(super) unit: usize,
    /// Spaces a block list's dashes are indented by, relative to its key.
    pub(super) seq_off: usize,
    /// Lists of the whole document: (flow, block).
    doc_lists: (usize, usize),
    pub(super) splices: Vec<Splice>,
}

impl<'a> Editor<'a> {
    pub(super) fn new(
        text: &'a str,
        region: &Region,
        path: &'a [&'a str],
        values: &'a [String],
    ) -> std::result::Result<Self, String> {
        let mut lines = Vec::new();
        for (start, end, next) in line_starts(text, region.lo) {
            if start >= region.hi {
                break;
            }
            let line = &text[start..end];
            let indent = line.len() - line.trim_start_matches(' ').len();
            let rest = &line[indent..];
            let kind = if rest.trim().is_empty() {
                Kind::Blank
            } else if rest.starts_with('#') || (indent == 0 && rest.starts_with('%')) {
                Kind::Comment
            } else if indent == 0
                && (rest == "---" || rest.starts_with("--- ") || rest.starts_with("---\t"))
            {
                let after = rest[3..].trim_start();
                if !(after.is_empty() || after.starts_with('#')) {
                    return Err(
                        "a '---' line with content on it is not supported; edit the file by \
                         hand"
                            .into(),
                    );
                }
                Kind::Comment
            } else {
                Kind::Content
            };
            lines.push(Line {
                start,
                end,
                next,
                indent,
                kind,
            });
        }
        let mut editor = Editor {
            text,
            lo: region.lo,
            hi: region.hi,
            nl: region.nl,
            lines,
            path,
            values,
            unit: 2,
            seq_off: 2,
            doc_lists: (0, 0),
            splices: Vec::new(),
        };
        editor.learn_style();
        Ok(editor)
    }

    pub(super) fn content(&self, i: usize) -> &'a str {
        let l = self.lines[i];
        &self.text[l.start + l.indent..l.end]
    }

    pub(super) fn is_content(&self, i: usize) -> bool {
        self.lines[i].kind == Kind::Content
    }

    pub(super) fn indent(&self, i: usize) -> usize {
        self.lines[i].indent
    }

    /// The key of line `i` and the absolute offset after its `:`.
    fn key_at(&self, i: usize) -> Option<(String, usize)> {
        if !self.is_content(i) {
            return None;
        }
        let l = self.lines[i];
        block_key(self.content(i)).map(|(k, off)| (k, l.start + l.indent + off))
    }

    fn rest_at(&self, colon_end: usize, i: usize) -> Rest {
        let s = &self.text[colon_end..self.lines[i].end];
        let t = s.trim_start_matches([' ', '\t']);
        let at = colon_end + (s.len() - t.len());
        match t.as_bytes().first() {
            None | Some(b'#') => Rest::Empty,
            Some(b'[') => Rest::FlowSeq(at),
            Some(b'{') => Rest::FlowMap(at),
            Some(_) => {
                let token_len = t.find([' ', '\t']).unwrap_or(t.len());
                let after = t[token_len..].trim_start();
                if is_null_token(&t[..token_len]) && (after.is_empty() || after.starts_with('#')) {
                    Rest::Null {
                        end: at + token_len,
                    }
                } else {
                    Rest::Other
                }
            }
        }
    }

    fn next_content(&self, from: usize, to: usize) -> Option<usize> {
        (from..to).find(|&i| self.is_content(i))
    }

    fn last_content(&self, from: usize, to: usize) -> Option<usize> {
        (from..to).rev().find(|&i| self.is_content(i))
    }

    /// The lines of the value of the key on line `i` (within `to`): the end (exclusive) and
    /// the last content line, if any. They are the lines indented deeper than the key, and
    /// the dashes of a list written at the key's own indentation.
    ///
    /// A flow collection after `key:` runs to its closing bracket whatever the indentation of
    /// its lines (YAML readers accept less indented continuation lines there).
    fn extent(&self, i: usize, to: usize) -> (usize, Option<usize>) {
        let m = self.indent(i);
        let mut last = None;
        let mut from = i + 1;
        if let Some(close) = self.flow_value_last_line(i) {
            if close > i {
                last = Some(close);
                from = close + 1;
            }
        }
        let mut j = from;
        while j < to {
            if !self.is_content(j) {
                j += 1;
                continue;
            }
            if self.indent(j) > m || (self.indent(j) == m && is_dash(self.content(j))) {
                last = Some(j);
                // A nested key's flow value may go on at any indentation.
                match self.flow_value_last_line(j) {
                    Some(close) if close > j => {
                        last = Some(close);
                        j = close + 1;
                    }
                    _ => j += 1,
                }
            } else {
                return (j, last);
            }
        }
        (to, last)
    }

    /// The line where the flow collection after the key on line `i` closes, if it has one
    /// that parses.
    fn flow_value_last_line(&self, i: usize) -> Option<usize> {
        let (_, colon_end) = self.key_at(i)?;
        let at = match self.rest_at(colon_end, i) {
            Rest::FlowSeq(at) | Rest::FlowMap(at) => at,
            _ => return None,
        };
        let node = FlowParser::new(self.text, at, self.hi).node().ok()?;
        let close = node.end().saturating_sub(1);
        Some(
            self.lines
                .partition_point(|l| l.start <= close)
                .saturating_sub(1),
        )
    }

    /// The key lines at indentation `m` in lines `from..to`, each one's value skipped (so
    /// that nothing inside a value is taken for a key).
    fn siblings(&self, from: usize, to: usize, m: usize) -> Vec<usize> {
        let mut keys = Vec::new();
        let mut i = from;
        while i < to {
            if self.is_content(i) && self.indent(i) == m && self.key_at(i).is_some() {
                keys.push(i);
                i = self.extent(i, to).0.max(i + 1);
            } else {
                i += 1;
            }
        }
        keys
    }

    /// Whether the key on line `i` holds a list, and how it is written.
    fn list_style_of(&self, i: usize) -> Option<ListStyle> {
        let (_, colon_end) = self.key_at(i)?;
        match self.rest_at(colon_end, i) {
            Rest::FlowSeq(_) => Some(ListStyle::Flow),
            Rest::Empty => {
                let j = self.next_content(i + 1, self.lines.len())?;
                (self.indent(j) >= self.indent(i) && is_dash(self.content(j)))
                    .then_some(ListStyle::Block)
            }
            _ => None,
        }
    }

    /// Indentation unit, list indentation and list style of the whole document.
    fn learn_style(&mut self) {
        let mut unit = None;
        let mut seq_off = None;
        let (mut flow, mut block) = (0, 0);
        for i in 0..self.lines.len() {
            let Some((_, colon_end)) = self.key_at(i) else {
                continue;
            };
            match self.list_style_of(i) {
                Some(ListStyle::Flow) => flow += 1,
                Some(ListStyle::Block) => block += 1,
                None => {}
            }
            if self.rest_at(colon_end, i) != Rest::Empty {
                continue;
            }
            let Some(j) = self.next_content(i + 1, self.lines.len()) else {
                continue;
            };
            let (m, n) = (self.indent(i), self.indent(j));
            if is_dash(self.content(j)) && n >= m {
                seq_off.get_or_insert(n - m);
            } else if n > m && self.key_at(j).is_some() {
                unit.get_or_insert(n - m);
            }
        }
        self.unit = unit.unwrap_or(2);
        self.seq_off = seq_off.unwrap_or(self.unit);
        self.doc_lists = (flow, block);
    }

    /// The style for a new list among the keys at indentation `m` in lines `from..to`: like
    /// its sibling lists, else like the document's lists, else flow.
    pub(super) fn style_among(&self, from: usize, to: usize, m: usize) -> ListStyle {
        let (mut flow, mut block) = (0, 0);
        for i in self.siblings(from, to, m) {
            match self.list_style_of(i) {
                Some(ListStyle::Flow) => flow += 1,
                Some(ListStyle::Block) => block += 1,
                None => {}
            }
        }
        pick_style((flow, block)).unwrap_or_else(|| self.doc_style())
    }

    pub(super) fn doc_style(&self) -> ListStyle {
        pick_style(self.doc_lists).unwrap_or(ListStyle::Flow)
    }

    /// Why the value after `key:` on line `i` (neither empty, null nor a flow collection)
    /// cannot be changed.
    fn why_other(&self, colon_end: usize, i: usize) -> &'static str {
        let first = self.text[colon_end..self.lines[i].end]
            .trim_start_matches([' ', '\t'])
            .bytes()
            .next();
        why_scalar(first)
    }

    fn name(&self, rest: &[&str]) -> String {
        let depth = self.path.len() - rest.len();
        self.path[..=depth.min(self.path.len() - 1)].join(".")
    }

    pub(super) fn unsupported(&self, rest: &[&str], why: &str) -> String {
        format!(
            "cannot add to `{}` automatically: {why}; the file was left untouched, edit it by \
             hand",
            self.name(rest)
        )
    }

    pub(super) fn plan(&mut self) -> std::result::Result<(), String> {
        let path = self.path;
        let n = self.lines.len();
        match self.next_content(0, n) {
            None => {
                let lines = build_block(
                    path,
                    0,
                    self.unit,
                    self.seq_off,
                    self.doc_style(),
                    self.values,
                    self.nl,
                );
                self.insert_at_end(lines);
                Ok(())
            }
            Some(j) if self.key_at(j).is_some() => self.in_block(0, n, self.indent(j), path, true),
            Some(j) if self.content(j).starts_with('{') => {
                // The whole document is a flow mapping (JSON, say).
                let at = self.lines[j].start + self.lines[j].indent;
                let node = self.parse_flow(at, path)?;
                self.in_flow_map(&node, path)
            }
            Some(_) => Err(self.unsupported(path, "the document is not a block mapping")),
        }
    }

    /// Find `path[0]` among the keys at indentation `m` in lines `from..to`.
    fn in_block(
        &mut self,
        from: usize,
        to: usize,
        m: usize,
        path: &[&str],
        root: bool,
    ) -> std::result::Result<(), String> {
        let Some((key, rest)) = path.split_first() else {
            return Err("internal error: empty key path".into());
        };
        let found = self
            .siblings(from, to, m)
            .into_iter()
            .find(|&i| self.key_at(i).is_some_and(|(k, _)| k == *key));
        if let Some(i) = found {
            return self.at_key(i, from, to, path);
        }
        // Missing: append the keys at the end of this mapping.
        let style = if rest.is_empty() {
            self.style_among(from, to, m)
        } else {
            self.doc_style()
        };
        let lines = build_block(
            path,
            m,
            self.unit,
            self.seq_off,
            style,
            self.values,
            self.nl,
        );
        if root {
            self.insert_at_end(lines);
        } else {
            let last = self
                .last_content(from, to)
                .ok_or_else(|| self.unsupported(path, "cannot find the end of its mapping"))?;
            self.insert_after_line(last, lines);
        }
        Ok(())
    }

    /// The key `path[0]` is on line `i`, among its siblings in lines `from..to`.
    fn at_key(
        &mut self,
        i: usize,
        from: usize,
        to: usize,
        path: &[&str],
    ) -> std::result::Result<(), String> {
        let m = self.indent(i);
        let Some((_, colon_end)) = self.key_at(i) else {
            return Err("internal error: key line lost".into());
        };
        let rest_kind = self.rest_at(colon_end, i);
        let (end, last) = self.extent(i, to);
        let rest = &path[1..];
        if !rest.is_empty() {
            // A mapping is needed here.
            return match rest_kind {
                Rest::Empty => match self.next_content(i + 1, end) {
                    Some(j) if last.is_some() => {
                        if is_dash(self.content(j)) || self.key_at(j).is_none() {
                            return Err(self.unsupported(path, LAYOUT));
                        }
                        self.in_block(i + 1, end, self.indent(j), rest, false)
                    }
                    _ => {
                        self.create_under(i, m, None, rest);
                        Ok(())
                    }
                },
                Rest::Null { end: e } => {
                    self.create_under(i, m, Some((colon_end, e)), rest);
                    Ok(())
                }
                Rest::FlowMap(at) => {
                    let node = self.parse_flow(at, path)?;
                    self.in_flow_map(&node, rest)
                }
                Rest::FlowSeq(_) | Rest::Other => {
                    Err(self.unsupported(path, self.why_other(colon_end, i)))
                }
            };
        }
        // The list itself.
        match rest_kind {
            Rest::Empty => match (self.next_content(i + 1, end), last) {
                (Some(j), Some(last)) => {
                    if !is_dash(self.content(j)) {
                        return Err(self.unsupported(path, LAYOUT));
                    }
                    self.block_list_append(i + 1, end, j, last);
                    Ok(())
                }
                _ => {
                    self.create_list_at(i, from, to, colon_end, None);
                    Ok(())
                }
            },
            Rest::Null { end: e } => {
                self.create_list_at(i, from, to, colon_end, Some(e));
                Ok(())
            }
            Rest::FlowSeq(at) => {
                let node = self.parse_flow(at, path)?;
                self.flow_list_append(&node, path)
            }
            Rest::FlowMap(_) | Rest::Other => {
                Err(self.unsupported(path, self.why_other(colon_end, i)))
            }
        }
    }

    fn parse_flow(&self, at: usize, path: &[&str]) -> std::result::Result<Flow, String> {
        FlowParser::new(self.text, at, self.hi)
            .node()
            .map_err(|e| self.unsupported(path, &e))
    }
}

/// Why a value starting with `first` cannot be changed.
pub(super) fn why_scalar(first: Option<u8>) -> &'static str {
    match first {
        Some(b'*') => "it is an alias of another value",
        Some(b'&') => "it carries an anchor",
        Some(b'!') => "it carries a tag",
        _ => LAYOUT,
    }
}

pub(super) const LAYOUT: &str = "its layout is not one this editor changes";

/// The majority style of `(flow, block)` lists; `None` when there are none, flow on a tie.
fn pick_style((flow, block): (usize, usize)) -> Option<ListStyle> {
    match (flow, block) {
        (0, 0) => None,
        (f, b) if b > f => Some(ListStyle::Block),
        _ => Some(ListStyle::Flow),
    }
}
