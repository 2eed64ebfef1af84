//! What is refused before brush-parser sees a command: over-long input, NUL and invisible
//! characters, and the shapes it would take exponential time on (subscripts and nesting in
//! expansions, long numbers, brace-heavy words), and here-document tokens it could misread.

use super::words::has_glob;
use super::{
    Problem, MAX_BRACES_PER_WORD, MAX_BRACE_DEPTH, MAX_COMMAND_LEN, MAX_DIGITS, MAX_FD_DIGITS,
    MAX_OPEN_PARENS,
};

/// The bytes [`precheck`] looks at closer: control bytes but tab and newline, DEL, and
/// every byte of non-ASCII text (invisible and formatting characters have many lead bytes).
pub(super) static SUSPECT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b < 0x20 && b != 0x09 && b != 0x0a) || b >= 0x7f;
        b += 1;
    }
    t
};

pub(super) const ONES: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether a byte of `v` is zero.
pub(super) fn has_zero(v: u64) -> bool {
    v.wrapping_sub(ONES) & !v & HIGH != 0
}

/// The index of the first byte of `bytes` that `wanted` accepts, eight bytes at a time: a
/// word for which `maybe` is false holds none and is skipped whole.
pub(super) fn first_byte(
    bytes: &[u8],
    maybe: impl Fn(u64) -> bool,
    wanted: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if maybe(u64::from_le_bytes(word)) {
            if let Some(i) = chunk.iter().position(|&b| wanted(b)) {
                return Some(base + i);
            }
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| wanted(b))
        .map(|i| base + i)
}

/// The index of the first [`SUSPECT`] byte: a word with no byte below 0x20 and none at or
/// above 0x7F is skipped whole.
pub(super) fn first_suspect(bytes: &[u8]) -> Option<usize> {
    let maybe = |x: u64| {
        x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0 || x & HIGH != 0 || has_zero(x ^ (ONES * 0x7f))
    };
    first_byte(bytes, maybe, |b| SUSPECT[b as usize])
}

/// The index of the first ASCII digit or `(`.
pub(super) fn first_digit_or_paren(bytes: &[u8]) -> Option<usize> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // A byte of `x` in 0x30..=0x39 (bytes at or above 0x80 are never counted), or a `(`.
    let maybe = |x: u64| {
        let low = x & LOW7;
        (ONES * (127 + 0x3a)).wrapping_sub(low) & !x & low.wrapping_add(ONES * (127 - 0x2f)) & HIGH
            != 0
            || has_zero(x ^ (ONES * u64::from(b'(')))
    };
    first_byte(bytes, maybe, |c| c.is_ascii_digit() || c == b'(')
}

/// Rejects text that must not reach a parser: NUL, CR and other control characters,
/// invisible and bidirectional formatting characters, and over-long input.
pub(super) fn precheck(command: &str) -> Result<(), Problem> {
    if command.len() > MAX_COMMAND_LEN {
        return Err(Problem::Parse(format!(
            "the command is {} bytes long; the limit is {} bytes. Split it into smaller commands.",
            command.len(),
            MAX_COMMAND_LEN
        )));
    }
    runs(command)?;
    heredoc_tags(command)?;
    // Only control bytes and non-ASCII characters need a closer look. Hop from one to the
    // next: the bytes between are printable ASCII, so each hop lands on a character's
    // first byte.
    let bytes = command.as_bytes();
    let mut at = 0;
    // The character before `at`, when it is not ASCII.
    let mut prev_wide: Option<(usize, char)> = None;
    while let Some(off) = first_suspect(&bytes[at..]) {
        let i = at + off;
        let Some(c) = command.get(i..).and_then(|t| t.chars().next()) else {
            break;
        };
        at = i + c.len_utf8();
        // A variation selector after a non-ASCII character picks an emoji's presentation
        // (`⚠️` in a commit message); after ASCII it only hides itself.
        let after_wide = matches!(prev_wide, Some((end, _)) if end == i);
        let emoji_variation = matches!(c, '\u{fe0e}' | '\u{fe0f}') && after_wide;
        prev_wide = (!c.is_ascii()).then_some((at, c));
        let bad = match c {
            '\0' => Some("a NUL byte"),
            '\r' => Some("a carriage return"),
            '\t' | '\n' => None,
            c if (c as u32) < 0x20 || c == '\u{7f}' => Some("a control character"),
            c if invisible(c) && !emoji_variation => {
                Some("an invisible or bidirectional formatting character")
            }
            '\u{2028}' | '\u{2029}' => Some("a Unicode line or paragraph separator"),
            _ => None,
        };
        if let Some(what) = bad {
            return Err(Problem::Parse(format!(
                "the command holds {what} (U+{:04X}) at byte {i}; send plain text with lines separated by LF only",
                c as u32
            )));
        }
    }
    Ok(())
}

/// Refuses a here-document operator with no delimiter word after it (`cat << )`, `$(cat <<  `,
/// `$(<<<<<`): bash refuses it, and brush-parser's tokenizer, at the end of an unclosed `$(`,
/// allocates without end on it. The text is read as bash reads operators: a run of `<` is
/// `<<<` as many times as it holds, then `<<` or `<` (so `<<<<<` ends in `<<`); `<<-` is the
/// operator too, and a `\` before the first `<` escapes it. The next character after blanks
/// must start a word: not the end, a newline, or one of `<>|&;()`; the word must hold no `$`
/// or backquote. Quotes are not followed
/// (a delimiter is often quoted, `<<'EOF'`, and a quote starts a word), so such text inside
/// quotes is refused as well, which errs towards refusing.
pub(super) fn heredoc_tags(command: &str) -> Result<(), Problem> {
    let b = command.as_bytes();
    let mut i = 0;
    while let Some(off) = b[i..].iter().position(|&c| c == b'<') {
        let mut start = i + off;
        let mut end = start;
        while b.get(end) == Some(&b'<') {
            end += 1;
        }
        i = end;
        let escapes = b[..start].iter().rev().take_while(|&&c| c == b'\\').count();
        if escapes % 2 == 1 {
            start += 1;
        }
        if (end - start) % 3 != 2 {
            continue;
        }
        let mut j = end;
        if b.get(j) == Some(&b'-') {
            j += 1;
        }
        while matches!(b.get(j), Some(b' ' | b'\t')) {
            j += 1;
        }
        let ends_word = |c: &u8| {
            matches!(
                c,
                b' ' | b'\t' | b'\n' | b'<' | b'>' | b'|' | b'&' | b';' | b'(' | b')'
            )
        };
        if b.get(j).is_none_or(ends_word) {
            return Err(Problem::Parse(format!(
                "the here-document operator at byte {} has no delimiter word after it; write `<<'EOF'`, the lines, then `EOF` on a line of its own",
                end - 2
            )));
        }
        // bash expands nothing in a delimiter; brush-parser's tokenizer reads a substitution
        // there and, unclosed (`<<$(  $(`), allocates without end.
        let word = &b[j..b[j..].iter().position(ends_word).map_or(b.len(), |p| j + p)];
        if word.iter().any(|c| matches!(c, b'$' | b'`')) {
            return Err(Problem::Parse(format!(
                "the delimiter of the here-document at byte {} holds `$` or a backquote; write a plain word such as `'EOF'`",
                end - 2
            )));
        }
    }
    Ok(())
}

/// Most subshells or arithmetic commands a command may leave open (it does not parse then).
const MAX_UNCLOSED_GROUPS: usize = 4;

/// Refuses a command that leaves more than [`MAX_UNCLOSED_GROUPS`] parentheses open where a
/// command starts (after `&`, `|`, `;`, `(`, a newline or at the start): bash cannot run it,
/// and brush-parser's grammar tries each one as an arithmetic command and as a subshell, in
/// time that grows fourfold with each pair (`&(( a ` twelve times took 0.2 s, fourteen
/// 3.5 s; found by the decide fuzz target). Single-quoted text is skipped; a parenthesis
/// inside double quotes does not start a command.
pub(super) fn unclosed_groups(command: &str) -> Result<(), Problem> {
    let b = command.as_bytes();
    let mut open: Vec<bool> = Vec::new();
    let mut prev = b'\n';
    let mut in_double = false;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b'\\' => {
                i += 1;
                prev = b'x';
                continue;
            }
            b'\'' if !in_double => {
                i += b[i..]
                    .iter()
                    .position(|&q| q == b'\'')
                    .map_or(b.len() - i, |p| p + 1);
                prev = b'x';
                continue;
            }
            b'"' => in_double = !in_double,
            // `$((` opens an arithmetic expansion, not a command.
            b'(' if prev == b'$' && b.get(i) == Some(&b'(') => {
                open.extend([false, false]);
                i += 1;
            }
            b'(' => open.push(!in_double && matches!(prev, b'&' | b'|' | b';' | b'(' | b'\n')),
            b')' => {
                open.pop();
            }
            _ => {}
        }
        if !matches!(c, b' ' | b'\t') {
            prev = c;
        }
    }
    let unclosed = open.iter().filter(|&&at_command| at_command).count();
    if unclosed > MAX_UNCLOSED_GROUPS {
        return Err(Problem::Parse(format!(
            "the command leaves {unclosed} parentheses open where commands start; close each `(` and `((` with `)` and `))`"
        )));
    }
    Ok(())
}

/// Whether a word has a `{` that brace expansion could start at: outside quotes, not
/// escaped. (brush's grammar also expands `${a,b}`, which bash leaves alone; such words
/// still go to it, so both fail closed the same way.) Words without one (`'{print $1}'`,
/// `"${x}"`, JSON in quotes) skip brush's brace grammar; a test holds this to it.
pub(super) fn unquoted_brace(raw: &str) -> bool {
    let b = raw.as_bytes();
    if memchr::memchr(b'{', b).is_none() {
        return false;
    }
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if !single => i += 1,
            b'\'' if !double => single = !single,
            b'"' if !single => double = !double,
            b'{' if !single && !double => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// Most expansions (`${`, `$(`, `$((`, `$[`) a word may hold inside the brackets of array
/// subscripts and arithmetic.
pub(super) const MAX_SUBSCRIPT_EXPANSIONS: usize = 1;

/// Most arithmetic expansions (`$((`) open inside one another: brush-parser's word grammar
/// tries each as arithmetic, then as a command substitution of a subshell, so a failure
/// deep inside doubles the work at every level (eighteen `$(( &` took 0.37 s, each one more
/// twice as long).
pub(super) const MAX_ARITHMETIC_NESTING: usize = 3;

/// Most expansions (`$(`, `${`, `$((`, `$[`) open inside one another: brush-parser's
/// grammars backtrack at each level, so the work may multiply with the depth. None of the
/// 636 real commands nests more than two.
pub(super) const MAX_EXPANSION_NESTING: usize = 6;

/// Most plain parentheses and braces a word may have open at once inside its expansions:
/// the word grammar tries each `(` in a command substitution as a subshell and as text
/// (a fuzzed word with 28 open took 1.4 s). The real commands open at most 10.
pub(super) const MAX_OPEN_BRACKETS: usize = 12;

/// Most brackets (array subscripts) a word may hold inside expansions: with two, a fuzzed
/// command of 1 KB still took 90 ms.
pub(super) const MAX_SUBSCRIPTS: usize = 1;

/// Refuses a word (or here-document) with more than [`MAX_SUBSCRIPTS`] array subscript
/// inside expansions, or more than [`MAX_SUBSCRIPT_EXPANSIONS`] expansion inside them
/// (`${a[$i]}${b[$j]}`, `${x[${y[...`): brush-parser's word grammar backtracks on them
/// in exponential time (four `${x[${y[ ~:...]}` in one word took 15 s to parse, eight
/// `${a[4(/H mm ~:mm}` more than 30 s, a fuzzed command of 849 bytes ran for hours).
/// Counted over the bytes with quotes and closing brackets taken loosely, so it errs
/// towards refusing; none of the real corpus's 636 commands has a bracket inside an
/// expansion at all.
pub(super) fn tame_subscripts(text: &str) -> Result<(), Problem> {
    tame_subscripts_in(text, false)
}

/// [`tame_subscripts`] over a whole command before brush-parser's program grammar sees it:
/// that grammar tries a word that starts like `name[` as an array assignment, through the
/// same word grammar (`(s[${a[$(x)x ${a[$(x)x ${a[$(x)x ${a[$(x)x }/ }/ }/ }/` took
/// 0.46 s, each `${a[$(x)x` more twenty times longer; a fuzzed command of 2 KB took
/// 4 s in the fuzz build). The counts start again at each blank or operator outside any
/// expansion, as the words do.
pub(super) fn tame_subscripts_in_command(command: &str) -> Result<(), Problem> {
    tame_subscripts_in(command, true)
}

pub(super) fn tame_subscripts_in(text: &str, command: bool) -> Result<(), Problem> {
    let b = text.as_bytes();
    // Without a `[` or `$((`, only the nesting is counted, and only when it could be deep.
    if memchr::memchr(b'[', b).is_none()
        && memchr::memmem::find(b, b"$((").is_none()
        && memchr::memchr_iter(b'$', b)
            .nth(MAX_EXPANSION_NESTING - 1)
            .is_none()
        && memchr::memchr2_iter(b'(', b'{', b)
            .nth(MAX_OPEN_BRACKETS)
            .is_none()
    {
        return Ok(());
    }
    // The expansions open, innermost last: `P` for `${`, `A` for `$((`, `Q` for `$[`, `C`
    // for `$(`, each with the plain `(` and `{` open directly inside it. A `[` is an array
    // subscript when the innermost expansion around it is a parameter or arithmetic one;
    // inside a command substitution (a here-document's text in `$(cat <<EOF ...)`) it is
    // not. The depths are counted as they change, so each byte costs the same however deep.
    let mut open: Vec<(u8, usize)> = Vec::new();
    let (mut arithmetic, mut plain) = (0usize, 0usize);
    let (mut brackets, mut nested, mut subscripts) = (0usize, 0usize, 0usize);
    let unbounded = |what: String, instead: &str| {
        let shown: String = text.chars().take(80).collect();
        Problem::Unsupported(format!(
            "`{shown}` has {what}; it cannot be judged in bounded time. {instead}"
        ))
    };
    let subscript = |what: &str| {
        unbounded(
            format!("{what} (like `${{a[${{i}}]}}${{b[${{j}}]}}`)"),
            "Put each index in a variable first (`i=...; echo \"${a[$i]}\"`), one array subscript per word",
        )
    };
    const INNER_FIRST: &str = "Compute the inner values into variables first";
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'$' if matches!(b.get(i + 1), Some(b'{' | b'(' | b'[')) => {
                if brackets > 0 {
                    nested += 1;
                    if nested > MAX_SUBSCRIPT_EXPANSIONS {
                        return Err(subscript(
                            "expansions nested in more than one array subscript",
                        ));
                    }
                }
                if open.len() >= MAX_EXPANSION_NESTING {
                    return Err(unbounded(
                        format!("expansions nested more than {MAX_EXPANSION_NESTING} deep"),
                        INNER_FIRST,
                    ));
                }
                // `$((` opens two parentheses, and `))` closes them.
                let (kind, inside, len) = match (b[i + 1], b.get(i + 2)) {
                    (b'{', _) => (b'P', 0, 2),
                    (b'(', Some(b'(')) => {
                        if arithmetic >= MAX_ARITHMETIC_NESTING {
                            return Err(unbounded(
                                format!("arithmetic expansions `$((` nested more than {MAX_ARITHMETIC_NESTING} deep"),
                                INNER_FIRST,
                            ));
                        }
                        arithmetic += 1;
                        plain += 1;
                        (b'A', 1, 3)
                    }
                    (b'(', _) => (b'C', 0, 2),
                    _ => (b'Q', 0, 2),
                };
                open.push((kind, inside));
                i += len;
                continue;
            }
            b'(' | b'{' if !open.is_empty() => {
                if let Some((_, inside)) = open.last_mut() {
                    *inside += 1;
                }
                plain += 1;
                // A word's parentheses and braces inside expansions, open at once (in a
                // command they may be a here-document's text, which the word grammar
                // never sees).
                if !command && plain > MAX_OPEN_BRACKETS {
                    return Err(unbounded(
                        format!("more than {MAX_OPEN_BRACKETS} parentheses or braces open at once inside expansions"),
                        "Close them, quote them, or split the word",
                    ));
                }
            }
            b'[' if matches!(open.last(), Some((b'P' | b'A' | b'Q', _))) => {
                brackets += 1;
                subscripts += 1;
                if subscripts > MAX_SUBSCRIPTS {
                    return Err(subscript("more than one array subscript in one word"));
                }
            }
            b']' if brackets > 0 => brackets -= 1,
            b']' if open.last() == Some(&(b'Q', 0)) => {
                open.pop();
            }
            b'}' | b')' if !open.is_empty() => match open.last_mut() {
                Some((_, inside)) if *inside > 0 => {
                    *inside -= 1;
                    plain -= 1;
                }
                _ => {
                    if let Some((b'A', _)) = open.pop() {
                        arithmetic -= 1;
                    }
                }
            },
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>'
                if command && open.is_empty() =>
            {
                (brackets, nested, subscripts) = (0, 0, 0);
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Whether the unquoted braces of a word are few, shallow and matched.
pub(super) fn braces_are_tame(raw: &str) -> bool {
    let (mut depth, mut max, mut count) = (0usize, 0usize, 0usize);
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '{' if !single && !double => {
                depth += 1;
                count += 1;
                max = max.max(depth);
            }
            '}' if !single && !double => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth == 0 && max <= MAX_BRACE_DEPTH && count <= MAX_BRACES_PER_WORD
}

/// Refuses runs of digits that overflow the parser's numbers (it would panic on them) and
/// long runs of `(` (the grammar backtracks on them for seconds), in one pass over the
/// bytes: `(` and blanks are ASCII, and every byte of a non-ASCII character ends a run as
/// the character would. A number is reported before a parenthesis run anywhere.
pub(super) fn runs(command: &str) -> Result<(), Problem> {
    let b = command.as_bytes();
    let mut paren_problem = None;
    let mut i = 0;
    // Hop from one digit or `(` to the next; only runs of them matter.
    while let Some(off) = first_digit_or_paren(&b[i..]) {
        let start = i + off;
        let mut j = start;
        if b[start] == b'(' {
            // Blanks between the parentheses do not end the run.
            let mut parens = 0usize;
            while let Some(&c) = b.get(j) {
                match c {
                    b'(' => parens += 1,
                    b' ' | b'\t' | b'\n' => {}
                    _ => break,
                }
                j += 1;
            }
            if parens > MAX_OPEN_PARENS && paren_problem.is_none() {
                paren_problem = Some(Problem::Parse(format!(
                    "the command opens more than {MAX_OPEN_PARENS} parentheses in a row; it cannot be judged"
                )));
            }
        } else {
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            let n = j - start;
            if n > MAX_DIGITS || (n > MAX_FD_DIGITS && matches!(b.get(j), Some(b'<' | b'>'))) {
                return Err(Problem::Parse(format!(
                    "the command holds a number of {n} digits at byte {start}; numbers that long cannot be judged"
                )));
            }
        }
        i = j;
    }
    paren_problem.map_or(Ok(()), Err)
}

/// Characters that render as nothing (or reorder text) yet change what runs: zero-width and
/// bidirectional controls, soft hyphen, fillers, variation selectors, Unicode tags (the
/// Default_Ignorable_Code_Point set, plus the Arabic letter mark).
pub(super) fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff0}'..='\u{fff8}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e0fff}')
}

/// With a here-document pending, brush-parser's tokenizer can drop the body of a
/// substitution on the same line: `echo <<A $(touch x)` becomes the words `touch`, `x` and
/// `$()`, so `touch` would never be judged although bash runs it. Such a command is
/// refused: a word with an emptied substitution that the text does not hold.
pub(super) fn heredoc_tokens(command: &str, tokens: &[brush_parser::Token]) -> Result<(), Problem> {
    for t in tokens {
        if let brush_parser::Token::Word(w, _) = t {
            let emptied = ["$()", "${}", "``"].iter().any(|e| w.contains(e));
            if emptied && !command.contains(w.as_str()) {
                return Err(Problem::Unsupported(format!(
                    "a command substitution or expansion on the line of a here-document (`{w}`) cannot be \
                     judged reliably; run it in a separate command, or put the here-document last"
                )));
            }
        }
    }
    Ok(())
}

/// In an unquoted here-document bash joins a line that ends in a backslash with the next
/// before it looks for the delimiter (`E\` then `OF` ends a here-document delimited by
/// `EOF`; `ab\` then `EOF` does not), and brush-parser does not: the two would disagree on
/// where the here-document ends, and the lines after it could run unjudged. Such a body is
/// refused (a line ending in an odd number of backslashes; `\\` is a backslash).
pub(super) fn heredoc_continuation(body: &str) -> Result<(), Problem> {
    for line in body.lines() {
        let trailing = line.bytes().rev().take_while(|&b| b == b'\\').count();
        if trailing % 2 == 1 {
            let shown: String = line.chars().take(60).collect();
            return Err(Problem::Unsupported(format!(
                "a line of a here-document ends in a backslash (`{shown}`): bash joins it with the next line and may end \
                 the here-document elsewhere than it reads here; quote the delimiter (`<<'EOF'`) or remove the backslash"
            )));
        }
    }
    Ok(())
}

/// Whether a glob word may expand to a path through `..`: bash 5.1 and older let a
/// component that starts with a literal dot (`.*`, `.?`, `.[.]*`) match `.` and `..`
/// (5.2 skips them by default, `globskipdots`), so `cat .*/x` reads `../x` there. A
/// component counts when its pattern matches `..`, when it holds an expansion, or when its
/// pattern does not compile. `text` is the word's value (quotes removed) or, without one,
/// its raw text; quotes are dropped loosely, which errs towards refusing.
pub fn glob_reaches_parent(text: &str) -> bool {
    text.split('/').any(|part| {
        let c: String = part
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        if !c.starts_with('.') || !has_glob(&c) {
            return false;
        }
        // Expansions, and bracket classes globset does not know (`[[:punct:]]`, `[=.=]`,
        // `[.x.]`).
        if c.contains(['$', '`']) || c.contains("[:") || c.contains("[=") || c.contains("[.") {
            return true;
        }
        globset::GlobBuilder::new(&c)
            .literal_separator(true)
            .build()
            .map_or(true, |g| g.compile_matcher().is_match(".."))
    })
}

/// The variables an arithmetic expression assigns (`x = 1`, `x += 2`, `x++`, `--x`), by
/// name. An assignment to a name built at run time (`$n = 1`, `${n} = 1`: bash expands the
/// name first) is refused. The text is scanned loosely: `==`, `<=`, `>=` and `!=` compare.
pub fn arithmetic_assignments(text: &str) -> Result<Vec<&str>, Problem> {
    let b = text.as_bytes();
    let mut names = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let skip_blanks = |mut j: usize| {
        while b.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        j
    };
    let back_blanks = |mut j: usize| {
        while j > 0 && b[j - 1].is_ascii_whitespace() {
            j -= 1;
        }
        j
    };
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if !ident(b[i]) && !matches!(b[i], b'}' | b'$') {
            i += 1;
            continue;
        }
        // An operand: a name, a number, or an expansion ending in `}` or a `$name`.
        let dynamic = b[i] == b'}' || b[i] == b'$';
        if b[i] == b'$' {
            i += 1;
        }
        if b[i..].first() == Some(&b'}') {
            i += 1;
        } else {
            while b.get(i).is_some_and(|&c| ident(c)) {
                i += 1;
            }
        }
        if i == start {
            i += 1;
            continue;
        }
        let word = &text[start..i];
        let after = skip_blanks(i);
        let op_after = match (b.get(after), b.get(after + 1), b.get(after + 2)) {
            (Some(b'='), Some(b'='), _) => false,
            (Some(b'='), _, _) => true,
            (Some(b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'^' | b'|'), Some(b'='), _) => true,
            (Some(b'+'), Some(b'+'), _) | (Some(b'-'), Some(b'-'), _) => true,
            (Some(b'<'), Some(b'<'), Some(b'=')) | (Some(b'>'), Some(b'>'), Some(b'=')) => true,
            _ => false,
        };
        let before = back_blanks(start);
        let op_before = before >= 2 && matches!(&b[before - 2..before], b"++" | b"--");
        if op_after || op_before {
            if dynamic || word.starts_with('$') {
                let shown: String = text.trim().chars().take(60).collect();
                return Err(Problem::Unsupported(format!(
                    "the arithmetic `{shown}` assigns to a variable whose name is built at run time; assign to a literal name"
                )));
            }
            if !word.as_bytes()[0].is_ascii_digit() {
                names.push(word);
            }
        }
    }
    Ok(names)
}

/// The subscript of a variable's name as a builtin takes it (`a[i]` of `test -v`, `read`,
/// `unset`; `a[i]=v` of `declare`), which bash evaluates as arithmetic: the text between the
/// brackets.
pub fn name_subscript(text: &str) -> Option<&str> {
    let (name, rest) = text.split_once('[')?;
    let first = name.bytes().next()?;
    let ok =
        !first.is_ascii_digit() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    let inner = match rest.find("]=").or_else(|| rest.find("]+=")) {
        Some(k) => &rest[..k],
        None => rest.strip_suffix(']')?,
    };
    ok.then_some(inner)
}

/// The variables an arithmetic expression reads the text of: bare names (`x + 1`) and
/// expansions (`$x`, `${x}`, `${#x}`, `${x:-y}`); a positional parameter as written (`1`,
/// `@`, `*`), and an indirect expansion (`${!x}`, which may name any variable) as `!`. The
/// text is scanned loosely, towards naming more: the digits of `16#ff` are no name.
pub fn arithmetic_names(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut names = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'$' {
            i += 1;
            if b.get(i) == Some(&b'{') {
                i += 1;
                match b.get(i) {
                    Some(b'!') => {
                        names.push("!");
                        i += 1;
                        continue;
                    }
                    Some(b'#') => i += 1,
                    _ => {}
                }
            }
            let start = i;
            match b.get(i) {
                Some(b'@' | b'*') => i += 1,
                Some(d) if d.is_ascii_digit() => {
                    while b.get(i).is_some_and(u8::is_ascii_digit) {
                        i += 1;
                    }
                }
                Some(&d) if d.is_ascii_alphabetic() || d == b'_' => {
                    while b.get(i).is_some_and(|&c| ident(c)) {
                        i += 1;
                    }
                }
                _ => continue,
            }
            names.push(&text[start..i]);
        } else if c.is_ascii_digit() {
            // A number, with its base (`16#ff`, `0x1f`).
            while b
                .get(i)
                .is_some_and(|&c| ident(c) || c == b'#' || c == b'@')
            {
                i += 1;
            }
        } else if ident(c) {
            let start = i;
            while b.get(i).is_some_and(|&c| ident(c)) {
                i += 1;
            }
            names.push(&text[start..i]);
        } else {
            i += 1;
        }
    }
    names
}

#[cfg(test)]
mod shell_state_tests {
    use super::*;

    #[test]
    fn here_document_lines_ending_in_a_backslash() {
        for (body, refused) in [
            ("E\\\nOF\n", true),
            ("ab\\\n", true),
            ("a\\\\\\\n", true),
            ("ab\\\\\n", false),
            ("plain\n$(x)\n", false),
            ("a\\b\n", false),
        ] {
            assert_eq!(heredoc_continuation(body).is_err(), refused, "{body:?}");
        }
    }

    #[test]
    fn globs_that_bash_5_1_expands_through_the_parent() {
        for (word, reaches) in [
            (".*", true),
            (".*/x", true),
            ("src/.?", true),
            (".[.]*", true),
            ("'.'*", true),
            (".$x*", true),
            ("\\.*", true),
            (".[[:punct:]]*", true),
            (".[=.=]", true),
            ("..*", true),
            (".[!.]*", false),
            (".[^.]*", false),
            ("*", false),
            ("src/*.md", false),
            (".env", false),
            ("a.*", false),
        ] {
            assert_eq!(glob_reaches_parent(word), reaches, "{word}");
        }
    }

    #[test]
    fn subscripts_of_names_builtins_take() {
        for (text, want) in [
            ("a[x]", Some("x")),
            ("a[$i + 1]=v", Some("$i + 1")),
            ("a[x]+=v", Some("x")),
            ("x", None),
            ("1[x]", None),
            ("-v", None),
            ("a[x", None),
        ] {
            assert_eq!(name_subscript(text), want, "{text}");
        }
    }

    #[test]
    fn names_arithmetic_reads() {
        for (text, want) in [
            ("x", vec!["x"]),
            ("x + 1", vec!["x"]),
            ("$x*2", vec!["x"]),
            ("${x} - ${#y} + ${z:-w}", vec!["x", "y", "z", "w"]),
            ("16#ff + 0x1f + 10", vec![]),
            ("$1 + ${2} + $@ + $#", vec!["1", "2", "@"]),
            ("${!n} + 1", vec!["!", "n"]),
            ("a[i] = $? + $$", vec!["a", "i"]),
            ("i = 0; i < n; i++", vec!["i", "i", "n", "i"]),
        ] {
            assert_eq!(arithmetic_names(text), want, "{text}");
        }
    }

    #[test]
    fn names_arithmetic_assigns() {
        for (text, want) in [
            ("x = 1", Ok(vec!["x"])),
            ("i++", Ok(vec!["i"])),
            ("--j", Ok(vec!["j"])),
            ("a += 2, b <<= 1", Ok(vec!["a", "b"])),
            ("x == 1 && y <= 2 || z != 3 || w >= 4", Ok(vec![])),
            ("i = 0; i < 3; i++", Ok(vec!["i", "i"])),
            ("1 + 2", Ok(vec![])),
            ("$n = 1", Err(())),
            ("${n} += 1", Err(())),
        ] {
            assert_eq!(arithmetic_assignments(text).map_err(|_| ()), want, "{text}");
        }
    }
}
