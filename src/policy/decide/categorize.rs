//! Step 4 (SPEC §3): a command's category from the scope's lists (deny, read_only, safe_write,
//! dangerous), entries of several words matched after the global options, and the per-command
//! rules of `commands:`.

use std::path::{Path, PathBuf};

use crate::policy::paths::{self, Access};
use crate::scope::semantics::{self, CommandSemantics, OperandKind};
use crate::scope::Platform;
use crate::shell::WordInfo;
use crate::Reason;

use super::name::SHELLS;
use super::{argv, basename, Category, CommandEvidence, Judge};

/// Whether a category entry (`git`, `git log`, `./gradlew`) matches a command whose name
/// (or basename, for deny and dangerous lists) is `key`. Entries with a `/` match the
/// exact name.
pub(super) fn entry_matches(entry: &str, key: &str, sub_words: &[&str]) -> bool {
    let mut parts = entry.split_whitespace();
    let Some(first) = parts.next() else {
        return false;
    };
    if first != key {
        return false;
    }
    parts
        .enumerate()
        .all(|(k, p)| sub_words.get(k).is_some_and(|w| *w == p))
}

impl<'a> Judge<'a> {
    pub(super) fn not_allowed(
        &mut self,
        name: &str,
        sub_words: &[&str],
        label: &str,
        ev: &mut CommandEvidence,
    ) {
        let base = basename(name);
        if let Some(e) = self
            .ctx
            .scope
            .bash_tools
            .categories
            .dangerous
            .iter()
            .find(|e| entry_matches(e, base, sub_words))
            .cloned()
        {
            ev.category = Some("dangerous".into());
            self.dangerous(&e, label);
            return;
        }
        // A command with subcommands, or one the scope lists by subcommand (`bd list`), is
        // named with its first subcommand: allowing `bd label` is not allowing `bd delete`.
        let c = &self.ctx.scope.bash_tools.categories;
        let listed_by_subcommand = c
            .read_only
            .iter()
            .chain(&c.safe_write)
            .chain(&c.dangerous)
            .any(|e| {
                let mut w = e.split_whitespace();
                w.next() == Some(name) && w.next().is_some()
            });
        let resource = match sub_words.first() {
            Some(s)
                if listed_by_subcommand || self.semantics(base).is_some_and(|s| s.subcommands) =>
            {
                format!("{name} {s}")
            }
            _ => name.to_string(),
        };
        self.violate(
            Reason::CommandNotAllowed,
            format!(
                "`{resource}` is not in any category of the scope (read_only, safe_write, dangerous). Use an allowed command (list_allowed_commands shows them), or call request_scope_expansion with tool_name \"{}\", resource \"{resource}\" and your reason.",
                self.ctx.tool
            ),
            Some(label.to_string()),
            resource,
            "command",
            None,
        );
    }

    pub(super) fn dangerous(&mut self, entry: &str, label: &str) {
        self.violate(
            Reason::DangerousCommand,
            format!(
                "`{entry}` is a dangerous command: it runs only when the user allows it. Call request_scope_expansion with tool_name \"{}\", resource \"{label}\" and your reason, then retry.",
                self.ctx.tool
            ),
            Some(label.to_string()),
            label.to_string(),
            "command",
            Some(Access::Write),
        );
    }

    /// The category entry matching a command, most specific first; on a tie the more
    /// restrictive category.
    ///
    /// An entry's word that names a file (one with a `/`, or any operand of a program that
    /// runs code from a file: a shell, `source`, an interpreter) matches the command's word
    /// when both name the same file ([`Self::same_file`]), not when they are spelled alike:
    /// `python scripts/x.py` listed does not allow `cd sub && python scripts/x.py`.
    pub(super) fn category_of(
        &self,
        name: &str,
        sub_words: &[&str],
        cwds: &[PathBuf],
    ) -> Option<(Category, String)> {
        let base = basename(name);
        let runs_files = self.runs_code_files(base);
        let word = |e: &str, w: &str| {
            if e.contains('/') || (runs_files && !e.starts_with('-')) {
                self.same_file(e, w, cwds)
            } else {
                e == w
            }
        };
        self.category_by(
            name,
            sub_words,
            |head, cat| {
                head == if cat == Category::Dangerous {
                    base
                } else {
                    name
                }
            },
            word,
        )
    }

    /// Whether `base` runs code from a file its operand names: a shell, `source` and `.`,
    /// an interpreter (a program whose semantics list options whose value is code).
    pub(super) fn runs_code_files(&self, base: &str) -> bool {
        SHELLS.contains(&base)
            || matches!(base, "source" | ".")
            || self
                .semantics(base)
                .is_some_and(|s| !s.code_options.is_empty())
    }

    /// Whether a scope entry's path `entry` and the command's word `word` name one file: the
    /// word resolved from every directory in `cwds`, the entry from the project root (`~/`
    /// from home, an absolute one as it is), each through symlinks. An entry that cannot be
    /// placed (a relative one without a project root), and a word leading to different files
    /// from different directories, match nothing.
    pub(super) fn same_file(&self, entry: &str, word: &str, cwds: &[PathBuf]) -> bool {
        let mut targets = cwds.iter().map(|d| paths::resolve(&d.join(word)).target);
        let Some(first) = targets.next() else {
            return false;
        };
        if !targets.all(|t| t == first) {
            return false;
        }
        let p = Path::new(entry);
        let at = if p.is_absolute() {
            p.to_path_buf()
        } else if let (Some(rest), Some(home)) = (entry.strip_prefix("~/"), self.ctx.home) {
            home.join(rest)
        } else if let Some(root) = self.ctx.project_root {
            root.join(p)
        } else {
            return false;
        };
        paths::resolve(&at).target == first
    }

    /// The category of a command run by its path (`./bin/x.sh`, `/opt/tool/bin/run`): an
    /// entry naming a path matches when both name the same file, the command's path resolved
    /// from every directory it may run in and the entry's from the project root (`~/` from
    /// home, an absolute one as it is), each through symlinks. So `cd config && ./bin/x.sh`
    /// does not run the `./bin/x.sh` the scope lists. An entry that cannot be placed (a
    /// relative one without a project root) and a name leading to different files from
    /// different directories match nothing; entries without `/` never match a path, except
    /// dangerous ones, by the basename (which only ever refuses).
    pub(super) fn category_of_path(
        &self,
        name: &str,
        sub_words: &[&str],
        cwds: &[PathBuf],
    ) -> Option<(Category, String)> {
        let base = basename(name);
        self.category_by(
            name,
            sub_words,
            |head, cat| {
                if head.contains('/') {
                    self.same_file(head, name, cwds)
                } else {
                    cat == Category::Dangerous && head == base
                }
            },
            |e, w| e == w,
        )
    }

    /// The entry whose first word `head_matches` (for its category) and whose other words
    /// are the command's first subcommand words: the longest, and on a tie the more
    /// restrictive category. A program `run_command`'s table allowed is read_only.
    fn category_by(
        &self,
        name: &str,
        sub_words: &[&str],
        head_matches: impl Fn(&str, Category) -> bool,
        word_matches: impl Fn(&str, &str) -> bool,
    ) -> Option<(Category, String)> {
        if self.argv_allowed.as_deref() == Some(name) {
            return Some((Category::ReadOnly, format!("tool_commands: {name}")));
        }
        let c = &self.ctx.scope.bash_tools.categories;
        let mut best: Option<(usize, Category, String)> = None;
        for (cat, list) in [
            (Category::ReadOnly, &c.read_only),
            (Category::SafeWrite, &c.safe_write),
            (Category::Dangerous, &c.dangerous),
        ] {
            for e in list {
                let mut words = e.split_whitespace();
                let Some(head) = words.next() else { continue };
                let len = 1 + words.clone().count();
                if head_matches(head, cat)
                    && words
                        .enumerate()
                        .all(|(k, p)| sub_words.get(k).is_some_and(|w| word_matches(p, w)))
                    && best
                        .as_ref()
                        .is_none_or(|(l, bc, _)| len > *l || (len == *l && cat > *bc))
                {
                    best = Some((len, cat, format!("{}: {e}", cat.as_str())));
                }
            }
        }
        best.map(|(_, c, e)| (c, e))
    }

    /// The files of code an interpreter runs, read paths the scope must allow whatever
    /// `path_arguments` says: its script, the first operand of one whose operands are not
    /// files it reads (`python scripts/x.py`, `node app.js`; none after an option that gives
    /// it code, `python -c`, `perl -e`), and the values of its options naming files of code
    /// (`emacs -l`, checked by the effects when `path_arguments` enforces).
    fn interpreter_script(
        &mut self,
        base: &str,
        sem: &CommandSemantics,
        args: &[WordInfo],
        cwds: &[PathBuf],
    ) {
        let enforced =
            self.ctx.scope.bash_tools.path_arguments == crate::scope::PathArgumentsMode::Enforce;
        let mut script = sem.operands == OperandKind::Unknown;
        let mut first = None;
        for item in argv::parse(sem, args, true) {
            match item {
                argv::Item::Opt(o) => {
                    if sem.code_options.contains(&o.name) {
                        script = false;
                    }
                    if let (Some(v), true, false) =
                        (&o.value, sem.code_file_options.contains(&o.name), enforced)
                    {
                        self.path_effect(
                            v,
                            Access::Read,
                            cwds,
                            &format!("file of code of {base} {}", o.name),
                            true,
                        );
                    }
                }
                argv::Item::Operand { word, .. } => first = Some(word),
                argv::Item::End { index } => first = args.get(index + 1),
                argv::Item::RunTime { .. } => return,
            }
        }
        if let Some(f) = first.filter(|w| script && w.exact() != Some("-")) {
            self.path_effect(f, Access::Read, cwds, &format!("script {base} runs"), true);
        }
    }

    /// The words after a command's global options (for `git -C x log` → `log ...`).
    pub(super) fn subcommand_words<'w>(&self, base: &str, args: &'w [WordInfo]) -> Vec<&'w str> {
        let sem = self.semantics(base);
        let mut out = Vec::new();
        let mut i = 0;
        let skip_globals = sem.is_some_and(|s| s.subcommands);
        while i < args.len() {
            let w = args[i].shown();
            if skip_globals && out.is_empty() && w.starts_with('-') && w != "-" && w != "--" {
                let takes = sem.is_some_and(|s| {
                    s.global_value_options
                        .iter()
                        .chain(&s.directory_options)
                        .any(|o| o == w)
                });
                i += if takes { 2 } else { 1 };
                continue;
            }
            out.push(w);
            i += 1;
            if out.len() >= 3 {
                break;
            }
        }
        out
    }

    pub(super) fn semantics(&self, base: &str) -> Option<&'a CommandSemantics> {
        self.ctx
            .scope
            .semantics
            .get(base)
            .or_else(|| semantics::builtin().get(base))
    }

    /// Per-command rules of `bash_tools.commands` (seeds/001 schema).
    pub(super) fn rules(&mut self, name: &str, args: &[WordInfo], label: &str) {
        let Some(rule) = self.ctx.scope.bash_tools.commands.get(basename(name)) else {
            return;
        };
        let argv: Vec<String> = args.iter().map(WordInfo::display).collect();
        if let Err(v) =
            crate::policy::rules::check_rule(rule, basename(name), &argv, Platform::Posix)
        {
            self.violate(
                v.reason,
                v.message,
                Some(label.to_string()),
                name.to_string(),
                "command",
                None,
            );
        }
    }

    /// A categorized command: its directory must be in the category's scope; then its
    /// effects.
    pub(super) fn categorized(
        &mut self,
        cat: Category,
        name: &str,
        args: &[WordInfo],
        cwds: &[PathBuf],
        label: &str,
    ) {
        self.max_category = Some(self.max_category.map_or(cat, |m| m.max(cat)));
        self.directory_scope(cat, cwds, label);
        let base = basename(name);
        let sem: &'a CommandSemantics = self.semantics(base).unwrap_or_else(|| semantics::empty());
        if sem.handler.is_none() && !sem.code_options.is_empty() {
            self.interpreter_script(base, sem, args, cwds);
        }
        match sem.handler.as_deref() {
            Some("sed") => self.sed(args, cwds, label),
            Some("awk") => self.awk(args, cwds, label),
            Some("tar") => self.tar(sem, args, cwds, cat, label),
            _ => self.effects(base, sem, args, cwds, cat, label),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_matching_table() {
        let w = |v: &'static [&'static str]| v.to_vec();
        assert!(entry_matches("git", "git", &w(&["log"])));
        assert!(entry_matches("git log", "git", &w(&["log", "-1"])));
        assert!(!entry_matches("git log", "git", &w(&["push"])));
        assert!(!entry_matches("git log", "git", &w(&[])));
        assert!(!entry_matches("ls", "./ls", &w(&[])));
        assert!(entry_matches("./gradlew", "./gradlew", &w(&[])));
        assert!(!entry_matches("", "ls", &w(&[])));
    }
}
