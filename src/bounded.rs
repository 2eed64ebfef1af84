//! Files the engine reads for itself (scope documents, profiles, the document Add to scope
//! edits): opened without blocking, checked to be a regular file on the opened descriptor,
//! and read only up to a bound. One helper, [`read`], used for every such file.
//!
//! A `scope.yml` can be anything a path can name: git ships a symlink as it is, so a project
//! can hold `scope.yml -> /dev/zero` (an endless read), `-> /dev/tty` (a read that waits for
//! the terminal) or a FIFO (an `open` that waits for a writer). Each would freeze Emacs or
//! grow it without end. The file is opened with `O_NONBLOCK` (a FIFO's `open` returns at
//! once) and `O_NOCTTY`, its type taken by `fstat` of that descriptor (what was opened is
//! what is judged: no `stat` before it can be raced), and at most `limit` bytes and one more
//! are read. The kind of an entry that is not a regular file is seen with `stat` before the
//! open too, so a device is not even opened (opening some has effects); the `fstat` after it
//! is the check that counts.
//!
//! Above the error layer: it uses only the error types.

use std::fs::{Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

#[cfg(test)]
use crate::error::size_text;
use crate::error::ReadError;

/// The largest scope document (a `scope.yml`, a `preset.md`, a profile) the engine reads:
/// 1 MiB. The shipped profiles are under 1.2 KB and the built-in defaults, every key
/// documented, 9 KB; a scope a person reads and approves is a few kilobytes. A document
/// near the bound still loads in milliseconds, and the bound keeps a generated or hostile one
/// (a 57 MB file made Emacs grow to 1.6 GB) from costing memory or time before anything is
/// decided.
pub const MAX_SCOPE_DOCUMENT: u64 = 1 << 20;

/// The bytes of `path`, a regular file of at most `limit` bytes, with its metadata (from
/// `fstat` of the descriptor read). A missing file is [`ReadError::NotFound`]; a FIFO, a
/// device, a socket or a directory is [`ReadError::NotRegular`] and is never read; a larger
/// file is [`ReadError::TooLarge`], of which at most `limit + 1` bytes were read.
pub fn read(path: &Path, limit: u64) -> Result<(Vec<u8>, Metadata), ReadError> {
    let io = |e: std::io::Error| ReadError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    // Seen before the open, so a device or FIFO is not opened at all.
    let (file, meta) = open(path)?;
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            path: path.display().to_string(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    Read::by_ref(&mut &file)
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        // Grown since the fstat.
        return Err(ReadError::TooLarge {
            path: path.display().to_string(),
            limit,
        });
    }
    Ok((bytes, meta))
}

/// `path` opened for reading as [`read`] opens it (without blocking, and only when it is a
/// regular file, seen before the open and by `fstat` of the descriptor), with its metadata:
/// for a caller that reads it its own bounded way (line by line, a prefix).
pub fn open(path: &Path) -> Result<(std::fs::File, Metadata), ReadError> {
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound {
            path: path.display().to_string(),
        },
        _ => ReadError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        },
    };
    regular(path, &std::fs::metadata(path).map_err(io)?)?;
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    regular(path, &meta)?;
    Ok((file, meta))
}

/// Refuses what is not a regular file, naming what it is.
fn regular(path: &Path, meta: &Metadata) -> Result<(), ReadError> {
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a file"
    };
    Err(ReadError::NotRegular {
        path: path.display().to_string(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kind of entry, with the exact refusal; a FIFO answers at once (no writer).
    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("cstring");
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 101]).expect("big");
        let fine = dir.path().join("fine");
        std::fs::write(&fine, "a: 1\n").expect("fine");
        let name = |p: &Path| p.display().to_string();
        for (path, want) in [
            (
                fifo.clone(),
                Err(format!("{} is a FIFO, not a regular file", name(&fifo))),
            ),
            (
                Path::new("/dev/zero").to_path_buf(),
                Err("/dev/zero is a character device, not a regular file".to_string()),
            ),
            (
                dir.path().to_path_buf(),
                Err(format!(
                    "{} is a directory, not a regular file",
                    name(dir.path())
                )),
            ),
            (
                big.clone(),
                Err(format!("{} is larger than 100 bytes", name(&big))),
            ),
            (
                dir.path().join("none"),
                Err(format!("{} does not exist", name(&dir.path().join("none")))),
            ),
            (fine.clone(), Ok(b"a: 1\n".to_vec())),
        ] {
            let got = read(&path, 100).map(|(b, _)| b).map_err(|e| e.to_string());
            assert_eq!(got, want, "{}", path.display());
        }
        assert_eq!(
            (size_text(1 << 20), size_text(64 << 10), size_text(100)),
            ("1 MiB".into(), "64 KiB".into(), "100 bytes".into())
        );
    }
}
