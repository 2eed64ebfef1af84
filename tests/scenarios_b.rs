//! The B scenarios (seeds/000) that the engine decides, one test per scenario, each a table.

mod common;
use common::*;
use gptel_scope::policy::decide::{Decision, Grant};
use gptel_scope::scope::Scope;

struct Fx {
    tmp: TempDir,
    scope: Scope,
}

impl Fx {
    fn new(path_arguments: &str) -> Fx {
        let tmp = TempDir::new("b");
        let r = tmp.path().to_path_buf();
        for d in ["proj/src", "proj/out", "proj/.secret", "other"] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        for f in ["proj/file.txt", "proj/src/a.el", "other/x.txt"] {
            std::fs::write(r.join(f), "TODO\n").unwrap();
        }
        std::os::unix::fs::symlink(r.join("other"), r.join("proj/link")).unwrap();
        std::os::unix::fs::symlink(r.join("proj"), r.join("alias")).unwrap();
        let scope = scope(&format!(
            r#"
paths:
  read: ["{r}/proj/**"]
  write: ["{r}/proj/out/**"]
  deny: ["**/.secret/**"]
bash_tools:
  categories:
    read_only: [ls, grep, find, cat, head, tail, wc, file, "git log", "git show", "git diff", pwd]
    safe_write: [mkdir, touch, echo, "git add", "git commit"]
    dangerous: [rm, mv, chmod]
  deny: [sudo, dd, curl]
  path_arguments: {path_arguments}
"#,
            r = r.display()
        ));
        Fx { tmp, scope }
    }
    fn dir(&self, rel: &str) -> std::path::PathBuf {
        if rel.is_empty() {
            self.tmp.path().to_path_buf()
        } else {
            self.tmp.path().join(rel)
        }
    }
    fn run(&self, rel: &str, cmd: &str) -> Decision {
        self.run_with(rel, cmd, &[])
    }
    fn run_with(&self, rel: &str, cmd: &str, grants: &[Grant]) -> Decision {
        decide_in(
            &self.scope,
            &self.dir(rel),
            Some(self.tmp.path()),
            None,
            grants,
            cmd,
        )
    }
    fn root(&self) -> String {
        self.tmp.path().display().to_string()
    }
}

fn assert_allowed(d: &Decision) {
    assert!(
        d.allowed,
        "expected allowed: {} -> {:?} {}",
        d.command, d.reason, d.message
    );
}

fn assert_reason(d: &Decision, reason: &str) {
    assert!(!d.allowed, "expected denied: {}", d.command);
    assert_eq!(d.reason, Some(reason), "{}: {}", d.command, d.message);
}

#[test]
fn b01_read_only_command_categorized() {
    let fx = Fx::new("warn");
    for cmd in [
        "ls",
        "grep TODO file.txt",
        "find . -name '*.el'",
        "cat file.txt",
        "head file.txt",
        "tail file.txt",
        "wc -l file.txt",
        "file file.txt",
        "git log",
        "git show HEAD",
        "git diff",
    ] {
        let d = fx.run("proj", cmd);
        assert_allowed(&d);
        assert_eq!(d.category.as_deref(), Some("read_only"), "{cmd}");
        assert_eq!(d.required_scope, "read", "{cmd}");
    }
}

#[test]
fn b02_safe_write_command_categorized() {
    let fx = Fx::new("warn");
    for cmd in [
        "mkdir build",
        "touch notes.md",
        "echo hi",
        "git add file.txt",
        "git commit -m msg",
    ] {
        let d = fx.run("proj/out", cmd);
        assert_allowed(&d);
        assert_eq!(d.category.as_deref(), Some("safe_write"), "{cmd}");
        assert_eq!(d.required_scope, "write", "{cmd}");
    }
}

#[test]
fn b03_dangerous_command_categorized() {
    let fx = Fx::new("warn");
    for cmd in ["rm x", "mv a b", "chmod +x f"] {
        let d = fx.run("proj/out", cmd);
        assert_reason(&d, "dangerous_command");
        assert_eq!(d.category.as_deref(), Some("dangerous"));
        assert!(
            d.message.contains("request_scope_expansion"),
            "{}",
            d.message
        );
    }
}

#[test]
fn b04_denied_command_rejected() {
    let fx = Fx::new("warn");
    // Rejected before category or directory: even where nothing is in scope.
    for (dir, cmd, rule) in [
        ("other", "curl http://x", "deny: curl"),
        ("", "dd if=a of=b", "deny: dd"),
        ("proj", "/usr/bin/curl x", "deny: curl"),
    ] {
        let d = fx.run(dir, cmd);
        assert_reason(&d, "denied");
        assert_eq!(d.commands[0].rule.as_deref(), Some(rule));
    }
    assert_reason(&fx.run("proj", "sudo ls"), "privilege_escalation");
}

#[test]
fn b05_unknown_command_denied_by_default() {
    let fx = Fx::new("warn");
    for cmd in ["frobnicate", "python3 x.py", "ls && make"] {
        assert_reason(&fx.run("proj", cmd), "command_not_allowed");
    }
}

#[test]
fn b06_read_only_command_in_read_path() {
    let fx = Fx::new("warn");
    assert_allowed(&fx.run("proj", "cat file.txt"));
    assert_allowed(&fx.run("proj/src", "ls"));
}

#[test]
fn b07_read_only_command_in_write_path() {
    let fx = Fx::new("warn");
    assert_allowed(&fx.run("proj/out", "ls -la"));
}

#[test]
fn b08_safe_write_command_in_write_path() {
    let fx = Fx::new("warn");
    assert_allowed(&fx.run("proj/out", "touch a.txt"));
}

#[test]
fn b09_safe_write_command_in_read_only_path() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "touch a.txt");
    assert_reason(&d, "directory_not_in_scope");
    assert_eq!(d.required_scope, "write");
    assert_eq!(
        d.allowed_patterns,
        vec![format!("{}/proj/out/**", fx.root())]
    );
}

#[test]
fn b10_directory_matches_deny_pattern() {
    let fx = Fx::new("warn");
    for cmd in ["ls", "cat x"] {
        let d = fx.run("proj/.secret", cmd);
        assert_reason(&d, "path_denied");
        assert!(d.message.contains("**/.secret/**"), "{}", d.message);
    }
}

#[test]
fn b11_directory_outside_all_patterns() {
    let fx = Fx::new("warn");
    let d = fx.run("other", "ls");
    assert_reason(&d, "directory_not_in_scope");
    assert_eq!(d.directory, format!("{}/other", fx.root()));
}

#[test]
fn b12_command_with_explicit_directory() {
    let fx = Fx::new("warn");
    let d = fx.run("proj/src", "ls");
    assert_allowed(&d);
    assert_eq!(d.directory, format!("{}/proj/src", fx.root()));
}

#[test]
fn b13_relative_directory_path_resolved() {
    // The engine takes absolute directories (elisp expands relative ones against the
    // buffer's default-directory); `..` and `.` inside are normalized here.
    let fx = Fx::new("warn");
    let d = fx.run("proj/src/../out/.", "touch x");
    assert_allowed(&d);
    assert_eq!(d.directory, format!("{}/proj/out", fx.root()));
}

#[test]
fn b14_symlink_directory_resolved() {
    let fx = Fx::new("warn");
    let d = fx.run("proj/link", "ls");
    assert_reason(&d, "directory_not_in_scope");
    assert_eq!(d.directory, format!("{}/other", fx.root()));
    let d = fx.run("alias", "ls");
    assert_allowed(&d);
    assert_eq!(d.directory, format!("{}/proj", fx.root()));
}

#[test]
fn b15_piped_commands_validated_by_base_command() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "ls | grep foo");
    assert_allowed(&d);
    assert_eq!(d.base_command.as_deref(), Some("ls"));
    // The verdict covers every command, not only the base.
    let d = fx.run("proj", "ls | rm x");
    assert_eq!(d.base_command.as_deref(), Some("ls"));
    assert_reason(&d, "dangerous_command");
}

#[test]
fn b16_redirected_output_allowed() {
    let fx = Fx::new("warn");
    let d = fx.run("proj/out", "cat ../file.txt > output.txt");
    assert_allowed(&d);
    assert_eq!(d.base_command.as_deref(), Some("cat"));
    assert_eq!(d.required_scope, "write");
    let d = fx.run("proj", "cat file.txt > output.txt");
    assert_reason(&d, "path_not_in_scope");
}

#[test]
fn b17_command_substitution_allowed() {
    let fx = Fx::new("warn");
    let d = fx.run("proj/out", "echo $(pwd)");
    assert_allowed(&d);
    assert_eq!(d.base_command.as_deref(), Some("echo"));
    let names: Vec<(&str, &str)> = d
        .commands
        .iter()
        .map(|c| (c.name.as_str(), c.context))
        .collect();
    assert_eq!(names, vec![("pwd", "substitution"), ("echo", "top_level")]);
    assert_reason(&fx.run("proj/out", "echo $(rm x)"), "dangerous_command");
}

#[test]
fn b18_complex_pipeline_validated_by_first_command() {
    let fx = Fx::new("warn");
    let d = fx.run(
        "proj",
        "find . -name '*.el' | xargs grep -l 'defun' | head -10",
    );
    assert_allowed(&d);
    assert_eq!(d.base_command.as_deref(), Some("find"));
    let via: Vec<Vec<String>> = d.commands.iter().map(|c| c.via.clone()).collect();
    let names: Vec<&str> = d.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["find", "xargs", "grep", "head"]);
    assert_eq!(via, vec![vec![], vec![], vec!["xargs".to_string()], vec![]]);
}

fn base_of(cmd: &str) -> Option<String> {
    let fx = Fx::new("warn");
    fx.run("proj", cmd).base_command
}

#[test]
fn b19_simple_command_extraction() {
    assert_eq!(base_of("ls -la").as_deref(), Some("ls"));
}

#[test]
fn b20_pipeline_command_extraction() {
    assert_eq!(base_of("ls | grep foo").as_deref(), Some("ls"));
}

#[test]
fn b21_redirect_command_extraction() {
    assert_eq!(base_of("cat file > out").as_deref(), Some("cat"));
    assert_eq!(base_of("> out cat file").as_deref(), Some("cat"));
}

#[test]
fn b22_command_with_arguments_extraction() {
    assert_eq!(base_of("grep -rn 'pattern' .").as_deref(), Some("grep"));
}

#[test]
fn b23_leading_trailing_whitespace_handled() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "  ls -la  ");
    assert_eq!(d.base_command.as_deref(), Some("ls"));
    assert_eq!(d.command, "ls -la");
}

#[test]
fn b24_validation_pipeline_order() {
    let fx = Fx::new("warn");
    // deny list before category before directory.
    for (dir, cmd, reason) in [
        ("other", "curl x", "denied"),
        ("other", "frobnicate", "command_not_allowed"),
        ("other", "ls", "directory_not_in_scope"),
        ("proj", "touch x", "directory_not_in_scope"),
        ("proj/out", "touch x", ""),
    ] {
        let d = fx.run(dir, cmd);
        if reason.is_empty() {
            assert_allowed(&d);
        } else {
            assert_reason(&d, reason);
        }
    }
}

#[test]
fn b25_directory_resolution_with_symlinks() {
    let fx = Fx::new("warn");
    // A path through an in-scope symlink that leads out of scope is judged by its target.
    let d = fx.run("proj", "cat link/x.txt");
    assert!(d.allowed, "warn mode allows with a warning");
    assert!(
        d.warnings
            .iter()
            .any(|w| w.contains(&format!("{}/other/x.txt", fx.root()))),
        "{:?}",
        d.warnings
    );
    let fx = Fx::new("enforce");
    let d = fx.run("proj", "cat link/x.txt");
    assert_reason(&d, "path_not_in_scope");
    assert_eq!(d.paths[0].resolved, format!("{}/other/x.txt", fx.root()));
}

#[test]
fn b26_relative_directory_resolution() {
    let fx = Fx::new("warn");
    let d = fx.run("alias/src/..", "ls");
    assert_allowed(&d);
    assert_eq!(d.directory, format!("{}/proj", fx.root()));
}

#[test]
fn b35_command_with_relative_paths() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "grep -r 'TODO' ./src");
    assert_allowed(&d);
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
}

#[test]
fn b36_command_with_absolute_path_argument() {
    let fx = Fx::new("warn");
    let cmd = format!("grep -r 'TODO' {}/other", fx.root());
    let d = fx.run("proj", &cmd);
    assert_allowed(&d);
    assert_eq!(d.warnings.len(), 1);
    assert!(
        d.warnings[0].contains(&format!("{}/other", fx.root())),
        "{:?}",
        d.warnings
    );
    // With path_arguments: enforce the same command is refused.
    let fx2 = Fx::new("enforce");
    let cmd = format!("grep -r 'TODO' {}/other", fx2.root());
    assert_reason(&fx2.run("proj", &cmd), "path_not_in_scope");
}

#[test]
fn b37_warning_suggests_relative_paths() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "cat /etc/hostname");
    assert_allowed(&d);
    assert!(
        d.warnings[0].contains("use relative paths"),
        "{:?}",
        d.warnings
    );
}

#[test]
fn b38_command_not_allowed_error_structure() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "frobnicate --all");
    assert_reason(&d, "command_not_allowed");
    assert_eq!(d.tool, "run_bash_command");
    assert_eq!(d.command, "frobnicate --all");
    assert_eq!(d.resource.as_deref(), Some("frobnicate"));
    assert_eq!(d.validation_type, Some("command"));
    assert!(
        d.message.contains("`frobnicate` is not in any category"),
        "{}",
        d.message
    );
}

#[test]
fn b39_command_denied_error_structure() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "curl -s http://example.invalid");
    assert_reason(&d, "denied");
    assert_eq!(d.command, "curl -s http://example.invalid");
    assert!(d.message.contains("security policy"), "{}", d.message);
    assert!(!d.violations[0].grantable);
}

#[test]
fn b40_directory_not_in_scope_error_structure() {
    let fx = Fx::new("warn");
    let d = fx.run("proj", "mkdir build");
    assert_reason(&d, "directory_not_in_scope");
    assert_eq!(d.directory, format!("{}/proj", fx.root()));
    assert_eq!(d.required_scope, "write");
    assert_eq!(
        d.allowed_patterns,
        vec![format!("{}/proj/out/**", fx.root())]
    );
    assert_eq!(
        d.resource.as_deref(),
        Some(format!("{}/proj", fx.root()).as_str())
    );
    assert_eq!(d.validation_type, Some("path"));
}

#[test]
fn b41_error_messages_suggest_expansion() {
    let fx = Fx::new("enforce");
    for (dir, cmd) in [
        ("proj", "frobnicate"),
        ("proj/out", "rm x"),
        ("other", "ls"),
        ("proj", "cat /etc/hostname"),
        ("proj", "touch x"),
    ] {
        let d = fx.run(dir, cmd);
        assert!(!d.allowed, "{cmd}");
        assert!(
            d.message.contains("request_scope_expansion"),
            "{cmd}: {}",
            d.message
        );
    }
}

#[test]
fn b44_allow_once_grant_lets_one_call_through() {
    let fx = Fx::new("warn");
    let grant = Grant {
        tool: "run_bash_command".into(),
        resource: "rm x".into(),
    };
    let d = fx.run_with("proj/out", "rm x", std::slice::from_ref(&grant));
    assert_allowed(&d);
    assert_eq!(d.grants_used, vec![grant.clone()]);
    // A grant for another tool or command does not apply; nor to the deny list.
    let other_tool = Grant {
        tool: "run_command".into(),
        resource: "rm x".into(),
    };
    assert_reason(
        &fx.run_with("proj/out", "rm x", &[other_tool]),
        "dangerous_command",
    );
    assert_reason(
        &fx.run_with("proj/out", "rm y", &[grant]),
        "dangerous_command",
    );
    let curl = Grant {
        tool: "run_bash_command".into(),
        resource: "curl x".into(),
    };
    assert_reason(&fx.run_with("proj/out", "curl x", &[curl]), "denied");
}

#[test]
fn b45_directory_grant_covers_paths_below_it() {
    let fx = Fx::new("warn");
    let grant = Grant {
        tool: "run_bash_command".into(),
        resource: format!("{}/other/**", fx.root()),
    };
    let d = fx.run_with("other", "ls", std::slice::from_ref(&grant));
    assert_allowed(&d);
    assert_eq!(d.grants_used, vec![grant]);
}
