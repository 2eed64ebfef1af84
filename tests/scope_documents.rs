//! The scope protects itself (issue 21): no tool writes a scope document, whatever the scope
//! says, and a document applies only with the content the user approved. Each case goes
//! through the JSON entry points the binding uses, on a project whose whole tree is writable.

use std::fs;
use std::path::PathBuf;

use gptel_scope::emacs::api;
use gptel_scope::fs::tools::call;
use gptel_scope::scope::trust::sha256_hex;
use serde_json::{json, Value};

/// The scope the issue starts from: the `coding` profile's write scope, every command listed.
const SCOPE: &str = "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, head]\n    safe_write: [cp, mv, tee, sed, ln, echo, printf, rm, touch, mkdir, install, dd, rsync, tar, git, patch]\ntool_commands:\n  posix:\n    allowed:\n      cp: {}\n      tee: {}\n      cat: {}\n";

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    /// The trust list's directory and the profile directory (outside the project).
    trust: PathBuf,
    profiles: PathBuf,
}

fn project() -> Project {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let root = base.join("p");
    let trust = base.join("emacs.d/gptel-scope");
    let profiles = base.join("profiles");
    // A git work tree (`git am` writes anywhere in it).
    for d in [&root.join("sub"), &root.join(".git"), &trust, &profiles] {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(root.join("scope.yml"), SCOPE).expect("scope");
    fs::write(root.join("a.txt"), "a\n").expect("a");
    fs::write(root.join("preset.md"), "---\npaths: {}\n---\n").expect("preset");
    fs::write(trust.join("trusted.eld"), "()\n").expect("trust");
    fs::write(profiles.join("coding.yml"), "paths: {}\n").expect("profile");
    Project {
        _tmp: tmp,
        root,
        trust,
        profiles,
    }
}

impl Project {
    fn doc(&self) -> PathBuf {
        self.root.join("scope.yml")
    }
    /// A request under the project's document, approved, with the other protected paths.
    fn request(&self, extra: Value) -> Value {
        let mut req = json!({
            "sources": [{"file": self.doc(), "sha256": sha256_hex(&fs::read(self.doc()).expect("doc"))}],
            "check_trust": true,
            "protect": [self.root.join("preset.md"), self.profiles, self.trust.join("trusted.eld")],
            "directory": self.root,
        });
        for (k, v) in extra.as_object().expect("object") {
            req[k] = v.clone();
        }
        req
    }
    fn bytes(&self) -> Vec<u8> {
        fs::read(self.doc()).expect("doc")
    }
}

/// Every shell route of the issue: refused with `scope_document`, whatever the scope says.
#[test]
fn shell_routes_to_a_scope_document_are_refused() {
    let p = project();
    let other = p.profiles.join("coding.yml");
    let trust = p.trust.join("trusted.eld");
    let cases: &[(&str, &str)] = &[
        ("printf 'paths: {}\\n' > scope.yml", "redirect"),
        ("echo 'x' >> scope.yml", "append"),
        ("sed -i s/cat/rm/ scope.yml", "sed -i"),
        ("tee scope.yml < a.txt", "tee"),
        ("cp a.txt scope.yml", "cp"),
        ("ln -sf a.txt scope.yml", "ln -sf"),
        ("install a.txt scope.yml", "install"),
        ("dd if=a.txt of=scope.yml", "dd of="),
        ("cd sub && cp ../a.txt ../scope.yml", "cd and .."),
        ("cp a.txt sub/scope.yml", "a new scope.yml"),
        ("touch sub/scope.yml", "a new scope.yml by touch"),
        ("cp scope.yml sub", "into a directory"),
        ("rsync a.txt scope.yml", "rsync"),
        ("mv scope.yml b.yml", "moved away"),
        ("rm scope.yml", "removed"),
        ("rm -r ../p", "its directory removed"),
        ("tar xf x.tar", "tar x over its directory"),
        ("git checkout -- scope.yml", "git checkout"),
        ("git restore scope.yml", "git restore"),
        ("ln scope.yml b.txt", "a hard link"),
        ("echo x >> preset.md", "the session's preset.md"),
        (
            "patch -p0 < fix.diff",
            "patch (the files of its diff are not seen)",
        ),
        ("git apply fix.diff", "git apply"),
        ("git apply --index fix.diff", "git apply --index"),
        (
            "cd sub && git am ../0001-fix.patch",
            "git am (the whole work tree)",
        ),
    ];
    for (command, what) in cases {
        let v = api::check_command(&p.request(json!({"command": command})).to_string())
            .expect("decision");
        assert_eq!(v["allowed"], json!(false), "{what}: {command}");
        assert_eq!(
            v["reason"],
            json!("scope_document"),
            "{what}: {command}: {}",
            v["message"]
        );
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("the scope is the user's to change"),
            "{what}: {message}"
        );
        assert!(
            message.contains("request_scope_expansion"),
            "{what}: {message}"
        );
        // An allow-once grant of every resource it names lifts nothing.
        let grants: Vec<Value> = v["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .map(|x| {
                assert_eq!(x["grantable"], json!(false), "{what}: {x}");
                json!({"tool": "run_bash_command", "resource": x["resource"]})
            })
            .collect();
        let g = api::check_command(
            &p.request(json!({"command": command, "grants": grants}))
                .to_string(),
        )
        .expect("decision");
        assert_eq!(g["allowed"], json!(false), "{what} with grants");
    }
    // Outside the project: the profiles and the trust list (protected by the request).
    for (command, target) in [
        (format!("echo x > {}", other.display()), &other),
        (format!("echo x > {}", trust.display()), &trust),
    ] {
        let scope = SCOPE.to_string().replace(
            "write: [\"${project_root}/**\"]",
            &format!(
                "write: [\"${{project_root}}/**\", \"{}/**\", \"{}/**\"]",
                p.profiles.display(),
                p.trust.display()
            ),
        );
        fs::write(p.doc(), &scope).expect("wider scope");
        let v = api::check_command(&p.request(json!({"command": command})).to_string())
            .expect("decision");
        assert_eq!(
            v["reason"],
            json!("scope_document"),
            "{command}: {}",
            v["message"]
        );
        assert!(target.exists());
        fs::write(p.doc(), SCOPE).expect("scope back");
    }
    // The file is byte-identical afterwards (nothing ran; the judge only reads).
    assert_eq!(p.bytes(), SCOPE.as_bytes());
}

/// Reading a scope document stays allowed; ordinary writes beside it too.
#[test]
fn reading_a_scope_document_and_writing_beside_it_are_allowed() {
    let p = project();
    for command in [
        "cat scope.yml",
        "head -n 2 scope.yml",
        "cp scope.yml sub/copy.txt",
        "echo x > sub/scope.yml.txt",
        "cp a.txt sub/",
        "touch .",
        "git apply --check fix.diff",
        "git apply --cached fix.diff",
        "cd sub && git apply ../fix.diff",
        "cd sub && patch -p0 < ../fix.diff",
    ] {
        let v = api::check_command(&p.request(json!({"command": command})).to_string())
            .expect("decision");
        // `touch .` writes the directory holding the document: refused as a write over it
        // (the rule that refuses `rm -r .`), an over-block kept on purpose.
        let allowed = command != "touch .";
        assert_eq!(
            v["allowed"],
            json!(allowed),
            "{command}: {} {}",
            v["reason"],
            v["message"]
        );
    }
    let v = api::check_path(
        &p.request(json!({"path": "scope.yml", "access": "read"}))
            .to_string(),
    )
    .expect("path");
    assert_eq!(v["allowed"], json!(true));
}

/// run_command's argv form is judged by the same rule.
#[test]
fn run_command_cannot_write_a_scope_document() {
    let p = project();
    for (program, args) in [
        ("cp", vec!["a.txt", "scope.yml"]),
        ("tee", vec!["scope.yml"]),
        ("cp", vec!["a.txt", "sub/scope.yml"]),
    ] {
        let v = api::check_argv(
            &p.request(json!({"command": program, "args": args}))
                .to_string(),
        )
        .expect("decision");
        assert_eq!(v["allowed"], json!(false), "{program} {args:?}");
        assert_eq!(
            v["reason"],
            json!("scope_document"),
            "{program} {args:?}: {}",
            v["message"]
        );
    }
    let v = api::check_argv(
        &p.request(json!({"command": "cat", "args": ["scope.yml"]}))
            .to_string(),
    )
    .expect("decision");
    assert_eq!(v["allowed"], json!(true), "{v}");
}

/// apply_patch: update, add, delete and move of a scope document are refused, and the tree
/// is left as it was.
#[test]
fn apply_patch_cannot_touch_a_scope_document() {
    let p = project();
    let patches = [
        ("update", "--- a/scope.yml\n+++ b/scope.yml\n@@ -1,2 +1,2 @@\n paths:\n-  read: [\"${project_root}/**\"]\n+  read: [\"/**\"]\n".to_string()),
        ("add", "*** Begin Patch\n*** Add File: sub/scope.yml\n+paths: {}\n*** End Patch\n".to_string()),
        ("delete", "*** Begin Patch\n*** Delete File: scope.yml\n*** End Patch\n".to_string()),
        ("move away", "*** Begin Patch\n*** Update File: scope.yml\n*** Move to: old.yml\n@@\n paths:\n*** End Patch\n".to_string()),
        ("move onto", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: scope.yml\n@@\n-a\n+paths: {}\n*** End Patch\n".to_string()),
        ("preset.md", "--- a/preset.md\n+++ b/preset.md\n@@ -1,3 +1,3 @@\n ---\n-paths: {}\n+paths: {read: [\"/**\"]}\n ---\n".to_string()),
    ];
    for (what, patch) in patches {
        let v = call(
            "apply_patch",
            &p.request(json!({"patch": patch})).to_string(),
        );
        assert_eq!(v["success"], json!(false), "{what}: {v}");
        assert_eq!(v["reason"], json!("scope_document"), "{what}: {v}");
        assert_eq!(p.bytes(), SCOPE.as_bytes(), "{what}");
        assert!(!p.root.join("sub/scope.yml").exists(), "{what}");
        assert!(!p.root.join("old.yml").exists(), "{what}");
        assert_eq!(
            fs::read_to_string(p.root.join("a.txt")).expect("a"),
            "a\n",
            "{what}"
        );
    }
    let v = call(
        "read_file",
        &p.request(json!({"path": "scope.yml"})).to_string(),
    );
    assert_eq!(v["success"], json!(true), "{v}");
}

/// A document applies only with the approved content; the hash is of the bytes parsed.
#[test]
fn an_unapproved_document_is_not_applied() {
    let p = project();
    let doc = p.doc().to_string_lossy().into_owned();
    let good = sha256_hex(SCOPE.as_bytes());
    let req = |sha: Value| {
        json!({"command": "ls", "directory": p.root, "check_trust": true, "sources": [{"file": doc, "sha256": sha}]}).to_string()
    };
    // Never approved (a fresh clone): refused, naming the file and how to approve it.
    let v = api::check_command(&req(Value::Null)).expect("decision");
    assert_eq!(v["allowed"], json!(false));
    assert_eq!(v["reason"], json!("untrusted_scope"));
    assert_eq!(
        v["untrusted"],
        json!({"file": doc, "sha256": good, "approved": null})
    );
    let message = v["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&doc) && message.contains("M-x gptel-scope-trust"),
        "{message}"
    );
    // Approved: allowed.
    assert_eq!(
        api::check_command(&req(json!(good))).expect("decision")["allowed"],
        json!(true)
    );
    // Changed outside Emacs (a git pull): refused again, saying it changed.
    let changed = format!("{SCOPE}# pulled\n");
    fs::write(p.doc(), &changed).expect("change");
    let v = api::check_command(&req(json!(good))).expect("decision");
    assert_eq!(v["reason"], json!("untrusted_scope"));
    assert_eq!(v["untrusted"]["approved"], json!(good));
    assert_eq!(
        v["untrusted"]["sha256"],
        json!(sha256_hex(changed.as_bytes()))
    );
    assert!(v["message"]
        .as_str()
        .unwrap_or_default()
        .contains("changed since the user approved it"));
    // The file tools, the listing and the sandbox's mounts refuse it too.
    let r = call(
        "read_file",
        &json!({"path": "a.txt", "check_trust": true, "sources": [{"file": doc, "sha256": good}]})
            .to_string(),
    );
    assert_eq!(r["reason"], json!("untrusted_scope"), "{r}");
    let e = api::list_commands(
        &json!({"check_trust": true, "sources": [{"file": doc, "sha256": good}]}).to_string(),
    )
    .unwrap_err();
    assert_eq!(e.symbol(), "gptel-scope-untrusted-scope");
    let e = gptel_scope::policy::sandbox::mounts_for_request(
        &json!({"check_trust": true, "sources": [{"file": doc}]}).to_string(),
    )
    .unwrap_err();
    assert_eq!(e.reason(), "untrusted_scope");
    // An unapproved document is refused before its rules are parsed: a broken one too.
    fs::write(p.doc(), "paths: [unclosed\n").expect("broken");
    let v = api::check_command(&req(json!(good))).expect("decision");
    assert_eq!(v["reason"], json!("untrusted_scope"), "{v}");
    fs::write(p.doc(), SCOPE).expect("back");
    assert_eq!(
        api::check_command(&req(json!(good))).expect("decision")["allowed"],
        json!(true)
    );
    // Without check_trust (the command-line check, which names its file) it applies.
    assert_eq!(
        api::check_command(
            &json!({"command": "ls", "directory": p.root, "sources": [{"file": doc}]}).to_string()
        )
        .expect("d")["allowed"],
        json!(true)
    );
}

/// The sandbox binds the protected paths that lie inside a writable directory read-only.
#[test]
fn the_sandbox_binds_scope_documents_read_only() {
    let p = project();
    let v = gptel_scope::policy::sandbox::mounts_for_request(&p.request(json!({})).to_string())
        .expect("mounts");
    let root = p.root.to_string_lossy().into_owned();
    assert_eq!(v["write"], json!([root]));
    assert_eq!(
        v["protect"],
        json!([format!("{root}/preset.md"), format!("{root}/scope.yml")])
    );
}

/// A hard link made outside the engine's sight still leads to the document: writing it is
/// refused (the same inode).
#[test]
fn a_hard_link_of_a_scope_document_is_not_written() {
    let p = project();
    fs::hard_link(p.doc(), p.root.join("sub/alias.txt")).expect("link");
    let v = api::check_command(
        &p.request(json!({"command": "echo x >> sub/alias.txt"}))
            .to_string(),
    )
    .expect("decision");
    assert_eq!(v["reason"], json!("scope_document"), "{}", v["message"]);
    let v = call("apply_patch", &p.request(json!({"patch": "--- a/sub/alias.txt\n+++ b/sub/alias.txt\n@@ -1 +1 @@\n-paths:\n+paths: # x\n"})).to_string());
    assert_eq!(v["reason"], json!("scope_document"), "{v}");
    assert_eq!(p.bytes(), SCOPE.as_bytes());
}
