//! Evidence and messages: what a decision tells the user and the model.

mod common;
use common::*;

fn fx() -> (TempDir, gptel_scope::scope::Scope) {
    let t = TempDir::new("evidence");
    for d in ["repo/src", "repo/out", "other"] {
        std::fs::create_dir_all(t.path().join(d)).unwrap();
    }
    std::fs::write(t.path().join("repo/src/a.rs"), "x").unwrap();
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/repo/**\"]\n  write: [\"{r}/repo/out/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, grep, \"git log\", \"git diff\"]\n    safe_write: [touch, \"git commit\"]\n    dangerous: [rm]\n  deny: [curl]\n  commands:\n    grep: {{allowed_flags: [-n, -r, -i]}}\n",
        r = t.path().display()
    ));
    (t, s)
}

#[test]
fn multi_word_entries_match_after_global_options() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    for (cmd, rule) in [
        ("git log -1", "read_only: git log"),
        ("git --no-pager log", "read_only: git log"),
        ("git -C src log", "read_only: git log"),
        ("git --namespace ns diff", "read_only: git diff"),
    ] {
        let d = decide_in(&s, &repo, None, None, &[], cmd);
        assert!(d.allowed, "{cmd}: {}", d.message);
        assert_eq!(d.commands[0].rule.as_deref(), Some(rule), "{cmd}");
    }
    let d = decide_in(&s, &repo, None, None, &[], "git push");
    assert_eq!(d.reason, Some("command_not_allowed"));
    assert_eq!(d.resource.as_deref(), Some("git push"));
    let d = decide_in(
        &s,
        &repo,
        None,
        None,
        &[],
        &format!("git -C {} log", t.path().join("other").display()),
    );
    assert_eq!(d.reason, Some("directory_not_in_scope"));
}

#[test]
fn per_command_rules_apply_to_shell_commands() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    assert!(decide_in(&s, &repo, None, None, &[], "grep -rn x src").allowed);
    let d = decide_in(&s, &repo, None, None, &[], "grep -P x src");
    assert_eq!(d.reason, Some("flag_not_allowed"));
    assert!(
        d.message.contains("Allowed flags: -n, -r, -i"),
        "{}",
        d.message
    );
}

#[test]
fn path_evidence_lists_every_effect() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    let d = decide_in(
        &s,
        &repo,
        None,
        None,
        &[],
        "cat src/a.rs > out/copy.rs 2>/dev/null",
    );
    assert!(d.allowed, "{}", d.message);
    let p: Vec<(&str, &str, &str)> = d
        .paths
        .iter()
        .map(|p| (p.path.as_str(), p.access, p.verdict))
        .collect();
    assert_eq!(
        p,
        vec![
            ("out/copy.rs", "write", "allowed"),
            ("src/a.rs", "read", "allowed")
        ]
    );
    assert_eq!(
        d.paths[0].resolved,
        format!("{}/repo/out/copy.rs", t.path().display())
    );
    assert_eq!(
        d.paths[0].pattern.as_deref(),
        Some(format!("{}/repo/out/**", t.path().display()).as_str())
    );
    assert_eq!(d.required_scope, "write");
}

#[test]
fn brace_expanded_arguments_are_each_judged() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    let d = decide_in(&s, &repo, Some(t.path()), None, &[], "cat src/{a,b}.rs");
    assert!(d.allowed, "{}", d.message);
    assert_eq!(d.commands[0].argv, vec!["cat", "src/a.rs", "src/b.rs"]);
    let d = decide_in(&s, &repo, Some(t.path()), None, &[], "ls {src,../other}");
    assert_eq!(d.reason, Some("path_not_in_scope"));
}

#[test]
fn xargs_replacement_into_plain_commands_is_allowed() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    assert!(decide_in(&s, &repo, None, None, &[], "ls src | xargs -I{} cat src/{}").allowed);
}

#[test]
fn nesting_is_bounded() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    let mut cmd = "ls".to_string();
    for _ in 0..20 {
        cmd = format!("echo $({cmd})");
    }
    let d = decide_in(&s, &repo, None, None, &[], &cmd);
    assert!(!d.allowed);
    // Refused before brush-parser sees it: expansions nested that deep are a guard's
    // (brush-parser backtracks on them); the flattener's own depth limit is behind it.
    assert!(
        d.violations
            .iter()
            .any(|v| v.reason == "unsupported_construct" && v.message.contains("nested more than")),
        "{}",
        d.message
    );
}

#[test]
fn every_refusal_says_what_to_do() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    for (cmd, reason, advice) in [
        ("frob", "command_not_allowed", "request_scope_expansion"),
        ("rm x", "dangerous_command", "request_scope_expansion"),
        ("curl x", "denied", "Do not retry"),
        ("sudo ls", "privilege_escalation", "never"),
        ("$X", "dynamic_command", "write the command name literally"),
        (
            "eval ls",
            "unsupported_construct",
            "run the commands directly",
        ),
        ("ls 'x", "parse_error", "does not parse"),
        ("cat .env", "path_denied", "never allowed"),
        (
            "cat /etc/hostname",
            "path_not_in_scope",
            "request_scope_expansion",
        ),
        (
            "touch x",
            "directory_not_in_scope",
            "request_scope_expansion",
        ),
        ("git log --ext-diff", "flag_not_allowed", "without it"),
    ] {
        let d = decide_in(&s, &repo, None, None, &[], cmd);
        assert_eq!(d.reason, Some(reason), "{cmd}: {}", d.message);
        assert!(d.message.contains(advice), "{cmd}: {}", d.message);
    }
}

#[test]
fn argv_commands_cannot_smuggle_shell_syntax() {
    let (t, s) = fx();
    let repo = t.path().join("repo");
    let matcher = gptel_scope::policy::paths::Matcher::new(&s.paths, None, None).unwrap();
    let ctx = gptel_scope::policy::decide::Ctx {
        scope: &s,
        matcher: &matcher,
        home: None,
        grants: &[],
        tool: "run_command",
        project_root: None,
        masked: false,
    };
    // The argument is one literal word: `; rm -rf /` is data for cat, a path out of scope.
    let d = gptel_scope::policy::decide::decide_argv(
        &ctx,
        "cat",
        &["src/a.rs; rm -rf /".to_string()],
        &repo,
        gptel_scope::scope::Platform::Posix,
    );
    assert!(d.allowed, "a literal file name: {}", d.message);
    assert_eq!(d.commands.len(), 1);
    let d = gptel_scope::policy::decide::decide_argv(
        &ctx,
        "cat",
        &["$(id)".to_string()],
        &repo,
        gptel_scope::scope::Platform::Posix,
    );
    assert_eq!(d.commands[0].argv, vec!["cat", "$(id)"]);
}
