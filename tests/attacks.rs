//! Every case of the shared attack corpus, judged by the engine: no attack allowed, no
//! benign command denied. One test per family of the corpus (every miss of a family is
//! reported with its id), and one over the whole file.

mod common;
use common::*;

/// Judges every case whose id starts with `prefix` (all when empty); returns the misses.
fn misses(prefix: &str) -> (usize, Vec<String>) {
    attack_misses(&attack_cases(), prefix)
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
    attacks_benign_read_only_allowed => "BEN-",
    attacks_benign_writes_need_write_scope => "BENW-",
    attacks_chaining => "CHN-",
    attacks_pipes => "PIPE-",
    attacks_command_substitution => "SUB-",
    attacks_process_substitution => "PSUB-",
    attacks_redirects => "RED-",
    attacks_here_documents => "HDOC-",
    attacks_quoting => "QUO-",
    attacks_variables => "VAR-",
    attacks_arithmetic => "ARI-",
    attacks_functions_and_aliases => "FUN-",
    attacks_environment => "ENV-",
    attacks_wrappers => "WRP-",
    attacks_dangerous_arguments => "ARG-",
    attacks_path_escapes => "PATH-",
    attacks_globs => "GLOB-",
    attacks_unicode => "UNI-",
    attacks_control_characters => "CTL-",
    attacks_comments => "CMT-",
    attacks_brace_expansion => "BRC-",
    attacks_agent_config_files => "CFG-",
    attacks_deny_list => "DENY-",
}

#[test]
fn attack_corpus_zero_misses() {
    let (n, m) = misses("");
    assert_eq!(n, 226);
    assert!(m.is_empty(), "{} misses:\n{}", m.len(), m.join("\n"));
}
