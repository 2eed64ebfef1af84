//! A fast path in front of brush-parser for the shapes most command lines take.
//!
//! brush-parser tokenizes and then runs a backtracking PEG grammar; on a typical command
//! line that is most of a decision's cost. Most lines a model sends are lists of pipelines
//! of simple commands (`git status && cargo test 2>&1 | tail -n 20`), and for those this
//! module builds the very syntax tree brush-parser builds, in one pass over the bytes.
//!
//! It answers `None` for anything beyond that subset (compound commands, here-documents,
//! function definitions, process substitutions, reserved words in command position,
//! arithmetic, line continuations inside words, unbalanced or unusual quoting, ...), and
//! the caller parses with brush-parser as before. So a `Some` must be exactly what brush
//! would give: `tests/fast_parser.rs` compares the two trees (source locations aside, which
//! nothing downstream reads) on every command of the corpora and on generated commands,
//! and the `fastparse` fuzz target does so on arbitrary input.

use brush_parser::ast;

/// Words that bash treats as syntax in command position. A command whose name would be
/// one of them is left to brush-parser.
const RESERVED: &[&str] = &[
    "!", "[[", "]]", "{", "}", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while",
];

/// Parses `src` if it is a list of simple commands brush-parser would parse the same way.
pub fn parse(src: &str) -> Option<ast::Program> {
    let mut p = Parser { b: src.as_bytes(), src, i: 0 };
    p.program()
}

/// Where the `$(` body starting at `body_start` of `text` ends: the index just after its
/// `)`, found the way the fast parser finds it; `None` where it would leave the text to
/// brush-parser (`$((`, comments, backquotes, here-documents, `case`, ...).
pub(crate) fn substitution_end(text: &str, body_start: usize) -> Option<usize> {
    if text.as_bytes().get(body_start) == Some(&b'(') {
        return None;
    }
    let mut p = Parser { b: text.as_bytes(), src: text, i: body_start };
    p.substitution_body()?;
    Some(p.i)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Pipe,
    Semi,
    Amp,
    Newline,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Redir {
    Read,
    Write,
    Append,
    Clobber,
    ReadWrite,
    DupIn,
    DupOut,
    HereString,
    OutErr,
    OutErrAppend,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a str),
    /// A redirection with the file descriptor written right before it (`2>`).
    Redirect(Option<ast::IoFd>, Redir),
    Op(Op),
    Eof,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
}

/// Bytes that end an unquoted word.
fn ends_word(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')')
}

fn word(value: &str) -> ast::Word {
    ast::Word { value: value.to_string(), loc: None }
}

impl<'a> Parser<'a> {
    fn peek(&self, off: usize) -> Option<u8> {
        self.b.get(self.i + off).copied()
    }

    /// Skips blanks, comments and line continuations that follow a blank. Stops at a
    /// newline, which is a token.
    fn skip_blanks(&mut self) -> Option<()> {
        let mut after_blank = true;
        loop {
            match self.peek(0) {
                Some(b' ' | b'\t') => {
                    self.i += 1;
                    after_blank = true;
                }
                Some(b'\\') if self.peek(1) == Some(b'\n') => {
                    // A continuation glued to the word before it joins the two words.
                    if !after_blank {
                        return None;
                    }
                    self.i += 2;
                }
                Some(b'#') => {
                    while !matches!(self.peek(0), None | Some(b'\n')) {
                        self.i += 1;
                    }
                }
                _ => return Some(()),
            }
        }
    }

    /// The next token; `None` when the text leaves the subset.
    fn token(&mut self) -> Option<Tok<'a>> {
        self.skip_blanks()?;
        let Some(c) = self.peek(0) else { return Some(Tok::Eof) };
        let (len, tok) = match (c, self.peek(1), self.peek(2)) {
            (b'\n', _, _) => (1, Tok::Op(Op::Newline)),
            (b'&', Some(b'&'), _) => (2, Tok::Op(Op::And)),
            (b'&', Some(b'>'), Some(b'>')) => (3, Tok::Redirect(None, Redir::OutErrAppend)),
            (b'&', Some(b'>'), _) => (2, Tok::Redirect(None, Redir::OutErr)),
            (b'&', _, _) => (1, Tok::Op(Op::Amp)),
            (b'|', Some(b'|'), _) => (2, Tok::Op(Op::Or)),
            (b'|', Some(b'&'), _) => return None,
            (b'|', _, _) => (1, Tok::Op(Op::Pipe)),
            (b';', Some(b';' | b'&'), _) => return None,
            (b';', _, _) => (1, Tok::Op(Op::Semi)),
            (b'<' | b'>', _, _) => return self.redirect(None),
            (b'(' | b')', _, _) => return None,
            _ => {
                let start = self.i;
                self.scan_word()?;
                let text = &self.src[start..self.i];
                if matches!(self.peek(0), Some(b'<' | b'>')) && text.bytes().all(|b| b.is_ascii_digit()) {
                    let fd = text.parse::<ast::IoFd>().ok()?;
                    return self.redirect(Some(fd));
                }
                // `2&>f` is the word `2` and then `&>f` to bash, but it reads like a
                // descriptor: leave it to the full parser.
                if self.peek(0) == Some(b'&') && text.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                return Some(Tok::Word(text));
            }
        };
        self.i += len;
        Some(tok)
    }

    /// A redirection operator at the current byte (`<` or `>`).
    fn redirect(&mut self, fd: Option<ast::IoFd>) -> Option<Tok<'a>> {
        let (len, kind) = match (self.peek(0)?, self.peek(1), self.peek(2)) {
            (b'<', Some(b'<'), Some(b'<')) => (3, Redir::HereString),
            // Here-documents, and process substitutions.
            (b'<', Some(b'<' | b'('), _) | (b'>', Some(b'('), _) => return None,
            (b'<', Some(b'&'), _) => (2, Redir::DupIn),
            (b'<', Some(b'>'), _) => (2, Redir::ReadWrite),
            (b'<', _, _) => (1, Redir::Read),
            (b'>', Some(b'>'), _) => (2, Redir::Append),
            (b'>', Some(b'&'), _) => (2, Redir::DupOut),
            (b'>', Some(b'|'), _) => (2, Redir::Clobber),
            (b'>', _, _) => (1, Redir::Write),
            _ => return None,
        };
        self.i += len;
        Some(Tok::Redirect(fd, kind))
    }

    /// Moves past one word; `None` for anything the subset leaves out.
    fn scan_word(&mut self) -> Option<()> {
        let start = self.i;
        while let Some(c) = self.peek(0) {
            match c {
                c if ends_word(c) => {
                    if matches!(c, b'(' | b')') {
                        return None;
                    }
                    break;
                }
                b'\'' => self.single_quoted()?,
                b'"' => {
                    self.i += 1;
                    self.double_quoted()?;
                }
                b'\\' => self.escape()?,
                b'`' => self.backquoted()?,
                b'$' => self.dollar(false)?,
                // Outside quotes, leave non-ASCII text (other blanks?) to the full parser.
                c if c >= 0x80 => return None,
                _ => self.i += 1,
            }
        }
        (self.i > start).then_some(())
    }

    /// `\x`: the escaped byte belongs to the word. A line continuation inside a word is
    /// removed by the tokenizer, so the word is no longer a slice of the text.
    fn escape(&mut self) -> Option<()> {
        match self.peek(1) {
            None | Some(b'\n') => None,
            Some(c) if c >= 0x80 => None,
            // brush-parser reads `\$'...'` as ANSI-C quoting after the backslash.
            Some(b'$') => None,
            Some(_) => {
                self.i += 2;
                Some(())
            }
        }
    }

    fn single_quoted(&mut self) -> Option<()> {
        let close = memchr::memchr(b'\'', self.b.get(self.i + 1..)?)?;
        self.i += close + 2;
        Some(())
    }

    /// From just after an opening `"` to just after its closing `"`.
    fn double_quoted(&mut self) -> Option<()> {
        loop {
            match self.peek(0)? {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => self.escape()?,
                b'`' => self.backquoted()?,
                b'$' => self.dollar(true)?,
                _ => self.i += 1,
            }
        }
    }

    /// `` `...` `` up to the next backquote that is not escaped.
    fn backquoted(&mut self) -> Option<()> {
        self.i += 1;
        loop {
            match self.peek(0)? {
                b'`' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' => self.escape()?,
                _ => self.i += 1,
            }
        }
    }

    /// `$` and what it starts: `$(...)`, `${...}`, and outside double quotes `$'...'` and
    /// `$"..."`; otherwise a plain `$`.
    fn dollar(&mut self, in_double_quotes: bool) -> Option<()> {
        match self.peek(1) {
            Some(b'(') => {
                if self.peek(2) == Some(b'(') {
                    return None;
                }
                self.i += 2;
                self.substitution_body()
            }
            // `$[ ... ]`, old arithmetic: one word to brush-parser, spaces and all.
            Some(b'[') => None,
            Some(b'{') => {
                self.i += 2;
                loop {
                    match self.peek(0)? {
                        b'}' => {
                            self.i += 1;
                            return Some(());
                        }
                        b'\'' | b'"' | b'$' | b'`' | b'{' | b'\\' | b'\n' | b'(' | b')' => return None,
                        _ => self.i += 1,
                    }
                }
            }
            Some(b'\'') if !in_double_quotes => {
                self.i += 2;
                loop {
                    match self.peek(0)? {
                        b'\'' => {
                            self.i += 1;
                            return Some(());
                        }
                        b'\\' => self.escape()?,
                        _ => self.i += 1,
                    }
                }
            }
            Some(b'"') if !in_double_quotes => {
                self.i += 2;
                self.double_quoted()
            }
            _ => {
                self.i += 1;
                Some(())
            }
        }
    }

    /// From just after `$(` to just after its `)`. Bodies that could hold a `)` that
    /// does not close (comments, `case` patterns, here-documents, backquotes) are left to
    /// the full parser.
    fn substitution_body(&mut self) -> Option<()> {
        let mut depth = 1usize;
        loop {
            match self.peek(0)? {
                b'(' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        return Some(());
                    }
                }
                b'\'' => self.single_quoted()?,
                b'"' => {
                    self.i += 1;
                    self.double_quoted()?;
                }
                b'\\' => self.escape()?,
                b'$' if matches!(self.peek(1), Some(b'{' | b'\'')) => self.dollar(false)?,
                b'#' | b'`' => return None,
                b'<' if self.peek(1) == Some(b'<') => return None,
                b'c' if self.b.get(self.i..self.i + 4) == Some(b"case") => return None,
                c if c >= 0x80 => return None,
                _ => self.i += 1,
            }
        }
    }

    fn program(&mut self) -> Option<ast::Program> {
        let mut complete_commands = Vec::new();
        loop {
            match self.token()? {
                Tok::Eof => return Some(ast::Program { complete_commands }),
                Tok::Op(Op::Newline) => continue,
                first => complete_commands.push(self.complete_command(first)?),
            }
        }
    }

    /// And-or lists separated by `;` or `&`, up to a newline or the end.
    fn complete_command(&mut self, first: Tok<'a>) -> Option<ast::CompoundList> {
        let mut items = Vec::new();
        let mut tok = first;
        loop {
            let (list, next) = self.and_or(tok)?;
            let (sep, after) = match next {
                Tok::Op(Op::Semi) => (ast::SeparatorOperator::Sequence, self.token()?),
                Tok::Op(Op::Amp) => (ast::SeparatorOperator::Async, self.token()?),
                other => (ast::SeparatorOperator::Sequence, other),
            };
            items.push(ast::CompoundListItem(list, sep));
            let separated = matches!(next, Tok::Op(Op::Semi | Op::Amp));
            match after {
                Tok::Eof | Tok::Op(Op::Newline) => return Some(ast::CompoundList(items)),
                Tok::Word(_) | Tok::Redirect(..) if separated => tok = after,
                _ => return None,
            }
        }
    }

    fn and_or(&mut self, first: Tok<'a>) -> Option<(ast::AndOrList, Tok<'a>)> {
        let (pipeline, mut next) = self.pipeline(first)?;
        let mut list = ast::AndOrList { first: pipeline, additional: Vec::new() };
        loop {
            let and = match next {
                Tok::Op(Op::And) => true,
                Tok::Op(Op::Or) => false,
                other => return Some((list, other)),
            };
            let start = self.after_linebreak()?;
            let (p, after) = self.pipeline(start)?;
            list.additional.push(if and { ast::AndOr::And(p) } else { ast::AndOr::Or(p) });
            next = after;
        }
    }

    /// The next token after any newlines (allowed after `&&`, `||` and `|`).
    fn after_linebreak(&mut self) -> Option<Tok<'a>> {
        loop {
            match self.token()? {
                Tok::Op(Op::Newline) => continue,
                t => return Some(t),
            }
        }
    }

    fn pipeline(&mut self, first: Tok<'a>) -> Option<(ast::Pipeline, Tok<'a>)> {
        let mut seq = Vec::new();
        let mut tok = first;
        loop {
            let (cmd, next) = self.simple(tok)?;
            seq.push(ast::Command::Simple(cmd));
            if next != Tok::Op(Op::Pipe) {
                return Some((ast::Pipeline { timed: None, bang: false, seq }, next));
            }
            tok = self.after_linebreak()?;
        }
    }

    /// A simple command starting at `first`; also returns the token after it.
    fn simple(&mut self, first: Tok<'a>) -> Option<(ast::SimpleCommand, Tok<'a>)> {
        let mut prefix = Vec::new();
        let mut name: Option<ast::Word> = None;
        let mut suffix = Vec::new();
        let mut tok = first;
        loop {
            let item = match tok {
                Tok::Word(w) => {
                    if let Some(a) = assignment(w)? {
                        a
                    } else if name.is_none() {
                        if RESERVED.contains(&w) {
                            return None;
                        }
                        name = Some(word(w));
                        tok = self.token()?;
                        continue;
                    } else {
                        ast::CommandPrefixOrSuffixItem::Word(word(w))
                    }
                }
                Tok::Redirect(fd, kind) => {
                    let Tok::Word(target) = self.token()? else { return None };
                    ast::CommandPrefixOrSuffixItem::IoRedirect(redirect(fd, kind, target))
                }
                Tok::Op(_) | Tok::Eof => break,
            };
            if name.is_none() {
                prefix.push(item);
            } else {
                suffix.push(item);
            }
            tok = self.token()?;
        }
        if prefix.is_empty() && name.is_none() {
            return None;
        }
        let cmd = ast::SimpleCommand {
            prefix: (!prefix.is_empty()).then_some(ast::CommandPrefix(prefix)),
            word_or_name: name,
            suffix: (!suffix.is_empty()).then_some(ast::CommandSuffix(suffix)),
        };
        Some((cmd, tok))
    }
}

/// `NAME=value` or `NAME+=value` as brush-parser reads it, `Some(None)` for an ordinary
/// word, `None` for shapes left to it (`NAME[i]=value`).
fn assignment(w: &str) -> Option<Option<ast::CommandPrefixOrSuffixItem>> {
    let b = w.as_bytes();
    if !matches!(b.first(), Some(c) if c.is_ascii_alphabetic() || *c == b'_') {
        return Some(None);
    }
    let n = b.iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_')).unwrap_or(b.len());
    let (append, value_at) = match (b.get(n), b.get(n + 1)) {
        (Some(b'='), _) => (false, n + 1),
        (Some(b'+'), Some(b'=')) => (true, n + 2),
        (Some(b'['), _) => return None,
        _ => return Some(None),
    };
    let assignment = ast::Assignment {
        name: ast::AssignmentName::VariableName(w[..n].to_string()),
        value: ast::AssignmentValue::Scalar(word(&w[value_at..])),
        append,
        loc: Default::default(),
    };
    Some(Some(ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word(w))))
}

fn redirect(fd: Option<ast::IoFd>, kind: Redir, target: &str) -> ast::IoRedirect {
    use ast::IoFileRedirectKind as K;
    let file = |k: K| ast::IoRedirect::File(fd, k, ast::IoFileRedirectTarget::Filename(word(target)));
    let dup = |k: K| ast::IoRedirect::File(fd, k, ast::IoFileRedirectTarget::Duplicate(word(target)));
    match kind {
        Redir::Read => file(K::Read),
        Redir::Write => file(K::Write),
        Redir::Append => file(K::Append),
        Redir::Clobber => file(K::Clobber),
        Redir::ReadWrite => file(K::ReadAndWrite),
        Redir::DupIn => dup(K::DuplicateInput),
        Redir::DupOut => dup(K::DuplicateOutput),
        Redir::HereString => ast::IoRedirect::HereString(fd, word(target)),
        Redir::OutErr => ast::IoRedirect::OutputAndError(word(target), false),
        Redir::OutErrAppend => ast::IoRedirect::OutputAndError(word(target), true),
    }
}
