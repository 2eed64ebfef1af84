//! Arbitrary patch text through the patch parser and, when it parses, through apply_patch on
//! a scratch project. Fails on a panic, on a parse slower than 100 ms, and on a broken
//! invariant of apply: a patch that fails leaves every file as it was (all or nothing), and
//! nothing is ever written outside the project (its neighbour directory stays untouched).
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;

struct Scratch {
    root: PathBuf,
    outside: PathBuf,
}

fn scratch() -> &'static Scratch {
    static S: OnceLock<Scratch> = OnceLock::new();
    S.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("gptel-scope-fuzz-patch-{}", std::process::id()));
        let root = base.join("proj");
        let outside = base.join("outside");
        std::fs::create_dir_all(root.join("src")).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        let base = std::fs::canonicalize(&base).expect("canonical");
        Scratch { root: base.join("proj"), outside: base.join("outside") }
    })
}

fn reset(s: &Scratch) {
    let _ = std::fs::remove_dir_all(&s.root);
    std::fs::create_dir_all(s.root.join("src")).expect("mkdir");
    std::fs::write(s.root.join("scope.yml"), "paths: {read: [\"${project_root}/**\"], write: [\"${project_root}/src/**\"]}\n").expect("scope");
    for (name, text) in [("src/a", "a\nb\nc\n"), ("src/x", "x\n"), ("README", "read me\n")] {
        std::fs::write(s.root.join(name), text).expect("file");
    }
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push((p.clone(), Vec::new()));
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let t = Instant::now();
    let parsed = gptel_scope::fs::patch::parse(text);
    assert!(t.elapsed() < Duration::from_millis(100), "parse took {:?}", t.elapsed());
    if parsed.is_err() {
        return;
    }
    let s = scratch();
    reset(s);
    let before = snapshot(&s.root);
    let outside_before = snapshot(&s.outside);
    let req = serde_json::json!({"sources": [{"file": s.root.join("scope.yml")}], "patch": text}).to_string();
    let v = gptel_scope::fs::tools::call("apply_patch", &req);
    if v["success"] != serde_json::Value::Bool(true) {
        assert_eq!(snapshot(&s.root), before, "a failed patch changed the tree: {v}");
    }
    assert_eq!(snapshot(&s.outside), outside_before, "a patch wrote outside the project: {v}");
});
