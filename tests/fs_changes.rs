//! Each decision asks the file system (memoized within the decision only): every change
//! between two decisions to a working directory's chain, to a path operand in it, or to a
//! scope document is seen by the second.

mod common;
use common::*;

use std::path::{Path, PathBuf};

use gptel_scope::emacs::api;
use gptel_scope::policy::paths;
use gptel_scope::scope::config;

/// Resolves `path` as a decision's working directory, in a decision of its own; returns
/// the target and how many paths the file system was asked about.
fn workdir(path: &Path) -> (PathBuf, u64) {
    let before = paths::probes_asked();
    let _m = paths::memo();
    let target = paths::resolve(path).target;
    (target, paths::probes_asked() - before)
}

/// Resolves `path` inside a decision that works in `dir`.
fn operand(dir: &Path, path: &Path) -> (PathBuf, u64) {
    let before = paths::probes_asked();
    let _m = paths::memo();
    paths::resolve(dir);
    let target = paths::resolve(path).target;
    (target, paths::probes_asked() - before)
}

#[test]
fn every_change_to_the_working_directory_is_seen_by_the_next_decision() {
    type Change = fn(&Path);
    let cases: &[(&str, Change, Option<&str>)] = &[
        (
            "the directory replaced by a symlink",
            |r| {
                std::fs::rename(r.join("work/sub"), r.join("work/old")).unwrap();
                std::os::unix::fs::symlink(r.join("outside"), r.join("work/sub")).unwrap();
            },
            Some("outside"),
        ),
        (
            "its parent replaced by a symlink",
            |r| {
                std::fs::rename(r.join("work"), r.join("old")).unwrap();
                std::fs::create_dir_all(r.join("elsewhere/sub")).unwrap();
                std::os::unix::fs::symlink(r.join("elsewhere"), r.join("work")).unwrap();
            },
            Some("elsewhere/sub"),
        ),
        (
            "its grandparent renamed, a symlink in its place",
            |r| {
                let top = r.parent().unwrap().join(format!(
                    "{}-moved",
                    r.file_name().unwrap().to_string_lossy()
                ));
                std::fs::rename(r, &top).unwrap();
                std::fs::create_dir_all(r).unwrap();
                std::fs::create_dir_all(top.join("outside/work/sub")).unwrap();
                std::os::unix::fs::symlink(top.join("outside/work"), r.join("work")).unwrap();
            },
            Some("@moved/outside/work/sub"),
        ),
        (
            "the directory removed",
            |r| {
                std::fs::remove_dir(r.join("work/sub")).unwrap();
            },
            None,
        ),
        (
            "the directory removed, a file in its place",
            |r| {
                std::fs::remove_dir(r.join("work/sub")).unwrap();
                std::fs::write(r.join("work/sub"), "x").unwrap();
            },
            None,
        ),
    ];
    for (what, change, want) in cases {
        let tmp = TempDir::new("fschange-change");
        let r = tmp.path().to_path_buf();
        std::fs::create_dir_all(r.join("work/sub")).unwrap();
        std::fs::create_dir_all(r.join("outside")).unwrap();
        let dir = r.join("work/sub");
        assert_eq!(workdir(&dir).0, dir, "{what}");
        assert_eq!(workdir(&dir).0, dir, "{what}");
        change(&r);
        let want = match want {
            Some(w) if w.starts_with('@') => PathBuf::from(format!("{}-{}", r.display(), &w[1..])),
            Some(w) => r.join(w),
            None => dir.clone(),
        };
        let (got, asked) = workdir(&dir);
        assert_eq!(got, want, "{what}");
        assert!(asked > 0, "{what}: the file system is asked again");
        {
            let _m = paths::memo();
            assert_eq!(
                paths::is_dir(&dir),
                want != dir || std::fs::metadata(&dir).is_ok_and(|m| m.is_dir()),
                "{what}"
            );
        }
        let moved = PathBuf::from(format!("{}-moved", r.display()));
        let _ = std::fs::remove_dir_all(&moved);
    }
}

#[test]
fn every_change_to_an_operand_is_seen_by_the_next_decision() {
    let tmp = TempDir::new("fschange-operand");
    let r = tmp.path().to_path_buf();
    let dir = r.join("proj");
    std::fs::create_dir_all(dir.join("d")).unwrap();
    std::fs::create_dir_all(r.join("secret")).unwrap();
    // Missing, then made a symlink out of the project.
    let link = dir.join("link");
    assert_eq!(operand(&dir, &link.join("x")).0, link.join("x"));
    assert_eq!(operand(&dir, &link.join("x")).0, link.join("x"));
    std::os::unix::fs::symlink(r.join("secret"), &link).unwrap();
    assert_eq!(operand(&dir, &link.join("x")).0, r.join("secret/x"));
    // A directory operand replaced by a symlink.
    assert_eq!(operand(&dir, &dir.join("d/f")).0, dir.join("d/f"));
    std::fs::remove_dir(dir.join("d")).unwrap();
    std::os::unix::fs::symlink(r.join("secret"), dir.join("d")).unwrap();
    assert_eq!(operand(&dir, &dir.join("d/f")).0, r.join("secret/f"));
    // A symlink retargeted (removed and made again).
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(dir.join("d"), &link).unwrap();
    assert_eq!(operand(&dir, &link.join("x")).0, r.join("secret/x"));
    std::fs::remove_file(&link).unwrap();
    std::fs::create_dir(r.join("plain")).unwrap();
    std::os::unix::fs::symlink(r.join("plain"), &link).unwrap();
    assert_eq!(operand(&dir, &link.join("x")).0, r.join("plain/x"));
}

#[test]
fn nothing_is_kept_from_one_decision_to_the_next() {
    let tmp = TempDir::new("fschange-outside");
    let dir = tmp.path().join("w");
    std::fs::create_dir_all(&dir).unwrap();
    assert!(workdir(&dir).1 >= 2);
    assert!(workdir(&dir).1 >= 2, "the next decision asks again");
    let before = paths::probes_asked();
    paths::resolve(&dir);
    paths::resolve(&dir);
    assert!(
        paths::probes_asked() - before >= 4,
        "outside a decision every resolution asks"
    );
    // Within one decision a path is asked about once.
    let before = paths::probes_asked();
    {
        let _m = paths::memo();
        paths::resolve(&dir);
        let once = paths::probes_asked() - before;
        paths::resolve(&dir);
        paths::is_dir(&dir);
        assert_eq!(
            paths::probes_asked() - before,
            once,
            "memoized within the decision"
        );
    }
}

#[test]
fn a_scope_document_is_read_again_after_every_kind_of_change() {
    let tmp = TempDir::new("fschange-scope");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("scope.yml");
    let text = |cmd: &str| {
        format!(
            "paths: {{read: [\"{}/**\"]}}\nbash_tools: {{categories: {{read_only: [{cmd}]}}}}\n",
            dir.display()
        )
    };
    let backdate = |f: &Path| {
        let h = std::fs::File::options().write(true).open(f).unwrap();
        h.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10))
            .unwrap();
    };
    std::fs::write(&file, text("ls")).unwrap();
    backdate(&file);
    let scope = serde_json::json!({"home": dir, "sources": [{"file": file}]}).to_string();
    let scope = gptel_scope::emacs::session::Session::open(&scope).unwrap();
    let d = dir.display().to_string();
    let allowed = |cmd: &str| {
        matches!(
            api::decide_command_in(&scope, cmd, &d),
            Ok(api::Judged::Allowed { .. })
        )
    };
    assert!(allowed("ls"));
    let (stamps, reads) = (
        config::cache_stats().stamps_read,
        config::cache_stats().file_reads,
    );
    assert!(allowed("ls") && allowed("ls"));
    assert_eq!(
        config::cache_stats().file_reads,
        reads,
        "an unchanged document is not read again"
    );
    assert!(
        config::cache_stats().stamps_read >= stamps + 2,
        "its stamp is asked at every decision"
    );
    type Change = fn(&Path, &str);
    let changes: &[(&str, Change)] = &[
        (
            "rewritten in place, same length, modification time put back",
            |f, t| {
                std::fs::write(f, t).unwrap();
            },
        ),
        ("replaced by a rename", |f, t| {
            let tmp = f.with_extension("tmp");
            std::fs::write(&tmp, t).unwrap();
            std::fs::rename(&tmp, f).unwrap();
        }),
        ("removed and written again", |f, t| {
            std::fs::remove_file(f).unwrap();
            std::fs::write(f, t).unwrap();
        }),
    ];
    // Each change swaps the command allowed: `ls` and `wc` have the same length.
    let mut now = "ls";
    for (what, change) in changes {
        let next = if now == "ls" { "wc" } else { "ls" };
        change(&file, &text(next));
        backdate(&file);
        assert!(allowed(next), "{what}: the new document is used");
        assert!(!allowed(now), "{what}: the old one is not");
        now = next;
    }
    // Its directory replaced by a symlink to another with another document.
    let other = dir.join("other");
    std::fs::create_dir(&other).unwrap();
    let moved = PathBuf::from(format!("{}-moved", dir.display()));
    let _ = std::fs::remove_dir_all(&moved);
    std::fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(moved.join("other"), &dir).unwrap();
    let doc = format!(
        "paths: {{read: [\"{}/other/**\"]}}\nbash_tools: {{categories: {{read_only: [cat]}}}}\n",
        moved.display()
    );
    std::fs::write(moved.join("other/scope.yml"), doc).unwrap();
    backdate(&moved.join("other/scope.yml"));
    let cat = api::decide_command_in(&scope, "cat", &d);
    assert!(
        matches!(cat, Ok(api::Judged::Allowed { .. })),
        "the document the path leads to now"
    );
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(&moved, &dir).unwrap();
}
