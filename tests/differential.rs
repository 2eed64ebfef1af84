//! Differential check against bash: for a sample of commands the engine allows (from the
//! real agent corpus and the attack corpora), bash runs the command in a throwaway sandbox
//! where nothing real can execute, and every program bash tried to run must be one the
//! decision judged.
//!
//! The sandbox: a temporary directory laid out like the attack fixture, HOME inside it, an
//! empty directory as the only PATH entry, and a `command_not_found_handle` (loaded through
//! BASH_ENV) that records the expanded name of every external command bash would have run,
//! then returns 0 without running anything. Builtins still run, inside the sandbox (the
//! engine only allows writes there). The whole process group is killed after 5 seconds.
//! No network, nothing outside the temporary directory; the test skips where bash or
//! timeout is missing.

mod common;
use common::*;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};

/// Commands a coding agent runs, listed so that many real commands are allowed.
const REAL_SCOPE: &str = r#"
paths:
  read: ["@ROOT@/**"]
  write: ["@ROOT@/repo/**"]
bash_tools:
  categories:
    read_only: [ls, cat, grep, find, head, tail, wc, git, sed, awk, sort, uniq, cut, tr, diff, jq, xargs, env, rg, file, stat, basename, dirname, realpath, which, date, tree, du, printf, sleep, seq, nl, column]
    safe_write: [mkdir, touch, echo, cp, tee, make, cargo, npm, python3, node, emacs, sh, bash, chmod]
  deny: [rm, curl, sudo]
  path_arguments: enforce
"#;

const SAMPLE: usize = 100;

fn tool(p: &str) -> Option<&'static str> {
    [format!("/usr/bin/{p}"), format!("/bin/{p}")]
        .into_iter()
        .find(|c| Path::new(c).exists())
        .map(|c| Box::leak(c.into_boxed_str()) as &'static str)
}

/// The names a decision judged: every command's name and every wrapper it came through.
fn judged(d: &gptel_scope::policy::decide::Decision) -> BTreeSet<String> {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    let mut out = BTreeSet::new();
    for c in &d.commands {
        out.insert(base(&c.name));
        for v in &c.via {
            out.insert(base(v));
        }
    }
    out
}

struct Outcome {
    ran: Vec<String>,
    timed_out: bool,
}

/// Runs `command` with bash in the sandbox rooted at `root` (cwd `root/repo`).
fn run_in_sandbox(bash: &str, timeout: &str, root: &Path, command: &str) -> Outcome {
    let empty = root.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let trace = root.join("trace.log");
    let _ = std::fs::remove_file(&trace);
    let prelude = root.join("prelude.sh");
    std::fs::write(
        &prelude,
        "ulimit -f 2048 2>/dev/null\ncommand_not_found_handle() { printf 'RUN %s\\n' \"$1\" >> \"$GPTEL_SCOPE_TRACE\"; return 0; }\n",
    )
    .unwrap();
    let status = Command::new(timeout)
        .args([
            "-s",
            "KILL",
            "5",
            bash,
            "--noprofile",
            "--norc",
            "-c",
            command,
        ])
        .current_dir(root.join("repo"))
        .env_clear()
        .env("HOME", root.join("home"))
        .env("PATH", &empty)
        .env("BASH_ENV", &prelude)
        .env("GPTEL_SCOPE_TRACE", &trace)
        .env("LANG", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    let ran = std::fs::read_to_string(&trace)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("RUN "))
        .map(|s| s.rsplit('/').next().unwrap_or(s).to_string())
        .collect();
    Outcome {
        ran,
        timed_out: status.code().is_none() || status.code() == Some(137),
    }
}

/// Candidate commands: (text with @ROOT@ still in it, which scope).
fn candidates() -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for c in attack_cases()
        .into_iter()
        .chain(attack_cases_from(&extra_corpus_path()))
    {
        out.push((c.command, true));
    }
    let text = std::fs::read_to_string(corpus_dir().join("real-commands.jsonl")).unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        out.push((v["command"].as_str().unwrap().to_string(), false));
    }
    out
}

#[test]
fn differential_commands_bash_runs_are_the_commands_the_engine_judged() {
    let (Some(bash), Some(timeout)) = (tool("bash"), tool("timeout")) else {
        eprintln!("bash or timeout missing: skipped");
        return;
    };
    let mut allowed = Vec::new();
    for (text, attack_scope) in candidates() {
        let fx = AttackFixture::new();
        let root = fx.root().to_string_lossy().into_owned();
        let sc = if attack_scope {
            scope(&fx.scope_text(true))
        } else {
            scope(&REAL_SCOPE.replace("@ROOT@", &root))
        };
        let cmd = text.replace("@ROOT@", &root);
        let d = decide_in(&sc, &fx.repo(), Some(&fx.home()), None, &[], &cmd);
        // Path-qualified programs would run for real even with an empty PATH: never sampled.
        if d.allowed && !d.commands.iter().any(|c| c.name.contains('/')) {
            allowed.push((text, attack_scope));
        }
    }
    assert!(
        allowed.len() >= SAMPLE,
        "only {} allowed commands",
        allowed.len()
    );
    // A deterministic, evenly spread sample.
    let step = allowed.len() as f64 / SAMPLE as f64;
    let sample: Vec<&(String, bool)> = (0..SAMPLE)
        .map(|i| &allowed[(i as f64 * step) as usize])
        .collect();

    let mut misses = Vec::new();
    let mut ran_total = 0;
    let mut timeouts = 0;
    for (text, attack_scope) in sample {
        let fx = AttackFixture::new();
        let root = fx.root().to_string_lossy().into_owned();
        let sc = if *attack_scope {
            scope(&fx.scope_text(true))
        } else {
            scope(&REAL_SCOPE.replace("@ROOT@", &root))
        };
        let cmd = text.replace("@ROOT@", &root);
        let d = decide_in(&sc, &fx.repo(), Some(&fx.home()), None, &[], &cmd);
        assert!(d.allowed, "{cmd}");
        let names = judged(&d);
        let out = run_in_sandbox(bash, timeout, fx.root(), &cmd);
        if out.timed_out {
            timeouts += 1;
        }
        ran_total += out.ran.len();
        for r in &out.ran {
            if !names.contains(r) {
                misses.push(format!(
                    "{cmd:?}\n  bash ran `{r}`, the decision judged {names:?}"
                ));
            }
        }
        // Nothing escaped the sandbox: the fixture outside repo/ is untouched.
        assert_eq!(
            std::fs::read_to_string(fx.home().join(".bashrc")).unwrap(),
            "x\n",
            "{cmd}"
        );
    }
    eprintln!("differential: {SAMPLE} sampled of {} allowed, {ran_total} program runs recorded, {timeouts} timeouts", allowed.len());
    assert!(
        ran_total >= SAMPLE,
        "the sandbox recorded only {ran_total} runs"
    );
    assert!(
        misses.is_empty(),
        "{} programs bash ran that the engine did not judge:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn differential_sandbox_records_and_contains() {
    let (Some(bash), Some(timeout)) = (tool("bash"), tool("timeout")) else {
        return;
    };
    let fx = AttackFixture::new();
    let out = run_in_sandbox(
        bash,
        timeout,
        fx.root(),
        "ls -la | grep x; echo \"$(git log)\" > out.txt; env wc; find . -exec cat {} \\;",
    );
    let mut ran = out.ran.clone();
    ran.sort();
    assert_eq!(ran, vec!["env", "find", "git", "grep", "ls"]);
    assert!(fx.repo().join("out.txt").exists());
    assert!(!out.timed_out);
}
