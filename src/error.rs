//! Typed errors of the engine. Each maps to one Emacs error symbol in the binding.

use thiserror::Error;

pub mod reason;

use reason::Reason;

#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ScopeError {
    /// A scope document that does not parse, has an unknown key or a wrong type.
    #[error("invalid_config: {file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    InvalidConfig {
        /// The file (or the name of an inline source).
        file: String,
        /// 1-based line, when known.
        line: Option<usize>,
        /// The offending key, when known (`bash_tools.categories.read_onyl`).
        key: Option<String>,
        message: String,
    },
    /// No scope document and no inline scope (B48).
    #[error("no_scope_config: {0}")]
    NoScopeConfig(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    /// A caller passed something malformed (bad JSON request, unknown validation type).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A scope document whose content the user has not approved (never, or not since it
    /// changed): nothing runs under it until the user approves it (`M-x gptel-scope-trust`).
    #[error("untrusted_scope: {file}: {}; nothing runs under it until the user reviews and approves it (M-x gptel-scope-trust)", if approved.is_some() { "its content changed since the user approved it" } else { "the user has not approved this scope document" })]
    UntrustedScope {
        /// The document (as the request named it).
        file: String,
        /// SHA-256 of the bytes read, in hex.
        sha256: String,
        /// The approved SHA-256 of the document, when there is one.
        approved: Option<String>,
    },
    /// A scope edit that could not be made; the file is left untouched.
    #[error("cannot edit {file}: {message}")]
    Edit { file: String, message: String },
}

impl ScopeError {
    /// What a refusal for this error says beyond its reason and message, one field: a
    /// configuration error's `config_error` (`file`, `line`, `key`: where to fix it), an
    /// unapproved document's `untrusted` (`file`, `sha256`, `approved`: what the elisp offers
    /// the user to approve). Every refusal built from an error carries it ([`crate::emacs::api`]
    /// for commands, [`crate::fs::tools::failure`] for the file tools).
    pub fn detail(&self) -> Option<(&'static str, serde_json::Value)> {
        match self {
            ScopeError::InvalidConfig {
                file, line, key, ..
            } => Some((
                "config_error",
                serde_json::json!({"file": file, "line": line, "key": key}),
            )),
            ScopeError::UntrustedScope {
                file,
                sha256,
                approved,
            } => Some((
                "untrusted",
                serde_json::json!({"file": file, "sha256": sha256, "approved": approved}),
            )),
            _ => None,
        }
    }

    /// The Emacs error symbol this error is signalled as.
    pub fn symbol(&self) -> &'static str {
        match self {
            ScopeError::InvalidConfig { .. } => "gptel-scope-invalid-config",
            ScopeError::NoScopeConfig(_) => "gptel-scope-no-scope-config",
            ScopeError::Io { .. } => "gptel-scope-io-error",
            ScopeError::InvalidArgument(_) => "gptel-scope-invalid-argument",
            ScopeError::Edit { .. } => "gptel-scope-edit-error",
            ScopeError::UntrustedScope { .. } => "gptel-scope-untrusted-scope",
        }
    }

    /// The reason code of SPEC §3 that a tool result carries for this error.
    pub fn reason(&self) -> Reason {
        match self {
            ScopeError::InvalidConfig { .. } => Reason::InvalidConfig,
            ScopeError::NoScopeConfig(_) => Reason::NoScopeConfig,
            ScopeError::Io { .. } => Reason::IoError,
            ScopeError::InvalidArgument(_) => Reason::InvalidArgument,
            ScopeError::Edit { .. } => Reason::EditError,
            ScopeError::UntrustedScope { .. } => Reason::UntrustedScope,
        }
    }
}

/// Why a file the engine reads for itself ([`crate::bounded::read`]) was not read.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ReadError {
    /// Nothing at the path.
    #[error("{path} does not exist")]
    NotFound {
        /// The file, as asked for.
        path: String,
    },
    /// A FIFO, a device, a socket or a directory: never read (it could block or never end).
    #[error("{path} is {kind}, not a regular file")]
    NotRegular {
        /// The file, as asked for.
        path: String,
        /// What it is: `a FIFO`, `a character device`, ...
        kind: &'static str,
    },
    /// More bytes than the bound of its kind of file.
    #[error("{path} is larger than {}", size_text(*limit))]
    TooLarge {
        /// The file, as asked for.
        path: String,
        /// The bound, in bytes.
        limit: u64,
    },
    /// The open or the read failed.
    #[error("{path}: {message}")]
    Io {
        /// The file, as asked for.
        path: String,
        /// The system's error.
        message: String,
    },
}

impl From<ReadError> for ScopeError {
    /// A scope document that is missing answers `no_scope_config`; one that is not a regular
    /// file or is too large `invalid_config` naming it; another failure `io_error`.
    fn from(e: ReadError) -> ScopeError {
        match e {
            ReadError::NotFound { path } => {
                ScopeError::NoScopeConfig(format!("{path} does not exist"))
            }
            ReadError::NotRegular { ref path, .. } | ReadError::TooLarge { ref path, .. } => {
                let message = e.to_string();
                let message = message
                    .strip_prefix(path.as_str())
                    .map(str::trim_start)
                    .unwrap_or(&message)
                    .to_string();
                ScopeError::InvalidConfig {
                    file: path.clone(),
                    line: None,
                    key: None,
                    message,
                }
            }
            ReadError::Io { path, message } => ScopeError::Io { path, message },
        }
    }
}

/// A byte count as the messages write it (`1 MiB`, `64 KiB`, `100 bytes`).
pub fn size_text(n: u64) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

pub type Result<T> = std::result::Result<T, ScopeError>;
