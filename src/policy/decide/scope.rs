//! Step 6 (SPEC §3): the working directories and every path an effect names, resolved and
//! matched against the scope; writes that would reach a protected scope document; bash's
//! glob expansion of a literal pattern, as bash would do it at run time.

use std::path::{Path, PathBuf};

use crate::policy::paths::{self, Access, PathVerdict};
use crate::scope::semantics::{self, OperandKind};
use crate::shell::WordInfo;
use crate::Reason;

use super::{allowed_summary, Category, Judge, PathEvidence, DENIED};

pub(super) use crate::shell::ComponentGlob;

/// The refusal (`run_time_operand`) of an operand, an option's value or a directory that is
/// built at run time, whichever command it belongs to: `raw` as written, `what` names its
/// place (`operand of cat`).
pub(super) fn run_time_message(raw: &str, what: &str) -> String {
    format!(
        "`{raw}` ({what}) is built at run time (a variable, substitution or glob the engine cannot expand), so it cannot be checked before the command runs; write it literally, or expand it first (list the files with a separate command, then name them)."
    )
}

/// The directory part of a glob before its first wildcard component.
pub(super) fn glob_base(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        let s = c.as_os_str().to_string_lossy();
        if s.contains(['*', '?', '[']) {
            break;
        }
        out.push(c.as_os_str());
    }
    out
}

/// Expands a glob against the file system like bash (dotfiles only when the pattern
/// component starts with `.`). `None` when it would list too many entries.
pub(super) fn glob_expand(p: &Path) -> Option<Vec<PathBuf>> {
    const LIMIT: usize = 2000;
    let mut current = vec![PathBuf::from("/")];
    for c in p.components() {
        let part = c.as_os_str().to_string_lossy().into_owned();
        if matches!(c, std::path::Component::RootDir) {
            continue;
        }
        let mut next = Vec::new();
        if part.contains(['*', '?', '[']) {
            let g = ComponentGlob::new(&part)?;
            for d in &current {
                let Ok(rd) = std::fs::read_dir(d) else {
                    continue;
                };
                for e in rd.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.starts_with('.') && !part.starts_with('.') {
                        continue;
                    }
                    if g.is_match(&name) {
                        next.push(d.join(&name));
                        if next.len() > LIMIT {
                            return None;
                        }
                    }
                }
            }
        } else {
            for d in &current {
                next.push(d.join(&part));
            }
        }
        current = next;
    }
    Some(
        current
            .into_iter()
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect(),
    )
}

impl<'a> Judge<'a> {
    /// Writes that reach a protected file without naming it: a copy, move or link into a
    /// destination directory (`cp x/scope.yml .`), a removal or move of a directory holding
    /// one (`rm -r .`, `mv dir y`), a new hard link to one (`ln scope.yml x`, whose writes
    /// would change it), and writes of names the command does not show into a directory
    /// holding one (`tar x`, `unzip`, `wget`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn protected_reach(
        &mut self,
        base: &str,
        rest: &[WordInfo],
        files: &[&WordInfo],
        kind: OperandKind,
        cwd_write: bool,
        cwds: &[PathBuf],
        label: &str,
    ) {
        // The options as the program parses them (`ln -Ss` is a suffix `s`, not `-s`).
        let sem = self.semantics(base).unwrap_or_else(|| semantics::empty());
        let given: Vec<String> = super::argv::options(sem, rest, false)
            .into_iter()
            .map(|o| o.name)
            .collect();
        let has = |names: &[&str]| given.iter().any(|g| names.contains(&g.as_str()));
        let hard_link = (base == "ln" && !has(&["-s", "--symbolic"]))
            || (base == "cp" && has(&["-l", "--link"]));
        let n = files.len();
        // `cp -t DIR FILE...`: each file lands in DIR under its own name (`-vtDIR`, `--target DIR`).
        let target_dir =
            super::argv::option_values(sem, &["-t", "--target-directory"], rest, false)
                .into_iter()
                .filter_map(|(_, v)| v)
                .next_back();
        if let Some(dir) = target_dir
            .as_deref()
            .filter(|_| matches!(base, "cp" | "mv" | "ln" | "install"))
        {
            for d in cwds {
                let into = d.join(dir);
                for src in files.iter() {
                    if let Some(name) = src.value.as_deref().and_then(|s| Path::new(s).file_name())
                    {
                        let dest = into.join(name).to_string_lossy().into_owned();
                        self.path_effect(
                            &WordInfo::literal(&dest),
                            Access::Write,
                            std::slice::from_ref(d),
                            &format!("operand of {base}, into {dir}"),
                            true,
                        );
                    }
                }
            }
        }
        let into_dir = matches!(kind, OperandKind::LastWrite | OperandKind::AllWrite)
            && n > 1
            && target_dir.is_none();
        let removes = matches!(kind, OperandKind::Write | OperandKind::AllWrite);
        for (k, f) in files.iter().enumerate() {
            let Some(v) = f.value.as_deref() else {
                continue;
            };
            let last = k + 1 == n;
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                if into_dir && last {
                    if paths::is_dir(&r.target) {
                        for src in &files[..k] {
                            if let Some(name) =
                                src.value.as_deref().and_then(|s| Path::new(s).file_name())
                            {
                                let dest = r.target.join(name).to_string_lossy().into_owned();
                                self.path_effect(
                                    &WordInfo::literal(&dest),
                                    Access::Write,
                                    std::slice::from_ref(d),
                                    &format!("operand of {base}, into {}", r.target.display()),
                                    true,
                                );
                            }
                        }
                    }
                    continue;
                }
                if base == "ln" && n == 1 {
                    // `ln -s TARGET` makes a link named like TARGET in the directory.
                    if let Some(name) = Path::new(v).file_name() {
                        let dest = d.join(name).to_string_lossy().into_owned();
                        self.path_effect(
                            &WordInfo::literal(&dest),
                            Access::Write,
                            std::slice::from_ref(d),
                            &format!("operand of {base}, the link it makes"),
                            true,
                        );
                    }
                }
                let hit = if hard_link && (!last || n == 1) {
                    self.ctx.matcher.scope_document(&r).map(|doc| {
                        (
                            doc,
                            "would make another name of it, through which it could be written",
                        )
                    })
                } else if removes {
                    self.ctx
                        .matcher
                        .protected_below(&r.target)
                        .map(|doc| (doc, "would replace or remove what lies below it"))
                } else {
                    None
                };
                if let Some((doc, how)) = hit {
                    self.write_reaches_scope_document(
                        &format!("`{v}` (operand of {base})"),
                        &doc,
                        how,
                        label,
                    );
                }
            }
        }
        // Programs that write files named by their input (an archive's members, a URL's
        // name): any of them could be a scope document.
        const UNNAMED_WRITERS: &[&str] = &[
            "tar", "bsdtar", "unzip", "7z", "7za", "unrar", "cpio", "ar", "wget", "curl", "patch",
        ];
        if cwd_write && UNNAMED_WRITERS.contains(&base) {
            for d in cwds {
                let r = paths::resolve(d);
                if let Some(doc) = self.ctx.matcher.protected_below(&r.target) {
                    let how = format!(
                        "`{base}` writes files it does not name into {}, which holds it: run it in a directory that holds no scope document",
                        r.target.display()
                    );
                    self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
                }
            }
        }
    }

    pub(super) fn directory_scope(&mut self, cat: Category, cwds: &[PathBuf], label: &str) {
        let access = cat.access();
        self.need(access);
        for d in cwds {
            self.directory_check(d, access, label);
        }
    }

    pub(super) fn directory_check(&mut self, d: &Path, access: Access, label: &str) {
        let r = paths::resolve(d);
        match self.ctx.matcher.check(&r, access) {
            PathVerdict::Allowed(_) => {}
            PathVerdict::ScopeDocument(doc) => self.violate(
                Reason::ScopeDocument,
                self.ctx
                    .matcher
                    .scope_document_message(&format!("`{label}`"), &r.target, &doc),
                Some(label.to_string()),
                r.target.to_string_lossy().into_owned(),
                "path",
                Some(access),
            ),
            PathVerdict::Denied(p) => self.violate(
                Reason::PathDenied,
                format!(
                    "the directory {} matches the deny pattern `{p}`: nothing may run there",
                    r.target.display()
                ),
                Some(label.to_string()),
                r.target.to_string_lossy().into_owned(),
                "path",
                Some(access),
            ),
            PathVerdict::OutOfScope => {
                let patterns = self.ctx.matcher.patterns_for(access);
                self.violate(
                    Reason::DirectoryNotInScope,
                    format!(
                        "`{label}` needs {} scope on the directory {}, which no {} pattern covers (allowed: {}). Run it in a directory inside the scope, or call request_scope_expansion with tool_name \"{}\", resource \"{}\" and your reason.",
                        access.as_str(),
                        r.target.display(),
                        if access == Access::Write { "paths.write" } else { "paths.read or paths.write" },
                        allowed_summary(&patterns),
                        self.ctx.tool,
                        r.target.display()
                    ),
                    Some(label.to_string()),
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                );
            }
        }
    }

    /// Runs `judge` and says whether what it judged needs write scope.
    pub(super) fn writes(&mut self, judge: impl FnOnce(&mut Self)) -> bool {
        let before = self.max_access.take();
        judge(self);
        let wrote = self.max_access == Some(Access::Write);
        if let Some(b) = before {
            self.need(b);
        }
        wrote
    }

    /// A write that reaches the protected file `doc` without naming it (`what` is the word or
    /// command that does, `how` says how): refused with `scope_document`, which no grant lifts.
    pub(super) fn write_reaches_scope_document(
        &mut self,
        what: &str,
        doc: &Path,
        how: &str,
        label: &str,
    ) {
        let protected = doc.to_string_lossy();
        self.violate(
            Reason::ScopeDocument,
            format!(
                "{} ({how})",
                self.ctx
                    .matcher
                    .scope_document_message(what, doc, &protected)
            ),
            Some(label.to_string()),
            protected.into_owned(),
            "path",
            Some(Access::Write),
        );
    }

    /// A write to files the command finds or reads at run time, under `starts` (resolved
    /// from each of `cwds`): refused when a protected file lies there.
    pub(super) fn unseen_writes_under(
        &mut self,
        starts: &[WordInfo],
        cwds: &[PathBuf],
        what: &str,
        label: &str,
    ) {
        for st in starts {
            let Some(v) = st.value.as_deref() else {
                continue;
            };
            for d in cwds {
                let r = paths::resolve(&d.join(v));
                let hit = self
                    .ctx
                    .matcher
                    .scope_document(&r)
                    .or_else(|| self.ctx.matcher.protected_below(&r.target));
                if let Some(doc) = hit {
                    let how = format!(
                        "{what}, which the engine cannot see, under {}: start it where no scope document lies, or name the files",
                        r.target.display()
                    );
                    self.write_reaches_scope_document(&format!("`{label}`"), &doc, &how, label);
                }
            }
        }
    }

    /// Checks one path effect against the scope from every possible working directory.
    /// `enforce`: a violation is a denial whatever `path_arguments` says (writes, redirects).
    pub(super) fn path_effect(
        &mut self,
        w: &WordInfo,
        access: Access,
        cwds: &[PathBuf],
        source: &str,
        enforce: bool,
    ) {
        if access == Access::Write {
            self.need(Access::Write);
        }
        let enforce = enforce
            || access == Access::Write
            || self.ctx.scope.bash_tools.path_arguments == crate::scope::PathArgumentsMode::Enforce;
        let Some(v) = w.value.clone() else {
            // `<(cmd)` and `>(cmd)` are pipes to a command judged on its own, not paths.
            if is_process_substitution(&w.raw) {
                return;
            }
            let msg = run_time_message(&w.raw, source);
            self.paths.push(PathEvidence {
                path: w.raw.clone(),
                resolved: String::new(),
                access: access.as_str(),
                verdict: if enforce { DENIED } else { "unchecked" },
                pattern: None,
                source: source.to_string(),
            });
            if enforce {
                self.violate(
                    Reason::RunTimeOperand,
                    msg,
                    None,
                    w.raw.clone(),
                    "path",
                    Some(access),
                );
            } else {
                self.warn(msg);
            }
            return;
        };
        let mut targets: Vec<PathBuf> = Vec::new();
        for d in cwds {
            let p = d.join(&v);
            if w.glob {
                match glob_expand(&p) {
                    Some(hits) if !hits.is_empty() => targets.extend(hits),
                    Some(_) => targets.push(glob_base(&p)),
                    None => targets.push(glob_base(&p)),
                }
            } else {
                targets.push(p);
            }
        }
        for t in targets {
            if paths::is_safe_device(&crate::resolve::normalize(&t), access) {
                continue;
            }
            let r = paths::resolve(&t);
            let verdict = self.ctx.matcher.check(&r, access);
            let (ev_verdict, pattern) = match &verdict {
                PathVerdict::Allowed(p) => ("allowed", Some(p.clone())),
                PathVerdict::Denied(p) => (DENIED, Some(p.clone())),
                PathVerdict::OutOfScope => (if enforce { "out_of_scope" } else { "warning" }, None),
                PathVerdict::ScopeDocument(_) => (Reason::ScopeDocument.as_str(), None),
            };
            self.paths.push(PathEvidence {
                path: v.clone(),
                resolved: r.target.to_string_lossy().into_owned(),
                access: access.as_str(),
                verdict: ev_verdict,
                pattern,
                source: source.to_string(),
            });
            match verdict {
                PathVerdict::Allowed(_) => {}
                PathVerdict::ScopeDocument(doc) => self.violate(
                    Reason::ScopeDocument,
                    self.ctx.matcher.scope_document_message(&format!("`{v}` ({source})"), &r.target, &doc),
                    None,
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                ),
                PathVerdict::Denied(p) => self.violate(
                    Reason::PathDenied,
                    format!("`{v}` ({source}) leads to {} which matches the deny pattern `{p}`; it is never allowed", r.target.display()),
                    None,
                    r.target.to_string_lossy().into_owned(),
                    "path",
                    Some(access),
                ),
                PathVerdict::OutOfScope => {
                    let patterns = self.ctx.matcher.patterns_for(access);
                    let msg = format!(
                        "`{v}` ({source}) needs {} access to {}, outside the scope (allowed: {}). Use a path inside the scope (relative paths are checked best), or call request_scope_expansion with tool_name \"{}\", resource \"{}\" and your reason.",
                        access.as_str(),
                        r.target.display(),
                        allowed_summary(&patterns),
                        self.ctx.tool,
                        r.target.display()
                    );
                    if enforce {
                        self.violate(Reason::PathNotInScope, msg, None, r.target.to_string_lossy().into_owned(), "path", Some(access));
                    } else {
                        self.warn(format!(
                            "`{v}` ({source}) is outside the scope ({}); path arguments are not enforced, so this was allowed, but use relative paths inside the project so the scope can be validated",
                            r.target.display()
                        ));
                    }
                }
            }
        }
    }
}

/// Whether a word is one process substitution and nothing else (`<(ls src)`, `>(wc -l)`):
/// its first `(` closes at its last character. Quotes are not read, so a `)` inside them
/// makes the answer no (the word then stays a path built at run time, and is refused).
pub(super) fn is_process_substitution(raw: &str) -> bool {
    let Some(body) = raw.strip_prefix("<(").or_else(|| raw.strip_prefix(">(")) else {
        return false;
    };
    let mut depth = 1usize;
    for (i, c) in body.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1 == body.len();
                }
            }
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_globs_match_as_globset_does() {
        let mut patterns: Vec<String> = [
            "*",
            "*.md",
            "test-?.el",
            "a*b*c",
            "*a*",
            "??",
            "*.*",
            "ab",
            "*x",
            "x*",
            "a?*",
            "*?",
            "**x",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let names = [
            "",
            "a",
            "ab",
            "abc",
            "a.md",
            "README.md",
            "test-1.el",
            "test-12.el",
            "aXbYc",
            "abcabc",
            "x",
            "xx",
            ".x",
            "é.md",
            "ab*",
            "a?b",
        ];
        // Every pattern of up to four characters from a small alphabet.
        let alphabet = ['a', 'b', '*', '?', '.'];
        for len in 1..=4 {
            let mut idx = vec![0usize; len];
            loop {
                patterns.push(idx.iter().map(|&i| alphabet[i]).collect());
                let mut k = 0;
                while k < len {
                    idx[k] += 1;
                    if idx[k] < alphabet.len() {
                        break;
                    }
                    idx[k] = 0;
                    k += 1;
                }
                if k == len {
                    break;
                }
            }
        }
        let more_names: Vec<String> = (0..200u32)
            .map(|i| {
                (0..(i % 6))
                    .map(|k| ['a', 'b', '.', 'é'][((i >> k) % 4) as usize])
                    .collect()
            })
            .collect();
        for p in &patterns {
            let ours = ComponentGlob::new(p).expect("compiles");
            let Ok(g) = globset::GlobBuilder::new(p).literal_separator(true).build() else {
                continue;
            };
            let g = g.compile_matcher();
            for n in names
                .iter()
                .map(|s| s.to_string())
                .chain(more_names.iter().cloned())
            {
                if n.is_ascii() {
                    assert_eq!(
                        ours.is_match(&n),
                        g.is_match(&n),
                        "pattern {p:?} name {n:?}"
                    );
                } else if g.is_match(&n) {
                    // globset matches bytes: every name it finds is found.
                    assert!(ours.is_match(&n), "pattern {p:?} name {n:?}");
                }
            }
        }
        // `?` as one character (bash in a UTF-8 locale) and as one byte (the C locale).
        for (p, n, want) in [
            ("?", "é", true),
            ("??", "é", true),
            ("???", "é", false),
            ("?.md", "é.md", true),
            ("*é", "café", true),
            ("caf?", "café", true),
        ] {
            assert_eq!(
                ComponentGlob::new(p).expect("compiles").is_match(n),
                want,
                "{p} {n}"
            );
        }
    }

    #[test]
    fn glob_expansion_follows_bash_dotfile_rule() {
        let d = std::env::temp_dir().join(format!("gs-glob-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("a")).unwrap();
        for f in ["a/x.txt", "a/y.txt", "a/.env", "a/z.md"] {
            std::fs::write(d.join(f), "").unwrap();
        }
        let mut hits = glob_expand(&d.join("a/*")).unwrap();
        hits.sort();
        assert_eq!(
            hits,
            vec![d.join("a/x.txt"), d.join("a/y.txt"), d.join("a/z.md")]
        );
        assert_eq!(
            glob_expand(&d.join("a/.e?v")).unwrap(),
            vec![d.join("a/.env")]
        );
        assert_eq!(
            glob_expand(&d.join("*/z.md")).unwrap(),
            vec![d.join("a/z.md")]
        );
        assert_eq!(glob_base(&d.join("a/*.txt")), d.join("a"));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
