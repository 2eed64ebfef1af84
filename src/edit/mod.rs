//! "Add to scope" (SPEC §6, E11-E16, E30-E36, E44-E47): the smallest edit to the scope
//! document in effect.
//!
//! [`route()`] turns a scope-expansion request (validation type, resource, tool) into the
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
//!
//! Where each part lives:
//!
//! - `route.rs`: the request → the section and the value ([`route()`], [`path_pattern`],
//!   [`base_command`]).
//! - `region.rs`: where the YAML is: the whole `scope.yml`, or the front matter of a
//!   `preset.md` (created when it has none).
//! - `scan.rs`: the lines of the YAML, and the `key:` at the start of one.
//! - `flow.rs`: the parser of flow collections.
//! - `locate.rs`: the editor: the document's layout, and the walk down the section's keys to
//!   the place where the values go.
//! - `forms.rs`: the change made there in each YAML form (block list, flow list, flow mapping,
//!   empty or null key), as splices of the text.
//! - `render.rs`: new values and new lists as YAML text, quoted only where YAML needs it.
//! - `verify.rs`: the edited text parsed again and compared with what it must be.
//! - `write.rs`: the lock on the document and the atomic write.
//! - `tests.rs`: tests of the whole edit (E14, E16, E34, E36, E47); each other file holds the
//!   tests of its own part.

use std::fmt;
#[cfg(test)]
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_yaml::Value;

use crate::error::{Result, ScopeError};

mod flow;
mod forms;
mod locate;
mod region;
mod render;
mod route;
mod scan;
#[cfg(test)]
mod tests;
mod verify;
mod write;

pub use route::{base_command, path_pattern, route};

use forms::apply_splices;
use locate::Editor;
use region::Region;
use verify::{current_list, verify, with_list};
use write::{lock_document, write_atomic};

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
    // Read bounded, and refused when it is not a regular file (a FIFO would block the lock's
    // open), before the lock and again under it.
    let read = || crate::bounded::read(file, crate::bounded::MAX_SCOPE_DOCUMENT);
    if let Err(
        e @ (crate::error::ReadError::NotRegular { .. } | crate::error::ReadError::TooLarge { .. }),
    ) = read()
    {
        return Err(e.into());
    }
    let _lock = lock_document(file)?;
    let bytes = match read() {
        Ok((bytes, _)) => bytes,
        Err(
            e @ (crate::error::ReadError::NotRegular { .. }
            | crate::error::ReadError::TooLarge { .. }),
        ) => return Err(e.into()),
        Err(crate::error::ReadError::NotFound { .. }) => {
            return Err(ScopeError::Edit {
                file: label.clone(),
                message: format!(
                    "there is no scope document at {label}. Create it (a scope.yml, or a \
                     preset.md whose YAML front matter holds the scope) in the session \
                     directory, or edit the scope by hand; nothing was added"
                ),
            })
        }
        Err(e) => return Err(e.into()),
    };
    let text = std::str::from_utf8(&bytes).map_err(|e| ScopeError::Edit {
        file: label.clone(),
        message: format!("the file is not valid UTF-8 ({e}); nothing was added"),
    })?;
    // Too deep a document is refused before the editor parses it (as the loader does).
    match DocKind::for_path(file) {
        DocKind::FrontMatter => match crate::scope::config::front_matter(text) {
            Some((yaml, offset)) => crate::scope::config::nesting(&label, yaml, offset)?,
            None => crate::scope::config::nesting(&label, text, 0)?,
        },
        _ => crate::scope::config::nesting(&label, text, 0)?,
    }
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

/// [`route()`], then [`add_to_scope`]: make a scope-expansion request permanent.
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
