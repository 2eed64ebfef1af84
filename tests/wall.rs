//! The supervisor `gptel-scope-run` for real: nothing a command starts outlives it, under
//! each wall it puts up (none, Landlock); each limit stops the bomb made for it and the
//! output says which; Landlock keeps reads, writes, TCP and signals within the rules.
//!
//! A fork bomb runs as `nobody` when the tests run as root: the kernel holds no root
//! process to `RLIMIT_NPROC`, and a bomb as root starves the whole machine.

#![cfg(target_os = "linux")]

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};

const RUN: &str = env!("CARGO_BIN_EXE_gptel-scope-run");

/// What one run gave: exit code or signal, and stdout and stderr together.
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    output: String,
}

/// Runs `script` with bash under the supervisor with `spec`, as `uid` when given.
fn run_as(spec: &str, script: &str, uid: Option<u32>) -> Ran {
    run_in(spec, script, uid, None)
}

/// As [`run_as`], with TMPDIR set to `tmp` when given.
/// Another user may not reach the build's directory (a clone under a home of mode 700): as
/// `uid`, the supervisor is run from a copy in `tmp`, which a test makes reachable to all.
fn run_in(spec: &str, script: &str, uid: Option<u32>, tmp: Option<&Path>) -> Ran {
    let program = match (uid, tmp) {
        (Some(_), Some(t)) => {
            let copy = t.join("gptel-scope-run");
            std::fs::copy(RUN, &copy).unwrap();
            copy
        }
        _ => Path::new(RUN).to_path_buf(),
    };
    let mut cmd = Command::new(&program);
    if let Some(t) = tmp {
        cmd.env("TMPDIR", t);
    }
    cmd.args([spec, "--", "/bin/bash", "-c", script])
        .stdin(Stdio::null())
        .current_dir("/");
    if let Some(uid) = uid {
        // SAFETY: setgid and setuid between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(uid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let out = cmd.output().unwrap();
    let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stderr));
    Ran {
        code: out.status.code(),
        signal: out.status.signal(),
        output,
    }
}

fn run(spec: &str, script: &str) -> Ran {
    run_as(spec, script, None)
}

/// The pids whose command line holds `tag`.
fn running(tag: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if line.contains(tag) {
                found.push(format!("{name}: {line}"));
            }
        }
    }
    found
}

fn landlock_works() -> bool {
    gptel_scope::wall::probe::landlock_abi() > 0
}

/// Every way a process leaves its parent: none is running once the supervisor answered.
#[test]
fn nothing_the_command_started_outlives_it_under_each_wall() {
    let walls: &[&str] = if landlock_works() {
        &["{}", r#"{"wall":"landlock"}"#]
    } else {
        &["{}"]
    };
    for spec in walls {
        let tag = format!("{}.{}", 40 + std::process::id() % 50, std::process::id());
        let script = format!(
            "setsid -f sleep {tag}1; \
             set -m; (sleep {tag}2 &); set +m; \
             ( ( sleep {tag}3 & ) & ); \
             nohup sleep {tag}4 >/dev/null 2>&1 & disown; \
             sleep {tag}5 & \
             echo started"
        );
        let r = run(spec, &script);
        assert_eq!(
            (r.code, r.output.as_str()),
            (Some(0), "started\n"),
            "{spec}"
        );
        assert_eq!(
            running(&format!("sleep {tag}")),
            Vec::<String>::new(),
            "{spec}"
        );
    }
}

/// The command starts with no signal blocked or ignored, whatever the supervisor waits for.
#[test]
fn the_command_gets_every_signal() {
    let r = run("{}", "grep -E '^Sig(Blk|Ign)' /proc/$$/status");
    let (blocked, ignored) = r.output.split_once('\n').unwrap();
    assert_eq!(blocked, "SigBlk:\t0000000000000000");
    // No classic signal ignored (glibc's own 32 and 33 may be, as in any child of a
    // process started by glibc's spawn).
    let ignored = u64::from_str_radix(ignored.trim().trim_start_matches("SigIgn:\t"), 16).unwrap();
    assert_eq!(ignored & 0x7fff_ffff, 0, "{}", r.output);
}

/// A SIGTERM to the supervisor (Emacs's timeout) kills the command and all it started.
#[test]
fn a_stopped_call_leaves_nothing_running() {
    let tag = format!("{}.{}", 60 + std::process::id() % 30, std::process::id());
    let mut child = Command::new(RUN)
        .args([
            "{}",
            "--",
            "/bin/bash",
            "-c",
            &format!("setsid -f sleep {tag}; echo up; sleep {tag}"),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "up\n");
    // SAFETY: a signal to the child just started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "the command ended by the SIGTERM it was given, and the supervisor says so"
    );
    assert_eq!(running(&format!("sleep {tag}")), Vec::<String>::new());
}

/// Each bomb is stopped by the limit made for it, and the output's last line names it.
#[test]
fn each_limit_stops_its_bomb_and_says_so() {
    let uid = (unsafe { libc::getuid() } == 0).then_some(65534);
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"limits":{"processes":32}}"#,
            "f(){ f | f & }; f; sleep 20",
            "[gptel-scope: its process limit stopped it: ",
        ),
        (
            r#"{"limits":{"memory":"256M"}}"#,
            "a=x; while :; do a=$a$a; done",
            "[gptel-scope: its memory limit ",
        ),
        (
            r#"{"limits":{"cpu":1}}"#,
            "while :; do :; done",
            "[gptel-scope: its CPU limit stopped it: a process used its 1 CPU seconds.",
        ),
        (
            r#"{"limits":{"file_size":"1M"}}"#,
            "head -c 2000000 /dev/zero > \"$TMPDIR/big\"",
            "[gptel-scope: its file size limit stopped it: a process wrote past 1 MiB in one file.",
        ),
    ];
    for (spec, script, said) in cases {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            tmp.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        let r = run_in(spec, script, uid, Some(tmp.path()));
        assert!(
            r.output.contains(said),
            "{spec}: {}",
            &r.output[r.output.len().saturating_sub(600)..]
        );
        assert!(
            r.output.trim_end().ends_with("in the scope.]"),
            "{spec}: the sentence is the output's end"
        );
        assert!(
            r.code != Some(0),
            "{spec}: exit {:?}, signal {:?}",
            r.code,
            r.signal
        );
    }
}

/// Landlock: the system and the rules' directories, nothing else; no TCP unless allowed;
/// no signal to a process outside.
#[test]
fn landlock_keeps_the_command_within_its_rules() {
    if !landlock_works() {
        eprintln!("skipped: this kernel has no Landlock");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (read, write, outside) = (root.join("read"), root.join("write"), root.join("outside"));
    for d in [&read, &write, &outside] {
        std::fs::create_dir(d).unwrap();
        std::fs::write(d.join("f"), "text\n").unwrap();
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let spec = |network: bool| {
        serde_json::json!({"wall": "landlock", "read": [read], "write": [write], "network": network}).to_string()
    };
    let me = std::process::id();
    let p = |d: &Path| d.display().to_string();
    let cases: Vec<(String, bool, &str)> = vec![
        (format!("cat {}/f", p(&read)), false, "text\n"),
        (format!("cat {}/f", p(&write)), false, "text\n"),
        (
            format!("cat {}/f 2>&1 | sed 's/.*: //'", p(&outside)),
            false,
            "Permission denied\n",
        ),
        (
            format!("echo x > {}/new && cat {}/new", p(&write), p(&write)),
            false,
            "x\n",
        ),
        (
            format!("(echo x > {}/new) 2>&1 | sed 's/.*: //'", p(&read)),
            false,
            "Permission denied\n",
        ),
        (
            format!("(echo x > {}/new) 2>&1 | sed 's/.*: //'", p(&outside)),
            false,
            "Permission denied\n",
        ),
        (
            "echo x > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"".into(),
            false,
            "x\n",
        ),
        (
            "cat /etc/hostname >/dev/null && echo system".into(),
            false,
            "system\n",
        ),
        (
            format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>&1 | sed 's/.*: //' | sort -u"),
            false,
            "Permission denied\n",
        ),
        (
            format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) && echo connected"),
            true,
            "connected\n",
        ),
        (
            format!("kill -0 {me} 2>&1 | sed 's/.*- //'"),
            false,
            "Operation not permitted\n",
        ),
    ];
    for (script, network, want) in cases {
        let r = run(&spec(network), &script);
        let want = if script.starts_with("kill") && gptel_scope::wall::probe::landlock_abi() < 6 {
            ""
        } else {
            want
        };
        assert_eq!(r.output, want, "{script}");
    }
    assert!(!outside.join("new").exists() && !read.join("new").exists());
    drop(listener);
}

/// The probe says which walls can run, as JSON Emacs reads.
#[test]
fn probe_reports_each_wall() {
    let out = Command::new(RUN)
        .args(["--probe", "/nonexistent/bwrap"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bwrap"]["works"], false);
    assert_eq!(v["bwrap"]["cause"], "not_installed");
    assert_eq!(
        v["landlock_abi"].as_u64(),
        Some(u64::from(gptel_scope::wall::probe::landlock_abi()))
    );
}
