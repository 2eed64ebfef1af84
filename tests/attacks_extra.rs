//! The project's own attack corpus (tests/corpus/attacks-extra.tsv), judged like the shared
//! one: no attack allowed, no benign command denied, `needs_write` cases refused for scope in
//! the read-only scope and allowed with write scope. Every miss is reported with its id.
//! `gap` rows are attacks the engine is known to allow (documented in SECURITY.md): they
//! must still be allowed, so that closing a gap forces the row to become `deny`.
//! `scope_document` rows write a scope document: refused in the read-only scope, and refused
//! with reason `scope_document` (which no grant lifts) even when every command they use is
//! listed and the whole project is writable.

mod common;

/// Rows of tests/corpus/attacks-extra.tsv.
const N_EXTRA: usize = 655;
use common::*;

/// Judges every case whose id starts with `prefix` (all when empty); returns the misses.
fn misses(prefix: &str) -> (usize, Vec<String>) {
    attack_misses(&attack_cases_from(&extra_corpus_path()), prefix)
}

macro_rules! family {
    ($($name:ident => $prefix:literal),* $(,)?) => {$(
        #[test]
        fn $name() {
            let (n, m) = misses($prefix);
            assert!(n > 0, "no case with prefix {}", $prefix);
            assert!(m.is_empty(), "{} of {} cases missed:\n{}", m.len(), n, m.join("\n"));
        }
    )*};
}

family! {
    extra_benign_read_only_allowed => "XBEN-",
    extra_benign_writes_need_write_scope => "XBENW-",
    extra_chaining => "XCHN-",
    extra_substitution => "XSUB-",
    extra_redirects => "XRED-",
    extra_here_documents => "XHDOC-",
    extra_wrappers => "XWRP-",
    extra_interpreters_and_shell_escapes => "XINT-",
    extra_git_code_execution => "XGIT-",
    extra_environment_poisoning => "XENV-",
    extra_path_escapes => "XPATH-",
    extra_quoting => "XQUO-",
    extra_unicode => "XUNI-",
    extra_brace_expansion => "XBRC-",
    extra_globs => "XGLOB-",
    extra_arithmetic => "XARI-",
    extra_variables => "XVAR-",
    extra_traps_coproc_exec => "XTRAP-",
    extra_working_directory => "XCWD-",
    extra_leaks_through_allowed_commands => "XLEAK-",
    extra_recursive_readers => "XTREE-",
    extra_scope_documents => "XSCOPE-",
    extra_shell_state => "STATE-",
    extra_optional_values => "XOPTV-",
    extra_bundled_short_options => "XBUND-",
    extra_path_lists => "XPLIST-",
    extra_files_named_by_the_environment => "XRENV-",
    extra_run_time_name_lists => "XNAMES-",
    extra_writes_through_option_values => "XOPTW-",
    extra_wrapper_options => "XOPTX-",
    extra_git_configuration => "XGCFG-",
    extra_git_history => "XHIST-",
}

/// Every row has the five columns, a known expectation, a source, and a unique id.
#[test]
fn extra_corpus_is_well_formed() {
    let text = std::fs::read_to_string(extra_corpus_path()).unwrap();
    let mut ids = std::collections::HashSet::new();
    let mut bad = Vec::new();
    for (i, l) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() != 5
            || !matches!(
                f[3],
                "allow" | "deny" | "needs_write" | "gap" | "scope_document"
            )
            || f[4].trim().is_empty()
            || !ids.insert(f[0].to_string())
        {
            bad.push(format!("line {}: {l}", i + 1));
        }
    }
    assert!(bad.is_empty(), "malformed rows:\n{}", bad.join("\n"));
    assert_eq!(
        text.lines().next(),
        Some("id\tcommand\tattack\texpected\tsource")
    );
}

#[test]
fn extra_corpus_zero_misses() {
    let (n, m) = misses("");
    assert_eq!(n, N_EXTRA);
    assert!(m.is_empty(), "{} misses:\n{}", m.len(), m.join("\n"));
}
