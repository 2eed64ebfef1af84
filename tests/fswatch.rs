//! What the file system looked like is remembered from one decision to the next only while
//! the kernel reports no change that could alter it (`fswatch`): every change between two
//! decisions to a working directory's chain, to a path operand in it, or to a scope document
//! is seen by the second; and an unchanged one is not asked about again.

mod common;
use common::*;

use std::path::{Path, PathBuf};

use gptel_scope::{api, config, fswatch, paths};

/// Resolves `path` as a decision's working directory, in a decision of its own; returns
/// the target and how many paths the file system was asked about.
fn workdir(path: &Path) -> (PathBuf, u64) {
    let before = paths::probes_asked();
    let _m = paths::memo();
    let target = paths::resolve_workdir(path).target;
    (target, paths::probes_asked() - before)
}

/// Resolves `path` inside a decision that works in `dir`.
fn operand(dir: &Path, path: &Path) -> (PathBuf, u64) {
    let before = paths::probes_asked();
    let _m = paths::memo();
    paths::resolve_workdir(dir);
    let target = paths::resolve(path).target;
    (target, paths::probes_asked() - before)
}

/// Whether this machine's temporary directory is on a file system that is watched.
fn watched_here(dir: &Path) -> bool {
    workdir(dir);
    fswatch::watched() > 0
}

#[test]
fn an_unchanged_working_directory_is_not_asked_about_again() {
    fswatch::forget();
    let tmp = TempDir::new("fswatch-same");
    let dir = tmp.path().join("a/b/c");
    std::fs::create_dir_all(&dir).unwrap();
    let (first, asked) = workdir(&dir);
    assert_eq!(first, dir);
    assert!(asked >= 4, "the first decision asks about each component: {asked}");
    if fswatch::watched() == 0 {
        eprintln!("note: {} is on a file system that is not watched; nothing is kept", dir.display());
        return;
    }
    for _ in 0..3 {
        assert_eq!(workdir(&dir), (dir.clone(), 0));
    }
    // An operand in the working directory is asked about once, then kept.
    let f = dir.join("f.txt");
    assert_eq!(operand(&dir, &f), (f.clone(), 1));
    assert_eq!(operand(&dir, &f), (f.clone(), 0));
    // Files made and removed beside it in a watched directory change nothing kept.
    let forgotten = fswatch::forgotten();
    std::fs::write(dir.join("other.txt"), "x").unwrap();
    std::fs::remove_file(dir.join("other.txt")).unwrap();
    std::fs::write(tmp.path().join("a/noise"), "x").unwrap();
    assert_eq!(workdir(&dir), (dir.clone(), 0));
    assert_eq!(fswatch::forgotten(), forgotten);
}

/// Each change between two decisions, and where the second must find the working directory
/// `work/sub` (None: as written, when it no longer exists).
#[test]
fn every_change_to_the_working_directory_is_seen_by_the_next_decision() {
    type Change = fn(&Path);
    let cases: &[(&str, Change, Option<&str>)] = &[
        ("the directory replaced by a symlink", |r| {
            std::fs::rename(r.join("work/sub"), r.join("work/old")).unwrap();
            std::os::unix::fs::symlink(r.join("outside"), r.join("work/sub")).unwrap();
        }, Some("outside")),
        ("its parent replaced by a symlink", |r| {
            std::fs::rename(r.join("work"), r.join("old")).unwrap();
            std::fs::create_dir_all(r.join("elsewhere/sub")).unwrap();
            std::os::unix::fs::symlink(r.join("elsewhere"), r.join("work")).unwrap();
        }, Some("elsewhere/sub")),
        ("its grandparent renamed, a symlink in its place", |r| {
            let top = r.parent().unwrap().join(format!("{}-moved", r.file_name().unwrap().to_string_lossy()));
            std::fs::rename(r, &top).unwrap();
            std::fs::create_dir_all(r).unwrap();
            std::fs::create_dir_all(top.join("outside/work/sub")).unwrap();
            std::os::unix::fs::symlink(top.join("outside/work"), r.join("work")).unwrap();
        }, Some("@moved/outside/work/sub")),
        ("the directory removed", |r| {
            std::fs::remove_dir(r.join("work/sub")).unwrap();
        }, None),
        ("the directory removed, a file in its place", |r| {
            std::fs::remove_dir(r.join("work/sub")).unwrap();
            std::fs::write(r.join("work/sub"), "x").unwrap();
        }, None),
    ];
    for (what, change, want) in cases {
        fswatch::forget();
        let tmp = TempDir::new("fswatch-change");
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
            assert_eq!(paths::is_dir(&dir), want != dir || std::fs::metadata(&dir).is_ok_and(|m| m.is_dir()), "{what}");
        }
        let moved = PathBuf::from(format!("{}-moved", r.display()));
        let _ = std::fs::remove_dir_all(&moved);
    }
}

#[test]
fn every_change_to_an_operand_is_seen_by_the_next_decision() {
    fswatch::forget();
    let tmp = TempDir::new("fswatch-operand");
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
fn nothing_is_kept_outside_a_decision_or_on_a_file_system_not_listed() {
    fswatch::forget();
    let tmp = TempDir::new("fswatch-outside");
    let dir = tmp.path().join("w");
    std::fs::create_dir_all(&dir).unwrap();
    workdir(&dir);
    let before = paths::probes_asked();
    paths::resolve(&dir);
    paths::resolve(&dir);
    assert!(paths::probes_asked() - before >= 2, "outside a decision every resolution asks");
    // procfs changes without events: its entries are asked about at every decision.
    let proc = Path::new("/proc/sys/kernel");
    if proc.is_dir() {
        workdir(proc);
        assert!(workdir(proc).1 >= 2, "/proc is asked about again");
    }
}

#[test]
fn a_scope_document_is_read_again_after_every_kind_of_change() {
    fswatch::forget();
    let tmp = TempDir::new("fswatch-scope");
    let dir = tmp.path().to_path_buf();
    let file = dir.join("scope.yml");
    let text = |cmd: &str| format!("paths: {{read: [\"{}/**\"]}}\nbash_tools: {{categories: {{read_only: [{cmd}]}}}}\n", dir.display());
    let backdate = |f: &Path| {
        let h = std::fs::File::options().write(true).open(f).unwrap();
        h.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10)).unwrap();
    };
    std::fs::write(&file, text("ls")).unwrap();
    backdate(&file);
    let watched = watched_here(&dir);
    let scope = serde_json::json!({"home": dir, "sources": [{"file": file}]}).to_string();
    let d = dir.display().to_string();
    let allowed = |cmd: &str| matches!(api::decide_command_in(cmd, &d, &scope), Ok(api::Judged::Allowed { .. }));
    assert!(allowed("ls"));
    let stamps = config::cache_stats().stamps_read;
    assert!(allowed("ls") && allowed("ls"));
    if watched {
        assert_eq!(config::cache_stats().stamps_read, stamps, "an unchanged document's stamp is not asked again");
    }
    type Change = fn(&Path, &str);
    let changes: &[(&str, Change)] = &[
        ("rewritten in place, same length, modification time put back", |f, t| {
            std::fs::write(f, t).unwrap();
        }),
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
    let doc = format!("paths: {{read: [\"{}/other/**\"]}}\nbash_tools: {{categories: {{read_only: [cat]}}}}\n", moved.display());
    std::fs::write(moved.join("other/scope.yml"), doc).unwrap();
    backdate(&moved.join("other/scope.yml"));
    let cat = api::decide_command_in("cat", &d, &scope);
    assert!(matches!(cat, Ok(api::Judged::Allowed { .. })), "the document the path leads to now");
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(&moved, &dir).unwrap();
}
