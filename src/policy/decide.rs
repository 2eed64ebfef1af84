//! A decision: `(command, directory, scope, grants) → Decision`, with evidence.
//!
//! Order (SPEC §3): parse and flatten, name every simple command (wrappers looked through),
//! categorize, apply per-command rules, collect effects (paths read, written, programs run),
//! check directories and paths against the scope, then let allow-once grants cover what they
//! may. Every command is judged, not only the first.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::policy::paths::{self, Access, Matcher, PathVerdict};
use crate::scope::{Platform, Scope};
use crate::scope::semantics::{self, CommandSemantics, OperandKind};
use crate::shell::{self, Context, Flat, RedirKind, SimpleCmd, WordInfo};

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
    pub reason: &'static str,
    pub message: String,
    /// The command it concerns.
    pub command: Option<String>,
    /// What to ask for with `request_scope_expansion`.
    pub resource: String,
    /// `command` or `path`.
    pub validation_type: &'static str,
    /// Whether an allow-once grant may cover it.
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
    pub reason: Option<&'static str>,
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

/// Most scope patterns a refusal's message lists; the evidence keeps them all.
const LISTED_PATTERNS: usize = 12;

/// The patterns a refusal's message shows the model: all of a small scope, the first
/// [`LISTED_PATTERNS`] of a large one (a scope of 1,000 patterns would otherwise put every
/// one of them in each refusal).
fn allowed_summary(patterns: &[String]) -> String {
    match patterns.len() {
        0 => "none".to_string(),
        n if n <= LISTED_PATTERNS => patterns.join(", "),
        n => format!("{}, and {} more", patterns[..LISTED_PATTERNS].join(", "), n - LISTED_PATTERNS),
    }
}

/// Reason codes no grant can cover.
fn grantable(reason: &str) -> bool {
    matches!(
        reason,
        "command_not_allowed" | "dangerous_command" | "directory_not_in_scope" | "path_not_in_scope" | "subcommand_not_allowed"
    )
}

/// Which violation a decision reports first: what no grant can fix before what the user
/// may allow, and commands before the paths they touch.
fn severity(reason: &str) -> usize {
    const ORDER: &[&str] = &[
        "parse_error", "privilege_escalation", "scope_document", "denied", "unsupported_construct", "dynamic_command", "path_denied",
        "flag_not_allowed", "subcommand_denied", "dangerous_command", "command_not_allowed", "subcommand_not_allowed",
        "directory_not_in_scope", "path_not_in_scope",
    ];
    ORDER.iter().position(|r| *r == reason).unwrap_or(ORDER.len())
}

const PRIVILEGE: &[&str] = &["sudo", "doas", "su", "pkexec", "run0", "sudoedit"];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"];
/// Builtins that run nothing and touch no file: implicitly read_only.
const INERT_BUILTINS: &[&str] = &[
    "cd", "pushd", "popd", "dirs", "true", "false", ":", "test", "[", "exit", "return", "shift", "wait", "break",
    "continue", "set", "unset", "pwd",
];
/// Environment variables that change which program runs or how a shell starts.
const DANGEROUS_VARS: &[&str] = &[
    "PATH", "IFS", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE",
    "PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "BROWSER",
    "SSH_ASKPASS", "SUDO_ASKPASS", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
    "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "MAKEFLAGS",
    "TAR_OPTIONS", "GREP_OPTIONS", "RIPGREP_CONFIG_PATH", "SHELL",
    // Loaders and tool hooks that name a program, library or startup file.
    "GCONV_PATH", "LOCPATH", "NLSPATH", "OPENSSL_CONF", "OPENSSL_ENGINES", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC",
    "GOFLAGS", "CC", "CXX", "VIMINIT", "EXINIT", "MYVIMRC", "BASH_XTRACEFD", "BASH_LOADABLES_PATH",
    "LESS", "LESSKEY", "LESSKEYIN", "PYTHONBREAKPOINT", "PERL5DB", "HISTFILE", "INPUTRC",
];
const DANGEROUS_VAR_PREFIXES: &[&str] = &["LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG", "NPM_CONFIG_"];
/// `GIT_*` variables that only label commits.
const SAFE_GIT_VARS: &[&str] = &[
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT",
];

fn dangerous_var(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name)
        || DANGEROUS_VAR_PREFIXES.iter().any(|p| name.starts_with(p))
        || (name.starts_with("GIT_") && !SAFE_GIT_VARS.contains(&name))
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
    j.flat(&flat, &[]);
    j.finish()
}

/// Decides on an argv-form command (`run_command`): no shell, the words are literal.
pub fn decide_argv(ctx: &Ctx, program: &str, args: &[String], directory: &Path, platform: Platform) -> Decision {
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
            j.violate(v.reason, v.message, Some(program.to_string()), resource, "command", None);
        }
        // Allowed by the tool_commands table: judged as read_only for its directory, with
        // its effects (writes still need write scope).
        Ok(()) => j.argv_allowed = Some(program.to_string()),
    }
    let mut words = vec![WordInfo::literal(program)];
    words.extend(args.iter().map(|a| WordInfo::literal(a)));
    let cmd = SimpleCmd { words, assignments: vec![], redirects: vec![], cwds: Some(std::rc::Rc::from([dir.clone()])), context: Context::TopLevel };
    j.simple(&cmd, &[]);
    j.finish()
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
        }
    }

    fn violate(&mut self, reason: &'static str, message: String, command: Option<String>, resource: String, vt: &'static str, access: Option<Access>) {
        let v = Violation {
            reason,
            message,
            command,
            resource,
            validation_type: vt,
            grantable: grantable(reason),
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

    fn flat(&mut self, flat: &Flat, via: &[String]) {
        for p in &flat.problems {
            let what = if via.is_empty() { String::new() } else { format!(" (inside {})", via.join(" → ")) };
            self.violate(p.reason(), format!("{}{what}", p.message()), None, self.command.clone(), "command", None);
        }
        if self.base.is_none() {
            let first = flat
                .commands
                .iter()
                .find(|c| c.context == Context::TopLevel && !c.words.is_empty())
                .or_else(|| flat.commands.iter().find(|c| !c.words.is_empty()));
            self.base = first.and_then(|c| c.words.first()).map(WordInfo::display);
        }
        for c in &flat.commands {
            self.simple(c, via);
        }
    }

    /// Judges one simple command: assignments, redirects, then the command itself.
    fn simple(&mut self, c: &SimpleCmd, via: &[String]) {
        let label = || c.words.iter().map(WordInfo::display).collect::<Vec<_>>().join(" ");
        if !c.assignments.is_empty() {
            let label = label();
            for (name, _) in &c.assignments {
                self.assignment(name, &label);
            }
        }
        let cwds: &[PathBuf] = match &c.cwds {
            Some(d) => d,
            None => {
                let label = label();
                self.violate(
                    "unsupported_construct",
                    format!("`{label}` runs after a `cd` to a directory that cannot be known before running; use a literal directory"),
                    Some(label.clone()),
                    self.command.clone(),
                    "command",
                    None,
                );
                return;
            }
        };
        for r in &c.redirects {
            let Some(target) = &r.target else { continue };
            let access = match r.kind {
                RedirKind::Read => Access::Read,
                RedirKind::Write | RedirKind::Append | RedirKind::ReadWrite => Access::Write,
                RedirKind::Dup | RedirKind::Data => continue,
            };
            self.path_effect(target, access, cwds, "redirect", true);
        }
        if c.words.is_empty() {
            return;
        }
        let ctx_name = match c.context {
            Context::TopLevel => "top_level",
            Context::Substitution => "substitution",
            Context::ProcessSubstitution => "process_substitution",
            Context::Script => "script",
        };
        self.argv(&c.words, cwds, via, ctx_name, false);
    }

    fn assignment(&mut self, name: &str, label: &str) {
        if dangerous_var(name) {
            self.violate(
                "denied",
                format!("setting {name} can make commands run other programs or read other files; it is not allowed. Run the command without it."),
                Some(if label.is_empty() { format!("{name}=...") } else { label.to_string() }),
                name.to_string(),
                "command",
                None,
            );
        }
    }

    /// Judges an argv: the name, wrappers, category, rules and effects.
    fn argv(&mut self, words: &[WordInfo], cwds: &[PathBuf], via: &[String], context: &'static str, under_replace: bool) {
        let Some(first) = words.first() else { return };
        let argv_display: Vec<String> = words.iter().map(WordInfo::display).collect();
        let label = argv_display.join(" ");
        let mut ev = CommandEvidence {
            name: first.display(),
            argv: argv_display,
            category: None,
            rule: None,
            verdict: "allowed",
            reason: None,
            context,
            via: via.to_vec(),
        };
        let before = self.violations.len();
        let slot = self.commands.len();
        // Holds the place (commands found inside come after); filled in at the end.
        self.commands.push(CommandEvidence { name: String::new(), argv: Vec::new(), category: None, rule: None, verdict: "allowed", reason: None, context, via: Vec::new() });
        self.argv_inner(words, cwds, via, context, under_replace, &label, &mut ev);
        if let Some(v) = self.violations[before..].first() {
            ev.verdict = "denied";
            ev.reason = Some(v.reason);
        }
        if let Some(s) = self.commands.get_mut(slot) {
            *s = ev;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn argv_inner(&mut self, words: &[WordInfo], cwds: &[PathBuf], via: &[String], context: &'static str, under_replace: bool, label: &str, ev: &mut CommandEvidence) {
        let Some(name) = words.first().and_then(WordInfo::exact) else {
            let raw = words.first().map(|w| w.raw.clone()).unwrap_or_default();
            self.violate(
                "dynamic_command",
                format!("the command name `{raw}` is built at run time (variable, substitution, glob or brace expansion); write the command name literally"),
                Some(label.to_string()),
                raw,
                "command",
                None,
            );
            return;
        };
        let args = &words[1..];
        let base = basename(name);
        let bt = &self.ctx.scope.bash_tools;

        if PRIVILEGE.contains(&base) {
            self.violate(
                "privilege_escalation",
                format!("`{base}` runs commands with elevated privileges; gptel-scope never does that"),
                Some(label.to_string()),
                base.to_string(),
                "command",
                None,
            );
            return;
        }
        let sub_words = self.subcommand_words(base, args);
        if let Some(entry) = bt.deny.iter().find(|e| entry_matches(e, base, &sub_words)) {
            ev.rule = Some(format!("deny: {entry}"));
            self.violate(
                "denied",
                format!("`{entry}` is on the scope's deny list: it is never allowed (security policy). Do not retry it; achieve the goal with allowed commands."),
                Some(label.to_string()),
                entry.clone(),
                "command",
                None,
            );
            return;
        }
        if name.contains('/') {
            // A path runs that file, not the command of that name.
            match self.category_of(name, &sub_words) {
                Some((cat, entry)) => {
                    ev.category = Some(cat.as_str().into());
                    ev.rule = Some(entry);
                    self.categorized(cat, name, args, cwds, label);
                }
                None => {
                    let dangerous = bt.categories.dangerous.iter().find(|e| entry_matches(e, base, &sub_words)).cloned();
                    if let Some(e) = dangerous {
                        ev.category = Some("dangerous".into());
                        self.dangerous(&e, label);
                        return;
                    }
                    self.violate(
                        "command_not_allowed",
                        format!("`{name}` runs a file by its path; only commands named in the scope may run (a path-qualified name must be listed exactly). Use the bare command name, or call request_scope_expansion with tool_name \"{}\" and resource \"{name}\".", self.ctx.tool),
                        Some(label.to_string()),
                        name.to_string(),
                        "command",
                        None,
                    );
                }
            }
            return;
        }

        // Shell constructs.
        if matches!(base, "eval" | "source" | "." | "alias" | "trap" | "function") {
            let key = match base {
                "." => "source",
                b => b,
            };
            if !bt.allow_constructs.iter().any(|c| c == key) {
                self.violate(
                    "unsupported_construct",
                    format!("`{base}` runs text that cannot be judged before it runs; run the commands directly instead"),
                    Some(label.to_string()),
                    base.to_string(),
                    "command",
                    None,
                );
                return;
            }
            if key == "eval" {
                let script: Option<Vec<&str>> = args.iter().map(WordInfo::exact).collect();
                match script {
                    Some(parts) => self.script(&parts.join(" "), cwds, via, "eval"),
                    None => self.violate("dynamic_command", "`eval` of text built at run time cannot be judged".into(), Some(label.to_string()), base.to_string(), "command", None),
                }
                return;
            }
            ev.category = Some("read_only".into());
            ev.rule = Some(format!("allow_constructs: {key}"));
            self.directory_scope(Category::ReadOnly, cwds, label);
            return;
        }

        // Wrappers: judged themselves, then what they run.
        match base {
            "builtin" => return self.wrapped(words, 1, cwds, via, "builtin", context, under_replace),
            "command" => {
                let mut i = 0;
                let mut lookup = false;
                while let Some(a) = args.get(i).and_then(WordInfo::exact) {
                    if a == "--" {
                        i += 1;
                        break;
                    }
                    if !a.starts_with('-') || a == "-" {
                        break;
                    }
                    if a.contains('v') || a.contains('V') {
                        lookup = true;
                    }
                    i += 1;
                }
                if lookup {
                    ev.category = Some("read_only".into());
                    ev.rule = Some("builtin: command -v".into());
                    self.directory_scope(Category::Builtin, cwds, label);
                    return;
                }
                return self.wrapped(words, 1 + i, cwds, via, "command", context, under_replace);
            }
            "exec" => {
                let mut i = 0;
                while let Some(a) = args.get(i).and_then(WordInfo::exact) {
                    if a == "-a" {
                        i += 2;
                    } else if a.starts_with('-') {
                        i += 1;
                    } else {
                        break;
                    }
                }
                if args.len() <= i {
                    self.directory_scope(Category::Builtin, cwds, label);
                    return;
                }
                return self.wrapped(words, 1 + i, cwds, via, "exec", context, under_replace);
            }
            "nohup" => return self.wrapped(words, 1, cwds, via, "nohup", context, under_replace),
            "time" => {
                let skip = self.skip_options(args, &["-f", "--format", "-o", "--output"], |j, opt, val| {
                    if opt == "-o" || opt == "--output" {
                        j.path_effect(val, Access::Write, cwds, "option -o of time", true);
                    }
                });
                return self.wrapped(words, 1 + skip, cwds, via, "time", context, under_replace);
            }
            "nice" => {
                let skip = self.skip_options(args, &["-n", "--adjustment"], |_, _, _| {});
                return self.wrapped(words, 1 + skip, cwds, via, "nice", context, under_replace);
            }
            "stdbuf" => {
                let skip = self.skip_options(args, &["-i", "-o", "-e", "--input", "--output", "--error"], |_, _, _| {});
                return self.wrapped(words, 1 + skip, cwds, via, "stdbuf", context, under_replace);
            }
            "timeout" => {
                let skip = self.skip_options(args, &["-s", "--signal", "-k", "--kill-after"], |_, _, _| {});
                // The duration comes first.
                return self.wrapped(words, 2 + skip, cwds, via, "timeout", context, under_replace);
            }
            "env" => return self.env(words, cwds, via, context, label, ev),
            "xargs" => return self.xargs(words, cwds, via, context, label),
            "find" => {
                if let Some((cat, entry)) = self.category_of(name, &sub_words) {
                    ev.category = Some(cat.as_str().into());
                    ev.rule = Some(entry);
                    self.max_category = Some(self.max_category.map_or(cat, |m| m.max(cat)));
                    self.directory_scope(cat, cwds, label);
                    self.find(args, cwds, via, label);
                } else {
                    self.not_allowed(name, &sub_words, label, ev);
                }
                return;
            }
            _ => {}
        }
        if SHELLS.contains(&base) {
            return self.shell(name, words, cwds, via, under_replace, label, ev);
        }

        // Declarations: their NAME=VALUE arguments are assignments.
        if matches!(base, "export" | "declare" | "typeset" | "local" | "readonly") {
            for a in args {
                // `-n` makes a name reference: later assignments then set whatever it names.
                if matches!(base, "declare" | "typeset" | "local")
                    && a.exact().is_some_and(|v| v.starts_with('-') && !v.starts_with("--") && v.contains('n'))
                {
                    self.violate(
                        "unsupported_construct",
                        format!("`{label}`: a name reference (-n) lets a later assignment set any variable; it is not allowed"),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    );
                }
                if a.exact().is_some_and(|v| v.split_once('=').map_or(v, |(n, _)| n).contains(['[', '`', '$'])) {
                    self.violate(
                        "unsupported_construct",
                        format!("`{label}`: a declared name with a subscript or expansion is evaluated by the shell; it is not allowed"),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    );
                }
                match a.exact() {
                    Some(v) if v.contains('=') && !v.starts_with('-') => {
                        let (name, value) = v.split_once('=').unwrap_or((v, ""));
                        self.assignment(name.trim_end_matches('+'), label);
                        if value.contains("$(") || value.contains('`') {
                            self.violate(
                                "unsupported_construct",
                                format!("the value of {name} holds command-substitution syntax that a later expansion could run"),
                                Some(label.to_string()),
                                name.to_string(),
                                "command",
                                None,
                            );
                        }
                    }
                    Some(_) => {}
                    None => self.violate(
                        "dynamic_command",
                        format!("`{label}`: a declaration built at run time cannot be judged"),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    ),
                }
            }
            ev.category = Some("read_only".into());
            ev.rule = Some(format!("builtin: {base}"));
            self.directory_scope(Category::Builtin, cwds, label);
            return;
        }
        // An ordinary command.
        if INERT_BUILTINS.contains(&base) {
            // `test -v NAME`, `unset NAME` evaluate array subscripts: `test -v 'a[$(cmd)]'` runs cmd.
            if matches!(base, "test" | "[" | "unset")
                && args.iter().any(|a| a.value.as_deref().is_some_and(crate::shell::holds_substitution_text))
            {
                self.violate(
                    "unsupported_construct",
                    format!("`{label}`: {base} evaluates subscripts, and an argument holds command-substitution syntax"),
                    Some(label.to_string()),
                    base.to_string(),
                    "command",
                    None,
                );
            }
            ev.category = Some("read_only".into());
            ev.rule = Some(format!("builtin: {base}"));
            self.directory_scope(Category::Builtin, cwds, label);
            if matches!(base, "cd" | "pushd") {
                if let Some(t) = args.iter().find(|w| !matches!(w.exact(), Some(s) if s.starts_with('-'))) {
                    self.path_effect(t, Access::Read, cwds, &format!("directory of {base}"), true);
                }
            }
            return;
        }
        let Some((cat, entry)) = self.category_of(name, &sub_words) else {
            self.not_allowed(name, &sub_words, label, ev);
            return;
        };
        ev.category = Some(cat.as_str().into());
        ev.rule = Some(entry.clone());
        if cat == Category::Dangerous {
            let bare = entry.strip_prefix("dangerous: ").unwrap_or(&entry).to_string();
            self.dangerous(&bare, label);
        }
        self.rules(name, args, label);
        if base == "git" {
            self.git_denied_paths(args, cwds);
            self.git_worktree_writes(args, cwds, label);
        }
        self.categorized(cat, name, args, cwds, label);
    }

    /// Git subcommands that write the work tree (`git checkout -- scope.yml`, `git restore
    /// .`): a pathspec naming a scope document, or a directory holding a protected one, is a
    /// write to it. (Without a pathspec they write what the commits hold: a document changed
    /// so is no longer the approved one, and does not apply.)
    fn git_worktree_writes(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        const WRITERS: &[&str] = &[
            "checkout", "restore", "reset", "stash", "clean", "rm", "mv", "merge", "pull", "rebase", "cherry-pick", "revert",
            "switch", "read-tree", "checkout-index", "worktree",
        ];
        let words = self.subcommand_words("git", args);
        let Some(sub) = words.first().copied() else { return };
        if matches!(sub, "apply" | "am") {
            self.git_patch_writes(sub, args, cwds, label);
            return;
        }
        if !WRITERS.contains(&sub) {
            return;
        }
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else { return };
        for w in &args[at + 1..] {
            let Some(v) = w.exact() else { continue };
            if v.starts_with('-') || v.is_empty() {
                continue;
            }
            let v = v.trim_start_matches(":/");
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                let hit = self.ctx.matcher.scope_document(&r).or_else(|| self.ctx.matcher.protected_below(&r.target).cloned());
                if let Some(doc) = hit {
                    self.violate(
                        "scope_document",
                        paths::scope_document_message(&format!("`git {sub}` of `{v}`"), &r.target, &doc.to_string_lossy()),
                        Some(label.to_string()),
                        r.target.to_string_lossy().into_owned(),
                        "path",
                        Some(Access::Write),
                    );
                }
            }
        }
    }

    /// `git apply` and `git am` write the files a patch names, which the command line does not
    /// show: refused where a scope document lies in what they may write (`git apply`: the
    /// working directory and below, as git ignores paths outside it from a subdirectory;
    /// `git am`: the whole work tree). `git apply` that writes no file (`--cached`, `--check`,
    /// `--stat`, `--numstat`, `--summary`) is not a write of the work tree.
    fn git_patch_writes(&mut self, sub: &str, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else { return };
        let flags: Vec<&str> = args[at + 1..].iter().filter_map(WordInfo::exact).take_while(|s| *s != "--").collect();
        let index_only = sub == "apply"
            && flags.iter().any(|f| matches!(*f, "--cached" | "--check" | "--stat" | "--numstat" | "--summary"))
            && !flags.contains(&"--index");
        if index_only {
            return;
        }
        for d in cwds {
            let r = paths::resolve(d);
            let top = if sub == "am" { git_top(&r.target) } else { r.target.clone() };
            if let Some(doc) = self.ctx.matcher.protected_below(&top).cloned() {
                let how = format!(
                    "`git {sub}` writes the files its patch names, which are not seen, into {}, which holds it: use the apply_patch tool, which judges every file it writes",
                    top.display()
                );
                self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
            }
        }
    }

    /// Writes that reach a protected file without naming it: a copy, move or link into a
    /// destination directory (`cp x/scope.yml .`), a removal or move of a directory holding
    /// one (`rm -r .`, `mv dir y`), a new hard link to one (`ln scope.yml x`, whose writes
    /// would change it), and writes of names the command does not show into a directory
    /// holding one (`tar x`, `unzip`, `wget`).
    #[allow(clippy::too_many_arguments)]
    fn protected_reach(&mut self, base: &str, rest: &[WordInfo], files: &[&WordInfo], kind: OperandKind, cwd_write: bool, cwds: &[PathBuf], label: &str) {
        let flags: Vec<&str> = rest.iter().filter_map(WordInfo::exact).take_while(|s| *s != "--").filter(|s| s.starts_with('-') && *s != "-").collect();
        let short = |c: char| flags.iter().any(|f| !f.starts_with("--") && f[1..].contains(c));
        let long = |l: &str| flags.iter().any(|f| *f == l || f.strip_prefix(l).is_some_and(|r| r.starts_with('=')));
        let hard_link = (base == "ln" && !short('s') && !long("--symbolic")) || (base == "cp" && (short('l') || long("--link")));
        let n = files.len();
        // `cp -t DIR FILE...`: each file lands in DIR under its own name.
        let mut target_dir: Option<&str> = None;
        for (k, w) in rest.iter().enumerate() {
            match w.exact() {
                Some("--") => break,
                Some("-t") => target_dir = rest.get(k + 1).and_then(|v| v.value.as_deref()),
                Some(s) if s.starts_with("--target-directory=") => target_dir = Some(&s["--target-directory=".len()..]),
                Some(s) if s.starts_with("-t") && s.len() > 2 && matches!(base, "cp" | "mv" | "ln" | "install") => target_dir = Some(&s[2..]),
                _ => {}
            }
        }
        if let Some(dir) = target_dir.filter(|_| matches!(base, "cp" | "mv" | "ln" | "install")) {
            for d in cwds {
                let into = d.join(dir);
                for src in files.iter() {
                    if let Some(name) = src.value.as_deref().and_then(|s| Path::new(s).file_name()) {
                        let dest = into.join(name).to_string_lossy().into_owned();
                        self.path_effect(&WordInfo::literal(&dest), Access::Write, &[d.clone()], &format!("operand of {base}, into {dir}"), true);
                    }
                }
            }
        }
        let into_dir = matches!(kind, OperandKind::LastWrite | OperandKind::AllWrite) && n > 1 && target_dir.is_none();
        let removes = matches!(kind, OperandKind::Write | OperandKind::AllWrite);
        for (k, f) in files.iter().enumerate() {
            let Some(v) = f.value.as_deref() else { continue };
            let last = k + 1 == n;
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                if into_dir && last {
                    if paths::is_dir(&r.target) {
                        for src in &files[..k] {
                            if let Some(name) = src.value.as_deref().and_then(|s| Path::new(s).file_name()) {
                                let dest = r.target.join(name).to_string_lossy().into_owned();
                                self.path_effect(&WordInfo::literal(&dest), Access::Write, &[d.clone()], &format!("operand of {base}, into {}", r.target.display()), true);
                            }
                        }
                    }
                    continue;
                }
                if base == "ln" && n == 1 {
                    // `ln -s TARGET` makes a link named like TARGET in the directory.
                    if let Some(name) = Path::new(v).file_name() {
                        let dest = d.join(name).to_string_lossy().into_owned();
                        self.path_effect(&WordInfo::literal(&dest), Access::Write, &[d.clone()], &format!("operand of {base}, the link it makes"), true);
                    }
                }
                let hit = if hard_link && (!last || n == 1) {
                    self.ctx.matcher.scope_document(&r).map(|doc| (doc, "would make another name of it, through which it could be written"))
                } else if removes {
                    self.ctx.matcher.protected_below(&r.target).cloned().map(|doc| (doc, "would replace or remove what lies below it"))
                } else {
                    None
                };
                if let Some((doc, how)) = hit {
                    self.write_reaches_scope_document(&format!("`{v}` (operand of {base})"), &doc, how, label);
                }
            }
        }
        // Programs that write files named by their input (an archive's members, a URL's
        // name): any of them could be a scope document.
        const UNNAMED_WRITERS: &[&str] = &["tar", "bsdtar", "unzip", "7z", "7za", "unrar", "cpio", "ar", "wget", "curl", "patch"];
        if cwd_write && UNNAMED_WRITERS.contains(&base) {
            for d in cwds {
                let r = paths::resolve(d);
                if let Some(doc) = self.ctx.matcher.protected_below(&r.target).cloned() {
                    let how = format!(
                        "`{base}` writes files it does not name into {}, which holds it: run it in a directory that holds no scope document",
                        r.target.display()
                    );
                    self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
                }
            }
        }
    }

    /// Git prints files from its object store: `REV:PATH` and pathspecs after `--` must not
    /// name a denied path (`git show HEAD:.env`). Only deny patterns apply here: the history
    /// of an in-scope repository is readable like its files.
    fn git_denied_paths(&mut self, args: &[WordInfo], cwds: &[PathBuf]) {
        let mut after_dd = false;
        for w in args {
            let Some(v) = w.exact() else { continue };
            let path = if after_dd {
                Some(v)
            } else if v == "--" {
                after_dd = true;
                None
            } else if !v.starts_with('-') {
                v.split_once(':').map(|(_, p)| p.split_once(':').filter(|(n, _)| n.len() == 1).map_or(p, |(_, q)| q))
            } else {
                None
            };
            let Some(path) = path.filter(|p| !p.is_empty()) else { continue };
            for d in cwds {
                let r = paths::resolve(&d.join(path.trim_start_matches(":/")));
                if let PathVerdict::Denied(p) = self.ctx.matcher.check(&r, Access::Read) {
                    self.violate(
                        "path_denied",
                        format!("`{v}` (git path) names {} which matches the deny pattern `{p}`; it is never allowed", r.target.display()),
                        None,
                        r.target.to_string_lossy().into_owned(),
                        "path",
                        Some(Access::Read),
                    );
                }
            }
        }
    }

    fn not_allowed(&mut self, name: &str, sub_words: &[&str], label: &str, ev: &mut CommandEvidence) {
        let base = basename(name);
        if let Some(e) = self.ctx.scope.bash_tools.categories.dangerous.iter().find(|e| entry_matches(e, base, sub_words)).cloned() {
            ev.category = Some("dangerous".into());
            self.dangerous(&e, label);
            return;
        }
        let resource = match sub_words.first() {
            Some(s) if self.semantics(base).is_some_and(|s| s.subcommands) => format!("{name} {s}"),
            _ => name.to_string(),
        };
        self.violate(
            "command_not_allowed",
            format!(
                "`{resource}` is not in any category of the scope (read_only, safe_write, dangerous). Use an allowed command (list_allowed_commands shows them), or call request_scope_expansion with tool_name \"{}\", resource \"{resource}\" and your reason.",
                self.ctx.tool
            ),
            Some(label.to_string()),
            resource,
            "command",
            None,
        );
    }

    fn dangerous(&mut self, entry: &str, label: &str) {
        self.violate(
            "dangerous_command",
            format!(
                "`{entry}` is a dangerous command: it runs only when the user allows it. Call request_scope_expansion with tool_name \"{}\", resource \"{label}\" and your reason, then retry.",
                self.ctx.tool
            ),
            Some(label.to_string()),
            label.to_string(),
            "command",
            Some(Access::Write),
        );
    }

    /// The category entry matching a command, most specific first; on a tie the more
    /// restrictive category.
    fn category_of(&self, name: &str, sub_words: &[&str]) -> Option<(Category, String)> {
        if self.argv_allowed.as_deref() == Some(name) {
            return Some((Category::ReadOnly, format!("tool_commands: {name}")));
        }
        let c = &self.ctx.scope.bash_tools.categories;
        let base = basename(name);
        let mut best: Option<(usize, Category, String)> = None;
        for (cat, list) in [(Category::ReadOnly, &c.read_only), (Category::SafeWrite, &c.safe_write), (Category::Dangerous, &c.dangerous)] {
            for e in list {
                let key = if cat == Category::Dangerous { base } else { name };
                if entry_matches(e, key, sub_words) {
                    let len = e.split_whitespace().count();
                    let better = match &best {
                        None => true,
                        Some((l, bc, _)) => len > *l || (len == *l && cat > *bc),
                    };
                    if better {
                        best = Some((len, cat, format!("{}: {e}", cat.as_str())));
                    }
                }
            }
        }
        best.map(|(_, c, e)| (c, e))
    }

    /// The words after a command's global options (for `git -C x log` → `log ...`).
    fn subcommand_words<'w>(&self, base: &str, args: &'w [WordInfo]) -> Vec<&'w str> {
        let sem = self.semantics(base);
        let mut out = Vec::new();
        let mut i = 0;
        let skip_globals = sem.is_some_and(|s| s.subcommands);
        while i < args.len() {
            let w = args[i].shown();
            if skip_globals && out.is_empty() && w.starts_with('-') && w != "-" && w != "--" {
                let takes = sem.is_some_and(|s| s.global_value_options.iter().chain(&s.directory_options).any(|o| o == w));
                i += if takes { 2 } else { 1 };
                continue;
            }
            out.push(w);
            i += 1;
            if out.len() >= 3 {
                break;
            }
        }
        out
    }

    fn semantics(&self, base: &str) -> Option<&'a CommandSemantics> {
        self.ctx.scope.semantics.get(base).or_else(|| semantics::builtin().get(base))
    }

    /// Per-command rules of `bash_tools.commands` (seeds/001 schema).
    fn rules(&mut self, name: &str, args: &[WordInfo], label: &str) {
        let Some(rule) = self.ctx.scope.bash_tools.commands.get(basename(name)) else { return };
        let argv: Vec<String> = args.iter().map(WordInfo::display).collect();
        if let Err(v) = crate::policy::rules::check_rule(rule, basename(name), &argv, Platform::Posix) {
            self.violate(v.reason, v.message, Some(label.to_string()), name.to_string(), "command", None);
        }
    }

    /// A categorized command: its directory must be in the category's scope; then its
    /// effects.
    fn categorized(&mut self, cat: Category, name: &str, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        self.max_category = Some(self.max_category.map_or(cat, |m| m.max(cat)));
        self.directory_scope(cat, cwds, label);
        let base = basename(name);
        let sem: &'a CommandSemantics = self.semantics(base).unwrap_or_else(|| semantics::empty());
        match sem.handler.as_deref() {
            Some("sed") => self.sed(args, cwds, label),
            Some("awk") => self.awk(args, cwds, label),
            Some("tar") => self.tar(sem, args, cwds, cat, label),
            _ => self.effects(base, sem, args, cwds, cat, label),
        }
    }

    fn directory_scope(&mut self, cat: Category, cwds: &[PathBuf], label: &str) {
        let access = cat.access();
        self.need(access);
        for d in cwds {
            self.directory_check(d, access, label);
        }
    }

    fn directory_check(&mut self, d: &Path, access: Access, label: &str) {
        let r = paths::resolve(d);
        match self.ctx.matcher.check(&r, access) {
            PathVerdict::Allowed(_) => {}
            PathVerdict::ScopeDocument(doc) => self.violate(
                "scope_document",
                paths::scope_document_message(&format!("`{label}`"), &r.target, &doc),
                Some(label.to_string()),
                r.target.to_string_lossy().into_owned(),
                "path",
                Some(access),
            ),
            PathVerdict::Denied(p) => self.violate(
                "path_denied",
                format!("the directory {} matches the deny pattern `{p}`: nothing may run there", r.target.display()),
                Some(label.to_string()),
                r.target.to_string_lossy().into_owned(),
                "path",
                Some(access),
            ),
            PathVerdict::OutOfScope => {
                let patterns = self.ctx.matcher.patterns_for(access);
                self.violate(
                    "directory_not_in_scope",
                    format!(
                        "`{label}` needs {} scope on the directory {}, which no {} pattern covers (allowed: {}). Run it in a directory inside the scope, or call request_scope_expansion with tool_name \"{}\", resource \"{}\" and your reason.",
                        access.as_str(),
                        r.target.display(),
                        if access == Access::Write { "paths.write" } else { "paths.read or paths.write" },
                        allowed_summary(&patterns),
                        self.ctx.tool,
                        r.target.display()
                    ),
                    Some(label.to_string()),
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                );
            }
        }
    }

    /// Skips a wrapper's options; calls `on_value` for options that take a value.
    fn skip_options(&mut self, args: &[WordInfo], value_opts: &[&str], mut on_value: impl FnMut(&mut Self, &str, &WordInfo)) -> usize {
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let Some(s) = a.exact() else { break };
            if s == "--" {
                return i + 1;
            }
            if !s.starts_with('-') || s == "-" {
                break;
            }
            if let Some((opt, _)) = s.split_once('=') {
                if value_opts.contains(&opt) {
                    let v = WordInfo::literal(&s[opt.len() + 1..]);
                    on_value(self, opt, &v);
                }
                i += 1;
                continue;
            }
            if value_opts.contains(&s) {
                if let Some(v) = args.get(i + 1) {
                    on_value(self, s, v);
                }
                i += 2;
                continue;
            }
            // `nice -10`: a number option.
            i += 1;
        }
        i
    }

    #[allow(clippy::too_many_arguments)]
    fn wrapped(&mut self, words: &[WordInfo], at: usize, cwds: &[PathBuf], via: &[String], wrapper: &str, context: &'static str, under_replace: bool) {
        let inner = words.get(at..).unwrap_or(&[]);
        if inner.is_empty() {
            let label = words.iter().map(WordInfo::display).collect::<Vec<_>>().join(" ");
            self.violate(
                "command_not_allowed",
                format!("`{label}` runs no command; call the command directly"),
                Some(label.clone()),
                wrapper.to_string(),
                "command",
                None,
            );
            return;
        }
        let mut v = via.to_vec();
        v.push(wrapper.to_string());
        self.argv(inner, cwds, &v, context, under_replace);
    }

    fn env(&mut self, words: &[WordInfo], cwds: &[PathBuf], via: &[String], context: &'static str, label: &str, ev: &mut CommandEvidence) {
        let args = &words[1..];
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let Some(s) = a.exact() else {
                self.violate("dynamic_command", format!("`{label}`: an argument of env is built at run time"), Some(label.to_string()), "env".into(), "command", None);
                return;
            };
            if s == "--" {
                i += 1;
                break;
            }
            if s.starts_with("-S") || s.starts_with("--split-string") || s.starts_with("-C") || s.starts_with("--chdir") {
                self.violate(
                    "flag_not_allowed",
                    format!("`env {s}` re-parses a command line or changes directory; call the command directly"),
                    Some(label.to_string()),
                    "env".into(),
                    "command",
                    None,
                );
                return;
            }
            if s == "-u" || s == "--unset" {
                i += 2;
                continue;
            }
            if s.starts_with('-') && s != "-" {
                i += 1;
                continue;
            }
            if let Some((name, _)) = s.split_once('=') {
                self.assignment(name, label);
                i += 1;
                continue;
            }
            break;
        }
        if i >= args.len() {
            // Bare `env` prints the environment: a command of its own.
            match self.category_of("env", &[]) {
                Some((cat, e)) => {
                    ev.category = Some(cat.as_str().into());
                    ev.rule = Some(e);
                    self.directory_scope(cat, cwds, label);
                }
                None => self.not_allowed("env", &[], label, ev),
            }
            return;
        }
        self.wrapped(words, 1 + i, cwds, via, "env", context, false);
    }

    fn xargs(&mut self, words: &[WordInfo], cwds: &[PathBuf], via: &[String], context: &'static str, label: &str) {
        let args = &words[1..];
        let value_opts = ["-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-L", "-l", "-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var", "--max-lines", "--replace", "--eof"];
        let mut i = 0;
        let mut replace = false;
        while let Some(a) = args.get(i) {
            let Some(s) = a.exact() else { break };
            if s == "--" {
                i += 1;
                break;
            }
            if !s.starts_with('-') || s == "-" {
                break;
            }
            let opt = s.split_once('=').map_or(s, |(o, _)| o);
            if opt.starts_with("-I") || opt == "--replace" || opt.starts_with("-i") {
                replace = true;
            }
            if opt == "-a" || opt == "--arg-file" {
                let v = if s.contains('=') { Some(WordInfo::literal(&s[opt.len() + 1..])) } else { args.get(i + 1).cloned() };
                if let Some(v) = v {
                    self.path_effect(&v, Access::Read, cwds, "option -a of xargs", false);
                }
            }
            if opt == "-p" || opt == "--interactive" || opt == "-o" || opt == "--open-tty" {
                self.violate("flag_not_allowed", format!("`xargs {opt}` needs a terminal; it is not allowed"), Some(label.to_string()), "xargs".into(), "command", None);
            }
            let attached = s.len() > 2 && !s.starts_with("--") && s.get(..2).is_some_and(|h| value_opts.contains(&h));
            if value_opts.contains(&opt) && !s.contains('=') && !attached {
                i += 2;
            } else {
                i += 1;
            }
        }
        let mut v = via.to_vec();
        v.push("xargs".into());
        if i >= args.len() {
            // Bare `xargs` runs `echo`.
            let echo = [WordInfo::literal("echo")];
            self.argv(&echo, cwds, &v, context, replace);
            return;
        }
        if self.writes(|me| me.argv(&args[i..], cwds, &v, context, replace)) {
            // The paths come from the input: any file of the write scope.
            let writable = self.ctx.matcher.protected().iter().find(|p| self.ctx.matcher.in_write_scope(p)).cloned();
            if let Some(doc) = writable {
                let name = args[i].display();
                self.violate(
                    "scope_document",
                    format!(
                        "{} (`xargs {name}` writes paths read from its input, which the engine cannot see, and the write scope holds it: pass the paths as arguments)",
                        paths::scope_document_message(&format!("`{label}`"), &doc, &doc.to_string_lossy())
                    ),
                    Some(label.to_string()),
                    doc.to_string_lossy().into_owned(),
                    "path",
                    Some(Access::Write),
                );
            }
        }
    }

    /// Runs `judge` and says whether what it judged needs write scope.
    fn writes(&mut self, judge: impl FnOnce(&mut Self)) -> bool {
        let before = self.max_access.take();
        judge(self);
        let wrote = self.max_access == Some(Access::Write);
        if let Some(b) = before {
            self.need(b);
        }
        wrote
    }

    /// A write that reaches the protected file `doc` without naming it (`what` is the word or
    /// command that does, `how` says how): refused with `scope_document`, which no grant lifts.
    fn write_reaches_scope_document(&mut self, what: &str, doc: &Path, how: &str, label: &str) {
        let protected = doc.to_string_lossy();
        self.violate(
            "scope_document",
            format!("{} ({how})", paths::scope_document_message(what, doc, &protected)),
            Some(label.to_string()),
            protected.into_owned(),
            "path",
            Some(Access::Write),
        );
    }

    /// A write to files the command finds or reads at run time, under `starts` (resolved
    /// from each of `cwds`): refused when a protected file lies there.
    fn unseen_writes_under(&mut self, starts: &[WordInfo], cwds: &[PathBuf], what: &str, label: &str) {
        for st in starts {
            let Some(v) = st.value.as_deref() else { continue };
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                let hit = self.ctx.matcher.scope_document(&r).or_else(|| self.ctx.matcher.protected_below(&r.target).cloned());
                if let Some(doc) = hit {
                    let how = format!(
                        "{what}, which the engine cannot see, under {}: start it where no scope document lies, or name the files",
                        r.target.display()
                    );
                    self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn shell(&mut self, name: &str, words: &[WordInfo], cwds: &[PathBuf], via: &[String], under_replace: bool, label: &str, ev: &mut CommandEvidence) {
        let args = &words[1..];
        let mut i = 0;
        let mut script_flag = false;
        while let Some(a) = args.get(i) {
            let Some(s) = a.exact() else { break };
            if s == "--" || s == "-" {
                i += 1;
                break;
            }
            if s.starts_with("--") {
                if matches!(s, "--noprofile" | "--norc" | "--posix" | "--restricted") {
                    i += 1;
                    continue;
                }
                self.violate("flag_not_allowed", format!("`{name} {s}` is not allowed (it can run startup files or change how scripts are read)"), Some(label.to_string()), name.to_string(), "command", None);
                return;
            }
            if (s.starts_with('-') || s.starts_with('+')) && s.len() > 1 {
                for ch in s[1..].chars() {
                    match ch {
                        'c' => script_flag = true,
                        'e' | 'u' | 'x' | 'v' | 'f' | 'n' | 'h' | 'B' | 'C' | 'a' | 'b' | 'm' | 'p' | 'r' | 't' | 'E' | 'H' | 'P' | 'T' => {}
                        'o' | 'O' => {
                            i += 1;
                        }
                        _ => {
                            self.violate("flag_not_allowed", format!("`{name} -{ch}` is not allowed (login and interactive shells run startup files)"), Some(label.to_string()), name.to_string(), "command", None);
                            return;
                        }
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        let listed = self.category_of(name, &[]);
        if !script_flag {
            if let Some((cat, e)) = listed {
                ev.category = Some(cat.as_str().into());
                ev.rule = Some(e);
                self.warn(format!("`{label}` runs a script whose content was not judged (the scope lists {name})"));
                self.categorized(cat, name, args.get(i..).unwrap_or(&[]), cwds, label);
                return;
            }
            self.violate(
                "unsupported_construct",
                format!("`{label}` runs a script file or standard input that cannot be judged before it runs; run its commands directly, or `{name} -c 'COMMANDS'`"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
            return;
        }
        let Some(script) = args.get(i) else {
            self.violate("parse_error", format!("`{name} -c` without a script"), Some(label.to_string()), name.to_string(), "command", None);
            return;
        };
        if under_replace {
            self.violate(
                "dynamic_command",
                format!("`{label}` under `xargs -I` builds its script from input at run time; use `xargs {name} -c '... \"$1\"' _` or run the commands directly"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
            return;
        }
        let Some(text) = script.exact() else {
            self.violate("dynamic_command", format!("the script of `{name} -c` is built at run time; write it literally"), Some(label.to_string()), name.to_string(), "command", None);
            return;
        };
        if let Some((cat, e)) = listed {
            ev.category = Some(cat.as_str().into());
            ev.rule = Some(e);
        } else {
            ev.rule = Some(format!("wrapper: {name} -c (script judged)"));
        }
        let text = text.to_string();
        self.script(&text, cwds, via, &format!("{name} -c"));
    }

    fn script(&mut self, text: &str, cwds: &[PathBuf], via: &[String], wrapper: &str) {
        self.depth += 1;
        let flat = shell::flatten_script(text, Some(cwds), self.ctx.home, self.depth);
        let mut v = via.to_vec();
        v.push(wrapper.to_string());
        self.flat(&flat, &v);
        self.depth -= 1;
    }

    fn find(&mut self, args: &[WordInfo], cwds: &[PathBuf], via: &[String], label: &str) {
        const WITH_ARG: &[&str] = &[
            "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
            "-maxdepth", "-mindepth", "-perm", "-size", "-user", "-group", "-uid", "-gid", "-mtime", "-atime", "-ctime",
            "-mmin", "-amin", "-cmin", "-links", "-inum", "-lname", "-ilname", "-fstype", "-used", "-printf",
            "-regextype", "-context", "-newermt", "-newerat", "-newerct",
        ];
        const READ_ARG: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"];
        const WRITE_ARG: &[&str] = &["-fprint", "-fprint0", "-fls"];
        const NO_ARG: &[&str] = &[
            "-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-empty", "-executable", "-readable",
            "-writable", "-nouser", "-nogroup", "-depth", "-daystart", "-follow", "-mount", "-xdev", "-noleaf",
            "-ignore_readdir_race", "-noignore_readdir_race", "-a", "-o", "-and", "-or", "-not", "!", "(", ")", ",",
            "-d", "-nowarn", "-warn", "-L", "-H", "-P", "-delete",
        ];
        let mut i = 0;
        // Leading -H -L -P -D x -Ox.
        while let Some(s) = args.get(i).and_then(WordInfo::exact) {
            if matches!(s, "-H" | "-L" | "-P") || s.starts_with("-O") {
                i += 1;
            } else if s == "-D" {
                i += 2;
            } else {
                break;
            }
        }
        let mut starts = Vec::new();
        while let Some(w) = args.get(i) {
            match w.exact() {
                Some(s) if s.starts_with('-') || s == "(" || s == "!" => break,
                _ => {
                    starts.push(w.clone());
                    i += 1;
                }
            }
        }
        if starts.is_empty() {
            starts.push(WordInfo::literal("."));
        }
        for s in &starts {
            self.path_effect(s, Access::Read, cwds, "start directory of find", false);
        }
        while let Some(w) = args.get(i) {
            let Some(s) = w.exact() else {
                i += 1;
                continue;
            };
            if matches!(s, "-exec" | "-execdir" | "-ok" | "-okdir") {
                let mut end = i + 1;
                while let Some(t) = args.get(end) {
                    if matches!(t.exact(), Some(";") | Some("+")) {
                        break;
                    }
                    end += 1;
                }
                let inner = &args[i + 1..end.min(args.len())];
                let mut v = via.to_vec();
                v.push(format!("find {s}"));
                if inner.is_empty() {
                    self.violate("parse_error", format!("`find {s}` without a command"), Some(label.to_string()), "find".into(), "command", None);
                } else if self.writes(|me| me.argv(inner, cwds, &v, "top_level", false)) {
                    let what = format!("`find {s} {}` writes the files find finds", inner.first().map(WordInfo::display).unwrap_or_default());
                    self.unseen_writes_under(&starts, cwds, &what, label);
                }
                i = end + 1;
                continue;
            }
            if s == "-delete" {
                for st in &starts {
                    self.path_effect(st, Access::Write, cwds, "find -delete", true);
                }
                self.unseen_writes_under(&starts, cwds, "`find -delete` removes the files find finds", label);
            }
            if WITH_ARG.contains(&s) || s.starts_with("-newer") && s.len() == 8 {
                i += 2;
                continue;
            }
            if READ_ARG.contains(&s) {
                if let Some(v) = args.get(i + 1) {
                    self.path_effect(v, Access::Read, cwds, &format!("find {s}"), false);
                }
                i += 2;
                continue;
            }
            if WRITE_ARG.contains(&s) {
                if let Some(v) = args.get(i + 1) {
                    self.path_effect(v, Access::Write, cwds, &format!("find {s}"), true);
                }
                i += 2;
                continue;
            }
            if s == "-fprintf" {
                if let Some(v) = args.get(i + 1) {
                    self.path_effect(v, Access::Write, cwds, "find -fprintf", true);
                }
                i += 3;
                continue;
            }
            if NO_ARG.contains(&s) {
                i += 1;
                continue;
            }
            self.violate(
                "flag_not_allowed",
                format!("`find {s}` is not a find predicate gptel-scope knows; use the common predicates (-name, -type, -path, -newer, -maxdepth, -print, ...)"),
                Some(label.to_string()),
                "find".into(),
                "command",
                None,
            );
            i += 1;
        }
    }

    fn sed(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let mut scripts: Vec<WordInfo> = Vec::new();
        let mut files = Vec::new();
        let mut in_place = false;
        let mut i = 0;
        let mut opts_done = false;
        while let Some(w) = args.get(i) {
            let s = w.exact().unwrap_or("");
            if !opts_done && s == "--" {
                opts_done = true;
            } else if !opts_done && s.starts_with("--") {
                let (opt, val) = s.split_once('=').map_or((s, None), |(o, v)| (o, Some(v)));
                match opt {
                    "--expression" => match val {
                        Some(v) => scripts.push(WordInfo::literal(v)),
                        None => {
                            if let Some(n) = args.get(i + 1) {
                                scripts.push(n.clone());
                            }
                            i += 1;
                        }
                    },
                    "--file" => {
                        self.violate("unsupported_construct", "`sed --file` runs a script from a file that cannot be judged; pass the script with -e".into(), Some(label.to_string()), "sed".into(), "command", None);
                        return;
                    }
                    "--in-place" => in_place = true,
                    "--line-length"
                        if val.is_none() => {
                            i += 1;
                        }
                    _ => {}
                }
            } else if !opts_done && s.starts_with('-') && s.len() > 1 {
                for (k, ch) in s[1..].char_indices() {
                    match ch {
                        'i' => {
                            in_place = true;
                            break; // the rest is a backup suffix
                        }
                        'e' | 'f' | 'l' => {
                            let rest = &s[1 + k + 1..];
                            let val = if rest.is_empty() {
                                i += 1;
                                args.get(i).cloned()
                            } else {
                                Some(WordInfo::literal(rest))
                            };
                            if ch == 'e' {
                                if let Some(v) = val {
                                    scripts.push(v);
                                }
                            } else if ch == 'f' {
                                self.violate("unsupported_construct", "`sed -f` runs a script from a file that cannot be judged; pass the script with -e".into(), Some(label.to_string()), "sed".into(), "command", None);
                                return;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            } else if scripts.is_empty() && files.is_empty() && !args[..i].iter().any(|a| matches!(a.exact(), Some(x) if x.starts_with("-e") || x.starts_with("--expression"))) {
                scripts.push(w.clone());
            } else {
                files.push(w.clone());
            }
            i += 1;
        }
        for sc in &scripts {
            match sc.exact() {
                Some(text) => {
                    for (kind, target) in sed_effects(text) {
                        match kind {
                            SedEffect::Exec => self.violate("flag_not_allowed", "the sed script runs a shell command (`e`); it is not allowed".into(), Some(label.to_string()), "sed".into(), "command", None),
                            SedEffect::Write => self.path_effect(&WordInfo::literal(&target), Access::Write, cwds, "sed w command", true),
                            SedEffect::Read => self.path_effect(&WordInfo::literal(&target), Access::Read, cwds, "sed r command", false),
                        }
                    }
                }
                None => self.violate("dynamic_command", "the sed script is built at run time; write it literally".into(), Some(label.to_string()), "sed".into(), "command", None),
            }
        }
        let access = if in_place { Access::Write } else { Access::Read };
        for f in &files {
            self.path_effect(f, access, cwds, if in_place { "file edited by sed -i" } else { "operand of sed" }, in_place);
        }
    }

    /// tar: the mode letters (`-xzf`, old-style `xzf`, `--extract`) decide whether the
    /// archive is written (create) or the directory is (extract).
    fn tar(&mut self, sem: &CommandSemantics, args: &[WordInfo], cwds: &[PathBuf], cat: Category, label: &str) {
        let mut letters = String::new();
        let mut longs = Vec::new();
        for (k, a) in args.iter().enumerate() {
            let Some(s) = a.exact() else { continue };
            if let Some(l) = s.strip_prefix("--") {
                longs.push(l.split('=').next().unwrap_or(l).to_string());
            } else if let Some(l) = s.strip_prefix('-') {
                letters.push_str(l);
            } else if k == 0 && s.chars().all(|c| c.is_ascii_alphabetic()) {
                letters.push_str(s); // old style: `tar xf a.tar`
            }
        }
        let mode_letters: String = letters.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
        let has = |c: char, long: &[&str]| mode_letters.contains(c) || longs.iter().any(|l| long.contains(&l.as_str()));
        let extract = has('x', &["extract", "get"]);
        let create = has('c', &["create"]) || has('r', &["append"]) || has('u', &["update"]) || has('A', &["catenate", "concatenate"]);
        let mut sem = sem.clone();
        if create {
            sem.operands = OperandKind::Read;
        }
        if extract {
            sem.cwd_write = true;
        }
        // The archive named by -f (or by old-style `f` with the next word).
        let mut archive: Option<WordInfo> = None;
        let old_style = args.first().and_then(WordInfo::exact).is_some_and(|s| !s.starts_with('-') && s.contains('f') && s.chars().all(|c| c.is_ascii_alphabetic()));
        if old_style {
            archive = args.get(1).cloned();
        }
        let mut rest: Vec<WordInfo> = args.to_vec();
        if old_style {
            rest.drain(..args.len().min(2));
        }
        if let Some(a) = &archive {
            let access = if create { Access::Write } else { Access::Read };
            self.path_effect(a, access, cwds, "archive of tar", access == Access::Write);
        }
        if create {
            sem.write_options.extend(["-f".to_string(), "--file".to_string()]);
        } else {
            sem.write_options.retain(|o| o != "-f" && o != "--file");
            sem.read_options.extend(["-f".to_string(), "--file".to_string()]);
        }
        let base = "tar";
        // Bundled short options end with `f`: its value is the next word.
        let mut fixed: Vec<WordInfo> = Vec::new();
        let mut it = rest.iter().peekable();
        while let Some(w) = it.next() {
            match w.exact() {
                Some(s) if s.starts_with('-') && !s.starts_with("--") && s.len() > 2 && s.ends_with('f') => {
                    if let Some(v) = it.next() {
                        let access = if create { Access::Write } else { Access::Read };
                        self.path_effect(v, access, cwds, "archive of tar", access == Access::Write);
                    }
                }
                _ => fixed.push(w.clone()),
            }
        }
        self.effects(base, &sem, &fixed, cwds, cat, label);
    }

    fn awk(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let mut i = 0;
        let mut program: Option<WordInfo> = None;
        while let Some(w) = args.get(i) {
            let s = w.exact().unwrap_or("");
            if program.is_none() && (matches!(s, "-f" | "-E" | "-i" | "-l") || ["--file", "--exec", "--include", "--load"].iter().any(|o| s.starts_with(o))) {
                self.violate("unsupported_construct", format!("`awk {s}` runs a program or extension from a file that cannot be judged (gawk's `-i inplace` also rewrites files); pass the program inline"), Some(label.to_string()), "awk".into(), "command", None);
                return;
            }
            if program.is_none() && (s == "-v" || s == "-F") {
                i += 2;
                continue;
            }
            if program.is_none() && s.starts_with('-') && s.len() > 1 {
                i += 1;
                continue;
            }
            if program.is_none() {
                program = Some(w.clone());
            } else if !s.contains('=') {
                self.path_effect(w, Access::Read, cwds, "operand of awk", false);
            }
            i += 1;
        }
        if let Some(p) = program {
            match p.exact() {
                Some(text) => {
                    if let Some(why) = awk_danger(text) {
                        self.violate("unsupported_construct", format!("the awk program {why}; use grep, sed or a simpler program"), Some(label.to_string()), "awk".into(), "command", None);
                    }
                }
                None => self.violate("dynamic_command", "the awk program is built at run time; write it literally".into(), Some(label.to_string()), "awk".into(), "command", None),
            }
        }
    }

    /// Effects from the semantics table: options and operands that read, write or run.
    fn effects(&mut self, base: &str, sem: &CommandSemantics, args: &[WordInfo], cwds: &[PathBuf], cat: Category, label: &str) {
        let mut sem: Cow<'_, CommandSemantics> = Cow::Borrowed(sem);
        let mut start = 0;
        if sem.subcommands {
            // Global options first.
            let mut i = 0;
            while let Some(w) = args.get(i) {
                let s = w.display();
                if !s.starts_with('-') || s == "-" {
                    break;
                }
                let step = self.option(base, &sem, args, i, cwds, cat, label);
                i += step;
            }
            start = i;
            if let Some(sub) = args.get(i).and_then(WordInfo::exact) {
                if let Some(s) = sem.subcommand_semantics.get(sub) {
                    let mut merged = s.clone();
                    merged.deny_options.extend(sem.deny_options.iter().cloned());
                    sem = Cow::Owned(merged);
                } else {
                    let deny = sem.deny_options.clone();
                    sem = Cow::Owned(CommandSemantics { deny_options: deny, ..Default::default() });
                }
                start = i + 1;
            }
        }
        // A global option's value may be missing (`git -C`): `start` can pass the end.
        let rest = args.get(start..).unwrap_or(&[]);
        // Options.
        let mut operands: Vec<&WordInfo> = Vec::new();
        let mut write_mode = false;
        let mut cwd_written = false;
        let mut data_opt = false;
        let mut i = 0;
        let mut opts_done = false;
        while let Some(w) = rest.get(i) {
            let s = w.display();
            if !opts_done && s == "--" {
                opts_done = true;
                i += 1;
                continue;
            }
            if !opts_done && w.value.is_none() && may_be_option(&w.raw) && has_path_options(&sem) {
                if w.raw.starts_with('-') {
                    // `--output=$HOME/x`: the option is known, its value is not.
                    i += self.option(base, &sem, rest, i, cwds, cat, label);
                } else {
                    self.violate(
                        "dynamic_command",
                        format!("`{}` is built at run time and could be an option of {base} that reads, writes or runs programs; write it literally", w.raw),
                        Some(label.to_string()),
                        w.raw.clone(),
                        "command",
                        None,
                    );
                    i += 1;
                }
                continue;
            }
            if !opts_done && s.starts_with('-') && s != "-" && w.value.is_some() {
                let (opt, _) = s.split_once('=').unwrap_or((&s, ""));
                if has_opt(&sem.write_mode_options, opt) {
                    write_mode = true;
                }
                if has_opt(&sem.data_operand_options, opt) || (!s.starts_with("--") && sem.data_operand_options.iter().any(|o| o.len() == 2 && s.get(..2) == Some(o))) {
                    data_opt = true;
                }
                if has_opt(&sem.cwd_write_options, opt) {
                    cwd_written = true;
                    for d in cwds {
                        let dw = WordInfo::literal(&d.to_string_lossy());
                        self.path_effect(&dw, Access::Write, cwds, &format!("option {opt} of {base} (writes in the directory)"), true);
                    }
                }
                i += self.option(base, &sem, rest, i, cwds, cat, label);
                continue;
            }
            operands.push(w);
            i += 1;
        }
        if sem.cwd_write {
            for d in cwds {
                let dw = WordInfo::literal(&d.to_string_lossy());
                self.path_effect(&dw, Access::Write, cwds, &format!("{base} writes in its directory"), true);
            }
        }
        let skip = if data_opt { 0 } else { sem.leading_data_operands };
        let files: Vec<&WordInfo> = operands.iter().skip(skip).copied().collect();
        let kind = if write_mode { OperandKind::Write } else { sem.operands };
        let n = files.len();
        for (k, f) in files.iter().enumerate() {
            let src = format!("operand of {base}");
            match kind {
                OperandKind::Data => {}
                OperandKind::Read => self.path_effect(f, Access::Read, cwds, &src, false),
                OperandKind::Write | OperandKind::AllWrite => self.path_effect(f, Access::Write, cwds, &src, true),
                OperandKind::LastWrite => {
                    let a = if k + 1 == n && n > 1 { Access::Write } else { Access::Read };
                    self.path_effect(f, a, cwds, &src, a == Access::Write || sem.enforce_operands);
                }
                OperandKind::FirstWrite => {
                    let a = if k == 0 && n > 1 { Access::Write } else { Access::Read };
                    self.path_effect(f, a, cwds, &src, a == Access::Write);
                }
                OperandKind::KeyValue => match f.exact().and_then(|v| v.split_once('=')) {
                    Some(("of", path)) => self.path_effect(&WordInfo::literal(path), Access::Write, cwds, &format!("of= of {base}"), true),
                    Some(("if", path)) => self.path_effect(&WordInfo::literal(path), Access::Read, cwds, &format!("if= of {base}"), false),
                    Some(_) => {}
                    None if f.value.is_none() => self.path_effect(f, Access::Write, cwds, &src, true),
                    None => {}
                },
                OperandKind::Unknown => self.unknown_operand(f, cwds, &src),
            }
        }
        self.protected_reach(base, rest, &files, kind, sem.cwd_write || cwd_written, cwds, label);
    }

    /// Handles the option at `args[i]`; returns how many words it used.
    #[allow(clippy::too_many_arguments)]
    fn option(&mut self, base: &str, sem: &CommandSemantics, args: &[WordInfo], i: usize, cwds: &[PathBuf], cat: Category, label: &str) -> usize {
        let Some(w) = args.get(i) else { return 1 };
        let s = w.display();
        let (opt, inline) = match s.split_once('=') {
            Some((o, v)) if s.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (s.clone(), None),
        };
        // Short options with an attached value: `-ofile`, `-C/dir`, `-ccore.pager=x`.
        let (opt, inline) = if inline.is_none() && !opt.starts_with("--") && opt.len() > 2 && opt.is_char_boundary(2) {
            let head = &opt[..2];
            let all = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.deny_options, &sem.directory_options, &sem.global_value_options];
            if all.iter().any(|l| l.iter().any(|o| o == head)) {
                (head.to_string(), Some(opt[2..].to_string()))
            } else {
                (opt, None)
            }
        } else {
            (opt, inline)
        };
        let exact_known = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.directory_options, &sem.global_value_options, &sem.write_mode_options, &sem.cwd_write_options, &sem.data_operand_options]
            .iter()
            .any(|l| l.iter().any(|o| o == &opt));
        if sem.deny_options.iter().any(|o| o == &opt) || (!exact_known && has_opt(&sem.deny_options, &opt)) {
            self.violate(
                "flag_not_allowed",
                format!("`{base} {opt}` can run other programs or read what the scope does not allow; it is not allowed. Run the command without it."),
                Some(label.to_string()),
                format!("{base} {opt}"),
                "command",
                None,
            );
        }
        // Whether the option consumes the next word as its value.
        let takes = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.directory_options, &sem.global_value_options]
            .iter()
            .any(|l| has_opt(l, &opt));
        let value = match &inline {
            // A word built at run time gives a value built at run time.
            Some(v) if w.value.is_none() => Some(WordInfo { raw: v.clone(), value: None, glob: false }),
            Some(v) => Some(WordInfo::literal(v)),
            None if takes => args.get(i + 1).cloned(),
            None => None,
        };
        let used = if inline.is_none() && takes { 2 } else { 1 };
        if let Some(v) = &value {
            if has_opt(&sem.read_options, &opt) {
                self.path_effect(v, Access::Read, cwds, &format!("option {opt} of {base}"), false);
            } else if has_opt(&sem.write_options, &opt) {
                self.path_effect(v, Access::Write, cwds, &format!("option {opt} of {base}"), true);
            } else if has_opt(&sem.directory_options, &opt) {
                match v.exact() {
                    Some(d) => {
                        let mut dirs = Vec::new();
                        for c in cwds {
                            dirs.push(c.join(d));
                        }
                        for d in dirs {
                            self.directory_check(&d, cat.access(), label);
                        }
                    }
                    None => self.violate("path_not_in_scope", format!("the directory given to `{base} {opt}` is built at run time; write it literally"), Some(label.to_string()), v.raw.clone(), "path", Some(cat.access())),
                }
            }
        }
        used
    }

    /// An operand of unknown meaning: checked as a read when it looks like a path.
    fn unknown_operand(&mut self, w: &WordInfo, cwds: &[PathBuf], src: &str) {
        let Some(v) = w.exact() else { return };
        let candidate = match v.split_once('=') {
            Some((k, val)) if k.starts_with('-') => val,
            _ => v,
        };
        if candidate.starts_with('-') {
            return;
        }
        let looks = candidate.starts_with('/')
            || candidate.starts_with('~')
            || Path::new(candidate).components().any(|c| matches!(c, std::path::Component::ParentDir))
            || cwds.iter().any(|d| paths::exists(&d.join(candidate)) && !candidate.is_empty());
        if looks {
            self.path_effect(&WordInfo::literal(candidate), Access::Read, cwds, src, false);
        }
    }

    /// Checks one path effect against the scope from every possible working directory.
    /// `enforce`: a violation is a denial whatever `path_arguments` says (writes, redirects).
    fn path_effect(&mut self, w: &WordInfo, access: Access, cwds: &[PathBuf], source: &str, enforce: bool) {
        if access == Access::Write {
            self.need(Access::Write);
        }
        let enforce = enforce || access == Access::Write || self.ctx.scope.bash_tools.path_arguments == crate::scope::PathArgumentsMode::Enforce;
        let Some(v) = w.value.clone() else {
            let msg = format!("`{}` ({source}) is built at run time (a variable or substitution), so it cannot be checked against the scope; write the path literally", w.raw);
            self.paths.push(PathEvidence { path: w.raw.clone(), resolved: String::new(), access: access.as_str(), verdict: if enforce { "denied" } else { "unchecked" }, pattern: None, source: source.to_string() });
            if enforce {
                self.violate("path_not_in_scope", msg, None, w.raw.clone(), "path", Some(access));
                if let Some(last) = self.violations.last_mut() {
                    last.grantable = false;
                }
            } else {
                self.warn(msg);
            }
            return;
        };
        let mut targets: Vec<PathBuf> = Vec::new();
        for d in cwds {
            let p = d.join(&v);
            if w.glob {
                match glob_expand(&p) {
                    Some(hits) if !hits.is_empty() => targets.extend(hits),
                    Some(_) => targets.push(glob_base(&p)),
                    None => targets.push(glob_base(&p)),
                }
            } else {
                targets.push(p);
            }
        }
        for t in targets {
            if paths::is_safe_device(&crate::resolve::normalize(&t), access) {
                continue;
            }
            let r = paths::resolve(&t);
            let verdict = self.ctx.matcher.check(&r, access);
            let (ev_verdict, pattern) = match &verdict {
                PathVerdict::Allowed(p) => ("allowed", Some(p.clone())),
                PathVerdict::Denied(p) => ("denied", Some(p.clone())),
                PathVerdict::OutOfScope => (if enforce { "out_of_scope" } else { "warning" }, None),
                PathVerdict::ScopeDocument(_) => ("scope_document", None),
            };
            self.paths.push(PathEvidence {
                path: v.clone(),
                resolved: r.target.to_string_lossy().into_owned(),
                access: access.as_str(),
                verdict: ev_verdict,
                pattern,
                source: source.to_string(),
            });
            match verdict {
                PathVerdict::Allowed(_) => {}
                PathVerdict::ScopeDocument(doc) => self.violate(
                    "scope_document",
                    paths::scope_document_message(&format!("`{v}` ({source})"), &r.target, &doc),
                    None,
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                ),
                PathVerdict::Denied(p) => self.violate(
                    "path_denied",
                    format!("`{v}` ({source}) leads to {} which matches the deny pattern `{p}`; it is never allowed", r.target.display()),
                    None,
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                ),
                PathVerdict::OutOfScope => {
                    let patterns = self.ctx.matcher.patterns_for(access);
                    let msg = format!(
                        "`{v}` ({source}) needs {} access to {}, outside the scope (allowed: {}). Use a path inside the scope (relative paths are checked best), or call request_scope_expansion with tool_name \"{}\", resource \"{}\" and your reason.",
                        access.as_str(),
                        r.target.display(),
                        allowed_summary(&patterns),
                        self.ctx.tool,
                        r.target.display()
                    );
                    if enforce {
                        self.violate("path_not_in_scope", msg, None, r.target.to_string_lossy().into_owned(), "path", Some(access));
                    } else {
                        self.warn(format!(
                            "`{v}` ({source}) is outside the scope ({}); path arguments are not enforced, so this was allowed, but use relative paths inside the project so the scope can be validated",
                            r.target.display()
                        ));
                    }
                }
            }
        }
    }

    fn finish(mut self) -> Decision {
        // Grants.
        let mut used: Vec<Grant> = Vec::new();
        for v in self.violations.iter_mut() {
            if !v.grantable {
                continue;
            }
            if let Some(g) = self.ctx.grants.iter().find(|g| g.tool == self.ctx.tool && grant_covers(g, v, &self.command, self.ctx.home)) {
                v.granted = true;
                if !used.contains(g) {
                    used.push(g.clone());
                }
            }
        }
        let open: Vec<&Violation> = self.violations.iter().filter(|v| !v.granted).collect();
        let allowed = open.is_empty();
        let primary = open.iter().min_by_key(|v| severity(v.reason)).copied().cloned();
        let required = self.max_access.map_or("read", Access::as_str);
        let mut message = match &primary {
            None if !used.is_empty() => format!("Allowed once by the user's grant ({}).", used.iter().map(|g| g.resource.clone()).collect::<Vec<_>>().join(", ")),
            None => "Allowed.".to_string(),
            Some(p) => p.message.clone(),
        };
        if open.len() > 1 {
            let others: Vec<String> = open
                .iter()
                .filter(|v| primary.as_ref().is_none_or(|p| p != **v))
                .map(|v| format!("{} ({})", v.reason, v.command.as_deref().unwrap_or(&v.resource)))
                .collect();
            message.push_str(&format!(" Also refused: {}.", others.join("; ")));
        }
        let access = if required == "write" { Access::Write } else { Access::Read };
        Decision {
            command: self.command.clone(),
            tool: self.ctx.tool.to_string(),
            allowed,
            reason: primary.as_ref().map(|p| p.reason),
            message,
            base_command: self.base.clone(),
            category: self.max_category.map(|c| c.as_str().to_string()),
            required_scope: required,
            directory: self.dir.to_string_lossy().into_owned(),
            allowed_patterns: self.ctx.matcher.patterns_for(access),
            warnings: std::mem::take(&mut self.warnings),
            commands: std::mem::take(&mut self.commands),
            paths: std::mem::take(&mut self.paths),
            grants_used: used,
            resource: primary.as_ref().map(|p| p.resource.clone()),
            validation_type: primary.as_ref().map(|p| p.validation_type),
            violations: self.violations,
        }
    }
}

/// Whether a category entry (`git`, `git log`, `./gradlew`) matches a command whose name
/// (or basename, for deny and dangerous lists) is `key`. Entries with a `/` match the
/// exact name.
/// The top of the git work tree holding `dir` (the nearest directory upward with a `.git`),
/// or `dir` itself outside one.
fn git_top(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| paths::exists(&d.join(".git")))
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf)
}

fn entry_matches(entry: &str, key: &str, sub_words: &[&str]) -> bool {
    let mut parts = entry.split_whitespace();
    let Some(first) = parts.next() else { return false };
    if first != key {
        return false;
    }
    parts.enumerate().all(|(k, p)| sub_words.get(k).is_some_and(|w| *w == p))
}

/// Whether an option list names `opt`, also as an unambiguous GNU abbreviation of a long
/// option (`--compress-prog` for `--compress-program`).
fn has_opt(list: &[String], opt: &str) -> bool {
    list.iter().any(|o| o == opt || (opt.starts_with("--") && opt.len() >= 4 && o.starts_with(opt)))
}

fn grant_covers(g: &Grant, v: &Violation, command: &str, home: Option<&Path>) -> bool {
    let r = g.resource.trim();
    if r == command.trim() || r == v.resource {
        return true;
    }
    if let Some(c) = &v.command {
        if r == c {
            return true;
        }
    }
    if v.validation_type == "path" {
        let mut gp = r.trim_end_matches("/**").trim_end_matches('/').to_string();
        if let (Some(rest), Some(h)) = (gp.strip_prefix('~'), home) {
            gp = format!("{}{}", h.display(), rest);
        }
        if gp.is_empty() || !gp.starts_with('/') {
            return false;
        }
        let gp = crate::resolve::normalize(Path::new(&gp));
        return Path::new(&v.resource).starts_with(&gp);
    }
    false
}

/// Whether a word built at run time could expand to an option (`-x`, `--x=...`): it does
/// not start with a literal character other than `-`.
fn may_be_option(raw: &str) -> bool {
    let t = raw.trim_start_matches('"');
    t.starts_with(['-', '$', '`'])
}

/// Whether a command has options that touch paths or run programs.
fn has_path_options(sem: &CommandSemantics) -> bool {
    !(sem.read_options.is_empty()
        && sem.write_options.is_empty()
        && sem.deny_options.is_empty()
        && sem.directory_options.is_empty()
        && sem.write_mode_options.is_empty()
        && sem.cwd_write_options.is_empty())
}

/// The directory part of a glob before its first wildcard component.
fn glob_base(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        let s = c.as_os_str().to_string_lossy();
        if s.contains(['*', '?', '[']) {
            break;
        }
        out.push(c.as_os_str());
    }
    out
}

/// A glob for one path component. Patterns of only `*`, `?` and literal characters (`*.md`,
/// `test-?.el`) are matched here; the others (classes, escapes, braces, `**`) by globset.
/// Compiling a globset matcher builds a regex, 10 µs or more, for every glob of every command.
///
/// `?` is one character to bash in a UTF-8 locale and one byte in the C locale (and to
/// globset); a name matches when it matches either way, so no file the command could reach
/// is missed.
enum ComponentGlob {
    Simple(Vec<u8>),
    Globset(globset::GlobMatcher),
}

impl ComponentGlob {
    fn new(part: &str) -> Option<ComponentGlob> {
        if part.contains(['[', ']', '\\', '{', '}']) || part.contains("**") {
            let g = globset::GlobBuilder::new(part).literal_separator(true).build().ok()?;
            return Some(ComponentGlob::Globset(g.compile_matcher()));
        }
        Some(ComponentGlob::Simple(part.as_bytes().to_vec()))
    }

    fn is_match(&self, name: &str) -> bool {
        match self {
            ComponentGlob::Simple(p) => {
                wildcard_match(p, name.as_bytes())
                    || (!name.is_ascii() && {
                        let p: Vec<char> = String::from_utf8_lossy(p).chars().collect();
                        wildcard_match(&p, &name.chars().collect::<Vec<_>>())
                    })
            }
            ComponentGlob::Globset(g) => g.is_match(name),
        }
    }
}

/// Whether `name` matches `pattern`, where `*` is any run of units and `?` any one unit
/// except `/` (linear: on a mismatch only the last `*` is moved on).
fn wildcard_match<T: Copy + PartialEq + From<u8>>(pattern: &[T], name: &[T]) -> bool {
    let (star_unit, any_unit, slash) = (T::from(b'*'), T::from(b'?'), T::from(b'/'));
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(&c) if c == star_unit => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == any_unit && name[n] != slash => {
                p += 1;
                n += 1;
            }
            Some(&c) if c != any_unit && c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) if name[sn] != slash => {
                    star = Some((sp, sn + 1));
                    p = sp + 1;
                    n = sn + 1;
                }
                _ => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == star_unit)
}

/// Expands a glob against the file system like bash (dotfiles only when the pattern
/// component starts with `.`). `None` when it would list too many entries.
fn glob_expand(p: &Path) -> Option<Vec<PathBuf>> {
    const LIMIT: usize = 2000;
    let mut current = vec![PathBuf::from("/")];
    for c in p.components() {
        let part = c.as_os_str().to_string_lossy().into_owned();
        if matches!(c, std::path::Component::RootDir) {
            continue;
        }
        let mut next = Vec::new();
        if part.contains(['*', '?', '[']) {
            let g = ComponentGlob::new(&part)?;
            for d in &current {
                let Ok(rd) = std::fs::read_dir(d) else { continue };
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') && !part.starts_with('.') {
                        continue;
                    }
                    if g.is_match(&name) {
                        next.push(d.join(&name));
                        if next.len() > LIMIT {
                            return None;
                        }
                    }
                }
            }
        } else {
            for d in &current {
                next.push(d.join(&part));
            }
        }
        current = next;
    }
    Some(current.into_iter().filter(|p| std::fs::symlink_metadata(p).is_ok()).collect())
}

enum SedEffect {
    Exec,
    Write,
    Read,
}

/// The files a sed script writes or reads and whether it runs commands.
fn sed_effects(script: &str) -> Vec<(SedEffect, String)> {
    let mut out = Vec::new();
    let b = script.as_bytes();
    let mut i = 0;
    let n = b.len();
    let rest_of_line = |i: usize| -> (String, usize) {
        let mut j = i;
        while j < n && b[j] != b'\n' {
            j += 1;
        }
        (String::from_utf8_lossy(&b[i..j]).trim().to_string(), j)
    };
    while i < n {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'{' | b'}' | b'!' | b',' | b'$' | b'0'..=b'9' | b'~' | b'+' => i += 1,
            b'/' | b'\\' => {
                // An address regex.
                let delim = if c == b'\\' { i += 1; b.get(i).copied().unwrap_or(b'/') } else { b'/' };
                i += 1;
                while i < n && b[i] != delim {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                while i < n && matches!(b[i], b'I' | b'M') {
                    i += 1;
                }
            }
            b's' | b'y' => {
                let Some(&delim) = b.get(i + 1) else { break };
                i += 2;
                for _ in 0..2 {
                    while i < n && b[i] != delim {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i += 1;
                }
                if c == b's' {
                    while i < n && !matches!(b[i], b';' | b'\n' | b'}') {
                        match b[i] {
                            b'e' => {
                                out.push((SedEffect::Exec, String::new()));
                                i += 1;
                            }
                            b'w' => {
                                let (f, j) = rest_of_line(i + 1);
                                out.push((SedEffect::Write, f));
                                i = j;
                            }
                            _ => i += 1,
                        }
                    }
                }
            }
            b'e' => {
                out.push((SedEffect::Exec, String::new()));
                let (_, j) = rest_of_line(i + 1);
                i = j;
            }
            b'w' | b'W' => {
                let (f, j) = rest_of_line(i + 1);
                out.push((SedEffect::Write, f));
                i = j;
            }
            b'r' | b'R' => {
                let (f, j) = rest_of_line(i + 1);
                out.push((SedEffect::Read, f));
                i = j;
            }
            b'a' | b'i' | b'c' | b':' | b'b' | b't' | b'T' | b'#' => {
                let (_, j) = rest_of_line(i + 1);
                i = j;
            }
            b'q' | b'Q' | b'l' | b'L' => {
                i += 1;
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Why an awk program cannot be allowed, if it cannot.
fn awk_danger(program: &str) -> Option<&'static str> {
    // Drop string and regex literals, then look for what runs or writes.
    let mut cleaned = String::with_capacity(program.len());
    let mut chars = program.chars().peekable();
    let mut prev_sig = ' ';
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == '"' {
                        break;
                    }
                }
                cleaned.push_str("\"\"");
            }
            '/' if matches!(prev_sig, ' ' | '(' | ',' | '{' | ';' | '!' | '~' | '&' | '|' | '\n') => {
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == '/' {
                        break;
                    }
                }
                cleaned.push_str("//");
            }
            _ => cleaned.push(c),
        }
        if !c.is_whitespace() {
            prev_sig = c;
        }
    }
    let cleaned = cleaned.replace("||", " ");
    if cleaned.contains("system") {
        return Some("calls system(), which runs shell commands");
    }
    if cleaned.contains('|') {
        return Some("pipes to or from a command (`|`)");
    }
    if cleaned.contains("getline") && cleaned.contains('<') {
        return Some("reads a file with getline");
    }
    for stmt in cleaned.split([';', '{', '}', '\n']) {
        let t = stmt.trim_start();
        if (t.starts_with("print") || t.starts_with("printf")) && t.contains('>') {
            return Some("writes to a file with print >");
        }
    }
    if cleaned.contains("ENVIRON") {
        return Some("reads the environment");
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn refusals_list_at_most_twelve_patterns() {
        let p = |n: usize| (0..n).map(|i| format!("/p{i}/**")).collect::<Vec<_>>();
        assert_eq!(super::allowed_summary(&p(0)), "none");
        assert_eq!(super::allowed_summary(&p(2)), "/p0/**, /p1/**");
        assert_eq!(super::allowed_summary(&p(12)).matches(", ").count(), 11);
        let long = super::allowed_summary(&p(750));
        assert!(long.starts_with("/p0/**, /p1/**, "), "{long}");
        assert!(long.ends_with("/p11/**, and 738 more"), "{long}");
    }

    use super::*;

    #[test]
    fn sed_effects_table() {
        let kinds = |s: &str| -> Vec<(String, String)> {
            sed_effects(s)
                .into_iter()
                .map(|(k, t)| {
                    let k = match k {
                        SedEffect::Exec => "exec",
                        SedEffect::Write => "write",
                        SedEffect::Read => "read",
                    };
                    (k.to_string(), t)
                })
                .collect()
        };
        let none: Vec<(String, String)> = vec![];
        assert_eq!(kinds("s/a/b/g"), none);
        assert_eq!(kinds("1,5p;/x/d"), none);
        assert_eq!(kinds("s/w/e/"), none, "letters inside the regex and replacement are data");
        assert_eq!(kinds("s|a|b|w out.txt"), vec![("write".into(), "out.txt".into())]);
        assert_eq!(kinds("s/a/b/e"), vec![("exec".into(), String::new())]);
        assert_eq!(kinds("1e date"), vec![("exec".into(), String::new())]);
        assert_eq!(kinds("r in.txt"), vec![("read".into(), "in.txt".into())]);
        assert_eq!(kinds("/x/w log\np"), vec![("write".into(), "log".into())]);
        assert_eq!(kinds("a\\\nappended w text"), none, "the text of `a` is data");
    }

    #[test]
    fn awk_danger_table() {
        for (prog, dangerous) in [
            ("{print $1}", false),
            ("$3 > 100 {print}", false),
            ("/a|b/ {n++} END {print n}", false),
            ("$1 == \"x|y\" {print}", false),
            ("NR > 1 || NF > 2", false),
            ("BEGIN{system(\"x\")}", true),
            ("{print | \"sort\"}", true),
            ("{\"date\" | getline d}", true),
            ("{print > \"out\"}", true),
            ("{printf \"%s\", $1 > \"f\"}", true),
            ("{getline line < \"/etc/passwd\"}", true),
            ("BEGIN{print ENVIRON[\"HOME\"]}", true),
        ] {
            assert_eq!(awk_danger(prog).is_some(), dangerous, "{prog}");
        }
    }

    #[test]
    fn entry_matching_table() {
        let w = |v: &'static [&'static str]| v.to_vec();
        assert!(entry_matches("git", "git", &w(&["log"])));
        assert!(entry_matches("git log", "git", &w(&["log", "-1"])));
        assert!(!entry_matches("git log", "git", &w(&["push"])));
        assert!(!entry_matches("git log", "git", &w(&[])));
        assert!(!entry_matches("ls", "./ls", &w(&[])));
        assert!(entry_matches("./gradlew", "./gradlew", &w(&[])));
        assert!(!entry_matches("", "ls", &w(&[])));
    }

    #[test]
    fn option_abbreviations_match_long_options_only() {
        let l = vec!["--compress-program".to_string(), "-o".to_string()];
        assert!(has_opt(&l, "--compress-prog"));
        assert!(has_opt(&l, "-o"));
        assert!(!has_opt(&l, "--c"), "too short to be an abbreviation");
        assert!(!has_opt(&l, "-c"));
    }

    #[test]
    fn grants_cover_their_resource_only() {
        let v = |vt: &'static str, resource: &str| Violation {
            reason: "path_not_in_scope",
            message: String::new(),
            command: Some("cat /x/y".into()),
            resource: resource.into(),
            validation_type: vt,
            grantable: true,
            granted: false,
            access: None,
        };
        let g = |r: &str| Grant { tool: "t".into(), resource: r.into() };
        assert!(grant_covers(&g("/x/**"), &v("path", "/x/y"), "cat /x/y", None));
        assert!(grant_covers(&g("/x/"), &v("path", "/x/y/z"), "cat /x/y", None));
        assert!(!grant_covers(&g("/x/**"), &v("path", "/xy/z"), "cat /x/y", None));
        assert!(grant_covers(&g("~/d"), &v("path", "/home/u/d/f"), "c", Some(Path::new("/home/u"))));
        assert!(grant_covers(&g("cat /x/y"), &v("path", "/q"), "cat /x/y", None));
        assert!(!grant_covers(&g("relative/dir"), &v("path", "/relative/dir"), "c", None));
        assert!(grant_covers(&g("rm"), &v("command", "rm"), "rm -rf x", None));
        assert!(!grant_covers(&g("rm"), &v("command", "rmdir"), "rmdir x", None));
    }

    #[test]
    fn severity_puts_what_no_grant_fixes_first() {
        assert!(severity("parse_error") < severity("denied"));
        assert!(severity("denied") < severity("dangerous_command"));
        assert!(severity("dangerous_command") < severity("directory_not_in_scope"));
        assert!(severity("directory_not_in_scope") < severity("path_not_in_scope"));
        assert!(severity("path_not_in_scope") < severity("something_else"));
        for r in ["denied", "privilege_escalation", "path_denied", "parse_error", "dynamic_command", "unsupported_construct", "flag_not_allowed", "subcommand_denied"] {
            assert!(!grantable(r), "{r}");
        }
        for r in ["command_not_allowed", "dangerous_command", "directory_not_in_scope", "path_not_in_scope", "subcommand_not_allowed"] {
            assert!(grantable(r), "{r}");
        }
    }

    #[test]
    fn dangerous_variables_table() {
        for (name, bad) in [
            ("PAGER", true), ("LD_PRELOAD", true), ("DYLD_INSERT_LIBRARIES", true), ("GIT_SSH_COMMAND", true),
            ("GIT_CONFIG_COUNT", true), ("BASH_FUNC_x%%", true), ("PATH", true), ("GIT_AUTHOR_NAME", false),
            ("LC_ALL", false), ("RUST_BACKTRACE", false), ("FOO", false),
        ] {
            assert_eq!(dangerous_var(name), bad, "{name}");
        }
    }

    #[test]
    fn component_globs_match_as_globset_does() {
        let mut patterns: Vec<String> = ["*", "*.md", "test-?.el", "a*b*c", "*a*", "??", "*.*", "ab", "*x", "x*", "a?*", "*?", "**x"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let names = ["", "a", "ab", "abc", "a.md", "README.md", "test-1.el", "test-12.el", "aXbYc", "abcabc", "x", "xx", ".x", "é.md", "ab*", "a?b"];
        // Every pattern of up to four characters from a small alphabet.
        let alphabet = ['a', 'b', '*', '?', '.'];
        for len in 1..=4 {
            let mut idx = vec![0usize; len];
            loop {
                patterns.push(idx.iter().map(|&i| alphabet[i]).collect());
                let mut k = 0;
                while k < len {
                    idx[k] += 1;
                    if idx[k] < alphabet.len() {
                        break;
                    }
                    idx[k] = 0;
                    k += 1;
                }
                if k == len {
                    break;
                }
            }
        }
        let more_names: Vec<String> = (0..200u32).map(|i| (0..(i % 6)).map(|k| ['a', 'b', '.', 'é'][((i >> k) % 4) as usize]).collect()).collect();
        for p in &patterns {
            let ours = ComponentGlob::new(p).expect("compiles");
            let Ok(g) = globset::GlobBuilder::new(p).literal_separator(true).build() else { continue };
            let g = g.compile_matcher();
            for n in names.iter().map(|s| s.to_string()).chain(more_names.iter().cloned()) {
                if n.is_ascii() {
                    assert_eq!(ours.is_match(&n), g.is_match(&n), "pattern {p:?} name {n:?}");
                } else if g.is_match(&n) {
                    // globset matches bytes: every name it finds is found.
                    assert!(ours.is_match(&n), "pattern {p:?} name {n:?}");
                }
            }
        }
        // `?` as one character (bash in a UTF-8 locale) and as one byte (the C locale).
        for (p, n, want) in [("?", "é", true), ("??", "é", true), ("???", "é", false), ("?.md", "é.md", true), ("*é", "café", true), ("caf?", "café", true)] {
            assert_eq!(ComponentGlob::new(p).expect("compiles").is_match(n), want, "{p} {n}");
        }
    }

    #[test]
    fn glob_expansion_follows_bash_dotfile_rule() {
        let d = std::env::temp_dir().join(format!("gs-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a")).unwrap();
        for f in ["a/x.txt", "a/y.txt", "a/.env", "a/z.md"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let mut hits = glob_expand(&d.join("a/*")).unwrap();
        hits.sort();
        assert_eq!(hits, vec![d.join("a/x.txt"), d.join("a/y.txt"), d.join("a/z.md")]);
        assert_eq!(glob_expand(&d.join("a/.e?v")).unwrap(), vec![d.join("a/.env")]);
        assert_eq!(glob_expand(&d.join("*/z.md")).unwrap(), vec![d.join("a/z.md")]);
        assert_eq!(glob_base(&d.join("a/*.txt")), d.join("a"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
