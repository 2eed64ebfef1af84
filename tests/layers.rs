//! The source tree's layers (ARCHITECTURE.md): a module uses only its own folder and the
//! layers below it, so there is no cycle between folders and a change's place is its layer.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. Folders of one rank do not use each other.
const LAYERS: &[(&str, usize)] = &[
    ("error", 0),
    ("resolve", 0),
    ("tool", 0),
    ("bounded", 1),
    ("output", 1),
    ("wall", 1),
    ("run", 2),
    ("shell", 2),
    ("scope", 3),
    ("policy", 4),
    ("fs", 5),
    ("edit", 5),
    ("emacs", 6),
    ("bin", 7),
];

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The layers a file's code names: `crate::NAME` outside comments, and `super::` chains
/// that climb out of its folder (`depth` is the file's module path length: 1 for
/// `bounded.rs`, 2 for `policy/paths.rs` and `policy/decide/mod.rs`).
fn uses(text: &str, depth: usize) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("super::") {
            rest = &rest[i..];
            let mut climbs = 0;
            while let Some(r) = rest.strip_prefix("super::") {
                climbs += 1;
                rest = r;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // Inline modules (`mod tests`) are deeper than their file: a climb counts when
            // it reaches a layer's name.
            if climbs >= depth && rank(&name).is_some() {
                found.push(name);
            }
        }
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.push(name);
        }
        // `use crate::{a, b}` names several at once.
        if let Some(i) = code.find("crate::{") {
            let inner = &code[i + "crate::{".len()..];
            let inner = inner.split('}').next().unwrap_or("");
            found.extend(
                inner
                    .split(',')
                    .map(|s| s.trim().split("::").next().unwrap_or("").to_string()),
            );
        }
    }
    found.retain(|n| !n.is_empty() && n.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    found
}

#[test]
fn every_module_uses_only_its_layer_and_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if first == "lib" {
            continue;
        }
        let own = rank(&first).unwrap_or_else(|| {
            panic!(
                "{}: folder `{first}` is in no layer; add it to LAYERS and ARCHITECTURE.md",
                rel.display()
            )
        });
        checked += 1;
        let depth = rel.components().count() - usize::from(rel.ends_with("mod.rs"));
        // `crate::Result` and `crate::ScopeError` (the error layer's, re-exported) are not
        // lowercase, so `uses` leaves them out.
        for used in uses(&fs::read_to_string(f).unwrap(), depth) {
            if used == first {
                continue;
            }
            match rank(&used) {
                Some(r) if r < own => {}
                Some(_) => bad.push(format!("{} uses crate::{used}", rel.display())),
                None => bad.push(format!(
                    "{} uses crate::{used}, which is in no layer",
                    rel.display()
                )),
            }
        }
    }
    assert!(
        checked > 30,
        "only {checked} files found under {}",
        src.display()
    );
    assert!(
        bad.is_empty(),
        "uses of a layer that is not below:\n{}",
        bad.join("\n")
    );
}

/// Every folder and file of `src/` (but `lib.rs`) is in a layer, and every layer names one.
#[test]
fn every_folder_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut present = Vec::new();
    for e in fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            present.push(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" {
                present.push(stem.to_string());
            }
        }
    }
    let unlisted: Vec<_> = present.iter().filter(|n| rank(n).is_none()).collect();
    assert!(
        unlisted.is_empty(),
        "in no layer (add them to LAYERS and ARCHITECTURE.md): {unlisted:?}"
    );
    let gone: Vec<_> = LAYERS
        .iter()
        .filter(|(n, _)| !present.iter().any(|p| p == n))
        .collect();
    assert!(gone.is_empty(), "layers naming nothing in src/: {gone:?}");
}

#[test]
fn the_checker_sees_upward_uses() {
    assert_eq!(
        uses("use crate::emacs::api; // crate::policy in a comment", 2),
        ["emacs"]
    );
    assert_eq!(uses("use crate::{edit, Result};", 2), ["edit"]);
    assert_eq!(
        uses("    let x = crate::policy::paths::memo();", 2),
        ["policy"]
    );
    assert_eq!(uses("use super::super::emacs::api;", 2), ["emacs"]);
    assert!(uses("use super::read::MAX; use super::super::x;", 3).is_empty());
}
