//! What the file system looked like, remembered from one decision to the next for as long as
//! the kernel reports no change that could alter it.
//!
//! Resolving a path asks about each of its components (`lstat`, and `readlink` for a symlink):
//! the working directory of every decision, then each path operand. On a virtual machine such
//! a call costs a microsecond or more, several times what judging a command costs. Within one
//! decision [`crate::paths::memo`] asks about a path once; this module lets the next decision
//! reuse the answers, and only when nothing could have changed them:
//!
//! - An answer about `DIR/NAME` is kept only when `DIR` is *watched*: an inotify watch on it
//!   reports every entry made, removed or renamed in it (`IN_CREATE`, `IN_DELETE`,
//!   `IN_MOVED_FROM`, `IN_MOVED_TO`). That is the only way `DIR/NAME` can turn from a directory
//!   into a symlink, appear or vanish: a symlink's target cannot change in place.
//! - A directory is watched only when every directory above it is watched and its own entry
//!   is a kept answer saying it is a directory (not a symlink); `/` is watched first. The
//!   watch is added after that answer was found, so a change in between is an event on its
//!   parent's watch. A change anywhere along the chain is therefore always reported.
//! - Only local file systems whose changes all pass through this kernel are watched (ext2/3/4,
//!   XFS, Btrfs, tmpfs, F2FS): on NFS, SMB, FUSE, 9p or overlayfs another machine or layer can
//!   change a directory without an event here, so their answers are asked anew every time.
//! - A mount or unmount in this process's mount namespace can put another file system under a
//!   known name; `/proc/self/mounts` is polled for it.
//! - At the start of each decision (`sync`) one `poll` asks whether anything was reported.
//!   An event that names a kept answer, a mount change, an overflowing event queue, or a
//!   watched directory itself moved, deleted or unmounted forgets everything: every watch is
//!   dropped and the next decision asks the file system again from `/`. Events about other
//!   names (files made and removed in a watched directory) are read and passed over.
//!
//! - A scope document in a watched directory is watched itself (`IN_MODIFY`, `IN_ATTRIB`,
//!   `IN_CLOSE_WRITE`, moved or deleted): while nothing is reported, its stamp (modification
//!   time, length, inode, change time) is not asked for again ([`crate::config`]). A write
//!   through a shared memory mapping reports nothing; no editor writes so, and the next
//!   change to the file or its directory forgets the stamp.
//!
//! A working directory resolved from kept answers alone is kept as well ([`crate::paths`]),
//! for as long as they are. Whatever cannot be set up (no inotify, too many instances, a file
//! system not listed) leaves the answers to one decision, as before. Outside a decision
//! nothing is remembered at all.

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::{Cell, RefCell};
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    use crate::fxhash::FxHashMap;

    /// At most this many directories are watched at once: the working directories of a
    /// session and what lies above them. One past it is not watched (its entries are asked
    /// about anew at each decision).
    pub const MAX_WATCHES: usize = 256;

    /// At most this many answers are kept; past it everything is forgotten at the start of
    /// the next decision.
    const MAX_KEPT: usize = 8192;

    /// What a watch reports: entries made, removed or renamed; the directory itself moved or
    /// deleted. `IN_IGNORED`, `IN_UNMOUNT` and `IN_Q_OVERFLOW` come unasked.
    const MASK: u32 = libc::IN_CREATE
        | libc::IN_DELETE
        | libc::IN_MOVED_FROM
        | libc::IN_MOVED_TO
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_ONLYDIR
        | libc::IN_DONT_FOLLOW;

    /// What a watch on a file reports: its contents or attributes changed, a writer closed
    /// it, it was moved or deleted. Every such event forgets everything.
    const FILE_MASK: u32 = libc::IN_MODIFY
        | libc::IN_ATTRIB
        | libc::IN_CLOSE_WRITE
        | libc::IN_DELETE_SELF
        | libc::IN_MOVE_SELF
        | libc::IN_DONT_FOLLOW;

    /// Events after which nothing known is trusted.
    const FORGET_ALL: u32 = libc::IN_Q_OVERFLOW | libc::IN_IGNORED | libc::IN_UNMOUNT | libc::IN_DELETE_SELF | libc::IN_MOVE_SELF;

    /// File systems every change of which passes through this kernel (`statfs`'s `f_type`).
    const LOCAL: &[u64] = &[
        0xEF53,     // ext2, ext3, ext4
        0x5846_5342, // XFS
        0x9123_683E, // Btrfs
        0x0102_1994, // tmpfs
        0xF2F5_2010, // F2FS
    ];

    struct Watch {
        inotify: OwnedFd,
        /// `/proc/self/mounts`, which polls `POLLPRI` after a mount or unmount.
        mounts: OwnedFd,
        /// Watched directories (their path bytes).
        dirs: FxHashSet<Vec<u8>>,
        /// The directories of each watch descriptor (one directory may have two names
        /// through a bind mount).
        by_wd: FxHashMap<i32, Vec<Vec<u8>>>,
        /// What the file system answered about a path whose parent is watched.
        kept: FxHashMap<Vec<u8>, crate::paths::Probe>,
        /// Watched files (their path bytes).
        files: FxHashSet<Vec<u8>>,
    }

    type FxHashSet<T> = std::collections::HashSet<T, crate::fxhash::FxBuild>;

    thread_local! {
        static WATCH: RefCell<Option<Watch>> = const { RefCell::new(None) };
        /// Whether [`sync`] ran for the decision under way (the answers kept may be used).
        static SYNCED: Cell<bool> = const { Cell::new(false) };
        /// Counts the times everything was forgotten (see [`generation`]).
        static GENERATION: Cell<u64> = const { Cell::new(0) };
        /// Working directories resolved since setting up a watch failed (0: it did not).
        static FAILED: Cell<u32> = const { Cell::new(0) };
    }

    /// Working directories resolved after a failure to set up watching before it is tried
    /// again.
    const RETRY: u32 = 1024;

    /// Forgets everything: drops the watches and what was kept under them.
    fn reset(w: &mut Option<Watch>) {
        if w.is_some() {
            *w = None;
        }
        GENERATION.with(|g| g.set(g.get() + 1));
    }

    /// Within a decision while something is watched: a number that stays the same for as long
    /// as nothing watched has changed. What a caller learned about a watched file under one
    /// generation holds while the generation is the same.
    pub fn generation() -> Option<u64> {
        if !SYNCED.with(Cell::get) {
            return None;
        }
        WATCH.with(|w| w.borrow().as_ref().map(|_| GENERATION.with(Cell::get)))
    }

    fn key(path: &Path) -> &[u8] {
        path.as_os_str().as_bytes()
    }

    /// The parent of a path's bytes (`/a/b` → `/a`, `/a` → `/`), None for `/` itself.
    fn parent(path: &[u8]) -> Option<&[u8]> {
        if path == b"/" || path.first() != Some(&b'/') {
            return None;
        }
        let i = path.iter().rposition(|&b| b == b'/')?;
        Some(if i == 0 { b"/" } else { &path[..i] })
    }

    impl Watch {
        /// Whether the parent directory of the path `k` is watched.
        fn in_watched_dir(&self, k: &[u8]) -> bool {
            parent(k).is_some_and(|p| self.dirs.contains(p))
        }

        /// Adds a watch with `mask` on the path `k`; returns whether the kernel took it.
        fn add(&mut self, k: &[u8], c: &std::ffi::CStr, mask: u32) -> bool {
            // SAFETY: a valid inotify descriptor and a NUL-terminated path.
            let wd = unsafe { libc::inotify_add_watch(self.inotify.as_raw_fd(), c.as_ptr(), mask) };
            if wd < 0 {
                return false;
            }
            self.by_wd.entry(wd).or_default().push(k.to_vec());
            true
        }

        fn new() -> Option<Watch> {
            // SAFETY: plain system calls; each descriptor is owned at once.
            unsafe {
                let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
                if fd < 0 {
                    return None;
                }
                let inotify = OwnedFd::from_raw_fd(fd);
                let m = libc::open(c"/proc/self/mounts".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
                if m < 0 {
                    return None;
                }
                let mounts = OwnedFd::from_raw_fd(m);
                Some(Watch { inotify, mounts, dirs: Default::default(), by_wd: Default::default(), kept: Default::default(), files: Default::default() })
            }
        }

        /// Whether nothing was reported that could change a kept answer; reads and passes
        /// over the events about other names.
        fn unchanged(&mut self) -> bool {
            let mut fds = [
                libc::pollfd { fd: self.inotify.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.mounts.as_raw_fd(), events: libc::POLLPRI, revents: 0 },
            ];
            // SAFETY: two valid pollfd entries, no waiting.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, 0) };
            if n < 0 {
                return false;
            }
            if n == 0 {
                return true;
            }
            if fds[1].revents & (libc::POLLPRI | libc::POLLERR | libc::POLLNVAL) != 0 {
                return false;
            }
            if fds[0].revents & (libc::POLLERR | libc::POLLNVAL | libc::POLLHUP) != 0 {
                return false;
            }
            if fds[0].revents & libc::POLLIN == 0 {
                return true;
            }
            self.read_events()
        }

        fn read_events(&mut self) -> bool {
            #[repr(C, align(8))]
            struct Buf([u8; 16384]);
            let mut buf = Buf([0; 16384]);
            loop {
                // SAFETY: reads into a buffer of its size.
                let n = unsafe { libc::read(self.inotify.as_raw_fd(), buf.0.as_mut_ptr().cast(), buf.0.len()) };
                if n < 0 {
                    return std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock;
                }
                let n = n as usize;
                if n == 0 {
                    return false;
                }
                let header = std::mem::size_of::<libc::inotify_event>();
                let mut at = 0;
                while at + header <= n {
                    // SAFETY: the kernel wrote a whole event at `at`; read unaligned.
                    let ev: libc::inotify_event = unsafe { std::ptr::read_unaligned(buf.0.as_ptr().add(at).cast()) };
                    let len = ev.len as usize;
                    let Some(name) = buf.0.get(at + header..at + header + len) else {
                        return false;
                    };
                    at += header + len;
                    if ev.mask & FORGET_ALL != 0 {
                        return false;
                    }
                    let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
                    if name.is_empty() {
                        return false;
                    }
                    let Some(dirs) = self.by_wd.get(&ev.wd) else {
                        // A watch of an earlier set: nothing of it is kept.
                        continue;
                    };
                    for dir in dirs {
                        let mut path = dir.clone();
                        if path != b"/" {
                            path.push(b'/');
                        }
                        path.extend_from_slice(name);
                        if self.kept.contains_key(&path) || self.dirs.contains(&path) {
                            return false;
                        }
                    }
                }
            }
        }
    }

    /// Runs `f` on this thread's watch within a decision; `otherwise` when there is none.
    fn with_watch<R>(otherwise: R, f: impl FnOnce(&mut Watch) -> R) -> R {
        if !SYNCED.with(Cell::get) {
            return otherwise;
        }
        WATCH.with(|w| match w.borrow_mut().as_mut() {
            Some(watch) => f(watch),
            None => otherwise,
        })
    }

    /// At the start of a decision: forgets everything if anything kept may have changed.
    pub fn sync() {
        WATCH.with(|w| {
            let mut w = w.borrow_mut();
            if let Some(watch) = w.as_mut() {
                if watch.kept.len() >= MAX_KEPT || !watch.unchanged() {
                    reset(&mut w);
                }
            }
        });
        SYNCED.with(|s| s.set(true));
    }

    /// At the end of a decision: nothing kept is used until the next [`sync`].
    pub fn unsync() {
        SYNCED.with(|s| s.set(false));
    }

    /// The kept answer about `path`, within a decision.
    pub fn kept(path: &Path) -> Option<crate::paths::Probe> {
        with_watch(None, |w| w.kept.get(key(path)).cloned())
    }

    /// Keeps the answer about `path` when its parent is watched; returns whether it did.
    pub fn keep(path: &Path, probe: &crate::paths::Probe) -> bool {
        with_watch(false, |watch| {
            let k = key(path);
            // Full: nothing more is kept, and the next decision starts anew (forgetting now
            // could answer one path twice within a decision).
            if !watch.in_watched_dir(k) || watch.kept.len() >= MAX_KEPT {
                return false;
            }
            watch.kept.insert(k.to_vec(), probe.clone());
            true
        })
    }

    /// Watches the directory `dir` (absolute, without symlinks, `.` or `..`) when `/` or its
    /// parent is watched and its kept answer says it is a directory, and it is on a local
    /// file system. `/` is watched when nothing is.
    pub fn watch(dir: &Path) {
        if !SYNCED.with(Cell::get) {
            return;
        }
        WATCH.with(|w| {
            let mut w = w.borrow_mut();
            let k = key(dir);
            if w.is_none() {
                if k != b"/" {
                    return;
                }
                // After a failure (no inotify, too many instances) it is tried again only
                // every [`RETRY`] working directories resolved, not at each one.
                let failed = FAILED.with(Cell::get);
                if failed > 0 {
                    FAILED.with(|f| f.set(if failed >= RETRY { 0 } else { failed + 1 }));
                    return;
                }
                *w = Watch::new();
                if w.is_none() {
                    FAILED.with(|f| f.set(1));
                }
            }
            let Some(watch) = w.as_mut() else { return };
            if watch.dirs.contains(k) || watch.dirs.len() >= MAX_WATCHES {
                return;
            }
            if k != b"/" && !(watch.in_watched_dir(k) && watch.kept.get(k) == Some(&crate::paths::Probe::Present(true))) {
                return;
            }
            let Ok(c) = CString::new(k) else { return };
            // SAFETY: a NUL-terminated path and a zeroed struct for the kernel to fill.
            let local = unsafe {
                let mut st: libc::statfs = std::mem::zeroed();
                libc::statfs(c.as_ptr(), &mut st) == 0 && LOCAL.contains(&((st.f_type as u64) & 0xFFFF_FFFF))
            };
            if local && watch.add(k, &c, MASK) {
                watch.dirs.insert(k.to_vec());
            }
        });
    }

    /// Watches the file `path` (absolute, in a watched directory, its kept answer saying it
    /// is there and neither a directory nor a symlink) for changes to its contents and
    /// attributes; returns whether it is watched. What the caller learns about the file
    /// after this holds for the current [`generation`].
    pub fn watch_file(path: &Path) -> bool {
        with_watch(false, |watch| {
            let k = key(path);
            if watch.files.contains(k) {
                return true;
            }
            if watch.files.len() >= MAX_WATCHES
                || !watch.in_watched_dir(k)
                || watch.kept.get(k) != Some(&crate::paths::Probe::Present(false))
            {
                return false;
            }
            let Ok(c) = CString::new(k) else { return false };
            let added = watch.add(k, &c, FILE_MASK);
            if added {
                watch.files.insert(k.to_vec());
            }
            added
        })
    }

    /// How many times this thread forgot everything it kept.
    pub fn forgotten() -> u64 {
        GENERATION.with(Cell::get)
    }

    /// How many directories this thread watches (for tests and the benchmark).
    pub fn watched() -> usize {
        WATCH.with(|w| w.borrow().as_ref().map_or(0, |w| w.dirs.len()))
    }

    /// Forgets everything this thread keeps and drops its watches.
    pub fn forget() {
        WATCH.with(|w| reset(&mut w.borrow_mut()));
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::path::Path;

    pub fn sync() {}
    pub fn unsync() {}
    pub fn kept(_: &Path) -> Option<crate::paths::Probe> {
        None
    }
    pub fn keep(_: &Path, _: &crate::paths::Probe) -> bool {
        false
    }
    pub fn watch(_: &Path) {}
    pub fn watch_file(_: &Path) -> bool {
        false
    }
    pub fn generation() -> Option<u64> {
        None
    }
    pub fn watched() -> usize {
        0
    }
    pub fn forgotten() -> u64 {
        0
    }
    pub fn forget() {}
}

pub(crate) use imp::{keep, kept, sync, unsync, watch, watch_file};
pub use imp::generation;
pub use imp::{forget, forgotten, watched};
