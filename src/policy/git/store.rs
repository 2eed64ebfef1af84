//! Git's object store: whether a repository's index, HEAD tree or (bounded) history holds
//! a path that a deny pattern matches. `git log -p`, `git show`, `git diff --cached` and
//! their kin print files from there without naming them on the command line.
//!
//! How it reads the repository, which may be hostile (its `.git/config` and index are
//! written by whoever wrote the work tree):
//!
//! - The index is read here (`DIRC`, versions 2, 3 and 4, SHA-1 or SHA-256 names): about a
//!   hundred lines, no process, nothing in the repository runs. A split index (`link`
//!   extension), a sparse index (directory entries) or anything malformed is "cannot tell".
//!   (`gix-index` reads it too, but brings the gitoxide crates with it: minutes of build on
//!   two cores for a format that fits on a page.)
//! - The HEAD tree and the history are listed by `git` itself, plumbing only (`config`,
//!   `ls-tree`, `log --name-only`: no hooks, no textconv, no external diff, no pager, no
//!   signature check), with the system and global configurations off, `core.fsmonitor` and
//!   the untracked cache off, every transport refused (a partial clone fetches missing
//!   objects on demand), replace refs ignored (the walk sees the real commits, and the
//!   replacements through their refs), every other `GIT_*` variable removed, stdin closed,
//!   in a process group of its own, killed at the time limit.
//! - A partial clone (`extensions.partialClone`, a promisor remote or promisor packs) is
//!   "cannot tell": listing it could fetch, and its history is incomplete here.
//! - History is `git log --all --reflog` of the commits that add a path (merges against
//!   each parent, renames as additions, root commits in full): a path that was ever
//!   committed is added by one of them. Past [`Limits::commits`] such commits, the output
//!   limit or the time limit, the answer is "cannot tell".
//!
//! Callers refuse on [`Answer::CannotTell`].

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::policy::paths::{Access, Matcher, PathVerdict, Resolved};

/// The largest index read (a million entries is about 100 MB).
const MAX_INDEX_BYTES: u64 = 256 << 20;

/// The largest of git's one-line files read (a gitfile, `commondir`, `HEAD`).
const SMALL_FILE_BYTES: u64 = 4096;

/// Where in the store a path was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    Index,
    Head,
    History,
    /// Not in the store yet: a work-tree file `git add` would take in.
    WorkTree,
}

impl Where {
    /// For messages: "in the index", "in HEAD", "in history", "in the work tree".
    pub fn describe(self) -> &'static str {
        match self {
            Where::Index => "in the index",
            Where::Head => "in HEAD",
            Where::History => "in history",
            Where::WorkTree => "in the work tree",
        }
    }
}

/// Which parts of the store to look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    pub index: bool,
    pub head: bool,
    pub history: bool,
}

impl Look {
    pub const ALL: Look = Look {
        index: true,
        head: true,
        history: true,
    };
}

/// The bounds of a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Index entries read at most.
    pub index_entries: usize,
    /// Commits that add a path, listed at most.
    pub commits: usize,
    /// Bytes of one git command's output read at most.
    pub output_bytes: usize,
    /// Wall time of the whole look.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            index_entries: 1_000_000,
            commits: 20_000,
            output_bytes: 64 << 20,
            time: Duration::from_secs(3),
        }
    }
}

/// The answer, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// No part looked at holds a denied path.
    Clean,
    /// `path` (absolute: the work tree's top joined with the stored path), matched by the
    /// deny pattern `pattern`, is held `where_`.
    Holds {
        path: PathBuf,
        pattern: String,
        where_: Where,
    },
    /// The store could not be read completely.
    CannotTell { why: Why },
}

/// Why the store could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Why {
    #[error("{0} is not a git work tree (no readable .git)")]
    NoGitDir(PathBuf),
    #[error("cannot read {0}: {1}")]
    Unreadable(PathBuf, String),
    #[error("the repository is a partial clone ({0}): listing it could fetch, and its history is incomplete")]
    PartialClone(String),
    #[error("the repository's configuration moves what git reads ({0})")]
    Moved(String),
    #[error("the index has version {0}, which is not read here")]
    IndexVersion(u32),
    #[error("the index is malformed ({0})")]
    IndexMalformed(&'static str),
    #[error("the index is split (its entries are partly in a shared index)")]
    SplitIndex,
    #[error("the index is sparse (a directory entry stands for files it does not list)")]
    SparseIndex,
    #[error("the index holds more than {0} entries")]
    IndexEntries(usize),
    #[error("history holds more than {0} commits that add files")]
    HistoryCap(usize),
    #[error("listing took more than {0:?}")]
    Timeout(Duration),
    #[error("git printed more than {0} bytes")]
    OutputCap(usize),
    #[error("`git {0}` failed: {1}")]
    GitFailed(String, String),
}

/// Whether the repository whose work tree's top is `top` holds, in the parts `look` names, a
/// path the deny patterns of `matcher` match, other than those `exempt` says the command
/// leaves out (it is given the stored path, relative to the top). The index first (no
/// process), then HEAD, then history; the first denied path found is the answer.
pub fn look(
    top: &Path,
    matcher: &Matcher,
    look: Look,
    exempt: &dyn Fn(&[u8]) -> bool,
    limits: &Limits,
) -> Answer {
    let deadline = Instant::now() + limits.time;
    match look_inner(top, matcher, look, exempt, limits, deadline) {
        Ok(Some(h)) => h,
        Ok(None) => Answer::Clean,
        Err(why) => Answer::CannotTell { why },
    }
}

fn look_inner(
    top: &Path,
    matcher: &Matcher,
    look: Look,
    exempt: &dyn Fn(&[u8]) -> bool,
    limits: &Limits,
    deadline: Instant,
) -> Result<Option<Answer>, Why> {
    let repo = Repo::find(top, limits, deadline)?;
    let denied = |rel: &[u8], where_: Where| -> Option<Answer> {
        if exempt(rel) {
            return None;
        }
        let path = top.join(OsStr::from_bytes(rel));
        let r = Resolved {
            literal: path.clone(),
            target: path,
        };
        match matcher.check(&r, Access::Read) {
            PathVerdict::Denied(pattern) => Some(Answer::Holds {
                path: r.literal,
                pattern,
                where_,
            }),
            _ => None,
        }
    };
    if look.index {
        let index = repo.gitdir.join("index");
        // Without blocking, a regular file only, within a bound (an index of a million
        // entries is about 100 MB; a larger one cannot be told).
        match crate::bounded::read(&index, MAX_INDEX_BYTES).map(|(b, _)| b) {
            Ok(bytes) => {
                for p in index_paths(&bytes, repo.hash_len, limits.index_entries)? {
                    if let Some(h) = denied(&p, Where::Index) {
                        return Ok(Some(h));
                    }
                }
            }
            Err(crate::error::ReadError::NotFound { .. }) => {}
            Err(e) => return Err(Why::Unreadable(index, e.to_string())),
        }
    }
    // History first: every path of HEAD's tree was added by a commit it lists (a root commit
    // adds all of its tree, a merge is diffed against each parent), so HEAD is read only to
    // say where a path found is, or when history is not looked at.
    if look.history {
        let n = format!("-n{}", limits.commits.saturating_add(1));
        let out = repo.git(&[
            "log",
            "--all",
            "--reflog",
            "--diff-merges=separate",
            "--root",
            "--no-renames",
            "--no-relative",
            "--diff-filter=A",
            "--name-only",
            "-z",
            "--no-show-signature",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--format=%x01%H",
            &n,
        ])?;
        let mut commits = 0usize;
        for tok in out.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            // A commit's line is `\x01HASH`; its first name follows a newline. A name could
            // look like either: each token is also judged as it stands.
            if tok.first() == Some(&1) {
                commits += 1;
            }
            let stripped = tok.strip_prefix(b"\n").unwrap_or(tok);
            for p in [stripped, tok] {
                if denied(p, Where::History).is_some() {
                    let in_head =
                        look.head && head_listing(&repo)?.split(|&b| b == 0).any(|q| q == p);
                    return Ok(denied(
                        p,
                        if in_head { Where::Head } else { Where::History },
                    ));
                }
            }
        }
        if commits > limits.commits {
            return Err(Why::HistoryCap(limits.commits));
        }
        return Ok(None);
    }
    if look.head {
        for p in head_listing(&repo)?
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
        {
            if let Some(h) = denied(p, Where::Head) {
                return Ok(Some(h));
            }
        }
    }
    Ok(None)
}

/// The type of the object `rev` names (`git cat-file -t`): `blob`, `tree`, `commit`, `tag`.
pub fn object_type(top: &Path, rev: &str, limits: &Limits) -> Result<String, Why> {
    if rev.starts_with('-') || rev.is_empty() {
        return Err(Why::GitFailed(
            "cat-file".into(),
            format!("`{rev}` is not a revision"),
        ));
    }
    let repo = Repo::find(top, limits, Instant::now() + limits.time)?;
    let out = repo.git(&["cat-file", "-t", rev])?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Whether the object `name` (hexadecimal: its hash, or a prefix of it) is reached from the
/// refs, reflogs or index the look reads ([`look`]): a commit listed by `git rev-list --all
/// --reflog`, a tree or blob that such a commit holds (`git log --find-object`) or that the
/// index holds, a tag a ref names. A name that is no object names nothing read: `true`.
pub fn reachable(top: &Path, name: &str, limits: &Limits) -> Result<bool, Why> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Why::GitFailed(
            "rev-parse".into(),
            format!("`{name}` is not an object name"),
        ));
    }
    let repo = Repo::find(top, limits, Instant::now() + limits.time)?;
    let oid = match repo.git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{name}^{{object}}"),
    ]) {
        Ok(out) => String::from_utf8_lossy(&out).trim().to_string(),
        Err(Why::GitFailed(..)) => return Ok(true),
        Err(e) => return Err(e),
    };
    let kind = String::from_utf8_lossy(&repo.git(&["cat-file", "-t", &oid])?)
        .trim()
        .to_string();
    let listed = |out: &[u8]| {
        out.split(|&b| b == b'\n' || b == 0)
            .any(|l| l == oid.as_bytes())
    };
    match kind.as_str() {
        "commit" => Ok(listed(&repo.git(&["rev-list", "--all", "--reflog"])?)),
        "tag" => Ok(listed(
            &repo.git(&["for-each-ref", "--format=%(objectname)"])?,
        )),
        _ => {
            let find = format!("--find-object={oid}");
            if !repo
                .git(&[
                    "log",
                    "--all",
                    "--reflog",
                    "--format=%H",
                    "-n1",
                    "--no-ext-diff",
                    "--no-textconv",
                    &find,
                ])?
                .is_empty()
            {
                return Ok(true);
            }
            // The index: `MODE OID STAGE\tPATH`.
            let staged = repo.git(&["ls-files", "-s", "-z"])?;
            Ok(staged
                .split(|&b| b == 0)
                .any(|e| e.split(|&b| b == b' ').nth(1) == Some(oid.as_bytes())))
        }
    }
}

/// Which of the paths `rels` (relative to `top`) `git add` would take into the index:
/// all with `force`, else those `git check-ignore` does not report (tracked files never are).
pub fn would_add(
    top: &Path,
    rels: &[Vec<u8>],
    force: bool,
    limits: &Limits,
) -> Result<Vec<Vec<u8>>, Why> {
    if force || rels.is_empty() {
        return Ok(rels.to_vec());
    }
    let repo = Repo::find(top, limits, Instant::now() + limits.time)?;
    let mut input = Vec::new();
    for r in rels {
        input.extend_from_slice(r);
        input.push(0);
    }
    let ignored = match repo.git_with_input(&["check-ignore", "-z", "--stdin"], Some(input)) {
        Ok(out) => out,
        // Status 1: none is ignored.
        Err(Why::GitFailed(_, ref s)) if s == "exit status: 1" => Vec::new(),
        Err(e) => return Err(e),
    };
    let ignored: Vec<&[u8]> = ignored
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    Ok(rels
        .iter()
        .filter(|r| !ignored.contains(&r.as_slice()))
        .cloned()
        .collect())
}

/// Whether the work tree holds an untracked file a deny pattern matches that `git add -A`
/// would take in (`git ls-files --others`, with git's ignore rules unless `force`), other
/// than those `exempt` leaves out. Git's own listing: ignored directories are not entered.
pub fn untracked(
    top: &Path,
    matcher: &Matcher,
    force: bool,
    exempt: &dyn Fn(&[u8]) -> bool,
    limits: &Limits,
) -> Answer {
    let run = || -> Result<Option<Answer>, Why> {
        let repo = Repo::find(top, limits, Instant::now() + limits.time)?;
        let mut args = vec!["ls-files", "-z", "--others"];
        if !force {
            args.push("--exclude-standard");
        }
        let out = repo.git(&args)?;
        for rel in out
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty() && !exempt(p))
        {
            let path = top.join(OsStr::from_bytes(rel));
            let r = Resolved {
                literal: path.clone(),
                target: path,
            };
            if let PathVerdict::Denied(pattern) = matcher.check(&r, Access::Read) {
                return Ok(Some(Answer::Holds {
                    path: r.literal,
                    pattern,
                    where_: Where::WorkTree,
                }));
            }
        }
        Ok(None)
    };
    match run() {
        Ok(Some(h)) => h,
        Ok(None) => Answer::Clean,
        Err(why) => Answer::CannotTell { why },
    }
}

/// The paths of HEAD's tree, NUL-separated (none before the first commit).
fn head_listing(repo: &Repo<'_>) -> Result<Vec<u8>, Why> {
    match repo.git(&[
        "ls-tree",
        "-r",
        "-z",
        "--full-tree",
        "--name-only",
        "HEAD",
        "--",
    ]) {
        Ok(out) => Ok(out),
        Err(Why::GitFailed(..)) if repo.unborn()? => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// A repository found from its work tree's top.
struct Repo<'a> {
    top: &'a Path,
    gitdir: PathBuf,
    hash_len: usize,
    limits: &'a Limits,
    deadline: Instant,
}

impl<'a> Repo<'a> {
    /// The repository of `top`: `.git` as a directory, or a file naming it (`gitdir: X`, a
    /// linked work tree or a submodule). Refuses a partial clone; learns the hash size.
    fn find(top: &'a Path, limits: &'a Limits, deadline: Instant) -> Result<Repo<'a>, Why> {
        let dotgit = top.join(".git");
        let meta =
            std::fs::symlink_metadata(&dotgit).map_err(|_| Why::NoGitDir(top.to_path_buf()))?;
        let gitdir = if meta.is_dir() {
            dotgit
        } else if meta.is_file() {
            let text = crate::bounded::read(&dotgit, SMALL_FILE_BYTES)
                .map(|(b, _)| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| Why::Unreadable(dotgit.clone(), e.to_string()))?;
            let named = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("gitdir:"))
                .map(str::trim)
                .filter(|s| !s.is_empty());
            let named =
                named.ok_or_else(|| Why::Unreadable(dotgit.clone(), "no `gitdir:` line".into()))?;
            top.join(named)
        } else {
            return Err(Why::NoGitDir(top.to_path_buf()));
        };
        let mut repo = Repo {
            top,
            gitdir,
            hash_len: 20,
            limits,
            deadline,
        };
        // The shared part of a linked work tree holds the objects and the configuration.
        let common = match crate::bounded::read(&repo.gitdir.join("commondir"), SMALL_FILE_BYTES) {
            Ok((c, _)) => repo.gitdir.join(String::from_utf8_lossy(&c).trim()),
            Err(_) => repo.gitdir.clone(),
        };
        if let Ok(dir) = std::fs::read_dir(common.join("objects/pack")) {
            if dir
                .flatten()
                .any(|e| e.file_name().as_bytes().ends_with(b".promisor"))
            {
                return Err(Why::PartialClone("a promisor pack".into()));
            }
        }
        if paths_exist(&common.join("info/grafts")) {
            return Err(Why::Moved("info/grafts rewrites parents".into()));
        }
        let config = match repo.git(&[
            "config",
            "-z",
            "--get-regexp",
            r"^(extensions\..*|remote\..*\.promisor|core\.worktree)$",
        ]) {
            Ok(out) => out,
            // Status 1: no such key.
            Err(Why::GitFailed(_, ref s)) if s == "exit status: 1" => Vec::new(),
            Err(e) => return Err(e),
        };
        for entry in config.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let (key, value) = match entry.iter().position(|&b| b == b'\n') {
                Some(k) => (&entry[..k], &entry[k + 1..]),
                None => (entry, &b""[..]),
            };
            let key = String::from_utf8_lossy(key).to_ascii_lowercase();
            let value = String::from_utf8_lossy(value).trim().to_ascii_lowercase();
            if key == "core.worktree" {
                return Err(Why::Moved("core.worktree names another work tree".into()));
            }
            if key == "extensions.partialclone"
                || (key.ends_with(".promisor")
                    && !matches!(value.as_str(), "false" | "no" | "off" | "0"))
            {
                return Err(Why::PartialClone(key));
            }
            if key == "extensions.objectformat" {
                repo.hash_len = match value.as_str() {
                    "sha1" => 20,
                    "sha256" => 32,
                    _ => {
                        return Err(Why::GitFailed(
                            "config".into(),
                            format!("unknown object format {value}"),
                        ))
                    }
                };
            }
        }
        Ok(repo)
    }

    /// Whether HEAD names no commit yet (a new repository).
    fn unborn(&self) -> Result<bool, Why> {
        match self.git(&["rev-parse", "-q", "--verify", "HEAD^{commit}"]) {
            Ok(_) => Ok(false),
            Err(Why::GitFailed(_, ref s)) if s == "exit status: 1" => {
                // `HEAD` must still be a symbolic ref to a branch that does not exist.
                let head = crate::bounded::read(&self.gitdir.join("HEAD"), SMALL_FILE_BYTES)
                    .map(|(b, _)| b)
                    .unwrap_or_default();
                Ok(head.starts_with(b"ref: refs/heads/"))
            }
            Err(e) => Err(e),
        }
    }

    /// The output of `git ARGS`, run hardened (see the module's doc), or why not.
    fn git(&self, args: &[&str]) -> Result<Vec<u8>, Why> {
        self.git_with_input(args, None)
    }

    /// As [`Repo::git`], with `input` on git's stdin.
    fn git_with_input(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Vec<u8>, Why> {
        let what = args.first().copied().unwrap_or_default().to_string();
        let mut cmd = Command::new("git");
        cmd.args([
            "--no-optional-locks",
            "--no-pager",
            "--no-replace-objects",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.untrackedCache=false",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "protocol.allow=never",
            "-c",
            "core.sshCommand=false",
        ]);
        cmd.args(args);
        for (k, _) in std::env::vars_os() {
            if k.as_bytes().starts_with(b"GIT_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("GIT_DIR", &self.gitdir)
            .env("GIT_WORK_TREE", self.top)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ASKPASS", "false")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .current_dir(self.top)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            // Its own process group: a signal to Emacs's group does not reach it.
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| Why::GitFailed(what.clone(), e.to_string()))?;
        if let (Some(mut stdin), Some(input)) = (child.stdin.take(), input) {
            // Written aside, so that a full pipe either way never blocks; closed when done.
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&input);
            });
        }
        let over = Arc::new(AtomicBool::new(false));
        let reader = child.stdout.take().map(|out| {
            let (over, cap) = (Arc::clone(&over), self.limits.output_bytes);
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = out.take(cap as u64 + 1).read_to_end(&mut buf);
                if buf.len() > cap {
                    over.store(true, Ordering::SeqCst);
                }
                buf
            })
        });
        // git's plumbing here starts no other process (no pager, textconv, external diff or
        // signature check): ending git ends the command.
        let kill = |child: &mut std::process::Child| {
            let _ = child.kill();
            let _ = child.wait();
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) => {}
                Err(e) => {
                    kill(&mut child);
                    return Err(Why::GitFailed(what, e.to_string()));
                }
            }
            if over.load(Ordering::SeqCst) {
                kill(&mut child);
                return Err(Why::OutputCap(self.limits.output_bytes));
            }
            if Instant::now() >= self.deadline {
                kill(&mut child);
                return Err(Why::Timeout(self.limits.time));
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        // A process left holding the pipe would make the wait below run to the time limit.
        let out = match reader {
            Some(r) => {
                while !r.is_finished() {
                    if Instant::now() >= self.deadline {
                        return Err(Why::Timeout(self.limits.time));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                r.join().unwrap_or_default()
            }
            None => Vec::new(),
        };
        if over.load(Ordering::SeqCst) {
            return Err(Why::OutputCap(self.limits.output_bytes));
        }
        if !status.success() {
            return Err(Why::GitFailed(what, status.to_string()));
        }
        Ok(out)
    }
}

/// Whether the file `p` exists (not followed if a symlink).
fn paths_exist(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// The paths of an index file (`hash_len`: 20 for SHA-1, 32 for SHA-256), at most `max`.
pub fn index_paths(bytes: &[u8], hash_len: usize, max: usize) -> Result<Vec<Vec<u8>>, Why> {
    let be32 = |at: usize| -> Result<u32, Why> {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or(Why::IndexMalformed("truncated"))
    };
    if bytes.get(..4) != Some(b"DIRC") {
        return Err(Why::IndexMalformed("no DIRC signature"));
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return Err(Why::IndexVersion(version));
    }
    let count = usize::try_from(be32(8)?).map_err(|_| Why::IndexEntries(max))?;
    if count > max {
        return Err(Why::IndexEntries(max));
    }
    // What follows the entries and extensions: the checksum.
    let end = bytes
        .len()
        .checked_sub(hash_len)
        .filter(|&e| e >= 12)
        .ok_or(Why::IndexMalformed("truncated"))?;
    let mut paths: Vec<Vec<u8>> = Vec::with_capacity(count.min(bytes.len() / 62));
    let mut at = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    let mut empty_name = false;
    // Stat data (40 bytes), the object name, the flags.
    let fixed = 40 + hash_len + 2;
    for _ in 0..count {
        let mode = be32(at + 24)?;
        let flags_at = at + 40 + hash_len;
        let flags = bytes
            .get(flags_at..flags_at + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or(Why::IndexMalformed("truncated"))?;
        let extended = flags & 0x4000 != 0;
        if extended && version < 3 {
            return Err(Why::IndexMalformed("extended flag in version 2"));
        }
        let mut name_at = flags_at + 2 + if extended { 2 } else { 0 };
        let path = if version == 4 {
            // N: bytes to remove from the previous name's end (the OFS_DELTA varint).
            let mut c = *bytes.get(name_at).ok_or(Why::IndexMalformed("truncated"))?;
            name_at += 1;
            let mut n = usize::from(c & 0x7f);
            while c & 0x80 != 0 {
                c = *bytes.get(name_at).ok_or(Why::IndexMalformed("truncated"))?;
                name_at += 1;
                n = n
                    .checked_add(1)
                    .and_then(|v| v.checked_mul(128))
                    .map(|v| v + usize::from(c & 0x7f))
                    .ok_or(Why::IndexMalformed("prefix length"))?;
            }
            let keep = prev
                .len()
                .checked_sub(n)
                .ok_or(Why::IndexMalformed("prefix longer than the previous name"))?;
            let len = memchr::memchr(0, bytes.get(name_at..end).unwrap_or_default())
                .ok_or(Why::IndexMalformed("unterminated name"))?;
            let mut p = prev[..keep].to_vec();
            p.extend_from_slice(&bytes[name_at..name_at + len]);
            at = name_at + len + 1;
            p
        } else {
            let len = memchr::memchr(0, bytes.get(name_at..end).unwrap_or_default())
                .ok_or(Why::IndexMalformed("unterminated name"))?;
            let p = bytes[name_at..name_at + len].to_vec();
            // Padded with 1 to 8 NULs to a multiple of eight bytes.
            let size = (fixed + if extended { 2 } else { 0 } + len + 8) & !7;
            at += size;
            p
        };
        if at > end {
            return Err(Why::IndexMalformed("entries run past the end"));
        }
        if mode & 0o170000 == 0o040000 || path.last() == Some(&b'/') {
            return Err(Why::SparseIndex);
        }
        // An empty name stands for an entry of the shared index (split index, below).
        empty_name |= path.is_empty();
        prev.clone_from(&path);
        paths.push(path);
    }
    // Extensions: a split index keeps entries elsewhere.
    while at < end {
        let sig = bytes
            .get(at..at + 4)
            .ok_or(Why::IndexMalformed("truncated extension"))?;
        if sig == b"link" {
            return Err(Why::SplitIndex);
        }
        let size =
            usize::try_from(be32(at + 4)?).map_err(|_| Why::IndexMalformed("extension size"))?;
        at = at
            .checked_add(8)
            .and_then(|a| a.checked_add(size))
            .ok_or(Why::IndexMalformed("extension size"))?;
    }
    if at != end {
        return Err(Why::IndexMalformed("extensions run past the end"));
    }
    if empty_name {
        return Err(Why::IndexMalformed("empty name"));
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::Paths;

    /// A repository made with the git binary, identity and defaults pinned.
    struct Repo0 {
        _dir: tempfile::TempDir,
        top: PathBuf,
    }

    impl Repo0 {
        fn new() -> Repo0 {
            let dir = tempfile::tempdir().unwrap();
            let top = dir.path().join("r");
            std::fs::create_dir(&top).unwrap();
            let r = Repo0 { _dir: dir, top };
            r.git(&["init", "-q", "-b", "main"]);
            r
        }

        fn git(&self, args: &[&str]) -> String {
            let out = Command::new("git")
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .current_dir(&self.top)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        }

        fn write(&self, rel: &str, text: &str) {
            let p = self.top.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        fn commit(&self, msg: &str) {
            self.git(&["commit", "-q", "--allow-empty", "-m", msg]);
        }

        fn matcher(&self) -> Matcher {
            let paths = Paths {
                read: vec![format!("{}/**", self.top.display())],
                write: vec![],
                deny: vec!["**/.env".into(), "**/*.pem".into()],
            };
            Matcher::new(&paths, None, Some(&self.top)).unwrap()
        }

        fn look(&self, l: Look) -> Answer {
            look(
                &self.top,
                &self.matcher(),
                l,
                &|_| false,
                &Limits::default(),
            )
        }

        fn holds(&self, rel: &str, pattern: &str, where_: Where) -> Answer {
            Answer::Holds {
                path: self.top.join(rel),
                pattern: pattern.into(),
                where_,
            }
        }
    }

    #[test]
    fn clean_repository_is_clean() {
        let r = Repo0::new();
        assert_eq!(r.look(Look::ALL), Answer::Clean, "unborn, empty");
        r.write("src/a.rs", "x");
        r.write(".env.example", "K=");
        r.git(&["add", "-A"]);
        assert_eq!(r.look(Look::ALL), Answer::Clean, "unborn, staged");
        r.commit("1");
        assert_eq!(r.look(Look::ALL), Answer::Clean);
    }

    #[test]
    fn i16_committed_then_deleted_env_is_in_history() {
        let r = Repo0::new();
        r.write("a", "x");
        r.write(".env", "K=1");
        r.git(&["add", "-A"]);
        r.commit("1");
        r.git(&["rm", "-q", ".env"]);
        r.commit("2");
        assert_eq!(
            r.look(Look::ALL),
            r.holds(".env", "**/.env", Where::History)
        );
        assert_eq!(
            r.look(Look {
                index: true,
                head: true,
                history: false
            }),
            Answer::Clean
        );
    }

    #[test]
    fn i16_staged_only_env_is_in_the_index() {
        let r = Repo0::new();
        r.write("a", "x");
        r.git(&["add", "a"]);
        r.commit("1");
        r.write("deep/er/.env", "K=1");
        r.git(&["add", "deep/er/.env"]);
        assert_eq!(
            r.look(Look::ALL),
            r.holds("deep/er/.env", "**/.env", Where::Index)
        );
        assert_eq!(
            r.look(Look {
                index: false,
                head: true,
                history: true
            }),
            Answer::Clean
        );
    }

    #[test]
    fn committed_then_unstaged_env_is_in_head() {
        let r = Repo0::new();
        r.write("k.pem", "K");
        r.git(&["add", "k.pem"]);
        r.commit("1");
        r.git(&["rm", "-q", "--cached", "k.pem"]);
        assert_eq!(r.look(Look::ALL), r.holds("k.pem", "**/*.pem", Where::Head));
    }

    /// Renamed into a denied name and removed again: the rename is an addition.
    #[test]
    fn renamed_and_merged_additions_are_in_history() {
        let r = Repo0::new();
        r.write("x", "K=1");
        r.git(&["add", "x"]);
        r.commit("1");
        r.git(&["mv", "x", ".env"]);
        r.commit("2");
        r.git(&["rm", "-q", ".env"]);
        r.commit("3");
        assert_eq!(
            r.look(Look {
                index: false,
                head: false,
                history: true
            }),
            r.holds(".env", "**/.env", Where::History)
        );

        // Added only by a merge commit (an "evil merge"), on a branch since deleted.
        let r = Repo0::new();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.commit("1");
        r.git(&["checkout", "-q", "-b", "side"]);
        r.write("b", "1");
        r.git(&["add", "b"]);
        r.commit("2");
        r.git(&["checkout", "-q", "main"]);
        r.write("c", "1");
        r.git(&["add", "c"]);
        r.commit("3");
        r.git(&["merge", "-q", "--no-commit", "side"]);
        r.write("s/.env", "K=1");
        r.git(&["add", "s/.env"]);
        r.commit("merge");
        r.git(&["rm", "-q", "s/.env"]);
        r.commit("4");
        r.git(&["branch", "-q", "-D", "side"]);
        assert_eq!(
            r.look(Look::ALL),
            r.holds("s/.env", "**/.env", Where::History)
        );
    }

    /// A commit reachable only from the reflog (its branch reset away) and a stash.
    #[test]
    fn reflog_and_stash_are_in_history() {
        let r = Repo0::new();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.commit("1");
        r.write(".env", "K=1");
        r.git(&["add", ".env"]);
        r.commit("2");
        r.git(&["reset", "-q", "--hard", "HEAD~1"]);
        assert_eq!(
            r.look(Look::ALL),
            r.holds(".env", "**/.env", Where::History)
        );

        let r = Repo0::new();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.commit("1");
        r.write("k.pem", "K");
        r.git(&["add", "k.pem"]);
        r.git(&["stash", "-q"]);
        assert_eq!(
            r.look(Look::ALL),
            r.holds("k.pem", "**/*.pem", Where::History)
        );
    }

    /// The index read here lists what `git ls-files` lists, in versions 2, 3 (an
    /// intent-to-add entry sets the extended flag) and 4 (prefix-compressed names).
    #[test]
    fn index_versions_2_3_4_read_as_git_lists_them() {
        let r = Repo0::new();
        let names = [
            "a",
            "ab/c",
            "ab/cd/e",
            "ab/cd/ef",
            "abc",
            "b/.env",
            "b/x/y/z/very-long-name-",
            "b/x/y/z/very-long-name-2",
            "é/ü",
        ];
        for n in names {
            r.write(n, n);
        }
        r.git(&["add", "-A"]);
        r.commit("1");
        r.write("new/intent", "x");
        r.git(&["add", "-N", "new/intent"]);
        for v in ["2", "3", "4"] {
            if v == "2" {
                // Version 2 cannot hold an intent-to-add entry.
                r.git(&["rm", "-q", "--cached", "new/intent"]);
            } else if v == "3" {
                r.git(&["add", "-N", "new/intent"]);
            }
            r.git(&["update-index", "--index-version", v]);
            let bytes = std::fs::read(r.top.join(".git/index")).unwrap();
            assert_eq!(&bytes[4..8], &[0, 0, 0, v.parse::<u8>().unwrap()]);
            let ours: Vec<String> = index_paths(&bytes, 20, 1000)
                .unwrap()
                .into_iter()
                .map(|p| String::from_utf8(p).unwrap())
                .collect();
            let theirs: Vec<String> = r
                .git(&["-c", "core.quotePath=false", "ls-files", "-z"])
                .split('\0')
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            assert_eq!(ours, theirs, "version {v}");
            assert_eq!(
                r.look(Look {
                    index: true,
                    head: false,
                    history: false
                }),
                r.holds("b/.env", "**/.env", Where::Index),
                "version {v}"
            );
        }
        assert_eq!(
            index_paths(&std::fs::read(r.top.join(".git/index")).unwrap(), 20, 3),
            Err(Why::IndexEntries(3))
        );
    }

    /// A SHA-256 repository: object names of 32 bytes in the index.
    #[test]
    fn sha256_repository_is_read() {
        let r = Repo0::new();
        std::fs::remove_dir_all(r.top.join(".git")).unwrap();
        r.git(&["init", "-q", "--object-format=sha256"]);
        r.write("a/b/k.pem", "K");
        r.write("a/c", "1");
        r.git(&["add", "-A"]);
        assert_eq!(
            r.look(Look {
                index: true,
                head: false,
                history: false
            }),
            r.holds("a/b/k.pem", "**/*.pem", Where::Index)
        );
        r.commit("1");
        r.git(&["rm", "-q", "--cached", "a/b/k.pem"]);
        assert_eq!(
            r.look(Look::ALL),
            r.holds("a/b/k.pem", "**/*.pem", Where::Head)
        );
    }

    #[test]
    fn malformed_indexes_cannot_tell() {
        let mut v5 = b"DIRC\0\0\0\x05\0\0\0\0".to_vec();
        v5.extend([0u8; 20]);
        let mut v2_short = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
        v2_short.extend([0u8; 30]);
        let mut empty = b"DIRC\0\0\0\x02\0\0\0\0".to_vec();
        empty.extend([0u8; 20]);
        let mut link = b"DIRC\0\0\0\x02\0\0\0\0link\0\0\0\0".to_vec();
        link.extend([0u8; 20]);
        type Row<'b> = (&'b [u8], Result<Vec<Vec<u8>>, Why>);
        let rows: [Row<'_>; 6] = [
            (b"", Err(Why::IndexMalformed("no DIRC signature"))),
            (
                b"XXXX\0\0\0\x02\0\0\0\0",
                Err(Why::IndexMalformed("no DIRC signature")),
            ),
            (&v5, Err(Why::IndexVersion(5))),
            (&v2_short, Err(Why::IndexMalformed("truncated"))),
            (&empty, Ok(vec![])),
            (&link, Err(Why::SplitIndex)),
        ];
        for (bytes, want) in rows {
            assert_eq!(index_paths(bytes, 20, 100), want, "{bytes:?}");
        }
    }

    /// A configuration or a file that makes git read another work tree or other parents.
    #[test]
    fn moved_work_tree_and_grafts_cannot_tell() {
        let r = Repo0::new();
        r.git(&["config", "core.worktree", "/elsewhere"]);
        assert_eq!(
            r.look(Look::ALL),
            Answer::CannotTell {
                why: Why::Moved("core.worktree names another work tree".into())
            }
        );
        let r = Repo0::new();
        let inc = r.top.parent().unwrap().join("inc");
        std::fs::write(&inc, "[core]\n\tworktree = /elsewhere\n").unwrap();
        r.git(&["config", "include.path", inc.to_str().unwrap()]);
        assert_eq!(
            r.look(Look::ALL),
            Answer::CannotTell {
                why: Why::Moved("core.worktree names another work tree".into())
            },
            "through an include"
        );
        let r = Repo0::new();
        std::fs::create_dir_all(r.top.join(".git/info")).unwrap();
        std::fs::write(r.top.join(".git/info/grafts"), "").unwrap();
        assert_eq!(
            r.look(Look::ALL),
            Answer::CannotTell {
                why: Why::Moved("info/grafts rewrites parents".into())
            }
        );
    }

    #[test]
    fn split_index_cannot_tell() {
        let r = Repo0::new();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.git(&["update-index", "--split-index"]);
        assert_eq!(
            r.look(Look::ALL),
            Answer::CannotTell {
                why: Why::SplitIndex
            }
        );
    }

    #[test]
    fn partial_clone_cannot_tell() {
        let rows = [
            (
                vec!["config", "extensions.partialClone", "origin"],
                "extensions.partialclone",
            ),
            (
                vec!["config", "remote.origin.promisor", "true"],
                "remote.origin.promisor",
            ),
        ];
        for (set, key) in rows {
            let r = Repo0::new();
            r.git(&set);
            assert_eq!(
                r.look(Look::ALL),
                Answer::CannotTell {
                    why: Why::PartialClone(key.into())
                }
            );
        }
        let r = Repo0::new();
        std::fs::write(r.top.join(".git/objects/pack/pack-1.promisor"), "").unwrap();
        assert_eq!(
            r.look(Look::ALL),
            Answer::CannotTell {
                why: Why::PartialClone("a promisor pack".into())
            }
        );
    }

    /// A repository's configuration names programs git would run for other commands: none
    /// runs during a look.
    #[test]
    fn hostile_configuration_runs_nothing() {
        let r = Repo0::new();
        let marker = r.top.parent().unwrap().join("ran");
        let script = r.top.parent().unwrap().join("evil.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho \"$0 $*\" >> {}\n", marker.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let s = script.to_str().unwrap();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.commit("1");
        for (k, v) in [
            ("core.fsmonitor", s),
            ("core.pager", s),
            ("diff.external", s),
            ("gpg.program", s),
            ("log.showSignature", "true"),
            ("core.sshCommand", s),
            ("core.askPass", s),
            ("diff.renames", "true"),
            ("log.showRoot", "false"),
            ("diff.relative", "true"),
            ("log.diffMerges", "first-parent"),
            ("core.hooksPath", r.top.parent().unwrap().to_str().unwrap()),
        ] {
            r.git(&["config", k, v]);
        }
        for hook in [
            "post-index-change",
            "reference-transaction",
            "post-checkout",
        ] {
            std::fs::copy(&script, r.top.join(".git/hooks").join(hook)).unwrap();
            std::fs::copy(&script, r.top.parent().unwrap().join(hook)).unwrap();
        }
        r.write(".env", "K=1");
        std::fs::remove_file(&marker).ok();
        assert_eq!(r.look(Look::ALL), Answer::Clean);
        assert!(!marker.exists(), "{:?}", std::fs::read_to_string(&marker));
        // The settings that would hide a root commit's or a renamed file's addition do not.
        let r2 = Repo0::new();
        r2.git(&["config", "log.showRoot", "false"]);
        r2.git(&["config", "diff.renames", "true"]);
        r2.write(".env", "K=1");
        r2.git(&["add", ".env"]);
        r2.commit("1");
        r2.git(&["rm", "-q", ".env"]);
        r2.commit("2");
        assert_eq!(
            r2.look(Look::ALL),
            r2.holds(".env", "**/.env", Where::History)
        );
    }

    #[test]
    fn limits_give_cannot_tell() {
        let r = Repo0::new();
        for k in 0..3 {
            r.write(&format!("f{k}"), "1");
            r.git(&["add", "-A"]);
            r.commit(&k.to_string());
        }
        let m = r.matcher();
        let rows = [
            (
                Limits {
                    commits: 2,
                    ..Limits::default()
                },
                Answer::CannotTell {
                    why: Why::HistoryCap(2),
                },
            ),
            (
                Limits {
                    commits: 3,
                    ..Limits::default()
                },
                Answer::Clean,
            ),
            (
                Limits {
                    output_bytes: 10,
                    ..Limits::default()
                },
                Answer::CannotTell {
                    why: Why::OutputCap(10),
                },
            ),
            (
                Limits {
                    index_entries: 2,
                    ..Limits::default()
                },
                Answer::CannotTell {
                    why: Why::IndexEntries(2),
                },
            ),
            (
                Limits {
                    time: Duration::ZERO,
                    ..Limits::default()
                },
                Answer::CannotTell {
                    why: Why::Timeout(Duration::ZERO),
                },
            ),
        ];
        for (limits, want) in rows {
            assert_eq!(
                look(&r.top, &m, Look::ALL, &|_| false, &limits),
                want,
                "{limits:?}"
            );
        }
    }

    #[test]
    fn not_a_repository_cannot_tell() {
        let d = tempfile::tempdir().unwrap();
        let paths = Paths {
            read: vec![],
            write: vec![],
            deny: vec!["**/.env".into()],
        };
        let m = Matcher::new(&paths, None, None).unwrap();
        assert_eq!(
            look(d.path(), &m, Look::ALL, &|_| false, &Limits::default()),
            Answer::CannotTell {
                why: Why::NoGitDir(d.path().to_path_buf())
            }
        );
    }

    #[test]
    fn exempt_paths_are_skipped() {
        let r = Repo0::new();
        r.write(".env", "K=1");
        r.write("a/k.pem", "K");
        r.git(&["add", "-A"]);
        r.commit("1");
        let m = r.matcher();
        let skip_env = |p: &[u8]| p == b".env";
        assert_eq!(
            look(&r.top, &m, Look::ALL, &skip_env, &Limits::default()),
            r.holds("a/k.pem", "**/*.pem", Where::Index)
        );
        let skip_both = |p: &[u8]| p == b".env" || p.ends_with(b".pem");
        assert_eq!(
            look(&r.top, &m, Look::ALL, &skip_both, &Limits::default()),
            Answer::Clean
        );
    }

    #[test]
    fn object_types_and_what_add_would_take() {
        let r = Repo0::new();
        r.write(".gitignore", ".env\n");
        r.write(".env", "K=1");
        r.write("x.pem", "K");
        r.git(&["add", ".gitignore", "x.pem"]);
        r.commit("1");
        let l = Limits::default();
        let rows = [
            ("HEAD", Ok("commit")),
            ("HEAD^{tree}", Ok("tree")),
            ("HEAD:x.pem", Ok("blob")),
            ("-p", Err(())),
            ("nosuch", Err(())),
        ];
        for (rev, want) in rows {
            assert_eq!(
                object_type(&r.top, rev, &l).map_err(|_| ()),
                want.map(String::from),
                "{rev}"
            );
        }
        let rels = vec![b".env".to_vec(), b"x.pem".to_vec(), b"new.pem".to_vec()];
        assert_eq!(
            would_add(&r.top, &rels, false, &l),
            Ok(vec![b"x.pem".to_vec(), b"new.pem".to_vec()])
        );
        assert_eq!(would_add(&r.top, &rels, true, &l), Ok(rels.clone()));
    }

    #[test]
    fn untracked_files_as_git_add_would_take_them() {
        let r = Repo0::new();
        r.write(".gitignore", "ignored/\n");
        r.write("ignored/.env", "K=1");
        r.write("a/k.pem", "K");
        r.write("b", "1");
        let (m, l) = (r.matcher(), Limits::default());
        assert_eq!(
            untracked(&r.top, &m, false, &|_| false, &l),
            r.holds("a/k.pem", "**/*.pem", Where::WorkTree)
        );
        assert_eq!(
            untracked(&r.top, &m, false, &|p| p == b"a/k.pem", &l),
            Answer::Clean,
            "ignored/ is not entered"
        );
        assert_eq!(
            untracked(&r.top, &m, true, &|p| p == b"a/k.pem", &l),
            r.holds("ignored/.env", "**/.env", Where::WorkTree)
        );
    }

    /// A linked work tree: `.git` is a file naming the repository.
    #[test]
    fn linked_work_tree_is_read() {
        let r = Repo0::new();
        r.write("a", "1");
        r.git(&["add", "a"]);
        r.commit("1");
        let wt = r.top.parent().unwrap().join("wt");
        r.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
        std::fs::write(wt.join(".env"), "K=1").unwrap();
        let out = Command::new("git")
            .args(["add", ".env"])
            .current_dir(&wt)
            .output()
            .unwrap();
        assert!(out.status.success());
        let paths = Paths {
            read: vec![],
            write: vec![],
            deny: vec!["**/.env".into()],
        };
        let m = Matcher::new(&paths, None, Some(&wt)).unwrap();
        assert_eq!(
            look(&wt, &m, Look::ALL, &|_| false, &Limits::default()),
            Answer::Holds {
                path: wt.join(".env"),
                pattern: "**/.env".into(),
                where_: Where::Index
            }
        );
        assert_eq!(
            r.look(Look::ALL),
            Answer::Clean,
            "the main work tree's index does not hold it"
        );
    }
}
