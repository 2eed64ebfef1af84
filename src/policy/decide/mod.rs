//! A decision: `(command, directory, scope, grants) → Decision`, with evidence.
//!
//! Order (SPEC §3): parse and flatten ([`crate::shell`]), then one step per file, each a part
//! of the `Judge` that walks the command:
//!
//! | step | file | what it decides |
//! |---|---|---|
//! | 2-3 name | `name.rs` | each simple command's name, wrappers looked through, privilege, shells |
//! | 4 categorize | `categorize.rs` | the scope list it is in, the per-command rules |
//! | 5 effects | `argv.rs`, `effects.rs`, `programs.rs`, `git/` (`mod.rs`, `store.rs`), `readers.rs` | its words read as the program reads them (getopt); the paths its options and operands read, write or run; the trees and the git objects it reads whole |
//! | 6 scope | `scope.rs` | directories and paths against the scope; protected scope documents |
//! | 7 grants | `grants.rs` | allow-once grants, and the decision with its evidence |
//!
//! Every command is judged, not only the first; every violation is kept as evidence.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::policy::paths::{self, Access, Matcher};
use crate::scope::semantics;
use crate::scope::{Platform, Scope};
use crate::shell::{self, Context, Flat, SimpleCmd, WordInfo};
use crate::Reason;

mod argv;
mod categorize;
mod effects;
mod git;
mod grants;
mod name;
mod programs;
mod readers;
mod scope;

pub(crate) use name::SHELLS;

/// An allow-once grant: lets one call of `tool` on `resource` through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Grant {
    pub tool: String,
    pub resource: String,
}

/// The inputs of a decision besides the command.
pub struct Ctx<'a> {
    pub scope: &'a Scope,
    pub matcher: &'a Matcher,
    pub home: Option<&'a Path>,
    pub grants: &'a [Grant],
    pub tool: &'a str,
    /// The project root: what a scope entry naming a relative path (`./bin/x.sh`) is taken
    /// from.
    pub project_root: Option<&'a Path>,
    /// The command runs where every denied entry under the scope's directories is masked
    /// ([`crate::policy::request::Request::masked`]).
    pub masked: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CommandEvidence {
    pub name: String,
    pub argv: Vec<String>,
    pub category: Option<String>,
    /// The scope entry that matched (`read_only: git log`), or the built-in rule.
    pub rule: Option<String>,
    pub verdict: &'static str,
    pub reason: Option<&'static str>,
    /// Where it was found: `top_level`, `substitution`, `process_substitution`, `script`.
    pub context: &'static str,
    /// The wrappers it runs under (`xargs`, `find -exec`, `bash -c`).
    pub via: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PathEvidence {
    /// As written.
    pub path: String,
    /// Absolute, through symlinks.
    pub resolved: String,
    pub access: &'static str,
    /// `allowed`, `denied`, `out_of_scope`, `warning`, `unchecked`.
    pub verdict: &'static str,
    pub pattern: Option<String>,
    /// What named it: `operand of cat`, `redirect`, `option --output of git`.
    pub source: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Violation {
    pub reason: Reason,
    pub message: String,
    /// The command it concerns.
    pub command: Option<String>,
    /// What to ask for with `request_scope_expansion`.
    pub resource: String,
    /// `command` or `path`.
    pub validation_type: &'static str,
    /// Whether an allow-once grant may cover it ([`Reason::grantable`]).
    pub grantable: bool,
    /// Covered by a grant.
    pub granted: bool,
    /// For path violations: the access needed.
    pub access: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Decision {
    pub command: String,
    pub tool: String,
    pub allowed: bool,
    /// The code of the strictest violation no grant covered ([`Reason::as_str`]).
    pub reason: Option<&'static str>,
    /// Whether an allow-once grant may lift that violation ([`Reason::grantable`]).
    pub grantable: bool,
    /// Whether the user may be offered the expansion menu for it ([`Reason::askable`]).
    pub askable: bool,
    pub message: String,
    pub base_command: Option<String>,
    pub category: Option<String>,
    pub required_scope: &'static str,
    pub directory: String,
    pub allowed_patterns: Vec<String>,
    pub warnings: Vec<String>,
    pub commands: Vec<CommandEvidence>,
    pub paths: Vec<PathEvidence>,
    pub violations: Vec<Violation>,
    pub grants_used: Vec<Grant>,
    pub resource: Option<String>,
    pub validation_type: Option<&'static str>,
}

/// The verdict of refused evidence (a command or a path). The same word as the reason code
/// [`Reason::Denied`], but of another vocabulary (`allowed`, `denied`, `out_of_scope`, ...).
const DENIED: &str = "denied";

/// Most scope patterns a refusal's message lists; the evidence keeps them all.
const LISTED_PATTERNS: usize = 12;

/// The patterns a refusal's message shows the model: all of a small scope, the first
/// [`LISTED_PATTERNS`] of a large one (a scope of 1,000 patterns would otherwise put every
/// one of them in each refusal).
fn allowed_summary(patterns: &[String]) -> String {
    match patterns.len() {
        0 => "none".to_string(),
        n if n <= LISTED_PATTERNS => patterns.join(", "),
        n => format!(
            "{}, and {} more",
            patterns[..LISTED_PATTERNS].join(", "),
            n - LISTED_PATTERNS
        ),
    }
}

fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Category order: a command's category, most restrictive last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Category {
    Builtin,
    ReadOnly,
    SafeWrite,
    Dangerous,
}

impl Category {
    fn as_str(self) -> &'static str {
        match self {
            Category::Builtin | Category::ReadOnly => "read_only",
            Category::SafeWrite => "safe_write",
            Category::Dangerous => "dangerous",
        }
    }

    fn access(self) -> Access {
        match self {
            Category::Builtin | Category::ReadOnly => Access::Read,
            Category::SafeWrite | Category::Dangerous => Access::Write,
        }
    }
}

/// Decides on a shell command run in `directory` (absolute; resolved here through symlinks).
pub fn decide(ctx: &Ctx, command: &str, directory: &Path) -> Decision {
    let _memo = paths::memo();
    let dir = paths::resolve(directory).target;
    let flat = shell::flatten(command, &dir, ctx.home);
    let mut j = Judge::new(ctx, command, &dir);
    j.env_set = Some(env_set(&flat));
    j.flat(&flat, &[]);
    j.finish()
}

/// Decides on an argv-form command (`run_command`): no shell, the words are literal.
pub fn decide_argv(
    ctx: &Ctx,
    program: &str,
    args: &[String],
    directory: &Path,
    platform: Platform,
) -> Decision {
    let _memo = paths::memo();
    let dir = paths::resolve(directory).target;
    let display = std::iter::once(program.to_string())
        .chain(args.iter().map(|a| shell_words::quote(a).into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut j = Judge::new(ctx, &display, &dir);
    match crate::policy::rules::check_argv(ctx.scope, platform, program, args) {
        Err(v) => {
            let resource = program.to_string();
            j.violate(
                v.reason,
                v.message,
                Some(program.to_string()),
                resource,
                "command",
                None,
            );
        }
        // Allowed by the tool_commands table: judged as read_only for its directory, with
        // its effects (writes still need write scope).
        Ok(()) => j.argv_allowed = Some(program.to_string()),
    }
    let mut words = vec![WordInfo::literal(program)];
    words.extend(args.iter().map(|a| WordInfo::literal(a)));
    let cmd = SimpleCmd {
        words,
        assignments: vec![],
        redirects: vec![],
        cwds: Some(std::rc::Rc::from([dir.clone()])),
        context: Context::TopLevel,
        stdin_from: None,
    };
    j.simple(&cmd, &[]);
    j.finish()
}

/// The words of `args` that `program` reads as operands under the built-in semantics table,
/// its options each given its value as the program parses it (after the subcommand, for a
/// command that has them): what the option grammar leaves for the operand rules.
pub fn operands(program: &str, args: &[String]) -> Vec<String> {
    let words: Vec<WordInfo> = args.iter().map(|a| WordInfo::literal(a)).collect();
    let mut sem = semantics::builtin()
        .get(program)
        .unwrap_or_else(|| semantics::empty());
    let mut rest: &[WordInfo] = &words;
    if sem.subcommands {
        let items = argv::parse(sem, &words, true);
        let sub = items.iter().find_map(|i| match i {
            argv::Item::Operand { index, word } => Some((*index, word.shown().to_string())),
            _ => None,
        });
        let Some((at, sub)) = sub else {
            return Vec::new();
        };
        sem = sem
            .subcommand_semantics
            .get(&sub)
            .unwrap_or_else(|| semantics::empty());
        rest = &words[at + 1..];
    }
    argv::parse(sem, rest, false)
        .into_iter()
        .filter_map(|i| match i {
            argv::Item::Operand { word, .. } | argv::Item::RunTime { word, .. } => {
                Some(word.shown().to_string())
            }
            _ => None,
        })
        .collect()
}

struct Judge<'a> {
    ctx: &'a Ctx<'a>,
    command: String,
    dir: PathBuf,
    commands: Vec<CommandEvidence>,
    paths: Vec<PathEvidence>,
    warnings: Vec<String>,
    violations: Vec<Violation>,
    max_access: Option<Access>,
    max_category: Option<Category>,
    base: Option<String>,
    depth: usize,
    /// For `run_command`: the program the `tool_commands` table allowed.
    argv_allowed: Option<String>,
    /// The command whose output the simple command being judged reads through a pipe.
    stdin_from: Option<std::rc::Rc<SimpleCmd>>,
    /// The simple command being judged has a redirect that may give it another input.
    stdin_redirected: bool,
    /// The start points of the `find` whose `-exec` command is being judged: what `{}` names.
    runtime_roots: Option<Vec<WordInfo>>,
    /// The variables the command line sets where the engine sees it ([`env_set`]); `None` for
    /// `run_command`, which sets none.
    env_set: Option<Vec<(String, WordInfo)>>,
    /// What arithmetic evaluates and what the line sets at run time, over all its scripts.
    run_time: name::RunTimeValues,
}

/// Every `NAME=value` of a flattened command line: assignments, and words that set a variable
/// for the command they run or declare (`env NAME=v cmd`, `export NAME=v`).
fn env_set(flat: &Flat) -> Vec<(String, WordInfo)> {
    let mut out = Vec::new();
    for c in &flat.commands {
        for (name, value) in &c.assignments {
            out.push((name.clone(), value.clone()));
        }
        for w in c.words.iter().skip(1) {
            let Some((name, value)) = w.value.as_deref().and_then(|v| v.split_once('=')) else {
                continue;
            };
            if !name.is_empty()
                && name
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && !name.starts_with(|ch: char| ch.is_ascii_digit())
            {
                let value = if w.glob {
                    WordInfo {
                        raw: value.to_string(),
                        value: None,
                        glob: false,
                    }
                } else {
                    WordInfo::literal(value)
                };
                out.push((name.to_string(), value));
            }
        }
    }
    out
}

impl<'a> Judge<'a> {
    fn new(ctx: &'a Ctx<'a>, command: &str, dir: &Path) -> Self {
        Judge {
            ctx,
            command: command.trim().to_string(),
            dir: dir.to_path_buf(),
            commands: vec![],
            paths: vec![],
            warnings: vec![],
            violations: vec![],
            max_access: None,
            max_category: None,
            base: None,
            depth: 0,
            argv_allowed: None,
            stdin_from: None,
            stdin_redirected: false,
            runtime_roots: None,
            env_set: None,
            run_time: name::RunTimeValues::default(),
        }
    }

    fn violate(
        &mut self,
        reason: Reason,
        message: String,
        command: Option<String>,
        resource: String,
        vt: &'static str,
        access: Option<Access>,
    ) {
        let v = Violation {
            reason,
            message,
            command,
            resource,
            validation_type: vt,
            grantable: reason.grantable(),
            granted: false,
            access: access.map(Access::as_str),
        };
        if !self.violations.contains(&v) {
            self.violations.push(v);
        }
    }

    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    fn need(&mut self, a: Access) {
        self.max_access = Some(self.max_access.map_or(a, |m| m.max(a)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_list_at_most_twelve_patterns() {
        let p = |n: usize| (0..n).map(|i| format!("/p{i}/**")).collect::<Vec<_>>();
        assert_eq!(allowed_summary(&p(0)), "none");
        assert_eq!(allowed_summary(&p(2)), "/p0/**, /p1/**");
        assert_eq!(allowed_summary(&p(12)).matches(", ").count(), 11);
        let long = allowed_summary(&p(750));
        assert!(long.starts_with("/p0/**, /p1/**, "), "{long}");
        assert!(long.ends_with("/p11/**, and 738 more"), "{long}");
    }
}
