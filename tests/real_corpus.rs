//! Every command of the real agent corpus gets a decision, and none is a parse error.

mod common;
use common::*;

#[test]
fn real_corpus_every_command_parses_and_gets_a_decision() {
    let tmp = TempDir::new("real");
    let sc = scope(&format!(
        "paths: {{read: [\"{0}/**\"], write: [\"{0}/**\"]}}\nbash_tools: {{categories: {{read_only: [ls, cat, grep, find, head, tail, wc, git], safe_write: [mkdir, touch, echo]}}}}\n",
        tmp.path().display()
    ));
    let text = std::fs::read_to_string(corpus_dir().join("real-commands.jsonl")).unwrap();
    let mut parse_errors = Vec::new();
    let mut n = 0;
    let mut allowed = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let cmd = v["command"].as_str().unwrap();
        let d = decide_in(&sc, tmp.path(), Some(tmp.path()), None, &[], cmd);
        n += 1;
        if d.allowed {
            allowed += 1;
        }
        if d.reason == Some("parse_error") || d.violations.iter().any(|v| v.reason == "parse_error")
        {
            parse_errors.push(format!("{cmd}\n  -> {}", d.message));
        }
    }
    assert_eq!(n, 636);
    assert!(allowed > 0);
    assert!(
        parse_errors.is_empty(),
        "{} parse errors:\n{}",
        parse_errors.len(),
        parse_errors.join("\n")
    );
}
