//! `gptel-scope-run`'s command line and its whole run:
//!
//! ```text
//! gptel-scope-run SPEC -- PROGRAM ARG...   run PROGRAM as SPEC says, and exit as it did
//! gptel-scope-run --probe BWRAP            print which walls can run here, as JSON
//! gptel-scope-run --version
//! ```
//!
//! SPEC is a JSON object ([`Spec`]). The program runs with the supervisor's environment,
//! directory and descriptors (Emacs gave it the command's), its limits set, under Landlock
//! when SPEC asks for it. When a limit stopped it, the last line of its output says which.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use serde::Deserialize;

use super::limits::{self, LimitSettings, Limits};
use super::reaper::{self, Status};
use super::{landlock, probe, WallError};

/// Which wall the supervisor itself puts up. bubblewrap, when it is the wall, is the
/// program the supervisor runs.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Wall {
    /// None of its own (bubblewrap's, or the engine alone).
    #[default]
    None,
    /// Landlock.
    Landlock,
}

/// What the supervisor is asked to do.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Spec {
    /// The wall it puts up.
    pub wall: Wall,
    /// Under Landlock: the directories read (and run from) beside the system's.
    pub read: Vec<PathBuf>,
    /// Under Landlock: the directories written.
    pub write: Vec<PathBuf>,
    /// Under Landlock: the network allowed.
    pub network: bool,
    /// The scope's `sandbox.limits`.
    pub limits: LimitSettings,
    /// Seconds the command has to end after SIGTERM before it is killed (Emacs's
    /// `gptel-scope-kill-grace`).
    pub grace: Option<f64>,
}

/// The supervisor's command line, read.
enum Invocation {
    Run { spec: Spec, argv: Vec<OsString> },
    Probe { bwrap: String },
    Version,
}

fn parse(args: &[OsString]) -> Result<Invocation, WallError> {
    let usage = || {
        WallError::Usage(
            "usage: gptel-scope-run SPEC -- PROGRAM ARG... | --probe BWRAP | --version".into(),
        )
    };
    match args.first().map(|a| a.as_bytes()) {
        Some(b"--version") => Ok(Invocation::Version),
        Some(b"--probe") => Ok(Invocation::Probe {
            bwrap: args
                .get(1)
                .map_or_else(|| "bwrap".to_owned(), |a| a.to_string_lossy().into_owned()),
        }),
        Some(spec) => {
            if args.get(1).map(|a| a.as_bytes()) != Some(b"--") || args.len() < 3 {
                return Err(usage());
            }
            let spec: Spec = serde_json::from_slice(spec)
                .map_err(|e| WallError::Usage(format!("the spec is not valid: {e}")))?;
            Ok(Invocation::Run {
                spec,
                argv: args[2..].to_vec(),
            })
        }
        None => Err(usage()),
    }
}

/// The probe's report: the Landlock ABI and bubblewrap's diagnosis.
fn probe_report(bwrap: &str) -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let outcome = probe::try_bwrap(bwrap, &path);
    let d = probe::diagnose_bwrap(&outcome, &probe::read_sysctl);
    serde_json::json!({ "landlock_abi": probe::landlock_abi(), "bwrap": d }).to_string()
}

/// A private temporary directory for one command under Landlock, removed when dropped.
struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn new() -> Result<PrivateTmp, WallError> {
        let base = std::env::var_os("TMPDIR")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let mut template = base
            .join(format!("gptel-scope-run-{}-XXXXXX", std::process::id()))
            .into_os_string()
            .into_vec();
        template.push(0);
        // SAFETY: mkdtemp rewrites the X's of a NUL-terminated template it owns for the call.
        let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(WallError::Supervise(format!(
                "cannot make a private temporary directory in {}: {}",
                base.display(),
                std::io::Error::last_os_error()
            )));
        }
        template.pop();
        Ok(PrivateTmp(PathBuf::from(OsString::from_vec(template))))
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

use std::os::unix::ffi::OsStringExt;

/// Runs the command of `argv` as `spec` says; returns how it ended and what stopped it.
fn run(spec: &Spec, argv: &[OsString]) -> Result<(reaper::Outcome, Limits), WallError> {
    let mut limits = Limits::resolve(&spec.limits, limits::physical_memory());
    limits.user_processes = limits::user_process_limit(limits.processes);
    reaper::become_supervisor()
        .map_err(|e| WallError::Supervise(format!("cannot become the command's subreaper: {e}")))?;
    let program = argv
        .first()
        .ok_or_else(|| WallError::Usage("no program".into()))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(&argv[1..]);
    let mut tmp = None;
    let mut ruleset = None;
    if spec.wall == Wall::Landlock {
        let t = PrivateTmp::new()?;
        let mut write = spec.write.clone();
        write.push(t.0.clone());
        cmd.env("TMPDIR", &t.0);
        tmp = Some(t);
        ruleset = Some(landlock::prepare(&landlock::Rules {
            read: spec.read.clone(),
            write,
            network: spec.network,
        })?);
    }
    let child_limits = limits;
    // SAFETY: the closure runs in the forked child of this single-threaded program, before
    // exec: it sets resource limits and enforces the ruleset made above, with system calls.
    unsafe {
        cmd.pre_exec(move || {
            // A process group of its own, which the supervisor kills in one signal; but
            // not in a terminal session, where the command must stay in the terminal's
            // foreground group to read it.
            if libc::isatty(0) == 0 && libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Every signal unblocked: the supervisor blocks those it waits for, and a
            // mask is inherited across exec.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            limits::apply(&child_limits)?;
            if let Some(r) = ruleset.take() {
                landlock::restrict(r).map_err(|e| std::io::Error::other(e.to_string()))?;
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        let message = e.to_string();
        let message = message
            .rsplit_once(" (os error ")
            .map_or(message.as_str(), |(words, _)| words)
            .to_string();
        WallError::Start {
            program: program.to_string_lossy().into_owned(),
            message,
        }
    })?;
    let grace = std::time::Duration::from_secs_f64(spec.grace.unwrap_or(1.0).clamp(0.0, 60.0));
    let outcome = reaper::supervise(child.id() as i32, &limits, grace);
    drop(tmp);
    Ok((outcome, limits))
}

/// Ends this process as `status` says: the same exit code, or the same signal.
fn exit_as(status: Status) -> i32 {
    match status {
        Status::Code(c) => c,
        Status::Signal(s) => {
            // SAFETY: the signal's default action restored and unblocked, then raised.
            unsafe {
                libc::signal(s, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, s);
                libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::kill(libc::getpid(), s);
            }
            128 + s
        }
    }
}

/// The whole program: returns its exit status.
pub fn main(args: Vec<OsString>) -> i32 {
    use std::io::Write;
    let invocation = match parse(&args) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{e}");
            return 2;
        }
    };
    match invocation {
        Invocation::Version => {
            println!("gptel-scope-run {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Invocation::Probe { bwrap } => {
            println!("{}", probe_report(&bwrap));
            0
        }
        Invocation::Run { spec, argv } => match run(&spec, &argv) {
            Ok((outcome, _)) => {
                if let Some(stopped) = outcome.stopped {
                    let _ = writeln!(std::io::stderr(), "\n{}", stopped.message());
                }
                exit_as(outcome.status)
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "{e}");
                match e {
                    WallError::Start { .. } => 127,
                    _ => 126,
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn command_lines_read_or_refused() {
        assert!(matches!(
            parse(&os(&["--version"])),
            Ok(Invocation::Version)
        ));
        assert!(
            matches!(parse(&os(&["--probe"])), Ok(Invocation::Probe { bwrap }) if bwrap == "bwrap")
        );
        match parse(&os(&[
            r#"{"wall":"landlock","read":["/p"],"limits":{"processes":8}}"#,
            "--",
            "true",
        ])) {
            Ok(Invocation::Run { spec, argv }) => {
                assert_eq!(spec.wall, Wall::Landlock);
                assert_eq!(spec.read, vec![PathBuf::from("/p")]);
                assert_eq!(spec.limits.processes, Some(8));
                assert_eq!(argv, os(&["true"]));
            }
            _ => panic!("not read"),
        }
        for bad in [
            &["{}"][..],
            &["{}", "true"],
            &["{}", "--"],
            &["{\"walls\":1}", "--", "true"],
            &[],
        ] {
            assert!(
                matches!(parse(&os(bad)), Err(WallError::Usage(_))),
                "{bad:?}"
            );
        }
    }
}
