//! A command started by the module, its output going straight to a [`Capture`]: no byte of
//! it passes through Emacs, and no shell stands between Emacs and the command.
//!
//! [`spawn`] starts the program with `posix_spawn` as Emacs's `make-process` starts a
//! subprocess:
//!
//! - in a session of its own (`setsid`), so it is the leader of a process group that holds
//!   everything it starts, and has no controlling terminal to read or write;
//! - every signal at its default action and none blocked, whatever Emacs and its threads
//!   ignore or block;
//! - standard input from `/dev/null`, standard output and error to the capture's pipe;
//! - in the directory given, with exactly the environment given, the argv given (its first
//!   word included) and the program's file name as found by the caller.
//!
//! A thread of the module waits for the command to end and hands its status to a function
//! of the caller (the binding writes it to an Emacs pipe process, which wakes Emacs up).
//! Where this cannot be done as described (not Linux, a C library without
//! `posix_spawn_file_actions_addchdir_np`), [`spawn`] says so with `Ok(None)` and the
//! caller starts the command itself.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

use crate::run::capture::Capture;
use crate::{Result, ScopeError};

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Code(i32),
    /// A signal killed it.
    Signal(i32),
    /// Its status could not be had (someone else waited for it).
    Unknown,
}

impl Exit {
    /// The status as one line of text: `exit N`, `signal N` or `unknown`.
    pub fn line(self) -> String {
        match self {
            Exit::Code(n) => format!("exit {n}\n"),
            Exit::Signal(n) => format!("signal {n}\n"),
            Exit::Unknown => "unknown\n".to_string(),
        }
    }
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Command<'a> {
    /// The program's file name, absolute (as the caller found it).
    pub program: &'a Path,
    /// The argv, its first word included.
    pub argv: &'a [Vec<u8>],
    /// The environment, `NAME=VALUE` entries.
    pub env: &'a [Vec<u8>],
    /// The working directory.
    pub directory: &'a Path,
}

/// A command started: its process id (also its process group's and session's) and the
/// capture of its output.
pub struct Started {
    /// The command's process id.
    pub pid: i32,
    /// Its output, being read.
    pub capture: Capture,
}

fn c_string(what: &str, bytes: &[u8]) -> Result<CString> {
    CString::new(bytes).map_err(|_| {
        ScopeError::InvalidArgument(format!(
            "{what} holds a NUL byte: {}",
            String::from_utf8_lossy(bytes)
        ))
    })
}

fn spawn_error(program: &Path, what: &str, code: libc::c_int) -> ScopeError {
    let e = std::io::Error::from_raw_os_error(code).to_string();
    // "No such file or directory (os error 2)": the words only, as Emacs says them.
    let e = e
        .rsplit_once(" (os error ")
        .map_or(e.as_str(), |(words, _)| words)
        .to_string();
    ScopeError::Io {
        path: program.display().to_string(),
        message: format!("{what}: {e}"),
    }
}

/// The descriptor a pipe's end holds, read from its `Debug` text (`PipeWriter(FileDesc(OwnedFd
/// { fd: 8 }))`): the only way to it when a library hands the end over as an opaque type.
pub fn descriptor_in(debug: &str) -> Option<libc::c_int> {
    let (_, after) = debug.split_once("fd: ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Makes `fd`, a pipe's end, close on exec: Emacs duplicates the end of a pipe process it
/// hands to a module without that flag, so every program started after it would inherit
/// it, and could write to it. False when `fd` is no pipe or the flag cannot be set.
pub fn pipe_close_on_exec(fd: libc::c_int) -> bool {
    // SAFETY: fstat into zeroed storage and fcntl on a descriptor number; neither takes
    // ownership, and a number that is not open fails with EBADF.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return false;
        }
        let flags = libc::fcntl(fd, libc::F_GETFD);
        flags >= 0 && libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) == 0
    }
}

/// Starts `cmd` with its output captured (the first `head_cap` and last `tail_cap` bytes
/// kept), and calls `on_exit` from a thread of its own when it ends. `Ok(None)` when this
/// system cannot start it as described (the module's documentation): the caller starts it.
pub fn spawn(
    cmd: &Command<'_>,
    head_cap: usize,
    tail_cap: usize,
    on_exit: Box<dyn FnOnce(Exit) + Send>,
) -> Result<Option<Started>> {
    #[cfg(target_os = "linux")]
    {
        linux::spawn(cmd, head_cap, tail_cap, on_exit)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (cmd, head_cap, tail_cap, on_exit);
        Ok(None)
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;

    type AddChdir = unsafe extern "C" fn(
        *mut libc::posix_spawn_file_actions_t,
        *const libc::c_char,
    ) -> libc::c_int;

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), looked up when
    /// called, so that the module still loads where it is missing.
    fn addchdir() -> Option<AddChdir> {
        static NAME: &CStr = c"posix_spawn_file_actions_addchdir_np";
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name; the symbol, when
        // found, has the C signature of `AddChdir` (glibc's spawn.h).
        unsafe {
            let f = libc::dlsym(libc::RTLD_DEFAULT, NAME.as_ptr());
            (!f.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, AddChdir>(f))
        }
    }

    /// The file actions and attributes of a spawn, destroyed when dropped.
    struct Spawn {
        actions: libc::posix_spawn_file_actions_t,
        attr: libc::posix_spawnattr_t,
    }

    impl Spawn {
        /// Both initialised, or an error (nothing left to destroy).
        fn new(program: &Path) -> Result<Box<Spawn>> {
            // SAFETY: zeroed storage initialised by the init functions before any use; a
            // failure of the second destroys the first.
            unsafe {
                let mut s: Box<Spawn> = Box::new(std::mem::zeroed());
                let r = libc::posix_spawn_file_actions_init(&mut s.actions);
                if r != 0 {
                    return Err(spawn_error(program, "cannot prepare the start", r));
                }
                let r = libc::posix_spawnattr_init(&mut s.attr);
                if r != 0 {
                    libc::posix_spawn_file_actions_destroy(&mut s.actions);
                    return Err(spawn_error(program, "cannot prepare the start", r));
                }
                Ok(s)
            }
        }
    }

    impl Drop for Spawn {
        fn drop(&mut self) {
            // SAFETY: both were initialised by `Spawn::new`.
            unsafe {
                libc::posix_spawn_file_actions_destroy(&mut self.actions);
                libc::posix_spawnattr_destroy(&mut self.attr);
            }
        }
    }

    /// Zero, or the error `r` of `what`.
    fn check(program: &Path, what: &str, r: libc::c_int) -> Result<()> {
        if r == 0 {
            Ok(())
        } else {
            Err(spawn_error(program, what, r))
        }
    }

    pub(super) fn spawn(
        cmd: &Command<'_>,
        head_cap: usize,
        tail_cap: usize,
        on_exit: Box<dyn FnOnce(Exit) + Send>,
    ) -> Result<Option<Started>> {
        use std::os::unix::ffi::OsStrExt;
        let Some(addchdir) = addchdir() else {
            return Ok(None);
        };
        let program = cmd.program;
        let path = c_string("the program's file name", program.as_os_str().as_bytes())?;
        let dir = c_string("the directory", cmd.directory.as_os_str().as_bytes())?;
        let argv: Vec<CString> = cmd
            .argv
            .iter()
            .map(|a| c_string("an argument", a))
            .collect::<Result<_>>()?;
        let env: Vec<CString> = cmd
            .env
            .iter()
            .map(|e| c_string("an environment entry", e))
            .collect::<Result<_>>()?;
        let mut argv_p: Vec<*mut libc::c_char> =
            argv.iter().map(|a| a.as_ptr().cast_mut()).collect();
        argv_p.push(std::ptr::null_mut());
        let mut env_p: Vec<*mut libc::c_char> = env.iter().map(|e| e.as_ptr().cast_mut()).collect();
        env_p.push(std::ptr::null_mut());

        let (capture, writer): (Capture, File) = Capture::with_pipe(head_cap, tail_cap)?;
        let mut s = Spawn::new(program)?;
        let w = writer.as_raw_fd();
        let flags = libc::POSIX_SPAWN_SETSID
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
        // SAFETY: `s` holds initialised actions and attributes; every pointer passed is valid
        // for the call (the CStrings and the vectors of pointers outlive the spawn), and the
        // signal sets are initialised by sigemptyset and sigfillset.
        let pid = unsafe {
            let mut none = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(none.as_mut_ptr());
            let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigfillset(all.as_mut_ptr());
            check(
                program,
                "cannot prepare the start",
                libc::posix_spawnattr_setsigmask(&mut s.attr, none.as_ptr()),
            )?;
            check(
                program,
                "cannot prepare the start",
                libc::posix_spawnattr_setsigdefault(&mut s.attr, all.as_ptr()),
            )?;
            if libc::posix_spawnattr_setflags(&mut s.attr, flags) != 0 {
                // A C library without POSIX_SPAWN_SETSID (glibc before 2.26).
                return Ok(None);
            }
            check(
                program,
                "cannot prepare the start",
                libc::posix_spawn_file_actions_addopen(
                    &mut s.actions,
                    0,
                    c"/dev/null".as_ptr(),
                    libc::O_RDONLY,
                    0,
                ),
            )?;
            check(
                program,
                "cannot prepare the start",
                libc::posix_spawn_file_actions_adddup2(&mut s.actions, w, 1),
            )?;
            check(
                program,
                "cannot prepare the start",
                libc::posix_spawn_file_actions_adddup2(&mut s.actions, w, 2),
            )?;
            check(
                program,
                "cannot prepare the start",
                addchdir(&mut s.actions, dir.as_ptr()),
            )?;
            let mut pid: libc::pid_t = 0;
            let r = libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                &s.actions,
                &s.attr,
                argv_p.as_ptr(),
                env_p.as_ptr(),
            );
            if r != 0 {
                let what = if r == libc::ENOENT && !cmd.directory.is_dir() {
                    format!("cannot enter {}", cmd.directory.display())
                } else {
                    "cannot start it".to_string()
                };
                return Err(spawn_error(program, &what, r));
            }
            pid
        };
        // The command has its copy of the write end; the output ends when it and whatever
        // it started have closed theirs.
        drop(writer);
        let waiter = std::thread::Builder::new()
            .name("gptel-scope-wait".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                crate::run::capture::block_signals();
                on_exit(wait(pid));
            });
        if let Err(e) = waiter {
            // Nobody would learn of its end: it does not run.
            // SAFETY: kill and waitpid on the child just started, which nothing else waits for.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            return Err(ScopeError::Io {
                path: program.display().to_string(),
                message: format!("cannot start a thread to wait for it: {e}"),
            });
        }
        Ok(Some(Started { pid, capture }))
    }

    /// Waits for the child `pid` to end.
    fn wait(pid: libc::pid_t) -> Exit {
        let mut status: libc::c_int = 0;
        loop {
            // SAFETY: waitpid on our own child, with a valid status pointer.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Exit::Unknown;
        }
        if libc::WIFEXITED(status) {
            Exit::Code(libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            Exit::Signal(libc::WTERMSIG(status))
        } else {
            Exit::Unknown
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs `program` with `argv` in `dir` with `env`; returns the exit, the output and the pid.
    fn run_argv(program: &str, argv: &[&str], dir: &Path, env: &[&str]) -> (Exit, String, i32) {
        let bytes = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let (argv, env) = (bytes(argv), bytes(env));
        let (tx, rx) = mpsc::channel();
        let cmd = Command {
            program: Path::new(program),
            argv: &argv,
            env: &env,
            directory: dir,
        };
        let Started { pid, mut capture } = spawn(
            &cmd,
            1 << 20,
            1 << 20,
            Box::new(move |e| {
                let _ = tx.send(e);
            }),
        )
        .unwrap()
        .unwrap();
        let exit = rx.recv_timeout(Duration::from_secs(20)).unwrap();
        let f = capture.finish(Duration::from_secs(5));
        (exit, f.buffer.result(1 << 20, None, f.ended).output, pid)
    }

    /// Runs `script` with `sh -c` in `dir` with `env`; returns the exit, the output and the pid.
    fn run(script: &str, dir: &Path, env: &[&str]) -> (Exit, String, i32) {
        run_argv("/bin/sh", &["sh", "-c", script], dir, env)
    }

    #[test]
    fn spawned_command_gets_exactly_its_environment() {
        let (exit, out, _) = run_argv(
            "/usr/bin/env",
            &["env"],
            Path::new("/"),
            &["A=1", "B.C=2", "C-D=3", "=x", "E"],
        );
        assert_eq!(
            (exit, out.as_str()),
            (Exit::Code(0), "A=1\nB.C=2\nC-D=3\n=x\nE\n")
        );
    }

    #[test]
    fn spawned_command_gets_its_argv_directory_session_signals_and_no_input() {
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        let script = "echo \"$0|$1\"; pwd; echo err >&2; \
                      ps -o pid=,pgid=,sid=,tty= -p $$; \
                      while read -r l; do case $l in SigBlk*|SigIgn*) echo \"$l\";; esac; done < /proc/$$/status; \
                      read x; echo \"read:$?\"; exit 7";
        let (exit, out, pid) = run(script, &dir, &["PATH=/usr/bin:/bin"]);
        assert_eq!(exit, Exit::Code(7));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(&lines[..3], &["sh|", dir.to_str().unwrap(), "err"], "{out}");
        let ps: Vec<&str> = lines[3].split_whitespace().collect();
        let pid = pid.to_string();
        assert_eq!(ps, [pid.as_str(), pid.as_str(), pid.as_str(), "?"]);
        assert_eq!(lines[4], "SigBlk:\t0000000000000000");
        // No classic signal ignored (glibc's spawn leaves its two internal ones, 32 and 33,
        // ignored, as in a child of Emacs 30's make-process).
        let ignored = u64::from_str_radix(lines[5].trim_start_matches("SigIgn:\t"), 16).unwrap();
        assert_eq!(ignored & 0x7fff_ffff, 0, "{out}");
        assert_eq!(lines[6], "read:1");
    }

    #[test]
    fn spawned_command_exit_and_signal() {
        let dir = std::env::temp_dir();
        let cases: &[(&str, Exit, &str)] = &[
            ("true", Exit::Code(0), ""),
            ("printf 'a\\nb'; exit 3", Exit::Code(3), "a\nb"),
            ("echo x; kill -TERM $$", Exit::Signal(libc::SIGTERM), "x\n"),
            ("yes | head -c 5000000 | wc -c", Exit::Code(0), "5000000\n"),
        ];
        for (script, exit, out) in cases {
            let (e, o, _) = run(script, &dir, &["PATH=/usr/bin:/bin"]);
            assert_eq!((e, o.as_str()), (*exit, *out), "{script}");
        }
    }

    #[test]
    fn descriptor_of_a_pipe_end_found_and_made_close_on_exec() {
        use std::os::unix::io::AsRawFd;
        let (_r, w) = std::io::pipe().unwrap();
        let fd = descriptor_in(&format!("{w:?}"));
        assert_eq!(fd, Some(w.as_raw_fd()));
        // SAFETY: fcntl on an open descriptor; dup's copy has no close-on-exec flag.
        let copy = unsafe { libc::dup(w.as_raw_fd()) };
        assert_eq!(
            unsafe { libc::fcntl(copy, libc::F_GETFD) } & libc::FD_CLOEXEC,
            0
        );
        assert!(pipe_close_on_exec(copy));
        assert_eq!(
            unsafe { libc::fcntl(copy, libc::F_GETFD) } & libc::FD_CLOEXEC,
            libc::FD_CLOEXEC
        );
        unsafe { libc::close(copy) };
        let file = std::fs::File::open("/dev/null").unwrap();
        assert!(!pipe_close_on_exec(file.as_raw_fd()));
        assert!(!pipe_close_on_exec(-1));
        assert_eq!(descriptor_in("Writer"), None);
    }

    #[test]
    fn spawn_errors_say_what_failed() {
        let argv = vec![b"x".to_vec()];
        let cases: &[(&str, &str, &str)] = &[
            (
                "/nonexistent/program",
                "/",
                "/nonexistent/program: cannot start it: No such file or directory",
            ),
            (
                "/bin/sh",
                "/nonexistent-dir",
                "/bin/sh: cannot enter /nonexistent-dir: No such file or directory",
            ),
        ];
        for (program, dir, message) in cases {
            let cmd = Command {
                program: Path::new(program),
                argv: &argv,
                env: &[],
                directory: Path::new(dir),
            };
            let e = spawn(&cmd, 64, 64, Box::new(|_| {})).err().unwrap();
            assert_eq!(e.to_string(), *message);
        }
        let cmd = Command {
            program: Path::new("/bin/sh"),
            argv: &[b"a\0b".to_vec()],
            env: &[],
            directory: Path::new("/"),
        };
        assert_eq!(
            spawn(&cmd, 64, 64, Box::new(|_| {}))
                .err()
                .unwrap()
                .to_string(),
            "invalid argument: an argument holds a NUL byte: a\u{0}b"
        );
    }
}
