//! The option grammar of the semantics table (`src/policy/decide/argv.rs` over
//! `data/semantics.yml`): for each command, which words of an argv the engine checks as paths
//! read or written and which it takes for option values; then the same argvs run by the real
//! programs, where they are installed, to see that every name a program tried to open or
//! created is one the engine checked.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use gptel_scope::policy::decide;

/// The commands of the table, all listed in the scope of [`checked`].
const SCOPE: &str = "paths:\n  read: [\"@D/**\"]\n  write: [\"@D/**\"]\nbash_tools:\n  categories:\n    read_only: [grep, egrep, ls, tar, sort, file, diff, \"git log\", \"git show\", \"git diff\", head, tail, less, du, wc, awk, man, column, od, jq, cut, paste, nl, base64, stat, tac, comm, join, cmp, strings, xxd, sha256sum, hexdump]\n    safe_write: [cp, mv, ln, sed, uniq, tee, mkdir, split, touch, truncate]\n  path_arguments: enforce\n";

/// The paths the engine checks for `command` run in `dir`: (read, written), as written
/// (`dir` itself shown as `.`).
fn checked(dir: &Path, command: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let s = scope(&SCOPE.replace("@D", &dir.to_string_lossy()));
    let d = decide_in(&s, dir, None, None, &[], command);
    let mut read = BTreeSet::new();
    let mut written = BTreeSet::new();
    let shown = dir.to_string_lossy().into_owned();
    for p in &d.paths {
        let path = if p.path == shown {
            ".".to_string()
        } else {
            p.path
                .strip_prefix(&format!("{shown}/"))
                .unwrap_or(&p.path)
                .to_string()
        };
        if p.access == "write" {
            written.insert(path);
        } else {
            read.insert(path);
        }
    }
    (read, written)
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// (argv, paths read, paths written; `F1/F2` is the entry `cp -t F1 F2` creates). The words that are neither are option values or data:
/// a word taken for the value of an option that has none would be missing from the sets.
const ROWS: &[(&str, &[&str], &[&str])] = &[
    // grep: --color and --colour take a value only with `=`; -f in a bundle takes the rest or
    // the next word; -e and -f mean no pattern operand.
    ("grep --color root F1", &["F1"], &[]),
    ("grep --colour root F1 F2", &["F1", "F2"], &[]),
    ("grep --col root F1", &["F1"], &[]),
    ("grep --color=always root F1", &["F1"], &[]),
    ("grep -rf F1 F2", &["F1", "F2"], &[]),
    ("grep -rfF1 F2", &["F1", "F2"], &[]),
    ("grep -ie x F1", &["F1"], &[]),
    ("grep -m1 x F1", &["F1"], &[]),
    ("grep -A 2 x F1", &["F1"], &[]),
    ("grep --exclude-from F1 x F2", &["F1", "F2"], &[]),
    ("grep --exclude-f=F1 x F2", &["F1", "F2"], &[]),
    ("grep x -- -f", &["-f"], &[]),
    ("egrep --color -f F1 F2", &["F1", "F2"], &[]),
    // ls: --color, --hyperlink, --classify take a value only with `=`; -I, -w, -T always.
    ("ls --color F1", &["F1"], &[]),
    ("ls --color=never F1", &["F1"], &[]),
    ("ls --hyperlink F1 --classify F2", &["F1", "F2"], &[]),
    ("ls -I x F1", &["F1"], &[]),
    ("ls -lw80 F1", &["F1"], &[]),
    // tar: the archive of -f read or written by the mode, in a bundle or old style.
    ("tar -xfF1", &["F1"], &["."]),
    ("tar -tvf F1", &["F1"], &[]),
    ("tar -cf F1 F2", &["F2"], &["F1"]),
    ("tar -czfF1 F2", &["F2"], &["F1"]),
    ("tar cfT F1 F2", &["F2"], &["F1"]),
    ("tar -tf F1 -T F2", &["F1", "F2"], &[]),
    ("tar -cf F1 --index-file=F2 F3", &["F3"], &["F1", "F2"]),
    // sort: -o and -T written, in a bundle too; --random-source read.
    ("sort -oF1 F2", &["F2"], &["F1"]),
    ("sort -ro F1 F2", &["F2"], &["F1"]),
    ("sort -T F1 F2", &["F2"], &["F1"]),
    ("sort -k2 -t, F1", &["F1"], &[]),
    ("sort --random-source F1 F2", &["F1", "F2"], &[]),
    ("sort --check F1", &["F1"], &[]),
    // file: -m a list of magic files, attached in a bundle; -f a list of names.
    ("file -bmF1 F2", &["F1", "F2"], &[]),
    ("file -m F1:F2 F3", &["F1:F2", "F1", "F2", "F3"], &[]),
    ("file --magic-file=F1 F2", &["F1", "F2"], &[]),
    ("file -zf F1", &["F1"], &[]),
    ("file -F : F1", &["F1"], &[]),
    // diff: --unified, --context and --color take a value only with `=`; -U and -C always.
    ("diff --unified F1 F2", &["F1", "F2"], &[]),
    ("diff --context F1 F2", &["F1", "F2"], &[]),
    ("diff --color F1 F2", &["F1", "F2"], &[]),
    ("diff -U 3 F1 F2", &["F1", "F2"], &[]),
    ("diff -U3 F1 F2", &["F1", "F2"], &[]),
    ("diff -X F1 F2 F3", &["F1", "F2", "F3"], &[]),
    ("diff --from-file=F1 F2", &["F1", "F2"], &[]),
    // git log: operands are revisions and paths (judged by the git checks); --output is written.
    ("git log --stat --output=F1", &[], &["F1"]),
    ("git log -O F1", &["F1"], &[]),
    // head and tail: -c and -n always take a value; tail's --follow only with `=`.
    ("head -c1 F1 F2", &["F1", "F2"], &[]),
    ("head -n 5 F1", &["F1"], &[]),
    ("tail -qn1 F1", &["F1"], &[]),
    ("tail --follow F1", &["F1"], &[]),
    ("tail -s 1 F1", &["F1"], &[]),
    // cp: --backup, --reflink and --preserve take a value only with `=`; -t and -S always.
    ("cp --backup F1 F2", &["F1"], &["F2"]),
    ("cp --reflink F1 F2", &["F1"], &["F2"]),
    ("cp --preserve F1 F2", &["F1"], &["F2"]),
    ("cp --backup=numbered F1 F2", &["F1"], &["F2"]),
    ("cp -S .bak F1 F2", &["F1"], &["F2"]),
    ("cp -t F1 F2 F3", &["F2", "F3"], &["F1", "F1/F2", "F1/F3"]),
    ("cp -v --target-directory F1 F2", &["F2"], &["F1", "F1/F2"]),
    ("cp -vtF1 F2", &["F2"], &["F1", "F1/F2"]),
    ("mv --target F1 F2", &[], &["F1", "F1/F2", "F2"]),
    // column: -t and -d are flags; -s and -c take a value.
    ("column -t F1", &["F1"], &[]),
    ("column -s, -t F1", &["F1"], &[]),
    ("column -dt F1", &["F1"], &[]),
    // uniq: --group and --all-repeated take a value only with `=`.
    ("uniq --group F1 F2", &["F1"], &["F2"]),
    ("uniq --all-repeated=separate F1", &["F1"], &[]),
    // od: -w takes its value attached only.
    ("od -w F1", &["F1"], &[]),
    ("od -w8 -An F1", &["F1"], &[]),
    // jq: --tab is a flag; --arg and --rawfile take a name and then a value.
    ("jq --tab . F1", &["F1"], &[]),
    ("jq --rawfile n F1 . F2", &["F1", "F2"], &[]),
    ("jq --arg n v . F1", &["F1"], &[]),
    // mkdir and tee: --context and --output-error take a value only with `=`.
    ("mkdir --context F1", &[], &["F1"]),
    ("tee --output-error F1", &[], &["F1"]),
    // split: -d is a flag; it writes in its directory.
    ("split -d F1", &["F1"], &["."]),
    ("split -l 10 F1 F2", &["F1", "F2"], &["."]),
    // man: -M a list of paths; an operand that looks like a path is read (`man ../x` formats
    // the file; one naming nothing that exists and no `..` is left to man's own search).
    ("man -M F1:F2 ls", &["F1:F2", "F1", "F2"], &[]),
    ("man ../F1", &["../F1"], &[]),
    // ln: -S takes a suffix (attached in `-Ss`): the link is a hard one, its target written too
    // when it is a scope document (see the scope_documents tests); -s makes it symbolic.
    ("ln -Ss F1 F2", &["F1"], &["F2"]),
    ("ln --sym F1 F2", &["F1"], &["F2"]),
    // Coreutils and friends whose short options take values in a bundle.
    ("wc -lc F1 F2", &["F1", "F2"], &[]),
    ("wc --files0-from=F1", &["F1"], &[]),
    ("du -d 1 F1", &["F1"], &[]),
    ("du --time F1", &["F1"], &[]),
    ("du -X F1 F2", &["F1", "F2"], &[]),
    ("cut -d: -f1 F1", &["F1"], &[]),
    ("cut -c 1-3 F1", &["F1"], &[]),
    ("paste -sd, F1 F2", &["F1", "F2"], &[]),
    ("nl -ba -v 3 F1", &["F1"], &[]),
    ("base64 -dw0 F1", &["F1"], &[]),
    ("base64 -w 0 F1", &["F1"], &[]),
    ("stat -c %s F1", &["F1"], &[]),
    ("tac -s x F1", &["F1"], &[]),
    ("comm -12 F1 F2", &["F1", "F2"], &[]),
    ("join -t, -1 2 F1 F2", &["F1", "F2"], &[]),
    ("cmp -n 4 F1 F2", &["F1", "F2"], &[]),
    ("strings -n 8 F1", &["F1"], &[]),
    ("xxd -l 16 F1", &["F1"], &[]),
    ("xxd -c8 F1 F2", &["F1"], &["F2"]),
    ("sha256sum -b F1", &["F1"], &[]),
    ("hexdump -Cn 16 F1", &["F1"], &[]),
    ("touch -r F1 F2", &["F1"], &["F2"]),
    ("touch -cd 2020-01-01 F1", &[], &["F1"]),
    ("truncate -s 0 F1", &[], &["F1"]),
    ("truncate -r F1 F2", &["F1"], &["F2"]),
    // less: -o writes its log; -T reads tags.
    ("less -oF1 F2", &["F2"], &["F1"]),
    ("less -T F1 F2", &["F1", "F2"], &[]),
];

#[test]
fn option_grammar_table_per_command() {
    let tmp = TempDir::new("grammar");
    let mut bad = Vec::new();
    for (cmd, read, written) in ROWS {
        let (r, w) = checked(tmp.path(), cmd);
        if r != set(read) || w != set(written) {
            bad.push(format!(
                "{cmd}: read {r:?} written {w:?}, want read {read:?} written {written:?}"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} rows differ:\n{}",
        bad.len(),
        ROWS.len(),
        bad.join("\n")
    );
}

/// (argv, the words the engine takes for operands): the same grammar without the scope.
const OPERAND_ROWS: &[(&str, &[&str])] = &[
    ("git log --stat F1", &["F1"]),
    ("git log --abbrev F1", &["F1"]),
    ("git log --decorate F1", &["F1"]),
    ("git log --color F1", &["F1"]),
    ("git log --pretty F1", &["F1"]),
    ("git log -U 3 F1", &["3", "F1"]),
    ("git log -U3 F1", &["F1"]),
    ("git log -M F1", &["F1"]),
    ("git log -n 3 F1", &["F1"]),
    ("git log --author x F1", &["F1"]),
    ("git log --format=%H F1", &["F1"]),
    ("git show --stat F1", &["F1"]),
    ("git diff --stat F1 F2", &["F1", "F2"]),
    ("git diff --color-moved F1", &["F1"]),
    ("git -C . log F2", &["F2"]),
    ("git --git-dir=F1 log F2", &["F2"]),
    ("grep --color root F1", &["root", "F1"]),
    ("grep -rfF1 F2", &["F2"]),
];

#[test]
fn operands_are_what_the_grammar_leaves() {
    let mut bad = Vec::new();
    for (cmd, want) in OPERAND_ROWS {
        let words: Vec<String> = shell_words::split(cmd).unwrap();
        let got = decide::operands(&words[0], &words[1..]);
        if got != *want {
            bad.push(format!("{cmd}: {got:?}, want {want:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The names `F1`, `F2`, ... in `text`.
fn names_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'F' && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j > i + 1 && (j == b.len() || !b[j].is_ascii_alphanumeric()) {
                out.insert(text[i..j].to_string());
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Runs `argv` in `dir` (standard input empty, killed after 2 s); returns the names it said it
/// could not open, and the names it created.
fn run(dir: &Path, argv: &[String]) -> Option<BTreeSet<String>> {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("HOME", dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("LC_ALL", "C")
        .env_remove("POSIXLY_CORRECT")
        .env_remove("MAGIC")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    while child.try_wait().ok()?.is_none() {
        if start.elapsed() > Duration::from_secs(2) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().ok()?;
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let l = line.to_ascii_lowercase();
        if [
            "no such file",
            "cannot open",
            "cannot stat",
            "cannot access",
            "ambiguous argument",
            "magic file",
        ]
        .iter()
        .any(|m| l.contains(m))
        {
            names.extend(names_in(line));
        }
    }
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if names_in(&n).contains(&n) {
            names.insert(n);
        }
    }
    Some(names)
}

/// Whether `program` is installed (on `PATH`).
fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Every name a real program said it could not open, or created, is one the engine checked
/// (as a path, or for git as an operand the git checks see): the grammar never takes a word
/// the program reads for an option's value.
#[test]
fn real_programs_open_only_what_the_engine_checks() {
    let mut bad = Vec::new();
    let mut ran = 0;
    let mut skipped = BTreeSet::new();
    let argvs = ROWS
        .iter()
        .map(|(c, _, _)| *c)
        .chain(OPERAND_ROWS.iter().map(|(c, _)| *c));
    for cmd in argvs {
        let words: Vec<String> = shell_words::split(cmd).unwrap();
        if !installed(&words[0]) {
            skipped.insert(words[0].clone());
            continue;
        }
        let tmp = TempDir::new("grammar-run");
        let git = words[0] == "git";
        if git {
            let ok = Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "init.defaultBranch=main",
                ])
                .args(["init", "-q"])
                .current_dir(tmp.path())
                .env("HOME", tmp.path())
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .status()
                .is_ok_and(|s| s.success())
                && Command::new("git")
                    .args([
                        "-c",
                        "user.name=t",
                        "-c",
                        "user.email=t@t",
                        "commit",
                        "-q",
                        "--allow-empty",
                        "-m",
                        "t",
                    ])
                    .current_dir(tmp.path())
                    .env("HOME", tmp.path())
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .status()
                    .is_ok_and(|s| s.success());
            if !ok {
                skipped.insert("git (no repository)".into());
                continue;
            }
        }
        let Some(opened) = run(tmp.path(), &words) else {
            skipped.insert(words[0].clone());
            continue;
        };
        ran += 1;
        let seen: BTreeSet<String> = if git {
            let (r, w) = checked(tmp.path(), cmd);
            decide::operands(&words[0], &words[1..])
                .into_iter()
                .chain(r)
                .chain(w)
                .flat_map(|p| names_in(&p))
                .collect()
        } else {
            let (r, w) = checked(tmp.path(), cmd);
            r.union(&w).flat_map(|p| names_in(p)).collect()
        };
        let missed: Vec<&String> = opened.iter().filter(|n| !seen.contains(*n)).collect();
        if !missed.is_empty() {
            bad.push(format!(
                "{cmd}: the program opened {missed:?}, the engine checked {seen:?}"
            ));
        }
    }
    if !skipped.is_empty() {
        println!(
            "not installed, skipped: {}",
            skipped.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    println!("{ran} argvs run by the real programs");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Environment variables that name files a command reads (`MAGIC` for `file`): each path of
/// a value set on the command line is checked as a read; a value the engine cannot see is
/// refused. (command, allowed, reason of the refusal, paths read)
#[test]
fn files_named_by_the_environment_are_checked() {
    let tmp = TempDir::new("grammar-env");
    let rows: &[(&str, bool, Option<&str>, &[&str])] = &[
        ("MAGIC=F1 file F2", true, None, &["F1", "F2"]),
        (
            "MAGIC=F1:F2 file F3",
            true,
            None,
            &["F1:F2", "F1", "F2", "F3"],
        ),
        ("env MAGIC=F1 file F2", true, None, &["F1", "F2"]),
        (
            "MAGIC=/etc/passwd file F2",
            false,
            Some("path_not_in_scope"),
            &["/etc/passwd", "F2"],
        ),
        (
            "MAGIC=F1:/etc/passwd file F2",
            false,
            Some("path_not_in_scope"),
            &["F1:/etc/passwd", "F1", "/etc/passwd", "F2"],
        ),
        (
            "MAGIC=$X file F2",
            false,
            Some("run_time_operand"),
            &["$X", "F2"],
        ),
        (
            "for MAGIC in /etc/passwd; do export MAGIC; file F2; done",
            false,
            Some("unsupported_construct"),
            &["F2"],
        ),
        // A word that looks like an assignment is taken for one wherever it stands: checked.
        ("file MAGIC=F1", true, None, &["MAGIC=F1", "F1"]),
        ("MAGIC=F1 ls F2", true, None, &["F2"]),
        (
            "MANPATH=F1:/etc man ls",
            false,
            Some("path_not_in_scope"),
            &["F1:/etc", "F1", "/etc"],
        ),
        // Variables that make a command run programs or take options of their own.
        ("MANOPT=--pager=sh man ls", false, Some("denied"), &[]),
        ("env TAPE=F1 tar -t", false, Some("denied"), &[]),
        ("TAPE=F1; export TAPE; tar -t", false, Some("denied"), &[]),
    ];
    let s = scope(&SCOPE.replace("@D", &tmp.path().to_string_lossy()));
    let mut bad = Vec::new();
    for (cmd, allowed, reason, read) in rows {
        let d = decide_in(&s, tmp.path(), None, None, &[], cmd);
        let paths: BTreeSet<String> = d.paths.iter().map(|p| p.path.clone()).collect();
        if d.allowed != *allowed || d.reason != *reason || paths != set(read) {
            bad.push(format!(
                "{cmd}: allowed {} reason {:?} read {paths:?} ({})",
                d.allowed, d.reason, d.message
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let messages = |cmd: &str| {
        decide_in(&s, tmp.path(), None, None, &[], cmd)
            .violations
            .into_iter()
            .map(|v| v.message)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        messages("for MAGIC in /etc/passwd; do export MAGIC; file F2; done"),
        ["file reads the files that MAGIC names, and this command line names MAGIC where the engine cannot see the value it sets; set it only as `MAGIC=PATH file ...` with a literal path in scope, or run file without it."]
    );
    assert_eq!(messages("env TAPE=F1 tar -t"), ["setting TAPE can make tar run other programs or read other files; it is not allowed. Run tar without it."]);
}

/// (command, reason of the refusal, paths read, paths written)
type HandlerRow = (
    &'static str,
    Option<&'static str>,
    &'static [&'static str],
    &'static [&'static str],
);

/// sed and awk read their options with the same grammar (gawk's end at the program text);
/// their handlers judge the script. (command, reason of the refusal, paths read, written)
#[test]
fn sed_and_awk_options_read_with_the_grammar() {
    let tmp = TempDir::new("grammar-handlers");
    let rows: &[HandlerRow] = &[
        ("sed --expr=p F1", None, &["F1"], &[]),
        ("sed F1 -e p", None, &["F1"], &[]),
        ("sed -nep F1", None, &["F1"], &[]),
        ("sed -ni~ p F1", None, &[], &["F1"]),
        ("sed --in-pl p F1", None, &[], &["F1"]),
        ("sed -s -- p F1", None, &["F1"], &[]),
        (
            "sed --expr=1ecat F1",
            Some("flag_not_allowed"),
            &["F1"],
            &[],
        ),
        ("sed --fi=F1 F2", Some("unsupported_construct"), &[], &[]),
        ("sed -nfF1 F2", Some("unsupported_construct"), &[], &[]),
        ("awk -F: {print} F1", None, &["F1"], &[]),
        ("awk -vx=1 {print} F1 y=2", None, &["F1"], &[]),
        ("awk -e {print} F1", None, &["F1"], &[]),
        ("awk {print} -v F1", None, &["-v", "F1"], &[]),
        ("awk -fF1 F2", Some("unsupported_construct"), &[], &[]),
        (
            "awk -iinplace 1 F1",
            Some("unsupported_construct"),
            &[],
            &[],
        ),
        (
            "awk --incl inplace 1 F1",
            Some("unsupported_construct"),
            &[],
            &[],
        ),
        ("awk -oF1 1 F2", Some("unsupported_construct"), &[], &[]),
        (
            "awk -e BEGIN{system(\"id\")} F1",
            Some("unsupported_construct"),
            &["F1"],
            &[],
        ),
    ];
    let s = scope(&SCOPE.replace("@D", &tmp.path().to_string_lossy()));
    let mut bad = Vec::new();
    for (cmd, reason, read, written) in rows {
        let words: Vec<String> = shell_words::split(cmd).unwrap();
        let line = words
            .iter()
            .map(|w| shell_words::quote(w).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let d = decide_in(&s, tmp.path(), None, None, &[], &line);
        let (r, w) = checked(tmp.path(), &line);
        if d.reason != *reason || r != set(read) || w != set(written) {
            bad.push(format!(
                "{line}: reason {:?} read {r:?} written {w:?} ({})",
                d.reason, d.message
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let d = decide_in(&s, tmp.path(), None, None, &[], "sed -nfF1 F2");
    assert_eq!(d.violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>(), ["`sed -f` runs a script from a file that cannot be judged; pass the script with -e instead."]);
    let d = decide_in(&s, tmp.path(), None, None, &[], "awk --incl inplace 1 F1");
    assert_eq!(
        d.violations.iter().map(|v| v.message.as_str()).collect::<Vec<_>>(),
        ["`awk --include` runs a program or extension from a file that cannot be judged, or writes or reads files of its own (gawk's `-i inplace` rewrites files); pass the program inline instead."]
    );
}

/// Wrappers (`time`, `timeout`, `nice`, `stdbuf`) read their options with the grammar: the
/// file `time -o` writes is found in a bundle or attached, and the wrapped command is the
/// word after the options. (command, allowed, paths written)
#[test]
fn wrapper_options_read_with_the_grammar() {
    let tmp = TempDir::new("grammar-wrappers");
    let scope_text = format!(
        "paths:\n  read: [\"{d}/**\"]\n  write: []\nbash_tools:\n  categories:\n    read_only: [ls, time, timeout, nice, stdbuf]\n  path_arguments: enforce\n",
        d = tmp.path().display()
    );
    let s = scope(&scope_text);
    let rows: &[(&str, bool, &[&str])] = &[
        ("\\time -o F1 ls", false, &["F1"]),
        ("\\time -ao/tmp/F1 ls", false, &["/tmp/F1"]),
        ("\\time -aoF1 ls", false, &["F1"]),
        ("\\time --out=F1 ls", false, &["F1"]),
        ("\\time -p ls", true, &[]),
        ("timeout --sig KILL 5 ls", true, &[]),
        ("timeout -sKILL 5 ls", true, &[]),
        ("nice -n5 ls", true, &[]),
        ("stdbuf -oL ls", true, &[]),
    ];
    let mut bad = Vec::new();
    for (cmd, allowed, written) in rows {
        let d = decide_in(&s, tmp.path(), None, None, &[], cmd);
        let w: BTreeSet<String> = d
            .paths
            .iter()
            .filter(|p| p.access == "write")
            .map(|p| p.path.clone())
            .collect();
        if d.allowed != *allowed || w != set(written) {
            bad.push(format!(
                "{cmd}: allowed {} written {w:?} ({})",
                d.allowed, d.message
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
