//! The Landlock wall: where bubblewrap cannot run (Ubuntu's AppArmor restriction of user
//! namespaces, a container), a command runs restricted by the kernel's Landlock LSM, which
//! needs neither namespaces nor privileges (Linux 5.13 and later).
//!
//! What a command under it may do:
//!
//! - read and run files under the system's directories (`/usr`, `/etc`, the `/bin` and
//!   `/lib` links, `/proc`) and under the scope's read directories and toolchains;
//! - read and write under the scope's write directories (after the call's grants) and its
//!   own private temporary directory;
//! - read and write the harmless devices (`/dev/null`, `/dev/zero`, `/dev/full`, the random
//!   devices, `/dev/tty`);
//! - no TCP bind or connect unless the scope allows the network (ABI 4; UDP from ABI 9),
//!   no connect to a named Unix socket outside the write directories (ABI 9), no signal to
//!   a process outside the sandbox and no abstract Unix socket outside it (ABI 6).
//!
//! Every other path cannot be opened. Unlike bubblewrap, Landlock cannot hide one entry
//! inside a directory it shows: the caller refuses a call that would need that
//! (SECURITY.md, "The Landlock wall"). A kernel that supports less is used as far as it
//! goes (the crate's best effort), and one that supports none is an error: nothing runs.

use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};

use super::WallError;

/// The system directories every command may read and run from.
pub const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc",
];

/// The devices every command may read and write.
pub const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// The newest ABI this wall asks for; older kernels give what they have.
const TARGET: ABI = ABI::V9;

/// What one command may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Read and run, beside the system's directories.
    pub read: Vec<PathBuf>,
    /// Read, run and write.
    pub write: Vec<PathBuf>,
    /// TCP (and UDP where the ABI has it) allowed.
    pub network: bool,
}

/// A path's descriptor for a rule, or None when the path does not exist (nothing to allow).
fn path_fd(path: &Path) -> Result<Option<PathFd>, WallError> {
    match PathFd::new(path) {
        Ok(fd) => Ok(Some(fd)),
        Err(e) => {
            let missing = std::fs::symlink_metadata(path).is_err();
            if missing {
                Ok(None)
            } else {
                Err(WallError::Landlock(format!(
                    "cannot open {} for a rule: {e}",
                    path.display()
                )))
            }
        }
    }
}

fn landlock_error(e: impl std::fmt::Display) -> WallError {
    WallError::Landlock(e.to_string())
}

/// The ruleset of `rules`, created (a descriptor of the kernel's) but not yet enforced:
/// made before the command's process starts, enforced in it by [`restrict`].
pub fn prepare(rules: &Rules) -> Result<RulesetCreated, WallError> {
    let all = AccessFs::from_all(TARGET);
    let read = AccessFs::from_read(TARGET);
    let file = AccessFs::from_file(TARGET);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .map_err(landlock_error)?;
    if !rules.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET))
            .map_err(landlock_error)?;
    }
    ruleset = ruleset
        .scope(Scope::from_all(TARGET))
        .map_err(landlock_error)?;
    let mut created = ruleset.create().map_err(landlock_error)?;
    let mut add = |path: &Path, access| -> Result<(), WallError> {
        if let Some(fd) = path_fd(path)? {
            let is_dir = std::fs::metadata(path).map(|m| m.is_dir()).unwrap_or(false);
            let access = if is_dir { access } else { access & file };
            (&mut created)
                .add_rule(PathBeneath::new(fd, access))
                .map_err(landlock_error)?;
        }
        Ok(())
    };
    for p in SYSTEM {
        add(Path::new(p), read)?;
    }
    for p in DEVICES {
        add(Path::new(p), file & !AccessFs::Execute)?;
    }
    for p in &rules.read {
        add(p, read)?;
    }
    for p in &rules.write {
        add(p, all)?;
    }
    Ok(created)
}

/// Enforces `created` on the calling process (and what it runs): `no_new_privs`, then the
/// ruleset. An error when the kernel enforces none of it.
pub fn restrict(created: RulesetCreated) -> Result<RulesetStatus, WallError> {
    let status = created.restrict_self().map_err(landlock_error)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(WallError::Landlock("this kernel does not enforce Landlock (not built in, or not enabled at boot: add landlock to the lsm= boot parameter)".into()));
    }
    Ok(status.ruleset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_made_for_existing_paths_and_missing_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules {
            read: vec![dir.path().join("missing")],
            write: vec![dir.path().to_path_buf()],
            network: false,
        };
        // Made, not enforced: the test process keeps its rights.
        assert!(prepare(&rules).is_ok());
    }
}
