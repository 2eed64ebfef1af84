//! Step 5 for the commands that read a whole tree: `grep -r`, `rg`, `git grep`, `find -exec`,
//! `tar c`, `zip -r`, `cp -r`, `rsync -r`, and readers of names produced at run time
//! (`find . | xargs cat`).
//!
//! A deny pattern covers entries the command never names: `grep -rn KEY .` reads `./.env`.
//! At decision time each traversal root is walked for denied entries (names only, bounded:
//! [`crate::policy::denied`]); an entry the tool would read, and that its own exclusions
//! (`grep --exclude`, `rg -g '!…'`, `find -not -name …`, `git grep -- ':!…'`) do not provably
//! skip, refuses the command with `reaches_denied_path`. The exclusions are matched as each
//! tool matches them; where the engine is unsure (a pattern form it does not model, a
//! predicate it cannot evaluate), the entry counts as read.

use std::fs;
use std::path::{Path, PathBuf};

use ignore::overrides::OverrideBuilder;

use crate::policy::denied::{self, Limits, Reach};
use crate::policy::paths::{self, Access, PathVerdict};
use crate::scope::semantics::{CommandSemantics, OperandKind};
use crate::shell::WordInfo;
use crate::Reason;

use super::programs::find_split;
use super::scope::{glob_base, glob_expand};
use super::{argv, basename, Judge, PathEvidence, DENIED};

/// The reason code of a refusal for a denied entry a recursive reader would reach.
pub(super) const REACHES_DENIED: Reason = Reason::ReachesDeniedPath;

/// Whether `name` matches the shell wildcard `pattern` as fnmatch(3) does without
/// `FNM_PERIOD` (a leading dot is matched by `*`): `*`, `?`, `[...]` (with `!` or `^`
/// negation and ranges) and `\` quoting. `pathname`: `/` is matched only by itself;
/// `fold`: case-insensitive (ASCII). `None` when the pattern holds a form not modelled
/// here (a character class `[[:alpha:]]`, an unterminated bracket): callers are then unsure.
pub(super) fn fnmatch(pattern: &str, name: &str, pathname: bool, fold: bool) -> Option<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    fn eq(a: char, b: char, fold: bool) -> bool {
        a == b || (fold && a.eq_ignore_ascii_case(&b))
    }
    /// The bracket expression at `p[i]` (`[`): whether it matches `c`, and where it ends.
    fn bracket(p: &[char], i: usize, c: char, fold: bool) -> Option<(bool, usize)> {
        let mut j = i + 1;
        let negate = matches!(p.get(j), Some('!') | Some('^'));
        if negate {
            j += 1;
        }
        let mut hit = false;
        let mut first = true;
        loop {
            let ch = *p.get(j)?;
            if ch == ']' && !first {
                break;
            }
            first = false;
            if ch == '[' && matches!(p.get(j + 1), Some(':') | Some('=') | Some('.')) {
                return None;
            }
            let lo = if ch == '\\' {
                j += 1;
                *p.get(j)?
            } else {
                ch
            };
            if p.get(j + 1) == Some(&'-') && p.get(j + 2).is_some_and(|c| *c != ']') {
                let mut hi = *p.get(j + 2)?;
                j += 2;
                if hi == '\\' {
                    j += 1;
                    hi = *p.get(j)?;
                }
                let within = |x: char| lo <= x && x <= hi;
                if within(c)
                    || (fold && (within(c.to_ascii_lowercase()) || within(c.to_ascii_uppercase())))
                {
                    hit = true;
                }
            } else if eq(lo, c, fold) {
                hit = true;
            }
            j += 1;
        }
        Some((hit != negate, j + 1))
    }
    // Backtracking on the last `*` only: linear in practice, exact for these patterns.
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let c = n[ni];
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') if !(pathname && c == '/') => Some(pi + 1),
            Some('[') if !(pathname && c == '/') => match bracket(&p, pi, c, fold) {
                None => {
                    // `[` with no closing `]` matches itself; a class is not modelled.
                    if p[pi + 1..].contains(&']') {
                        return None;
                    }
                    (c == '[').then_some(pi + 1)
                }
                Some((true, end)) => Some(end),
                Some((false, _)) => None,
            },
            Some('\\') => match p.get(pi + 1) {
                Some(&q) if eq(q, c, fold) => Some(pi + 2),
                Some(_) => None,
                None => (c == '\\').then_some(pi + 1),
            },
            Some(&q) if q != '*' && eq(q, c, fold) => Some(pi + 1),
            _ => None,
        };
        match step {
            Some(next) => {
                pi = next;
                ni += 1;
            }
            None => match star {
                Some((sp, sn)) if !(pathname && n[sn] == '/') => {
                    star = Some((sp, sn + 1));
                    pi = sp + 1;
                    ni = sn + 1;
                }
                _ => return Some(false),
            },
        }
    }
    Some(p[pi..].iter().all(|c| *c == '*'))
}

/// Most entries looked at inside denied directories, over one decision's walk of a root,
/// when the tool would enter them and only their content's names can tell (`find . -name
/// '*.md' -exec cat {} +` and a denied `.secret/`).
const DENIED_DIR_ENTRIES: usize = 10_000;

/// The entries under `dir` (not followed through symlinks), within `budget` (decreased);
/// `None` past it or on an error.
fn dir_entries(dir: &Path, budget: &mut usize) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    for r in ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .build()
    {
        let e = r.ok()?;
        if e.depth() == 0 {
            continue;
        }
        *budget = budget.checked_sub(1)?;
        out.push(e.into_path());
    }
    out.sort();
    Some(out)
}

/// What a tree reader does with the symbolic links it meets below its roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Links {
    /// A link to a file is read through (`find -exec cat`, `grep -R`, `zip`).
    pub files: bool,
    /// A link to a directory is entered (`grep -R`, `rg -L`, `find -L`, `cp -L`).
    pub dirs: bool,
}

/// Most directories entered through links in one decision, and how deep links in linked
/// trees are followed; past either the answer is "cannot tell".
const LINKED_DIRS: usize = 64;
const LINK_DEPTH: usize = 4;

/// The symbolic links under `dir` (not followed), within the walk's entry limit; `None`
/// past it or on an error.
fn links_under(dir: &Path) -> Option<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    for r in ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .hidden(false)
        .follow_links(false)
        .build()
    {
        let e = r.ok()?;
        seen += 1;
        if seen > Limits::default().max_entries {
            return None;
        }
        if e.depth() > 0 && e.path_is_symlink() {
            out.push(e.into_path());
        }
    }
    out.sort();
    Some(out)
}

/// What kind of entry a denied path is (not followed through symlinks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Dir,
    File,
    Link,
    Other,
}

impl Kind {
    fn of(p: &Path) -> Kind {
        match fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => Kind::Dir,
            Ok(m) if m.is_file() => Kind::File,
            Ok(m) if m.file_type().is_symlink() => Kind::Link,
            _ => Kind::Other,
        }
    }
}

/// One denied entry below a traversal root, as the tool would meet it.
#[derive(Debug, Clone)]
pub(super) struct Entry<'p> {
    /// The root as the command wrote it (`.`, `src`, `/abs/dir`).
    pub root: &'p str,
    /// The entry's path below the root (not empty).
    pub rel: &'p Path,
    pub kind: Kind,
    /// The command's working directory.
    pub cwd: &'p Path,
}

impl Entry<'_> {
    /// The path as the tool prints it: the root as written, `/`, the rest.
    fn shown(&self) -> String {
        let rel = self.rel.to_string_lossy();
        if self.root.ends_with('/') {
            format!("{}{rel}", self.root)
        } else {
            format!("{}/{rel}", self.root)
        }
    }

    /// The names of the directories between the root and the entry.
    fn ancestors(&self) -> Vec<String> {
        let parts: Vec<String> = self
            .rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        parts[..parts.len().saturating_sub(1)].to_vec()
    }

    fn name(&self) -> String {
        self.rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// How a tool that walks a tree skips entries, in its own syntax.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Skips {
    /// Nothing the engine credits (`tar`, `zip`, `cp`, `rsync`, names read from input).
    Nothing,
    /// GNU grep: `--include` (true) and `--exclude` (false) globs in order, `--exclude-dir`.
    Grep {
        files: Vec<(bool, String)>,
        dirs: Vec<String>,
    },
    /// ripgrep: `-g`/`--glob` and `--iglob` (case-insensitive) globs in order.
    Rg { globs: Vec<(String, bool)> },
    /// git grep: excluded pathspecs (`:!x`, `:^x`, `:(exclude)x`), relative to the working
    /// directory; `no_index`: files outside git's index are searched too.
    GitGrep {
        excluded: Vec<String>,
        no_index: bool,
    },
    /// find: which entries reach an action that reads them (or prints their names).
    Find(FindPlan),
    /// Two readings of the same words, when the engine cannot tell which the tool takes:
    /// skipped only when both skip it.
    Both(Box<Skips>, Box<Skips>),
}

impl Skips {
    /// Whether the tool provably never reads the entry, nor (for a directory) anything in it.
    pub(super) fn covers(&self, e: &Entry) -> bool {
        match self {
            Skips::Nothing => false,
            Skips::Grep { files, dirs } => grep_covers(files, dirs, e),
            Skips::Rg { globs } => rg_covers(globs, e),
            Skips::GitGrep { excluded, no_index } => git_grep_covers(excluded, *no_index, e),
            Skips::Find(plan) => plan.covers(e, false),
            Skips::Both(a, b) => a.covers(e) && b.covers(e),
        }
    }

    /// For a directory whose every entry is checked on its own: whether the directory
    /// itself is not read. Only find runs commands on directories.
    fn covers_itself(&self, e: &Entry) -> bool {
        match self {
            Skips::Find(plan) => plan.covers(e, true),
            Skips::Both(a, b) => a.covers_itself(e) && b.covers_itself(e),
            _ => true,
        }
    }
}

/// GNU grep: a directory below the root is skipped when its base name matches an
/// `--exclude-dir` glob (a root when its name or a suffix after a `/` does); a file when the
/// last `--include`/`--exclude` glob that matches its base name is an `--exclude`, or, none
/// matching, when the first of them is an `--include` (grep(1)).
fn grep_covers(files: &[(bool, String)], dirs: &[String], e: &Entry) -> bool {
    let dir_skipped = |name: &str| {
        dirs.iter()
            .any(|g| fnmatch(g, name, false, false) == Some(true))
    };
    let root = e.root.trim_end_matches('/');
    let suffixes =
        std::iter::once(root).chain(root.match_indices('/').map(|(i, _)| &root[i + 1..]));
    if suffixes.filter(|s| !s.is_empty()).any(dir_skipped) {
        return true;
    }
    if e.ancestors().iter().any(|a| dir_skipped(a)) {
        return true;
    }
    let name = e.name();
    match e.kind {
        Kind::Dir => dir_skipped(&name),
        _ => {
            for (include, g) in files.iter().rev() {
                match fnmatch(g, &name, false, false) {
                    Some(true) => return !include,
                    Some(false) => {}
                    None => return false,
                }
            }
            files.first().is_some_and(|(include, _)| *include)
        }
    }
}

/// ripgrep: its globs are overrides (gitignore syntax, the last match wins, a `!` glob
/// excludes, any plain glob makes the rest of the files excluded), matched by the very
/// matcher ripgrep uses, on the path as ripgrep reaches it, relative to the working
/// directory. An excluded directory is not entered.
fn rg_covers(globs: &[(String, bool)], e: &Entry) -> bool {
    if globs.is_empty() {
        return false;
    }
    let mut b = OverrideBuilder::new(e.cwd);
    for (g, fold) in globs {
        if b.case_insensitive(*fold).is_err() || b.add(g).is_err() {
            return false;
        }
    }
    let Ok(o) = b.build() else { return false };
    let shown = e.shown();
    let root = e.root.trim_end_matches('/');
    let mut at = if root.is_empty() {
        String::from("/")
    } else {
        root.to_string()
    };
    for a in e.ancestors() {
        at = format!("{at}/{a}");
        if o.matched(Path::new(&at), true).is_ignore() {
            return true;
        }
    }
    o.matched(Path::new(&shown), e.kind == Kind::Dir)
        .is_ignore()
}

/// git grep: reads what git's index tracks (never the repository's `.git`), minus excluded
/// pathspecs. A pathspec without wildcards excludes that path and what lies below it; with
/// wildcards it is matched against the whole path, `*` crossing `/` (gitglossary(7)).
fn git_grep_covers(excluded: &[String], no_index: bool, e: &Entry) -> bool {
    let full = if Path::new(e.root).is_absolute() {
        PathBuf::from(e.root).join(e.rel)
    } else {
        e.cwd.join(e.root).join(e.rel)
    };
    let normal: PathBuf = full
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let Ok(rel) = normal.strip_prefix(e.cwd) else {
        return false;
    };
    if !no_index && rel.components().any(|c| c.as_os_str() == ".git") {
        return true;
    }
    let rel = rel.to_string_lossy();
    excluded.iter().any(|x| {
        let x = x.trim_start_matches("./").trim_end_matches('/');
        if x.is_empty() || x == "." {
            return true;
        }
        if x.contains(['*', '?', '[', '\\']) {
            fnmatch(x, &rel, false, false) == Some(true)
        } else {
            *rel == *x || rel.starts_with(&format!("{x}/"))
        }
    })
}

/// A `find` expression, as far as the engine evaluates it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum FindExpr {
    And(Box<FindExpr>, Box<FindExpr>),
    Or(Box<FindExpr>, Box<FindExpr>),
    Not(Box<FindExpr>),
    /// `a , b`: both evaluated, the value is b's.
    Comma(Box<FindExpr>, Box<FindExpr>),
    /// `-name`/`-iname` (base name), `-path`/`-ipath`/`-wholename` (whole path): a glob.
    Name {
        glob: String,
        whole: bool,
        fold: bool,
    },
    /// `-type` with its letters.
    Type(String),
    Const(bool),
    /// A test the engine does not evaluate (`-size`, `-newer`, `-regex`, ...).
    Unknown,
    /// `-prune`.
    Prune,
    /// An action: `hit` when it is what is looked for (an `-exec` of a reader, a `-print`).
    Action {
        hit: bool,
        always_true: bool,
    },
}

/// What a `find` command does with the entries its expression selects.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FindPlan {
    pub expr: FindExpr,
    pub maxdepth: Option<usize>,
    pub mindepth: usize,
    /// `-depth`, `-d` or `-delete`: children before their directory, `-prune` has no effect.
    pub depth_first: bool,
}

/// Possible outcomes of evaluating an expression on one entry: bit `result | hit<<1 |
/// pruned<<2` is set when that combination may happen.
type Outcomes = u8;

fn outcome(result: bool, hit: bool, pruned: bool) -> Outcomes {
    1 << (result as u8 | (hit as u8) << 1 | (pruned as u8) << 2)
}

fn each(o: Outcomes) -> impl Iterator<Item = (bool, bool, bool)> {
    (0u8..8)
        .filter(move |i| o & (1 << i) != 0)
        .map(|i| (i & 1 != 0, i & 2 != 0, i & 4 != 0))
}

/// What the engine knows of an entry a `find` expression is evaluated on.
struct Seen<'s> {
    /// Base name and path as find shows them; `None`: any (a directory's unknown content).
    name: Option<&'s str>,
    path: Option<&'s str>,
    kind: Option<Kind>,
}

impl FindExpr {
    fn eval(&self, s: &Seen) -> Outcomes {
        let test = |v: Option<bool>| match v {
            Some(b) => outcome(b, false, false),
            None => outcome(true, false, false) | outcome(false, false, false),
        };
        match self {
            FindExpr::Const(b) => outcome(*b, false, false),
            FindExpr::Unknown => test(None),
            FindExpr::Prune => outcome(true, false, true),
            FindExpr::Action { hit, always_true } => {
                let mut o = outcome(true, *hit, false);
                if !always_true {
                    o |= outcome(false, *hit, false);
                }
                o
            }
            FindExpr::Name { glob, whole, fold } => {
                let subject = if *whole { s.path } else { s.name };
                test(subject.and_then(|t| fnmatch(glob, t, false, *fold)))
            }
            FindExpr::Type(letters) => test(s.kind.and_then(|k| {
                let l = match k {
                    Kind::Dir => 'd',
                    Kind::File => 'f',
                    Kind::Link => 'l',
                    Kind::Other => return None,
                };
                Some(letters.contains(l))
            })),
            FindExpr::Not(a) => each(a.eval(s)).fold(0, |acc, (r, h, p)| acc | outcome(!r, h, p)),
            FindExpr::And(a, b) | FindExpr::Or(a, b) | FindExpr::Comma(a, b) => {
                let rb = b.eval(s);
                let mut acc = 0;
                for (r, h, p) in each(a.eval(s)) {
                    let short = match self {
                        FindExpr::And(..) => !r,
                        FindExpr::Or(..) => r,
                        _ => false,
                    };
                    if short {
                        acc |= outcome(r, h, p);
                    } else {
                        for (r2, h2, p2) in each(rb) {
                            acc |= outcome(r2, h || h2, p || p2);
                        }
                    }
                }
                acc
            }
        }
    }
}

impl FindPlan {
    /// Whether no entry the expression is evaluated on at `depth` may reach a hit.
    fn never_hits(&self, s: &Seen, depth: usize) -> bool {
        if depth < self.mindepth || self.maxdepth.is_some_and(|m| depth > m) {
            return true;
        }
        each(self.expr.eval(s)).all(|(_, h, _)| !h)
    }

    /// Whether find surely does not enter a directory met at `depth`.
    fn never_enters(&self, s: &Seen, depth: usize) -> bool {
        if self.maxdepth.is_some_and(|m| depth >= m) {
            return true;
        }
        if self.depth_first || depth < self.mindepth {
            return false;
        }
        each(self.expr.eval(s)).all(|(_, _, p)| p)
    }

    /// `itself`: for a directory, only whether the directory itself is reached (its entries
    /// are checked one by one).
    fn covers(&self, e: &Entry, itself: bool) -> bool {
        let root = e.root.trim_end_matches('/');
        let root_path = if root.is_empty() {
            "/".to_string()
        } else {
            root.to_string()
        };
        let root_name = Path::new(&root_path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root_path.clone());
        let root_seen = Seen {
            name: Some(&root_name),
            path: Some(&root_path),
            kind: Some(Kind::Dir),
        };
        if self.never_enters(&root_seen, 0) {
            return true;
        }
        let mut path = root_path.clone();
        for (k, a) in e.ancestors().iter().enumerate() {
            path = format!("{path}/{a}");
            if self.never_enters(
                &Seen {
                    name: Some(a),
                    path: Some(&path),
                    kind: Some(Kind::Dir),
                },
                k + 1,
            ) {
                return true;
            }
        }
        let depth = e.rel.components().count();
        let name = e.name();
        let shown = format!("{root_path}/{}", e.rel.to_string_lossy());
        let seen = Seen {
            name: Some(&name),
            path: Some(&shown),
            kind: Some(e.kind),
        };
        if !self.never_hits(&seen, depth) {
            return false;
        }
        if e.kind != Kind::Dir || itself || self.never_enters(&seen, depth) {
            return true;
        }
        // What lies in a denied directory is not known: any name, any type, any depth.
        let any = Seen {
            name: None,
            path: None,
            kind: None,
        };
        self.maxdepth.is_some_and(|m| depth >= m) || each(self.expr.eval(&any)).all(|(_, h, _)| !h)
    }
}

/// The tests find takes one argument for, evaluated or not.
const FIND_UNKNOWN_WITH_ARG: &[&str] = &[
    "-regex",
    "-iregex",
    "-perm",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-mtime",
    "-atime",
    "-ctime",
    "-mmin",
    "-amin",
    "-cmin",
    "-links",
    "-inum",
    "-lname",
    "-ilname",
    "-fstype",
    "-used",
    "-context",
    "-newer",
    "-anewer",
    "-cnewer",
    "-samefile",
    "-newermt",
    "-newerat",
    "-newerct",
    "-xtype",
];
/// Options that are true wherever they stand and take one argument.
const FIND_OPTION_WITH_ARG: &[&str] = &["-maxdepth", "-mindepth", "-regextype", "-files0-from"];
const FIND_UNKNOWN_NO_ARG: &[&str] = &[
    "-empty",
    "-executable",
    "-readable",
    "-writable",
    "-nouser",
    "-nogroup",
];
const FIND_OPTION_NO_ARG: &[&str] = &[
    "-depth",
    "-d",
    "-daystart",
    "-follow",
    "-mount",
    "-xdev",
    "-noleaf",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-nowarn",
    "-warn",
];

/// How one of find's actions is judged: `-exec` and friends by the command they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FindLooksFor {
    /// Entries an `-exec`/`-ok` reaches whose command reads files (`cat {}`).
    ContentReads,
    /// Entries whose names find writes to its output (`-print`, `-print0`, the default).
    PrintedNames,
}

/// Parses the expression of `find` (the words after its start points). `reads(inner)`: whether
/// the command an `-exec` runs reads the files it is given. `None` when the expression holds
/// something the engine does not parse (the find handler refuses it anyway), or, looking for
/// printed names, an action whose output is not plain names (`-printf`, `-ls`, `-exec`).
pub(super) fn find_plan(
    words: &[WordInfo],
    looking_for: FindLooksFor,
    reads: &dyn Fn(&[WordInfo]) -> bool,
) -> Option<FindPlan> {
    let mut p = FindParser {
        words,
        i: 0,
        looking_for,
        reads,
        maxdepth: None,
        mindepth: 0,
        depth_first: false,
        action: false,
        plain: true,
    };
    let expr = if p.words.is_empty() {
        FindExpr::Const(true)
    } else {
        p.comma()?
    };
    if p.i < p.words.len() {
        return None;
    }
    let printed = looking_for == FindLooksFor::PrintedNames;
    if printed && !p.plain {
        return None;
    }
    let expr = if p.action {
        expr
    } else {
        FindExpr::And(
            Box::new(expr),
            Box::new(FindExpr::Action {
                hit: printed,
                always_true: true,
            }),
        )
    };
    Some(FindPlan {
        expr,
        maxdepth: p.maxdepth,
        mindepth: p.mindepth,
        depth_first: p.depth_first,
    })
}

struct FindParser<'w> {
    words: &'w [WordInfo],
    i: usize,
    looking_for: FindLooksFor,
    reads: &'w dyn Fn(&[WordInfo]) -> bool,
    maxdepth: Option<usize>,
    mindepth: usize,
    depth_first: bool,
    /// An action was seen (else find adds `-print`).
    action: bool,
    /// Every action writes plain names (or nothing) to the output.
    plain: bool,
}

impl FindParser<'_> {
    fn peek(&self) -> Option<&str> {
        self.words.get(self.i).and_then(WordInfo::exact)
    }

    fn arg(&mut self) -> Option<String> {
        let v = self.words.get(self.i)?.exact()?.to_string();
        self.i += 1;
        Some(v)
    }

    fn comma(&mut self) -> Option<FindExpr> {
        let mut e = self.or()?;
        while self.peek() == Some(",") {
            self.i += 1;
            e = FindExpr::Comma(Box::new(e), Box::new(self.or()?));
        }
        Some(e)
    }

    fn or(&mut self) -> Option<FindExpr> {
        let mut e = self.and()?;
        while matches!(self.peek(), Some("-o") | Some("-or")) {
            self.i += 1;
            e = FindExpr::Or(Box::new(e), Box::new(self.and()?));
        }
        Some(e)
    }

    fn and(&mut self) -> Option<FindExpr> {
        let mut e = self.not()?;
        loop {
            match self.peek() {
                None | Some(")") | Some(",") | Some("-o") | Some("-or") => return Some(e),
                Some("-a") | Some("-and") => self.i += 1,
                _ => {}
            }
            e = FindExpr::And(Box::new(e), Box::new(self.not()?));
        }
    }

    fn not(&mut self) -> Option<FindExpr> {
        if matches!(self.peek(), Some("!") | Some("-not")) {
            self.i += 1;
            return Some(FindExpr::Not(Box::new(self.not()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Option<FindExpr> {
        let w = self.arg()?;
        let w = w.as_str();
        Some(match w {
            "(" => {
                let e = self.comma()?;
                (self.arg()? == ")").then_some(())?;
                e
            }
            "-name" | "-iname" => FindExpr::Name {
                glob: self.arg()?,
                whole: false,
                fold: w == "-iname",
            },
            "-path" | "-ipath" | "-wholename" | "-iwholename" => FindExpr::Name {
                glob: self.arg()?,
                whole: true,
                fold: w.starts_with("-i"),
            },
            "-type" => FindExpr::Type(self.arg()?),
            "-true" => FindExpr::Const(true),
            "-false" => FindExpr::Const(false),
            "-prune" => FindExpr::Prune,
            "-maxdepth" | "-mindepth" => {
                let n: usize = self.arg()?.parse().ok()?;
                if w == "-maxdepth" {
                    self.maxdepth = Some(self.maxdepth.map_or(n, |m| m.min(n)));
                } else {
                    self.mindepth = self.mindepth.max(n);
                }
                FindExpr::Const(true)
            }
            // The start points come from a file: not known here.
            "-files0-from" => return None,
            _ if FIND_OPTION_WITH_ARG.contains(&w) => {
                self.arg()?;
                FindExpr::Const(true)
            }
            _ if FIND_OPTION_NO_ARG.contains(&w) => {
                if matches!(w, "-depth" | "-d") {
                    self.depth_first = true;
                }
                FindExpr::Const(true)
            }
            _ if FIND_UNKNOWN_NO_ARG.contains(&w) => FindExpr::Unknown,
            _ if FIND_UNKNOWN_WITH_ARG.contains(&w)
                || (w.starts_with("-newer") && w.len() == 8) =>
            {
                self.arg()?;
                FindExpr::Unknown
            }
            "-print" | "-print0" => {
                self.action = true;
                FindExpr::Action {
                    hit: self.looking_for == FindLooksFor::PrintedNames,
                    always_true: true,
                }
            }
            "-quit" => FindExpr::Const(true),
            "-delete" => {
                self.action = true;
                self.depth_first = true;
                FindExpr::Action {
                    hit: false,
                    always_true: false,
                }
            }
            "-ls" | "-printf" | "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                self.action = true;
                let n = match w {
                    "-ls" => 0,
                    "-fprintf" => 2,
                    _ => 1,
                };
                for _ in 0..n {
                    self.arg()?;
                }
                // Names in a file, or with other fields: not plain names on the output.
                if matches!(w, "-ls" | "-printf") {
                    self.plain = false;
                }
                FindExpr::Action {
                    hit: false,
                    always_true: true,
                }
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                self.action = true;
                self.plain = false;
                let start = self.i;
                while !matches!(self.peek(), Some(";") | Some("+")) {
                    if self.i >= self.words.len() {
                        return None;
                    }
                    self.i += 1;
                }
                let inner = &self.words[start..self.i];
                self.i += 1;
                let hit = self.looking_for == FindLooksFor::ContentReads && (self.reads)(inner);
                FindExpr::Action {
                    hit,
                    always_true: false,
                }
            }
            _ => return None,
        })
    }
}

impl FindExpr {
    /// Whether some entry may reach a hit action.
    fn may_hit(&self) -> bool {
        match self {
            FindExpr::Action { hit, .. } => *hit,
            FindExpr::And(a, b) | FindExpr::Or(a, b) | FindExpr::Comma(a, b) => {
                a.may_hit() || b.may_hit()
            }
            FindExpr::Not(a) => a.may_hit(),
            _ => false,
        }
    }
}

/// The paths `git grep` searches: the pathspecs after `--`, or else the words after its
/// pattern (revisions among them name no entry and are left to the git checks); magic
/// pathspecs (`:!x`) are exclusions, not roots.
fn git_grep_paths(sem: &CommandSemantics, rest: &[WordInfo]) -> Vec<WordInfo> {
    let mut before = Vec::new();
    let mut after = Vec::new();
    let mut pattern_given = false;
    let mut dd = false;
    for item in argv::parse(sem, rest, false) {
        match item {
            argv::Item::Opt(o) => {
                pattern_given |= matches!(o.name.as_str(), "-e" | "-f" | "--regexp" | "--file")
            }
            argv::Item::End { .. } => dd = true,
            argv::Item::Operand { word, .. } | argv::Item::RunTime { word, .. } if dd => {
                after.push(word.clone())
            }
            argv::Item::Operand { word, .. } | argv::Item::RunTime { word, .. } => {
                before.push(word.clone())
            }
        }
    }
    let paths = if dd {
        after
    } else {
        before
            .into_iter()
            .skip(if pattern_given { 0 } else { 1 })
            .collect()
    };
    paths
        .into_iter()
        .filter(|w| !w.value.as_deref().is_some_and(|v| v.starts_with(':')))
        .collect()
}

/// A traversal root: as the command wrote it (or as reached through a link), absolute, the
/// working directory, and how many links were followed to reach it.
pub(super) struct Root<'r> {
    shown: &'r str,
    abs: &'r Path,
    cwd: &'r Path,
    depth: usize,
}

/// Whether `find`'s words make it enter linked directories (`-L`, `-follow`).
pub(super) fn find_follows(args: &[WordInfo]) -> bool {
    args.iter()
        .filter_map(WordInfo::exact)
        .any(|s| s == "-L" || s == "-follow")
}

/// How a tree reader is refused and how it could exclude an entry, in its own syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tool {
    Grep,
    Rg,
    GitGrep,
    Find,
    /// A copy or an archive (`tar`, `zip`, `cp -r`, `rsync -r`): no exclusion credited.
    Copy,
    /// `xargs` reading names its input holds.
    Xargs,
    /// A reader of names a file lists (`tar -T`, `wc --files0-from`).
    Listed,
}

/// A word as a shell argument: bare when it is plain, else in single quotes.
fn quoted(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+@%:,/=".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A name as a glob matching only itself.
fn glob_literal(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "*?[]\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// How the model could run `label` without reaching the entry `e`.
pub(super) fn exclusion_hint(tool: Tool, label: &str, e: &Entry) -> String {
    let name = glob_literal(&e.name());
    let dir = e.kind == Kind::Dir;
    match tool {
        Tool::Grep => {
            // Before the other words: an option after an operand may be taken for a file.
            let opt = if dir { "--exclude-dir" } else { "--exclude" };
            // Again at the end when an --include could come after it (the last match wins).
            let (first, rest) = label.split_once(' ').unwrap_or((label, ""));
            let x = quoted(&format!("{opt}={name}"));
            if rest.contains("--include") {
                format!("exclude it: `{first} {x} {rest} {x}`")
            } else {
                format!("exclude it: `{first} {x} {rest}`")
            }
        }
        Tool::Rg => format!("exclude it: `{label} -g {}`", quoted(&format!("!{name}"))),
        Tool::GitGrep => {
            let rel = e.rel.to_string_lossy();
            let spec = quoted(&format!(":!{rel}"));
            if label.split(' ').any(|w| w == "--") {
                format!("exclude it: `{label} {spec}`")
            } else {
                format!("exclude it: `{label} -- . {spec}`")
            }
        }
        Tool::Find => {
            let n = quoted(&name);
            if dir {
                format!("exclude it: `find {} -name {n} -prune -o ...`", e.root)
            } else {
                format!("exclude it: `find {} -not -name {n} ...`", e.root)
            }
        }
        Tool::Copy => "name the files it should take instead of the directory.".to_string(),
        Tool::Listed => "name the files on the command line instead.".to_string(),
        Tool::Xargs => {
            let n = quoted(&name);
            if dir {
                format!("produce the names with a command whose own filters exclude it: `find {} -name {n} -prune -o -type f -print | xargs ...`", e.root)
            } else {
                format!("produce the names with a command whose own filters exclude it: `find {} -type f -not -name {n} | xargs ...`", e.root)
            }
        }
    }
}

/// The skips of a tool from its options; `None` when one of them is built at run time (the
/// engine cannot tell what it excludes: nothing is credited).
pub(super) fn skips_of(tool: Tool, sem: &CommandSemantics, args: &[WordInfo]) -> Skips {
    match tool {
        Tool::Grep => {
            // The options after the first operand are options when grep permutes its
            // arguments (the usual case) and file names when POSIXLY_CORRECT is set: an entry
            // is skipped only if it is skipped either way.
            let grep = |leading: bool| {
                let vals = argv::option_values(
                    sem,
                    &["--include", "--exclude", "--exclude-dir"],
                    args,
                    leading,
                );
                if vals.iter().any(|(_, v)| v.is_none()) {
                    return Skips::Nothing;
                }
                let mut files = Vec::new();
                let mut dirs = Vec::new();
                for (o, v) in vals {
                    let v = v.unwrap_or_default();
                    match o.as_str() {
                        "--exclude-dir" => dirs.push(v),
                        "--include" => files.push((true, v)),
                        _ => files.push((false, v)),
                    }
                }
                Skips::Grep { files, dirs }
            };
            let (leading, all) = (grep(true), grep(false));
            if leading == all {
                all
            } else {
                Skips::Both(Box::new(leading), Box::new(all))
            }
        }
        Tool::Rg => {
            let vals = argv::option_values(sem, &["-g", "--glob", "--iglob"], args, false);
            let mut globs = Vec::new();
            for (o, v) in vals {
                let Some(v) = v else { return Skips::Nothing };
                globs.push((v, o == "--iglob"));
            }
            Skips::Rg { globs }
        }
        Tool::GitGrep => {
            let mut excluded = Vec::new();
            let no_index = args
                .iter()
                .any(|w| w.exact() == Some("--no-index") || w.exact() == Some("--untracked"));
            for w in args {
                let Some(s) = w.exact() else { continue };
                let spec = s
                    .strip_prefix(":!")
                    .or_else(|| s.strip_prefix(":^"))
                    .or_else(|| s.strip_prefix(":(exclude)"))
                    .or_else(|| s.strip_prefix(":(exclude,literal)"));
                if let Some(x) = spec {
                    excluded.push(x.to_string());
                }
            }
            Skips::GitGrep { excluded, no_index }
        }
        Tool::Find | Tool::Copy | Tool::Xargs | Tool::Listed => Skips::Nothing,
    }
}

impl Judge<'_> {
    /// Whether the command `inner` (run by `find -exec` or `xargs` on names found at run
    /// time) reads the content of the files it is given: not when it only lists names and
    /// metadata (`ls`, `stat`) or takes its operands as data (`echo`).
    pub(super) fn reads_content(&self, inner: &[WordInfo]) -> bool {
        let Some(name) = inner.first().and_then(WordInfo::exact) else {
            return true;
        };
        match self.semantics(basename(name)) {
            Some(s) => {
                !(s.names_only
                    || (s.operands == OperandKind::Data
                        && s.handler.is_none()
                        && s.read_options.is_empty()))
            }
            None => true,
        }
    }

    /// A command of the semantics table that reads whole trees (`grep -r`, `rg`, `git grep`,
    /// `tar c`, `cp -r`, ...): its roots are the operands it reads (`files`, of `kind`), or
    /// its default operand; `globals` are the words before a subcommand (`git -C dir`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn recursive_reads(
        &mut self,
        base: &str,
        sub: Option<&str>,
        sem: &CommandSemantics,
        globals: &[WordInfo],
        rest: &[WordInfo],
        files: &[&WordInfo],
        kind: OperandKind,
        cwds: &[PathBuf],
        label: &str,
    ) {
        // Names read from a file (`tar -T list`, `wc --files0-from=list`): any entry under the
        // directory, through any link.
        if argv::has_option(sem, &sem.names_from_options, rest, false)
            && matches!(
                kind,
                OperandKind::Read | OperandKind::LastWrite | OperandKind::FirstWrite
            )
        {
            self.tree_read(
                Tool::Listed,
                &Skips::Nothing,
                &[WordInfo::literal(".")],
                cwds,
                label,
                Links {
                    files: true,
                    dirs: true,
                },
            );
        }
        if !(sem.recursive || argv::has_option(sem, &sem.recursive_options, rest, false)) {
            return;
        }
        if argv::has_option(sem, &sem.names_only_options, rest, true) {
            return;
        }
        let tool = match (base, sub) {
            ("git", Some("grep")) => Tool::GitGrep,
            ("grep" | "egrep" | "fgrep", _) => Tool::Grep,
            ("rg", _) => Tool::Rg,
            _ => Tool::Copy,
        };
        let n = files.len();
        let mut roots: Vec<WordInfo> = match kind {
            OperandKind::Read => files.iter().map(|w| (*w).clone()).collect(),
            // With a target directory option (`cp -t DIR`), every operand is a source.
            OperandKind::LastWrite if argv::has_option(sem, &sem.write_options, rest, false) => {
                files.iter().map(|w| (*w).clone()).collect()
            }
            OperandKind::LastWrite if n > 1 => {
                files[..n - 1].iter().map(|w| (*w).clone()).collect()
            }
            OperandKind::FirstWrite if n > 1 => files[1..].iter().map(|w| (*w).clone()).collect(),
            OperandKind::Data if tool == Tool::GitGrep => git_grep_paths(sem, rest),
            _ => return,
        };
        // `{}` of `find -exec`: what find finds under its start points.
        if roots
            .iter()
            .any(|w| w.value.as_deref().is_some_and(|v| v.contains("{}")))
        {
            let starts = self
                .runtime_roots
                .clone()
                .unwrap_or_else(|| vec![WordInfo::literal(".")]);
            roots.retain(|w| !w.value.as_deref().is_some_and(|v| v.contains("{}")));
            roots.extend(starts);
        }
        if roots.is_empty() {
            match &sem.default_operand {
                Some(d) if !(sem.stdin_without_operand && self.stdin_from.is_some()) => {
                    roots.push(WordInfo::literal(d))
                }
                _ if tool == Tool::GitGrep => roots.push(WordInfo::literal(".")),
                _ => return,
            }
        }
        // `git -C dir grep`: paths are relative to dir.
        let mut dirs: Vec<PathBuf> = cwds.to_vec();
        // `tar -C dir`: the operands after it are relative to dir; the roots are taken from
        // each directory it names, and from the working directory.
        if base == "tar" {
            let named = argv::option_values(sem, &["-C", "--directory"], rest, false);
            let mut more = Vec::new();
            for (_, v) in named {
                let Some(d) = v else { return };
                more.extend(cwds.iter().map(|c| c.join(&d)));
            }
            dirs.extend(more);
        }
        if tool == Tool::GitGrep {
            for (k, w) in globals.iter().enumerate() {
                if w.exact() == Some("-C") {
                    match globals.get(k + 1).and_then(WordInfo::exact) {
                        Some(d) => dirs = dirs.iter().map(|c| c.join(d)).collect(),
                        None => return,
                    }
                }
            }
        }
        let skips = skips_of(tool, sem, rest);
        let follows = (sem.follows_links
            && !argv::has_option(sem, &sem.no_follow_options, rest, true))
            || argv::has_option(sem, &sem.follow_options, rest, false);
        let links = Links {
            files: follows,
            dirs: follows,
        };
        self.tree_read(tool, &skips, &roots, &dirs, label, links);
    }

    /// `find` with an `-exec` or `-ok` of a command that reads files: the entries its
    /// expression lets reach that command, under its start points.
    pub(super) fn find_reads(
        &mut self,
        all: &[WordInfo],
        starts: &[WordInfo],
        expr: &[WordInfo],
        cwds: &[PathBuf],
        label: &str,
    ) {
        let reads = |inner: &[WordInfo]| self.reads_content(inner);
        let plan = find_plan(expr, FindLooksFor::ContentReads, &reads);
        let skips = match plan {
            Some(p) if !p.expr.may_hit() => return,
            Some(p) => Skips::Find(p),
            None => {
                // Not evaluated: refused when an -exec of a reader may run on anything.
                let mut any = false;
                for (k, w) in expr.iter().enumerate() {
                    if matches!(w.exact(), Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
                        let end = expr[k + 1..]
                            .iter()
                            .position(|t| matches!(t.exact(), Some(";" | "+")))
                            .map_or(expr.len(), |e| k + 1 + e);
                        any |= self.reads_content(&expr[k + 1..end]);
                    }
                }
                if !any {
                    return;
                }
                Skips::Nothing
            }
        };
        // The command it runs opens what it is given: a link to a file is read through; find
        // enters linked directories with -L or -follow.
        let follow = find_follows(all);
        self.tree_read(
            Tool::Find,
            &skips,
            starts,
            cwds,
            label,
            Links {
                files: true,
                dirs: follow,
            },
        );
    }

    /// `xargs CMD` where CMD reads the files it is given: the names come from its input at run
    /// time. From a `find` (plain names), the entries it prints under its start points; from
    /// `grep -l`, `rg -l`, `git grep -l`, nothing more (their own reads are judged, and they
    /// name only files they read); from anything else, any entry under the working directory.
    pub(super) fn xargs_reads(
        &mut self,
        inner: &[WordInfo],
        names_from_file: bool,
        cwds: &[PathBuf],
        label: &str,
    ) {
        if inner.is_empty() || !self.reads_content(inner) {
            return;
        }
        let producer = if names_from_file || self.stdin_redirected {
            None
        } else {
            self.stdin_from.clone()
        };
        if let Some(p) = &producer {
            let words = &p.words;
            let name = words
                .first()
                .and_then(WordInfo::exact)
                .map(basename)
                .unwrap_or("");
            let args = words.get(1..).unwrap_or(&[]);
            // `grep -l` names only files it read (judged on its own), unless `--label` names
            // its input as it likes.
            let (sem, opts) = match (name, args.first().and_then(WordInfo::exact)) {
                ("git", Some("grep")) => (
                    self.semantics("git")
                        .and_then(|g| g.subcommand_semantics.get("grep")),
                    &args[1..],
                ),
                ("grep" | "egrep" | "fgrep" | "rg", _) => (self.semantics(name), args),
                _ => (None, args),
            };
            if let Some(sem) = sem {
                let lists: Vec<String> =
                    ["-l", "-L", "--files-with-matches", "--files-without-match"]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                let label_opt = vec!["--label".to_string()];
                if argv::has_option(sem, &lists, opts, true)
                    && !argv::has_option(sem, &label_opt, opts, false)
                {
                    return;
                }
            }
            if name == "find" {
                let (starts, expr) = find_split(args);
                let reads = |i: &[WordInfo]| self.reads_content(i);
                if let Some(plan) = find_plan(expr, FindLooksFor::PrintedNames, &reads) {
                    let follow = find_follows(args);
                    self.tree_read(
                        Tool::Xargs,
                        &Skips::Find(plan),
                        &starts,
                        cwds,
                        label,
                        Links {
                            files: true,
                            dirs: follow,
                        },
                    );
                    return;
                }
            }
        }
        // Names from anywhere: any entry under the directory, through any link.
        self.tree_read(
            Tool::Xargs,
            &Skips::Nothing,
            &[WordInfo::literal(".")],
            cwds,
            label,
            Links {
                files: true,
                dirs: true,
            },
        );
    }

    /// Refuses `label`: its tree under `shown` could not be checked.
    fn cannot_tell(&mut self, label: &str, shown: &str, abs: &Path) {
        // The cause (a limit reached, an unreadable directory) is left out: past a limit of
        // time it is not the same from one decision to the next.
        self.violate(
            REACHES_DENIED,
            format!(
                "`{label}` reads the files under {shown}, and the engine could not check that tree for entries a deny pattern covers (more than {} entries, more than {} ms, links too many or too deep, or a directory it cannot read): narrow the command to the directories it needs.",
                Limits::default().max_entries,
                Limits::default().max_time.as_millis()
            ),
            Some(label.to_string()),
            abs.to_string_lossy().into_owned(),
            "path",
            Some(Access::Read),
        );
    }

    /// Refuses `label` when a tree it reads from `roots` holds a denied entry that `skips`
    /// does not provably exclude. Roots are as written, resolved from each of `cwds`; a root
    /// built at run time is left to the operand checks, a root that is itself denied too.
    pub(super) fn tree_read(
        &mut self,
        tool: Tool,
        skips: &Skips,
        roots: &[WordInfo],
        cwds: &[PathBuf],
        label: &str,
        links: Links,
    ) {
        let mut linked = LINKED_DIRS;
        for w in roots {
            let Some(v) = w.value.as_deref() else {
                continue;
            };
            for cwd in cwds {
                let starts: Vec<(String, PathBuf)> = if w.glob {
                    match glob_expand(&cwd.join(v)) {
                        Some(found) => found
                            .into_iter()
                            .map(|p| {
                                let shown = p
                                    .strip_prefix(cwd)
                                    .map(|r| r.to_string_lossy().into_owned())
                                    .unwrap_or_else(|_| p.to_string_lossy().into_owned());
                                (shown, p)
                            })
                            .collect(),
                        None => {
                            let base = glob_base(&cwd.join(v));
                            vec![(base.to_string_lossy().into_owned(), base)]
                        }
                    }
                } else {
                    vec![(v.to_string(), cwd.join(v))]
                };
                for (shown, abs) in starts {
                    let at = Root {
                        shown: &shown,
                        abs: &abs,
                        cwd,
                        depth: 0,
                    };
                    if !self.tree_root(tool, skips, &at, label, links, &mut linked) {
                        return;
                    }
                }
            }
        }
    }

    /// One root of [`Self::tree_read`]; `false` once it refused (one refusal is enough).
    /// `linked`: how many more directories may be entered through links.
    fn tree_root(
        &mut self,
        tool: Tool,
        skips: &Skips,
        at: &Root,
        label: &str,
        links: Links,
        linked: &mut usize,
    ) -> bool {
        let (shown, abs, cwd) = (at.shown, at.abs, at.cwd);
        // A root outside the read scope is refused as such (and no walk of it is needed) unless
        // out-of-scope reads only warn or a grant may lift that refusal.
        let enforced =
            self.ctx.scope.bash_tools.path_arguments == crate::scope::PathArgumentsMode::Enforce;
        if at.depth == 0
            && enforced
            && self.ctx.grants.is_empty()
            && self.ctx.matcher.check(&paths::resolve(abs), Access::Read) == PathVerdict::OutOfScope
        {
            return true;
        }
        let found = match denied::all_denied_under(
            &[abs.to_path_buf()],
            self.ctx.matcher,
            &Limits::default(),
        ) {
            Reach::Clean { .. } => Vec::new(),
            Reach::CannotTell { .. } => {
                self.cannot_tell(label, shown, abs);
                return false;
            }
            Reach::Denied { found, .. } => found,
        };
        // The walk reports entries through the root as written or as resolved.
        let r = paths::resolve(abs);
        let below = |f: &Path| -> Option<PathBuf> {
            [abs, r.literal.as_path(), r.target.as_path()]
                .iter()
                .find_map(|root| f.strip_prefix(root).ok())
                .map(Path::to_path_buf)
        };
        // Each entry read: its path, its path below the root, its kind, and what to exclude
        // (itself, or the denied directory it lies in) with its kind.
        let mut reached: Vec<(PathBuf, PathBuf, Kind, PathBuf, Kind)> = Vec::new();
        let mut budget = DENIED_DIR_ENTRIES;
        for f in &found {
            let kind = Kind::of(f);
            match below(f) {
                Some(rel) if rel.as_os_str().is_empty() => {}
                Some(rel) => {
                    let e = Entry {
                        root: shown,
                        rel: &rel,
                        kind,
                        cwd,
                    };
                    if skips.covers(&e) {
                        continue;
                    }
                    // A denied directory the tool enters: each of its entries (all denied)
                    // is checked on its own, within a bound.
                    if kind == Kind::Dir && skips.covers_itself(&e) {
                        if let Some(inner) = dir_entries(f, &mut budget) {
                            let first = inner.iter().find_map(|p| {
                                let k = Kind::of(p);
                                let Some(r) = below(p) else {
                                    return Some((p.clone(), p.clone(), k, rel.clone(), Kind::Dir));
                                };
                                let ie = Entry {
                                    root: shown,
                                    rel: &r,
                                    kind: k,
                                    cwd,
                                };
                                let covered = if k == Kind::Dir {
                                    skips.covers_itself(&ie)
                                } else {
                                    skips.covers(&ie)
                                };
                                (!covered)
                                    .then(|| (p.clone(), r.clone(), k, rel.clone(), Kind::Dir))
                            });
                            match first {
                                None => continue,
                                Some(hit) => {
                                    reached.push(hit);
                                    continue;
                                }
                            }
                        }
                    }
                    reached.push((f.clone(), rel.clone(), kind, rel, kind));
                }
                // Not known where it lies: it counts as read.
                None => {
                    let name = f
                        .file_name()
                        .map(PathBuf::from)
                        .unwrap_or_else(|| f.clone());
                    reached.push((f.clone(), name.clone(), kind, name, kind));
                }
            }
        }
        if reached.is_empty() && (links.files || links.dirs) {
            // Links the walk did not follow: what they lead to is read too.
            let Some(found_links) = links_under(abs) else {
                self.cannot_tell(label, shown, abs);
                return false;
            };
            for l in found_links {
                let Some(rel) = below(&l) else { continue };
                let target = paths::resolve(&l);
                let is_dir = paths::is_dir(&target.target);
                let kind = if links.dirs {
                    if is_dir {
                        Kind::Dir
                    } else {
                        Kind::File
                    }
                } else {
                    Kind::Link
                };
                if (is_dir && !links.dirs)
                    || (!is_dir && !links.files)
                    || skips.covers(&Entry {
                        root: shown,
                        rel: &rel,
                        kind,
                        cwd,
                    })
                {
                    continue;
                }
                if let PathVerdict::Denied(_) = self.ctx.matcher.check(&target, Access::Read) {
                    reached.push((l.clone(), rel.clone(), kind, rel, kind));
                    break;
                }
                // What it leads to must be readable like a path the command names.
                let word = WordInfo::literal(&l.to_string_lossy());
                let name = label.split(' ').next().unwrap_or(label);
                self.path_effect(
                    &word,
                    Access::Read,
                    &[cwd.to_path_buf()],
                    &format!("a link under {shown} that {name} follows"),
                    false,
                );
                if is_dir {
                    if *linked == 0 || at.depth >= LINK_DEPTH {
                        self.cannot_tell(label, shown, abs);
                        return false;
                    }
                    *linked -= 1;
                    let shown2 = Entry {
                        root: shown,
                        rel: &rel,
                        kind,
                        cwd,
                    }
                    .shown();
                    let next = Root {
                        shown: &shown2,
                        abs: &l,
                        cwd,
                        depth: at.depth + 1,
                    };
                    if !self.tree_root(tool, skips, &next, label, links, linked) {
                        return false;
                    }
                }
            }
        }
        let Some((first, rel, kind, hint_rel, hint_kind)) = reached.first().cloned() else {
            return true;
        };
        let rel = rel.as_path();
        let e = Entry {
            root: shown,
            rel,
            kind,
            cwd,
        };
        let hint_entry = Entry {
            root: shown,
            rel: &hint_rel,
            kind: hint_kind,
            cwd,
        };
        let pattern = match self
            .ctx
            .matcher
            .check(&paths::resolve(&first), Access::Read)
        {
            PathVerdict::Denied(p) => p,
            _ => String::new(),
        };
        let more = match reached.len() {
            1 => String::new(),
            2 => " and 1 more denied entry".to_string(),
            n => format!(" and {} more denied entries", n - 1),
        };
        let what = if kind == Kind::Dir {
            "directory"
        } else {
            "file"
        };
        let how = exclusion_hint(tool, label, &hint_entry);
        let reads = match tool {
            Tool::Xargs => format!("`{label}` reads the files its input names, which are produced at run time from {shown}"),
            Tool::Listed => format!("`{label}` reads the files a list names, which may be any under {shown}"),
            Tool::Find => format!("`{label}` runs a reader on what it finds under {shown}"),
            _ => format!("`{label}` reads the files under {shown}"),
        };
        self.paths.push(PathEvidence {
            path: e.shown(),
            resolved: first.to_string_lossy().into_owned(),
            access: Access::Read.as_str(),
            verdict: if self.ctx.masked { "masked" } else { DENIED },
            pattern: Some(pattern.clone()),
            source: format!(
                "under {shown}, read by {}",
                label.split(' ').next().unwrap_or(label)
            ),
        });
        if self.ctx.masked {
            // The sandbox masks every entry a deny pattern covers under the directories it
            // shows before the command starts (found by the same walk; when it cannot tell,
            // nothing runs), and shows nothing else: the command reads them as empty.
            self.warn(format!(
                "{reads}, among them the {what} {}{more}, which the deny pattern `{pattern}` covers: the sandbox masks {}",
                rel.display(),
                if reached.len() > 1 { "them, so they read as empty" } else { "it, so it reads as empty" }
            ));
            return true;
        }
        self.violate(
            REACHES_DENIED,
            format!(
                "{reads}, among them the {what} {}{more}, which the deny pattern `{pattern}` covers. A deny pattern is never lifted, not even once: {how}",
                rel.display()
            ),
            Some(label.to_string()),
            first.to_string_lossy().into_owned(),
            "path",
            Some(Access::Read),
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scope::semantics;

    #[test]
    fn fnmatch_table() {
        // (pattern, name, pathname, fold, expected)
        let cases: &[(&str, &str, bool, bool, Option<bool>)] = &[
            (".env", ".env", false, false, Some(true)),
            ("*env", ".env", false, false, Some(true)),
            ("*", ".env", false, false, Some(true)),
            ("*.env", ".env", false, false, Some(true)),
            ("*.env", "x.env", false, false, Some(true)),
            ("[.]env", ".env", false, false, Some(true)),
            ("[!.]env", ".env", false, false, Some(false)),
            ("[^.]env", "xenv", false, false, Some(true)),
            ("\\.env", ".env", false, false, Some(true)),
            (".ENV", ".env", false, false, Some(false)),
            (".ENV", ".env", false, true, Some(true)),
            ("{.env,x}", ".env", false, false, Some(false)),
            ("?env", ".env", false, false, Some(true)),
            ("*/.env", "./sub/.env", false, false, Some(true)),
            ("*/.env", "./sub/.env", true, false, Some(false)),
            ("./*", "./sub/.env", false, false, Some(true)),
            ("[a-c]x", "bx", false, false, Some(true)),
            ("[a-c]x", "dx", false, false, Some(false)),
            ("[[:alpha:]]", "a", false, false, None),
            ("*.pem", "key.pem.bak", false, false, Some(false)),
            ("**", "a/b", false, false, Some(true)),
            ("a*b*c", "axxbyyc", false, false, Some(true)),
            ("a*b*c", "axxbyy", false, false, Some(false)),
        ];
        for (p, n, pathname, fold, want) in cases {
            assert_eq!(fnmatch(p, n, *pathname, *fold), *want, "{p} vs {n}");
        }
    }

    fn words(s: &str) -> Vec<WordInfo> {
        shell_words::split(s)
            .unwrap()
            .iter()
            .map(|w| WordInfo::literal(w))
            .collect()
    }

    #[test]
    fn recursive_options_table() {
        let grep = &semantics::builtin()["grep"];
        for (args, want) in [
            ("-rn KEY .", true),
            ("-nr KEY .", true),
            ("-R KEY", true),
            ("--recursive KEY", true),
            ("--recur KEY", true),
            ("-d recurse KEY .", true),
            ("-drecurse KEY .", true),
            ("--directories=recurse KEY .", true),
            ("--directories recurse KEY .", true),
            ("-d skip KEY .", false),
            ("-n KEY .", false),
            ("-e -r file", false),
            ("-er file", false),
            ("-- -r file", false),
            ("-A3r x", false),
            ("KEY . -r", true),
        ] {
            assert_eq!(
                argv::has_option(grep, &grep.recursive_options, &words(args), false),
                want,
                "grep {args}"
            );
        }
    }

    #[test]
    fn grep_skips_table() {
        let cwd = Path::new("/w");
        let skips = |args: &str| skips_of(Tool::Grep, &semantics::builtin()["grep"], &words(args));
        // (options, root, rel, kind, covered): checked against GNU grep 3.8 on a real tree.
        for (args, root, rel, kind, want) in [
            ("-r K .", ".", ".env", Kind::File, false),
            ("-r --exclude=.env K .", ".", ".env", Kind::File, true),
            ("-r --exclude=.env K .", ".", "sub/.env", Kind::File, true),
            ("-r --exclude='*env' K .", ".", "sub/.env", Kind::File, true),
            (
                "-r --exclude=sub/.env K .",
                ".",
                "sub/.env",
                Kind::File,
                false,
            ),
            ("-r --exclude=.ENV K .", ".", ".env", Kind::File, false),
            ("-r --exclude '[.]env' K .", ".", ".env", Kind::File, true),
            (
                "-r --exclude='{.env,x}' K .",
                ".",
                ".env",
                Kind::File,
                false,
            ),
            ("-r --include='*.txt' K .", ".", ".env", Kind::File, true),
            ("-r --include='*.txt' K .", ".", ".git", Kind::Dir, false),
            (
                "-r --include=.env --exclude='*' K .",
                ".",
                ".env",
                Kind::File,
                true,
            ),
            (
                "-r --exclude='*' --include=.env K .",
                ".",
                ".env",
                Kind::File,
                false,
            ),
            (
                "-r --exclude-dir=.git K .",
                ".",
                "sub/.git",
                Kind::Dir,
                true,
            ),
            (
                "-r --exclude-dir=.git K .",
                ".",
                ".git/config",
                Kind::File,
                true,
            ),
            ("-r --exclude=.git K .", ".", ".git", Kind::Dir, false),
            (
                "-r --exclude-dir=sub/.git K .",
                ".",
                "sub/.git",
                Kind::Dir,
                false,
            ),
            (
                "-r --exclude-dir=sub K .",
                ".",
                "sub/.env",
                Kind::File,
                true,
            ),
            ("-r --exclude-dir='*' K .", ".", ".env", Kind::File, true),
            ("-r --exclude-dir=. K .", ".", ".env", Kind::File, true),
            (
                "-r --exclude='[[:alpha:]]env' K .",
                ".",
                ".env",
                Kind::File,
                false,
            ),
            ("-r --exclude .env K .", ".", ".env", Kind::File, true),
            ("-r -e K --exclude=.env .", ".", ".env", Kind::File, true),
            // After an operand an option is one only if grep permutes its arguments, which
            // POSIXLY_CORRECT turns off: not credited.
            ("-r K . --exclude=.env", ".", ".env", Kind::File, false),
            ("-r K --exclude=.env .", ".", ".env", Kind::File, false),
            ("-r -- --exclude=.env K .", ".", ".env", Kind::File, false),
            // Permuted, a later --include wins over the leading --exclude: not skipped.
            (
                "-r --exclude=.env K . --include=.env",
                ".",
                ".env",
                Kind::File,
                false,
            ),
            (
                "-r --exclude=.env K . --exclude=x",
                ".",
                ".env",
                Kind::File,
                true,
            ),
        ] {
            let e = Entry {
                root,
                rel: Path::new(rel),
                kind,
                cwd,
            };
            assert_eq!(skips(args).covers(&e), want, "grep {args}: {rel}");
        }
    }

    #[test]
    fn rg_skips_table() {
        let cwd = Path::new("/w");
        let rg = &semantics::builtin()["rg"];
        for (args, root, rel, kind, want) in [
            ("K", ".", ".env", Kind::File, false),
            ("K -g '!.env'", ".", ".env", Kind::File, true),
            ("K -g '!.env'", ".", "a/b/.env", Kind::File, true),
            ("K -g!.env", ".", ".env", Kind::File, true),
            ("K --glob=!.env", ".", ".env", Kind::File, true),
            ("K -g '!.env' -g .env", ".", ".env", Kind::File, false),
            ("K -g '*.rs'", ".", ".env", Kind::File, true),
            ("K -g '*.rs'", ".", ".git", Kind::Dir, false),
            ("K -g '!.git'", ".", ".git", Kind::Dir, true),
            ("K -g '!.git'", ".", ".git/config", Kind::File, true),
            ("K -g '!*.ENV'", ".", "x.env", Kind::File, false),
            ("K --iglob '!*.ENV'", ".", "x.env", Kind::File, true),
            ("K -g '!/.env'", ".", "sub/.env", Kind::File, false),
            ("K -g '!/.env'", ".", ".env", Kind::File, true),
            ("K src -g '!.env'", "src", ".env", Kind::File, true),
        ] {
            let e = Entry {
                root,
                rel: Path::new(rel),
                kind,
                cwd,
            };
            assert_eq!(
                skips_of(Tool::Rg, rg, &words(args)).covers(&e),
                want,
                "rg {args}: {rel}"
            );
        }
    }

    #[test]
    fn git_grep_skips_table() {
        let cwd = Path::new("/w");
        for (args, root, rel, want) in [
            ("K", ".", ".env", false),
            ("K -- . ':!.env'", ".", ".env", true),
            ("K -- . ':^.env'", ".", ".env", true),
            ("K -- . ':(exclude).env'", ".", ".env", true),
            ("K -- . ':!.env'", ".", "sub/.env", false),
            ("K -- . ':!*.env'", ".", "sub/.env", true),
            ("K -- . ':!sub'", ".", "sub/.env", true),
            ("K -- . ':!su'", ".", "sub/.env", false),
            ("K", ".", ".git/config", true),
            ("K --no-index", ".", ".git/config", false),
            ("K -- src ':!src/.env'", "src", ".env", true),
        ] {
            let e = Entry {
                root,
                rel: Path::new(rel),
                kind: Kind::File,
                cwd,
            };
            assert_eq!(
                skips_of(Tool::GitGrep, semantics::empty(), &words(args)).covers(&e),
                want,
                "git grep {args}: {rel}"
            );
        }
    }

    #[test]
    fn find_plans_table() {
        let cwd = Path::new("/w");
        let reads = |inner: &[WordInfo]| {
            !matches!(
                inner.first().and_then(WordInfo::exact),
                Some("ls") | Some("echo")
            )
        };
        // (expression, looking for, rel, kind, covered)
        use FindLooksFor::*;
        for (expr, mode, rel, kind, want) in [
            (
                "-name .env -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                false,
            ),
            ("-exec cat {} +", ContentReads, "a/.env", Kind::File, false),
            (
                "-not -name .env -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                true,
            ),
            (
                "! -name .env -exec cat {} ;",
                ContentReads,
                "a/.env",
                Kind::File,
                true,
            ),
            (
                "-name '*.c' -exec grep -Hn main {} +",
                ContentReads,
                ".env",
                Kind::File,
                true,
            ),
            (
                "-name '*.c' -exec grep -Hn main {} +",
                ContentReads,
                ".git",
                Kind::Dir,
                false,
            ),
            (
                "-name .git -prune -o -exec cat {} ;",
                ContentReads,
                ".git",
                Kind::Dir,
                true,
            ),
            (
                "-name .git -prune -o -exec cat {} ;",
                ContentReads,
                ".git/config",
                Kind::File,
                true,
            ),
            (
                "-depth -name .git -prune -o -exec cat {} ;",
                ContentReads,
                ".git/config",
                Kind::File,
                false,
            ),
            (
                "-path ./.git -prune -o -type f -exec cat {} +",
                ContentReads,
                ".git/config",
                Kind::File,
                true,
            ),
            (
                "-type d -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                true,
            ),
            (
                "-type f -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                false,
            ),
            (
                "-maxdepth 1 -exec cat {} ;",
                ContentReads,
                "a/.env",
                Kind::File,
                true,
            ),
            (
                "-maxdepth 1 -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                false,
            ),
            (
                "-mindepth 2 -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                true,
            ),
            ("-exec ls {} ;", ContentReads, ".env", Kind::File, true),
            (
                "-size +1k -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                false,
            ),
            (
                "-name '*.md' -o -name .env -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                false,
            ),
            (
                "( -name '*.md' -o -name '*.txt' ) -exec cat {} ;",
                ContentReads,
                ".env",
                Kind::File,
                true,
            ),
            ("-name .env", PrintedNames, ".env", Kind::File, false),
            ("", PrintedNames, ".env", Kind::File, false),
            ("-name '*.el'", PrintedNames, ".env", Kind::File, true),
            (
                "-name '*.md' -print0",
                PrintedNames,
                ".env",
                Kind::File,
                true,
            ),
            (
                "-type f -not -name .env",
                PrintedNames,
                ".env",
                Kind::File,
                true,
            ),
            (
                "-name .git -prune -o -type f -print",
                PrintedNames,
                ".git",
                Kind::Dir,
                true,
            ),
            ("-type f", PrintedNames, ".git", Kind::Dir, false),
        ] {
            let plan = find_plan(&words(expr), mode, &reads)
                .unwrap_or_else(|| panic!("{expr} did not parse"));
            let e = Entry {
                root: ".",
                rel: Path::new(rel),
                kind,
                cwd,
            };
            assert_eq!(plan.covers(&e, false), want, "find . {expr}: {rel}");
        }
        // Printed names are plain names only: other outputs are unknown producers.
        for expr in ["-printf '%p\\n'", "-ls", "-exec echo {} ;", "-bogus"] {
            assert_eq!(
                find_plan(&words(expr), PrintedNames, &reads),
                None,
                "{expr}"
            );
        }
    }

    #[test]
    fn exclusion_hints_table() {
        let cwd = Path::new("/w");
        let file = Entry {
            root: ".",
            rel: Path::new("sub/.env"),
            kind: Kind::File,
            cwd,
        };
        let dir = Entry {
            root: ".",
            rel: Path::new(".git"),
            kind: Kind::Dir,
            cwd,
        };
        for (tool, label, e, want) in [
            (
                Tool::Grep,
                "grep -rn KEY .",
                &file,
                "exclude it: `grep --exclude=.env -rn KEY .`",
            ),
            (
                Tool::Grep,
                "grep -rn KEY .",
                &dir,
                "exclude it: `grep --exclude-dir=.git -rn KEY .`",
            ),
            (Tool::Rg, "rg KEY", &file, "exclude it: `rg KEY -g '!.env'`"),
            (
                Tool::GitGrep,
                "git grep KEY",
                &file,
                "exclude it: `git grep KEY -- . ':!sub/.env'`",
            ),
            (
                Tool::GitGrep,
                "git grep KEY -- src",
                &file,
                "exclude it: `git grep KEY -- src ':!sub/.env'`",
            ),
            (
                Tool::Find,
                "find . -exec cat {} ;",
                &file,
                "exclude it: `find . -not -name .env ...`",
            ),
            (
                Tool::Find,
                "find . -exec cat {} ;",
                &dir,
                "exclude it: `find . -name .git -prune -o ...`",
            ),
        ] {
            assert_eq!(exclusion_hint(tool, label, e), want);
        }
    }
}
