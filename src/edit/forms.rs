//! The change made in each YAML form, as splices of the text: new items after the last one of
//! a block list or of a flow list (spaced and quoted like the items there), a new list under an
//! empty or null key, the missing keys of the section's path, and the walk down a flow mapping
//! to its list.

use super::flow::Flow;
use super::locate::{why_scalar, Editor, LAYOUT};
use super::render::{build_block, build_flow, flow_list, render, ListStyle, QuotePref};
use super::scan::{is_dash, is_null_token};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Splice {
    start: usize,
    end: usize,
    text: String,
}

pub(super) fn apply_splices(
    text: &str,
    mut splices: Vec<Splice>,
) -> std::result::Result<String, String> {
    splices.sort_by_key(|s| (s.start, s.end));
    let mut out =
        String::with_capacity(text.len() + splices.iter().map(|s| s.text.len()).sum::<usize>());
    let mut pos = 0;
    for s in &splices {
        if s.start < pos || s.end < s.start || s.end > text.len() {
            return Err("internal error: overlapping edits; nothing was added".into());
        }
        out.push_str(&text[pos..s.start]);
        out.push_str(&s.text);
        pos = s.end;
    }
    out.push_str(&text[pos..]);
    Ok(out)
}

impl<'a> Editor<'a> {
    fn insert(&mut self, at: usize, text: String) {
        self.splices.push(Splice {
            start: at,
            end: at,
            text,
        });
    }

    fn replace(&mut self, start: usize, end: usize, text: String) {
        self.splices.push(Splice { start, end, text });
    }

    /// Insert whole lines after line `i`.
    pub(super) fn insert_after_line(&mut self, i: usize, lines: String) {
        let l = self.lines[i];
        if l.next > l.end {
            self.insert(l.next, lines);
        } else {
            // The last line of the file has no line break.
            self.insert(l.end, format!("{}{lines}", self.nl));
        }
    }

    /// Insert whole lines at the end of the YAML.
    pub(super) fn insert_at_end(&mut self, lines: String) {
        let at = self.hi;
        if at > self.lo && self.text.as_bytes()[at - 1] != b'\n' {
            self.insert(at, format!("{}{lines}", self.nl));
        } else {
            self.insert(at, lines);
        }
    }

    /// `key:` (or `key: ~`) on line `i` is empty: put the keys of `rest` under it.
    pub(super) fn create_under(
        &mut self,
        i: usize,
        m: usize,
        null: Option<(usize, usize)>,
        rest: &[&str],
    ) {
        if let Some((start, end)) = null {
            self.replace(start, end, String::new());
        }
        let lines = build_block(
            rest,
            m + self.unit,
            self.unit,
            self.seq_off,
            self.doc_style(),
            self.values,
            self.nl,
        );
        self.insert_after_line(i, lines);
    }

    /// `key:` (or `key: ~`) on line `i`, among siblings in `from..to`, is the empty list.
    pub(super) fn create_list_at(
        &mut self,
        i: usize,
        from: usize,
        to: usize,
        colon_end: usize,
        null_end: Option<usize>,
    ) {
        let m = self.indent(i);
        match self.style_among(from, to, m) {
            ListStyle::Flow => {
                let list = format!(" {}", flow_list(self.values));
                self.replace(colon_end, null_end.unwrap_or(colon_end), list);
            }
            ListStyle::Block => {
                if let Some(end) = null_end {
                    self.replace(colon_end, end, String::new());
                }
                let dash = " ".repeat(m + self.seq_off);
                let lines: String = self
                    .values
                    .iter()
                    .map(|v| {
                        format!(
                            "{dash}- {}{}",
                            render(v, false, QuotePref::MINIMAL),
                            self.nl
                        )
                    })
                    .collect();
                self.insert_after_line(i, lines);
            }
        }
    }

    /// A block list whose first dash is on line `first` and whose value ends on line `last`.
    pub(super) fn block_list_append(&mut self, from: usize, to: usize, first: usize, last: usize) {
        let d = self.indent(first);
        let items: Vec<&str> = (from..to)
            .filter(|&j| self.is_content(j) && self.indent(j) == d && is_dash(self.content(j)))
            .map(|j| self.content(j))
            .collect();
        let firsts: Vec<u8> = items
            .iter()
            .filter_map(|item| item[1..].trim_start().bytes().next())
            .filter(|&c| c != b'#')
            .collect();
        let pref = QuotePref::of(&firsts);
        // The spacing after the dash, as the last item has it.
        let gap = items
            .last()
            .map(|item| {
                let after = &item[1..];
                let spaces = after.len() - after.trim_start_matches([' ', '\t']).len();
                if spaces == 0 || spaces == after.len() {
                    " ".to_owned()
                } else {
                    after[..spaces].to_owned()
                }
            })
            .unwrap_or_else(|| " ".to_owned());
        let dash = " ".repeat(d);
        let lines: String = self
            .values
            .iter()
            .map(|v| format!("{dash}-{gap}{}{}", render(v, false, pref), self.nl))
            .collect();
        self.insert_after_line(last, lines);
    }

    /// Append to the flow list `node`.
    pub(super) fn flow_list_append(
        &mut self,
        node: &Flow,
        path: &[&str],
    ) -> std::result::Result<(), String> {
        let Flow::Seq { open, close, items } = node else {
            return Err(self.unsupported(path, LAYOUT));
        };
        let firsts: Vec<u8> = items
            .iter()
            .filter_map(|item| self.text.as_bytes().get(item.start()).copied())
            .collect();
        let pref = QuotePref::of(&firsts);
        let rendered: Vec<String> = self.values.iter().map(|v| render(v, true, pref)).collect();
        let Some(last) = items.last() else {
            self.insert(open + 1, rendered.join(", "));
            return Ok(());
        };
        let b = self.text.as_bytes();
        let (last_start, last_end) = (last.start(), last.end());
        let line_start = memchr::memrchr(b'\n', &b[..last_start]).map_or(0, |i| i + 1);
        let indent = &self.text[line_start..last_start];
        let one_per_line = indent.bytes().all(|c| c == b' ' || c == b'\t')
            && self.text[last_end..*close].contains('\n')
            && self.text[*open + 1..last_start].contains('\n');
        if !one_per_line {
            self.insert(last_end, format!(", {}", rendered.join(", ")));
            return Ok(());
        }
        // One item a line: new items on lines of their own, indented like the last one.
        let line_end =
            |from: usize| memchr::memchr(b'\n', &b[from..]).map_or(b.len(), |i| from + i + 1);
        let after = self.text[last_end..].trim_start_matches([' ', '\t']);
        let nl = self.nl;
        if after.starts_with(',') {
            let lines: String = rendered
                .iter()
                .map(|v| format!("{indent}{v},{nl}"))
                .collect();
            self.insert(line_end(last_end), lines);
        } else {
            self.insert(last_end, ",".to_owned());
            let lines: Vec<String> = rendered.iter().map(|v| format!("{indent}{v}")).collect();
            self.insert(
                line_end(last_end),
                format!("{}{nl}", lines.join(&format!(",{nl}"))),
            );
        }
        Ok(())
    }

    /// Find `path[0]` in the flow mapping `node`.
    pub(super) fn in_flow_map(
        &mut self,
        node: &Flow,
        path: &[&str],
    ) -> std::result::Result<(), String> {
        let Flow::Map { open, entries, .. } = node else {
            return Err(self.unsupported(path, LAYOUT));
        };
        let Some((key, rest)) = path.split_first() else {
            return Err("internal error: empty key path".into());
        };
        let Some(entry) = entries.iter().find(|e| e.key == *key) else {
            let entry = format!("{key}: {}", build_flow(rest, self.values));
            match entries.last() {
                Some(last) => self.insert(last.end, format!(", {entry}")),
                None => self.insert(open + 1, entry),
            }
            return Ok(());
        };
        let null_span = match &entry.value {
            Some(Flow::Scalar { start, end }) if is_null_token(&self.text[*start..*end]) => {
                Some((*start, *end))
            }
            _ => None,
        };
        if let Some((start, end)) = null_span {
            self.replace(start, end, build_flow(rest, self.values));
            return Ok(());
        }
        match (&entry.value, rest.is_empty()) {
            (Some(value @ Flow::Map { .. }), false) => self.in_flow_map(value, rest),
            (Some(value @ Flow::Seq { .. }), true) => self.flow_list_append(value, path),
            (Some(Flow::Scalar { start, .. }), _) => {
                let why = why_scalar(self.text.as_bytes().get(*start).copied());
                Err(self.unsupported(path, why))
            }
            _ => Err(self.unsupported(path, LAYOUT)),
        }
    }
}
