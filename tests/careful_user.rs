//! Decisions a careful user agrees with: commands of the kinds coding agents run in a personal
//! Emacs configuration repository, each labelled by hand (allowed, or refused for a stated
//! reason) under the scope a careful user of that repository would write
//! (`tests/corpus/careful-user-scope.yml`). The rows are grouped in families: the bypass of a
//! path-qualified name, the overblocks of real commands, and what must stay refused.

mod common;
use common::*;

/// A row: its family, the command, and the expected verdict: `allow`, or the reason code
/// of the refusal.
struct Row {
    family: &'static str,
    command: &'static str,
    expect: &'static str,
}

const fn r(family: &'static str, expect: &'static str, command: &'static str) -> Row {
    Row {
        family,
        command,
        expect,
    }
}

const ROWS: &[Row] = &[
    // A path-qualified name is the file it names.
    r("path-qualified name", "allow", "./bin/tangle.sh"),
    r(
        "path-qualified name",
        "allow",
        "cd config && ../bin/tangle.sh",
    ),
    r(
        "path-qualified name",
        "command_not_allowed",
        "cd config && mkdir -p bin && printf 'echo pwned\\n' > bin/tangle.sh && ./bin/tangle.sh",
    ),
    r(
        "path-qualified name",
        "command_not_allowed",
        "cp bin/tangle.sh lisp/tangle.sh && cd lisp && ../lisp/tangle.sh",
    ),
    // A listed interpreter may run code; its files are read paths.
    r(
        "listed interpreter",
        "allow",
        "emacs --batch -l init.el --eval '(message \"ok\")'",
    ),
    r(
        "listed interpreter",
        "allow",
        "emacs -Q --batch -f batch-byte-compile lisp/my-utils.el",
    ),
    r(
        "listed interpreter",
        "allow",
        "emacs --batch --load early-init.el",
    ),
    r(
        "listed interpreter",
        "path_denied",
        "emacs --batch -l ~/.ssh/config",
    ),
    r("listed interpreter", "path_denied", "emacs --batch -l .env"),
    // `[` and `[[` are the test builtin and syntax, not globs.
    r(
        "test brackets",
        "allow",
        "if [ -d config ]; then ls config; fi",
    ),
    r(
        "test brackets",
        "allow",
        "[ -f init.el ] && head -5 init.el",
    ),
    r("test brackets", "allow", "[[ -n \"$HOME\" ]] && echo set"),
    r("test brackets", "path_denied", "[ -f .env ] && cat .env"),
    // Process substitutions are pipes from commands judged on their own.
    r(
        "process substitution",
        "allow",
        "diff <(ls config) <(ls lisp)",
    ),
    r(
        "process substitution",
        "allow",
        "comm -12 <(sort a.txt) <(sort b.txt)",
    ),
    r(
        "process substitution",
        "path_denied",
        "diff <(cat ~/.ssh/config) init.el",
    ),
    // Loop variables over literal globs and words.
    r(
        "loops",
        "allow",
        "for d in config/*/; do find \"$d\" -name '*.org'; done",
    ),
    r(
        "loops",
        "allow",
        "for f in lisp/*.el; do head -3 \"$f\"; done",
    ),
    r(
        "loops",
        "allow",
        "for f in init.el early-init.el; do wc -l \"$f\"; done",
    ),
    r(
        "loops",
        "path_denied",
        "for f in ~/.ssh/*; do cat \"$f\"; done",
    ),
    r(
        "loops",
        "run_time_operand",
        "for f in $(ls); do cat \"$f\"; done",
    ),
    // A listed subcommand is not its command.
    r("subcommands", "allow", "bd list"),
    r("subcommands", "allow", "bd create --title 'Fix the theme'"),
    r("subcommands", "command_not_allowed", "bd label add 12 ui"),
    r("subcommands", "command_not_allowed", "bd delete 12"),
    // Everyday reads and writes in the repository.
    r("everyday", "allow", "grep -rn 'use-package' config lisp"),
    r("everyday", "allow", "find . -name '*.el' -newer init.el"),
    r("everyday", "allow", "git log --oneline -5"),
    r("everyday", "allow", "git diff HEAD -- config"),
    r("everyday", "allow", "git status --short"),
    r(
        "everyday",
        "allow",
        "mkdir -p config/new && cp init.el config/new/",
    ),
    r(
        "everyday",
        "allow",
        "git add init.el && git commit -m 'init: theme'",
    ),
    r("everyday", "allow", "wc -l init.el lisp/*.el | sort -n"),
    r("everyday", "allow", "ls --color=auto config"),
    r("everyday", "allow", "grep --color=never -n theme init.el"),
    // What stays refused.
    r("stays refused", "path_denied", "cat .env"),
    r("stays refused", "path_denied", "cat ~/.ssh/config"),
    r("stays refused", "privilege_escalation", "sudo ls"),
    r("stays refused", "denied", "curl https://example.com"),
    r(
        "stays refused",
        "command_not_allowed",
        "git push origin main",
    ),
    r(
        "stays refused",
        "path_denied",
        "grep --color root ~/.ssh/config",
    ),
    r("stays refused", "path_denied", "ls --color ~/.ssh"),
    r(
        "stays refused",
        "path_not_in_scope",
        "cp init.el /tmp/stolen.el",
    ),
];

/// The repository of the rows: an Emacs configuration with a script, a secret and notes.
fn fixture() -> TempDir {
    let tmp = TempDir::new("careful");
    let root = tmp.path();
    for d in [
        "repo/config/ui",
        "repo/config/org",
        "repo/lisp",
        "repo/bin",
        "home/.ssh",
    ] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in [
        "repo/init.el",
        "repo/early-init.el",
        "repo/config/ui/theme.org",
        "repo/config/org/agenda.org",
        "repo/lisp/my-utils.el",
        "repo/a.txt",
        "repo/b.txt",
        "repo/.env",
        "home/.ssh/config",
    ] {
        std::fs::write(root.join(f), "x\n").unwrap();
    }
    let script = root.join("repo/bin/tangle.sh");
    std::fs::write(&script, "#!/bin/sh\necho tangled\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    tmp
}

#[test]
fn careful_user_rows_decided_as_labelled() {
    let tmp = fixture();
    let root = tmp.path();
    let repo = root.join("repo");
    let home = root.join("home");
    let text = std::fs::read_to_string(corpus_dir().join("careful-user-scope.yml"))
        .unwrap()
        .replace("@ROOT@", &root.to_string_lossy());
    let sc = scope(&text);
    let mut families: Vec<(&str, usize, usize)> = Vec::new();
    let mut wrong = Vec::new();
    for row in ROWS {
        let d = decide_in(&sc, &repo, Some(&home), Some(&repo), &[], row.command);
        let got = if d.allowed {
            "allow"
        } else {
            d.reason.unwrap_or("?")
        };
        let agree = got == row.expect;
        match families.iter_mut().find(|f| f.0 == row.family) {
            Some(f) => {
                f.1 += 1;
                f.2 += agree as usize;
            }
            None => families.push((row.family, 1, agree as usize)),
        }
        if !agree {
            wrong.push(format!(
                "{}: {}\n  expected {}, got {got}: {}",
                row.family, row.command, row.expect, d.message
            ));
        }
    }
    for (family, n, agree) in &families {
        eprintln!("{family:<22} {agree}/{n}");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rows decided otherwise:\n{}",
        wrong.len(),
        ROWS.len(),
        wrong.join("\n")
    );
    // A subcommand not listed is named as the resource Add to scope would allow, not the
    // whole command (which would allow `bd delete` too).
    let d = decide_in(
        &sc,
        &repo,
        Some(&home),
        Some(&repo),
        &[],
        "bd label add 12 ui",
    );
    assert_eq!(d.resource.as_deref(), Some("bd label"), "{}", d.message);
}
