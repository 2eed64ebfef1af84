//! Writing the document: an advisory lock held for the whole read-modify-write (on Unix), and
//! the atomic replacement of the file (a temporary file in the same directory, fsync, the
//! original's permissions, rename). The temporary file is named `.{name}.{pid}.{n}.tmp`;
//! one an edit killed before its rename left is removed by the next edit of the document
//! once its pid is dead.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Result, ScopeError};

static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// How long an edit waits for another edit of the same document to finish.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Take an exclusive advisory lock (`flock`) on the scope document for a read-modify-write,
/// and return the open file that holds it (the lock is released when it is dropped).
///
/// An edit replaces the file by renaming a new one over it, so the lock is taken on the file
/// the path names now and checked afterwards: when a concurrent edit renamed a new file into
/// place while this one waited, the lock is on the old file and is taken again on the new
/// one. A missing file is no error here (`None`): reading it reports that. Waits at most
/// [`LOCK_WAIT`], then fails without writing.
#[cfg(unix)]
pub(super) fn lock_document(file: &Path) -> Result<Option<fs::File>> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let io = |path: &Path, e: std::io::Error| ScopeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let gave_up = |why: &str| ScopeError::Edit {
        file: file.display().to_string(),
        message: format!(
            "{why} for {} seconds; nothing was added, try again",
            LOCK_WAIT.as_secs()
        ),
    };
    loop {
        // Checked on every turn: a file replaced again and again keeps no edit waiting.
        if std::time::Instant::now() >= deadline {
            return Err(gave_up(
                "the file kept being replaced while this edit waited",
            ));
        }
        // Opened without waiting (a FIFO swapped in does not block the open) and only kept
        // when it is a regular file.
        let handle = match fs::File::options()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(file)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(file, e)),
        };
        if !handle.metadata().is_ok_and(|m| m.is_file()) {
            return Err(ScopeError::Edit {
                file: file.display().to_string(),
                message: "is not a regular file; nothing was added".into(),
            });
        }
        match handle.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                if std::time::Instant::now() >= deadline {
                    return Err(gave_up("another edit of this file has held its lock"));
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
                continue;
            }
            Err(fs::TryLockError::Error(e)) => return Err(io(file, e)),
        }
        let held = handle.metadata().map_err(|e| io(file, e))?;
        match fs::metadata(file) {
            Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                return Ok(Some(handle))
            }
            // Replaced (or removed) while this edit waited: lock what is there now.
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(file, e)),
        }
    }
}

/// Elsewhere a lock would keep other programs from reading the file: the edit relies on
/// the check before the rename alone.
#[cfg(not(unix))]
pub(super) fn lock_document(_file: &Path) -> Result<Option<fs::File>> {
    Ok(None)
}

/// Removes the temporary file unless it was renamed into place.
struct TempGuard(Option<PathBuf>);

impl Drop for TempGuard {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// Whether no process `pid` runs on this machine (Linux: `/proc/PID` is missing). Elsewhere,
/// or when `/proc` is not mounted, every process counts as alive and nothing is removed.
fn pid_dead(pid: u32) -> bool {
    pid != std::process::id()
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid.to_string()).exists()
}

/// The pid in the name of a temporary file of [`write_atomic`] for the document `name`
/// (`.{name}.{pid}.{n}.tmp`), or `None` for any other name.
fn temp_owner(file_name: &str, name: &str) -> Option<u32> {
    let rest = file_name
        .strip_prefix('.')?
        .strip_prefix(name)?
        .strip_prefix('.')?;
    let rest = rest.strip_suffix(".tmp")?;
    let (pid, n) = rest.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Remove the temporary files an edit killed before its rename left in `dir`: only regular
/// files named as [`write_atomic`] names them for this document, whose process is dead.
/// Called with the document's lock held; errors are ignored (the edit goes on).
fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| temp_owner(n, name)) else {
            continue;
        };
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && pid_dead(pid) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Replace `file`'s content with `new`: write a temporary file in the same directory, fsync
/// it, give it the original's permissions, and rename it over the file (the target of a
/// symbolic link, so the link stays). Fails without writing when the file no longer holds
/// `original`.
pub(super) fn write_atomic(file: &Path, original: &[u8], new: &[u8]) -> Result<()> {
    let io = |path: &Path, e: std::io::Error| ScopeError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let target = fs::canonicalize(file).map_err(|e| io(file, e))?;
    let meta = fs::metadata(&target).map_err(|e| io(&target, e))?;
    if meta.permissions().readonly() {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "the file is read-only; nothing was added".into(),
        });
    }
    let dir = target.parent().ok_or_else(|| ScopeError::Edit {
        file: file.display().to_string(),
        message: "the file has no parent directory".into(),
    })?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scope".into());

    remove_stale_temps(dir, &name);
    let mut guard = TempGuard(None);
    let mut handle = None;
    for _ in 0..100 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(f) => {
                guard.0 = Some(tmp);
                handle = Some(f);
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&tmp, e)),
        }
    }
    let (Some(mut f), Some(tmp)) = (handle, guard.0.clone()) else {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "could not create a temporary file next to it".into(),
        });
    };
    f.write_all(new).map_err(|e| io(&tmp, e))?;
    f.set_permissions(meta.permissions())
        .map_err(|e| io(&tmp, e))?;
    f.sync_all().map_err(|e| io(&tmp, e))?;
    drop(f);

    let now = fs::read(&target).map_err(|e| io(&target, e))?;
    if now != original {
        return Err(ScopeError::Edit {
            file: file.display().to_string(),
            message: "the file changed on disk while it was being edited; nothing was \
                      written, try again"
                .into(),
        });
    }
    fs::rename(&tmp, &target).map_err(|e| io(&target, e))?;
    guard.0 = None;
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

// Every test here needs Unix: permission bits, symbolic links or `flock`.
#[cfg(all(test, unix))]
mod tests {
    use serde_yaml::Value;

    use super::*;
    use crate::edit::tests::{edit_error, listing, read, strings, write};
    use crate::edit::{add_to_scope, Section};

    #[test]
    fn atomic_write_keeps_permissions_and_symlinks() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("dotfiles");
        fs::create_dir(&real_dir).unwrap();
        let real = write(&real_dir, "scope.yml", "paths:\n  read: []\n");
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("scope.yml");
        symlink(&real, &link).unwrap();

        add_to_scope(&link, Section::PathsRead, &strings(&["/x/**"])).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(read(&real), "paths:\n  read: [/x/**]\n");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(listing(&real_dir), ["scope.yml"]);
        assert_eq!(listing(dir.path()), ["dotfiles", "scope.yml"]);
    }

    #[test]
    fn read_only_file_is_not_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        let m = edit_error(add_to_scope(
            &file,
            Section::PathsRead,
            &strings(&["/x/**"]),
        ));
        assert_eq!(m, "the file is read-only; nothing was added");
        assert_eq!(read(&file), "paths:\n  read: []\n");
        assert_eq!(listing(dir.path()), ["scope.yml"]);
    }

    #[test]
    fn concurrent_edits_keep_every_value() {
        let dir = tempfile::tempdir().unwrap();
        let text =
            "# keep me\nbash_tools:\n  categories:\n    read_only: [ls]   # viewing\n# tail\n";
        let file = write(dir.path(), "scope.yml", text);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let file = file.clone();
                std::thread::spawn(move || {
                    for i in 0..25 {
                        let v = format!("c{t}_{i}");
                        let out = add_to_scope(&file, Section::ReadOnly, std::slice::from_ref(&v))
                            .unwrap();
                        assert_eq!(out.patterns_added, [v]);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let after = read(&file);
        let doc: Value = serde_yaml::from_str(&after).unwrap();
        let list = doc["bash_tools"]["categories"]["read_only"]
            .as_sequence()
            .unwrap();
        assert_eq!(list.len(), 1 + 8 * 25);
        for t in 0..8 {
            for i in 0..25 {
                let v = Value::String(format!("c{t}_{i}"));
                assert!(list.contains(&v), "c{t}_{i} lost");
            }
        }
        assert!(after.starts_with("# keep me\n"));
        assert!(after.ends_with("]   # viewing\n# tail\n"));
        assert_eq!(listing(dir.path()), ["scope.yml"]);
    }

    #[test]
    fn an_edit_removes_the_temporary_files_of_a_dead_process() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        // A pid no process has (above the kernel's limit) and this process's parent, alive.
        let dead = dir.path().join(".scope.yml.4194305.0.tmp");
        let alive = dir.path().join(format!(
            ".scope.yml.{}.3.tmp",
            std::os::unix::process::parent_id()
        ));
        let other = dir.path().join(".other.yml.4194305.0.tmp");
        let odd = dir.path().join(".scope.yml.4194305.x.tmp");
        for f in [&dead, &alive, &other, &odd] {
            fs::write(f, "half").unwrap();
        }
        add_to_scope(&file, Section::PathsRead, &strings(&["/x/**"])).unwrap();
        assert!(!dead.exists());
        assert!(alive.exists() && other.exists() && odd.exists());
        assert_eq!(temp_owner(".scope.yml.12.3.tmp", "scope.yml"), Some(12));
        assert_eq!(temp_owner(".scope.yml.12.tmp", "scope.yml"), None);
        assert_eq!(temp_owner("scope.yml.12.3.tmp", "scope.yml"), None);
    }

    #[test]
    fn an_edit_waits_for_the_lock_of_another() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        let held = fs::File::open(&file).unwrap();
        held.lock().unwrap();
        let f = file.clone();
        let edit =
            std::thread::spawn(move || add_to_scope(&f, Section::PathsRead, &strings(&["/x/**"])));
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(read(&file), "paths:\n  read: []\n");
        drop(held);
        edit.join().unwrap().unwrap();
        assert_eq!(read(&file), "paths:\n  read: [/x/**]\n");
    }
}
