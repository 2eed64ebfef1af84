//! Arbitrary text through the YAML fast path (src/yaml_fast.rs) and serde_yaml. Fails when
//! the fast path gives a value for a text serde_yaml rejects, or a value other than
//! serde_yaml's (mapping order included), on a panic, and when the fast path alone takes
//! longer than the time limit of a decision (100 ms, or `GPTEL_SCOPE_TIME_LIMIT_MS`): it
//! reads in one pass, so only a quadratic blunder or worse comes near that. serde_yaml is not
//! timed: the limit is about our code, and a busy machine slows both.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/yaml_diff.rs"]
mod yaml_diff;

fn time_limit() -> Duration {
    let ms = std::env::var("GPTEL_SCOPE_TIME_LIMIT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    Duration::from_millis(ms)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let t = Instant::now();
    let fast = gptel_scope::yaml_fast::parse(text);
    assert!(t.elapsed() < time_limit(), "the fast path took {:?}", t.elapsed());
    drop(fast);
    if let Err(e) = yaml_diff::check(text) {
        panic!("{e}");
    }
});
