//! Step 5 (SPEC §3): what a command's options and operands read, write or run, from the
//! semantics table (`data/semantics.yml`, overridable in the scope).

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::policy::paths::{self, Access};
use crate::scope::semantics::{CommandSemantics, OperandKind};
use crate::shell::WordInfo;
use crate::Reason;

use super::{argv, git, scope, Category, Judge};

/// Whether a word built at run time could expand to an option (`-x`, `--x=...`): it does
/// not start with a literal character other than `-`.
pub(super) fn may_be_option(raw: &str) -> bool {
    let t = raw.trim_start_matches('"');
    t.starts_with(['-', '$', '`'])
}

/// Whether a command has options that touch paths or run programs.
pub(super) fn has_path_options(sem: &CommandSemantics) -> bool {
    !(sem.read_options.is_empty()
        && sem.write_options.is_empty()
        && sem.deny_options.is_empty()
        && sem.global_deny_options.is_empty()
        && sem.code_options.is_empty()
        && sem.code_file_options.is_empty()
        && sem.directory_options.is_empty()
        && sem.write_mode_options.is_empty()
        && sem.cwd_write_options.is_empty())
}

/// The option table of a wrapper the engine looks through (`exec`, `xargs`, `env`, `nice`,
/// ...): its options with a required value, with an optional value (attached or after `=`
/// only), and its long flags (listed so that abbreviations resolve as getopt_long resolves
/// them). Every other option is a flag.
pub(super) fn wrapper(required: &[&str], optional: &[&str], flags: &[&str]) -> CommandSemantics {
    let own = |l: &[&str]| l.iter().map(|o| o.to_string()).collect();
    CommandSemantics {
        value_options: own(required),
        optional_value_options: own(optional),
        flag_options: own(flags),
        ..Default::default()
    }
}

impl<'a> Judge<'a> {
    /// Skips a wrapper's options, read as its getopt reads them (`time -ao FILE`, `timeout
    /// --sig KILL`, `exec -ca NAME`, `xargs -e`): `grammar` is its option table (see
    /// [`wrapper`]). Calls `on_opt` for each option. Returns the index of the first word
    /// after them: the first operand, or the first word built at run time where an option may
    /// stand (the wrapper's command may start there).
    pub(super) fn skip_options(
        &mut self,
        args: &[WordInfo],
        grammar: &CommandSemantics,
        mut on_opt: impl FnMut(&mut Self, &argv::Opt),
    ) -> usize {
        for item in argv::parse(grammar, args, true) {
            match item {
                argv::Item::Opt(o) if args.get(o.index).and_then(WordInfo::exact).is_none() => {
                    return o.index
                }
                argv::Item::Opt(o) => on_opt(self, &o),
                argv::Item::End { index } => return index + 1,
                argv::Item::Operand { index, .. } | argv::Item::RunTime { index, .. } => {
                    return index
                }
            }
        }
        args.len()
    }

    /// Effects from the semantics table: options and operands that read, write or run.
    pub(super) fn effects(
        &mut self,
        base: &str,
        sem: &CommandSemantics,
        args: &[WordInfo],
        cwds: &[PathBuf],
        cat: Category,
        label: &str,
    ) {
        let mut sem: Cow<'_, CommandSemantics> = Cow::Borrowed(sem);
        let mut start = 0;
        let mut sub_name: Option<&str> = None;
        if sem.subcommands {
            // Global options first, up to the subcommand.
            start = args.len();
            for item in argv::parse(&sem, args, true) {
                match item {
                    argv::Item::Opt(o) => self.option(base, &sem, &o, cwds, cat, label),
                    argv::Item::Operand { index, .. } | argv::Item::RunTime { index, .. } => {
                        start = index
                    }
                    argv::Item::End { index } => start = index + 1,
                }
            }
            if let Some(sub) = args.get(start).and_then(WordInfo::exact) {
                sub_name = Some(sub);
                if let Some(s) = sem.subcommand_semantics.get(sub) {
                    let mut merged = s.clone();
                    merged.deny_options.extend(sem.deny_options.iter().cloned());
                    sem = Cow::Owned(merged);
                } else {
                    let deny = sem.deny_options.clone();
                    sem = Cow::Owned(CommandSemantics {
                        deny_options: deny,
                        ..Default::default()
                    });
                }
                start += 1;
            }
        }
        if !(sem.read_env.is_empty() && sem.deny_env.is_empty()) {
            self.read_env(base, &sem, cwds, label);
        }
        // A global option's value may be missing (`git -C`): `start` can pass the end.
        let rest = args.get(start..).unwrap_or(&[]);
        // Options.
        let mut operands: Vec<&WordInfo> = Vec::new();
        let mut write_mode = false;
        let mut cwd_written = false;
        let mut data_opt = false;
        let mut target_given = false;
        for item in argv::parse(&sem, rest, false) {
            let o = match item {
                argv::Item::Operand { word, .. } => {
                    operands.push(word);
                    continue;
                }
                argv::Item::End { .. } => continue,
                argv::Item::RunTime { word: w, .. } if has_path_options(&sem) => {
                    self.violate(
                        Reason::RunTimeOperand,
                        scope::run_time_message(&w.raw, &format!("a word of {base} that could be an option reading, writing or running programs")),
                        Some(label.to_string()),
                        w.raw.clone(),
                        "command",
                        None,
                    );
                    continue;
                }
                argv::Item::RunTime { word, .. } => {
                    operands.push(word);
                    continue;
                }
                argv::Item::Opt(o) => o,
            };
            let opt = o.name.as_str();
            target_given |= sem.write_options.iter().any(|m| m == opt);
            if sem.write_mode_options.iter().any(|m| m == opt) {
                write_mode = true;
            }
            if sem.data_operand_options.iter().any(|m| m == opt) {
                data_opt = true;
            }
            if sem.cwd_write_options.iter().any(|m| m == opt) {
                cwd_written = true;
                for d in cwds {
                    let dw = WordInfo::literal(&d.to_string_lossy());
                    self.path_effect(
                        &dw,
                        Access::Write,
                        cwds,
                        &format!("option {opt} of {base} (writes in the directory)"),
                        true,
                    );
                }
            }
            self.option(base, &sem, &o, cwds, cat, label);
        }
        if sem.cwd_write {
            for d in cwds {
                let dw = WordInfo::literal(&d.to_string_lossy());
                self.path_effect(
                    &dw,
                    Access::Write,
                    cwds,
                    &format!("{base} writes in its directory"),
                    true,
                );
            }
        }
        let skip = if data_opt {
            0
        } else {
            sem.leading_data_operands
        };
        let files: Vec<&WordInfo> = operands.iter().skip(skip).copied().collect();
        // With a target directory option (`cp -t DIR`), every operand is a source.
        let kind = match sem.operands {
            _ if write_mode => OperandKind::Write,
            OperandKind::LastWrite if target_given => OperandKind::Read,
            k => k,
        };
        let n = files.len();
        for (k, f) in files.iter().enumerate() {
            let src = format!("operand of {base}");
            match kind {
                OperandKind::Data => {}
                OperandKind::Read => self.path_effect(f, Access::Read, cwds, &src, false),
                OperandKind::Write | OperandKind::AllWrite => {
                    self.path_effect(f, Access::Write, cwds, &src, true)
                }
                OperandKind::LastWrite => {
                    let a = if k + 1 == n && n > 1 {
                        Access::Write
                    } else {
                        Access::Read
                    };
                    self.path_effect(f, a, cwds, &src, a == Access::Write || sem.enforce_operands);
                }
                OperandKind::FirstWrite => {
                    let a = if k == 0 && n > 1 {
                        Access::Write
                    } else {
                        Access::Read
                    };
                    self.path_effect(f, a, cwds, &src, a == Access::Write);
                }
                OperandKind::KeyValue => match f.exact().and_then(|v| v.split_once('=')) {
                    Some(("of", path)) => self.path_effect(
                        &WordInfo::literal(path),
                        Access::Write,
                        cwds,
                        &format!("of= of {base}"),
                        true,
                    ),
                    Some(("if", path)) => self.path_effect(
                        &WordInfo::literal(path),
                        Access::Read,
                        cwds,
                        &format!("if= of {base}"),
                        false,
                    ),
                    Some(_) => {}
                    None if f.value.is_none() => {
                        self.path_effect(f, Access::Write, cwds, &src, true)
                    }
                    None => {}
                },
                OperandKind::Unknown => self.unknown_operand(f, cwds, &src),
            }
        }
        self.protected_reach(
            base,
            rest,
            &files,
            kind,
            sem.cwd_write || cwd_written,
            cwds,
            label,
        );
        self.recursive_reads(
            base,
            sub_name,
            &sem,
            &args[..start.min(args.len())],
            rest,
            &files,
            kind,
            cwds,
            label,
        );
    }

    /// The files a command reads through its environment (`MAGIC=a:b file x`, `env MAGIC=a
    /// file x`): each path of each value the command line sets, checked as a read. A variable
    /// the line names where the engine does not see it set (`read MAGIC`, `bash -c
    /// 'MAGIC=a file x'`, a quoted name) is refused, and so is any mention of a variable
    /// that makes the command run programs (`deny_env`).
    pub(super) fn read_env(
        &mut self,
        base: &str,
        sem: &CommandSemantics,
        cwds: &[PathBuf],
        label: &str,
    ) {
        let Some(set) = self.env_set.clone() else {
            return;
        };
        let command = self.command.clone();
        let named = |var: &str| {
            command
                .match_indices(var)
                .filter(|(at, _)| {
                    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
                    !command[..*at].ends_with(ident)
                        && !command[at + var.len()..].starts_with(ident)
                })
                .count()
        };
        for var in sem.deny_env.iter().filter(|v| named(v) > 0) {
            self.violate(
                Reason::Denied,
                format!("setting {var} can make {base} run other programs or read other files; it is not allowed. Run {base} without it."),
                Some(label.to_string()),
                var.clone(),
                "command",
                None,
            );
        }
        for var in &sem.read_env {
            let named = named(var);
            let values: Vec<&WordInfo> = set
                .iter()
                .filter(|(n, _)| n == var)
                .map(|(_, v)| v)
                .collect();
            if named != values.len() {
                self.violate(
                    Reason::UnsupportedConstruct,
                    format!("{base} reads the files that {var} names, and this command line names {var} where the engine cannot see the value it sets; set it only as `{var}=PATH {base} ...` with a literal path in scope, or run {base} without it."),
                    Some(label.to_string()),
                    var.clone(),
                    "command",
                    None,
                );
                continue;
            }
            for v in values {
                self.path_list(v, ":", cwds, &format!("{var} of {base}"));
            }
        }
    }

    /// Judges one option as the program reads it ([`argv::parse`]): refused, or the paths its
    /// value names.
    pub(super) fn option(
        &mut self,
        base: &str,
        sem: &CommandSemantics,
        o: &argv::Opt,
        cwds: &[PathBuf],
        cat: Category,
        label: &str,
    ) {
        let opt = o.name.as_str();
        // An ambiguous abbreviation is refused when it could stand for a refused option;
        // `OPT=` only when a value is given.
        let denied = |d: &String| match d.strip_suffix('=') {
            Some(name) => {
                (name == opt && o.value.is_some()) || o.candidates.iter().any(|c| c == name)
            }
            None => d == opt || o.candidates.contains(d),
        };
        if sem
            .deny_options
            .iter()
            .chain(&sem.global_deny_options)
            .any(denied)
        {
            let known = if base == "git" {
                git::option_refusal(opt)
            } else {
                None
            };
            let (why, instead) = known.unwrap_or((
                "can run other programs or read what the scope does not allow",
                "Run the command without it",
            ));
            self.violate(
                Reason::FlagNotAllowed,
                format!("`{base} {opt}` {why}; it is not allowed. {instead} (the user may allow it with a `semantics:` entry for {base} in the scope; request_scope_expansion cannot)."),
                Some(label.to_string()),
                format!("{base} {opt}"),
                "command",
                None,
            );
        }
        let listed = |l: &[String]| l.iter().any(|x| x == opt);
        if listed(&sem.code_options) || listed(&sem.code_file_options) {
            // The scope lists the interpreter: what it runs is its business, said aloud.
            self.warn(format!(
                "`{base} {opt}` runs code the engine does not judge: listing `{base}` in the scope allows whatever that code does"
            ));
        }
        let Some(v) = o.value.as_ref() else { return };
        if listed(&sem.code_file_options) {
            self.path_effect(
                v,
                Access::Read,
                cwds,
                &format!("file of code of {base} {opt}"),
                false,
            );
        } else if listed(&sem.read_options) {
            self.path_effect(
                v,
                Access::Read,
                cwds,
                &format!("option {opt} of {base}"),
                false,
            );
        } else if listed(&sem.write_options) {
            self.path_effect(
                v,
                Access::Write,
                cwds,
                &format!("option {opt} of {base}"),
                true,
            );
        } else if let Some(sep) = sem.path_list_options.get(opt) {
            self.path_list(v, sep, cwds, &format!("option {opt} of {base}"));
        } else if listed(&sem.directory_options) {
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
                None => self.violate(
                    Reason::RunTimeOperand,
                    scope::run_time_message(&v.raw, &format!("the directory of {base} {opt}")),
                    Some(label.to_string()),
                    v.raw.clone(),
                    "path",
                    Some(cat.access()),
                ),
            }
        }
    }

    /// A value that is a list of paths read (`file -m a:b`, `MAGIC=a:b`): the whole value and
    /// each path in it.
    pub(super) fn path_list(&mut self, v: &WordInfo, sep: &str, cwds: &[PathBuf], src: &str) {
        self.path_effect(v, Access::Read, cwds, src, false);
        let Some(text) = v.exact() else { return };
        if sep.is_empty() || !text.contains(sep) {
            return;
        }
        for part in text.split(sep).filter(|p| !p.is_empty()) {
            self.path_effect(&WordInfo::literal(part), Access::Read, cwds, src, false);
        }
    }

    /// An operand of unknown meaning: checked as a read when it looks like a path.
    pub(super) fn unknown_operand(&mut self, w: &WordInfo, cwds: &[PathBuf], src: &str) {
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
            || Path::new(candidate)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
            || cwds
                .iter()
                .any(|d| paths::exists(&d.join(candidate)) && !candidate.is_empty());
        if looks {
            self.path_effect(
                &WordInfo::literal(candidate),
                Access::Read,
                cwds,
                src,
                false,
            );
        }
    }
}
