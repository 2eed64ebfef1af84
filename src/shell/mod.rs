//! Parsing a command line with a real bash grammar (`brush-parser`) and flattening it into
//! the simple commands that bash would run.
//!
//! Everything that runs is found: pipeline stages, list items, subshells, groups, the
//! conditions and bodies of `if`/`for`/`while`/`case`, command substitutions anywhere in a
//! word (arguments, assignments, redirect targets, here-documents with an unquoted
//! delimiter), process substitutions. What cannot be judged statically is reported as a
//! [`Problem`] so the caller denies it: fail closed.

#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;
use std::rc::Rc;

use brush_parser::ast;

mod flatten;
mod guard;
mod words;

pub use flatten::{flatten, flatten_script};
use guard::*;
pub use guard::{arithmetic_assignments, arithmetic_names, glob_reaches_parent, name_subscript};
#[cfg(test)]
use words::*;
pub use words::{
    brace_expand, holds_substitution_text, resolve_dir, wildcard_match, ComponentGlob,
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
    /// The reason code of the problem.
    pub fn reason(&self) -> crate::Reason {
        match self {
            Problem::Parse(_) => crate::Reason::ParseError,
            Problem::Unsupported(_) => crate::Reason::UnsupportedConstruct,
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
        WordInfo {
            raw: s.to_string(),
            value: Some(s.to_string()),
            glob: false,
        }
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
    /// Variables set outside assignment words: a `for` loop's name, `${NAME:=value}`,
    /// `NAME=` in arithmetic.
    pub assigned: Vec<String>,
    /// The variables arithmetic evaluates the text of (`$((x))`, `(( x ))`, an index, a
    /// substring's offset, `[[ $x -eq 1 ]]`; see [`arithmetic_names`]), each with the first
    /// place that does so, as written.
    pub evaluated: Vec<(String, String)>,
    /// Variables the line sets from values not known before it runs: a command
    /// substitution, an indirect expansion, a loop over words built at run time or globs.
    pub run_time: Vec<String>,
    /// Variables the line sets from the values of others (`y=$x`, `y=${x%.*}`,
    /// `${y:=$x}`, `for y in $x`), as `(y, x)`.
    pub copies: Vec<(String, String)>,
    /// The globs of `for` loops expanded before running, in the order they run.
    pub loop_globs: Vec<LoopGlob>,
    /// Some commands may run at the same time as others (`&`, a pipeline of several
    /// stages, a process substitution): "before" is not an order then.
    pub concurrent: bool,
}

/// A `for` loop's glob, expanded from the files there are before the command line runs:
/// what the commands before it write under the directories it reads could change what it
/// matches when it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopGlob {
    /// As written.
    pub raw: String,
    /// How many commands of [`Flat::commands`] come before it.
    pub after: usize,
    /// The directory it reads from, from each directory the loop may start in: the part of
    /// the pattern before its first wildcard (not resolved).
    pub bases: Vec<PathBuf>,
}

/// Parse options shared by every parse.
fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions::default()
}

/// Parses a whole program with brush-parser, after the checks that refuse what it cannot
/// parse safely or in time (`guard.rs`).
pub fn parse_program(command: &str) -> Result<ast::Program, Problem> {
    precheck(command)?;
    let command = without_trailing_blanks(command);
    // A command with a here-document is tokenized first, to check the tokens (see
    // [`heredoc_tokens`]), and parsed from them.
    tame_subscripts_in_command(command)?;
    unclosed_groups(command)?;
    let has_heredoc = command
        .match_indices("<<")
        .any(|(i, _)| command.as_bytes().get(i + 2) != Some(&b'<'));
    let tokens = has_heredoc
        .then(|| {
            brush_parser::tokenize_str_with_options(command, &options().tokenizer_options()).ok()
        })
        .flatten();
    let parsed = match tokens {
        Some(tokens) => {
            heredoc_tokens(command, &tokens)?;
            brush_parser::parse_tokens(&tokens, &options())
        }
        None => brush_parser::Parser::new(std::io::Cursor::new(command.as_bytes()), &options())
            .parse_program(),
    };
    parsed.map_err(|e| Problem::Parse(format!("the command does not parse as bash: {e}.")))
}

/// `command` without the blanks and newlines at its end, which bash ignores (one blank after
/// a `\\` is kept: it is part of the last word). brush-parser's tokenizer allocates without
/// end when the text ends in two blanks while a here-document's tag or an unclosed `$(` is
/// pending (`<<$(  `, found by the decide fuzz target), so it never sees them.
fn without_trailing_blanks(command: &str) -> &str {
    let trimmed = command.trim_end_matches([' ', '\t', '\n']);
    let escapes = trimmed.bytes().rev().take_while(|&c| c == b'\\').count();
    if escapes % 2 == 1 && trimmed.len() < command.len() {
        &command[..trimmed.len() + 1]
    } else {
        trimmed
    }
}

/// What to say when a command that does not parse has a backquote inside double quotes
/// (Markdown code in a `--description "..."`): bash runs the text between two backquotes as
/// a command, and what lies between them here is not one.
pub(super) fn backquote_hint(command: &str) -> &'static str {
    let mut in_double = false;
    let mut escaped = false;
    let mut in_single = false;
    for c in command.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !in_single => escaped = true,
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => in_double = !in_double,
            '`' if in_double => {
                return " Backquotes inside double quotes run the text between them as a command (command substitution), and here that text is not a command: put the text in single quotes, escape each backquote (\\`), or pass it through a file or a here-document with a quoted delimiter (<<'EOF')"
            }
            _ => {}
        }
    }
    ""
}

/// Parses `command` with brush-parser and nothing else (no precheck, no flattening): the
/// reference the decision's speed is measured against. Returns the number of complete
/// commands.
pub fn bare_parse(command: &str) -> Result<usize, Problem> {
    let mut parser =
        brush_parser::Parser::new(std::io::Cursor::new(command.as_bytes()), &options());
    parser
        .parse_program()
        .map(|p| p.complete_commands.len())
        .map_err(|e| Problem::Parse(format!("the command does not parse as bash: {e}")))
}

/// Possible working directories: `None` is "unknown".
pub type Cwds = Option<Rc<[PathBuf]>>;

#[cfg(test)]
mod tests;
