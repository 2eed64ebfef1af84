//! The sandbox of one call, derived from that call's decision: what an allow-once grant let it
//! reach is shown for it (writes through the directory that holds them, since creating,
//! renaming or removing an entry writes its directory), and nothing else is; git's rules in
//! the repository it runs in are bound read-only over a writable work tree.

mod common;
use common::TempDir;

use gptel_scope::emacs::api;
use gptel_scope::policy::sandbox::{self, CallNeeds};
use serde_json::{json, Value};

/// The scope of the rows: the project readable; `out/` writable; `.env` denied.
const SCOPE: &str = "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, \"git status\"]\n    safe_write: [touch, mkdir, make, \"git commit\"]\n    dangerous: [rm]\n";

/// A project: its scope, `out/`, `src/a.txt`, a repository with hooks and configuration
/// naming a hooks directory in the work tree (`core.hooksPath`).
fn project() -> TempDir {
    let t = TempDir::new("sandbox-calls");
    let p = t.path();
    std::fs::write(p.join("scope.yml"), SCOPE).unwrap();
    for d in [
        "out",
        "src",
        ".git/hooks",
        ".git/info",
        ".git/objects/info",
        ".git/refs",
    ] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::write(p.join("src/a.txt"), "a\n").unwrap();
    std::fs::write(
        p.join(".git/config"),
        "[core]\n\tbare = false\n\thooksPath = .githooks\n",
    )
    .unwrap();
    std::fs::create_dir_all(p.join(".githooks")).unwrap();
    std::fs::write(p.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    t
}

/// The decision on `command` run in `dir` (relative to the project) with `grants`
/// (resources relative to the project when they start with `./`).
fn decide(p: &std::path::Path, command: &str, dir: &str, grants: &[&str]) -> Value {
    let root = p.display().to_string();
    let grants: Vec<Value> = grants.iter().map(|g| json!({"tool": "run_bash_command", "resource": g.replace("./", &format!("{root}/"))})).collect();
    let req = json!({"command": command, "directory": p.join(dir), "sources": [{"file": p.join("scope.yml")}],
                     "grants": grants, "home": "/home/nobody"});
    api::check_command(&req.to_string()).unwrap()
}

fn rel(p: &std::path::Path, v: &Value) -> Vec<String> {
    let root = format!("{}", p.display());
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().replace(&root, "ROOT"))
        .collect()
}

/// Rows: name, command, directory, grants, allowed, the paths it writes, the directories it
/// writes in by a grant, what a grant let it read, its programs.
#[test]
fn a_calls_needs_come_from_its_decision() {
    type Row<'a> = (
        &'a str,
        &'a str,
        &'a str,
        &'a [&'a str],
        bool,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
    );
    #[rustfmt::skip]
    let rows: &[Row] = &[
        ("in scope: the path it writes", "touch y", "out", &[], true, &["ROOT/out/y"], &[], &[], &["touch"]),
        ("refused: no needs", "touch new.txt", ".", &[], false, &[], &[], &[], &[]),
        ("Allow once of a write in the directory: the path, and the directory it writes in",
         "touch new.txt", ".", &["./"], true, &["ROOT/new.txt"], &["ROOT"], &[], &["touch"]),
        ("a write in a directory below",
         "touch b.txt", "src", &["./src"], true, &["ROOT/src/b.txt"], &["ROOT/src"], &[], &["touch"]),
        ("paths that do not exist yet",
         "mkdir -p x/y && touch x/y/z", "src", &["./src"], true, &["ROOT/src/x/y", "ROOT/src/x/y/z"], &["ROOT/src"], &[], &["mkdir", "touch"]),
        ("a dangerous command allowed once: what it removes",
         "rm x", "out", &["rm x"], true, &["ROOT/out/x"], &[], &[], &["rm"]),
        ("an unlisted command allowed once: still judged for what it writes",
         "cp a.txt b.txt", "src", &["cp"], false, &[], &[], &[], &[]),
        ("... and run once the place is allowed too",
         "cp a.txt b.txt", "src", &["cp", "./src"], true, &["ROOT/src/b.txt"], &[], &[], &["cp"]),
        ("an unlisted command allowed once that writes nothing: nothing more",
         "wc -l a.txt", "src", &["wc"], true, &[], &[], &[], &["wc"]),
        ("a read outside the read scope",
         "cat /etc/hostname", ".", &["/etc/hostname"], true, &[], &[], &["/etc/hostname"], &["cat"]),
    ];
    for (name, command, dir, grants, allowed, write, write_in, read, programs) in rows {
        let p = project();
        std::fs::write(p.path().join("out/x"), "").unwrap();
        let d = decide(p.path(), command, dir, grants);
        assert_eq!(d["allowed"], json!(allowed), "{name}: {}", d["message"]);
        let n = &d["sandbox"];
        assert_eq!(rel(p.path(), &n["write"]), *write, "{name}: write");
        assert_eq!(rel(p.path(), &n["write_in"]), *write_in, "{name}: write_in");
        assert_eq!(rel(p.path(), &n["read"]), *read, "{name}: read");
        assert_eq!(rel(p.path(), &n["programs"]), *programs, "{name}: programs");
    }
}

/// The mounts of a call: its writes writable for it alone; git's configuration, hooks and
/// info bound read-only over the writable work tree; the rest as the scope says.
#[test]
fn the_mounts_of_a_call() {
    let p = project();
    let root = p.path().display().to_string();
    let mounts = |call: Option<CallNeeds>| -> Value {
        let mut req = json!({"sources": [{"file": p.path().join("scope.yml")}], "home": "/home/nobody",
                             "directory": root, "env": ["PATH=/usr/bin:/bin"]});
        if let Some(c) = call {
            req["call"] = serde_json::to_value(c).unwrap();
        }
        sandbox::mounts_for_request(&req.to_string()).unwrap()
    };
    // Without a call: the scope's directories; the repository is read-only already.
    let m = mounts(None);
    assert_eq!(rel(p.path(), &m["write"]), ["ROOT/out"]);
    assert_eq!(rel(p.path(), &m["protect"]), Vec::<String>::new());
    // A write in scope adds nothing; one outside, the directory that holds it, for this
    // call; a path that does not exist yet, the nearest directory that does.
    let call = |write: &[&str], write_in: &[&str]| CallNeeds {
        write: write.iter().map(|w| w.replace("ROOT", &root)).collect(),
        write_in: write_in.iter().map(|w| w.replace("ROOT", &root)).collect(),
        read: vec![],
        programs: vec!["git".into()],
    };
    assert_eq!(
        rel(
            p.path(),
            &mounts(Some(call(&["ROOT/out/new"], &[])))["write"]
        ),
        ["ROOT/out"]
    );
    assert_eq!(
        rel(
            p.path(),
            &mounts(Some(call(&["ROOT/src/a.txt"], &[])))["write"]
        ),
        ["ROOT/out", "ROOT/src"]
    );
    assert_eq!(
        rel(
            p.path(),
            &mounts(Some(call(&["ROOT/src/x/y/z"], &[])))["write"]
        ),
        ["ROOT/out", "ROOT/src"]
    );
    // A grant to write in the project: the project writable for the call, and git's rules
    // (and the scope document) bound read-only over it.
    let m = mounts(Some(call(&[], &["ROOT"])));
    assert_eq!(rel(p.path(), &m["write"]), ["ROOT"]);
    assert_eq!(rel(p.path(), &m["read"]), Vec::<String>::new());
    assert_eq!(
        rel(p.path(), &m["protect"]),
        [
            "ROOT/.git/config",
            "ROOT/.git/hooks",
            "ROOT/.git/info",
            "ROOT/.git/objects/info",
            "ROOT/.githooks",
            "ROOT/scope.yml"
        ]
    );
}

/// A linked work tree or a submodule: `.git` is a file naming the git directory; the file
/// and the rules of that directory and of the common one are protected.
#[test]
fn git_rules_of_a_gitfile() {
    let t = TempDir::new("sandbox-gitfile");
    let p = t.path();
    std::fs::create_dir_all(p.join("main/.git/worktrees/w/")).unwrap();
    std::fs::create_dir_all(p.join("main/.git/hooks")).unwrap();
    std::fs::write(p.join("main/.git/config"), "").unwrap();
    std::fs::write(p.join("main/.git/worktrees/w/commondir"), "../..\n").unwrap();
    std::fs::write(p.join("main/.git/worktrees/w/config.worktree"), "").unwrap();
    std::fs::create_dir_all(p.join("w/src")).unwrap();
    std::fs::write(
        p.join("w/.git"),
        format!("gitdir: {}/main/.git/worktrees/w\n", p.display()),
    )
    .unwrap();
    let got: Vec<String> = sandbox::git_protected(&p.join("w/src"), None)
        .iter()
        .map(|q| {
            q.display()
                .to_string()
                .replace(&p.display().to_string(), "T")
        })
        .collect();
    assert_eq!(
        got,
        [
            "T/main/.git/config",
            "T/main/.git/hooks",
            "T/main/.git/worktrees/w/commondir",
            "T/main/.git/worktrees/w/config.worktree",
            "T/w/.git"
        ]
    );
    // Outside any repository: nothing.
    assert!(sandbox::git_protected(Path::new("/"), None).is_empty());
}

use std::path::Path;

/// A terminal session has no call judged yet: the toolchains of every program the scope
/// lists are shown, read-only; a call shows those of its own programs only.
#[test]
fn toolchains_of_a_session_and_of_a_call() {
    let t = TempDir::new("sandbox-toolchains");
    let p = t.path();
    let home = p.join("home");
    std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
    std::fs::create_dir_all(home.join(".rustup/toolchains/stable/bin")).unwrap();
    let rustup = home.join(".cargo/bin/rustup");
    std::fs::write(&rustup, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&rustup, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("rustup", home.join(".cargo/bin/cargo")).unwrap();
    std::fs::write(home.join(".cargo/credentials.toml"), "token = \"x\"\n").unwrap();
    std::fs::create_dir_all(p.join("proj")).unwrap();
    std::fs::write(p.join("proj/scope.yml"), "paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, \"cargo build\"]\n").unwrap();
    let mounts = |call: Option<Value>| -> Value {
        let mut req = json!({"sources": [{"file": p.join("proj/scope.yml")}], "home": home, "directory": p.join("proj"),
                             "env": [format!("PATH={}/.cargo/bin:/usr/bin:/bin", home.display())]});
        if let Some(c) = call {
            req["call"] = c;
        }
        sandbox::mounts_for_request(&req.to_string()).unwrap()
    };
    let h = home.display().to_string();
    let session = mounts(None);
    assert_eq!(
        session["tools"],
        json!([format!("{h}/.cargo"), format!("{h}/.rustup")])
    );
    assert_eq!(
        session["hide"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x.as_str().unwrap().starts_with(&h))
            .count(),
        4,
        "{}",
        session["hide"]
    );
    assert!(session["hide"]
        .as_array()
        .unwrap()
        .contains(&json!(format!("{h}/.cargo/credentials.toml"))));
    assert_eq!(
        mounts(Some(json!({"programs": ["cargo"]})))["tools"],
        session["tools"]
    );
    assert_eq!(
        mounts(Some(json!({"programs": ["ls"]})))["tools"],
        json!([])
    );
}
