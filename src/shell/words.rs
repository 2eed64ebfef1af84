//! Words: literal text after quote removal, ANSI-C strings, globs, brace expansion (bounded),
//! and `cd` targets resolved against a directory.

use std::path::{Path, PathBuf};

use brush_parser::word::{BraceExpressionMember, BraceExpressionOrText};

use super::guard::{braces_are_tame, tame_subscripts, unquoted_brace};
use super::{options, MAX_BRACES_PER_WORD, MAX_BRACE_BYTES, MAX_BRACE_WORDS};

/// Text that would run a command if an arithmetic or subscript evaluation met it again.
pub fn holds_substitution_text(v: &str) -> bool {
    v.contains("$(") || v.contains('`') || v.contains("<(") || v.contains(">(")
}

/// The value of `$'...'` for the escapes whose meaning is certain (`\xHH`, `\NNN`, `\n`,
/// `\t`, `\\`, `\'`, `\"`) when it is printable ASCII; `None` (dynamic) otherwise.
pub(super) fn ansi_c_decode(t: &str) -> Option<String> {
    let mut out = String::new();
    let mut it = t.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let d = match it.next()? {
            'n' => '\n',
            't' => '\t',
            e @ ('\\' | '\'' | '"') => e,
            'x' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match it.peek().and_then(|h| h.to_digit(16)) {
                        Some(h) => {
                            v = v * 16 + h;
                            it.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return None;
                }
                char::from_u32(v)?
            }
            o @ '0'..='7' => {
                let mut v = o.to_digit(8)?;
                let mut n = 1;
                while n < 3 {
                    match it.peek().and_then(|h| h.to_digit(8)) {
                        Some(h) => {
                            v = v * 8 + h;
                            it.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(v)?
            }
            _ => return None,
        };
        if !(d == '\n' || d == '\t' || (' '..='~').contains(&d)) {
            return None;
        }
        out.push(d);
    }
    Some(out)
}

/// A word with nothing for the shell to expand or remove: its value is its text.
pub(super) fn is_plain(raw: &str) -> bool {
    !raw.is_empty()
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./,:=+@%^".contains(&b))
}

pub(super) fn has_glob(t: &str) -> bool {
    t.contains(['*', '?', '[']) || ["@(", "!(", "+("].iter().any(|p| t.contains(p))
}

/// Whether the unquoted text `t` of the word `raw` makes it a glob: [`has_glob`], except that
/// a `[` with no `]` anywhere after it in the word opens no bracket expression and matches
/// itself (`[ -d dir ]`: the command `[`, the test builtin). Any `]` after it, quoted or not,
/// keeps the word a glob.
pub(super) fn makes_glob(t: &str, raw: &str) -> bool {
    let bracket_opens = raw.find('[').is_none_or(|at| raw[at..].contains(']'));
    has_glob(t) && (bracket_opens || has_glob(&t.replace('[', "")))
}

/// Brace expansion of one word: `a{b,c}` → `ab`, `ac`. Quoted braces stay as they are.
pub fn brace_expand(raw: &str) -> Result<Vec<String>, String> {
    if !unquoted_brace(raw) {
        return Ok(vec![raw.to_string()]);
    }
    // The brace grammar parses the word's expansions too: the same exponential shapes.
    tame_subscripts(raw).map_err(|p| p.message().to_string())?;
    // The brace grammar backtracks: unmatched, deep or many braces take seconds to parse.
    if !braces_are_tame(raw) {
        return Err(format!(
            "the word `{raw}` has unmatched, deeply nested or more than {MAX_BRACES_PER_WORD} unquoted braces; quote them or split the word"
        ));
    }
    let parsed = brush_parser::word::parse_brace_expansions(raw, &options())
        .map_err(|e| format!("the word `{raw}` has a brace expansion that does not parse: {e}"))?;
    let Some(parts) = parsed else {
        return Ok(vec![raw.to_string()]);
    };
    let mut out = vec![String::new()];
    expand_parts(&parts, &mut out)?;
    Ok(out)
}

pub(super) fn expand_parts(
    parts: &[BraceExpressionOrText],
    out: &mut Vec<String>,
) -> Result<(), String> {
    for part in parts {
        match part {
            BraceExpressionOrText::Text(t) => {
                for o in out.iter_mut() {
                    o.push_str(t);
                }
                too_long(out)?;
            }
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives: Vec<String> = Vec::new();
                for m in members {
                    match m {
                        BraceExpressionMember::Child(children) => {
                            let mut sub = vec![String::new()];
                            expand_parts(children, &mut sub)?;
                            alternatives.extend(sub);
                        }
                        BraceExpressionMember::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = (*start.min(end), *start.max(end));
                            let count = ((hi - lo) as usize) / step + 1;
                            if count > MAX_BRACE_WORDS {
                                return Err(too_many());
                            }
                            let mut v: Vec<String> = (0..count)
                                .map(|i| (lo + (i * step) as i64).to_string())
                                .collect();
                            if start > end {
                                v.reverse();
                            }
                            alternatives.extend(v);
                        }
                        BraceExpressionMember::CharSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = ((*start.min(end)) as u32, (*start.max(end)) as u32);
                            let mut v: Vec<String> = (lo..=hi)
                                .step_by(step)
                                .filter_map(char::from_u32)
                                .map(String::from)
                                .collect();
                            if start > end {
                                v.reverse();
                            }
                            alternatives.extend(v);
                        }
                    }
                    if alternatives.len() > MAX_BRACE_WORDS {
                        return Err(too_many());
                    }
                }
                let mut next = Vec::with_capacity(out.len() * alternatives.len());
                for o in out.iter() {
                    for a in &alternatives {
                        next.push(format!("{o}{a}"));
                    }
                }
                if next.len() > MAX_BRACE_WORDS {
                    return Err(too_many());
                }
                too_long(&next)?;
                *out = next;
            }
        }
    }
    Ok(())
}

pub(super) fn too_many() -> String {
    format!(
        "a brace expansion makes more than {MAX_BRACE_WORDS} words; list the arguments explicitly"
    )
}

/// Refuses a brace expansion whose words come to more than [`MAX_BRACE_BYTES`]: each word
/// is judged (and parsed) on its own, so 243 copies of a 1 KB word (`{1..3}` five times)
/// took 43 ms to judge.
pub(super) fn too_long(words: &[String]) -> Result<(), String> {
    let bytes: usize = words.iter().map(String::len).sum();
    if bytes > MAX_BRACE_BYTES {
        return Err(format!(
            "a brace expansion makes {} words of {bytes} bytes in all (the limit is {MAX_BRACE_BYTES}); list the arguments explicitly or use shorter words",
            words.len()
        ));
    }
    Ok(())
}

/// The directory `cd TARGET` reaches from `cwd`, following symlinks that exist.
pub fn resolve_dir(cwd: &Path, target: &str) -> PathBuf {
    let joined = cwd.join(target);
    crate::resolve::resolve(&joined).target
}

/// A glob for one path component. Patterns of only `*`, `?` and literal characters (`*.md`,
/// `test-?.el`) are matched here; the others (classes, escapes, braces, `**`) by globset.
/// Compiling a globset matcher builds a regex, 10 µs or more, for every glob of every command.
///
/// `?` is one character to bash in a UTF-8 locale and one byte in the C locale (and to
/// globset); a name matches when it matches either way, so no file the command could reach
/// is missed.
pub enum ComponentGlob {
    Simple(Vec<u8>),
    Globset(globset::GlobMatcher),
}

impl ComponentGlob {
    pub fn new(part: &str) -> Option<ComponentGlob> {
        if part.contains(['[', ']', '\\', '{', '}']) || part.contains("**") {
            let g = globset::GlobBuilder::new(part)
                .literal_separator(true)
                .build()
                .ok()?;
            return Some(ComponentGlob::Globset(g.compile_matcher()));
        }
        Some(ComponentGlob::Simple(part.as_bytes().to_vec()))
    }

    pub fn is_match(&self, name: &str) -> bool {
        match self {
            ComponentGlob::Simple(p) => {
                wildcard_match(p, name.as_bytes())
                    || (!name.is_ascii() && {
                        let p: Vec<char> = String::from_utf8_lossy(p).chars().collect();
                        wildcard_match(&p, &name.chars().collect::<Vec<_>>())
                    })
            }
            ComponentGlob::Globset(g) => g.is_match(name),
        }
    }
}

/// Whether `name` matches `pattern`, where `*` is any run of units and `?` any one unit
/// except `/` (linear: on a mismatch only the last `*` is moved on).
pub fn wildcard_match<T: Copy + PartialEq + From<u8>>(pattern: &[T], name: &[T]) -> bool {
    let (star_unit, any_unit, slash) = (T::from(b'*'), T::from(b'?'), T::from(b'/'));
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(&c) if c == star_unit => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == any_unit && name[n] != slash => {
                p += 1;
                n += 1;
            }
            Some(&c) if c != any_unit && c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((sp, sn)) if name[sn] != slash => {
                    star = Some((sp, sn + 1));
                    p = sp + 1;
                    n = sn + 1;
                }
                _ => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == star_unit)
}

/// Why a loop's glob is not expanded before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GlobRefusal {
    /// The pattern or a name it meets is one this expansion does not model (an empty
    /// component, a bracket class, a name that is not UTF-8): the value stays unknown.
    Unknown,
    /// More than [`super::flatten::MAX_LOOP_VALUES`] entries.
    TooMany,
}

/// Expands the glob `pattern` (quotes removed, unquoted `*`, `?`, `[`) in `cwd` as bash does
/// by default: each component with a wildcard matched against the names of the directories
/// reached so far (names starting with `.` only when the component does), a trailing `/`
/// keeping directories (symlinks to one included), the words sorted; no match gives no
/// words (the caller keeps the pattern, as bash does). The words are as bash gives them:
/// relative to `cwd` when the pattern is.
pub(super) fn loop_glob(cwd: &Path, pattern: &str) -> Result<Vec<String>, GlobRefusal> {
    let limit = super::flatten::MAX_LOOP_VALUES;
    let (absolute, rest) = match pattern.strip_prefix('/') {
        Some(r) => (true, r),
        None => (false, pattern),
    };
    let (rest, dirs_only) = match rest.strip_suffix('/') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    // (the word so far, the path it names)
    let mut current: Vec<(String, PathBuf)> = vec![if absolute {
        ("/".to_string(), PathBuf::from("/"))
    } else {
        (String::new(), cwd.to_path_buf())
    }];
    for (k, part) in rest.split('/').enumerate() {
        if part.is_empty() || part.contains("[:") || part.contains("[=") || part.contains("[.") {
            return Err(GlobRefusal::Unknown);
        }
        let sep = if k == 0 { "" } else { "/" };
        let mut next = Vec::new();
        if !has_glob(part) {
            for (w, p) in current {
                next.push((format!("{w}{sep}{part}"), p.join(part)));
            }
        } else {
            let g = ComponentGlob::new(part).ok_or(GlobRefusal::Unknown)?;
            for (w, p) in &current {
                let Ok(rd) = std::fs::read_dir(p) else {
                    continue;
                };
                for e in rd.flatten() {
                    let name = e
                        .file_name()
                        .into_string()
                        .map_err(|_| GlobRefusal::Unknown)?;
                    if name.starts_with('.') && !part.starts_with('.') {
                        continue;
                    }
                    if g.is_match(&name) {
                        next.push((format!("{w}{sep}{name}"), p.join(&name)));
                        if next.len() > limit {
                            return Err(GlobRefusal::TooMany);
                        }
                    }
                }
            }
        }
        current = next;
    }
    let mut out: Vec<String> = current
        .into_iter()
        .filter(|(_, p)| {
            if dirs_only {
                std::fs::metadata(p).is_ok_and(|m| m.is_dir())
            } else {
                std::fs::symlink_metadata(p).is_ok()
            }
        })
        .map(|(w, _)| if dirs_only { format!("{w}/") } else { w })
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}
