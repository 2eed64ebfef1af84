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

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

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
        patterns.iter().map(|p| literal_prefix(&expand(p, home, project_root))).collect()
    };
    let write = outermost(prefixes(&paths.write), &[]);
    let read = outermost(prefixes(&paths.read), &write);
    let mut hide: Vec<PathBuf> =
        paths.deny.iter().filter_map(|p| whole_path(&expand(p, home, project_root))).collect();
    hide.sort();
    hide.dedup();
    let strings = |v: Vec<PathBuf>| v.into_iter().map(|p| p.to_string_lossy().into_owned()).collect();
    Mounts { read: strings(read), write: strings(write), hide: strings(hide), protect: Vec::new() }
}

/// The paths of `protected` that exist inside one of the writable directories `write`,
/// each once, sorted: what the sandbox binds read-only over the writable ones.
pub fn protected_mounts(protected: &[PathBuf], write: &[String]) -> Vec<String> {
    let mut out: Vec<PathBuf> = protected
        .iter()
        .filter(|p| write.iter().any(|w| p.starts_with(w)) && std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink()))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out.into_iter().map(|p| p.to_string_lossy().into_owned()).collect()
}

/// [`mounts`] for the scope of a JSON request (its `sources`, `home` and `project_root`).
pub fn mounts_for_request(json: &str) -> Result<Value> {
    let req = Request::parse(json)?;
    let p = prepare(&req)?;
    let root = req.project_root.as_ref().map(PathBuf::from).or_else(|| p.loaded.project_root.clone());
    let mut m = mounts(&p.loaded.scope.paths, p.home.as_deref(), root.as_deref());
    m.protect = protected_mounts(p.matcher.protected(), &m.write);
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
            read: strings(&["${project_root}/**", "~/notes/*.md", "/usr/share/doc/**", "/p/src/**", "docs/**"]),
            write: strings(&["${project_root}/out/**", "/p/out/cache/**", "/tmp/x-*"]),
            deny: strings(&["${project_root}/.env", "~/.ssh/**", "**/*.pem", "/p/secret*"]),
        };
        let m = mounts(&paths, Some(Path::new("/home/u")), Some(Path::new("/p")));
        assert_eq!(
            m,
            Mounts {
                // /p/src and /p/docs lie under /p; /p/out is written.
                read: strings(&["/home/u/notes", "/p", "/usr/share/doc"]),
                write: strings(&["/p/out", "/tmp"]),
                hide: strings(&["/home/u/.ssh", "/p/.env"]),
                protect: vec![],
            }
        );
    }

    #[test]
    fn a_read_prefix_under_a_write_prefix_is_writable_only() {
        let paths = Paths { read: strings(&["/p/src/**"]), write: strings(&["/p/**"]), deny: vec![] };
        let m = mounts(&paths, None, None);
        assert_eq!(m.read, Vec::<String>::new());
        assert_eq!(m.write, ["/p"]);
    }

    #[test]
    fn relative_patterns_without_a_root_match_anywhere() {
        let paths = Paths { read: strings(&["src/**"]), write: vec![], deny: strings(&["secrets/**"]) };
        let m = mounts(&paths, None, None);
        assert_eq!(m.read, ["/"]);
        assert_eq!(m.hide, Vec::<String>::new());
    }

    #[test]
    fn mounts_for_a_request() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("scope.yml");
        std::fs::write(&file, "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/out/**\"]\n").unwrap();
        let req = serde_json::json!({"sources": [{"file": file}], "home": "/home/u"}).to_string();
        let v = mounts_for_request(&req).unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        assert_eq!(v, serde_json::json!({"read": [root.clone()], "write": [format!("{root}/out")],
                                     "hide": ["/home/u/.aws", "/home/u/.gnupg", "/home/u/.ssh"], "protect": []}));
        let err = mounts_for_request("{\"sources\": []}").unwrap_err();
        assert_eq!(err.reason(), "no_scope_config");
    }
}
