//! The file tools (seeds/004): a file-system boundary on top of the path scope, and
//! `read_file`, `list_dir`, `grep_files` and `apply_patch` built on it.
//!
//! Every path a tool touches goes through [`Guard::check`]: made absolute against the
//! tool's directory, normalized, resolved through symlinks as far as it exists, confined to
//! the boundary (`fs.mode: restricted` and `fs.root`, F01) and then judged by the path scope
//! (`paths.read/write/deny`, with allow-once grants). The answer is evidence ([`Checked`]) or
//! a typed [`FsError`] whose reason code goes to the model.

pub mod apply;
pub mod grep;
pub mod list;
pub mod patch;
pub mod read;
pub mod tools;

use std::path::{Path, PathBuf};

use serde::Serialize;
use thiserror::Error;

use crate::policy::decide::Grant;
use crate::policy::paths::{self, Access, Matcher, PathVerdict, Resolved};
use crate::scope::FsMode;
use crate::{Reason, ScopeError};

/// Why a file tool refused or failed (F13). Each has its own reason code.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum FsError {
    /// The path leaves the boundary lexically (`..`) or through a symlink.
    #[error("{path} is outside the file-system boundary {root} (fs.mode: restricted){}", via.as_ref().map(|v| format!("; it leads to {v}")).unwrap_or_default())]
    BoundaryViolation {
        path: String,
        root: String,
        via: Option<String>,
    },
    /// The path, or where it leads, matches a deny pattern.
    #[error("{path} matches the deny pattern `{pattern}`; it is never allowed")]
    PathDenied { path: String, pattern: String },
    /// The path is inside the boundary but outside the read or write scope.
    #[error("{path} is outside the {access} scope (allowed: {allowed})")]
    PathNotInScope {
        path: String,
        access: &'static str,
        allowed: String,
    },
    /// The patch text is not a unified diff nor a `*** Begin Patch` envelope.
    #[error("the patch does not parse at line {line}: {message}")]
    PatchParse { line: usize, message: String },
    /// A hunk does not apply exactly, or a file to add exists, or one to change does not.
    #[error("the patch does not apply to {file}: {message}")]
    PatchApply { file: String, message: String },
    /// A file that holds binary data.
    #[error("{path} is a binary file ({detail})")]
    Binary { path: String, detail: String },
    /// The path does not exist or is of the wrong kind.
    #[error("{path}: {message}")]
    NotFound { path: String, message: String },
    /// A malformed argument.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An I/O failure.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// A write to a scope document, or under a protected path: never, whatever the scope.
    #[error("{}", crate::policy::paths::scope_document_message(&format!("`{path}`"), std::path::Path::new(resolved), protected))]
    ScopeDocument {
        path: String,
        resolved: String,
        protected: String,
    },
    /// The scope itself could not be loaded.
    #[error("{0}")]
    Scope(ScopeError),
}

impl FsError {
    /// The reason code sent to the model.
    pub fn reason(&self) -> Reason {
        match self {
            FsError::BoundaryViolation { .. } => Reason::BoundaryViolation,
            FsError::PathDenied { .. } => Reason::PathDenied,
            FsError::PathNotInScope { .. } => Reason::PathNotInScope,
            FsError::ScopeDocument { .. } => Reason::ScopeDocument,
            FsError::PatchParse { .. } => Reason::PatchParseError,
            FsError::PatchApply { .. } => Reason::PatchApplyError,
            FsError::Binary { .. } => Reason::BinaryFile,
            FsError::NotFound { .. } => Reason::NotFound,
            FsError::InvalidArgument(_) => Reason::InvalidArgument,
            FsError::Io { .. } => Reason::IoError,
            FsError::Scope(e) => e.reason(),
        }
    }

    /// What the model should do next.
    pub fn advice(&self, tool: &str) -> String {
        match self {
            FsError::BoundaryViolation { .. } => {
                "File tools cannot leave the boundary, and request_scope_expansion cannot widen it: use a path under the root, or ask the user to change fs.root or fs.mode in the scope file.".into()
            }
            FsError::PathDenied { .. } => "Deny patterns always win; do not try another route to this file.".into(),
            FsError::Scope(crate::ScopeError::UntrustedScope { .. }) => {
                "Nothing was done. Tell the user to review the scope document and approve it with M-x gptel-scope-trust; request_scope_expansion cannot approve it.".into()
            }
            FsError::PathNotInScope { path, .. } => format!(
                "Use a path inside the scope, or call request_scope_expansion with tool_name \"{tool}\", resource \"{path}\" and your reason."
            ),
            FsError::PatchParse { .. } => "Send a unified diff (--- a/f, +++ b/f, @@ -l,n +l,n @@) or a *** Begin Patch envelope.".into(),
            FsError::PatchApply { .. } => "Nothing was written. Read the file again (read_file) and send a patch whose context matches it exactly.".into(),
            FsError::Binary { .. } => "read_file shows text only.".into(),
            _ => String::new(),
        }
    }

    /// The resource a `request_scope_expansion` would name, for scope violations.
    pub fn resource(&self) -> Option<&str> {
        match self {
            FsError::PathNotInScope { path, .. } => Some(path),
            _ => None,
        }
    }
}

impl From<ScopeError> for FsError {
    fn from(e: ScopeError) -> Self {
        match e {
            ScopeError::InvalidArgument(m) => FsError::InvalidArgument(m),
            ScopeError::Io { path, message } => FsError::Io { path, message },
            other => FsError::Scope(other),
        }
    }
}

pub fn io_error(path: &Path, e: &std::io::Error) -> FsError {
    match e.kind() {
        std::io::ErrorKind::NotFound => FsError::NotFound {
            path: path.display().to_string(),
            message: "no such file or directory".into(),
        },
        _ => FsError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        },
    }
}

/// The boundary: where the file tools may go at all (F01).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Boundary {
    pub mode: FsMode,
    /// The root as written (normalized) and where it leads; unused when unrestricted.
    pub root: Resolved,
}

impl Boundary {
    /// A boundary at `root` (absolute), resolved through symlinks.
    pub fn new(mode: FsMode, root: &Path) -> Result<Boundary, FsError> {
        if !root.is_absolute() {
            return Err(FsError::InvalidArgument(format!(
                "the boundary root `{}` must be absolute",
                root.display()
            )));
        }
        Ok(Boundary {
            mode,
            root: paths::resolve(root),
        })
    }

    /// Refuses a path that leaves the root, lexically or through a symlink.
    pub fn contains(&self, shown: &str, r: &Resolved) -> Result<(), FsError> {
        if self.mode == FsMode::Unrestricted {
            return Ok(());
        }
        let root = self.root.target.display().to_string();
        let inside =
            |p: &Path| p.starts_with(&self.root.target) || p.starts_with(&self.root.literal);
        if !inside(&r.literal) {
            return Err(FsError::BoundaryViolation {
                path: shown.into(),
                root,
                via: None,
            });
        }
        if !r.target.starts_with(&self.root.target) {
            return Err(FsError::BoundaryViolation {
                path: shown.into(),
                root,
                via: Some(r.target.display().to_string()),
            });
        }
        Ok(())
    }
}

/// A path a tool may use, with the evidence of why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Checked {
    /// As the model wrote it.
    pub path: String,
    /// Absolute and normalized.
    pub literal: PathBuf,
    /// Where it leads (symlinks followed); the file the tool opens.
    pub target: PathBuf,
    pub access: &'static str,
    /// The scope pattern that allowed it, or `None` when an allow-once grant did.
    pub pattern: Option<String>,
    /// The grant used, if any.
    pub grant: Option<Grant>,
}

/// Everything a file tool needs to judge paths.
pub struct Guard<'a> {
    pub boundary: Boundary,
    pub matcher: &'a Matcher,
    /// Relative paths are taken from here.
    pub base: PathBuf,
    pub home: Option<PathBuf>,
    pub grants: &'a [Grant],
    pub tool: &'a str,
    /// The grants that allowed a path so far (the caller uses them up).
    pub used: std::sync::Mutex<Vec<Grant>>,
}

impl Guard<'_> {
    /// The absolute, normalized form of a path argument (`~` expanded).
    pub fn absolute(&self, raw: &str) -> Result<PathBuf, FsError> {
        if raw.is_empty() {
            return Err(FsError::InvalidArgument("the path is empty".into()));
        }
        if raw.contains('\0') {
            return Err(FsError::InvalidArgument("the path holds a NUL byte".into()));
        }
        let expanded = match (raw.strip_prefix('~'), &self.home) {
            (Some(rest), Some(h)) if rest.is_empty() || rest.starts_with('/') => {
                h.join(rest.trim_start_matches('/'))
            }
            _ => PathBuf::from(raw),
        };
        let abs = if expanded.is_absolute() {
            expanded
        } else {
            self.base.join(expanded)
        };
        Ok(crate::resolve::normalize(&abs))
    }

    /// Judges one path for `access`: boundary first, then deny, then scope or a grant.
    pub fn check(&self, raw: &str, access: Access) -> Result<Checked, FsError> {
        let abs = self.absolute(raw)?;
        self.check_resolved(raw, &paths::resolve(&abs), access)
    }

    /// As [`Guard::check`], for a path already resolved (a walk's entries).
    pub fn check_resolved(
        &self,
        raw: &str,
        r: &Resolved,
        access: Access,
    ) -> Result<Checked, FsError> {
        self.boundary.contains(raw, r)?;
        let shown = r.target.display().to_string();
        let make = |pattern, grant| Checked {
            path: raw.to_string(),
            literal: r.literal.clone(),
            target: r.target.clone(),
            access: access.as_str(),
            pattern,
            grant,
        };
        match self.matcher.check(r, access) {
            PathVerdict::Allowed(p) => Ok(make(Some(p), None)),
            PathVerdict::Denied(p) => Err(FsError::PathDenied {
                path: shown,
                pattern: p,
            }),
            PathVerdict::ScopeDocument(doc) => Err(FsError::ScopeDocument {
                path: raw.to_string(),
                resolved: shown,
                protected: doc,
            }),
            PathVerdict::OutOfScope => match self.grant_for(raw, r) {
                Some(g) => {
                    let mut used = self
                        .used
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if !used.contains(g) {
                        used.push(g.clone());
                    }
                    Ok(make(None, Some(g.clone())))
                }
                None => Err(FsError::PathNotInScope {
                    path: shown,
                    access: access.as_str(),
                    allowed: {
                        let p = self.matcher.patterns_for(access);
                        if p.is_empty() {
                            "nothing".into()
                        } else {
                            p.join(", ")
                        }
                    },
                }),
            },
        }
    }

    /// Whether a walk may show an entry: inside the boundary and not denied. Entries out of
    /// the read scope are left out too, so a listing never reveals more than a read would.
    pub fn visible(&self, r: &Resolved) -> bool {
        self.boundary.contains("", r).is_ok()
            && match self.matcher.check(r, Access::Read) {
                PathVerdict::Allowed(_) => true,
                PathVerdict::Denied(_) | PathVerdict::ScopeDocument(_) => false,
                PathVerdict::OutOfScope => self.grant_for("", r).is_some(),
            }
    }

    fn grant_for(&self, raw: &str, r: &Resolved) -> Option<&Grant> {
        self.grants.iter().find(|g| {
            if g.tool != self.tool {
                return false;
            }
            let gp = g.resource.trim_end_matches("/**").trim_end_matches('/');
            !gp.is_empty() && (r.target.starts_with(gp) || (!raw.is_empty() && g.resource == raw))
        })
    }
}

/// Whether bytes look binary: a NUL in the first 8 KiB (as git and grep decide).
pub fn looks_binary(head: &[u8]) -> Option<usize> {
    memchr::memchr(0, &head[..head.len().min(8192)])
}
