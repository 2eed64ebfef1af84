//! Loading scope documents: built-in defaults, profiles, inline scope and the session's
//! `scope.yml` or `preset.md`, deep-merged in that order, strictly validated, cached by path
//! and modification time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use once_cell::sync::Lazy;
use serde_yaml::{Mapping, Value};

use crate::scope::Scope;
use crate::{Result, ScopeError};

/// The built-in defaults; also the documentation of every key.
pub static DEFAULTS_YAML: &str = include_str!("../../data/defaults.yml");

/// One source of scope, in the order they are merged.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Source {
    /// `scope.yml` (plain YAML) or `preset.md` (YAML front matter).
    File(PathBuf),
    /// `scope-profiles/NAME.yml`.
    Profile(PathBuf),
    /// YAML or JSON text from a gptel preset or a buffer-local variable.
    Inline { name: String, text: String },
}

/// A merged scope and where it came from.
#[derive(Debug)]
pub struct LoadedScope {
    pub scope: Scope,
    /// The directory of the last file source: `${project_root}` and relative patterns.
    pub project_root: Option<PathBuf>,
    /// The files read, in order.
    pub files: Vec<PathBuf>,
    /// Each scope document ([`Source::File`]) with the SHA-256 (hex) of the very bytes
    /// its rules were parsed from: what approval is checked against ([`crate::scope::trust`]).
    pub hashes: Vec<(PathBuf, Arc<str>)>,
}

/// Counters that prove the cache works, kept per thread: a load counts on the thread that
/// asked for it, so a test's counts are its own whatever runs beside it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Files read from disk.
    pub file_reads: u64,
    /// Loads answered without reading any file.
    pub hits: u64,
    /// Times a document's stamp (modification time, length, inode, change time) was asked of
    /// the file system: once per document per load.
    pub stamps_read: u64,
}

/// A file's identity for the cache: modification time, length, and on Unix the inode and
/// the change time. A file rewritten with the same length and its old modification time put
/// back (`touch -r`, `cp -p`, `rsync -t`) still gets a new change time, which no program can
/// set, and a file replaced by a rename gets a new inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
    changed: (i64, i64),
    /// Modified so recently that another write within the same clock tick could leave
    /// every field above as it is: such a stamp is never cached.
    racy: bool,
}

/// A file modified less than this long ago is read again at the next load.
const RACY: std::time::Duration = std::time::Duration::from_secs(2);

/// A document as last read: its stamp, the SHA-256 of its bytes, and what parsing them
/// gave, the error too (a broken document is not parsed again until it changes).
type CachedDocument = (Stamp, Arc<str>, Result<Arc<Value>>);

struct Cache {
    documents: HashMap<PathBuf, CachedDocument>,
    merged: HashMap<Vec<(Source, Stamp)>, Arc<LoadedScope>>,
}

thread_local! {
    static STATS: std::cell::Cell<CacheStats> = const { std::cell::Cell::new(CacheStats { file_reads: 0, hits: 0, stamps_read: 0 }) };
}

/// Adds to this thread's counters.
fn count(f: impl FnOnce(&mut CacheStats)) {
    STATS.with(|s| {
        let mut c = s.get();
        f(&mut c);
        s.set(c);
    });
}

static CACHE: Lazy<Mutex<Cache>> = Lazy::new(|| {
    Mutex::new(Cache {
        documents: HashMap::default(),
        merged: HashMap::default(),
    })
});

/// The cache counters of this thread so far.
pub fn cache_stats() -> CacheStats {
    STATS.with(std::cell::Cell::get)
}

fn stamp(path: &Path) -> Result<Stamp> {
    count(|c| c.stamps_read += 1);
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, &e))?;
    let modified = meta.modified().ok();
    #[cfg(unix)]
    let (inode, changed) = {
        use std::os::unix::fs::MetadataExt;
        (meta.ino(), (meta.ctime(), meta.ctime_nsec()))
    };
    #[cfg(not(unix))]
    let (inode, changed) = (0, (0, 0));
    let racy = match modified {
        Some(m) => SystemTime::now()
            .duration_since(m)
            .map_or(true, |age| age < RACY),
        None => true,
    };
    Ok(Stamp {
        modified,
        len: meta.len(),
        inode,
        changed,
        racy,
    })
}

fn io_error(path: &Path, e: &std::io::Error) -> ScopeError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ScopeError::NoScopeConfig(format!("{} does not exist", path.display()))
    } else {
        ScopeError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

/// Loads and merges `sources` over the built-in defaults.
pub fn load(sources: &[Source]) -> Result<Arc<LoadedScope>> {
    load_approved(sources, None)
}

/// [`load`], applying each scope document only when its content is the one `approved`
/// gives for it ([`crate::scope::trust::verify`]): an unapproved document is refused before its
/// rules are even parsed.
pub fn load_approved(
    sources: &[Source],
    approved: Option<&[(&Path, Option<&str>)]>,
) -> Result<Arc<LoadedScope>> {
    if sources.is_empty() {
        return Err(ScopeError::NoScopeConfig(
            "no scope document applies: create a scope.yml in the project (M-x gptel-scope-init) or give the session an inline scope".into(),
        ));
    }
    let mut key = Vec::with_capacity(sources.len());
    for s in sources {
        let st = match s {
            Source::File(p) | Source::Profile(p) => stamp(p)?,
            Source::Inline { .. } => Stamp {
                modified: None,
                len: 0,
                inode: 0,
                changed: (0, 0),
                racy: false,
            },
        };
        key.push((s.clone(), st));
    }
    if let Ok(cache) = CACHE.lock() {
        if let Some(hit) = cache.merged.get(&key).cloned() {
            count(|c| c.hits += 1);
            drop(cache);
            if let Some(a) = approved {
                crate::scope::trust::verify(&hit.hashes, a)?;
            }
            return Ok(hit);
        }
    }
    let mut merged = defaults_value()?;
    let mut project_root = None;
    let mut files = Vec::new();
    let mut hashes = Vec::new();
    for (source, st) in &key {
        let doc = match source {
            Source::File(p) | Source::Profile(p) => {
                let check = |hash: &str| match (source, approved) {
                    (Source::File(f), Some(a)) => crate::scope::trust::verify_one(f, hash, a),
                    _ => Ok(()),
                };
                let (doc, hash) = document(p, *st, check)?;
                if let Source::File(_) = source {
                    project_root = p.parent().map(Path::to_path_buf);
                    hashes.push((p.clone(), hash));
                }
                files.push(p.clone());
                doc
            }
            Source::Inline { name, text } => Arc::new(parse_document(name, text, 0)?),
        };
        // A document nobody else holds (not cached: inline, or written just now) is moved
        // into the merge instead of copied string by string.
        merge_owned(
            &mut merged,
            Arc::try_unwrap(doc).unwrap_or_else(|shared| (*shared).clone()),
        );
    }
    keep_builtin_denies(&mut merged);
    let scope: Scope = serde_yaml::from_value(merged).map_err(|e| ScopeError::InvalidConfig {
        file: "merged scope".into(),
        line: None,
        key: None,
        message: e.to_string(),
    })?;
    crate::scope::env::validate(&scope.environment)?;
    let loaded = Arc::new(LoadedScope {
        scope,
        project_root,
        files,
        hashes,
    });
    if key.iter().any(|(_, st)| st.racy) {
        return Ok(loaded);
    }
    if let Ok(mut cache) = CACHE.lock() {
        if cache.merged.len() > 256 {
            cache.merged.clear();
        }
        cache.merged.insert(key, loaded.clone());
    }
    Ok(loaded)
}

/// Puts the built-in defaults' `paths.deny` patterns (`~/.ssh/**`, `~/.gnupg/**`,
/// `~/.aws/**`) back into a merged scope: a document's `deny` list replaces the defaults' as
/// any list does, and an empty or null one (`deny: []`, `deny:`) would drop them. They are
/// always denied; no document can lift them. A `paths` or `deny` of a wrong type is left
/// as it is, for the type check to name.
fn keep_builtin_denies(merged: &mut Value) {
    let Ok(defaults) = defaults_value() else {
        return;
    };
    let Some(builtin) = defaults
        .get("paths")
        .and_then(|p| p.get("deny"))
        .and_then(Value::as_sequence)
    else {
        return;
    };
    let Value::Mapping(top) = merged else { return };
    let paths = top
        .entry(Value::from("paths"))
        .or_insert_with(|| Value::Mapping(Mapping::new()));
    if paths.is_null() {
        *paths = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(paths) = paths else { return };
    let deny = paths.entry(Value::from("deny")).or_insert(Value::Null);
    if deny.is_null() {
        *deny = Value::Sequence(Vec::new());
    }
    let Value::Sequence(deny) = deny else { return };
    for pattern in builtin {
        if !deny.contains(pattern) {
            deny.push(pattern.clone());
        }
    }
}

fn defaults_value() -> Result<Value> {
    static DEFAULTS: Lazy<std::result::Result<Value, ScopeError>> =
        Lazy::new(|| parse_document("data/defaults.yml (built in)", DEFAULTS_YAML, 0));
    DEFAULTS.clone()
}

/// A file's document and the SHA-256 of the bytes it was parsed from, from the cache when
/// its stamp is unchanged. The file is read once ([`crate::bounded::read`]: a regular file
/// of at most [`MAX_SCOPE_DOCUMENT`] bytes, never a FIFO or a device): the bytes hashed are
/// the bytes parsed. `check` judges the hash before anything is parsed, so an unapproved
/// document is never parsed. A document that does not parse keeps its error in the cache
/// until its stamp changes.
fn document(
    path: &Path,
    st: Stamp,
    check: impl Fn(&str) -> Result<()>,
) -> Result<(Arc<Value>, Arc<str>)> {
    if let Ok(cache) = CACHE.lock() {
        if let Some((s, h, parsed)) = cache.documents.get(path) {
            if *s == st {
                check(h)?;
                return parsed.clone().map(|v| (v, h.clone()));
            }
        }
    }
    let (bytes, _) = crate::bounded::read(path, MAX_SCOPE_DOCUMENT)?;
    let hash: Arc<str> = Arc::from(crate::scope::trust::sha256_hex(&bytes));
    check(&hash)?;
    count(|c| c.file_reads += 1);
    let parsed = parse_file(path, bytes).map(Arc::new);
    if !st.racy {
        if let Ok(mut cache) = CACHE.lock() {
            if cache.documents.len() > 256 {
                cache.documents.clear();
            }
            cache
                .documents
                .insert(path.to_path_buf(), (st, hash.clone(), parsed.clone()));
        }
    }
    parsed.map(|v| (v, hash))
}

/// The largest scope document read: [`crate::bounded::MAX_SCOPE_DOCUMENT`].
pub use crate::bounded::MAX_SCOPE_DOCUMENT;

/// The document of a file's bytes: plain YAML, or a preset's front matter.
fn parse_file(path: &Path, bytes: Vec<u8>) -> Result<Value> {
    let text = String::from_utf8(bytes).map_err(|e| ScopeError::Io {
        path: path.display().to_string(),
        message: format!("the file is not valid UTF-8 ({e})"),
    })?;
    let text = without_bom(&text);
    let name = path.display().to_string();
    if path.extension().is_some_and(|e| e == "md") {
        let (yaml, offset) = front_matter(text).ok_or_else(|| ScopeError::InvalidConfig {
            file: name.clone(),
            line: Some(1),
            key: None,
            message: "a preset needs YAML front matter between a first line `---` and a closing `---` line".into(),
        })?;
        parse_document(&name, yaml, offset)
    } else {
        parse_document(&name, text, 0)
    }
}

/// `text` without the UTF-8 byte order mark some editors put first (YAML allows it; the
/// parser took it for the start of a second document).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The front matter of a Markdown file and the number of lines before it.
pub fn front_matter(text: &str) -> Option<(&str, usize)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], 1));
        }
        offset += line.len();
    }
    None
}

/// Parses one document strictly: bad YAML, a non-map top level, an unknown key or a wrong
/// type is an error naming the source, the line and the key.
fn parse_document(name: &str, text: &str, line_offset: usize) -> Result<Value> {
    let text = without_bom(text);
    nesting(name, text, line_offset)?;
    let value: Value = if text.trim().is_empty() {
        Value::Mapping(Mapping::new())
    } else {
        serde_yaml::from_str(text).map_err(|e| invalid(name, &e, line_offset))?
    };
    let value = match value {
        Value::Null => Value::Mapping(Mapping::new()),
        Value::Mapping(m) => Value::Mapping(m),
        _ => {
            return Err(ScopeError::InvalidConfig {
                file: name.to_string(),
                line: Some(1 + line_offset),
                key: None,
                message: "the scope document must be a map of keys (paths, bash_tools, ...)".into(),
            })
        }
    };
    // Validate this document on its own, so errors point into it: from the parsed value
    // (fast), and when that fails from the text again, for the error's line.
    if let Err(strict) = <Scope as serde::Deserialize>::deserialize(&value) {
        if let Err(e) =
            serde_yaml::from_str::<Scope>(if text.trim().is_empty() { "{}" } else { text })
        {
            return Err(field_placed(
                invalid(name, &e, line_offset),
                text,
                line_offset,
            ));
        }
        // The text reads a plain `true` or `1` as a string where one is expected; the
        // parsed value does not (`read_only: [ls, true]`): the error is the value's, placed.
        return Err(placed(name, text, line_offset, &value, &strict));
    }
    Ok(value)
}

/// The 1-based line of the key at the end of `keys` (each found on a line at or after its
/// parent's, as `key:`), or of the deepest one found.
fn line_of_key(text: &str, keys: &[String]) -> Option<usize> {
    let mut line = None;
    let mut from = 0;
    for k in keys {
        let mark = format!("{k}:");
        let found = text.lines().enumerate().skip(from).find(|(_, l)| {
            l.match_indices(&mark).any(|(i, _)| {
                i == 0
                    || l.as_bytes()[i - 1].is_ascii_whitespace()
                    || matches!(l.as_bytes()[i - 1], b'{' | b',' | b'"' | b'\'')
            })
        });
        let Some((at, _)) = found else { break };
        from = at;
        line = Some(at + 1);
    }
    line
}

/// An error a field's own check raised (its message starts with the field in backquotes,
/// after the path of the map that holds it, and ends with the map's place): the key made
/// whole and the line of the field itself.
fn field_placed(e: ScopeError, text: &str, line_offset: usize) -> ScopeError {
    let ScopeError::InvalidConfig {
        file,
        line,
        key,
        message,
    } = e
    else {
        return e;
    };
    let parent = key.clone().unwrap_or_default();
    let rest = if parent.is_empty() {
        Some(message.as_str())
    } else {
        message.strip_prefix(&format!("{parent}: "))
    };
    let Some((field, what)) = rest
        .and_then(|r| r.strip_prefix('`'))
        .and_then(|r| r.split_once("` "))
    else {
        return ScopeError::InvalidConfig {
            file,
            line,
            key,
            message,
        };
    };
    let what = what.rsplit_once(" at line ").map_or(what, |(w, _)| w);
    let whole = if parent.is_empty() {
        field.to_string()
    } else {
        format!("{parent}.{field}")
    };
    let keys: Vec<String> = whole.split('.').map(str::to_string).collect();
    let line = line_of_key(text, &keys).map(|l| l + line_offset).or(line);
    ScopeError::InvalidConfig {
        file,
        line,
        message: format!("{whole}: {what}"),
        key: Some(whole),
    }
}

/// One step of the way to a value in a document: a key of a map or an index of a list.
enum Step {
    /// The value of this key of a map.
    Key(Value),
    /// The item at this index of a list.
    Index(usize),
}

/// The error of a document whose parsed value has a wrong type that its text hides, with
/// the way to the value (found by checking each part of the document alone: the document
/// is at most [`MAX_NESTING`] deep) and the line of its last key.
fn placed(
    name: &str,
    text: &str,
    line_offset: usize,
    value: &Value,
    strict: &serde_yaml::Error,
) -> ScopeError {
    let fails = |way: &[Step], leaf: &Value| {
        let mut v = leaf.clone();
        for step in way.iter().rev() {
            v = match step {
                Step::Key(k) => Value::Mapping(Mapping::from_iter([(k.clone(), v)])),
                Step::Index(_) => Value::Sequence(vec![v]),
            };
        }
        <Scope as serde::Deserialize>::deserialize(&v).is_err()
    };
    let mut way: Vec<Step> = Vec::new();
    let mut at = value;
    let mut message = strict.to_string();
    loop {
        let inner: Vec<(Step, &Value)> = match at {
            Value::Mapping(m) => m.iter().map(|(k, v)| (Step::Key(k.clone()), v)).collect(),
            Value::Sequence(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (Step::Index(i), v))
                .collect(),
            _ => Vec::new(),
        };
        let next = inner.into_iter().find(|(step, v)| {
            way.push(match step {
                Step::Key(k) => Step::Key(k.clone()),
                Step::Index(i) => Step::Index(*i),
            });
            let bad = fails(&way, v);
            way.pop();
            bad
        });
        let Some((step, v)) = next else { break };
        way.push(step);
        at = v;
    }
    if matches!(at, Value::Bool(_) | Value::Number(_) | Value::Null)
        && message.contains("expected a string")
    {
        let shown = serde_yaml::to_string(at)
            .map(|t| t.trim().to_string())
            .unwrap_or_default();
        message.push_str(&format!(
            "; write it in quotes (\"{shown}\") if it is meant as text"
        ));
    }
    let mut key = String::new();
    let mut keys = Vec::new();
    for step in &way {
        match step {
            Step::Key(k) => {
                let k = k.as_str().map(str::to_string).unwrap_or_else(|| {
                    serde_yaml::to_string(k)
                        .map(|t| t.trim().to_string())
                        .unwrap_or_default()
                });
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(&k);
                keys.push(k);
            }
            Step::Index(i) => key.push_str(&format!("[{i}]")),
        }
    }
    let line = line_of_key(text, &keys).map(|l| l + line_offset);
    let key = (!key.is_empty()).then_some(key);
    let message = match &key {
        Some(k) => format!("{k}: {message}"),
        None => message,
    };
    ScopeError::InvalidConfig {
        file: name.to_string(),
        line,
        key,
        message,
    }
}

/// The deepest nesting a scope document may have. A real scope nests four or five levels
/// (`bash_tools: categories: read_only: - entry`); the YAML parser's time grows with the
/// square of the depth (a 200 KB line of `[` took 26 s), so a deeper document is refused
/// before it is parsed.
pub const MAX_NESTING: usize = 64;

/// Refuses `text` when it nests deeper than [`MAX_NESTING`], by a scan that costs one pass
/// over the bytes, before the YAML parser sees it. The measure is simple and errs deep:
/// block levels are the indentation levels open (a stack of indents) plus the `- ` and `? `
/// that open collections at the start of a line; flow levels are the `[` and `{` open where
/// a value starts, outside quoted scalars and comments. The text of block scalars (`|`, `>`)
/// is skipped. The error names the file and the first line past the limit.
pub fn nesting(name: &str, text: &str, line_offset: usize) -> Result<()> {
    let mut indents: Vec<usize> = Vec::new();
    let mut flow = 0usize;
    let mut quote: Option<u8> = None;
    let mut block_scalar: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let n = line.len() - line.trim_start_matches(' ').len();
        let mut rest = &line.as_bytes()[n..];
        if let Some(parent) = block_scalar {
            if rest.iter().all(u8::is_ascii_whitespace) || n > parent {
                continue;
            }
            block_scalar = None;
        }
        let mut markers = 0;
        if quote.is_none() && flow == 0 {
            if rest.is_empty() || rest[0] == b'#' {
                continue;
            }
            while indents.last().is_some_and(|&l| l >= n) {
                indents.pop();
            }
            indents.push(n);
            while let [b'-' | b'?', after @ ..] = rest {
                if !matches!(after.first(), None | Some(b' ' | b'\t')) {
                    break;
                }
                markers += 1;
                rest = after.trim_ascii_start();
            }
        }
        let mut deepest = flow;
        let mut prev: Option<u8> = None;
        let mut k = 0;
        while k < rest.len() {
            let c = rest[k];
            match quote {
                Some(b'"') if c == b'\\' => k += 1,
                Some(q) if c == q => {
                    if q == b'\'' && rest.get(k + 1) == Some(&b'\'') {
                        k += 1;
                    } else {
                        quote = None;
                    }
                }
                Some(_) => {}
                None => match c {
                    b'#' if matches!(prev, None | Some(b' ' | b'\t')) => break,
                    b'"' | b'\'' | b'[' | b'{'
                        if matches!(
                            prev,
                            None | Some(b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'-' | b'?')
                        ) =>
                    {
                        if c == b'[' || c == b'{' {
                            flow += 1;
                            deepest = deepest.max(flow);
                        } else {
                            quote = Some(c);
                        }
                    }
                    b']' | b'}' => flow = flow.saturating_sub(1),
                    _ => {}
                },
            }
            if quote.is_none() {
                prev = Some(c);
            }
            k += 1;
        }
        if indents.len() + markers + deepest > MAX_NESTING {
            return Err(ScopeError::InvalidConfig {
                file: name.to_string(),
                line: Some(i + 1 + line_offset),
                key: None,
                message: format!("the document nests deeper than {MAX_NESTING} levels (a scope needs a handful); it was not parsed"),
            });
        }
        if quote.is_none() && flow == 0 && opens_block_scalar(rest) {
            block_scalar = Some(n);
        }
    }
    Ok(())
}

/// Whether a line's value (without its comment) ends with a block scalar's indicator
/// (`|`, `>-`, `|2+`, ...): the lines after it, indented more, are text.
fn opens_block_scalar(rest: &[u8]) -> bool {
    let code = match rest
        .windows(2)
        .position(|w| w[0].is_ascii_whitespace() && w[1] == b'#')
    {
        Some(at) => &rest[..at],
        None => rest,
    };
    let head = code.trim_ascii_end();
    let cut = head
        .iter()
        .rposition(|c| !matches!(c, b'+' | b'-' | b'0'..=b'9'))
        .map_or(0, |i| i + 1);
    let head = &head[..cut];
    matches!(head.last(), Some(b'|' | b'>'))
        && (head.len() == 1 || head[head.len() - 2].is_ascii_whitespace())
}

fn invalid(name: &str, e: &serde_yaml::Error, line_offset: usize) -> ScopeError {
    let message = e.to_string();
    let key = message
        .split("unknown field `")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .map(|field| match message.split(": unknown field").next() {
            Some(path) if !path.contains(' ') && !path.is_empty() => format!("{path}.{field}"),
            _ => field.to_string(),
        })
        .or_else(|| {
            let path = message.split(':').next().unwrap_or("");
            (!path.contains(' ') && !path.is_empty()).then(|| path.to_string())
        });
    ScopeError::InvalidConfig {
        file: name.to_string(),
        line: e.location().map(|l| l.line() + line_offset),
        key,
        message,
    }
}

/// Deep merge: maps merge key by key; scalars and lists replace (C02).
pub fn merge(into: &mut Value, over: &Value) {
    match (into, over) {
        (Value::Mapping(a), Value::Mapping(b)) => {
            for (k, v) in b {
                match a.get_mut(k) {
                    Some(existing) if existing.is_mapping() && v.is_mapping() => merge(existing, v),
                    _ => {
                        a.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (slot, v) => *slot = v.clone(),
    }
}

/// [`merge`] of a document owned by the caller: the same result, without copying it.
fn merge_owned(into: &mut Value, over: Value) {
    match (into, over) {
        (Value::Mapping(a), Value::Mapping(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) if existing.is_mapping() && v.is_mapping() => {
                        merge_owned(existing, v)
                    }
                    _ => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

/// Expands `~`, `${project_root}` and a trailing `/` (meaning `/**`) in a path pattern.
pub fn expand_pattern(pattern: &str, home: Option<&Path>, project_root: Option<&Path>) -> String {
    let mut p = pattern.to_string();
    if let Some(root) = project_root.filter(|_| p.contains("${project_root}")) {
        p = p.replace(
            "${project_root}",
            root.to_string_lossy().trim_end_matches('/'),
        );
    }
    if let Some(h) = home.filter(|_| p.starts_with('~')) {
        let h = h.to_string_lossy();
        let h = h.trim_end_matches('/');
        if p == "~" {
            p = h.to_string();
        } else if let Some(rest) = p.strip_prefix("~/") {
            p = format!("{h}/{rest}");
        }
    }
    if p.len() > 1 && p.ends_with('/') {
        p.push_str("**");
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_document_every_key() {
        let v = defaults_value().unwrap();
        let s: Scope = serde_yaml::from_value(v).unwrap();
        assert_eq!(s.bash_tools.timeout, 30);
        assert!(s.bash_tools.categories.read_only.is_empty());
        for key in [
            "paths:",
            "bash_tools:",
            "tool_commands:",
            "org_roam_patterns:",
            "fs:",
            "approval_policy:",
            "semantics:",
            "allow_constructs:",
            "path_arguments:",
            "environment:",
            "sandbox:",
            "network:",
            "inherit:",
            "include:",
            "exclude:",
            "set:",
        ] {
            assert!(DEFAULTS_YAML.contains(key), "{key}");
        }
    }

    #[test]
    fn expand_pattern_table() {
        let h = Path::new("/home/u");
        let r = Path::new("/p");
        for (input, want) in [
            ("~", "/home/u"),
            ("~/x/**", "/home/u/x/**"),
            ("${project_root}/src/", "/p/src/**"),
            ("dir/", "dir/**"),
            ("/a/b", "/a/b"),
            ("~user/x", "~user/x"),
        ] {
            assert_eq!(expand_pattern(input, Some(h), Some(r)), want, "{input}");
        }
    }

    #[test]
    fn merge_maps_merge_lists_replace() {
        let mut a: Value = serde_yaml::from_str("a: {b: 1, c: [1, 2]}\nd: x").unwrap();
        let b: Value = serde_yaml::from_str("a: {c: [3]}\ne: y").unwrap();
        merge(&mut a, &b);
        let want: Value = serde_yaml::from_str("a: {b: 1, c: [3]}\nd: x\ne: y").unwrap();
        assert_eq!(a, want);
    }

    /// The owned merge gives what the borrowing one gives, mapping order included.
    #[test]
    fn merge_owned_is_merge() {
        let cases = [
            ("a: {b: 1, c: [1, 2]}\nd: x", "a: {c: [3]}\ne: y"),
            ("a: {b: 1}\nz: 2", "a: 5\nz: {q: 1}"),
            (
                "a: [1]\nb: {c: {d: 1, e: 2}}",
                "b: {c: {e: 3, f: 4}, g: ~}\na: {x: 1}",
            ),
            ("x: 1", "y: 2\nx: 3"),
            ("{}", "a: {b: {c: [1]}}"),
            ("a: 1", "~"),
        ];
        for (base, over) in cases {
            let base: Value = serde_yaml::from_str(base).unwrap();
            let over: Value = serde_yaml::from_str(over).unwrap();
            let (mut by_ref, mut by_value) = (base.clone(), base);
            merge(&mut by_ref, &over);
            merge_owned(&mut by_value, over);
            assert_eq!(
                serde_yaml::to_string(&by_ref).unwrap(),
                serde_yaml::to_string(&by_value).unwrap()
            );
        }
    }

    #[test]
    fn front_matter_is_found() {
        assert_eq!(front_matter("---\na: 1\n---\nbody"), Some(("a: 1\n", 1)));
        assert_eq!(front_matter("no front matter"), None);
        assert_eq!(front_matter("---\na: 1\n"), None);
    }

    /// Through the loader: an unknown key under `environment:` names itself, a bad pattern
    /// names its list, a good document loads.
    #[test]
    fn loader_checks_environment() {
        use crate::scope::env::Inherit;
        let cases: &[(&str, Option<&str>)] = &[
            (
                "environment: {inherit: core, inclde: [A]}",
                Some("environment.inclde"),
            ),
            (
                "environment: {inherit: everything}",
                Some("environment.inherit"),
            ),
            (
                "environment: {exclude: [\"[\"]}",
                Some("environment.exclude"),
            ),
            (
                "environment: {inherit: none, include: [PATH], set: {A: b}}",
                None,
            ),
        ];
        for (text, key) in cases {
            let r = load(&[Source::Inline {
                name: "t".into(),
                text: text.to_string(),
            }]);
            match (r, key) {
                (Err(ScopeError::InvalidConfig { key: got, .. }), Some(want)) => {
                    assert_eq!(got.as_deref(), Some(*want), "{text}")
                }
                (Ok(l), None) => assert_eq!(l.scope.environment.inherit, Inherit::None),
                (other, _) => panic!("{text}: {other:?}"),
            }
        }
    }

    /// A document that does not parse keeps its error for its stamp: the same answer, the
    /// file not parsed again (its new text is not seen under the old stamp); its approval is
    /// still checked first; a new stamp reads it again.
    #[test]
    fn a_broken_document_keeps_its_error_until_it_changes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("scope.yml");
        std::fs::write(&path, "paths: [\n").expect("write");
        let st = Stamp {
            modified: None,
            len: 1,
            inode: 1,
            changed: (1, 1),
            racy: false,
        };
        let name = path.display().to_string();
        let first = document(&path, st, |_| Ok(())).map(|_| ());
        let Err(ScopeError::InvalidConfig { file, line, .. }) = &first else {
            panic!("{first:?}")
        };
        assert_eq!((file.as_str(), *line), (name.as_str(), Some(2)));
        std::fs::write(&path, "paths: {}\n").expect("write");
        assert_eq!(document(&path, st, |_| Ok(())).map(|_| ()), first, "kept");
        let refused = ScopeError::UntrustedScope {
            file: name,
            sha256: String::new(),
            approved: None,
        };
        assert_eq!(
            document(&path, st, |_| Err(refused.clone())).map(|_| ()),
            Err(refused),
            "approval first"
        );
        assert_eq!(
            document(&path, Stamp { len: 2, ..st }, |_| Ok(())).map(|_| ()),
            Ok(()),
            "read again"
        );
    }
}
