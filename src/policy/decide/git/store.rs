//! Step 5 for git's object store (SECURITY.md, "git's object store"): commands that print
//! files from it without naming them (`git log -p`, `git show`, `git diff --cached`,
//! `git archive`, ...) are refused when the repository's index, HEAD tree or history holds
//! a path a deny pattern matches ([`gitstore`]), or when that cannot be told, unless a
//! pathspec certainly leaves every such path out ([`Pathspec`]); commands that read work-tree
//! files into it (`git add -A`, `git add .`, `git stash -u`, `git commit -a`) are refused
//! when they would take a denied file in ([`denied`]). The reason is `reaches_denied_path`.

use std::path::{Path, PathBuf};

use crate::policy::decide::Judge;
use crate::policy::denied;
use crate::policy::git::pathspec::Pathspec;
use crate::policy::git::store::{self as gitstore, Answer, Look};
use crate::policy::paths::{self, Access, PathVerdict, Resolved};
use crate::shell::WordInfo;
use crate::Reason;

/// Global options of git that take a value (besides `-C`; `--exec-path` only with `=`).
const GLOBAL_VALUE: &[&str] = &[
    "-c",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--list-cmds",
    "--attr-source",
    "--git-dir",
    "--work-tree",
];
/// Global options that change how pathspecs are read.
const PATHSPEC_GLOBALS: &[&str] = &[
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];
/// Global options that make the working directory the repository.
const REPO_GLOBALS: &[&str] = &["--bare"];

/// A git command line as the store sees it.
struct Line<'w> {
    /// The directory git runs in, per working directory (`-C` applied); `None`: unknown.
    dirs: Vec<Option<PathBuf>>,
    /// `--bare`: the repository is not found as usual.
    unsure_repo: bool,
    /// `--git-dir`, `--work-tree` (`Some(None)`: known only at run time).
    git_dir: Option<Option<&'w str>>,
    work_tree: Option<Option<&'w str>>,
    unsure_pathspec: bool,
    sub: &'w str,
    /// The words after the subcommand, up to `--` (`None`: known only at run time).
    before: Vec<Option<&'w str>>,
    /// The words after `--`, if there is one.
    after: Option<Vec<Option<&'w str>>>,
}

/// Where a command's reads come from.
enum Reads {
    /// Files of the store, through a pathspec (when it takes one), in these parts.
    Store {
        look: Look,
        pathspec: bool,
        blobs: bool,
    },
    /// Work-tree files into the index: untracked ones (`force`: ignored ones too).
    Tree { force: bool, tracked_only: bool },
    /// Any object by name, whatever its path (`git cat-file -p X`): refused when X is a
    /// blob and the store holds a denied path.
    Objects,
}

impl<'a> Judge<'a> {
    /// Judges a git command's reads of the object store, and of work-tree files into it.
    pub(super) fn git_store(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let Some(line) = parse_line(args, cwds) else {
            return;
        };
        let Some(reads) = self.git_reads(&line) else {
            return;
        };
        for dir in &line.dirs {
            let Some(dir) = dir else {
                self.store_unknown(
                    label,
                    "the directory of `git -C` is known only at run time",
                    None,
                );
                continue;
            };
            let dir = paths::resolve(dir).target;
            let top = match (line.git_dir, line.work_tree, line.unsure_repo) {
                (None, None, false) => super::git_top(&dir),
                // `--git-dir DIR/.git` with DIR as the work tree: given, or the working
                // directory (git's work tree under `--git-dir` alone).
                (Some(Some(g)), w, false) => {
                    let g = paths::resolve(&dir.join(g)).target;
                    let parent = g.parent().map(Path::to_path_buf).unwrap_or_default();
                    let same = match w {
                        None => dir == parent,
                        Some(w) => w.is_some_and(|w| paths::resolve(&dir.join(w)).target == parent),
                    };
                    if !paths::exists(&g) {
                        continue;
                    }
                    if g.file_name() != Some(std::ffi::OsStr::new(".git")) || !same {
                        self.store_unknown(label, "`--git-dir` names a repository whose work tree is not the one git would use", None);
                        continue;
                    }
                    parent
                }
                _ => {
                    self.store_unknown(
                        label,
                        "`--work-tree` or `--bare` moves the repository",
                        None,
                    );
                    continue;
                }
            };
            if !paths::exists(&top.join(".git")) {
                continue;
            }
            let prefix = dir
                .strip_prefix(&top)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            if matches!(reads, Reads::Store { .. } | Reads::Objects)
                && self.unreachable_objects(&line, &top, label)
            {
                continue;
            }
            match &reads {
                Reads::Store {
                    look,
                    pathspec,
                    blobs,
                } => self.store_reads(&line, &top, &dir, &prefix, *look, *pathspec, *blobs, label),
                Reads::Objects => self.object_reads(&line, &top, label),
                Reads::Tree {
                    force,
                    tracked_only,
                } => self.tree_reads(&line, &top, &dir, &prefix, *force, *tracked_only, label),
            }
        }
    }

    /// What the command reads, if it reads files of the store or of the work tree into it.
    fn git_reads(&self, line: &Line<'_>) -> Option<Reads> {
        let values = self.git_value_options(line.sub);
        let (opts, operands) = split_options(&line.before, &values);
        let has = |f: &dyn Fn(&str) -> bool| opts.iter().any(|o| f(o));
        let content = has(&content_option);
        let names_only = has(&names_only_option);
        let store = |look: Look, pathspec: bool, blobs: bool| {
            Some(Reads::Store {
                look,
                pathspec,
                blobs,
            })
        };
        // History and the index: a commit on the same line (`git commit -m x && git log -p`)
        // moves what is staged into history before the reader runs.
        const HISTORY: Look = Look::ALL;
        // `-p`/`--patch`, `-i`, `-e`: the hunks of tracked files are printed before any answer
        // is read (from the index, HEAD, or a revision).
        let patch =
            has(&|o| o == "--patch" || o == "--interactive" || o == "--edit" || short_has(o, 'p'))
                || (matches!(line.sub, "add" | "commit")
                    && has(&|o| short_has(o, 'i') || (line.sub == "add" && short_has(o, 'e'))));
        let stash_show =
            line.sub == "stash" && matches!(operands.first(), Some(Some("show" | "list")));
        if patch
            && !stash_show
            && matches!(
                line.sub,
                "add" | "stash" | "commit" | "reset" | "checkout" | "restore"
            )
        {
            return store(Look::ALL, true, false);
        }
        match line.sub {
            "log" | "whatchanged" if content => store(HISTORY, true, false),
            "reflog"
                if content
                    && !matches!(operands.first(), Some(Some("expire" | "delete" | "exists"))) =>
            {
                store(HISTORY, true, false)
            }
            // `git show REV:PATH...` prints those files, each judged by its path (git.rs).
            "show" if !operands.is_empty() && operands.iter().all(|o| o.is_some_and(rev_path)) => {
                None
            }
            "show" if content || !names_only => store(HISTORY, true, true),
            // `--stat` of a blob prints the blob.
            "show" => Some(Reads::Objects),
            "format-patch" => store(HISTORY, true, false),
            // Plumbing that prints patches, and commands that copy objects out whole.
            "diff-tree" | "diff-index" | "diff-files" if content => store(HISTORY, true, false),
            "request-pull" if content => store(HISTORY, false, false),
            "merge-tree" | "fast-export" | "pack-objects" | "difftool" => {
                store(Look::ALL, false, false)
            }
            "bundle" if matches!(operands.first(), Some(Some("create"))) => {
                store(Look::ALL, false, false)
            }
            "unpack-file" => Some(Reads::Objects),
            "archive" => store(HISTORY, true, false),
            "grep" => store(Look::ALL, true, false),
            "range-diff" if !has(&|o| o == "-s" || o == "--no-patch") => {
                store(HISTORY, false, false)
            }
            "diff" if content || !names_only => {
                let cached = has(&|o| o == "--cached" || o == "--staged" || o == "--merge-base");
                let revs = !operands.is_empty() && line.after.is_some()
                    || operands
                        .iter()
                        .any(|o| o.is_none_or(|o| !self.names_a_path(line, o)));
                store(
                    Look {
                        index: true,
                        head: cached || revs,
                        history: revs,
                    },
                    true,
                    true,
                )
            }
            "stash" => match operands.first() {
                Some(Some("show" | "list")) if content => store(HISTORY, false, false),
                None | Some(Some("push" | "save")) => {
                    let untracked = has(&|o| o == "--include-untracked" || short_has(o, 'u'));
                    let all = has(&|o| o == "--all" || short_has(o, 'a'));
                    (untracked || all).then_some(Reads::Tree {
                        force: all,
                        tracked_only: false,
                    })
                }
                _ => None,
            },
            "cat-file" => {
                let batch = has(&|o| {
                    o == "--batch"
                        || o == "--batch-command"
                        || o.starts_with("--batch=")
                        || o.starts_with("--batch-command=")
                });
                if batch {
                    return store(Look::ALL, false, false);
                }
                let typed = matches!(
                    operands.first(),
                    Some(Some("blob" | "tree" | "commit" | "tag"))
                );
                (has(&|o| o == "-p" || o == "--textconv" || o == "--filters") || typed)
                    .then_some(Reads::Objects)
            }
            // `--dry-run` lists names and reads nothing in.
            "add" if has(&|o| o == "--dry-run" || short_has(o, 'n')) => None,
            "add" => {
                let tracked_only = has(&|o| o == "--update" || short_has(o, 'u'));
                let force = has(&|o| o == "--force" || short_has(o, 'f'));
                let all = has(&|o| {
                    matches!(o, "--all" | "--no-ignore-removal" | "--pathspec-from-file")
                        || o.starts_with("--pathspec-from-file=")
                        || short_has(o, 'A')
                });
                let named =
                    !operands.is_empty() || line.after.as_ref().is_some_and(|a| !a.is_empty());
                (all || tracked_only || named).then_some(Reads::Tree {
                    force,
                    tracked_only,
                })
            }
            "commit" => {
                let all = has(&|o| o == "--all" || short_has(o, 'a'));
                let named =
                    !operands.is_empty() || line.after.as_ref().is_some_and(|a| !a.is_empty());
                (all || named).then_some(Reads::Tree {
                    force: false,
                    tracked_only: true,
                })
            }
            _ => None,
        }
    }

    /// The options of a git subcommand known to take the next word as a value that names
    /// no object. Any other word that does not start with `-` is an operand: a value taken
    /// for an operand makes the look wider, never narrower.
    fn git_value_options(&self, sub: &str) -> Vec<String> {
        let list: &[&str] = match sub {
            "commit" => &[
                "-m",
                "-F",
                "-C",
                "-c",
                "-t",
                "--message",
                "--file",
                "--author",
                "--date",
                "--template",
                "--reuse-message",
                "--reedit-message",
                "--fixup",
                "--squash",
                "--trailer",
                "--cleanup",
                "--pathspec-from-file",
            ],
            "log" | "show" | "whatchanged" | "reflog" | "format-patch" | "diff" | "range-diff" => {
                &[
                    "-n",
                    "--max-count",
                    "--skip",
                    "--since",
                    "--after",
                    "--until",
                    "--before",
                    "--author",
                    "--committer",
                    "--grep",
                    "-L",
                    "-S",
                    "-G",
                    "-O",
                    "--output",
                ]
            }
            "grep" => &[
                "-e",
                "-f",
                "-A",
                "-B",
                "-C",
                "-m",
                "--max-count",
                "--max-depth",
                "--threads",
                "-O",
            ],
            "archive" => &["--format", "--prefix", "-o", "--output"],
            "add" | "stash" => &["--pathspec-from-file", "-m", "--message"],
            _ => &[],
        };
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Whether `word` is a path in every working directory of the line (git reads a word
    /// before `--` as a path when it is not a revision and names a file).
    fn names_a_path(&self, line: &Line<'_>, word: &str) -> bool {
        !word.contains(':')
            && line
                .dirs
                .iter()
                .all(|d| d.as_ref().is_some_and(|d| paths::exists(&d.join(word))))
    }

    #[allow(clippy::too_many_arguments)]
    fn store_reads(
        &mut self,
        line: &Line<'_>,
        top: &Path,
        dir: &Path,
        prefix: &str,
        look: Look,
        takes_pathspec: bool,
        blobs: bool,
        label: &str,
    ) {
        // Without `--`, git reads a word that is no revision and names a file as a path.
        let values = self.git_value_options(line.sub);
        let (_, operands) = split_options(&line.before, &values);
        let path_words: Vec<&str> = if line.after.is_none() && line.sub != "grep" {
            operands
                .iter()
                .flatten()
                .copied()
                .filter(|o| self.names_a_path(line, o))
                .collect()
        } else {
            Vec::new()
        };
        let mut ps = if takes_pathspec && !line.unsure_pathspec {
            pathspec_of(line, &path_words, prefix)
        } else {
            None
        };
        // A blob named by its hash or a ref prints whatever the pathspec says.
        if blobs && ps.is_some() && !self.only_commits_and_trees(line, &path_words, top) {
            ps = None;
        }
        if let Some(ps) = &ps {
            let deny = self.ctx.matcher.deny_patterns();
            if ps.has_exclude() && deny.iter().all(|d| ps.excludes_pattern(d, top)) {
                return;
            }
        }
        let exempt = |rel: &[u8]| ps.as_ref().is_some_and(|p| p.leaves_out(rel));
        let answer = gitstore::look(
            top,
            self.ctx.matcher,
            look,
            &exempt,
            &gitstore::Limits::default(),
        );
        let can_exclude = takes_pathspec && (!blobs || ps.is_some() || line.after.is_none());
        match answer {
            Answer::Clean => {}
            Answer::Holds {
                path,
                pattern,
                where_,
            } => {
                let how = if can_exclude {
                    format!(
                        " Leave it out with a pathspec: `{}`.",
                        suggest(label, line, std::slice::from_ref(&pattern), top, dir)
                    )
                } else if takes_pathspec {
                    " A pathspec does not leave it out here: the command names an object (a blob) that is printed whatever its path.".to_string()
                } else {
                    format!(" `git {}` takes no pathspec that leaves it out: use `git log -p` or `git diff` with one.", line.sub)
                };
                self.violate(
                    Reason::ReachesDeniedPath,
                    format!(
                        "`{label}` prints files from git's object store, and {} (deny pattern `{pattern}`) is {}: a denied file is never read, from the work tree or from git.{how}",
                        path.display(),
                        where_.describe()
                    ),
                    Some(label.to_string()),
                    path.to_string_lossy().into_owned(),
                    "path",
                    Some(Access::Read),
                );
            }
            Answer::CannotTell { why } => {
                let how = if takes_pathspec {
                    self.suggest_all(label, line, top, dir)
                } else {
                    None
                };
                self.store_unknown(label, &why.to_string(), how);
            }
        }
    }

    /// Objects named by their hash that git's history does not reach (a blob staged once and
    /// taken out again, a stash dropped, a commit left by a reset whose reflog expired, an
    /// object of another store through `objects/info/alternates`): the look at the store sees
    /// refs, reflogs and the index only, so whose path such an object had cannot be told.
    /// Refused; returns whether it was. Names that are refs, paths or `REV:PATH` (judged by
    /// its path) are not looked at.
    fn unreachable_objects(&mut self, line: &Line<'_>, top: &Path, label: &str) -> bool {
        let values = self.git_value_options(line.sub);
        let (opts, operands) = split_options(&line.before, &values);
        // `git grep PATTERN REV...`: the first operand is the pattern, unless `-e`/`-f` give it.
        let pattern = line.sub == "grep"
            && !opts.iter().any(|o| {
                matches!(*o, "-e" | "-f") || o.starts_with("--regexp") || o.starts_with("--file")
            });
        let mut refused = false;
        for o in operands.into_iter().skip(usize::from(pattern)).flatten() {
            if rev_path(o) || self.names_a_path(line, o) {
                continue;
            }
            for end in o.split("...").flat_map(|p| p.split("..")) {
                let end = end.trim_start_matches('^');
                let base = &end[..end.find(['^', '~', '@', ':']).unwrap_or(end.len())];
                if !(4..=64).contains(&base.len()) || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
                    continue;
                }
                let why = match gitstore::reachable(top, base, &gitstore::Limits::default()) {
                    Ok(true) => continue,
                    Ok(false) => {
                        format!("{base} names an object that no ref, reflog or index entry reaches")
                    }
                    Err(why) => {
                        format!("whether {base} is reached from a ref cannot be told ({why})")
                    }
                };
                self.violate(
                    Reason::ReachesDeniedPath,
                    format!("`{label}` reads an object of git's object store by its hash, and {why}: which path it had, and so whether it is a denied file, cannot be told, and a denied file is never read, from the work tree or from git. Name commits by a ref (`HEAD~1`, a branch) or a hash that history reaches, and files as REV:PATH."),
                    Some(label.to_string()),
                    base.to_string(),
                    "command",
                    Some(Access::Read),
                );
                refused = true;
            }
        }
        refused
    }

    /// `git cat-file -p X`, `git cat-file blob X`: a blob is printed whatever its path.
    fn object_reads(&mut self, line: &Line<'_>, top: &Path, label: &str) {
        let values = self.git_value_options(line.sub);
        let (_, operands) = split_options(&line.before, &values);
        let blobs = operands
            .iter()
            .filter(|o| !matches!(o, Some("blob" | "tree" | "commit" | "tag")))
            .any(|o| match o {
                // `REV:PATH` is judged by its path (git.rs).
                Some(o) if rev_path(o) => false,
                Some(o) => !matches!(
                    gitstore::object_type(top, o, &gitstore::Limits::default()).as_deref(),
                    Ok("commit" | "tree" | "tag")
                ),
                None => true,
            });
        if !blobs {
            return;
        }
        match gitstore::look(top, self.ctx.matcher, Look::ALL, &|_| false, &gitstore::Limits::default()) {
            Answer::Clean => {}
            Answer::Holds { path, pattern, where_ } => self.violate(
                Reason::ReachesDeniedPath,
                format!(
                    "`{label}` prints an object of git's object store whatever its path, and {} (deny pattern `{pattern}`) is {}: a denied file is never read, from the work tree or from git. Name objects as REV:PATH (`HEAD:src/main.rs`), which is judged by its path.",
                    path.display(),
                    where_.describe()
                ),
                Some(label.to_string()),
                path.to_string_lossy().into_owned(),
                "path",
                Some(Access::Read),
            ),
            Answer::CannotTell { why } => self.store_unknown(label, &why.to_string(), Some("Name objects as REV:PATH (`HEAD:src/main.rs`), which is judged by its path.".into())),
        }
    }

    /// `git add`, `git commit -a`, `git stash -u`: the work-tree files they take into the
    /// index (denied ones found by a walk, less what git ignores and what the pathspec
    /// leaves out); with `tracked_only`, the index's own denied entries.
    #[allow(clippy::too_many_arguments)]
    fn tree_reads(
        &mut self,
        line: &Line<'_>,
        top: &Path,
        dir: &Path,
        prefix: &str,
        force: bool,
        tracked_only: bool,
        label: &str,
    ) {
        let values = self.git_value_options(line.sub);
        let (opts, operands) = split_options(&line.before, &values);
        let from_file = opts.iter().any(|o| o.starts_with("--pathspec-from-file"));
        let mut elems: Vec<Option<&str>> = if line.sub == "stash" {
            Vec::new()
        } else {
            operands.clone()
        };
        if line.sub == "stash" {
            // `git stash push [--] PATHSPEC`: the words after the subcommand word.
            elems.extend(
                operands
                    .iter()
                    .skip(usize::from(matches!(
                        operands.first(),
                        Some(Some("push" | "save"))
                    )))
                    .copied(),
            );
        }
        if let Some(a) = &line.after {
            elems.extend(a.iter().copied());
        }
        let known: Option<Vec<&str>> = elems.iter().copied().collect();
        let ps = match (&known, from_file || line.unsure_pathspec) {
            (Some(k), false) => Pathspec::parse(k, prefix),
            _ => None,
        };
        let exempt = |rel: &[u8]| ps.as_ref().is_some_and(|p| p.leaves_out(rel));
        let rel_of = |p: &Path| {
            p.strip_prefix(top)
                .ok()
                .map(|r| r.as_os_str().as_encoded_bytes().to_vec())
        };
        if tracked_only {
            let look = Look {
                index: true,
                head: false,
                history: false,
            };
            match gitstore::look(
                top,
                self.ctx.matcher,
                look,
                &exempt,
                &gitstore::Limits::default(),
            ) {
                Answer::Clean => {}
                Answer::Holds { path, pattern, .. } => {
                    self.tree_violation(label, line, top, dir, &path, &pattern)
                }
                Answer::CannotTell { why } => self.store_unknown(label, &why.to_string(), None),
            }
            return;
        }
        // The roots the command reads: each literal element, else the whole work tree.
        let mut roots: Vec<PathBuf> = Vec::new();
        let positives: Vec<&Option<&str>> = elems
            .iter()
            .filter(|e| {
                !e.is_some_and(|e| {
                    e.starts_with(":!") || e.starts_with(":^") || e.starts_with(":(exclude")
                })
            })
            .collect();
        if positives.is_empty() || from_file {
            roots.push(top.to_path_buf());
        }
        for e in positives {
            match e {
                Some(e) if !e.starts_with(':') && !e.bytes().any(|b| b"*?[\\".contains(&b)) => {
                    // A denied path named: refused as a path, like any operand that reads it.
                    let r = paths::resolve(&dir.join(e));
                    if let PathVerdict::Denied(p) = self.ctx.matcher.check(&r, Access::Read) {
                        self.violate(
                            Reason::PathDenied,
                            format!("`{e}` (operand of git {}) names {} which matches the deny pattern `{p}`; it is never allowed", line.sub, r.target.display()),
                            Some(label.to_string()),
                            r.target.to_string_lossy().into_owned(),
                            "path",
                            Some(Access::Read),
                        );
                        continue;
                    }
                    roots.push(dir.join(e));
                }
                _ => roots.push(top.to_path_buf()),
            }
        }
        let found =
            match denied::all_denied_under(&roots, self.ctx.matcher, &denied::Limits::default()) {
                denied::Reach::Clean { .. } => return,
                // Past the walk's bounds (a tree of ignored build output): git's own listing, which
                // does not enter ignored directories, and the index.
                denied::Reach::CannotTell { .. } => {
                    let limits = gitstore::Limits::default();
                    let mut answer =
                        gitstore::untracked(top, self.ctx.matcher, force, &exempt, &limits);
                    if answer == Answer::Clean {
                        answer = gitstore::look(
                            top,
                            self.ctx.matcher,
                            Look {
                                index: true,
                                head: false,
                                history: false,
                            },
                            &exempt,
                            &limits,
                        );
                    }
                    match answer {
                        Answer::Clean => {}
                        Answer::Holds { path, pattern, .. } => {
                            self.tree_violation(label, line, top, dir, &path, &pattern)
                        }
                        Answer::CannotTell { why } => {
                            self.store_unknown(label, &why.to_string(), None)
                        }
                    }
                    return;
                }
                denied::Reach::Denied { found, .. } => found,
            };
        let git_dir = top.join(".git");
        let mut rels: Vec<Vec<u8>> = Vec::new();
        for f in &found {
            let f = paths::resolve(f).literal;
            if f.starts_with(&git_dir) {
                continue;
            }
            match rel_of(&f) {
                Some(r) if !exempt(&r) => rels.push(r),
                Some(_) => {}
                // Outside the work tree: git refuses it.
                None => {}
            }
        }
        match gitstore::would_add(top, &rels, force, &gitstore::Limits::default()) {
            Ok(taken) => {
                if let Some(r) = taken.first() {
                    let path =
                        top.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(r));
                    let r = Resolved {
                        literal: path.clone(),
                        target: path.clone(),
                    };
                    let pattern = denied::deny_pattern(self.ctx.matcher, &r).unwrap_or_default();
                    self.tree_violation(label, line, top, dir, &path, &pattern);
                }
            }
            Err(why) => self.store_unknown(label, &why.to_string(), None),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tree_violation(
        &mut self,
        label: &str,
        line: &Line<'_>,
        top: &Path,
        dir: &Path,
        path: &Path,
        pattern: &str,
    ) {
        let how = if line.sub == "commit" {
            "commit the paths you changed by name (`git commit -m MSG -- src/a.rs`)".to_string()
        } else {
            format!(
                "leave it out with a pathspec: `{}`",
                suggest(label, line, &[pattern.to_string()], top, dir)
            )
        };
        self.violate(
            Reason::ReachesDeniedPath,
            format!(
                "`{label}` reads {} (deny pattern `{pattern}`) into git's object store, from where any git command could print it: a denied file is never read. Add files by name, or {how}.",
                path.display()
            ),
            Some(label.to_string()),
            path.to_string_lossy().into_owned(),
            "path",
            Some(Access::Read),
        );
    }

    /// The refusal when the store cannot be read completely.
    fn store_unknown(&mut self, label: &str, why: &str, how: Option<String>) {
        let how = how.map(|h| format!(" {h}")).unwrap_or_default();
        self.violate(
            Reason::ReachesDeniedPath,
            format!("`{label}` reads git's object store, and whether it holds a denied path cannot be told ({why}): a denied file is never read, from the work tree or from git.{how}"),
            Some(label.to_string()),
            label.to_string(),
            "command",
            Some(Access::Read),
        );
    }

    /// A way out that leaves out every deny pattern, when there is one.
    fn suggest_all(&self, label: &str, line: &Line<'_>, top: &Path, dir: &Path) -> Option<String> {
        let deny = self.ctx.matcher.deny_patterns();
        let s = suggest(label, line, deny, top, dir);
        let elems: Vec<String> = shell_words::split(&s).ok()?;
        let at = elems.iter().position(|e| e == "--")?;
        let refs: Vec<&str> = elems[at + 1..].iter().map(String::as_str).collect();
        let ps = Pathspec::parse(&refs, "")?;
        deny.iter()
            .all(|d| ps.excludes_pattern(d, top))
            .then(|| format!("Leave out every deny pattern with a pathspec: `{s}`."))
    }

    /// Whether every object the command names before `--` (its path words aside) is a commit
    /// or a tree (a tag is followed to what it tags).
    fn only_commits_and_trees(&self, line: &Line<'_>, path_words: &[&str], top: &Path) -> bool {
        let values = self.git_value_options(line.sub);
        let (_, operands) = split_options(&line.before, &values);
        operands.iter().all(|o| {
            let Some(o) = o else { return false };
            if rev_path(o) || path_words.contains(o) {
                // `REV:PATH` is judged by its path (git.rs); a tree's listing shows names.
                return true;
            }
            let ends: Vec<&str> = o
                .split("...")
                .flat_map(|p| p.split(".."))
                .filter(|p| !p.is_empty())
                .collect();
            ends.iter().all(|e| {
                let e = e.trim_start_matches('^');
                let e = e
                    .strip_suffix("^!")
                    .or_else(|| e.strip_suffix("^@"))
                    .or_else(|| e.strip_suffix("^-"))
                    .unwrap_or(e);
                matches!(
                    gitstore::object_type(top, &format!("{e}^{{}}"), &gitstore::Limits::default())
                        .as_deref(),
                    Ok("commit" | "tree")
                )
            })
        })
    }
}

/// The pathspec of a reader: the words after `--`, else its words that name files; `None`
/// when one is known only at run time or is not read here, or there is none (the whole tree).
fn pathspec_of(line: &Line<'_>, path_words: &[&str], prefix: &str) -> Option<Pathspec> {
    match &line.after {
        Some(after) => {
            let known: Option<Vec<&str>> = after.iter().copied().collect();
            Pathspec::parse(&known?, prefix)
        }
        None if !path_words.is_empty() => Pathspec::parse(path_words, prefix),
        None => None,
    }
}

/// The command with a pathspec that leaves out `patterns` (top-relative excludes).
fn suggest(label: &str, line: &Line<'_>, patterns: &[String], top: &Path, _dir: &Path) -> String {
    let top_s = top.to_string_lossy();
    let mut excl: Vec<String> = Vec::new();
    for d in patterns {
        let e = if let Some(name) = d.strip_prefix("**/") {
            format!(":(top,exclude,glob)**/{name}")
        } else if let Some(rest) = d.strip_prefix(&*top_s).and_then(|r| r.strip_prefix('/')) {
            match rest.strip_suffix("/**") {
                Some(dir) if !dir.bytes().any(|b| b"*?[{\\".contains(&b)) => {
                    format!(":(top,exclude){dir}")
                }
                _ if !rest.bytes().any(|b| b"*?[{\\".contains(&b)) => {
                    format!(":(top,exclude){rest}")
                }
                _ => format!(":(top,exclude,glob){rest}"),
            }
        } else {
            continue;
        };
        let q = shell_words::quote(&e).into_owned();
        if !excl.contains(&q) {
            excl.push(q);
        }
    }
    let sep = if line.after.is_some() { "" } else { " --" };
    format!("{label}{sep} {}", excl.join(" "))
}

/// Reads the global options and splits the rest at `--`; `None` when the subcommand is not
/// a literal word.
fn parse_line<'w>(args: &'w [WordInfo], cwds: &[PathBuf]) -> Option<Line<'w>> {
    let mut chdirs: Vec<Option<&str>> = Vec::new();
    let (mut unsure_repo, mut unsure_pathspec) = (false, false);
    let (mut git_dir, mut work_tree) = (None, None);
    let mut i = 0;
    let sub = loop {
        let w = args.get(i)?.exact()?;
        if w == "-C" {
            chdirs.push(args.get(i + 1).and_then(WordInfo::exact));
            i += 2;
            continue;
        }
        let name = w.split_once('=').map_or(w, |(n, _)| n);
        if name == "--git-dir" || name == "--work-tree" {
            let v = match w.split_once('=') {
                Some((_, v)) => Some(v),
                None => args.get(i + 1).and_then(WordInfo::exact),
            };
            if name == "--git-dir" {
                git_dir = Some(v);
            } else {
                work_tree = Some(v);
            }
        }
        if REPO_GLOBALS.contains(&name) {
            unsure_repo = true;
        }
        if PATHSPEC_GLOBALS.contains(&w) {
            unsure_pathspec = true;
        }
        if GLOBAL_VALUE.contains(&w) {
            i += 2;
            continue;
        }
        if w.starts_with('-') {
            i += 1;
            continue;
        }
        break w;
    };
    let rest = &args[i + 1..];
    let dd = rest.iter().position(|w| w.exact() == Some("--"));
    let before = rest[..dd.unwrap_or(rest.len())]
        .iter()
        .map(WordInfo::exact)
        .collect();
    let after = dd.map(|k| rest[k + 1..].iter().map(WordInfo::exact).collect());
    let dirs = cwds
        .iter()
        .map(|c| {
            chdirs
                .iter()
                .try_fold(c.clone(), |d, x| x.map(|x| d.join(x)))
        })
        .collect();
    Some(Line {
        dirs,
        unsure_repo,
        git_dir,
        work_tree,
        unsure_pathspec,
        sub,
        before,
        after,
    })
}

/// The options (as written) and the operands of the words before `--`, skipping the values
/// of `values`. A word known only at run time is an operand (`None`).
fn split_options<'w>(
    before: &[Option<&'w str>],
    values: &[String],
) -> (Vec<&'w str>, Vec<Option<&'w str>>) {
    let (mut opts, mut operands) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < before.len() {
        let w = before[i];
        i += 1;
        match w {
            Some(o) if o.starts_with('-') && o != "-" => {
                opts.push(o);
                let takes = if o.starts_with("--") {
                    !o.contains('=') && values.iter().any(|v| v == o)
                } else {
                    // A short cluster: the first letter that takes a value takes the rest.
                    let letters = &o[1..];
                    match letters
                        .char_indices()
                        .find(|(_, c)| values.iter().any(|v| v.len() == 2 && v.ends_with(*c)))
                    {
                        Some((k, c)) => k + c.len_utf8() == letters.len(),
                        None => false,
                    }
                };
                if takes {
                    i += 1;
                }
            }
            w => operands.push(w),
        }
    }
    (opts, operands)
}

/// Whether `o` names an object by a path in a tree or the index (`REV:PATH`, `:PATH`,
/// `:N:PATH`), not a commit by its message (`:/TEXT`).
fn rev_path(o: &str) -> bool {
    o.contains(':') && !o.starts_with(":/")
}

/// Whether the short option cluster `o` holds the letter `c` (`-am` holds `a` and `m`).
fn short_has(o: &str, c: char) -> bool {
    o.strip_prefix('-').is_some_and(|l| {
        !l.starts_with('-') && !l.starts_with(|d: char| d.is_ascii_digit()) && l.contains(c)
    })
}

/// A diff option that prints file content (or tells what it holds: `-S`, `-G`).
fn content_option(o: &str) -> bool {
    const LONG: &[&str] = &[
        "--patch",
        "--unified",
        "--cc",
        "--dd",
        "--remerge-diff",
        "--word-diff",
        "--color-words",
        "--binary",
        "--function-context",
        "--pickaxe",
        "--check",
        "--full-diff",
        "--combined-all-paths",
        "--diff-merges",
        "--inter-hunk-context",
        "--text",
    ];
    if o.starts_with("--") {
        return LONG.iter().any(|l| {
            o == *l
                || o.strip_prefix(l)
                    .is_some_and(|r| r.starts_with('=') || r.starts_with('-'))
        });
    }
    let Some(letters) = o.strip_prefix('-') else {
        return false;
    };
    if letters.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    // The letters before any value: `-pU3`, `-SKEY` (the value's letters count too: safer).
    letters.chars().any(|c| "puUSGLWc".contains(c))
}

/// A diff option that prints names only.
fn names_only_option(o: &str) -> bool {
    const LONG: &[&str] = &[
        "--stat",
        "--numstat",
        "--shortstat",
        "--name-only",
        "--name-status",
        "--summary",
        "--raw",
        "--dirstat",
        "--no-patch",
        "--compact-summary",
        "--quiet",
        "--exit-code",
    ];
    o == "-s"
        || LONG
            .iter()
            .any(|l| o == *l || o.strip_prefix(l).is_some_and(|r| r.starts_with('=')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_and_content_read() {
        let w = |v: &[&'static str]| v.iter().map(|s| Some(*s)).collect::<Vec<_>>();
        let values: Vec<String> = ["-m", "-n", "--format"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (o, ops) = split_options(
            &w(&[
                "-am", "msg", "x", "-n", "3", "--format", "%H", "--stat", "y",
            ]),
            &values,
        );
        assert_eq!(o, vec!["-am", "-n", "--format", "--stat"]);
        assert_eq!(ops, vec![Some("x"), Some("y")]);
        let rows = [
            ("-p", true),
            ("-u", true),
            ("-U3", true),
            ("--patch-with-stat", true),
            ("--cc", true),
            ("-SKEY", true),
            ("-Gk", true),
            ("--word-diff=color", true),
            ("--stat", false),
            ("--name-only", false),
            ("-5", false),
            ("--oneline", false),
            ("-n", false),
            ("--format=%H", false),
            ("--unified=5", true),
            ("-W", true),
            ("--pickaxe-regex", true),
        ];
        for (o, want) in rows {
            assert_eq!(content_option(o), want, "{o}");
        }
        assert!(short_has("-am", 'a') && !short_has("--all", 'a') && !short_has("-5", 'a'));
    }
}
