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
    let root = fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("proj");
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
    std::io::Write::write_all(
        &mut &file,
        format!("short\n{}", "x".repeat(9_000)).as_bytes(),
    )
    .expect("write");
    file.set_len(1 << 30).expect("set_len");
    let started = Instant::now();
    let v = p.call("read_file", json!({"path": "huge.txt", "limit": 2}));
    let took = started.elapsed();
    assert_eq!(
        v["content"],
        json!(format!("short\n{}… [truncated line]", "x".repeat(400))),
        "{v}"
    );
    assert_eq!(
        (
            v["start_line"].clone(),
            v["end_line"].clone(),
            v["cut_lines"].clone(),
            v["total_lines"].clone(),
            v["has_more"].clone()
        ),
        (json!(1), json!(2), json!(1), json!(2), json!(false))
    );
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

/// The reason and message of the decision on `ls` under the scope document `file`
/// (approval checked when `sha256` is given).
fn check_ls(
    dir: &std::path::Path,
    file: &std::path::Path,
    sha256: Option<&str>,
) -> (String, String) {
    let req = json!({"command": "ls", "directory": dir, "check_trust": sha256.is_some(), "sources": [{"file": file, "sha256": sha256}]});
    match gptel_scope::emacs::api::check_command(&req.to_string()) {
        Ok(v) => (
            v["reason"].as_str().unwrap_or("").to_string(),
            v["message"].as_str().unwrap_or("").to_string(),
        ),
        Err(e) => ("error".to_string(), e.to_string()),
    }
}

/// What every refusal of a scope document ends with.
const FIX: &str = ". Nothing runs until the scope file is fixed; tell the user.";

/// `f` run on a thread: its answer, or a failure after `secs` seconds (a hang fails the test
/// instead of blocking it).
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("no answer within {secs} s"))
}

/// A `scope.yml` that is not a regular file (git ships symlinks as they are) is refused at
/// once, naming the file and what it is: a FIFO does not block the open, a device is not
/// read without end, a file over 1 MiB is not read past its bound.
#[test]
fn scope_documents_that_are_not_regular_files_are_refused() {
    let p = project(SCOPE);
    let doc = p.root.join("scope.yml");
    let name = doc.display().to_string();
    let fifo = p.root.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstring");
    // SAFETY: mkfifo reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = p.root.join("big.yml");
    fs::write(&big, format!("# {}\n", "x".repeat(1 << 20))).expect("big");
    for (target, want) in [
        (
            fifo.clone(),
            format!("invalid_config: {name}: is a FIFO, not a regular file"),
        ),
        (
            PathBuf::from("/dev/zero"),
            format!("invalid_config: {name}: is a character device, not a regular file"),
        ),
        (
            PathBuf::from("/dev/urandom"),
            format!("invalid_config: {name}: is a character device, not a regular file"),
        ),
        (
            PathBuf::from("/dev/tty"),
            format!("invalid_config: {name}: is a character device, not a regular file"),
        ),
        (
            p.root.join("sub"),
            format!("invalid_config: {name}: is a directory, not a regular file"),
        ),
        (
            big.clone(),
            format!("invalid_config: {name}: is larger than 1 MiB"),
        ),
    ] {
        fs::create_dir_all(p.root.join("sub")).expect("sub");
        fs::remove_file(&doc).expect("rm");
        std::os::unix::fs::symlink(&target, &doc).expect("symlink");
        let (dir, file) = (p.root.clone(), doc.clone());
        let got = within(10, move || check_ls(&dir, &file, None));
        assert_eq!(
            got,
            ("invalid_config".to_string(), format!("{want}{FIX}")),
            "{}",
            target.display()
        );
    }
    // The same through the file tools' entry point.
    fs::remove_file(&doc).expect("rm");
    std::os::unix::fs::symlink(&fifo, &doc).expect("symlink");
    let v = within(10, move || p.call("read_file", json!({"path": "x"})));
    assert_eq!(
        (v["reason"].clone(), v["message"].clone()),
        (
            json!("invalid_config"),
            json!(format!(
                "invalid_config: {name}: is a FIFO, not a regular file"
            ))
        ),
        "{v}"
    );
}

/// The SHA-256 of a file, as the trust list keeps it.
fn sha(path: &std::path::Path) -> String {
    gptel_scope::scope::trust::sha256_hex(&fs::read(path).expect("read"))
}

/// The environment of commands asked with a document the user has not approved (never, or
/// not since it changed): refused before anything of it is parsed, whatever its size or
/// shape, as a decision is; the elisp layer then plans with the built-in defaults.
#[test]
fn unapproved_documents_are_never_parsed_for_the_environment() {
    let p = project("environment: {include: [STAGE]}\n");
    let doc = p.root.join("scope.yml");
    let name = doc.display().to_string();
    let entries = vec!["PATH=/bin".to_string(), "STAGE=staging-1234".to_string()];
    let env = |sha256: Option<&str>| {
        let req =
            json!({"sources": [{"file": doc, "sha256": sha256}], "check_trust": true}).to_string();
        gptel_scope::emacs::api::environment(Some(&req), &entries, &[])
            .map(|p| p.env.clone())
            .map_err(|e| e.to_string())
    };
    let unapproved = format!("untrusted_scope: {name}: the user has not approved this scope document; nothing runs under it until the user reviews and approves it (M-x gptel-scope-trust)");
    assert_eq!(env(None), Err(unapproved.clone()));
    assert_eq!(
        env(Some(&sha(&doc))),
        Ok(entries.clone()),
        "approved: STAGE passes"
    );
    // 200 KB of nested `[`: refused at once, never handed to the YAML parser.
    fs::write(&doc, format!("a: {}", "[".repeat(200_000))).expect("deep");
    let started = Instant::now();
    assert_eq!(env(None), Err(unapproved));
    let changed = format!("untrusted_scope: {name}: its content changed since the user approved it; nothing runs under it until the user reviews and approves it (M-x gptel-scope-trust)");
    assert_eq!(env(Some(&"0".repeat(64))), Err(changed));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// A document nested deeper than 64 levels is refused before it is parsed (the YAML
/// parser's time grows with the square of the depth: 200 KB of `[` took 26 s), naming the
/// file and the line; even an approved one. Documents up to the limit load.
#[test]
fn deep_documents_are_refused_before_parsing() {
    let p = project(SCOPE);
    let doc = p.root.join("scope.yml");
    let name = doc.display().to_string();
    let deep = |line: usize| {
        format!("invalid_config: {name}:{line}: the document nests deeper than 64 levels (a scope needs a handful); it was not parsed{FIX}")
    };
    let block: String = (0..70)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect();
    for (text, want) in [
        (format!("a: {}", "[".repeat(200_000)), Some(deep(1))),
        (
            format!("a: {}{}", "[".repeat(64), "]".repeat(64)),
            Some(deep(1)),
        ),
        (format!("a: {}{}", "[".repeat(63), "]".repeat(63)), None),
        (format!("a:\n  - {}\n", "{x: ".repeat(70)), Some(deep(2))),
        (format!("a: [\n{}\n]", "[\n".repeat(70)), Some(deep(64))),
        (block, Some(deep(65))),
        (format!("a:\n{}x\n", "- ".repeat(70)), Some(deep(2))),
        // Brackets in quotes, comments and block scalars are text.
        (
            format!(
                "a: \"{0}\"\nb: '{0}'\n# {0}\nc: |\n  {0}\n  {0}\nd: x\n",
                "[".repeat(100)
            ),
            None,
        ),
    ] {
        fs::write(&doc, &text).expect("write");
        let started = Instant::now();
        let (reason, message) = check_ls(&p.root, &doc, Some(&sha(&doc)));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        match want {
            Some(want) => assert_eq!(
                (reason.as_str(), message),
                ("invalid_config", want),
                "{}",
                &text[..text.len().min(60)]
            ),
            // Parsed: refused for its unknown key, not for its depth.
            None => assert!(
                message.contains("unknown field `a`"),
                "{}: {reason} {message}",
                &text[..text.len().min(60)]
            ),
        }
    }
}

/// The typing of scope values: every number range-checked at load, a byte order mark
/// accepted, every type error named by file, line and key (also those the document's text
/// hides from a string: `[ls, true]`), each exact.
#[test]
fn scope_values_are_checked_where_they_are_written() {
    let p = project(SCOPE);
    let doc = p.root.join("scope.yml");
    let name = doc.display().to_string();
    let bad = |line: usize, rest: &str| {
        (
            "invalid_config".to_string(),
            format!("invalid_config: {name}:{line}: {rest}{FIX}"),
        )
    };
    for (text, want) in [
        ("bash_tools:\n  max_output_chars: 18446744073709551615\n", Some(bad(2, "bash_tools.max_output_chars: 18446744073709551615 is out of range: give 1 to 10000000 characters"))),
        ("bash_tools:\n  timeout: 0\n", Some(bad(2, "bash_tools.timeout: 0 is out of range: give 1 to 86400 seconds"))),
        ("bash_tools:\n  timeout: -5\n", Some(bad(2, "bash_tools.timeout: -5 is out of range: give 1 to 86400 seconds"))),
        ("bash_tools: {timeout: 86401}\n", Some(bad(1, "bash_tools.timeout: 86401 is out of range: give 1 to 86400 seconds"))),
        (
            "bash_tools:\n  categories:\n    read_only: [ls, true]\n",
            Some(bad(3, "bash_tools.categories.read_only[1]: invalid type: boolean `true`, expected a string; write it in quotes (\"true\") if it is meant as text")),
        ),
        ("\u{feff}paths:\n  read: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls]\n  timeout: 86400\n", None),
    ] {
        fs::write(&doc, text).expect("write");
        let got = check_ls(&p.root, &doc, Some(&sha(&doc)));
        match want {
            Some(want) => assert_eq!(got, want, "{text}"),
            None => assert_eq!(got.0, "", "{text}: {}", got.1),
        }
    }
}

/// The built-in deny patterns (`~/.ssh/**`, `~/.gnupg/**`, `~/.aws/**`) hold whatever a
/// document's `deny` says: an empty list, a null one, or other patterns.
#[test]
fn builtin_denies_cannot_be_removed() {
    let p = project(SCOPE);
    let doc = p.root.join("scope.yml");
    let home = p.root.parent().expect("parent").to_path_buf();
    fs::create_dir_all(home.join(".ssh")).expect("ssh");
    fs::write(home.join(".ssh/id_ed25519"), "key").expect("key");
    for deny in ["[]", "", "~", "[\"**/.env\"]"] {
        fs::write(&doc, format!("paths:\n  read: [\"~/**\"]\n  deny: {deny}\nbash_tools:\n  categories:\n    read_only: [cat]\n")).expect("write");
        let req = json!({"command": "cat ~/.ssh/id_ed25519", "directory": p.root, "home": home, "check_trust": true, "sources": [{"file": doc, "sha256": sha(&doc)}]});
        let v = gptel_scope::emacs::api::check_command(&req.to_string()).expect("decision");
        assert_eq!(
            (v["allowed"].clone(), v["reason"].clone()),
            (json!(false), json!("path_denied")),
            "deny: {deny}: {v}"
        );
    }
}

/// FIFOs where the engine reads for itself or for a tool: a FIFO in the tree `grep_files`
/// searches is skipped, and a configuration file git's configuration includes (a repository
/// names it) is not waited on when a write is judged. Each answers at once (the harness fails
/// a call that does not answer within 10 s).
#[test]
fn fifos_in_the_project_are_never_waited_on() {
    let p = project("paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    safe_write: [echo]\n");
    let mkfifo = |path: &std::path::Path| {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("cstring");
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    fs::write(p.root.join("a.txt"), "needle\n").expect("a");
    mkfifo(&p.root.join("b.txt"));
    fs::create_dir_all(p.root.join(".git")).expect("git");
    fs::write(
        p.root.join(".git/config"),
        "[include]\n\tpath = ../inc.fifo\n",
    )
    .expect("config");
    mkfifo(&p.root.join("inc.fifo"));
    let root = p.root.clone();
    // The project lives until the end of the test: the closures get a handle on it.
    let p = std::sync::Arc::new(p);
    let q = p.clone();
    let v = within(10, move || {
        q.call("grep_files", json!({"pattern": "needle", "path": "."}))
    });
    assert_eq!(v["success"], json!(true), "{v}");
    assert_eq!(
        (v["content"].clone(), v["matches"].clone()),
        (json!("a.txt:1:needle"), json!(1)),
        "{v}"
    );
    let req = json!({"command": "echo x > a.txt", "directory": root, "sources": [{"file": root.join("scope.yml")}], "home": root.parent().expect("parent")});
    let d = within(10, move || {
        gptel_scope::emacs::api::check_command(&req.to_string()).expect("decision")
    });
    assert_eq!(d["allowed"], json!(true), "{}", d["message"]);
    drop(p);
}
