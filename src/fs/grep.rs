//! `grep_files(pattern, path, include, limit)` (F04): a recursive regex search in the
//! module, `file:line:match` lines, the first `limit` in path order. ripgrep's own crates do
//! the work: `ignore`'s parallel walker (`.gitignore` honoured, hidden files and symlinks
//! skipped), `grep-regex` and `grep-searcher`. Everything the scope denies or does not cover
//! is left out, and so are files over [`MAX_FILE_BYTES`]; a NUL byte ends a file's search
//! as in ripgrep (none of a file is shown when one is in the first 64 KiB read).
//!
//! Each walking thread keeps the `limit` smallest (file, line) pairs it has found, so the
//! memory is bounded and the answer does not depend on which thread searched what.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::Serialize;

use super::{io_error, FsError, Guard};
use crate::policy::denied::walked;
use crate::policy::paths::{Access, Resolved};

pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 2000;
/// Files larger than this are skipped (and counted).
pub const MAX_FILE_BYTES: u64 = 16 << 20;
/// Most files searched by one call.
pub const MAX_FILES: usize = 100_000;
/// A matching line longer than this is cut with the `read_file` marker.
pub const MAX_LINE_CHARS: usize = super::read::MAX_LINE_CHARS;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GrepResult {
    pub pattern: String,
    pub path: String,
    /// `file:line:match`, one a line; files relative to `path`.
    pub content: String,
    pub matches: usize,
    /// The search stopped at `limit`; more matches may exist.
    pub truncated: bool,
    pub files_searched: usize,
    /// Files left out: denied or outside the scope, binary, or too large.
    pub files_skipped: usize,
    pub bytes: usize,
}

fn include_set(include: &[String]) -> Result<Option<GlobSet>, FsError> {
    if include.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in include {
        let g = g.trim();
        if g.is_empty() {
            continue;
        }
        // A glob without `/` matches the file name anywhere (`*.rs`), as ripgrep's -g does.
        let pat = if g.contains('/') {
            g.trim_start_matches("./").to_string()
        } else {
            format!("**/{g}")
        };
        let glob = GlobBuilder::new(&pat)
            .literal_separator(true)
            .build()
            .map_err(|e| FsError::InvalidArgument(format!("include glob `{g}`: {e}")))?;
        b.add(glob);
    }
    b.build()
        .map(Some)
        .map_err(|e| FsError::InvalidArgument(format!("include globs: {e}")))
}

/// Searches the files under `path` (or the file `path`) for `pattern`, with a walking
/// thread per core.
pub fn grep_files(
    guard: &Guard,
    pattern: &str,
    path: &str,
    include: &[String],
    limit: Option<usize>,
) -> Result<GrepResult, FsError> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    grep_files_with(guard, pattern, path, include, limit, threads)
}

/// [`grep_files`] with `threads` walking threads (the benchmark compares 1 and all).
pub fn grep_files_with(
    guard: &Guard,
    pattern: &str,
    path: &str,
    include: &[String],
    limit: Option<usize>,
    threads: usize,
) -> Result<GrepResult, FsError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(FsError::InvalidArgument(format!(
            "limit must be between 1 and {MAX_LIMIT} (got {limit})"
        )));
    }
    if pattern.is_empty() {
        return Err(FsError::InvalidArgument("the pattern is empty".into()));
    }
    let matcher = RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .multi_line(true)
        .crlf(true)
        .size_limit(10 << 20)
        .dfa_size_limit(10 << 20)
        .build(pattern)
        .map_err(|e| {
            FsError::InvalidArgument(format!(
                "the pattern is not a valid regular expression (Rust regex syntax): {e}"
            ))
        })?;
    let includes = include_set(include)?;
    let checked = guard.check(path, Access::Read)?;
    let root = checked.target.clone();
    let root_as_written = Resolved {
        literal: checked.literal.clone(),
        target: root.clone(),
    };
    let meta = std::fs::metadata(&root).map_err(|e| io_error(&root, &e))?;
    let shared = Shared {
        limit,
        ..Shared::default()
    };
    if meta.is_file() {
        let name = Path::new(path)
            .file_name()
            .map_or_else(|| PathBuf::from(path), PathBuf::from);
        let mut worker = Worker::new(&shared, &matcher);
        worker.file(&root, Arc::from(name.as_path()));
    } else {
        let walk = ignore::WalkBuilder::new(&root)
            .follow_links(false)
            .hidden(true)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .require_git(false)
            .parents(false)
            .threads(threads.max(1))
            .build_parallel();
        walk.run(|| {
            let mut worker = Worker::new(&shared, &matcher);
            let (guard, root, includes, root_as_written) =
                (guard, &root, &includes, &root_as_written);
            Box::new(move |entry| {
                use ignore::WalkState;
                if worker.shared.stopped.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let p = entry.path();
                // Judged as every walk judges its entries (a symlink by its own path).
                if !guard.visible(&walked(root_as_written, p)) {
                    worker.shared.skipped.fetch_add(1, Ordering::Relaxed);
                    return WalkState::Continue;
                }
                let rel = p.strip_prefix(root).unwrap_or(p);
                if includes.as_ref().is_some_and(|set| !set.is_match(rel)) {
                    return WalkState::Continue;
                }
                if worker.shared.searched.load(Ordering::Relaxed) >= MAX_FILES {
                    worker.shared.stopped.store(true, Ordering::Relaxed);
                    return WalkState::Quit;
                }
                worker.file(p, Arc::from(rel));
                WalkState::Continue
            })
        });
    }
    let Shared {
        hits,
        overflow,
        stopped,
        searched,
        skipped,
        ..
    } = shared;
    let mut hits = hits
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    hits.sort();
    let overflow = overflow.into_inner() || hits.len() > limit;
    hits.truncate(limit);
    let lines: Vec<String> = hits.iter().map(Hit::shown).collect();
    let content = lines.join("\n");
    Ok(GrepResult {
        pattern: pattern.into(),
        path: path.into(),
        matches: lines.len(),
        truncated: overflow || stopped.into_inner(),
        files_searched: searched.into_inner(),
        files_skipped: skipped.into_inner(),
        bytes: content.len(),
        content,
    })
}

/// What the walking threads share: their counts, and where each leaves its hits.
#[derive(Default)]
struct Shared {
    limit: usize,
    hits: Mutex<Vec<Hit>>,
    /// A thread dropped a match past its `limit` smallest.
    overflow: AtomicBool,
    /// [`MAX_FILES`] were searched.
    stopped: AtomicBool,
    searched: AtomicUsize,
    skipped: AtomicUsize,
}

/// A matching line: ordered by file (component by component, the order of a walk sorted by
/// name) and line number.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Hit {
    file: Arc<Path>,
    line: u64,
    text: Vec<u8>,
}

impl Hit {
    /// `file:line:text`, the text cut at [`MAX_LINE_CHARS`].
    fn shown(&self) -> String {
        let text = String::from_utf8_lossy(&self.text);
        let text = match text.char_indices().nth(MAX_LINE_CHARS) {
            Some((at, _)) => format!("{}{}", &text[..at], crate::output::truncate::LINE_MARKER),
            None => text.into_owned(),
        };
        format!("{}:{}:{text}", self.file.display(), self.line)
    }
}

/// One walking thread: its searcher, and the `limit` smallest hits it has found (a max-heap,
/// so the largest is the one to drop). They go to [`Shared::hits`] when it ends.
struct Worker<'s> {
    shared: &'s Shared,
    matcher: RegexMatcher,
    searcher: Searcher,
    best: BinaryHeap<Hit>,
}

impl<'s> Worker<'s> {
    fn new(shared: &'s Shared, matcher: &RegexMatcher) -> Self {
        let searcher = SearcherBuilder::new()
            .line_number(true)
            .line_terminator(LineTerminator::crlf())
            .binary_detection(BinaryDetection::quit(0))
            .build();
        Worker {
            shared,
            matcher: matcher.clone(),
            searcher,
            best: BinaryHeap::new(),
        }
    }

    fn skip(&self) {
        self.shared.skipped.fetch_add(1, Ordering::Relaxed);
    }

    fn file(&mut self, p: &Path, shown: Arc<Path>) {
        // Only a regular file, opened without blocking: a FIFO in the tree is skipped, not
        // waited on.
        let Ok((f, meta)) = crate::bounded::open(p) else {
            return self.skip();
        };
        if meta.len() > MAX_FILE_BYTES {
            return self.skip();
        }
        let mut sink = Collect {
            file: shown,
            limit: self.shared.limit,
            best: &mut self.best,
            overflow: &self.shared.overflow,
            binary: false,
        };
        // A read error ends this file's search; what it found stays. (The configuration
        // cannot fail: the matcher and the searcher agree on `\r\n`, tested.)
        let _ = self.searcher.search_file(&self.matcher, &f, &mut sink);
        if sink.binary {
            self.skip();
        } else {
            self.shared.searched.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Where a file's matching lines go: into its thread's `limit` smallest.
struct Collect<'a> {
    file: Arc<Path>,
    limit: usize,
    best: &'a mut BinaryHeap<Hit>,
    overflow: &'a AtomicBool,
    /// A NUL byte ended the search (the file is counted as skipped).
    binary: bool,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        let line = m.line_number().unwrap_or(0);
        let text = m.bytes();
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if self.best.len() >= self.limit {
            self.overflow.store(true, Ordering::Relaxed);
            // Lines only grow within a file: once one is past the kept ones, so is the rest.
            if self
                .best
                .peek()
                .is_some_and(|max| (&max.file, max.line) < (&self.file, line))
            {
                return Ok(false);
            }
            self.best.pop();
        }
        self.best.push(Hit {
            file: Arc::clone(&self.file),
            line,
            text: text.to_vec(),
        });
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, std::io::Error> {
        self.binary = true;
        Ok(false)
    }
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let best = std::mem::take(&mut self.best);
        if let Ok(mut hits) = self.shared.hits.lock() {
            hits.extend(best);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::Boundary;
    use crate::policy::paths::Matcher;
    use crate::scope::{FsMode, Paths};

    /// A tree of `files` files in nested directories, each with matching lines at known
    /// places, some ending in `\r\n`.
    fn tree(files: usize) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical");
        for i in 0..files {
            let dir = root.join(format!("d{}/e{}", i % 5, i % 3));
            std::fs::create_dir_all(&dir).expect("mkdir");
            let body: String = (0..40)
                .map(|l| {
                    if l % 3 == 0 {
                        format!("hit {i} {l}\r\n")
                    } else {
                        format!("miss {l}\n")
                    }
                })
                .collect();
            std::fs::write(dir.join(format!("f{i:03}.txt")), body).expect("write");
        }
        (tmp, root)
    }

    fn search(root: &Path, pattern: &str, limit: usize, threads: usize) -> GrepResult {
        let paths = Paths {
            read: vec![format!("{}/**", root.display())],
            ..Paths::default()
        };
        let matcher = Matcher::new(&paths, None, None).expect("matcher");
        let guard = Guard {
            boundary: Boundary::new(FsMode::Restricted, root).expect("boundary"),
            matcher: &matcher,
            base: root.to_path_buf(),
            home: None,
            grants: &[],
            tool: "grep_files",
            used: Default::default(),
        };
        grep_files_with(&guard, pattern, ".", &[], Some(limit), threads).expect("grep")
    }

    /// The first `limit` matches in path order, whatever thread found them: one thread and
    /// four give the same answer, and it is the sorted list cut at the limit.
    #[test]
    fn f04_the_first_matches_in_path_order_whatever_the_threads() {
        let (_tmp, root) = tree(60);
        let all = search(&root, r"^hit \d+ \d+$", MAX_LIMIT, 1);
        assert_eq!(
            (all.matches, all.truncated, all.files_searched),
            (60 * 14, false, 60)
        );
        let lines: Vec<&str> = all.content.lines().collect();
        assert_eq!(
            lines[0], "d0/e0/f000.txt:1:hit 0 0",
            "`$` matches before `\\r\\n`, which is not shown"
        );
        let mut sorted = lines.clone();
        sorted.sort_by_key(|l| {
            let mut it = l.splitn(3, ':');
            (
                PathBuf::from(it.next().unwrap_or("")),
                it.next().and_then(|n| n.parse::<u64>().ok()),
            )
        });
        assert_eq!(lines, sorted);
        for limit in [1, 7, 200, 839] {
            let one = search(&root, r"^hit", limit, 1);
            let four = search(&root, r"^hit", limit, 4);
            assert_eq!(one, four, "limit {limit}");
            assert_eq!(
                one.content.lines().collect::<Vec<_>>(),
                lines[..limit].to_vec(),
                "limit {limit}"
            );
            assert_eq!((one.matches, one.truncated), (limit, true), "limit {limit}");
        }
        let exact = search(&root, r"^hit", 840, 4);
        assert_eq!((exact.matches, exact.truncated), (840, false));
    }

    #[test]
    fn f04_patterns_that_could_span_lines_are_refused() {
        let (_tmp, root) = tree(1);
        let paths = Paths {
            read: vec![format!("{}/**", root.display())],
            ..Paths::default()
        };
        let matcher = Matcher::new(&paths, None, None).expect("matcher");
        let guard = Guard {
            boundary: Boundary::new(FsMode::Restricted, &root).expect("boundary"),
            matcher: &matcher,
            base: root.clone(),
            home: None,
            grants: &[],
            tool: "grep_files",
            used: Default::default(),
        };
        let err = grep_files_with(&guard, r"hit\nmiss", ".", &[], None, 1)
            .expect_err("a newline cannot match");
        assert!(
            matches!(err, FsError::InvalidArgument(ref m) if m.starts_with("the pattern is not a valid regular expression")),
            "{err:?}"
        );
    }
}
