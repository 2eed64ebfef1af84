//! The JSON entry points the binding and `make check` call.

mod common;
use common::*;
use gptel_scope::emacs::api;
use serde_json::{json, Value};

fn project() -> TempDir {
    let t = TempDir::new("api");
    std::fs::write(
        t.path().join("scope.yml"),
        "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat]\n",
    )
    .unwrap();
    std::fs::create_dir_all(t.path().join("out")).unwrap();
    t
}

fn req(t: &TempDir, extra: Value) -> String {
    let mut v = json!({"directory": t.path(), "sources": [{"file": t.path().join("scope.yml")}]});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

#[test]
fn check_command_result_shape() {
    let t = project();
    let v = api::check_command(&req(&t, json!({"command": "ls"}))).unwrap();
    for key in [
        "command",
        "allowed",
        "reason",
        "message",
        "base_command",
        "category",
        "required_scope",
        "warnings",
        "commands",
        "paths",
        "directory",
        "timeout",
        "max_output_chars",
        "response",
        "grants_used",
        "violations",
    ] {
        assert!(v.get(key).is_some(), "{key} missing");
    }
    assert_eq!(v["allowed"], json!(true));
    assert_eq!(v["timeout"], json!(30));
    assert_eq!(v["response"], Value::Null);
    let d = api::check_command(&req(&t, json!({"command": "cat .env"}))).unwrap();
    let r: Value = serde_json::from_str(d["response"].as_str().unwrap()).unwrap();
    assert_eq!(r["success"], json!(false));
    assert_eq!(r["reason"], json!("path_denied"));
}

#[test]
fn bad_requests_are_invalid_arguments() {
    for bad in ["not json", "{\"command\": 1}", "{\"unknown_key\": 1}"] {
        let e = api::check_command(bad).unwrap_err();
        assert_eq!(e.symbol(), "gptel-scope-invalid-argument", "{bad}");
    }
    let t = project();
    let v = api::check_command(&req(
        &t,
        json!({"command": "ls", "directory": "relative/dir"}),
    ))
    .unwrap();
    assert_eq!(v["reason"], json!("invalid_argument"));
    assert!(v["message"].as_str().unwrap().contains("must be absolute"));
    let v = api::check_command("{\"sources\": [{}], \"command\": \"ls\", \"directory\": \"/\"}")
        .unwrap();
    assert_eq!(v["reason"], json!("invalid_argument"));
    assert!(v["message"].as_str().unwrap().contains("exactly one of"));
}

#[test]
fn inline_json_source_merges_over_the_file() {
    let t = project();
    let v = api::check_command(&req(&t, json!({"command": "touch x", "sources": [{"file": t.path().join("scope.yml")}, {"inline": {"bash_tools": {"categories": {"safe_write": ["touch"]}}}, "name": "preset demo"}], "directory": t.path().join("out")}))).unwrap();
    assert_eq!(v["allowed"], json!(true), "{v}");
}

#[test]
fn check_path_read_write_deny() {
    let t = project();
    for (path, access, allowed, reason) in [
        ("scope.yml", "read", true, Value::Null),
        ("out/new.txt", "write", true, Value::Null),
        // Never written, whatever the scope says (and outside this one's write scope anyway).
        ("scope.yml", "write", false, json!("scope_document")),
        (".env", "read", false, json!("path_denied")),
        ("/etc/passwd", "read", false, json!("path_not_in_scope")),
    ] {
        let v = api::check_path(&req(&t, json!({"path": path, "access": access}))).unwrap();
        assert_eq!(v["allowed"], json!(allowed), "{path} {access}");
        assert_eq!(v["reason"], reason, "{path} {access}");
    }
    assert!(api::check_path(&req(&t, json!({"path": "x", "access": "execute"}))).is_err());
}

#[test]
fn load_scope_summary_and_errors() {
    let t = project();
    let v = api::load_scope(&req(&t, json!({}))).unwrap();
    assert_eq!(v["project_root"], json!(t.path()));
    assert_eq!(v["path_arguments"], json!("enforce"));
    assert_eq!(
        api::load_scope("{\"sources\": []}").unwrap_err().symbol(),
        "gptel-scope-no-scope-config"
    );
}

#[test]
fn check_argv_uses_tool_commands() {
    let t = project();
    let ok = api::check_argv(&req(
        &t,
        json!({"command": "cat", "args": ["-n", "scope.yml"]}),
    ))
    .unwrap();
    assert_eq!(ok["allowed"], json!(true), "{ok}");
    let v = api::check_argv(&req(&t, json!({"command": "cat", "args": ["/etc/passwd"]}))).unwrap();
    assert_eq!(v["reason"], json!("path_not_in_scope"));
    let v = api::check_argv(&req(&t, json!({"command": "rm", "args": ["x"]}))).unwrap();
    assert_eq!(v["reason"], json!("denied"));
    assert!(api::check_argv(&req(&t, json!({"command": "ls", "platform": "plan9"}))).is_err());
}

#[test]
fn list_commands_text() {
    let t = project();
    let text = api::list_commands(&req(&t, json!({}))).unwrap();
    assert!(
        text.contains("read_only (needs read scope): ls, cat"),
        "{text}"
    );
}

#[test]
fn s02_working_directory_is_validated() {
    let t = project();
    for (dir, needle) in [
        (t.path().join("missing"), "does not exist"),
        (t.path().join("scope.yml"), "not a directory"),
    ] {
        let v = api::check_command(&req(&t, json!({"command": "ls", "directory": dir}))).unwrap();
        assert_eq!(v["allowed"], json!(false));
        assert_eq!(v["reason"], json!("invalid_argument"));
        assert!(v["message"].as_str().unwrap().contains(needle), "{v}");
    }
    let v = api::check_command(&req(&t, json!({"command": "ls", "directory": "/"}))).unwrap();
    assert_eq!(v["reason"], json!("directory_not_in_scope"));
}

/// Where Add to scope would put a resource, shown before the user chooses: a command the
/// semantics know to write (in its operands or its directory) goes to safe_write even when
/// the model names it alone; a reader to read_only; a named category wins; nothing is edited.
#[test]
fn e13_add_plan_puts_writers_in_safe_write() {
    let t = project();
    let doc = t.path().join("scope.yml");
    let before = std::fs::read_to_string(&doc).unwrap();
    for (kind, resource, category, want_section, want_value) in [
        (
            "command",
            "touch",
            None,
            "bash_tools.categories.safe_write",
            "touch",
        ),
        (
            "command",
            "mkdir -p out/x",
            None,
            "bash_tools.categories.safe_write",
            "mkdir",
        ),
        (
            "command",
            "cp",
            None,
            "bash_tools.categories.safe_write",
            "cp",
        ),
        (
            "command",
            "unzip",
            None,
            "bash_tools.categories.safe_write",
            "unzip",
        ),
        (
            "command",
            "sort -o out/s in.txt",
            None,
            "bash_tools.categories.safe_write",
            "sort",
        ),
        (
            "command",
            "wc -l",
            None,
            "bash_tools.categories.read_only",
            "wc",
        ),
        (
            "command",
            "head",
            None,
            "bash_tools.categories.read_only",
            "head",
        ),
        (
            "command",
            "touch",
            Some("dangerous"),
            "bash_tools.categories.dangerous",
            "touch",
        ),
        ("path", "docs/", None, "paths.read", "docs/**"),
    ] {
        let mut r = json!({"file": doc, "validation_type": kind, "resource": resource, "tool": "run_bash_command", "base_directory": t.path()});
        if let Some(c) = category {
            r["category"] = json!(c);
        }
        let v = api::add_plan(&r.to_string()).unwrap();
        let value = v["value"].as_str().unwrap();
        assert_eq!(
            (
                v["section"].as_str().unwrap(),
                value
                    .rsplit('/')
                    .take(if kind == "path" { 2 } else { 1 })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("/")
                    .as_str()
            ),
            (want_section, want_value),
            "{resource}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&doc).unwrap(),
        before,
        "a plan edits nothing"
    );
}
