//! Shared fixtures for the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gptel_scope::policy::decide::{self, Ctx, Decision, Grant};
use gptel_scope::policy::paths::Matcher;
use gptel_scope::scope::Scope;

/// The corpus directory (`tests/corpus`: the attack and real-command corpora).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "gptel-scope-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(std::fs::canonicalize(&p).unwrap())
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Loads a scope document from YAML text over the built-in defaults (the real loader).
pub fn scope(yaml: &str) -> Scope {
    let loaded = gptel_scope::scope::config::load(&[gptel_scope::scope::config::Source::Inline {
        name: "test scope".into(),
        text: yaml.into(),
    }])
    .unwrap();
    loaded.scope.clone()
}

/// Decides `command` in `dir` under `scope`.
pub fn decide_in(
    scope: &Scope,
    dir: &Path,
    home: Option<&Path>,
    project_root: Option<&Path>,
    grants: &[Grant],
    command: &str,
) -> Decision {
    decide_protected(scope, dir, home, project_root, grants, &[], command)
}

/// [`decide_in`] with `protected` paths (scope documents, the trust list): never written.
pub fn decide_protected(
    scope: &Scope,
    dir: &Path,
    home: Option<&Path>,
    project_root: Option<&Path>,
    grants: &[Grant],
    protected: &[PathBuf],
    command: &str,
) -> Decision {
    let matcher = Matcher::new(&scope.paths, home, project_root)
        .unwrap()
        .with_protected(protected);
    let ctx = Ctx {
        scope,
        matcher: &matcher,
        home,
        grants,
        tool: "run_bash_command",
        project_root,
        masked: false,
    };
    decide::decide(&ctx, command, dir)
}

/// The attack fixture of corpus/README.md.
pub struct AttackFixture {
    pub tmp: TempDir,
}

impl AttackFixture {
    pub fn new() -> AttackFixture {
        let tmp = TempDir::new("attacks");
        let r = tmp.path();
        for d in [
            "repo/src",
            "repo/docs",
            "repo/scripts",
            "repo/bin",
            "home/.ssh",
            "repo-secrets",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        for f in [
            "repo/README.md",
            "repo/notes.txt",
            "repo/list.txt",
            "repo/files.txt",
            "repo/.env",
            "repo/src/main.c",
            "repo/docs/CHANGELOG.md",
            "repo/bin/tool",
            "home/.ssh/id_rsa",
            "home/.bashrc",
            "repo-secrets/creds.txt",
        ] {
            std::fs::write(r.join(f), "x\n").unwrap();
        }
        std::os::unix::fs::symlink(r.join("home"), r.join("repo/link_to_home")).unwrap();
        // The scope documents of the XSCOPE cases: the project's scope.yml, a link to it, and
        // the session's preset.md (protected as the document in effect would be).
        std::fs::write(r.join("repo/scope.yml"), "paths:\n  read: [\"/**\"]\n").unwrap();
        std::fs::write(r.join("repo/preset.md"), "---\npaths: {}\n---\n").unwrap();
        std::os::unix::fs::symlink("scope.yml", r.join("repo/cfg")).unwrap();
        // The user's git configuration names a hooks directory in the project (XGCFG cases).
        std::fs::write(r.join("home/.gitconfig"), GITCONFIG).unwrap();
        AttackFixture { tmp }
    }
    pub fn root(&self) -> &Path {
        self.tmp.path()
    }
    pub fn repo(&self) -> PathBuf {
        self.root().join("repo")
    }
    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }
    /// The paths protected in every decision of the corpus: the project's scope document
    /// and the session's preset.md.
    pub fn protected(&self) -> Vec<PathBuf> {
        vec![self.repo().join("scope.yml"), self.repo().join("preset.md")]
    }
    /// The scope of the `scope_document` cases: the write scope, with every command they use
    /// listed (so that only the scope document can refuse them).
    pub fn scope_text_all_writes(&self) -> String {
        format!(
            "paths:\n  read: [\"{root}/repo/**\"]\n  write: [\"{root}/repo/**\"]\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, head, grep]\n    safe_write: [{WRITERS}]\n  path_arguments: enforce\n",
            root = self.root().display()
        )
    }
    /// The corpus scope with @ROOT@ replaced; `write` adds the write pattern.
    pub fn scope_text(&self, write: bool) -> String {
        let text = std::fs::read_to_string(corpus_dir().join("attacks-scope.yml")).unwrap();
        let mut text = text.replace("@ROOT@", &self.root().to_string_lossy());
        if write {
            text = text.replace(
                "write: []",
                &format!("write: [\"{}/repo/**\"]", self.root().display()),
            );
        }
        text
    }
}

/// The fixture's `home/.gitconfig`: `core.hooksPath` is the project's `.githooks`.
pub const GITCONFIG: &str = "[core]\n\thooksPath = ~/../repo/.githooks\n";

/// Decodes the escapes of attacks.tsv.
pub fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = (0..4).filter_map(|_| it.next()).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The commands the `scope_document` cases run, all listed in [`AttackFixture::scope_text_all_writes`].
pub const WRITERS: &str = "printf, echo, sed, tee, cp, ln, install, dd, mkdir, touch, rsync, mv, rm, tar, git, sh, gzip, truncate, chmod, find, xargs, patch";

pub struct AttackCase {
    pub id: String,
    pub command: String,
    pub expected: String,
}

pub fn attack_cases() -> Vec<AttackCase> {
    attack_cases_from(&corpus_dir().join("attacks.tsv"))
}

/// The project's own corpus (`tests/corpus/attacks-extra.tsv`), same columns as attacks.tsv.
pub fn extra_corpus_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/attacks-extra.tsv")
}

/// Reads an attack corpus file in the attacks.tsv format.
pub fn attack_cases_from(path: &Path) -> Vec<AttackCase> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            AttackCase {
                id: f[0].to_string(),
                command: unescape(f[1]),
                expected: f[3].to_string(),
            }
        })
        .collect()
}

/// Judges `cases` whose id starts with `prefix` (all when empty) under the attack fixture's
/// read-only scope (and, for `needs_write`, its write scope); returns their number and the
/// misses. `gap` rows (attacks known to pass, documented in SECURITY.md) must still be
/// allowed, so that closing a gap forces the row to become `deny`.
pub fn attack_misses(cases: &[AttackCase], prefix: &str) -> (usize, Vec<String>) {
    let fx = AttackFixture::new();
    let ro = scope(&fx.scope_text(false));
    let rw = scope(&fx.scope_text(true));
    let all = scope(&fx.scope_text_all_writes());
    let protected = fx.protected();
    let home = fx.home();
    let mut misses = Vec::new();
    let mut n = 0;
    for c in cases.iter().filter(|c| c.id.starts_with(prefix)) {
        n += 1;
        let text = c.command.replace("@ROOT@", &fx.root().to_string_lossy());
        let d = decide_protected(&ro, &fx.repo(), Some(&home), None, &[], &protected, &text);
        match c.expected.as_str() {
            "scope_document" => {
                if d.allowed {
                    misses.push(format!("{} allowed in the read-only scope", c.id));
                }
                // Every command listed and the whole project writable: only the scope
                // document refuses it, and no grant may lift that.
                let w =
                    decide_protected(&all, &fx.repo(), Some(&home), None, &[], &protected, &text);
                if w.allowed || w.reason != Some("scope_document") {
                    misses.push(format!(
                        "{} with every write allowed: allowed={} reason={:?} {}",
                        c.id, w.allowed, w.reason, w.message
                    ));
                }
                if w.violations
                    .iter()
                    .any(|v| v.reason == "scope_document" && v.grantable)
                {
                    misses.push(format!("{}: a scope_document refusal is grantable", c.id));
                }
                let grants: Vec<Grant> = w
                    .violations
                    .iter()
                    .map(|v| Grant {
                        tool: "run_bash_command".into(),
                        resource: v.resource.clone(),
                    })
                    .collect();
                let g = decide_protected(
                    &all,
                    &fx.repo(),
                    Some(&home),
                    None,
                    &grants,
                    &protected,
                    &text,
                );
                if g.allowed {
                    misses.push(format!("{}: allowed by a grant of its own resources", c.id));
                }
            }
            "allow" if !d.allowed => misses.push(format!(
                "{} over-blocked: {:?} {}",
                c.id, d.reason, d.message
            )),
            "deny" if d.allowed => misses.push(format!("{} allowed: {:?}", c.id, text)),
            "needs_write" => {
                if d.allowed
                    || !matches!(
                        d.reason,
                        Some("directory_not_in_scope") | Some("path_not_in_scope")
                    )
                {
                    misses.push(format!(
                        "{} read-only: allowed={} reason={:?} {}",
                        c.id, d.allowed, d.reason, d.message
                    ));
                }
                let w =
                    decide_protected(&rw, &fx.repo(), Some(&home), None, &[], &protected, &text);
                if !w.allowed {
                    misses.push(format!(
                        "{} with write scope: {:?} {}",
                        c.id, w.reason, w.message
                    ));
                }
            }
            "gap" if !d.allowed => misses.push(format!(
                "{} is a documented gap but is now denied ({:?}): mark it deny",
                c.id, d.reason
            )),
            "allow" | "deny" | "gap" => {}
            other => misses.push(format!("{}: unknown expectation {other}", c.id)),
        }
    }
    (n, misses)
}
