//! Git's executable configuration: the files and directories git reads as configuration
//! that names programs it runs (`core.fsmonitor`, pagers, `diff.external`, textconv and
//! filter drivers, `!` aliases, hooks, credential helpers, `gpg.program`). A tool that could
//! write one could make git run its program, in the sandbox and also outside it, the next
//! time the user runs git in that repository. They are protected like scope documents
//! ([`crate::policy::paths::Matcher::scope_document`]): no tool writes them.
//!
//! What is protected, as written and where it leads:
//!
//! - by name ([`by_name`]): below a component `.git`, any later component named `config`,
//!   `config.worktree`, `hooks`, `info` (attributes, excludes, grafts, and
//!   `objects/info/alternates`, which points git at another object store), `commondir` (which
//!   moves where the configuration is read), `modules` and `worktrees` (the git directories
//!   of submodules and linked work trees, each with a configuration of its own) or
//!   `rebase-merge` and `sequencer` (the to-do lists of a rebase or cherry-pick in progress,
//!   whose `exec` lines run when the user continues it); a last component `objects` after it
//!   (the object store replaced whole, `info/alternates` with it); a component `.git` itself
//!   (a repository replaced, or a gitfile `gitdir: elsewhere` made); the user's
//!   `~/.gitconfig`, `~/.config/git/` and the system's `/etc/gitconfig`. Names are compared
//!   without case, as a case-insensitive file system finds them.
//! - by what the configuration says ([`named`]), read only when a write is judged: the
//!   `core.hooksPath` directories and the files an `[include]` or `[includeIf]` names, in
//!   the configuration of the repository holding the path written, of the project's
//!   repository, and the user's and the system's. Each file is read by a small parser, at
//!   most [`MAX_CONFIG_BYTES`] of it, at most [`MAX_FILES`] files; nothing is run.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::resolve;

/// The components that, after a `.git` component, hold configuration or state that names
/// programs git runs (compared without case).
pub const UNDER_GIT_DIR: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "modules",
    "worktrees",
    "rebase-merge",
    "sequencer",
];

/// The components that, as the last one after a `.git` component, replace a part of the
/// repository that holds configuration (`objects`, with `objects/info/alternates`).
pub const REPLACED_UNDER_GIT_DIR: &[&str] = &["objects"];

/// The most bytes of one configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 64 * 1024;

/// The most configuration files read for one question (includes count).
pub const MAX_FILES: usize = 16;

/// The system's configuration file.
const SYSTEM_CONFIG: &str = "/etc/gitconfig";

/// The user's configuration files, under the home directory.
const USER_CONFIG: &[&str] = &[".gitconfig", ".config/git"];

fn is_dot_git(c: &std::ffi::OsStr) -> bool {
    c.to_str().is_some_and(|s| s.eq_ignore_ascii_case(".git"))
}

/// The git configuration `p` is or lies in, judged by its name alone: the path to protect
/// (`/p/.git/hooks` for `/p/.git/hooks/pre-commit`), or `None`.
pub fn by_name(p: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let comps: Vec<Component<'_>> = p.components().collect();
    let mut seen_git = false;
    let mut prefix = PathBuf::new();
    for (i, c) in comps.iter().enumerate() {
        prefix.push(c);
        let name = c.as_os_str();
        let last = i + 1 == comps.len();
        let named = |list: &[&str]| {
            name.to_str()
                .is_some_and(|s| list.iter().any(|u| s.eq_ignore_ascii_case(u)))
        };
        if seen_git && (named(UNDER_GIT_DIR) || (last && named(REPLACED_UNDER_GIT_DIR))) {
            return Some(prefix);
        }
        if is_dot_git(name) {
            if last {
                return Some(prefix);
            }
            seen_git = true;
        }
    }
    user_files(home).into_iter().find(|f| p.starts_with(f))
}

/// The user's and the system's configuration files (`~/.config/git` as a whole).
fn user_files(home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![PathBuf::from(SYSTEM_CONFIG)];
    if let Some(h) = home {
        out.extend(USER_CONFIG.iter().map(|f| h.join(f)));
    }
    out
}

/// The user's or the system's configuration file (or directory) that exists strictly under
/// the directory `dir` (`rm -r ~` removes `~/.gitconfig`).
pub fn user_files_below(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    user_files(home)
        .into_iter()
        .find(|f| f != dir && f.starts_with(dir) && resolve::exists(f))
}

/// What git's configuration names that a write must not change: its hooks directories and
/// the files it includes, each with the configuration file that names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Named {
    /// `core.hooksPath` directories (normalized), and the file naming each.
    pub hooks: Vec<(PathBuf, PathBuf)>,
    /// Files an `[include]` or `[includeIf]` names, and the file naming each.
    pub included: Vec<(PathBuf, PathBuf)>,
}

impl Named {
    /// What `p` lies in (a hooks directory or an included file), and the file naming it.
    pub fn holding(&self, p: &Path) -> Option<(&Path, &Path)> {
        self.hooks
            .iter()
            .chain(&self.included)
            .find(|(x, _)| p.starts_with(x))
            .map(|(x, by)| (x.as_path(), by.as_path()))
    }

    /// What `p` lies in, said for a message: the hooks directory and the file naming it, or
    /// the included file and the file including it.
    pub fn describe(&self, p: &Path) -> Option<String> {
        if let Some((x, by)) = self.hooks.iter().find(|(x, _)| p.starts_with(x)) {
            return Some(format!(
                "the hooks directory {} that core.hooksPath names in {}",
                x.display(),
                by.display()
            ));
        }
        self.included
            .iter()
            .find(|(x, _)| p.starts_with(x))
            .map(|(x, by)| format!("{}, which {} includes", x.display(), by.display()))
    }

    /// What lies strictly under the directory `dir`.
    pub fn below(&self, dir: &Path) -> Option<&Path> {
        self.hooks
            .iter()
            .chain(&self.included)
            .map(|(x, _)| x.as_path())
            .find(|x| *x != dir && x.starts_with(dir))
    }
}

/// The top of the work tree holding `p` (the nearest directory, `p` included, with a `.git`
/// entry), if any.
pub fn work_tree_top(p: &Path) -> Option<PathBuf> {
    p.ancestors()
        .find(|d| resolve::exists(&d.join(".git")))
        .map(Path::to_path_buf)
}

/// The git directory and the common directory of the work tree whose top is `top` (a
/// `.git` file naming the git directory followed, and its `commondir`), if it has one.
pub fn git_dirs(top: &Path) -> Option<(PathBuf, PathBuf)> {
    let dotgit = top.join(".git");
    let gitdir = match std::fs::symlink_metadata(&dotgit) {
        Ok(m) if m.is_file() => {
            let text = read_bounded(&dotgit)?;
            let g = text
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("gitdir:"))
                .map(str::trim)
                .filter(|g| !g.is_empty())?;
            resolve::normalize(&top.join(g))
        }
        Ok(_) => dotgit,
        Err(_) => return None,
    };
    let common = match read_bounded(&gitdir.join("commondir")) {
        Some(c) if !c.trim().is_empty() => resolve::normalize(&gitdir.join(c.trim())),
        _ => gitdir.clone(),
    };
    Some((gitdir, common))
}

/// The repository's own configuration files of the work tree whose top is `top`: the
/// common directory's `config` and the git directory's `config.worktree`.
pub fn repository_files(top: &Path) -> Vec<PathBuf> {
    match git_dirs(top) {
        Some((gitdir, common)) => vec![common.join("config"), gitdir.join("config.worktree")],
        None => Vec::new(),
    }
}

/// What the configuration read for the repositories holding each of `places` (and the
/// user's and the system's) names: hooks directories and included files. A relative
/// `core.hooksPath` is taken from the top of each of those work trees, as git runs hooks
/// there; `~/` is the home directory.
pub fn named(places: &[&Path], home: Option<&Path>) -> Named {
    let mut tops: Vec<PathBuf> = Vec::new();
    for p in places {
        if let Some(t) = work_tree_top(p) {
            if !tops.contains(&t) {
                tops.push(t);
            }
        }
    }
    // (file, the work trees its relative hooksPath is taken from, depth)
    let mut queue: Vec<(PathBuf, Vec<PathBuf>, usize)> = Vec::new();
    for t in &tops {
        for f in repository_files(t) {
            queue.push((f, vec![t.clone()], 0));
        }
    }
    let mut globals = vec![PathBuf::from(SYSTEM_CONFIG)];
    if let Some(h) = home {
        globals.push(h.join(".gitconfig"));
        globals.push(h.join(".config/git/config"));
    }
    for g in globals {
        queue.push((g, tops.clone(), 0));
    }
    let mut out = Named::default();
    let mut read = 0;
    let mut k = 0;
    while k < queue.len() && read < MAX_FILES {
        let (file, bases, depth) = queue[k].clone();
        k += 1;
        let Some(text) = read_bounded(&file) else {
            continue;
        };
        read += 1;
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for (key, value) in entries(&text) {
            match key.as_str() {
                "core.hookspath" => {
                    if let Some(abs) = expand(&value, home) {
                        push(&mut out.hooks, abs, &file);
                    } else {
                        for b in &bases {
                            push(&mut out.hooks, resolve::normalize(&b.join(&value)), &file);
                        }
                    }
                }
                "include.path" | "includeif.path" => {
                    let inc = expand(&value, home)
                        .unwrap_or_else(|| resolve::normalize(&dir.join(&value)));
                    if !out.included.iter().any(|(x, _)| *x == inc) {
                        if depth < 4 {
                            queue.push((inc.clone(), bases.clone(), depth + 1));
                        }
                        push(&mut out.included, inc, &file);
                    }
                }
                _ => {}
            }
        }
    }
    out
}

fn push(list: &mut Vec<(PathBuf, PathBuf)>, p: PathBuf, by: &Path) {
    if !p.as_os_str().is_empty() && !list.iter().any(|(x, _)| *x == p) {
        list.push((p, by.to_path_buf()));
    }
}

/// A configuration path that does not depend on a base: absolute, or `~/...` with a home.
fn expand(value: &str, home: Option<&Path>) -> Option<PathBuf> {
    if value.starts_with('/') {
        return Some(resolve::normalize(Path::new(value)));
    }
    let rest = value
        .strip_prefix("~/")
        .or_else(|| (value == "~").then_some(""))?;
    home.map(|h| resolve::normalize(&h.join(rest)))
}

/// At most [`MAX_CONFIG_BYTES`] of the file `p`, as text (invalid UTF-8 replaced).
fn read_bounded(p: &Path) -> Option<String> {
    // Without blocking, and only a regular file: a repository names what it includes.
    let (f, _) = crate::bounded::open(p).ok()?;
    let mut buf = Vec::new();
    f.take(MAX_CONFIG_BYTES).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The entries of a configuration text that matter here, as (`section.key` in lower case,
/// value): `core.hookspath` (section `core` without a subsection), `include.path` and
/// `includeif.path` (any subsection). Git's syntax: `[section]`, `[section "sub"]`,
/// `[section.sub]`, a key on the header's line, `key = value` with quotes, escapes and
/// comments (`#`, `;`), a line continued by a final backslash.
pub fn entries(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // The section, lower case, and whether it has a subsection.
    let mut section = String::new();
    let mut sub = false;
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let mut line = first.to_string();
        while ends_continued(&line) {
            line.pop();
            match lines.next() {
                Some(next) => line.push_str(next),
                None => break,
            }
        }
        let mut rest = line.trim_start();
        if let Some(header) = rest.strip_prefix('[') {
            let Some(end) = header.find(']') else {
                continue;
            };
            let inside = header[..end].trim();
            let (name, has_sub) = match inside.split_once(|c: char| c.is_whitespace() || c == '.') {
                Some((n, _)) => (n, true),
                None => (inside, false),
            };
            section = name.to_ascii_lowercase();
            sub = has_sub;
            rest = header[end + 1..].trim_start();
        }
        if rest.is_empty() || rest.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = match rest.split_once('=') {
            Some((k, v)) => (k.trim(), value_of(v)),
            None => (rest.trim(), String::new()),
        };
        let key = key.to_ascii_lowercase();
        let wanted = match (section.as_str(), key.as_str()) {
            ("core", "hookspath") => !sub,
            ("include", "path") => !sub,
            ("includeif", "path") => sub,
            _ => false,
        };
        if wanted && !value.is_empty() {
            out.push((format!("{section}.{key}"), value));
        }
    }
    out
}

/// Whether a line ends with a backslash that is not itself escaped.
fn ends_continued(line: &str) -> bool {
    line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// A value as git reads it: quotes grouped, escapes, an unquoted comment ending it,
/// unquoted spaces at its ends trimmed.
fn value_of(raw: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    // The length of `out` up to its last quoted or non-space character.
    let mut keep = 0;
    let mut chars = raw.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                keep = out.len();
            }
            '\\' => {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('b') => out.push('\u{8}'),
                    Some(o) => out.push(o),
                    None => {}
                }
                keep = out.len();
            }
            '#' | ';' if !quoted => break,
            c => {
                out.push(c);
                if quoted || !c.is_whitespace() {
                    keep = out.len();
                }
            }
        }
    }
    out.truncate(keep);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_by_name() {
        let home = Some(Path::new("/home/u"));
        let rows: &[(&str, Option<&str>)] = &[
            ("/p/.git/config", Some("/p/.git/config")),
            ("/p/.git/hooks/pre-commit", Some("/p/.git/hooks")),
            ("/p/.git/hooks", Some("/p/.git/hooks")),
            ("/p/.git/info/attributes", Some("/p/.git/info")),
            (
                "/p/.git/objects/info/alternates",
                Some("/p/.git/objects/info"),
            ),
            ("/p/.git/modules/sub/config", Some("/p/.git/modules")),
            (
                "/p/.git/worktrees/w/config.worktree",
                Some("/p/.git/worktrees"),
            ),
            ("/p/.git/objects", Some("/p/.git/objects")),
            ("/p/.git/commondir", Some("/p/.git/commondir")),
            (
                "/p/.git/rebase-merge/git-rebase-todo",
                Some("/p/.git/rebase-merge"),
            ),
            ("/p/.git", Some("/p/.git")),
            ("/p/sub/.git", Some("/p/sub/.git")),
            ("/p/.GIT/Config", Some("/p/.GIT/Config")),
            ("/home/u/.gitconfig", Some("/home/u/.gitconfig")),
            ("/home/u/.config/git/config", Some("/home/u/.config/git")),
            ("/etc/gitconfig", Some("/etc/gitconfig")),
            // Not configuration.
            ("/p/.git/objects/ab/cdef", None),
            ("/p/.git/refs/heads/main", None),
            ("/p/.git/HEAD", None),
            ("/p/.git/index", None),
            ("/p/config", None),
            ("/p/src/hooks/a.rs", None),
            ("/p/.github/workflows/ci.yml", None),
            ("/p/.gitignore", None),
            ("/p/.git-blame-ignore-revs", None),
            ("/home/u/.gitconfig-work", None),
        ];
        for (p, want) in rows {
            assert_eq!(by_name(Path::new(p), home), want.map(PathBuf::from), "{p}");
        }
    }

    #[test]
    fn configuration_entries_as_git_reads_them() {
        let rows: &[(&str, &[(&str, &str)])] = &[
            ("[core]\n\thooksPath = .githooks\n", &[("core.hookspath", ".githooks")]),
            ("[CORE]\n\tHOOKSPATH=h\n", &[("core.hookspath", "h")]),
            ("[core] hooksPath = h # a comment\n", &[("core.hookspath", "h")]),
            ("[core]\n\thooksPath = \"a b\" ; c\n", &[("core.hookspath", "a b")]),
            ("[core]\n\thooksPath = a\\\n/b\n", &[("core.hookspath", "a/b")]),
            ("[core \"x\"]\n\thooksPath = h\n", &[]),
            ("[core.x]\n\thooksPath = h\n", &[]),
            ("[other]\n\thooksPath = h\n[core]\n\tpager = less\n", &[]),
            ("# [core]\n; hooksPath = h\n", &[]),
            ("[include]\n\tpath = ../shared.gitconfig\n[includeIf \"gitdir:~/w/\"]\n\tpath = ~/.gitconfig-work\n", &[("include.path", "../shared.gitconfig"), ("includeif.path", "~/.gitconfig-work")]),
            ("[core]\n\thooksPath\n", &[]),
        ];
        for (text, want) in rows {
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            assert_eq!(entries(text), want, "{text:?}");
        }
    }

    /// A repository whose configuration names a hooks directory and includes a file of the
    /// work tree, and a user configuration with a hooks directory of its own.
    #[test]
    fn named_by_the_repository_and_the_user() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical");
        let (top, home) = (base.join("p"), base.join("home"));
        for d in [top.join(".git"), top.join("src"), home.join(".config/git")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        std::fs::write(
            top.join(".git/config"),
            "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../.gitconfig.shared\n",
        )
        .expect("config");
        std::fs::write(
            top.join(".gitconfig.shared"),
            "[core]\n\thooksPath = ~/shared-hooks\n",
        )
        .expect("shared");
        std::fs::write(
            home.join(".config/git/config"),
            "[core]\n\thooksPath = hooks-everywhere\n",
        )
        .expect("user");
        let n = named(&[&top.join("src/a.rs")], Some(&home));
        let config = top.join(".git/config");
        assert_eq!(
            n.hooks,
            vec![
                (top.join(".githooks"), config.clone()),
                (
                    top.join("hooks-everywhere"),
                    home.join(".config/git/config")
                ),
                (home.join("shared-hooks"), top.join(".gitconfig.shared")),
            ]
        );
        assert_eq!(
            n.included,
            vec![(top.join(".gitconfig.shared"), config.clone())]
        );
        assert_eq!(
            n.holding(&top.join(".githooks/pre-commit")),
            Some((top.join(".githooks").as_path(), config.as_path()))
        );
        assert_eq!(n.below(&top), Some(top.join(".githooks").as_path()));
        assert_eq!(n.below(&top.join("src")), None);
        // A linked work tree: `.git` is a file naming the git directory, whose commondir
        // leads to the shared configuration.
        let wt = base.join("wt");
        std::fs::create_dir_all(top.join(".git/worktrees/wt")).expect("mkdir");
        std::fs::create_dir_all(&wt).expect("mkdir");
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", top.join(".git/worktrees/wt").display()),
        )
        .expect("gitfile");
        std::fs::write(top.join(".git/worktrees/wt/commondir"), "../..\n").expect("commondir");
        assert_eq!(
            repository_files(&wt),
            vec![
                top.join(".git/config"),
                top.join(".git/worktrees/wt/config.worktree")
            ]
        );
        let n = named(&[&wt.join("x")], None);
        assert_eq!(n.hooks.first(), Some(&(wt.join(".githooks"), config)));
    }

    /// Only the first 64 KiB of a file are read: a key past them is not seen.
    #[test]
    fn reads_are_bounded() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let top = std::fs::canonicalize(tmp.path()).expect("canonical");
        std::fs::create_dir_all(top.join(".git")).expect("mkdir");
        let pad = "#".repeat(MAX_CONFIG_BYTES as usize);
        std::fs::write(
            top.join(".git/config"),
            format!("{pad}\n[core]\n\thooksPath = far\n"),
        )
        .expect("config");
        assert_eq!(named(&[&top], None).hooks, Vec::new());
        std::fs::write(top.join(".git/config"), "[core]\n\thooksPath = near\n").expect("config");
        assert_eq!(
            named(&[&top], None).hooks,
            vec![(top.join("near"), top.join(".git/config"))]
        );
    }
}
