//! The command rules of seeds/001: a global blacklist, an allowed table, subcommands with
//! their own blacklist, and allowed flags. Used by `run_command` (argv form) through
//! `tool_commands`, and by `bash_tools.commands` for shell commands.

use crate::scope::{CommandRule, Platform, Scope};
use crate::Reason;

/// Why a command was refused, with a message the model can act on (C15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleViolation {
    /// `denied`, `command_not_allowed`, `subcommand_denied`, `subcommand_not_allowed`,
    /// `flag_not_allowed`.
    pub reason: Reason,
    pub message: String,
    /// The rule that refused it (`tool_commands.posix.blacklist.commands: rm`).
    pub rule: String,
}

/// Whether an argument is a flag on this platform (C09).
fn is_flag(arg: &str, platform: Platform) -> bool {
    match platform {
        Platform::Posix => arg.starts_with('-') && arg != "-" && arg.len() > 1,
        Platform::Windows => arg.starts_with('/') && arg.len() > 1,
    }
}

/// The flags an argument stands for: `--flag=value` is `--flag`; `-la` is `-l` and `-a`
/// (a cluster stops at the first flag that is allowed and takes the rest as its value).
fn flags_of(arg: &str, platform: Platform, allowed: &[String]) -> Vec<String> {
    if platform == Platform::Windows {
        return vec![arg.split(':').next().unwrap_or(arg).to_uppercase()];
    }
    if let Some(long) = arg.strip_prefix("--") {
        return vec![format!("--{}", long.split('=').next().unwrap_or(long))];
    }
    if allowed.iter().any(|f| f == arg) {
        return vec![arg.to_string()];
    }
    let mut out = Vec::new();
    for (i, c) in arg.char_indices().skip(1) {
        let f = format!("-{c}");
        let known = allowed.contains(&f);
        out.push(f);
        // `-n5`: the rest is the value of -n.
        if known
            && arg[i + c.len_utf8()..]
                .chars()
                .next()
                .is_some_and(|n| n.is_ascii_digit())
        {
            break;
        }
    }
    out
}

fn list(items: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let v: Vec<String> = items.into_iter().map(|s| s.as_ref().to_string()).collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

/// Checks flags and subcommands of one command against its rule (C03, C04, C07-C10).
pub fn check_rule(
    rule: &CommandRule,
    name: &str,
    args: &[String],
    platform: Platform,
) -> Result<(), RuleViolation> {
    let (rule, label, args) = if rule.has_subcommands {
        let Some(pos) = args.iter().position(|a| !is_flag(a, platform)) else {
            return Err(RuleViolation {
                reason: Reason::SubcommandNotAllowed,
                message: format!(
                    "`{name}` needs a subcommand; allowed: {}",
                    list(rule.subcommands.keys())
                ),
                rule: format!("{name}.subcommands"),
            });
        };
        let sub = &args[pos];
        if let Some(bl) = &rule.blacklist {
            if bl.subcommands.iter().any(|s| s == sub) {
                return Err(RuleViolation {
                    reason: Reason::SubcommandDenied,
                    message: format!("`{name} {sub}` is blacklisted (dangerous operation); it is never allowed. Allowed subcommands: {}", list(rule.subcommands.keys())),
                    rule: format!("{name}.blacklist.subcommands: {sub}"),
                });
            }
        }
        let Some(sub_rule) = rule.subcommands.get(sub) else {
            return Err(RuleViolation {
                reason: Reason::SubcommandNotAllowed,
                message: format!("`{name} {sub}` is not an allowed subcommand. Allowed: {}. Use list_allowed_commands for details.", list(rule.subcommands.keys())),
                rule: format!("{name}.subcommands"),
            });
        };
        let mut rest: Vec<String> = args[..pos].to_vec();
        rest.extend(args[pos + 1..].iter().cloned());
        (sub_rule, format!("{name} {sub}"), rest)
    } else {
        (rule, name.to_string(), args.to_vec())
    };
    let Some(allowed) = &rule.allowed_flags else {
        return Ok(());
    };
    let mut positional_only = false;
    for a in &args {
        if platform == Platform::Posix && a == "--" {
            positional_only = true;
            continue;
        }
        if positional_only || !is_flag(a, platform) {
            continue; // C10: positional arguments are checked loosely.
        }
        for f in flags_of(a, platform, allowed) {
            let ok = match platform {
                Platform::Windows => allowed.iter().any(|x| x.eq_ignore_ascii_case(&f)),
                Platform::Posix => allowed.contains(&f),
            };
            if !ok {
                return Err(RuleViolation {
                    reason: Reason::FlagNotAllowed,
                    message: format!(
                        "{label} flag '{f}' not allowed. Allowed flags: {}",
                        list(allowed)
                    ),
                    rule: format!("{label}.allowed_flags"),
                });
            }
        }
    }
    Ok(())
}

/// The whole seeds/001 check of an argv against `tool_commands.<platform>` (C05-C10).
pub fn check_argv(
    scope: &Scope,
    platform: Platform,
    command: &str,
    args: &[String],
) -> Result<(), RuleViolation> {
    let table = scope.tool_commands.for_platform(platform);
    let key = platform.as_str();
    if table.blacklist.commands.iter().any(|c| c == command) {
        return Err(RuleViolation {
            reason: Reason::Denied,
            message: format!(
                "Command '{command}' blacklisted: it is never allowed. Do not retry it."
            ),
            rule: format!("tool_commands.{key}.blacklist.commands: {command}"),
        });
    }
    let Some(rule) = table.allowed.get(command) else {
        return Err(RuleViolation {
            reason: Reason::CommandNotAllowed,
            message: format!(
                "Command '{command}' not allowed. Available: {}. Use list_allowed_commands() for details, or request_scope_expansion to ask the user.",
                list(table.allowed.keys())
            ),
            rule: format!("tool_commands.{key}.allowed"),
        });
    };
    check_rule(rule, command, args, platform)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_of_table() {
        let allowed: Vec<String> = ["-n", "-l", "-a"].iter().map(|s| s.to_string()).collect();
        for (arg, want) in [
            ("-la", vec!["-l", "-a"]),
            ("--color=auto", vec!["--color"]),
            ("-n5", vec!["-n"]),
            ("-n", vec!["-n"]),
        ] {
            assert_eq!(flags_of(arg, Platform::Posix, &allowed), want, "{arg}");
        }
        assert_eq!(flags_of("/n", Platform::Windows, &allowed), vec!["/N"]);
    }
}
