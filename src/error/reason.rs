//! The reason codes a refusal or a failure carries (SPEC §3): each code's wire string, its
//! rank, whether an allow-once grant can lift it and whether the user may be asked about it,
//! all in one place. Every code the engine produces is a [`Reason`]; its string is written
//! here only (`tests/owners.rs` checks that no other file of `src/` or `lisp/` writes it).

use serde::{Serialize, Serializer};

/// A reason code. The variants are in rank order, the least strict first, so that when
/// several violations apply the greatest ([`Ord`], `max`) is the one a decision reports: what
/// no grant can fix before what the user may allow, and commands before the paths they touch.
/// The codes of a failure rather than a decision (`io_error`, `not_found`, ...) never compete
/// with a decision's and rank below them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// `io_error`: a file could not be read or written.
    IoError,
    /// `not_found`: a file tool's path does not exist.
    NotFound,
    /// `binary_file`: a file tool refused a binary file.
    BinaryFile,
    /// `patch_parse_error`: an `apply_patch` patch does not parse.
    PatchParseError,
    /// `patch_apply_error`: an `apply_patch` patch does not apply.
    PatchApplyError,
    /// `edit_error`: Add to scope could not edit the scope document.
    EditError,
    /// `invalid_argument`: a request's argument is malformed.
    InvalidArgument,
    /// `invalid_config`: the scope document does not load.
    InvalidConfig,
    /// `no_scope_config`: no scope document applies.
    NoScopeConfig,
    /// `untrusted_scope`: the scope document is not approved by the user.
    UntrustedScope,
    /// `boundary_violation`: a file tool's path is outside its boundary.
    BoundaryViolation,
    /// `run_time_operand`: an operand only known when the command runs.
    RunTimeOperand,
    /// `path_not_in_scope`: a path outside the scope.
    PathNotInScope,
    /// `directory_not_in_scope`: a command run in a directory outside the scope.
    DirectoryNotInScope,
    /// `subcommand_not_allowed`: a subcommand the scope does not list.
    SubcommandNotAllowed,
    /// `command_not_allowed`: a command the scope does not list.
    CommandNotAllowed,
    /// `dangerous_command`: a command of the scope's dangerous list.
    DangerousCommand,
    /// `subcommand_denied`: a subcommand of the scope's blacklist.
    SubcommandDenied,
    /// `flag_not_allowed`: a flag the command's rule does not allow.
    FlagNotAllowed,
    /// `reaches_denied_path`: a command reads a tree that holds a denied path.
    ReachesDeniedPath,
    /// `path_denied`: a path matching a deny pattern.
    PathDenied,
    /// `dynamic_command`: a command name or argument built at run time.
    DynamicCommand,
    /// `unsupported_construct`: shell that parses but cannot be judged statically.
    UnsupportedConstruct,
    /// `denied`: a command of the scope's blacklist.
    Denied,
    /// `scope_document`: a write to a scope document or a protected path.
    ScopeDocument,
    /// `privilege_escalation`: `sudo`, `su`, `doas` and their like.
    PrivilegeEscalation,
    /// `parse_error`: the command does not parse.
    ParseError,
}

impl Reason {
    /// Every reason code, in rank order (the least strict first).
    pub const ALL: [Reason; 27] = [
        Reason::IoError,
        Reason::NotFound,
        Reason::BinaryFile,
        Reason::PatchParseError,
        Reason::PatchApplyError,
        Reason::EditError,
        Reason::InvalidArgument,
        Reason::InvalidConfig,
        Reason::NoScopeConfig,
        Reason::UntrustedScope,
        Reason::BoundaryViolation,
        Reason::RunTimeOperand,
        Reason::PathNotInScope,
        Reason::DirectoryNotInScope,
        Reason::SubcommandNotAllowed,
        Reason::CommandNotAllowed,
        Reason::DangerousCommand,
        Reason::SubcommandDenied,
        Reason::FlagNotAllowed,
        Reason::ReachesDeniedPath,
        Reason::PathDenied,
        Reason::DynamicCommand,
        Reason::UnsupportedConstruct,
        Reason::Denied,
        Reason::ScopeDocument,
        Reason::PrivilegeEscalation,
        Reason::ParseError,
    ];

    /// The code as the model, Emacs and the tests read it: the only place it is written.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::IoError => "io_error",
            Reason::NotFound => "not_found",
            Reason::BinaryFile => "binary_file",
            Reason::PatchParseError => "patch_parse_error",
            Reason::PatchApplyError => "patch_apply_error",
            Reason::EditError => "edit_error",
            Reason::InvalidArgument => "invalid_argument",
            Reason::InvalidConfig => "invalid_config",
            Reason::NoScopeConfig => "no_scope_config",
            Reason::UntrustedScope => "untrusted_scope",
            Reason::BoundaryViolation => "boundary_violation",
            Reason::RunTimeOperand => "run_time_operand",
            Reason::PathNotInScope => "path_not_in_scope",
            Reason::DirectoryNotInScope => "directory_not_in_scope",
            Reason::SubcommandNotAllowed => "subcommand_not_allowed",
            Reason::CommandNotAllowed => "command_not_allowed",
            Reason::DangerousCommand => "dangerous_command",
            Reason::SubcommandDenied => "subcommand_denied",
            Reason::FlagNotAllowed => "flag_not_allowed",
            Reason::ReachesDeniedPath => "reaches_denied_path",
            Reason::PathDenied => "path_denied",
            Reason::DynamicCommand => "dynamic_command",
            Reason::UnsupportedConstruct => "unsupported_construct",
            Reason::Denied => "denied",
            Reason::ScopeDocument => "scope_document",
            Reason::PrivilegeEscalation => "privilege_escalation",
            Reason::ParseError => "parse_error",
        }
    }

    /// The reason whose code is `code`, if any.
    pub fn from_code(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == code)
    }

    /// Whether an allow-once grant may lift a violation of this reason.
    pub const fn grantable(self) -> bool {
        matches!(
            self,
            Reason::CommandNotAllowed
                | Reason::DangerousCommand
                | Reason::DirectoryNotInScope
                | Reason::PathNotInScope
                | Reason::SubcommandNotAllowed
        )
    }

    /// Whether the user may be offered the expansion menu at a shell command's refusal of
    /// this reason (one with a resource): the grantable ones, and `flag_not_allowed`, which
    /// Add to scope can lift by allowing the flag.
    pub const fn askable(self) -> bool {
        self.grantable() || matches!(self, Reason::FlagNotAllowed)
    }

    /// Whether a file tool's failure of this reason is a refusal by the scope (a `denied`
    /// event) rather than an error (an `error` event).
    pub const fn refusal(self) -> bool {
        matches!(
            self,
            Reason::BoundaryViolation
                | Reason::PathDenied
                | Reason::PathNotInScope
                | Reason::ScopeDocument
                | Reason::UntrustedScope
        )
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Serialized as its code, [`Reason::as_str`].
impl Serialize for Reason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl PartialEq<str> for Reason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_every_reason_in_rank_order_with_distinct_codes() {
        for w in Reason::ALL.windows(2) {
            assert!(w[0] < w[1], "{:?} {:?}", w[0], w[1]);
        }
        for r in Reason::ALL {
            assert_eq!(Reason::from_code(r.as_str()), Some(r));
            assert_eq!(serde_json::to_value(r).ok(), Some(r.as_str().into()));
        }
        assert_eq!(Reason::from_code("something_else"), None);
    }

    #[test]
    fn the_strictest_is_the_greatest() {
        assert_eq!(
            [Reason::PathNotInScope, Reason::ParseError, Reason::Denied]
                .into_iter()
                .max(),
            Some(Reason::ParseError)
        );
        assert!(Reason::ALL
            .iter()
            .filter(|r| r.askable())
            .all(|r| r.grantable() || *r == Reason::FlagNotAllowed));
    }
}
