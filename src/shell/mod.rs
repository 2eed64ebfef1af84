//! Parsing a command line with a real bash grammar (`brush-parser`) and flattening it into
//! the simple commands that bash would run.
//!
//! Everything that runs is found: pipeline stages, list items, subshells, groups, the
//! conditions and bodies of `if`/`for`/`while`/`case`, command substitutions anywhere in a
//! word (arguments, assignments, redirect targets, here-documents with an unquoted
//! delimiter), process substitutions. What cannot be judged statically is reported as a
//! [`Problem`] so the caller denies it: fail closed.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use brush_parser::ast;
use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, TildeExpr, WordPiece, WordPieceWithSource,
};

/// Lexical normalization of a path is the file-system layer's ([`crate::resolve`]).
pub use crate::resolve::normalize;

/// Longest command accepted, in bytes.
pub const MAX_COMMAND_LEN: usize = 64 * 1024;
/// Deepest nesting of substitutions and `sh -c` scripts.
pub const MAX_DEPTH: usize = 12;
/// Most unquoted `{` in one word that brace expansion will parse, and their deepest nesting.
const MAX_BRACES_PER_WORD: usize = 16;
const MAX_BRACE_DEPTH: usize = 4;
/// Most directories a command may be in after `cd`s on different branches.
const MAX_CWDS: usize = 32;
/// Longest run of `(` (spaces between allowed): the grammar backtracks on deep nesting.
const MAX_OPEN_PARENS: usize = 8;
/// Longest run of digits accepted: the parser's numbers (brace sequences, `~+N`, the fd of
/// `N>`) overflow beyond it.
const MAX_DIGITS: usize = 18;
/// Longest run of digits accepted right before `<` or `>` (a file descriptor, 32 bits).
const MAX_FD_DIGITS: usize = 9;
/// Most words one brace expansion may produce.
const MAX_BRACE_WORDS: usize = 256;
/// Most bytes the words of one brace expansion may come to.
const MAX_BRACE_BYTES: usize = 16 * 1024;

/// Why a command cannot be judged. The caller turns these into reason codes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `parse_error`: the text does not parse, or holds bytes that make a parse unsafe.
    Parse(String),
    /// `unsupported_construct`: parses, but cannot be judged statically.
    Unsupported(String),
}

impl Problem {
    pub fn reason(&self) -> &'static str {
        match self {
            Problem::Parse(_) => "parse_error",
            Problem::Unsupported(_) => "unsupported_construct",
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Problem::Parse(m) | Problem::Unsupported(m) => m,
        }
    }
}

/// One shell word after analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordInfo {
    /// The word as written.
    pub raw: String,
    /// The value after quote removal and tilde expansion, when it does not depend on
    /// anything known only at run time (variables, substitutions, `~user`).
    pub value: Option<String>,
    /// Holds unquoted glob characters (`*`, `?`, `[`, extglob).
    pub glob: bool,
}

impl WordInfo {
    /// A literal word (from an `sh -c` split or a test).
    pub fn literal(s: &str) -> Self {
        WordInfo { raw: s.to_string(), value: Some(s.to_string()), glob: false }
    }

    /// The static value, or `None` when it is dynamic or a glob.
    pub fn exact(&self) -> Option<&str> {
        if self.glob {
            None
        } else {
            self.value.as_deref()
        }
    }

    /// How to show this word in evidence.
    pub fn display(&self) -> String {
        self.shown().to_string()
    }

    /// [`Self::display`], borrowed.
    pub fn shown(&self) -> &str {
        match &self.value {
            Some(v) if !self.glob => v,
            _ => &self.raw,
        }
    }
}

/// The kind of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirKind {
    /// `<`
    Read,
    /// `>`, `>|`, `&>`, `n>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `>&N`, `<&N`, `N>&-`: no file.
    Dup,
    /// `<<`, `<<<`: data.
    Data,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirKind,
    /// The file, for kinds that name one.
    pub target: Option<WordInfo>,
}

/// Where a simple command was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    TopLevel,
    Substitution,
    ProcessSubstitution,
    Script,
}

/// One command bash would run, with the directories it could run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCmd {
    /// Name and arguments (brace expansion already applied).
    pub words: Vec<WordInfo>,
    /// `NAME=value` prefixes (and standalone assignments).
    pub assignments: Vec<(String, WordInfo)>,
    pub redirects: Vec<Redirect>,
    /// The working directories this command may run in; `None` when a `cd` to an
    /// unknown place came before it. Shared by the commands that run in the same places.
    pub cwds: Cwds,
    pub context: Context,
    /// The command whose output this one reads through a pipe: set when it is a stage of a
    /// pipeline whose previous stage is a simple command (`find . -name '*.md' | xargs cat`);
    /// `None` otherwise (the first stage, a stage after a compound command, a command inside
    /// a compound stage). A redirect of its own still takes precedence.
    pub stdin_from: Option<Rc<SimpleCmd>>,
}

/// The flattened command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flat {
    pub commands: Vec<SimpleCmd>,
    pub problems: Vec<Problem>,
}

/// Parse options shared by every parse.
fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions::default()
}

/// The bytes [`precheck`] looks at closer: control bytes but tab and newline, DEL, and
/// every byte of non-ASCII text (invisible and formatting characters have many lead bytes).
static SUSPECT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b < 0x20 && b != 0x09 && b != 0x0a) || b >= 0x7f;
        b += 1;
    }
    t
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether a byte of `v` is zero.
fn has_zero(v: u64) -> bool {
    v.wrapping_sub(ONES) & !v & HIGH != 0
}

/// The index of the first byte of `bytes` that `wanted` accepts, eight bytes at a time: a
/// word for which `maybe` is false holds none and is skipped whole.
fn first_byte(bytes: &[u8], maybe: impl Fn(u64) -> bool, wanted: impl Fn(u8) -> bool) -> Option<usize> {
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
    chunks.remainder().iter().position(|&b| wanted(b)).map(|i| base + i)
}

/// The index of the first [`SUSPECT`] byte: a word with no byte below 0x20 and none at or
/// above 0x7F is skipped whole.
fn first_suspect(bytes: &[u8]) -> Option<usize> {
    let maybe = |x: u64| x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0 || x & HIGH != 0 || has_zero(x ^ (ONES * 0x7f));
    first_byte(bytes, maybe, |b| SUSPECT[b as usize])
}

/// The index of the first ASCII digit or `(`.
fn first_digit_or_paren(bytes: &[u8]) -> Option<usize> {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // A byte of `x` in 0x30..=0x39 (bytes at or above 0x80 are never counted), or a `(`.
    let maybe = |x: u64| {
        let low = x & LOW7;
        (ONES * (127 + 0x3a)).wrapping_sub(low) & !x & low.wrapping_add(ONES * (127 - 0x2f)) & HIGH != 0
            || has_zero(x ^ (ONES * u64::from(b'(')))
    };
    first_byte(bytes, maybe, |c| c.is_ascii_digit() || c == b'(')
}

/// Rejects text that must not reach a parser: NUL, CR and other control characters,
/// invisible and bidirectional formatting characters, and over-long input.
pub fn precheck(command: &str) -> Result<(), Problem> {
    if command.len() > MAX_COMMAND_LEN {
        return Err(Problem::Parse(format!(
            "the command is {} bytes long; the limit is {} bytes. Split it into smaller commands.",
            command.len(),
            MAX_COMMAND_LEN
        )));
    }
    runs(command)?;
    // Only control bytes and non-ASCII characters need a closer look. Hop from one to the
    // next: the bytes between are printable ASCII, so each hop lands on a character's
    // first byte.
    let bytes = command.as_bytes();
    let mut at = 0;
    // The character before `at`, when it is not ASCII.
    let mut prev_wide: Option<(usize, char)> = None;
    while let Some(off) = first_suspect(&bytes[at..]) {
        let i = at + off;
        let Some(c) = command.get(i..).and_then(|t| t.chars().next()) else { break };
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
            c if invisible(c) && !emoji_variation => Some("an invisible or bidirectional formatting character"),
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

/// Whether a word has a `{` that brace expansion could start at: outside quotes, not
/// escaped. (brush's grammar also expands `${a,b}`, which bash leaves alone; such words
/// still go to it, so both fail closed the same way.) Words without one (`'{print $1}'`,
/// `"${x}"`, JSON in quotes) skip brush's brace grammar; a test holds this to it.
fn unquoted_brace(raw: &str) -> bool {
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
const MAX_SUBSCRIPT_EXPANSIONS: usize = 1;

/// Most arithmetic expansions (`$((`) open inside one another: brush-parser's word grammar
/// tries each as arithmetic, then as a command substitution of a subshell, so a failure
/// deep inside doubles the work at every level (eighteen `$(( &` took 0.37 s, each one more
/// twice as long).
const MAX_ARITHMETIC_NESTING: usize = 3;

/// Most expansions (`$(`, `${`, `$((`, `$[`) open inside one another: brush-parser's
/// grammars backtrack at each level, so the work may multiply with the depth. None of the
/// 636 real commands nests more than two.
const MAX_EXPANSION_NESTING: usize = 6;

/// Most plain parentheses and braces a word may have open at once inside its expansions:
/// the word grammar tries each `(` in a command substitution as a subshell and as text
/// (a fuzzed word with 28 open took 1.4 s). The real commands open at most 10.
const MAX_OPEN_BRACKETS: usize = 12;

/// Most brackets (array subscripts) a word may hold inside expansions: with two, a fuzzed
/// command of 1 KB still took 90 ms.
const MAX_SUBSCRIPTS: usize = 1;

/// Refuses a word (or here-document) with more than [`MAX_SUBSCRIPTS`] array subscript
/// inside expansions, or more than [`MAX_SUBSCRIPT_EXPANSIONS`] expansion inside them
/// (`${a[$i]}${b[$j]}`, `${x[${y[...`): brush-parser's word grammar backtracks on them
/// in exponential time (four `${x[${y[ ~:...]}` in one word took 15 s to parse, eight
/// `${a[4(/H mm ~:mm}` more than 30 s, a fuzzed command of 849 bytes ran for hours).
/// Counted over the bytes with quotes and closing brackets taken loosely, so it errs
/// towards refusing; none of the real corpus's 636 commands has a bracket inside an
/// expansion at all.
fn tame_subscripts(text: &str) -> Result<(), Problem> {
    tame_subscripts_in(text, false)
}

/// [`tame_subscripts`] over a whole command before brush-parser's program grammar sees it:
/// that grammar tries a word that starts like `name[` as an array assignment, through the
/// same word grammar (`(s[${a[$(x)x ${a[$(x)x ${a[$(x)x ${a[$(x)x }/ }/ }/ }/` took
/// 0.46 s, each `${a[$(x)x` more twenty times longer; a fuzzed command of 2 KB took
/// 4 s in the fuzz build). The counts start again at each blank or operator outside any
/// expansion, as the words do.
fn tame_subscripts_in_command(command: &str) -> Result<(), Problem> {
    tame_subscripts_in(command, true)
}

fn tame_subscripts_in(text: &str, command: bool) -> Result<(), Problem> {
    let b = text.as_bytes();
    // Without a `[` or `$((`, only the nesting is counted, and only when it could be deep.
    if memchr::memchr(b'[', b).is_none()
        && memchr::memmem::find(b, b"$((").is_none()
        && memchr::memchr_iter(b'$', b).nth(MAX_EXPANSION_NESTING - 1).is_none()
        && memchr::memchr2_iter(b'(', b'{', b).nth(MAX_OPEN_BRACKETS).is_none()
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
        Problem::Unsupported(format!("`{shown}` has {what}; it cannot be judged in bounded time. {instead}"))
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
                        return Err(subscript("expansions nested in more than one array subscript"));
                    }
                }
                if open.len() >= MAX_EXPANSION_NESTING {
                    return Err(unbounded(format!("expansions nested more than {MAX_EXPANSION_NESTING} deep"), INNER_FIRST));
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
            b' ' | b'\t' | b'\n' | b';' | b'|' | b'&' | b'(' | b')' | b'<' | b'>' if command && open.is_empty() => {
                (brackets, nested, subscripts) = (0, 0, 0);
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Whether the unquoted braces of a word are few, shallow and matched.
fn braces_are_tame(raw: &str) -> bool {
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
fn runs(command: &str) -> Result<(), Problem> {
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
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff0}'..='\u{fff8}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e0fff}')
}

/// Parses a whole program with brush-parser, after the checks that refuse what it cannot
/// parse safely or in time ([`precheck`]).
pub fn parse_program(command: &str) -> Result<ast::Program, Problem> {
    precheck(command)?;
    // A command with a here-document is tokenized first, to check the tokens (see
    // [`heredoc_tokens`]), and parsed from them.
    tame_subscripts_in_command(command)?;
    let has_heredoc = command.match_indices("<<").any(|(i, _)| command.as_bytes().get(i + 2) != Some(&b'<'));
    let tokens = has_heredoc
        .then(|| brush_parser::tokenize_str_with_options(command, &options().tokenizer_options()).ok())
        .flatten();
    let parsed = match tokens {
        Some(tokens) => {
            heredoc_tokens(command, &tokens)?;
            brush_parser::parse_tokens(&tokens, &options())
        }
        None => brush_parser::Parser::new(std::io::Cursor::new(command.as_bytes()), &options()).parse_program(),
    };
    parsed.map_err(|e| Problem::Parse(format!("the command does not parse as bash: {e}")))
}

/// With a here-document pending, brush-parser's tokenizer can drop the body of a
/// substitution on the same line: `echo <<A $(touch x)` becomes the words `touch`, `x` and
/// `$()`, so `touch` would never be judged although bash runs it. Such a command is
/// refused: a word with an emptied substitution that the text does not hold.
fn heredoc_tokens(command: &str, tokens: &[brush_parser::Token]) -> Result<(), Problem> {
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

/// Parses `command` with brush-parser and nothing else (no precheck, no flattening): the
/// reference the decision's speed is measured against. Returns the number of complete
/// commands.
pub fn bare_parse(command: &str) -> Result<usize, Problem> {
    let mut parser = brush_parser::Parser::new(std::io::Cursor::new(command.as_bytes()), &options());
    parser
        .parse_program()
        .map(|p| p.complete_commands.len())
        .map_err(|e| Problem::Parse(format!("the command does not parse as bash: {e}")))
}

/// Parses `command` and flattens it, starting in `cwd`.
pub fn flatten(command: &str, cwd: &Path, home: Option<&Path>) -> Flat {
    let mut f = Flattener { home: home.map(Path::to_path_buf), out: Flat::default(), depth: 0, seen_dirs: vec![cwd.to_path_buf()], pipe_in: None, last_simple: None };
    match parse_program(command) {
        Ok(program) => {
            let state: Cwds = Some(Rc::from([cwd.to_path_buf()]));
            f.program(&program, state, Context::TopLevel);
        }
        Err(p) => f.out.problems.push(p),
    }
    f.out
}

/// Flattens a script found inside another command (`sh -c SCRIPT`), running in `cwds`.
pub fn flatten_script(script: &str, cwds: Option<&[PathBuf]>, home: Option<&Path>, depth: usize) -> Flat {
    let mut f = Flattener { home: home.map(Path::to_path_buf), out: Flat::default(), depth, seen_dirs: cwds.map(<[PathBuf]>::to_vec).unwrap_or_default(), pipe_in: None, last_simple: None };
    let cwds: Cwds = cwds.map(Rc::from);
    if depth > MAX_DEPTH {
        f.out.problems.push(Problem::Unsupported("scripts are nested too deeply".into()));
        return f.out;
    }
    match parse_program(script) {
        Ok(program) => {
            f.program(&program, cwds, Context::Script);
        }
        Err(p) => f.out.problems.push(p),
    }
    f.out
}

/// Possible working directories: `None` is "unknown".
pub type Cwds = Option<Rc<[PathBuf]>>;

/// Working directories after a command, when it succeeded and when it failed.
struct Post {
    ok: Cwds,
    fail: Cwds,
}

fn union(a: &Cwds, b: &Cwds) -> Cwds {
    match (a, b) {
        (Some(a), Some(b)) => {
            if b.iter().all(|d| a.contains(d)) {
                return Some(a.clone());
            }
            let mut v = a.to_vec();
            for d in b.iter() {
                if !v.contains(d) {
                    v.push(d.clone());
                }
            }
            // Past a few dozen possible directories, treat the directory as unknown: the
            // judgement of every later command grows with this set.
            if v.len() > MAX_CWDS {
                return None;
            }
            Some(v.into())
        }
        _ => None,
    }
}

struct Flattener {
    home: Option<PathBuf>,
    out: Flat,
    depth: usize,
    /// Every directory a `cd` could have reached (for `cd -` and `popd`).
    seen_dirs: Vec<PathBuf>,
    /// The simple command whose output the next simple command reads (a pipeline stage).
    pipe_in: Option<Rc<SimpleCmd>>,
    /// The simple command pushed last.
    last_simple: Option<Rc<SimpleCmd>>,
}

impl Flattener {
    fn problem(&mut self, p: Problem) {
        if !self.out.problems.contains(&p) {
            self.out.problems.push(p);
        }
    }

    fn program(&mut self, p: &ast::Program, cwds: Cwds, ctx: Context) -> Cwds {
        let mut state = cwds;
        for cc in &p.complete_commands {
            state = self.compound_list(cc, state, ctx);
        }
        state
    }

    fn compound_list(&mut self, list: &ast::CompoundList, cwds: Cwds, ctx: Context) -> Cwds {
        let mut state = cwds;
        for item in &list.0 {
            let post = self.and_or(&item.0, state.clone(), ctx);
            state = match item.1 {
                // `&` runs in a subshell: no directory change leaks out.
                ast::SeparatorOperator::Async => state,
                ast::SeparatorOperator::Sequence => union(&post.ok, &post.fail),
            };
        }
        state
    }

    fn and_or(&mut self, list: &ast::AndOrList, cwds: Cwds, ctx: Context) -> Post {
        let mut post = self.pipeline(&list.first, cwds, ctx);
        for next in &list.additional {
            post = match next {
                ast::AndOr::And(p) => {
                    let b = self.pipeline(p, post.ok.clone(), ctx);
                    Post { ok: b.ok, fail: union(&post.fail, &b.fail) }
                }
                ast::AndOr::Or(p) => {
                    let b = self.pipeline(p, post.fail.clone(), ctx);
                    Post { ok: union(&post.ok, &b.ok), fail: b.fail }
                }
            };
        }
        post
    }

    fn pipeline(&mut self, p: &ast::Pipeline, cwds: Cwds, ctx: Context) -> Post {
        if p.seq.len() == 1 {
            if let Some(cmd) = p.seq.first() {
                let post = self.command(cmd, cwds, ctx);
                return if p.bang { Post { ok: post.fail, fail: post.ok } } else { post };
            }
        }
        // Every stage of a multi-stage pipeline runs in a subshell. A simple stage records the
        // simple stage before it, whose output it reads.
        let mut prev: Option<Rc<SimpleCmd>> = None;
        for cmd in &p.seq {
            let simple = matches!(cmd, ast::Command::Simple(_));
            self.pipe_in = if simple { prev.take() } else { None };
            self.last_simple = None;
            self.command(cmd, cwds.clone(), ctx);
            self.pipe_in = None;
            prev = if simple { self.last_simple.take() } else { None };
        }
        Post { ok: cwds.clone(), fail: cwds }
    }

    fn command(&mut self, c: &ast::Command, cwds: Cwds, ctx: Context) -> Post {
        match c {
            ast::Command::Simple(s) => self.simple(s, cwds, ctx),
            ast::Command::Compound(cc, redirects) => {
                if let Some(r) = redirects {
                    let redirs = self.redirects(&r.0, &cwds, ctx);
                    self.push_redirect_only(redirs, cwds.clone(), ctx);
                }
                self.compound(cc, cwds, ctx)
            }
            ast::Command::Function(def) => {
                self.problem(Problem::Unsupported(format!(
                    "function definitions (`{}`) are not allowed: run the commands directly",
                    def.fname.value
                )));
                // Judge the body too, so the evidence shows what it would run.
                self.compound(&def.body.0, cwds.clone(), ctx);
                Post { ok: cwds.clone(), fail: cwds }
            }
            ast::Command::ExtendedTest(t, redirects) => {
                if let Some(r) = redirects {
                    let redirs = self.redirects(&r.0, &cwds, ctx);
                    self.push_redirect_only(redirs, cwds.clone(), ctx);
                }
                self.extended_test(&t.expr, &cwds, ctx);
                Post { ok: cwds.clone(), fail: cwds }
            }
        }
    }

    fn push_redirect_only(&mut self, redirects: Vec<Redirect>, cwds: Cwds, ctx: Context) {
        if !redirects.is_empty() {
            self.out.commands.push(SimpleCmd { words: vec![], assignments: vec![], redirects, cwds, context: ctx, stdin_from: None });
        }
    }

    fn extended_test(&mut self, e: &ast::ExtendedTestExpr, cwds: &Cwds, ctx: Context) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a, cwds, ctx);
                self.extended_test(b, cwds, ctx);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a, cwds, ctx)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.test_operand(&w.value, cwds, ctx);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.test_operand(&a.value, cwds, ctx);
                self.test_operand(&b.value, cwds, ctx);
            }
        }
    }

    /// An operand of `[[ ]]`: `-v` and the arithmetic comparisons evaluate subscripts, so
    /// quoted substitution text in it would run (`[[ -v 'a[$(cmd)]' ]]`).
    fn test_operand(&mut self, raw: &str, cwds: &Cwds, ctx: Context) {
        for w in self.word(raw, cwds, ctx) {
            if w.value.as_deref().is_some_and(holds_substitution_text) {
                self.problem(Problem::Unsupported(format!(
                    "the test operand `{raw}` holds command-substitution syntax that the test would evaluate"
                )));
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, cwds: Cwds, ctx: Context) -> Post {
        let same = |c: &Cwds| Post { ok: c.clone(), fail: c.clone() };
        match c {
            ast::CompoundCommand::Arithmetic(a) => {
                self.arithmetic(&a.expr.value, &cwds, ctx);
                same(&cwds)
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    self.arithmetic(&e.value, &cwds, ctx);
                }
                let body = self.loop_body(&f.body.list, cwds, ctx);
                same(&body)
            }
            ast::CompoundCommand::BraceGroup(g) => {
                let after = self.compound_list(&g.list, cwds, ctx);
                same(&after)
            }
            ast::CompoundCommand::Subshell(s) => {
                self.compound_list(&s.list, cwds.clone(), ctx);
                same(&cwds)
            }
            ast::CompoundCommand::ForClause(f) => {
                if let Some(values) = &f.values {
                    for w in values {
                        self.word(&w.value, &cwds, ctx);
                    }
                }
                let body = self.loop_body(&f.body.list, cwds, ctx);
                same(&body)
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value, &cwds, ctx);
                let mut all = cwds.clone();
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value, &cwds, ctx);
                    }
                    if let Some(body) = &item.cmd {
                        let after = self.compound_list(body, cwds.clone(), ctx);
                        all = union(&all, &after);
                    }
                }
                same(&all)
            }
            ast::CompoundCommand::IfClause(i) => {
                let cond = self.compound_list(&i.condition, cwds.clone(), ctx);
                let mut all = self.compound_list(&i.then, cond.clone(), ctx);
                let mut next = cond;
                if let Some(elses) = &i.elses {
                    for e in elses {
                        let start = match &e.condition {
                            Some(c) => self.compound_list(c, next.clone(), ctx),
                            None => next.clone(),
                        };
                        let after = self.compound_list(&e.body, start.clone(), ctx);
                        all = union(&all, &after);
                        next = start;
                    }
                }
                all = union(&all, &next);
                same(&all)
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                let cond = self.compound_list(&w.0, cwds.clone(), ctx);
                let body = self.loop_body(&w.1.list, union(&cwds, &cond), ctx);
                // Judge the condition again with every directory the body can leave.
                let again = self.quiet(|f| f.compound_list(&w.0, body.clone(), ctx));
                same(&union(&body, &again))
            }
            ast::CompoundCommand::Coprocess(_) => {
                self.problem(Problem::Unsupported("coprocesses (`coproc`) are not allowed".into()));
                same(&cwds)
            }
        }
    }

    /// Walks a loop body twice: the second pass sees every directory the first could leave.
    fn loop_body(&mut self, body: &ast::CompoundList, cwds: Cwds, ctx: Context) -> Cwds {
        let first = self.compound_list(body, cwds.clone(), ctx);
        let entry = union(&cwds, &first);
        if entry == cwds {
            return first;
        }
        let second = self.compound_list(body, entry.clone(), ctx);
        union(&entry, &second)
    }

    /// Runs `f` and drops duplicate commands it adds (used for a second pass).
    fn quiet<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.out.commands.len();
        let r = f(self);
        let added: Vec<SimpleCmd> = self.out.commands.drain(before..).collect();
        for c in added {
            if !self.out.commands.contains(&c) {
                self.out.commands.push(c);
            }
        }
        r
    }

    fn simple<'a>(&mut self, s: &'a ast::SimpleCommand, cwds: Cwds, ctx: Context) -> Post {
        // Taken before the words: a substitution inside them does not read the pipe.
        let stdin_from = self.pipe_in.take();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut redirect_items = Vec::new();
        let prefix = s.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = s.suffix.iter().flat_map(|p| p.0.iter());
        let mut handle = |f: &mut Self, item: &'a ast::CommandPrefixOrSuffixItem, words: &mut Vec<WordInfo>| match item {
            ast::CommandPrefixOrSuffixItem::Word(w) => f.word_into(&w.value, &cwds, ctx, words),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, raw) => {
                if let Some(assignment) = f.assignment(a, &raw.value, &cwds, ctx) {
                    assignments.push(assignment);
                }
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect_items.push(r),
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                f.process_substitution(sub, &cwds);
                words.push(WordInfo { raw: "<(...)".into(), value: None, glob: false });
            }
        };
        for item in prefix {
            handle(self, item, &mut words);
        }
        if let Some(w) = &s.word_or_name {
            self.word_into(&w.value, &cwds, ctx, &mut words);
        }
        for item in suffix {
            // After the name, `NAME=value` is an ordinary argument (`dd if=x`, `env A=b`,
            // `export A=b`); the commands that give it meaning judge it.
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, raw) if s.word_or_name.is_some() => {
                    self.word_into(&raw.value, &cwds, ctx, &mut words);
                }
                other => handle(self, other, &mut words),
            }
        }
        let redirects = self.redirects(redirect_items, &cwds, ctx);
        let post = self.directory_change(&words, &cwds);
        let cmd = SimpleCmd { words, assignments, redirects, cwds, context: ctx, stdin_from };
        self.last_simple = Some(Rc::new(cmd.clone()));
        self.out.commands.push(cmd);
        post
    }

    /// `cd`, `pushd`, `popd` change the directory of what follows.
    fn directory_change(&mut self, words: &[WordInfo], cwds: &Cwds) -> Post {
        let unchanged = Post { ok: cwds.clone(), fail: cwds.clone() };
        let Some(name) = words.first().and_then(WordInfo::exact) else {
            return unchanged;
        };
        if !matches!(name, "cd" | "pushd" | "popd") {
            return unchanged;
        }
        let operands: Vec<&WordInfo> = words[1..]
            .iter()
            .filter(|w| !matches!(w.exact(), Some(s) if s.starts_with('-') && s != "-"))
            .collect();
        if operands.first().and_then(|w| w.exact()) == Some("-") {
            // `cd -` goes to $OLDPWD, which may come from the caller's environment (or from
            // before a `cd` in a subshell): unknown.
            return Post { ok: None, fail: cwds.clone() };
        }
        if name == "popd" {
            let all = union(cwds, &Some(Rc::from(self.seen_dirs.as_slice())));
            return Post { ok: all, fail: cwds.clone() };
        }
        let target = match operands.first() {
            None => self.home.as_ref().map(|h| h.to_string_lossy().into_owned()),
            Some(w) => w.exact().map(str::to_string),
        };
        let ok = match (target, cwds) {
            (Some(t), Some(dirs)) => {
                let mut v: Vec<PathBuf> = Vec::new();
                for d in dirs.iter() {
                    let p = resolve_dir(d, &t);
                    if !v.contains(&p) {
                        v.push(p);
                    }
                }
                for p in &v {
                    if !self.seen_dirs.contains(p) {
                        self.seen_dirs.push(p.clone());
                    }
                }
                Some(v.into())
            }
            _ => None,
        };
        Post { ok, fail: cwds.clone() }
    }

    fn assignment(&mut self, a: &ast::Assignment, _raw: &str, cwds: &Cwds, ctx: Context) -> Option<(String, WordInfo)> {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, idx) => {
                self.arithmetic(idx, cwds, ctx);
                n.clone()
            }
        };
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let info = self.assignment_value(&w.value, cwds, ctx);
                Some((name, info))
            }
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(&k.value, cwds, ctx);
                    }
                    self.assignment_value(&v.value, cwds, ctx);
                }
                Some((name, WordInfo { raw: "(...)".into(), value: None, glob: false }))
            }
        }
    }

    /// An assignment's value: judged like a word, and refused when its text would run a
    /// command if a later expansion evaluated it again (`x='a[$(cmd)]'; echo $((x))`).
    fn assignment_value(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> WordInfo {
        let info = self.single_word(raw, cwds, ctx);
        // A value built at run time still carries its quoted text (`x='a[$(cmd)]'$y`).
        let literal = match &info.value {
            Some(v) => Some(v.clone()),
            // (A word refused for its subscripts is not parsed again.)
            None if tame_subscripts(raw).is_ok() => brush_parser::word::parse(raw, &options()).ok().map(|p| literal_text(&p)),
            None => None,
        };
        if let Some(v) = &literal {
            if holds_substitution_text(v) {
                self.problem(Problem::Unsupported(format!(
                    "the value `{v}` holds command-substitution syntax that a later expansion could run; \
                     pass the text another way (a file, or an argument)"
                )));
            }
        }
        info
    }

    fn process_substitution(&mut self, sub: &ast::SubshellCommand, cwds: &Cwds) {
        self.compound_list(&sub.list, cwds.clone(), Context::ProcessSubstitution);
    }

    fn redirects<'a>(&mut self, items: impl IntoIterator<Item = &'a ast::IoRedirect>, cwds: &Cwds, ctx: Context) -> Vec<Redirect> {
        let mut out = Vec::new();
        for r in items {
            match r {
                ast::IoRedirect::File(_, kind, target) => {
                    let k = match kind {
                        ast::IoFileRedirectKind::Read => RedirKind::Read,
                        ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => RedirKind::Write,
                        ast::IoFileRedirectKind::Append => RedirKind::Append,
                        ast::IoFileRedirectKind::ReadAndWrite => RedirKind::ReadWrite,
                        ast::IoFileRedirectKind::DuplicateInput | ast::IoFileRedirectKind::DuplicateOutput => {
                            RedirKind::Dup
                        }
                    };
                    match target {
                        ast::IoFileRedirectTarget::Filename(w) => {
                            let info = self.single_word(&w.value, cwds, ctx);
                            out.push(Redirect { kind: k, target: Some(info) });
                        }
                        ast::IoFileRedirectTarget::Fd(_) => out.push(Redirect { kind: RedirKind::Dup, target: None }),
                        ast::IoFileRedirectTarget::Duplicate(w) => {
                            // `>&WORD`: a number or `-` duplicates; anything else is a file.
                            let info = self.single_word(&w.value, cwds, ctx);
                            let is_fd = matches!(info.exact(), Some(v) if v == "-" || v.trim_end_matches('-').chars().all(|c| c.is_ascii_digit()) && !v.is_empty());
                            if is_fd {
                                out.push(Redirect { kind: RedirKind::Dup, target: None });
                            } else {
                                out.push(Redirect { kind: RedirKind::Write, target: Some(info) });
                            }
                        }
                        ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                            self.process_substitution(sub, cwds);
                            out.push(Redirect { kind: RedirKind::Dup, target: None });
                        }
                    }
                }
                ast::IoRedirect::HereDocument(_, doc) => {
                    if doc.requires_expansion {
                        self.heredoc(&doc.doc.value, cwds, ctx);
                    }
                    out.push(Redirect { kind: RedirKind::Data, target: None });
                }
                ast::IoRedirect::HereString(_, w) => {
                    self.single_word(&w.value, cwds, ctx);
                    out.push(Redirect { kind: RedirKind::Data, target: None });
                }
                ast::IoRedirect::OutputAndError(w, append) => {
                    let info = self.single_word(&w.value, cwds, ctx);
                    let kind = if *append { RedirKind::Append } else { RedirKind::Write };
                    out.push(Redirect { kind, target: Some(info) });
                }
            }
        }
        out
    }

    fn heredoc(&mut self, body: &str, cwds: &Cwds, ctx: Context) {
        if let Err(p) = tame_subscripts(body) {
            self.problem(p);
            return;
        }
        match brush_parser::word::parse_heredoc(body, &options()) {
            Ok(pieces) => {
                let mut acc = Acc::default();
                self.pieces(body, &pieces, false, cwds, ctx, &mut acc);
            }
            Err(e) => self.problem(Problem::Parse(format!("a here-document does not parse: {e}"))),
        }
    }

    fn arithmetic(&mut self, text: &str, cwds: &Cwds, ctx: Context) {
        if text.contains('[') {
            self.problem(Problem::Unsupported(format!(
                "array subscripts inside arithmetic (`{}`) are evaluated again and can run commands; compute the value another way",
                text.trim()
            )));
        }
        if text.contains("$(") || text.contains('`') {
            self.problem(Problem::Unsupported(format!(
                "command substitution inside arithmetic (`{}`) is not allowed; run the command separately",
                text.trim()
            )));
        }
        // Substitutions inside are judged as commands too.
        let _ = self.quiet(|f| f.single_word(text, cwds, ctx));
    }

    /// A word in a position where bash does not split it into several (assignment values,
    /// redirect targets): brace expansion does not apply.
    fn single_word(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> WordInfo {
        self.expand_one(raw, cwds, ctx)
    }

    /// A command word: brace expansion may turn it into several.
    fn word(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> Vec<WordInfo> {
        let mut out = Vec::new();
        self.word_into(raw, cwds, ctx, &mut out);
        out
    }

    /// [`Self::word`], adding the words to `out`.
    fn word_into(&mut self, raw: &str, cwds: &Cwds, ctx: Context, out: &mut Vec<WordInfo>) {
        if !unquoted_brace(raw) {
            out.push(self.expand_one(raw, cwds, ctx));
            return;
        }
        let alternatives = match brace_expand(raw) {
            Ok(v) => v,
            Err(msg) => {
                self.problem(Problem::Unsupported(msg));
                vec![raw.to_string()]
            }
        };
        let braced = alternatives.len() != 1 || alternatives.first().map(String::as_str) != Some(raw);
        for alt in alternatives {
            let mut info = self.expand_one(&alt, cwds, ctx);
            if braced {
                info.raw = alt;
            }
            out.push(info);
        }
    }

    fn expand_one(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> WordInfo {
        if is_plain(raw) {
            return WordInfo::literal(raw);
        }
        // brush's word parser finds the end of `$(...)` by balancing quotes and parentheses,
        // which goes wrong when the body holds a here-document with an apostrophe or a
        // parenthesis. Such a body is found again with the tokenizer, judged, and replaced
        // by an inert parameter (dynamic, like the substitution, and running nothing);
        // then the word is analyzed again.
        // The evidence shows the word as written, not with the inert parameter in it.
        let written = raw;
        let mut raw = raw.to_string();
        for _ in 0..32 {
            let (commands, problems) = (self.out.commands.len(), self.out.problems.len());
            let (mut info, bad) = self.analyze(&raw, cwds, ctx);
            let Some(start) = bad else {
                info.raw = written.to_string();
                return info;
            };
            self.out.commands.truncate(commands);
            self.out.problems.truncate(problems);
            match substitution_extent(&raw, start) {
                Some((end, program)) => {
                    self.substitution_program(&program, cwds);
                    raw = format!("{}${{gptel_scope_substituted}}{}", &raw[..start], &raw[end + 1..]);
                }
                None => {
                    self.problem(Problem::Parse(format!("a command substitution in `{raw}` does not parse")));
                    return WordInfo { raw: written.to_string(), value: None, glob: false };
                }
            }
        }
        self.problem(Problem::Unsupported("too many command substitutions in one word".into()));
        WordInfo { raw: written.to_string(), value: None, glob: false }
    }

    /// Analyzes a word; also returns where a `$(` sits whose body did not parse as cut.
    fn analyze(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> (WordInfo, Option<usize>) {
        let pieces = match tame_subscripts(raw) {
            Ok(()) => brush_parser::word::parse(raw, &options()),
            Err(p) => {
                self.problem(p);
                return (WordInfo { raw: raw.to_string(), value: None, glob: false }, None);
            }
        };
        match pieces {
            Ok(pieces) => {
                let mut acc = Acc::default();
                self.pieces(raw, &pieces, false, cwds, ctx, &mut acc);
                let info = WordInfo { raw: raw.to_string(), value: if acc.dynamic { None } else { Some(acc.text) }, glob: acc.glob };
                (info, acc.bad_substitution)
            }
            Err(e) => {
                self.problem(Problem::Parse(format!("the word `{raw}` does not parse: {e}")));
                (WordInfo { raw: raw.to_string(), value: None, glob: false }, None)
            }
        }
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], quoted: bool, cwds: &Cwds, ctx: Context, acc: &mut Acc) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    if t.ends_with('$') && raw.get(p.end_index..p.end_index + 1) == Some("(") && acc.bad_substitution.is_none() {
                        acc.bad_substitution = Some(p.end_index - 1);
                    }
                    if !quoted {
                        if t.contains("$[") {
                            self.problem(Problem::Unsupported("`$[ ]` arithmetic is not allowed".into()));
                        }
                        if has_glob(t) {
                            acc.glob = true;
                        }
                        if ["@(", "!(", "+(", "*(", "?("].iter().any(|p| t.contains(p)) {
                            self.problem(Problem::Unsupported(format!(
                                "the extended glob in `{source}` cannot be matched statically; list the files"
                            )));
                        }
                    }
                    acc.text.push_str(t);
                }
                WordPiece::SingleQuotedText(t) => acc.text.push_str(t),
                WordPiece::AnsiCQuotedText(t) => match ansi_c_decode(t) {
                    Some(v) => acc.text.push_str(&v),
                    None => acc.dynamic = true,
                },
                WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, true, cwds, ctx, acc)
                }
                WordPiece::TildeExpansion(t) => match (t, &self.home) {
                    (TildeExpr::Home, Some(h)) => acc.text.push_str(&h.to_string_lossy()),
                    _ => acc.dynamic = true,
                },
                WordPiece::ParameterExpansion(expr) => {
                    acc.dynamic = true;
                    if matches!(
                        expr,
                        brush_parser::word::ParameterExpr::Transform {
                            op: brush_parser::word::ParameterTransformOp::PromptExpand,
                            ..
                        }
                    ) {
                        self.problem(Problem::Unsupported(
                            "`${var@P}` prompt expansion can run commands; it is not allowed".into(),
                        ));
                    }
                    if source.contains("$(") || source.contains('`') || source.contains("<(") || source.contains(">(") || source.contains("$[") {
                        self.problem(Problem::Unsupported(format!(
                            "command substitution inside a parameter expansion (`{source}`) is not allowed; run the command separately"
                        )));
                    }
                }
                WordPiece::CommandSubstitution(body) => {
                    acc.dynamic = true;
                    match parse_program(body) {
                        Ok(program) => self.substitution_program(&program, cwds),
                        Err(_) if acc.bad_substitution.is_none() => acc.bad_substitution = Some(p.start_index),
                        Err(e) => self.problem(e),
                    }
                }
                WordPiece::BackquotedCommandSubstitution(body) => {
                    acc.dynamic = true;
                    self.substitution(body, cwds);
                }
                WordPiece::EscapeSequence(e) => {
                    let lit = e.strip_prefix('\\').unwrap_or(e);
                    if lit != "\n" {
                        acc.text.push_str(lit);
                    }
                }
                WordPiece::ArithmeticExpression(expr) => {
                    acc.dynamic = true;
                    self.arithmetic(&expr.value, cwds, ctx);
                }
            }
        }
    }

    fn substitution(&mut self, body: &str, cwds: &Cwds) {
        match parse_program(body) {
            Ok(program) => self.substitution_program(&program, cwds),
            Err(p) => self.problem(p),
        }
    }

    fn substitution_program(&mut self, program: &ast::Program, cwds: &Cwds) {
        if self.depth >= MAX_DEPTH {
            self.problem(Problem::Unsupported("command substitutions are nested too deeply".into()));
            return;
        }
        self.depth += 1;
        self.program(program, cwds.clone(), Context::Substitution);
        self.depth -= 1;
    }
}

/// The index of the `)` that closes the `$(` at `start`, with the parsed body: the first `)`
/// that is an operator token (not inside a quote, comment or here-document) and before
/// which the text is a complete program.
///
/// The text is tokenized once, up to the last `)` that leaves it tokenizable (most often
/// the very last one), instead of once per `)`: only the operator `)` tokens of that text,
/// and that last `)` itself, are tried.
fn substitution_extent(raw: &str, start: usize) -> Option<(usize, ast::Program)> {
    if raw.get(start..start + 2) != Some("$(") {
        return None;
    }
    const END: &str = "__gptel_scope_end__";
    let body_start = start + 2;
    let closes: Vec<usize> = raw.get(body_start..)?.match_indices(')').map(|(off, _)| body_start + off).collect();
    for &last in closes.iter().rev() {
        let text = &raw[body_start..last];
        let Ok(tokens) = brush_parser::tokenize_str(&format!("{text}\n{END}")) else { continue };
        if !matches!(tokens.last(), Some(brush_parser::Token::Word(w, _)) if w == END) {
            continue;
        }
        // Token positions count characters; map them to byte offsets in `text`.
        let byte_at = |chars: usize| -> Option<usize> {
            if text.is_ascii() {
                Some(chars)
            } else {
                text.char_indices().nth(chars).map(|(b, _)| b)
            }
        };
        let operators = tokens.iter().filter_map(|t| match t {
            brush_parser::Token::Operator(op, span) if op == ")" => byte_at(span.start.index),
            _ => None,
        });
        for end in operators.map(|off| body_start + off).chain(std::iter::once(last)) {
            if raw.as_bytes().get(end) != Some(&b')') {
                continue;
            }
            if let Ok(program) = parse_program(&raw[body_start..end]) {
                return Some((end, program));
            }
        }
        return None;
    }
    None
}

#[derive(Default)]
struct Acc {
    text: String,
    dynamic: bool,
    glob: bool,
    /// A `$(` whose body, as the word parser cut it, does not parse.
    bad_substitution: Option<usize>,
}

/// The literal (quoted or plain) text of a word's pieces, without its expansions.
fn literal_text(pieces: &[WordPieceWithSource]) -> String {
    let mut out = String::new();
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => out.push_str(t),
            WordPiece::EscapeSequence(e) => out.push_str(e.strip_prefix('\\').unwrap_or(e)),
            WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                out.push_str(&literal_text(inner))
            }
            _ => {}
        }
    }
    out
}

/// Text that would run a command if an arithmetic or subscript evaluation met it again.
pub fn holds_substitution_text(v: &str) -> bool {
    v.contains("$(") || v.contains('`') || v.contains("<(") || v.contains(">(")
}

/// The value of `$'...'` for the escapes whose meaning is certain (`\xHH`, `\NNN`, `\n`,
/// `\t`, `\\`, `\'`, `\"`) when it is printable ASCII; `None` (dynamic) otherwise.
fn ansi_c_decode(t: &str) -> Option<String> {
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
fn is_plain(raw: &str) -> bool {
    !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./,:=+@%^".contains(&b))
}

fn has_glob(t: &str) -> bool {
    t.contains(['*', '?', '['])
        || ["@(", "!(", "+("].iter().any(|p| t.contains(p))
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

fn expand_parts(parts: &[BraceExpressionOrText], out: &mut Vec<String>) -> Result<(), String> {
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

fn too_many() -> String {
    format!("a brace expansion makes more than {MAX_BRACE_WORDS} words; list the arguments explicitly")
}

/// Refuses a brace expansion whose words come to more than [`MAX_BRACE_BYTES`]: each word
/// is judged (and parsed) on its own, so 243 copies of a 1 KB word (`{1..3}` five times)
/// took 43 ms to judge.
fn too_long(words: &[String]) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names (first words) of the flattened commands, with their contexts.
    fn names(cmd: &str) -> Vec<String> {
        let f = flatten(cmd, Path::new("/tmp"), Some(Path::new("/home/u")));
        assert!(f.problems.is_empty(), "{cmd}: {:?}", f.problems);
        f.commands.iter().map(|c| c.words.first().map(WordInfo::display).unwrap_or_default()).collect()
    }

    fn problem(cmd: &str) -> String {
        let f = flatten(cmd, Path::new("/tmp"), None);
        f.problems.first().map(|p| p.reason().to_string()).unwrap_or_default()
    }

    #[test]
    fn lists_pipelines_and_operators() {
        for (cmd, want) in [
            ("ls", vec!["ls"]),
            ("ls | grep a | head", vec!["ls", "grep", "head"]),
            ("a; b && c || d & e", vec!["a", "b", "c", "d", "e"]),
            ("a\nb", vec!["a", "b"]),
            ("! a", vec!["a"]),
            ("time a | b", vec!["a", "b"]),
        ] {
            assert_eq!(names(cmd), want, "{cmd}");
        }
    }

    /// Each command with the name of the simple command it reads through a pipe.
    #[test]
    fn pipeline_stages_know_the_simple_stage_before_them() {
        for (cmd, want) in [
            ("find . -name x | xargs cat", vec![("find", None), ("xargs", Some("find"))]),
            ("a | b | c", vec![("a", None), ("b", Some("a")), ("c", Some("b"))]),
            ("a; b", vec![("a", None), ("b", None)]),
            ("{ a; b; } | c", vec![("a", None), ("b", None), ("c", None)]),
            ("a | { b; c; }", vec![("a", None), ("b", None), ("c", None)]),
            ("a | b $(c) | d", vec![("a", None), ("c", None), ("b", Some("a")), ("d", Some("b"))]),
            ("a $(b | c) | d", vec![("b", None), ("c", Some("b")), ("a", None), ("d", Some("a"))]),
        ] {
            let flat = flatten(cmd, Path::new("/tmp"), None);
            let got: Vec<(String, Option<String>)> = flat
                .commands
                .iter()
                .map(|c| (c.words[0].display(), c.stdin_from.as_ref().map(|p| p.words[0].display())))
                .collect();
            let want: Vec<(String, Option<String>)> = want.into_iter().map(|(a, b)| (a.to_string(), b.map(str::to_string))).collect();
            assert_eq!(got, want, "{cmd}");
        }
    }

    #[test]
    fn compound_commands() {
        for (cmd, want) in [
            ("(a; b)", vec!["a", "b"]),
            ("{ a; b; }", vec!["a", "b"]),
            ("if a; then b; elif c; then d; else e; fi", vec!["a", "b", "c", "d", "e"]),
            ("for x in 1 2; do a; done", vec!["a"]),
            ("for ((i=0;i<2;i++)); do a; done", vec!["a"]),
            ("while a; do b; done", vec!["a", "b"]),
            ("until a; do b; done", vec!["a", "b"]),
            ("case x in y) a;; *) b;; esac", vec!["a", "b"]),
        ] {
            assert_eq!(names(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn substitutions_anywhere() {
        for (cmd, want) in [
            ("echo $(a)", vec!["a", "echo"]),
            ("echo `a`", vec!["a", "echo"]),
            ("echo \"x $(a) y\"", vec!["a", "echo"]),
            ("X=$(a) echo", vec!["a", "echo"]),
            ("echo > $(a)", vec!["a", "echo"]),
            ("cat <(a) >(b)", vec!["a", "b", "cat"]),
            ("cat <<EOF\n$(a)\nEOF", vec!["a", "cat"]),
            ("cat <<<\"$(a)\"", vec!["a", "cat"]),
            ("echo $(a $(b))", vec!["b", "a", "echo"]),
            ("[[ -f $(a) ]]", vec!["a"]),
            ("for x in $(a); do b; done", vec!["a", "b"]),
            ("case $(a) in x) b;; esac", vec!["a", "b"]),
        ] {
            assert_eq!(names(cmd), want, "{cmd}");
        }
    }

    #[test]
    fn quoted_here_document_is_data() {
        assert_eq!(names("cat <<'EOF'\n$(a)\nEOF"), vec!["cat"]);
        assert_eq!(names("cat <<\"EOF\"\n`a`\nEOF"), vec!["cat"]);
    }

    #[test]
    fn quote_removal_and_static_names() {
        for (cmd, want) in [("r''m", "rm"), ("'r'\"m\"", "rm"), ("r\\m", "rm"), ("\\rm", "rm"), ("r\\\nm", "rm"), ("$'rm'", "rm"), ("$'\\x72m'", "rm")] {
            let f = flatten(cmd, Path::new("/tmp"), None);
            assert_eq!(f.commands[0].words[0].exact(), Some(want), "{cmd}");
        }
        for cmd in ["$x", "${x:-rm}", "$'\\u0072m'", "/???/r?", "/bin/r[m]", "$(echo rm)", "~root/bin/x"] {
            let f = flatten(cmd, Path::new("/tmp"), None);
            assert_eq!(f.commands.last().and_then(|c| c.words[0].exact()), None, "{cmd}");
        }
    }

    #[test]
    fn tilde_expands_to_the_given_home() {
        let f = flatten("cat ~/x", Path::new("/tmp"), Some(Path::new("/home/u")));
        assert_eq!(f.commands[0].words[1].exact(), Some("/home/u/x"));
        let f = flatten("cat '~/x'", Path::new("/tmp"), Some(Path::new("/home/u")));
        assert_eq!(f.commands[0].words[1].exact(), Some("~/x"));
    }

    #[test]
    fn brace_expansion_makes_words() {
        assert_eq!(brace_expand("a{b,c}d").unwrap(), vec!["abd", "acd"]);
        assert_eq!(brace_expand("{1..3}").unwrap(), vec!["1", "2", "3"]);
        assert_eq!(brace_expand("'{a,b}'").unwrap(), vec!["'{a,b}'"]);
        assert_eq!(brace_expand("x").unwrap(), vec!["x"]);
        assert!(brace_expand("{1..100000}").is_err());
        // 243 words of 80 bytes are 19,440 bytes: over the limit; of 60 bytes, 14,580: under.
        let long = "x".repeat(80 - 5);
        let err = brace_expand(&format!("{long}{{1..3}}{{1..3}}{{1..3}}{{1..3}}{{1..3}}")).unwrap_err();
        assert_eq!(err, "a brace expansion makes 243 words of 19440 bytes in all (the limit is 16384); list the arguments explicitly or use shorter words");
        assert_eq!(brace_expand(&format!("{}{{1..3}}{{1..3}}{{1..3}}{{1..3}}{{1..3}}", &long[..55])).unwrap().len(), 243);
        let f = flatten("ls {.,~}", Path::new("/tmp"), Some(Path::new("/home/u")));
        let args: Vec<_> = f.commands[0].words[1..].iter().map(|w| w.exact().map(str::to_string)).collect();
        assert_eq!(args, vec![Some(".".to_string()), Some("/home/u".to_string())]);
    }

    #[test]
    fn redirect_kinds() {
        let f = flatten("a < i > o >> p 2>&1 &> q <> r", Path::new("/tmp"), None);
        let kinds: Vec<RedirKind> = f.commands[0].redirects.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, vec![RedirKind::Read, RedirKind::Write, RedirKind::Append, RedirKind::Dup, RedirKind::Write, RedirKind::ReadWrite]);
    }

    #[test]
    fn unsupported_constructs_are_problems() {
        for cmd in ["f() { a; }", "coproc a", "echo ${v@P}", "echo $(( a[1] ))", "echo $[ a[$(b)] ]", "x='$(a)' b", "echo ${x[$(a)]}"] {
            assert_eq!(problem(cmd), "unsupported_construct", "{cmd}");
        }
    }

    #[test]
    fn suspect_bytes_are_found_wherever_they_are() {
        for bad in [0u8, 1, 8, 0x0b, 0x0d, 0x1f, 0x7f, 0x80, 0xc2, 0xcd, 0xd8, 0xe1, 0xe2, 0xe3, 0xef, 0xf3, 0xff] {
            for len in 0..20 {
                for at in 0..len {
                    let mut v = vec![b'a'; len];
                    v[at] = bad;
                    assert_eq!(first_suspect(&v), Some(at), "{bad:#x} at {at} of {len}");
                }
            }
        }
        let fine: Vec<u8> = (0x20..0x7f).chain([b'\t', b'\n']).collect();
        assert_eq!(first_suspect(&fine), None);
        assert_eq!(first_suspect(b"abc\tdef\nghi\x01"), Some(11));
        // Random texts (a fixed generator): the same answer as a byte-by-byte scan.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let len = (seed >> 59) as usize + 1;
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 56) as u8
                })
                .collect();
            assert_eq!(first_suspect(&text), text.iter().position(|&b| SUSPECT[b as usize]), "{text:?}");
        }
    }

    #[test]
    fn parse_errors_fail_closed() {
        for cmd in ["ls 'x", "ls )", "a\0", "a\rb", "a\u{200b}", "a\u{202e}", "a\u{7}"] {
            assert_eq!(problem(cmd), "parse_error", "{cmd:?}");
        }
        let long = "a".repeat(MAX_COMMAND_LEN + 1);
        assert_eq!(problem(&long), "parse_error");
    }

    #[test]
    fn cd_sets_the_directories_of_later_commands() {
        let f = flatten("cd /a && x; y", Path::new("/s"), None);
        let cwds: Vec<Vec<PathBuf>> = f.commands.iter().map(|c| c.cwds.as_deref().map(<[PathBuf]>::to_vec).unwrap_or_default()).collect();
        assert_eq!(cwds[1], vec![PathBuf::from("/a")]);
        assert_eq!(cwds[2], vec![PathBuf::from("/a"), PathBuf::from("/s")]);
        let f = flatten("cd $D && x", Path::new("/s"), None);
        assert_eq!(f.commands[1].cwds, None);
        let f = flatten("(cd /a) && x", Path::new("/s"), None);
        assert_eq!(f.commands[1].cwds.as_deref(), Some(&[PathBuf::from("/s")][..]));
    }

    #[test]
    fn assignments_after_the_name_are_arguments() {
        let f = flatten("dd if=a of=b", Path::new("/tmp"), None);
        let argv: Vec<String> = f.commands[0].words.iter().map(WordInfo::display).collect();
        assert_eq!(argv, vec!["dd", "if=a", "of=b"]);
        assert!(f.commands[0].assignments.is_empty());
        let f = flatten("A=1 B=$(x) cmd", Path::new("/tmp"), None);
        let names: Vec<&str> = f.commands.last().unwrap().assignments.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["A", "B"]);
    }

    /// What bash would run, for the shapes agents write most and the here-document cases
    /// brush-parser's tokenizer reads in its own way (once a fast parser's table; the
    /// grammar is brush-parser's alone now). `Err`: the command is refused with that reason.
    #[test]
    fn here_documents_substitutions_and_common_shapes() {
        let cases: &[(&str, Result<&[&str], &str>)] = &[
            ("ls -la", Ok(&["ls"])),
            ("a | b && c || d; e\nf", Ok(&["a", "b", "c", "d", "e", "f"])),
            ("a=1 b+=2 cmd x=3 2>&1 >f <g 3>>h &>o &>>p >&2 <&0 1>&- >|q <>r", Ok(&["cmd"])),
            ("a &&\n# comment\nb", Ok(&["a", "b"])),
            ("echo \"$(git rev-parse HEAD)\" '$(not)' `date` ${HOME} $'a\\'b'", Ok(&["git", "date", "echo"])),
            ("echo $(echo ')' \"(\")", Ok(&["echo", "echo"])),
            ("echo if then", Ok(&["echo"])),
            ("cat <<'EOF' > f\na 'b' (c)\nEOF\necho done", Ok(&["cat", "echo"])),
            ("a <<A <<B && c\n1\nA\n2\nB\nd", Ok(&["a", "c", "d"])),
            // The commit-message idiom: the body of the here-document is data.
            ("git commit -m \"$(cat <<'EOF'\nmsg it's (x)\nEOF\n)\" && git log", Ok(&["cat", "git", "git"])),
            ("git commit -m \"$(cat <<'EOF'\n1) a (b\nEOF\n)\"", Ok(&["cat", "git"])),
            // A lone `)` line inside the document: brush-parser does not parse it; refused.
            ("git commit -m \"$(cat <<'EOF'\n)\nEOF\n)\"", Err("parse_error")),
            // An unquoted here-document's substitutions run.
            ("echo \"$(cat <<EOF\n$(date)\nEOF\n)\"", Ok(&["date", "cat", "echo"])),
            ("cat <<EOF | x\n$(y)\nEOF", Ok(&["y", "cat", "x"])),
            ("for f in *; do echo $f; done", Ok(&["echo"])),
            ("diff <(a) b", Ok(&["a", "diff"])),
            // brush-parser's tokenizer drops a substitution on the line of a pending
            // here-document: refused rather than judged without it. A backquoted one is kept.
            ("cat <<A $(echo src; rm x)\nbody\nA", Err("unsupported_construct")),
            ("cat <<A `b`\nbody\nA", Ok(&["b", "cat"])),
            ("cat <<EOF\nunterminated", Err("parse_error")),
            ("echo \"unterminated", Err("parse_error")),
            ("a && ", Err("parse_error")),
        ];
        let mut failures = Vec::new();
        for (cmd, want) in cases {
            let f = flatten(cmd, Path::new("/tmp"), Some(Path::new("/home/u")));
            let got: Result<Vec<String>, String> = match f.problems.first() {
                Some(p) => Err(p.reason().to_string()),
                None => Ok(f.commands.iter().map(|c| c.words.first().map(WordInfo::display).unwrap_or_default()).collect()),
            };
            let want: Result<Vec<String>, String> = match want {
                Ok(names) => Ok(names.iter().map(|s| s.to_string()).collect()),
                Err(reason) => Err(reason.to_string()),
            };
            if got != want {
                failures.push(format!("{cmd:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// Words the brace shortcut passes over expand to themselves in brush's brace grammar.
    #[test]
    fn brace_shortcut_matches_the_brace_parser() {
        let alphabet = ["a", ",", "{", "}", "$", "'", "\"", "\\", "..", "1"];
        let mut words: Vec<String> = vec![String::new()];
        let mut frontier = words.clone();
        for _ in 0..6 {
            frontier = frontier.iter().flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}"))).collect();
            words.extend(frontier.iter().cloned());
        }
        let mut skipped = 0;
        for raw in &words {
            if unquoted_brace(raw) || !raw.contains('{') || !braces_are_tame(raw) {
                continue;
            }
            skipped += 1;
            let parsed = brush_parser::word::parse_brace_expansions(raw, &options());
            let same = match &parsed {
                Ok(None) | Err(_) => true,
                Ok(Some(parts)) => {
                    let mut out = vec![String::new()];
                    expand_parts(parts, &mut out).is_ok() && out == vec![raw.clone()]
                }
            };
            assert!(same, "{raw:?}: the brace parser gives {parsed:?}");
        }
        assert!(skipped > 10_000, "{skipped}");
    }

    #[test]
    fn normalize_removes_dots() {
        for (p, want) in [("/a/./b/../c", "/a/c"), ("/a/..", "/"), ("/../a", "/a")] {
            assert_eq!(normalize(Path::new(p)), PathBuf::from(want), "{p}");
        }
    }

    #[test]
    fn ansi_c_quotes_decode_only_certain_escapes() {
        for (t, want) in [
            ("rm", Some("rm")),
            ("\\x72m", Some("rm")),
            ("\\x3b", Some(";")),
            ("\\162\\155", Some("rm")),
            ("a\\tb\\n", Some("a\tb\n")),
            ("\\'q\\\"", Some("'q\"")),
            ("\\u0072m", None),
            ("\\cm", None),
            ("\\x", None),
            ("\\0", None),
            ("\\x1b[0m", None),
            ("\\xe9", None),
            ("trailing\\", None),
        ] {
            assert_eq!(ansi_c_decode(t).as_deref(), want, "{t}");
        }
    }

    #[test]
    fn invisible_characters_are_refused_but_emoji_variation_is_not() {
        for (cmd, ok) in [
            ("ls \u{00ad}", false),
            ("ls \u{061c}", false),
            ("ls \u{e0072}", false),
            ("ls \u{3164}", false),
            ("ls a\u{2028}rm", false),
            ("ls \u{fe0f}", false),
            ("git commit -m '\u{26a0}\u{fe0f} note'", true),
            ("grep -n 'caf\u{e9}' x", true),
        ] {
            assert_eq!(precheck(cmd).is_ok(), ok, "{cmd:?}");
        }
    }

    /// Shapes on which brush-parser's word grammar takes exponential time are refused at
    /// once; one expansion in a subscript still parses.
    #[test]
    fn nested_subscript_expansions_fail_closed_fast() {
        // `cmd` is judged in under 500 ms and refused as unsupported, saying `why`.
        let refused_fast = |cmd: &str, why: &str| {
            let start = std::time::Instant::now();
            let f = flatten(cmd, Path::new("/tmp"), None);
            let took = start.elapsed();
            assert!(took < std::time::Duration::from_millis(500), "{took:?}: {cmd}");
            assert!(
                f.problems.iter().any(|p| p.reason() == "unsupported_construct" && p.message().contains(why)),
                "{cmd}: {:?}",
                f.problems
            );
        };
        let tail = "a".repeat(200);
        // Words that took from 0.2 s to over 30 s in brush-parser's word parser.
        let slow_words = [
            format!("${{x[${{y[ ~:{tail}]}}").repeat(4),
            format!("${{x[$((y[ ~:{tail}]}}").repeat(4),
            format!("${{x[$(y[ ~:{tail}]}}").repeat(4),
            format!("${{x[$[y[ ~:{tail}]}}").repeat(4),
            format!("$((x[${{y[ ~:{tail}]}}").repeat(4),
            "${a[4(/H mm ~:mm}".repeat(8),
        ];
        for w in &slow_words {
            assert!(tame_subscripts(w).is_err(), "{w}");
        }
        // Whole commands (the first found by the `decide` fuzz target, 1.1 s to judge before;
        // the second 10.3 s), as words, assignment values and here-documents.
        let word = "${x[${x[${x[${x[}${x[}*()echo test >(te]}e ~:aaaaaaaaaaaaaa3}waaaa]}";
        let slow = [
            "${x[${x[${x[}${x[}*()echo test >(\u{fffd}\u{fffd}te]}e ~:\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}3}w\u{fffd}\u{fffd}]\u{fffd}".to_string(),
            word.to_string(),
            format!("echo {word}"),
            format!("x={word} ls"),
            format!("cat <<E\n{word}\nE"),
        ];
        for cmd in &slow {
            refused_fast(cmd, "array subscript");
        }
        // The third: a word that starts like an array assignment (`s[`) sends the rest
        // through the word grammar from brush's program grammar, before any word is seen
        // (0.46 s with four `${a[$(x)x`, each one more twenty times longer; the fuzzed
        // command of 2 KB took 4 s in the fuzz build).
        let assignment_shapes = [
            format!("(s[{}{}", "${a[$(x)x ".repeat(4), "}/ ".repeat(4)),
            format!("s[${{ {}{}", "${a[$(>)x ".repeat(5), "}/ ".repeat(6)),
            format!("x=1 s[{}{} ls", "${a[$((x))x ".repeat(6), "}/ ".repeat(6)),
            "(s[\u{fffd}\u{fffd}${\u{fffd}ls ${a[$(>)\u{fffd} ${a[$(>)ls ${a[$(>)\u{fffd}\u{fffd}\u{fffd}ME}/> lx}/xYOME}/> l;Hs X:-x}/".to_string(),
        ];
        for cmd in &assignment_shapes {
            refused_fast(cmd, "array subscript");
        }
        // Arithmetic expansions nested in one another: each level doubles the work when a
        // deep one fails (eighteen `$(( &` took 0.37 s). And any expansions nested deeper
        // than six.
        let nested = |open: &str, close: &str, n: usize| format!("{}x{}", open.repeat(n), close.repeat(n));
        for cmd in [
            format!("echo {}", nested("$(( &", " ) )", 24)),
            format!("echo \"{}\"", nested("$(( &", " ) )", 24)),
            format!("x={} ls", nested("$(( &", " ) )", 24)),
            format!("echo {}", nested("$(( &$(a ", " ) ) )", 20)),
            format!("echo {}", nested("$(( ", " ))", 4)),
            format!("echo {}", nested("$(echo ${x:-", "})", 4)),
        ] {
            refused_fast(&cmd, "nested more than");
        }
        // Parentheses and braces left open inside a word's expansions: the word grammar tries
        // each `(` in a command substitution two ways (this fuzzed command took 1.4 s).
        let open_brackets = "cd \u{fffd}\u{fffd}ls ${xo(#t$uc+m((x=less 2EADQ\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}t xargs\\n$~{x:\u{fffd}\u{fffd}\u{fffd}\u{fffd}$($x\u{fffd}ls $\u{fffd}ls ${xo(#t$uc+m((x=less 2EAD((Q\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}{xo(#t$uc+m((x=less 2EAD((Q\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}touch pwn\u{fffd}\u{fffd}-$ed))ma(\u{fffd}\u{fffd}nd\u{fffd}$e\u{fffd}\u{fffd}\u{fffd}d)ls ${xo(#t$uc+m((x=less 2EADQ\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}t xargs\\n$~{x:\u{fffd}\u{fffd}\u{fffd}\u{fffd}$($x\u{fffd}ls $\u{fffd}ls ${xo(#t$uc+m((x=less 2EAD((Q\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}{xo(#t$uc+m((x=less 2EAD((Q\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}\u{fffd}touch pwn\u{fffd}\u{fffd}-$ed))ma(\u{fffd}\u{fffd}nd\u{fffd}$e\u{fffd}\u{fffd}\u{fffd}d)}\u{fffd}\u{fffd}\u{fffd} l$x/\u{fffd}\u{fffd}\u{fffd}touc\u{fffd}\u{fffd}Eh pwned)}\\.n}\u{fffd}\u{fffd}\u{fffd} l$x/\u{fffd}\u{fffd}\u{fffd}touc\u{fffd}\u{fffd}Eh pwned)}\\.nEOFmd";
        refused_fast(open_brackets, "parentheses or braces open at once");
        assert!(tame_subscripts(&format!("${{x{}", "(".repeat(13))).is_err());
        assert!(tame_subscripts(&format!("${{x{}", "(".repeat(12))).is_ok());
        for cmd in ["echo $(( $(( 1 )) + $(( $((2)) )) ))", "echo $(dirname $(dirname $(pwd)))", "x=${a:-${b:-${c}}}"] {
            assert!(tame_subscripts_in_command(cmd).is_ok(), "{cmd}");
            assert!(flatten(cmd, Path::new("/tmp"), None).problems.iter().all(|p| !p.message().contains("nested more than")), "{cmd}");
        }
        // What the command-wide count lets through: one subscript per word, words apart.
        for cmd in ["a[$i]=1; echo ${a[$i]} ${b[$j]}", "echo '${a[1]} ${b[2]}' | grep x", "s[${i}]=2 && echo ${s[0]}"] {
            assert!(tame_subscripts_in_command(cmd).is_ok(), "{cmd}");
        }
        // The second fuzz find: eight subscripts, none nested (over 30 s in the word parser).
        for cmd in [format!("echo {}", "${a[4(/H mm ~:mm}".repeat(8)), format!("ls {}", "${a[4(/Hu}".repeat(3))] {
            refused_fast(&cmd, "array subscript");
        }
        for ok in ["echo ${a[${i}]}", "echo ${a[$((i+1))]}", "echo \"${a[$i]}\" \"${b[$j]}\"", "echo ${x[1]} ${y[2]} ${z[3]}", "echo ${a[4(/H mm ~:mm}"] {
            let f = flatten(ok, Path::new("/tmp"), None);
            assert!(!f.problems.iter().any(|p| p.message().contains("array subscript")), "{ok}: {:?}", f.problems);
        }
    }

    #[test]
    fn digit_and_paren_scan_finds_the_first_one() {
        // Every byte value in every position of a 17-byte text (two words and a tail).
        for b in 0..=255u8 {
            for at in 0..17 {
                let mut text = vec![b'a'; 17];
                text[at] = b;
                let want = text.iter().position(|&c| c.is_ascii_digit() || c == b'(');
                assert_eq!(first_digit_or_paren(&text), want, "byte {b:#x} at {at}");
            }
        }
        // Texts of random bytes, from an alphabet heavy in the neighbours of the two.
        let alphabet = b"'()*+/09:;@AZaz\x7f\x80\xb0\xb9\xff";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let text: Vec<u8> = (0..len).map(|k| alphabet[((seed >> (k % 50)) as usize + k * 7) % alphabet.len()]).collect();
            let want = text.iter().position(|&c| c.is_ascii_digit() || c == b'(');
            assert_eq!(first_digit_or_paren(&text), want, "{text:?}");
        }
        assert_eq!(first_digit_or_paren(b"/usr/bin/ls -la ./src"), None);
        assert_eq!(first_digit_or_paren("é\u{1F980}9".as_bytes()), Some(6));
    }

    #[test]
    fn long_numbers_and_brace_heavy_words_fail_closed() {
        for (cmd, ok) in [
            ("echo {1..99999999999999999999}", false),
            ("ls ${44444444444444444444}", false),
            ("cat 99999999999>x", false),
            ("cat ~+99999999999999999999", false),
            ("git log -n 20 --since=1700000000", true),
            ("ls 2>/dev/null", true),
        ] {
            assert_eq!(precheck(cmd).is_ok(), ok, "{cmd}");
        }
        assert!(brace_expand(&"{".repeat(40)).is_err());
        assert!(brace_expand("a{b").is_err());
        assert!(brace_expand("{{{{{a}}}}}").is_err());
        assert_eq!(brace_expand("'{{{{{'{x,y}").unwrap(), vec!["'{{{{{'x", "'{{{{{'y"]);
        assert_eq!(brace_expand("{}").unwrap(), vec!["{}"]);
        assert!(precheck("(((((((((x)))))))))").is_err());
        assert!(precheck("echo $(( (1+2) * (3) ))").is_ok());
        assert_eq!(brace_expand("{a,b}").unwrap(), vec!["a", "b"]);
    }
}
