//! `make bench-engine`: the speed of a decision over the real corpus, measured side by side
//! with the bare brush-parser parse of the same commands, and the cost of loading a scope.
//!
//! Every figure is the median of several passes. Besides the readable report, each figure
//! is printed as a `row` line (tab-separated: figure, ours, reference, ratio, target, pass)
//! that `make bench` gathers into one table.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use gptel_scope::policy::decide::{self, Ctx};
use gptel_scope::policy::paths::Matcher;
use gptel_scope::scope::Scope;
use gptel_scope::emacs::api;
use gptel_scope::scope::config;

const RUNS: usize = 15;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// One row of the `make bench` table; `target` reads like `<= 1.5`.
fn row(figure: &str, ours: &str, reference: &str, ratio: Option<f64>, target: &str, pass: Option<bool>) {
    let ratio = ratio.map(|r| format!("{r:.3}")).unwrap_or_else(|| "-".into());
    let pass = match pass {
        Some(true) => "pass",
        Some(false) => "MISS",
        None => "-",
    };
    println!("row\t{figure}\t{ours}\t{reference}\t{ratio}\t{target}\t{pass}");
}

fn corpus() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus/real-commands.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["command"].as_str().map(str::to_string))
        .collect()
}

/// One pass of `f` over the corpus: its time in ms; the time of each command, in µs, is
/// added to `each`.
fn pass(commands: &[String], each: &mut Vec<f64>, mut f: impl FnMut(&str)) -> f64 {
    let t = Instant::now();
    for c in commands {
        let t1 = Instant::now();
        f(c);
        each.push(t1.elapsed().as_secs_f64() * 1e6);
    }
    t.elapsed().as_secs_f64() * 1e3
}

/// The passes of one figure, taken in turn with the others' so that the machine's changing
/// load falls on all of them alike.
#[derive(Default)]
struct Passes {
    totals: Vec<f64>,
    each: Vec<f64>,
}

impl Passes {
    fn run(&mut self, commands: &[String], f: impl FnMut(&str)) {
        let t = pass(commands, &mut self.each, f);
        self.totals.push(t);
    }

    /// Median pass in ms, median command in µs.
    fn medians(&mut self) -> (f64, f64) {
        (median(&mut self.totals), median(&mut self.each))
    }
}

fn scope_yaml(dir: &Path) -> String {
    format!(
        "paths: {{read: [\"{0}/**\"], write: [\"{0}/out/**\"], deny: [\"**/.env\"]}}\nbash_tools: {{categories: {{read_only: [ls, cat, grep, find, head, tail, wc, git, sed, awk], safe_write: [mkdir, touch, echo]}}}}\n",
        dir.display()
    )
}

/// A scope document with `n` path patterns (read, write and deny) and some commands.
fn big_scope(dir: &Path, n: usize, salt: usize) -> String {
    let mut s = format!("# generated, {salt}\npaths:\n  read:\n");
    for i in 0..n / 2 {
        s.push_str(&format!("    - \"{}/src/module{i}/**\"\n", dir.display()));
    }
    s.push_str("  write:\n");
    for i in 0..n / 4 {
        s.push_str(&format!("    - \"{}/out/part{i}/*.txt\"\n", dir.display()));
    }
    s.push_str("  deny:\n");
    for i in 0..n - n / 2 - n / 4 {
        s.push_str(&format!("    - \"**/secret{i}/**\"\n"));
    }
    s.push_str("bash_tools:\n  categories:\n    read_only: [ls, cat, grep, git log, git diff]\n    safe_write: [mkdir, touch]\n");
    s
}

/// Sets a file's modification time ten seconds back.
fn backdate(path: &std::path::Path) {
    let f = std::fs::File::options().write(true).open(path).expect("open to backdate");
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(10)).expect("backdate");
}

fn main() {
    let commands = corpus();
    let dir = std::env::temp_dir().join(format!("gptel-scope-bench-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("out")).expect("temp dir");
    let dir = std::fs::canonicalize(&dir).expect("canonical temp dir");
    let scope: Scope = serde_yaml::from_str(&scope_yaml(&dir)).expect("scope");
    let matcher = Matcher::new(&scope.paths, Some(&dir), None).expect("matcher");
    let ctx = Ctx { scope: &scope, matcher: &matcher, home: Some(&dir), grants: &[], tool: "run_bash_command", project_root: None, masked: false };

    // The same scope as a file, for the JSON entry point (loaded once, then cached).
    let scope_file = dir.join("scope.yml");
    std::fs::write(&scope_file, scope_yaml(&dir)).expect("scope file");
    // A document written in the last two seconds is read again on every call (a second
    // write in the same clock tick could go unseen); a scope.yml in use is older than that.
    backdate(&scope_file);
    let request = |c: &str| {
        serde_json::json!({"command": c, "directory": dir, "home": dir, "sources": [{"file": scope_file}], "tool": "run_bash_command"}).to_string()
    };
    let requests: Vec<String> = commands.iter().map(|c| request(c)).collect();

    // Warm up every path once.
    for c in &commands {
        black_box(gptel_scope::shell::bare_parse(c).ok());
        black_box(decide::decide(&ctx, c, &dir));
    }

    // What run_bash_command sends through the module: the command, the directory, and the
    // rest of the request (the buffer's scope) serialized once.
    let scope_json = serde_json::json!({"home": dir, "sources": [{"file": scope_file}]}).to_string();
    let session = gptel_scope::emacs::session::Session::open(&scope_json).expect("session");
    let dir_text = dir.display().to_string();
    let (mut parse, mut ours, mut decision, mut brief, mut json) = Default::default();
    for _ in 0..RUNS {
        Passes::run(&mut parse, &commands, |c| {
            black_box(gptel_scope::shell::bare_parse(black_box(c)).ok());
        });
        Passes::run(&mut ours, &commands, |c| {
            black_box(gptel_scope::shell::parse_program(black_box(c)).ok());
        });
        Passes::run(&mut decision, &commands, |c| {
            black_box(decide::decide(&ctx, black_box(c), &dir));
        });
        Passes::run(&mut brief, &commands, |c| {
            black_box(api::decide_command_in(&session, black_box(c), &dir_text).ok());
        });
        let mut k = 0;
        Passes::run(&mut json, &commands, |_| {
            black_box(api::check_command(black_box(&requests[k])).ok());
            k += 1;
        });
    }
    let (parse_ms, parse_each) = Passes::medians(&mut parse);
    let (ours_ms, ours_each) = Passes::medians(&mut ours);
    let (decide_ms, decide_each) = Passes::medians(&mut decision);
    let (brief_ms, _) = Passes::medians(&mut brief);
    let (api_ms, _) = Passes::medians(&mut json);
    let n = commands.len() as f64;
    println!("corpus: {} commands, {RUNS} passes of each, taken in turn (medians)", commands.len());
    println!("{:<52} {:>10.2} ms  ({:.1} µs/command, per-command median {:.1} µs)", "bare brush-parser parse, one pass", parse_ms, parse_ms * 1e3 / n, parse_each);
    println!("{:<52} {:>10.2} ms  ({:.1} µs/command, per-command median {:.1} µs)", "our parse (precheck, then brush)", ours_ms, ours_ms * 1e3 / n, ours_each);
    println!("{:<52} {:>10.2} ms  ({:.1} µs/command, per-command median {:.1} µs)", "full decision (decide::decide), one pass", decide_ms, decide_ms * 1e3 / n, decide_each);
    println!("{:<52} {:>10.2} ms  ({:.1} µs/command)", "run_bash_command's request, in brief (api), one pass", brief_ms, brief_ms * 1e3 / n);
    println!("{:<52} {:>10.2} ms  ({:.1} µs/command)", "JSON request to JSON decision (api), one pass", api_ms, api_ms * 1e3 / n);
    println!("{:<52} {:>10.1} /s", "decisions per second", n / (decide_ms / 1e3));
    row(
        "Rust: decision / bare parse, corpus pass",
        &format!("{decide_ms:.2} ms"),
        &format!("{parse_ms:.2} ms"),
        Some(decide_ms / parse_ms),
        "(info)",
        None,
    );
    row(
        "Rust: run_bash_command's request (brief) / bare parse",
        &format!("{brief_ms:.2} ms"),
        &format!("{parse_ms:.2} ms"),
        Some(brief_ms / parse_ms),
        "(info)",
        None,
    );
    row(
        "Rust: JSON request+decision / bare parse",
        &format!("{api_ms:.2} ms"),
        &format!("{parse_ms:.2} ms"),
        Some(api_ms / parse_ms),
        "(info)",
        None,
    );

    // What the file system is asked per decision, and per brief request.
    let (asked0, stamps0) = (gptel_scope::policy::paths::probes_asked(), config::cache_stats().stamps_read);
    for c in &commands {
        black_box(api::decide_command_in(&session, c, &dir_text).ok());
    }
    let asked = (gptel_scope::policy::paths::probes_asked() - asked0) as f64 / n;
    let stamps = (config::cache_stats().stamps_read - stamps0) as f64 / n;
    println!("{:<52} {:>10.2} lstat, {:.2} scope stamps", "file system asked per brief request", asked, stamps);
    row(
        "Rust: lstat / scope stamps per brief request",
        &format!("{asked:.2} / {stamps:.2}"),
        "-",
        None,
        "(info)",
        None,
    );

    // git's object store: a `git log -p` decision in this repository looks at its index,
    // HEAD tree and history (SECURITY.md, "git's object store"); `git log -p` itself, and a
    // decision that needs no look (`git log --oneline`), for reference.
    let repo = std::fs::canonicalize(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).expect("repository");
    let repo_scope: Scope = serde_yaml::from_str(&scope_yaml(&repo)).expect("scope");
    let repo_matcher = Matcher::new(&repo_scope.paths, Some(&dir), None).expect("matcher");
    let repo_ctx = Ctx { scope: &repo_scope, matcher: &repo_matcher, home: Some(&dir), grants: &[], tool: "run_bash_command", project_root: None, masked: false };
    let commits = std::process::Command::new("git").args(["rev-list", "--all", "--count"]).current_dir(&repo).output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()).unwrap_or_default();
    let (mut look_ms, mut plain_ms, mut cmd_ms) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let t = Instant::now();
        black_box(decide::decide(&repo_ctx, "git log -p", &repo));
        look_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        black_box(decide::decide(&repo_ctx, "git log --oneline", &repo));
        plain_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let st = std::process::Command::new("git").args(["log", "-p"]).current_dir(&repo).stdout(std::process::Stdio::null()).status();
        assert!(st.is_ok_and(|s| s.success()));
        cmd_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (look, plain, cmd) = (median(&mut look_ms), median(&mut plain_ms), median(&mut cmd_ms));
    println!("{:<52} {:>10.2} ms  (git log --oneline: {plain:.2} ms; git log -p itself: {cmd:.2} ms; {commits} commits)", "git log -p decision, store look, this repository", look);
    row("Rust: git log -p decision (store look) / git log -p", &format!("{look:.2} ms"), &format!("{cmd:.2} ms"), Some(look / cmd), "(info)", None);

    // A cached scope document costs no file read; an edited one is read on the next call.
    let probe = request("ls");
    black_box(api::check_command(&probe).ok());
    let before = config::cache_stats();
    for _ in 0..1000 {
        black_box(api::check_command(&probe).ok());
    }
    let after = config::cache_stats();
    let reads = after.file_reads - before.file_reads;
    println!("{:<52} {:>10} file reads, {} cache hits", "1000 decisions with a cached scope.yml", reads, after.hits - before.hits);
    row("Rust: file reads for 1000 cached decisions", &reads.to_string(), "0", None, "= 0", Some(reads == 0));
    let deny = |v: &serde_json::Value| v["allowed"] == serde_json::Value::Bool(false);
    let first = api::check_command(&probe).expect("decision");
    std::fs::write(&scope_file, scope_yaml(&dir).replace("read_only: [ls, ", "read_only: [")).expect("edit");
    let edited = api::check_command(&probe).expect("decision");
    let picked = !deny(&first) && deny(&edited) && config::cache_stats().file_reads == after.file_reads + 1;
    println!("{:<52} {:>10}", "an edited scope.yml is read on the next call", picked);
    row("Rust: edited scope picked up on next call", if picked { "yes" } else { "no" }, "yes", None, "yes", Some(picked));

    // Loading (reading, validating, merging, compiling) a 1,000-pattern scope, uncached.
    let files: Vec<PathBuf> = (0..RUNS * 3)
        .map(|i| {
            let f = dir.join(format!("big{i}.yml"));
            std::fs::write(&f, big_scope(&dir, 1000, i)).expect("big scope");
            f
        })
        .collect();
    let mut load_ms: Vec<f64> = files
        .iter()
        .map(|f| {
            let req = serde_json::json!({"sources": [{"file": f}], "home": dir}).to_string();
            let t = Instant::now();
            let v = api::load_scope(&req).expect("big scope loads");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert_eq!(v["read"].as_array().map(Vec::len), Some(500));
            ms
        })
        .collect();
    let load = median(&mut load_ms);
    println!("{:<52} {:>10.3} ms", "load a 1,000-pattern scope.yml (uncached)", load);
    row("Rust: load 1,000-pattern scope (uncached)", &format!("{load:.3} ms"), "1 ms", Some(load), "< 1", Some(load < 1.0));
    // The figure the Emacs benchmark takes through the module: a decision under a scope
    // written just before (loaded, validated, compiled, then used).
    let mut first_ms: Vec<f64> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            std::fs::write(f, big_scope(&dir, 1000, RUNS * 3 + i)).expect("big scope");
            let req = serde_json::json!({"command": "ls", "directory": dir, "home": dir, "sources": [{"file": f}]}).to_string();
            let t = Instant::now();
            let v = api::check_command(&req).expect("decision");
            let ms = t.elapsed().as_secs_f64() * 1e3;
            assert!(v["allowed"].is_boolean());
            ms
        })
        .collect();
    let first = median(&mut first_ms);
    println!("{:<52} {:>10.3} ms", "first decision under a new 1,000-pattern scope", first);
    row("Rust: 1,000-pattern scope, first decision", &format!("{first:.3} ms"), "1 ms", Some(first), "(info)", None);
    tree_readers(&dir);
    read_file_rows(&dir, &scope_file);
    grep_rows();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `read_file` on a 150 MB log of 5,000,000 lines, beside what a user would run instead:
/// the first 400 lines (`head -400`) and 400 lines near the end (`tail -n +N | head -400`),
/// each taken the same number of times, alternately.
fn read_file_rows(dir: &Path, scope_file: &Path) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    const LINES: usize = 5_000_000;
    let log = dir.join("big.log");
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&log).expect("log"));
        for i in 0..LINES {
            writeln!(w, "2026-11-26 06:00:00.{:06} INFO request {i} served", i % 1_000_000).expect("write");
        }
    }
    let size_mb = std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
    let req = |offset: usize| {
        serde_json::json!({"path": log, "offset": offset, "limit": 400, "sources": [{"file": scope_file}], "home": dir}).to_string()
    };
    let shell = |script: &str| {
        let t = Instant::now();
        let out = Command::new("sh").arg("-c").arg(script).stdout(Stdio::piped()).output().expect("sh");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 400, "{script}");
        ms
    };
    let ours = |offset: usize| {
        let t = Instant::now();
        let v = gptel_scope::fs::tools::call("read_file", &req(offset));
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(v["success"], serde_json::json!(true), "{v}");
        assert_eq!(v["end_line"], serde_json::json!(offset + 400), "{v}");
        ms
    };
    let near_end = LINES - 1_000;
    let log_s = log.display();
    let (mut head_ours, mut head_ref, mut end_ours, mut end_ref) = (vec![], vec![], vec![], vec![]);
    for _ in 0..RUNS {
        head_ours.push(ours(0));
        head_ref.push(shell(&format!("head -400 '{log_s}'")));
        end_ours.push(ours(near_end));
        end_ref.push(shell(&format!("tail -n +{} '{log_s}' | head -400", near_end + 1)));
    }
    let (ho, hr, eo, er) = (median(&mut head_ours), median(&mut head_ref), median(&mut end_ours), median(&mut end_ref));
    println!("{:<52} {:>10.3} ms  (head -400: {hr:.3} ms; {size_mb:.0} MB)", "read_file: first 400 lines of a big log", ho);
    println!("{:<52} {:>10.3} ms  (tail -n +N | head: {er:.3} ms)", "read_file: 400 lines 1,000 from the end", eo);
    row(&format!("Rust: read_file first 400 lines, {size_mb:.0} MB log"), &format!("{ho:.2} ms"), &format!("head -400 {hr:.2} ms"), Some(ho / 5.0), "<= 1 (5 ms)", Some(ho <= 5.0));
    row("Rust: read_file 400 lines near the end, same log", &format!("{eo:.1} ms"), &format!("tail|head {er:.1} ms"), Some(eo / er), "<= 1.0", Some(eo <= er));
    let _ = std::fs::remove_file(&log);
}

/// The cost a recursive reader adds to its decision: the walk of its tree for denied entries
/// (names only), against running the command itself on the same tree. A generated tree of
/// 200 directories of 100 files (one `.env` at the bottom), and the crate sources of this
/// machine's cargo registry when they are there.
fn tree_readers(dir: &Path) {
    let tree = dir.join("tree");
    for d in 0..200 {
        let sub = tree.join(format!("d{d}"));
        std::fs::create_dir_all(&sub).expect("tree dir");
        for f in 0..100 {
            std::fs::write(sub.join(format!("f{f}.rs")), "// TODO: x\n").expect("tree file");
        }
    }
    std::fs::write(tree.join("d199/.env"), "K=1\n").expect(".env");
    let mut trees = vec![("generated tree, 20,000 files", tree.clone())];
    if let Some(home) = std::env::var_os("HOME") {
        let registry = PathBuf::from(home).join(".cargo/registry/src");
        if registry.is_dir() {
            trees.push(("cargo registry sources", registry));
        }
    }
    for (what, root) in trees {
        let scope: Scope = serde_yaml::from_str(&format!(
            "paths: {{read: [\"{0}/**\"], deny: [\"**/.env\"]}}\nbash_tools: {{categories: {{read_only: [grep]}}}}\n",
            root.display()
        ))
        .expect("scope");
        let matcher = Matcher::new(&scope.paths, Some(dir), None).expect("matcher");
        let ctx = Ctx { scope: &scope, matcher: &matcher, home: Some(dir), grants: &[], tool: "run_bash_command", project_root: None, masked: false };
        let judge = |cmd: &str| {
            let mut v: Vec<f64> = (0..7)
                .map(|_| {
                    let t = Instant::now();
                    black_box(decide::decide(&ctx, cmd, &root));
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            median(&mut v)
        };
        let plain = judge("grep -n TODO nothing-here");
        let walk = judge("grep --exclude=.env -rn TODO .");
        let d = decide::decide(&ctx, "grep --exclude=.env -rn TODO .", &root);
        let mut run: Vec<f64> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let _ = std::process::Command::new("grep").args(["--exclude=.env", "-rn", "TODO", "."]).current_dir(&root).output();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        let run = median(&mut run);
        let verdict = if d.allowed { "allowed".to_string() } else { format!("refused: {}", d.reason.unwrap_or("")) };
        println!("{:<52} {:>10.2} ms  (a non-recursive grep {plain:.2} ms; grep itself {run:.1} ms; {verdict})", format!("grep -rn decision, {what}"), walk);
        row(&format!("Rust: grep -rn decision, {what}"), &format!("{walk:.2} ms"), &format!("{run:.1} ms (grep)"), Some(walk / run), "< 1", Some(walk < run));
    }
}

/// `grep_files` over the crate sources cargo keeps (`$CARGO_HOME/registry/src`, thousands
/// of files), a full scan for a pattern with fewer matches than the limit, beside ripgrep
/// (with every core, and with one) and `grep -rn`, taken alternately. The lines found must
/// be ripgrep's (same files, same line numbers), or the benchmark fails.
fn grep_rows() {
    use std::process::Command;
    use gptel_scope::fs::{grep, Boundary, Guard};
    let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(tree) = cargo_home.map(|c| c.join("registry/src")).filter(|t| t.is_dir()) else {
        println!("grep_files: no cargo registry sources to search; rows skipped");
        return;
    };
    let tree = std::fs::canonicalize(&tree).expect("canonical tree");
    if Command::new("rg").arg("--version").output().is_err() {
        println!("grep_files: ripgrep is not installed (apt-get install ripgrep); rows skipped");
        return;
    }
    let pattern = r"fn main\(";
    let scope: Scope = serde_yaml::from_str(&format!("paths: {{read: [\"{}/**\"]}}\n", tree.display())).expect("scope");
    let matcher = Matcher::new(&scope.paths, None, None).expect("matcher");
    let guard = Guard {
        boundary: Boundary::new(gptel_scope::scope::FsMode::Unrestricted, &tree).expect("boundary"),
        matcher: &matcher,
        base: tree.clone(),
        home: None,
        grants: &[],
        tool: "grep_files",
        used: Default::default(),
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let ours = |threads: usize| {
        let t = Instant::now();
        let r = grep::grep_files_with(&guard, pattern, ".", &[], Some(grep::MAX_LIMIT), threads).expect("grep_files");
        (t.elapsed().as_secs_f64() * 1e3, r)
    };
    let run = |cmd: &mut Command| {
        let t = Instant::now();
        let out = cmd.current_dir(&tree).output().expect("run");
        (t.elapsed().as_secs_f64() * 1e3, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let rg = |j: Option<usize>| {
        let mut c = Command::new("rg");
        c.args(["-n", "--crlf", "--no-require-git", "--no-ignore-parent", "--max-filesize", "16M", "--no-config"]);
        if let Some(j) = j {
            c.arg(format!("-j{j}"));
        }
        c.arg("-e").arg(pattern);
        c
    };
    let (_, first) = ours(cores);
    let (_, rg_out) = run(&mut rg(None));
    let key = |line: &str| -> Option<(String, u64)> {
        let mut it = line.splitn(3, ':');
        Some((it.next()?.to_string(), it.next()?.parse().ok()?))
    };
    let mut want: Vec<(String, u64)> = rg_out.lines().filter_map(key).collect();
    let mut got: Vec<(String, u64)> = first.content.lines().filter_map(key).collect();
    want.sort();
    got.sort();
    assert!(!first.truncated, "the pattern must have fewer matches than the limit");
    assert_eq!(got, want, "grep_files and ripgrep found different lines");
    let (mut o_all, mut o_one, mut r_all, mut r_one, mut g) = (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..7 {
        o_all.push(ours(cores).0);
        r_all.push(run(&mut rg(None)).0);
        o_one.push(ours(1).0);
        r_one.push(run(&mut rg(Some(1))).0);
        g.push(run(Command::new("grep").args(["-rn", "-E", r"fn main\(", "."])).0);
    }
    let (oa, oo, ra, ro, gr) = (median(&mut o_all), median(&mut o_one), median(&mut r_all), median(&mut r_one), median(&mut g));
    let files = first.files_searched;
    println!("{:<52} {:>10.1} ms  (rg {ra:.1} ms; {files} files, {} lines, same as rg)", format!("grep_files, {cores} threads"), oa, got.len());
    println!("{:<52} {:>10.1} ms  (rg -j1 {ro:.1} ms; grep -rn {gr:.1} ms)", "grep_files, 1 thread", oo);
    row(&format!("Rust: grep_files full scan, {cores} threads ({files} files)"), &format!("{oa:.1} ms"), &format!("rg {ra:.1} ms"), Some(oa / ra), "<= 1.2", Some(oa / ra <= 1.2));
    row("Rust: grep_files full scan, 1 thread", &format!("{oo:.1} ms"), &format!("rg -j1 {ro:.1} ms"), Some(oo / ro), "<= 1.2", Some(oo / ro <= 1.2));
    row("Rust: grep_files full scan vs grep -rn", &format!("{oa:.1} ms"), &format!("grep -rn {gr:.1} ms"), Some(oa / gr), "< 1", Some(oa < gr));
}
