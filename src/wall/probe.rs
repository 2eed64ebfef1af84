//! Why bubblewrap cannot make a sandbox here, and what the user can do about it.
//!
//! gptel-scope runs the model's commands under bubblewrap (`bwrap`). When bubblewrap fails,
//! it is almost always because the kernel will not give it a user namespace, and that
//! refusal has several sources, each with its own fix: Ubuntu 24.04 and later restrict
//! unprivileged user namespaces through AppArmor, older Debian kernels have a switch that
//! turns them off, any kernel can cap their number at zero, and containers forbid them with
//! a seccomp filter.
//!
//! [`try_bwrap`] runs bubblewrap once, [`diagnose_bwrap`] reads its failure together with
//! the sysctls ([`read_sysctl`]) and names the cause and the fix, and [`landlock_abi`] says
//! whether the kernel has Landlock, the wall commands run behind when bubblewrap cannot.

use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// What running bubblewrap once gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BwrapOutcome {
    /// The program as found on PATH (absolute, with symbolic links resolved, which is the
    /// path an AppArmor profile must name), or None when not found.
    pub found: Option<PathBuf>,
    /// Its exit status, None when it could not be started or was killed by a signal.
    pub exit: Option<i32>,
    /// What it wrote on stderr, at most 4 KiB kept.
    pub stderr: String,
}

/// Why bubblewrap cannot run here.
///
/// There is no cause of its own for a container's seccomp filter: nothing bubblewrap says
/// or the sysctls show tells it apart reliably, so it is [`BwrapCause::Other`], whose fix
/// covers containers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BwrapCause {
    /// bubblewrap is not installed (not on PATH).
    NotInstalled,
    /// AppArmor restricts unprivileged user namespaces
    /// (`kernel.apparmor_restrict_unprivileged_userns=1`, Ubuntu 24.04 and later).
    AppArmor,
    /// Unprivileged user namespaces are switched off
    /// (`kernel.unprivileged_userns_clone=0`, Debian's older kernels).
    UsernsDisabled,
    /// No user namespace may be made at all (`user.max_user_namespaces=0`).
    NoUserNamespaces,
    /// Something else: most often a container's seccomp filter, or a kernel without user
    /// namespaces.
    Other,
}

/// The verdict: works, or the cause, a one-sentence reason and a fix a user can carry out.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BwrapDiagnosis {
    /// bubblewrap made a sandbox and ran a command in it.
    pub works: bool,
    /// Why it could not, None when it works.
    pub cause: Option<BwrapCause>,
    /// The reason in one sentence, empty when it works.
    pub reason: String,
    /// What the user can do, empty when it works; may span lines (a file to write).
    pub fix: String,
}

/// The arguments bubblewrap is tried with: every namespace, the whole system read-only.
const BWRAP_ARGS: [&str; 6] = [
    "--die-with-parent",
    "--unshare-all",
    "--ro-bind",
    "/",
    "/",
    "true",
];

/// How long bubblewrap may take before it is killed.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How long, once bubblewrap has exited, its stderr is waited on to close (a process it
/// left behind may hold it open).
const STDERR_GRACE: Duration = Duration::from_secs(1);

/// The most bytes of stderr kept.
const STDERR_LIMIT: usize = 4096;

/// The most bytes read of one sysctl file.
const SYSCTL_LIMIT: u64 = 64;

/// The most bytes of bubblewrap's first line quoted in a reason.
const QUOTE_LIMIT: usize = 200;

/// The stderr of an outcome whose bubblewrap ran too long.
const TIMED_OUT: &str = "timed out";

/// How the stderr of an outcome whose bubblewrap could not be started begins.
const CANNOT_START: &str = "cannot start ";

const APPARMOR_SYSCTL: &str = "kernel/apparmor_restrict_unprivileged_userns";
const CLONE_SYSCTL: &str = "kernel/unprivileged_userns_clone";
const MAX_SYSCTL: &str = "user/max_user_namespaces";
/// A sysctl every Linux has: when it cannot be read, none can (no /proc here).
const ALWAYS_SYSCTL: &str = "kernel/osrelease";

/// The file both sysctl fixes append their setting to, so that it survives a reboot.
const SYSCTL_FILE: &str = "/etc/sysctl.d/60-userns.conf";

/// Runs `program` (a name looked up on `path_env`, or an absolute path) as
/// `PROGRAM --die-with-parent --unshare-all --ro-bind / / true`, stdin /dev/null, stdout
/// discarded, stderr kept (bounded 4 KiB), waiting at most 10 s (then kill it and report
/// exit None with stderr "timed out"). Never panics.
///
/// A name is looked up in the absolute directories of `path_env` only; a relative path
/// (one with a slash) is taken from the current directory. When the program cannot be
/// started, `exit` is None and `stderr` says why ("cannot start PATH: ...").
pub fn try_bwrap(program: &str, path_env: &OsStr) -> BwrapOutcome {
    let Some(found) = find_program(program, path_env) else {
        return BwrapOutcome {
            found: None,
            exit: None,
            stderr: String::new(),
        };
    };
    let (exit, stderr) = run_bounded(&found, &BWRAP_ARGS, TIMEOUT);
    BwrapOutcome {
        found: Some(found),
        exit,
        stderr,
    }
}

/// The executable file `program` names, absolute and with its links resolved.
fn find_program(program: &str, path_env: &OsStr) -> Option<PathBuf> {
    if program.is_empty() {
        return None;
    }
    let found = if program.contains('/') {
        let path = std::path::absolute(program).ok()?;
        is_executable(&path).then_some(path)?
    } else {
        std::env::split_paths(path_env)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(program))
            .find(|path| is_executable(path))?
    };
    // The resolved path is the one the kernel runs and AppArmor matches a profile against.
    Some(std::fs::canonicalize(&found).unwrap_or(found))
}

/// Whether `path` is a regular file (after links) that someone may execute.
fn is_executable(path: &Path) -> bool {
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs `program` with `args` for at most `timeout`: its exit code (None when killed by a
/// signal, not started or timed out) and its stderr, at most [`STDERR_LIMIT`] bytes.
fn run_bounded(program: &Path, args: &[&str], timeout: Duration) -> (Option<i32>, String) {
    let start = Instant::now();
    let mut child = match spawn(program, args) {
        Ok(child) => child,
        Err(e) => return (None, format!("{CANNOT_START}{}: {e}", program.display())),
    };
    // Read stderr on a thread of its own, so that bubblewrap never blocks on a full pipe.
    let chunks = child.stderr.take().and_then(read_in_background);
    let mut pause = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let stderr = chunks
                    .map(|rx| collect(&rx, STDERR_GRACE))
                    .unwrap_or_default();
                return (status.code(), stderr);
            }
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(pause);
                pause = pause.saturating_mul(2).min(Duration::from_millis(20));
            }
            Ok(None) => {
                stop(&mut child);
                return (None, TIMED_OUT.to_owned());
            }
            Err(e) => {
                stop(&mut child);
                return (None, format!("cannot wait for {}: {e}", program.display()));
            }
        }
    }
}

/// Starts `program`, stdin from /dev/null, stdout discarded, stderr piped.
fn spawn(program: &Path, args: &[&str]) -> std::io::Result<Child> {
    let mut tries = 0;
    loop {
        let started = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn();
        match started {
            // A file just written may still be open in a process another thread is
            // forking: the kernel says ETXTBSY for a moment. Try again a few times.
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 5 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Kills `child` and reaps it.
fn stop(child: &mut Child) {
    // Both fail only when it is already gone and reaped, which is what is wanted.
    let _ = child.kill();
    let _ = child.wait();
}

/// Reads `pipe` to its end on a new thread, sending the first [`STDERR_LIMIT`] bytes and
/// discarding the rest; the channel closes when the pipe does. None when no thread can be
/// started: then the pipe is closed, and bubblewrap's writes to it fail.
///
/// A process that outlives bubblewrap and holds its stderr open keeps the thread reading
/// until it closes it; nothing waits for the thread.
fn read_in_background(mut pipe: ChildStderr) -> Option<Receiver<Vec<u8>>> {
    let (tx, rx) = mpsc::channel();
    let reader = move || {
        let mut kept = 0usize;
        let mut buf = [0u8; 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let take = n.min(STDERR_LIMIT.saturating_sub(kept));
                    if let Some(bytes) = buf.get(..take).filter(|b| !b.is_empty()) {
                        kept += take;
                        // The receiver may have gone (a timeout); keep draining all the same.
                        let _ = tx.send(bytes.to_vec());
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    };
    std::thread::Builder::new()
        .name("bwrap-stderr".into())
        .spawn(reader)
        .ok()?;
    Some(rx)
}

/// What arrives on `rx` until it closes or `grace` has passed, as text of at most
/// [`STDERR_LIMIT`] bytes.
fn collect(rx: &Receiver<Vec<u8>>, grace: Duration) -> String {
    let start = Instant::now();
    let mut bytes = Vec::new();
    // Ends when the channel closes (the pipe's end) or nothing came within the grace.
    while let Ok(chunk) = rx.recv_timeout(grace.saturating_sub(start.elapsed())) {
        bytes.extend_from_slice(&chunk);
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    // Invalid bytes become three-byte replacement characters: cut back to the bound.
    truncate(&mut text, STDERR_LIMIT);
    text
}

/// Cuts `text` to at most `limit` bytes, at a character boundary; whether it cut.
fn truncate(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    true
}

/// Reads /proc/sys/NAME, bounded to 64 bytes, trimmed; None when absent or unreadable.
///
/// NAME is relative to /proc/sys, with slashes ("kernel/osrelease"); an absolute NAME or
/// one with a `..` component gives None.
pub fn read_sysctl(name: &str) -> Option<String> {
    let relative = Path::new(name);
    let plain = relative
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if name.is_empty() || !plain {
        return None;
    }
    let file = std::fs::File::open(Path::new("/proc/sys").join(relative)).ok()?;
    let mut bytes = Vec::new();
    file.take(SYSCTL_LIMIT).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).trim().to_owned())
}

/// Pure: the diagnosis from the outcome and the sysctls, read through `sysctl` (given a
/// name like "kernel/apparmor_restrict_unprivileged_userns" relative to /proc/sys, returns
/// the trimmed content or None).
///
/// In order: it works when bubblewrap exited 0; it is not installed when it was not found;
/// a timeout or a failure to start it is [`BwrapCause::Other`]; then the sysctls decide
/// (AppArmor's restriction, Debian's switch, a namespace count of zero); then bubblewrap's
/// own words ("setting up uid map: Permission denied", "No permissions to create new
/// namespace"); and what is left is [`BwrapCause::Other`], for which a container is the
/// usual reason.
pub fn diagnose_bwrap(
    outcome: &BwrapOutcome,
    sysctl: &dyn Fn(&str) -> Option<String>,
) -> BwrapDiagnosis {
    if outcome.exit == Some(0) {
        return BwrapDiagnosis {
            works: true,
            cause: None,
            reason: String::new(),
            fix: String::new(),
        };
    }
    let Some(found) = outcome.found.as_deref() else {
        return failed(
            BwrapCause::NotInstalled,
            "bubblewrap (bwrap) is not installed".to_owned(),
            "install bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)"
                .to_owned(),
        );
    };
    let shown = found.display();
    let said = said(outcome);
    let stderr = outcome.stderr.to_lowercase();

    // Failures of bubblewrap itself rather than of the kernel.
    if outcome.exit.is_none() && outcome.stderr == TIMED_OUT {
        return failed(
            BwrapCause::Other,
            format!(
                "{shown} did not finish within {} seconds, so it was stopped",
                TIMEOUT.as_secs()
            ),
            format!(
                "run {shown} {} in a terminal to see where it hangs; {LANDLOCK_MEANWHILE}",
                BWRAP_ARGS.join(" ")
            ),
        );
    }
    if outcome.exit.is_none() && outcome.stderr.starts_with(CANNOT_START) {
        return failed(
            BwrapCause::Other,
            format!("{shown} could not be started{said}"),
            format!("check that {shown} is an executable bubblewrap (ls -l {shown}), or reinstall bubblewrap; {LANDLOCK_MEANWHILE}"),
        );
    }

    let is = |name: &str, value: &str| sysctl(name).as_deref() == Some(value);
    let apparmor = is(APPARMOR_SYSCTL, "1");
    let clone_off = is(CLONE_SYSCTL, "0");
    let none_allowed = is(MAX_SYSCTL, "0");
    // Whether the sysctls could be read at all: when not, bubblewrap's words must do.
    let readable = [ALWAYS_SYSCTL, APPARMOR_SYSCTL, CLONE_SYSCTL, MAX_SYSCTL]
        .iter()
        .any(|name| sysctl(name).is_some());
    // The kernel refused the namespace itself (EPERM): a switch, a seccomp filter, an LSM.
    let create_denied = stderr.contains("no permissions to creat");
    // The namespace was made but without the rights to set it up: AppArmor's restriction.
    let rights_denied = stderr.contains("setting up uid map: permission denied")
        || stderr.contains("failed rtm_newaddr: operation not permitted");

    if apparmor || (!readable && rights_denied && !create_denied) {
        let why = if apparmor {
            "AppArmor restricts unprivileged user namespaces here (kernel.apparmor_restrict_unprivileged_userns=1, the default since Ubuntu 24.04)"
        } else {
            "the sysctls cannot be read here, and bubblewrap fails the way Ubuntu 24.04's AppArmor restriction of unprivileged user namespaces makes it fail"
        };
        let mut fix = apparmor_fix(found);
        fix.push_str(&also(clone_off, none_allowed));
        return failed(
            BwrapCause::AppArmor,
            format!("{why}, so bubblewrap cannot set up its sandbox{said}"),
            fix,
        );
    }
    if clone_off {
        return failed(
            BwrapCause::UsernsDisabled,
            format!("this kernel does not let unprivileged users create user namespaces (kernel.unprivileged_userns_clone=0), and bubblewrap needs one{said}"),
            format!("{}{}", clone_fix(), also(false, none_allowed)),
        );
    }
    if none_allowed {
        return failed(
            BwrapCause::NoUserNamespaces,
            format!("this system allows no user namespaces at all (user.max_user_namespaces=0), and bubblewrap needs one{said}"),
            max_fix(),
        );
    }
    if create_denied && !readable {
        return failed(
            BwrapCause::UsernsDisabled,
            format!("the kernel refused bubblewrap a user namespace and the sysctls cannot be read here, so most likely unprivileged user namespaces are switched off{said}"),
            format!(
                "where kernel.unprivileged_userns_clone exists (Debian's kernels), {}; inside a container, {CONTAINER_REMEDY}; {LANDLOCK_MEANWHILE}",
                clone_fix()
            ),
        );
    }
    if stderr.contains("does not support user namespaces") {
        return failed(
            BwrapCause::Other,
            format!("this kernel was built without user namespaces, which bubblewrap needs unless it is setuid root{said}"),
            format!("use a kernel built with CONFIG_USER_NS=y, or make bubblewrap setuid root (sudo chmod u+s {shown}); {LANDLOCK_MEANWHILE}"),
        );
    }
    if create_denied {
        return failed(
            BwrapCause::Other,
            format!("the kernel refused bubblewrap a user namespace although no sysctl here forbids one, which is what a container's seccomp filter or a security module does{said}"),
            container_fix(),
        );
    }
    failed(
        BwrapCause::Other,
        format!("bubblewrap cannot set up its sandbox here, and no sysctl explains why{said}"),
        container_fix(),
    )
}

/// What gptel-scope does while bubblewrap cannot run.
const LANDLOCK_MEANWHILE: &str =
    "meanwhile gptel-scope confines commands with Landlock when the kernel has it (Linux 5.13 and later)";

/// How to let a container create namespaces, or do without it.
const CONTAINER_REMEDY: &str = "run Emacs outside the container, or start the container with --privileged (or --cap-add SYS_ADMIN), or with a seccomp profile that allows clone and unshare (docker run --security-opt seccomp=PROFILE.json, and --security-opt apparmor=unconfined where Docker's AppArmor profile forbids the mounts)";

/// The fix when a container (or something unknown) is the likely reason.
fn container_fix() -> String {
    format!("containers often forbid namespaces: {CONTAINER_REMEDY}; {LANDLOCK_MEANWHILE}")
}

/// A diagnosis of failure.
fn failed(cause: BwrapCause, reason: String, fix: String) -> BwrapDiagnosis {
    BwrapDiagnosis {
        works: false,
        cause: Some(cause),
        reason,
        fix,
    }
}

/// What bubblewrap said, for the end of a reason: its first line quoted, or its exit.
fn said(outcome: &BwrapOutcome) -> String {
    let first = outcome
        .stderr
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty());
    match (first, outcome.exit) {
        (Some(line), _) => {
            let mut line = line.to_owned();
            if truncate(&mut line, QUOTE_LIMIT) {
                line.push_str("...");
            }
            format!(" (bwrap said \"{line}\")")
        }
        (None, Some(code)) => format!(" (bwrap gave exit {code} and said nothing)"),
        (None, None) => " (bwrap was killed by a signal and said nothing)".to_owned(),
    }
}

/// The AppArmor profile that lets the bubblewrap at `found` create user namespaces, the
/// command that loads it, and the weaker system-wide alternative.
fn apparmor_fix(found: &Path) -> String {
    let shown = found.display().to_string();
    // AppArmor takes a path with spaces or other special characters only in quotes.
    let plain = shown
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._+-@".contains(c));
    let attach = if plain { shown } else { format!("\"{shown}\"") };
    format!(
        "let bubblewrap create user namespaces with an AppArmor profile: write this to /etc/apparmor.d/bwrap\n\
         \n\
         abi <abi/4.0>,\n\
         include <tunables/global>\n\
         profile bwrap {attach} flags=(unconfined) {{\n  userns,\n  include if exists <local/bwrap>\n}}\n\
         \n\
         then run sudo apparmor_parser -r /etc/apparmor.d/bwrap. \
         Weaker, because it lifts the restriction for every program: \
         sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0, and to keep it after a reboot, \
         echo kernel.apparmor_restrict_unprivileged_userns=0 | sudo tee -a {SYSCTL_FILE}"
    )
}

/// The fix for Debian's switch.
fn clone_fix() -> String {
    format!(
        "sudo sysctl kernel.unprivileged_userns_clone=1, and to keep it after a reboot, \
         echo kernel.unprivileged_userns_clone=1 | sudo tee -a {SYSCTL_FILE}"
    )
}

/// The fix for a namespace count of zero.
fn max_fix() -> String {
    format!(
        "sudo sysctl user.max_user_namespaces=15000, and to keep it after a reboot, \
         echo user.max_user_namespaces=15000 | sudo tee -a {SYSCTL_FILE}"
    )
}

/// The other sysctls that would still stop bubblewrap once the first cause is fixed.
fn also(clone_off: bool, none_allowed: bool) -> String {
    let clone = clone_off.then(|| {
        format!(
            "\n\nkernel.unprivileged_userns_clone is 0 here too, so also: {}",
            clone_fix()
        )
    });
    let max = none_allowed.then(|| {
        format!(
            "\n\nuser.max_user_namespaces is 0 here too, so also: {}",
            max_fix()
        )
    });
    [clone, max].into_iter().flatten().collect()
}

/// The Landlock ABI version the kernel supports (0 when none): the raw
/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)` syscall through libc
/// (`SYS_landlock_create_ruleset` = 444 on all Linux arches; flag
/// `LANDLOCK_CREATE_RULESET_VERSION` = 1); returns 0 on error (ENOSYS, EOPNOTSUPP when
/// disabled at boot). On non-Linux, 0.
pub fn landlock_abi() -> u32 {
    #[cfg(target_os = "linux")]
    {
        const SYS_LANDLOCK_CREATE_RULESET: libc::c_long = 444;
        const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
        // SAFETY: with the version flag the call reads no attributes (a null pointer and a
        // size of 0 are what it requires) and only returns a number or an error.
        let version = unsafe {
            libc::syscall(
                SYS_LANDLOCK_CREATE_RULESET,
                std::ptr::null::<libc::c_void>(),
                0 as libc::size_t,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        // An error is -1; a version is small and positive.
        u32::try_from(version).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const UID_MAP: &str = "bwrap: setting up uid map: Permission denied\n";
    const NO_PERMISSIONS: &str = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.\n";
    const PROFILE: &str = "abi <abi/4.0>,\ninclude <tunables/global>\nprofile bwrap /usr/bin/bwrap flags=(unconfined) {\n  userns,\n  include if exists <local/bwrap>\n}\n";

    /// The sysctls of a machine where nothing forbids user namespaces.
    const OPEN: &[(&str, &str)] = &[
        ("kernel/osrelease", "6.8.0"),
        ("user/max_user_namespaces", "15000"),
    ];

    struct Case {
        name: &'static str,
        found: Option<&'static str>,
        exit: Option<i32>,
        stderr: &'static str,
        sysctls: &'static [(&'static str, &'static str)],
        cause: Option<BwrapCause>,
        /// Each must be in the reason.
        reason: &'static [&'static str],
        /// Each must be in the fix.
        fix: &'static [&'static str],
        /// None may be in the fix.
        not_fix: &'static [&'static str],
    }

    const BWRAP: Option<&str> = Some("/usr/bin/bwrap");

    const CASES: &[Case] = &[
        Case {
            name: "works",
            found: BWRAP,
            exit: Some(0),
            stderr: "",
            sysctls: OPEN,
            cause: None,
            reason: &[],
            fix: &[],
            not_fix: &[],
        },
        Case {
            name: "works even where AppArmor restricts namespaces (a profile is loaded)",
            found: BWRAP,
            exit: Some(0),
            stderr: "",
            sysctls: &[("kernel/apparmor_restrict_unprivileged_userns", "1")],
            cause: None,
            reason: &[],
            fix: &[],
            not_fix: &[],
        },
        Case {
            name: "not installed",
            found: None,
            exit: None,
            stderr: "",
            sysctls: &[("kernel/apparmor_restrict_unprivileged_userns", "1")],
            cause: Some(BwrapCause::NotInstalled),
            reason: &["bubblewrap (bwrap) is not installed"],
            fix: &[
                "Debian/Ubuntu: sudo apt install bubblewrap",
                "Fedora: sudo dnf install bubblewrap",
                "Arch: sudo pacman -S bubblewrap",
            ],
            not_fix: &[],
        },
        Case {
            name: "Ubuntu 24.04: AppArmor, its words quoted",
            found: BWRAP,
            exit: Some(1),
            stderr: UID_MAP,
            sysctls: &[
                ("kernel/osrelease", "6.8.0"),
                ("kernel/apparmor_restrict_unprivileged_userns", "1"),
                ("kernel/unprivileged_userns_clone", "1"),
                ("user/max_user_namespaces", "15000"),
            ],
            cause: Some(BwrapCause::AppArmor),
            reason: &[
                "AppArmor restricts unprivileged user namespaces",
                "Ubuntu 24.04",
                "(bwrap said \"bwrap: setting up uid map: Permission denied\")",
            ],
            fix: &[
                PROFILE,
                "write this to /etc/apparmor.d/bwrap",
                "sudo apparmor_parser -r /etc/apparmor.d/bwrap",
                "Weaker",
                "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0",
            ],
            not_fix: &["also", "userns_clone"],
        },
        Case {
            name: "AppArmor with bwrap elsewhere: the profile names that path",
            found: Some("/opt/bubblewrap/bin/bwrap"),
            exit: Some(1),
            stderr: "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
            sysctls: &[("kernel/apparmor_restrict_unprivileged_userns", "1")],
            cause: Some(BwrapCause::AppArmor),
            reason: &["RTM_NEWADDR"],
            fix: &["profile bwrap /opt/bubblewrap/bin/bwrap flags=(unconfined) {"],
            not_fix: &["/usr/bin/bwrap"],
        },
        Case {
            name: "AppArmor with a path that needs quotes",
            found: Some("/home/me/my tools/bwrap"),
            exit: Some(1),
            stderr: "",
            sysctls: &[("kernel/apparmor_restrict_unprivileged_userns", "1")],
            cause: Some(BwrapCause::AppArmor),
            reason: &["exit 1"],
            fix: &["profile bwrap \"/home/me/my tools/bwrap\" flags=(unconfined) {"],
            not_fix: &[],
        },
        Case {
            name: "AppArmor and Debian's switch both: both fixes",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[
                ("kernel/apparmor_restrict_unprivileged_userns", "1"),
                ("kernel/unprivileged_userns_clone", "0"),
            ],
            cause: Some(BwrapCause::AppArmor),
            reason: &["No permissions to create new namespace"],
            fix: &[PROFILE, "also: sudo sysctl kernel.unprivileged_userns_clone=1"],
            not_fix: &["max_user_namespaces"],
        },
        Case {
            name: "AppArmor restriction off: not AppArmor",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[
                ("kernel/apparmor_restrict_unprivileged_userns", "0"),
                ("kernel/unprivileged_userns_clone", "0"),
            ],
            cause: Some(BwrapCause::UsernsDisabled),
            reason: &["kernel.unprivileged_userns_clone=0"],
            fix: &["sudo sysctl kernel.unprivileged_userns_clone=1", "/etc/sysctl.d/"],
            not_fix: &["apparmor"],
        },
        Case {
            name: "Debian's switch off",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[("kernel/osrelease", "4.19.0"), ("kernel/unprivileged_userns_clone", "0")],
            cause: Some(BwrapCause::UsernsDisabled),
            reason: &["kernel.unprivileged_userns_clone=0", "bwrap said \"bwrap: No permissions to create new namespace"],
            fix: &[
                "sudo sysctl kernel.unprivileged_userns_clone=1",
                "echo kernel.unprivileged_userns_clone=1 | sudo tee -a /etc/sysctl.d/60-userns.conf",
            ],
            not_fix: &["max_user_namespaces", "container"],
        },
        Case {
            name: "Debian's switch off and no namespaces allowed: both fixes",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[("kernel/unprivileged_userns_clone", "0"), ("user/max_user_namespaces", "0")],
            cause: Some(BwrapCause::UsernsDisabled),
            reason: &["kernel.unprivileged_userns_clone=0"],
            fix: &["sudo sysctl kernel.unprivileged_userns_clone=1", "also: sudo sysctl user.max_user_namespaces=15000"],
            not_fix: &[],
        },
        Case {
            name: "no user namespaces allowed",
            found: BWRAP,
            exit: Some(1),
            stderr: "bwrap: Creating new namespace failed: No space left on device\n",
            sysctls: &[("kernel/osrelease", "3.10.0"), ("user/max_user_namespaces", "0")],
            cause: Some(BwrapCause::NoUserNamespaces),
            reason: &["user.max_user_namespaces=0", "No space left on device"],
            fix: &[
                "sudo sysctl user.max_user_namespaces=15000",
                "echo user.max_user_namespaces=15000 | sudo tee -a /etc/sysctl.d/60-userns.conf",
            ],
            not_fix: &["also"],
        },
        Case {
            name: "refused although the sysctls allow it: a container",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["no sysctl here forbids one", "seccomp", "No permissions to create new namespace"],
            fix: &["containers often forbid namespaces", "--privileged", "SYS_ADMIN", "clone and unshare", "Landlock"],
            not_fix: &["unprivileged_userns_clone"],
        },
        Case {
            name: "refused, Debian's switch on: a container",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[("kernel/unprivileged_userns_clone", "1")],
            cause: Some(BwrapCause::Other),
            reason: &["no sysctl here forbids one"],
            fix: &["containers often forbid namespaces"],
            not_fix: &[],
        },
        Case {
            name: "refused and no sysctl readable: Debian's switch, as bubblewrap guesses",
            found: BWRAP,
            exit: Some(1),
            stderr: NO_PERMISSIONS,
            sysctls: &[],
            cause: Some(BwrapCause::UsernsDisabled),
            reason: &["cannot be read", "switched off", "No permissions to create new namespace"],
            fix: &["sudo sysctl kernel.unprivileged_userns_clone=1", "inside a container", "Landlock"],
            not_fix: &[],
        },
        Case {
            name: "old bubblewrap's wording of the refusal",
            found: BWRAP,
            exit: Some(1),
            stderr: "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.",
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["no sysctl here forbids one"],
            fix: &["containers often forbid namespaces"],
            not_fix: &[],
        },
        Case {
            name: "uid map denied and no sysctl readable: AppArmor's sign",
            found: BWRAP,
            exit: Some(1),
            stderr: UID_MAP,
            sysctls: &[],
            cause: Some(BwrapCause::AppArmor),
            reason: &["cannot be read", "Ubuntu 24.04", "setting up uid map: Permission denied"],
            fix: &[PROFILE, "sudo apparmor_parser -r /etc/apparmor.d/bwrap"],
            not_fix: &[],
        },
        Case {
            name: "uid map denied on a kernel without AppArmor's restriction",
            found: BWRAP,
            exit: Some(1),
            stderr: UID_MAP,
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["no sysctl explains why", "(bwrap said \"bwrap: setting up uid map: Permission denied\")"],
            fix: &["containers often forbid namespaces", "Landlock"],
            not_fix: &["apparmor_parser"],
        },
        Case {
            name: "a kernel without user namespaces",
            found: BWRAP,
            exit: Some(1),
            stderr: "bwrap: Creating new namespace failed, likely because the kernel does not support user namespaces.  bwrap must be installed setuid on such systems.\n",
            sysctls: &[("kernel/osrelease", "5.10.0")],
            cause: Some(BwrapCause::Other),
            reason: &["built without user namespaces"],
            fix: &["CONFIG_USER_NS=y", "sudo chmod u+s /usr/bin/bwrap", "Landlock"],
            not_fix: &[],
        },
        Case {
            name: "something else, only an exit code",
            found: BWRAP,
            exit: Some(1),
            stderr: "",
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["exit 1"],
            fix: &["containers often forbid namespaces", "run Emacs outside the container", "Landlock"],
            not_fix: &[],
        },
        Case {
            name: "only the first line of several is quoted",
            found: BWRAP,
            exit: Some(1),
            stderr: "\n  bwrap: Can't mount proc on /newroot/proc: Operation not permitted  \nsecond line\n",
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["(bwrap said \"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\")"],
            fix: &["containers often forbid namespaces"],
            not_fix: &[],
        },
        Case {
            name: "killed by a signal, silent",
            found: BWRAP,
            exit: None,
            stderr: "",
            sysctls: OPEN,
            cause: Some(BwrapCause::Other),
            reason: &["killed by a signal"],
            fix: &["containers often forbid namespaces"],
            not_fix: &[],
        },
        Case {
            name: "timed out, even where AppArmor restricts namespaces",
            found: BWRAP,
            exit: None,
            stderr: "timed out",
            sysctls: &[("kernel/apparmor_restrict_unprivileged_userns", "1")],
            cause: Some(BwrapCause::Other),
            reason: &["did not finish within 10 seconds"],
            fix: &["in a terminal", "--unshare-all", "Landlock"],
            not_fix: &["apparmor"],
        },
        Case {
            name: "could not be started",
            found: BWRAP,
            exit: None,
            stderr: "cannot start /usr/bin/bwrap: Exec format error (os error 8)",
            sysctls: &[("kernel/unprivileged_userns_clone", "0")],
            cause: Some(BwrapCause::Other),
            reason: &["could not be started", "Exec format error"],
            fix: &["reinstall bubblewrap"],
            not_fix: &["sysctl"],
        },
    ];

    #[test]
    fn each_outcome_diagnosed_with_its_cause_reason_and_fix() {
        for case in CASES {
            let outcome = BwrapOutcome {
                found: case.found.map(PathBuf::from),
                exit: case.exit,
                stderr: case.stderr.to_owned(),
            };
            let map: HashMap<&str, &str> = case.sysctls.iter().copied().collect();
            let d = diagnose_bwrap(&outcome, &|name| map.get(name).map(|v| (*v).to_owned()));
            let name = case.name;
            assert_eq!(d.cause, case.cause, "{name}: {d:?}");
            assert_eq!(d.works, case.cause.is_none(), "{name}");
            if d.works {
                assert_eq!((d.reason.as_str(), d.fix.as_str()), ("", ""), "{name}");
            } else {
                assert!(!d.reason.is_empty() && !d.fix.is_empty(), "{name}");
                assert!(
                    !d.reason.contains('\n'),
                    "{name}: the reason is one line: {}",
                    d.reason
                );
            }
            for want in case.reason {
                assert!(
                    d.reason.contains(want),
                    "{name}: reason lacks {want:?}: {}",
                    d.reason
                );
            }
            for want in case.fix {
                assert!(
                    d.fix.contains(want),
                    "{name}: fix lacks {want:?}: {}",
                    d.fix
                );
            }
            for unwanted in case.not_fix {
                assert!(
                    !d.fix.to_lowercase().contains(&unwanted.to_lowercase()),
                    "{name}: fix has {unwanted:?}: {}",
                    d.fix
                );
            }
        }
    }

    #[test]
    fn a_long_first_line_is_cut_in_the_reason() {
        let outcome = BwrapOutcome {
            found: Some("/usr/bin/bwrap".into()),
            exit: Some(1),
            stderr: "é".repeat(1000),
        };
        let d = diagnose_bwrap(&outcome, &|_| None);
        assert_eq!(d.cause, Some(BwrapCause::Other));
        assert!(
            d.reason
                .contains(&format!("{}...\")", "é".repeat(QUOTE_LIMIT / 2))),
            "{}",
            d.reason
        );
        assert!(d.reason.len() < QUOTE_LIMIT + 200, "{}", d.reason.len());
    }

    #[test]
    fn the_diagnosis_serializes_as_the_lisp_side_reads_it() {
        let outcome = BwrapOutcome {
            found: None,
            exit: None,
            stderr: String::new(),
        };
        let json = serde_json::to_value(diagnose_bwrap(&outcome, &|_| None)).unwrap_or_default();
        assert_eq!(json["works"], false);
        assert_eq!(json["cause"], "not_installed");
        assert_eq!(
            serde_json::to_value(BwrapCause::AppArmor).unwrap_or_default(),
            "app_armor"
        );
        assert_eq!(
            serde_json::to_value(BwrapCause::UsernsDisabled).unwrap_or_default(),
            "userns_disabled"
        );
        let works = BwrapOutcome {
            found: Some("/usr/bin/bwrap".into()),
            exit: Some(0),
            stderr: String::new(),
        };
        let json = serde_json::to_value(diagnose_bwrap(&works, &|_| None)).unwrap_or_default();
        assert_eq!(json["cause"], serde_json::Value::Null);
    }

    /// A script named `bwrap` in a new directory: the directory (kept alive) and its path.
    fn fake_bwrap(script: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("bwrap");
        std::fs::write(&path, script).expect("the script written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("the script made executable");
        let path = std::fs::canonicalize(&path).expect("the script's path");
        (dir, path)
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let o = try_bwrap("/nonexistent/bwrap", OsStr::new("/usr/bin:/bin"));
        assert_eq!(
            o,
            BwrapOutcome {
                found: None,
                exit: None,
                stderr: String::new()
            }
        );
        let empty = tempfile::tempdir().expect("a temporary directory");
        assert_eq!(try_bwrap("bwrap", empty.path().as_os_str()).found, None);
        assert_eq!(try_bwrap("", OsStr::new("/usr/bin")).found, None);
    }

    #[test]
    fn a_failing_bwrap_gives_its_exit_and_stderr() {
        let (dir, path) = fake_bwrap(
            "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
        );
        // Looked up on a PATH whose relative and missing entries are passed over.
        let path_env =
            std::env::join_paths([Path::new("relative"), Path::new("/nonexistent"), dir.path()])
                .expect("a PATH");
        let o = try_bwrap("bwrap", &path_env);
        assert_eq!(o.found.as_deref(), Some(path.as_path()));
        assert_eq!(o.exit, Some(1));
        assert_eq!(o.stderr, "bwrap: setting up uid map: Permission denied\n");
        // And named by its path.
        let by_path = try_bwrap(&path.to_string_lossy(), OsStr::new(""));
        assert_eq!(by_path, o);
    }

    #[test]
    fn bwrap_is_given_the_probe_arguments() {
        let (_dir, path) = fake_bwrap("#!/bin/sh\nprintf '%s|' \"$@\" >&2\nread -r line && echo stdin-not-empty >&2\nexit 3\n");
        let o = try_bwrap(&path.to_string_lossy(), OsStr::new(""));
        assert_eq!(
            (o.exit, o.stderr.as_str()),
            (
                Some(3),
                "--die-with-parent|--unshare-all|--ro-bind|/|/|true|"
            )
        );
    }

    #[test]
    fn a_flood_on_stderr_is_cut_and_does_not_block() {
        let (_dir, path) = fake_bwrap("#!/bin/sh\ni=0\nwhile [ $i -lt 2000 ]; do echo 'bwrap: a line of noise, again and again' >&2; i=$((i+1)); done\nexit 2\n");
        let o = try_bwrap(&path.to_string_lossy(), OsStr::new(""));
        assert_eq!(o.exit, Some(2));
        assert_eq!(o.stderr.len(), STDERR_LIMIT);
        assert!(o.stderr.starts_with("bwrap: a line of noise"));
    }

    #[test]
    fn a_program_that_is_not_executable_is_not_found() {
        let (_dir, path) = fake_bwrap("#!/bin/sh\nexit 0\n");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .expect("permissions");
        assert_eq!(
            try_bwrap(&path.to_string_lossy(), OsStr::new("")).found,
            None
        );
    }

    #[test]
    fn a_program_that_cannot_start_says_so() {
        // Executable, but no interpreter line and not a binary: the kernel refuses it.
        let (_dir, path) = fake_bwrap("\u{7f}ELF not really\n");
        let o = try_bwrap(&path.to_string_lossy(), OsStr::new(""));
        assert_eq!(o.exit, None);
        assert!(o.stderr.starts_with(CANNOT_START), "{}", o.stderr);
        let d = diagnose_bwrap(&o, &|_| None);
        assert_eq!(d.cause, Some(BwrapCause::Other));
        assert!(d.reason.contains("could not be started"), "{}", d.reason);
    }

    #[test]
    fn a_program_that_hangs_is_killed() {
        let (_dir, path) = fake_bwrap("#!/bin/sh\nexec sleep 30\n");
        let start = Instant::now();
        let (exit, stderr) = run_bounded(&path, &BWRAP_ARGS, Duration::from_millis(200));
        assert_eq!((exit, stderr.as_str()), (None, TIMED_OUT));
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_sysctl_is_read_bounded_and_trimmed() {
        let release = read_sysctl("kernel/osrelease").expect("every Linux has kernel/osrelease");
        assert!(
            !release.is_empty() && release.len() <= 64 && release.trim() == release,
            "{release:?}"
        );
        assert_eq!(read_sysctl("kernel/no_such_sysctl"), None);
        assert_eq!(read_sysctl("../self/status"), None);
        assert_eq!(read_sysctl("/etc/passwd"), None);
        assert_eq!(read_sysctl(""), None);
    }

    #[test]
    fn the_landlock_abi_is_a_small_number() {
        assert!(landlock_abi() <= 100);
    }
}
