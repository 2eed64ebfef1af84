//! Step 5 for git: what a git command writes in the work tree (checkout, restore, apply,
//! am, ...) and the pathspecs that name denied paths.

use super::*;
use super::argv;

/// The commands git itself has (`git help -a`, git 2.47), and `lfs`: any other word where git
/// expects its command runs an alias from git's configuration (the repository's own
/// included) or a `git-WORD` program, either of which can run anything.
const GIT_COMMANDS: &[&str] = &[
    "add", "am", "annotate", "apply", "archimport", "archive", "bisect", "blame", "branch",
    "bugreport", "bundle", "cat-file", "check-attr", "check-ignore", "check-mailmap",
    "check-ref-format", "checkout", "checkout-index", "cherry", "cherry-pick", "citool", "clean",
    "clone", "column", "commit", "commit-graph", "commit-tree", "config", "count-objects",
    "credential", "credential-cache", "credential-store", "cvsexportcommit", "cvsimport",
    "cvsserver", "daemon", "describe", "diagnose", "diff", "diff-files", "diff-index", "diff-tree",
    "difftool", "fast-export", "fast-import", "fetch", "fetch-pack", "filter-branch",
    "fmt-merge-msg", "for-each-ref", "for-each-repo", "format-patch", "fsck", "gc",
    "get-tar-commit-id", "grep", "gui", "hash-object", "help", "hook", "http-backend", "imap-send",
    "index-pack", "init", "instaweb", "interpret-trailers", "lfs", "log", "ls-files", "ls-remote",
    "ls-tree", "mailinfo", "mailsplit", "maintenance", "merge", "merge-base", "merge-file",
    "merge-index", "merge-one-file", "merge-tree", "mergetool", "mktag", "mktree",
    "multi-pack-index", "mv", "name-rev", "notes", "p4", "pack-objects", "pack-redundant",
    "pack-refs", "patch-id", "prune", "prune-packed", "pull", "push", "quiltimport", "range-diff",
    "read-tree", "rebase", "receive-pack", "reflog", "refs", "remote", "repack", "replace",
    "replay", "request-pull", "rerere", "reset", "restore", "rev-list", "rev-parse", "revert",
    "rm", "scalar", "send-email", "send-pack", "shell", "shortlog", "show", "show-branch",
    "show-index", "show-ref", "sparse-checkout", "stash", "status", "stripspace", "submodule",
    "svn", "switch", "symbolic-ref", "tag", "unpack-file", "unpack-objects", "update-index",
    "update-ref", "update-server-info", "upload-archive", "upload-pack", "var", "verify-commit",
    "verify-pack", "verify-tag", "version", "whatchanged", "worktree", "write-tree",
];

/// The top of the git work tree holding `dir` (the nearest directory upward with a `.git`),
/// or `dir` itself outside one.
pub(super) fn git_top(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|d| paths::exists(&d.join(".git")))
        .map_or_else(|| dir.to_path_buf(), Path::to_path_buf)
}

impl<'a> Judge<'a> {
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
            "subcommand_not_allowed",
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

    /// Git subcommands that write the work tree (`git checkout -- scope.yml`, `git restore
    /// .`): a pathspec naming a scope document, or a directory holding a protected one, is a
    /// write to it. (Without a pathspec they write what the commits hold: a document changed
    /// so is no longer the approved one, and does not apply.)
    pub(super) fn git_worktree_writes(&mut self, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        const WRITERS: &[&str] = &[
            "checkout", "restore", "reset", "stash", "clean", "rm", "mv", "merge", "pull", "rebase", "cherry-pick", "revert",
            "switch", "read-tree", "checkout-index", "worktree",
        ];
        let words = self.subcommand_words("git", args);
        let Some(sub) = words.first().copied() else { return };
        if matches!(sub, "apply" | "am") {
            self.git_patch_writes(sub, args, cwds, label);
            return;
        }
        if !WRITERS.contains(&sub) {
            return;
        }
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else { return };
        for w in &args[at + 1..] {
            let Some(v) = w.exact() else { continue };
            if v.starts_with('-') || v.is_empty() {
                continue;
            }
            let v = v.trim_start_matches(":/");
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                let hit = self.ctx.matcher.scope_document(&r).or_else(|| self.ctx.matcher.protected_below(&r.target).cloned());
                if let Some(doc) = hit {
                    self.violate(
                        "scope_document",
                        paths::scope_document_message(&format!("`git {sub}` of `{v}`"), &r.target, &doc.to_string_lossy()),
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
    pub(super) fn git_patch_writes(&mut self, sub: &str, args: &[WordInfo], cwds: &[PathBuf], label: &str) {
        let Some(at) = args.iter().position(|w| w.exact() == Some(sub)) else { return };
        let sem = self.semantics("git").and_then(|g| g.subcommand_semantics.get("apply")).unwrap_or_else(|| semantics::empty());
        let given: Vec<String> = argv::options(sem, &args[at + 1..], false).into_iter().map(|o| o.name).collect();
        let has = |names: &[&str]| given.iter().any(|g| names.contains(&g.as_str()));
        let index_only = sub == "apply"
            && !has(&["--index"])
            && (has(&["--cached"]) || (has(&["--check", "--stat", "--numstat", "--summary"]) && !has(&["--apply"])));
        if index_only {
            return;
        }
        for d in cwds {
            let r = paths::resolve(d);
            let top = if sub == "am" { git_top(&r.target) } else { r.target.clone() };
            if let Some(doc) = self.ctx.matcher.protected_below(&top).cloned() {
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
                v.split_once(':').map(|(_, p)| p.split_once(':').filter(|(n, _)| n.len() == 1).map_or(p, |(_, q)| q)).map(|p| {
                    let from_cwd = p.starts_with("./") || p.starts_with("../");
                    (p, !from_cwd)
                })
            } else {
                None
            };
            let Some((path, from_top)) = path.filter(|(p, _)| !p.is_empty()) else { continue };
            for d in cwds {
                let base = if from_top { git_top(&paths::resolve(d).target) } else { d.clone() };
                let r = paths::resolve(&base.join(path.trim_start_matches(":/")));
                if let PathVerdict::Denied(p) = self.ctx.matcher.check(&r, Access::Read) {
                    self.violate(
                        "path_denied",
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
        return Some((rest.strip_prefix(':').unwrap_or(rest), short[..n].contains('/')));
    }
    Some((e, false))
}
