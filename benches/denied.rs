//! The walk for denied entries (`policy::denied`): its cost on an ordinary repository (this
//! one, `target/` left out) against `grep -rn` over the same tree, on the cargo registry's
//! crate sources, and on a generated tree of 200,000 files; and whether the default limits
//! (`Limits::default()`) answer there or "cannot tell".
//!
//! `make bench`, or `cargo bench --manifest-path benches/Cargo.toml --bench denied`. Each
//! figure is the median of several walks with a warm cache (the first walk is left out).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gptel_scope::policy::denied::{all_denied_under, Limits, Reach};
use gptel_scope::policy::paths::Matcher;
use gptel_scope::scope::Paths;

const RUNS: usize = 9;
/// Files of the generated tree: 200 directories of 10 directories of 100 files.
const GENERATED: usize = 200_000;

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

/// The common scope: the tree readable, `.env` and keys denied by glob.
fn matcher(root: &Path) -> Matcher {
    let paths = Paths {
        read: vec![format!("{}/**", root.display())],
        write: vec![],
        deny: vec!["**/.env".into(), "**/*.pem".into()],
    };
    Matcher::new(&paths, None, Some(root)).expect("the scope compiles")
}

/// A scope of 1,000 deny patterns (500 `DIR/**`, 250 `**/NAME`, 250 `**/*.EXT`) besides
/// the two of [`matcher`]: the walk clones and consults the whole matcher.
fn big_matcher(root: &Path) -> Matcher {
    let mut deny: Vec<String> = vec!["**/.env".into(), "**/*.pem".into()];
    deny.extend((0..500).map(|i| format!("/nowhere/d{i}/**")));
    deny.extend((0..250).map(|i| format!("**/name{i}.txt")));
    deny.extend((0..250).map(|i| format!("**/*.ext{i}")));
    let paths = Paths { read: vec![format!("{}/**", root.display())], write: vec![], deny };
    Matcher::new(&paths, None, Some(root)).expect("the scope compiles")
}

/// The median time of a walk of `roots` (ms), without limits, and what it found.
fn time_walk(roots: &[PathBuf], m: &Matcher) -> (f64, Reach) {
    let unbounded = Limits { max_entries: usize::MAX, max_time: Duration::from_secs(3600) };
    let mut reach = all_denied_under(roots, m, &unbounded);
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        reach = all_denied_under(roots, m, &unbounded);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    (median(&mut times), reach)
}

fn scanned(r: &Reach) -> usize {
    match r {
        Reach::Clean { scanned } | Reach::Denied { scanned, .. } => *scanned,
        Reach::CannotTell { .. } => 0,
    }
}

/// What the default limits answer on `roots`.
fn default_answer(roots: &[PathBuf], m: &Matcher) -> String {
    match all_denied_under(roots, m, &Limits::default()) {
        Reach::Clean { .. } => "clean".into(),
        Reach::Denied { found, .. } => format!("{} denied", found.len()),
        Reach::CannotTell { why } => format!("cannot tell ({})", if why.contains("entries under") { "entries" } else { "time" }),
    }
}

/// The median time (ms) of `grep -rn` for a string found nowhere (the bracket keeps it from
/// matching this file), over `root` less `target/` and `.git`.
fn time_grep(root: &Path) -> Option<f64> {
    let mut times = Vec::new();
    for _ in 0..=RUNS {
        let t = Instant::now();
        let status = Command::new("grep")
            .args(["-rn", "--exclude-dir=target", "--exclude-dir=.git", "zq9-not-there-x[k]", "."])
            .current_dir(root)
            .stdout(std::process::Stdio::null())
            .status()
            .ok()?;
        if status.code() != Some(1) {
            return None;
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.remove(0);
    Some(median(&mut times))
}

/// The roots of this repository a `grep -rn --exclude-dir=target --exclude-dir=.git` reads.
fn repository_roots(repo: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some("target" | ".git")));
    v.sort();
    v
}

/// The generated tree (made once, kept in target/).
fn generated_tree(dir: &Path) -> std::io::Result<()> {
    let done = dir.join(".complete");
    if done.exists() {
        return Ok(());
    }
    for a in 0..GENERATED / 1000 {
        for b in 0..10 {
            let d = dir.join(format!("d{a:03}/e{b}"));
            std::fs::create_dir_all(&d)?;
            for c in 0..100 {
                let name = if c == 0 && b == 0 && a % 50 == 0 { ".env".to_string() } else { format!("f{c:03}.rs") };
                std::fs::write(d.join(name), "")?;
            }
        }
    }
    std::fs::write(done, "")
}

fn walk_rows(label: &str, roots: &[PathBuf], m: &Matcher) -> f64 {
    let (ms, reach) = time_walk(roots, m);
    let n = scanned(&reach);
    row(&format!("Rust: deny walk, {label}"), &format!("{ms:.1} ms"), &format!("{n} entries"), None, "(info)", None);
    row(
        &format!("Rust: deny walk, {label}, default limits"),
        &default_answer(roots, m),
        &format!("{:.0} ns/entry", ms * 1e6 / n.max(1) as f64),
        None,
        "(info)",
        None,
    );
    ms
}

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("the repository");
    println!("deny walk: median of {RUNS} walks, warm cache; patterns **/.env and **/*.pem\n");

    // An ordinary repository: the walk against the command it guards.
    let roots = repository_roots(&repo);
    let walk = walk_rows("this repository (no target/)", &roots, &matcher(&repo));
    match time_grep(&repo) {
        Some(grep) => row(
            "Rust: deny walk / grep -rn over this repository",
            &format!("{walk:.2} ms"),
            &format!("{grep:.2} ms"),
            Some(walk / grep),
            "< 1",
            Some(walk < grep),
        ),
        None => println!("grep -rn could not run: the comparison is left out"),
    }
    let (big, _) = time_walk(&roots, &big_matcher(&repo));
    row("Rust: deny walk, this repository, 1,002 deny patterns", &format!("{big:.2} ms"), &format!("{walk:.2} ms (2)"), Some(big / walk), "(info)", None);

    // The crate sources of the cargo registry.
    let home = std::env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    match home.map(|h| h.join("registry/src")).filter(|p| p.is_dir()) {
        Some(src) => {
            let src = src.canonicalize().unwrap_or(src);
            walk_rows("cargo registry sources", std::slice::from_ref(&src), &matcher(&src));
        }
        None => println!("no cargo registry sources here: that row is left out"),
    }

    // A generated tree of 200,000 files.
    let tree = repo.join("target/bench-deny-tree");
    match generated_tree(&tree) {
        Ok(()) => {
            walk_rows("generated 200,000 files", std::slice::from_ref(&tree), &matcher(&tree));
        }
        Err(e) => println!("cannot make {}: {e}", tree.display()),
    }
}
