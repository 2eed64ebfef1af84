//! The output of a command, captured without passing through Emacs: what the model is shown
//! of it is its beginning and its end, so only those are kept.
//!
//! - [`Buffer`] keeps the first and the last bytes of an output (each bounded), and counts
//!   its bytes and lines. Its memory is bounded whatever the output's size.
//! - [`Capture`] feeds a [`Buffer`]: from a pipe that a thread of its own drains until its
//!   end ([`Capture::with_pipe`]; the command's standard output and error are its write end,
//!   [`crate::run::spawn`]), or from the caller ([`Capture::new`], [`Capture::push`]).
//!   Nothing is written to disk, so no output can fill it.
//! - [`Buffer::result`] is the text the model gets: the whole output within the limit, else
//!   its first and its last part around a notice, with the values of the secrets a command
//!   did not get hidden before the cut ([`crate::output::redact`]).

use std::fs::File;
use std::io::Read;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use memchr::{memchr, memrchr};

use crate::output::redact::Redactor;
use crate::{Result, ScopeError};

/// Process output as text (SPEC §4, S09): UTF-8, with every byte that is not part of a valid
/// UTF-8 sequence shown as U+FFFD (one each, as Emacs shows the raw bytes it decodes) and NUL
/// as U+2400 (SYMBOL FOR NULL), so that any JSON parser takes it. Valid output without NUL is
/// returned as it is, without a copy. (It decodes what a capture keeps, a few hundred KB at
/// most.)
pub fn decode_output(bytes: Vec<u8>) -> String {
    let bytes = if memchr(0, &bytes).is_none() {
        match String::from_utf8(bytes) {
            Ok(text) => return text,
            Err(e) => e.into_bytes(),
        }
    } else {
        bytes
    };
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 4);
    for chunk in bytes.utf8_chunks() {
        let mut valid = chunk.valid();
        while let Some(nul) = memchr(0, valid.as_bytes()) {
            out.push_str(&valid[..nul]);
            out.push('\u{2400}');
            valid = &valid[nul + 1..];
        }
        out.push_str(valid);
        for _ in chunk.invalid() {
            out.push('\u{FFFD}');
        }
    }
    out
}

/// The length of the end of `bytes` that begins a UTF-8 sequence it does not finish (0 to 3).
fn unfinished_end(bytes: &[u8]) -> usize {
    for i in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - i];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let need = match b {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        return if need > i { i } else { 0 };
    }
    0
}

/// The length of the beginning of `bytes` made of continuation bytes (at most 3): the end of
/// a character that began before.
fn continuation_start(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|&&b| b & 0xC0 == 0x80)
        .count()
}

/// The newlines in `bytes`, counted 255 bytes at a time in one byte each (which compilers make
/// into vector instructions): a flood of short lines is counted at memory speed.
fn count_newlines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|c| {
            u64::from(
                c.iter()
                    .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\n'))),
            )
        })
        .sum()
}

/// The first and the last bytes of an output, and its counts.
#[derive(Debug, Clone, Default)]
pub struct Buffer {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    /// The last bytes after the head, a ring of `tail_cap` bytes once full.
    tail: Vec<u8>,
    /// Where the oldest byte of the full ring is (and the next one goes).
    tail_start: usize,
    total_bytes: u64,
    newlines: u64,
    last_byte: Option<u8>,
}

impl Buffer {
    /// A buffer keeping the first `head_cap` and the last `tail_cap` bytes.
    pub fn new(head_cap: usize, tail_cap: usize) -> Buffer {
        Buffer {
            head_cap,
            tail_cap,
            ..Buffer::default()
        }
    }

    /// [`Buffer::new`] with its memory allocated now: reading into it allocates nothing.
    pub fn allocated(head_cap: usize, tail_cap: usize) -> Buffer {
        Buffer {
            head: Vec::with_capacity(head_cap),
            tail: Vec::with_capacity(tail_cap),
            ..Buffer::new(head_cap, tail_cap)
        }
    }

    /// Bytes of the output read.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Bytes kept (the first and the last).
    pub fn kept_bytes(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Lines of the output read: one per newline, plus a last line that has none.
    pub fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'))
    }

    /// Whether all the output read is kept.
    pub fn whole(&self) -> bool {
        self.total_bytes == self.kept_bytes() as u64
    }

    /// Reads the next piece of the output.
    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.total_bytes += bytes.len() as u64;
        self.newlines += count_newlines(bytes);
        self.last_byte = bytes.last().copied();
        let room = self.head_cap - self.head.len();
        let (to_head, rest) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.push_tail(rest);
    }

    fn push_tail(&mut self, bytes: &[u8]) {
        let cap = self.tail_cap;
        if cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= cap {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - cap..]);
            self.tail_start = 0;
            return;
        }
        let room = cap - self.tail.len();
        let (fill, mut rest) = bytes.split_at(room.min(bytes.len()));
        self.tail.extend_from_slice(fill);
        while !rest.is_empty() {
            let n = (cap - self.tail_start).min(rest.len());
            self.tail[self.tail_start..self.tail_start + n].copy_from_slice(&rest[..n]);
            self.tail_start = (self.tail_start + n) % cap;
            rest = &rest[n..];
        }
    }

    /// The kept tail, oldest byte first.
    fn tail_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.tail.len());
        out.extend_from_slice(&self.tail[self.tail_start..]);
        out.extend_from_slice(&self.tail[..self.tail_start]);
        out
    }

    /// What the model is shown of the output: all of it within `max_chars` characters, else
    /// about `max_chars` of them, the first and the last, around a notice
    /// ([`head_and_tail`]). The values `redactor` hides are replaced before the cut, and a
    /// cut through the output never shows part of one; nor does its end when it was not
    /// `ended` (it may go on past what was read).
    pub fn result(&self, max_chars: usize, redactor: Option<&Redactor>, ended: bool) -> Captured {
        let total_lines = self.total_lines();
        let base = Captured {
            output: String::new(),
            truncated: false,
            total_bytes: self.total_bytes,
            kept_bytes: self.kept_bytes() as u64,
            total_lines,
        };
        if self.whole() {
            let mut bytes = self.head.clone();
            bytes.extend_from_slice(&self.tail_bytes());
            let mut text = decode_output(bytes);
            if let Some(r) = redactor {
                if !ended {
                    text.truncate(r.partial_tail(&text));
                }
                text = r.redact_owned(text);
            }
            if text.chars().nth(max_chars).is_none() {
                return Captured {
                    output: text,
                    ..base
                };
            }
            let output = head_and_tail(&text, &text, max_chars, self.total_bytes, total_lines);
            return Captured {
                output,
                truncated: true,
                ..base
            };
        }
        // The head ends, and the tail begins, inside the output: a character cut there is
        // left out, and so is a part of a secret.
        let head = &self.head[..self.head.len() - unfinished_end(&self.head)];
        let tail = self.tail_bytes();
        let tail = &tail[continuation_start(&tail)..];
        let tail = if ended {
            tail
        } else {
            &tail[..tail.len() - unfinished_end(tail)]
        };
        let mut head = decode_output(head.to_vec());
        let mut tail = decode_output(tail.to_vec());
        if let Some(r) = redactor {
            head.truncate(r.partial_tail(&head));
            head = r.redact_owned(head);
            let start = r.partial_head(&tail);
            if start > 0 {
                tail.replace_range(..start, "");
            }
            if !ended {
                tail.truncate(r.partial_tail(&tail));
            }
            tail = r.redact_owned(tail);
        }
        let output = head_and_tail(&head, &tail, max_chars, self.total_bytes, total_lines);
        Captured {
            output,
            truncated: true,
            ..base
        }
    }
}

/// What the model is shown of a captured output, and its sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The text, with the notice when it was cut.
    pub output: String,
    /// Whether anything was left out.
    pub truncated: bool,
    /// Bytes the command printed.
    pub total_bytes: u64,
    /// Bytes kept in memory (the first and the last).
    pub kept_bytes: u64,
    /// Lines the command printed; a last line without a newline counts.
    pub total_lines: u64,
}

/// Lines in `text`: one per newline, plus a last line that has none.
fn lines(text: &str) -> u64 {
    crate::output::truncate::count_lines(text) as u64
}

/// The first `n` characters of `text`, cut back to its last newline when that keeps at least
/// 80 % of them: (end, characters).
fn head_cut(text: &str, n: usize) -> (usize, usize) {
    let Some((end, _)) = text.char_indices().nth(n) else {
        return (text.len(), text.chars().count());
    };
    if let Some(newline) = memrchr(b'\n', &text.as_bytes()[..end]) {
        let kept = n - text[newline..end].chars().count().min(n);
        if kept * 5 >= n * 4 {
            return (newline, kept);
        }
    }
    (end, n)
}

/// The last `n` characters of `text`, from after its first newline among them when that keeps
/// at least 80 % of them and they do not begin a line: (start, characters).
fn tail_cut(text: &str, n: usize) -> (usize, usize) {
    if n == 0 {
        return (text.len(), 0);
    }
    let Some((start, _)) = text.char_indices().rev().nth(n - 1) else {
        return (0, text.chars().count());
    };
    if start == 0 || text.as_bytes()[start - 1] == b'\n' {
        return (start, n);
    }
    if let Some(newline) = memchr(b'\n', &text.as_bytes()[start..]) {
        let after = start + newline + 1;
        let kept = n - text[start..after].chars().count().min(n);
        if kept * 5 >= n * 4 {
            return (after, kept);
        }
    }
    (start, n)
}

/// The beginning of `head` and the end of `tail` (the same text, or the first and the last
/// part of one), about `max_chars` characters together, half each, around the notice:
///
/// ```text
/// [Output truncated: showing 20000 characters of 1234567 bytes (500 of 90000 lines), the first 10000 above and the last 10000 below. Narrow the output with filters such as 'head', 'grep' or 'tail'.]
/// ```
///
/// `total_bytes` and `total_lines` are the whole output's, as the command printed it.
pub fn head_and_tail(
    head: &str,
    tail: &str,
    max_chars: usize,
    total_bytes: u64,
    total_lines: u64,
) -> String {
    let tail_n = max_chars / 2;
    let (head_end, head_chars) = head_cut(head, max_chars - tail_n);
    let (mut tail_start, mut tail_chars) = tail_cut(tail, tail_n);
    if std::ptr::eq(head, tail) && tail_start < head_end {
        // One text shorter than the limit's two halves: nothing is shown twice.
        tail_chars -= tail[tail_start..head_end].chars().count().min(tail_chars);
        tail_start = head_end;
    }
    let (shown_head, shown_tail) = (&head[..head_end], &tail[tail_start..]);
    let shown_lines = lines(shown_head) + lines(shown_tail);
    let mut out = String::with_capacity(shown_head.len() + shown_tail.len() + 300);
    out.push_str(shown_head);
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "[Output truncated: showing {} characters of {total_bytes} bytes ({shown_lines} of {total_lines} lines), \
         the first {head_chars} above and the last {tail_chars} below. Narrow the output with filters \
         such as 'head', 'grep' or 'tail'.]",
        head_chars + tail_chars
    ));
    if !shown_tail.is_empty() {
        out.push_str("\n\n");
        out.push_str(shown_tail);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Capture

/// How long the reader waits for output before it looks whether it was told to stop.
const POLL: Duration = Duration::from_millis(50);

/// How long the reader waits after a short read.
const SETTLE: Duration = Duration::from_micros(300);

/// The bytes one read takes. (1 MB reads, the pipe's whole capacity, copy less of a flood
/// into the tail but were no faster on a 300 MB run: the buffer no longer stays in the
/// processor's cache.)
const READ_SIZE: usize = 128 * 1024;

/// The capacity asked for the pipe (Linux; the default is 64 KB): fewer switches between the
/// command and the reader in a flood.
const PIPE_SIZE: libc::c_int = 1 << 20;

#[derive(Default)]
struct State {
    buffer: Buffer,
    /// The output ended (every writer closed it), or it could not be read.
    ended: bool,
    /// Why the output could not be read.
    error: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    ended: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A reader that panicked left a state still worth reading.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// What [`Capture::finish`] took.
#[derive(Debug)]
pub struct Finished {
    /// The output read.
    pub buffer: Buffer,
    /// Whether the output ended (else it may go on past what was read).
    pub ended: bool,
    /// Why the output could not be read to its end, if so.
    pub error: Option<String>,
}

/// A command's output being captured into a [`Buffer`].
pub struct Capture {
    shared: Arc<Shared>,
    /// A second descriptor of the pipe's read end, with which [`Capture::finish`] reads what
    /// is left.
    finisher: Option<File>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn os_error(what: &str, e: std::io::Error) -> ScopeError {
    ScopeError::Io {
        path: "(the output pipe)".into(),
        message: format!("{what}: {e}"),
    }
}

/// A pipe, both ends close-on-exec (as `std::io::pipe` makes them), neither among the
/// standard descriptors (a child's 0, 1 and 2 are made from them): (read end, write end).
fn pipe() -> Result<(File, File)> {
    let (reader, writer) = std::io::pipe().map_err(|e| os_error("cannot make a pipe", e))?;
    let ends = (
        File::from(OwnedFd::from(reader)),
        File::from(OwnedFd::from(writer)),
    );
    Ok((above_standard(ends.0)?, above_standard(ends.1)?))
}

/// `file`, or a copy of it numbered 3 or above when it is 0, 1 or 2 (Emacs may run with a
/// standard descriptor closed).
fn above_standard(file: File) -> Result<File> {
    if file.as_raw_fd() > 2 {
        return Ok(file);
    }
    // SAFETY: fcntl on a descriptor `file` owns; the copy is owned by the File made of it.
    let fd = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        return Err(os_error(
            "cannot move a descriptor",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: fcntl made `fd`, owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Blocks every signal in the calling thread: a thread of the module takes none of the
/// signals sent to Emacs, and a write to a pipe nobody reads fails instead of raising SIGPIPE.
pub(crate) fn block_signals() {
    // SAFETY: a full set, initialised by sigfillset, applied to this thread only.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(set.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut());
    }
}

impl Capture {
    /// A capture fed by [`Capture::push`], keeping the first `head_cap` and the last
    /// `tail_cap` bytes.
    pub fn new(head_cap: usize, tail_cap: usize) -> Capture {
        let state = State {
            buffer: Buffer::new(head_cap, tail_cap),
            ..State::default()
        };
        Capture {
            shared: Arc::new(Shared {
                state: Mutex::new(state),
                ended: Condvar::new(),
                stop: AtomicBool::new(false),
            }),
            finisher: None,
            thread: None,
        }
    }

    /// A capture of what is written to a new pipe, drained by a thread of its own until every
    /// writer has closed it, or until [`Capture::finish`] stops it. Returns the capture and
    /// the pipe's write end (close-on-exec), for the command's standard output and error:
    /// the output ends when every copy of it is closed.
    pub fn with_pipe(head_cap: usize, tail_cap: usize) -> Result<(Capture, File)> {
        let (reader, writer) = pipe()?;
        // SAFETY: fcntl on a descriptor this function owns.
        let flags = unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_GETFL) };
        // SAFETY: as above; the reader waits in poll, never in read.
        if flags < 0
            || unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) }
                < 0
        {
            return Err(os_error(
                "cannot set the pipe's flags",
                std::io::Error::last_os_error(),
            ));
        }
        #[cfg(target_os = "linux")]
        // SAFETY: fcntl on a descriptor this function owns; a failure leaves the default size.
        unsafe {
            libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE);
        }
        let mut capture = Capture::new(head_cap, tail_cap);
        // The reader allocates nothing: its memory is this thread's, reused from one command
        // to the next, instead of a new thread's heap each time.
        capture.shared.lock().buffer = Buffer::allocated(head_cap, tail_cap);
        capture.finisher = Some(
            reader
                .try_clone()
                .map_err(|e| os_error("cannot copy a descriptor", e))?,
        );
        let shared = capture.shared.clone();
        let buf = vec![0u8; READ_SIZE];
        let handle = std::thread::Builder::new()
            .name("gptel-scope-capture".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                block_signals();
                drain(reader, buf, &shared)
            })
            .map_err(|e| os_error("cannot start the reader", e))?;
        capture.thread = Some(handle);
        Ok((capture, writer))
    }

    /// Reads a piece of the output (a capture without a pipe).
    pub fn push(&self, bytes: &[u8]) {
        self.shared.lock().buffer.push(bytes);
    }

    /// The output captured, once the command has ended: reads what is left in the pipe, and
    /// when its writers are not all gone (what the command left running may still hold it
    /// open) waits up to `wait` for its end; then takes what was read and stops the reader.
    pub fn finish(&mut self, wait: Duration) -> Finished {
        let reader = self.finisher.take();
        let mut state = self.shared.lock();
        // The end is read here rather than waited for: the reader thread, woken by it, may
        // not get a processor for milliseconds on a busy machine. A writer still printing
        // is left to the thread after at most `FINISH_READS` reads.
        if let Some(file) = reader.as_ref().filter(|_| self.thread.is_some()) {
            let mut buf = vec![0u8; FINISH_READ];
            for _ in 0..FINISH_READS {
                if state.ended {
                    break;
                }
                match read_once(file, &mut buf, &mut state) {
                    Got::Data(_) | Got::Interrupted => {}
                    Got::Empty => break,
                    Got::End(error) => {
                        state.ended = true;
                        state.error = error;
                    }
                }
            }
        }
        if self.thread.is_some() {
            let deadline = Instant::now() + wait;
            while !state.ended {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                state = match self.shared.ended.wait_timeout(state, deadline - now) {
                    Ok((s, _)) => s,
                    Err(e) => e.into_inner().0,
                };
            }
        }
        let ended = state.ended || self.thread.is_none();
        let buffer = std::mem::take(&mut state.buffer);
        let error = state.error.take();
        drop(state);
        self.shared.stop.store(true, Ordering::SeqCst);
        // The reader is not waited for: it ends by itself at its next look at the state (it
        // ended) or at `stop`, within `POLL`, and closes the read end: a writer left running
        // then finds nobody reading.
        self.thread = None;
        Finished {
            buffer,
            ended,
            error,
        }
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
    }
}

/// Whether `fd` has something to read (or its end) within [`POLL`].
fn readable(fd: libc::c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut p, 1, POLL.as_millis() as libc::c_int) };
    n > 0
}

/// The bytes each read of [`Capture::finish`] takes.
const FINISH_READ: usize = 64 * 1024;

/// The reads [`Capture::finish`] makes at most (4 MB, four times the pipe's capacity): a
/// writer that goes on printing is left to the reader thread and the wait.
const FINISH_READS: usize = 64;

/// What one read of the pipe gave.
enum Got {
    /// Bytes, pushed into the buffer.
    Data(usize),
    /// Nothing now; writers still hold the pipe open.
    Empty,
    /// Interrupted by a signal before anything was read.
    Interrupted,
    /// The end of the output (every writer closed it), or why it cannot be read.
    End(Option<String>),
}

/// One read of the output from `file` into `buf`, pushed into the buffer of `state`, whose
/// lock the caller holds: the reader thread and [`Capture::finish`] both read, and the lock
/// keeps the pieces in order.
fn read_once(mut file: &File, buf: &mut [u8], state: &mut State) -> Got {
    match file.read(buf) {
        Ok(0) => Got::End(None),
        Ok(n) => {
            state.buffer.push(&buf[..n]);
            Got::Data(n)
        }
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Got::Empty,
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Got::Interrupted,
        Err(e) => Got::End(Some(format!("cannot read the output: {e}"))),
    }
}

/// The reader: everything `file` gives, read into `buf`, into the shared buffer, until its
/// end, an error, `stop`, or [`Capture::finish`] read the end.
fn drain(file: File, mut buf: Vec<u8>, shared: &Shared) {
    let fd = file.as_raw_fd();
    let error = loop {
        if shared.stop.load(Ordering::SeqCst) {
            break None;
        }
        let mut state = shared.lock();
        if state.ended {
            return;
        }
        match read_once(&file, &mut buf, &mut state) {
            Got::Data(n) => {
                drop(state);
                if n < buf.len() / 4 {
                    // The pipe is empty: let the command write more before the next read,
                    // rather than wake up for each of its writes.
                    std::thread::sleep(SETTLE);
                }
            }
            Got::Empty => {
                drop(state);
                readable(fd);
            }
            Got::Interrupted => {}
            Got::End(error) => break error,
        }
    };
    let mut state = shared.lock();
    state.ended = true;
    state.error = error;
    drop(state);
    shared.ended.notify_all();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn fed(head: usize, tail: usize, pieces: &[&[u8]]) -> Buffer {
        let mut b = Buffer::new(head, tail);
        for p in pieces {
            b.push(p);
        }
        b
    }

    #[test]
    fn buffer_keeps_head_and_tail_and_counts_all() {
        // pieces, head cap, tail cap, head kept, tail kept, bytes, lines
        type Case<'a> = (&'a [&'a [u8]], usize, usize, &'a [u8], &'a [u8], u64, u64);
        let cases: &[Case] = &[
            (&[], 4, 4, b"", b"", 0, 0),
            (&[b"ab"], 4, 4, b"ab", b"", 2, 1),
            (&[b"abcdef"], 4, 4, b"abcd", b"ef", 6, 1),
            (&[b"abcdefghij\n"], 4, 4, b"abcd", b"hij\n", 11, 1),
            (
                &[b"ab", b"cd", b"ef", b"gh", b"ij", b"k\n"],
                4,
                4,
                b"abcd",
                b"ijk\n",
                12,
                1,
            ),
            (&[b"a\nb\n", b"c\nd\ne"], 2, 3, b"a\n", b"d\ne", 9, 5),
            (&[b"abc", b"defghijklmnop"], 2, 3, b"ab", b"nop", 16, 1),
            (&[b"abcdefg"], 0, 0, b"", b"", 7, 1),
        ];
        for (pieces, h, t, head, tail, bytes, lines) in cases {
            let b = fed(*h, *t, pieces);
            assert_eq!(
                (
                    b.head.as_slice(),
                    b.tail_bytes().as_slice(),
                    b.total_bytes(),
                    b.total_lines()
                ),
                (*head, *tail, *bytes, *lines),
                "{pieces:?}"
            );
            assert_eq!(
                b.whole(),
                *bytes == (head.len() + tail.len()) as u64,
                "{pieces:?}"
            );
        }
    }

    const NOTICE_END: &str = "Narrow the output with filters such as 'head', 'grep' or 'tail'.]";

    #[test]
    fn result_whole_within_limit_or_head_and_tail() {
        let lines: String = (0..10).map(|i| format!("line {i:03}\n")).collect(); // 9 chars each
        let cases: Vec<(Vec<u8>, usize, String)> = vec![
            (b"short\n".to_vec(), 100, "short\n".into()),
            (b"short\n".to_vec(), 6, "short\n".into()),
            (b"a\xffb\x00".to_vec(), 4, "a\u{FFFD}b\u{2400}".into()),
            // 25 + 25 of 90: a newline would keep less than 80 % of either half.
            (lines.clone().into_bytes(), 50, format!(
                "line 000\nline 001\nline 00\n\n[Output truncated: showing 50 characters of 90 bytes (6 of 10 lines), \
                 the first 25 above and the last 25 below. {NOTICE_END}\n\nne 007\nline 008\nline 009\n")),
            // 30 + 30 of 90: the head cut back to a newline (26 kept), the tail starting after one (27).
            (lines.clone().into_bytes(), 60, format!(
                "line 000\nline 001\nline 002\n\n[Output truncated: showing 53 characters of 90 bytes (6 of 10 lines), \
                 the first 26 above and the last 27 below. {NOTICE_END}\n\nline 007\nline 008\nline 009\n")),
            // No newline near the cuts: exactly the limit.
            (b"abcdefghijklmnopqrstuvwxyz".to_vec(), 10, format!(
                "abcde\n\n[Output truncated: showing 10 characters of 26 bytes (2 of 1 lines), \
                 the first 5 above and the last 5 below. {NOTICE_END}\n\nvwxyz")),
            (b"abcdef".to_vec(), 0, format!(
                "[Output truncated: showing 0 characters of 6 bytes (0 of 1 lines), the first 0 above and the last 0 below. {NOTICE_END}")),
        ];
        for (bytes, max, want) in cases {
            let b = fed(1024, 1024, &[&bytes]);
            let r = b.result(max, None, true);
            assert_eq!(r.output, want, "{bytes:?} / {max}");
            assert_eq!(r.truncated, want.contains("[Output truncated"), "{bytes:?}");
        }
    }

    #[test]
    fn result_of_a_flood_shows_its_first_and_last_part() {
        let mut b = Buffer::new(64, 64);
        b.push(b"first line\n");
        for i in 0..100_000u32 {
            b.push(format!("{i:05}\n").as_bytes());
        }
        b.push(b"last line\n");
        let r = b.result(30, None, true);
        assert_eq!(r.total_bytes, 11 + 600_000 + 10);
        assert_eq!(r.total_lines, 100_002);
        assert_eq!(r.kept_bytes, 128);
        assert!(r.truncated);
        assert_eq!(
            r.output,
            format!(
                "first line\n0000\n\n[Output truncated: showing 30 characters of 600021 bytes (4 of 100002 lines), \
                 the first 15 above and the last 15 below. {NOTICE_END}\n\n9999\nlast line\n"
            )
        );
    }

    #[test]
    fn result_cuts_no_character_in_two() {
        // 'é' is 2 bytes: a head of 5 bytes and a tail of 5 end and begin inside one.
        let text = "é".repeat(100);
        let b = fed(5, 5, &[text.as_bytes()]);
        let r = b.result(100, None, true);
        assert_eq!(
            r.output,
            format!("éé\n\n[Output truncated: showing 4 characters of 200 bytes (2 of 1 lines), the first 2 above and the last 2 below. {NOTICE_END}\n\néé")
        );
    }

    fn redactor() -> Redactor {
        Redactor::new(&[("KEY".to_string(), "sk-0123456789".to_string())]).unwrap()
    }

    #[test]
    fn result_redacted_before_the_cut() {
        let r = redactor();
        // Whole: the cut falls in the replacement, never in the secret.
        let text = format!(
            "{}sk-0123456789\n{}sk-0123456789\n",
            "x".repeat(40),
            "y".repeat(40)
        );
        let out = fed(1024, 1024, &[text.as_bytes()])
            .result(50, Some(&r), true)
            .output;
        assert!(!out.contains("sk-0"), "{out}");
        assert!(
            out.starts_with(&format!("{}[redac", "x".repeat(25 - 6)))
                || out.starts_with("xxxxxxxxxxxxxxxxxxxxxxxxx"),
            "{out}"
        );
        assert!(out.ends_with("[redacted: KEY]\n"), "{out}");
        // Not whole: the head ends, and the tail begins, inside a secret.
        let mut b = Buffer::new(24, 20);
        b.push(format!("{}sk-0123456789 and on", "a".repeat(16)).as_bytes());
        b.push(&b"-".repeat(1000));
        b.push(b"sk-0123456789 end sk-0123456789\n");
        let out = b.result(1000, Some(&r), true).output;
        assert!(
            !out.contains("sk-0") && !out.contains("3456789") && !out.contains("456789"),
            "{out}"
        );
        assert!(
            out.starts_with(&format!("{}\n\n[Output truncated", "a".repeat(16))),
            "{out}"
        );
        assert!(out.ends_with(" end [redacted: KEY]\n"), "{out}");
    }

    #[test]
    fn result_of_output_that_did_not_end_shows_no_beginning_of_a_secret() {
        let r = redactor();
        let b = fed(1024, 1024, &[b"key: sk-01234"]);
        assert_eq!(b.result(100, Some(&r), false).output, "key: ");
        assert_eq!(b.result(100, Some(&r), true).output, "key: sk-01234");
        let mut b = Buffer::new(8, 16);
        b.push(&b"-".repeat(100));
        b.push(b"key: sk-01234");
        assert!(b
            .result(1000, Some(&r), false)
            .output
            .ends_with("\n\n---key: "));
    }

    #[test]
    fn pipe_drained_by_its_thread() {
        let (mut c, mut w) = Capture::with_pipe(64, 64).unwrap();
        assert!(w.as_raw_fd() > 2);
        for _ in 0..10_000 {
            w.write_all(b"0123456789\n").unwrap();
        }
        drop(w);
        let f = c.finish(Duration::from_secs(5));
        assert_eq!(
            (
                f.buffer.total_bytes(),
                f.buffer.total_lines(),
                f.ended,
                f.error
            ),
            (110_000, 10_000, true, None)
        );
    }

    #[test]
    fn pipe_flood_of_many_reads_keeps_its_exact_first_and_last_bytes() {
        // 5 MB in writes of odd sizes: many reads, each larger than the tail kept.
        let (mut c, mut w) = Capture::with_pipe(16, 24).unwrap();
        let writer = std::thread::spawn(move || {
            w.write_all(b"first line\n").unwrap();
            let piece: Vec<u8> = (0..99_991u32)
                .map(|i| {
                    if i % 7 == 6 {
                        b'\n'
                    } else {
                        b'a' + (i % 26) as u8
                    }
                })
                .collect();
            for _ in 0..50 {
                w.write_all(&piece).unwrap();
            }
            w.write_all(b"\nsecond to last\nlast line\n").unwrap();
        });
        writer.join().unwrap();
        let f = c.finish(Duration::from_secs(5));
        let newlines_per_piece = (0..99_991u32).filter(|i| i % 7 == 6).count() as u64;
        assert_eq!(
            (
                f.buffer.head.as_slice(),
                f.buffer.tail_bytes().as_slice(),
                f.buffer.total_bytes(),
                f.buffer.total_lines(),
                f.ended
            ),
            (
                &b"first line\nabcde"[..],
                &b"\nsecond to last\nlast line\n"[2..],
                11 + 50 * 99_991 + 26,
                1 + 50 * newlines_per_piece + 3,
                true
            )
        );
    }

    #[test]
    fn finish_reads_the_end_itself_without_waiting_for_the_reader() {
        // The writer is gone: with no time to wait, finish still has every byte and the end,
        // whatever the reader thread had read of it (the pipe holds up to 1 MB).
        for size in [0usize, 10, 70_000, 3_000_000] {
            let (mut c, mut w) = Capture::with_pipe(64, 64).unwrap();
            let writer = std::thread::spawn(move || {
                w.write_all(&b"x\n".repeat(size / 2)).unwrap();
            });
            writer.join().unwrap();
            let f = c.finish(Duration::ZERO);
            assert_eq!(
                (
                    f.buffer.total_bytes(),
                    f.buffer.total_lines(),
                    f.ended,
                    f.error
                ),
                (size as u64, (size / 2) as u64, true, None),
                "{size}"
            );
        }
    }

    #[test]
    fn pipe_never_written_ends_at_finish() {
        let (mut c, w) = Capture::with_pipe(64, 64).unwrap();
        drop(w);
        let start = Instant::now();
        let f = c.finish(Duration::from_secs(5));
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!((f.buffer.total_bytes(), f.ended, f.error), (0, true, None));
    }

    #[test]
    fn pipe_held_open_by_a_writer_does_not_hold_the_result() {
        let (mut c, mut w) = Capture::with_pipe(64, 64).unwrap();
        w.write_all(b"done\n").unwrap();
        let start = Instant::now();
        let f = c.finish(Duration::from_millis(100));
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_millis(100) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
        assert!(!f.ended);
        assert_eq!(f.buffer.result(100, None, f.ended).output, "done\n");
        // The reader stopped and closed its end: writing soon finds no reader (SIGPIPE is
        // ignored in test binaries, so the write fails).
        std::thread::sleep(POLL * 4);
        assert_eq!(
            w.write_all(b"more\n").map_err(|e| e.kind()),
            Err(std::io::ErrorKind::BrokenPipe)
        );
    }
}
