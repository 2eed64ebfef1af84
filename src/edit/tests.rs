//! Tests of the whole edit, through [`edit_text`] and [`add_to_scope`]: the layout tables, every
//! combination of layouts, mangled documents, and the scenarios that cut across the parts (E14,
//! E16, E34, E36, E47). The helpers are shared with the tests in the other files.

use super::*;

pub(super) const BASE: &str = "/home/u/proj";

pub(super) fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

/// The text after adding `values`; panics when nothing changed or on error.
pub(super) fn edited(doc: &str, kind: DocKind, section: Section, values: &[&str]) -> String {
    match edit_text("test", doc, kind, section, &strings(values)) {
        Ok(TextEdit { text: Some(t), .. }) => t,
        other => panic!("{section}: {values:?} in\n{doc}\n=> {other:?}"),
    }
}

pub(super) fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, content).unwrap();
    path
}

pub(super) fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap()
}

/// Files in `dir`, sorted (to see that no temporary file was left behind).
pub(super) fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

pub(super) fn invalid_argument<T: fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(ScopeError::InvalidArgument(m)) => m,
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

pub(super) fn edit_error<T: fmt::Debug>(r: Result<T>) -> String {
    match r {
        Err(ScopeError::Edit { message, .. }) => message,
        other => panic!("expected an Edit error, got {other:?}"),
    }
}

#[test]
fn e14_duplicate_not_added() {
    struct Case {
        doc: &'static str,
        section: Section,
        values: &'static [&'static str],
        added: &'static [&'static str],
        present: &'static [&'static str],
        want: Option<&'static str>,
    }
    let cases = [
        Case {
            doc: "paths:\n  read:\n    - ~/a/**\n",
            section: Section::PathsRead,
            values: &["~/a/**"],
            added: &[],
            present: &["~/a/**"],
            want: None,
        },
        // The same value, differently quoted.
        Case {
            doc: "paths:\n  read: [\"~/a/**\", '~/b/**']\n",
            section: Section::PathsRead,
            values: &["~/b/**", "~/a/**"],
            added: &[],
            present: &["~/b/**", "~/a/**"],
            want: None,
        },
        Case {
            doc: "bash_tools:\n  categories:\n    read_only: ['git log']\n",
            section: Section::ReadOnly,
            values: &["git log"],
            added: &[],
            present: &["git log"],
            want: None,
        },
        // Duplicates among the values themselves are added once.
        Case {
            doc: "bash_tools:\n  categories:\n    read_only: [ls, grep]\n",
            section: Section::ReadOnly,
            values: &["grep", "cat", "grep", "cat"],
            added: &["cat"],
            present: &["grep"],
            want: Some("bash_tools:\n  categories:\n    read_only: [ls, grep, cat]\n"),
        },
    ];
    for c in cases {
        let edit = edit_text("t", c.doc, DocKind::Yaml, c.section, &strings(c.values)).unwrap();
        assert_eq!(edit.patterns_added, c.added, "{}", c.doc);
        assert_eq!(edit.already_present, c.present, "{}", c.doc);
        assert_eq!(edit.text.as_deref(), c.want, "{}", c.doc);
    }

    // On disk: the file is not rewritten at all.
    let dir = tempfile::tempdir().unwrap();
    let doc = "# mine\npaths:\n  write:\n    - \"~/src/**\"   # code\n";
    let file = write(dir.path(), "scope.yml", doc);
    let before = fs::metadata(&file).unwrap().modified().unwrap();
    let out = add_to_scope(&file, Section::PathsWrite, &strings(&["~/src/**"])).unwrap();
    assert_eq!(out.patterns_added, Vec::<String>::new());
    assert_eq!(out.already_present, ["~/src/**"]);
    assert_eq!(
        out.message(),
        format!(
            "\"~/src/**\" already in paths.write in {}; nothing changed.",
            file.display()
        )
    );
    assert_eq!(read(&file), doc);
    assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), before);
    assert_eq!(listing(dir.path()), ["scope.yml"]);
}

/// A richly commented scope.yml; every comment must survive every edit.
const RICH: &str = "\
# scope.yml — what the assistant may touch in this project.
# Edited by hand; \"Add to scope\" must keep every comment.

paths:                       # globs; ~ expands
  read:
    # sources
    - \"~/src/**\"             # all my code
    - ~/notes/**
    # - ~/secrets/**  (never)
  write: [\"~/src/myproj/**\"]   # only this project
  deny:
    - \"**/.git/objects/**\"
    - \"**/.env\"

bash_tools:
  categories:
    read_only: [ls, grep, \"git log\"]   # inspection
    safe_write:
      - mkdir   # dirs
      - touch
    # dangerous: nothing yet
  deny: [sudo, dd]
  timeout: 30   # seconds

# org-roam
org_roam_patterns: {subdirectory: [], tags: []}   # none yet
# end
";

const RICH_AFTER: &str = "\
# scope.yml — what the assistant may touch in this project.
# Edited by hand; \"Add to scope\" must keep every comment.

paths:                       # globs; ~ expands
  read:
    # sources
    - \"~/src/**\"             # all my code
    - ~/notes/**
    - /home/u/proj/docs/**
    - \"**/*.md\"
    # - ~/secrets/**  (never)
  write: [\"~/src/myproj/**\", \"/tmp/out/**\"]   # only this project
  deny:
    - \"**/.git/objects/**\"
    - \"**/.env\"

bash_tools:
  categories:
    read_only: [ls, grep, \"git log\", cat]   # inspection
    safe_write:
      - mkdir   # dirs
      - touch
      - git add
    dangerous: [rm]
    # dangerous: nothing yet
  deny: [sudo, dd]
  timeout: 30   # seconds

# org-roam
org_roam_patterns: {subdirectory: [gptel/**], tags: [work]}   # none yet
# end
";

#[test]
fn e16_commented_scope_yml_keeps_every_byte_outside_the_lists() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "scope.yml", RICH);
    // (section, values, added, already present)
    type Step = (
        Section,
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );
    let steps: &[Step] = &[
        (
            Section::PathsRead,
            &["/home/u/proj/docs/**", "**/*.md"],
            &["/home/u/proj/docs/**", "**/*.md"],
            &[],
        ),
        (Section::PathsWrite, &["/tmp/out/**"], &["/tmp/out/**"], &[]),
        (Section::Dangerous, &["rm"], &["rm"], &[]),
        (Section::OrgRoamTags, &["work"], &["work"], &[]),
        (
            Section::OrgRoamSubdirectory,
            &["gptel/**"],
            &["gptel/**"],
            &[],
        ),
        (Section::ReadOnly, &["cat", "ls"], &["cat"], &["ls"]),
        (Section::SafeWrite, &["git add"], &["git add"], &[]),
    ];
    for &(section, values, added, present) in steps {
        let out = add_to_scope(&file, section, &strings(values)).unwrap();
        assert_eq!(out.section, section.dotted());
        assert_eq!(out.patterns_added, added, "{section}");
        assert_eq!(out.already_present, present, "{section}");
    }
    assert_eq!(read(&file), RICH_AFTER);
    assert_eq!(listing(dir.path()), ["scope.yml"]);
    // Every comment of the original, in order.
    let comments = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| l.find('#').map(|i| l[i..].to_owned()))
            .collect()
    };
    assert_eq!(comments(RICH), comments(RICH_AFTER));
    // Doing it all again changes nothing.
    for &(section, values, _, _) in steps {
        let out = add_to_scope(&file, section, &strings(values)).unwrap();
        assert!(out.patterns_added.is_empty());
    }
    assert_eq!(read(&file), RICH_AFTER);
    // And the result is a valid scope for the loader.
    let scope: crate::scope::Scope = serde_yaml::from_str(RICH_AFTER).unwrap();
    assert_eq!(scope.bash_tools.categories.dangerous, ["rm"]);
    assert_eq!(scope.paths.read[3], "**/*.md");
}

const PRESET: &str = "\
---
description: Coding helper   # shown in the menu
backend: Claude
model: claude-sonnet-4
tools: [read_file, run_bash_command]
paths:
  read:
  - ~/src/**          # indentless list
---
You are a careful assistant.

---
A horizontal rule above; paths: [not yaml]
";

const PRESET_AFTER: &str = "\
---
description: Coding helper   # shown in the menu
backend: Claude
model: claude-sonnet-4
tools: [read_file, run_bash_command]
paths:
  read:
  - ~/src/**          # indentless list
  - /home/u/proj/**
  write:
  - /home/u/proj/out/**
bash_tools:
  categories:
    read_only:
    - git
---
You are a careful assistant.

---
A horizontal rule above; paths: [not yaml]
";

#[test]
fn e16_preset_front_matter_edited_body_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "preset.md", PRESET);
    add_to_scope(&file, Section::PathsRead, &strings(&["/home/u/proj/**"])).unwrap();
    add_to_scope(
        &file,
        Section::PathsWrite,
        &strings(&["/home/u/proj/out/**"]),
    )
    .unwrap();
    add_to_scope(&file, Section::ReadOnly, &strings(&["git"])).unwrap();
    assert_eq!(read(&file), PRESET_AFTER);
    let out = add_to_scope(&file, Section::PathsRead, &strings(&["~/src/**"])).unwrap();
    assert_eq!(out.already_present, ["~/src/**"]);
    assert_eq!(read(&file), PRESET_AFTER);
}

#[test]
fn e16_layouts_changed_only_where_the_list_is() {
    struct Case {
        name: &'static str,
        kind: DocKind,
        doc: &'static str,
        section: Section,
        values: &'static [&'static str],
        want: &'static str,
    }
    use DocKind::{FrontMatter, Yaml};
    use Section::*;
    let x: &[&str] = &["/x/**"];
    let cases = [
        Case {
            name: "block list, indented, trailing comment on the last item",
            kind: Yaml,
            doc: "paths:\n  read:\n    - ~/a/**\n    - ~/b/**   # b\n  write: []\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n    - ~/a/**\n    - ~/b/**   # b\n    - /x/**\n  write: []\n",
        },
        Case {
            name: "block list at the key's own indentation",
            kind: Yaml,
            doc: "paths:\n  read:\n  - ~/a/**\n  write: []\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n  - ~/a/**\n  - /x/**\n  write: []\n",
        },
        Case {
            name: "spacing after the dash kept",
            kind: Yaml,
            doc: "paths:\n  read:\n    -   ~/a/**\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n    -   ~/a/**\n    -   /x/**\n",
        },
        Case {
            name: "comments inside the block list",
            kind: Yaml,
            doc: "paths:\n  read:\n    # first\n    - ~/a/**\n\n    # second\n    - ~/b/**\n    # after\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n    # first\n    - ~/a/**\n\n    # second\n    - ~/b/**\n    - /x/**\n    # after\n",
        },
        Case {
            name: "flow list, mixed quoting, trailing comment",
            kind: Yaml,
            doc: "paths:\n  read: [~/a/**, \"~/b/**\"]   # two\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [~/a/**, \"~/b/**\", /x/**]   # two\n",
        },
        Case {
            name: "flow list, all double-quoted",
            kind: Yaml,
            doc: "paths:\n  read: [\"~/a/**\"]\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [\"~/a/**\", \"/x/**\"]\n",
        },
        Case {
            name: "flow list, all single-quoted",
            kind: Yaml,
            doc: "paths:\n  read: ['~/a/**']\n",
            section: PathsRead,
            values: &["/x/**", "it's"],
            want: "paths:\n  read: ['~/a/**', '/x/**', 'it''s']\n",
        },
        Case {
            name: "empty flow list",
            kind: Yaml,
            doc: "paths:\n  read: []  # none yet\n  write: [~/w/**]\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [/x/**]  # none yet\n  write: [~/w/**]\n",
        },
        Case {
            name: "empty key among flow lists",
            kind: Yaml,
            doc: "paths:\n  read:\n  write: [~/w/**]\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [/x/**]\n  write: [~/w/**]\n",
        },
        Case {
            name: "empty key with a comment among block lists",
            kind: Yaml,
            doc: "paths:\n  read:   # to do\n  deny:\n    - \"**/.env\"\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:   # to do\n    - /x/**\n  deny:\n    - \"**/.env\"\n",
        },
        Case {
            name: "null list among flow lists",
            kind: Yaml,
            doc: "paths:\n  read: ~   # nothing\n  write: [~/w/**]\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [/x/**]   # nothing\n  write: [~/w/**]\n",
        },
        Case {
            name: "null list among block lists",
            kind: Yaml,
            doc: "paths:\n  read: null\n  write:\n  - ~/w/**\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n  - /x/**\n  write:\n  - ~/w/**\n",
        },
        Case {
            name: "one item a line, trailing comma",
            kind: Yaml,
            doc: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n    ]\n",
            section: ReadOnly,
            values: &["cat", "wc"],
            want: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n      cat,\n      wc,\n    ]\n",
        },
        Case {
            name: "one item a line, no trailing comma, comment on the last",
            kind: Yaml,
            doc: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep   # search\n    ]\n",
            section: ReadOnly,
            values: &["cat", "wc"],
            want: "bash_tools:\n  categories:\n    read_only: [\n      ls,\n      grep,   # search\n      cat,\n      wc\n    ]\n",
        },
        Case {
            name: "flow list wrapped over lines",
            kind: Yaml,
            doc: "bash_tools:\n  categories:\n    read_only: [ls, grep,\n                find]\n",
            section: ReadOnly,
            values: &["cat"],
            want: "bash_tools:\n  categories:\n    read_only: [ls, grep,\n                find, cat]\n",
        },
        Case {
            name: "missing list, four-space indentation",
            kind: Yaml,
            doc: "paths:\n    read:\n        - ~/a/**\n",
            section: PathsWrite,
            values: x,
            want: "paths:\n    read:\n        - ~/a/**\n    write:\n        - /x/**\n",
        },
        Case {
            name: "missing keys in a document of block lists",
            kind: Yaml,
            doc: "paths:\n  read:\n    - ~/a/**\n",
            section: ReadOnly,
            values: &["ls"],
            want: "paths:\n  read:\n    - ~/a/**\nbash_tools:\n  categories:\n    read_only:\n      - ls\n",
        },
        Case {
            name: "missing keys in a document of flow lists",
            kind: Yaml,
            doc: "paths:\n  read: [~/a/**]\n\n# trailing comment\n",
            section: ReadOnly,
            values: &["ls", "git log"],
            want: "paths:\n  read: [~/a/**]\n\n# trailing comment\nbash_tools:\n  categories:\n    read_only: [ls, git log]\n",
        },
        Case {
            name: "missing middle key",
            kind: Yaml,
            doc: "bash_tools:\n  deny: [sudo]\n  timeout: 30\n",
            section: SafeWrite,
            values: &["touch"],
            want: "bash_tools:\n  deny: [sudo]\n  timeout: 30\n  categories:\n    safe_write: [touch]\n",
        },
        Case {
            name: "comments only",
            kind: Yaml,
            doc: "# nothing yet\n",
            section: PathsRead,
            values: x,
            want: "# nothing yet\npaths:\n  read: [/x/**]\n",
        },
        Case {
            name: "empty file",
            kind: Yaml,
            doc: "",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [/x/**]\n",
        },
        Case {
            name: "no line break at the end, new key",
            kind: Yaml,
            doc: "paths:\n  read: [~/a/**]",
            section: PathsWrite,
            values: x,
            want: "paths:\n  read: [~/a/**]\n  write: [/x/**]\n",
        },
        Case {
            name: "no line break at the end, block item",
            kind: Yaml,
            doc: "paths:\n  read:\n    - ~/a/**",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n    - ~/a/**\n    - /x/**\n",
        },
        Case {
            name: "CRLF line endings",
            kind: Yaml,
            doc: "paths:\r\n  read:\r\n    - ~/a/**\r\n",
            section: PathsWrite,
            values: x,
            want: "paths:\r\n  read:\r\n    - ~/a/**\r\n  write:\r\n    - /x/**\r\n",
        },
        Case {
            name: "flow mapping, list inside",
            kind: Yaml,
            doc: "org_roam_patterns: {subdirectory: [], tags: [work]}\n",
            section: OrgRoamSubdirectory,
            values: &["gptel/**"],
            want: "org_roam_patterns: {subdirectory: [gptel/**], tags: [work]}\n",
        },
        Case {
            name: "flow mapping, key missing",
            kind: Yaml,
            doc: "org_roam_patterns: {tags: [work]}\n",
            section: OrgRoamSubdirectory,
            values: &["gptel/**"],
            want: "org_roam_patterns: {tags: [work], subdirectory: [gptel/**]}\n",
        },
        Case {
            name: "flow mapping, null list",
            kind: Yaml,
            doc: "org_roam_patterns: {subdirectory: ~, tags: []}\n",
            section: OrgRoamSubdirectory,
            values: &["gptel/**"],
            want: "org_roam_patterns: {subdirectory: [gptel/**], tags: []}\n",
        },
        Case {
            name: "empty flow mapping",
            kind: Yaml,
            doc: "paths: {}\n",
            section: PathsRead,
            values: x,
            want: "paths: {read: [/x/**]}\n",
        },
        Case {
            name: "nested flow mappings",
            kind: Yaml,
            doc: "bash_tools: {categories: {read_only: [ls]}, timeout: 30}\n",
            section: SafeWrite,
            values: &["touch", "a,b"],
            want: "bash_tools: {categories: {read_only: [ls], safe_write: [touch, \"a,b\"]}, timeout: 30}\n",
        },
        Case {
            name: "flow mapping over lines",
            kind: Yaml,
            doc: "paths: {\n  read: [~/a/**],  # mine\n  write: []\n}\n",
            section: PathsRead,
            values: x,
            want: "paths: {\n  read: [~/a/**, /x/**],  # mine\n  write: []\n}\n",
        },
        Case {
            name: "empty parent mapping",
            kind: Yaml,
            doc: "paths:\nbash_tools:\n  deny: [sudo]\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read: [/x/**]\nbash_tools:\n  deny: [sudo]\n",
        },
        Case {
            name: "null parent mapping",
            kind: Yaml,
            doc: "paths: ~  # later\n",
            section: PathsRead,
            values: x,
            want: "paths:  # later\n  read: [/x/**]\n",
        },
        Case {
            name: "document markers",
            kind: Yaml,
            doc: "%YAML 1.2\n---\npaths:\n  read: [~/a/**]\n...\n# trailer\n",
            section: ReadOnly,
            values: &["ls"],
            want: "%YAML 1.2\n---\npaths:\n  read: [~/a/**]\nbash_tools:\n  categories:\n    read_only: [ls]\n...\n# trailer\n",
        },
        Case {
            name: "quoted keys",
            kind: Yaml,
            doc: "\"paths\":\n  'read': [~/a/**]\n",
            section: PathsRead,
            values: x,
            want: "\"paths\":\n  'read': [~/a/**, /x/**]\n",
        },
        Case {
            name: "block scalar holding key-like text",
            kind: Yaml,
            doc: "notes: |\n  paths:\n    read: [nope]\ntools: [a]\n",
            section: PathsRead,
            values: x,
            want: "notes: |\n  paths:\n    read: [nope]\ntools: [a]\npaths:\n  read: [/x/**]\n",
        },
        Case {
            name: "keys of the same name nested deeper are not the section",
            kind: Yaml,
            doc: "tool_commands:\n  posix:\n    paths:\n      read: [no]\npaths:\n  write: [~/w/**]\n",
            section: PathsRead,
            values: x,
            want: "tool_commands:\n  posix:\n    paths:\n      read: [no]\npaths:\n  write: [~/w/**]\n  read: [/x/**]\n",
        },
        Case {
            name: "byte order mark kept",
            kind: Yaml,
            doc: "\u{feff}paths:\n  read: [~/a/**]\n",
            section: PathsRead,
            values: x,
            want: "\u{feff}paths:\n  read: [~/a/**, /x/**]\n",
        },
        Case {
            name: "last item quoted over two lines",
            kind: Yaml,
            doc: "paths:\n  read:\n    - ~/a/**\n    - \"long\n      value\"\n  write: []\n",
            section: PathsRead,
            values: x,
            want: "paths:\n  read:\n    - ~/a/**\n    - \"long\n      value\"\n    - /x/**\n  write: []\n",
        },
        Case {
            name: "comments between flow items",
            kind: Yaml,
            doc: "bash_tools:\n  categories:\n    read_only: [ls,  # one\n      grep]  # two\n",
            section: ReadOnly,
            values: &["cat"],
            want: "bash_tools:\n  categories:\n    read_only: [ls,  # one\n      grep, cat]  # two\n",
        },
        Case {
            name: "one item a line, CRLF",
            kind: Yaml,
            doc: "bash_tools:\r\n  categories:\r\n    read_only: [\r\n      ls\r\n    ]\r\n",
            section: ReadOnly,
            values: &["cat"],
            want: "bash_tools:\r\n  categories:\r\n    read_only: [\r\n      ls,\r\n      cat\r\n    ]\r\n",
        },
        Case {
            name: "a list at the top level's indentation before the section",
            kind: Yaml,
            doc: "tools:\n- a\npaths:\n  read: []\n",
            section: PathsRead,
            values: x,
            want: "tools:\n- a\npaths:\n  read: [/x/**]\n",
        },
        Case {
            name: "comment at column 0 inside a mapping",
            kind: Yaml,
            doc: "paths:\n  read: [a]\n# col 0\n  write: [b]\n",
            section: PathsWrite,
            values: x,
            want: "paths:\n  read: [a]\n# col 0\n  write: [b, /x/**]\n",
        },
        Case {
            name: "space before the colon",
            kind: Yaml,
            doc: "paths :\n  read: []\n",
            section: PathsRead,
            values: x,
            want: "paths :\n  read: [/x/**]\n",
        },
        Case {
            name: "JSON document",
            kind: Yaml,
            doc: "{\"paths\": {\"read\": [\"a\"]}}\n",
            section: PathsRead,
            values: x,
            want: "{\"paths\": {\"read\": [\"a\", \"/x/**\"]}}\n",
        },
        Case {
            name: "JSON document, section missing",
            kind: Yaml,
            doc: "{\"paths\": {}}\n",
            section: ReadOnly,
            values: &["ls"],
            want: "{\"paths\": {}, bash_tools: {categories: {read_only: [ls]}}}\n",
        },
        Case {
            name: "flow list continued at a lower indentation",
            kind: Yaml,
            doc: "paths:\n  read: [a,\nb]\n",
            section: PathsWrite,
            values: x,
            want: "paths:\n  read: [a,\nb]\n  write: [/x/**]\n",
        },
        Case {
            name: "key-like lines inside a flow mapping are not keys",
            kind: Yaml,
            doc: "notes: {\npaths: x\n}\n",
            section: PathsRead,
            values: x,
            want: "notes: {\npaths: x\n}\npaths:\n  read: [/x/**]\n",
        },
        Case {
            name: "markdown without front matter gets one",
            kind: FrontMatter,
            doc: "# Title\n\nBody\n",
            section: PathsRead,
            values: x,
            want: "---\npaths:\n  read: [/x/**]\n---\n# Title\n\nBody\n",
        },
        Case {
            name: "empty front matter",
            kind: FrontMatter,
            doc: "---\n---\nBody\n",
            section: PathsRead,
            values: x,
            want: "---\npaths:\n  read: [/x/**]\n---\nBody\n",
        },
        Case {
            name: "front matter closed by '...'",
            kind: FrontMatter,
            doc: "---\ntitle: t\n...\nBody: [a]\n",
            section: PathsRead,
            values: x,
            want: "---\ntitle: t\npaths:\n  read: [/x/**]\n...\nBody: [a]\n",
        },
        Case {
            name: "CRLF front matter",
            kind: FrontMatter,
            doc: "---\r\npaths:\r\n  read:\r\n  - ~/a/**\r\n---\r\nBody\r\n",
            section: PathsRead,
            values: x,
            want: "---\r\npaths:\r\n  read:\r\n  - ~/a/**\r\n  - /x/**\r\n---\r\nBody\r\n",
        },
    ];
    for c in cases {
        assert_eq!(
            edited(c.doc, c.kind, c.section, c.values),
            c.want,
            "{}",
            c.name
        );
    }
}

/// Whether `small` is a subsequence of `big` (nothing of it was removed).
fn is_subsequence(small: &str, big: &str) -> bool {
    let mut big = big.chars();
    small.chars().all(|c| big.any(|d| d == c))
}

#[test]
fn e16_every_layout_combination_keeps_the_original_text() {
    let paths = [
        "",
        "paths:\n  read: [a]   # c\n",
        "paths:\n  read:\n    - a  # c\n  write:\n  - b\n",
        "paths: {read: [a], write: []}\n",
        "paths:   # c\n  deny: [x]\n",
        "paths:\n    write: [\n        \"b\",\n    ]\n",
    ];
    let bash = [
        "",
        "bash_tools:\n  categories:\n    read_only: [ls]\n    # comment\n  deny: [sudo]\n",
        "bash_tools:\n  timeout: 30\n",
        "bash_tools:\n  categories:\n    safe_write:\n    - touch\n",
        "bash_tools: {categories: {dangerous: [rm]}}\n",
    ];
    let org = [
        "",
        "org_roam_patterns: {subdirectory: [], tags: []}\n",
        "org_roam_patterns:\n  tags:\n    - work\n",
    ];
    let other = [
        "",
        "# header\ndescription: x\n\n",
        "notes: |\n  paths:\n   read: []\n",
    ];
    let values = strings(&["/x/**", "**/.env", "git log"]);
    let mut edits = 0;
    for p in paths {
        for b in bash {
            for o in org {
                for h in other {
                    let yaml = format!("{h}{p}{b}{o}");
                    let reordered = format!("{o}{b}{h}{p}");
                    let md = format!("---\n{yaml}---\nBody\n\n---\npaths: [body]\n");
                    let docs = [
                        (yaml.as_str(), DocKind::Yaml),
                        (reordered.as_str(), DocKind::Yaml),
                        (md.as_str(), DocKind::FrontMatter),
                    ];
                    for (doc, kind) in docs {
                        for section in Section::ALL {
                            let new = edited(doc, kind, section, &["/x/**", "**/.env", "git log"]);
                            assert!(is_subsequence(doc, &new), "{section}:\n{doc}\n=>\n{new}");
                            if kind == DocKind::FrontMatter {
                                assert!(new.ends_with("---\nBody\n\n---\npaths: [body]\n"));
                            }
                            let again = edit_text("t", &new, kind, section, &values).unwrap();
                            assert_eq!(again.text, None, "{section}:\n{new}");
                            assert_eq!(again.already_present, values);
                            edits += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(edits, 6 * 5 * 3 * 3 * 3 * 8);
}

#[test]
fn mangled_documents_never_panic() {
    // Deterministic pseudo-random mutations of the fixtures: characters that matter to
    // YAML deleted, inserted or swapped. Every outcome is an error or a verified edit.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let alphabet: Vec<char> = " \n\t-:#[]{},'\"&*!|>~?%@\r".chars().collect();
    let fixtures = [
        RICH,
        PRESET,
        "paths:\n  read: [\n    a,\n  ]\n",
        "a: {b: [c, d]}\n",
    ];
    let (mut ok, mut failed) = (0, 0);
    for round in 0..1500 {
        let fixture = fixtures[round % fixtures.len()];
        let mut chars: Vec<char> = fixture.chars().collect();
        for _ in 0..1 + next(3) {
            let at = next(chars.len() + 1);
            match next(3) {
                0 if at < chars.len() => {
                    chars.remove(at);
                }
                1 if at < chars.len() => chars[at] = alphabet[next(alphabet.len())],
                _ => chars.insert(at, alphabet[next(alphabet.len())]),
            }
        }
        let doc: String = chars.into_iter().collect();
        let kind = if fixture == PRESET {
            DocKind::FrontMatter
        } else {
            DocKind::Yaml
        };
        let section = Section::ALL[round % Section::ALL.len()];
        match edit_text("t", &doc, kind, section, &strings(&["/x/**", "*"])) {
            Ok(TextEdit {
                text: Some(new), ..
            }) => {
                assert!(is_subsequence(&doc, &new) || doc.contains('~') || doc.contains("null"));
                ok += 1;
            }
            Ok(TextEdit { text: None, .. }) => ok += 1,
            Err(ScopeError::Edit { message, .. }) => {
                // Every refusal says that the file was not changed.
                let lower = message.to_lowercase();
                assert!(
                    lower.contains("nothing was added") || lower.contains("left untouched"),
                    "{message}"
                );
                failed += 1;
            }
            Err(e) => panic!("unexpected error kind: {e}"),
        }
    }
    // Both outcomes were exercised.
    assert!(ok > 0 && failed > 0, "{ok} edited, {failed} refused");
}

#[test]
fn e34_missing_document_errors_with_explanation() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["scope.yml", "preset.md"] {
        let file = dir.path().join(name);
        let m = edit_error(add_to_scope(
            &file,
            Section::PathsRead,
            &strings(&["/x/**"]),
        ));
        assert_eq!(
            m,
            format!(
                "there is no scope document at {}. Create it (a scope.yml, or a preset.md \
                 whose YAML front matter holds the scope) in the session directory, or \
                 edit the scope by hand; nothing was added",
                file.display()
            )
        );
        assert!(!file.exists());
    }
    assert!(listing(dir.path()).is_empty());
    // The error names the file and is the edit error symbol in Emacs.
    let file = dir.path().join("scope.yml");
    let err = add_to_scope(&file, Section::PathsRead, &strings(&["/x/**"])).unwrap_err();
    assert_eq!(err.symbol(), "gptel-scope-edit-error");
    assert!(err
        .to_string()
        .starts_with(&format!("cannot edit {}: there is no", file.display())));
}

#[test]
fn e36_unparsable_or_unexpected_document_left_untouched() {
    let cases: &[(&str, &str, Section, &str)] = &[
        (
            "scope.yml",
            "paths:\n  read: [a\n  write: []\n",
            Section::PathsRead,
            "The document does not parse (line 3 of the file): ",
        ),
        (
            "preset.md",
            "---\ndescription: x\npaths: [\n---\nBody\n",
            Section::PathsRead,
            "The YAML front matter does not parse (line 4 of the file): ",
        ),
        (
            "scope.yml",
            "paths: {}\npaths: {}\n",
            Section::PathsRead,
            "The document does not parse",
        ),
        (
            "scope.yml",
            "a: 1\n---\nb: 2\n",
            Section::PathsRead,
            "The document does not parse",
        ),
        (
            "preset.md",
            "---\npaths: {}\nBody without a closing fence\n",
            Section::PathsRead,
            "the front matter opened by '---' on line 1 is not closed",
        ),
        (
            "scope.yml",
            "paths:\n  read: ~/src/**\n",
            Section::PathsRead,
            "`paths.read` is not a list; nothing was added",
        ),
        (
            "scope.yml",
            "paths: [a, b]\n",
            Section::PathsWrite,
            "`paths` is not a mapping; nothing was added",
        ),
        (
            "scope.yml",
            "- a\n- b\n",
            Section::ReadOnly,
            "the document is not a mapping of keys; nothing was added",
        ),
        (
            "scope.yml",
            "base: &b [x]\npaths:\n  read: *b\n",
            Section::PathsRead,
            "cannot add to `paths.read` automatically: it is an alias of another value; the \
             file was left untouched, edit it by hand",
        ),
        (
            "scope.yml",
            "paths: &p {read: [a]}\n",
            Section::PathsRead,
            "cannot add to `paths` automatically: it carries an anchor",
        ),
        (
            "scope.yml",
            "paths:\n  read: !!seq [a]\n",
            Section::PathsRead,
            "cannot add to `paths.read` automatically: it carries a tag",
        ),
        (
            "scope.yml",
            "--- {paths: {read: [a]}}\n",
            Section::PathsRead,
            "a '---' line with content on it is not supported",
        ),
        (
            "scope.yml",
            "paths:\n  {read: [a]}\n",
            Section::PathsRead,
            "cannot add to `paths` automatically: its layout is not one this editor changes",
        ),
        (
            "scope.yml",
            "? paths\n: {read: [a]}\n",
            Section::PathsRead,
            "cannot add to `paths` automatically: the document is not a block mapping",
        ),
    ];
    for &(name, doc, section, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), name, doc);
        let m = edit_error(add_to_scope(&file, section, &strings(&["/x/**"])));
        assert!(m.starts_with(want), "{doc:?}:\n{m}\nwanted: {want}");
        assert_eq!(read(&file), doc);
        assert_eq!(listing(dir.path()), [name]);
    }
}

#[test]
fn e47_added_value_matches_what_validation_expects() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "scope.yml", "paths:\n  read: []\n");
    let base = Path::new(BASE);
    let path = add_resource(
        &file,
        "path",
        "src/",
        "run_bash_command",
        Some("write"),
        None,
        base,
    )
    .unwrap();
    let cmd = add_resource(
        &file,
        "command",
        "cargo test --all",
        "run_bash_command",
        None,
        None,
        base,
    )
    .unwrap();
    let tag = add_resource(
        &file,
        "pattern",
        "tags:work",
        "org_roam_search",
        None,
        None,
        base,
    )
    .unwrap();
    let text = read(&file);
    assert_eq!(
        text,
        "paths:\n  read: []\n  write: [/home/u/proj/src/**]\nbash_tools:\n  categories:\n    \
         read_only: [cargo]\norg_roam_patterns:\n  tags: [work]\n"
    );
    // The loader's own types read it, and the values are what validation compares with.
    let scope: crate::scope::Scope = serde_yaml::from_str(&text).unwrap();
    assert_eq!(scope.paths.write, path.patterns_added);
    assert_eq!(scope.bash_tools.categories.read_only, cmd.patterns_added);
    assert_eq!(scope.org_roam_patterns.tags, tag.patterns_added);
    let glob = globset::Glob::new(&scope.paths.write[0])
        .unwrap()
        .compile_matcher();
    assert!(glob.is_match("/home/u/proj/src/main.rs"));
    assert!(glob.is_match("/home/u/proj/src/deep/er/mod.rs"));
    assert!(!glob.is_match("/home/u/proj/other/x"));
    assert_eq!(
        base_command("cargo test --all").unwrap(),
        scope.bash_tools.categories.read_only[0]
    );
}

#[test]
fn section_names_round_trip() {
    for s in Section::ALL {
        assert_eq!(Section::from_dotted(s.dotted()), Some(s));
        assert_eq!(s.key_path().join("."), s.dotted());
        assert_eq!(s.to_string(), s.dotted());
    }
    assert_eq!(Section::from_dotted("paths.deny"), None);
}

#[test]
fn outcome_messages() {
    let out = |added: &[&str], present: &[&str]| EditOutcome {
        file: PathBuf::from("/p/scope.yml"),
        section: "paths.read".into(),
        patterns_added: strings(added),
        already_present: strings(present),
        sha256_before: String::new(),
        sha256_after: String::new(),
    };
    assert_eq!(
        out(&["a"], &[]).message(),
        "Added \"a\" to paths.read in /p/scope.yml."
    );
    assert_eq!(
        out(&["a", "b"], &["c"]).message(),
        "Added \"a\", \"b\" to paths.read in /p/scope.yml; \"c\" already there."
    );
    assert_eq!(
        out(&[], &[]).message(),
        "Nothing to add to paths.read in /p/scope.yml."
    );
    let json = serde_json::to_value(out(&["a"], &[])).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"file": "/p/scope.yml", "section": "paths.read",
                           "patterns_added": ["a"], "already_present": [],
                           "sha256_before": "", "sha256_after": ""})
    );
}

#[test]
fn invalid_values_refused() {
    for bad in ["", "  ", "a\0b"] {
        invalid_argument(edit_text(
            "t",
            "",
            DocKind::Yaml,
            Section::PathsRead,
            &strings(&[bad]),
        ));
    }
    // No values: nothing to do.
    let edit = edit_text("t", "paths: {}\n", DocKind::Yaml, Section::PathsRead, &[]).unwrap();
    assert_eq!(edit.text, None);
}

#[test]
fn non_utf8_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scope.yml");
    fs::write(&file, b"paths:\n  read: [\xff]\n").unwrap();
    let m = edit_error(add_to_scope(
        &file,
        Section::PathsRead,
        &strings(&["/x/**"]),
    ));
    assert!(m.starts_with("the file is not valid UTF-8"), "{m}");
    assert_eq!(fs::read(&file).unwrap(), b"paths:\n  read: [\xff]\n");
}
