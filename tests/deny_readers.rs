//! Deny means never read: commands that read a whole tree (`grep -r`, `rg`, `git grep`,
//! `find -exec`, `xargs` of names found at run time, `tar`, `cp -r`, ...) are refused with
//! `reaches_denied_path` when the tree holds an entry a deny pattern covers that the tool's
//! own exclusions do not skip; the exclusions that do are accepted. Decided on a real tree.

mod common;
use common::*;

use gptel_scope::policy::decide::{Decision, Grant};

/// A project holding `.env` (`K=1`), `sub/.env`, sources and docs; the scope reads the project,
/// denies `**/.env`, and lists the tree readers.
struct Project {
    tmp: TempDir,
    scope: gptel_scope::scope::Scope,
}

impl Project {
    fn new(with_env: bool) -> Project {
        let tmp = TempDir::new("deny-readers");
        let p = tmp.path().join("project");
        for d in ["src", "docs", "sub"] {
            std::fs::create_dir_all(p.join(d)).unwrap();
        }
        for (f, text) in [
            ("src/main.c", "// TODO\n"),
            ("docs/a.md", "KEY\n"),
            ("README.md", "TODO\n"),
        ] {
            std::fs::write(p.join(f), text).unwrap();
        }
        if with_env {
            std::fs::write(p.join(".env"), "K=1\n").unwrap();
            std::fs::write(p.join("sub/.env"), "K=2\n").unwrap();
        }
        let scope = scope(&format!(
            "paths:\n  read: [\"{r}/project/**\"]\n  write: [\"{r}/project/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [grep, egrep, find, cat, head, ls, rg, \"git grep\", du, tar, zip, stat, printf, echo, wc]\n    safe_write: [cp, rsync]\n",
            r = tmp.path().display()
        ));
        Project { tmp, scope }
    }

    fn dir(&self) -> std::path::PathBuf {
        self.tmp.path().join("project")
    }

    fn decide(&self, command: &str) -> Decision {
        decide_in(&self.scope, &self.dir(), None, None, &[], command)
    }

    fn decide_granted(&self, command: &str, grants: &[Grant]) -> Decision {
        decide_in(&self.scope, &self.dir(), None, None, grants, command)
    }
}

/// The rows of the issue's table that concern recursive readers, each refused with its
/// exact message.
#[test]
fn issue_16_table_rows_are_refused_with_their_message() {
    let p = Project::new(true);
    for (cmd, message) in [
        (
            "grep -rn KEY .",
            "`grep -rn KEY .` reads the files under ., among them the file .env and 1 more denied entry, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: exclude it: `grep --exclude=.env -rn KEY .`",
        ),
        (
            "grep -r . --include=.env",
            "`grep -r . --include=.env` reads the files under ., among them the file .env and 1 more denied entry, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: exclude it: `grep --exclude=.env -r . --include=.env --exclude=.env`",
        ),
        (
            "find . -name .env -exec cat {} \\;",
            "`find . -name .env -exec cat {} ;` runs a reader on what it finds under ., among them the file .env and 1 more denied entry, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: exclude it: `find . -not -name .env ...`",
        ),
        (
            "grep -rl TODO . | xargs cat",
            "`grep -rl TODO .` reads the files under ., among them the file .env and 1 more denied entry, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: exclude it: `grep --exclude=.env -rl TODO .`",
        ),
    ] {
        let d = p.decide(cmd);
        assert!(!d.allowed, "{cmd} allowed");
        assert_eq!(d.reason, Some("reaches_denied_path"), "{cmd}: {}", d.message);
        assert_eq!(d.message, message, "{cmd}");
        let v = d.violations.iter().find(|v| v.reason == "reaches_denied_path").unwrap();
        assert!(!v.grantable, "{cmd}");
        assert_eq!(v.resource, format!("{}/.env", p.dir().display()), "{cmd}");
    }
}

/// The exclusions each message proposes, and others that cover every denied entry, are
/// accepted; those that miss one are not.
#[test]
fn exclusions_in_the_tools_own_syntax() {
    let p = Project::new(true);
    for (cmd, allowed) in [
        ("grep --exclude=.env -rn KEY .", true),
        ("grep -rn --exclude='.env*' KEY .", true),
        ("grep -rn --exclude .env KEY .", true),
        ("grep -rn KEY . --exclude=.env", false),
        ("grep --exclude=.env -r . --include=.env", false),
        (
            "grep --exclude=.env -r . --include=.env --exclude=.env",
            true,
        ),
        ("grep -rn --include='*.md' KEY .", true),
        ("grep -rn --include='*.md' --include='*.c' KEY .", true),
        ("grep -rn --exclude-dir=sub --exclude=.env KEY .", true),
        ("grep -rn --exclude=.ENV KEY .", false),
        ("grep -rn --exclude-dir=.env KEY .", false),
        ("grep -rn --exclude='*.md' KEY .", false),
        ("grep -rn --exclude-dir=sub KEY .", false),
        ("grep -rn --exclude=\"$X\" KEY .", false),
        ("rg KEY -g '!.env'", true),
        ("rg KEY -g '*.md'", true),
        ("rg KEY -g '!/.env'", false),
        ("rg KEY", false),
        ("git grep KEY -- . ':!.env' ':!sub/.env'", true),
        ("git grep KEY -- . ':!*.env'", true),
        ("git grep KEY -- . ':!.env'", false),
        ("find . -not -name .env -exec cat {} +", true),
        ("find . -name '*.md' -exec cat {} +", true),
        (
            "find . -name sub -prune -o -type f -not -name .env -exec cat {} +",
            true,
        ),
        ("find . -maxdepth 1 -name '*.md' -exec head {} \\;", true),
        ("find . -type f -exec cat {} +", false),
        ("find . -name '*.md' -o -name .env -exec cat {} \\;", false),
        ("find . -type f -not -name .env | xargs cat", true),
        ("find . -name '*.c' -print0 | xargs -0 head -n 3", true),
        ("grep -rl --exclude=.env TODO . | xargs cat", true),
        ("find . | xargs cat", false),
        ("find . -name .env | xargs cat", false),
        ("find . -type f | xargs grep KEY", false),
        ("echo .env | xargs cat", false),
        ("xargs cat < README.md", false),
        ("find . -printf '%p\\n' | xargs cat", false),
        ("printf x | grep -l --label=.env x | xargs cat", false),
        ("grep -el . README.md | xargs cat", false),
        ("grep TODO README.md -l | xargs cat", false),
        ("grep -l TODO README.md docs/a.md | xargs cat", true),
        ("find -files0-from README.md -exec cat {} +", false),
        ("find . | xargs", true),
        ("find . -type f | xargs echo", true),
    ] {
        let d = p.decide(cmd);
        assert_eq!(d.allowed, allowed, "{cmd}: {:?} {}", d.reason, d.message);
        if !allowed {
            assert_eq!(
                d.reason,
                Some("reaches_denied_path"),
                "{cmd}: {}",
                d.message
            );
        }
    }
}

/// Every reader of the semantics table, with what it is refused for.
#[test]
fn every_tree_reader_is_refused() {
    let p = Project::new(true);
    for (cmd, message_starts) in [
        ("grep -R KEY", "`grep -R KEY` reads the files under ., among them the file .env"),
        ("cd sub && grep --recursive KEY src ..", "`grep --recursive KEY src ..` reads the files under .., among them the file .env"),
        ("grep -d recurse KEY .", "`grep -d recurse KEY .` reads the files under ."),
        ("grep --directories=recurse KEY .", "`grep --directories=recurse KEY .` reads the files under ."),
        ("egrep -r KEY sub", "`egrep -r KEY sub` reads the files under sub, among them the file .env, which"),
        ("grep -rn KEY ./", "`grep -rn KEY ./` reads the files under ./"),
        ("grep -rn KEY -- .", "`grep -rn KEY -- .` reads the files under ."),
        ("grep -rn KEY *", "`grep -rn KEY *` reads the files under sub, among them the file .env, which"),
        ("cd src && grep -rn KEY ..", "`grep -rn KEY ..` reads the files under .."),
        ("rg KEY", "`rg KEY` reads the files under ., among them the file .env"),
        ("rg -l KEY sub", "`rg -l KEY sub` reads the files under sub"),
        ("git grep KEY", "`git grep KEY` reads the files under ., among them the file .env"),
        ("git grep -e KEY -- sub", "`git grep -e KEY -- sub` reads the files under sub"),
        ("find . -exec cat {} +", "`find . -exec cat {} +` runs a reader on what it finds under ."),
        ("find sub -type f -execdir head {} \\;", "`find sub -type f -execdir head {} ;` runs a reader on what it finds under sub"),
        ("find . -name '*.env' -ok cat {} \\;", "`find . -name *.env -ok cat {} ;` runs a reader on what it finds under ."),
        ("find . -type d -exec grep -r KEY {} +", "`grep -r KEY {}` reads the files under ."),
        ("find . | xargs cat", "`xargs cat` reads the files its input names, which are produced at run time from ., among them the file .env"),
        ("echo .env | xargs head", "`xargs head` reads the files its input names, which are produced at run time from ."),
        ("tar cf out/a.tar .", "`tar cf out/a.tar .` reads the files under ., among them the file .env"),
        ("tar -czf out/a.tgz sub", "`tar -czf out/a.tgz sub` reads the files under sub"),
        ("zip -r out/a.zip .", "`zip -r out/a.zip .` reads the files under ."),
        ("cp -r . out/copy", "`cp -r . out/copy` reads the files under ."),
        ("cp -a sub out/copy", "`cp -a sub out/copy` reads the files under sub"),
        ("rsync -a . out/copy", "`rsync -a . out/copy` reads the files under ."),
        ("tar cf out/a.tar -C sub .", "`tar cf out/a.tar -C sub .` reads the files under ., among them the file .env"),
        ("cp -r -t out/copy src sub", "`cp -r -t out/copy src sub` reads the files under sub"),
        ("wc --files0-from=README.md", "`wc --files0-from=README.md` reads the files a list names, which may be any under ., among them the file .env"),
        ("tar cf out/a.tar -T README.md", "`tar cf out/a.tar -T README.md` reads the files a list names"),
        ("find . -name '*.md' | xargs -0a README.md cat", "`xargs -0a README.md cat` reads the files its input names"),
    ] {
        let d = p.decide(cmd);
        assert!(!d.allowed, "{cmd} allowed");
        assert_eq!(d.reason, Some("reaches_denied_path"), "{cmd}: {}", d.message);
        assert!(d.message.starts_with(message_starts), "{cmd}: {}", d.message);
    }
}

/// Names and metadata are not content: listing a tree that holds a denied entry is allowed,
/// and so are the copies and archives without recursion.
#[test]
fn names_only_and_non_recursive_forms_are_allowed() {
    let p = Project::new(true);
    for cmd in [
        "ls -R .",
        "ls -la",
        "du -a .",
        "find . -name .env",
        "find . -type f",
        "find . -exec ls -ld {} +",
        "find . -type f | xargs ls -l",
        "find . -type f -print0 | xargs -0 stat",
        "rg --files",
        "grep -n KEY README.md docs/a.md",
        "cp README.md out/r.md",
        "tar tf out/a.tar",
        "cat README.md | rg KEY",
        "grep -rn TODO src docs",
    ] {
        let d = p.decide(cmd);
        assert!(d.allowed, "{cmd}: {:?} {}", d.reason, d.message);
    }
}

/// A tree with no denied entry: the natural commands are allowed (after a bounded scan of
/// names) and keep no path evidence of the scan.
#[test]
fn benign_recursive_reads_stay_allowed() {
    let p = Project::new(false);
    for cmd in [
        "grep -rn TODO src",
        "grep -rn TODO .",
        "rg TODO",
        "find . -exec cat {} +",
        "find . | xargs cat",
        "git grep TODO",
        "tar cf out/a.tar .",
    ] {
        let d = p.decide(cmd);
        assert!(d.allowed, "{cmd}: {:?} {}", d.reason, d.message);
        assert!(d.paths.iter().all(|e| e.verdict != "denied"), "{cmd}");
    }
}

/// No grant lifts the refusal: the deny pattern is the user's "never".
#[test]
fn no_grant_lifts_reaches_denied_path() {
    let p = Project::new(true);
    let env = format!("{}/.env", p.dir().display());
    for resource in [env.as_str(), "grep -rn KEY .", "grep"] {
        let g = [Grant {
            tool: "run_bash_command".into(),
            resource: resource.into(),
        }];
        let d = p.decide_granted("grep -rn KEY .", &g);
        assert!(!d.allowed, "granted by {resource}");
        assert_eq!(d.reason, Some("reaches_denied_path"));
    }
}

/// The evidence names the denied entry found, its pattern and what would read it.
#[test]
fn evidence_names_the_denied_entry() {
    let p = Project::new(true);
    let d = p.decide("grep -rn KEY .");
    let e = d
        .paths
        .iter()
        .find(|e| e.verdict == "denied")
        .expect("a denied path in the evidence");
    assert_eq!(e.path, "./.env");
    assert_eq!(e.resolved, format!("{}/.env", p.dir().display()));
    assert_eq!(e.access, "read");
    assert_eq!(e.pattern.as_deref(), Some("**/.env"));
    assert_eq!(e.source, "under ., read by grep");
}

/// A root built at run time cannot be walked before it exists: refused (by the operand
/// checks), never allowed unseen.
#[test]
fn roots_built_at_run_time_are_refused() {
    let p = Project::new(true);
    for cmd in [
        "grep -rn KEY \"$PWD\"",
        "grep -rn KEY $(pwd)",
        "rg KEY \"$D\"",
        "find \"$PWD\" -exec cat {} +",
        "grep -rn KEY ${D:-.}",
    ] {
        let d = p.decide(cmd);
        assert!(!d.allowed, "{cmd} allowed");
    }
}

/// A denied directory: the tool's exclusions must skip the directory, or each entry in it
/// (looked at by name, within a bound) must be one the tool would not read.
#[test]
fn denied_directories_are_checked_entry_by_entry() {
    let tmp = TempDir::new("deny-readers-dir");
    let p = tmp.path().join("project");
    std::fs::create_dir_all(p.join("secrets/deep")).unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    for f in [
        "src/main.c",
        "README.md",
        "secrets/key.pem",
        "secrets/deep/notes.txt",
    ] {
        std::fs::write(p.join(f), "x\n").unwrap();
    }
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/project/**\"]\n  deny: [\"**/secrets/**\"]\nbash_tools:\n  categories:\n    read_only: [grep, find, cat, rg]\n",
        r = tmp.path().display()
    ));
    for (cmd, allowed, message_part) in [
        ("find . -name '*.c' -exec cat {} +", true, ""),
        ("find . -name '*.md' | xargs cat", true, ""),
        ("find . -name '*.txt' -exec cat {} +", false, "among them the file secrets/deep/notes.txt, which the deny pattern `**/secrets/**` covers"),
        ("find . -type f -exec cat {} +", false, "among them the file secrets/deep/notes.txt, which the deny pattern `**/secrets/**` covers. A deny pattern is never lifted, not even once: exclude it: `find . -name secrets -prune -o ...`"),
        ("find . -name secrets -prune -o -type f -exec cat {} +", true, ""),
        ("grep -rn --include='*.c' x .", true, ""),
        ("grep -rn --include='*.pem' x .", false, "among them the file secrets/key.pem, which"),
        ("grep -rn --exclude-dir=secrets x .", true, ""),
        ("grep -rn x .", false, "among them the file secrets/deep/notes.txt, which the deny pattern `**/secrets/**` covers. A deny pattern is never lifted, not even once: exclude it: `grep --exclude-dir=secrets -rn x .`"),
        ("rg x -g '!secrets'", true, ""),
        ("rg x -g '*.c'", true, ""),
    ] {
        let d = decide_in(&s, &p, None, None, &[], cmd);
        assert_eq!(d.allowed, allowed, "{cmd}: {}", d.message);
        if !allowed {
            assert_eq!(d.reason, Some("reaches_denied_path"), "{cmd}");
            assert!(d.message.contains(message_part), "{cmd}: {}", d.message);
        }
    }
}

/// Links the walk does not follow: a reader that follows them (`grep -R`, `find -L`, `zip`)
/// or opens what it is given (`find -exec cat`, `xargs cat`) reads what they lead to.
#[test]
fn links_to_denied_entries_are_followed_where_the_tool_follows_them() {
    let tmp = TempDir::new("deny-readers-links");
    let (p, vault) = (tmp.path().join("project"), tmp.path().join("vault"));
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::create_dir_all(&vault).unwrap();
    std::fs::write(p.join("src/a.c"), "x\n").unwrap();
    std::fs::write(vault.join(".env"), "K=1\n").unwrap();
    std::os::unix::fs::symlink(&vault, p.join("cfg")).unwrap();
    std::os::unix::fs::symlink(vault.join(".env"), p.join("envlink")).unwrap();
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/project/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [grep, find, cat, rg, zip]\n",
        r = tmp.path().display()
    ));
    for (cmd, refused_for) in [
        ("grep -rn x .", None),
        ("grep -Rn x .", Some("`grep -Rn x .` reads the files under ./cfg, among them the file .env, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: exclude it: `grep --exclude=.env -Rn x .`")),
        ("grep -Rn --exclude-dir=cfg x .", Some("among them the file envlink, which the deny pattern `**/.env` covers")),
        ("grep -Rn --exclude=envlink x .", Some("`grep -Rn --exclude=envlink x .` reads the files under ./cfg, among them the file .env, which")),
        ("grep -Rn --exclude=envlink --exclude-dir=cfg x .", None),
        ("rg x", None),
        ("rg -L x -g '!envlink'", Some("reads the files under ./cfg, among them the file .env")),
        ("find . -type f -exec cat {} +", None),
        ("find . -exec cat {} +", Some("among them the file envlink, which")),
        ("find -L . -name '*.c' -exec cat {} +", None),
        ("find -L . -not -name envlink -exec cat {} +", Some("runs a reader on what it finds under ./cfg, among them the file .env")),
        ("find . -type f | xargs cat", None),
        ("find . | xargs cat", Some("among them the file envlink, which")),
        ("zip -r out.zip .", Some("reads the files under ./cfg, among them the file .env, which the deny pattern `**/.env` covers. A deny pattern is never lifted, not even once: name the files it should take instead of the directory.")),
        ("zip -r out.zip . -x cfg", Some("reads the files under ./cfg")),
    ] {
        let d = decide_in(&s, &p, None, None, &[], cmd);
        match refused_for {
            None => assert_ne!(d.reason, Some("reaches_denied_path"), "{cmd}: {}", d.message),
            Some(part) => {
                assert_eq!(d.reason, Some("reaches_denied_path"), "{cmd}: {}", d.message);
                assert!(d.message.contains(part), "{cmd}: {}", d.message);
            }
        }
    }
    assert_ne!(
        decide_in(&s, &p, None, None, &[], "zip -ry out.zip .").reason,
        Some("reaches_denied_path")
    );
    // A followed link out of the read scope is a read out of it: refused as such (a grant
    // may lift that one), and with it granted the linked tree is still walked for denied entries.
    let d = decide_in(
        &s,
        &p,
        None,
        None,
        &[],
        "find -L . -name '*.c' -exec cat {} +",
    );
    assert_eq!(d.reason, Some("path_not_in_scope"), "{}", d.message);
    assert_eq!(
        d.resource.as_deref(),
        Some(vault.to_string_lossy().as_ref())
    );
    let g = [Grant {
        tool: "run_bash_command".into(),
        resource: vault.to_string_lossy().into_owned(),
    }];
    assert!(
        decide_in(
            &s,
            &p,
            None,
            None,
            &g,
            "find -L . -name '*.c' -exec cat {} +"
        )
        .allowed
    );
    let d = decide_in(
        &s,
        &p,
        None,
        None,
        &g,
        "find -L . -name '*.c' -o -name '.e*' -exec cat {} +",
    );
    assert_eq!(d.reason, Some("reaches_denied_path"), "{}", d.message);
}

/// A tree the engine cannot finish checking is refused, with how to narrow the command: here
/// a link back to its own directory, which `grep -R` would follow without end.
#[test]
fn a_tree_that_cannot_be_checked_is_refused() {
    let tmp = TempDir::new("deny-readers-loop");
    let p = tmp.path().join("project");
    std::fs::create_dir_all(p.join("src")).unwrap();
    std::fs::write(p.join("src/a.c"), "x\n").unwrap();
    std::os::unix::fs::symlink(&p, p.join("src/loop")).unwrap();
    let s = scope(&format!(
        "paths:\n  read: [\"{r}/project/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [grep]\n",
        r = tmp.path().display()
    ));
    assert!(decide_in(&s, &p, None, None, &[], "grep -rn x .").allowed);
    let d = decide_in(&s, &p, None, None, &[], "grep -Rn x .");
    assert_eq!(d.reason, Some("reaches_denied_path"));
    assert_eq!(
        d.message,
        "`grep -Rn x .` reads the files under ./src/loop/src/loop/src/loop/src/loop, and the engine could not check that tree for entries a deny pattern covers (more than 100000 entries, more than 200 ms, links too many or too deep, or a directory it cannot read): narrow the command to the directories it needs."
    );
}

/// Where the sandbox masks every denied entry (the request says `masked`), a whole-tree read
/// is allowed with a warning: the natural command works and reads the denied files as empty.
/// What the sandbox does not mask stays refused: a denied path named outright, and git's
/// object store.
#[test]
fn issue_16_masked_by_the_sandbox_tree_reads_are_allowed_with_a_warning() {
    let p = Project::new(true);
    let matcher = gptel_scope::policy::paths::Matcher::new(&p.scope.paths, None, None).unwrap();
    let decide = |command: &str, masked: bool| {
        let ctx = gptel_scope::policy::decide::Ctx {
            scope: &p.scope,
            matcher: &matcher,
            home: None,
            grants: &[],
            tool: "run_bash_command",
            project_root: None,
            masked,
        };
        gptel_scope::policy::decide::decide(&ctx, command, &p.dir())
    };
    for cmd in [
        "grep -rn KEY .",
        "find . -name .env -exec cat {} \\;",
        "grep -rl TODO . | xargs cat",
    ] {
        let refused = decide(cmd, false);
        assert_eq!(refused.reason, Some("reaches_denied_path"), "{cmd}");
        let d = decide(cmd, true);
        assert!(d.allowed, "{cmd}: {}", d.message);
        // The refusal's account of what is read, then what the sandbox does about it.
        let (account, _) = refused
            .message
            .split_once(" covers. ")
            .expect("refusal text");
        let them = if account.contains(" more denied entr") {
            "them, so they read as empty"
        } else {
            "it, so it reads as empty"
        };
        assert_eq!(
            d.warnings,
            vec![format!("{account} covers: the sandbox masks {them}")],
            "{cmd}"
        );
        assert!(d.paths.iter().any(|p| p.verdict == "masked"), "{cmd}");
    }
    let named = decide("cat .env", true);
    assert_eq!(named.reason, Some("path_denied"));
    // A clean tree: no warning.
    assert_eq!(
        decide("grep -rn TODO src", true).warnings,
        Vec::<String>::new()
    );
}
