//! Steps 2 and 3 of a decision (SPEC §3): walking the flattened command line and naming each
//! simple command: assignments, the program's name (static, or `dynamic_command`), privilege
//! and shells, and the wrappers looked through (`env`, `xargs`, `sh -c`, `nice`, ...), each
//! layer judged.

use std::path::PathBuf;

use super::categorize::entry_matches;
use super::{basename, effects, git, scope, Category, CommandEvidence, Judge, DENIED};
use crate::policy::paths::{self, Access};
use crate::shell::{self, Context, Flat, RedirKind, SimpleCmd, WordInfo};
use crate::Reason;

pub(super) const PRIVILEGE: &[&str] = &["sudo", "doas", "su", "pkexec", "run0", "sudoedit"];
pub(crate) const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"];
/// Builtins that run nothing and touch no file: implicitly read_only.
pub(super) const INERT_BUILTINS: &[&str] = &[
    "cd", "pushd", "popd", "dirs", "true", "false", ":", "test", "[", "exit", "return", "shift",
    "wait", "break", "continue", "set", "unset", "pwd",
];
/// Environment variables that change which program runs or how a shell starts.
pub(super) const DANGEROUS_VARS: &[&str] = &[
    "PATH",
    "IFS",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "MAKEFLAGS",
    "TAR_OPTIONS",
    "GREP_OPTIONS",
    "RIPGREP_CONFIG_PATH",
    "SHELL",
    // Loaders and tool hooks that name a program, library or startup file.
    "GCONV_PATH",
    "LOCPATH",
    "NLSPATH",
    "OPENSSL_CONF",
    "OPENSSL_ENGINES",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC",
    "RUSTDOC",
    "GOFLAGS",
    "CC",
    "CXX",
    "VIMINIT",
    "EXINIT",
    "MYVIMRC",
    "BASH_XTRACEFD",
    "BASH_LOADABLES_PATH",
    "LESS",
    "LESSKEY",
    "LESSKEYIN",
    "PYTHONBREAKPOINT",
    "PERL5DB",
    "HISTFILE",
    "INPUTRC",
];
/// Prefixes of variables that do so: every `GIT_*` variable but [`git::SAFE_GIT_VARS`] (git's
/// variables choose the repository, its work tree, index and object stores (`GIT_DIR`,
/// `GIT_WORK_TREE`, `GIT_COMMON_DIR`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`,
/// `GIT_ALTERNATE_OBJECT_DIRECTORIES`: a repository whose configuration or objects a tool
/// made), set configuration (`GIT_CONFIG*`, `GIT_CONFIG_PARAMETERS`, `GIT_TEMPLATE_DIR`),
/// run programs (`GIT_EXEC_PATH`, `GIT_EXTERNAL_DIFF`, `GIT_SSH`, `GIT_SSH_COMMAND`,
/// `GIT_ASKPASS`, `GIT_EDITOR`, `GIT_SEQUENCE_EDITOR`, `GIT_PAGER`, `GIT_PROXY_COMMAND`),
/// write files (`GIT_TRACE*=PATH`) or change how pathspecs read (`GIT_*_PATHSPECS`).
pub(super) const DANGEROUS_VAR_PREFIXES: &[&str] =
    &["LD_", "DYLD_", "BASH_FUNC_", "GIT_", "NPM_CONFIG_"];
/// bash's own variables and arrays (bash(1), "Shell Variables"): the ones it reads to decide
/// how to find, expand or run later commands (`BASH_CMDS` and `BASH_ALIASES` rewrite what a
/// name runs, `POSIXLY_CORRECT` turns on aliases, `EXECIGNORE` and `FUNCNEST` change lookup
/// and calls), and the ones it maintains itself. Left to scripts: the locale (`LANG`,
/// `LC_*`), `COLUMNS`, `LINES`, `TIMEFORMAT`, and what builtins fill for scripts (`REPLY`,
/// `MAPFILE`, `OPTARG`, `OPTIND`).
pub(super) const SHELL_STATE_VARS: &[&str] = &[
    "CHILD_MAX",
    "COMPREPLY",
    "COPROC",
    "DIRSTACK",
    "EMACS",
    "EPOCHREALTIME",
    "EPOCHSECONDS",
    "EUID",
    "EXECIGNORE",
    "FCEDIT",
    "FIGNORE",
    "FUNCNAME",
    "FUNCNEST",
    "GROUPS",
    "HOSTFILE",
    "HOSTNAME",
    "HOSTTYPE",
    "IGNOREEOF",
    "INSIDE_EMACS",
    "LINENO",
    "MACHTYPE",
    "MAIL",
    "MAILCHECK",
    "MAILPATH",
    "OLDPWD",
    "OPTERR",
    "OSTYPE",
    "PIPESTATUS",
    "POSIXLY_CORRECT",
    "PPID",
    "PROMPT_DIRTRIM",
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PWD",
    "RANDOM",
    "SECONDS",
    "SHLVL",
    "SRANDOM",
    "TMOUT",
    "UID",
];
/// Prefixes of bash's own variables: `BASH`, `BASHOPTS`, `BASHPID` and every `BASH_*`
/// (`BASH_CMDS`, `BASH_ALIASES`, `BASH_COMPAT`, `BASH_ENV`, ...), `COMP_*`, `HIST*`,
/// `READLINE_*`.
pub(super) const SHELL_STATE_PREFIXES: &[&str] = &["BASH", "COMP_", "HIST", "READLINE_"];

pub(super) fn dangerous_var(name: &str) -> bool {
    DANGEROUS_VARS.contains(&name)
        || (DANGEROUS_VAR_PREFIXES.iter().any(|p| name.starts_with(p))
            && !git::SAFE_GIT_VARS.contains(&name))
}

/// Whether `name` is one of bash's own variables ([`SHELL_STATE_VARS`]).
pub(super) fn shell_state_var(name: &str) -> bool {
    SHELL_STATE_VARS.contains(&name) || SHELL_STATE_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The `set` options that change nothing about what later words mean: exit on error,
/// unset variables as errors, tracing, and a pipeline's status.
pub(super) const SET_LETTERS: &[char] = &['e', 'u', 'x'];
pub(super) const SET_NAMES: &[&str] = &["errexit", "nounset", "xtrace", "pipefail"];

/// Why the arguments of `set` (or a shell's options) are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SetRefusal {
    /// An option outside [`SET_LETTERS`] and [`SET_NAMES`], as written (`-k`, `-o posix`).
    Option(String),
    /// An argument built at run time, where an option may stand.
    Dynamic(String),
}

/// Checks the arguments of `set` against the allowlist. Options come first; the first word
/// that is not one (or `--`, `-`) starts the positional parameters, which the engine never
/// assumes values for. Each `o` of a bundle takes the next word as an option name; `-o`
/// without one prints the options.
pub(super) fn set_arguments(args: &[WordInfo]) -> Result<(), SetRefusal> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let Some(a) = w.exact() else {
            return Err(SetRefusal::Dynamic(w.raw.clone()));
        };
        if a == "--" || a == "-" {
            return Ok(());
        }
        let Some(sign) = a.chars().next().filter(|c| matches!(c, '-' | '+')) else {
            return Ok(());
        };
        let mut names = 0;
        for ch in a[1..].chars() {
            match ch {
                c if SET_LETTERS.contains(&c) => {}
                'o' => names += 1,
                c => return Err(SetRefusal::Option(format!("{sign}{c}"))),
            }
        }
        i += 1;
        for _ in 0..names {
            match args.get(i) {
                None => return Ok(()),
                Some(w) => match w.exact() {
                    None => return Err(SetRefusal::Dynamic(w.raw.clone())),
                    Some(n) if SET_NAMES.contains(&n) => {}
                    Some(n) => return Err(SetRefusal::Option(format!("{sign}o {n}"))),
                },
            }
            i += 1;
        }
    }
    Ok(())
}

/// The variables a builtin sets by name (`read NAME`, `read -a NAME`, `mapfile NAME`,
/// `getopts SPEC NAME`, `wait -p NAME`), as written; `None` for a name built at run time.
/// (`printf -v` is refused whole by the semantics data.)
pub(super) fn builtin_assigns(base: &str, args: &[WordInfo]) -> Vec<Option<String>> {
    // Options taking a value, options naming a variable, and which operands are names.
    let (value_opts, name_opts, operand_names): (&str, &str, fn(usize) -> bool) = match base {
        "read" => ("dnNptui", "a", |_| true),
        "mapfile" | "readarray" => ("dnOsuCc", "", |_| true),
        "wait" => ("", "p", |_| false),
        "getopts" => ("", "", |k| k == 1),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut i = 0;
    let mut options = true;
    let mut operand = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        match w.exact() {
            Some("--") if options => options = false,
            Some(s) if options && s.starts_with('-') && s.len() > 1 => {
                for (k, ch) in s.char_indices().skip(1) {
                    if value_opts.contains(ch) || name_opts.contains(ch) {
                        let rest = &s[k + ch.len_utf8()..];
                        let value = if rest.is_empty() {
                            i += 1;
                            args.get(i - 1).map(|v| v.exact().map(str::to_string))
                        } else {
                            Some(Some(rest.to_string()))
                        };
                        if name_opts.contains(ch) {
                            out.push(value.flatten());
                        }
                        break;
                    }
                }
            }
            other => {
                options = false;
                if operand_names(operand) {
                    out.push(other.map(str::to_string));
                }
                operand += 1;
            }
        }
    }
    out
}

/// The variables arithmetic evaluates the text of, and those the command line sets from
/// values known only at run time, gathered over the line and every script it runs
/// ([`Flat::evaluated`], [`Flat::run_time`], [`Flat::copies`], and what builtins set).
#[derive(Default)]
pub(super) struct RunTimeValues {
    evaluated: Vec<(String, String)>,
    /// The names in `evaluated`.
    evaluated_names: std::collections::HashSet<String>,
    run_time: Vec<String>,
    copies: Vec<(String, String)>,
    /// A file run by `source` may set any variable.
    any: bool,
}

/// Variables bash sets from text it meets at run time: the last argument of the command
/// before (`$_`), the parts of a `[[ =~ ]]` match, the command running.
const SET_BY_BASH_AT_RUN_TIME: &[&str] = &["_", "BASH_REMATCH", "BASH_COMMAND"];

/// The name a variable is gathered under: the positional parameters (`1`, `@`, `*`) as `@`.
fn gathered(name: &str) -> &str {
    if name == "*" || name.bytes().all(|c| c.is_ascii_digit()) {
        "@"
    } else {
        name
    }
}

impl RunTimeValues {
    fn set_at_run_time(&mut self, name: &str) {
        let name = gathered(name);
        if !self.run_time.iter().any(|n| n == name) {
            self.run_time.push(name.to_string());
        }
    }

    fn evaluate(&mut self, name: &str, shown: &str) {
        if self.evaluated_names.insert(name.to_string()) {
            self.evaluated
                .push((name.to_string(), shown.chars().take(80).collect()));
        }
    }

    /// The variables arithmetic evaluates that hold a value set at run time, with where
    /// (a variable copied from one set at run time is set at run time too).
    fn refused(&self) -> Vec<(&str, &str)> {
        let mut copied_to: std::collections::HashMap<&str, Vec<&str>> =
            std::collections::HashMap::new();
        for (to, from) in &self.copies {
            copied_to
                .entry(gathered(from))
                .or_default()
                .push(gathered(to));
        }
        let mut run: std::collections::HashSet<&str> =
            self.run_time.iter().map(String::as_str).collect();
        let mut next: Vec<&str> = run.iter().copied().collect();
        while let Some(n) = next.pop() {
            for &to in copied_to.get(n).into_iter().flatten() {
                if run.insert(to) {
                    next.push(to);
                }
            }
        }
        self.evaluated
            .iter()
            .filter(|(n, _)| {
                self.any
                    || run.contains(&gathered(n))
                    || SET_BY_BASH_AT_RUN_TIME.contains(&n.as_str())
                    || (n == "!" && !run.is_empty())
            })
            .map(|(n, s)| (n.as_str(), s.as_str()))
            .collect()
    }
}

/// Builtins that take variables by name, and evaluate a subscript in one.
const SUBSCRIPT_BUILTINS: &[&str] = &[
    "test",
    "[",
    "unset",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "wait",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
];

/// Builtins that change how the shell reads or runs later commands, refused in any form:
/// shell options, loadable and disabled builtins, key bindings, history re-execution.
pub(super) const SHELL_STATE_BUILTINS: &[&str] = &["shopt", "enable", "bind", "fc", "history"];

impl<'a> Judge<'a> {
    pub(super) fn flat(&mut self, flat: &Flat, via: &[String]) {
        for p in &flat.problems {
            let what = if via.is_empty() {
                String::new()
            } else {
                format!(" (inside {})", via.join(" → "))
            };
            self.violate(
                p.reason(),
                format!("{}{what}", p.message()),
                None,
                self.command.clone(),
                "command",
                None,
            );
        }
        if self.base.is_none() {
            let first = flat
                .commands
                .iter()
                .find(|c| c.context == Context::TopLevel && !c.words.is_empty())
                .or_else(|| flat.commands.iter().find(|c| !c.words.is_empty()));
            self.base = first.and_then(|c| c.words.first()).map(WordInfo::display);
        }
        for n in &flat.assigned {
            self.assignment(n, "");
        }
        for (n, shown) in &flat.evaluated {
            self.run_time.evaluate(n, shown);
        }
        for n in &flat.run_time {
            self.run_time.set_at_run_time(n);
        }
        self.run_time.copies.extend(flat.copies.iter().cloned());
        if !via.is_empty() {
            // A script's positional parameters are the arguments it was given.
            self.run_time.set_at_run_time("@");
        }
        // What the commands so far write: the paths, and whether one writes where its
        // evidence does not say (a safe_write or dangerous command without a path written).
        let mut written: Vec<PathBuf> = Vec::new();
        let mut unseen = false;
        for (k, c) in flat.commands.iter().enumerate() {
            if !flat.concurrent {
                self.loop_globs_after_writes(flat, Some(k), &written, unseen, via);
            }
            let (paths, commands) = (self.paths.len(), self.commands.len());
            self.simple(c, via);
            let writes: Vec<PathBuf> = self.paths[paths..]
                .iter()
                .filter(|p| p.access == "write" && !p.resolved.is_empty())
                .map(|p| PathBuf::from(&p.resolved))
                .collect();
            let writer = self.commands[commands..]
                .iter()
                .any(|e| matches!(e.category.as_deref(), Some("safe_write" | "dangerous")));
            unseen |= writer && writes.is_empty();
            written.extend(writes);
        }
        // Where commands may run beside the loop, every write of the line counts.
        self.loop_globs_after_writes(
            flat,
            (!flat.concurrent).then_some(flat.commands.len()),
            &written,
            unseen,
            via,
        );
        if via.is_empty() {
            self.arithmetic_on_run_time_values();
        }
    }

    /// Arithmetic evaluates a variable's text as an expression, running the command
    /// substitutions of its subscripts: a value the line sets at run time (`x=$(cat f)`,
    /// `read x`) is refused there, as a literal value that would run one is.
    fn arithmetic_on_run_time_values(&mut self) {
        let refused: Vec<(String, String)> = self
            .run_time
            .refused()
            .into_iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        for (name, shown) in refused {
            let (what, value) = match name.as_str() {
                "!" => (
                    "a variable named by another".to_string(),
                    "\"$x\"".to_string(),
                ),
                n if gathered(n) == "@" => (format!("`${n}`"), format!("\"${n}\"")),
                n => (format!("`{n}`"), format!("\"${n}\"")),
            };
            self.violate(
                Reason::UnsupportedConstruct,
                format!(
                    "`{shown}` evaluates the text of {what}, which this command sets at run time, as an arithmetic expression: a value such as `a[$(cmd)]` would run `cmd`. \
                     Pass the value as it is ({value}), compare numbers with `[ {value} -gt 3 ]` (`[` and `test` do not evaluate their operands), or read the value first and write the number in the next command."
                ),
                Some(shown.clone()),
                name,
                "command",
                None,
            );
        }
    }

    /// A loop's glob was expanded from the files there are before the command line runs; a
    /// command before it (or beside it, `at` `None`: every loop) that writes under a
    /// directory it reads (or above it), or writes where its evidence does not say, could
    /// change what it matches when it runs (`ln -s / x/l; for d in x/*/`). Inside a script
    /// (`bash -c`), whose command line may have written before it, any write so far counts.
    fn loop_globs_after_writes(
        &mut self,
        flat: &Flat,
        at: Option<usize>,
        written: &[PathBuf],
        unseen: bool,
        via: &[String],
    ) {
        // (A glob found in a second walk of a loop body counts the commands the walk added
        // before it, some of which may be dropped as repeats: past the end, it is checked at
        // the end.)
        let last = flat.commands.len();
        for g in flat
            .loop_globs
            .iter()
            .filter(|g| at.is_none_or(|k| g.after == k || (k == last && g.after > last)))
        {
            let bases: Vec<PathBuf> = g.bases.iter().map(|b| paths::resolve(b).target).collect();
            let hit = if via.is_empty() {
                unseen
                    || written
                        .iter()
                        .any(|w| bases.iter().any(|b| w.starts_with(b) || b.starts_with(w)))
            } else {
                self.max_access == Some(Access::Write)
                    || self.max_category.is_some_and(|c| c >= Category::SafeWrite)
            };
            if hit {
                self.violate(
                    Reason::UnsupportedConstruct,
                    format!("a command before or beside the loop over `{}` may create or remove files where its glob looks, which would change what it matches when the loop runs; run that command first, on its own, then the loop", g.raw),
                    None,
                    g.raw.clone(),
                    "command",
                    None,
                );
            }
        }
    }

    /// Judges one simple command: assignments, redirects, then the command itself.
    pub(super) fn simple(&mut self, c: &SimpleCmd, via: &[String]) {
        let label = || {
            c.words
                .iter()
                .map(WordInfo::display)
                .collect::<Vec<_>>()
                .join(" ")
        };
        if !c.assignments.is_empty() {
            let label = label();
            for (name, value) in &c.assignments {
                self.assignment(name, &label);
                if let Some(v) = value.exact() {
                    self.arithmetic_value(name, v, &label);
                }
            }
        }
        // A glob that bash 5.1 and older can expand through `..`.
        let globs = c
            .words
            .iter()
            .chain(c.redirects.iter().filter_map(|r| r.target.as_ref()))
            .filter(|w| w.glob);
        for w in globs {
            if shell::glob_reaches_parent(w.value.as_deref().unwrap_or(&w.raw)) {
                self.violate(
                    Reason::UnsupportedConstruct,
                    format!("the glob `{}` can match `..` (the parent directory) in bash 5.1 and older; match dotfiles with `.[!.]*` or name the files", w.raw),
                    Some(label()),
                    w.raw.clone(),
                    "command",
                    None,
                );
            }
        }
        let cwds: &[PathBuf] = match &c.cwds {
            Some(d) => d,
            None => {
                let label = label();
                self.violate(
                    Reason::UnsupportedConstruct,
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
        let saved = (self.stdin_from.take(), self.stdin_redirected);
        self.stdin_from = c.stdin_from.clone();
        self.stdin_redirected = c.redirects.iter().any(|r| {
            matches!(
                r.kind,
                RedirKind::Read | RedirKind::ReadWrite | RedirKind::Data | RedirKind::Dup
            )
        });
        self.argv(&c.words, cwds, via, ctx_name, false);
        (self.stdin_from, self.stdin_redirected) = saved;
    }

    pub(super) fn assignment(&mut self, name: &str, label: &str) {
        // `NAME[i]`: the array's name.
        let name = name.split('[').next().unwrap_or(name);
        if shell_state_var(name) {
            self.violate(
                Reason::Denied,
                format!("{name} is one of bash's own variables: setting it changes how the shell finds, expands or runs later commands; it is not allowed. Run the commands without it."),
                Some(if label.is_empty() { format!("{name}=...") } else { label.to_string() }),
                name.to_string(),
                "command",
                None,
            );
            return;
        }
        if dangerous_var(name) {
            let message = if name.starts_with("GIT_") {
                git::variable_refusal(name)
            } else {
                format!("setting {name} can make commands run other programs or read other files; it is not allowed. Run the command without it.")
            };
            self.violate(
                Reason::Denied,
                message,
                Some(if label.is_empty() {
                    format!("{name}=...")
                } else {
                    label.to_string()
                }),
                name.to_string(),
                "command",
                None,
            );
        }
    }

    /// A value that an arithmetic expression would evaluate again (`(( x ))`, `$((x))`,
    /// `[[ x -eq 1 ]]`, an index) assigns what it names: `x='BASH_COMPAT=31'` is refused
    /// when the name it would set is one of bash's own or a dangerous one.
    pub(super) fn arithmetic_value(&mut self, name: &str, value: &str, label: &str) {
        if !value.contains('=') && !value.contains("++") && !value.contains("--") {
            return;
        }
        let Ok(names) = shell::arithmetic_assignments(value) else {
            return;
        };
        if let Some(n) = names
            .into_iter()
            .find(|n| shell_state_var(n) || dangerous_var(n))
        {
            self.violate(
                Reason::UnsupportedConstruct,
                format!("the value of {name} (`{value}`) sets {n} when an arithmetic expression evaluates it; pass the text another way (a file, or an argument)"),
                Some(if label.is_empty() { format!("{name}=...") } else { label.to_string() }),
                name.to_string(),
                "command",
                None,
            );
        }
    }

    /// Judges an argv: the name, wrappers, category, rules and effects.
    pub(super) fn argv(
        &mut self,
        words: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        context: &'static str,
        under_replace: bool,
    ) {
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
        self.commands.push(CommandEvidence {
            name: String::new(),
            argv: Vec::new(),
            category: None,
            rule: None,
            verdict: "allowed",
            reason: None,
            context,
            via: Vec::new(),
        });
        self.argv_inner(words, cwds, via, context, under_replace, &label, &mut ev);
        if let Some(v) = self.violations[before..].first() {
            ev.verdict = DENIED;
            ev.reason = Some(v.reason.as_str());
        }
        if let Some(s) = self.commands.get_mut(slot) {
            *s = ev;
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn argv_inner(
        &mut self,
        words: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        context: &'static str,
        under_replace: bool,
        label: &str,
        ev: &mut CommandEvidence,
    ) {
        let Some(name) = words.first().and_then(WordInfo::exact) else {
            let raw = words.first().map(|w| w.raw.clone()).unwrap_or_default();
            self.violate(
                Reason::DynamicCommand,
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
                Reason::PrivilegeEscalation,
                format!(
                    "`{base}` runs commands with elevated privileges; gptel-scope never does that"
                ),
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
                Reason::Denied,
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
            match self.category_of_path(name, &sub_words, cwds) {
                Some((cat, entry)) => {
                    ev.category = Some(cat.as_str().into());
                    ev.rule = Some(entry);
                    self.categorized(cat, name, args, cwds, label);
                }
                None => {
                    let dangerous = bt
                        .categories
                        .dangerous
                        .iter()
                        .find(|e| entry_matches(e, base, &sub_words))
                        .cloned();
                    if let Some(e) = dangerous {
                        ev.category = Some("dangerous".into());
                        self.dangerous(&e, label);
                        return;
                    }
                    self.violate(
                        Reason::CommandNotAllowed,
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

        // Shell state: options and builtins that change what later words mean.
        if SHELL_STATE_BUILTINS.contains(&base)
            || (base == "hash"
                && args.iter().any(|a| {
                    a.exact()
                        .is_none_or(|s| s.starts_with('-') && s.contains('p'))
                }))
        {
            self.violate(
                Reason::UnsupportedConstruct,
                format!("`{base}` changes how the shell reads or runs later commands (shell options, builtins, command lookup); it is not allowed. Run the commands without it."),
                Some(label.to_string()),
                base.to_string(),
                "command",
                None,
            );
            return;
        }
        if base == "set" {
            match set_arguments(args) {
                Ok(()) if args.iter().any(|a| a.exact().is_none()) => {
                    self.run_time.set_at_run_time("@")
                }
                Ok(()) => {}
                Err(SetRefusal::Option(opt)) => {
                    self.violate(
                        Reason::UnsupportedConstruct,
                        format!("`set {opt}` changes how the shell reads or runs later commands; only `set -e`, `-u`, `-x`, `-o pipefail` (`errexit`, `nounset`, `xtrace`) and their `+` forms are allowed. Run the commands without `set {opt}`."),
                        Some(label.to_string()),
                        format!("set {opt}"),
                        "command",
                        None,
                    );
                    return;
                }
                Err(SetRefusal::Dynamic(raw)) => {
                    self.violate(
                        Reason::DynamicCommand,
                        format!("`{label}`: the option `{raw}` of `set` is built at run time; write the options literally"),
                        Some(label.to_string()),
                        "set".into(),
                        "command",
                        None,
                    );
                    return;
                }
            }
        }

        // Shell constructs.
        if matches!(
            base,
            "eval" | "source" | "." | "alias" | "trap" | "function"
        ) {
            let key = match base {
                "." => "source",
                b => b,
            };
            if key == "source" {
                self.run_time.any = true;
                return self.source(base, args, cwds, label, ev);
            }
            if !bt.allow_constructs.iter().any(|c| c == key) {
                self.violate(
                    Reason::UnsupportedConstruct,
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
                    None => self.violate(
                        Reason::DynamicCommand,
                        "`eval` of text built at run time cannot be judged".into(),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    ),
                }
                return;
            }
            if key == "trap" {
                // `trap [-lp] [[ACTION] SIGNAL...]`: with two operands or more, the first is a
                // script run later; judged here, from the directories the trap is set in.
                let mut i = 0;
                while let Some(s) = args.get(i).and_then(WordInfo::exact) {
                    if s == "--" {
                        i += 1;
                        break;
                    }
                    if !s.starts_with('-') || s == "-" {
                        break;
                    }
                    i += 1;
                }
                let operands = args.get(i..).unwrap_or(&[]);
                if operands.len() >= 2 {
                    match operands[0].exact() {
                        Some(s) if s == "-" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())) => {}
                        Some(action) => {
                            let action = action.to_string();
                            self.script(&action, cwds, via, "trap");
                        }
                        None => self.violate(Reason::DynamicCommand, format!("`{label}`: the action of `trap` is built at run time; write it literally"), Some(label.to_string()), base.to_string(), "command", None),
                    }
                } else if args.get(i).is_some_and(|a| a.exact().is_none()) {
                    self.violate(Reason::DynamicCommand, format!("`{label}`: an argument of `trap` is built at run time; write it literally"), Some(label.to_string()), base.to_string(), "command", None);
                }
            }
            // Aliases are expanded by `sh` (POSIX mode, dash) and zsh scripts, never judged.
            let other_shell = via.iter().any(|w| {
                w.strip_suffix(" -c")
                    .is_some_and(|sh| basename(sh) != "bash")
            });
            if key == "alias"
                && other_shell
                && args
                    .iter()
                    .any(|a| a.exact().is_none_or(|s| s.contains('=')))
            {
                self.violate(
                    Reason::UnsupportedConstruct,
                    format!("`{label}`: an alias defined in a script of {} is expanded in the commands after it, which are judged as written; run the commands directly instead", via.join(" → ")),
                    Some(label.to_string()),
                    base.to_string(),
                    "command",
                    None,
                );
                return;
            }
            ev.category = Some("read_only".into());
            ev.rule = Some(format!("allow_constructs: {key}"));
            self.directory_scope(Category::ReadOnly, cwds, label);
            return;
        }

        // Wrappers: judged themselves, then what they run.
        match base {
            "builtin" => {
                return self.wrapped(words, 1, cwds, via, "builtin", context, under_replace)
            }
            "command" => {
                // `command -p -v -V`: flags only (bash's own getopt, bundles allowed).
                let mut lookup = false;
                let skip = self.skip_options(args, &effects::wrapper(&[], &[], &[]), |_, o| {
                    lookup |= o.name == "-v" || o.name == "-V"
                });
                if lookup {
                    ev.category = Some("read_only".into());
                    ev.rule = Some("builtin: command -v".into());
                    self.directory_scope(Category::Builtin, cwds, label);
                    return;
                }
                return self.wrapped(
                    words,
                    1 + skip,
                    cwds,
                    via,
                    "command",
                    context,
                    under_replace,
                );
            }
            "exec" => {
                // `exec [-cl] [-a NAME]`, bundles allowed (`exec -ca NAME cmd`).
                let skip = self.skip_options(args, &effects::wrapper(&["-a"], &[], &[]), |_, _| {});
                if args.len() <= skip {
                    self.directory_scope(Category::Builtin, cwds, label);
                    return;
                }
                return self.wrapped(words, 1 + skip, cwds, via, "exec", context, under_replace);
            }
            "nohup" => return self.wrapped(words, 1, cwds, via, "nohup", context, under_replace),
            "time" => {
                let grammar = effects::wrapper(
                    &["-f", "--format", "-o", "--output"],
                    &[],
                    &["--append", "--portability", "--verbose", "--quiet"],
                );
                let skip = self.skip_options(args, &grammar, |j, o| {
                    if let (Some(val), true) = (&o.value, o.name == "-o" || o.name == "--output") {
                        j.path_effect(val, Access::Write, cwds, "option -o of time", true);
                    }
                });
                return self.wrapped(words, 1 + skip, cwds, via, "time", context, under_replace);
            }
            "nice" => {
                let skip = self.skip_options(
                    args,
                    &effects::wrapper(&["-n", "--adjustment"], &[], &[]),
                    |_, _| {},
                );
                return self.wrapped(words, 1 + skip, cwds, via, "nice", context, under_replace);
            }
            "stdbuf" => {
                let skip = self.skip_options(
                    args,
                    &effects::wrapper(
                        &["-i", "-o", "-e", "--input", "--output", "--error"],
                        &[],
                        &[],
                    ),
                    |_, _| {},
                );
                return self.wrapped(words, 1 + skip, cwds, via, "stdbuf", context, under_replace);
            }
            "timeout" => {
                let grammar = effects::wrapper(
                    &["-s", "--signal", "-k", "--kill-after"],
                    &[],
                    &["--foreground", "--preserve-status", "--verbose"],
                );
                let skip = self.skip_options(args, &grammar, |_, _| {});
                // The duration comes first.
                return self.wrapped(
                    words,
                    2 + skip,
                    cwds,
                    via,
                    "timeout",
                    context,
                    under_replace,
                );
            }
            "env" => return self.env(words, cwds, via, context, label, ev),
            "xargs" => return self.xargs(words, cwds, via, context, label),
            "find" => {
                if let Some((cat, entry)) = self.category_of(name, &sub_words, cwds) {
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

        // Builtins that take a variable's name evaluate its subscript (`test -v 'a[i]'`,
        // `read 'a[i]'`, `declare 'a[i]=v'`).
        if SUBSCRIPT_BUILTINS.contains(&base) {
            for a in args {
                if let Some(i) = a.value.as_deref().and_then(shell::name_subscript) {
                    for n in shell::arithmetic_names(i) {
                        self.run_time.evaluate(n, label);
                    }
                }
            }
        }

        // Declarations: their NAME=VALUE arguments are assignments.
        if matches!(
            base,
            "export" | "declare" | "typeset" | "local" | "readonly"
        ) {
            // `-i`: every assignment to the names evaluates its value as arithmetic (the
            // names an initial value holds count as the name's, below).
            let integer = base != "export"
                && base != "readonly"
                && args.iter().any(|a| {
                    a.exact().is_some_and(|v| {
                        v.starts_with(['-', '+']) && !v.starts_with("--") && v.contains('i')
                    })
                });
            if integer {
                for a in args.iter().filter(|a| !a.raw.starts_with(['-', '+'])) {
                    let n = a.raw.split_once('=').map_or(a.raw.as_str(), |(n, _)| n);
                    self.run_time.evaluate(
                        n.split('[').next().unwrap_or(n).trim_end_matches('+'),
                        label,
                    );
                }
            }
            for a in args {
                // The name of `NAME=(...)` or `NAME[i]=v`, whose word is no literal.
                if let Some((n, _)) = a.raw.split_once('=') {
                    let n = n.split('[').next().unwrap_or(n).trim_end_matches('+');
                    if !n.is_empty() && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
                        self.assignment(n, label);
                    }
                }
                // `-n` makes a name reference: later assignments then set whatever it names.
                if matches!(base, "declare" | "typeset" | "local")
                    && a.exact().is_some_and(|v| {
                        v.starts_with('-') && !v.starts_with("--") && v.contains('n')
                    })
                {
                    self.violate(
                        Reason::UnsupportedConstruct,
                        format!("`{label}`: a name reference (-n) lets a later assignment set any variable; it is not allowed"),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    );
                }
                if a.exact().is_some_and(|v| {
                    v.split_once('=')
                        .map_or(v, |(n, _)| n)
                        .contains(['[', '`', '$'])
                }) {
                    self.violate(
                        Reason::UnsupportedConstruct,
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
                        // Arithmetic evaluating it evaluates the names in its value.
                        let to = name.split('[').next().unwrap_or(name).trim_end_matches('+');
                        for n in shell::arithmetic_names(value)
                            .into_iter()
                            .filter(|n| *n != "!")
                        {
                            self.run_time.copies.push((to.to_string(), n.to_string()));
                        }
                        self.arithmetic_value(name, value, label);
                        if value.contains("$(") || value.contains('`') {
                            self.violate(
                                Reason::UnsupportedConstruct,
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
                        Reason::DynamicCommand,
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
        // Builtins that set variables by name (from what they read), and `let`'s arithmetic.
        let default = match base {
            "read" => Some("REPLY"),
            "mapfile" | "readarray" => Some("MAPFILE"),
            "getopts" => Some("OPTARG"),
            _ => None,
        };
        if let Some(n) = default {
            self.run_time.set_at_run_time(n);
        }
        for n in builtin_assigns(base, args) {
            match n {
                Some(n) => {
                    self.run_time.set_at_run_time(&n);
                    self.assignment(&n, label)
                }
                None => self.violate(Reason::DynamicCommand, format!("`{label}`: the name of a variable `{base}` sets is built at run time; write it literally"), Some(label.to_string()), base.to_string(), "command", None),
            }
        }
        if base == "let" {
            for a in args {
                for n in shell::arithmetic_names(&a.raw) {
                    self.run_time.evaluate(n, label);
                }
                match shell::arithmetic_assignments(a.value.as_deref().unwrap_or(&a.raw)) {
                    Ok(names) => names.iter().for_each(|n| self.assignment(n, label)),
                    Err(p) => self.violate(
                        p.reason(),
                        p.message().to_string(),
                        Some(label.to_string()),
                        base.to_string(),
                        "command",
                        None,
                    ),
                }
            }
        }
        if matches!(base, "mapfile" | "readarray")
            && args.iter().any(|a| {
                a.exact()
                    .is_some_and(|s| s.starts_with('-') && !s.starts_with("--") && s.contains('C'))
            })
        {
            self.violate(
                Reason::UnsupportedConstruct,
                format!("`{label}`: `{base} -C` runs text as a command; it is not allowed"),
                Some(label.to_string()),
                base.to_string(),
                "command",
                None,
            );
        }
        // An ordinary command.
        if INERT_BUILTINS.contains(&base) {
            // `test -v NAME`, `unset NAME` evaluate array subscripts: `test -v 'a[$(cmd)]'` runs cmd.
            if matches!(base, "test" | "[" | "unset")
                && args.iter().any(|a| {
                    a.value
                        .as_deref()
                        .is_some_and(crate::shell::holds_substitution_text)
                })
            {
                self.violate(
                    Reason::UnsupportedConstruct,
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
                if let Some(t) = args
                    .iter()
                    .find(|w| !matches!(w.exact(), Some(s) if s.starts_with('-')))
                {
                    self.path_effect(t, Access::Read, cwds, &format!("directory of {base}"), true);
                }
            }
            return;
        }
        let (cat, entry) = match self.category_of(name, &sub_words, cwds) {
            Some(found) => found,
            None => {
                self.not_allowed(name, &sub_words, label, ev);
                // Allowed once by the user, it is still judged for what it reads, writes and
                // runs, as a listed command is: the grant lets the program run, not touch what
                // the scope keeps from it (and the sandbox shows the call what its decision
                // allows).
                if !self.last_granted() {
                    return;
                }
                (Category::ReadOnly, format!("allowed once: {name}"))
            }
        };
        ev.category = Some(cat.as_str().into());
        ev.rule = Some(entry.clone());
        if cat == Category::Dangerous {
            let bare = entry
                .strip_prefix("dangerous: ")
                .unwrap_or(&entry)
                .to_string();
            self.dangerous(&bare, label);
        }
        self.rules(name, args, label);
        if base == "git" {
            self.git(args, &sub_words, &entry, cwds, label);
        }
        self.categorized(cat, name, args, cwds, label);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn wrapped(
        &mut self,
        words: &[WordInfo],
        at: usize,
        cwds: &[PathBuf],
        via: &[String],
        wrapper: &str,
        context: &'static str,
        under_replace: bool,
    ) {
        let inner = words.get(at..).unwrap_or(&[]);
        if inner.is_empty() {
            let label = words
                .iter()
                .map(WordInfo::display)
                .collect::<Vec<_>>()
                .join(" ");
            self.violate(
                Reason::CommandNotAllowed,
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

    pub(super) fn env(
        &mut self,
        words: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        context: &'static str,
        label: &str,
        ev: &mut CommandEvidence,
    ) {
        let args = &words[1..];
        // GNU env's getopt: options end at the first operand; bundles (`-iu NAME`, `-vC/dir`).
        let grammar = effects::wrapper(
            &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
            &["--ignore-signal", "--default-signal", "--block-signal"],
            &[
                "--ignore-environment",
                "--null",
                "--debug",
                "--list-signal-handling",
            ],
        );
        let mut refused = None;
        let mut i = self.skip_options(args, &grammar, |_, o| {
            if matches!(o.name.as_str(), "-S" | "--split-string" | "-C" | "--chdir")
                && refused.is_none()
            {
                refused = Some(o.name.clone());
            }
        });
        if let Some(opt) = refused {
            self.violate(
                Reason::FlagNotAllowed,
                format!("`env {opt}` re-parses a command line or changes directory; call the command directly."),
                Some(label.to_string()),
                "env".into(),
                "command",
                None,
            );
            return;
        }
        // `env -` is `env -i`; then the assignments.
        if args.get(i).and_then(WordInfo::exact) == Some("-") {
            i += 1;
        }
        // The options, `-` and the assignments are env's: none may be built at run time.
        while let Some(w) = args.get(i) {
            let Some(s) = w.exact() else {
                self.violate(Reason::DynamicCommand, format!("`{label}`: an argument of env (`{}`) is built at run time; write it literally.", w.raw), Some(label.to_string()), "env".into(), "command", None);
                return;
            };
            let Some((name, _)) = s.split_once('=') else {
                break;
            };
            self.assignment(name, label);
            i += 1;
        }
        if i >= args.len() {
            // Bare `env` prints the environment: a command of its own.
            match self.category_of("env", &[], cwds) {
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

    pub(super) fn xargs(
        &mut self,
        words: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        context: &'static str,
        label: &str,
    ) {
        let args = &words[1..];
        // GNU xargs's getopt ("+0a:E:e::i::I:l::L:n:prs:txP:d:"): `-e`, `-i` and `-l` take a
        // value only attached (`xargs -e rm ls` runs `rm`), options end at the command.
        let grammar = effects::wrapper(
            &[
                "-a",
                "--arg-file",
                "-d",
                "--delimiter",
                "-E",
                "-I",
                "-L",
                "-n",
                "--max-args",
                "-P",
                "--max-procs",
                "-s",
                "--max-chars",
                "--process-slot-var",
            ],
            &["-e", "--eof", "-i", "--replace", "-l", "--max-lines"],
            &[
                "--null",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--open-tty",
                "--show-limits",
            ],
        );
        let mut replace = false;
        let mut names_from_file = false;
        let i = self.skip_options(args, &grammar, |me, o| match o.name.as_str() {
            "-I" | "-i" | "--replace" => replace = true,
            "-a" | "--arg-file" => {
                names_from_file = true;
                if let Some(v) = &o.value {
                    me.path_effect(v, Access::Read, cwds, "option -a of xargs", false);
                }
            }
            "-p" | "--interactive" | "-o" | "--open-tty" => {
                me.violate(
                    Reason::FlagNotAllowed,
                    format!("`xargs {}` needs a terminal; it is not allowed.", o.name),
                    Some(label.to_string()),
                    "xargs".into(),
                    "command",
                    None,
                );
            }
            _ => {}
        });
        let mut v = via.to_vec();
        v.push("xargs".into());
        if i >= args.len() {
            // Bare `xargs` runs `echo`.
            let echo = [WordInfo::literal("echo")];
            self.argv(&echo, cwds, &v, context, replace);
            return;
        }
        self.xargs_reads(&args[i..], names_from_file, cwds, label);
        let saved = (self.stdin_from.take(), self.runtime_roots.take());
        let wrote = self.writes(|me| me.argv(&args[i..], cwds, &v, context, replace));
        (self.stdin_from, self.runtime_roots) = saved;
        if wrote {
            // The paths come from the input: any file of the write scope.
            if let Some(doc) = self.ctx.matcher.writable_protected() {
                let name = args[i].display();
                self.violate(
                    Reason::ScopeDocument,
                    format!(
                        "{} (`xargs {name}` writes paths read from its input, which the engine cannot see, and the write scope holds it: pass the paths as arguments)",
                        self.ctx.matcher.scope_document_message(&format!("`{label}`"), &doc, &doc.to_string_lossy())
                    ),
                    Some(label.to_string()),
                    doc.to_string_lossy().into_owned(),
                    "path",
                    Some(Access::Write),
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn shell(
        &mut self,
        name: &str,
        words: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        under_replace: bool,
        label: &str,
        ev: &mut CommandEvidence,
    ) {
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
                if matches!(s, "--noprofile" | "--norc" | "--restricted") {
                    i += 1;
                    continue;
                }
                self.violate(Reason::FlagNotAllowed, format!("`{name} {s}` is not allowed (it can run startup files or change how scripts are read)"), Some(label.to_string()), name.to_string(), "command", None);
                return;
            }
            if (s.starts_with('-') || s.starts_with('+')) && s.len() > 1 {
                let sign = &s[..1];
                for ch in s[1..].chars() {
                    // The options a shell starts with: the same allowlist as `set`.
                    let refused = match ch {
                        'c' => {
                            script_flag = true;
                            None
                        }
                        'v' | 'n' => None,
                        c if SET_LETTERS.contains(&c) => None,
                        'o' => {
                            i += 1;
                            match args.get(i).map(WordInfo::exact) {
                                Some(Some(n)) if SET_NAMES.contains(&n) => None,
                                Some(Some(n)) => Some(format!("{sign}o {n}")),
                                Some(None) => Some(format!("{sign}o {}", args[i].raw)),
                                None => Some(format!("{sign}o")),
                            }
                        }
                        'l' | 'i' | 's' => Some(String::new()),
                        c if c.is_ascii_alphabetic() => Some(format!("{sign}{c}")),
                        _ => Some(String::new()),
                    };
                    match refused {
                        None => {}
                        Some(opt) if !opt.is_empty() => {
                            self.violate(
                                Reason::UnsupportedConstruct,
                                format!("`{name} {opt}` changes how the shell reads or runs the commands it is given; only `-e`, `-u`, `-x`, `-o pipefail` (`errexit`, `nounset`, `xtrace`) and their `+` forms are allowed. Run it without `{opt}`."),
                                Some(label.to_string()),
                                name.to_string(),
                                "command",
                                None,
                            );
                            return;
                        }
                        Some(_) => {
                            self.violate(Reason::FlagNotAllowed, format!("`{name} -{ch}` is not allowed (login and interactive shells run startup files)"), Some(label.to_string()), name.to_string(), "command", None);
                            return;
                        }
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        // `bash FILE`: an entry naming the script matches the file it names.
        let script_file = args.get(i).filter(|_| !script_flag);
        let listed = self.category_of(
            name,
            &script_file
                .map(WordInfo::shown)
                .into_iter()
                .collect::<Vec<_>>(),
            cwds,
        );
        if !script_flag {
            if let Some((cat, e)) = listed {
                ev.category = Some(cat.as_str().into());
                ev.rule = Some(e);
                self.warn(format!(
                    "`{label}` runs a script whose content was not judged (the scope lists {name})"
                ));
                if let Some(f) = script_file {
                    self.path_effect(f, Access::Read, cwds, &format!("script {name} runs"), true);
                }
                self.categorized(cat, name, args.get(i + 1..).unwrap_or(&[]), cwds, label);
                return;
            }
            self.violate(
                Reason::UnsupportedConstruct,
                format!("`{label}` runs a script file or standard input that cannot be judged before it runs; run its commands directly, or `{name} -c 'COMMANDS'`"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
            return;
        }
        let Some(script) = args.get(i) else {
            self.violate(
                Reason::ParseError,
                format!("`{name} -c` without a script"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
            return;
        };
        if under_replace {
            self.violate(
                Reason::DynamicCommand,
                format!("`{label}` under `xargs -I` builds its script from input at run time; use `xargs {name} -c '... \"$1\"' _` or run the commands directly"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
            return;
        }
        let Some(text) = script.exact() else {
            self.violate(
                Reason::DynamicCommand,
                format!("the script of `{name} -c` is built at run time; write it literally"),
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
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

    /// `source FILE` and `. FILE` run the file's text in this shell, text the engine does not
    /// judge. They run when the scope lists that file (`source ./bin/env.sh`, matched by the
    /// file it names from the directories the command runs in, not by its spelling) or allows
    /// the construct (`allow_constructs: [source]`); either way the file must be readable in
    /// the scope, and written with a `/` (a bare name is looked up in `PATH` first).
    fn source(
        &mut self,
        base: &str,
        args: &[WordInfo],
        cwds: &[PathBuf],
        label: &str,
        ev: &mut CommandEvidence,
    ) {
        let file = match args.first().and_then(WordInfo::exact) {
            Some("--") => args.get(1),
            _ => args.first(),
        };
        let Some(file) = file else {
            // bash refuses it ("filename argument required"), and so does the engine: nothing
            // allowed runs a construct the scope does not list.
            self.violate(
                Reason::UnsupportedConstruct,
                format!("`{base}` needs the file it runs; name the file (`{base} ./FILE`), or run the commands directly."),
                Some(label.to_string()),
                base.to_string(),
                "command",
                None,
            );
            return;
        };
        let Some(path) = file.exact() else {
            self.violate(
                Reason::RunTimeOperand,
                scope::run_time_message(&file.raw, &format!("the file {base} runs")),
                Some(label.to_string()),
                file.raw.clone(),
                "command",
                None,
            );
            return;
        };
        if !path.contains('/') {
            self.violate(
                Reason::UnsupportedConstruct,
                format!("`{base} {path}` looks the file up in PATH before the current directory; write its path with a slash (`{base} ./{path}`)."),
                Some(label.to_string()),
                base.to_string(),
                "command",
                None,
            );
            return;
        }
        let listed = self
            .category_of(base, &[path], cwds)
            .or_else(|| self.category_of(if base == "." { "source" } else { "." }, &[path], cwds));
        match listed {
            Some((cat, entry)) => {
                ev.category = Some(cat.as_str().into());
                ev.rule = Some(entry);
                self.max_category = Some(self.max_category.map_or(cat, |m| m.max(cat)));
                if cat == Category::Dangerous {
                    self.dangerous(&format!("{base} {path}"), label);
                }
                self.directory_scope(cat, cwds, label);
            }
            None if self
                .ctx
                .scope
                .bash_tools
                .allow_constructs
                .iter()
                .any(|c| c == "source") =>
            {
                ev.category = Some("read_only".into());
                ev.rule = Some("allow_constructs: source".into());
                self.directory_scope(Category::ReadOnly, cwds, label);
            }
            None => {
                self.violate(
                    Reason::UnsupportedConstruct,
                    format!("`{base}` runs text that cannot be judged before it runs; run the commands directly instead, or ask the user to list the file (`{base} {path}`) in the scope"),
                    Some(label.to_string()),
                    base.to_string(),
                    "command",
                    None,
                );
                return;
            }
        }
        self.warn(format!(
            "`{label}` runs the text of {path} in the shell, which the engine does not judge"
        ));
        self.path_effect(file, Access::Read, cwds, &format!("file {base} runs"), true);
    }

    pub(super) fn script(&mut self, text: &str, cwds: &[PathBuf], via: &[String], wrapper: &str) {
        self.depth += 1;
        let flat = shell::flatten_script(text, Some(cwds), self.ctx.home, self.depth);
        let mut v = via.to_vec();
        v.push(wrapper.to_string());
        self.flat(&flat, &v);
        self.depth -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_variables_table() {
        for (name, bad) in [
            ("PAGER", true),
            ("LD_PRELOAD", true),
            ("DYLD_INSERT_LIBRARIES", true),
            ("GIT_SSH_COMMAND", true),
            ("GIT_CONFIG_COUNT", true),
            ("BASH_FUNC_x%%", true),
            ("PATH", true),
            ("GIT_AUTHOR_NAME", false),
            ("LC_ALL", false),
            ("RUST_BACKTRACE", false),
            ("FOO", false),
            // git's variables: all but a few that name no file or program.
            ("GIT_DIR", true),
            ("GIT_WORK_TREE", true),
            ("GIT_COMMON_DIR", true),
            ("GIT_INDEX_FILE", true),
            ("GIT_OBJECT_DIRECTORY", true),
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES", true),
            ("GIT_EXEC_PATH", true),
            ("GIT_EXTERNAL_DIFF", true),
            ("GIT_SSH", true),
            ("GIT_ASKPASS", true),
            ("GIT_EDITOR", true),
            ("GIT_PAGER", true),
            ("GIT_TEMPLATE_DIR", true),
            ("GIT_CONFIG", true),
            ("GIT_CONFIG_GLOBAL", true),
            ("GIT_CONFIG_PARAMETERS", true),
            ("GIT_TRACE", true),
            ("GIT_TRACE_PACKET", true),
            ("GIT_LITERAL_PATHSPECS", true),
            ("GIT_NEW_THING", true),
            ("GIT_COMMITTER_EMAIL", false),
            ("GIT_AUTHOR_DATE", false),
            ("GIT_TERMINAL_PROMPT", false),
            ("GIT_OPTIONAL_LOCKS", false),
            ("GIT_MERGE_VERBOSITY", false),
            ("GIT_FLUSH", false),
            ("GITX", false),
        ] {
            assert_eq!(dangerous_var(name), bad, "{name}");
        }
    }

    #[test]
    fn shell_state_variables_table() {
        for (name, own) in [
            ("BASH_CMDS", true),
            ("BASH_ALIASES", true),
            ("BASHOPTS", true),
            ("BASH", true),
            ("DIRSTACK", true),
            ("POSIXLY_CORRECT", true),
            ("HISTFILESIZE", true),
            ("COMP_WORDS", true),
            ("READLINE_LINE", true),
            ("EXECIGNORE", true),
            ("LANG", false),
            ("LC_ALL", false),
            ("COLUMNS", false),
            ("REPLY", false),
            ("OPTIND", false),
            ("FOO", false),
        ] {
            assert_eq!(shell_state_var(name), own, "{name}");
        }
    }

    #[test]
    fn set_arguments_table() {
        let w = |s: &str| -> Vec<WordInfo> {
            s.split_whitespace()
                .map(|t| {
                    if t.starts_with('$') {
                        WordInfo {
                            raw: t.into(),
                            value: None,
                            glob: false,
                        }
                    } else {
                        WordInfo::literal(t)
                    }
                })
                .collect()
        };
        let opt = |o: &str| Err(SetRefusal::Option(o.into()));
        for (args, want) in [
            ("", Ok(())),
            ("-euo pipefail", Ok(())),
            ("-oe pipefail", Ok(())),
            ("+x -o errexit +o nounset -o xtrace", Ok(())),
            ("-o", Ok(())),
            ("-- -k", Ok(())),
            ("- -k", Ok(())),
            ("a -k", Ok(())),
            ("-ou pipefail nounset", Ok(())),
            ("-k", opt("-k")),
            ("-euk", opt("-k")),
            ("+B", opt("+B")),
            ("-o posix", opt("-o posix")),
            ("+o history", opt("+o history")),
            ("-oo pipefail keyword", opt("-o keyword")),
            ("-e -o pipefail -T", opt("-T")),
            ("$x", Err(SetRefusal::Dynamic("$x".into()))),
            ("-o $x", Err(SetRefusal::Dynamic("$x".into()))),
        ] {
            assert_eq!(set_arguments(&w(args)), want, "{args}");
        }
    }

    #[test]
    fn builtin_assigns_table() {
        let w =
            |s: &str| -> Vec<WordInfo> { s.split_whitespace().map(WordInfo::literal).collect() };
        let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
        for (base, args, want) in [
            ("read", "-r -p prompt a b", some(&["a", "b"])),
            ("read", "-a ARR -d x", some(&["ARR"])),
            ("read", "-aARR", some(&["ARR"])),
            ("mapfile", "-t -n 3 LINES", some(&["LINES"])),
            ("getopts", "ab: opt extra", some(&["opt"])),
            ("wait", "-p PID -n", some(&["PID"])),
            ("ls", "-la x", some(&[])),
        ] {
            assert_eq!(builtin_assigns(base, &w(args)), want, "{base} {args}");
        }
    }
}
