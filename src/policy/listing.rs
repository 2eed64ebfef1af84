//! The `list_allowed_commands` text (C11): the seeds/001 listing of the platform's command
//! table, then what `run_bash_command` allows in the scope in effect.

use std::fmt::Write;

use crate::scope::{Platform, Scope};

/// The listing for `scope` on `platform`.
pub fn list_allowed_commands(scope: &Scope, platform: Platform) -> String {
    let mut out = String::new();
    let table = scope.tool_commands.for_platform(platform);
    let _ = writeln!(out, "Platform: {}\n", platform.as_str());
    let _ = writeln!(
        out,
        "Available commands for run_command (a program and its arguments, no shell):\n"
    );
    for (name, rule) in &table.allowed {
        let _ = writeln!(
            out,
            "  {name}: {}",
            rule.description.as_deref().unwrap_or("")
        );
        if rule.has_subcommands {
            let _ = writeln!(out, "    Subcommands:");
            for (sub, r) in &rule.subcommands {
                let _ = writeln!(
                    out,
                    "      {sub}: {}",
                    r.description.as_deref().unwrap_or("")
                );
            }
        }
    }
    let bt = &scope.bash_tools;
    let c = &bt.categories;
    let _ = writeln!(out, "\nrun_bash_command (a shell command line; only these commands, whatever run_command lists):\n");
    let mut line = |label: &str, items: &[String]| {
        let text = if items.is_empty() {
            "(none)".to_string()
        } else {
            items.join(", ")
        };
        let _ = writeln!(out, "  {label}: {text}");
    };
    line("read_only (needs read scope)", &c.read_only);
    line("safe_write (needs write scope)", &c.safe_write);
    line(
        "dangerous (only when the user allows it, via request_scope_expansion)",
        &c.dangerous,
    );
    line("denied (never)", &bt.deny);
    let _ = writeln!(
        out,
        "\nCommands time out after {} seconds; output is cut at {} characters.",
        bt.timeout, bt.max_output_chars
    );
    out
}
