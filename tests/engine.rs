//! SPEC §3 behaviour beyond the seed scenarios: wrappers, nesting, directories changed by
//! `cd`, environment prefixes, option semantics, sed and awk programs. Tables of
//! (directory, command, expected) where expected is `allow` or the exact reason.

mod common;
use common::*;
use gptel_scope::scope::Scope;

struct Fx {
    tmp: TempDir,
    scope: Scope,
}

fn fx() -> Fx {
    let tmp = TempDir::new("engine");
    let r = tmp.path().to_path_buf();
    for d in ["proj/out", "proj/src", "other"] {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
    for f in ["proj/f.txt", "proj/src/a.rs", "other/x.txt"] {
        std::fs::write(r.join(f), "a\n").unwrap();
    }
    std::os::unix::fs::symlink(r.join("other"), r.join("proj/link")).unwrap();
    let scope = scope(&format!(
        r#"
paths:
  read: ["{r}/proj/**"]
  write: ["{r}/proj/out/**"]
  deny: ["**/.env"]
bash_tools:
  categories:
    read_only: [ls, cat, grep, find, head, sed, awk, sort, rg, tar, "git log", "git diff", "git show"]
    safe_write: [echo, touch, mkdir, "git commit"]
    dangerous: [rm]
  deny: [curl]
  path_arguments: enforce
"#,
        r = r.display()
    ));
    Fx { tmp, scope }
}

fn check(table: &[(&str, &str, &str)]) {
    let f = fx();
    let mut bad = Vec::new();
    for (dir, cmd, want) in table {
        let d = decide_in(
            &f.scope,
            &f.tmp.path().join(dir),
            Some(f.tmp.path()),
            None,
            &[],
            cmd,
        );
        let got = if d.allowed {
            "allow"
        } else {
            d.reason.unwrap_or("?")
        };
        if got != *want {
            bad.push(format!(
                "[{dir}] {cmd:?}: want {want}, got {got} ({})",
                d.message
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn s04_every_nested_command_is_validated() {
    check(&[
        ("proj", "env rm x", "dangerous_command"),
        ("proj", "nice -n 5 rm x", "dangerous_command"),
        ("proj", "timeout 5 rm x", "dangerous_command"),
        ("proj", "nohup rm x", "dangerous_command"),
        ("proj", "stdbuf -o0 rm x", "dangerous_command"),
        ("proj", "command rm x", "dangerous_command"),
        ("proj", "exec rm x", "dangerous_command"),
        ("proj", "time rm x", "dangerous_command"),
        ("proj", "ls | xargs rm", "dangerous_command"),
        ("proj", "find . -exec rm {} \\;", "dangerous_command"),
        ("proj", "bash -c 'ls; rm x'", "dangerous_command"),
        ("proj", "sh -c \"bash -c 'rm x'\"", "dangerous_command"),
        ("proj", "ls $(rm x)", "dangerous_command"),
        ("proj", "ls `rm x`", "dangerous_command"),
        ("proj", "cat <(rm x)", "dangerous_command"),
        ("proj", "cat <<EOF\n$(rm x)\nEOF", "dangerous_command"),
        ("proj", "if true; then rm x; fi", "dangerous_command"),
        ("proj", "for f in a; do rm a; done", "dangerous_command"),
        ("proj", "case x in x) rm x;; esac", "dangerous_command"),
        ("proj", "while false; do rm x; done", "dangerous_command"),
        ("proj", "{ rm x; }", "dangerous_command"),
        ("proj", "(rm x)", "dangerous_command"),
        ("proj", "ls & rm x", "dangerous_command"),
        ("proj", "! rm x", "dangerous_command"),
        ("proj", "[[ $(rm x) ]]", "dangerous_command"),
        (
            "proj",
            "echo \"$(cat <<'EOF'\nit's (fine)\nEOF\n)\" ; rm x",
            "dangerous_command",
        ),
        ("proj", "builtin eval ls", "unsupported_construct"),
        ("proj", "ls ${x:-$(rm x)}", "unsupported_construct"),
        ("proj", "f() { ls; }; f", "unsupported_construct"),
        ("proj", "source ./env.sh", "unsupported_construct"),
        ("proj", "bash ./script.sh", "unsupported_construct"),
        ("proj", "bash -l -c ls", "flag_not_allowed"),
        ("proj", "x=$(echo ls); $x", "dynamic_command"),
    ]);
}

#[test]
fn s05_never_runs_with_elevated_privileges() {
    check(&[
        ("proj", "sudo ls", "privilege_escalation"),
        ("proj", "doas ls", "privilege_escalation"),
        ("proj", "su -c ls root", "privilege_escalation"),
        ("proj", "pkexec ls", "privilege_escalation"),
        ("proj", "env sudo ls", "privilege_escalation"),
        ("proj", "ls | xargs sudo cat", "privilege_escalation"),
        ("proj", "bash -c 'sudo ls'", "privilege_escalation"),
        ("proj", "find . -exec sudo cat {} +", "privilege_escalation"),
        ("proj", "/usr/bin/sudo ls", "privilege_escalation"),
    ]);
}

#[test]
fn wrappers_judge_both_layers_and_let_allowed_commands_through() {
    check(&[
        ("proj", "env LC_ALL=C ls", "allow"),
        ("proj", "timeout 5 ls", "allow"),
        ("proj", "nice -n 5 grep a f.txt", "allow"),
        ("proj", "bash -c 'ls | grep a'", "allow"),
        (
            "proj",
            "find . -name '*.rs' -print0 | xargs -0 grep -l a",
            "allow",
        ),
        ("proj", "command -v ls", "allow"),
        ("proj", "env -S 'ls -la'", "flag_not_allowed"),
        ("proj", "env", "command_not_allowed"),
        ("proj", "ls | xargs -I{} sh -c 'cat {}'", "dynamic_command"),
    ]);
}

#[test]
fn cd_changes_the_directory_of_what_follows() {
    check(&[
        ("proj", "cd out && touch x", "allow"),
        ("proj", "cd out; touch x", "directory_not_in_scope"),
        ("proj", "cd out || touch x", "directory_not_in_scope"),
        ("proj", "(cd out) && touch x", "directory_not_in_scope"),
        ("proj/out", "cd .. && touch x", "directory_not_in_scope"),
        ("proj", "cd link && cat x.txt", "directory_not_in_scope"),
        ("proj", "cd \"$D\" && ls", "unsupported_construct"),
        ("proj", "cd src && cat a.rs && cd .. && cat f.txt", "allow"),
    ]);
}

#[test]
fn environment_prefixes_that_change_what_runs_are_denied() {
    check(&[
        ("proj", "LC_ALL=C ls", "allow"),
        ("proj", "GIT_AUTHOR_NAME=x git log", "allow"),
        ("proj", "PAGER=cat git log", "denied"),
        ("proj", "GIT_EXTERNAL_DIFF=x git diff", "denied"),
        ("proj", "LD_PRELOAD=x.so ls", "denied"),
        ("proj", "PATH=. ls", "denied"),
        ("proj", "env BASH_ENV=x ls", "denied"),
        ("proj", "IFS=x; ls", "denied"),
    ]);
}

#[test]
fn option_semantics_read_write_and_run() {
    check(&[
        ("proj", "git -c core.pager=x log", "flag_not_allowed"),
        ("proj", "git diff --ext-diff", "flag_not_allowed"),
        ("proj", "rg --pre cat x", "flag_not_allowed"),
        ("proj", "rg --pre-glob '*' x", "flag_not_allowed"),
        ("proj", "sort --compress-prog=x f.txt", "flag_not_allowed"),
        ("proj", "sort -o out/sorted.txt f.txt", "allow"),
        ("proj", "sort -o sorted.txt f.txt", "path_not_in_scope"),
        ("proj", "git log --output=out/log.txt", "allow"),
        ("proj", "git log --output=log.txt", "path_not_in_scope"),
        ("proj", "grep -f ../other/x.txt f.txt", "path_not_in_scope"),
        ("proj", "grep -e -f f.txt", "allow"),
        ("proj", "cat .env", "path_denied"),
        ("proj", "cat f.txt > out/copy.txt", "allow"),
        ("proj", "cat f.txt > /dev/null 2>&1", "allow"),
        ("proj", "ls > \"$HOME/x\"", "run_time_operand"),
    ]);
}

#[test]
fn sed_and_awk_programs_are_read() {
    check(&[
        ("proj", "sed -n '1,5p' f.txt", "allow"),
        ("proj", "sed -i 's/a/b/' f.txt", "path_not_in_scope"),
        ("proj", "sed -i 's/a/b/' out/x.txt", "allow"),
        ("proj", "sed 's/a/b/e' f.txt", "flag_not_allowed"),
        ("proj", "sed '1e ls' f.txt", "flag_not_allowed"),
        ("proj", "sed 's/a/b/w out/log' f.txt", "allow"),
        ("proj", "sed 'w /tmp/x' f.txt", "path_not_in_scope"),
        ("proj", "sed -f script.sed f.txt", "unsupported_construct"),
        ("proj", "awk '{print $1}' f.txt", "allow"),
        ("proj", "awk '$1 > 5' f.txt", "allow"),
        ("proj", "awk '/a|b/ {print}' f.txt", "allow"),
        (
            "proj",
            "awk 'BEGIN{system(\"ls\")}'",
            "unsupported_construct",
        ),
        (
            "proj",
            "awk '{print > \"x\"}' f.txt",
            "unsupported_construct",
        ),
        (
            "proj",
            "awk '{print | \"sh\"}' f.txt",
            "unsupported_construct",
        ),
    ]);
}

#[test]
fn globs_are_expanded_against_the_file_system() {
    check(&[
        ("proj", "cat *.txt", "allow"),
        ("proj", "cat src/*.rs", "allow"),
        ("proj", "cat li*/x.txt", "path_not_in_scope"),
        ("proj", "cat ../*/x.txt", "path_not_in_scope"),
        ("proj", "/bin/l? .", "dynamic_command"),
    ]);
}

#[test]
fn bad_input_fails_closed_with_parse_error() {
    check(&[
        ("proj", "ls 'unterminated", "parse_error"),
        ("proj", "ls )", "parse_error"),
        ("proj", "ls\0", "parse_error"),
        ("proj", "ls\r\nrm x", "parse_error"),
        ("proj", "ls \u{202e}x", "parse_error"),
    ]);
    let long = format!("ls {}", "a".repeat(70_000));
    check(&[("proj", long.as_str(), "parse_error")]);
}

#[test]
fn archives_links_and_declarations() {
    check(&[
        ("proj", "tar xf ../other/x.tar", "path_not_in_scope"),
        ("proj", "tar -xzf a.tgz", "path_not_in_scope"),
        ("proj/out", "tar -xzf ../f.txt", "allow"),
        ("proj", "tar czf /tmp/x.tgz .", "path_not_in_scope"),
        ("proj", "tar -tf out/a.tar", "allow"),
        ("proj", "tar -cf out/a.tar src", "allow"),
        (
            "proj",
            "tar -cf a.tar --to-command=sh src",
            "flag_not_allowed",
        ),
        (
            "proj",
            "awk -i inplace '{print}' f.txt",
            "unsupported_construct",
        ),
        ("proj", "export LC_ALL=C && ls", "allow"),
        ("proj", "export PAGER=sh; git log", "denied"),
        ("proj", "declare -x GIT_EXTERNAL_DIFF=x; git diff", "denied"),
        (
            "proj",
            "export V='a[$(touch p)]'; ls",
            "unsupported_construct",
        ),
        ("proj", "env PAGER=sh git log", "denied"),
    ]);
}

#[test]
fn operand_shapes_of_dd_zip_printf_yq() {
    let f = fx();
    let mut s = f.scope.clone();
    s.bash_tools
        .categories
        .safe_write
        .extend(["dd", "zip", "printf", "yq"].map(String::from));
    let t = f.tmp.path();
    let mut bad = Vec::new();
    for (dir, cmd, want) in [
        ("proj/out", "dd if=../f.txt of=copy bs=1k", "allow"),
        ("proj/out", "dd if=../f.txt of=/tmp/x", "path_not_in_scope"),
        ("proj/out", "dd if=/etc/shadow of=x", "path_not_in_scope"),
        ("proj/out", "zip a.zip ../f.txt", "allow"),
        ("proj/out", "zip ../a.zip x", "path_not_in_scope"),
        ("proj/out", "printf -v PATH %s /tmp", "flag_not_allowed"),
        ("proj/out", "printf '%s\\n' x", "allow"),
        ("proj/out", "yq -i '.a = 1' ../f.txt", "path_not_in_scope"),
    ] {
        let d = decide_in(&s, &t.join(dir), Some(t), None, &[], cmd);
        let got = if d.allowed {
            "allow"
        } else {
            d.reason.unwrap_or("?")
        };
        if got != want {
            bad.push(format!("{cmd}: want {want}, got {got} ({})", d.message));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `[` is the test builtin, not a glob: a `[` with no `]` after it in the word matches
/// itself. A word with a bracket expression stays a glob (and a command name built by one is
/// still `dynamic_command`).
#[test]
fn test_bracket_is_the_test_builtin_not_a_glob() {
    check(&[
        ("proj", "if [ -d src ]; then ls src; fi", "allow"),
        ("proj", "[ -f f.txt ] && cat f.txt", "allow"),
        ("proj", "[ -d src ] || rm x", "dangerous_command"),
        ("proj", "[x] -d", "dynamic_command"),
        ("proj", "l[s] src", "dynamic_command"),
    ]);
}

/// A process substitution operand is a pipe to a command judged on its own, not a path; a
/// refusal names each other problem once, as a sentence.
#[test]
fn process_substitution_operands_are_pipes() {
    check(&[
        ("proj", "cat <(ls src) <(ls .)", "allow"),
        ("proj", "cat <(ls src) <(rm x)", "dangerous_command"),
        ("proj", "cat <(curl x)", "denied"),
        ("proj", "sort <(cat ../other/x.txt)", "path_not_in_scope"),
    ]);
    let f = fx();
    let d = decide_in(
        &f.scope,
        &f.tmp.path().join("proj"),
        Some(f.tmp.path()),
        None,
        &[],
        "cat $X $Y $X",
    );
    assert_eq!(
        d.message,
        "`$X` (operand of cat) is built at run time (a variable, substitution or glob the engine cannot expand), so it cannot be checked before the command runs; write it literally, or expand it first (list the files with a separate command, then name them). Also refused: run_time_operand ($Y)."
    );
}

/// A path-qualified command name runs the file it names from the directory it runs in: it
/// matches a scope entry naming a path only when both lead to the same file (issue's bypass:
/// `cd config && ... && ./bin/x.sh` ran a script the command itself wrote).
#[test]
fn path_qualified_names_match_the_file_they_run() {
    let tmp = TempDir::new("pathcmd");
    let root = tmp.path().join("repo");
    for d in ["bin", "config", "other"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("bin/x.sh"), "echo ok\n").unwrap();
    std::os::unix::fs::symlink(root.join("bin/x.sh"), root.join("other/link.sh")).unwrap();
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/**\"]\n  write: [\"{r}/config/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, ./bin/x.sh]\n    safe_write: [mkdir, printf]\n",
        r = root.display()
    ));
    let mut bad = Vec::new();
    for (dir, cmd, want) in [
        ("", "./bin/x.sh", "allow"),
        ("", "bin/x.sh", "allow"),
        ("bin", "./x.sh", "allow"),
        ("other", "./link.sh", "allow"),
        ("config", "../bin/x.sh", "allow"),
        (
            "",
            "cd config && mkdir -p bin && printf 'echo pwned\\n' > bin/x.sh && ./bin/x.sh",
            "command_not_allowed",
        ),
        ("config", "./bin/x.sh", "command_not_allowed"),
        ("", "./other/x.sh", "command_not_allowed"),
        ("", "x.sh", "command_not_allowed"),
    ] {
        let d = decide_in(&s, &root.join(dir), None, Some(&root), &[], cmd);
        let got = if d.allowed {
            "allow"
        } else {
            d.reason.unwrap_or("?")
        };
        if got != want {
            bad.push(format!(
                "[{dir}] {cmd}: want {want}, got {got} ({})",
                d.message
            ));
        }
    }
    // Without a project root a relative entry names no file: nothing matches it.
    let d = decide_in(&s, &root, None, None, &[], "./bin/x.sh");
    assert_eq!(d.reason, Some("command_not_allowed"));
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A command the scope lists by subcommand is refused by the subcommand it was given, named
/// as the resource to ask for: `bd label` is not `bd`.
#[test]
fn subcommands_not_listed_are_named_with_their_command() {
    let tmp = TempDir::new("subcmd");
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/**\"]\nbash_tools:\n  categories:\n    read_only: [bd list, bd show]\n",
        r = tmp.path().display()
    ));
    let d = decide_in(&s, tmp.path(), None, None, &[], "bd label add x y");
    assert_eq!(
        (d.reason, d.resource.as_deref()),
        (Some("command_not_allowed"), Some("bd label"))
    );
    assert!(
        d.message
            .starts_with("`bd label` is not in any category of the scope"),
        "{}",
        d.message
    );
    assert!(d.message.contains("resource \"bd label\""), "{}", d.message);
    assert!(decide_in(&s, tmp.path(), None, None, &[], "bd list --all").allowed);
    let d = decide_in(&s, tmp.path(), None, None, &[], "zz x");
    assert_eq!(d.resource.as_deref(), Some("zz"));
}

/// A listed interpreter may run code, said aloud: its code options are allowed with a
/// warning, its files of code are read paths checked against the scope, `--batch` runs
/// nothing by itself; what stays refused names the option and the way out.
#[test]
fn listed_interpreters_run_code_with_a_warning() {
    let tmp = TempDir::new("interp");
    let root = tmp.path().join("repo");
    std::fs::create_dir_all(root.join("lisp")).unwrap();
    std::fs::write(root.join("lisp/build.el"), "(message \"hi\")\n").unwrap();
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/**\"]\n  write: [\"{r}/**\"]\nbash_tools:\n  categories:\n    safe_write: [emacs, python3]\n",
        r = root.display()
    ));
    let d = decide_in(
        &s,
        &root,
        None,
        Some(&root),
        &[],
        "emacs --batch -l lisp/build.el --eval '(byte-compile-file \"x.el\")'",
    );
    assert!(d.allowed, "{}", d.message);
    assert_eq!(
        d.warnings,
        vec![
            "`emacs -l` runs code the engine does not judge: listing `emacs` in the scope allows whatever that code does".to_string(),
            "`emacs --eval` runs code the engine does not judge: listing `emacs` in the scope allows whatever that code does".to_string(),
        ]
    );
    assert!(
        decide_in(
            &s,
            &root,
            None,
            Some(&root),
            &[],
            "emacs --batch --script lisp/build.el"
        )
        .allowed
    );
    let d = decide_in(
        &s,
        &root,
        None,
        Some(&root),
        &[],
        "emacs --batch -l /etc/passwd",
    );
    assert_eq!(d.reason, Some("path_not_in_scope"), "{}", d.message);
    let d = decide_in(&s, &root, None, Some(&root), &[], "emacs -u root");
    assert_eq!(d.reason, Some("flag_not_allowed"));
    assert_eq!(d.message, "`emacs -u` can run other programs or read what the scope does not allow; it is not allowed. Run the command without it (the user may allow it with a `semantics:` entry for emacs in the scope; request_scope_expansion cannot).");
    let d = decide_in(&s, &root, None, Some(&root), &[], "python3 -c 'print(1)'");
    assert!(d.allowed && d.warnings.len() == 1, "{:?}", d);
    // Not listed: refused as before, whatever the options.
    let d = decide_in(&s, &root, None, Some(&root), &[], "node -e 1");
    assert_eq!(d.reason, Some("command_not_allowed"));
}

/// A word where git expects its command that is no git command runs an alias from git's
/// configuration (the repository's own: `alias.lp = !touch /tmp/pwned`) or a `git-lp`
/// program: a bare `git` entry does not cover it; `git lp` listed does.
#[test]
fn git_aliases_are_not_git_commands() {
    let tmp = TempDir::new("gitalias");
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/**\"]\nbash_tools:\n  categories:\n    read_only: [git, git co]\n",
        r = tmp.path().display()
    ));
    let d = decide_in(&s, tmp.path(), None, None, &[], "git -C . lp");
    assert_eq!(
        (d.reason, d.resource.as_deref()),
        (Some("subcommand_not_allowed"), Some("git lp"))
    );
    assert_eq!(d.message, "`git lp` is not a git command: git runs it as an alias from its configuration (the repository's own included) or as a `git-lp` program, either of which can run anything. Use the git command it stands for, or call request_scope_expansion with tool_name \"run_bash_command\", resource \"git lp\" and your reason.");
    for ok in [
        "git log --oneline",
        "git co main",
        "git --version",
        "git status",
    ] {
        assert!(
            decide_in(&s, tmp.path(), None, None, &[], ok).allowed,
            "{ok}"
        );
    }
    let granted = [gptel_scope::policy::decide::Grant {
        tool: "run_bash_command".into(),
        resource: "git lp".into(),
    }];
    assert!(decide_in(&s, tmp.path(), None, None, &granted, "git lp").allowed);
}
