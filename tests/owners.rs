//! Every reason code has one owner: `src/error/reason.rs` writes the codes of the engine
//! ([`gptel_scope::Reason`]), and `lisp/gptel-scope-core.el` names once each code the elisp
//! produces or reads (`gptel-scope--reason-...`). No other file of `src/` or `lisp/` writes a
//! code as a string literal; tests, docs and corpora are exempt.
//!
//! So with the tools' names: `src/tool.rs` writes each ([`gptel_scope::Tool`]), no other file
//! of `src/` does (the elisp's owner is checked by `test/gptel-scope-layers-test.el`).
//!
//! And no file of `src/` but a test file (`tests.rs`) imports its whole parent module
//! (`use super::*;` at the top level): each names what it uses.

use std::fs;
use std::path::{Path, PathBuf};

use gptel_scope::{Reason, Tool};

/// The Rust file that owns the tools' names.
const TOOL_OWNER: &str = "src/tool.rs";
/// The Rust file that owns the engine's codes.
const RUST_OWNER: &str = "src/error/reason.rs";
/// The elisp file that names every code the elisp uses, once.
const LISP_OWNER: &str = "lisp/gptel-scope-core.el";
/// Where a code's word is written meaning something else: (file, word). `denied` is also the
/// verdict of refused evidence (`allowed`, `denied`, `out_of_scope`), written once.
const OTHER_VOCABULARY: &[(&str, &str)] = &[("src/policy/decide/mod.rs", "denied")];

fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

/// The codes the elisp owner names: the string of each `(defconst gptel-scope--reason-...`.
fn lisp_codes(owner: &str) -> Vec<String> {
    owner
        .lines()
        .filter_map(|l| {
            l.trim_start()
                .strip_prefix("(defconst gptel-scope--reason-")
        })
        .filter_map(|rest| rest.split('"').nth(1))
        .map(str::to_string)
        .collect()
}

/// The lines of `text`, from the file `file`, that write one of `codes` as a string literal:
/// `file:line: "code"`. A Rust file's comments and its `#[cfg(test)]` tail are not read, nor
/// an elisp file's comments.
fn strays(file: &str, text: &str, codes: &[String]) -> Vec<String> {
    let rust = file.ends_with(".rs");
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if rust && trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if (rust && trimmed.starts_with("//")) || (!rust && trimmed.starts_with(';')) {
            continue;
        }
        for code in codes {
            let quoted = format!("\"{code}\"");
            if line.contains(&quoted)
                && !OTHER_VOCABULARY
                    .iter()
                    .any(|(f, w)| *f == file && *w == code.as_str())
            {
                found.push(format!("{file}:{}: {quoted}", i + 1));
            }
        }
    }
    found
}

/// The strays of `words` in each of `paths` but the `owners` and the test files
/// (`src/**/tests.rs`; the `tests/` folder is not scanned).
fn strays_in(paths: &[PathBuf], owners: &[&str], words: &[String]) -> Vec<String> {
    let mut bad = Vec::new();
    for p in paths {
        let rel = p
            .strip_prefix(root())
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned();
        if owners.contains(&rel.as_str()) || rel.ends_with("/tests.rs") {
            continue;
        }
        if let Ok(text) = fs::read_to_string(p) {
            bad.extend(strays(&rel, &text, words));
        }
    }
    bad
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn reason_codes_are_written_only_by_their_owners() {
    let rust_codes: Vec<String> = Reason::ALL.iter().map(|r| r.as_str().to_string()).collect();
    let lisp_owner = read(LISP_OWNER);
    let lisp_only: Vec<String> = lisp_codes(&lisp_owner)
        .into_iter()
        .filter(|c| !rust_codes.contains(c))
        .collect();
    assert!(
        lisp_only.iter().any(|c| c == "too_many_sessions"),
        "{LISP_OWNER} names no elisp code: {lisp_only:?}"
    );
    let all: Vec<String> = rust_codes.iter().chain(&lisp_only).cloned().collect();

    let mut paths = Vec::new();
    files(&root().join("src"), "rs", &mut paths);
    let rust_files = paths.len();
    // `lisp/` only: its subfolders are not the package.
    paths.extend(
        fs::read_dir(root().join("lisp"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "el")),
    );
    assert!(rust_files > 30 && paths.len() > rust_files + 5, "{paths:?}");
    paths.sort();

    // The engine's codes are the module's in Rust; the elisp-only ones are the elisp
    // owner's, and no Rust file writes them either.
    let bad = strays_in(&paths, &[RUST_OWNER, LISP_OWNER], &all);
    assert!(
        bad.is_empty(),
        "reason codes written outside {RUST_OWNER} and {LISP_OWNER} (use Reason::X in Rust, \
         the gptel-scope--reason- constant in elisp):\n{}",
        bad.join("\n")
    );

    // The owners write each code once.
    let rust_owner = read(RUST_OWNER);
    for c in &rust_codes {
        let n = rust_owner.matches(&format!("\"{c}\"")).count();
        assert_eq!(n, 1, "{RUST_OWNER} writes \"{c}\" {n} times");
    }
    for c in lisp_codes(&lisp_owner) {
        let n = lisp_owner.matches(&format!("\"{c}\"")).count();
        assert_eq!(n, 1, "{LISP_OWNER} writes \"{c}\" {n} times");
    }
}

#[test]
fn the_checker_finds_a_stray_code() {
    let codes = vec!["command_not_allowed".to_string(), "denied".to_string()];
    assert_eq!(
        strays(
            "src/x.rs",
            "// \"denied\" in a comment\nlet r = \"command_not_allowed\";\n#[cfg(test)]\n\"denied\"",
            &codes
        ),
        ["src/x.rs:2: \"command_not_allowed\""]
    );
    assert_eq!(
        strays("lisp/x.el", ";; \"denied\"\n(or r \"denied\")", &codes),
        ["lisp/x.el:2: \"denied\""]
    );
    assert!(strays(
        "src/policy/decide/mod.rs",
        "const D: &str = \"denied\";",
        &codes
    )
    .is_empty());
    assert_eq!(
        lisp_codes("(defconst gptel-scope--reason-denied \"denied\"\n  \"Doc.\")"),
        ["denied"]
    );
}

#[test]
fn tool_names_are_written_only_by_their_owner() {
    let names: Vec<String> = Tool::ALL.iter().map(|t| t.name().to_string()).collect();
    let mut paths = Vec::new();
    files(&root().join("src"), "rs", &mut paths);
    assert!(paths.len() > 30, "{paths:?}");
    paths.sort();
    let bad = strays_in(&paths, &[TOOL_OWNER], &names);
    assert!(
        bad.is_empty(),
        "tool names written outside {TOOL_OWNER} (use Tool::X.name()):\n{}",
        bad.join("\n")
    );
    let owner = read(TOOL_OWNER);
    for n in &names {
        let k = owner.matches(&format!("\"{n}\"")).count();
        assert_eq!(k, 1, "{TOOL_OWNER} writes \"{n}\" {k} times");
    }
}

#[test]
fn the_checker_finds_a_stray_tool_name() {
    let names = vec![Tool::ReadFile.name().to_string()];
    assert_eq!(
        strays(
            "src/fs/x.rs",
            "/// \"read_file\" in a doc\nmatch op { \"read_file\" => 1 }\n",
            &names
        ),
        ["src/fs/x.rs:2: \"read_file\""]
    );
}

/// The lines (from 1) of `text` that import the whole parent module at the top level: exactly
/// `use super::*;` at column 0. An indented one (in `mod tests { ... }`) is not.
fn wholesale_parent_imports(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| *l == "use super::*;")
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn no_wholesale_parent_imports() {
    let mut paths = Vec::new();
    files(&root().join("src"), "rs", &mut paths);
    assert!(paths.len() > 30, "{paths:?}");
    paths.sort();
    let mut bad = Vec::new();
    for p in &paths {
        if p.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let rel = p
            .strip_prefix(root())
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(p).unwrap_or_else(|e| panic!("{rel}: {e}"));
        bad.extend(
            wholesale_parent_imports(&text)
                .into_iter()
                .map(|n| format!("{rel}:{n}: use super::*;")),
        );
    }
    assert!(
        bad.is_empty(),
        "wholesale parent imports outside the test files (name the imports: \
         use super::{{A, B}}; or use crate::...::{{A, B}};):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checker_finds_a_wholesale_parent_import() {
    assert_eq!(
        wholesale_parent_imports("//! x\nuse super::*;\nmod tests {\n    use super::*;\n}\n"),
        [2]
    );
    assert!(wholesale_parent_imports("use super::{A, B};\n    use super::*;\n").is_empty());
}
