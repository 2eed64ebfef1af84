//! Arbitrary command strings and scope documents through config loading and decision.
//! Input: `SCOPE-YAML \0 COMMAND`, or a bare command judged under the attack corpus scope.
//! Fails on a panic, and on any broken invariant of tests/support/invariants.rs: an allowed
//! command holding a command the scope does not list (found by an independent walk of the
//! brush AST), or a decision slower than 100 ms.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/invariants.rs"]
mod invariants;

fuzz_target!(|data: &[u8]| {
    let broken = invariants::check_bytes(data);
    assert!(broken.is_empty(), "broken invariants:\n{}", broken.join("\n"));
});
