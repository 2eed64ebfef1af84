//! The supervisor every command runs under, `gptel-scope-run` (`src/bin/`): it applies the
//! call's resource limits ([`limits`]), keeps every process the command starts below it and
//! kills them all when the call ends ([`reaper`]), and, where bubblewrap cannot run,
//! confines the command with Landlock ([`landlock`]). [`probe`] says which wall can run
//! here and, when bubblewrap cannot, why and how to fix it.
//!
//! The supervisor is a program of its own, not code of the module: a process forked from
//! Emacs would share Emacs's memory copy-on-write for as long as the command runs, and may
//! do nothing but async-signal-safe calls. The module starts it ([`crate::run::spawn`];
//! Emacs's `make-process` for a terminal session, or where the module cannot) with the
//! command's environment, directory and output; it starts the command, waits, and exits as
//! the command did.

pub mod landlock;
pub mod limits;
pub mod probe;
pub mod reaper;
pub mod run;

/// What stops the supervisor from running a command as asked.
#[derive(Debug, thiserror::Error)]
pub enum WallError {
    /// Its arguments are not what Emacs gives it.
    #[error("gptel-scope-run: {0}")]
    Usage(String),
    /// The Landlock wall cannot be set up; nothing runs.
    #[error("gptel-scope-run: the Landlock wall cannot be set up, so nothing ran: {0}")]
    Landlock(String),
    /// The command could not be started.
    #[error("{program}: {message}")]
    Start {
        /// The program.
        program: String,
        /// Why, as the system says it.
        message: String,
    },
    /// The supervisor cannot supervise.
    #[error("gptel-scope-run: {0}")]
    Supervise(String),
}
