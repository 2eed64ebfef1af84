//! Every case of the shared attack corpus, judged by the engine: no attack allowed, no
//! benign command denied. One test per family of the corpus (every miss of a family is
//! reported with its id), and one over the whole file.

mod common;
use common::*;

/// Judges every case whose id starts with `prefix` (all when empty); returns the misses.
fn misses(prefix: &str) -> (usize, Vec<String>) {
    let fx = AttackFixture::new();
    let ro = scope(&fx.scope_text(false));
    let rw = scope(&fx.scope_text(true));
    let home = fx.home();
    let mut misses = Vec::new();
    let mut n = 0;
    for c in attack_cases().iter().filter(|c| c.id.starts_with(prefix)) {
        n += 1;
        let text = c.command.replace("@ROOT@", &fx.root().to_string_lossy());
        let d = decide_in(&ro, &fx.repo(), Some(&home), None, &[], &text);
        match c.expected.as_str() {
            "allow" if !d.allowed => misses.push(format!("{} over-blocked: {:?} {}", c.id, d.reason, d.message)),
            "deny" if d.allowed => misses.push(format!("{} allowed: {}", c.id, text)),
            "needs_write" => {
                if d.allowed || !matches!(d.reason, Some("directory_not_in_scope") | Some("path_not_in_scope")) {
                    misses.push(format!("{} read-only: allowed={} reason={:?} {}", c.id, d.allowed, d.reason, d.message));
                }
                let w = decide_in(&rw, &fx.repo(), Some(&home), None, &[], &text);
                if !w.allowed {
                    misses.push(format!("{} with write scope: {:?} {}", c.id, w.reason, w.message));
                }
            }
            "allow" | "deny" => {}
            other => misses.push(format!("{}: unknown expectation {other}", c.id)),
        }
    }
    (n, misses)
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
