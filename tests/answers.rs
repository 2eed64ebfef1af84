//! What the model is answered stays small whatever it sent: a refused command, resource, path
//! or directory is echoed at most once, and cut to its first characters with a count of the
//! rest; the decision keeps them whole.

mod common;
use common::*;
use gptel_scope::emacs::api;
use serde_json::{json, Value};

fn project() -> TempDir {
    let t = TempDir::new("answers");
    std::fs::write(
        t.path().join("scope.yml"),
        "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, echo]\n    dangerous: [rm]\n",
    )
    .unwrap();
    std::fs::create_dir_all(t.path().join("out")).unwrap();
    t
}

/// The answer's bound: the message apart, a refusal's answer is under this many bytes.
const BOUND: usize = 4096;

/// `s` as the answer echoes it: its first 200 characters and the count of the rest.
fn cut(s: &str) -> String {
    let n = s.chars().count();
    if n <= 200 {
        return s.to_string();
    }
    format!(
        "{}… ({} more characters)",
        s.chars().take(200).collect::<String>(),
        n - 200
    )
}

fn answer(v: &Value) -> Value {
    serde_json::from_str(v["response"].as_str().expect("a refusal's answer")).expect("JSON")
}

/// Every kind of refusal of a huge command, by both ways of judging it: the answer is
/// bounded, its command cut, its resource cut or said to be the command, the message's
/// echoes cut; the decision keeps the command whole.
#[test]
fn a_refusal_of_a_huge_command_answers_in_brief() {
    let t = project();
    let big = "A".repeat(1_000_000);
    let mid = "A".repeat(5_000);
    let words = "a ".repeat(20_000).trim_end().to_string();
    // (command, reason, the answer's resource: None when it is the command)
    let cases: Vec<(String, &str, Option<String>)> = vec![
        (format!("rm {big}"), "parse_error", None),
        (format!("rm {mid}"), "dangerous_command", None),
        (format!("rm {words}"), "dangerous_command", None),
        (
            format!("cat /etc/{mid}"),
            "path_not_in_scope",
            Some(cut(&format!("/etc/{mid}"))),
        ),
        (
            format!("frob {mid}"),
            "command_not_allowed",
            Some("frob".into()),
        ),
        (
            format!("ls; rm x; {mid}"),
            "dangerous_command",
            Some("rm x".into()),
        ),
    ];
    for (command, reason, resource) in &cases {
        let req = json!({"command": command, "directory": t.path(), "sources": [{"file": t.path().join("scope.yml")}]}).to_string();
        let full = api::check_command(&req).unwrap();
        assert_eq!(full["reason"], json!(reason), "{}", &command[..20]);
        assert!(
            full["command"] == json!(command),
            "{}: the decision keeps it whole, not {:.300}",
            &command[..20],
            full["command"]
        );
        let a = answer(&full);
        let message = a["message"].as_str().unwrap();
        assert!(
            message.chars().count() <= 2000 + 40,
            "{}: message of {}",
            &command[..20],
            message.len()
        );
        let text = full["response"].as_str().unwrap();
        assert!(
            text.len() - message.len() < BOUND,
            "{}: {} bytes",
            &command[..20],
            text.len()
        );
        assert!(
            a["command"] == json!(cut(command)),
            "{}: command {:.300}",
            &command[..20],
            a["command"]
        );
        let expected = resource.as_ref().map_or(Value::Null, |r| json!(r));
        assert!(
            a["resource"] == expected,
            "{}: resource {:.300}",
            &command[..20],
            a["resource"]
        );
        assert_eq!(
            a["resource_is_command"],
            if resource.is_none() {
                json!(true)
            } else {
                Value::Null
            }
        );
        assert!(
            !message.contains(&"A".repeat(201)),
            "{}: the message echoes it",
            &command[..20]
        );
        match api::decide_command(&req).unwrap() {
            api::Judged::Refused { decision } => assert!(
                api::refusal_response(&decision) == text,
                "{}",
                &command[..20]
            ),
            api::Judged::Full(v) => {
                assert!(v["response"] == full["response"], "{}", &command[..20])
            }
            api::Judged::Allowed { .. } => panic!("allowed"),
        }
    }
}

/// run_command and a path's check: the same bounds.
#[test]
fn a_refused_argv_or_path_answers_in_brief() {
    let t = project();
    let mid = "A".repeat(5_000);
    let sources = json!([{"file": t.path().join("scope.yml")}]);
    let argv = api::check_argv(
        &json!({"command": "rm", "args": [mid], "directory": t.path(), "sources": sources})
            .to_string(),
    )
    .unwrap();
    let path = format!("/etc/{mid}");
    let checked = api::check_path(
        &json!({"path": path, "directory": t.path(), "sources": sources}).to_string(),
    )
    .unwrap();
    let rm = format!("rm {mid}");
    for (v, command) in [(&argv, rm.as_str()), (&checked, path.as_str())] {
        let text = v["response"].as_str().unwrap();
        let a = answer(v);
        assert!(text.len() < BOUND + 2000, "{} bytes", text.len());
        assert!(a["command"] == json!(cut(command)), "{:.300}", a["command"]);
        assert!(!text.contains(&"A".repeat(201)), "{text:.300}");
    }
    assert_eq!(
        answer(&checked)["path"],
        Value::Null,
        "the path is the command: once"
    );
    assert_eq!(
        answer(&checked)["resource"],
        Value::Null,
        "the resource is the command: once"
    );
    assert_eq!(answer(&checked)["resource_is_command"], json!(true));
}

/// A short refusal is answered as it was: nothing cut.
#[test]
fn a_short_refusal_is_whole() {
    let t = project();
    let req = json!({"command": "rm -rf out", "directory": t.path(), "sources": [{"file": t.path().join("scope.yml")}]}).to_string();
    let a = answer(&api::check_command(&req).unwrap());
    assert_eq!(a["command"], json!("rm -rf out"));
    assert_eq!(a["resource"], json!("rm -rf out"));
    assert_eq!(a["resource_is_command"], Value::Null);
}
