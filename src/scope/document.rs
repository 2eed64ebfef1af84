//! The scope document: what the user wrote down about which commands may run and which
//! paths may be read or written.
//!
//! Keys are snake_case YAML. Every struct rejects unknown keys, so a typo is an
//! `invalid_config` error naming the file, line and key instead of a silently ignored rule.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A fully merged scope: built-in defaults, then a profile, then inline scope, then the
/// session's own document (later sources override earlier ones key by key).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Scope {
    /// Path patterns (globs) for reading, writing, and never touching.
    pub paths: Paths,
    /// Rules for `run_bash_command`.
    pub bash_tools: BashTools,
    /// The seeds/001 command tables for `run_command` (argv form), per platform.
    pub tool_commands: ToolCommands,
    /// Pattern resources (org-roam subdirectories and tags).
    pub org_roam_patterns: OrgRoamPatterns,
    /// File-system boundary for the file tools.
    pub fs: Fs,
    /// When gptel should ask before a tool runs.
    pub approval_policy: ApprovalPolicy,
    /// Overrides and additions to the built-in command semantics table.
    pub semantics: BTreeMap<String, crate::scope::semantics::CommandSemantics>,
    /// The environment of commands: what they inherit from Emacs, what the scope sets.
    pub environment: crate::scope::env::Environment,
    /// What the OS wall lets commands reach besides the scope's paths, and the limits of a call.
    pub sandbox: Sandbox,
}

/// `sandbox:` — what a sandboxed command may reach besides the scope's paths.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Sandbox {
    /// The network (off by default: a sandboxed command has none).
    pub network: bool,
    /// What one call may use: memory, processes, CPU seconds, file size (the supervisor's,
    /// with any wall or none).
    pub limits: crate::wall::limits::LimitSettings,
}

/// `paths:` — glob patterns. `~` and `${project_root}` expand; `dir/` means `dir/**`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Paths {
    pub read: Vec<String>,
    /// Write implies read (B07).
    pub write: Vec<String>,
    /// Always wins (B10).
    pub deny: Vec<String>,
}

/// `bash_tools:` — rules for shell commands.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BashTools {
    pub categories: Categories,
    /// Commands rejected before anything else (B04), matched on the basename.
    pub deny: Vec<String>,
    /// Optional per-command rules (flags, subcommands), seeds/001 schema.
    pub commands: BTreeMap<String, CommandRule>,
    /// Seconds before a command is killed (B28): 1 to [`MAX_TIMEOUT`].
    #[serde(deserialize_with = "timeout_seconds")]
    pub timeout: u64,
    /// Characters of output returned to the model (B32-B34): 1 to [`MAX_OUTPUT_CHARS`].
    #[serde(deserialize_with = "output_chars")]
    pub max_output_chars: usize,
    /// `warn` (B35-B37) or `enforce`: deny path arguments outside the scope.
    pub path_arguments: PathArgumentsMode,
    /// Shell constructs that are refused unless listed here: `eval`, `source`, `alias`,
    /// `function` (function definitions).
    pub allow_constructs: Vec<String>,
}

/// The longest `bash_tools.timeout`: a day, in seconds. Larger values overflowed the
/// arithmetic of the deadline (every call then failed).
pub const MAX_TIMEOUT: u64 = 86_400;

/// The largest `bash_tools.max_output_chars`: 10 million characters, far more than any
/// model's context; larger values overflowed the arithmetic of the cut.
pub const MAX_OUTPUT_CHARS: u64 = 10_000_000;

/// An integer of a scope document, the value of `field`, refused outside `min..=max` with a
/// message that starts with the field in backquotes and names the range (the loader turns
/// it into the key's whole path, with its file and line).
fn in_range<'de, D: serde::Deserializer<'de>>(
    d: D,
    field: &str,
    min: u64,
    max: u64,
    unit: &str,
) -> Result<u64, D::Error> {
    let n = <i128 as Deserialize>::deserialize(d)?;
    match u64::try_from(n) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(serde::de::Error::custom(format!(
            "`{field}` {n} is out of range: give {min} to {max} {unit}"
        ))),
    }
}

/// `bash_tools.timeout`, checked: 1 to [`MAX_TIMEOUT`] seconds.
fn timeout_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    in_range(d, "timeout", 1, MAX_TIMEOUT, "seconds")
}

/// `bash_tools.max_output_chars`, checked: 1 to [`MAX_OUTPUT_CHARS`] characters.
fn output_chars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = in_range(d, "max_output_chars", 1, MAX_OUTPUT_CHARS, "characters")?;
    usize::try_from(n).map_err(serde::de::Error::custom)
}

impl Default for BashTools {
    fn default() -> Self {
        Self {
            categories: Categories::default(),
            deny: Vec::new(),
            commands: BTreeMap::new(),
            timeout: 30,
            max_output_chars: 20_000,
            path_arguments: PathArgumentsMode::Warn,
            allow_constructs: Vec::new(),
        }
    }
}

/// `bash_tools.categories:` — each entry is a command name or a multi-word prefix
/// (`"git log"`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Categories {
    pub read_only: Vec<String>,
    pub safe_write: Vec<String>,
    pub dangerous: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PathArgumentsMode {
    #[default]
    Warn,
    Enforce,
}

/// A seeds/001 command entry (C03, C04). Used in `bash_tools.commands` and in
/// `tool_commands.<platform>.allowed`.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CommandRule {
    pub description: Option<String>,
    /// `None`: any flag. `Some([])`: no flag at all.
    pub allowed_flags: Option<Vec<String>>,
    /// Documentation of positional arguments; checked loosely (C10).
    pub allowed_args: Option<Vec<String>>,
    pub has_subcommands: bool,
    pub subcommands: BTreeMap<String, CommandRule>,
    pub blacklist: Option<SubcommandBlacklist>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SubcommandBlacklist {
    pub subcommands: Vec<String>,
}

/// `tool_commands:` — one table per platform (C01).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ToolCommands {
    pub posix: PlatformCommands,
    pub windows: PlatformCommands,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PlatformCommands {
    pub allowed: BTreeMap<String, CommandRule>,
    pub blacklist: CommandBlacklist,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CommandBlacklist {
    pub commands: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct OrgRoamPatterns {
    pub subdirectory: Vec<String>,
    pub tags: Vec<String>,
}

/// `fs:` — the boundary of the file tools (seeds/004).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Fs {
    pub mode: FsMode,
    /// Default: the project root.
    pub root: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FsMode {
    #[default]
    Restricted,
    Unrestricted,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    #[default]
    Never,
    Mutating,
    Always,
}

/// The platform key of seeds/001 (C01).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    Posix,
    Windows,
}

impl Platform {
    /// `windows` on Windows, `posix` everywhere else.
    pub fn current() -> Self {
        if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Posix
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Posix => "posix",
            Platform::Windows => "windows",
        }
    }
}

impl ToolCommands {
    pub fn for_platform(&self, platform: Platform) -> &PlatformCommands {
        match platform {
            Platform::Posix => &self.posix,
            Platform::Windows => &self.windows,
        }
    }
}
