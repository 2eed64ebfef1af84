//! `make bench-engine`: decisions per second and median latency over the real corpus, with
//! the bare brush-parser parse of the same commands measured side by side.

use std::path::Path;
use std::time::Instant;

use gptel_scope::decide::{self, Ctx};
use gptel_scope::paths::Matcher;
use gptel_scope::scope::Scope;

const RUNS: usize = 7;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/real-commands.jsonl");
    let text = match std::fs::read_to_string(&corpus) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cannot read {}: {e}", corpus.display());
            std::process::exit(1);
        }
    };
    let commands: Vec<String> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["command"].as_str().map(str::to_string))
        .collect();
    let dir = std::env::temp_dir().join(format!("gptel-scope-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let dir = std::fs::canonicalize(&dir).expect("canonical temp dir");
    let scope: Scope = serde_yaml::from_str(&format!(
        "paths: {{read: [\"{0}/**\"], write: [\"{0}/out/**\"], deny: [\"**/.env\"]}}\nbash_tools: {{categories: {{read_only: [ls, cat, grep, find, head, tail, wc, git, sed, awk], safe_write: [mkdir, touch, echo]}}}}\n",
        dir.display()
    ))
    .expect("scope");
    let matcher = Matcher::new(&scope.paths, Some(&dir), None).expect("matcher");
    let ctx = Ctx { scope: &scope, matcher: &matcher, home: Some(&dir), grants: &[], tool: "run_bash_command" };

    let mut decide_us = Vec::new();
    let mut parse_us = Vec::new();
    let mut per_call = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        for c in &commands {
            let _ = gptel_scope::shell::parse_program(c);
        }
        parse_us.push(t.elapsed().as_secs_f64() * 1e6 / commands.len() as f64);
        let t = Instant::now();
        for c in &commands {
            let t1 = Instant::now();
            let d = decide::decide(&ctx, c, &dir);
            std::hint::black_box(&d);
            per_call.push(t1.elapsed().as_secs_f64() * 1e6);
        }
        decide_us.push(t.elapsed().as_secs_f64() * 1e6 / commands.len() as f64);
    }
    let parse = median(&mut parse_us);
    let mean_decide = median(&mut decide_us);
    let call_median = median(&mut per_call);
    println!("corpus: {} commands, {RUNS} runs (medians)", commands.len());
    println!("{:<44} {:>12}", "figure", "value");
    println!("{:<44} {:>10.1} µs", "bare brush-parser parse, mean per command", parse);
    println!("{:<44} {:>10.1} µs", "full decision, mean per command", mean_decide);
    println!("{:<44} {:>10.1} µs", "full decision, median latency", call_median);
    println!("{:<44} {:>12.0}", "decisions per second", 1e6 / mean_decide);
    println!("{:<44} {:>12.2}", "ratio decision / parse (means)", mean_decide / parse);
    let _ = std::fs::remove_dir_all(&dir);
}
