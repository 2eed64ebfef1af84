//! Patch parsing (F05, F06): a unified diff (`--- a/f`, `+++ b/f`, `@@ -l,n +l,n @@`, git's
//! extended headers) or the `*** Begin Patch` ... `*** End Patch` envelope, both parsed into
//! one [`Patch`]. Parsing is strict: hunk counts must agree with their lines, and anything
//! that is neither format is an error naming the line.

use serde::Serialize;

use super::FsError;

/// Largest patch text accepted.
pub const MAX_PATCH_BYTES: usize = 8 << 20;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Patch {
    pub format: Format,
    pub files: Vec<FilePatch>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Unified,
    Envelope,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Add,
    Delete,
    Update,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilePatch {
    pub kind: Kind,
    /// The file changed or deleted, or the file added (as written in the patch).
    pub path: String,
    /// A rename: where the file goes.
    pub move_to: Option<String>,
    pub hunks: Vec<Hunk>,
    /// Line of the patch where this file starts (1-based).
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// Unified diff: the 1-based first old line (0 when the hunk inserts at the top of an
    /// empty or new file). `None` in the envelope, where hunks are found by their context.
    pub old_start: Option<usize>,
    /// Envelope: the text after `@@` that narrows the search (a line of the file).
    pub anchor: Option<String>,
    /// Envelope: `*** End of File` — the hunk ends at the end of the file.
    pub at_eof: bool,
    pub lines: Vec<Line>,
    /// The old side has no newline after its last line.
    pub old_no_newline: bool,
    /// The new side has no newline after its last line.
    pub new_no_newline: bool,
    /// Line of the patch where the hunk starts (1-based).
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "op", content = "text")]
pub enum Line {
    Context(String),
    Remove(String),
    Add(String),
}

impl Hunk {
    /// The lines the hunk expects (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(t) | Line::Remove(t) => Some(t.as_str()),
                Line::Add(_) => None,
            })
            .collect()
    }

    /// The lines the hunk leaves (context and added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                Line::Context(t) | Line::Add(t) => Some(t.as_str()),
                Line::Remove(_) => None,
            })
            .collect()
    }
}

fn perr(line: usize, message: impl Into<String>) -> FsError {
    FsError::PatchParse {
        line,
        message: message.into(),
    }
}

/// Parses either format, chosen by the first non-blank line.
pub fn parse(text: &str) -> Result<Patch, FsError> {
    if text.len() > MAX_PATCH_BYTES {
        return Err(perr(
            0,
            format!(
                "the patch has {} bytes; the limit is {MAX_PATCH_BYTES}: split it",
                text.len()
            ),
        ));
    }
    if text.contains('\0') {
        return Err(perr(0, "the patch holds a NUL byte"));
    }
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // A final newline leaves one empty element that is not a line.
    let lines = match lines.split_last() {
        Some((&"", rest)) => rest.to_vec(),
        _ => lines,
    };
    match lines.iter().find(|l| !l.trim().is_empty()) {
        Some(first) if first.trim() == "*** Begin Patch" => parse_envelope(&lines),
        Some(_) => parse_unified(&lines),
        None => Err(perr(1, "the patch is empty")),
    }
}

// ---------------------------------------------------------------------------------------
// Unified diff

fn header_path(rest: &str) -> String {
    // `--- a/file\t2024-01-01 ...`: the path ends at a tab. Quoted git paths are unquoted.
    let p = rest.split('\t').next().unwrap_or(rest).trim_end();
    if p.len() >= 2 && p.starts_with('"') && p.ends_with('"') {
        if let Ok(words) = shell_words::split(p) {
            if let Some(w) = words.into_iter().next() {
                return w;
            }
        }
    }
    p.to_string()
}

fn strip_prefix(old: &str, new: &str) -> (String, String) {
    let strip = |p: &str, pre: &str| p.strip_prefix(pre).map(str::to_string);
    let dev_null = |p: &str| p == "/dev/null";
    match (dev_null(old), dev_null(new)) {
        (false, false) => match (strip(old, "a/"), strip(new, "b/")) {
            (Some(o), Some(n)) => (o, n),
            _ => (old.into(), new.into()),
        },
        (true, false) => (old.into(), strip(new, "b/").unwrap_or_else(|| new.into())),
        (false, true) => (strip(old, "a/").unwrap_or_else(|| old.into()), new.into()),
        (true, true) => (old.into(), new.into()),
    }
}

fn parse_range(s: &str, line: usize) -> Result<(usize, usize), FsError> {
    let (start, count) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let num = |t: &str| {
        t.parse::<usize>()
            .map_err(|_| perr(line, format!("bad number `{t}` in the hunk header")))
    };
    Ok((
        num(start)?,
        match count {
            Some(c) => num(c)?,
            None => 1,
        },
    ))
}

/// A range of lines: (start, count).
type Range = (usize, usize);

/// `@@ -a,b +c,d @@ text` → ((a, b), (c, d)).
fn parse_hunk_header(l: &str, line: usize) -> Result<(Range, Range), FsError> {
    let bad = || {
        perr(
            line,
            format!("bad hunk header `{l}` (want `@@ -start,count +start,count @@`)"),
        )
    };
    let rest = l.strip_prefix("@@ ").ok_or_else(bad)?;
    let end = rest.find(" @@").ok_or_else(bad)?;
    let mut parts = rest[..end].split(' ');
    let old = parts
        .next()
        .and_then(|p| p.strip_prefix('-'))
        .ok_or_else(bad)?;
    let new = parts
        .next()
        .and_then(|p| p.strip_prefix('+'))
        .ok_or_else(bad)?;
    if parts.next().is_some() {
        return Err(bad());
    }
    Ok((parse_range(old, line)?, parse_range(new, line)?))
}

fn parse_unified(lines: &[&str]) -> Result<Patch, FsError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(old) = l.strip_prefix("--- ") {
            let start = i + 1;
            let new = lines
                .get(i + 1)
                .and_then(|n| n.strip_prefix("+++ "))
                .ok_or_else(|| {
                    perr(
                        i + 2,
                        format!("`--- {old}` must be followed by a `+++ ` line"),
                    )
                })?;
            let (old, new) = strip_prefix(&header_path(old), &header_path(new));
            let (kind, path, move_to) = match (old.as_str(), new.as_str()) {
                ("/dev/null", "/dev/null") => return Err(perr(start, "both sides are /dev/null")),
                ("/dev/null", n) => (Kind::Add, n.to_string(), None),
                (o, "/dev/null") => (Kind::Delete, o.to_string(), None),
                (o, n) if o == n => (Kind::Update, o.to_string(), None),
                (o, n) => (Kind::Update, o.to_string(), Some(n.to_string())),
            };
            if path.is_empty() {
                return Err(perr(start, "the file header names no file"));
            }
            i += 2;
            let mut hunks = Vec::new();
            while i < lines.len() && lines[i].starts_with("@@") {
                let (hunk, next) = parse_unified_hunk(lines, i)?;
                hunks.push(hunk);
                i = next;
            }
            if hunks.is_empty() {
                return Err(perr(
                    i + 1,
                    format!("the file {path} has no hunk (`@@ -l,n +l,n @@`)"),
                ));
            }
            files.push(FilePatch {
                kind,
                path,
                move_to,
                hunks,
                line: start,
            });
            continue;
        }
        if l.starts_with("@@") {
            return Err(perr(i + 1, "a hunk before any `--- `/`+++ ` file header"));
        }
        // git's headers (`diff --git`, `index`, modes, similarity) and commentary are skipped.
        i += 1;
    }
    if files.is_empty() {
        return Err(perr(1, "no file header found: a unified diff starts each file with `--- a/PATH` and `+++ b/PATH`"));
    }
    Ok(Patch {
        format: Format::Unified,
        files,
    })
}

fn parse_unified_hunk(lines: &[&str], at: usize) -> Result<(Hunk, usize), FsError> {
    let ((old_start, old_count), (_new_start, new_count)) = parse_hunk_header(lines[at], at + 1)?;
    let mut hunk = Hunk {
        old_start: Some(old_start),
        anchor: None,
        at_eof: false,
        lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
        line: at + 1,
    };
    let (mut old_seen, mut new_seen) = (0, 0);
    let mut i = at + 1;
    while old_seen < old_count || new_seen < new_count {
        let Some(&l) = lines.get(i) else {
            return Err(perr(i, format!("the hunk at line {} ends early: {old_seen} of {old_count} old and {new_seen} of {new_count} new lines", at + 1)));
        };
        let (op, text) = match l.chars().next() {
            Some(' ') => (' ', &l[1..]),
            // Editors strip the space of an empty context line.
            None => (' ', ""),
            Some('-') => ('-', &l[1..]),
            Some('+') => ('+', &l[1..]),
            Some('\\') => {
                i += 1;
                mark_no_newline(&mut hunk);
                continue;
            }
            _ => {
                return Err(perr(i + 1, format!(
                    "the hunk at line {} ends early: {old_seen} of {old_count} old and {new_seen} of {new_count} new lines (a hunk line starts with ' ', '-' or '+')",
                    at + 1
                )))
            }
        };
        match op {
            ' ' => {
                old_seen += 1;
                new_seen += 1;
                hunk.lines.push(Line::Context(text.into()));
            }
            '-' => {
                old_seen += 1;
                hunk.lines.push(Line::Remove(text.into()));
            }
            _ => {
                new_seen += 1;
                hunk.lines.push(Line::Add(text.into()));
            }
        }
        if old_seen > old_count || new_seen > new_count {
            return Err(perr(i + 1, format!("the hunk at line {} has more lines than its header counts ({old_count} old, {new_count} new)", at + 1)));
        }
        i += 1;
    }
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        mark_no_newline(&mut hunk);
        i += 1;
    }
    Ok((hunk, i))
}

/// `\ No newline at end of file` applies to the line just before it.
fn mark_no_newline(h: &mut Hunk) {
    match h.lines.last() {
        Some(Line::Context(_)) => {
            h.old_no_newline = true;
            h.new_no_newline = true;
        }
        Some(Line::Remove(_)) => h.old_no_newline = true,
        Some(Line::Add(_)) => h.new_no_newline = true,
        None => {}
    }
}

// ---------------------------------------------------------------------------------------
// The `*** Begin Patch` envelope

fn parse_envelope(lines: &[&str]) -> Result<Patch, FsError> {
    let mut i = lines
        .iter()
        .position(|l| l.trim() == "*** Begin Patch")
        .unwrap_or(0)
        + 1;
    let mut files = Vec::new();
    loop {
        let Some(&l) = lines.get(i) else {
            return Err(perr(i, "the envelope is not closed with `*** End Patch`"));
        };
        let t = l.trim_end();
        if t == "*** End Patch" {
            if let Some(extra) = lines[i + 1..].iter().position(|l| !l.trim().is_empty()) {
                return Err(perr(i + 2 + extra, "text after `*** End Patch`"));
            }
            break;
        }
        if let Some(path) = t.strip_prefix("*** Add File: ") {
            let start = i + 1;
            i += 1;
            let mut added = Vec::new();
            while let Some(l) = lines.get(i).filter(|l| !l.starts_with("*** ")) {
                let text = l.strip_prefix('+').ok_or_else(|| {
                    perr(
                        i + 1,
                        format!("a line of the added file {path} must start with '+'"),
                    )
                })?;
                added.push(Line::Add(text.into()));
                i += 1;
            }
            let hunk = Hunk {
                old_start: Some(0),
                anchor: None,
                at_eof: false,
                lines: added,
                old_no_newline: false,
                new_no_newline: false,
                line: start,
            };
            files.push(FilePatch {
                kind: Kind::Add,
                path: nonempty(path, start)?,
                move_to: None,
                hunks: vec![hunk],
                line: start,
            });
        } else if let Some(path) = t.strip_prefix("*** Delete File: ") {
            files.push(FilePatch {
                kind: Kind::Delete,
                path: nonempty(path, i + 1)?,
                move_to: None,
                hunks: Vec::new(),
                line: i + 1,
            });
            i += 1;
        } else if let Some(path) = t.strip_prefix("*** Update File: ") {
            let start = i + 1;
            i += 1;
            let mut move_to = None;
            if let Some(to) = lines
                .get(i)
                .and_then(|l| l.trim_end().strip_prefix("*** Move to: "))
            {
                move_to = Some(nonempty(to, i + 1)?);
                i += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            while let Some(&l) = lines.get(i) {
                if l.trim_end() == "*** End of File" {
                    match hunks.last_mut() {
                        Some(h) => h.at_eof = true,
                        None => return Err(perr(i + 1, "`*** End of File` before any change")),
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("*** ") {
                    break;
                }
                if let Some(anchor) = l.strip_prefix("@@") {
                    let anchor = anchor.trim();
                    hunks.push(Hunk {
                        old_start: None,
                        anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                        at_eof: false,
                        lines: Vec::new(),
                        old_no_newline: false,
                        new_no_newline: false,
                        line: i + 1,
                    });
                    i += 1;
                    continue;
                }
                let (op, text) = match l.chars().next() {
                    Some(c @ (' ' | '-' | '+')) => (c, &l[1..]),
                    None => (' ', ""),
                    _ => {
                        return Err(perr(
                            i + 1,
                            format!(
                                "a change line of {} must start with ' ', '-', '+' or `@@`",
                                t.trim_start_matches("*** Update File: ")
                            ),
                        ))
                    }
                };
                if hunks.is_empty() || hunks.last().is_some_and(|h| h.at_eof) {
                    hunks.push(Hunk {
                        old_start: None,
                        anchor: None,
                        at_eof: false,
                        lines: Vec::new(),
                        old_no_newline: false,
                        new_no_newline: false,
                        line: i + 1,
                    });
                }
                if let Some(h) = hunks.last_mut() {
                    h.lines.push(match op {
                        ' ' => Line::Context(text.into()),
                        '-' => Line::Remove(text.into()),
                        _ => Line::Add(text.into()),
                    });
                }
                i += 1;
            }
            hunks.retain(|h| !h.lines.is_empty());
            if hunks.is_empty() && move_to.is_none() {
                return Err(perr(
                    start,
                    format!("`*** Update File: {path}` has no change"),
                ));
            }
            files.push(FilePatch {
                kind: Kind::Update,
                path: nonempty(path, start)?,
                move_to,
                hunks,
                line: start,
            });
        } else if t.trim().is_empty() {
            i += 1;
        } else {
            return Err(perr(i + 1, format!("unexpected `{}`: want `*** Add File: `, `*** Delete File: `, `*** Update File: ` or `*** End Patch`", t.chars().take(60).collect::<String>())));
        }
    }
    if files.is_empty() {
        return Err(perr(1, "the envelope changes no file"));
    }
    Ok(Patch {
        format: Format::Envelope,
        files,
    })
}

fn nonempty(path: &str, line: usize) -> Result<String, FsError> {
    let p = path.trim();
    if p.is_empty() {
        Err(perr(line, "the file header names no file"))
    } else {
        Ok(p.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f05_unified_headers_table() {
        for (text, kind, path, move_to) in [
            ("--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n", Kind::Update, "x.txt", None),
            ("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n", Kind::Add, "new.txt", None),
            ("--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n", Kind::Delete, "old.txt", None),
            ("--- x.txt\t2024-01-01\n+++ y.txt\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n", Kind::Update, "x.txt", Some("y.txt")),
            ("diff --git a/s p.txt b/s p.txt\nindex 1..2 100644\n--- \"a/s p.txt\"\n+++ \"b/s p.txt\"\n@@ -1 +1 @@\n-a\n+b\n", Kind::Update, "s p.txt", None),
        ] {
            let p = parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(p.format, Format::Unified);
            assert_eq!((p.files[0].kind, p.files[0].path.as_str(), p.files[0].move_to.as_deref()), (kind, path, move_to), "{text}");
        }
    }

    #[test]
    fn f05_parse_errors_name_the_line() {
        for (text, line, needle) in [
            ("", 1, "empty"),
            ("hello\n", 1, "no file header"),
            ("@@ -1 +1 @@\n-a\n+b\n", 1, "before any"),
            ("--- a/x\n@@ -1 +1 @@\n", 2, "+++"),
            ("--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n-a\n+b\n", 5, "ends early"),
            (
                "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+c\n",
                5,
                "more lines",
            ),
            ("--- a/x\n+++ b/x\n@@ -x +1 @@\n", 3, "bad number"),
            ("--- a/x\n+++ b/x\n", 3, "no hunk"),
            ("*** Begin Patch\n*** Update File: a\n", 2, "no change"),
            ("*** Begin Patch\n*** Add File: a\n+x\n", 3, "End Patch"),
            (
                "*** Begin Patch\n*** Add File: a\nx\n*** End Patch\n",
                3,
                "must start with '+'",
            ),
            (
                "*** Begin Patch\n*** Frobnicate: a\n*** End Patch\n",
                2,
                "unexpected",
            ),
            ("*** Begin Patch\n*** End Patch\n", 1, "changes no file"),
        ] {
            match parse(text) {
                Err(FsError::PatchParse { line: l, message }) => {
                    assert_eq!(l, line, "{text:?}: {message}");
                    assert!(message.contains(needle), "{text:?}: {message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn f06_envelope_table() {
        let text = "*** Begin Patch\n*** Add File: n.txt\n+one\n+two\n*** Delete File: d.txt\n*** Update File: u.txt\n*** Move to: v.txt\n@@ fn main\n a\n-b\n+c\n*** End of File\n*** End Patch\n";
        let p = parse(text).expect("parses");
        assert_eq!(p.format, Format::Envelope);
        let kinds: Vec<_> = p
            .files
            .iter()
            .map(|f| (f.kind, f.path.as_str(), f.move_to.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (Kind::Add, "n.txt", None),
                (Kind::Delete, "d.txt", None),
                (Kind::Update, "u.txt", Some("v.txt"))
            ]
        );
        assert_eq!(p.files[0].hunks[0].new_lines(), vec!["one", "two"]);
        let h = &p.files[2].hunks[0];
        assert_eq!(
            (h.anchor.as_deref(), h.at_eof, h.old_lines(), h.new_lines()),
            (Some("fn main"), true, vec!["a", "b"], vec!["a", "c"])
        );
    }

    #[test]
    fn f05_no_newline_markers() {
        let p = parse("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n").expect("parses");
        let h = &p.files[0].hunks[0];
        assert!(h.old_no_newline && h.new_no_newline);
    }
}
