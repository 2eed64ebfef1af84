//! Every case of the shared attack corpus, judged by the engine: no attack allowed, no
//! benign command denied. Every miss is reported with its id.

mod common;
use common::*;

#[test]
fn attack_corpus_zero_misses() {
    let fx = AttackFixture::new();
    let ro = scope(&fx.scope_text(false));
    let rw = scope(&fx.scope_text(true));
    let home = fx.home();
    let mut misses = Vec::new();
    let cases = attack_cases();
    assert!(cases.len() >= 200, "corpus has {} cases", cases.len());
    for c in &cases {
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
            _ => {}
        }
    }
    assert!(misses.is_empty(), "{} misses:\n{}", misses.len(), misses.join("\n"));
}
