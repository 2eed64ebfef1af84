//! Words: literal text after quote removal, ANSI-C strings, globs, brace expansion (bounded),
//! and `cd` targets resolved against a directory.

use super::*;

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
    !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./,:=+@%^".contains(&b))
}

pub(super) fn has_glob(t: &str) -> bool {
    t.contains(['*', '?', '['])
        || ["@(", "!(", "+("].iter().any(|p| t.contains(p))
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

pub(super) fn expand_parts(parts: &[BraceExpressionOrText], out: &mut Vec<String>) -> Result<(), String> {
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
                        BraceExpressionMember::NumberSequence { start, end, increment } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = (*start.min(end), *start.max(end));
                            let count = ((hi - lo) as usize) / step + 1;
                            if count > MAX_BRACE_WORDS {
                                return Err(too_many());
                            }
                            let mut v: Vec<String> = (0..count).map(|i| (lo + (i * step) as i64).to_string()).collect();
                            if start > end {
                                v.reverse();
                            }
                            alternatives.extend(v);
                        }
                        BraceExpressionMember::CharSequence { start, end, increment } => {
                            let step = increment.unsigned_abs().max(1) as usize;
                            let (lo, hi) = ((*start.min(end)) as u32, (*start.max(end)) as u32);
                            let mut v: Vec<String> = (lo..=hi).step_by(step).filter_map(char::from_u32).map(String::from).collect();
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
    format!("a brace expansion makes more than {MAX_BRACE_WORDS} words; list the arguments explicitly")
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
