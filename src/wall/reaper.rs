//! Nothing a command starts outlives its call. The supervisor is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): every process the command starts, however it leaves its
//! parent (`setsid -f`, a double fork, `nohup`, `disown`, `set -m`), stays below it, since
//! an orphan goes to the nearest subreaper above it and not to init. When the command ends,
//! or the call is stopped (SIGTERM, SIGHUP), or a limit is crossed, the supervisor stops
//! every process below it (SIGSTOP, so that none forks meanwhile), kills them (SIGKILL),
//! and reaps them before it answers.
//!
//! While the command runs, the supervisor counts the processes below it and their
//! resident memory every [`POLL`]: more than the call's limits, and the whole tree is
//! killed. The tree is read from `/proc/PID/task/TID/children`.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::limits::{Limits, Stopped};

/// How often the processes below the supervisor are counted while the command runs.
pub const POLL: Duration = Duration::from_millis(100);

/// The most bytes read of one `children` or `statm` file.
const MAX_PROC_FILE: u64 = 1 << 20;

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

/// What supervising a command came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// How the command ended (SIGKILL when the supervisor killed it).
    pub status: Status,
    /// Which limit stopped it, if one did.
    pub stopped: Option<Stopped>,
    /// A signal (SIGTERM, SIGHUP) asked the supervisor to stop the command.
    pub interrupted: Option<i32>,
    /// The most processes seen below the supervisor at once.
    pub most_processes: u64,
}

fn read_small(path: &str) -> Option<String> {
    use std::io::Read;
    let f = std::fs::File::open(path).ok()?;
    let mut s = String::new();
    f.take(MAX_PROC_FILE).read_to_string(&mut s).ok()?;
    Some(s)
}

/// The children of every thread of `pid`.
fn children(pid: i32, out: &mut Vec<i32>) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        let Some(tid) = t.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if let Some(text) = read_small(&format!("/proc/{pid}/task/{tid}/children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|w| w.parse::<i32>().ok()),
            );
        }
    }
}

/// Every process below `root`, nearest first.
pub fn descendants(root: i32) -> Vec<i32> {
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut todo = vec![root];
    let mut found = Vec::new();
    while let Some(p) = todo.pop() {
        found.clear();
        children(p, &mut found);
        for &c in &found {
            if seen.insert(c) {
                order.push(c);
                todo.push(c);
            }
        }
    }
    order
}

/// The resident memory of `pid` in bytes (0 when it is gone).
fn resident(pid: i32, page: u64) -> u64 {
    read_small(&format!("/proc/{pid}/statm"))
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|w| w.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages.saturating_mul(page))
}

fn page_size() -> u64 {
    // SAFETY: sysconf takes a constant.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// How a child ended, from its `waitpid` status.
fn status_of(raw: libc::c_int) -> Status {
    if libc::WIFSIGNALED(raw) {
        Status::Signal(libc::WTERMSIG(raw))
    } else {
        Status::Code(libc::WEXITSTATUS(raw))
    }
}

/// What one round of reaping found: the status of the command if it was reaped, and
/// whether any child is left to reap later.
struct Reaped {
    main: Option<Status>,
    children_left: bool,
}

/// Reaps every child that has ended.
fn reap(main: i32) -> Reaped {
    let mut found = None;
    loop {
        let mut raw: libc::c_int = 0;
        // SAFETY: waitpid with a valid status pointer; WNOHANG never blocks.
        let r = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if r <= 0 {
            // 0: children left, none ended; -1: ECHILD, none left.
            return Reaped {
                main: found,
                children_left: r == 0,
            };
        }
        if r == main {
            found = Some(status_of(raw));
        }
    }
}

/// Stops and kills every process below the supervisor, and reaps them: when this returns,
/// none is left. Returns the status of `main` if it was reaped meanwhile.
pub fn kill_all(main: i32) -> Option<Status> {
    let me = std::process::id() as i32;
    let mut status = None;
    // The command's process group first, in one signal: the kernel kills every member,
    // and a fork racing with the signal gives a child that gets it too, so a fork bomb
    // that stayed in its group is gone at once. The walk below finds those that left it.
    // SAFETY: kill sends a signal to the command's group (its pid: it called setpgid).
    unsafe { libc::kill(-main, libc::SIGKILL) };
    loop {
        // Stop the tree until a walk finds no process it had not stopped: a stopped process
        // forks no more, so a fork bomb is held still before it is killed.
        let mut stopped: BTreeSet<i32> = BTreeSet::new();
        loop {
            let now = descendants(me);
            let new: Vec<i32> = now
                .iter()
                .copied()
                .filter(|p| !stopped.contains(p))
                .collect();
            if new.is_empty() {
                break;
            }
            for p in new {
                // SAFETY: kill sends a signal; a pid that has gone fails with ESRCH.
                unsafe { libc::kill(p, libc::SIGSTOP) };
                stopped.insert(p);
            }
        }
        if stopped.is_empty() {
            // Nothing below but zombies reaped here: wait for those still to be reaped.
            let r = reap(main);
            status = r.main.or(status);
            if !r.children_left {
                return status;
            }
            // A child that is neither gone nor listed (it is exiting): let it finish.
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        for &p in &stopped {
            // SAFETY: as above.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        // Their children come to the supervisor as they die; the next round finds them.
        status = reap(main).main.or(status);
    }
}

/// Makes the calling process a child subreaper, blocks the signals the supervisor waits
/// for, and arranges for SIGTERM when its parent (Emacs) dies. Call before starting the
/// command; the command's process must unblock them before exec (`run.rs` does: a mask is
/// inherited, and `std::process::Command` leaves it as it is).
pub fn become_supervisor() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments; sigprocmask with an initialised set.
    unsafe {
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM, 0, 0, 0);
        let set = waited_signals();
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The signals the supervisor takes through `sigtimedwait`: a child's end, a request to
/// stop (SIGTERM, SIGHUP: Emacs's timeout, a closed terminal), and the keyboard's signals
/// of a terminal session, which are the command's to take and not the supervisor's.
fn waited_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset and sigaddset initialise and fill the set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [
            libc::SIGCHLD,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGQUIT,
            libc::SIGTSTP,
            libc::SIGTTIN,
            libc::SIGTTOU,
        ] {
            libc::sigaddset(&mut set, s);
        }
        set
    }
}

/// Waits for the command `main` (a child of the calling process, which called
/// [`become_supervisor`]) while keeping it within `limits`; then kills whatever it left.
/// Asked to stop (SIGTERM, SIGHUP), it gives the command SIGTERM and `grace` to end.
pub fn supervise(main: i32, limits: &Limits, grace: Duration) -> Outcome {
    let me = std::process::id() as i32;
    let page = page_size();
    let set = waited_signals();
    let mut status = None;
    let mut stopped = None;
    let mut interrupted = None;
    let mut most = 0u64;
    let mut last_poll = Instant::now();
    let mut deadline: Option<Instant> = None;
    while status.is_none() {
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: POLL.as_nanos() as libc::c_long,
        };
        // SAFETY: sigtimedwait with an initialised set and a valid timeout; no siginfo wanted.
        let sig = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) };
        if sig == libc::SIGTERM || sig == libc::SIGHUP {
            if interrupted.is_some() {
                break;
            }
            // Asked to stop: the command and all it started get SIGTERM and `grace` to
            // end; then the whole tree is killed.
            interrupted = Some(sig);
            deadline = Some(Instant::now() + grace);
            // SAFETY: signals to the command's group and to each process below.
            unsafe { libc::kill(-main, libc::SIGTERM) };
            for p in descendants(me) {
                // SAFETY: as above.
                unsafe { libc::kill(p, libc::SIGTERM) };
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if let Some(s) = reap(main).main {
            status = Some(s);
            break;
        }
        if last_poll.elapsed() >= POLL || sig < 0 {
            last_poll = Instant::now();
            let tree = descendants(me);
            let n = tree.len() as u64;
            most = most.max(n);
            if n >= limits.processes {
                stopped = Some(Stopped::Processes {
                    limit: limits.processes,
                    seen: n,
                });
                break;
            }
            let used: u64 = tree.iter().map(|&p| resident(p, page)).sum();
            if used > limits.memory {
                stopped = Some(Stopped::Memory {
                    limit: limits.memory,
                    used,
                });
                break;
            }
        }
    }
    if let Some(s) = kill_all(main) {
        status.get_or_insert(s);
    }
    let status = status.unwrap_or(Status::Signal(libc::SIGKILL));
    if stopped.is_none() {
        stopped = match status {
            // The signal, or a shell's exit status for a command it killed (128 + N).
            Status::Signal(libc::SIGXCPU) => Some(Stopped::Cpu { limit: limits.cpu }),
            Status::Code(c) if c == 128 + libc::SIGXCPU => Some(Stopped::Cpu { limit: limits.cpu }),
            Status::Signal(libc::SIGXFSZ) => Some(Stopped::FileSize {
                limit: limits.file_size,
            }),
            Status::Code(c) if c == 128 + libc::SIGXFSZ => Some(Stopped::FileSize {
                limit: limits.file_size,
            }),
            Status::Code(0) => None,
            _ if interrupted.is_none() => {
                let peak = peak_resident();
                (peak >= limits.memory / 2).then_some(Stopped::MemoryNear {
                    limit: limits.memory,
                    peak,
                })
            }
            _ => None,
        };
    }
    Outcome {
        status,
        stopped,
        interrupted,
        most_processes: most,
    }
}

/// The largest resident memory of any process reaped so far, in bytes.
fn peak_resident() -> u64 {
    // SAFETY: getrusage into zeroed storage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return 0;
    }
    (u.ru_maxrss.max(0) as u64).saturating_mul(1024)
}
