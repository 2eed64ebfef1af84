//! Step 5 (SPEC §3): what a command's options and operands read, write or run, from the
//! semantics table (`data/semantics.yml`, overridable in the scope).

use super::*;

/// Whether an option list names `opt`, also as an unambiguous GNU abbreviation of a long
/// option (`--compress-prog` for `--compress-program`).
pub(super) fn has_opt(list: &[String], opt: &str) -> bool {
    list.iter().any(|o| o == opt || (opt.starts_with("--") && opt.len() >= 4 && o.starts_with(opt)))
}

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
        && sem.code_options.is_empty()
        && sem.code_file_options.is_empty()
        && sem.directory_options.is_empty()
        && sem.write_mode_options.is_empty()
        && sem.cwd_write_options.is_empty())
}

impl<'a> Judge<'a> {
    /// Skips a wrapper's options; calls `on_value` for options that take a value.
    pub(super) fn skip_options(&mut self, args: &[WordInfo], value_opts: &[&str], mut on_value: impl FnMut(&mut Self, &str, &WordInfo)) -> usize {
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

    /// Effects from the semantics table: options and operands that read, write or run.
    pub(super) fn effects(&mut self, base: &str, sem: &CommandSemantics, args: &[WordInfo], cwds: &[PathBuf], cat: Category, label: &str) {
        let mut sem: Cow<'_, CommandSemantics> = Cow::Borrowed(sem);
        let mut start = 0;
        let mut sub_name: Option<&str> = None;
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
                sub_name = Some(sub);
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
                        "run_time_operand",
                        scope::run_time_message(&w.raw, &format!("a word of {base} that could be an option reading, writing or running programs")),
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
        self.recursive_reads(base, sub_name, &sem, &args[..start.min(args.len())], rest, &files, kind, cwds, label);
    }

    /// Handles the option at `args[i]`; returns how many words it used.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn option(&mut self, base: &str, sem: &CommandSemantics, args: &[WordInfo], i: usize, cwds: &[PathBuf], cat: Category, label: &str) -> usize {
        let Some(w) = args.get(i) else { return 1 };
        let s = w.display();
        let (opt, inline) = match s.split_once('=') {
            Some((o, v)) if s.starts_with("--") => (o.to_string(), Some(v.to_string())),
            _ => (s.clone(), None),
        };
        // Short options with an attached value: `-ofile`, `-C/dir`, `-ccore.pager=x`.
        let (opt, inline) = if inline.is_none() && !opt.starts_with("--") && opt.len() > 2 && opt.is_char_boundary(2) {
            let head = &opt[..2];
            let all = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.deny_options, &sem.directory_options, &sem.global_value_options, &sem.code_options, &sem.code_file_options];
            if all.iter().any(|l| l.iter().any(|o| o == head)) {
                (head.to_string(), Some(opt[2..].to_string()))
            } else {
                (opt, None)
            }
        } else {
            (opt, inline)
        };
        let exact_known = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.directory_options, &sem.global_value_options, &sem.write_mode_options, &sem.cwd_write_options, &sem.data_operand_options, &sem.code_options, &sem.code_file_options]
            .iter()
            .any(|l| l.iter().any(|o| o == &opt));
        if sem.deny_options.iter().any(|o| o == &opt) || (!exact_known && has_opt(&sem.deny_options, &opt)) {
            self.violate(
                "flag_not_allowed",
                format!("`{base} {opt}` can run other programs or read what the scope does not allow; it is not allowed. Run the command without it (the user may allow it with a `semantics:` entry for {base} in the scope; request_scope_expansion cannot)."),
                Some(label.to_string()),
                format!("{base} {opt}"),
                "command",
                None,
            );
        }
        // Whether the option consumes the next word as its value.
        let takes = [&sem.value_options, &sem.read_options, &sem.write_options, &sem.directory_options, &sem.global_value_options, &sem.code_options, &sem.code_file_options]
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
        // An option listed as it is typed among the value options is one, not the abbreviation
        // of a longer option that reads a file (`grep --exclude` beside `--exclude-from`).
        let plain_value = sem.value_options.iter().any(|o| o == &opt);
        let code = has_opt(&sem.code_options, &opt) || has_opt(&sem.code_file_options, &opt);
        if code && !(exact_known && sem.deny_options.iter().any(|o| o == &opt)) {
            // The scope lists the interpreter: what it runs is its business, said aloud.
            self.warn(format!(
                "`{base} {opt}` runs code the engine does not judge: listing `{base}` in the scope allows whatever that code does"
            ));
        }
        if let Some(v) = value.as_ref().filter(|_| !plain_value) {
            if has_opt(&sem.code_file_options, &opt) {
                self.path_effect(v, Access::Read, cwds, &format!("file of code of {base} {opt}"), false);
            } else if has_opt(&sem.read_options, &opt) {
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
                    None => self.violate("run_time_operand", scope::run_time_message(&v.raw, &format!("the directory of {base} {opt}")), Some(label.to_string()), v.raw.clone(), "path", Some(cat.access())),
                }
            }
        }
        used
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
            || Path::new(candidate).components().any(|c| matches!(c, std::path::Component::ParentDir))
            || cwds.iter().any(|d| paths::exists(&d.join(candidate)) && !candidate.is_empty());
        if looks {
            self.path_effect(&WordInfo::literal(candidate), Access::Read, cwds, src, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_abbreviations_match_long_options_only() {
        let l = vec!["--compress-program".to_string(), "-o".to_string()];
        assert!(has_opt(&l, "--compress-prog"));
        assert!(has_opt(&l, "-o"));
        assert!(!has_opt(&l, "--c"), "too short to be an abbreviation");
        assert!(!has_opt(&l, "-c"));
    }
}
