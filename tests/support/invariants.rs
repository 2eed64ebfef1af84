//! Invariants of a decision, checked independently of the engine's own analysis.
//!
//! Shared by `tests/invariants.rs` (deterministic generator + corpora, run by `cargo test`)
//! and by the `decide` fuzz target (`fuzz/fuzz_targets/decide.rs` includes this file).
//!
//! The invariants:
//! (a) a command the engine allows never contains a simple command the scope denies or does
//!     not list. The commands are found by a walk of the brush-parser AST written here (not
//!     `shell.rs`'s flatten), and the walk is conservative: a command word it cannot name
//!     statically (a variable, a substitution, a glob, an expansion it does not model) means
//!     the engine must not have allowed;
//! (b) no panic (the caller runs the check; a panic is the failure);
//! (c) bounded time per decision.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use brush_parser::ast;
use brush_parser::word::{
    BraceExpressionMember, BraceExpressionOrText, WordPiece, WordPieceWithSource,
};

use gptel_scope::policy::decide::{self, Ctx, Decision};
use gptel_scope::policy::paths::Matcher;
use gptel_scope::scope::config::{self, Source};
use gptel_scope::scope::Scope;

/// The longest one decision may take: 100 ms in optimized builds (the fuzzer), looser in
/// unoptimized test builds, or `GPTEL_SCOPE_TIME_LIMIT_MS`.
#[allow(unexpected_cfgs)]
pub fn time_limit() -> Duration {
    static LIMIT: OnceLock<Option<u64>> = OnceLock::new();
    // GPTEL_SCOPE_TIME_LIMIT_MS overrides (CI smoke runs on slow shared machines).
    if let Some(ms) = *LIMIT.get_or_init(|| {
        std::env::var("GPTEL_SCOPE_TIME_LIMIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
    }) {
        return Duration::from_millis(ms);
    }
    // cargo-fuzz builds optimized, with debug assertions and `--cfg fuzzing`.
    if cfg!(fuzzing) {
        Duration::from_millis(100)
    } else if cfg!(debug_assertions) {
        Duration::from_millis(2000)
    } else {
        Duration::from_millis(100)
    }
}

/// A fixture directory shared by every check of the process: `ROOT/repo` (the working
/// directory, with a few files, a `.env` and a symlink to `ROOT/home`) and `ROOT/home`.
pub struct Fixture {
    pub root: PathBuf,
}

impl Fixture {
    pub fn get() -> &'static Fixture {
        static F: OnceLock<Fixture> = OnceLock::new();
        F.get_or_init(|| {
            let base =
                std::env::temp_dir().join(format!("gptel-scope-invariants-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&base);
            for d in [
                "repo/src",
                "repo/docs",
                "repo/bin",
                "home/.ssh",
                "repo-secrets",
            ] {
                let _ = std::fs::create_dir_all(base.join(d));
            }
            for f in [
                "repo/README.md",
                "repo/notes.txt",
                "repo/list.txt",
                "repo/.env",
                "repo/src/main.c",
                "repo/docs/CHANGELOG.md",
                "repo/bin/tool",
                "home/.ssh/id_rsa",
                "home/.bashrc",
                "repo-secrets/creds.txt",
            ] {
                let _ = std::fs::write(base.join(f), "x\n");
            }
            #[cfg(unix)]
            let _ = std::os::unix::fs::symlink(base.join("home"), base.join("repo/link_to_home"));
            let root = std::fs::canonicalize(&base).unwrap_or(base);
            Fixture { root }
        })
    }
    pub fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }
    pub fn home(&self) -> PathBuf {
        self.root.join("home")
    }
}

/// The scope used when an input brings none (or one that does not load): the attack
/// corpus scope.
pub const DEFAULT_SCOPE: &str = r#"
paths:
  read: ["@ROOT@/repo/**"]
  write: []
  deny: ["**/.env", "**/.git/**"]
bash_tools:
  categories:
    read_only: [ls, grep, find, cat, head, tail, wc, file, "git log", "git show", "git diff"]
    safe_write: [mkdir, touch, echo, "git add", "git commit"]
    dangerous: []
  deny: [rm, sudo, dd, chmod, mv, curl, wget]
  path_arguments: enforce
"#;

/// Loads `yaml` (with `@ROOT@` replaced) over the defaults; `None` when it does not load.
pub fn load_scope(yaml: &str) -> Option<Scope> {
    let fx = Fixture::get();
    let text = yaml.replace("@ROOT@", &fx.root.to_string_lossy());
    config::load(&[Source::Inline {
        name: "invariants".into(),
        text,
    }])
    .ok()
    .map(|l| l.scope.clone())
}

/// Decides `command` under `scope` in the fixture's repo; returns the decision and its time.
pub fn decide_timed(scope: &Scope, command: &str) -> Option<(Decision, Duration)> {
    let fx = Fixture::get();
    let home = fx.home();
    let matcher = Matcher::new(&scope.paths, Some(&home), None).ok()?;
    let ctx = Ctx {
        scope,
        matcher: &matcher,
        home: Some(&home),
        grants: &[],
        tool: "run_bash_command",
        project_root: None,
        masked: false,
    };
    let t = Instant::now();
    let d = decide::decide(&ctx, command, &fx.repo());
    Some((d, t.elapsed()))
}

/// Checks every invariant for one input; returns the broken ones (empty: all hold).
pub fn check(scope: &Scope, command: &str) -> Vec<String> {
    let mut broken = Vec::new();
    let Some((d, took)) = decide_timed(scope, command) else {
        return broken;
    };
    if took > time_limit() {
        broken.push(format!(
            "(c) the decision took {took:?} (limit {:?}) for {command:?}",
            time_limit()
        ));
    }
    if d.allowed && scope.bash_tools.allow_constructs.is_empty() {
        for p in unlisted_commands(scope, command) {
            broken.push(format!("(a) allowed {command:?}, but {p}"));
        }
    }
    broken
}

/// Checks one raw fuzz input: `SCOPE-YAML \0 COMMAND`, or a bare command under the default
/// scope. Inputs that are not UTF-8 are decided as lossy text.
pub fn check_bytes(data: &[u8]) -> Vec<String> {
    let (scope_text, cmd) = match data.iter().position(|b| *b == 0) {
        Some(i) => (
            String::from_utf8_lossy(&data[..i]).into_owned(),
            String::from_utf8_lossy(&data[i + 1..]).into_owned(),
        ),
        None => (
            DEFAULT_SCOPE.to_string(),
            String::from_utf8_lossy(data).into_owned(),
        ),
    };
    static DEFAULT: OnceLock<Option<Scope>> = OnceLock::new();
    let default = || DEFAULT.get_or_init(|| load_scope(DEFAULT_SCOPE)).clone();
    let scope = if scope_text == DEFAULT_SCOPE {
        default()
    } else {
        load_scope(&scope_text).or_else(default)
    };
    match scope {
        Some(s) => check(&s, &cmd),
        None => vec!["the default scope does not load".into()],
    }
}

// ---------------------------------------------------------------------------------------
// The independent walk.

/// One command found by the walk: its words (each `None` when not static).
#[derive(Debug, Clone)]
struct Found {
    words: Vec<Option<String>>,
    /// Why the walk could not see this command (an expansion it does not model).
    opaque: Option<String>,
}

struct Walker {
    found: Vec<Found>,
    functions: Vec<String>,
    depth: usize,
}

fn parser_options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions::default()
}

fn parse(text: &str) -> Result<ast::Program, String> {
    let mut p = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &parser_options());
    p.parse_program().map_err(|e| e.to_string())
}

impl Walker {
    fn opaque(&mut self, why: String) {
        self.found.push(Found {
            words: vec![None],
            opaque: Some(why),
        });
    }

    fn program(&mut self, text: &str) {
        if self.depth > 16 {
            self.opaque("nesting deeper than the walk follows".into());
            return;
        }
        self.depth += 1;
        match parse(text) {
            Ok(p) => {
                for c in &p.complete_commands {
                    self.list(c);
                }
            }
            Err(e) => self.opaque(format!("text that does not parse: {e}")),
        }
        self.depth -= 1;
    }

    fn list(&mut self, l: &ast::CompoundList) {
        for item in &l.0 {
            for (_, pipeline) in item.0.iter() {
                for c in &pipeline.seq {
                    self.command(c);
                }
            }
        }
    }

    fn command(&mut self, c: &ast::Command) {
        match c {
            ast::Command::Simple(s) => self.simple(s),
            ast::Command::Compound(cc, r) => {
                self.compound(cc);
                if let Some(r) = r {
                    self.redirects(&r.0);
                }
            }
            ast::Command::Function(f) => {
                self.functions.push(f.fname.value.clone());
                self.compound(&f.body.0);
                if let Some(r) = &f.body.1 {
                    self.redirects(&r.0);
                }
            }
            ast::Command::ExtendedTest(t, r) => {
                self.test_expr(&t.expr);
                if let Some(r) = r {
                    self.redirects(&r.0);
                }
            }
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr) {
        match e {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.test_expr(a);
                self.test_expr(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.test_expr(a)
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(&w.value);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value);
                self.word(&b.value);
            }
        }
    }

    fn arithmetic(&mut self, text: &str) {
        // Process substitution does not happen in arithmetic; `$(` and backquotes do.
        if text.contains("$(") || text.contains('`') {
            self.opaque(format!("a substitution inside arithmetic `{text}`"));
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand) {
        match c {
            ast::CompoundCommand::Arithmetic(a) => self.arithmetic(&a.expr.value),
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic(&e.value);
                }
                self.list(&f.body.list);
            }
            ast::CompoundCommand::BraceGroup(g) => self.list(&g.list),
            ast::CompoundCommand::Subshell(s) => self.list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value);
                }
                self.list(&f.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value);
                    }
                    if let Some(l) = &item.cmd {
                        self.list(l);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c);
                    }
                    self.list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
            ast::CompoundCommand::Coprocess(c) => {
                if let Some(n) = &c.name {
                    self.word(&n.value);
                }
                self.command(&c.body);
            }
        }
    }

    fn redirects(&mut self, items: &[ast::IoRedirect]) {
        for r in items {
            match r {
                ast::IoRedirect::File(_, _, target) => match target {
                    ast::IoFileRedirectTarget::Filename(w)
                    | ast::IoFileRedirectTarget::Duplicate(w) => {
                        self.word(&w.value);
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, s) => self.list(&s.list),
                },
                ast::IoRedirect::HereDocument(_, h) => {
                    if h.requires_expansion {
                        // A here-document body expands like a double-quoted string.
                        let quoted = format!("\"{}\"", h.doc.value.replace('"', "\\\""));
                        self.word(&quoted);
                    }
                }
                ast::IoRedirect::HereString(_, w) | ast::IoRedirect::OutputAndError(w, _) => {
                    self.word(&w.value);
                }
            }
        }
    }

    fn simple(&mut self, s: &ast::SimpleCommand) {
        let mut words: Vec<Option<String>> = Vec::new();
        for it in s.prefix.iter().flat_map(|p| p.0.iter()) {
            self.item(it, &mut words, true);
        }
        if let Some(w) = &s.word_or_name {
            words.extend(self.expanded_word(&w.value));
        }
        for it in s.suffix.iter().flat_map(|p| p.0.iter()) {
            self.item(it, &mut words, false);
        }
        if !words.is_empty() {
            self.found.push(Found {
                words,
                opaque: None,
            });
        }
    }

    fn item(
        &mut self,
        it: &ast::CommandPrefixOrSuffixItem,
        words: &mut Vec<Option<String>>,
        prefix: bool,
    ) {
        match it {
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => {
                self.redirects(std::slice::from_ref(r))
            }
            ast::CommandPrefixOrSuffixItem::Word(w) => words.extend(self.expanded_word(&w.value)),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w) => {
                if let ast::AssignmentName::ArrayElementName(_, idx) = &a.name {
                    self.arithmetic(idx);
                }
                match &a.value {
                    ast::AssignmentValue::Scalar(v) => {
                        self.word(&v.value);
                    }
                    ast::AssignmentValue::Array(items) => {
                        for (k, v) in items {
                            if let Some(k) = k {
                                self.word(&k.value);
                            }
                            self.word(&v.value);
                        }
                    }
                }
                if !prefix {
                    // After the name (`declare x=1`), an assignment is an argument.
                    words.push(self.word(&w.value));
                }
            }
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, s) => {
                self.list(&s.list);
                words.push(None);
            }
        }
    }

    /// A word after brace expansion: one or more words.
    fn expanded_word(&mut self, raw: &str) -> Vec<Option<String>> {
        let expanded = match brush_parser::word::parse_brace_expansions(raw, &parser_options()) {
            Ok(Some(parts)) => {
                let mut out = vec![String::new()];
                if expand_braces(&parts, &mut out) {
                    out
                } else {
                    vec![raw.to_string()]
                }
            }
            _ => vec![raw.to_string()],
        };
        expanded.iter().map(|w| self.word(w)).collect()
    }

    /// The static value of a word, walking the substitutions it holds; `None` when dynamic.
    fn word(&mut self, raw: &str) -> Option<String> {
        match brush_parser::word::parse(raw, &parser_options()) {
            Ok(pieces) => {
                let mut out = Some(String::new());
                self.pieces(&pieces, raw, false, &mut out);
                out
            }
            Err(e) => {
                self.opaque(format!("a word that does not parse: {e}"));
                None
            }
        }
    }

    fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        raw: &str,
        quoted: bool,
        out: &mut Option<String>,
    ) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    // A `[` opens a bracket expression only when a `]` follows it in the word
                    // (bash matches a lone `[` as itself: the test builtin).
                    let bracket =
                        t.contains('[') && raw.find('[').is_some_and(|at| raw[at..].contains(']'));
                    if !quoted && (t.contains(['*', '?']) || bracket || t.contains('(')) {
                        *out = None;
                    }
                    push(out, t);
                }
                WordPiece::SingleQuotedText(t) => push(out, t),
                WordPiece::AnsiCQuotedText(t) => match ansi_c(t) {
                    Some(v) => push(out, &v),
                    None => *out = None,
                },
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(inner, raw, true, out)
                }
                WordPiece::TildeExpansion(_) => *out = None,
                WordPiece::ParameterExpansion(expr) => {
                    *out = None;
                    let prompt = matches!(
                        expr,
                        brush_parser::word::ParameterExpr::Transform {
                            op: brush_parser::word::ParameterTransformOp::PromptExpand,
                            ..
                        }
                    );
                    if prompt
                        || source.contains("$(")
                        || source.contains('`')
                        || source.contains("<(")
                        || source.contains(">(")
                    {
                        self.opaque(format!(
                            "a parameter expansion that can run commands: `{source}`"
                        ));
                    }
                }
                WordPiece::CommandSubstitution(body)
                | WordPiece::BackquotedCommandSubstitution(body) => {
                    *out = None;
                    let body = if matches!(p.piece, WordPiece::BackquotedCommandSubstitution(_)) {
                        unescape_backquoted(body)
                    } else {
                        body.clone()
                    };
                    self.program(&body);
                }
                WordPiece::EscapeSequence(e) => {
                    let lit = e.strip_prefix('\\').unwrap_or(e);
                    if lit != "\n" {
                        push(out, lit);
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    *out = None;
                    self.arithmetic(&e.value);
                }
            }
        }
    }
}

fn push(out: &mut Option<String>, s: &str) {
    if let Some(o) = out {
        o.push_str(s);
    }
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the character.
fn unescape_backquoted(body: &str) -> String {
    let mut out = String::new();
    let mut it = body.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' && matches!(it.peek(), Some('$' | '`' | '\\')) {
            if let Some(n) = it.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `$'...'` for the escapes bash gives one meaning; `None` for anything else.
fn ansi_c(t: &str) -> Option<String> {
    let b: Vec<char> = t.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != '\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let e = *b.get(i + 1)?;
        i += 2;
        let ch = match e {
            'n' => '\n',
            't' => '\t',
            '\\' | '\'' | '"' => e,
            'x' => {
                let digits: String = b[i..]
                    .iter()
                    .take(2)
                    .take_while(|c| c.is_ascii_hexdigit())
                    .collect();
                if digits.is_empty() {
                    return None;
                }
                i += digits.len();
                char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?
            }
            '0'..='7' => {
                let digits: String = std::iter::once(e)
                    .chain(
                        b[i..]
                            .iter()
                            .take(2)
                            .take_while(|c| ('0'..='7').contains(c))
                            .copied(),
                    )
                    .collect();
                i += digits.len() - 1;
                char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
            }
            _ => return None,
        };
        if !(ch == '\n' || ch == '\t' || (' '..='~').contains(&ch)) {
            return None;
        }
        out.push(ch);
    }
    Some(out)
}

/// Appends the expansions of `parts` to every prefix in `out`; false when too large.
fn expand_braces(parts: &[BraceExpressionOrText], out: &mut Vec<String>) -> bool {
    for part in parts {
        match part {
            BraceExpressionOrText::Text(t) => out.iter_mut().for_each(|o| o.push_str(t)),
            BraceExpressionOrText::Expr(members) => {
                let mut alternatives: Vec<String> = Vec::new();
                for m in members {
                    match m {
                        BraceExpressionMember::Child(c) => {
                            let mut sub = vec![String::new()];
                            if !expand_braces(c, &mut sub) {
                                return false;
                            }
                            alternatives.extend(sub);
                        }
                        BraceExpressionMember::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let step = increment.unsigned_abs().max(1) as i64;
                            if (end - start).unsigned_abs() > 512 {
                                return false;
                            }
                            let mut v = *start;
                            loop {
                                alternatives.push(v.to_string());
                                if v == *end {
                                    break;
                                }
                                v += if end > start { step } else { -step };
                                if (end > start && v > *end) || (end < start && v < *end) {
                                    break;
                                }
                            }
                        }
                        BraceExpressionMember::CharSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let (a, z) = (*start as u32, *end as u32);
                            let step = increment.unsigned_abs().max(1) as u32;
                            let (lo, hi) = if a <= z { (a, z) } else { (z, a) };
                            let mut v = lo;
                            while v <= hi {
                                alternatives.extend(char::from_u32(v).map(String::from));
                                v += step;
                            }
                            if a > z {
                                alternatives.reverse();
                            }
                        }
                    }
                }
                if out.len() * alternatives.len().max(1) > 4096 {
                    return false;
                }
                let mut next = Vec::new();
                for o in out.iter() {
                    for a in &alternatives {
                        next.push(format!("{o}{a}"));
                    }
                }
                *out = next;
            }
        }
    }
    true
}

// ---------------------------------------------------------------------------------------
// Judging what the walk found against the scope, without the engine.

const PRIVILEGE: &[&str] = &["sudo", "doas", "su", "pkexec", "run0", "sudoedit"];
/// Builtins that run nothing else and touch no file.
const INERT: &[&str] = &[
    "cd", "pushd", "popd", "dirs", "true", "false", ":", "test", "[", "exit", "return", "shift",
    "wait", "break", "continue", "set", "unset", "pwd", "export", "declare", "typeset", "local",
    "readonly",
];
const WRAPPERS: &[&str] = &[
    "builtin", "command", "exec", "nohup", "time", "nice", "stdbuf", "timeout", "env", "xargs",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"];

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// The commands of `command` the scope does not allow, found by the independent walk.
pub fn unlisted_commands(scope: &Scope, command: &str) -> Vec<String> {
    let mut w = Walker {
        found: Vec::new(),
        functions: Vec::new(),
        depth: 0,
    };
    w.program(command);
    let mut out = Vec::new();
    let mut queue: Vec<Found> = w.found;
    let mut steps = 0;
    while let Some(f) = queue.pop() {
        steps += 1;
        if steps > 10_000 {
            out.push("the walk found more commands than it checks".into());
            break;
        }
        if let Some(why) = &f.opaque {
            out.push(format!("the walk cannot see through {why}"));
            continue;
        }
        if let Err(e) = judge(scope, &f.words, &w.functions, &mut queue) {
            out.push(e);
        }
    }
    out
}

fn listed(scope: &Scope, name: &str, rest: &[Option<String>]) -> bool {
    let cats = &scope.bash_tools.categories;
    cats.read_only
        .iter()
        .chain(cats.safe_write.iter())
        .any(|e| {
            let mut parts = e.split_whitespace();
            let first = parts.next().unwrap_or("");
            let sub = parts.next();
            let name_ok = if name.contains('/') {
                first == name
            } else {
                first == name && !first.contains('/')
            };
            name_ok && sub.is_none_or(|s| rest.iter().any(|a| a.as_deref() == Some(s)))
        })
}

fn denied(scope: &Scope, name: &str, rest: &[Option<String>]) -> bool {
    let base = basename(name);
    PRIVILEGE.contains(&base)
        || scope.bash_tools.deny.iter().any(|e| {
            let mut parts = e.split_whitespace();
            let first = parts.next().unwrap_or("");
            let sub = parts.next();
            first == base && sub.is_none_or(|s| rest.iter().any(|a| a.as_deref() == Some(s)))
        })
}

/// A wrapper's options that take the next word as their value.
fn wrapper_value_options(name: &str) -> &'static [&'static str] {
    match name {
        "exec" => &["-a"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "nice" => &["-n", "--adjustment"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "time" => &["-f", "--format", "-o", "--output"],
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        // `-e`, `-i` and `-l` take a value only attached: not here.
        "xargs" => &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "--process-slot-var",
        ],
        _ => &[],
    }
}

/// Whether the wrapper option word `s` takes the next word as its value: listed as it is, an
/// abbreviation getopt_long resolves to exactly one listed long option (`timeout --sig KILL`),
/// or a cluster of short options whose first letter taking a value is its last (`exec -ca
/// NAME`; `-cafoo` holds its value).
fn takes_next(name: &str, s: &str) -> bool {
    let opts = wrapper_value_options(name);
    if opts.contains(&s) {
        return true;
    }
    if s.len() > 2 && s.starts_with("--") && !s.contains('=') {
        return opts
            .iter()
            .filter(|o| o.starts_with("--") && o.starts_with(s))
            .count()
            == 1;
    }
    let Some(letters) = s
        .strip_prefix('-')
        .filter(|l| !l.starts_with('-') && l.chars().count() > 1)
    else {
        return false;
    };
    for (k, c) in letters.char_indices() {
        if opts.contains(&format!("-{c}").as_str()) {
            return k + c.len_utf8() == letters.len();
        }
    }
    false
}

/// Whether a word before the wrapped command can be a wrapper's option or value.
fn wrapper_token(s: &str) -> bool {
    s.starts_with('-')
        || s.contains('=')
        || (s.starts_with(|c: char| c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_digit() || ".smhd".contains(c)))
        || (!s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()))
}

fn judge(
    scope: &Scope,
    words: &[Option<String>],
    functions: &[String],
    queue: &mut Vec<Found>,
) -> Result<(), String> {
    let Some(first) = words.first() else {
        return Ok(());
    };
    let Some(name) = first.as_deref() else {
        return Err("a command name is not static".into());
    };
    let rest = &words[1..];
    let base = basename(name);
    if denied(scope, name, rest) {
        return Err(format!("`{name}` is denied by the scope"));
    }
    if listed(scope, name, rest) {
        if base == "find" {
            find_exec(rest, queue);
        }
        return Ok(());
    }
    if name.contains('/') {
        return Err(format!("`{name}` (a path) is not listed exactly"));
    }
    if functions.iter().any(|f| f == name) {
        return Err(format!("`{name}` is a function defined in the command"));
    }
    if INERT.contains(&name) {
        return Ok(());
    }
    if WRAPPERS.contains(&name) {
        // `command -v x` looks up; bare `exec` only redirects; bare `env` prints.
        if name == "command"
            && rest.iter().any(|a| {
                a.as_deref()
                    .is_some_and(|s| s.starts_with('-') && (s.contains('v') || s.contains('V')))
            })
        {
            return Ok(());
        }
        let mut skip_next = false;
        // `timeout DURATION CMD`: the first word after the options is the duration.
        let mut duration = name == "timeout";
        for (i, a) in rest.iter().enumerate() {
            if skip_next {
                skip_next = false;
                continue;
            }
            let Some(s) = a.as_deref() else {
                if duration {
                    duration = false;
                    continue;
                }
                return Err(format!("`{name}` wraps a word that is not static"));
            };
            if duration && !s.starts_with('-') {
                duration = false;
                continue;
            }
            if takes_next(name, s) {
                skip_next = true;
                continue;
            }
            if wrapper_token(s) && !listed(scope, s, &rest[i + 1..]) {
                continue;
            }
            queue.push(Found {
                words: rest[i..].to_vec(),
                opaque: None,
            });
            return Ok(());
        }
        return match name {
            "exec" | "time" => Ok(()),
            "xargs" => {
                queue.push(Found {
                    words: vec![Some("echo".into())],
                    opaque: None,
                });
                Ok(())
            }
            _ => Err(format!("`{name}` with nothing to run is not listed")),
        };
    }
    if SHELLS.contains(&name) {
        let mut i = 0;
        let mut script = false;
        while let Some(Some(s)) = rest.get(i) {
            if s == "--" || s == "-" || !(s.starts_with('-') || s.starts_with('+')) {
                break;
            }
            if !s.starts_with("--") && s.contains('c') {
                script = true;
            }
            if !s.starts_with("--") && (s.contains('o') || s.contains('O')) {
                i += 1;
            }
            i += 1;
        }
        if !script {
            return Err(format!("`{name}` runs a script the walk cannot see"));
        }
        return match rest.get(i) {
            Some(Some(text)) => {
                let mut w = Walker {
                    found: Vec::new(),
                    functions: functions.to_vec(),
                    depth: 1,
                };
                w.program(text);
                queue.extend(w.found);
                Ok(())
            }
            _ => Err(format!("`{name} -c` with a script that is not static")),
        };
    }
    Err(format!("`{name}` is not listed in the scope"))
}

/// `find ... -exec CMD ARGS ;`: the commands find runs.
fn find_exec(rest: &[Option<String>], queue: &mut Vec<Found>) {
    let mut i = 0;
    while i < rest.len() {
        if matches!(
            rest[i].as_deref(),
            Some("-exec" | "-execdir" | "-ok" | "-okdir")
        ) {
            let start = i + 1;
            let mut end = start;
            while end < rest.len() && !matches!(rest[end].as_deref(), Some(";" | "+")) {
                end += 1;
            }
            if end > start {
                queue.push(Found {
                    words: rest[start..end].to_vec(),
                    opaque: None,
                });
            }
            i = end;
        }
        i += 1;
    }
}

// ---------------------------------------------------------------------------------------
// Inputs: the corpora and a deterministic generator.

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const NAMES: &[&str] = &[
    "ls",
    "cat",
    "grep",
    "find",
    "head",
    "git",
    "echo",
    "touch",
    "mkdir",
    "rm",
    "sh",
    "bash",
    "env",
    "xargs",
    "timeout",
    "nice",
    "command",
    "exec",
    "eval",
    "source",
    "python3",
    "awk",
    "sed",
    "tee",
    "cd",
    "test",
    "[",
    "true",
    "declare",
    "export",
    "unset",
    "wc",
    "file",
    "tail",
    "./bin/tool",
    "/bin/rm",
    "\\rm",
    "r''m",
    "$'\\x72m'",
    "$x",
    "${x:-rm}",
    "$(echo rm)",
    "`echo ls`",
    "{ls,-la}",
    "{rm,-rf}",
    "l?",
    "/???/rm",
    "\"ls\"",
    "time",
    "nohup",
    "stdbuf",
    "builtin",
];
const ARGS: &[&str] = &[
    "-la",
    "-rn",
    "x",
    "README.md",
    ".env",
    "src",
    "../repo-secrets/creds.txt",
    "~/.ssh/id_rsa",
    "~",
    "/etc/passwd",
    "link_to_home/.bashrc",
    "*.md",
    ".e?v",
    "{a,b}",
    "$(rm -rf x)",
    "`touch p`",
    "\"$(ls)\"",
    "'$(ls)'",
    "$HOME",
    "${x@P}",
    "$((1+2))",
    "$(( $(id) ))",
    "-c",
    "'rm -rf x'",
    "'ls src'",
    "--output=out.txt",
    "-exec",
    "rm",
    "{}",
    ";",
    "\\;",
    "+",
    "-name",
    "'*.c'",
    "log",
    "show",
    "diff",
    "add",
    "commit",
    "-m",
    "msg",
    "-C",
    "..",
    "--",
    "-",
    "-n",
    "5",
    "-v",
    "a[$(id)]",
    "'a[$(id)]'",
    "$'\\x3b'",
    "-I{}",
    "sh",
    "ls",
    "-p",
    "--exec=id",
    "-o",
    "/tmp/x",
    "x=1",
    "PAGER=sh",
    "-s",
    "KILL",
    "1",
    "@(a|b)",
    "<(ls)",
    "-e",
    "'s/x/y/e'",
    "-i",
];
const SEPS: &[&str] = &[" ; ", " && ", " || ", " | ", " & ", "\n", " |& "];
const REDIRS: &[&str] = &[
    " > out.txt",
    " >> ~/.bashrc",
    " < README.md",
    " 2>&1",
    " &> /dev/null",
    " > $(echo x)",
    " <<< \"$(id)\"",
    " <<EOF\n$(id)\nEOF\n",
    " <<'EOF'\n$(id)\nEOF\n",
    " >| link_to_home/x",
    " 3> /dev/tcp/h/1",
    " > >(cat)",
];

/// One generated simple command.
fn simple(r: &mut Rng) -> String {
    let mut s = String::new();
    if r.below(8) == 0 {
        s.push_str(r.pick(&["PATH=.", "X=1", "LD_PRELOAD=x", "GIT_PAGER=sh", "a=$(id)"]));
        s.push(' ');
    }
    s.push_str(r.pick(NAMES));
    for _ in 0..r.below(4) {
        s.push(' ');
        s.push_str(r.pick(ARGS));
    }
    if r.below(5) == 0 {
        s.push_str(r.pick(REDIRS));
    }
    s
}

/// One generated command line: lists, pipelines and compound commands of simple commands.
pub fn generate(r: &mut Rng, depth: usize) -> String {
    let item = |r: &mut Rng, depth: usize| -> String {
        if depth > 2 {
            return simple(r);
        }
        match r.below(12) {
            0 => format!("{{ {}; }}", generate(r, depth + 1)),
            1 => format!("( {} )", generate(r, depth + 1)),
            2 => format!("if {}; then {}; fi", simple(r), generate(r, depth + 1)),
            3 => format!(
                "for f in {}; do {}; done",
                r.pick(ARGS),
                generate(r, depth + 1)
            ),
            4 => format!("while {}; do {}; done", simple(r), simple(r)),
            5 => format!("case {} in *) {};; esac", r.pick(ARGS), simple(r)),
            6 => format!("f() {{ {}; }}; f", simple(r)),
            7 => format!("echo \"$({})\"", generate(r, depth + 1)),
            8 => format!("sh -c '{}'", simple(r).replace('\'', "")),
            9 => format!(
                "[[ {} ]]",
                r.pick(&["-v 'a[$(id)]'", "-f README.md", "x -eq 1", "$(id) == x"])
            ),
            10 => format!("(( {} ))", r.pick(&["x=1", "a[$(id)]", "1+2"])),
            _ => simple(r),
        }
    };
    let mut s = item(r, depth);
    for _ in 0..r.below(3) {
        s.push_str(r.pick(SEPS));
        s.push_str(&item(r, depth));
    }
    s
}

/// Generated scopes: which commands are listed varies, the paths stay the fixture's.
pub fn generate_scope(r: &mut Rng) -> String {
    let pool = [
        "ls", "cat", "grep", "find", "head", "git log", "git", "echo", "touch", "mkdir", "sh",
        "env", "xargs", "awk", "sed", "tee", "python3", "wc", "file", "tail",
    ];
    let mut ro = Vec::new();
    let mut sw = Vec::new();
    for p in pool {
        match r.below(4) {
            0 => ro.push(format!("\"{p}\"")),
            1 => sw.push(format!("\"{p}\"")),
            _ => {}
        }
    }
    let deny = r.pick(&["[rm, curl]", "[]", "[rm, sh, bash]", "[git push]"]);
    let write = r.pick(&["[]", "[\"@ROOT@/repo/**\"]"]);
    format!(
        "paths:\n  read: [\"@ROOT@/repo/**\"]\n  write: {write}\n  deny: [\"**/.env\"]\nbash_tools:\n  categories:\n    read_only: [{}]\n    safe_write: [{}]\n  deny: {deny}\n  path_arguments: {}\n",
        ro.join(", "),
        sw.join(", "),
        r.pick(&["enforce", "warn"])
    )
}

/// Decodes the escapes of the attack corpora (`\n`, `\t`, `\0`, `\r`, `\\`, `\uXXXX`).
pub fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('0') => out.push('\0'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let hex: String = it.by_ref().take(4).collect();
                out.extend(u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32));
            }
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Every command of the attack corpora and the real corpus (with `@ROOT@` replaced).
pub fn corpus_commands(manifest_dir: &Path) -> Vec<String> {
    let root = Fixture::get().root.to_string_lossy().into_owned();
    let mut out = Vec::new();
    let read = |name: &str| {
        let f = manifest_dir.join("tests/corpus").join(name);
        std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()))
    };
    for name in ["attacks.tsv", "attacks-extra.tsv"] {
        for l in read(name).lines().skip(1) {
            if let Some(c) = l.split('\t').nth(1) {
                out.push(unescape(c).replace("@ROOT@", &root));
            }
        }
    }
    for l in read("real-commands.jsonl").lines() {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
            if let Some(c) = v["command"].as_str() {
                out.push(c.to_string());
            }
        }
    }
    out
}
