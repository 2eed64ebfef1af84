//! The decision invariants (tests/invariants/mod.rs) over every corpus command and over
//! commands and scopes from a deterministic generator, so that `cargo test` exercises what
//! the fuzz target checks even where cargo-fuzz is not installed.

#[path = "support/invariants.rs"]
mod invariants;
use invariants::*;

use std::path::Path;

const BROAD_SCOPE: &str = r#"
paths:
  read: ["@ROOT@/repo/**"]
  write: ["@ROOT@/repo/**"]
  deny: ["**/.env"]
bash_tools:
  categories:
    read_only: [ls, cat, grep, find, head, tail, wc, git, sed, awk, sort, uniq, cut, tr, diff, jq, xargs, env]
    safe_write: [mkdir, touch, echo, cp, tee, make, cargo, npm]
  deny: [rm, curl]
  path_arguments: warn
"#;

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn invariants_hold_for_every_corpus_command() {
    let cmds = corpus_commands(manifest());
    assert!(cmds.len() > 1000, "corpora not found: {}", cmds.len());
    let mut broken = Vec::new();
    for scope_text in [DEFAULT_SCOPE, BROAD_SCOPE] {
        let scope = load_scope(scope_text).unwrap();
        for c in &cmds {
            broken.extend(check(&scope, c));
        }
    }
    assert!(
        broken.is_empty(),
        "{} broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn invariants_hold_for_generated_commands_and_scopes() {
    let mut r = Rng::new(0x5eed_cafe_f00d);
    let mut broken = Vec::new();
    let mut allowed = 0;
    for i in 0..4000 {
        let scope_text = if i % 4 == 0 {
            DEFAULT_SCOPE.to_string()
        } else {
            generate_scope(&mut r)
        };
        let scope = load_scope(&scope_text).expect("generated scope loads");
        let cmd = generate(&mut r, 0);
        if decide_timed(&scope, &cmd).is_some_and(|(d, _)| d.allowed) {
            allowed += 1;
        }
        broken.extend(
            check(&scope, &cmd)
                .into_iter()
                .map(|b| format!("{b}\n  scope: {scope_text:?}")),
        );
    }
    // The generator must reach allowed decisions, or invariant (a) is never exercised.
    assert!(
        allowed > 200,
        "only {allowed} generated commands were allowed"
    );
    assert!(
        broken.is_empty(),
        "{} broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn invariant_checker_catches_an_unlisted_command() {
    // The checker itself must be able to fail: these are not allowed by the default scope.
    let scope = load_scope(DEFAULT_SCOPE).unwrap();
    for (cmd, want) in [
        ("ls; rm -rf x", "`rm` is denied by the scope"),
        ("ls && python3 x.py", "`python3` is not listed in the scope"),
        ("cat $(id)", "`id` is not listed in the scope"),
        ("$x", "a command name is not static"),
        ("sh -c 'ls; sed x'", "`sed` is not listed in the scope"),
        ("find . -exec sed {} \\;", "`sed` is not listed in the scope"),
        ("timeout 5 nice -n 1 perl x", "`perl` is not listed in the scope"),
        ("timeout --sig KILL 5 perl x", "`perl` is not listed in the scope"),
        ("echo ${x:-$(id)}", "the walk cannot see through a parameter expansion that can run commands: `${x:-$(id)}`"),
        ("cat <<EOF\n$(uname)\nEOF", "`uname` is not listed in the scope"),
        ("{uname,-a}", "`uname` is not listed in the scope"),
    ] {
        let found = unlisted_commands(&scope, cmd);
        assert!(found.iter().any(|f| f == want), "{cmd:?}: {found:?}");
    }
    for cmd in [
        "ls -la",
        "git log -1 | head",
        "find . -name '*.c' -exec grep -l x {} +",
        "env ls",
        "{ls,-la}",
        "cat <<'EOF'\n$(uname)\nEOF",
        "sh -c 'ls src'",
        "$'ls' -la",
        "timeout -s KILL 5 ls",
        "timeout -s \u{fffd}KILL 5 ls",
        "timeout -s KILL ~ ls",
        "timeout --sig KILL \u{fffd}0 ls src",
        "timeout --kill 1 5 ls",
    ] {
        assert_eq!(
            unlisted_commands(&scope, cmd),
            Vec::<String>::new(),
            "{cmd:?}"
        );
    }
}

#[test]
fn raw_fuzz_inputs_are_split_into_scope_and_command() {
    assert!(check_bytes(b"ls -la").is_empty());
    assert!(check_bytes(b"not: [valid\0ls").is_empty());
    assert!(check_bytes(b"\xff\xfe\0\xff").is_empty());
}

/// Inputs that once made the engine panic (found by the generator and the fuzzer).
#[test]
fn regression_inputs_get_a_decision_without_panicking() {
    let scope = load_scope(BROAD_SCOPE).unwrap();
    let sh_listed = load_scope(&BROAD_SCOPE.replace("env]", "env, sh]")).unwrap();
    for (s, cmd) in [
        (&scope, "git -C"),
        (&scope, "git -c"),
        (&scope, "xargs -é"),
        (&scope, "cat -é"),
        (&scope, "git log -é"),
        (&sh_listed, "sh -o"),
    ] {
        let (d, _) = decide_timed(s, cmd).unwrap();
        assert!(!d.command.is_empty(), "{cmd}");
        assert!(check(s, cmd).is_empty(), "{cmd}: {:?}", check(s, cmd));
    }
}

/// Times the engine and the independent walk on one input file (`GPTEL_SCOPE_PROBE=path
/// cargo test --test invariants probe -- --ignored --nocapture`), to triage fuzz artifacts.
#[test]
#[ignore]
fn probe() {
    let Ok(p) = std::env::var("GPTEL_SCOPE_PROBE") else {
        return;
    };
    let data = std::fs::read(p).unwrap();
    let cmd = String::from_utf8_lossy(&data).into_owned();
    let scope = load_scope(DEFAULT_SCOPE).unwrap();
    let (d, took) = decide_timed(&scope, &cmd).unwrap();
    eprintln!(
        "engine: {took:?} allowed={} reason={:?}",
        d.allowed, d.reason
    );
    let t = std::time::Instant::now();
    let u = unlisted_commands(&scope, &cmd);
    eprintln!("walk: {:?} {u:?}", t.elapsed());
}
