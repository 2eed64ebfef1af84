//! Where the YAML is in the file: the whole of a `scope.yml` (up to a `...` line), or the
//! front matter between the `---` lines at the top of a `preset.md`, created when the file has
//! none.

use serde_yaml::Value;

use super::render::{build_block, ListStyle};
use super::scan::line_starts;
use super::DocKind;

#[derive(Debug, Clone)]
pub(super) struct Region {
    /// First byte of the YAML.
    pub(super) lo: usize,
    /// End of the part that may be edited (before a closing fence or a `...` line).
    pub(super) hi: usize,
    /// End of the text given to the YAML parser.
    pub(super) parse_end: usize,
    /// 1-based line of the file where the YAML starts (for messages).
    first_line: usize,
    /// A Markdown file without front matter: one is created at `lo`.
    pub(super) missing: bool,
    /// The file's line ending.
    pub(super) nl: &'static str,
}

impl Region {
    pub(super) fn find(text: &str, kind: DocKind) -> std::result::Result<Region, String> {
        let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let nl = match memchr::memchr(b'\n', text.as_bytes()) {
            Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
            _ => "\n",
        };
        let region = |lo, hi, parse_end, first_line, missing| Region {
            lo,
            hi,
            parse_end,
            first_line,
            missing,
            nl,
        };
        match kind {
            DocKind::Yaml => {
                // A `...` line ends the document; what follows is not YAML to edit.
                let hi = line_starts(text, bom)
                    .find(|&(s, e, _)| {
                        let line = text[s..e].trim_end();
                        line == "..." || line.starts_with("... ") || line.starts_with("...#")
                    })
                    .map_or(text.len(), |(s, _, _)| s);
                Ok(region(bom, hi, text.len(), 1, false))
            }
            DocKind::FrontMatter => {
                let mut lines = line_starts(text, bom);
                match lines.next() {
                    Some((s, e, _)) if text[s..e].trim_end() == "---" => {}
                    _ => return Ok(region(bom, bom, bom, 1, true)),
                }
                let lo = lines.clone().next().map_or(text.len(), |(s, _, _)| s);
                for (s, e, _) in lines {
                    let line = text[s..e].trim_end();
                    if line == "---" || line == "..." {
                        return Ok(region(lo, s, s, 2, false));
                    }
                }
                Err(
                    "the front matter opened by '---' on line 1 is not closed by a '---' \
                     line; nothing was added"
                        .into(),
                )
            }
        }
    }

    pub(super) fn parse(&self, text: &str, kind: DocKind) -> std::result::Result<Value, String> {
        let yaml = &text[self.lo..self.parse_end];
        let root: Value = serde_yaml::from_str(yaml).map_err(|e| {
            let what = match kind {
                DocKind::Yaml => "The document",
                DocKind::FrontMatter => "The YAML front matter",
            };
            let at = e
                .location()
                .map(|l| format!(" (line {} of the file)", l.line() + self.first_line - 1))
                .unwrap_or_default();
            format!("{what} does not parse{at}: {e}. Nothing was added; fix it first")
        })?;
        match root {
            Value::Null | Value::Mapping(_) => Ok(root),
            _ => Err("the document is not a mapping of keys; nothing was added".into()),
        }
    }

    /// A Markdown file without front matter gets one, holding only the new list.
    pub(super) fn create_front_matter(
        &self,
        text: &str,
        path: &[&str],
        values: &[String],
    ) -> (String, (usize, usize)) {
        let nl = self.nl;
        let yaml = build_block(path, 0, 2, 2, ListStyle::Flow, values, nl);
        let mut out = String::with_capacity(text.len() + yaml.len() + 8);
        out.push_str(&text[..self.lo]);
        out.push_str("---");
        out.push_str(nl);
        let start = out.len();
        out.push_str(&yaml);
        let end = out.len();
        out.push_str("---");
        out.push_str(nl);
        out.push_str(&text[self.lo..]);
        (out, (start, end))
    }
}
