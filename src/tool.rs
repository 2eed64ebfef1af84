//! The tools the model is given, by name: the one place in the engine where a tool's name is
//! written. Elsewhere a tool is a [`Tool`]; its name comes from [`Tool::name`], and a name a
//! request carries is read back with [`Tool::from_name`]. (The elisp side names each tool
//! once too, in `lisp/gptel-scope-core.el`; `tests/owners.rs` checks both.)

/// A tool gptel-scope defines for gptel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// A shell command line, judged with the bash grammar.
    RunBashCommand,
    /// A program and its arguments, no shell.
    RunCommand,
    /// A command in a terminal session.
    ExecCommand,
    /// Input to a terminal session.
    WriteStdin,
    /// The commands the scope allows, as text.
    ListAllowedCommands,
    /// Lines of a file.
    ReadFile,
    /// The entries of a directory.
    ListDir,
    /// Lines matching a pattern.
    GrepFiles,
    /// A patch applied to files.
    ApplyPatch,
    /// What the session runs under (scope, module, sandbox).
    GetSystemInfo,
    /// A request to widen the scope, put to the user.
    RequestScopeExpansion,
    /// Whether a path may be read or written (an operation of the file tools, not a tool of
    /// the model's).
    CheckPath,
}

impl Tool {
    /// Every tool, in the order above.
    pub const ALL: [Tool; 12] = [
        Tool::RunBashCommand,
        Tool::RunCommand,
        Tool::ExecCommand,
        Tool::WriteStdin,
        Tool::ListAllowedCommands,
        Tool::ReadFile,
        Tool::ListDir,
        Tool::GrepFiles,
        Tool::ApplyPatch,
        Tool::GetSystemInfo,
        Tool::RequestScopeExpansion,
        Tool::CheckPath,
    ];

    /// The file tools the module answers (`crate::fs::tools::call`).
    pub const FILE_TOOLS: [Tool; 5] = [
        Tool::ReadFile,
        Tool::ListDir,
        Tool::GrepFiles,
        Tool::ApplyPatch,
        Tool::CheckPath,
    ];

    /// The name the model calls the tool by.
    pub const fn name(self) -> &'static str {
        match self {
            Tool::RunBashCommand => "run_bash_command",
            Tool::RunCommand => "run_command",
            Tool::ExecCommand => "exec_command",
            Tool::WriteStdin => "write_stdin",
            Tool::ListAllowedCommands => "list_allowed_commands",
            Tool::ReadFile => "read_file",
            Tool::ListDir => "list_dir",
            Tool::GrepFiles => "grep_files",
            Tool::ApplyPatch => "apply_patch",
            Tool::GetSystemInfo => "get_system_info",
            Tool::RequestScopeExpansion => "request_scope_expansion",
            Tool::CheckPath => "check_path",
        }
    }

    /// The tool called `name`, if it is one of these.
    pub fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the tool writes the paths it is given.
    pub const fn writes_paths(self) -> bool {
        matches!(self, Tool::ApplyPatch)
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_as_its_tool() {
        for t in Tool::ALL {
            assert_eq!(Tool::from_name(t.name()), Some(t));
        }
        assert_eq!(Tool::from_name("write_file"), None);
        let mut names: Vec<_> = Tool::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Tool::ALL.len());
    }
}
