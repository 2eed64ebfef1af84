//! "Add to scope" (SPEC §6, E11-E16, E30-E36, E44-E47): the smallest edit to the scope
//! document in effect.
//!
//! [`route`] turns a scope-expansion request (validation type, resource, tool) into the
//! section and the value to add. [`add_to_scope`] adds values to one section of a `scope.yml`,
//! or of the YAML front matter of a `preset.md`, by inserting text: every comment, the key
//! order and the formatting outside the changed lines survive byte for byte, and everything
//! after the front matter is left alone.
//!
//! The document is scanned line by line for the block structure (keys by indentation, block
//! lists, block scalars skipped) and with a small parser for flow collections (`[a, "b"]`,
//! `{read: []}`, on one line or several). Whatever that scan does not understand is an error,
//! never a guess. Every edit is then checked: the new text is parsed again and must equal the
//! old document with exactly the new values appended to the one list, or nothing is written.
//! The write is atomic (temporary file in the same directory, fsync, the original's
//! permissions, rename), and on Unix the whole read-modify-write holds an advisory lock on
//! the document, so concurrent edits (two Emacs processes) each keep the other's values.

use std::fmt;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use serde_yaml::{Mapping, Value};

use crate::error::{Result, ScopeError};

/// A list of the scope document that "Add to scope" can extend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// `paths.read`
    PathsRead,
    /// `paths.write`
    PathsWrite,
    /// `bash_tools.categories.read_only`
    ReadOnly,
    /// `bash_tools.categories.safe_write`
    SafeWrite,
    /// `bash_tools.categories.dangerous`
    Dangerous,
    /// `org_roam_patterns.subdirectory`
    OrgRoamSubdirectory,
    /// `org_roam_patterns.tags`
    OrgRoamTags,
    /// `environment.include`
    EnvironmentInclude,
}

impl Section {
    pub const ALL: [Section; 8] = [
        Section::PathsRead,
        Section::PathsWrite,
        Section::ReadOnly,
        Section::SafeWrite,
        Section::Dangerous,
        Section::OrgRoamSubdirectory,
        Section::OrgRoamTags,
        Section::EnvironmentInclude,
    ];

    /// The keys leading to the list, outermost first.
    pub fn key_path(self) -> &'static [&'static str] {
        match self {
            Section::PathsRead => &["paths", "read"],
            Section::PathsWrite => &["paths", "write"],
            Section::ReadOnly => &["bash_tools", "categories", "read_only"],
            Section::SafeWrite => &["bash_tools", "categories", "safe_write"],
            Section::Dangerous => &["bash_tools", "categories", "dangerous"],
            Section::OrgRoamSubdirectory => &["org_roam_patterns", "subdirectory"],
            Section::OrgRoamTags => &["org_roam_patterns", "tags"],
            Section::EnvironmentInclude => &["environment", "include"],
        }
    }

    /// The dotted key, `bash_tools.categories.read_only`.
    pub fn dotted(self) -> &'static str {
        match self {
            Section::PathsRead => "paths.read",
            Section::PathsWrite => "paths.write",
            Section::ReadOnly => "bash_tools.categories.read_only",
            Section::SafeWrite => "bash_tools.categories.safe_write",
            Section::Dangerous => "bash_tools.categories.dangerous",
            Section::OrgRoamSubdirectory => "org_roam_patterns.subdirectory",
            Section::OrgRoamTags => "org_roam_patterns.tags",
            Section::EnvironmentInclude => "environment.include",
        }
    }

    /// The section named by its dotted key.
    pub fn from_dotted(key: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.dotted() == key)
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dotted())
    }
}

/// What [`add_to_scope`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EditOutcome {
    /// The document edited (as given).
    pub file: PathBuf,
    /// The dotted key of the list, `paths.read`.
    pub section: String,
    /// Values appended, in the order given (E23, E41).
    pub patterns_added: Vec<String>,
    /// Values not added because the list already held them (E14).
    pub already_present: Vec<String>,
    /// SHA-256 (hex) of the document's bytes before the edit, as read under the edit's lock.
    pub sha256_before: String,
    /// SHA-256 (hex) of the bytes written (the same as before when nothing was added).
    pub sha256_after: String,
}

impl EditOutcome {
    /// A sentence for the model and the user (E43).
    pub fn message(&self) -> String {
        let file = self.file.display();
        let section = &self.section;
        let quoted = |v: &[String]| {
            v.iter()
                .map(|s| format!("\"{s}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (
            self.patterns_added.is_empty(),
            self.already_present.is_empty(),
        ) {
            (false, true) => format!(
                "Added {} to {section} in {file}.",
                quoted(&self.patterns_added)
            ),
            (false, false) => format!(
                "Added {} to {section} in {file}; {} already there.",
                quoted(&self.patterns_added),
                quoted(&self.already_present)
            ),
            (true, false) => format!(
                "{} already in {section} in {file}; nothing changed.",
                quoted(&self.already_present)
            ),
            (true, true) => format!("Nothing to add to {section} in {file}."),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Routing a request to a section (E30-E33, E11-E13, E15, E44-E47)
// ---------------------------------------------------------------------------------------

/// Tools that write the paths they are given.
const WRITING_TOOLS: &[&str] = &["apply_patch", "write_file", "edit_file", "create_file"];

/// The section and the value that make a scope-expansion request permanent.
///
/// - `path`: `paths.write` when `access` is `write` or `tool` writes (`apply_patch`,
///   `write_file`, `edit_file`, `create_file`), else `paths.read`. The value is absolute
///   (relative to `base_dir`; `~` kept), normalized, and `dir/` becomes `dir/**`.
/// - `pattern`: `subdirectory:X` → `org_roam_patterns.subdirectory` `X`; `tags:Y` →
///   `org_roam_patterns.tags` `Y`.
/// - `command`: the command's name without its arguments (`git status -s` → `git`), in
///   `category` (`read_only`, the default, `safe_write` or `dangerous`).
///
/// Anything else is [`ScopeError::InvalidArgument`].
pub fn route(
    validation_type: &str,
    resource: &str,
    tool: &str,
    access: Option<&str>,
    category: Option<&str>,
    base_dir: &Path,
) -> Result<(Section, String)> {
    match validation_type.trim().trim_start_matches(':') {
        "path" => {
            let writes = match access.map(str::trim) {
                None | Some("") | Some("read") => false,
                Some("write") => true,
                Some(other) => {
                    return Err(ScopeError::InvalidArgument(format!(
                        "unknown access {other:?}: expected \"read\" or \"write\""
                    )))
                }
            } || WRITING_TOOLS.contains(&tool.trim());
            let section = if writes {
                Section::PathsWrite
            } else {
                Section::PathsRead
            };
            Ok((section, path_pattern(resource, base_dir)?))
        }
        "pattern" => org_roam_pattern(resource),
        "command" => Ok((command_section(category)?, base_command(resource)?)),
        "env" => match crate::scope::env::resource_name(resource.trim()) {
            Some(name) => Ok((Section::EnvironmentInclude, name.to_owned())),
            None => Err(ScopeError::InvalidArgument(format!(
                "not a variable: {resource:?} (expected env:NAME, a name without `=` or glob characters)"
            ))),
        },
        other => Err(ScopeError::InvalidArgument(format!(
            "unknown validation type {other:?}: expected \"path\", \"pattern\", \"command\" or \"env\"; \
             nothing was added to the scope"
        ))),
    }
}

/// The path pattern for `resource`: absolute (a relative one is taken from `base_dir`; `~`
/// and `~user` are kept as written), normalized lexically (`.`, `..`, `//`), and `dir/`
/// becomes `dir/**` (E15, E44). Globs are kept as they are.
pub fn path_pattern(resource: &str, base_dir: &Path) -> Result<String> {
    let r = resource.trim();
    if r.is_empty() || r.contains('\0') {
        return Err(ScopeError::InvalidArgument(format!(
            "not a path: {resource:?}"
        )));
    }
    let is_home = |s: &str| s.starts_with('~');
    let full = if r.starts_with('/') || is_home(r) {
        r.to_owned()
    } else {
        let base = base_dir.to_str().ok_or_else(|| {
            ScopeError::InvalidArgument(format!(
                "base directory {} is not valid UTF-8",
                base_dir.display()
            ))
        })?;
        if !(base.starts_with('/') || is_home(base)) {
            return Err(ScopeError::InvalidArgument(format!(
                "cannot make {r:?} absolute: the base directory {base:?} is not absolute"
            )));
        }
        format!("{}/{r}", base.trim_end_matches('/'))
    };
    let mut pattern = normalize_path(&full);
    if r.ends_with('/') && !pattern.ends_with("/**") {
        if !pattern.ends_with('/') {
            pattern.push('/');
        }
        pattern.push_str("**");
    }
    Ok(pattern)
}

/// Lexical normalization of a path that starts with `/` or `~`: no `.`, no empty component,
/// `..` removes the component before it (at `/` it is dropped; after `~` it is kept).
fn normalize_path(path: &str) -> String {
    let (prefix, rest) = if path.starts_with('/') {
        ("", path)
    } else {
        match path.find('/') {
            Some(i) => path.split_at(i),
            None => (path, ""),
        }
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if prefix.is_empty() => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    match (parts.is_empty(), prefix.is_empty()) {
        (true, true) => "/".to_owned(),
        (true, false) => prefix.to_owned(),
        (false, _) => format!("{prefix}/{}", parts.join("/")),
    }
}

/// `subdirectory:X` and `tags:Y` (E12, E45).
fn org_roam_pattern(resource: &str) -> Result<(Section, String)> {
    let r = resource.trim();
    let (section, value) = if let Some(v) = r.strip_prefix("subdirectory:") {
        (Section::OrgRoamSubdirectory, v)
    } else if let Some(v) = r.strip_prefix("tags:") {
        (Section::OrgRoamTags, v)
    } else {
        return Err(ScopeError::InvalidArgument(format!(
            "pattern resource {r:?} is neither \"subdirectory:X\" nor \"tags:Y\""
        )));
    };
    let value = value.trim();
    if value.is_empty() {
        return Err(ScopeError::InvalidArgument(format!(
            "pattern resource {r:?} names no subdirectory or tag"
        )));
    }
    Ok((section, value.to_owned()))
}

fn command_section(category: Option<&str>) -> Result<Section> {
    match category.map(str::trim) {
        None | Some("") | Some("read_only") | Some("read-only") => Ok(Section::ReadOnly),
        Some("safe_write") | Some("safe-write") => Ok(Section::SafeWrite),
        Some("dangerous") => Ok(Section::Dangerous),
        Some(other) => Err(ScopeError::InvalidArgument(format!(
            "unknown command category {other:?}: expected \"read_only\", \"safe_write\" or \
             \"dangerous\""
        ))),
    }
}

/// The name of the command `command` runs, without its arguments, quotes removed
/// (`git status -s` → `git`, `FOO=1 make` → `make`, `ls|wc` → `ls`, `/usr/bin/git log` →
/// `/usr/bin/git`; E46). A name built from expansions or globs is refused.
pub fn base_command(command: &str) -> Result<String> {
    let words = shell_words::split(command).map_err(|e| {
        ScopeError::InvalidArgument(format!("cannot split the command {command:?}: {e}"))
    })?;
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let word = words
        .iter()
        .map(|w| w.trim_start_matches('('))
        .find(|w| !w.is_empty() && !is_assignment(w) && !matches!(*w, "!" | "{"))
        .unwrap_or_default();
    let name = word
        .split(['|', ';', '&', '<', '>', '(', ')'])
        .next()
        .unwrap_or_default();
    if name.is_empty() {
        return Err(ScopeError::InvalidArgument(format!(
            "no command name in {command:?}"
        )));
    }
    if name.contains(['$', '`', '*', '?', '[', '\n']) {
        return Err(ScopeError::InvalidArgument(format!(
            "the command name {name:?} is not static (expansion or glob); add it by hand"
        )));
    }
    Ok(name.to_owned())
}

// ---------------------------------------------------------------------------------------
// Editing
// ---------------------------------------------------------------------------------------

/// What holds the scope: a YAML file, or the YAML front matter of a Markdown file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// The whole file is the YAML document (`scope.yml`).
    Yaml,
    /// The YAML between the `---` lines at the top (`preset.md`); the rest is left alone.
    FrontMatter,
}

impl DocKind {
    /// `FrontMatter` for `.md` and `.markdown` files, `Yaml` for everything else.
    pub fn for_path(path: &Path) -> DocKind {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown") => {
                DocKind::FrontMatter
            }
            _ => DocKind::Yaml,
        }
    }
}

/// The result of [`edit_text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    /// The new text, or `None` when nothing had to be added.
    pub text: Option<String>,
    pub patterns_added: Vec<String>,
    pub already_present: Vec<String>,
}

/// Add `values` to `section` of the scope in `file` (E11-E16, E34, E36), keeping everything
/// else byte for byte. Values already in the list (by their parsed value) are not added and
/// are reported in `already_present`; when nothing is left to add the file is not written.
///
/// A missing file, a document that does not parse, a section that is not a list, or a layout
/// this editor cannot change safely is an error, and the file is left untouched.
pub fn add_to_scope(file: &Path, section: Section, values: &[String]) -> Result<EditOutcome> {
    let label = file.display().to_string();
    // Held until the new text is renamed into place: two edits of one document (from two
    // Emacs processes) run one after the other, so neither loses the other's values.
    let _lock = lock_document(file)?;
    let bytes = match fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScopeError::Edit {
                file: label.clone(),
                message: format!(
                    "there is no scope document at {label}. Create it (a scope.yml, or a \
                     preset.md whose YAML front matter holds the scope) in the session \
                     directory, or edit the scope by hand; nothing was added"
                ),
            })
        }
        Err(e) => {
            return Err(ScopeError::Io {
                path: label,
                message: e.to_string(),
            })
        }
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| ScopeError::Edit {
        file: label.clone(),
        message: format!("the file is not valid UTF-8 ({e}); nothing was added"),
    })?;
    let edit = edit_text(&label, text, DocKind::for_path(file), section, values)?;
    let sha256_before = crate::scope::trust::sha256_hex(&bytes);
    let mut sha256_after = sha256_before.clone();
    if let Some(new_text) = &edit.text {
        write_atomic(file, &bytes, new_text.as_bytes())?;
        sha256_after = crate::scope::trust::sha256_hex(new_text.as_bytes());
    }
    Ok(EditOutcome {
        file: file.to_path_buf(),
        section: section.dotted().to_owned(),
        patterns_added: edit.patterns_added,
        already_present: edit.already_present,
        sha256_before,
        sha256_after,
    })
}

/// [`route`], then [`add_to_scope`]: make a scope-expansion request permanent.
pub fn add_resource(
    file: &Path,
    validation_type: &str,
    resource: &str,
    tool: &str,
    access: Option<&str>,
    category: Option<&str>,
    base_dir: &Path,
) -> Result<EditOutcome> {
    let (section, value) = route(validation_type, resource, tool, access, category, base_dir)?;
    add_to_scope(file, section, &[value])
}

/// [`add_to_scope`] on a text instead of a file (`label` names it in errors).
pub fn edit_text(
    label: &str,
    text: &str,
    kind: DocKind,
    section: Section,
    values: &[String],
) -> Result<TextEdit> {
    let fail = |message: String| ScopeError::Edit {
        file: label.to_owned(),
        message,
    };
    if let Some(bad) = values
        .iter()
        .find(|v| v.trim().is_empty() || v.contains('\0'))
    {
        return Err(ScopeError::InvalidArgument(format!(
            "cannot add {bad:?} to {section}: empty or holds a NUL byte"
        )));
    }
    let path = section.key_path();
    let region = Region::find(text, kind).map_err(fail)?;
    let root = region.parse(text, kind).map_err(fail)?;
    let old = current_list(&root, path).map_err(fail)?;

    let mut added: Vec<String> = Vec::new();
    let mut present: Vec<String> = Vec::new();
    for v in values {
        if old.contains(&Value::String(v.clone())) {
            if !present.contains(v) {
                present.push(v.clone());
            }
        } else if !added.contains(v) {
            added.push(v.clone());
        }
    }
    if added.is_empty() {
        return Ok(TextEdit {
            text: None,
            patterns_added: added,
            already_present: present,
        });
    }

    let (new_text, new_region) = if region.missing {
        region.create_front_matter(text, path, &added)
    } else {
        let mut editor = Editor::new(text, &region, path, &added).map_err(fail)?;
        editor.plan().map_err(fail)?;
        let new_text = apply_splices(text, editor.splices).map_err(fail)?;
        let grown = new_text.len() as isize - text.len() as isize;
        let end = region.parse_end as isize + grown;
        (new_text, (region.lo, end.max(region.lo as isize) as usize))
    };

    let mut list = old;
    list.extend(added.iter().cloned().map(Value::String));
    let expected = with_list(&root, path, list);
    verify(&new_text, new_region, kind, &expected, section).map_err(fail)?;
    Ok(TextEdit {
        text: Some(new_text),
        patterns_added: added,
        already_present: present,
    })
}

/// Parse the edited text again and compare it with what it must be: the old document with
/// the new values appended to the one list, and nothing else changed.
fn verify(
    new_text: &str,
    (lo, end): (usize, usize),
    kind: DocKind,
    expected: &Value,
    section: Section,
) -> std::result::Result<(), String> {
    let yaml = new_text
        .get(lo..end)
        .ok_or("the edited region is out of bounds")?;
    let parsed: Value = serde_yaml::from_str(yaml).map_err(|e| {
        format!(
            "adding to {section} would leave a document that does not parse ({e}); the file \
             was left untouched, edit it by hand"
        )
    })?;
    if &parsed != expected {
        let what = match kind {
            DocKind::Yaml => "document",
            DocKind::FrontMatter => "front matter",
        };
        return Err(format!(
            "could not add to {section} without changing something else in the {what}; the \
             file was left untouched, edit it by hand"
        ));
    }
    Ok(())
}

/// The list at `path` in `root`: empty when a key on the way is missing or null.
fn current_list(root: &Value, path: &[&str]) -> std::result::Result<Vec<Value>, String> {
    let mut cur = root;
    for (depth, key) in path.iter().enumerate() {
        match cur {
            Value::Null => return Ok(Vec::new()),
            Value::Mapping(map) => match map.get(*key) {
                Some(v) => cur = v,
                None => return Ok(Vec::new()),
            },
            _ if depth == 0 => {
                return Err("the document is not a mapping of keys; nothing was added".into())
            }
            _ => {
                return Err(format!(
                    "`{}` is not a mapping; nothing was added",
                    path[..depth].join(".")
                ))
            }
        }
    }
    match cur {
        Value::Null => Ok(Vec::new()),
        Value::Sequence(items) => Ok(items.clone()),
        _ => Err(format!(
            "`{}` is not a list; nothing was added",
            path.join(".")
        )),
    }
}

/// `root` with the list at `path` replaced by `list`, creating mappings on the way.
fn with_list(root: &Value, path: &[&str], list: Vec<Value>) -> Value {
    let Some((key, rest)) = path.split_first() else {
        return Value::Sequence(list);
    };
    let mut map = match root {
        Value::Mapping(map) => map.clone(),
        _ => Mapping::new(),
    };
    let child = map.get(*key).cloned().unwrap_or(Value::Null);
    map.insert(
        Value::String((*key).to_owned()),
        with_list(&child, rest, list),
    );
    Value::Mapping(map)
}

// ---------------------------------------------------------------------------------------
// The YAML region of a file
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Region {
    /// First byte of the YAML.
    lo: usize,
    /// End of the part that may be edited (before a closing fence or a `...` line).
    hi: usize,
    /// End of the text given to the YAML parser.
    parse_end: usize,
    /// 1-based line of the file where the YAML starts (for messages).
    first_line: usize,
    /// A Markdown file without front matter: one is created at `lo`.
    missing: bool,
    /// The file's line ending.
    nl: &'static str,
}

impl Region {
    fn find(text: &str, kind: DocKind) -> std::result::Result<Region, String> {
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

    fn parse(&self, text: &str, kind: DocKind) -> std::result::Result<Value, String> {
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
    fn create_front_matter(
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

/// `(start, end, next)` of every line from `from`: `end` excludes the line break, `next` is
/// the start of the following line.
fn line_starts(
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

// ---------------------------------------------------------------------------------------
// Lines and keys
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    /// A comment, a `---` document marker or a `%` directive.
    Comment,
    Content,
}

#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    /// End of the line's text, before `\n` or `\r\n`.
    end: usize,
    /// Start of the next line (== `end` when the line has no line break).
    next: usize,
    /// Leading spaces.
    indent: usize,
    kind: Kind,
}

/// What follows `key:` on its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rest {
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
fn block_key(s: &str) -> Option<(String, usize)> {
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
fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
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

fn is_dash(s: &str) -> bool {
    s.starts_with('-') && matches!(s.as_bytes().get(1), None | Some(b' ') | Some(b'\t'))
}

fn is_null_token(s: &str) -> bool {
    matches!(s, "~" | "null" | "Null" | "NULL")
}

// ---------------------------------------------------------------------------------------
// Flow collections
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Flow {
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
struct FlowEntry {
    key: String,
    /// End of the entry: of its value, or of its key when it has none.
    end: usize,
    value: Option<Flow>,
}

impl Flow {
    fn start(&self) -> usize {
        match self {
            Flow::Seq { open, .. } | Flow::Map { open, .. } => *open,
            Flow::Scalar { start, .. } => *start,
        }
    }

    fn end(&self) -> usize {
        match self {
            Flow::Seq { close, .. } | Flow::Map { close, .. } => close + 1,
            Flow::Scalar { end, .. } => *end,
        }
    }
}

/// A parser of the flow collections this editor changes: nested `[...]` and `{...}`, plain
/// and quoted scalars, comments between lines. Anchors, aliases, tags and `?` keys are
/// refused.
struct FlowParser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    hi: usize,
}

impl<'a> FlowParser<'a> {
    fn new(text: &'a str, pos: usize, hi: usize) -> Self {
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

    fn node(&mut self) -> std::result::Result<Flow, String> {
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

// ---------------------------------------------------------------------------------------
// Rendering values
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListStyle {
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
struct QuotePref {
    always: Option<Quote>,
    fallback: Quote,
}

impl QuotePref {
    const MINIMAL: QuotePref = QuotePref {
        always: None,
        fallback: Quote::Double,
    };

    /// From the first bytes of the existing items.
    fn of(firsts: &[u8]) -> QuotePref {
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
fn render(v: &str, flow: bool, pref: QuotePref) -> String {
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
fn build_block(
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
fn flow_list(values: &[String]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| render(v, true, QuotePref::MINIMAL))
        .collect();
    format!("[{}]", items.join(", "))
}

/// `{k1: {k2: [a, b]}}` for `path` = `[k1, k2]`, `[a, b]` for an empty path.
fn build_flow(path: &[&str], values: &[String]) -> String {
    match path.split_first() {
        None => flow_list(values),
        Some((key, rest)) => format!("{{{key}: {}}}", build_flow(rest, values)),
    }
}

// ---------------------------------------------------------------------------------------
// The editor
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
struct Splice {
    start: usize,
    end: usize,
    text: String,
}

fn apply_splices(text: &str, mut splices: Vec<Splice>) -> std::result::Result<String, String> {
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

struct Editor<'a> {
    text: &'a str,
    lo: usize,
    hi: usize,
    nl: &'static str,
    lines: Vec<Line>,
    /// The full key path, for messages.
    path: &'a [&'a str],
    values: &'a [String],
    /// Spaces a nested mapping is indented by.
    unit: usize,
    /// Spaces a block list's dashes are indented by, relative to its key.
    seq_off: usize,
    /// Lists of the whole document: (flow, block).
    doc_lists: (usize, usize),
    splices: Vec<Splice>,
}

impl<'a> Editor<'a> {
    fn new(
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

    fn content(&self, i: usize) -> &'a str {
        let l = self.lines[i];
        &self.text[l.start + l.indent..l.end]
    }

    fn is_content(&self, i: usize) -> bool {
        self.lines[i].kind == Kind::Content
    }

    fn indent(&self, i: usize) -> usize {
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
    fn style_among(&self, from: usize, to: usize, m: usize) -> ListStyle {
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

    fn doc_style(&self) -> ListStyle {
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

    fn unsupported(&self, rest: &[&str], why: &str) -> String {
        format!(
            "cannot add to `{}` automatically: {why}; the file was left untouched, edit it by \
             hand",
            self.name(rest)
        )
    }

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
    fn insert_after_line(&mut self, i: usize, lines: String) {
        let l = self.lines[i];
        if l.next > l.end {
            self.insert(l.next, lines);
        } else {
            // The last line of the file has no line break.
            self.insert(l.end, format!("{}{lines}", self.nl));
        }
    }

    /// Insert whole lines at the end of the YAML.
    fn insert_at_end(&mut self, lines: String) {
        let at = self.hi;
        if at > self.lo && self.text.as_bytes()[at - 1] != b'\n' {
            self.insert(at, format!("{}{lines}", self.nl));
        } else {
            self.insert(at, lines);
        }
    }

    fn plan(&mut self) -> std::result::Result<(), String> {
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

    /// `key:` (or `key: ~`) on line `i` is empty: put the keys of `rest` under it.
    fn create_under(&mut self, i: usize, m: usize, null: Option<(usize, usize)>, rest: &[&str]) {
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
    fn create_list_at(
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
    fn block_list_append(&mut self, from: usize, to: usize, first: usize, last: usize) {
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
    fn flow_list_append(&mut self, node: &Flow, path: &[&str]) -> std::result::Result<(), String> {
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
    fn in_flow_map(&mut self, node: &Flow, path: &[&str]) -> std::result::Result<(), String> {
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

/// Why a value starting with `first` cannot be changed.
fn why_scalar(first: Option<u8>) -> &'static str {
    match first {
        Some(b'*') => "it is an alias of another value",
        Some(b'&') => "it carries an anchor",
        Some(b'!') => "it carries a tag",
        _ => LAYOUT,
    }
}

const LAYOUT: &str = "its layout is not one this editor changes";

/// The majority style of `(flow, block)` lists; `None` when there are none, flow on a tie.
fn pick_style((flow, block): (usize, usize)) -> Option<ListStyle> {
    match (flow, block) {
        (0, 0) => None,
        (f, b) if b > f => Some(ListStyle::Block),
        _ => Some(ListStyle::Flow),
    }
}

// ---------------------------------------------------------------------------------------
// Atomic write
// ---------------------------------------------------------------------------------------

static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// How long an edit waits for another edit of the same document to finish.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Take an exclusive advisory lock (`flock`) on the scope document for a read-modify-write,
/// and return the open file that holds it (the lock is released when it is dropped).
///
/// An edit replaces the file by renaming a new one over it, so the lock is taken on the file
/// the path names now and checked afterwards: when a concurrent edit renamed a new file into
/// place while this one waited, the lock is on the old file and is taken again on the new
/// one. A missing file is no error here (`None`): reading it reports that. Waits at most
/// [`LOCK_WAIT`], then fails without writing.
#[cfg(unix)]
fn lock_document(file: &Path) -> Result<Option<fs::File>> {
    use std::os::unix::fs::MetadataExt;
    let io = |path: &Path, e: std::io::Error| ScopeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        let handle = match fs::File::open(file) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(file, e)),
        };
        match handle.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                if std::time::Instant::now() >= deadline {
                    return Err(ScopeError::Edit {
                        file: file.display().to_string(),
                        message: format!(
                            "another edit of this file has held its lock for {} seconds; \
                             nothing was added, try again",
                            LOCK_WAIT.as_secs()
                        ),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
                continue;
            }
            Err(fs::TryLockError::Error(e)) => return Err(io(file, e)),
        }
        let held = handle.metadata().map_err(|e| io(file, e))?;
        match fs::metadata(file) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(Some(handle)),
            // Replaced (or removed) while this edit waited: lock what is there now.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(file, e)),
        }
    }
}

/// Elsewhere a lock would keep other programs from reading the file: the edit relies on
/// the check before the rename alone.
#[cfg(not(unix))]
fn lock_document(_file: &Path) -> Result<Option<fs::File>> {
    Ok(None)
}

/// Removes the temporary file unless it was renamed into place.
struct TempGuard(Option<PathBuf>);

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// Replace `file`'s content with `new`: write a temporary file in the same directory, fsync
/// it, give it the original's permissions, and rename it over the file (the target of a
/// symbolic link, so the link stays). Fails without writing when the file no longer holds
/// `original`.
fn write_atomic(file: &Path, original: &[u8], new: &[u8]) -> Result<()> {
    let io = |path: &Path, e: std::io::Error| ScopeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let target = fs::canonicalize(file).map_err(|e| io(file, e))?;
    let meta = fs::metadata(&target).map_err(|e| io(&target, e))?;
    if meta.permissions().readonly() {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "the file is read-only; nothing was added".into(),
        });
    }
    let dir = target.parent().ok_or_else(|| ScopeError::Edit {
        file: file.display().to_string(),
        message: "the file has no parent directory".into(),
    })?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scope".into());

    let mut guard = TempGuard(None);
    let mut handle = None;
    for _ in 0..100 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(f) => {
                guard.0 = Some(tmp);
                handle = Some(f);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&tmp, e)),
        }
    }
    let (Some(mut f), Some(tmp)) = (handle, guard.0.clone()) else {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "could not create a temporary file next to it".into(),
        });
    };
    f.write_all(new).map_err(|e| io(&tmp, e))?;
    f.set_permissions(meta.permissions())
        .map_err(|e| io(&tmp, e))?;
    f.sync_all().map_err(|e| io(&tmp, e))?;
    drop(f);

    let now = fs::read(&target).map_err(|e| io(&target, e))?;
    if now != original {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "the file changed on disk while it was being edited; nothing was \
                      written, try again"
                .into(),
        });
    }
    fs::rename(&tmp, &target).map_err(|e| io(&target, e))?;
    guard.0 = None;
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "/home/u/proj";

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The text after adding `values`; panics when nothing changed or on error.
    fn edited(doc: &str, kind: DocKind, section: Section, values: &[&str]) -> String {
        match edit_text("test", doc, kind, section, &strings(values)) {
            Ok(TextEdit { text: Some(t), .. }) => t,
            other => panic!("{section}: {values:?} in\n{doc}\n=> {other:?}"),
        }
    }

    fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, content).unwrap();
        path
    }

    fn read(path: &Path) -> String {
        fs::read_to_string(path).unwrap()
    }

    /// Files in `dir`, sorted (to see that no temporary file was left behind).
    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn route_ok(
        vt: &str,
        resource: &str,
        tool: &str,
        access: Option<&str>,
        category: Option<&str>,
    ) -> (Section, String) {
        route(vt, resource, tool, access, category, Path::new(BASE))
            .unwrap_or_else(|e| panic!("{vt} {resource:?} {tool}: {e}"))
    }

    fn invalid_argument<T: fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(ScopeError::InvalidArgument(m)) => m,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    fn edit_error<T: fmt::Debug>(r: Result<T>) -> String {
        match r {
            Err(ScopeError::Edit { message, .. }) => message,
            other => panic!("expected an Edit error, got {other:?}"),
        }
    }

    // -- routing ------------------------------------------------------------------------

    #[test]
    fn e30_path_validation_routes_to_paths_sections() {
        use Section::*;
        let cases: &[(&str, &str, Option<&str>, Section, &str)] = &[
            // validation type spelled as elisp may send it
            (
                "path",
                "read_file",
                None,
                PathsRead,
                "/home/u/proj/src/main.rs",
            ),
            (
                ":path",
                "read_file",
                None,
                PathsRead,
                "/home/u/proj/src/main.rs",
            ),
            (
                " path ",
                "write_file",
                None,
                PathsWrite,
                "/home/u/proj/src/main.rs",
            ),
        ];
        for &(vt, tool, access, section, value) in cases {
            assert_eq!(
                route_ok(vt, "src/main.rs", tool, access, None),
                (section, value.to_owned()),
                "{vt} {tool}"
            );
        }
    }

    #[test]
    fn e11_read_or_write_section_from_tool_and_access() {
        use Section::*;
        let cases: &[(&str, Option<&str>, &str, Section, &str)] = &[
            (
                "read_file",
                None,
                "notes.txt",
                PathsRead,
                "/home/u/proj/notes.txt",
            ),
            ("list_dir", None, "/etc/", PathsRead, "/etc/**"),
            (
                "grep_files",
                Some("read"),
                "src",
                PathsRead,
                "/home/u/proj/src",
            ),
            (
                "write_file",
                None,
                "out.txt",
                PathsWrite,
                "/home/u/proj/out.txt",
            ),
            (
                "apply_patch",
                None,
                "src/lib.rs",
                PathsWrite,
                "/home/u/proj/src/lib.rs",
            ),
            ("edit_file", None, "a.el", PathsWrite, "/home/u/proj/a.el"),
            (
                "create_file",
                Some("read"),
                "new.md",
                PathsWrite,
                "/home/u/proj/new.md",
            ),
            (
                "run_bash_command",
                Some("write"),
                "build/",
                PathsWrite,
                "/home/u/proj/build/**",
            ),
            (
                "run_bash_command",
                Some("read"),
                ".",
                PathsRead,
                "/home/u/proj",
            ),
            ("run_bash_command", None, "..", PathsRead, "/home/u"),
            (
                "run_bash_command",
                Some(""),
                "x",
                PathsRead,
                "/home/u/proj/x",
            ),
            (
                "read_file",
                Some("write"),
                "y",
                PathsWrite,
                "/home/u/proj/y",
            ),
        ];
        for &(tool, access, resource, section, value) in cases {
            assert_eq!(
                route_ok("path", resource, tool, access, None),
                (section, value.to_owned()),
                "{tool} {access:?} {resource}"
            );
        }
        let m = invalid_argument(route(
            "path",
            "x",
            "run_bash_command",
            Some("execute"),
            None,
            Path::new(BASE),
        ));
        assert_eq!(
            m,
            "unknown access \"execute\": expected \"read\" or \"write\""
        );

        // Into the file: read to paths.read, write to paths.write.
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "scope.yml",
            "paths:\n  read: [\"~/src/**\"]\n  write: [\"~/src/myproj/**\"]\n",
        );
        let out = add_resource(
            &file,
            "path",
            "docs/a.md",
            "read_file",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.section, "paths.read");
        assert_eq!(out.patterns_added, ["/home/u/proj/docs/a.md"]);
        let out = add_resource(
            &file,
            "path",
            "b.txt",
            "write_file",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.section, "paths.write");
        assert_eq!(
            read(&file),
            "paths:\n  read: [\"~/src/**\", \"/home/u/proj/docs/a.md\"]\n  write: \
             [\"~/src/myproj/**\", \"/home/u/proj/b.txt\"]\n"
        );
    }

    #[test]
    fn e15_directory_gets_double_star() {
        let cases: &[(&str, &str)] = &[
            ("src/", "/home/u/proj/src/**"),
            ("/var/log/", "/var/log/**"),
            ("~/notes/", "~/notes/**"),
            ("./", "/home/u/proj/**"),
            ("/", "/**"),
            ("src/**/", "/home/u/proj/src/**"),
            // already a glob, or no trailing slash: kept
            ("src/**", "/home/u/proj/src/**"),
            ("src/*", "/home/u/proj/src/*"),
            ("src/*.rs", "/home/u/proj/src/*.rs"),
            ("src", "/home/u/proj/src"),
        ];
        for &(resource, want) in cases {
            assert_eq!(
                path_pattern(resource, Path::new(BASE)).unwrap(),
                want,
                "{resource}"
            );
        }

        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read:\n    - ~/src/**\n");
        let out = add_resource(
            &file,
            "path",
            "docs/",
            "list_dir",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.patterns_added, ["/home/u/proj/docs/**"]);
        assert_eq!(
            read(&file),
            "paths:\n  read:\n    - ~/src/**\n    - /home/u/proj/docs/**\n"
        );
    }

    #[test]
    fn e44_relative_paths_made_absolute() {
        let cases: &[(&str, &str, &str)] = &[
            (BASE, "src/main.rs", "/home/u/proj/src/main.rs"),
            ("/home/u/proj/", "src/main.rs", "/home/u/proj/src/main.rs"),
            (BASE, "./a/../b", "/home/u/proj/b"),
            (BASE, "..", "/home/u"),
            (BASE, "../../../../x", "/x"),
            (BASE, "a//b/./c", "/home/u/proj/a/b/c"),
            (BASE, "/etc//hosts", "/etc/hosts"),
            (BASE, "  spaced.txt ", "/home/u/proj/spaced.txt"),
            // `~` stays `~`, as the scope's patterns write it
            (BASE, "~/x/./y", "~/x/y"),
            (BASE, "~", "~"),
            (BASE, "~/../x", "~/../x"),
            (BASE, "~bob/src", "~bob/src"),
            ("~/proj", "src", "~/proj/src"),
            ("/", "etc", "/etc"),
        ];
        for &(base, resource, want) in cases {
            assert_eq!(
                path_pattern(resource, Path::new(base)).unwrap(),
                want,
                "{base} + {resource}"
            );
        }
        for (base, resource) in [("proj", "src"), (BASE, ""), (BASE, "  ")] {
            invalid_argument(path_pattern(resource, Path::new(base)));
        }
    }

    #[test]
    fn e31_pattern_validation_routes_to_org_roam() {
        assert_eq!(
            route_ok(
                "pattern",
                "subdirectory:gptel/**",
                "org_roam_search",
                None,
                None
            ),
            (Section::OrgRoamSubdirectory, "gptel/**".to_owned())
        );
        assert_eq!(
            route_ok("pattern", "tags:work", "org_roam_search", None, None),
            (Section::OrgRoamTags, "work".to_owned())
        );
    }

    #[test]
    fn e45_org_roam_resource_format_parsed() {
        let cases: &[(&str, Section, &str)] = &[
            (
                "subdirectory:gptel/**",
                Section::OrgRoamSubdirectory,
                "gptel/**",
            ),
            (
                "subdirectory:projects/",
                Section::OrgRoamSubdirectory,
                "projects/",
            ),
            ("tags:work", Section::OrgRoamTags, "work"),
            (" tags: deep work ", Section::OrgRoamTags, "deep work"),
        ];
        for &(resource, section, value) in cases {
            assert_eq!(
                route_ok("pattern", resource, "t", None, None),
                (section, value.to_owned())
            );
        }
    }

    #[test]
    fn e12_pattern_added_to_org_roam_section() {
        for bad in [
            "gptel/**",
            "subdirectory:",
            "tags: ",
            "tag:work",
            "dir:x",
            "",
        ] {
            let m = invalid_argument(route("pattern", bad, "t", None, None, Path::new(BASE)));
            assert!(m.starts_with("pattern resource"), "{bad}: {m}");
        }
        // Into a preset.md, block style, body untouched.
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "preset.md",
            "---\ndescription: Notes\norg_roam_patterns:\n  subdirectory:\n    - journal/**\n---\n\
             Body: subdirectory: x\n",
        );
        let base = Path::new(BASE);
        add_resource(
            &file,
            "pattern",
            "subdirectory:gptel/**",
            "t",
            None,
            None,
            base,
        )
        .unwrap();
        let out = add_resource(&file, "pattern", "tags:work", "t", None, None, base).unwrap();
        assert_eq!(out.section, "org_roam_patterns.tags");
        assert_eq!(
            read(&file),
            "---\ndescription: Notes\norg_roam_patterns:\n  subdirectory:\n    - journal/**\n    \
             - gptel/**\n  tags:\n    - work\n---\nBody: subdirectory: x\n"
        );
    }

    #[test]
    fn e32_command_validation_routes_to_category() {
        let cases: &[(Option<&str>, Section)] = &[
            (None, Section::ReadOnly),
            (Some(""), Section::ReadOnly),
            (Some("read_only"), Section::ReadOnly),
            (Some("read-only"), Section::ReadOnly),
            (Some("safe_write"), Section::SafeWrite),
            (Some("safe-write"), Section::SafeWrite),
            (Some("dangerous"), Section::Dangerous),
        ];
        for &(category, section) in cases {
            assert_eq!(
                route_ok("command", "make test", "run_bash_command", None, category),
                (section, "make".to_owned()),
                "{category:?}"
            );
        }
        let m = invalid_argument(route(
            "command",
            "ls",
            "run_bash_command",
            None,
            Some("harmless"),
            Path::new(BASE),
        ));
        assert!(
            m.starts_with("unknown command category \"harmless\""),
            "{m}"
        );
    }

    #[test]
    fn e46_command_base_name_extracted() {
        let cases: &[(&str, &str)] = &[
            ("git status -s", "git"),
            ("  ls -la  ", "ls"),
            ("ls -la | grep foo", "ls"),
            ("ls|wc -l", "ls"),
            ("cat file > out", "cat"),
            ("grep -rn 'pattern' .", "grep"),
            ("FOO=1 BAR='a b' make test", "make"),
            ("'git' log", "git"),
            ("/usr/bin/git log", "/usr/bin/git"),
            ("./run.sh --fast", "./run.sh"),
            ("(cd src && make)", "cd"),
            ("echo hi; rm -rf x", "echo"),
        ];
        for &(command, want) in cases {
            assert_eq!(base_command(command).unwrap(), want, "{command}");
        }
        for bad in [
            "",
            "   ",
            "FOO=1",
            "$CMD -x",
            "`which git` log",
            "/???/r? x",
            "'unclosed",
        ] {
            invalid_argument(base_command(bad));
        }
    }

    #[test]
    fn e13_command_added_to_category_list() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "scope.yml",
            "bash_tools:\n  categories:\n    read_only: [ls, grep]   # look only\n  deny: [sudo]\n",
        );
        let base = Path::new(BASE);
        let before = std::fs::read(&file).unwrap();
        let out = add_resource(
            &file,
            "command",
            "git status -s",
            "run_bash_command",
            None,
            None,
            base,
        )
        .unwrap();
        let after = std::fs::read(&file).unwrap();
        assert_eq!(
            out,
            EditOutcome {
                file: file.clone(),
                section: "bash_tools.categories.read_only".into(),
                patterns_added: vec!["git".into()],
                already_present: vec![],
                sha256_before: crate::scope::trust::sha256_hex(&before),
                sha256_after: crate::scope::trust::sha256_hex(&after),
            }
        );
        assert_ne!(before, after);
        add_resource(
            &file,
            "command",
            "mkdir -p build",
            "run_bash_command",
            None,
            Some("safe_write"),
            base,
        )
        .unwrap();
        assert_eq!(
            read(&file),
            "bash_tools:\n  categories:\n    read_only: [ls, grep, git]   # look only\n    \
             safe_write: [mkdir]\n  deny: [sudo]\n"
        );
    }

    #[test]
    fn env_resources_go_to_environment_include() {
        assert_eq!(route_ok("env", "env:NODE_ENV", "run_bash_command", None, None), (Section::EnvironmentInclude, "NODE_ENV".to_owned()));
        assert_eq!(route_ok("env", " env:CARGO_HOME ", "run_command", None, None), (Section::EnvironmentInclude, "CARGO_HOME".to_owned()));
        for bad in ["NODE_ENV", "env:", "env:A=B", "env:AWS_*"] {
            let m = invalid_argument(route("env", bad, "t", None, None, Path::new(BASE)));
            assert!(m.starts_with("not a variable: "), "{bad}: {m}");
        }
        let text = "# mine\npaths:\n  read: [\"a/**\"]  # keep\n";
        let e = edit_text("t", text, DocKind::Yaml, Section::EnvironmentInclude, &["NODE_ENV".to_owned()]).unwrap();
        assert_eq!(e.text.as_deref(), Some("# mine\npaths:\n  read: [\"a/**\"]  # keep\nenvironment:\n  include: [NODE_ENV]\n"));
    }

    #[test]
    fn e33_unknown_validation_type_is_an_error() {
        for vt in ["bogus", "", "paths", "org-roam", "shell"] {
            let m = invalid_argument(route(vt, "x", "t", None, None, Path::new(BASE)));
            assert_eq!(
                m,
                format!(
                    "unknown validation type {:?}: expected \"path\", \"pattern\", \
                     \"command\" or \"env\"; nothing was added to the scope",
                    vt.trim()
                )
            );
        }
        // Nothing is written through add_resource either.
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        invalid_argument(add_resource(
            &file,
            "bogus",
            "x",
            "t",
            None,
            None,
            Path::new(BASE),
        ));
        assert_eq!(read(&file), "paths:\n  read: []\n");
    }

    // -- editing --------------------------------------------------------------------------

    #[test]
    fn e14_duplicate_not_added() {
        struct Case {
            doc: &'static str,
            section: Section,
            values: &'static [&'static str],
            added: &'static [&'static str],
            present: &'static [&'static str],
            want: Option<&'static str>,
        }
        let cases = [
            Case {
                doc: "paths:\n  read:\n    - ~/a/**\n",
                section: Section::PathsRead,
                values: &["~/a/**"],
                added: &[],
                present: &["~/a/**"],
                want: None,
            },
            // The same value, differently quoted.
            Case {
                doc: "paths:\n  read: [\"~/a/**\", '~/b/**']\n",
                section: Section::PathsRead,
                values: &["~/b/**", "~/a/**"],
                added: &[],
                present: &["~/b/**", "~/a/**"],
                want: None,
            },
            Case {
                doc: "bash_tools:\n  categories:\n    read_only: ['git log']\n",
                section: Section::ReadOnly,
                values: &["git log"],
                added: &[],
                present: &["git log"],
                want: None,
            },
            // Duplicates among the values themselves are added once.
            Case {
                doc: "bash_tools:\n  categories:\n    read_only: [ls, grep]\n",
                section: Section::ReadOnly,
                values: &["grep", "cat", "grep", "cat"],
                added: &["cat"],
                present: &["grep"],
                want: Some("bash_tools:\n  categories:\n    read_only: [ls, grep, cat]\n"),
            },
        ];
        for c in cases {
            let edit = edit_text("t", c.doc, DocKind::Yaml, c.section, &strings(c.values)).unwrap();
            assert_eq!(edit.patterns_added, c.added, "{}", c.doc);
            assert_eq!(edit.already_present, c.present, "{}", c.doc);
            assert_eq!(edit.text.as_deref(), c.want, "{}", c.doc);
        }

        // On disk: the file is not rewritten at all.
        let dir = tempfile::tempdir().unwrap();
        let doc = "# mine\npaths:\n  write:\n    - \"~/src/**\"   # code\n";
        let file = write(dir.path(), "scope.yml", doc);
        let before = fs::metadata(&file).unwrap().modified().unwrap();
        let out = add_to_scope(&file, Section::PathsWrite, &strings(&["~/src/**"])).unwrap();
        assert_eq!(out.patterns_added, Vec::<String>::new());
        assert_eq!(out.already_present, ["~/src/**"]);
        assert_eq!(
            out.message(),
            format!(
                "\"~/src/**\" already in paths.write in {}; nothing changed.",
                file.display()
            )
        );
        assert_eq!(read(&file), doc);
        assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), before);
        assert_eq!(listing(dir.path()), ["scope.yml"]);
    }

    /// A richly commented scope.yml; every comment must survive every edit.
    const RICH: &str = "\
# scope.yml — what the assistant may touch in this project.
# Edited by hand; \"Add to scope\" must keep every comment.

paths:                       # globs; ~ expands
  read:
    # sources
    - \"~/src/**\"             # all my code
    - ~/notes/**
    # - ~/secrets/**  (never)
  write: [\"~/src/myproj/**\"]   # only this project
  deny:
    - \"**/.git/objects/**\"
    - \"**/.env\"

bash_tools:
  categories:
    read_only: [ls, grep, \"git log\"]   # inspection
    safe_write:
      - mkdir   # dirs
      - touch
    # dangerous: nothing yet
  deny: [sudo, dd]
  timeout: 30   # seconds

# org-roam
org_roam_patterns: {subdirectory: [], tags: []}   # none yet
# end
";

    const RICH_AFTER: &str = "\
# scope.yml — what the assistant may touch in this project.
# Edited by hand; \"Add to scope\" must keep every comment.

paths:                       # globs; ~ expands
  read:
    # sources
    - \"~/src/**\"             # all my code
    - ~/notes/**
    - /home/u/proj/docs/**
    - \"**/*.md\"
    # - ~/secrets/**  (never)
  write: [\"~/src/myproj/**\", \"/tmp/out/**\"]   # only this project
  deny:
    - \"**/.git/objects/**\"
    - \"**/.env\"

bash_tools:
  categories:
    read_only: [ls, grep, \"git log\", cat]   # inspection
    safe_write:
      - mkdir   # dirs
      - touch
      - git add
    dangerous: [rm]
    # dangerous: nothing yet
  deny: [sudo, dd]
  timeout: 30   # seconds

# org-roam
org_roam_patterns: {subdirectory: [gptel/**], tags: [work]}   # none yet
# end
";

    #[test]
    fn e16_commented_scope_yml_keeps_every_byte_outside_the_lists() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", RICH);
        // (section, values, added, already present)
        type Step = (
            Section,
            &'static [&'static str],
            &'static [&'static str],
            &'static [&'static str],
        );
        let steps: &[Step] = &[
            (
                Section::PathsRead,
                &["/home/u/proj/docs/**", "**/*.md"],
                &["/home/u/proj/docs/**", "**/*.md"],
                &[],
            ),
            (Section::PathsWrite, &["/tmp/out/**"], &["/tmp/out/**"], &[]),
            (Section::Dangerous, &["rm"], &["rm"], &[]),
            (Section::OrgRoamTags, &["work"], &["work"], &[]),
            (
                Section::OrgRoamSubdirectory,
                &["gptel/**"],
                &["gptel/**"],
                &[],
            ),
            (Section::ReadOnly, &["cat", "ls"], &["cat"], &["ls"]),
            (Section::SafeWrite, &["git add"], &["git add"], &[]),
        ];
        for &(section, values, added, present) in steps {
            let out = add_to_scope(&file, section, &strings(values)).unwrap();
            assert_eq!(out.section, section.dotted());
            assert_eq!(out.patterns_added, added, "{section}");
            assert_eq!(out.already_present, present, "{section}");
        }
        assert_eq!(read(&file), RICH_AFTER);
        assert_eq!(listing(dir.path()), ["scope.yml"]);
        // Every comment of the original, in order.
        let comments = |s: &str| -> Vec<String> {
            s.lines()
                .filter_map(|l| l.find('#').map(|i| l[i..].to_owned()))
                .collect()
        };
        assert_eq!(comments(RICH), comments(RICH_AFTER));
        // Doing it all again changes nothing.
        for &(section, values, _, _) in steps {
            let out = add_to_scope(&file, section, &strings(values)).unwrap();
            assert!(out.patterns_added.is_empty());
        }
        assert_eq!(read(&file), RICH_AFTER);
        // And the result is a valid scope for the loader.
        let scope: crate::scope::Scope = serde_yaml::from_str(RICH_AFTER).unwrap();
        assert_eq!(scope.bash_tools.categories.dangerous, ["rm"]);
        assert_eq!(scope.paths.read[3], "**/*.md");
    }

    const PRESET: &str = "\
---
description: Coding helper   # shown in the menu
backend: Claude
model: claude-sonnet-4
tools: [read_file, run_bash_command]
paths:
  read:
  - ~/src/**          # indentless list
---
You are a careful assistant.

---
A horizontal rule above; paths: [not yaml]
";

    const PRESET_AFTER: &str = "\
---
description: Coding helper   # shown in the menu
backend: Claude
model: claude-sonnet-4
tools: [read_file, run_bash_command]
paths:
  read:
  - ~/src/**          # indentless list
  - /home/u/proj/**
  write:
  - /home/u/proj/out/**
bash_tools:
  categories:
    read_only:
    - git
---
You are a careful assistant.

---
A horizontal rule above; paths: [not yaml]
";

    #[test]
    fn e16_preset_front_matter_edited_body_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "preset.md", PRESET);
        add_to_scope(&file, Section::PathsRead, &strings(&["/home/u/proj/**"])).unwrap();
        add_to_scope(
            &file,
            Section::PathsWrite,
            &strings(&["/home/u/proj/out/**"]),
        )
        .unwrap();
        add_to_scope(&file, Section::ReadOnly, &strings(&["git"])).unwrap();
        assert_eq!(read(&file), PRESET_AFTER);
        let out = add_to_scope(&file, Section::PathsRead, &strings(&["~/src/**"])).unwrap();
        assert_eq!(out.already_present, ["~/src/**"]);
        assert_eq!(read(&file), PRESET_AFTER);
    }

    #[test]
    fn e16_layouts_changed_only_where_the_list_is() {
        struct Case {
            name: &'static str,
            kind: DocKind,
            doc: &'static str,
            section: Section,
            values: &'static [&'static str],
            want: &'static str,
        }
        use DocKind::{FrontMatter, Yaml};
        use Section::*;
        let x: &[&str] = &["/x/**"];
        let cases = [
            Case {
                name: "block list, indented, trailing comment on the last item",
                kind: Yaml,
                doc: "paths:\n  read:\n    - ~/a/**\n    - ~/b/**   # b\n  write: []\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n    - ~/a/**\n    - ~/b/**   # b\n    - /x/**\n  write: []\n",
            },
            Case {
                name: "block list at the key's own indentation",
                kind: Yaml,
                doc: "paths:\n  read:\n  - ~/a/**\n  write: []\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n  - ~/a/**\n  - /x/**\n  write: []\n",
            },
            Case {
                name: "spacing after the dash kept",
                kind: Yaml,
                doc: "paths:\n  read:\n    -   ~/a/**\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n    -   ~/a/**\n    -   /x/**\n",
            },
            Case {
                name: "comments inside the block list",
                kind: Yaml,
                doc: "paths:\n  read:\n    # first\n    - ~/a/**\n\n    # second\n    - ~/b/**\n    # after\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n    # first\n    - ~/a/**\n\n    # second\n    - ~/b/**\n    - /x/**\n    # after\n",
            },
            Case {
                name: "flow list, mixed quoting, trailing comment",
                kind: Yaml,
                doc: "paths:\n  read: [~/a/**, \"~/b/**\"]   # two\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [~/a/**, \"~/b/**\", /x/**]   # two\n",
            },
            Case {
                name: "flow list, all double-quoted",
                kind: Yaml,
                doc: "paths:\n  read: [\"~/a/**\"]\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [\"~/a/**\", \"/x/**\"]\n",
            },
            Case {
                name: "flow list, all single-quoted",
                kind: Yaml,
                doc: "paths:\n  read: ['~/a/**']\n",
                section: PathsRead,
                values: &["/x/**", "it's"],
                want: "paths:\n  read: ['~/a/**', '/x/**', 'it''s']\n",
            },
            Case {
                name: "empty flow list",
                kind: Yaml,
                doc: "paths:\n  read: []  # none yet\n  write: [~/w/**]\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [/x/**]  # none yet\n  write: [~/w/**]\n",
            },
            Case {
                name: "empty key among flow lists",
                kind: Yaml,
                doc: "paths:\n  read:\n  write: [~/w/**]\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [/x/**]\n  write: [~/w/**]\n",
            },
            Case {
                name: "empty key with a comment among block lists",
                kind: Yaml,
                doc: "paths:\n  read:   # to do\n  deny:\n    - \"**/.env\"\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:   # to do\n    - /x/**\n  deny:\n    - \"**/.env\"\n",
            },
            Case {
                name: "null list among flow lists",
                kind: Yaml,
                doc: "paths:\n  read: ~   # nothing\n  write: [~/w/**]\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [/x/**]   # nothing\n  write: [~/w/**]\n",
            },
            Case {
                name: "null list among block lists",
                kind: Yaml,
                doc: "paths:\n  read: null\n  write:\n  - ~/w/**\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n  - /x/**\n  write:\n  - ~/w/**\n",
            },
            Case {
                name: "one item a line, trailing comma",
                kind: Yaml,
                doc: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n    ]\n",
                section: ReadOnly,
                values: &["cat", "wc"],
                want: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n      cat,\n      wc,\n    ]\n",
            },
            Case {
                name: "one item a line, no trailing comma, comment on the last",
                kind: Yaml,
                doc: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep   # search\n    ]\n",
                section: ReadOnly,
                values: &["cat", "wc"],
                want: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n      cat,\n      wc\n    ]\n",
            },
            Case {
                name: "flow list wrapped over lines",
                kind: Yaml,
                doc: "bash_tools:\n  categories:\n    read_only: [ls, grep,\n                find]\n",
                section: ReadOnly,
                values: &["cat"],
                want: "bash_tools:\n  categories:\n    read_only: [ls, grep,\n                find, cat]\n",
            },
            Case {
                name: "missing list, four-space indentation",
                kind: Yaml,
                doc: "paths:\n    read:\n        - ~/a/**\n",
                section: PathsWrite,
                values: x,
                want: "paths:\n    read:\n        - ~/a/**\n    write:\n        - /x/**\n",
            },
            Case {
                name: "missing keys in a document of block lists",
                kind: Yaml,
                doc: "paths:\n  read:\n    - ~/a/**\n",
                section: ReadOnly,
                values: &["ls"],
                want: "paths:\n  read:\n    - ~/a/**\nbash_tools:\n  categories:\n    read_only:\n      - ls\n",
            },
            Case {
                name: "missing keys in a document of flow lists",
                kind: Yaml,
                doc: "paths:\n  read: [~/a/**]\n\n# trailing comment\n",
                section: ReadOnly,
                values: &["ls", "git log"],
                want: "paths:\n  read: [~/a/**]\n\n# trailing comment\nbash_tools:\n  categories:\n    read_only: [ls, git log]\n",
            },
            Case {
                name: "missing middle key",
                kind: Yaml,
                doc: "bash_tools:\n  deny: [sudo]\n  timeout: 30\n",
                section: SafeWrite,
                values: &["touch"],
                want: "bash_tools:\n  deny: [sudo]\n  timeout: 30\n  categories:\n    safe_write: [touch]\n",
            },
            Case {
                name: "comments only",
                kind: Yaml,
                doc: "# nothing yet\n",
                section: PathsRead,
                values: x,
                want: "# nothing yet\npaths:\n  read: [/x/**]\n",
            },
            Case {
                name: "empty file",
                kind: Yaml,
                doc: "",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [/x/**]\n",
            },
            Case {
                name: "no line break at the end, new key",
                kind: Yaml,
                doc: "paths:\n  read: [~/a/**]",
                section: PathsWrite,
                values: x,
                want: "paths:\n  read: [~/a/**]\n  write: [/x/**]\n",
            },
            Case {
                name: "no line break at the end, block item",
                kind: Yaml,
                doc: "paths:\n  read:\n    - ~/a/**",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n    - ~/a/**\n    - /x/**\n",
            },
            Case {
                name: "CRLF line endings",
                kind: Yaml,
                doc: "paths:\r\n  read:\r\n    - ~/a/**\r\n",
                section: PathsWrite,
                values: x,
                want: "paths:\r\n  read:\r\n    - ~/a/**\r\n  write:\r\n    - /x/**\r\n",
            },
            Case {
                name: "flow mapping, list inside",
                kind: Yaml,
                doc: "org_roam_patterns: {subdirectory: [], tags: [work]}\n",
                section: OrgRoamSubdirectory,
                values: &["gptel/**"],
                want: "org_roam_patterns: {subdirectory: [gptel/**], tags: [work]}\n",
            },
            Case {
                name: "flow mapping, key missing",
                kind: Yaml,
                doc: "org_roam_patterns: {tags: [work]}\n",
                section: OrgRoamSubdirectory,
                values: &["gptel/**"],
                want: "org_roam_patterns: {tags: [work], subdirectory: [gptel/**]}\n",
            },
            Case {
                name: "flow mapping, null list",
                kind: Yaml,
                doc: "org_roam_patterns: {subdirectory: ~, tags: []}\n",
                section: OrgRoamSubdirectory,
                values: &["gptel/**"],
                want: "org_roam_patterns: {subdirectory: [gptel/**], tags: []}\n",
            },
            Case {
                name: "empty flow mapping",
                kind: Yaml,
                doc: "paths: {}\n",
                section: PathsRead,
                values: x,
                want: "paths: {read: [/x/**]}\n",
            },
            Case {
                name: "nested flow mappings",
                kind: Yaml,
                doc: "bash_tools: {categories: {read_only: [ls]}, timeout: 30}\n",
                section: SafeWrite,
                values: &["touch", "a,b"],
                want: "bash_tools: {categories: {read_only: [ls], safe_write: [touch, \"a,b\"]}, timeout: 30}\n",
            },
            Case {
                name: "flow mapping over lines",
                kind: Yaml,
                doc: "paths: {\n  read: [~/a/**],  # mine\n  write: []\n}\n",
                section: PathsRead,
                values: x,
                want: "paths: {\n  read: [~/a/**, /x/**],  # mine\n  write: []\n}\n",
            },
            Case {
                name: "empty parent mapping",
                kind: Yaml,
                doc: "paths:\nbash_tools:\n  deny: [sudo]\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read: [/x/**]\nbash_tools:\n  deny: [sudo]\n",
            },
            Case {
                name: "null parent mapping",
                kind: Yaml,
                doc: "paths: ~  # later\n",
                section: PathsRead,
                values: x,
                want: "paths:  # later\n  read: [/x/**]\n",
            },
            Case {
                name: "document markers",
                kind: Yaml,
                doc: "%YAML 1.2\n---\npaths:\n  read: [~/a/**]\n...\n# trailer\n",
                section: ReadOnly,
                values: &["ls"],
                want: "%YAML 1.2\n---\npaths:\n  read: [~/a/**]\nbash_tools:\n  categories:\n    read_only: [ls]\n...\n# trailer\n",
            },
            Case {
                name: "quoted keys",
                kind: Yaml,
                doc: "\"paths\":\n  'read': [~/a/**]\n",
                section: PathsRead,
                values: x,
                want: "\"paths\":\n  'read': [~/a/**, /x/**]\n",
            },
            Case {
                name: "block scalar holding key-like text",
                kind: Yaml,
                doc: "notes: |\n  paths:\n    read: [nope]\ntools: [a]\n",
                section: PathsRead,
                values: x,
                want: "notes: |\n  paths:\n    read: [nope]\ntools: [a]\npaths:\n  read: [/x/**]\n",
            },
            Case {
                name: "keys of the same name nested deeper are not the section",
                kind: Yaml,
                doc: "tool_commands:\n  posix:\n    paths:\n      read: [no]\npaths:\n  write: [~/w/**]\n",
                section: PathsRead,
                values: x,
                want: "tool_commands:\n  posix:\n    paths:\n      read: [no]\npaths:\n  write: [~/w/**]\n  read: [/x/**]\n",
            },
            Case {
                name: "byte order mark kept",
                kind: Yaml,
                doc: "\u{feff}paths:\n  read: [~/a/**]\n",
                section: PathsRead,
                values: x,
                want: "\u{feff}paths:\n  read: [~/a/**, /x/**]\n",
            },
            Case {
                name: "last item quoted over two lines",
                kind: Yaml,
                doc: "paths:\n  read:\n    - ~/a/**\n    - \"long\n      value\"\n  write: []\n",
                section: PathsRead,
                values: x,
                want: "paths:\n  read:\n    - ~/a/**\n    - \"long\n      value\"\n    - /x/**\n  write: []\n",
            },
            Case {
                name: "comments between flow items",
                kind: Yaml,
                doc: "bash_tools:\n  categories:\n    read_only: [ls,  # one\n      grep]  # two\n",
                section: ReadOnly,
                values: &["cat"],
                want: "bash_tools:\n  categories:\n    read_only: [ls,  # one\n      grep, cat]  # two\n",
            },
            Case {
                name: "one item a line, CRLF",
                kind: Yaml,
                doc: "bash_tools:\r\n  categories:\r\n    read_only: [\r\n      ls\r\n    ]\r\n",
                section: ReadOnly,
                values: &["cat"],
                want: "bash_tools:\r\n  categories:\r\n    read_only: [\r\n      ls,\r\n      cat\r\n    ]\r\n",
            },
            Case {
                name: "a list at the top level's indentation before the section",
                kind: Yaml,
                doc: "tools:\n- a\npaths:\n  read: []\n",
                section: PathsRead,
                values: x,
                want: "tools:\n- a\npaths:\n  read: [/x/**]\n",
            },
            Case {
                name: "comment at column 0 inside a mapping",
                kind: Yaml,
                doc: "paths:\n  read: [a]\n# col 0\n  write: [b]\n",
                section: PathsWrite,
                values: x,
                want: "paths:\n  read: [a]\n# col 0\n  write: [b, /x/**]\n",
            },
            Case {
                name: "space before the colon",
                kind: Yaml,
                doc: "paths :\n  read: []\n",
                section: PathsRead,
                values: x,
                want: "paths :\n  read: [/x/**]\n",
            },
            Case {
                name: "JSON document",
                kind: Yaml,
                doc: "{\"paths\": {\"read\": [\"a\"]}}\n",
                section: PathsRead,
                values: x,
                want: "{\"paths\": {\"read\": [\"a\", \"/x/**\"]}}\n",
            },
            Case {
                name: "JSON document, section missing",
                kind: Yaml,
                doc: "{\"paths\": {}}\n",
                section: ReadOnly,
                values: &["ls"],
                want: "{\"paths\": {}, bash_tools: {categories: {read_only: [ls]}}}\n",
            },
            Case {
                name: "flow list continued at a lower indentation",
                kind: Yaml,
                doc: "paths:\n  read: [a,\nb]\n",
                section: PathsWrite,
                values: x,
                want: "paths:\n  read: [a,\nb]\n  write: [/x/**]\n",
            },
            Case {
                name: "key-like lines inside a flow mapping are not keys",
                kind: Yaml,
                doc: "notes: {\npaths: x\n}\n",
                section: PathsRead,
                values: x,
                want: "notes: {\npaths: x\n}\npaths:\n  read: [/x/**]\n",
            },
            Case {
                name: "markdown without front matter gets one",
                kind: FrontMatter,
                doc: "# Title\n\nBody\n",
                section: PathsRead,
                values: x,
                want: "---\npaths:\n  read: [/x/**]\n---\n# Title\n\nBody\n",
            },
            Case {
                name: "empty front matter",
                kind: FrontMatter,
                doc: "---\n---\nBody\n",
                section: PathsRead,
                values: x,
                want: "---\npaths:\n  read: [/x/**]\n---\nBody\n",
            },
            Case {
                name: "front matter closed by '...'",
                kind: FrontMatter,
                doc: "---\ntitle: t\n...\nBody: [a]\n",
                section: PathsRead,
                values: x,
                want: "---\ntitle: t\npaths:\n  read: [/x/**]\n...\nBody: [a]\n",
            },
            Case {
                name: "CRLF front matter",
                kind: FrontMatter,
                doc: "---\r\npaths:\r\n  read:\r\n  - ~/a/**\r\n---\r\nBody\r\n",
                section: PathsRead,
                values: x,
                want: "---\r\npaths:\r\n  read:\r\n  - ~/a/**\r\n  - /x/**\r\n---\r\nBody\r\n",
            },
        ];
        for c in cases {
            assert_eq!(
                edited(c.doc, c.kind, c.section, c.values),
                c.want,
                "{}",
                c.name
            );
        }
    }

    /// Whether `small` is a subsequence of `big` (nothing of it was removed).
    fn is_subsequence(small: &str, big: &str) -> bool {
        let mut big = big.chars();
        small.chars().all(|c| big.any(|d| d == c))
    }

    #[test]
    fn e16_every_layout_combination_keeps_the_original_text() {
        let paths = [
            "",
            "paths:\n  read: [a]   # c\n",
            "paths:\n  read:\n    - a  # c\n  write:\n  - b\n",
            "paths: {read: [a], write: []}\n",
            "paths:   # c\n  deny: [x]\n",
            "paths:\n    write: [\n        \"b\",\n    ]\n",
        ];
        let bash = [
            "",
            "bash_tools:\n  categories:\n    read_only: [ls]\n    # comment\n  deny: [sudo]\n",
            "bash_tools:\n  timeout: 30\n",
            "bash_tools:\n  categories:\n    safe_write:\n    - touch\n",
            "bash_tools: {categories: {dangerous: [rm]}}\n",
        ];
        let org = [
            "",
            "org_roam_patterns: {subdirectory: [], tags: []}\n",
            "org_roam_patterns:\n  tags:\n    - work\n",
        ];
        let other = [
            "",
            "# header\ndescription: x\n\n",
            "notes: |\n  paths:\n   read: []\n",
        ];
        let values = strings(&["/x/**", "**/.env", "git log"]);
        let mut edits = 0;
        for p in paths {
            for b in bash {
                for o in org {
                    for h in other {
                        let yaml = format!("{h}{p}{b}{o}");
                        let reordered = format!("{o}{b}{h}{p}");
                        let md = format!("---\n{yaml}---\nBody\n\n---\npaths: [body]\n");
                        let docs = [
                            (yaml.as_str(), DocKind::Yaml),
                            (reordered.as_str(), DocKind::Yaml),
                            (md.as_str(), DocKind::FrontMatter),
                        ];
                        for (doc, kind) in docs {
                            for section in Section::ALL {
                                let new =
                                    edited(doc, kind, section, &["/x/**", "**/.env", "git log"]);
                                assert!(is_subsequence(doc, &new), "{section}:\n{doc}\n=>\n{new}");
                                if kind == DocKind::FrontMatter {
                                    assert!(new.ends_with("---\nBody\n\n---\npaths: [body]\n"));
                                }
                                let again = edit_text("t", &new, kind, section, &values).unwrap();
                                assert_eq!(again.text, None, "{section}:\n{new}");
                                assert_eq!(again.already_present, values);
                                edits += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(edits, 6 * 5 * 3 * 3 * 3 * 8);
    }

    #[test]
    fn mangled_documents_never_panic() {
        // Deterministic pseudo-random mutations of the fixtures: characters that matter to
        // YAML deleted, inserted or swapped. Every outcome is an error or a verified edit.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let alphabet: Vec<char> = " \n\t-:#[]{},'\"&*!|>~?%@\r".chars().collect();
        let fixtures = [
            RICH,
            PRESET,
            "paths:\n  read: [\n    a,\n  ]\n",
            "a: {b: [c, d]}\n",
        ];
        let (mut ok, mut failed) = (0, 0);
        for round in 0..1500 {
            let fixture = fixtures[round % fixtures.len()];
            let mut chars: Vec<char> = fixture.chars().collect();
            for _ in 0..1 + next(3) {
                let at = next(chars.len() + 1);
                match next(3) {
                    0 if at < chars.len() => {
                        chars.remove(at);
                    }
                    1 if at < chars.len() => chars[at] = alphabet[next(alphabet.len())],
                    _ => chars.insert(at, alphabet[next(alphabet.len())]),
                }
            }
            let doc: String = chars.into_iter().collect();
            let kind = if fixture == PRESET {
                DocKind::FrontMatter
            } else {
                DocKind::Yaml
            };
            let section = Section::ALL[round % Section::ALL.len()];
            match edit_text("t", &doc, kind, section, &strings(&["/x/**", "*"])) {
                Ok(TextEdit {
                    text: Some(new), ..
                }) => {
                    assert!(
                        is_subsequence(&doc, &new) || doc.contains('~') || doc.contains("null")
                    );
                    ok += 1;
                }
                Ok(TextEdit { text: None, .. }) => ok += 1,
                Err(ScopeError::Edit { message, .. }) => {
                    // Every refusal says that the file was not changed.
                    let lower = message.to_lowercase();
                    assert!(
                        lower.contains("nothing was added") || lower.contains("left untouched"),
                        "{message}"
                    );
                    failed += 1;
                }
                Err(e) => panic!("unexpected error kind: {e}"),
            }
        }
        // Both outcomes were exercised.
        assert!(ok > 0 && failed > 0, "{ok} edited, {failed} refused");
    }

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

    #[test]
    fn e34_missing_document_errors_with_explanation() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["scope.yml", "preset.md"] {
            let file = dir.path().join(name);
            let m = edit_error(add_to_scope(
                &file,
                Section::PathsRead,
                &strings(&["/x/**"]),
            ));
            assert_eq!(
                m,
                format!(
                    "there is no scope document at {}. Create it (a scope.yml, or a preset.md \
                     whose YAML front matter holds the scope) in the session directory, or \
                     edit the scope by hand; nothing was added",
                    file.display()
                )
            );
            assert!(!file.exists());
        }
        assert!(listing(dir.path()).is_empty());
        // The error names the file and is the edit error symbol in Emacs.
        let file = dir.path().join("scope.yml");
        let err = add_to_scope(&file, Section::PathsRead, &strings(&["/x/**"])).unwrap_err();
        assert_eq!(err.symbol(), "gptel-scope-edit-error");
        assert!(err
            .to_string()
            .starts_with(&format!("cannot edit {}: there is no", file.display())));
    }

    #[test]
    fn e36_unparsable_or_unexpected_document_left_untouched() {
        let cases: &[(&str, &str, Section, &str)] = &[
            (
                "scope.yml",
                "paths:\n  read: [a\n  write: []\n",
                Section::PathsRead,
                "The document does not parse (line 3 of the file): ",
            ),
            (
                "preset.md",
                "---\ndescription: x\npaths: [\n---\nBody\n",
                Section::PathsRead,
                "The YAML front matter does not parse (line 4 of the file): ",
            ),
            (
                "scope.yml",
                "paths: {}\npaths: {}\n",
                Section::PathsRead,
                "The document does not parse",
            ),
            (
                "scope.yml",
                "a: 1\n---\nb: 2\n",
                Section::PathsRead,
                "The document does not parse",
            ),
            (
                "preset.md",
                "---\npaths: {}\nBody without a closing fence\n",
                Section::PathsRead,
                "the front matter opened by '---' on line 1 is not closed",
            ),
            (
                "scope.yml",
                "paths:\n  read: ~/src/**\n",
                Section::PathsRead,
                "`paths.read` is not a list; nothing was added",
            ),
            (
                "scope.yml",
                "paths: [a, b]\n",
                Section::PathsWrite,
                "`paths` is not a mapping; nothing was added",
            ),
            (
                "scope.yml",
                "- a\n- b\n",
                Section::ReadOnly,
                "the document is not a mapping of keys; nothing was added",
            ),
            (
                "scope.yml",
                "base: &b [x]\npaths:\n  read: *b\n",
                Section::PathsRead,
                "cannot add to `paths.read` automatically: it is an alias of another value; the \
                 file was left untouched, edit it by hand",
            ),
            (
                "scope.yml",
                "paths: &p {read: [a]}\n",
                Section::PathsRead,
                "cannot add to `paths` automatically: it carries an anchor",
            ),
            (
                "scope.yml",
                "paths:\n  read: !!seq [a]\n",
                Section::PathsRead,
                "cannot add to `paths.read` automatically: it carries a tag",
            ),
            (
                "scope.yml",
                "--- {paths: {read: [a]}}\n",
                Section::PathsRead,
                "a '---' line with content on it is not supported",
            ),
            (
                "scope.yml",
                "paths:\n  {read: [a]}\n",
                Section::PathsRead,
                "cannot add to `paths` automatically: its layout is not one this editor changes",
            ),
            (
                "scope.yml",
                "? paths\n: {read: [a]}\n",
                Section::PathsRead,
                "cannot add to `paths` automatically: the document is not a block mapping",
            ),
        ];
        for &(name, doc, section, want) in cases {
            let dir = tempfile::tempdir().unwrap();
            let file = write(dir.path(), name, doc);
            let m = edit_error(add_to_scope(&file, section, &strings(&["/x/**"])));
            assert!(m.starts_with(want), "{doc:?}:\n{m}\nwanted: {want}");
            assert_eq!(read(&file), doc);
            assert_eq!(listing(dir.path()), [name]);
        }
    }

    #[test]
    fn e36_edit_that_does_not_verify_is_refused() {
        let root: Value = serde_yaml::from_str("paths:\n  read: [a]\n").unwrap();
        let expected = with_list(
            &root,
            Section::PathsRead.key_path(),
            vec![Value::from("a"), Value::from("b")],
        );
        let good = "paths:\n  read: [a, b]\n";
        assert_eq!(
            verify(
                good,
                (0, good.len()),
                DocKind::Yaml,
                &expected,
                Section::PathsRead
            ),
            Ok(())
        );
        // Something else changed as well.
        let bad = "paths:\n  read: [a, b]\n  write: [c]\n";
        assert_eq!(
            verify(
                bad,
                (0, bad.len()),
                DocKind::Yaml,
                &expected,
                Section::PathsRead
            ),
            Err(
                "could not add to paths.read without changing something else in the document; \
                 the file was left untouched, edit it by hand"
                    .into()
            )
        );
        let broken = "paths:\n  read: [a, b\n";
        let m = verify(
            broken,
            (0, broken.len()),
            DocKind::Yaml,
            &expected,
            Section::PathsRead,
        )
        .unwrap_err();
        assert!(m.starts_with("adding to paths.read would leave a document that does not parse"));
    }

    #[test]
    fn e47_added_value_matches_what_validation_expects() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        let base = Path::new(BASE);
        let path = add_resource(
            &file,
            "path",
            "src/",
            "run_bash_command",
            Some("write"),
            None,
            base,
        )
        .unwrap();
        let cmd = add_resource(
            &file,
            "command",
            "cargo test --all",
            "run_bash_command",
            None,
            None,
            base,
        )
        .unwrap();
        let tag = add_resource(
            &file,
            "pattern",
            "tags:work",
            "org_roam_search",
            None,
            None,
            base,
        )
        .unwrap();
        let text = read(&file);
        assert_eq!(
            text,
            "paths:\n  read: []\n  write: [/home/u/proj/src/**]\nbash_tools:\n  categories:\n    \
             read_only: [cargo]\norg_roam_patterns:\n  tags: [work]\n"
        );
        // The loader's own types read it, and the values are what validation compares with.
        let scope: crate::scope::Scope = serde_yaml::from_str(&text).unwrap();
        assert_eq!(scope.paths.write, path.patterns_added);
        assert_eq!(scope.bash_tools.categories.read_only, cmd.patterns_added);
        assert_eq!(scope.org_roam_patterns.tags, tag.patterns_added);
        let glob = globset::Glob::new(&scope.paths.write[0])
            .unwrap()
            .compile_matcher();
        assert!(glob.is_match("/home/u/proj/src/main.rs"));
        assert!(glob.is_match("/home/u/proj/src/deep/er/mod.rs"));
        assert!(!glob.is_match("/home/u/proj/other/x"));
        assert_eq!(
            base_command("cargo test --all").unwrap(),
            scope.bash_tools.categories.read_only[0]
        );
    }

    #[test]
    fn section_names_round_trip() {
        for s in Section::ALL {
            assert_eq!(Section::from_dotted(s.dotted()), Some(s));
            assert_eq!(s.key_path().join("."), s.dotted());
            assert_eq!(s.to_string(), s.dotted());
        }
        assert_eq!(Section::from_dotted("paths.deny"), None);
    }

    #[test]
    fn outcome_messages() {
        let out = |added: &[&str], present: &[&str]| EditOutcome {
            file: PathBuf::from("/p/scope.yml"),
            section: "paths.read".into(),
            patterns_added: strings(added),
            already_present: strings(present),
            sha256_before: String::new(),
            sha256_after: String::new(),
        };
        assert_eq!(
            out(&["a"], &[]).message(),
            "Added \"a\" to paths.read in /p/scope.yml."
        );
        assert_eq!(
            out(&["a", "b"], &["c"]).message(),
            "Added \"a\", \"b\" to paths.read in /p/scope.yml; \"c\" already there."
        );
        assert_eq!(
            out(&[], &[]).message(),
            "Nothing to add to paths.read in /p/scope.yml."
        );
        let json = serde_json::to_value(out(&["a"], &[])).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"file": "/p/scope.yml", "section": "paths.read",
                               "patterns_added": ["a"], "already_present": [],
                               "sha256_before": "", "sha256_after": ""})
        );
    }

    #[test]
    fn invalid_values_refused() {
        for bad in ["", "  ", "a\0b"] {
            invalid_argument(edit_text(
                "t",
                "",
                DocKind::Yaml,
                Section::PathsRead,
                &strings(&[bad]),
            ));
        }
        // No values: nothing to do.
        let edit = edit_text("t", "paths: {}\n", DocKind::Yaml, Section::PathsRead, &[]).unwrap();
        assert_eq!(edit.text, None);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_permissions_and_symlinks() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("dotfiles");
        fs::create_dir(&real_dir).unwrap();
        let real = write(&real_dir, "scope.yml", "paths:\n  read: []\n");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("scope.yml");
        symlink(&real, &link).unwrap();

        add_to_scope(&link, Section::PathsRead, &strings(&["/x/**"])).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(read(&real), "paths:\n  read: [/x/**]\n");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(listing(&real_dir), ["scope.yml"]);
        assert_eq!(listing(dir.path()), ["dotfiles", "scope.yml"]);
    }

    #[cfg(unix)]
    #[test]
    fn read_only_file_is_not_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        let m = edit_error(add_to_scope(
            &file,
            Section::PathsRead,
            &strings(&["/x/**"]),
        ));
        assert_eq!(m, "the file is read-only; nothing was added");
        assert_eq!(read(&file), "paths:\n  read: []\n");
        assert_eq!(listing(dir.path()), ["scope.yml"]);
    }

    #[cfg(unix)]
    #[test]
    fn concurrent_edits_keep_every_value() {
        let dir = tempfile::tempdir().unwrap();
        let text = "# keep me\nbash_tools:\n  categories:\n    read_only: [ls]   # viewing\n# tail\n";
        let file = write(dir.path(), "scope.yml", text);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let file = file.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let v = format!("c{t}_{i}");
                        let out = add_to_scope(&file, Section::ReadOnly, std::slice::from_ref(&v)).unwrap();
                        assert_eq!(out.patterns_added, [v]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let after = read(&file);
        let doc: Value = serde_yaml::from_str(&after).unwrap();
        let list = doc["bash_tools"]["categories"]["read_only"].as_sequence().unwrap();
        assert_eq!(list.len(), 1 + 8 * 25);
        for t in 0..8 {
            for i in 0..25 {
                let v = Value::String(format!("c{t}_{i}"));
                assert!(list.contains(&v), "c{t}_{i} lost");
            }
        }
        assert!(after.starts_with("# keep me\n"));
        assert!(after.ends_with("]   # viewing\n# tail\n"));
        assert_eq!(listing(dir.path()), ["scope.yml"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_edit_waits_for_the_lock_of_another() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        let held = fs::File::open(&file).unwrap();
        held.lock().unwrap();
        let f = file.clone();
        let edit = std::thread::spawn(move || add_to_scope(&f, Section::PathsRead, &strings(&["/x/**"])));
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(read(&file), "paths:\n  read: []\n");
        drop(held);
        edit.join().unwrap().unwrap();
        assert_eq!(read(&file), "paths:\n  read: [/x/**]\n");
    }

    #[test]
    fn non_utf8_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scope.yml");
        fs::write(&file, b"paths:\n  read: [\xff]\n").unwrap();
        let m = edit_error(add_to_scope(
            &file,
            Section::PathsRead,
            &strings(&["/x/**"]),
        ));
        assert!(m.starts_with("the file is not valid UTF-8"), "{m}");
        assert_eq!(fs::read(&file).unwrap(), b"paths:\n  read: [\xff]\n");
    }
}
