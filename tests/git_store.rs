//! git's object store (SECURITY.md, "git's object store"): commands that print files from
//! it without naming them, and commands that read work-tree files into it, are refused when
//! a denied path would be read, unless a pathspec leaves it out. Each repository is made
//! with the git binary. Tables of (command, expected) where expected is `allow` or the
//! exact reason.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

use gptel_scope::scope::Scope;

struct Fx {
    _tmp: TempDir,
    proj: PathBuf,
    scope: Scope,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A project `proj` (a git repository holding `src/a.rs`) read and written by the scope,
/// `**/.env` and `**/*.pem` denied; `setup` runs git there.
fn fx(setup: &[&[&str]], files: &[(&str, &str)]) -> Fx {
    let tmp = TempDir::new("git-store");
    let proj = tmp.path().join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::write(proj.join("src/a.rs"), "fn main() {}\n").unwrap();
    git(&proj, &["init", "-q"]);
    git(&proj, &["add", "src/a.rs"]);
    git(&proj, &["commit", "-qm", "a"]);
    for (f, text) in files {
        std::fs::write(proj.join(f), text).unwrap();
    }
    for args in setup {
        git(&proj, args);
    }
    let scope = scope(&format!(
        r#"
paths:
  read: ["{p}/**"]
  write: ["{p}/**"]
  deny: ["**/.env", "**/*.pem"]
bash_tools:
  categories:
    read_only: [ls, cat, "git log", "git show", "git diff", "git cat-file", "git archive", "git grep", "git format-patch", "git status", "git diff-tree", "git fast-export", "git bundle", "git unpack-file"]
    safe_write: ["git add", "git commit", "git stash"]
"#,
        p = proj.display()
    ));
    Fx {
        _tmp: tmp,
        proj,
        scope,
    }
}

impl Fx {
    fn decide(&self, cmd: &str) -> gptel_scope::policy::decide::Decision {
        decide_in(&self.scope, &self.proj, None, Some(&self.proj), &[], cmd)
    }

    fn check(&self, table: &[(&str, &str)]) {
        let mut bad = Vec::new();
        for (cmd, want) in table {
            let d = self.decide(cmd);
            let got = if d.allowed {
                "allow"
            } else {
                d.reason.unwrap_or("?")
            };
            if got != *want {
                bad.push(format!("{cmd:?}: want {want}, got {got} ({})", d.message));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    fn message(&self, cmd: &str) -> String {
        let d = self.decide(cmd);
        assert!(!d.allowed, "{cmd}");
        d.message.replace(&self.proj.display().to_string(), "/P")
    }
}

/// A repository that once committed `.env`, then removed it.
fn once_committed() -> Fx {
    fx(
        &[
            &["add", ".env"],
            &["commit", "-qm", "env"],
            &["rm", "-q", ".env"],
            &["commit", "-qm", "rm"],
        ],
        &[(".env", "K=1\n")],
    )
}

#[test]
fn i16_git_log_p_in_a_repository_that_once_committed_env_is_refused() {
    let f = once_committed();
    assert_eq!(
        f.message("git log -p"),
        "`git log -p` prints files from git's object store, and /P/.env (deny pattern `**/.env`) is in history: a denied file is never read, from the work tree or from git. Leave it out with a pathspec: `git log -p -- ':(top,exclude,glob)**/.env'`."
    );
    let blob = git(&f.proj, &["rev-parse", "HEAD~1:.env"]);
    f.check(&[
        ("git log -p", "reaches_denied_path"),
        ("git log --patch --stat", "reaches_denied_path"),
        ("git log -U3", "reaches_denied_path"),
        ("git log -S K=1 --oneline", "reaches_denied_path"),
        ("git log --all -p", "reaches_denied_path"),
        ("git show", "reaches_denied_path"),
        ("git show HEAD~1", "reaches_denied_path"),
        ("git diff HEAD~2 HEAD", "reaches_denied_path"),
        ("git diff HEAD~2..HEAD", "reaches_denied_path"),
        ("git format-patch -1 --stdout", "reaches_denied_path"),
        ("git stash show -p", "reaches_denied_path"),
        ("git stash list -p", "reaches_denied_path"),
        ("git diff-tree -p HEAD", "reaches_denied_path"),
        ("git diff-tree --name-only HEAD", "allow"),
        ("git fast-export --all", "reaches_denied_path"),
        ("git bundle create - --all", "reaches_denied_path"),
        (&format!("git unpack-file {blob}"), "reaches_denied_path"),
        ("git stash show", "allow"),
        ("git archive HEAD~1", "reaches_denied_path"),
        ("git grep K=1 HEAD~1", "reaches_denied_path"),
        (&format!("git show {blob}"), "reaches_denied_path"),
        (&format!("git show --stat {blob}"), "reaches_denied_path"),
        (
            &format!("git show {blob} -- ':!.env'"),
            "reaches_denied_path",
        ),
        (&format!("git cat-file -p {blob}"), "reaches_denied_path"),
        (&format!("git cat-file blob {blob}"), "reaches_denied_path"),
        ("git cat-file --batch", "reaches_denied_path"),
        ("git -C src log -p", "reaches_denied_path"),
        ("cd src && git log -p", "reaches_denied_path"),
        ("git --git-dir=.git log -p", "reaches_denied_path"),
        (
            "git --git-dir .git --work-tree . log -p",
            "reaches_denied_path",
        ),
        // Another repository than the one git finds is refused whatever it holds.
        (
            "cd src && git --git-dir=../.git log --oneline",
            "flag_not_allowed",
        ),
        ("git --work-tree=src log -p", "reaches_denied_path"),
        ("git --bare log -p", "reaches_denied_path"),
        (
            "git --icase-pathspecs log -p -- ':!.env'",
            "reaches_denied_path",
        ),
        ("git log -p -- ':(icase)x'", "reaches_denied_path"),
        ("git log -p -- ':(exclude)**/.env'", "reaches_denied_path"),
        ("git show HEAD~1:.env", "path_denied"),
        // Names only, or a pathspec that leaves it out.
        ("git log --oneline", "allow"),
        ("git log --stat --name-status", "allow"),
        ("git log -5 --format=%H", "allow"),
        ("git show --stat HEAD~1", "allow"),
        ("git diff --stat HEAD~2 HEAD", "allow"),
        ("git diff", "allow"),
        ("git diff --cached", "allow"),
        ("git status", "allow"),
        ("git log -p -- ':(top,exclude,glob)**/.env'", "allow"),
        ("git log -p -- . ':!.env'", "allow"),
        ("git log -p -- ':^.env'", "allow"),
        ("git log -p -- src", "allow"),
        ("git log -p src", "allow"),
        ("git show HEAD~1 src", "allow"),
        ("git diff HEAD~2 HEAD src", "allow"),
        ("git diff HEAD~2 HEAD src/a.rs", "allow"),
        ("git log -p nosuchdir", "reaches_denied_path"),
        ("cd src && git log -p -- ':/!.env'", "allow"),
        ("cd src && git log -p -- .", "allow"),
        ("git show HEAD~1 -- ':!.env'", "allow"),
        (
            "git diff HEAD~2 HEAD -- ':(exclude,top,glob)**/.env'",
            "allow",
        ),
        ("git archive HEAD~1 -- ':!.env'", "allow"),
        ("git cat-file -p HEAD", "allow"),
        ("git cat-file -p HEAD^{tree}", "allow"),
        ("git cat-file -t HEAD~1:.env", "path_denied"),
    ]);
    assert_eq!(
        f.message(&format!("git cat-file -p {blob}")),
        "`git cat-file -p BLOB` prints an object of git's object store whatever its path, and /P/.env (deny pattern `**/.env`) is in history: a denied file is never read, from the work tree or from git. Name objects as REV:PATH (`HEAD:src/main.rs`), which is judged by its path."
            .replace("BLOB", &blob)
    );
}

/// The history reads of the issue, with `**/.env` denied and `.git` not: every way to print
/// the old `.env` is refused, by its path or by the look at the store; what reads no file
/// of history (or leaves it out) stays allowed, and so does everyday git.
#[test]
fn i16_history_reads_without_a_git_deny_pattern() {
    let f = once_committed();
    let commit = git(&f.proj, &["rev-parse", "HEAD~1"]);
    let blob = git(&f.proj, &["rev-parse", "HEAD~1:.env"]);
    let short = &commit[..7];
    f.check(&[
        ("git show HEAD~1:.env", "path_denied"),
        (&format!("git show {commit}:.env"), "path_denied"),
        (&format!("git show {blob}"), "reaches_denied_path"),
        (&format!("git show {commit}"), "reaches_denied_path"),
        (&format!("git show {short}"), "reaches_denied_path"),
        ("git show ':/env'", "reaches_denied_path"),
        ("git show HEAD", "reaches_denied_path"),
        ("git log -p", "reaches_denied_path"),
        (&format!("git cat-file -p {blob}"), "reaches_denied_path"),
        ("git diff HEAD~2 HEAD", "reaches_denied_path"),
        ("git archive HEAD~1", "reaches_denied_path"),
        ("git grep K HEAD~1", "reaches_denied_path"),
        ("git --git-dir=.git show HEAD~1", "reaches_denied_path"),
        ("GIT_DIR=.git git show HEAD~1", "denied"),
        ("git --git-dir=copy log -p", "flag_not_allowed"),
        (
            "GIT_ALTERNATE_OBJECT_DIRECTORIES=../other/.git/objects git log -p -- src",
            "denied",
        ),
        (
            "cat .git/config > .git/objects/info/alternates",
            "scope_document",
        ),
        // Everyday git: .env is only in history.
        ("git log --oneline", "allow"),
        ("git status", "allow"),
        ("git diff", "allow"),
        ("git show --stat HEAD", "allow"),
        (&format!("git show --stat {commit}"), "allow"),
        ("git add src/a.rs", "allow"),
        ("git commit -m msg", "allow"),
        ("git commit -m msg -- src/a.rs", "allow"),
        ("git show HEAD -- src", "allow"),
        ("git log -p -- ':(top,exclude,glob)**/.env'", "allow"),
    ]);
}

/// Objects no ref, reflog or index entry reaches (a `.env` staged and taken out again, a
/// dropped stash that held it) are not seen by the look at the store: named by their hash,
/// they are refused; objects history reaches are read as before.
#[test]
fn i16_objects_history_does_not_reach_are_refused() {
    let f = fx(&[], &[]);
    std::fs::write(f.proj.join(".env"), "K=1\n").unwrap();
    git(&f.proj, &["add", ".env"]);
    git(&f.proj, &["rm", "-q", "--cached", ".env"]);
    let dangling = git(&f.proj, &["hash-object", ".env"]);
    std::fs::write(f.proj.join(".env"), "K=2\n").unwrap();
    git(&f.proj, &["stash", "-q", "-u"]);
    let untracked = git(&f.proj, &["rev-parse", "stash^3"]);
    git(&f.proj, &["stash", "drop", "-q"]);
    assert!(!f.proj.join(".env").exists());
    let reached = git(&f.proj, &["rev-parse", "HEAD:src/a.rs"]);
    let head = git(&f.proj, &["rev-parse", "HEAD"]);
    f.check(&[
        (
            &format!("git cat-file -p {dangling}"),
            "reaches_denied_path",
        ),
        (&format!("git show {dangling}"), "reaches_denied_path"),
        (
            &format!("git unpack-file {dangling}"),
            "reaches_denied_path",
        ),
        (&format!("git show {untracked}"), "reaches_denied_path"),
        (
            &format!("git show --stat {untracked}"),
            "reaches_denied_path",
        ),
        (&format!("git archive {untracked}"), "reaches_denied_path"),
        (&format!("git diff {untracked} HEAD"), "reaches_denied_path"),
        (
            &format!("git log -p {head}..{untracked}"),
            "reaches_denied_path",
        ),
        // Reached: read as before.
        (&format!("git cat-file -p {reached}"), "allow"),
        (&format!("git show {head}"), "allow"),
        (&format!("git show {}", &head[..8]), "allow"),
        ("git log -p", "allow"),
        ("git grep cafe HEAD", "allow"),
    ]);
    let d = f.decide(&format!("git cat-file -p {dangling}"));
    assert_eq!(
        d.message,
        format!("`git cat-file -p {dangling}` reads an object of git's object store by its hash, and {dangling} names an object that no ref, reflog or index entry reaches: which path it had, and so whether it is a denied file, cannot be told, and a denied file is never read, from the work tree or from git. Name commits by a ref (`HEAD~1`, a branch) or a hash that history reaches, and files as REV:PATH.")
    );
}

#[test]
fn i16_git_add_env_and_diff_cached_is_refused() {
    let f = fx(&[], &[(".env", "K=1\n")]);
    f.check(&[
        ("git add .env && git diff --cached", "path_denied"),
        ("git add -A && git diff --cached", "reaches_denied_path"),
        ("git add . && git diff --cached", "reaches_denied_path"),
        ("git add --all", "reaches_denied_path"),
        ("git stash --include-untracked", "reaches_denied_path"),
        ("git stash push --include-untracked", "reaches_denied_path"),
        ("cd src && git add -A", "reaches_denied_path"),
        // The work tree would be src/, the index the project's: not judged, refused.
        (
            "cd src && git --git-dir=../.git add -A",
            "reaches_denied_path",
        ),
        ("git --git-dir=.git add src", "flag_not_allowed"),
        ("git add -A -- ':!.env'", "allow"),
        ("git add -n -A", "allow"),
        ("git add --dry-run .", "allow"),
        ("git add -A -- ':(top,exclude,glob)**/.env'", "allow"),
        ("git add src", "allow"),
        ("git add src/a.rs", "allow"),
        ("git add --update", "allow"),
        ("git commit -am x", "allow"),
        ("git stash", "allow"),
        ("git diff --cached", "allow"),
        ("git log -p", "allow"),
    ]);
    assert_eq!(
        f.message("git add -A && git diff --cached"),
        "`git add -A` reads /P/.env (deny pattern `**/.env`) into git's object store, from where any git command could print it: a denied file is never read. Add files by name, or leave it out with a pathspec: `git add -A -- ':(top,exclude,glob)**/.env'`."
    );
}

/// The usual setup: `.env` ignored by git. `git add -A` does not take it; `-f` would.
#[test]
fn i16_an_ignored_env_is_not_read_by_git_add() {
    let f = fx(
        &[&["add", ".gitignore"], &["commit", "-qm", "ignore"]],
        &[(".gitignore", ".env\n"), (".env", "K=1\n")],
    );
    f.check(&[
        ("git add -A && git diff --cached", "allow"),
        ("git add .", "allow"),
        ("git stash --include-untracked", "allow"),
        ("git add -f -A", "reaches_denied_path"),
        ("git stash --all", "reaches_denied_path"),
    ]);
}

#[test]
fn i16_staged_env_is_refused_from_the_index() {
    let f = fx(&[&["add", "-f", "k.pem"]], &[("k.pem", "KEY\n")]);
    assert_eq!(
        f.message("git diff --cached"),
        "`git diff --cached` prints files from git's object store, and /P/k.pem (deny pattern `**/*.pem`) is in the index: a denied file is never read, from the work tree or from git. Leave it out with a pathspec: `git diff --cached -- ':(top,exclude,glob)**/*.pem'`."
    );
    f.check(&[
        ("git diff --cached", "reaches_denied_path"),
        ("git diff --staged --stat", "allow"),
        ("git diff", "reaches_denied_path"),
        ("git commit -am x", "reaches_denied_path"),
        ("git add --update", "reaches_denied_path"),
        ("git commit -m x -- src/a.rs", "allow"),
        ("git add -p", "reaches_denied_path"),
        ("git add --interactive", "reaches_denied_path"),
        ("git commit -p -m x", "reaches_denied_path"),
        ("git stash -p", "reaches_denied_path"),
        ("git add -p -- src", "allow"),
        (
            "git diff --cached -- ':(top,exclude,glob)**/*.pem'",
            "allow",
        ),
        ("git diff --cached -- src", "allow"),
        ("git diff src", "allow"),
        ("git diff --cached src/a.rs", "allow"),
        // A commit on the same line would move it into history first.
        ("git commit -m x && git log -p", "reaches_denied_path"),
        ("git log -p", "reaches_denied_path"),
        ("git log -p -- src", "allow"),
    ]);
}

/// A repository git cannot list without fetching: every reader is refused, and the message
/// says why and gives the pathspec that needs no look.
#[test]
fn i16_partial_clone_cannot_tell() {
    let f = fx(&[&["config", "extensions.partialClone", "origin"]], &[]);
    assert_eq!(
        f.message("git log -p"),
        "`git log -p` reads git's object store, and whether it holds a denied path cannot be told (the repository is a partial clone (extensions.partialclone): listing it could fetch, and its history is incomplete): a denied file is never read, from the work tree or from git. Leave out every deny pattern with a pathspec: `git log -p -- ':(top,exclude,glob)**/.env' ':(top,exclude,glob)**/*.pem' ':(top,exclude)~/.ssh' ':(top,exclude)~/.gnupg' ':(top,exclude)~/.aws'`."
    );
    f.check(&[
        ("git log -p", "reaches_denied_path"),
        // The built-in deny patterns are the scope's too: left out, or the repository could
        // be a home directory's.
        ("git log -p -- ':(top,exclude,glob)**/.env' ':(top,exclude,glob)**/*.pem'", "reaches_denied_path"),
        ("git log -p -- ':(top,exclude,glob)**/.env' ':(top,exclude,glob)**/*.pem' ':(top,exclude)~/.ssh' ':(top,exclude)~/.gnupg' ':(top,exclude)~/.aws'", "allow"),
        ("git log --oneline", "allow"),
    ]);
}

/// `REV:PATH` is relative to the work tree's top (unless `./` or `../`), a pathspec element
/// to the working directory unless its magic says `top`; an exclude names nothing read. With
/// a deny pattern for the top's `.env` only, from `src/`.
#[test]
fn i16_git_paths_are_read_as_git_reads_them() {
    let f = fx(
        &[&["add", ".env"], &["commit", "-qm", "env"]],
        &[(".env", "K=1\n")],
    );
    let s = scope(&format!(
        "paths:\n  read: [\"{p}/**\"]\n  deny: [\".env\"]\nbash_tools:\n  categories:\n    read_only: [\"git log\", \"git show\", \"git cat-file\"]\n",
        p = f.proj.display()
    ));
    let src = f.proj.join("src");
    let rows = [
        ("git show HEAD:.env", "path_denied"),
        ("git cat-file -p HEAD:.env", "path_denied"),
        ("git show :.env", "path_denied"),
        ("git show HEAD:../.env", "path_denied"),
        ("git log --stat -- :/.env", "path_denied"),
        ("git log --stat -- ':(top).env'", "path_denied"),
        ("git log --stat -- ../.env", "path_denied"),
        ("git log --stat -- .env", "allow"),
        ("git log --stat -- ':(top,exclude).env'", "allow"),
        ("git log -p -- ':(top,exclude).env'", "allow"),
        ("git log -p -- ':/!.env'", "allow"),
        ("git log -p -- ':!.env'", "reaches_denied_path"),
        ("git log -p -- .", "allow"),
        ("git show HEAD:a.rs", "allow"),
        ("git show HEAD:src/a.rs HEAD:./a.rs", "allow"),
        ("git show HEAD:./a.rs HEAD:.env", "path_denied"),
    ];
    let mut bad = Vec::new();
    for (cmd, want) in rows {
        let d = decide_in(&s, &src, None, Some(&f.proj), &[], cmd);
        let got = if d.allowed {
            "allow"
        } else {
            d.reason.unwrap_or("?")
        };
        if got != want {
            bad.push(format!("{cmd:?}: want {want}, got {got} ({})", d.message));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Past the walk's bounds (100,000 entries: here an ignored build directory of 100,100
/// files), `git add -A` asks git's own listing, which does not enter ignored directories.
/// Making the files takes from seconds to more than a minute on a busy file system: run with
/// `cargo test --test git_store -- --ignored`.
#[test]
#[ignore = "makes 100,100 files"]
fn i16_git_add_in_a_large_tree_asks_git() {
    let f = fx(
        &[&["add", ".gitignore"], &["commit", "-qm", "ignore"]],
        &[(".gitignore", "build/\n.env\n"), (".env", "K=1\n")],
    );
    for d in 0..100 {
        let dir = f.proj.join(format!("build/{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for k in 0..1001 {
            std::fs::write(dir.join(k.to_string()), "").unwrap();
        }
    }
    std::fs::write(f.proj.join("build/0/.env"), "K=2\n").unwrap();
    f.check(&[("git add -A", "allow"), ("git add .", "allow")]);
    std::fs::write(f.proj.join("src/k.pem"), "KEY\n").unwrap();
    assert_eq!(
        f.message("git add -A"),
        "`git add -A` reads /P/src/k.pem (deny pattern `**/*.pem`) into git's object store, from where any git command could print it: a denied file is never read. Add files by name, or leave it out with a pathspec: `git add -A -- ':(top,exclude,glob)**/*.pem'`."
    );
    f.check(&[("git add -A -- ':(top,exclude,glob)**/*.pem'", "allow")]);
}
