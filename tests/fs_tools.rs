//! The file tools on real trees (F01-F06, F13): each call goes through the JSON entry point
//! the binding uses, with a scope.yml written into a temporary project.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

use gptel_scope::fs::tools::call;
use serde_json::{json, Value};

struct Tree {
    _tmp: tempfile::TempDir,
    /// The project (holds scope.yml), canonical.
    root: PathBuf,
    /// A directory beside the project, outside the boundary.
    outside: PathBuf,
}

const SCOPE: &str = "# project scope\npaths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/src/**\", \"${project_root}/new/**\"]\n  deny: [\"**/.env\", \"**/secret/**\"]\n";

fn tree(scope: &str) -> Tree {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let root = base.join("proj");
    let outside = base.join("outside");
    for d in [
        &root,
        &outside,
        &root.join("src/deep"),
        &root.join("docs"),
        &root.join("secret"),
    ] {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(root.join("scope.yml"), scope).expect("scope");
    fs::write(root.join("src/a.txt"), "one\ntwo\nthree\n").expect("a");
    fs::write(root.join("src/b.txt"), "alpha\nbeta\n").expect("b");
    fs::write(root.join("src/c.txt"), "x\ny\nz\n").expect("c");
    fs::write(
        root.join("src/deep/d.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .expect("d");
    fs::write(root.join("docs/readme.md"), "# Title\nsee two\n").expect("readme");
    fs::write(root.join(".env"), "TOKEN=two\n").expect("env");
    fs::write(root.join("secret/key"), "two\n").expect("key");
    fs::write(outside.join("passwd"), "root:two\n").expect("outside");
    Tree {
        _tmp: tmp,
        root,
        outside,
    }
}

impl Tree {
    fn call(&self, op: &str, args: Value) -> Value {
        let mut req = json!({"sources": [{"file": self.root.join("scope.yml")}], "home": self.root.parent().expect("parent")});
        for (k, v) in args.as_object().expect("object") {
            req[k] = v.clone();
        }
        call(op, &req.to_string())
    }
    fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| format!("<{e}>"))
    }
    /// Every file under the root, with contents: the tree as a patch leaves it.
    fn snapshot(&self) -> Vec<(String, String)> {
        fn walk(d: &Path, base: &Path, out: &mut Vec<(String, String)>) {
            let mut es: Vec<_> = fs::read_dir(d)
                .expect("read_dir")
                .filter_map(Result::ok)
                .collect();
            es.sort_by_key(|e| e.file_name());
            for e in es {
                let p = e.path();
                let rel = p.strip_prefix(base).expect("rel").display().to_string();
                if p.is_dir() {
                    out.push((format!("{rel}/"), String::new()));
                    walk(&p, base, out);
                } else {
                    out.push((rel, fs::read_to_string(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &self.root, &mut out);
        out
    }
}

fn reason(v: &Value) -> &str {
    assert_eq!(v["success"], json!(false), "expected a failure: {v}");
    v["reason"].as_str().unwrap_or("?")
}

fn ok(v: &Value) -> &Value {
    assert_eq!(v["success"], json!(true), "expected success: {v}");
    v
}

#[test]
fn f01_boundary_and_scope_table() {
    let t = tree(SCOPE);
    symlink(&t.outside, t.root.join("src/escape")).expect("symlink");
    symlink(t.outside.join("passwd"), t.root.join("docs/pw")).expect("symlink");
    symlink(t.root.join("src/a.txt"), t.root.join("docs/a-link")).expect("symlink");
    symlink(t.root.join(".env"), t.root.join("docs/env-link")).expect("symlink");
    let out = t.outside.join("passwd").display().to_string();
    for (path, want) in [
        ("src/a.txt", None),
        ("./src/../src/a.txt", None),
        ("docs/a-link", None),
        ("../outside/passwd", Some("boundary_violation")),
        ("src/../../outside/passwd", Some("boundary_violation")),
        (out.as_str(), Some("boundary_violation")),
        ("/etc/hostname", Some("boundary_violation")),
        ("src/escape/passwd", Some("boundary_violation")),
        ("docs/pw", Some("boundary_violation")),
        ("~/outside/passwd", Some("boundary_violation")),
        (".env", Some("path_denied")),
        ("docs/env-link", Some("path_denied")),
        ("secret/key", Some("path_denied")),
        ("", Some("invalid_argument")),
    ] {
        let v = t.call("read_file", json!({"path": path}));
        match want {
            None => assert_eq!(ok(&v)["content"], json!("one\ntwo\nthree"), "{path}: {v}"),
            Some(r) => assert_eq!(reason(&v), r, "{path}: {v}"),
        }
    }
    // The message says what to do; a symlink escape names where it leads.
    let v = t.call("read_file", json!({"path": "src/escape/passwd"}));
    let m = v["message"].as_str().expect("message");
    assert!(
        m.contains(&format!("it leads to {out}")) && m.contains("fs.root"),
        "{m}"
    );
}

#[test]
fn f01_unrestricted_mode_allows_absolute_paths_in_scope() {
    let t = tree(SCOPE);
    let outside = t.outside.display().to_string();
    let scope = format!("{SCOPE}  # and the neighbour\nfs: {{mode: unrestricted}}\n").replace(
        "  read: [\"${project_root}/**\"]",
        &format!("  read: [\"${{project_root}}/**\", \"{outside}/**\"]"),
    );
    fs::write(t.root.join("scope.yml"), scope).expect("scope");
    let v = t.call("read_file", json!({"path": format!("{outside}/passwd")}));
    assert_eq!(ok(&v)["content"], json!("root:two"));
    // Unrestricted is not unscoped: /etc is outside the read scope.
    let v = t.call("read_file", json!({"path": "/etc/hostname"}));
    assert_eq!(reason(&v), "path_not_in_scope");
    assert_eq!(v["resource"], json!("/etc/hostname"));
    assert!(
        v["message"]
            .as_str()
            .expect("m")
            .contains("request_scope_expansion"),
        "{v}"
    );
    // A root of its own: fs.root confines the tools below the project.
    fs::write(
        t.root.join("scope.yml"),
        format!("{SCOPE}fs: {{root: \"${{project_root}}/src\"}}\n"),
    )
    .expect("scope");
    // Relative paths now start at the new root.
    assert_eq!(
        reason(&t.call("read_file", json!({"path": t.root.join("docs/readme.md")}))),
        "boundary_violation"
    );
    assert_eq!(
        reason(&t.call("read_file", json!({"path": "../docs/readme.md"}))),
        "boundary_violation"
    );
    assert_eq!(
        ok(&t.call("read_file", json!({"path": "a.txt"})))["content"],
        json!("one\ntwo\nthree")
    );
}

#[test]
fn f01_out_of_scope_and_allow_once_grant() {
    let t = tree(&SCOPE.replace("\"${project_root}/**\"", "\"${project_root}/src/**\""));
    let v = t.call("read_file", json!({"path": "docs/readme.md"}));
    assert_eq!(reason(&v), "path_not_in_scope");
    let resource = t.root.join("docs/readme.md").display().to_string();
    assert_eq!(v["resource"], json!(resource));
    assert_eq!(v["validation_type"], json!("path"));
    let grant = json!([{"tool": "read_file", "resource": resource}]);
    let v = t.call(
        "read_file",
        json!({"path": "docs/readme.md", "grants": grant}),
    );
    assert_eq!(ok(&v)["content"], json!("# Title\nsee two"));
    assert_eq!(v["grants_used"], grant);
    // A grant for another tool does not apply.
    let v = t.call(
        "read_file",
        json!({"path": "docs/readme.md", "grants": [{"tool": "list_dir", "resource": resource}]}),
    );
    assert_eq!(reason(&v), "path_not_in_scope");
}

#[test]
fn f03_read_file_slices_cuts_and_refuses_binary() {
    let t = tree(SCOPE);
    let long = "é".repeat(450);
    let body: String = (1..=10)
        .map(|i| {
            if i == 5 {
                format!("{long}\n")
            } else {
                format!("line {i}\n")
            }
        })
        .collect();
    fs::write(t.root.join("src/long.txt"), &body).expect("long");
    let v = t.call(
        "read_file",
        json!({"path": "src/long.txt", "offset": 3, "limit": 3}),
    );
    let want = format!("line 4\n{}… [truncated line]\nline 6", "é".repeat(400));
    assert_eq!(ok(&v)["content"], json!(want));
    assert_eq!(
        (
            v["start_line"].clone(),
            v["end_line"].clone(),
            v["total_lines"].clone(),
            v["has_more"].clone(),
            v["cut_lines"].clone()
        ),
        (json!(4), json!(6), json!(10), json!(true), json!(1))
    );
    let v = t.call("read_file", json!({"path": "src/long.txt", "offset": 8}));
    assert_eq!(
        (ok(&v)["content"].clone(), v["has_more"].clone()),
        (json!("line 9\nline 10"), json!(false))
    );
    let v = t.call("read_file", json!({"path": "src/long.txt", "offset": 20}));
    assert_eq!(
        (ok(&v)["content"].clone(), v["start_line"].clone()),
        (json!(""), json!(0))
    );
    fs::write(t.root.join("src/bin"), b"ELF\x00\x01\x02").expect("bin");
    let v = t.call("read_file", json!({"path": "src/bin"}));
    assert_eq!(reason(&v), "binary_file");
    assert_eq!(
        v["message"],
        json!("src/bin is a binary file (a NUL byte at offset 3). read_file shows text only.")
    );
    for (args, r) in [
        (json!({"path": "src"}), "not_found"),
        (json!({"path": "src/nope"}), "not_found"),
        (json!({"path": "src/a.txt", "limit": 0}), "invalid_argument"),
        (
            json!({"path": "src/a.txt", "offset": -1}),
            "invalid_argument",
        ),
        (
            json!({"path": "src/a.txt", "mode": "raw"}),
            "invalid_argument",
        ),
        (json!({"offset": 1}), "invalid_argument"),
    ] {
        assert_eq!(reason(&t.call("read_file", args.clone())), r, "{args}");
    }
}

#[test]
fn f03_read_file_indentation_mode() {
    let t = tree(SCOPE);
    let v = t.call(
        "read_file",
        json!({"path": "src/deep/d.rs", "offset": 1, "mode": "indentation"}),
    );
    assert_eq!(
        ok(&v)["content"],
        json!("fn main() {\n    println!(\"hi\");\n}")
    );
    assert_eq!(
        (
            v["start_line"].clone(),
            v["end_line"].clone(),
            v["mode"].clone()
        ),
        (json!(1), json!(3), json!("indentation"))
    );
}

#[test]
fn f02_list_dir_breadth_first_sorted_with_markers() {
    let t = tree(SCOPE);
    let exe = t.root.join("src/run.sh");
    fs::write(&exe, "#!/bin/sh\n").expect("exe");
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).expect("chmod");
    symlink(&t.outside, t.root.join("src/escape")).expect("symlink");
    let v = t.call("list_dir", json!({"path": "."}));
    // .env and secret/ are denied: left out and counted.
    assert_eq!(
        ok(&v)["content"],
        json!("docs/\nscope.yml\nsrc/\ndocs/readme.md\nsrc/a.txt\nsrc/b.txt\nsrc/c.txt\nsrc/deep/\nsrc/escape@\nsrc/run.sh*")
    );
    assert_eq!(
        (
            v["total"].clone(),
            v["hidden"].clone(),
            v["has_more"].clone()
        ),
        (json!(10), json!(2), json!(false))
    );
    let v = t.call(
        "list_dir",
        json!({"path": "src", "depth": 1, "offset": 1, "limit": 2}),
    );
    assert_eq!(ok(&v)["content"], json!("b.txt\nc.txt"));
    assert_eq!(
        (v["total"].clone(), v["has_more"].clone()),
        (json!(6), json!(true))
    );
    let v = t.call("list_dir", json!({"path": "src", "depth": 3}));
    assert!(
        ok(&v)["content"]
            .as_str()
            .expect("c")
            .ends_with("deep/d.rs"),
        "{v}"
    );
    assert_eq!(
        reason(&t.call("list_dir", json!({"path": "src/escape"}))),
        "boundary_violation"
    );
    assert_eq!(
        reason(&t.call("list_dir", json!({"path": "src/a.txt"}))),
        "not_found"
    );
    assert_eq!(
        reason(&t.call("list_dir", json!({"path": "src", "depth": 0}))),
        "invalid_argument"
    );
}

#[test]
fn f04_grep_files_matches_limits_and_skips_denied() {
    let t = tree(SCOPE);
    fs::write(t.root.join(".gitignore"), "docs/ignored.txt\n").expect("gitignore");
    fs::write(t.root.join("docs/ignored.txt"), "two\n").expect("ignored");
    fs::write(t.root.join("src/bin"), b"two\x00").expect("bin");
    let v = t.call("grep_files", json!({"pattern": "tw|thr", "path": "."}));
    // .env and secret/key hold "two" but are denied; the binary and ignored files are skipped.
    assert_eq!(
        ok(&v)["content"],
        json!("docs/readme.md:2:see two\nsrc/a.txt:2:two\nsrc/a.txt:3:three"),
        "{v}"
    );
    assert_eq!(
        (v["matches"].clone(), v["truncated"].clone()),
        (json!(3), json!(false))
    );
    // Skipped and counted: secret/key (denied) and src/bin (binary); .env is hidden, as in ripgrep.
    assert_eq!(
        (v["files_skipped"].clone(), v["files_searched"].clone()),
        (json!(2), json!(6)),
        "{v}"
    );
    let v = t.call("grep_files", json!({"pattern": "tw|thr", "limit": 2}));
    assert_eq!(
        (ok(&v)["matches"].clone(), v["truncated"].clone()),
        (json!(2), json!(true))
    );
    let v = t.call(
        "grep_files",
        json!({"pattern": "^(one|x)$", "path": "src", "include": "*.txt"}),
    );
    assert_eq!(ok(&v)["content"], json!("a.txt:1:one\nc.txt:1:x"));
    let v = t.call(
        "grep_files",
        json!({"pattern": "println", "include": ["*.md", "deep/*.rs"], "path": "src"}),
    );
    assert_eq!(
        ok(&v)["content"],
        json!("deep/d.rs:2:    println!(\"hi\");")
    );
    let v = t.call("grep_files", json!({"pattern": "two", "path": "src/a.txt"}));
    assert_eq!(ok(&v)["content"], json!("a.txt:2:two"));
    assert_eq!(
        reason(&t.call("grep_files", json!({"pattern": "(unclosed"}))),
        "invalid_argument"
    );
    assert_eq!(
        reason(&t.call(
            "grep_files",
            json!({"pattern": "two", "path": "../outside"})
        )),
        "boundary_violation"
    );
    assert_eq!(
        reason(&t.call("grep_files", json!({"pattern": "two", "path": "secret"}))),
        "path_denied"
    );
}

#[test]
fn f05_unified_diff_applies_strictly_with_stats() {
    let t = tree(SCOPE);
    let patch = "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- /dev/null\n+++ b/new/n.txt\n@@ -0,0 +1,2 @@\n+fresh\n+file\n--- a/src/c.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-x\n-y\n-z\n";
    let v = t.call("apply_patch", json!({"patch": patch}));
    ok(&v);
    assert_eq!(t.read("src/a.txt"), "one\nTWO\nthree\n");
    assert_eq!(t.read("new/n.txt"), "fresh\nfile\n");
    assert!(!t.root.join("src/c.txt").exists());
    let stats: Vec<_> = v["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["action"].clone(),
                f["added"].clone(),
                f["removed"].clone(),
                f["bytes"].clone(),
            )
        })
        .collect();
    assert_eq!(
        stats,
        vec![
            (json!("update"), json!(1), json!(1), json!(14)),
            (json!("add"), json!(2), json!(0), json!(11)),
            (json!("delete"), json!(0), json!(3), json!(0))
        ]
    );
    assert_eq!(v["message"], json!("Applied to 3 file(s): update src/a.txt (+1 -1), add new/n.txt (+2 -0), delete src/c.txt (+0 -3)"));
    // Strict: the same hunk one line off does not apply (no offset, no fuzz).
    let before = t.snapshot();
    let off = "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -2,2 +2,2 @@\n one\n-TWO\n+2\n";
    let v = t.call("apply_patch", json!({"patch": off}));
    assert_eq!(reason(&v), "patch_apply_error");
    assert!(
        v["message"]
            .as_str()
            .expect("m")
            .contains("does not match at line 2"),
        "{v}"
    );
    assert_eq!(t.snapshot(), before);
}

#[test]
fn f05_patch_failing_on_third_file_leaves_first_two_untouched() {
    let t = tree(SCOPE);
    let good = "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n--- a/src/b.txt\n+++ b/src/b.txt\n@@ -2 +2 @@\n-beta\n+BETA\n";
    // The third file fails in four ways: a hunk that does not match, a target outside the
    // write scope, one outside the boundary, and one that cannot be written (its parent is a file).
    let long = "n".repeat(300);
    for (third, want) in [
        (
            "--- a/src/c.txt\n+++ b/src/c.txt\n@@ -1 +1 @@\n-nope\n+NOPE\n",
            "patch_apply_error",
        ),
        (
            "--- a/docs/readme.md\n+++ b/docs/readme.md\n@@ -1 +1 @@\n-# Title\n+# T\n",
            "path_not_in_scope",
        ),
        (
            "--- /dev/null\n+++ b/../outside/x\n@@ -0,0 +1 @@\n+x\n",
            "boundary_violation",
        ),
        (
            "--- /dev/null\n+++ b/src/a.txt/x\n@@ -0,0 +1 @@\n+x\n",
            "patch_apply_error",
        ),
        // Found by the patch fuzz target: directories made before a name that is too long
        // must go again.
        (
            "--- /dev/null\n+++ b/src/new/deeper/LONG/x\n@@ -0,0 +1 @@\n+x\n",
            "patch_apply_error",
        ),
    ] {
        let third = third.replace("LONG", &long);
        let before = t.snapshot();
        let v = t.call("apply_patch", json!({"patch": format!("{good}{third}")}));
        assert_eq!(reason(&v), want, "{third}: {v}");
        assert_eq!(t.snapshot(), before, "{third}");
        assert_eq!(t.read("src/a.txt"), "one\ntwo\nthree\n");
    }
}

#[test]
fn f06_envelope_add_update_move_delete() {
    let t = tree(SCOPE);
    let patch = "*** Begin Patch\n*** Add File: src/new.txt\n+hello\n*** Update File: src/a.txt\n@@\n one\n-two\n+2\n*** Update File: src/b.txt\n*** Move to: src/b2.txt\n@@ alpha\n-beta\n+BETA\n*** End of File\n*** Delete File: src/c.txt\n*** End Patch\n";
    let v = t.call("apply_patch", json!({"patch": patch}));
    assert_eq!(ok(&v)["format"], json!("envelope"));
    assert_eq!(t.read("src/new.txt"), "hello\n");
    assert_eq!(t.read("src/a.txt"), "one\n2\nthree\n");
    assert_eq!(t.read("src/b2.txt"), "alpha\nBETA\n");
    assert!(!t.root.join("src/b.txt").exists() && !t.root.join("src/c.txt").exists());
    assert_eq!(v["files"][2]["action"], json!("move"));
    // Context that matches twice is refused, not guessed.
    fs::write(t.root.join("src/dup.txt"), "a\nb\na\nb\n").expect("dup");
    let v = t.call("apply_patch", json!({"patch": "*** Begin Patch\n*** Update File: src/dup.txt\n a\n-b\n+B\n*** End Patch"}));
    assert_eq!(reason(&v), "patch_apply_error");
    assert!(
        v["message"]
            .as_str()
            .expect("m")
            .contains("matches at lines 1 and 3"),
        "{v}"
    );
    assert_eq!(t.read("src/dup.txt"), "a\nb\na\nb\n");
}

#[test]
fn f05_add_refuses_existing_and_keeps_modes() {
    let t = tree(SCOPE);
    let exe = t.root.join("src/run.sh");
    fs::write(&exe, "#!/bin/sh\necho a\n").expect("exe");
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o750)).expect("chmod");
    ok(&t.call(
        "apply_patch",
        json!({"patch": "--- a/src/run.sh\n+++ b/src/run.sh\n@@ -2 +2 @@\n-echo a\n+echo b\n"}),
    ));
    assert_eq!(
        fs::metadata(&exe).expect("meta").permissions().mode() & 0o777,
        0o750
    );
    let v = t.call(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: src/a.txt\n+x\n*** End Patch"}),
    );
    assert_eq!(reason(&v), "patch_apply_error");
    assert!(
        v["message"].as_str().expect("m").contains("already exists"),
        "{v}"
    );
    // No temporary files are left behind by any of the above.
    assert!(
        t.snapshot().iter().all(|(p, _)| !p.contains(".tmp")),
        "{:?}",
        t.snapshot()
    );
}

#[test]
fn f13_distinct_error_kinds() {
    let t = tree(SCOPE);
    for (op, args, want) in [
        (
            "apply_patch",
            json!({"patch": "garbage"}),
            "patch_parse_error",
        ),
        (
            "apply_patch",
            json!({"patch": "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -1 +1 @@\n-zzz\n+y\n"}),
            "patch_apply_error",
        ),
        ("apply_patch", json!({}), "invalid_argument"),
        // Found by the patch fuzz target: an insertion after a line past the end (it panicked).
        (
            "apply_patch",
            json!({"patch": "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -4,0 +5 @@\n+z\n"}),
            "patch_apply_error",
        ),
        (
            "read_file",
            json!({"path": "../outside/passwd"}),
            "boundary_violation",
        ),
        (
            "read_file",
            json!({"path": "src/a.txt", "bogus": 1}),
            "invalid_argument",
        ),
        ("frobnicate", json!({}), "invalid_argument"),
    ] {
        assert_eq!(reason(&t.call(op, args.clone())), want, "{op} {args}");
    }
    fs::write(t.root.join("scope.yml"), "paths: {reed: []}\n").expect("bad scope");
    let v = t.call("read_file", json!({"path": "src/a.txt"}));
    assert_eq!(reason(&v), "invalid_config");
    assert_eq!(v["config_error"]["line"], json!(1));
}

/// grep_files finds the lines ripgrep finds (same files, same line numbers), scope aside:
/// .gitignore honoured outside a git repository, hidden files skipped, a NUL byte anywhere in
/// a file's first 64 KiB hides the whole file, `\r\n` endings (`$` matches before them, as
/// with ripgrep's `--crlf`, and as grep_files always did), nested directories. Skipped
/// (saying so) where ripgrep is not installed.
#[test]
fn f04_grep_files_finds_what_ripgrep_finds() {
    if std::process::Command::new("rg")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("ripgrep is not installed: skipped");
        return;
    }
    let t = tree(SCOPE);
    fs::write(t.root.join(".gitignore"), "docs/ignored.txt\n*.log\n").expect("gitignore");
    fs::write(t.root.join("docs/ignored.txt"), "two\n").expect("ignored");
    fs::write(t.root.join("src/x.log"), "two\n").expect("log");
    fs::write(t.root.join("src/bin"), b"two\x00").expect("bin");
    let mut late = b"two\n".to_vec();
    late.extend(std::iter::repeat_n(b'a', 10_000));
    late.extend(b"\n\x00two\n");
    fs::write(t.root.join("src/late"), late).expect("late");
    fs::write(t.root.join("src/crlf.txt"), "one two\r\nthree\r\ntwo\r\n").expect("crlf");
    fs::create_dir_all(t.root.join("src/deep/er")).expect("mkdir");
    fs::write(t.root.join("src/deep/er/z.txt"), "two two\nno\ntwo$\n").expect("z");
    for pattern in ["two", "^two$", "t.o", "(?i)TWO", r"two\$"] {
        let v = t.call(
            "grep_files",
            json!({"pattern": pattern, "path": ".", "limit": 2000}),
        );
        let mut got: Vec<String> = ok(&v)["content"]
            .as_str()
            .expect("content")
            .lines()
            .map(|l| l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":"))
            .collect();
        let out = std::process::Command::new("rg")
            .args([
                "-n",
                "--crlf",
                "--no-require-git",
                "--no-ignore-parent",
                "--no-config",
                "-g",
                "!secret",
                "-e",
                pattern,
            ])
            .current_dir(&t.root)
            .output()
            .expect("rg");
        let mut want: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.splitn(3, ':').take(2).collect::<Vec<_>>().join(":"))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{pattern}");
    }
}

/// read_file reads only what it returns: the first lines of a 64 GiB sparse file (bigger than
/// memory would allow to read at once) come back at once, with `has_more`, `next_offset` and
/// no total (the file is over the size counted whole); an indentation block near its start too.
#[test]
fn f03_read_file_reads_only_what_it_returns() {
    let t = tree(SCOPE);
    let p = t.root.join("src/huge.log");
    {
        let f = fs::File::create(&p).expect("create");
        use std::io::Write;
        let mut w = std::io::BufWriter::new(&f);
        for i in 0..1000 {
            writeln!(w, "line {i}").expect("write");
        }
        writeln!(w, "fn main() {{\n    body();\n}}").expect("write");
        drop(w);
        f.set_len(64 << 30).expect("sparse");
    }
    let v = t.call(
        "read_file",
        json!({"path": "src/huge.log", "offset": 10, "limit": 3}),
    );
    assert_eq!(ok(&v)["content"], json!("line 10\nline 11\nline 12"), "{v}");
    assert_eq!(
        (
            v["has_more"].clone(),
            v["next_offset"].clone(),
            v["total_lines"].clone()
        ),
        (json!(true), json!(13), Value::Null)
    );
    let v = t.call(
        "read_file",
        json!({"path": "src/huge.log", "offset": 1001, "mode": "indentation"}),
    );
    assert_eq!(
        ok(&v)["content"],
        json!("fn main() {\n    body();\n}"),
        "{v}"
    );
    assert_eq!(
        (
            v["start_line"].clone(),
            v["end_line"].clone(),
            v["has_more"].clone()
        ),
        (json!(1001), json!(1003), json!(true))
    );
}

/// A file tool's outcome, as Emacs takes it: the result but its content, the model's JSON
/// whole in `response`, and what telling the user and asking at a failure take.
#[test]
fn outcome_keeps_the_result_but_its_content_and_says_what_asking_takes() {
    use gptel_scope::fs::tools::outcome;
    let t = tree(SCOPE);
    struct Case {
        op: &'static str,
        access: Option<&'static str>,
        args: Value,
        allowed: bool,
        grantable: bool,
        required: &'static str,
        command: Value,
        lines: Value,
    }
    let cases = [
        Case {
            op: "read_file",
            access: None,
            args: json!({"path": "src/a.txt"}),
            allowed: true,
            grantable: false,
            required: "read",
            command: json!("src/a.txt"),
            lines: json!(3),
        },
        Case {
            op: "read_file",
            access: None,
            args: json!({"path": "../outside/passwd"}),
            allowed: false,
            grantable: false,
            required: "read",
            command: json!("../outside/passwd"),
            lines: Value::Null,
        },
        Case {
            op: "check_path",
            access: Some("write"),
            args: json!({"path": "docs/readme.md", "access": "write"}),
            allowed: false,
            grantable: true,
            required: "write",
            command: json!("docs/readme.md"),
            lines: Value::Null,
        },
        Case {
            op: "apply_patch",
            access: None,
            args: json!({"patch": "not a patch"}),
            allowed: false,
            grantable: false,
            required: "write",
            command: Value::Null,
            lines: Value::Null,
        },
    ];
    for Case {
        op,
        access,
        args,
        allowed,
        grantable,
        required,
        command,
        lines,
    } in &cases
    {
        let result = t.call(op, args.clone());
        let o = outcome(op, *access, result.clone());
        assert_eq!(o["allowed"], json!(allowed), "{op} {args}: {o}");
        assert_eq!(o["grantable"], json!(grantable), "{op} {args}: {o}");
        assert_eq!(o["askable"], json!(!allowed), "{op} {args}: {o}");
        assert_eq!(o["required_scope"], json!(required), "{op} {args}: {o}");
        assert_eq!(&o["command"], command, "{op} {args}: {o}");
        assert_eq!(&o["lines"], lines, "{op} {args}: {o}");
        // The model is sent the result itself, content and all; Emacs gets the rest.
        assert_eq!(o["response"], json!(result.to_string()), "{op} {args}");
        assert!(o.get("content").is_none(), "{op} {args}: {o}");
        for (k, v) in result.as_object().expect("object") {
            if k != "content" {
                assert_eq!(&o[k], v, "{op} {args}: {k}");
            }
        }
    }
}
