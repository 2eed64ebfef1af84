//! Throughput of the output limiters on 100 MB of text (SPEC §4; target: ≥ 1 GB/s).
//!
//! `make bench`, or `cargo bench --manifest-path benches/Cargo.toml --bench truncate`:
//! median of 5 runs per case, printed as MB/s.

use std::hint::black_box;
use std::time::{Duration, Instant};

use gptel_scope::output::truncate::{
    truncate_chars, truncate_chars_owned, truncate_stream, truncate_stream_owned,
};

const SIZE: usize = 100 * 1024 * 1024;
const RUNS: usize = 5;

/// Log-like text: ASCII lines with some two-, three- and four-byte characters.
fn text() -> String {
    let lines = [
        "2024-05-01T12:00:00Z INFO  request handled in 12ms path=/api/v1/items status=200\n",
        "src/main.rs:42:    let résumé = parse(&input)?; // naïve café déjà vu\n",
        "warning: unused variable `x` → consider prefixing with an underscore: `_x`\n",
        "日本語のテキスト、中文文本、한국어 텍스트 🦀🦀\n",
        "drwxr-xr-x  5 user staff   160 May  1 12:00 target\n",
    ];
    let mut s = String::with_capacity(SIZE + 256);
    let mut i = 0;
    while s.len() < SIZE {
        s.push_str(lines[i % lines.len()]);
        i += 1;
    }
    s
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn report(name: &str, text: &str, times: Vec<Duration>) {
    let t = median(times);
    let mbps = text.len() as f64 / (1024.0 * 1024.0) / t.as_secs_f64();
    println!(
        "{name:<52} {:>9.2} ms  {mbps:>9.0} MB/s",
        t.as_secs_f64() * 1e3
    );
    // The limiters the Emacs binding calls also go to the `make bench` table.
    if name.starts_with("truncate_chars_owned(100 MB, 20000)") || name.starts_with("truncate_stream_owned(100 MB, 8 KB") {
        let gbs = mbps / 1024.0;
        println!(
            "row\tRust: {}\t{gbs:.2} GB/s\t1 GB/s\t{gbs:.3}\t>= 1\t{}",
            name.split('(').next().unwrap_or(name),
            if gbs >= 1.0 { "pass" } else { "MISS" }
        );
    }
}

/// Time `f` on the borrowed text.
fn bench(name: &str, text: &str, f: impl Fn(&str) -> usize) {
    let times = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(f(black_box(text)));
            start.elapsed()
        })
        .collect();
    report(name, text, times);
}

/// Time `f` on an owned copy of the text (the copy is made before the clock starts), as the
/// Emacs binding calls it with the string it received.
fn bench_owned(name: &str, text: &str, f: impl Fn(String) -> usize) {
    let times = (0..RUNS)
        .map(|_| {
            let owned = text.to_owned();
            let start = Instant::now();
            black_box(f(black_box(owned)));
            start.elapsed()
        })
        .collect();
    report(name, text, times);
}

fn main() {
    let text = text();
    println!(
        "truncate: {} MB, {} lines, median of {RUNS} runs",
        text.len() / (1024 * 1024),
        text.bytes().filter(|&b| b == b'\n').count()
    );
    bench("truncate_chars(100 MB, 20000)", &text, |t| {
        truncate_chars(t, 20_000).output.len()
    });
    bench(
        "truncate_chars(100 MB, 50 M) (cut deep in the text)",
        &text,
        |t| truncate_chars(t, 50_000_000).output.len(),
    );
    bench("truncate_chars(100 MB, unlimited) (copy)", &text, |t| {
        truncate_chars(t, usize::MAX).output.len()
    });
    bench("truncate_stream(100 MB, 8 KB, 200 lines)", &text, |t| {
        truncate_stream(t, 8192, 200).output.len()
    });
    bench("truncate_stream(100 MB, unlimited) (copy)", &text, |t| {
        truncate_stream(t, usize::MAX, usize::MAX).output.len()
    });
    bench_owned("truncate_chars_owned(100 MB, 20000)", &text, |t| {
        truncate_chars_owned(t, 20_000).output.len()
    });
    bench_owned("truncate_chars_owned(100 MB, 50 M)", &text, |t| {
        truncate_chars_owned(t, 50_000_000).output.len()
    });
    bench_owned("truncate_chars_owned(100 MB, unlimited)", &text, |t| {
        truncate_chars_owned(t, usize::MAX).output.len()
    });
    bench_owned(
        "truncate_stream_owned(100 MB, 8 KB, 200 lines)",
        &text,
        |t| truncate_stream_owned(t, 8192, 200).output.len(),
    );
    bench_owned("truncate_stream_owned(100 MB, unlimited)", &text, |t| {
        truncate_stream_owned(t, usize::MAX, usize::MAX)
            .output
            .len()
    });
    redaction(&text);
}

/// Redaction (issue 22) of a text holding no secret, as almost every result does: six
/// secrets of a user's environment with their JSON forms, searched at once.
fn redaction(text: &str) {
    let secrets: Vec<(String, String)> = [
        ("OPENAI_API_KEY", "sk-proj-bench-0123456789abcdefghijklmnop"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-bench-0123456789abcdef"),
        ("AWS_ACCESS_KEY_ID", "AKIABENCH0123456789"),
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYBENCHKEY"),
        ("GITHUB_TOKEN", "ghp_bench0123456789abcdefghijklmnopqrst"),
        ("DATABASE_PASSWORD", "correct-horse-battery-staple"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    let r = match gptel_scope::output::redact::Redactor::new(&secrets) {
        Ok(r) => r,
        Err(e) => {
            println!("redactor: {e}");
            return;
        }
    };
    bench("redact_result(100 MB, 6 secrets, none found)", text, |t| r.redact_result(t).map_or(0, |o| o.len()));
    let result = &text[..text.char_indices().nth(20_000).map_or(text.len(), |(i, _)| i)];
    let times: Vec<Duration> = (0..1001)
        .map(|_| {
            let start = Instant::now();
            black_box(r.redact_result(black_box(result)));
            start.elapsed()
        })
        .collect();
    let t = median(times);
    println!("{:<52} {:>9.2} us", "redact_result(20,000 characters)", t.as_secs_f64() * 1e6);
}
