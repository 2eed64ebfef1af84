//! Step 5 for the programs with a language of their own: `find` (its expression and `-exec`),
//! `sed` (its script's `w`, `r` and `e` commands), `tar` (its mode) and `awk` (its program).

use std::path::PathBuf;

use crate::policy::paths::Access;
use crate::scope::semantics::{self, CommandSemantics, OperandKind};
use crate::shell::WordInfo;
use crate::Reason;

use super::{argv, Category, Judge};

pub(super) enum SedEffect {
    Exec,
    Write,
    Read,
}

/// The files a sed script writes or reads and whether it runs commands.
pub(super) fn sed_effects(script: &str) -> Vec<(SedEffect, String)> {
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
            b' '
            | b'\t'
            | b'\n'
            | b';'
            | b'{'
            | b'}'
            | b'!'
            | b','
            | b'$'
            | b'0'..=b'9'
            | b'~'
            | b'+' => i += 1,
            b'/' | b'\\' => {
                // An address regex.
                let delim = if c == b'\\' {
                    i += 1;
                    b.get(i).copied().unwrap_or(b'/')
                } else {
                    b'/'
                };
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
pub(super) fn awk_danger(program: &str) -> Option<&'static str> {
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
            '/' if matches!(
                prev_sig,
                ' ' | '(' | ',' | '{' | ';' | '!' | '~' | '&' | '|' | '\n'
            ) =>
            {
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

/// find's words split into start points (`.` when none) and expression.
pub(super) fn find_split(args: &[WordInfo]) -> (Vec<WordInfo>, &[WordInfo]) {
    let mut i = 0;
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
    (starts, args.get(i..).unwrap_or(&[]))
}

impl<'a> Judge<'a> {
    pub(super) fn find(
        &mut self,
        args: &[WordInfo],
        cwds: &[PathBuf],
        via: &[String],
        label: &str,
    ) {
        const WITH_ARG: &[&str] = &[
            "-name",
            "-iname",
            "-path",
            "-ipath",
            "-wholename",
            "-iwholename",
            "-regex",
            "-iregex",
            "-type",
            "-xtype",
            "-maxdepth",
            "-mindepth",
            "-perm",
            "-size",
            "-user",
            "-group",
            "-uid",
            "-gid",
            "-mtime",
            "-atime",
            "-ctime",
            "-mmin",
            "-amin",
            "-cmin",
            "-links",
            "-inum",
            "-lname",
            "-ilname",
            "-fstype",
            "-used",
            "-printf",
            "-regextype",
            "-context",
            "-newermt",
            "-newerat",
            "-newerct",
        ];
        const READ_ARG: &[&str] = &["-newer", "-anewer", "-cnewer", "-samefile", "-files0-from"];
        const WRITE_ARG: &[&str] = &["-fprint", "-fprint0", "-fls"];
        const NO_ARG: &[&str] = &[
            "-print",
            "-print0",
            "-ls",
            "-prune",
            "-quit",
            "-true",
            "-false",
            "-empty",
            "-executable",
            "-readable",
            "-writable",
            "-nouser",
            "-nogroup",
            "-depth",
            "-daystart",
            "-follow",
            "-mount",
            "-xdev",
            "-noleaf",
            "-ignore_readdir_race",
            "-noignore_readdir_race",
            "-a",
            "-o",
            "-and",
            "-or",
            "-not",
            "!",
            "(",
            ")",
            ",",
            "-d",
            "-nowarn",
            "-warn",
            "-L",
            "-H",
            "-P",
            "-delete",
        ];
        // Leading -H -L -P -D x -Ox, then the start points (`.` when none), then the expression.
        let (starts, expr) = find_split(args);
        let mut i = args.len() - expr.len();
        self.find_reads(args, &starts, expr, cwds, label);
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
                    self.violate(
                        Reason::ParseError,
                        format!("`find {s}` without a command"),
                        Some(label.to_string()),
                        "find".into(),
                        "command",
                        None,
                    );
                } else if self.writes(|me| {
                    let saved = me.runtime_roots.replace(starts.clone());
                    me.argv(inner, cwds, &v, "top_level", false);
                    me.runtime_roots = saved;
                }) {
                    let what = format!(
                        "`find {s} {}` writes the files find finds",
                        inner.first().map(WordInfo::display).unwrap_or_default()
                    );
                    self.unseen_writes_under(&starts, cwds, &what, label);
                }
                i = end + 1;
                continue;
            }
            if s == "-delete" {
                for st in &starts {
                    self.path_effect(st, Access::Write, cwds, "find -delete", true);
                }
                self.unseen_writes_under(
                    &starts,
                    cwds,
                    "`find -delete` removes the files find finds",
                    label,
                );
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
                Reason::FlagNotAllowed,
                format!("`find {s}` is not a find predicate gptel-scope knows; use the common predicates (-name, -type, -path, -newer, -maxdepth, -print, ...)"),
                Some(label.to_string()),
                "find".into(),
                "command",
                None,
            );
            i += 1;
        }
    }

    pub(super) fn sed(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let sem = self.semantics("sed").unwrap_or_else(|| semantics::empty());
        let items = argv::parse(sem, args, false);
        let mut scripts: Vec<WordInfo> = Vec::new();
        let mut files = Vec::new();
        let mut in_place = false;
        // With -e (anywhere: sed permutes its arguments), every operand is a file.
        let mut script_given = items
            .iter()
            .any(|i| matches!(i, argv::Item::Opt(o) if o.name == "-e" || o.name == "--expression"));
        for item in items {
            match item {
                argv::Item::Opt(o) => match o.name.as_str() {
                    "-e" | "--expression" => scripts.extend(o.value),
                    "-f" | "--file" => {
                        self.violate(Reason::UnsupportedConstruct, format!("`sed {}` runs a script from a file that cannot be judged; pass the script with -e instead.", o.name), Some(label.to_string()), "sed".into(), "command", None);
                        return;
                    }
                    "-i" | "--in-place" => in_place = true,
                    _ => {}
                },
                argv::Item::End { .. } => {}
                argv::Item::Operand { word, .. } | argv::Item::RunTime { word, .. }
                    if !script_given =>
                {
                    scripts.push(word.clone());
                    script_given = true;
                }
                argv::Item::Operand { word, .. } | argv::Item::RunTime { word, .. } => {
                    files.push(word.clone())
                }
            }
        }
        for sc in &scripts {
            match sc.exact() {
                Some(text) => {
                    for (kind, target) in sed_effects(text) {
                        match kind {
                            SedEffect::Exec => self.violate(
                                Reason::FlagNotAllowed,
                                "the sed script runs a shell command (`e`); it is not allowed"
                                    .into(),
                                Some(label.to_string()),
                                "sed".into(),
                                "command",
                                None,
                            ),
                            SedEffect::Write => self.path_effect(
                                &WordInfo::literal(&target),
                                Access::Write,
                                cwds,
                                "sed w command",
                                true,
                            ),
                            SedEffect::Read => self.path_effect(
                                &WordInfo::literal(&target),
                                Access::Read,
                                cwds,
                                "sed r command",
                                false,
                            ),
                        }
                    }
                }
                None => self.violate(
                    Reason::DynamicCommand,
                    "the sed script is built at run time; write it literally".into(),
                    Some(label.to_string()),
                    "sed".into(),
                    "command",
                    None,
                ),
            }
        }
        let access = if in_place {
            Access::Write
        } else {
            Access::Read
        };
        for f in &files {
            self.path_effect(
                f,
                access,
                cwds,
                if in_place {
                    "file edited by sed -i"
                } else {
                    "operand of sed"
                },
                in_place,
            );
        }
    }

    /// tar: the mode (`-x`, `-c`, old-style `xzf`, `--extract`) decides whether the archive
    /// named by `-f` is written (create) or read, and whether the directory is written
    /// (extract). Old-style letters are read as options, each letter that takes a value taking
    /// the next word in turn (`tar cfT a.tar list`).
    pub(super) fn tar(
        &mut self,
        sem: &CommandSemantics,
        args: &[WordInfo],
        cwds: &[PathBuf],
        cat: Category,
        label: &str,
    ) {
        let mut sem = sem.clone();
        sem.value_options
            .extend(["-f".to_string(), "--file".to_string()]);
        let mut words: Vec<WordInfo> = Vec::new();
        let mut rest = args;
        if let Some(first) = args
            .first()
            .and_then(WordInfo::exact)
            .filter(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()))
        {
            rest = &args[1..];
            for c in first.chars() {
                let name = format!("-{c}");
                words.push(WordInfo::literal(&name));
                if argv::arity(&sem, &name) == argv::Arity::Required {
                    if let Some((v, more)) = rest.split_first() {
                        words.push(v.clone());
                        rest = more;
                    }
                }
            }
        }
        words.extend(rest.iter().cloned());
        let names: Vec<String> = argv::options(&sem, &words, false)
            .into_iter()
            .map(|o| o.name)
            .collect();
        let has = |list: &[&str]| names.iter().any(|n| list.contains(&n.as_str()));
        let extract = has(&["-x", "--extract", "--get"]);
        let create = has(&[
            "-c",
            "--create",
            "-r",
            "--append",
            "-u",
            "--update",
            "-A",
            "--catenate",
            "--concatenate",
        ]);
        sem.value_options.retain(|o| o != "-f" && o != "--file");
        if create {
            sem.operands = OperandKind::Read;
            sem.write_options
                .extend(["-f".to_string(), "--file".to_string()]);
        } else {
            sem.read_options
                .extend(["-f".to_string(), "--file".to_string()]);
        }
        if extract {
            sem.cwd_write = true;
        }
        self.effects("tar", &sem, &words, cwds, cat, label);
    }

    pub(super) fn awk(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        /// Options that run a program or extension from a file, edit files in place (`-i
        /// inplace`), or write or read files of their own (profile, dump, debugger).
        const REFUSED: &[&str] = &[
            "-f",
            "--file",
            "-E",
            "--exec",
            "-i",
            "--include",
            "-l",
            "--load",
            "-o",
            "--pretty-print",
            "-p",
            "--profile",
            "-d",
            "--dump-variables",
            "-D",
            "--debug",
        ];
        let sem = self.semantics("awk").unwrap_or_else(|| semantics::empty());
        // awk's options end at the program text.
        let items = argv::parse(sem, args, true);
        let mut sources: Vec<WordInfo> = Vec::new();
        let mut operands_from = args.len();
        for item in &items {
            match item {
                argv::Item::Opt(o)
                    if REFUSED.contains(&o.name.as_str())
                        || o.candidates.iter().any(|c| REFUSED.contains(&c.as_str())) =>
                {
                    self.violate(Reason::UnsupportedConstruct, format!("`awk {}` runs a program or extension from a file that cannot be judged, or writes or reads files of its own (gawk's `-i inplace` rewrites files); pass the program inline instead.", o.name), Some(label.to_string()), "awk".into(), "command", None);
                    return;
                }
                argv::Item::Opt(o) if o.name == "-e" || o.name == "--source" => {
                    sources.extend(o.value.clone())
                }
                argv::Item::Opt(_) => {}
                argv::Item::End { index } => operands_from = index + 1,
                argv::Item::Operand { index, .. } | argv::Item::RunTime { index, .. } => {
                    operands_from = *index
                }
            }
        }
        let mut operands = args.get(operands_from..).unwrap_or(&[]).iter();
        let mut programs = sources;
        if programs.is_empty() {
            programs.extend(operands.next().cloned());
        }
        for w in operands {
            if !w.exact().is_some_and(|s| s.contains('=')) {
                self.path_effect(w, Access::Read, cwds, "operand of awk", false);
            }
        }
        for p in programs {
            match p.exact() {
                Some(text) => {
                    if let Some(why) = awk_danger(text) {
                        self.violate(
                            Reason::UnsupportedConstruct,
                            format!("the awk program {why}; use grep, sed or a simpler program"),
                            Some(label.to_string()),
                            "awk".into(),
                            "command",
                            None,
                        );
                    }
                }
                None => self.violate(
                    Reason::DynamicCommand,
                    "the awk program is built at run time; write it literally".into(),
                    Some(label.to_string()),
                    "awk".into(),
                    "command",
                    None,
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            kinds("s/w/e/"),
            none,
            "letters inside the regex and replacement are data"
        );
        assert_eq!(
            kinds("s|a|b|w out.txt"),
            vec![("write".into(), "out.txt".into())]
        );
        assert_eq!(kinds("s/a/b/e"), vec![("exec".into(), String::new())]);
        assert_eq!(kinds("1e date"), vec![("exec".into(), String::new())]);
        assert_eq!(kinds("r in.txt"), vec![("read".into(), "in.txt".into())]);
        assert_eq!(kinds("/x/w log\np"), vec![("write".into(), "log".into())]);
        assert_eq!(
            kinds("a\\\nappended w text"),
            none,
            "the text of `a` is data"
        );
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
}
