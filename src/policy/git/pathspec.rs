//! Git pathspecs, as far as they can be judged here: whether a command's pathspec certainly
//! leaves out a stored path, or every path a deny pattern matches.
//!
//! Read as git reads them (gitglossary(7), "pathspec"): relative to the current directory
//! unless `top` (`:/`); `exclude` (`:!`, `:^`) removes what the others select, and with no
//! other element the whole tree is selected; without magic an element matches a path equal
//! to it, a path below it, or (holding `*` or `?`) a path it matches as fnmatch(3) without
//! `FNM_PATHNAME` (`*` crosses `/`); with `glob`, `*` stays in one component and `**/`,
//! `/**/`, `/**` span directories; with `literal`, no wildcard. What is not read here (an
//! `icase` or `attr` magic, a bracket or backslash in a pattern, a path leaving the work
//! tree) makes the whole pathspec unknown, and nothing is left out.

use std::path::Path;

/// A parsed pathspec, its elements relative to the work tree's top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pathspec {
    items: Vec<Item>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    exclude: bool,
    kind: Kind,
    /// Relative to the top, normalized, without a trailing `/`; empty: the whole tree.
    pat: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fnmatch,
    Glob,
    Literal,
}

fn wild(s: &str) -> bool {
    s.bytes().any(|b| b == b'*' || b == b'?')
}

impl Item {
    fn wildcards(&self) -> bool {
        self.kind != Kind::Literal && wild(&self.pat)
    }

    /// Whether the element matches the stored path `rel`.
    fn matches(&self, rel: &[u8]) -> bool {
        let p = self.pat.as_bytes();
        if p.is_empty() || rel == p || (rel.starts_with(p) && rel.get(p.len()) == Some(&b'/')) {
            return true;
        }
        self.wildcards() && wildmatch(p, rel, self.kind == Kind::Glob)
    }
}

impl Pathspec {
    /// Parses the pathspec `elements` given in the directory `prefix` (relative to the top,
    /// `""` at the top). `None` when an element is not read here.
    pub fn parse(elements: &[&str], prefix: &str) -> Option<Pathspec> {
        let mut items = Vec::with_capacity(elements.len());
        for e in elements {
            items.push(parse_item(e, prefix)?);
        }
        Some(Pathspec { items })
    }

    /// Whether an element excludes.
    pub fn has_exclude(&self) -> bool {
        self.items.iter().any(|i| i.exclude)
    }

    /// Whether the command certainly leaves out the stored path `rel`: no element selects
    /// it (an element with wildcards is taken to select anything), or an exclude matches it.
    pub fn leaves_out(&self, rel: &[u8]) -> bool {
        let mut positives = self.items.iter().filter(|i| !i.exclude).peekable();
        let selected =
            positives.peek().is_none() || positives.any(|i| i.wildcards() || i.matches(rel));
        !selected || self.items.iter().any(|i| i.exclude && i.matches(rel))
    }

    /// Whether an exclude certainly covers every path below `top` that the deny pattern
    /// `deny` (as the scope's matcher expands it: absolute, or starting with `**/`)
    /// matches. A pattern that cannot match below `top` is covered.
    pub fn excludes_pattern(&self, deny: &str, top: &Path) -> bool {
        const SPECIAL: &[u8] = b"*?[]{}\\";
        let Some(top) = top.to_str().map(|t| t.trim_end_matches('/')) else {
            return false;
        };
        if top.bytes().any(|b| SPECIAL.contains(&b)) {
            return false;
        }
        let odd = |s: &str| s.bytes().any(|b| b"[]{}\\".contains(&b));
        let rel: String = if let Some(name) = deny.strip_prefix("**/") {
            // One component: below the top, its path's last component.
            if name.contains('/') || name.contains("**") || odd(name) || name.is_empty() {
                return false;
            }
            format!("**/{name}")
        } else if let Some(rest) = deny.strip_prefix(top).and_then(|r| r.strip_prefix('/')) {
            if odd(rest) || rest.is_empty() {
                return false;
            }
            rest.to_string()
        } else {
            // Disjoint when neither its literal start nor the top's path is a prefix of the other.
            let lit = &deny[..deny
                .bytes()
                .position(|b| SPECIAL.contains(&b))
                .unwrap_or(deny.len())];
            let below = format!("{top}/");
            return !(below.starts_with(lit) || lit.starts_with(&below) || lit == top);
        };
        let lit_start = &rel[..rel
            .bytes()
            .position(|b| SPECIAL.contains(&b))
            .unwrap_or(rel.len())];
        self.items.iter().filter(|i| i.exclude).any(|e| {
            if e.pat.is_empty() {
                return true;
            }
            if !e.wildcards() {
                // Equal to it or a directory above it: covers the path, and what is below it.
                let whole = lit_start.len() == rel.len()
                    || rel.strip_suffix("/**").is_some_and(|d| !wild(d));
                let base = rel.strip_suffix("/**").unwrap_or(&rel);
                return (whole && base == e.pat)
                    || lit_start
                        .strip_prefix(e.pat.as_str())
                        .is_some_and(|r| r.starts_with('/'));
            }
            // The same pattern under git's `glob` rules, which are the matcher's.
            e.kind == Kind::Glob && e.pat == rel && !rel.ends_with("/**")
        })
    }
}

fn parse_item(e: &str, prefix: &str) -> Option<Item> {
    let (mut top, mut exclude, mut kind) = (false, false, Kind::Fnmatch);
    let rest = if let Some(long) = e.strip_prefix(":(") {
        let (magic, rest) = long.split_once(')')?;
        for m in magic.split(',').map(str::trim) {
            match m {
                "top" => top = true,
                "exclude" => exclude = true,
                "glob" if kind != Kind::Literal => kind = Kind::Glob,
                "literal" if kind != Kind::Glob => kind = Kind::Literal,
                _ => return None,
            }
        }
        rest
    } else if let Some(short) = e.strip_prefix(':') {
        let n = short.bytes().take_while(|b| b"/!^".contains(b)).count();
        for b in short[..n].bytes() {
            if b == b'/' {
                top = true;
            } else {
                exclude = true;
            }
        }
        let rest = &short[n..];
        rest.strip_prefix(':').unwrap_or(rest)
    } else {
        e
    };
    if kind != Kind::Literal && rest.bytes().any(|b| b == b'[' || b == b'\\') {
        return None;
    }
    if rest.starts_with('/') {
        return None;
    }
    let joined = if top || prefix.is_empty() {
        rest.to_string()
    } else {
        format!("{}/{rest}", prefix.trim_end_matches('/'))
    };
    // `.` and `..` components, as git normalizes them; leaving the top is not read here.
    let mut parts: Vec<&str> = Vec::new();
    for c in joined.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            c => parts.push(c),
        }
    }
    Some(Item {
        exclude,
        kind,
        pat: parts.join("/"),
    })
}

/// A pattern's parts: literal bytes, `?`, `*`, and (`glob` only) `**/` and a final `/**`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    One,
    /// Any run of bytes; `/` only when `crosses`.
    Star {
        crosses: bool,
    },
    /// Zero or more whole directories (`**/` at the start or after `/`).
    Dirs,
}

/// Whether `pat` matches `text` (wildmatch(3) of git; `pathname`: with `WM_PATHNAME`, as the
/// `glob` magic). The pattern has no bracket or backslash (the parser refuses them).
pub fn wildmatch(pat: &[u8], text: &[u8], pathname: bool) -> bool {
    let mut toks = Vec::with_capacity(pat.len());
    let mut i = 0;
    while i < pat.len() {
        match pat[i] {
            b'*' => {
                let mut j = i;
                while pat.get(j) == Some(&b'*') {
                    j += 1;
                }
                let double = j - i >= 2;
                let at_start = i == 0 || pat[i - 1] == b'/';
                if pathname && double && at_start && pat.get(j) == Some(&b'/') {
                    toks.push(Tok::Dirs);
                    j += 1;
                } else if pathname && double && at_start && j == pat.len() {
                    toks.push(Tok::Star { crosses: true });
                } else {
                    toks.push(Tok::Star { crosses: !pathname });
                }
                i = j;
            }
            b'?' => {
                toks.push(Tok::One);
                i += 1;
            }
            b => {
                toks.push(Tok::Byte(b));
                i += 1;
            }
        }
    }
    // ok[j]: the tokens so far match text[..j].
    let n = text.len();
    let mut ok = vec![false; n + 1];
    ok[0] = true;
    for t in toks {
        let mut next = vec![false; n + 1];
        match t {
            Tok::Byte(b) => {
                for j in 0..n {
                    next[j + 1] = ok[j] && text[j] == b;
                }
            }
            Tok::One => {
                for j in 0..n {
                    next[j + 1] = ok[j] && (!pathname || text[j] != b'/');
                }
            }
            Tok::Star { crosses } => {
                let mut run = false;
                for j in 0..=n {
                    run = ok[j] || (run && j > 0 && (crosses || text[j - 1] != b'/'));
                    next[j] = run;
                }
            }
            Tok::Dirs => {
                // Empty, or anything ending with `/`.
                let mut seen = false;
                for j in 0..=n {
                    if j > 0 && text[j - 1] == b'/' && seen {
                        next[j] = true;
                    }
                    seen |= ok[j];
                    next[j] |= ok[j];
                }
            }
        }
        ok = next;
    }
    ok[n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildmatch_as_git() {
        let rows: &[(&str, &str, bool, bool)] = &[
            // pattern, text, without WM_PATHNAME, with it
            ("*.env", "a/b.env", true, false),
            ("**/.env", ".env", false, true),
            ("**/.env", "a/b/.env", true, true),
            ("a/**/b", "a/b", false, true),
            ("a/**/b", "a/x/y/b", true, true),
            ("a/**", "a/x/y", true, true),
            ("a/**", "a", false, false),
            ("a**b", "a/x/b", true, false),
            ("?", "/", true, false),
            ("*", "", true, true),
            ("a*c*e", "abcde", true, true),
            (".env", ".env", true, true),
            ("**", "a/b", true, true),
        ];
        for (p, t, plain, path) in rows {
            assert_eq!(
                wildmatch(p.as_bytes(), t.as_bytes(), false),
                *plain,
                "{p} {t} plain"
            );
            assert_eq!(
                wildmatch(p.as_bytes(), t.as_bytes(), true),
                *path,
                "{p} {t} pathname"
            );
        }
    }

    #[test]
    fn parse_reads_magic_and_prefix() {
        type Row<'b> = (&'b str, &'b str, Option<(bool, Kind, &'b str)>);
        let rows: &[Row<'_>] = &[
            (":!.env", "", Some((true, Kind::Fnmatch, ".env"))),
            (":^.env", "sub", Some((true, Kind::Fnmatch, "sub/.env"))),
            (":/!.env", "sub", Some((true, Kind::Fnmatch, ".env"))),
            (":!/:x", "sub", Some((true, Kind::Fnmatch, "x"))),
            (
                ":(exclude,glob)**/.env",
                "sub",
                Some((true, Kind::Glob, "sub/**/.env")),
            ),
            (
                ":(top,exclude,glob)**/.env",
                "sub",
                Some((true, Kind::Glob, "**/.env")),
            ),
            (":(literal)*", "", Some((false, Kind::Literal, "*"))),
            (".", "sub", Some((false, Kind::Fnmatch, "sub"))),
            ("../x", "sub", Some((false, Kind::Fnmatch, "x"))),
            ("../../x", "sub", None),
            (":(icase).env", "", None),
            (":(attr:x)a", "", None),
            ("[ab]", "", None),
            (":/", "sub", Some((false, Kind::Fnmatch, ""))),
        ];
        for (e, prefix, want) in rows {
            let got = parse_item(e, prefix).map(|i| (i.exclude, i.kind, i.pat));
            assert_eq!(
                got,
                want.map(|(x, k, p)| (x, k, p.to_string())),
                "{e} in {prefix:?}"
            );
        }
    }

    #[test]
    fn excludes_pattern_only_when_certain() {
        let top = Path::new("/p");
        let rows: &[(&[&str], &str, bool)] = &[
            (&[".", ":!.env"], "**/.env", false),
            (&[".", ":(exclude,glob)**/.env"], "**/.env", true),
            (&[":(top,exclude,glob)**/.env"], "**/.env", true),
            (&[":(exclude)**/.env"], "**/.env", false),
            (&[":!.env"], "/p/.env", true),
            (&[":!secrets"], "/p/secrets/**", true),
            (&[":!secrets"], "/p/secrets/*.pem", true),
            (&[":(exclude,glob)secrets/**"], "/p/secrets/**", false),
            (&[":!sec"], "/p/secrets/**", false),
            (&[":!/"], "/p/anything", true),
            (&[":!x"], "/home/u/.ssh/**", true),
            (&[":!x"], "/**", false),
            (&[":!x"], "/p/**/x", false),
            (&[":(exclude,glob)*.pem"], "/p/*.pem", true),
            (&[":(exclude,glob)**/*.pem"], "**/*.pem", true),
            (&[":(exclude,glob)**/.env"], "**/a/.env", false),
        ];
        for (elems, deny, want) in rows {
            let ps = Pathspec::parse(elems, "").unwrap();
            assert_eq!(ps.excludes_pattern(deny, top), *want, "{elems:?} vs {deny}");
        }
    }

    /// What the parser and matcher say a pathspec leaves out is what `git ls-files` leaves
    /// out, on a tree with denied names at several depths, from the top and a subdirectory.
    #[test]
    fn leaves_out_as_git_ls_files() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let files = [
            ".env",
            "a.env",
            "sub/.env",
            "sub/a",
            "sub/deep/.env",
            "sub/deep/x.pem",
            "x.pem",
            "secrets/k",
            "s/t/u",
        ];
        let git = |cwd: &Path, args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(cwd)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?} {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        };
        git(top, &["init", "-q"]);
        for f in files {
            let p = top.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        git(top, &["add", "-A"]);
        let specs: &[&[&str]] = &[
            &[":!.env"],
            &[".", ":!.env"],
            &[":(exclude,glob)**/.env"],
            &[":(exclude)**/.env"],
            &[":(exclude)*.env"],
            &[":!*.pem"],
            &[":(exclude,glob)*.pem"],
            &["sub"],
            &["sub", ":!sub/deep"],
            &[":(top,exclude,glob)**/.env", ":!secrets"],
            &["s*"],
            &[":(glob)s*"],
            &[":(exclude,glob)s*"],
            &[":(exclude)s*"],
            &[":(literal)sub", ":^x.pem"],
            &[":/!.env"],
            &["*.pem"],
        ];
        for prefix in ["", "sub"] {
            let cwd = top.join(prefix);
            for spec in specs {
                let mut args = vec!["ls-files", "-z", "--full-name", "--"];
                args.extend_from_slice(spec);
                let listed: Vec<String> = git(&cwd, &args)
                    .split('\0')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                let ps = Pathspec::parse(spec, prefix).unwrap();
                for f in files {
                    if ps.leaves_out(f.as_bytes()) {
                        assert!(
                            !listed.iter().any(|l| l == f),
                            "{spec:?} in {prefix:?}: said to leave out {f}, git lists it"
                        );
                    }
                }
                // Exclusions are exact, from the top (in a subdirectory `ls-files` selects only
                // what lies below it when no element selects: `log` selects the whole tree).
                for f in files.iter().filter(|_| prefix.is_empty()) {
                    let excluded = ps
                        .items
                        .iter()
                        .any(|i| i.exclude && i.matches(f.as_bytes()));
                    if !listed.iter().any(|l| l == f) && ps.items.iter().all(|i| i.exclude) {
                        assert!(
                            excluded,
                            "{spec:?} in {prefix:?}: git leaves out {f}, not seen as excluded"
                        );
                    }
                }
            }
        }
    }
}
