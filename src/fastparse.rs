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
    Parser::new(src).program()
}

/// Where the `$(` body starting at `body_start` of `text` ends: the index just after its
/// `)`, found the way the fast parser finds it; `None` where it would leave the text to
/// brush-parser (`$((`, comments, backquotes, here-documents, `case`, ...).
///
/// With `heredocs`, a body may be `cat <<'EOF'` and its document (a commit message).
pub(crate) fn substitution_end(text: &str, body_start: usize, heredocs: bool) -> Option<usize> {
    if text.as_bytes().get(body_start) == Some(&b'(') {
        return None;
    }
    let mut p = Parser::new(text);
    p.i = body_start;
    p.heredocs_in_substitutions = heredocs;
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
    /// `<<` (`true`: `<<-`, which strips leading tabs).
    HereDoc(Option<ast::IoFd>, bool),
    Op(Op),
    Eof,
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    /// Here-documents whose body starts after the next newline: delimiter, strip tabs.
    pending: Vec<(&'a str, bool)>,
    /// Bodies read, in order, not yet put in the tree.
    docs: Vec<String>,
    heredocs_in_substitutions: bool,
    /// A word of the current line spans lines (a quoted newline, a `$(...)` body).
    multiline_word: bool,
}

/// A here-document delimiter of the shapes taken: `WORD`, `'WORD'`, `"WORD"` with WORD
/// of letters, digits and `_`. Returns WORD and whether the body is expanded.
fn delimiter(raw: &str) -> Option<(&str, bool)> {
    let plain = |w: &str| !w.is_empty() && w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    let quoted = raw
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')));
    match quoted {
        Some(w) if raw.len() >= 2 && plain(w) => Some((w, false)),
        None if plain(raw) => Some((raw, true)),
        _ => None,
    }
}

/// The body of a here-document that starts at `start` in `text`, and the index just after
/// its delimiter line (`None` when the text ends first).
fn heredoc_body(text: &str, start: usize, delim: &str, strip_tabs: bool) -> Option<(String, usize)> {
    let mut body = String::new();
    let mut i = start;
    loop {
        if i >= text.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &text.as_bytes()[i..]).map_or(text.len(), |n| i + n);
        let mut line = &text[i..end];
        if strip_tabs {
            line = line.trim_start_matches('\t');
        }
        let next = (end + 1).min(text.len());
        if line == delim {
            return Some((body, next));
        }
        body.push_str(line);
        body.push('\n');
        i = next;
    }
}

/// Bytes that end an unquoted word.
fn ends_word(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')')
}

fn word(value: &str) -> ast::Word {
    ast::Word { value: value.to_string(), loc: None }
}

impl<'a> Parser<'a> {
    fn new(src: &'a str) -> Self {
        Parser { src, b: src.as_bytes(), i: 0, pending: Vec::new(), docs: Vec::new(), heredocs_in_substitutions: true, multiline_word: false }
    }

    /// After a newline: the bodies of the here-documents begun on the line before.
    fn read_heredocs(&mut self) -> Option<()> {
        for (delim, strip) in std::mem::take(&mut self.pending) {
            let (body, next) = heredoc_body(self.src, self.i, delim, strip)?;
            self.docs.push(body);
            self.i = next;
        }
        Some(())
    }

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
        let Some(c) = self.peek(0) else {
            // A here-document never ended.
            return self.pending.is_empty().then_some(Tok::Eof);
        };
        let (len, tok) = match (c, self.peek(1), self.peek(2)) {
            (b'\n', _, _) => {
                self.i += 1;
                self.multiline_word = false;
                self.read_heredocs()?;
                return Some(Tok::Op(Op::Newline));
            }
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
                // brush-parser mixes up here-documents and words that span lines on one
                // line (it reads an inner document's delimiter as the outer's); leave
                // such lines to it.
                if memchr::memchr(b'\n', text.as_bytes()).is_some() {
                    if !self.pending.is_empty() {
                        return None;
                    }
                    self.multiline_word = true;
                }
                // While a here-document is pending, brush-parser's tokenizer reads words
                // its own way: `$(echo a; rm b)` becomes `echo a` and ` rm b`, `x${1..3}`
                // two words, digits a descriptor across blanks (`echo 1 >> f`). Only
                // words of plain text and quotes are taken there.
                if !self.pending.is_empty()
                    && (text.bytes().all(|b| b.is_ascii_digit())
                        || !text.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./,:=+@%^'\" ".contains(&b)))
                {
                    return None;
                }
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
            (b'<', Some(b'<'), Some(b'-')) => {
                self.i += 3;
                return Some(Tok::HereDoc(fd, true));
            }
            (b'<', Some(b'<'), _) => {
                self.i += 2;
                return Some(Tok::HereDoc(fd, false));
            }
            // Process substitutions.
            (b'<', Some(b'('), _) | (b'>', Some(b'('), _) => return None,
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
        self.until_unescaped(b'`')
    }

    /// To just after the next `close` that no backslash escapes.
    fn until_unescaped(&mut self, close: u8) -> Option<()> {
        loop {
            match self.peek(0)? {
                c if c == close => {
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
                        c if c.is_ascii_alphanumeric() || b"_#%:-+=?/.,^*@![]".contains(&c) => self.i += 1,
                        _ => return None,
                    }
                }
            }
            Some(b'\'') if !in_double_quotes => {
                self.i += 2;
                self.until_unescaped(b'\'')
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
    /// the full parser, but for the one idiom of commit messages, a body that is only
    /// `cat <<'EOF'` and its document.
    fn substitution_body(&mut self) -> Option<()> {
        let start = self.i;
        if self.heredocs_in_substitutions {
            if let Some(end) = self.cat_heredoc() {
                self.i = end;
                return Some(());
            }
        }
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
                        break;
                    }
                }
                b'\'' => self.single_quoted()?,
                b'"' => {
                    self.i += 1;
                    self.double_quoted()?;
                }
                b'\\' => self.escape()?,
                b'$' if matches!(self.peek(1), Some(b'{' | b'\'' | b'[')) => self.dollar(false)?,
                // brush-parser rewrites an unquoted tab in a body as a space.
                b'#' | b'`' | b'\t' => return None,
                b'c' if self.b.get(self.i..self.i + 4) == Some(b"case") => return None,
                c if c >= 0x80 => return None,
                _ => self.i += 1,
            }
        }
        // Here-documents and extended-glob openers, even inside quotes, make brush-parser's
        // tokenizer cut a body differently.
        let body = &self.b[start..self.i];
        let odd = body.windows(2).any(|w| w == b"<<" || (w[1] == b'(' && matches!(w[0], b'@' | b'!' | b'*' | b'+' | b'?')));
        (!odd).then_some(())
    }

    /// At the start of a `$(` body: `cat <<DELIM` (or `'DELIM'`, `"DELIM"`), a newline, the
    /// document, the delimiter line, and `)`. The index just after the `)`.
    fn cat_heredoc(&self) -> Option<usize> {
        let b = self.b;
        let mut i = self.i;
        let blanks = |mut i: usize| {
            while matches!(b.get(i), Some(b' ')) {
                i += 1;
            }
            i
        };
        i = blanks(i);
        if b.get(i..i + 3) != Some(b"cat") {
            return None;
        }
        let j = blanks(i + 3);
        if j == i + 3 || b.get(j..j + 2) != Some(b"<<") || matches!(b.get(j + 2), Some(b'<' | b'-')) {
            return None;
        }
        // brush-parser loses the delimiter after two blanks.
        let start = if b.get(j + 2) == Some(&b' ') { j + 3 } else { j + 2 };
        let line_end = start + memchr::memchr(b'\n', b.get(start..)?)?;
        let (delim, _) = delimiter(self.src.get(start..line_end)?)?;
        let (doc, next) = heredoc_body(self.src, line_end + 1, delim, false)?;
        // brush-parser's tokenizer closes the substitution at a `)` of the document that
        // no `(` before it opened; take only documents whose parentheses balance.
        let mut depth = 0usize;
        for c in doc.bytes() {
            match c {
                b'(' => depth += 1,
                b')' => depth = depth.checked_sub(1)?,
                _ => {}
            }
        }
        (depth == 0 && b.get(next) == Some(&b')')).then_some(next + 1)
    }

    fn program(&mut self) -> Option<ast::Program> {
        let mut complete_commands = Vec::new();
        loop {
            match self.token()? {
                Tok::Eof => return Some(ast::Program { complete_commands }),
                Tok::Op(Op::Newline) => continue,
                first => {
                    let mut list = self.complete_command(first)?;
                    // The command ended at a newline (which read the bodies of its
                    // here-documents) or at the end (where none may be pending).
                    let mut docs = std::mem::take(&mut self.docs).into_iter();
                    fill_heredocs(&mut list, &mut docs)?;
                    if docs.next().is_some() {
                        return None;
                    }
                    complete_commands.push(list);
                }
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
                Tok::HereDoc(fd, strip) => {
                    if self.multiline_word {
                        return None;
                    }
                    let Tok::Word(raw) = self.token()? else { return None };
                    let (delim, expand) = delimiter(raw)?;
                    self.pending.push((delim, strip));
                    ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(
                        fd,
                        ast::IoHereDocument {
                            remove_tabs: strip,
                            requires_expansion: expand,
                            here_end: word(raw),
                            // Filled in when the body has been read.
                            doc: word(""),
                        },
                    ))
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

/// Puts the bodies read into the here-documents of `list`, in order.
fn fill_heredocs(list: &mut ast::CompoundList, docs: &mut impl Iterator<Item = String>) -> Option<()> {
    for item in &mut list.0 {
        let and_or = &mut item.0;
        let pipelines = std::iter::once(&mut and_or.first).chain(and_or.additional.iter_mut().map(|a| match a {
            ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
        }));
        for pipeline in pipelines {
            for cmd in &mut pipeline.seq {
                let ast::Command::Simple(simple) = cmd else { continue };
                let prefix = simple.prefix.iter_mut().flat_map(|p| p.0.iter_mut());
                let suffix = simple.suffix.iter_mut().flat_map(|p| p.0.iter_mut());
                for it in prefix.chain(suffix) {
                    if let ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(_, doc)) = it {
                        let body = docs.next()?;
                        // An expanded body is read again for expansions; keep those whose
                        // backslashes (line continuations) the tokenizer would have handled
                        // for the full parser.
                        if doc.requires_expansion && body.contains('\\') {
                            return None;
                        }
                        doc.doc = word(&body);
                    }
                }
            }
        }
    }
    Some(())
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
