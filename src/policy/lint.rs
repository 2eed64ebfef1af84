//! The scope linter: where the scope the user wrote defeats itself. Each warning names the
//! scope document and the line of the entry it concerns, says what is wrong and gives the
//! text to write instead. Paths are judged with the engine's own matcher ([`Matcher`]) and
//! interpreters found in the command semantics ([`crate::scope::semantics`]); nothing is run
//! but the bounded, hardened look at the project's git store ([`gitstore`]) for denied paths
//! in its history.

use std::path::{Path, PathBuf};

use crate::policy::decide;
use crate::policy::git::config as gitconfig;
use crate::policy::git::store::{self as gitstore, Answer, Look};
use crate::policy::paths::{self, Access, Matcher, PathVerdict, Resolved};
use crate::scope::config::{self, Source};
use crate::scope::{Paths, Scope};
use crate::Result;

/// One warning about a scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LintWarning {
    /// What kind of self-defeat: `script_in_write_scope`, `interpreter_listed`,
    /// `secrets_not_denied`, `deny_never_matches`, `write_wider_than_read`, `duplicate_entry`,
    /// `denied_in_history` (a deny pattern matches a path git's history holds: every git
    /// command that reads history is refused).
    pub code: &'static str,
    /// The scope document (a file, or the name of an inline scope) the entry comes from.
    pub file: String,
    /// The 1-based line of the entry in that file.
    pub line: usize,
    /// What is wrong, a full sentence.
    pub message: String,
    /// What to write instead.
    pub suggestion: String,
}

/// The text of one scope source, as the linter locates entries in it.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file name, or the inline scope's name.
    pub name: String,
    /// The YAML text (a preset's front matter alone).
    pub text: String,
    /// The lines of the file before `text` (the `---` of a preset's front matter).
    pub line_offset: usize,
}

/// The name the built-in defaults go by.
const DEFAULTS_NAME: &str = "data/defaults.yml (built in)";

/// Shells the engine does not model but a user may list: like the shells the engine knows
/// ([`decide::SHELLS`]), a listed one runs script files and standard input whose content is
/// not judged.
const OTHER_SHELLS: &[&str] = &["fish", "csh", "tcsh"];

/// The secrets a read scope covering the home directory must deny: the pattern to write and
/// a path (under the home directory) it protects.
const SECRETS: &[(&str, &str)] = &[
    ("~/.ssh/**", ".ssh/id_ed25519"),
    ("~/.gnupg/**", ".gnupg/private-keys-v1.d/key.key"),
    ("**/.env", "src/app/.env"),
    ("~/.aws/**", ".aws/credentials"),
    ("~/.config/gcloud/**", ".config/gcloud/credentials.db"),
    ("~/.azure/**", ".azure/msal_token_cache.json"),
    ("~/.kube/**", ".kube/config"),
    ("~/.docker/config.json", ".docker/config.json"),
    ("~/.netrc", ".netrc"),
    ("~/.git-credentials", ".git-credentials"),
    ("~/.authinfo*", ".authinfo.gpg"),
    ("~/.password-store/**", ".password-store/site.gpg"),
];

/// The texts of `sources`, the built-in defaults first.
pub fn documents(sources: &[Source]) -> Result<Vec<Document>> {
    let mut docs = vec![Document {
        name: DEFAULTS_NAME.into(),
        text: config::DEFAULTS_YAML.into(),
        line_offset: 0,
    }];
    for s in sources {
        match s {
            Source::File(p) | Source::Profile(p) => {
                let (bytes, _) = crate::bounded::read(p, config::MAX_SCOPE_DOCUMENT)?;
                let text = config::without_bom(&String::from_utf8_lossy(&bytes)).to_string();
                let name = p.display().to_string();
                if p.extension().is_some_and(|e| e == "md") {
                    if let Some((yaml, offset)) = config::front_matter(&text) {
                        docs.push(Document {
                            name,
                            text: yaml.to_string(),
                            line_offset: offset,
                        });
                        continue;
                    }
                }
                docs.push(Document {
                    name,
                    text,
                    line_offset: 0,
                });
            }
            Source::Inline { name, text } => docs.push(Document {
                name: name.clone(),
                text: text.clone(),
                line_offset: 0,
            }),
        }
    }
    Ok(docs)
}

/// Loads `sources` (merged as the engine merges them; approval is not asked, as nothing is
/// applied) and lints the result.
pub fn lint_sources(
    sources: &[Source],
    home: Option<&Path>,
    project_root: Option<&Path>,
) -> Result<Vec<LintWarning>> {
    let loaded = config::load(sources)?;
    let docs = documents(sources)?;
    let root = project_root
        .map(Path::to_path_buf)
        .or_else(|| loaded.project_root.clone());
    Ok(lint(&loaded.scope, &docs, home, root.as_deref()))
}

/// The warnings on `scope`, merged from `docs` (in the order they were merged), in the
/// order of the documents and lines they point at.
pub fn lint(
    scope: &Scope,
    docs: &[Document],
    home: Option<&Path>,
    project_root: Option<&Path>,
) -> Vec<LintWarning> {
    let l = Linter {
        scope,
        docs,
        home,
        root: project_root,
        matcher: matcher(&scope.paths, home, project_root),
    };
    let mut out = Vec::new();
    l.commands(&mut out);
    l.duplicates(&mut out);
    l.deny_patterns(&mut out);
    l.denied_in_history(&mut out);
    l.secrets(&mut out);
    l.write_wider(&mut out);
    let rank = |w: &LintWarning| docs.iter().rposition(|d| d.name == w.file).unwrap_or(0);
    out.sort_by_key(|w| (rank(w), w.line));
    out
}

/// A matcher of the patterns that compile (a pattern that does not is a warning of its own).
fn matcher(p: &Paths, home: Option<&Path>, root: Option<&Path>) -> Option<Matcher> {
    let ok = |list: &[String]| -> Vec<String> {
        list.iter()
            .filter(|x| compiles(x, home, root))
            .cloned()
            .collect()
    };
    Matcher::new(
        &Paths {
            read: ok(&p.read),
            write: ok(&p.write),
            deny: ok(&p.deny),
        },
        home,
        root,
    )
    .ok()
}

/// The compile error of the path pattern `p`, if any.
fn compile_error(p: &str, home: Option<&Path>, root: Option<&Path>) -> Option<String> {
    Matcher::new(
        &Paths {
            read: vec![p.to_string()],
            write: Vec::new(),
            deny: Vec::new(),
        },
        home,
        root,
    )
    .err()
}

fn compiles(p: &str, home: Option<&Path>, root: Option<&Path>) -> bool {
    compile_error(p, home, root).is_none()
}

/// A path as the matcher sees it, resolved through existing symlinks as the engine does.
fn at(p: &Path) -> Resolved {
    paths::resolve(p)
}

struct Linter<'a> {
    scope: &'a Scope,
    docs: &'a [Document],
    home: Option<&'a Path>,
    root: Option<&'a Path>,
    matcher: Option<Matcher>,
}

/// The categories that let a command run without asking, with their keys.
const RUN_WITHOUT_ASKING: &[&str] = &["read_only", "safe_write"];

impl Linter<'_> {
    fn list(&self, category: &str) -> &[String] {
        let c = &self.scope.bash_tools.categories;
        match category {
            "read_only" => &c.read_only,
            "safe_write" => &c.safe_write,
            "dangerous" => &c.dangerous,
            _ => &self.scope.bash_tools.deny,
        }
    }

    fn warn(
        &self,
        out: &mut Vec<LintWarning>,
        code: &'static str,
        keys: &[&str],
        entry: Option<&str>,
        message: String,
        suggestion: String,
    ) {
        let (file, line) = locate(self.docs, keys, entry);
        out.push(LintWarning {
            code,
            file,
            line,
            message,
            suggestion,
        });
    }

    /// Listed interpreters and shells; listed scripts the model may rewrite.
    fn commands(&self, out: &mut Vec<LintWarning>) {
        for category in RUN_WITHOUT_ASKING {
            for entry in self.list(category) {
                let words: Vec<&str> = entry.split_whitespace().collect();
                let Some(first) = words.first() else { continue };
                let base = first.rsplit('/').next().unwrap_or(first);
                let keys = ["bash_tools", "categories", category];
                if let Some(kind) = self.interpreter(base, &words[1..]) {
                    self.warn(
                        out,
                        "interpreter_listed",
                        &keys,
                        Some(entry),
                        format!("bash_tools.categories.{category} lists `{entry}`, {kind}: the model can run any code with it, which is full code execution whatever else the scope says."),
                        format!("Move \"{entry}\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."),
                    );
                    continue;
                }
                for w in &words {
                    if !(w.contains('/') || is_script_name(w)) {
                        continue;
                    }
                    let Some((path, pattern)) = self.writable(w) else {
                        continue;
                    };
                    self.warn(
                        out,
                        "script_in_write_scope",
                        &keys,
                        Some(entry),
                        format!(
                            "bash_tools.categories.{category} lists `{entry}`, but {} is in the write scope (by \"{pattern}\"): the model can rewrite the script and then run it, which allows any command.",
                            path.display()
                        ),
                        format!("Move \"{entry}\" to bash_tools.categories.dangerous, or move the script outside paths.write and list its new path."),
                    );
                    break;
                }
            }
        }
    }

    /// What the command `base` is when listing it with the further words `rest` allows any
    /// code: a shell alone (a script file it runs is not judged), or an interpreter alone or
    /// with one of its options whose value is code (`node -e`). A longer entry (`python3 -m
    /// pytest`) allows only what it names.
    fn interpreter(&self, base: &str, rest: &[&str]) -> Option<&'static str> {
        if decide::SHELLS.contains(&base) || OTHER_SHELLS.contains(&base) {
            return rest.is_empty().then_some("a shell");
        }
        let sem = self
            .scope
            .semantics
            .get(base)
            .or_else(|| crate::scope::semantics::builtin().get(base))?;
        let mut code = sem.code_options.iter().chain(&sem.code_file_options);
        let any_code = match rest {
            [] => code.next().is_some(),
            [option] => code.any(|c| c == option),
            _ => false,
        };
        any_code.then_some("an interpreter")
    }

    /// Where the command word `w` of an entry leads, and the write pattern covering it, when
    /// a write there is allowed.
    fn writable(&self, w: &str) -> Option<(PathBuf, String)> {
        let m = self.matcher.as_ref()?;
        let p = Path::new(w);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else if let Some(rest) = w.strip_prefix("~/") {
            self.home?.join(rest)
        } else {
            self.root?.join(p)
        };
        let r = at(&full);
        match m.check(&r, Access::Write) {
            PathVerdict::Allowed(pattern) => Some((r.target, pattern)),
            _ => None,
        }
    }

    /// An entry in two of the lists: the one that loses has no effect.
    fn duplicates(&self, out: &mut Vec<LintWarning>) {
        // Most restrictive first: deny refuses before any category; on a tie the engine
        // takes the more restrictive category.
        let order = ["deny", "dangerous", "safe_write", "read_only"];
        let key = |e: &str| e.split_whitespace().collect::<Vec<_>>().join(" ");
        for (i, winner) in order.iter().enumerate() {
            for loser in &order[i + 1..] {
                for entry in self.list(loser) {
                    if !self.list(winner).iter().any(|w| key(w) == key(entry)) {
                        continue;
                    }
                    let (wname, why) = if *winner == "deny" {
                        (
                            "bash_tools.deny".to_string(),
                            "bash_tools.deny refuses it before any category is looked at",
                        )
                    } else {
                        (
                            format!("bash_tools.categories.{winner}"),
                            "the engine takes the more restrictive category",
                        )
                    };
                    self.warn(
                        out,
                        "duplicate_entry",
                        &["bash_tools", "categories", loser],
                        Some(entry),
                        format!("`{entry}` is listed in both {wname} and bash_tools.categories.{loser}; {why}, so the {loser} entry has no effect."),
                        format!("Remove \"{entry}\" from bash_tools.categories.{loser}, or from {wname} if you meant {loser}."),
                    );
                }
            }
        }
    }

    /// Deny patterns that do not compile, or that name a variable the engine does not expand.
    fn deny_patterns(&self, out: &mut Vec<LintWarning>) {
        let keys = ["paths", "deny"];
        for p in &self.scope.paths.deny {
            if let Some(err) = compile_error(p, self.home, self.root) {
                self.warn(
                    out,
                    "deny_never_matches",
                    &keys,
                    Some(p),
                    format!("The deny pattern \"{p}\" is not a valid glob ({err}): the scope does not load, and every tool refuses until it is fixed."),
                    format!("Write the pattern as a valid glob: a `[` or `{{` closed, or escaped with a backslash (for example \"{}\").", escape_glob(p)),
                );
                continue;
            }
            if let Some((var, fixed)) = unexpanded_variable(p) {
                self.warn(
                    out,
                    "deny_never_matches",
                    &keys,
                    Some(p),
                    format!("The deny pattern \"{p}\" names `{var}`, which is not expanded (only a leading `~` and ${{project_root}} are): it matches only a directory literally named `{var}`, so it denies nothing."),
                    format!("Write \"{fixed}\" instead."),
                );
            }
        }
    }

    /// Deny patterns that match a path the project's git repository holds in its history,
    /// index or HEAD tree ([`gitstore::look`], bounded): every git command that prints files
    /// from there without a pathspec leaving it out is refused. One look per pattern found,
    /// each leaving out the patterns already reported; none when the store cannot be read.
    fn denied_in_history(&self, out: &mut Vec<LintWarning>) {
        let (Some(root), Some(m)) = (self.root, self.matcher.as_ref()) else {
            return;
        };
        let Some(top) = gitconfig::work_tree_top(root) else {
            return;
        };
        let deny: Vec<&String> = self
            .scope
            .paths
            .deny
            .iter()
            .filter(|p| compiles(p, self.home, self.root))
            .collect();
        let mut reported: Vec<String> = Vec::new();
        for _ in 0..deny.len() {
            let Ok(seen) = Matcher::new(
                &Paths {
                    read: Vec::new(),
                    write: Vec::new(),
                    deny: reported.clone(),
                },
                self.home,
                self.root,
            ) else {
                return;
            };
            let exempt = |rel: &[u8]| {
                let p =
                    top.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(rel));
                matches!(seen.check(&plain(&p), Access::Read), PathVerdict::Denied(_))
            };
            let Answer::Holds {
                path,
                pattern,
                where_,
            } = gitstore::look(&top, m, Look::ALL, &exempt, &gitstore::Limits::default())
            else {
                return;
            };
            // The entry as written whose expansion is the pattern found.
            let Some(entry) = deny.iter().find(|d| {
                Matcher::new(
                    &Paths {
                        read: Vec::new(),
                        write: Vec::new(),
                        deny: vec![(**d).clone()],
                    },
                    self.home,
                    self.root,
                )
                .is_ok_and(|one| one.deny_patterns().first() == Some(&pattern))
            }) else {
                return;
            };
            let rel =
                shell_words::quote(&path.strip_prefix(&top).unwrap_or(&path).to_string_lossy())
                    .into_owned();
            self.warn(
                out,
                "denied_in_history",
                &["paths", "deny"],
                Some(entry),
                format!(
                    "The deny pattern \"{entry}\" matches {}, which is {} of the git repository {}: git commands that print files from there (`git log -p`, `git show`, `git diff REV`, `git archive`, `git grep REV`, `git cat-file -p`) will be refused unless a pathspec leaves it out; `git status`, `git diff`, `git add FILE` and `git commit` keep working.",
                    path.display(),
                    where_.describe(),
                    top.display()
                ),
                format!(
                    "If it was committed by mistake, rotate the secret it holds, take it out of git (`git rm --cached {rel}` and a commit, if it is still tracked) and purge it from history: `git filter-repo --invert-paths --path {rel}`, then `git reflog expire --expire=now --all && git gc --prune=now`. Until then such commands are refused."
                ),
            );
            reported.push((*entry).clone());
        }
    }

    /// A read scope covering the home directory or `/` without denying where keys and
    /// credentials are kept.
    fn secrets(&self, out: &mut Vec<LintWarning>) {
        let (Some(home), Some(m)) = (self.home, self.matcher.as_ref()) else {
            return;
        };
        let p = &self.scope.paths;
        let covering = p
            .read
            .iter()
            .map(|x| ("read", x))
            .chain(p.write.iter().map(|x| ("write", x)))
            .find(|(_, x)| {
                let one = Paths {
                    read: vec![(*x).clone()],
                    write: Vec::new(),
                    deny: Vec::new(),
                };
                // The directory itself, or the files right in it (`~/*`).
                Matcher::new(&one, Some(home), self.root).is_ok_and(|one| {
                    [home.to_path_buf(), home.join(".profile")].iter().any(|p| {
                        matches!(one.check(&plain(p), Access::Read), PathVerdict::Allowed(_))
                    })
                })
            });
        let Some((list, pattern)) = covering else {
            return;
        };
        let missing: Vec<&str> = SECRETS
            .iter()
            .filter(|(pat, probe)| {
                // `**/.env` protects the project's own `.env` too.
                let project = self
                    .root
                    .filter(|_| pat.starts_with("**/"))
                    .map(|r| r.join(probe.rsplit('/').next().unwrap_or(probe)));
                std::iter::once(home.join(probe))
                    .chain(project)
                    .any(|p| matches!(m.check(&plain(&p), Access::Read), PathVerdict::Allowed(_)))
            })
            .map(|(pat, _)| *pat)
            .collect();
        if missing.is_empty() {
            return;
        }
        let what = if home == Path::new("/") || pattern.starts_with("/**") || pattern == "/" {
            "/"
        } else {
            "your home directory"
        };
        self.warn(
            out,
            "secrets_not_denied",
            &["paths", list],
            Some(pattern),
            format!(
                "paths.{list} \"{pattern}\" covers {what}, but paths.deny does not cover {}: the model can read the keys and credentials kept there.",
                missing.join(", ")
            ),
            format!("Add to paths.deny: {}.", missing.iter().map(|m| format!("\"{m}\"")).collect::<Vec<_>>().join(", ")),
        );
    }

    /// Write patterns that cover a path no read pattern covers: write implies read, so the
    /// model reads more than paths.read says.
    fn write_wider(&self, out: &mut Vec<LintWarning>) {
        let p = &self.scope.paths;
        let Ok(read) = Matcher::new(
            &Paths {
                read: p
                    .read
                    .iter()
                    .filter(|x| compiles(x, self.home, self.root))
                    .cloned()
                    .collect(),
                write: Vec::new(),
                deny: Vec::new(),
            },
            self.home,
            self.root,
        ) else {
            return;
        };
        for w in &p.write {
            let expanded = paths::expand_pattern(w, self.home, self.root);
            let Some(example) = instance(&expanded) else {
                continue;
            };
            let example = if example.starts_with('/') {
                PathBuf::from(example)
            } else if let Some(r) = self.root {
                r.join(example)
            } else {
                continue;
            };
            let one = Paths {
                read: Vec::new(),
                write: vec![w.clone()],
                deny: Vec::new(),
            };
            let Ok(one) = Matcher::new(&one, self.home, self.root) else {
                continue;
            };
            if !one.in_write_scope(&example)
                || !matches!(
                    read.check(&plain(&example), Access::Read),
                    PathVerdict::OutOfScope
                )
            {
                continue;
            }
            self.warn(
                out,
                "write_wider_than_read",
                &["paths", "write"],
                Some(w),
                format!(
                    "The write pattern \"{w}\" covers {}, which no read pattern covers; write implies read, so the model can read more than paths.read says.",
                    example.display()
                ),
                format!("Add \"{w}\" to paths.read too, or narrow this write pattern to a directory paths.read covers."),
            );
        }
    }
}

/// A path as written, not looked up.
fn plain(p: &Path) -> Resolved {
    Resolved {
        literal: p.to_path_buf(),
        target: p.to_path_buf(),
    }
}

/// Whether a command word names a script by its extension.
fn is_script_name(w: &str) -> bool {
    [
        ".sh", ".bash", ".zsh", ".py", ".pl", ".rb", ".js", ".mjs", ".el",
    ]
    .iter()
    .any(|x| w.len() > x.len() && w.ends_with(x))
}

/// `p` with every glob metacharacter escaped.
fn escape_glob(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for c in p.chars() {
        if matches!(c, '[' | ']' | '{' | '}' | '?' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The variable a pattern names that the engine leaves as it is (`$HOME`, `${HOME}`,
/// `~user`), and the pattern written so that it expands, when there is one.
fn unexpanded_variable(p: &str) -> Option<(String, String)> {
    for var in ["${HOME}", "$HOME"] {
        if let Some(rest) = p.strip_prefix(var) {
            return Some((var.to_string(), format!("~{rest}")));
        }
    }
    for var in [
        "${PROJECT_ROOT}",
        "$PROJECT_ROOT",
        "$project_root",
        "${PWD}",
        "$PWD",
    ] {
        if let Some(rest) = p.strip_prefix(var) {
            return Some((var.to_string(), format!("${{project_root}}{rest}")));
        }
    }
    None
}

/// One path the expanded pattern `e` matches, made by taking each glob's simplest choice
/// (`x` for a star or `?`, the first of a class or of braces); None for a class that starts
/// with a negation. The caller checks the pattern matches it.
fn instance(e: &str) -> Option<String> {
    let mut out = String::with_capacity(e.len());
    let mut chars = e.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push('x');
            }
            '?' => out.push('x'),
            '\\' => out.push(chars.next()?),
            '[' => {
                let first = chars.next()?;
                if first == '!' || first == '^' {
                    return None;
                }
                out.push(first);
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                }
            }
            '{' => {
                let mut depth = 1;
                let mut taking = true;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => taking = false,
                        _ if taking => out.push(c),
                        _ => {}
                    }
                }
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// The file and 1-based line of `entry` in the list at `keys` (`["paths", "deny"]`): in the
/// last document that has that key (lists replace, so it is the one that counts), the line
/// holding the entry, or the key's line. Block and flow style, quoted or not.
pub fn locate(docs: &[Document], keys: &[&str], entry: Option<&str>) -> (String, usize) {
    for d in docs.iter().rev() {
        let lines: Vec<&str> = d.text.lines().collect();
        let Some((key_line, indent)) = find_keys(&lines, keys) else {
            continue;
        };
        let mut line = key_line;
        if let Some(entry) = entry {
            for (i, text) in lines.iter().enumerate().skip(key_line) {
                if i > key_line && ends_block(text, indent) {
                    break;
                }
                let text = if i == key_line {
                    text.split_once(':').map_or(*text, |(_, v)| v)
                } else {
                    text
                };
                if holds_entry(text, entry) {
                    line = i;
                    break;
                }
            }
        }
        return (d.name.clone(), line + 1 + d.line_offset);
    }
    match docs.last() {
        Some(d) => (d.name.clone(), 1 + d.line_offset),
        None => (DEFAULTS_NAME.into(), 1),
    }
}

/// The indentation of a line.
fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `line` ends the block of a key indented by `indent`: text (not a comment or a
/// list item at the key's own indentation) at that indentation or less.
fn ends_block(line: &str, indent: usize) -> bool {
    let t = line.trim_start();
    !(t.is_empty()
        || t.starts_with('#')
        || indent_of(line) > indent
        || t.starts_with("- ")
        || t == "-")
}

/// The line index and indentation of the nested keys `keys`, each found inside the
/// block of the one before it (or on its line, in flow style).
fn find_keys(lines: &[&str], keys: &[&str]) -> Option<(usize, usize)> {
    let mut from = 0;
    let mut parent: Option<usize> = None;
    let mut found = None;
    for key in keys {
        let mut hit = None;
        for (i, line) in lines.iter().enumerate().skip(from) {
            if let Some(pi) = parent {
                if i > from && ends_block(line, pi) {
                    break;
                }
                // Flow style on the parent's line: `paths: {deny: [...]}`.
                if i == from && has_key(line.split_once(':').map_or("", |(_, v)| v), key) {
                    hit = Some((i, indent_of(line)));
                    break;
                }
                if i == from {
                    continue;
                }
            } else if indent_of(line) != 0 {
                continue;
            }
            let t = line.trim_start();
            if key_at_start(t, key) {
                hit = Some((i, indent_of(line)));
                break;
            }
        }
        let (i, ind) = hit?;
        from = i;
        parent = Some(ind);
        found = Some((i, ind));
    }
    found
}

/// Whether `t` starts with the key `key` (`key:`, `"key":`, `'key':`).
fn key_at_start(t: &str, key: &str) -> bool {
    [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ]
    .iter()
    .any(|k| t.starts_with(k.as_str()))
}

/// Whether the flow text `t` has the key `key` (after `{` or `,`).
fn has_key(t: &str, key: &str) -> bool {
    t.match_indices(key).any(|(at, _)| {
        let before = t[..at].trim_end().trim_end_matches(['"', '\'']).trim_end();
        let after = t[at + key.len()..].trim_start_matches(['"', '\'']);
        (before.ends_with('{') || before.ends_with(',')) && after.starts_with(':')
    })
}

/// Whether the YAML text `t` holds `entry` as a whole scalar: after `[`, `,`, `-`, `:` or
/// a quote, and before `]`, `,`, `#`, a quote or the end of the line.
fn holds_entry(t: &str, entry: &str) -> bool {
    t.match_indices(entry).any(|(at, _)| {
        let before = t[..at].trim_end();
        let after = t[at + entry.len()..].trim_start();
        (before.is_empty() || before.ends_with(['[', ',', '-', ':', '"', '\'']))
            && (after.is_empty() || after.starts_with([']', ',', '#', '"', '\'']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Vec<Document> {
        vec![Document {
            name: "f".into(),
            text: text.into(),
            line_offset: 0,
        }]
    }

    /// Each entry is found on its own line, in block and flow style, quoted or not; a
    /// longer entry beginning with the same word is not taken for it.
    #[test]
    fn locate_finds_the_entry_line() {
        let text = "paths:\n  read: [a]\n  deny:\n    - \"x/**\"\n    - y\nbash_tools:\n  categories:\n    read_only:\n      - git log\n      - git\n    safe_write: [make, 'cp']\n";
        let d = doc(text);
        for (keys, entry, line) in [
            (&["paths", "deny"][..], "y", 5),
            (&["paths", "deny"][..], "x/**", 4),
            (&["paths", "read"][..], "a", 2),
            (&["bash_tools", "categories", "read_only"][..], "git", 10),
            (&["bash_tools", "categories", "read_only"][..], "git log", 9),
            (&["bash_tools", "categories", "safe_write"][..], "cp", 11),
        ] {
            assert_eq!(
                locate(&d, keys, Some(entry)),
                ("f".to_string(), line),
                "{entry}"
            );
        }
        let flow = doc("paths: {read: [a], deny: [b]}\n");
        assert_eq!(
            locate(&flow, &["paths", "deny"], Some("b")),
            ("f".to_string(), 1)
        );
    }

    #[test]
    fn instance_takes_the_simplest_choice() {
        for (e, want) in [
            ("/p/**", Some("/p/x")),
            ("/p/*.{log,txt}", Some("/p/x.log")),
            ("/p/[ab]c", Some("/p/ac")),
            ("/p/[!a]", None),
        ] {
            assert_eq!(instance(e).as_deref(), want, "{e}");
        }
    }
}
