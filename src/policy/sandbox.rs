//! What an OS sandbox (bubblewrap) shows a command: the scope's path patterns reduced to
//! the directories they can match in.
//!
//! A pattern's literal directory prefix is every whole path component before the first one
//! holding a glob character (`/p/src/**` → `/p/src`, `/p/*.c` → `/p`, `/p/{a,b}/x` → `/p`);
//! a pattern without glob characters is its own path. Patterns are expanded first as the
//! matcher expands them (`~`, `${project_root}`, `dir/`, relative to the project root; a
//! pattern starting with `**` matches anywhere, so its prefix is `/`).
//!
//! The sandbox is coarser than the validator: it exposes whole directories where the
//! validator judges single paths, so it only ever adds a second wall around what the
//! validator allowed. Write implies read. A deny pattern that names a whole file or
//! directory (no glob, or only a trailing `/**`) is listed to be hidden.
//!
//! The other deny patterns (`**/.env`, `/p/**/*.pem`) are looked for: the shown directories
//! their literal prefix reaches are walked for the entries they cover ([`crate::policy::denied`],
//! names only, bounded), and each entry found is listed to be masked (an empty read-only
//! file over a file, an empty read-only file system over a directory). When the walk cannot
//! tell (a limit, an unreadable directory), `cannot_mask` says why and nothing may run.

use crate::Reason;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::policy::denied::{all_denied_under, Limits, Reach};
use crate::policy::git::config as gitconfig;
use crate::policy::paths::{resolve, Matcher};
use crate::policy::request::{prepare, Request};
use crate::scope::config::expand_pattern;
use crate::scope::Paths;
use crate::{Result, ScopeError};

/// The directories of a scope, each list sorted, without duplicates or nested entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mounts {
    /// Shown read-only: read prefixes that no write prefix covers.
    pub read: Vec<String>,
    /// Shown writable.
    pub write: Vec<String>,
    /// Files and directories of the deny patterns, to be hidden inside the other two.
    pub hide: Vec<String>,
    /// Files and directories that hold rules (scope documents, profiles, the trust list)
    /// and exist inside a writable directory: bound read-only over it.
    pub protect: Vec<String>,
    /// Entries under the shown directories that a deny pattern with a glob covers: masked
    /// over the mounts before the command starts. Sorted by path.
    pub masks: Vec<Mask>,
    /// Why the entries to mask could not all be found: when set, nothing may run.
    pub cannot_mask: Option<String>,
    /// The scope lets commands use the network (`sandbox.network`).
    pub network: bool,
    /// The limits of a call the scope sets (`sandbox.limits`; the supervisor fills in the
    /// rest).
    pub limits: crate::wall::limits::LimitSettings,
    /// Shown read-only for the programs of the call and git: the toolchains its programs
    /// resolve to ([`crate::scope::toolchain`]) and the user's own git configuration, when
    /// the home is not shown. Sorted, outermost only.
    pub tools: Vec<String>,
}

/// What one call needs beyond the scope's directories, from its decision: the paths it
/// writes and those an allow-once grant let it reach, and the programs it runs. Only an allowed decision has
/// needs; a refused one runs nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CallNeeds {
    /// What a grant let it read outside the read scope.
    pub read: Vec<String>,
    /// The paths it writes, in scope or granted (resolved).
    pub write: Vec<String>,
    /// The directories a grant let it write in (a command writing files it does not name).
    pub write_in: Vec<String>,
    /// The programs it runs, as the command line names them (`cargo`, `./x.sh`).
    pub programs: Vec<String>,
}

/// The nearest directory at or above `p` that exists.
fn existing_dir(p: &Path) -> Option<PathBuf> {
    p.ancestors()
        .find(|a| crate::resolve::is_dir(a))
        .map(Path::to_path_buf)
}

/// The needs of the call `d` decided ([`CallNeeds`]).
pub fn call_needs(d: &crate::policy::decide::Decision) -> CallNeeds {
    let mut needs = CallNeeds::default();
    if !d.allowed {
        return needs;
    }
    for e in d
        .paths
        .iter()
        .filter(|e| e.access == "write" && matches!(e.verdict, "allowed" | "out_of_scope"))
    {
        if Path::new(&e.resolved).is_absolute() {
            needs.write.push(e.resolved.clone());
        }
    }
    for v in d
        .violations
        .iter()
        .filter(|v| v.granted && v.validation_type == "path" && v.resource.starts_with('/'))
    {
        let list = match v.access {
            Some("write") if v.reason == Reason::DirectoryNotInScope => &mut needs.write_in,
            Some("write") => &mut needs.write,
            _ => &mut needs.read,
        };
        list.push(v.resource.clone());
    }
    for c in &d.commands {
        if !c.name.is_empty() && !needs.programs.contains(&c.name) {
            needs.programs.push(c.name.clone());
        }
    }
    for list in [&mut needs.read, &mut needs.write, &mut needs.write_in] {
        list.sort();
        list.dedup();
    }
    needs
}

/// The mounts a call adds to `m` for `call`, each only where `m` does not show it already:
/// a path it writes through the directory holding it (creating, renaming or removing an
/// entry writes its directory; a path that does not exist yet has nothing to mount), a
/// directory it writes in, a path it reads (itself, or the directory that would hold it).
fn add_call(m: &mut Mounts, call: &CallNeeds) {
    let existing = |list: &[String]| -> Vec<PathBuf> {
        list.iter()
            .map(PathBuf::from)
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect()
    };
    let writable = existing(&m.write);
    let shown: Vec<PathBuf> = writable.iter().cloned().chain(existing(&m.read)).collect();
    let mut write: Vec<PathBuf> = m.write.iter().map(PathBuf::from).collect();
    for p in call
        .write
        .iter()
        .map(Path::new)
        .filter(|p| !writable.iter().any(|w| p.starts_with(w)))
    {
        write.extend(p.parent().and_then(existing_dir));
    }
    for d in call
        .write_in
        .iter()
        .map(Path::new)
        .filter(|d| !writable.iter().any(|w| d.starts_with(w)))
    {
        write.extend(existing_dir(d));
    }
    m.write = outermost(write, &[])
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let written: Vec<PathBuf> = m.write.iter().map(PathBuf::from).collect();
    let mut read: Vec<PathBuf> = m.read.iter().map(PathBuf::from).collect();
    for p in call
        .read
        .iter()
        .map(Path::new)
        .filter(|p| !shown.iter().any(|w| p.starts_with(w)))
    {
        read.extend(if crate::resolve::exists(p) {
            Some(p.to_path_buf())
        } else {
            p.parent().and_then(existing_dir)
        });
    }
    m.read = outermost(read, &written)
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
}

/// An entry the sandbox masks, at its path inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mask {
    pub path: String,
    pub kind: MaskKind,
}

/// How an entry is masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MaskKind {
    /// An empty file bound read-only over it (any entry that is not a directory).
    File,
    /// An empty read-only file system over it.
    Dir,
}

const GLOB_CHARS: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// Expands `pattern` as the matcher does; an absolute pattern, or one starting with `**`.
fn expand(pattern: &str, home: Option<&Path>, root: Option<&Path>) -> String {
    let e = expand_pattern(pattern, home, root);
    if e.starts_with('/') || e.starts_with("**") {
        return e;
    }
    match root {
        Some(r) => format!("{}/{}", r.to_string_lossy().trim_end_matches('/'), e),
        None => format!("**/{e}"),
    }
}

/// The literal directory prefix of an expanded pattern (see the module documentation),
/// normalized (`.` and `..` removed). A pattern that is not absolute gives `/`.
pub fn literal_prefix(pattern: &str) -> PathBuf {
    if !pattern.starts_with('/') {
        return PathBuf::from("/");
    }
    let mut literal = PathBuf::from("/");
    for part in pattern.split('/').filter(|p| !p.is_empty()) {
        if part.contains(GLOB_CHARS) {
            break;
        }
        literal.push(part);
    }
    normalize(&literal)
}

fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The path a deny pattern names as a whole (`/p/secrets/**` or `/p/.env`), if it does.
fn whole_path(pattern: &str) -> Option<PathBuf> {
    let base = pattern.strip_suffix("/**").unwrap_or(pattern);
    (base.starts_with('/') && !base.contains(GLOB_CHARS)).then(|| normalize(Path::new(base)))
}

/// Keeps the outermost of `paths`: sorted, without duplicates and without any path lying
/// under another one, or under one of `covered`.
fn outermost(mut paths: Vec<PathBuf>, covered: &[PathBuf]) -> Vec<PathBuf> {
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if out.iter().chain(covered).any(|o| p.starts_with(o)) {
            continue;
        }
        out.push(p);
    }
    out
}

/// The mounts of a scope's `paths`, with `home` and `project_root` for the expansion.
pub fn mounts(paths: &Paths, home: Option<&Path>, project_root: Option<&Path>) -> Mounts {
    let prefixes = |patterns: &[String]| -> Vec<PathBuf> {
        patterns
            .iter()
            .map(|p| literal_prefix(&expand(p, home, project_root)))
            .collect()
    };
    let write = outermost(prefixes(&paths.write), &[]);
    let read = outermost(prefixes(&paths.read), &write);
    let mut hide: Vec<PathBuf> = paths
        .deny
        .iter()
        .filter_map(|p| whole_path(&expand(p, home, project_root)))
        .collect();
    hide.sort();
    hide.dedup();
    let strings = |v: Vec<PathBuf>| {
        v.into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    Mounts {
        read: strings(read),
        write: strings(write),
        hide: strings(hide),
        ..Mounts::default()
    }
}

/// The deny patterns (expanded) that do not name a whole path: what [`masks`] looks for.
fn glob_denies(paths: &Paths, home: Option<&Path>, project_root: Option<&Path>) -> Vec<String> {
    paths
        .deny
        .iter()
        .map(|p| expand(p, home, project_root))
        .filter(|e| whole_path(e).is_none())
        .collect()
}

/// The entries to mask for the glob deny patterns `globs` (expanded) in the shown directories
/// of `m`: the directories each pattern's literal prefix reaches are walked within `limits`
/// for what `matcher` denies. An error says why the walk cannot tell.
pub fn masks(
    m: &Mounts,
    globs: &[String],
    matcher: &Matcher,
    limits: &Limits,
) -> std::result::Result<Vec<Mask>, String> {
    let shown: Vec<PathBuf> = m.read.iter().chain(&m.write).map(PathBuf::from).collect();
    let mut roots = Vec::new();
    for g in globs {
        let prefix = literal_prefix(g);
        for d in &shown {
            if d.starts_with(&prefix) {
                roots.push(d.clone());
            } else if prefix.starts_with(d) {
                roots.push(prefix.clone());
            }
        }
    }
    let roots = outermost(roots, &[]);
    if roots.is_empty() {
        return Ok(Vec::new());
    }
    let found = match all_denied_under(&roots, matcher, limits) {
        Reach::Clean { .. } => return Ok(Vec::new()),
        Reach::Denied { found, .. } => found,
        Reach::CannotTell { why } => {
            let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            return Err(format!(
                "the sandbox cannot tell which entries under {} the deny patterns {} cover: {why}. Nothing ran: the command could read them unmasked. Narrow paths.read and paths.write to the directories the task needs (the walk looks at {} entries in {} ms at most), or write the denied files as whole paths (`${{project_root}}/.env`), which are hidden without a walk.",
                roots.join(", "),
                globs.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", "),
                limits.max_entries,
                limits.max_time.as_millis()
            ));
        }
    };
    let shown_resolved: Vec<(PathBuf, PathBuf)> = shown
        .iter()
        .map(|d| (d.clone(), resolve(d).target))
        .collect();
    let mut out: Vec<Mask> = found
        .iter()
        .filter_map(|f| mask_of(f, &shown_resolved))
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup();
    // A mask at or under a hidden path, or under a masked directory, is covered already
    // (and under one could not be made: the empty file system is read-only).
    let dirs: Vec<PathBuf> = out
        .iter()
        .filter(|k| k.kind == MaskKind::Dir)
        .map(|k| PathBuf::from(&k.path))
        .collect();
    out.retain(|k| {
        let p = Path::new(&k.path);
        !m.hide.iter().any(|h| p.starts_with(h)) && !dirs.iter().any(|d| p != d && p.starts_with(d))
    });
    Ok(out)
}

/// The mask of a denied entry `f`: itself, or for a symlink what it leads to when that
/// exists inside a shown directory (`shown`: each as mounted and resolved), at its path in
/// the sandbox; bubblewrap would follow the link anyway, and cannot mount over a dangling
/// one. A link leading elsewhere shows nothing there: no mask.
fn mask_of(f: &Path, shown: &[(PathBuf, PathBuf)]) -> Option<Mask> {
    let meta = std::fs::symlink_metadata(f).ok()?;
    let kind = |dir: bool| if dir { MaskKind::Dir } else { MaskKind::File };
    if !meta.file_type().is_symlink() {
        return Some(Mask {
            path: f.to_string_lossy().into_owned(),
            kind: kind(meta.is_dir()),
        });
    }
    let target = resolve(f).target;
    let target_meta = std::fs::metadata(&target).ok()?;
    let (mounted, resolved) = shown.iter().find(|(_, r)| target.starts_with(r))?;
    let rel = target.strip_prefix(resolved).ok()?;
    let path = if rel.as_os_str().is_empty() {
        mounted.clone()
    } else {
        mounted.join(rel)
    };
    Some(Mask {
        path: path.to_string_lossy().into_owned(),
        kind: kind(target_meta.is_dir()),
    })
}

/// The paths of `protected` that exist inside one of the writable directories `write`,
/// each once, sorted: what the sandbox binds read-only over the writable ones.
pub fn protected_mounts(protected: &[PathBuf], write: &[String]) -> Vec<String> {
    let mut out: Vec<PathBuf> = protected
        .iter()
        .filter(|p| {
            write.iter().any(|w| p.starts_with(w))
                && std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink())
        })
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out.into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// The entries of a git directory that hold other git directories (linked work trees,
/// submodules): the sandbox binds the rules inside each, not the whole.
const GIT_DIR_HOLDERS: &[&str] = &["worktrees", "modules"];

/// The most linked work trees and submodules whose rules the sandbox binds.
const MAX_LINKED: usize = 64;

/// What the sandbox protects of the git repository holding `dir`, each that exists: a
/// gitfile naming the git directory elsewhere; in the git directory and the common one, the
/// entries git reads as configuration ([`gitconfig::UNDER_GIT_DIR`]: `config`, `hooks`,
/// `info`, `modules`, ...) and `objects/info` (alternates); the `core.hooksPath` directories
/// and included files the configuration names ([`gitconfig::named`]). The engine refuses
/// every tool that would write them (SECURITY.md, "git's configuration").
pub fn git_protected(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let Some(top) = gitconfig::work_tree_top(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let marker = top.join(".git");
    if std::fs::symlink_metadata(&marker).is_ok_and(|m| m.is_file()) {
        out.push(marker);
    }
    if let Some((gitdir, common)) = gitconfig::git_dirs(&top) {
        let mut dirs = if gitdir == common {
            vec![gitdir]
        } else {
            vec![gitdir, common.clone()]
        };
        // The git directories of linked work trees and submodules hold their own rules, and
        // their index, HEAD and objects, which git writes for them: only the rules are bound.
        for holder in GIT_DIR_HOLDERS {
            if let Ok(rd) = std::fs::read_dir(common.join(holder)) {
                dirs.extend(rd.take(MAX_LINKED).filter_map(|e| e.ok()).map(|e| e.path()));
            }
        }
        for g in dirs {
            for rule in gitconfig::UNDER_GIT_DIR
                .iter()
                .filter(|r| !GIT_DIR_HOLDERS.contains(r))
                .chain(&["objects/info"])
            {
                out.push(g.join(rule));
            }
        }
    }
    let named = gitconfig::named(&[dir], home);
    out.extend(
        named
            .hooks
            .into_iter()
            .chain(named.included)
            .map(|(p, _)| p),
    );
    out.retain(|p| std::fs::symlink_metadata(p).is_ok());
    out.sort();
    out.dedup();
    out
}

/// The user's own git configuration, shown read-only when the home is not shown: the files
/// git reads as its global configuration (`user.name`, `core.autocrlf`, its ignore and
/// attributes files). Each that exists and no deny pattern covers.
fn git_user_config(home: &Path, var: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let xdg = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| home.join(".config"));
    [
        home.join(".gitconfig"),
        xdg.join("git/config"),
        xdg.join("git/ignore"),
        xdg.join("git/attributes"),
    ]
    .into_iter()
    .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file()))
    .collect()
}

/// The system directories every command sees (the elisp layer binds them): a path under
/// one of them needs no mount of its own.
const SYSTEM: &[&str] = &[
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// [`mounts`] for the scope of a JSON request (its `sources`, `home` and `project_root`),
/// and, when the request holds a `call`, for that call: what its decision let it reach
/// beyond the scope, its programs' toolchains, and the repository's rules protected.
pub fn mounts_for_request(json: &str) -> Result<Value> {
    mounts_for(&Request::parse(json)?)
}

/// [`mounts_for_request`] of a parsed request.
pub fn mounts_for(req: &Request) -> Result<Value> {
    let p = prepare(req)?;
    let root = req
        .project_root
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| p.loaded.project_root.clone());
    let home = p.home.as_deref();
    let mut granted = p.loaded.scope.paths.clone();
    if req.call.is_none() {
        // A terminal session (no call judged yet): an allow-once grant of a path shows it
        // writable, the grant saying nothing of how the session uses it.
        granted.write.extend(
            req.grants
                .iter()
                .map(|g| g.resource.trim())
                .filter(|r| r.starts_with('/') || r.starts_with('~'))
                .map(str::to_owned),
        );
    }
    let paths = &granted;
    let mut m = mounts(paths, home, root.as_deref());
    let env = |name: &str| -> Option<String> {
        req.env.iter().find_map(|e| {
            e.split_once('=')
                .filter(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    };
    if let Some(call) = &req.call {
        // What the call's decision let it reach, for this call only.
        add_call(&mut m, call);
    }
    // The toolchains of the programs: the call's, or for a terminal session (no call judged
    // yet) every program the scope lists; and git's user configuration when git is one.
    let listed: Vec<String>;
    let programs: &[String] = match &req.call {
        Some(call) => &call.programs,
        None => {
            let c = &p.loaded.scope.bash_tools.categories;
            listed = c
                .read_only
                .iter()
                .chain(&c.safe_write)
                .chain(&c.dangerous)
                .filter_map(|e| e.split_whitespace().next().map(str::to_owned))
                .collect();
            &listed
        }
    };
    if let (Some(h), false) = (home, req.env.is_empty()) {
        let shown: Vec<PathBuf> = m.read.iter().chain(&m.write).map(PathBuf::from).collect();
        let visible = |q: &Path| {
            SYSTEM.iter().any(|s| q.starts_with(s)) || shown.iter().any(|d| q.starts_with(d))
        };
        let dir = req
            .directory
            .as_deref()
            .map(PathBuf::from)
            .unwrap_or_else(|| h.to_path_buf());
        let names: Vec<&str> = programs.iter().map(String::as_str).collect();
        let path = env("PATH").unwrap_or_default();
        let found = crate::scope::toolchain::needed(
            &names,
            &crate::scope::toolchain::Env {
                path: &path,
                home: h,
                var: &env,
            },
            &dir,
            &visible,
        );
        let mut tools = found.show;
        m.hide
            .extend(found.hide.iter().map(|p| p.to_string_lossy().into_owned()));
        let runs_git = programs.iter().any(|p| p.rsplit('/').next() == Some("git"));
        if runs_git && !shown.iter().any(|d| h.starts_with(d)) {
            tools.extend(git_user_config(h, &env));
        }
        // No deny pattern is lifted for a program: a denied root or file is not shown.
        tools.retain(|t| {
            !matches!(
                p.matcher
                    .check(&resolve(t), crate::policy::paths::Access::Read),
                crate::policy::paths::PathVerdict::Denied(_)
            )
        });
        m.tools = outermost(tools, &shown)
            .into_iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
    }
    let mut protected: Vec<PathBuf> = p.matcher.protected().to_vec();
    if let Some(dir) = req.directory.as_deref() {
        protected.extend(git_protected(&resolve(Path::new(dir)).target, home));
    }
    m.protect = protected_mounts(&protected, &m.write);
    m.hide.sort();
    m.hide.dedup();
    m.network = p.loaded.scope.sandbox.network;
    m.limits = p.loaded.scope.sandbox.limits;
    match masks(
        &m,
        &glob_denies(paths, home, root.as_deref()),
        &p.matcher,
        &Limits::default(),
    ) {
        Ok(k) => m.masks = k,
        Err(why) => m.cannot_mask = Some(why),
    }
    serde_json::to_value(m).map_err(|e| ScopeError::InvalidArgument(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn literal_prefix_table() {
        for (pattern, want) in [
            ("/p/src/**", "/p/src"),
            ("/p/src", "/p/src"),
            ("/p/*.c", "/p"),
            ("/p/src/**/*.rs", "/p/src"),
            ("/p/{a,b}/x", "/p"),
            ("/p/sr?/x", "/p"),
            ("/p/[ab]/x", "/p"),
            ("/p/a\\*b/x", "/p"),
            ("/**", "/"),
            ("/", "/"),
            ("/p//q/./r/../s/**", "/p/q/s"),
            ("/p/../../etc", "/etc"),
            ("**/*.log", "/"),
            ("relative/x", "/"),
        ] {
            assert_eq!(literal_prefix(pattern), PathBuf::from(want), "{pattern}");
        }
    }

    #[test]
    fn mounts_of_a_scope() {
        let paths = Paths {
            read: strings(&[
                "${project_root}/**",
                "~/notes/*.md",
                "/usr/share/doc/**",
                "/p/src/**",
                "docs/**",
            ]),
            write: strings(&["${project_root}/out/**", "/p/out/cache/**", "/tmp/x-*"]),
            deny: strings(&[
                "${project_root}/.env",
                "~/.ssh/**",
                "**/*.pem",
                "/p/secret*",
            ]),
        };
        let m = mounts(&paths, Some(Path::new("/home/u")), Some(Path::new("/p")));
        assert_eq!(
            m,
            Mounts {
                // /p/src and /p/docs lie under /p; /p/out is written.
                read: strings(&["/home/u/notes", "/p", "/usr/share/doc"]),
                write: strings(&["/p/out", "/tmp"]),
                hide: strings(&["/home/u/.ssh", "/p/.env"]),
                ..Mounts::default()
            }
        );
    }

    #[test]
    fn a_read_prefix_under_a_write_prefix_is_writable_only() {
        let paths = Paths {
            read: strings(&["/p/src/**"]),
            write: strings(&["/p/**"]),
            deny: vec![],
        };
        let m = mounts(&paths, None, None);
        assert_eq!(m.read, Vec::<String>::new());
        assert_eq!(m.write, ["/p"]);
    }

    #[test]
    fn relative_patterns_without_a_root_match_anywhere() {
        let paths = Paths {
            read: strings(&["src/**"]),
            write: vec![],
            deny: strings(&["secrets/**"]),
        };
        let m = mounts(&paths, None, None);
        assert_eq!(m.read, ["/"]);
        assert_eq!(m.hide, Vec::<String>::new());
    }

    /// The masks of a project holding `entries` (files; `d/` directories; `name -> target`
    /// symlinks, the target relative unless absolute) under the scope read `ROOT/**`, write
    /// `ROOT/out/**`, with `deny`; paths relative to the project.
    fn masks_of(
        entries: &[&str],
        deny: &[&str],
        limits: &Limits,
    ) -> std::result::Result<Vec<(String, MaskKind)>, String> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for e in entries {
            if let Some((name, target)) = e.split_once(" -> ") {
                let p = root.join(name);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                let t = if target.starts_with('/') {
                    PathBuf::from(target)
                } else {
                    root.join(target)
                };
                std::os::unix::fs::symlink(t, p).unwrap();
            } else if let Some(d) = e.strip_suffix('/') {
                std::fs::create_dir_all(root.join(d)).unwrap();
            } else {
                let p = root.join(e);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "TOKEN").unwrap();
            }
        }
        let paths = Paths {
            read: strings(&["${project_root}/**"]),
            write: strings(&["${project_root}/out/**"]),
            deny: strings(deny),
        };
        let home = Path::new("/home/u");
        let matcher = Matcher::new(&paths, Some(home), Some(&root)).unwrap();
        let m = mounts(&paths, Some(home), Some(&root));
        let prefix = format!("{}/", root.display());
        masks(
            &m,
            &glob_denies(&paths, Some(home), Some(&root)),
            &matcher,
            limits,
        )
        .map(|v| {
            v.into_iter()
                .map(|k| {
                    (
                        k.path.strip_prefix(&prefix).unwrap_or(&k.path).to_string(),
                        k.kind,
                    )
                })
                .collect()
        })
        .map_err(|e| e.replace(&root.display().to_string(), "ROOT"))
    }

    #[test]
    fn masks_of_the_denied_entries() {
        use MaskKind::{Dir, File};
        let own = |v: &[(&str, MaskKind)]| -> Vec<(String, MaskKind)> {
            v.iter().map(|(p, k)| ((*p).to_owned(), *k)).collect()
        };
        let env_pem: &[&str] = &["**/.env", "**/*.pem"];
        let big = Limits::default();
        /// Name, tree, deny patterns, masks.
        type Row<'a> = (
            &'a str,
            &'a [&'a str],
            &'a [&'a str],
            Vec<(String, MaskKind)>,
        );
        #[rustfmt::skip]
        let table: &[Row] = &[
            ("files at any depth, in the read and the write scope",
             &[".env", "a/b/key.pem", "a/b/key.pem.txt", "out/.env", "src/main.rs"], env_pem,
             own(&[(".env", File), ("a/b/key.pem", File), ("out/.env", File)])),
            ("a directory a glob covers is masked whole, nothing under it listed",
             &["certs.pem/x.pem", "secrets/.env", "secrets/y"], &["**/*.pem", "**/secrets/**", "**/.env"],
             own(&[("certs.pem", Dir), ("secrets", Dir)])),
            ("a clean tree has no masks", &["src/a.rs", "README"], env_pem, vec![]),
            ("a symlink named .env masks what it leads to", &["real.txt", ".env -> real.txt"], env_pem, own(&[("real.txt", File)])),
            ("a symlink to a directory masks the directory", &["adir/f", "x.pem -> adir"], env_pem, own(&[("adir", Dir)])),
            ("a symlink leading out of the shown directories, or nowhere, needs no mask",
             &[".env -> /nonexistent/secret", "k.pem -> missing"], env_pem, vec![]),
            ("under a whole-path deny: hidden already, not masked again",
             &["conf/.env", "conf/x", "b/.env"], &["${project_root}/conf/**", "**/.env"], own(&[("b/.env", File)])),
            ("a glob whose prefix is outside the shown directories walks nothing",
             &[".env"], &["/elsewhere/**/.env"], vec![]),
            ("a glob under the project: only its prefix is walked",
             &["a/.env", "b/.env"], &["${project_root}/b/**/.env"], own(&[("b/.env", File)])),
        ];
        for (name, entries, deny, want) in table {
            assert_eq!(&masks_of(entries, deny, &big).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn masks_fail_closed_past_the_walk_limit() {
        let tiny = Limits {
            max_entries: 2,
            max_time: std::time::Duration::from_secs(60),
        };
        let err = masks_of(&["a", "b", "c", ".env"], &["**/.env"], &tiny).unwrap_err();
        assert_eq!(
            err,
            "the sandbox cannot tell which entries under ROOT the deny patterns `**/.env` cover: more than 2 entries under ROOT; the walk for denied entries stops there. Nothing ran: the command could read them unmasked. Narrow paths.read and paths.write to the directories the task needs (the walk looks at 2 entries in 60000 ms at most), or write the denied files as whole paths (`${project_root}/.env`), which are hidden without a walk."
        );
        // Whole-path deny patterns need no walk: no limit to hit.
        assert_eq!(
            masks_of(
                &["a", "b", "c", ".env"],
                &["${project_root}/.env", "~/.ssh/**"],
                &tiny
            ),
            Ok(vec![])
        );
    }

    #[test]
    fn mounts_for_a_request() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scope.yml");
        std::fs::write(
            &file,
            "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\n",
        )
        .unwrap();
        let req = serde_json::json!({"sources": [{"file": file}], "home": "/home/u"}).to_string();
        let v = mounts_for_request(&req).unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        assert_eq!(
            v,
            serde_json::json!({"read": [root.clone()], "write": [format!("{root}/out")],
                                     "hide": ["/home/u/.aws", "/home/u/.gnupg", "/home/u/.ssh"], "protect": [],
                                     "masks": [], "cannot_mask": null, "network": false, "tools": [], "limits": {}})
        );
        let err = mounts_for_request("{\"sources\": []}").unwrap_err();
        assert_eq!(err.reason(), Reason::NoScopeConfig);
    }

    /// An allow-once grant of a path shows it writable for the call it lets through; a grant
    /// of a command shows nothing more. `sandbox.network` turns the network on.
    #[test]
    fn grants_and_the_network_in_the_mounts() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scope.yml");
        std::fs::write(
            &file,
            "paths:\n  read: [\"${project_root}/**\"]\nsandbox: {network: true}\n",
        )
        .unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        let grants = serde_json::json!([{"tool": "run_bash_command", "resource": format!("{root}/sub")},
                                        {"tool": "run_bash_command", "resource": "/elsewhere/**"},
                                        {"tool": "run_bash_command", "resource": "rm"}]);
        let v = mounts_for_request(
            &serde_json::json!({"sources": [{"file": file}], "home": "/home/u", "grants": grants})
                .to_string(),
        )
        .unwrap();
        assert_eq!(
            (v["read"].clone(), v["write"].clone(), v["network"].clone()),
            (
                serde_json::json!([root.clone()]),
                serde_json::json!(["/elsewhere", format!("{root}/sub")]),
                serde_json::json!(true)
            )
        );
    }
}
