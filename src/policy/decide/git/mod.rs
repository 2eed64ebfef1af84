//! Step 5 for git: every check a `git` command gets once categorized ([`Judge::git`]): a
//! word that is no git command, the commands that run others, what it writes in the work
//! tree (checkout, restore, apply, am, ...) and git's configuration, the pathspecs that
//! name denied paths, and its reads of the object store ([`store`]). The `GIT_*` variables
//! a command may set are [`SAFE_GIT_VARS`], the others refused ([`variable_refusal`]).

use std::path::{Path, PathBuf};

use crate::policy::decide::{argv, Judge};
use crate::policy::paths::{self, Access, PathVerdict};
use crate::scope::semantics;
use crate::shell::WordInfo;
use crate::Reason;

mod store;

/// The `GIT_*` variables allowed: they label commits (`GIT_AUTHOR_*`, `GIT_COMMITTER_*`), or
/// take a word that names no file or program and only turns something off or says how
/// much to print (`GIT_TERMINAL_PROMPT=0`, `GIT_OPTIONAL_LOCKS=0`, `GIT_MERGE_VERBOSITY`,
/// `GIT_FLUSH`). `GIT_TRACE*` is not among them: its value may be a file git writes.
pub(super) const SAFE_GIT_VARS: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_TERMINAL_PROMPT",
    "GIT_OPTIONAL_LOCKS",
    "GIT_MERGE_VERBOSITY",
    "GIT_FLUSH",
];

/// Why setting the `GIT_*` variable `name` (one not in [`SAFE_GIT_VARS`]) is refused.
pub(super) fn variable_refusal(name: &str) -> String {
    format!("setting {name} can make git use another repository or configuration, or run other programs (git runs the programs a configuration names); it is not allowed. Only {} may be set. Run the command without it.", SAFE_GIT_VARS.join(", "))
}

/// The commands git itself has (`git help -a`, git 2.47), and `lfs`: any other word where git
/// expects its command runs an alias from git's configuration (the repository's own
/// included) or a `git-WORD` program, either of which can run anything.
const GIT_COMMANDS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "daemon",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "imap-send",
    "index-pack",
    "init",
    "instaweb",
    "interpret-trailers",
    "lfs",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "scalar",
    "send-email",
    "send-pack",
    "shell",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Git subcommands whose words run a command of the model's (`git submodule foreach CMD`,
/// `git bisect run CMD`), or print the user's credentials from the helpers git's
/// configuration names (`git credential fill`): (the subcommand, its action or `None` for
/// any).
const GIT_RUNS: &[(&str, Option<&str>, &str)] = &[
    ("submodule", Some("foreach"), "runs its command in every submodule"),
    ("bisect", Some("run"), "runs its command at every step"),
    ("credential", None, "asks the credential helpers of the user's configuration for passwords and tokens, or stores them"),
    ("credential-store", None, "reads or writes the user's stored passwords and tokens"),
    ("credential-cache", None, "reads or writes the user's cached passwords and tokens"),
];

/// Why git's options that choose another repository or configuration are refused (their
/// refusal is `flag_not_allowed`, from the semantics table), and what to do instead: git
/// runs the programs a configuration names, and the engine protects and judges only the
/// repository git finds in the working directory ([`crate::policy::git::config`]).
pub(super) fn option_refusal(opt: &str) -> Option<(&'static str, &'static str)> {
    Some(match opt {
        "--git-dir" | "--work-tree" | "--bare" | "--separate-git-dir" => (
            "makes git use a repository other than the one it finds in the working directory, whose configuration a tool may have written: git runs the programs a configuration names (hooks, core.fsmonitor, pagers, diff drivers)",
            "Run git in the repository's own directory (`git -C DIR` is fine), without it",
        ),
        "-c" | "--config-env" | "--config" => (
            "sets git's configuration for this command (or a new repository's), and git runs the programs a configuration names (core.fsmonitor, core.pager, aliases, diff drivers, hooks)",
            "Run the command without it; git's configuration is the user's to set",
        ),
        "--template" => (
            "copies hooks and configuration from a directory of your choosing into the repository, where git runs them",
            "Run the command without it",
        ),
        "--exec-path" => ("makes git run its commands (`git-log`, ...) from a directory of your choosing", "Run the command without it"),
        "--reference" | "--reference-if-able" => (
            "points the new repository at another repository's object store (objects/info/alternates), which the scope does not judge",
            "Clone without it",
        ),
        _ => return None,
    })
}

/// The top of the git work tree holding `dir` (the nearest directory upward with a `.git`),
/// or `dir` itself outside one.
pub(super) fn git_top(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| paths::exists(&d.join(".git")))
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf)
}

impl<'a> Judge<'a> {
    /// Every check of a categorized `git` command (`sub_words`: its command's words, `entry`:
    /// the scope entry that matched), in this order: a word that is no git command, the
    /// commands that run others, the pathspecs naming denied paths, what it writes in the
    /// work tree and git's configuration, and its reads of the object store.
    pub(super) fn git(
        &mut self,
        args: &[WordInfo],
        sub_words: &[&str],
        entry: &str,
        cwds: &[PathBuf],
        label: &str,
    ) {
        self.git_command_known(sub_words, entry, label);
        self.git_runs(sub_words, label);
        self.git_denied_paths(args, cwds);
        self.git_worktree_writes(args, cwds, label);
        self.git_config_writes(args, cwds, label);
        self.git_store(args, cwds, label);
    }

    /// A `git WORD` that is no git command is an alias or an external program: refused
    /// unless the scope lists `git WORD` itself (a bare `git` entry does not cover it).
    pub(super) fn git_command_known(&mut self, sub_words: &[&str], entry: &str, label: &str) {
        let Some(sub) = sub_words.first() else { return };
        if sub.starts_with('-') || GIT_COMMANDS.contains(sub) {
            return;
        }
        let listed = entry.split_once(": ").map_or(entry, |(_, e)| e);
        if listed.split_whitespace().nth(1) == Some(sub) {
            return;
        }
        self.violate(
            Reason::SubcommandNotAllowed,
            format!(
                "`git {sub}` is not a git command: git runs it as an alias from its configuration (the repository's own included) or as a `git-{sub}` program, either of which can run anything. Use the git command it stands for, or call request_scope_expansion with tool_name \"{}\", resource \"git {sub}\" and your reason.",
                self.ctx.tool
            ),
            Some(label.to_string()),
            format!("git {sub}"),
            "command",
            None,
        );
    }

    /// Commands that write git's configuration, which names programs git runs: `git config`
    /// when it sets, adds, unsets, renames or edits (a read, `--get`, `--list`, `get`,
    /// `list`, or a name alone, is allowed), `git maintenance register|unregister|start|stop`
    /// (the user's configuration, and a schedule), `git lfs install|uninstall|update`
    /// (configuration and hooks). Refused with `scope_document`, as a write to it by a path
    /// would be ([`crate::policy::git::config`]); `git config --file F` is judged as a write to
    /// F. Commands that set keys of git's own choosing, which name no program (`git remote
    /// add`, `git branch -u`, `git submodule init`, `git init`, `git clone`), are not refused.
    pub(super) fn git_config_writes(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let words = self.subcommand_words("git", args);
        let Some(sub) = words.first().copied() else {
            return;
        };
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else {
            return;
        };
        let rest = &args[at + 1..];
        let target = match sub {
            "config" => match config_write(rest) {
                ConfigWrite::None => return,
                ConfigWrite::File(f) => {
                    self.path_effect(&f, Access::Write, cwds, "file of git config --file", true);
                    return;
                }
                ConfigWrite::Scope(scope) => scope,
            },
            "maintenance"
                if matches!(
                    words.get(1),
                    Some(&("register" | "unregister" | "start" | "stop"))
                ) =>
            {
                "global"
            }
            "lfs" if matches!(words.get(1), Some(&("install" | "uninstall" | "update"))) => {
                let local = rest
                    .iter()
                    .any(|w| matches!(w.exact(), Some("--local" | "--worktree")));
                if local || words.get(1) == Some(&"update") {
                    "local"
                } else {
                    "global"
                }
            }
            _ => return,
        };
        let files: Vec<PathBuf> = match target {
            "global" => vec![self
                .ctx
                .home
                .map_or_else(|| PathBuf::from("~/.gitconfig"), |h| h.join(".gitconfig"))],
            "system" => vec![PathBuf::from("/etc/gitconfig")],
            scope => cwds
                .iter()
                .map(|d| {
                    let top = git_top(&paths::resolve(d).target);
                    let own = crate::policy::git::config::repository_files(&top);
                    let k = usize::from(scope == "worktree");
                    own.get(k)
                        .cloned()
                        .unwrap_or_else(|| top.join(".git/config"))
                })
                .collect(),
        };
        let how = if sub == "config" {
            "git config writes it; to commit under a name, set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL on the command instead".to_string()
        } else {
            format!("`git {sub}` writes it")
        };
        for f in files {
            self.write_reaches_scope_document(&format!("`{label}`"), &f, &how, label);
        }
    }

    /// `git submodule foreach`, `git bisect run`, `git credential` ([`GIT_RUNS`]): refused
    /// with `subcommand_denied`, which no grant lifts.
    pub(super) fn git_runs(&mut self, sub_words: &[&str], label: &str) {
        let Some(sub) = sub_words.first() else { return };
        let action = sub_words.get(1).copied();
        let Some((_, a, why)) = GIT_RUNS
            .iter()
            .find(|(s, a, _)| s == sub && a.is_none_or(|a| Some(a) == action))
        else {
            return;
        };
        let what = a.map_or_else(|| format!("git {sub}"), |a| format!("git {sub} {a}"));
        self.violate(
            Reason::SubcommandDenied,
            format!("`{what}` {why}, which the engine does not judge; it is not allowed. Run what you need directly (each command is judged), or ask the user."),
            Some(label.to_string()),
            what,
            "command",
            None,
        );
    }

    /// Git subcommands that write the work tree (`git checkout -- scope.yml`, `git restore
    /// .`): a pathspec naming a scope document, or a directory holding a protected one, is a
    /// write to it. (Without a pathspec they write what the commits hold: a document changed
    /// so is no longer the approved one, and does not apply.)
    pub(super) fn git_worktree_writes(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        const WRITERS: &[&str] = &[
            "checkout",
            "restore",
            "reset",
            "stash",
            "clean",
            "rm",
            "mv",
            "merge",
            "pull",
            "rebase",
            "cherry-pick",
            "revert",
            "switch",
            "read-tree",
            "checkout-index",
            "worktree",
        ];
        let words = self.subcommand_words("git", args);
        let Some(sub) = words.first().copied() else {
            return;
        };
        if matches!(sub, "apply" | "am") {
            self.git_patch_writes(sub, args, cwds, label);
            return;
        }
        if !WRITERS.contains(&sub) {
            return;
        }
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else {
            return;
        };
        for w in &args[at + 1..] {
            let Some(v) = w.exact() else { continue };
            if v.starts_with('-') || v.is_empty() {
                continue;
            }
            let v = v.trim_start_matches(":/");
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                let hit = self
                    .ctx
                    .matcher
                    .scope_document(&r)
                    .or_else(|| self.ctx.matcher.protected_below_but_repositories(&r.target));
                if let Some(doc) = hit {
                    self.violate(
                        Reason::ScopeDocument,
                        self.ctx.matcher.scope_document_message(
                            &format!("`git {sub}` of `{v}`"),
                            &r.target,
                            &doc.to_string_lossy(),
                        ),
                        Some(label.to_string()),
                        r.target.to_string_lossy().into_owned(),
                        "path",
                        Some(Access::Write),
                    );
                }
            }
        }
    }

    /// `git apply` and `git am` write the files a patch names, which the command line does not
    /// show: refused where a scope document lies in what they may write (`git apply`: the
    /// working directory and below, as git ignores paths outside it from a subdirectory;
    /// `git am`: the whole work tree). `git apply` that writes no file (`--cached`, or
    /// `--check`, `--stat`, `--numstat`, `--summary` without `--apply`), its options read with
    /// the grammar (`--ind` is `--index`), is not a write of the work tree.
    pub(super) fn git_patch_writes(
        &mut self,
        sub: &str,
        args: &[WordInfo],
        cwds: &[PathBuf],
        label: &str,
    ) {
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else {
            return;
        };
        let sem = self
            .semantics("git")
            .and_then(|g| g.subcommand_semantics.get("apply"))
            .unwrap_or_else(|| semantics::empty());
        let given: Vec<String> = argv::options(sem, &args[at + 1..], false)
            .into_iter()
            .map(|o| o.name)
            .collect();
        let has = |names: &[&str]| given.iter().any(|g| names.contains(&g.as_str()));
        let index_only = sub == "apply"
            && !has(&["--index"])
            && (has(&["--cached"])
                || (has(&["--check", "--stat", "--numstat", "--summary"]) && !has(&["--apply"])));
        if index_only {
            return;
        }
        for d in cwds {
            let r = paths::resolve(d);
            let top = if sub == "am" {
                git_top(&r.target)
            } else {
                r.target.clone()
            };
            if let Some(doc) = self.ctx.matcher.protected_below_but_repositories(&top) {
                let how = format!(
                    "`git {sub}` writes the files its patch names, which are not seen, into {}, which holds it: use the apply_patch tool, which judges every file it writes",
                    top.display()
                );
                self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
            }
        }
    }

    /// Git prints files from its object store: `REV:PATH` and pathspecs after `--` must not
    /// name a denied path (`git show HEAD:.env`). Only deny patterns apply here: the history
    /// of an in-scope repository is readable like its files. `REV:PATH` is relative to the
    /// work tree's top unless it starts with `./` or `../`; a pathspec element is relative to
    /// the working directory unless its magic says `top` (`:/`, `:(top)`), and one that
    /// excludes (`:!`, `:^`, `:(exclude)`) names nothing read.
    pub(super) fn git_denied_paths(&mut self, args: &[WordInfo], cwds: &[PathBuf]) {
        let mut after_dd = false;
        for w in args {
            let Some(v) = w.exact() else { continue };
            // (the path, whether it is relative to the top)
            let path: Option<(&str, bool)> = if after_dd {
                pathspec_path(v)
            } else if v == "--" {
                after_dd = true;
                None
            } else if !v.starts_with('-') {
                v.split_once(':')
                    .map(|(_, p)| {
                        p.split_once(':')
                            .filter(|(n, _)| n.len() == 1)
                            .map_or(p, |(_, q)| q)
                    })
                    .map(|p| {
                        let from_cwd = p.starts_with("./") || p.starts_with("../");
                        (p, !from_cwd)
                    })
            } else {
                None
            };
            let Some((path, from_top)) = path.filter(|(p, _)| !p.is_empty()) else {
                continue;
            };
            for d in cwds {
                let base = if from_top {
                    git_top(&paths::resolve(d).target)
                } else {
                    d.clone()
                };
                let r = paths::resolve(&base.join(path.trim_start_matches(":/")));
                if let PathVerdict::Denied(p) = self.ctx.matcher.check(&r, Access::Read) {
                    self.violate(
                        Reason::PathDenied,
                        format!("`{v}` (git path) names {} which matches the deny pattern `{p}`; it is never allowed", r.target.display()),
                        None,
                        r.target.to_string_lossy().into_owned(),
                        "path",
                        Some(Access::Read),
                    );
                }
            }
        }
    }
}

/// The path a pathspec element names and whether it is relative to the top; `None` for an
/// element that excludes. Magic other than `top` and `exclude` leaves the text as the path.
fn pathspec_path(e: &str) -> Option<(&str, bool)> {
    if let Some(long) = e.strip_prefix(":(") {
        let (magic, rest) = long.split_once(')')?;
        let magic: Vec<&str> = magic.split(',').map(str::trim).collect();
        if magic.contains(&"exclude") {
            return None;
        }
        return Some((rest, magic.contains(&"top")));
    }
    if let Some(short) = e.strip_prefix(':') {
        let n = short.bytes().take_while(|b| b"/!^".contains(b)).count();
        if short[..n].contains(['!', '^']) {
            return None;
        }
        let rest = &short[n..];
        return Some((
            rest.strip_prefix(':').unwrap_or(rest),
            short[..n].contains('/'),
        ));
    }
    Some((e, false))
}

/// What `git config` (its words after `config`) writes.
#[derive(Debug, PartialEq)]
enum ConfigWrite {
    /// Nothing: a read.
    None,
    /// The file of `--file`/`-f` (its value as a word; built at run time when it is).
    File(WordInfo),
    /// The configuration of a scope: `local`, `worktree`, `global`, `system`.
    Scope(&'static str),
}

/// Reads `git config`'s words: its options (with the values of those that take one), its
/// actions and subcommands (`get`, `set`, ...). Whatever is not certainly a read is a write.
fn config_write(words: &[WordInfo]) -> ConfigWrite {
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    ];
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
    ];
    const VALUES: &[&str] = &[
        "--file",
        "-f",
        "--blob",
        "--type",
        "--default",
        "--comment",
        "--value",
        "--url",
    ];
    const SCOPES: &[(&str, &str)] = &[
        ("--global", "global"),
        ("--system", "system"),
        ("--local", "local"),
        ("--worktree", "worktree"),
    ];
    let (mut read, mut write, mut blob) = (false, false, false);
    let mut scope = "local";
    let mut file: Option<WordInfo> = None;
    let mut operands: Vec<Option<&str>> = Vec::new();
    let mut i = 0;
    while let Some(w) = words.get(i) {
        i += 1;
        let Some(v) = w.exact() else {
            operands.push(None);
            continue;
        };
        if v == "--" {
            operands.extend(words[i..].iter().map(WordInfo::exact));
            break;
        }
        if !v.starts_with('-') || v == "-" {
            operands.push(Some(v));
            continue;
        }
        let (name, attached) = match v.split_once('=') {
            Some((n, val)) if v.starts_with("--") => (n, Some(val)),
            // `-fFILE`: a short option's value attached.
            _ if !v.starts_with("--") && v.len() > 2 && VALUES.contains(&&v[..2]) => {
                (&v[..2], Some(&v[2..]))
            }
            _ => (v, None),
        };
        if let Some((_, s)) = SCOPES.iter().find(|(o, _)| *o == name) {
            scope = s;
        }
        read |= READS.contains(&name);
        write |= WRITES.contains(&name);
        blob |= name == "--blob";
        if !VALUES.contains(&name) {
            continue;
        }
        let value = match attached {
            Some(a) => Some(WordInfo::literal(a)),
            None => {
                i += 1;
                words.get(i - 1).cloned()
            }
        };
        if matches!(name, "--file" | "-f") {
            file = value;
        }
    }
    let write = match operands.first() {
        _ if write => true,
        _ if read => false,
        Some(Some("get" | "list")) => false,
        Some(Some("set" | "unset" | "rename-section" | "remove-section" | "edit")) => true,
        // `git config NAME` reads; `git config NAME VALUE` sets.
        _ => operands.len() >= 2,
    };
    match (write && !blob, file) {
        (false, _) => ConfigWrite::None,
        (true, Some(f)) => ConfigWrite::File(f),
        (true, None) => ConfigWrite::Scope(scope),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `git config`'s words: what is certainly a read is allowed, anything else writes the
    /// configuration of its scope, or the file of `--file`.
    #[test]
    fn git_config_reads_and_writes() {
        let file = |f: &str| ConfigWrite::File(WordInfo::literal(f));
        let rows: Vec<(&str, ConfigWrite)> = vec![
            ("user.name", ConfigWrite::None),
            ("--get core.pager", ConfigWrite::None),
            ("--get-regexp alias", ConfigWrite::None),
            ("--list --show-origin", ConfigWrite::None),
            ("-l", ConfigWrite::None),
            ("get user.name", ConfigWrite::None),
            ("list", ConfigWrite::None),
            ("--global --get user.name", ConfigWrite::None),
            ("--blob HEAD:cfg a.b c", ConfigWrite::None),
            ("", ConfigWrite::None),
            ("core.pager less", ConfigWrite::Scope("local")),
            ("set core.pager less", ConfigWrite::Scope("local")),
            ("unset core.pager", ConfigWrite::Scope("local")),
            ("--unset core.pager", ConfigWrite::Scope("local")),
            ("--add alias.x !y", ConfigWrite::Scope("local")),
            ("--edit", ConfigWrite::Scope("local")),
            ("rename-section a b", ConfigWrite::Scope("local")),
            ("--global core.pager less", ConfigWrite::Scope("global")),
            ("--system --unset-all x", ConfigWrite::Scope("system")),
            (
                "--worktree core.fsmonitor x",
                ConfigWrite::Scope("worktree"),
            ),
            ("--type bool core.bare false", ConfigWrite::Scope("local")),
            ("--get --add x y", ConfigWrite::Scope("local")),
            ("--file x.cfg a.b c", file("x.cfg")),
            ("--file=x.cfg a.b c", file("x.cfg")),
            ("-fx.cfg a.b c", file("x.cfg")),
            ("-f .git/config --unset a.b", file(".git/config")),
            ("--file x.cfg --get a.b", ConfigWrite::None),
            ("-- core.pager less", ConfigWrite::Scope("local")),
        ];
        for (words, want) in rows {
            let w: Vec<WordInfo> = words.split_whitespace().map(WordInfo::literal).collect();
            assert_eq!(config_write(&w), want, "git config {words}");
        }
    }
}
