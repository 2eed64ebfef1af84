//! Flattening a parsed program into the simple commands bash would run: every pipeline stage,
//! list item, subshell, group, compound command body and condition, command and process
//! substitution, with the working directories `cd` gives each.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use brush_parser::ast;
use brush_parser::word::{TildeExpr, WordPiece, WordPieceWithSource};

use super::guard::{
    arithmetic_assignments, arithmetic_names, glob_reaches_parent, heredoc_continuation,
    name_subscript, tame_subscripts, unquoted_brace,
};
use super::words::{
    ansi_c_decode, brace_expand, has_glob, holds_substitution_text, is_plain, loop_glob,
    makes_glob, resolve_dir, GlobRefusal,
};
use super::{
    backquote_hint, options, parse_program, Context, Cwds, Flat, LoopGlob, Problem, RedirKind,
    Redirect, SimpleCmd, WordInfo, MAX_CWDS, MAX_DEPTH,
};

/// Parses `command` and flattens it, starting in `cwd`.
pub fn flatten(command: &str, cwd: &Path, home: Option<&Path>) -> Flat {
    let (flat, bound) = flatten_program(command, cwd, home, true);
    if loop_values_hold(&flat, &bound) {
        return flat;
    }
    flatten_program(command, cwd, home, false).0
}

/// [`flatten`], binding the variables of loops over known values when `bind` (with the names
/// bound).
fn flatten_program(command: &str, cwd: &Path, home: Option<&Path>, bind: bool) -> (Flat, Bound) {
    let mut f = Flattener::new(home, 0, vec![cwd.to_path_buf()], bind);
    match parse_program(command) {
        Ok(program) => {
            let state: Cwds = Some(Rc::from([cwd.to_path_buf()]));
            f.program(&program, state, Context::TopLevel);
        }
        Err(p) => f.out.problems.push(p),
    }
    // A parse error anywhere, in a command line with backquotes inside double quotes: say
    // why (the text between them is parsed as a command), without a position, which would
    // be one inside that text and not the command's.
    let hint = backquote_hint(command);
    if !hint.is_empty() {
        if let Some(Problem::Parse(m)) = f
            .out
            .problems
            .iter_mut()
            .find(|p| matches!(p, Problem::Parse(_)))
        {
            *m = format!("the command does not parse as bash.{hint}");
        }
    }
    let bound = Bound {
        names: f.bound_names,
        elsewhere: f.assigned_elsewhere,
    };
    (f.out, bound)
}

/// Flattens a script found inside another command (`sh -c SCRIPT`), running in `cwds`.
pub fn flatten_script(
    script: &str,
    cwds: Option<&[PathBuf]>,
    home: Option<&Path>,
    depth: usize,
) -> Flat {
    let (flat, bound) = flatten_script_with(script, cwds, home, depth, true);
    if loop_values_hold(&flat, &bound) {
        return flat;
    }
    flatten_script_with(script, cwds, home, depth, false).0
}

fn flatten_script_with(
    script: &str,
    cwds: Option<&[PathBuf]>,
    home: Option<&Path>,
    depth: usize,
    bind: bool,
) -> (Flat, Bound) {
    let mut f = Flattener::new(
        home,
        depth,
        cwds.map(<[PathBuf]>::to_vec).unwrap_or_default(),
        bind,
    );
    let cwds: Cwds = cwds.map(Rc::from);
    if depth > MAX_DEPTH {
        f.out
            .problems
            .push(Problem::Unsupported("scripts are nested too deeply".into()));
        return (f.out, Bound::default());
    }
    match parse_program(script) {
        Ok(program) => {
            f.program(&program, cwds, Context::Script);
        }
        Err(p) => f.out.problems.push(p),
    }
    let bound = Bound {
        names: f.bound_names,
        elsewhere: f.assigned_elsewhere,
    };
    (f.out, bound)
}

/// The variables loops bound to values, and the names set outside assignment words other
/// than by those loops.
#[derive(Default)]
struct Bound {
    names: Vec<String>,
    elsewhere: Vec<String>,
}

/// Most values a loop over globs may be judged with.
pub(super) const MAX_LOOP_VALUES: usize = 1000;

/// Most walks of loop bodies with a bound value in one command line (nested loops multiply
/// their values, and a body that changes directory is walked again from each place).
const MAX_LOOP_WALKS: usize = 4 * MAX_LOOP_VALUES;

/// Builtins that can set a variable by a name the engine does not see, or run text that
/// does (`read d`, `declare -n r=d`, `eval`, `source`, a trap run between commands).
const SETS_VARIABLES: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "wait",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "let",
    "unset",
    "eval",
    "source",
    ".",
    "trap",
    "enable",
    "printf",
    "compgen",
];

/// Variables bash changes by itself between the commands of a loop body.
const CHANGED_BY_BASH: &[&str] = &[
    "_", "LINES", "COLUMNS", "REPLY", "OPTARG", "OPTIND", "MAPFILE", "PWD", "OLDPWD",
];

/// Whether the values a loop bound its variables to (`names`) hold in every command: no
/// command line that binds a loop variable also sets it another way (an assignment, an
/// arithmetic or `${d:=x}` assignment, another `for` of that name) or runs a builtin that
/// could ([`SETS_VARIABLES`], also under `command` and `builtin`). When one does, the line
/// is flattened again without the bindings, and the variable is a value built at run time.
fn loop_values_hold(flat: &Flat, bound: &Bound) -> bool {
    if bound.names.is_empty() {
        return true;
    }
    let named = |n: &str| {
        bound
            .names
            .iter()
            .any(|b| b == n.split('[').next().unwrap_or(n))
    };
    flat.commands.iter().all(|c| {
        let words = c.words.iter().map(|w| w.value.as_deref());
        let mut sets = false;
        for w in words {
            match w {
                Some("command" | "builtin" | "time") => continue,
                Some(w) if w.starts_with('-') => continue,
                Some(w) => sets = SETS_VARIABLES.contains(&w),
                None => sets = false,
            }
            break;
        }
        !sets && !c.assignments.iter().any(|(n, _)| named(n))
    }) && !bound.elsewhere.iter().any(|n| named(n))
}

/// Working directories after a command, when it succeeded and when it failed.
pub(super) struct Post {
    ok: Cwds,
    fail: Cwds,
}

pub(super) fn union(a: &Cwds, b: &Cwds) -> Cwds {
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

pub(super) struct Flattener {
    home: Option<PathBuf>,
    out: Flat,
    depth: usize,
    /// Every directory a `cd` could have reached (for `cd -` and `popd`).
    seen_dirs: Vec<PathBuf>,
    /// The simple command whose output the next simple command reads (a pipeline stage).
    pipe_in: Option<Rc<SimpleCmd>>,
    /// The simple command pushed last.
    last_simple: Option<Rc<SimpleCmd>>,
    /// Whether loops over known values bind their variable.
    bind: bool,
    /// The loop variables in force, innermost last: a value, or `None` when the loop's
    /// values are built at run time (hiding an outer loop's value).
    bindings: Vec<(String, Option<String>)>,
    /// Every loop variable bound to values.
    bound_names: Vec<String>,
    /// Names set outside assignment words other than by a loop bound to values.
    assigned_elsewhere: Vec<String>,
    /// Walks of loop bodies with a bound value so far.
    loop_walks: usize,
    /// The names in [`Flat::evaluated`], and the pairs in [`Flat::copies`].
    evaluated_names: std::collections::HashSet<String>,
    copied: std::collections::HashSet<(String, String)>,
}

impl Flattener {
    fn new(home: Option<&Path>, depth: usize, seen_dirs: Vec<PathBuf>, bind: bool) -> Self {
        Flattener {
            home: home.map(Path::to_path_buf),
            out: Flat::default(),
            depth,
            seen_dirs,
            pipe_in: None,
            last_simple: None,
            bind,
            bindings: Vec::new(),
            bound_names: Vec::new(),
            assigned_elsewhere: Vec::new(),
            loop_walks: 0,
            evaluated_names: Default::default(),
            copied: Default::default(),
        }
    }

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
                ast::SeparatorOperator::Async => {
                    self.out.concurrent = true;
                    state
                }
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
                    Post {
                        ok: b.ok,
                        fail: union(&post.fail, &b.fail),
                    }
                }
                ast::AndOr::Or(p) => {
                    let b = self.pipeline(p, post.fail.clone(), ctx);
                    Post {
                        ok: union(&post.ok, &b.ok),
                        fail: b.fail,
                    }
                }
            };
        }
        post
    }

    fn pipeline(&mut self, p: &ast::Pipeline, cwds: Cwds, ctx: Context) -> Post {
        if p.seq.len() == 1 {
            if let Some(cmd) = p.seq.first() {
                let post = self.command(cmd, cwds, ctx);
                return if p.bang {
                    Post {
                        ok: post.fail,
                        fail: post.ok,
                    }
                } else {
                    post
                };
            }
        }
        // Every stage of a multi-stage pipeline runs in a subshell, all at once. A simple stage
        // records the simple stage before it, whose output it reads.
        self.out.concurrent = true;
        let mut prev: Option<Rc<SimpleCmd>> = None;
        for cmd in &p.seq {
            let simple = matches!(cmd, ast::Command::Simple(_));
            self.pipe_in = if simple { prev.take() } else { None };
            self.last_simple = None;
            self.command(cmd, cwds.clone(), ctx);
            self.pipe_in = None;
            prev = if simple {
                self.last_simple.take()
            } else {
                None
            };
        }
        Post {
            ok: cwds.clone(),
            fail: cwds,
        }
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
                Post {
                    ok: cwds.clone(),
                    fail: cwds,
                }
            }
            ast::Command::ExtendedTest(t, redirects) => {
                if let Some(r) = redirects {
                    let redirs = self.redirects(&r.0, &cwds, ctx);
                    self.push_redirect_only(redirs, cwds.clone(), ctx);
                }
                self.extended_test(&t.expr, &cwds, ctx);
                Post {
                    ok: cwds.clone(),
                    fail: cwds,
                }
            }
        }
    }

    fn push_redirect_only(&mut self, redirects: Vec<Redirect>, cwds: Cwds, ctx: Context) {
        if !redirects.is_empty() {
            self.out.commands.push(SimpleCmd {
                words: vec![],
                assignments: vec![],
                redirects,
                cwds,
                context: ctx,
                stdin_from: None,
            });
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
            ast::ExtendedTestExpr::UnaryTest(op, w) => {
                if let Some(i) = name_subscript(&w.value) {
                    self.evaluates(i, &format!("[[ {op} {} ]]", w.value));
                }
                self.test_operand(&w.value, cwds, ctx);
            }
            ast::ExtendedTestExpr::BinaryTest(op, a, b) => {
                use ast::BinaryPredicate::*;
                if matches!(
                    op,
                    ArithmeticEqualTo
                        | ArithmeticNotEqualTo
                        | ArithmeticLessThan
                        | ArithmeticLessThanOrEqualTo
                        | ArithmeticGreaterThan
                        | ArithmeticGreaterThanOrEqualTo
                ) {
                    let shown = format!("[[ {} {op} {} ]]", a.value, b.value);
                    self.evaluates(&a.value, &shown);
                    self.evaluates(&b.value, &shown);
                }
                self.test_operand(&a.value, cwds, ctx);
                self.test_operand(&b.value, cwds, ctx);
            }
        }
    }

    /// An operand of `[[ ]]`: `-v` and the arithmetic comparisons evaluate subscripts, so
    /// quoted substitution text in it would run (`[[ -v 'a[$(cmd)]' ]]`).
    /// The arithmetic comparisons evaluate their operands: what those assign counts
    /// (`[[ BASH_COMPAT=31 -eq 31 ]]`).
    fn test_operand(&mut self, raw: &str, cwds: &Cwds, ctx: Context) {
        for w in self.word(raw, cwds, ctx) {
            if let Some(v) = w.value.as_deref().filter(|v| v.contains(['=', '+', '-'])) {
                match arithmetic_assignments(v) {
                    Ok(names) => names.into_iter().for_each(|n| self.assigned(n)),
                    Err(p) => self.problem(p),
                }
            }
            if w.value.as_deref().is_some_and(holds_substitution_text) {
                self.problem(Problem::Unsupported(format!(
                    "the test operand `{raw}` holds command-substitution syntax that the test would evaluate"
                )));
            }
        }
    }

    fn compound(&mut self, c: &ast::CompoundCommand, cwds: Cwds, ctx: Context) -> Post {
        let same = |c: &Cwds| Post {
            ok: c.clone(),
            fail: c.clone(),
        };
        match c {
            ast::CompoundCommand::Arithmetic(a) => {
                self.arithmetic(
                    &a.expr.value,
                    &format!("(( {} ))", a.expr.value.trim()),
                    &cwds,
                    ctx,
                );
                same(&cwds)
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                let parts = [&f.initializer, &f.condition, &f.updater];
                let text: Vec<&str> = parts
                    .iter()
                    .map(|e| e.as_ref().map_or("", |e| e.value.trim()))
                    .collect();
                let shown = format!("for (( {} ))", text.join("; "));
                for e in parts.into_iter().flatten() {
                    self.arithmetic(&e.value, &shown, &cwds, ctx);
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
                let mut words = Vec::new();
                if let Some(values) = &f.values {
                    for w in values {
                        self.word_into(&w.value, &cwds, ctx, &mut words);
                    }
                }
                let name = &f.variable_name;
                let values = match &f.values {
                    Some(_)
                        if self.bind
                            && self.loop_walks < MAX_LOOP_WALKS
                            && !CHANGED_BY_BASH.contains(&name.as_str()) =>
                    {
                        self.loop_values(&words, &cwds)
                    }
                    _ => None,
                };
                let Some(values) = values else {
                    self.assigned(name);
                    match &f.values {
                        // `for x; do`: the positional parameters.
                        None => self.sets(name, Some(vec!["@".to_string()])),
                        Some(_) => {
                            for w in &words {
                                let sources = self.sources(w);
                                self.sets(name, sources);
                            }
                        }
                    }
                    self.bindings.push((name.clone(), None));
                    let body = self.loop_body(&f.body.list, cwds, ctx);
                    self.bindings.pop();
                    return same(&body);
                };
                for v in &values {
                    self.sets(name, Some(literal_names(v)));
                }
                for list in [&mut self.out.assigned, &mut self.bound_names] {
                    if !list.contains(name) {
                        list.push(name.clone());
                    }
                }
                // Each value from every directory the body may start in, until no pass adds
                // a directory (a `cd "$d"` in the body moves the next pass).
                let mut entry = cwds;
                loop {
                    let mut after = entry.clone();
                    for v in &values {
                        self.loop_walks += 1;
                        if self.loop_walks > MAX_LOOP_WALKS {
                            self.problem(Problem::Unsupported(format!(
                                "the loops of this command would be judged more than {MAX_LOOP_WALKS} times (once per value, nested loops multiplying); narrow their globs, or run them as separate commands"
                            )));
                            return same(&None);
                        }
                        self.bindings.push((name.clone(), Some(v.clone())));
                        let post =
                            self.quiet(|fl| fl.compound_list(&f.body.list, entry.clone(), ctx));
                        self.bindings.pop();
                        after = union(&after, &post);
                    }
                    if after == entry {
                        break;
                    }
                    entry = after;
                }
                same(&entry)
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
                self.problem(Problem::Unsupported(
                    "coprocesses (`coproc`) are not allowed".into(),
                ));
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
        let mut handle = |f: &mut Self,
                          item: &'a ast::CommandPrefixOrSuffixItem,
                          words: &mut Vec<WordInfo>| match item {
            ast::CommandPrefixOrSuffixItem::Word(w) => f.word_into(&w.value, &cwds, ctx, words),
            ast::CommandPrefixOrSuffixItem::AssignmentWord(a, raw) => {
                if let Some(assignment) = f.assignment(a, &raw.value, &cwds, ctx) {
                    assignments.push(assignment);
                }
            }
            ast::CommandPrefixOrSuffixItem::IoRedirect(r) => redirect_items.push(r),
            ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                f.process_substitution(sub, &cwds);
                words.push(WordInfo {
                    raw: "<(...)".into(),
                    value: None,
                    glob: false,
                });
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
                ast::CommandPrefixOrSuffixItem::AssignmentWord(_, raw)
                    if s.word_or_name.is_some() =>
                {
                    self.word_into(&raw.value, &cwds, ctx, &mut words);
                }
                other => handle(self, other, &mut words),
            }
        }
        let redirects = self.redirects(redirect_items, &cwds, ctx);
        let post = self.directory_change(&words, &cwds);
        let cmd = SimpleCmd {
            words,
            assignments,
            redirects,
            cwds,
            context: ctx,
            stdin_from,
        };
        self.last_simple = Some(Rc::new(cmd.clone()));
        self.out.commands.push(cmd);
        post
    }

    /// `cd`, `pushd`, `popd` change the directory of what follows.
    fn directory_change(&mut self, words: &[WordInfo], cwds: &Cwds) -> Post {
        let unchanged = Post {
            ok: cwds.clone(),
            fail: cwds.clone(),
        };
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
            return Post {
                ok: None,
                fail: cwds.clone(),
            };
        }
        if name == "popd" {
            let all = union(cwds, &Some(Rc::from(self.seen_dirs.as_slice())));
            return Post {
                ok: all,
                fail: cwds.clone(),
            };
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
        Post {
            ok,
            fail: cwds.clone(),
        }
    }

    fn assignment(
        &mut self,
        a: &ast::Assignment,
        _raw: &str,
        cwds: &Cwds,
        ctx: Context,
    ) -> Option<(String, WordInfo)> {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, idx) => {
                self.arithmetic(idx, &format!("{n}[{idx}]="), cwds, ctx);
                n.clone()
            }
        };
        match &a.value {
            ast::AssignmentValue::Scalar(w) => {
                let info = self.assignment_value(&w.value, cwds, ctx);
                let sources = self.sources(&info);
                self.sets(&name, sources);
                Some((name, info))
            }
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.evaluates(&k.value, &format!("{name}=([{}]=...)", k.value));
                        self.word(&k.value, cwds, ctx);
                    }
                    let info = self.assignment_value(&v.value, cwds, ctx);
                    let sources = self.sources(&info);
                    self.sets(&name, sources);
                }
                Some((
                    name,
                    WordInfo {
                        raw: "(...)".into(),
                        value: None,
                        glob: false,
                    },
                ))
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
            None if tame_subscripts(raw).is_ok() => brush_parser::word::parse(raw, &options())
                .ok()
                .map(|p| literal_text(&p)),
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
        self.out.concurrent = true;
        self.compound_list(&sub.list, cwds.clone(), Context::ProcessSubstitution);
    }

    fn redirects<'a>(
        &mut self,
        items: impl IntoIterator<Item = &'a ast::IoRedirect>,
        cwds: &Cwds,
        ctx: Context,
    ) -> Vec<Redirect> {
        let mut out = Vec::new();
        for r in items {
            match r {
                ast::IoRedirect::File(_, kind, target) => {
                    let k = match kind {
                        ast::IoFileRedirectKind::Read => RedirKind::Read,
                        ast::IoFileRedirectKind::Write | ast::IoFileRedirectKind::Clobber => {
                            RedirKind::Write
                        }
                        ast::IoFileRedirectKind::Append => RedirKind::Append,
                        ast::IoFileRedirectKind::ReadAndWrite => RedirKind::ReadWrite,
                        ast::IoFileRedirectKind::DuplicateInput
                        | ast::IoFileRedirectKind::DuplicateOutput => RedirKind::Dup,
                    };
                    match target {
                        ast::IoFileRedirectTarget::Filename(w) => {
                            let info = self.single_word(&w.value, cwds, ctx);
                            out.push(Redirect {
                                kind: k,
                                target: Some(info),
                            });
                        }
                        ast::IoFileRedirectTarget::Fd(_) => out.push(Redirect {
                            kind: RedirKind::Dup,
                            target: None,
                        }),
                        ast::IoFileRedirectTarget::Duplicate(w) => {
                            // `>&WORD`: a number or `-` duplicates; anything else is a file.
                            let info = self.single_word(&w.value, cwds, ctx);
                            let is_fd = matches!(info.exact(), Some(v) if v == "-" || v.trim_end_matches('-').chars().all(|c| c.is_ascii_digit()) && !v.is_empty());
                            if is_fd {
                                out.push(Redirect {
                                    kind: RedirKind::Dup,
                                    target: None,
                                });
                            } else {
                                out.push(Redirect {
                                    kind: RedirKind::Write,
                                    target: Some(info),
                                });
                            }
                        }
                        ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                            self.process_substitution(sub, cwds);
                            out.push(Redirect {
                                kind: RedirKind::Dup,
                                target: None,
                            });
                        }
                    }
                }
                ast::IoRedirect::HereDocument(_, doc) => {
                    if doc.requires_expansion {
                        if let Err(p) = heredoc_continuation(&doc.doc.value) {
                            self.problem(p);
                        }
                        self.heredoc(&doc.doc.value, cwds, ctx);
                    }
                    out.push(Redirect {
                        kind: RedirKind::Data,
                        target: None,
                    });
                }
                ast::IoRedirect::HereString(_, w) => {
                    self.single_word(&w.value, cwds, ctx);
                    out.push(Redirect {
                        kind: RedirKind::Data,
                        target: None,
                    });
                }
                ast::IoRedirect::OutputAndError(w, append) => {
                    let info = self.single_word(&w.value, cwds, ctx);
                    let kind = if *append {
                        RedirKind::Append
                    } else {
                        RedirKind::Write
                    };
                    out.push(Redirect {
                        kind,
                        target: Some(info),
                    });
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
            Err(e) => self.problem(Problem::Parse(format!(
                "a here-document does not parse: {e}"
            ))),
        }
    }

    /// A variable the shell sets outside an assignment word (a `for` loop's name,
    /// `${NAME:=value}`, `NAME=` in arithmetic), for the judge to check as it checks
    /// `NAME=value`.
    fn assigned(&mut self, name: &str) {
        if !self.out.assigned.iter().any(|n| n == name) {
            self.out.assigned.push(name.to_string());
        }
        if !self.assigned_elsewhere.iter().any(|n| n == name) {
            self.assigned_elsewhere.push(name.to_string());
        }
    }

    /// Arithmetic evaluates the text of the variables `text` names ([`Flat::evaluated`]).
    /// `shown` is cut to its first 80 characters.
    fn evaluates(&mut self, text: &str, shown: &str) {
        for n in arithmetic_names(text) {
            if self.evaluated_names.insert(n.to_string()) {
                self.out
                    .evaluated
                    .push((n.to_string(), shown.chars().take(80).collect()));
            }
        }
    }

    /// `name` takes a value made from the variables `sources` (`None`: from something known
    /// only at run time), for [`Flat::run_time`] and [`Flat::copies`].
    fn sets(&mut self, name: &str, sources: Option<Vec<String>>) {
        match sources {
            None => {
                if !self.out.run_time.iter().any(|n| n == name) {
                    self.out.run_time.push(name.to_string());
                }
            }
            Some(from) => {
                for f in from {
                    let pair = (name.to_string(), f);
                    if pair.0 != pair.1 && self.copied.insert(pair.clone()) {
                        self.out.copies.push(pair);
                    }
                }
            }
        }
    }

    /// The variables a word's value is made from, or names: [`Self::value_sources`] for a
    /// value built at run time, the names in a literal one (arithmetic evaluating `y=x`
    /// evaluates `x`); `None` for a glob, whose values are the names of files.
    fn sources(&self, w: &WordInfo) -> Option<Vec<String>> {
        match &w.value {
            _ if w.glob => None,
            Some(v) => Some(literal_names(v)),
            None => self.value_sources(&w.raw),
        }
    }

    /// The variables a word's value is made from (`$x`, `${x%.*}`; a loop variable bound to
    /// a value is literal text); `None` when it holds something known only at run time (a
    /// command substitution, an indirect expansion) or does not parse.
    fn value_sources(&self, raw: &str) -> Option<Vec<String>> {
        fn walk(
            f: &Flattener,
            raw: &str,
            pieces: &[WordPieceWithSource],
            out: &mut Vec<String>,
        ) -> bool {
            pieces.iter().all(|p| match &p.piece {
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => walk(f, raw, inner, out),
                WordPiece::ParameterExpansion(expr) if f.bound_value(expr).is_some() => true,
                WordPiece::ParameterExpansion(_) => {
                    let names =
                        arithmetic_names(raw.get(p.start_index..p.end_index).unwrap_or("!"));
                    out.extend(names.iter().map(|n| n.to_string()));
                    !names.contains(&"!")
                }
                WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
                    false
                }
                _ => true,
            })
        }
        tame_subscripts(raw).ok()?;
        let pieces = brush_parser::word::parse(raw, &options()).ok()?;
        let mut out = Vec::new();
        walk(self, raw, &pieces, &mut out).then_some(out)
    }

    /// The values a `for` loop's words (`words`, after brace expansion) give its variable,
    /// known before it runs: literal words, and literal globs expanded as bash would in
    /// every directory the loop may start in ([`loop_glob`]). `None` when a word is built at
    /// run time, or is a glob mixed with quoted text, or the directory is unknown; a problem
    /// (and `None`) when a glob lists too many entries or a value could be read as an option.
    fn loop_values(&mut self, words: &[WordInfo], cwds: &Cwds) -> Option<Vec<String>> {
        let mut out: Vec<String> = Vec::new();
        for w in words {
            let v = w.value.as_ref()?;
            if !w.glob {
                self.loop_value_text(&w.raw, v);
                out.push(v.clone());
                continue;
            }
            // Glob characters that are quoted (or come from a quoted variable) beside unquoted
            // ones, and braces, would need a pattern of their own; a pattern that bash 5.1
            // expands through `..` is not expanded.
            if v.contains(['{', '}', '\\']) || self.quoted_glob(&w.raw) || glob_reaches_parent(v) {
                return None;
            }
            let mut found: Vec<String> = Vec::new();
            for d in cwds.as_deref()? {
                let hits = match loop_glob(d, v) {
                    // No match: bash leaves the pattern as it is.
                    Ok(hits) if hits.is_empty() => vec![v.clone()],
                    Ok(hits) => hits,
                    Err(GlobRefusal::Unknown) => return None,
                    Err(GlobRefusal::TooMany) => return self.too_many_loop_values(&w.raw),
                };
                for h in hits {
                    if !found.contains(&h) {
                        found.push(h);
                    }
                }
            }
            let prefix: PathBuf = Path::new(v)
                .components()
                .take_while(|c| !has_glob(&c.as_os_str().to_string_lossy()))
                .collect();
            let bases = cwds.as_deref()?.iter().map(|d| d.join(&prefix)).collect();
            self.out.loop_globs.push(LoopGlob {
                raw: w.raw.clone(),
                after: self.out.commands.len(),
                bases,
            });
            for h in &found {
                self.loop_value_text(&w.raw, h);
            }
            if let Some(o) = found.iter().find(|h| h.starts_with('-')) {
                self.problem(Problem::Unsupported(format!(
                    "the loop over `{}` gives the value `{o}`, which a command would read as an option; write the pattern as `./{}` so that every value starts with `./`",
                    w.raw, w.raw
                )));
                return None;
            }
            out.extend(found);
            if out.len() > MAX_LOOP_VALUES {
                return self.too_many_loop_values(&w.raw);
            }
        }
        Some(out)
    }

    /// A loop value holding command-substitution syntax (a file named `a[$(cmd)]`) would
    /// run it wherever an arithmetic expansion evaluated the variable (`$((f))`), as an
    /// assignment's value would ([`Self::assignment_value`]).
    fn loop_value_text(&mut self, raw: &str, value: &str) {
        if holds_substitution_text(value) {
            self.problem(Problem::Unsupported(format!(
                "the loop over `{raw}` gives the value `{value}`, which holds command-substitution syntax that a later expansion could run; rename the file, or name the other files"
            )));
        }
    }

    fn too_many_loop_values<T>(&mut self, raw: &str) -> Option<T> {
        self.problem(Problem::Unsupported(format!(
            "the loop over `{raw}` gives more than {MAX_LOOP_VALUES} values, too many to judge; narrow the glob, or run the command on fewer files at a time"
        )));
        None
    }

    /// Whether the word `raw` holds glob characters or backslashes that are quoted, escaped,
    /// or come from a loop variable's value (so they match themselves); also when it does not
    /// parse.
    fn quoted_glob(&self, raw: &str) -> bool {
        fn special(t: &str) -> bool {
            t.contains(['*', '?', '[', ']', '\\'])
        }
        fn walk(f: &Flattener, pieces: &[WordPieceWithSource], quoted: bool) -> bool {
            pieces.iter().any(|p| match &p.piece {
                WordPiece::Text(t) => quoted && special(t),
                WordPiece::SingleQuotedText(t)
                | WordPiece::AnsiCQuotedText(t)
                | WordPiece::EscapeSequence(t) => special(t),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => walk(f, inner, true),
                WordPiece::ParameterExpansion(expr) => f.bound_value(expr).is_none_or(special),
                WordPiece::TildeExpansion(_) => f
                    .home
                    .as_ref()
                    .is_none_or(|h| special(&h.to_string_lossy())),
                _ => true,
            })
        }
        match brush_parser::word::parse(raw, &options()) {
            Ok(pieces) => walk(self, &pieces, false),
            Err(_) => true,
        }
    }

    /// The value a loop gave the variable that `expr` names plainly (`$d`, `${d}`).
    fn bound_value(&self, expr: &brush_parser::word::ParameterExpr) -> Option<&str> {
        let brush_parser::word::ParameterExpr::Parameter {
            parameter: brush_parser::word::Parameter::Named(n),
            indirect: false,
        } = expr
        else {
            return None;
        };
        self.bindings
            .iter()
            .rev()
            .find(|(b, _)| b == n)
            .and_then(|(_, v)| v.as_deref())
    }

    /// Arithmetic text (`shown` as written around it): what it assigns, what it evaluates.
    fn arithmetic(&mut self, text: &str, shown: &str, cwds: &Cwds, ctx: Context) {
        self.evaluates(text, shown);
        match arithmetic_assignments(text) {
            Ok(names) => {
                for n in names {
                    self.assigned(n);
                }
            }
            Err(p) => self.problem(p),
        }
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
        let braced =
            alternatives.len() != 1 || alternatives.first().map(String::as_str) != Some(raw);
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
                    raw = format!(
                        "{}${{gptel_scope_substituted}}{}",
                        &raw[..start],
                        &raw[end + 1..]
                    );
                }
                None => {
                    self.problem(Problem::Parse(format!(
                        "a command substitution in `{raw}` does not parse"
                    )));
                    return WordInfo {
                        raw: written.to_string(),
                        value: None,
                        glob: false,
                    };
                }
            }
        }
        self.problem(Problem::Unsupported(
            "too many command substitutions in one word".into(),
        ));
        WordInfo {
            raw: written.to_string(),
            value: None,
            glob: false,
        }
    }

    /// Analyzes a word; also returns where a `$(` sits whose body did not parse as cut.
    fn analyze(&mut self, raw: &str, cwds: &Cwds, ctx: Context) -> (WordInfo, Option<usize>) {
        let pieces = match tame_subscripts(raw) {
            Ok(()) => brush_parser::word::parse(raw, &options()),
            Err(p) => {
                self.problem(p);
                return (
                    WordInfo {
                        raw: raw.to_string(),
                        value: None,
                        glob: false,
                    },
                    None,
                );
            }
        };
        match pieces {
            Ok(pieces) => {
                let mut acc = Acc::default();
                self.pieces(raw, &pieces, false, cwds, ctx, &mut acc);
                let info = WordInfo {
                    raw: raw.to_string(),
                    value: if acc.dynamic { None } else { Some(acc.text) },
                    glob: acc.glob,
                };
                (info, acc.bad_substitution)
            }
            Err(e) => {
                self.problem(Problem::Parse(format!(
                    "the word `{raw}` does not parse: {e}"
                )));
                (
                    WordInfo {
                        raw: raw.to_string(),
                        value: None,
                        glob: false,
                    },
                    None,
                )
            }
        }
    }

    fn pieces(
        &mut self,
        raw: &str,
        pieces: &[WordPieceWithSource],
        quoted: bool,
        cwds: &Cwds,
        ctx: Context,
        acc: &mut Acc,
    ) {
        for p in pieces {
            let source = raw.get(p.start_index..p.end_index).unwrap_or("");
            match &p.piece {
                WordPiece::Text(t) => {
                    if t.ends_with('$')
                        && raw.get(p.end_index..p.end_index + 1) == Some("(")
                        && acc.bad_substitution.is_none()
                    {
                        acc.bad_substitution = Some(p.end_index - 1);
                    }
                    if !quoted {
                        if t.contains("$[") {
                            self.problem(Problem::Unsupported(
                                "`$[ ]` arithmetic is not allowed".into(),
                            ));
                        }
                        if makes_glob(t, raw) {
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
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner, true, cwds, ctx, acc)
                }
                WordPiece::TildeExpansion(t) => match (t, &self.home) {
                    (TildeExpr::Home, Some(h)) => acc.text.push_str(&h.to_string_lossy()),
                    _ => acc.dynamic = true,
                },
                WordPiece::ParameterExpansion(expr) => {
                    // A loop variable bound to a value: inside double quotes, that value;
                    // unquoted, only a value that splitting and globbing leave as it is.
                    if let Some(v) = self.bound_value(expr) {
                        if quoted || !(v.is_empty() || v.contains([' ', '\t', '\n']) || has_glob(v))
                        {
                            acc.text.push_str(v);
                            continue;
                        }
                    }
                    acc.dynamic = true;
                    if let brush_parser::word::ParameterExpr::AssignDefaultValues {
                        parameter:
                            brush_parser::word::Parameter::Named(n)
                            | brush_parser::word::Parameter::NamedWithIndex { name: n, .. }
                            | brush_parser::word::Parameter::NamedWithAllIndices { name: n, .. },
                        ..
                    } = expr
                    {
                        self.assigned(n);
                        let sources = arithmetic_names(source)
                            .into_iter()
                            .filter(|s| s != n)
                            .map(|s| (s != "!").then(|| s.to_string()))
                            .collect();
                        self.sets(n, sources);
                    }
                    // A substring's offset and length, and an index, are arithmetic: what
                    // they assign counts.
                    let mut arithmetic: Vec<&str> = Vec::new();
                    if let brush_parser::word::ParameterExpr::Substring { offset, length, .. } =
                        expr
                    {
                        arithmetic.push(&offset.value);
                        arithmetic.extend(length.as_ref().map(|l| l.value.as_str()));
                    }
                    let index = source
                        .strip_prefix("${")
                        .and_then(|t| t.split_once('['))
                        .filter(|(n, _)| {
                            n.bytes().all(|c| {
                                c.is_ascii_alphanumeric() || matches!(c, b'_' | b'!' | b'#')
                            })
                        });
                    if let Some((_, rest)) = index {
                        arithmetic.push(rest.rsplit_once(']').map_or(rest, |(i, _)| i));
                    }
                    for text in arithmetic {
                        self.evaluates(text, source);
                        match arithmetic_assignments(text) {
                            Ok(names) => names.into_iter().for_each(|n| self.assigned(n)),
                            Err(p) => self.problem(p),
                        }
                    }
                    if matches!(
                        expr,
                        brush_parser::word::ParameterExpr::Transform {
                            op: brush_parser::word::ParameterTransformOp::PromptExpand,
                            ..
                        }
                    ) {
                        self.problem(Problem::Unsupported(
                            "`${var@P}` prompt expansion can run commands; it is not allowed"
                                .into(),
                        ));
                    }
                    if source.contains("$(")
                        || source.contains('`')
                        || source.contains("<(")
                        || source.contains(">(")
                        || source.contains("$[")
                    {
                        self.problem(Problem::Unsupported(format!(
                            "command substitution inside a parameter expansion (`{source}`) is not allowed; run the command separately"
                        )));
                    }
                }
                WordPiece::CommandSubstitution(body) => {
                    acc.dynamic = true;
                    match parse_program(body) {
                        Ok(program) => self.substitution_program(&program, cwds),
                        Err(_) if acc.bad_substitution.is_none() => {
                            acc.bad_substitution = Some(p.start_index)
                        }
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
                    self.arithmetic(&expr.value, source, cwds, ctx);
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
            self.problem(Problem::Unsupported(
                "command substitutions are nested too deeply".into(),
            ));
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
pub(super) fn substitution_extent(raw: &str, start: usize) -> Option<(usize, ast::Program)> {
    if raw.get(start..start + 2) != Some("$(") {
        return None;
    }
    const END: &str = "__gptel_scope_end__";
    let body_start = start + 2;
    let closes: Vec<usize> = raw
        .get(body_start..)?
        .match_indices(')')
        .map(|(off, _)| body_start + off)
        .collect();
    for &last in closes.iter().rev() {
        let text = &raw[body_start..last];
        let Ok(tokens) = brush_parser::tokenize_str(&format!("{text}\n{END}")) else {
            continue;
        };
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
        for end in operators
            .map(|off| body_start + off)
            .chain(std::iter::once(last))
        {
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
pub(super) struct Acc {
    text: String,
    dynamic: bool,
    glob: bool,
    /// A `$(` whose body, as the word parser cut it, does not parse.
    bad_substitution: Option<usize>,
}

/// The variables a literal value names, which arithmetic evaluating it evaluates in turn.
pub(super) fn literal_names(value: &str) -> Vec<String> {
    arithmetic_names(value)
        .into_iter()
        .filter(|n| *n != "!")
        .map(str::to_string)
        .collect()
}

/// The literal (quoted or plain) text of a word's pieces, without its expansions.
pub(super) fn literal_text(pieces: &[WordPieceWithSource]) -> String {
    let mut out = String::new();
    for p in pieces {
        match &p.piece {
            WordPiece::Text(t) | WordPiece::SingleQuotedText(t) | WordPiece::AnsiCQuotedText(t) => {
                out.push_str(t)
            }
            WordPiece::EscapeSequence(e) => out.push_str(e.strip_prefix('\\').unwrap_or(e)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => out.push_str(&literal_text(inner)),
            _ => {}
        }
    }
    out
}
