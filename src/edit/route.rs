//! Routing a scope-expansion request to a section (E30-E33, E11-E13, E15, E44-E47): which
//! list of the scope document a request extends, and the value written there.

use std::path::Path;

use super::Section;
use crate::error::{Result, ScopeError};
use crate::Tool;

/// Tools of other packages (checked by `gptel-scope-guarded-tools`) that write the paths
/// they are given; of gptel-scope's own, those [`Tool::writes_paths`] says.
const OTHER_WRITING_TOOLS: &[&str] = &["write_file", "edit_file", "create_file"];

/// The section and the value that make a scope-expansion request permanent.
///
/// - `path`: `paths.write` when `access` is `write` or `tool` writes (`apply_patch`,
///   `write_file`, `edit_file`, `create_file`), else `paths.read`. The value is absolute
///   (relative to `base_dir`; `~` kept), normalized, and `dir/` becomes `dir/**`.
/// - `pattern`: `subdirectory:X` → `org_roam_patterns.subdirectory` `X`; `tags:Y` →
///   `org_roam_patterns.tags` `Y`.
/// - `command`: the command's name without its arguments (`git status -s` → `git`), in
///   `category` (`read_only`, the default, `safe_write` or `dangerous`).
///
/// Anything else is [`ScopeError::InvalidArgument`].
pub fn route(
    validation_type: &str,
    resource: &str,
    tool: &str,
    access: Option<&str>,
    category: Option<&str>,
    base_dir: &Path,
) -> Result<(Section, String)> {
    match validation_type.trim().trim_start_matches(':') {
        "path" => {
            let writes = match access.map(str::trim) {
                None | Some("") | Some("read") => false,
                Some("write") => true,
                Some(other) => {
                    return Err(ScopeError::InvalidArgument(format!(
                        "unknown access {other:?}: expected \"read\" or \"write\""
                    )))
                }
            } || (OTHER_WRITING_TOOLS.contains(&tool.trim())
                || Tool::from_name(tool.trim()).is_some_and(Tool::writes_paths));
            let section = if writes {
                Section::PathsWrite
            } else {
                Section::PathsRead
            };
            Ok((section, path_pattern(resource, base_dir)?))
        }
        "pattern" => org_roam_pattern(resource),
        "command" => Ok((command_section(category)?, base_command(resource)?)),
        "env" => match crate::scope::env::resource_name(resource.trim()) {
            Some(name) => Ok((Section::EnvironmentInclude, name.to_owned())),
            None => Err(ScopeError::InvalidArgument(format!(
                "not a variable: {resource:?} (expected env:NAME, a name without `=` or glob characters)"
            ))),
        },
        other => Err(ScopeError::InvalidArgument(format!(
            "unknown validation type {other:?}: expected \"path\", \"pattern\", \"command\" or \"env\"; \
             nothing was added to the scope"
        ))),
    }
}

/// The path pattern for `resource`: absolute (a relative one is taken from `base_dir`; `~`
/// and `~user` are kept as written), normalized lexically (`.`, `..`, `//`), and `dir/`
/// becomes `dir/**` (E15, E44). Globs are kept as they are.
pub fn path_pattern(resource: &str, base_dir: &Path) -> Result<String> {
    let r = resource.trim();
    if r.is_empty() || r.contains('\0') {
        return Err(ScopeError::InvalidArgument(format!(
            "not a path: {resource:?}"
        )));
    }
    let is_home = |s: &str| s.starts_with('~');
    let full = if r.starts_with('/') || is_home(r) {
        r.to_owned()
    } else {
        let base = base_dir.to_str().ok_or_else(|| {
            ScopeError::InvalidArgument(format!(
                "base directory {} is not valid UTF-8",
                base_dir.display()
            ))
        })?;
        if !(base.starts_with('/') || is_home(base)) {
            return Err(ScopeError::InvalidArgument(format!(
                "cannot make {r:?} absolute: the base directory {base:?} is not absolute"
            )));
        }
        format!("{}/{r}", base.trim_end_matches('/'))
    };
    let mut pattern = normalize_path(&full);
    if r.ends_with('/') && !pattern.ends_with("/**") {
        if !pattern.ends_with('/') {
            pattern.push('/');
        }
        pattern.push_str("**");
    }
    Ok(pattern)
}

/// Lexical normalization of a path that starts with `/` or `~`: no `.`, no empty component,
/// `..` removes the component before it (at `/` it is dropped; after `~` it is kept).
fn normalize_path(path: &str) -> String {
    let (prefix, rest) = if path.starts_with('/') {
        ("", path)
    } else {
        match path.find('/') {
            Some(i) => path.split_at(i),
            None => (path, ""),
        }
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if prefix.is_empty() => {}
                _ => parts.push(".."),
            },
            part => parts.push(part),
        }
    }
    match (parts.is_empty(), prefix.is_empty()) {
        (true, true) => "/".to_owned(),
        (true, false) => prefix.to_owned(),
        (false, _) => format!("{prefix}/{}", parts.join("/")),
    }
}

/// `subdirectory:X` and `tags:Y` (E12, E45).
fn org_roam_pattern(resource: &str) -> Result<(Section, String)> {
    let r = resource.trim();
    let (section, value) = if let Some(v) = r.strip_prefix("subdirectory:") {
        (Section::OrgRoamSubdirectory, v)
    } else if let Some(v) = r.strip_prefix("tags:") {
        (Section::OrgRoamTags, v)
    } else {
        return Err(ScopeError::InvalidArgument(format!(
            "pattern resource {r:?} is neither \"subdirectory:X\" nor \"tags:Y\""
        )));
    };
    let value = value.trim();
    if value.is_empty() {
        return Err(ScopeError::InvalidArgument(format!(
            "pattern resource {r:?} names no subdirectory or tag"
        )));
    }
    Ok((section, value.to_owned()))
}

fn command_section(category: Option<&str>) -> Result<Section> {
    match category.map(str::trim) {
        None | Some("") | Some("read_only") | Some("read-only") => Ok(Section::ReadOnly),
        Some("safe_write") | Some("safe-write") => Ok(Section::SafeWrite),
        Some("dangerous") => Ok(Section::Dangerous),
        Some(other) => Err(ScopeError::InvalidArgument(format!(
            "unknown command category {other:?}: expected \"read_only\", \"safe_write\" or \
             \"dangerous\""
        ))),
    }
}

/// The name of the command `command` runs, without its arguments, quotes removed
/// (`git status -s` → `git`, `FOO=1 make` → `make`, `ls|wc` → `ls`, `/usr/bin/git log` →
/// `/usr/bin/git`; E46). A name built from expansions or globs is refused.
pub fn base_command(command: &str) -> Result<String> {
    let words = shell_words::split(command).map_err(|e| {
        ScopeError::InvalidArgument(format!("cannot split the command {command:?}: {e}"))
    })?;
    let is_assignment = |w: &str| {
        w.split_once('=').is_some_and(|(name, _)| {
            let mut chars = name.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    let word = words
        .iter()
        .map(|w| w.trim_start_matches('('))
        .find(|w| !w.is_empty() && !is_assignment(w) && !matches!(*w, "!" | "{"))
        .unwrap_or_default();
    let name = word
        .split(['|', ';', '&', '<', '>', '(', ')'])
        .next()
        .unwrap_or_default();
    if name.is_empty() {
        return Err(ScopeError::InvalidArgument(format!(
            "no command name in {command:?}"
        )));
    }
    if name.contains(['$', '`', '*', '?', '[', '\n']) {
        return Err(ScopeError::InvalidArgument(format!(
            "the command name {name:?} is not static (expansion or glob); add it by hand"
        )));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::tests::{invalid_argument, read, write, BASE};
    use crate::edit::{add_resource, edit_text, DocKind, EditOutcome};

    fn route_ok(
        vt: &str,
        resource: &str,
        tool: &str,
        access: Option<&str>,
        category: Option<&str>,
    ) -> (Section, String) {
        route(vt, resource, tool, access, category, Path::new(BASE))
            .unwrap_or_else(|e| panic!("{vt} {resource:?} {tool}: {e}"))
    }

    #[test]
    fn e30_path_validation_routes_to_paths_sections() {
        use Section::*;
        let cases: &[(&str, &str, Option<&str>, Section, &str)] = &[
            // validation type spelled as elisp may send it
            (
                "path",
                "read_file",
                None,
                PathsRead,
                "/home/u/proj/src/main.rs",
            ),
            (
                ":path",
                "read_file",
                None,
                PathsRead,
                "/home/u/proj/src/main.rs",
            ),
            (
                " path ",
                "write_file",
                None,
                PathsWrite,
                "/home/u/proj/src/main.rs",
            ),
        ];
        for &(vt, tool, access, section, value) in cases {
            assert_eq!(
                route_ok(vt, "src/main.rs", tool, access, None),
                (section, value.to_owned()),
                "{vt} {tool}"
            );
        }
    }

    #[test]
    fn e11_read_or_write_section_from_tool_and_access() {
        use Section::*;
        let cases: &[(&str, Option<&str>, &str, Section, &str)] = &[
            (
                "read_file",
                None,
                "notes.txt",
                PathsRead,
                "/home/u/proj/notes.txt",
            ),
            ("list_dir", None, "/etc/", PathsRead, "/etc/**"),
            (
                "grep_files",
                Some("read"),
                "src",
                PathsRead,
                "/home/u/proj/src",
            ),
            (
                "write_file",
                None,
                "out.txt",
                PathsWrite,
                "/home/u/proj/out.txt",
            ),
            (
                "apply_patch",
                None,
                "src/lib.rs",
                PathsWrite,
                "/home/u/proj/src/lib.rs",
            ),
            ("edit_file", None, "a.el", PathsWrite, "/home/u/proj/a.el"),
            (
                "create_file",
                Some("read"),
                "new.md",
                PathsWrite,
                "/home/u/proj/new.md",
            ),
            (
                "run_bash_command",
                Some("write"),
                "build/",
                PathsWrite,
                "/home/u/proj/build/**",
            ),
            (
                "run_bash_command",
                Some("read"),
                ".",
                PathsRead,
                "/home/u/proj",
            ),
            ("run_bash_command", None, "..", PathsRead, "/home/u"),
            (
                "run_bash_command",
                Some(""),
                "x",
                PathsRead,
                "/home/u/proj/x",
            ),
            (
                "read_file",
                Some("write"),
                "y",
                PathsWrite,
                "/home/u/proj/y",
            ),
        ];
        for &(tool, access, resource, section, value) in cases {
            assert_eq!(
                route_ok("path", resource, tool, access, None),
                (section, value.to_owned()),
                "{tool} {access:?} {resource}"
            );
        }
        let m = invalid_argument(route(
            "path",
            "x",
            "run_bash_command",
            Some("execute"),
            None,
            Path::new(BASE),
        ));
        assert_eq!(
            m,
            "unknown access \"execute\": expected \"read\" or \"write\""
        );

        // Into the file: read to paths.read, write to paths.write.
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "scope.yml",
            "paths:\n  read: [\"~/src/**\"]\n  write: [\"~/src/myproj/**\"]\n",
        );
        let out = add_resource(
            &file,
            "path",
            "docs/a.md",
            "read_file",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.section, "paths.read");
        assert_eq!(out.patterns_added, ["/home/u/proj/docs/a.md"]);
        let out = add_resource(
            &file,
            "path",
            "b.txt",
            "write_file",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.section, "paths.write");
        assert_eq!(
            read(&file),
            "paths:\n  read: [\"~/src/**\", \"/home/u/proj/docs/a.md\"]\n  write: \
             [\"~/src/myproj/**\", \"/home/u/proj/b.txt\"]\n"
        );
    }

    #[test]
    fn e15_directory_gets_double_star() {
        let cases: &[(&str, &str)] = &[
            ("src/", "/home/u/proj/src/**"),
            ("/var/log/", "/var/log/**"),
            ("~/notes/", "~/notes/**"),
            ("./", "/home/u/proj/**"),
            ("/", "/**"),
            ("src/**/", "/home/u/proj/src/**"),
            // already a glob, or no trailing slash: kept
            ("src/**", "/home/u/proj/src/**"),
            ("src/*", "/home/u/proj/src/*"),
            ("src/*.rs", "/home/u/proj/src/*.rs"),
            ("src", "/home/u/proj/src"),
        ];
        for &(resource, want) in cases {
            assert_eq!(
                path_pattern(resource, Path::new(BASE)).unwrap(),
                want,
                "{resource}"
            );
        }

        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read:\n    - ~/src/**\n");
        let out = add_resource(
            &file,
            "path",
            "docs/",
            "list_dir",
            None,
            None,
            Path::new(BASE),
        )
        .unwrap();
        assert_eq!(out.patterns_added, ["/home/u/proj/docs/**"]);
        assert_eq!(
            read(&file),
            "paths:\n  read:\n    - ~/src/**\n    - /home/u/proj/docs/**\n"
        );
    }

    #[test]
    fn e44_relative_paths_made_absolute() {
        let cases: &[(&str, &str, &str)] = &[
            (BASE, "src/main.rs", "/home/u/proj/src/main.rs"),
            ("/home/u/proj/", "src/main.rs", "/home/u/proj/src/main.rs"),
            (BASE, "./a/../b", "/home/u/proj/b"),
            (BASE, "..", "/home/u"),
            (BASE, "../../../../x", "/x"),
            (BASE, "a//b/./c", "/home/u/proj/a/b/c"),
            (BASE, "/etc//hosts", "/etc/hosts"),
            (BASE, "  spaced.txt ", "/home/u/proj/spaced.txt"),
            // `~` stays `~`, as the scope's patterns write it
            (BASE, "~/x/./y", "~/x/y"),
            (BASE, "~", "~"),
            (BASE, "~/../x", "~/../x"),
            (BASE, "~bob/src", "~bob/src"),
            ("~/proj", "src", "~/proj/src"),
            ("/", "etc", "/etc"),
        ];
        for &(base, resource, want) in cases {
            assert_eq!(
                path_pattern(resource, Path::new(base)).unwrap(),
                want,
                "{base} + {resource}"
            );
        }
        for (base, resource) in [("proj", "src"), (BASE, ""), (BASE, "  ")] {
            invalid_argument(path_pattern(resource, Path::new(base)));
        }
    }

    #[test]
    fn e31_pattern_validation_routes_to_org_roam() {
        assert_eq!(
            route_ok(
                "pattern",
                "subdirectory:gptel/**",
                "org_roam_search",
                None,
                None
            ),
            (Section::OrgRoamSubdirectory, "gptel/**".to_owned())
        );
        assert_eq!(
            route_ok("pattern", "tags:work", "org_roam_search", None, None),
            (Section::OrgRoamTags, "work".to_owned())
        );
    }

    #[test]
    fn e45_org_roam_resource_format_parsed() {
        let cases: &[(&str, Section, &str)] = &[
            (
                "subdirectory:gptel/**",
                Section::OrgRoamSubdirectory,
                "gptel/**",
            ),
            (
                "subdirectory:projects/",
                Section::OrgRoamSubdirectory,
                "projects/",
            ),
            ("tags:work", Section::OrgRoamTags, "work"),
            (" tags: deep work ", Section::OrgRoamTags, "deep work"),
        ];
        for &(resource, section, value) in cases {
            assert_eq!(
                route_ok("pattern", resource, "t", None, None),
                (section, value.to_owned())
            );
        }
    }

    #[test]
    fn e12_pattern_added_to_org_roam_section() {
        for bad in [
            "gptel/**",
            "subdirectory:",
            "tags: ",
            "tag:work",
            "dir:x",
            "",
        ] {
            let m = invalid_argument(route("pattern", bad, "t", None, None, Path::new(BASE)));
            assert!(m.starts_with("pattern resource"), "{bad}: {m}");
        }
        // Into a preset.md, block style, body untouched.
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "preset.md",
            "---\ndescription: Notes\norg_roam_patterns:\n  subdirectory:\n    - journal/**\n---\n\
             Body: subdirectory: x\n",
        );
        let base = Path::new(BASE);
        add_resource(
            &file,
            "pattern",
            "subdirectory:gptel/**",
            "t",
            None,
            None,
            base,
        )
        .unwrap();
        let out = add_resource(&file, "pattern", "tags:work", "t", None, None, base).unwrap();
        assert_eq!(out.section, "org_roam_patterns.tags");
        assert_eq!(
            read(&file),
            "---\ndescription: Notes\norg_roam_patterns:\n  subdirectory:\n    - journal/**\n    \
             - gptel/**\n  tags:\n    - work\n---\nBody: subdirectory: x\n"
        );
    }

    #[test]
    fn e32_command_validation_routes_to_category() {
        let cases: &[(Option<&str>, Section)] = &[
            (None, Section::ReadOnly),
            (Some(""), Section::ReadOnly),
            (Some("read_only"), Section::ReadOnly),
            (Some("read-only"), Section::ReadOnly),
            (Some("safe_write"), Section::SafeWrite),
            (Some("safe-write"), Section::SafeWrite),
            (Some("dangerous"), Section::Dangerous),
        ];
        for &(category, section) in cases {
            assert_eq!(
                route_ok("command", "make test", "run_bash_command", None, category),
                (section, "make".to_owned()),
                "{category:?}"
            );
        }
        let m = invalid_argument(route(
            "command",
            "ls",
            "run_bash_command",
            None,
            Some("harmless"),
            Path::new(BASE),
        ));
        assert!(
            m.starts_with("unknown command category \"harmless\""),
            "{m}"
        );
    }

    #[test]
    fn e46_command_base_name_extracted() {
        let cases: &[(&str, &str)] = &[
            ("git status -s", "git"),
            ("  ls -la  ", "ls"),
            ("ls -la | grep foo", "ls"),
            ("ls|wc -l", "ls"),
            ("cat file > out", "cat"),
            ("grep -rn 'pattern' .", "grep"),
            ("FOO=1 BAR='a b' make test", "make"),
            ("'git' log", "git"),
            ("/usr/bin/git log", "/usr/bin/git"),
            ("./run.sh --fast", "./run.sh"),
            ("(cd src && make)", "cd"),
            ("echo hi; rm -rf x", "echo"),
        ];
        for &(command, want) in cases {
            assert_eq!(base_command(command).unwrap(), want, "{command}");
        }
        for bad in [
            "",
            "   ",
            "FOO=1",
            "$CMD -x",
            "`which git` log",
            "/???/r? x",
            "'unclosed",
        ] {
            invalid_argument(base_command(bad));
        }
    }

    #[test]
    fn e13_command_added_to_category_list() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(
            dir.path(),
            "scope.yml",
            "bash_tools:\n  categories:\n    read_only: [ls, grep]   # look only\n  deny: [sudo]\n",
        );
        let base = Path::new(BASE);
        let before = std::fs::read(&file).unwrap();
        let out = add_resource(
            &file,
            "command",
            "git status -s",
            "run_bash_command",
            None,
            None,
            base,
        )
        .unwrap();
        let after = std::fs::read(&file).unwrap();
        assert_eq!(
            out,
            EditOutcome {
                file: file.clone(),
                section: "bash_tools.categories.read_only".into(),
                patterns_added: vec!["git".into()],
                already_present: vec![],
                sha256_before: crate::scope::trust::sha256_hex(&before),
                sha256_after: crate::scope::trust::sha256_hex(&after),
            }
        );
        assert_ne!(before, after);
        add_resource(
            &file,
            "command",
            "mkdir -p build",
            "run_bash_command",
            None,
            Some("safe_write"),
            base,
        )
        .unwrap();
        assert_eq!(
            read(&file),
            "bash_tools:\n  categories:\n    read_only: [ls, grep, git]   # look only\n    \
             safe_write: [mkdir]\n  deny: [sudo]\n"
        );
    }

    #[test]
    fn env_resources_go_to_environment_include() {
        assert_eq!(
            route_ok("env", "env:NODE_ENV", "run_bash_command", None, None),
            (Section::EnvironmentInclude, "NODE_ENV".to_owned())
        );
        assert_eq!(
            route_ok("env", " env:CARGO_HOME ", "run_command", None, None),
            (Section::EnvironmentInclude, "CARGO_HOME".to_owned())
        );
        for bad in ["NODE_ENV", "env:", "env:A=B", "env:AWS_*"] {
            let m = invalid_argument(route("env", bad, "t", None, None, Path::new(BASE)));
            assert!(m.starts_with("not a variable: "), "{bad}: {m}");
        }
        let text = "# mine\npaths:\n  read: [\"a/**\"]  # keep\n";
        let e = edit_text(
            "t",
            text,
            DocKind::Yaml,
            Section::EnvironmentInclude,
            &["NODE_ENV".to_owned()],
        )
        .unwrap();
        assert_eq!(
            e.text.as_deref(),
            Some(
                "# mine\npaths:\n  read: [\"a/**\"]  # keep\nenvironment:\n  include: [NODE_ENV]\n"
            )
        );
    }

    #[test]
    fn e33_unknown_validation_type_is_an_error() {
        for vt in ["bogus", "", "paths", "org-roam", "shell"] {
            let m = invalid_argument(route(vt, "x", "t", None, None, Path::new(BASE)));
            assert_eq!(
                m,
                format!(
                    "unknown validation type {:?}: expected \"path\", \"pattern\", \
                     \"command\" or \"env\"; nothing was added to the scope",
                    vt.trim()
                )
            );
        }
        // Nothing is written through add_resource either.
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
        invalid_argument(add_resource(
            &file,
            "bogus",
            "x",
            "t",
            None,
            None,
            Path::new(BASE),
        ));
        assert_eq!(read(&file), "paths:\n  read: []\n");
    }
}
