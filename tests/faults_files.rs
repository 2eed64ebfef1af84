//! Faults of the files the engine reads: a line too long to hold in memory, scope documents
//! that are not regular files, too large or too deep, unapproved documents never parsed, and
//! the typing of scope values. Each case asserts the exact answer.

use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gptel_scope::fs::tools::call;
use serde_json::{json, Value};

/// A project holding `scope.yml` (read access to the project), canonical.
struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

fn project(scope: &str) -> Project {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmp.path()).expect("canonical").join("proj");
    fs::create_dir_all(&root).expect("mkdir");
    fs::write(root.join("scope.yml"), scope).expect("scope");
    Project { _tmp: tmp, root }
}

impl Project {
    /// A file tool called through the JSON entry point the binding uses.
    fn call(&self, op: &str, args: Value) -> Value {
        let mut req = json!({"sources": [{"file": self.root.join("scope.yml")}], "home": self.root.parent().expect("parent")});
        for (k, v) in args.as_object().expect("object") {
            req[k] = v.clone();
        }
        call(op, &req.to_string())
    }
}

const SCOPE: &str = "paths:\n  read: [\"${project_root}/**\"]\n";

/// A first line of 9,000 characters in a file extended to 1 GiB (sparse: the rest is NUL
/// bytes past the binary check's first 8 KiB, so the line runs on to the end): the line is
/// cut as it is read, never held whole; the answer comes at once with the cut line.
#[test]
fn read_file_cuts_a_gigabyte_line_as_it_reads() {
    let p = project(SCOPE);
    let path = p.root.join("huge.txt");
    let file = fs::File::create(&path).expect("create");
    std::io::Write::write_all(&mut &file, format!("short\n{}", "x".repeat(9_000)).as_bytes()).expect("write");
    file.set_len(1 << 30).expect("set_len");
    let started = Instant::now();
    let v = p.call("read_file", json!({"path": "huge.txt", "limit": 2}));
    let took = started.elapsed();
    assert_eq!(v["content"], json!(format!("short\n{}… [truncated line]", "x".repeat(400))), "{v}");
    assert_eq!((v["start_line"].clone(), v["end_line"].clone(), v["cut_lines"].clone(), v["total_lines"].clone(), v["has_more"].clone()), (json!(1), json!(2), json!(1), json!(2), json!(false)));
    assert!(took < Duration::from_secs(20), "took {took:?}");
    // The gigabyte was never held: the process's peak stays far below it.
    assert!(peak_rss_mib() < 256, "peak {} MiB", peak_rss_mib());
}

/// The peak resident size of this test process, in MiB.
fn peak_rss_mib() -> i64 {
    // SAFETY: getrusage writes the structure it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss / 1024
}
