//! Scope documents (B46-B50, C01-C04, C13, C16) and the seeds/001 command rules
//! (C05-C11, C14, C15).

mod common;
use common::*;
use gptel_scope::policy::rules::{check_argv, check_rule};
use gptel_scope::scope::config::{self, Source};
use gptel_scope::scope::{Platform, Scope};
use gptel_scope::ScopeError;

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn load_text(text: &str) -> Result<Scope, ScopeError> {
    config::load(&[Source::Inline {
        name: "t".into(),
        text: text.into(),
    }])
    .map(|l| l.scope.clone())
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn b46_bash_tools_loaded_from_scope_yml() {
    let t = TempDir::new("b46");
    let f = write(
        t.path(),
        "scope.yml",
        "bash_tools:\n  categories:\n    read_only: [ls]\n  timeout: 12\n  max_output_chars: 99\n",
    );
    let l = config::load(&[Source::File(f.clone())]).unwrap();
    assert_eq!(l.scope.bash_tools.categories.read_only, vec!["ls"]);
    assert_eq!(l.scope.bash_tools.timeout, 12);
    assert_eq!(l.scope.bash_tools.max_output_chars, 99);
    assert_eq!(l.project_root.as_deref(), Some(t.path()));
    assert_eq!(l.files, vec![f]);
}

#[test]
fn b47_missing_bash_tools_section_denies_all() {
    let t = TempDir::new("b47");
    let f = write(
        t.path(),
        "scope.yml",
        &format!("paths: {{read: [\"{}/**\"]}}\n", t.path().display()),
    );
    let l = config::load(&[Source::File(f)]).unwrap();
    let c = &l.scope.bash_tools.categories;
    assert!(c.read_only.is_empty() && c.safe_write.is_empty() && c.dangerous.is_empty());
    let d = decide_in(&l.scope, t.path(), None, None, &[], "ls");
    assert_eq!(d.reason, Some("command_not_allowed"));
}

#[test]
fn b48_missing_scope_yml_errors() {
    let t = TempDir::new("b48");
    let err = config::load(&[Source::File(t.path().join("scope.yml"))]).unwrap_err();
    assert_eq!(err.reason(), "no_scope_config");
    assert_eq!(config::load(&[]).unwrap_err().reason(), "no_scope_config");
    assert_eq!(err.symbol(), "gptel-scope-no-scope-config");
}

#[test]
fn b49_category_structure_parsed() {
    let s = load_text("bash_tools:\n  categories:\n    read_only: [ls, \"git log\"]\n    safe_write: [mkdir]\n    dangerous: [rm]\n").unwrap();
    assert_eq!(s.bash_tools.categories.read_only, vec!["ls", "git log"]);
    assert_eq!(s.bash_tools.categories.safe_write, vec!["mkdir"]);
    assert_eq!(s.bash_tools.categories.dangerous, vec!["rm"]);
}

#[test]
fn b50_deny_list_parsed() {
    let s = load_text("bash_tools:\n  deny: [curl, wget]\n").unwrap();
    assert_eq!(s.bash_tools.deny, vec!["curl", "wget"]);
    // Without a deny list in the document, the defaults' list stays.
    let s = load_text("bash_tools:\n  timeout: 5\n").unwrap();
    assert_eq!(s.bash_tools.deny, vec!["sudo", "doas", "su", "pkexec"]);
}

#[test]
fn invalid_config_names_file_line_and_key() {
    let t = TempDir::new("invalid");
    for (text, line, key) in [
        (
            "paths:\n  read: []\nbash_tools:\n  categories:\n    read_onyl: [ls]\n",
            Some(5),
            Some("bash_tools.categories.read_onyl"),
        ),
        (
            "bash_tools:\n  timeout: soon\n",
            Some(2),
            Some("bash_tools.timeout"),
        ),
        ("paths: [\n", Some(2), None),
        ("frobnicate: 1\n", Some(1), Some("frobnicate")),
    ] {
        let f = write(t.path(), "scope.yml", text);
        let err = config::load(&[Source::File(f.clone())]).unwrap_err();
        match &err {
            ScopeError::InvalidConfig {
                file,
                line: l,
                key: k,
                ..
            } => {
                assert_eq!(file, &f.display().to_string());
                assert_eq!(*l, line, "{text}: {err}");
                if key.is_some() {
                    assert_eq!(k.as_deref(), key, "{text}: {err}");
                }
            }
            other => panic!("{text}: {other:?}"),
        }
        assert_eq!(err.symbol(), "gptel-scope-invalid-config");
    }
}

#[test]
fn preset_front_matter_is_the_document() {
    let t = TempDir::new("preset");
    let f = write(
        t.path(),
        "preset.md",
        "---\nbash_tools:\n  categories:\n    read_only: [ls]\n---\n# Notes\nbody text\n",
    );
    let l = config::load(&[Source::File(f.clone())]).unwrap();
    assert_eq!(l.scope.bash_tools.categories.read_only, vec!["ls"]);
    let f = write(
        t.path(),
        "preset.md",
        "---\nbash_tools:\n  nope: 1\n---\nbody\n",
    );
    match config::load(&[Source::File(f)]).unwrap_err() {
        ScopeError::InvalidConfig { line, .. } => assert_eq!(line, Some(3)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn cached_document_costs_no_read_and_edits_are_picked_up() {
    let t = TempDir::new("cache");
    let f = write(t.path(), "scope.yml", "bash_tools: {timeout: 1}\n");
    set_modified(
        &f,
        std::time::SystemTime::now() - std::time::Duration::from_secs(10),
    );
    let a = config::load(&[Source::File(f.clone())]).unwrap();
    let reads = config::cache_stats().file_reads;
    let b = config::load(&[Source::File(f.clone())]).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    assert_eq!(
        config::cache_stats().file_reads,
        reads,
        "a cached load reads no file"
    );
    std::fs::write(&f, "bash_tools: {timeout: 22}\n").unwrap();
    let file = std::fs::File::options().write(true).open(&f).unwrap();
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))
        .unwrap();
    let c = config::load(&[Source::File(f)]).unwrap();
    assert_eq!(c.scope.bash_tools.timeout, 22);
}

fn set_modified(f: &std::path::Path, t: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(f)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn same_length_rewrite_with_its_old_mtime_is_picked_up() {
    let t = TempDir::new("forged");
    let f = write(
        t.path(),
        "scope.yml",
        "bash_tools: {categories: {read_only: [ls]}}\n",
    );
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    set_modified(&f, old);
    assert_eq!(
        config::load(&[Source::File(f.clone())])
            .unwrap()
            .scope
            .bash_tools
            .categories
            .read_only,
        ["ls"]
    );
    // Same length, the old modification time put back (as `touch -r` or `cp -p` do).
    std::fs::write(&f, "bash_tools: {categories: {read_only: [lx]}}\n").unwrap();
    set_modified(&f, old);
    assert_eq!(
        config::load(&[Source::File(f.clone())])
            .unwrap()
            .scope
            .bash_tools
            .categories
            .read_only,
        ["lx"]
    );
    // Made invalid the same way: an error, never the cached scope.
    std::fs::write(&f, "bash_tools: {categories: {read_only: [ls}}}\n").unwrap();
    set_modified(&f, old);
    assert!(matches!(
        config::load(&[Source::File(f)]).unwrap_err(),
        ScopeError::InvalidConfig { line: Some(1), .. }
    ));
}

#[test]
fn a_file_modified_this_instant_is_not_cached() {
    let t = TempDir::new("racy");
    let f = write(t.path(), "scope.yml", "bash_tools: {timeout: 1}\n");
    let a = config::load(&[Source::File(f.clone())]).unwrap();
    let b = config::load(&[Source::File(f)]).unwrap();
    assert!(
        !std::sync::Arc::ptr_eq(&a, &b),
        "a stamp within the clock tick of a write is not trusted"
    );
}

#[test]
fn c01_platform_key_selects_the_table() {
    assert_eq!(Platform::current(), Platform::Posix);
    let s = load_text("{}").unwrap();
    assert!(check_argv(&s, Platform::Posix, "grep", &args(&["-n", "x", "f"])).is_ok());
    assert_eq!(
        check_argv(&s, Platform::Windows, "grep", &args(&["x"]))
            .unwrap_err()
            .reason,
        "command_not_allowed"
    );
    assert!(check_argv(&s, Platform::Windows, "findstr", &args(&["/N", "x", "f"])).is_ok());
}

#[test]
fn c02_user_overrides_deep_merge_over_defaults() {
    let s = load_text(
        "tool_commands:\n  posix:\n    allowed:\n      grep:\n        allowed_flags: [-n, -r]\n",
    )
    .unwrap();
    let grep = &s.tool_commands.posix.allowed["grep"];
    assert_eq!(grep.allowed_flags, Some(args(&["-n", "-r"])));
    assert_eq!(
        grep.description.as_deref(),
        Some("Search text using patterns"),
        "fields not given stay"
    );
    assert!(
        s.tool_commands.posix.allowed.contains_key("git"),
        "other commands stay"
    );
}

#[test]
fn c03_simple_command_entry() {
    let s = load_text("tool_commands:\n  posix:\n    allowed:\n      tree:\n        description: Show a tree\n        allowed_flags: [-L]\n        allowed_args: [\"{path}\"]\n").unwrap();
    let tree = &s.tool_commands.posix.allowed["tree"];
    assert_eq!(tree.description.as_deref(), Some("Show a tree"));
    assert_eq!(tree.allowed_args, Some(args(&["{path}"])));
    assert!(check_argv(&s, Platform::Posix, "tree", &args(&["-L", "2", "."])).is_ok());
}

#[test]
fn c04_subcommand_entry() {
    let s = load_text("{}").unwrap();
    let git = &s.tool_commands.posix.allowed["git"];
    assert!(git.has_subcommands);
    assert!(git.subcommands.contains_key("status"));
    assert!(git
        .blacklist
        .as_ref()
        .unwrap()
        .subcommands
        .contains(&"push".to_string()));
}

#[test]
fn c05_blacklisted_command_rejected() {
    let s =
        load_text("tool_commands:\n  posix:\n    allowed:\n      rm: {description: x}\n").unwrap();
    let v = check_argv(&s, Platform::Posix, "rm", &args(&["-rf", "/"])).unwrap_err();
    assert_eq!(v.reason, "denied");
    assert!(v.message.contains("blacklisted"), "{}", v.message);
}

#[test]
fn c06_command_not_in_allowed_rejected() {
    let s = load_text("{}").unwrap();
    let v = check_argv(&s, Platform::Posix, "python3", &args(&["x.py"])).unwrap_err();
    assert_eq!(v.reason, "command_not_allowed");
    assert!(
        v.message
            .contains("Available: cat, file, find, git, grep, head, ls, pwd, tail, wc"),
        "{}",
        v.message
    );
    assert!(v.message.contains("list_allowed_commands"), "{}", v.message);
}

#[test]
fn c07_blacklisted_subcommand_rejected() {
    let s = load_text("{}").unwrap();
    let v = check_argv(
        &s,
        Platform::Posix,
        "git",
        &args(&["push", "origin", "main"]),
    )
    .unwrap_err();
    assert_eq!(v.reason, "subcommand_denied");
    assert!(v.message.contains("dangerous operation"), "{}", v.message);
}

#[test]
fn c08_subcommand_not_listed_rejected() {
    let s = load_text("{}").unwrap();
    let v = check_argv(&s, Platform::Posix, "git", &args(&["bisect", "start"])).unwrap_err();
    assert_eq!(v.reason, "subcommand_not_allowed");
    assert!(
        v.message
            .contains("Allowed: blame, diff, log, ls-files, show, status"),
        "{}",
        v.message
    );
}

#[test]
fn c09_flags_must_be_allowed() {
    let s = load_text("{}").unwrap();
    for (cmd, a, ok) in [
        ("grep", vec!["-n", "x", "f"], true),
        ("grep", vec!["-Z", "x", "f"], false),
        ("ls", vec!["-la"], true),
        ("ls", vec!["-lZ"], false),
        ("git", vec!["log", "--format=%h"], true),
        ("git", vec!["status", "--invalid-flag"], false),
        ("grep", vec!["--", "-Z", "f"], true),
        ("pwd", vec!["-P"], false),
    ] {
        let r = check_argv(&s, Platform::Posix, cmd, &args(&a));
        assert_eq!(r.is_ok(), ok, "{cmd} {a:?}: {r:?}");
        if let Err(v) = r {
            assert_eq!(v.reason, "flag_not_allowed");
            assert!(v.message.contains("Allowed flags:"), "{}", v.message);
        }
    }
}

#[test]
fn c10_positional_arguments_checked_loosely() {
    let s = load_text("{}").unwrap();
    assert!(check_argv(
        &s,
        Platform::Posix,
        "cat",
        &args(&["anything", "at/all", "../x"])
    )
    .is_ok());
}

#[test]
fn c11_list_allowed_commands_text() {
    let s = load_text("tool_commands:\n  posix:\n    allowed: {}\n").unwrap();
    // Lists replace but maps merge: the defaults' commands remain under `allowed`.
    let text = gptel_scope::policy::listing::list_allowed_commands(&s, Platform::Posix);
    assert!(text.starts_with("Platform: posix\n\nAvailable commands for run_command (a program and its arguments, no shell):\n\n"), "{text}");
    assert!(text.contains("  git: Git version control\n    Subcommands:\n      blame: Show who changed each line\n"), "{text}");
    assert!(text.contains("  cat: Display file contents\n"), "{text}");
    assert!(text.contains("\nrun_bash_command (a shell command line; only these commands, whatever run_command lists):\n"), "{text}");
    assert!(
        text.contains(
            "dangerous (only when the user allows it, via request_scope_expansion): (none)"
        ),
        "{text}"
    );
    let w = gptel_scope::policy::listing::list_allowed_commands(&s, Platform::Windows);
    assert!(
        w.starts_with("Platform: windows\n") && w.contains("  findstr: Search text in files\n"),
        "{w}"
    );
}

#[test]
fn c13_windows_table_loads_and_validates() {
    let s = load_text("{}").unwrap();
    for (cmd, a, reason) in [
        ("dir", vec!["/B", "/S"], None),
        ("findstr", vec!["/n", "x"], None),
        ("type", vec!["a.txt"], None),
        ("dir", vec!["/Q"], Some("flag_not_allowed")),
        ("del", vec!["x"], Some("denied")),
        ("grep", vec!["x"], Some("command_not_allowed")),
    ] {
        let r = check_argv(&s, Platform::Windows, cmd, &args(&a));
        assert_eq!(r.err().map(|v| v.reason.as_str()), reason, "{cmd} {a:?}");
    }
}

#[test]
fn c14_default_git_rules_forbid_network_and_state_changes() {
    let s = load_text("{}").unwrap();
    for sub in [
        "push", "pull", "fetch", "reset", "rebase", "merge", "config", "clean", "commit",
        "checkout", "clone",
    ] {
        let v = check_argv(&s, Platform::Posix, "git", &args(&[sub])).unwrap_err();
        assert_eq!(v.reason, "subcommand_denied", "{sub}");
    }
    assert!(check_argv(&s, Platform::Posix, "git", &args(&["status", "-s"])).is_ok());
}

#[test]
fn c15_rejections_say_what_is_allowed() {
    let s = load_text("{}").unwrap();
    for (cmd, a, needle) in [
        ("python3", vec![], "Available:"),
        ("git", vec!["bisect"], "Allowed:"),
        (
            "grep",
            vec!["-Z"],
            "Allowed flags: -n, -i, -E, -F, -r, -l, -c, -v, -w, -A, -B, -C, --include, --exclude",
        ),
        ("rm", vec![], "never allowed"),
    ] {
        let v = check_argv(&s, Platform::Posix, cmd, &args(&a)).unwrap_err();
        assert!(v.message.contains(needle), "{cmd}: {}", v.message);
    }
}

#[test]
fn c16_new_commands_by_configuration_alone() {
    let s = load_text(
        "tool_commands:\n  posix:\n    allowed:\n      rg:\n        description: Fast search\n        allowed_flags: [-n, -i, -t, -g]\n      cargo:\n        has_subcommands: true\n        description: Rust package manager\n        subcommands:\n          check: {description: Check, allowed_flags: [--all, --tests]}\n          test: {description: Run tests, allowed_flags: [--no-fail-fast, --release]}\n        blacklist: {subcommands: [publish, install]}\n",
    )
    .unwrap();
    assert!(check_argv(&s, Platform::Posix, "rg", &args(&["-n", "TODO", "src"])).is_ok());
    assert!(check_argv(&s, Platform::Posix, "cargo", &args(&["test", "--release"])).is_ok());
    assert_eq!(
        check_argv(&s, Platform::Posix, "cargo", &args(&["publish"]))
            .unwrap_err()
            .reason,
        "subcommand_denied"
    );
    assert_eq!(
        check_argv(&s, Platform::Posix, "cargo", &args(&["build"]))
            .unwrap_err()
            .reason,
        "subcommand_not_allowed"
    );
    // bash_tools.commands uses the same rules for shell commands.
    let rule = &s.tool_commands.posix.allowed["rg"];
    assert_eq!(
        check_rule(rule, "rg", &args(&["-z"]), Platform::Posix)
            .unwrap_err()
            .reason,
        "flag_not_allowed"
    );
}

#[test]
fn shipped_profiles_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scope-profiles");
    for name in ["read-only", "coding", "restricted"] {
        let p = dir.join(format!("{name}.yml"));
        let l =
            config::load(&[Source::Profile(p.clone())]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            !l.scope.bash_tools.categories.read_only.is_empty(),
            "{name}"
        );
    }
}
