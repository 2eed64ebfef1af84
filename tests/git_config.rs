//! Git's executable configuration is never written by a tool (SECURITY.md, "Git's
//! configuration"): the files and directories git reads as configuration that names
//! programs it runs (`.git/config`, hooks, `.git/info`, `core.hooksPath`, included files,
//! the user's `~/.gitconfig`), the options and variables that make git use another
//! repository or configuration, on a real repository whose whole tree is writable, with
//! `**/.env` the only deny pattern (no `**/.git/**`). Each case goes through the JSON entry
//! points the binding uses.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use gptel_scope::emacs::api;
use gptel_scope::fs::tools::call;
use serde_json::{json, Value};

/// The commands of the cases, all listed; the project and the home directory writable.
const COMMANDS: &str = "cp, mv, tee, sed, ln, echo, printf, rm, touch, mkdir, install, dd, rsync, tar, git, patch, chmod, xargs, find, env";

struct Repo {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn git(dir: &Path, args: &[&str]) {
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
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository `p` holding `src/a.rs`, committed, and a home directory beside it. With
/// `hooks`, the repository's configuration names `.githooks` as its hooks directory and
/// includes `.gitconfig.shared` of the work tree, and the user's names `~/global-hooks`.
fn repo(hooks: bool) -> Repo {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = fs::canonicalize(tmp.path()).expect("canonical");
    let (root, home) = (base.join("p"), base.join("home"));
    for d in [root.join("src"), root.join("sub"), home.join(".config/git")] {
        fs::create_dir_all(d).expect("mkdir");
    }
    fs::write(root.join("src/a.rs"), "fn main() {}\n").expect("a.rs");
    git(&root, &["init", "-q"]);
    git(&root, &["add", "src/a.rs"]);
    git(&root, &["commit", "-qm", "a"]);
    if hooks {
        let mut config = fs::read_to_string(root.join(".git/config")).expect("config");
        config.push_str(
            "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig.shared\n",
        );
        fs::write(root.join(".git/config"), config).expect("config");
        fs::write(root.join(".gitconfig.shared"), "[user]\n\tname = t\n").expect("shared");
        fs::write(
            home.join(".gitconfig"),
            "[core]\n\thooksPath = ~/global-hooks\n",
        )
        .expect("user config");
    }
    Repo {
        _tmp: tmp,
        root,
        home,
    }
}

impl Repo {
    fn request(&self, extra: Value) -> Value {
        let scope = format!(
            "paths:\n  read: [\"${{project_root}}/**\", \"{h}/**\"]\n  write: [\"${{project_root}}/**\", \"{h}/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, head]\n    safe_write: [{COMMANDS}]\n",
            h = self.home.display()
        );
        let mut req = json!({
            "sources": [{"inline": scope, "name": "scope.yml"}],
            "directory": self.root,
            "project_root": self.root,
            "home": self.home,
        });
        for (k, v) in extra.as_object().expect("object") {
            req[k] = v.clone();
        }
        req
    }

    fn decide(&self, command: &str) -> Value {
        api::check_command(&self.request(json!({"command": command})).to_string())
            .expect("decision")
    }

    /// Every file of the repository's git directory and the home directory, with its bytes.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        fn walk(d: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
            for e in fs::read_dir(d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.push((p.clone(), fs::read(&p).unwrap_or_default()));
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.root.join(".git"), &mut out);
        walk(&self.home, &mut out);
        out.sort();
        out
    }
}

/// Every route to git's configuration is refused with `scope_document`, which no grant
/// lifts, and names what it protects.
#[test]
fn writes_to_git_configuration_are_refused() {
    let r = repo(true);
    let p = r.root.display().to_string();
    let h = r.home.display().to_string();
    // (command, the protected path the refusal names)
    let cases: Vec<(String, String)> = [
        (
            "echo '[core] fsmonitor = touch pwned' >> .git/config",
            "P/.git/config",
        ),
        (
            "printf '[core]\\n\\tpager = touch pwned\\n' > .git/config",
            "P/.git/config",
        ),
        ("tee -a .git/config < src/a.rs", "P/.git/config"),
        ("sed -i s/a/b/ .git/config", "P/.git/config"),
        ("cp src/a.rs .git/config", "P/.git/config"),
        ("mv src/a.rs .git/config", "P/.git/config"),
        ("ln -sf ../src/a.rs .git/config", "P/.git/config"),
        ("dd if=src/a.rs of=.git/config", "P/.git/config"),
        ("cd src && echo x >> ../.git/config", "P/.git/config"),
        (
            "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit",
            "P/.git/hooks",
        ),
        (
            "install -m 755 src/a.rs .git/hooks/post-checkout",
            "P/.git/hooks",
        ),
        ("chmod +x .git/hooks/pre-commit.sample", "P/.git/hooks"),
        ("mkdir -p .git/hooks", "P/.git/hooks"),
        ("cp src/a.rs .git/hooks", "P/.git/hooks"),
        ("echo '* diff=evil' >> .git/info/attributes", "P/.git/info"),
        (
            "echo /elsewhere/objects > .git/objects/info/alternates",
            "P/.git/objects/info",
        ),
        ("cp -r src/. .git/objects", "P/.git/objects"),
        ("echo /elsewhere > .git/commondir", "P/.git/commondir"),
        (
            "mkdir -p .git/modules/sub && echo x > .git/modules/sub/config",
            "P/.git/modules",
        ),
        (
            "echo x > .git/worktrees/w/config.worktree",
            "P/.git/worktrees",
        ),
        (
            "echo 'exec touch pwned' >> .git/rebase-merge/git-rebase-todo",
            "P/.git/rebase-merge",
        ),
        ("printf 'gitdir: /elsewhere\\n' > sub/.git", "P/sub/.git"),
        ("rm -rf .git", "P/.git"),
        ("mv .git old.git", "P/.git"),
        ("ln -s /elsewhere .git", "P/.git"),
        // What replaces or removes a directory holding the hooks directory.
        ("rm -r ../p", "P/.githooks"),
        ("tar xf x.tar", "P/.githooks"),
        ("find . -name '*.rs' -delete", "P/.githooks"),
        // The hooks directory the repository's configuration names, and what it includes.
        (
            "printf '#!/bin/sh\\ntouch pwned\\n' > .githooks/pre-commit",
            "P/.githooks",
        ),
        ("mkdir .githooks", "P/.githooks"),
        (
            "echo '[core] pager = touch pwned' >> .gitconfig.shared",
            "P/.gitconfig.shared",
        ),
        // The user's configuration and the hooks directory it names.
        (
            "echo '[core] pager = touch pwned' >> ~/.gitconfig",
            "H/.gitconfig",
        ),
        ("echo x > ~/.config/git/config", "H/.config/git"),
        (
            "printf '#!/bin/sh\\n' > ~/global-hooks/pre-push",
            "H/global-hooks",
        ),
        // Commands that write git's configuration themselves.
        ("git config core.fsmonitor 'touch pwned'", "P/.git/config"),
        ("git config set core.pager 'touch pwned'", "P/.git/config"),
        ("git config --unset core.hooksPath", "P/.git/config"),
        (
            "cd src && git config alias.st '!touch pwned'",
            "P/.git/config",
        ),
        (
            "git config --global core.pager 'touch pwned'",
            "H/.gitconfig",
        ),
        ("git config -f .git/config core.pager x", "P/.git/config"),
        ("git maintenance start", "H/.gitconfig"),
        ("git lfs install --local", "P/.git/config"),
        // Unseen paths over a write scope that holds it.
        ("find . -name '*.rs' | xargs sed -i s/a/b/", "P/.git/config"),
    ]
    .iter()
    // Only the placeholder at the start: a temporary directory's name may hold `H/`.
    .map(|(c, d)| {
        let doc = match (d.strip_prefix("P/"), d.strip_prefix("H/")) {
            (Some(rest), _) => format!("{p}/{rest}"),
            (None, Some(rest)) => format!("{h}/{rest}"),
            (None, None) => d.to_string(),
        };
        (c.to_string(), doc)
    })
    .collect();
    let before = r.snapshot();
    let mut bad = Vec::new();
    for (command, doc) in &cases {
        let v = r.decide(command);
        let message = v["message"].as_str().unwrap_or_default();
        // The refusal names the path written, or what protects it.
        let named = v["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .any(|x| {
                x["reason"] == "scope_document"
                    && x["resource"]
                        .as_str()
                        .is_some_and(|s| Path::new(s).starts_with(doc))
            });
        if v["allowed"] != json!(false) || v["reason"] != json!("scope_document") || !named {
            bad.push(format!(
                "{command}: {} {} (want {doc}) {message}",
                v["allowed"], v["reason"]
            ));
            continue;
        }
        for fragment in [
            "which is git's configuration",
            "git runs the programs it names",
            "ask the user to make the change",
        ] {
            if !message.contains(fragment) {
                bad.push(format!("{command}: no `{fragment}` in: {message}"));
            }
        }
        // No grant of any resource it names lifts it.
        let grants: Vec<Value> = v["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .map(|x| json!({"tool": "run_bash_command", "resource": x["resource"]}))
            .collect();
        let g = api::check_command(
            &r.request(json!({"command": command, "grants": grants}))
                .to_string(),
        )
        .expect("decision");
        if g["allowed"] != json!(false) {
            bad.push(format!("{command}: allowed with grants"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} cases:\n{}",
        bad.len(),
        cases.len(),
        bad.join("\n")
    );
    assert_eq!(r.snapshot(), before, "the judge only reads");
}

/// The refusal says what is protected and why, whichever way it is found.
#[test]
fn refusals_say_it_is_git_configuration() {
    let r = repo(true);
    let p = r.root.display().to_string();
    let tail = "git runs the programs it names (hooks, core.fsmonitor, pagers, diff and merge drivers, aliases), here and outside the sandbox the next time the user runs git in this repository. Git's configuration is never written by a tool, whatever the scope says: it is the user's to change. Do not try another route (git config, git -c, GIT_* variables, another repository or copy of it); if git needs a setting or a hook, ask the user to make the change.";
    let rows = [
        ("echo x >> .git/config", format!("`.git/config` (redirect) would write {p}/.git/config, which is git's configuration: {tail}")),
        (
            "echo x > .git/hooks/pre-commit",
            format!("`.git/hooks/pre-commit` (redirect) would write {p}/.git/hooks/pre-commit, which is git's configuration (it protects {p}/.git/hooks): {tail}"),
        ),
        (
            "echo x > .githooks/pre-commit",
            format!("`.githooks/pre-commit` (redirect) would write {p}/.githooks/pre-commit, which is git's configuration (the hooks directory {p}/.githooks that core.hooksPath names in {p}/.git/config): {tail}"),
        ),
        (
            "echo x >> .gitconfig.shared",
            format!("`.gitconfig.shared` (redirect) would write {p}/.gitconfig.shared, which is git's configuration ({p}/.gitconfig.shared, which {p}/.git/config includes): {tail}"),
        ),
        (
            "git config core.pager less",
            format!("`git config core.pager less` would write {p}/.git/config, which is git's configuration: {tail} (git config writes it; to commit under a name, set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL on the command instead)"),
        ),
    ];
    for (command, want) in rows {
        let v = r.decide(command);
        assert_eq!(v["reason"], json!("scope_document"), "{command}");
        assert_eq!(v["message"], json!(want), "{command}");
    }
    // A directory holding a repository, replaced or removed, or written into by a program
    // that does not name its files.
    let plain = repo(false);
    let q = plain.root.display().to_string();
    for (command, how) in [
        ("rm -r ../p", "would replace or remove what lies below it"),
        ("tar xf x.tar", "`tar` writes files it does not name into"),
    ] {
        let v = plain.decide(command);
        assert_eq!(v["reason"], json!("scope_document"), "{command}");
        assert_eq!(v["resource"], json!(format!("{q}/.git")), "{command}");
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!(
                "would write {q}/.git, which is git's configuration: "
            )) && message.contains(how),
            "{command}: {message}"
        );
    }
    // A scope document keeps its own message.
    let v = r.decide("echo x > sub/scope.yml");
    assert!(
        v["message"]
            .as_str()
            .unwrap_or_default()
            .contains("holds the rules this session runs under"),
        "{v}"
    );
}

/// apply_patch judges each file through the same matcher: git's configuration is refused,
/// and nothing is written.
#[test]
fn apply_patch_cannot_write_git_configuration() {
    let r = repo(true);
    let p = r.root.display().to_string();
    let before = r.snapshot();
    let patches = [
        ("add a hook", "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+touch pwned\n*** End Patch\n".to_string(), format!("{p}/.git/hooks")),
        ("update the configuration", "*** Begin Patch\n*** Update File: .git/config\n@@\n [core]\n+\tfsmonitor = touch pwned\n*** End Patch\n".to_string(), format!("{p}/.git/config")),
        ("a hooks directory of core.hooksPath", "*** Begin Patch\n*** Add File: .githooks/pre-commit\n+touch pwned\n*** End Patch\n".to_string(), format!("{p}/.githooks")),
        ("move onto the configuration", "*** Begin Patch\n*** Update File: src/a.rs\n*** Move to: .git/config\n@@\n-fn main() {}\n+[core]\n*** End Patch\n".to_string(), format!("{p}/.git/config")),
        ("a gitfile", "*** Begin Patch\n*** Add File: sub/.git\n+gitdir: /elsewhere\n*** End Patch\n".to_string(), format!("{p}/sub/.git")),
        ("alternates", "*** Begin Patch\n*** Add File: .git/objects/info/alternates\n+/elsewhere/objects\n*** End Patch\n".to_string(), format!("{p}/.git/objects/info")),
    ];
    for (what, patch, protected) in patches {
        let v = call(
            "apply_patch",
            &r.request(json!({"patch": patch})).to_string(),
        );
        assert_eq!(v["success"], json!(false), "{what}: {v}");
        assert_eq!(v["reason"], json!("scope_document"), "{what}: {v}");
        let text = v.to_string();
        assert!(
            text.contains("which is git's configuration") && text.contains(&protected),
            "{what}: {v}"
        );
    }
    assert_eq!(r.snapshot(), before);
    assert!(!r.root.join(".githooks").exists() && !r.root.join("sub/.git").exists());
    assert_eq!(
        fs::read_to_string(r.root.join("src/a.rs")).expect("a.rs"),
        "fn main() {}\n"
    );
    let v = call("apply_patch", &r.request(json!({"patch": "*** Begin Patch\n*** Add File: src/b.rs\n+fn b() {}\n*** End Patch\n"})).to_string());
    assert_eq!(v["success"], json!(true), "an ordinary file: {v}");
}

/// Options and variables that make git use another repository or configuration, and
/// subcommands that run a command of their own: refused, each with its reason and why.
#[test]
fn another_repository_or_configuration_is_refused() {
    let r = repo(false);
    let rows: &[(&str, &str, &str)] = &[
        ("git --git-dir=g status", "flag_not_allowed", "`git --git-dir` makes git use a repository other than the one it finds in the working directory"),
        ("git --git-dir g log -p", "flag_not_allowed", "`git --git-dir` makes git use a repository"),
        ("git --work-tree=.. status", "flag_not_allowed", "`git --work-tree` makes git use a repository"),
        ("git --bare log", "flag_not_allowed", "`git --bare` makes git use a repository"),
        ("git -c core.fsmonitor='touch pwned' status", "flag_not_allowed", "`git -c` sets git's configuration for this command"),
        ("git --config-env=core.pager=EVIL log", "flag_not_allowed", "`git --config-env` sets git's configuration"),
        ("git --exec-path=. status", "flag_not_allowed", "`git --exec-path` makes git run its commands (`git-log`, ...) from a directory of your choosing"),
        ("git init --template=t x", "flag_not_allowed", "`git --template` copies hooks and configuration"),
        ("git init --separate-git-dir=g x", "flag_not_allowed", "`git --separate-git-dir` makes git use a repository"),
        ("git clone -c core.hooksPath=h a b", "flag_not_allowed", "`git -c` sets git's configuration"),
        ("git clone --config core.fsmonitor=x a b", "flag_not_allowed", "`git --config` sets git's configuration"),
        ("git clone -u 'touch pwned' a b", "flag_not_allowed", "`git -u` can run other programs"),
        ("git clone --upload-pack='touch pwned' a b", "flag_not_allowed", "`git --upload-pack` can run other programs"),
        ("git clone --reference ../other a b", "flag_not_allowed", "`git --reference` points the new repository at another repository's object store"),
        ("git filter-branch --tree-filter 'touch pwned' HEAD", "flag_not_allowed", "`git --tree-filter` can run other programs"),
        ("GIT_DIR=g git status", "denied", "setting GIT_DIR can make git use another repository or configuration"),
        ("export GIT_WORK_TREE=..", "denied", "setting GIT_WORK_TREE can make git use another repository"),
        ("env GIT_EXTERNAL_DIFF='touch pwned' git diff", "denied", "setting GIT_EXTERNAL_DIFF"),
        ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log", "denied", "setting GIT_CONFIG_COUNT"),
        ("GIT_INDEX_FILE=i git add src", "denied", "setting GIT_INDEX_FILE"),
        ("GIT_TRACE=/tmp/trace git status", "denied", "setting GIT_TRACE"),
        ("GIT_EXEC_PATH=. git status", "denied", "setting GIT_EXEC_PATH"),
        ("git submodule foreach 'touch pwned'", "subcommand_denied", "`git submodule foreach` runs its command in every submodule"),
        ("git bisect run 'touch pwned'", "subcommand_denied", "`git bisect run` runs its command at every step"),
        ("git credential fill", "subcommand_denied", "`git credential` asks the credential helpers"),
    ];
    let mut bad = Vec::new();
    for (command, reason, fragment) in rows {
        let v = r.decide(command);
        let message = v["message"].as_str().unwrap_or_default();
        if v["allowed"] != json!(false)
            || v["reason"] != json!(reason)
            || !message.contains(fragment)
        {
            bad.push(format!(
                "{command}: {} {} {message}",
                v["allowed"], v["reason"]
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    let v = r.decide("GIT_DIR=g git status");
    assert_eq!(v["message"], json!("setting GIT_DIR can make git use another repository or configuration, or run other programs (git runs the programs a configuration names); it is not allowed. Only GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_AUTHOR_DATE, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL, GIT_COMMITTER_DATE, GIT_TERMINAL_PROMPT, GIT_OPTIONAL_LOCKS, GIT_MERGE_VERBOSITY, GIT_FLUSH may be set. Run the command without it."));
}

/// Everyday git and ordinary writes stay allowed: over-blocking is a defect too.
#[test]
fn everyday_git_and_ordinary_writes_are_allowed() {
    let r = repo(false);
    fs::write(r.root.join("fix.diff"), "").expect("diff");
    let commands = [
        "git status",
        "git diff",
        "git log --oneline",
        "git show --stat HEAD",
        "git add src/a.rs",
        "git add -u",
        "git commit -m msg",
        "git commit -am msg",
        "git checkout -- src/a.rs",
        "git restore src/a.rs",
        "git stash",
        "git switch -c topic",
        "git branch -d topic",
        "cd src && git apply ../fix.diff",
        "git apply --check fix.diff",
        "git config user.name",
        "git config --get core.hooksPath",
        "git config --list",
        "git config get user.email",
        "git config --global --get user.name",
        "git config --file=x.cfg a.b c",
        "git --exec-path",
        "git -C src status",
        "git init sub/new",
        "git remote add origin https://example.invalid/p.git",
        "GIT_AUTHOR_NAME=x GIT_AUTHOR_EMAIL=x@y git commit -m y",
        "GIT_OPTIONAL_LOCKS=0 git status",
        "GIT_TERMINAL_PROMPT=0 git status",
        "echo x > .gitignore",
        "echo x > src/config",
        "mkdir -p .github/workflows",
        "echo x > src/hooks.rs",
        "cp -r src src2",
        "rm -rf src2",
        "rm -f .git/index.lock",
        "cat .git/config",
        "echo x > ~/notes.txt",
    ];
    let mut bad = Vec::new();
    for command in commands {
        let v = r.decide(command);
        if v["allowed"] != json!(true) {
            bad.push(format!("{command}: {} {}", v["reason"], v["message"]));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A command outside every category that the user allowed once is judged as a listed one
/// is: `git config` allowed once still may not write git's configuration.
#[test]
fn a_command_allowed_once_still_cannot_write_git_configuration() {
    let r = repo(true);
    for (command, resource) in [
        ("git config core.pager 'touch pwned'", "git config"),
        ("tee .git/hooks/pre-commit < src/a.rs", "tee"),
    ] {
        let scope = "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls]\n";
        let req = |grants: Value| {
            json!({"sources": [{"inline": scope, "name": "scope.yml"}], "directory": r.root, "project_root": r.root,
                                          "home": r.home, "command": command, "grants": grants})
        };
        let v = api::check_command(&req(json!([])).to_string()).expect("decision");
        assert_eq!(
            (
                v["allowed"].clone(),
                v["reason"].clone(),
                v["resource"].clone()
            ),
            (json!(false), json!("command_not_allowed"), json!(resource)),
            "{command}"
        );
        let g = api::check_command(
            &req(json!([{"tool": "run_bash_command", "resource": resource}])).to_string(),
        )
        .expect("decision");
        assert_eq!(
            (g["allowed"].clone(), g["reason"].clone()),
            (json!(false), json!("scope_document")),
            "{command}: {}",
            g["message"]
        );
    }
}
