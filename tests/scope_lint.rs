//! The scope linter (`M-x gptel-scope-lint`, `make check`): a row per family of
//! self-defeating scope, each with the exact code, line, message and suggestion, through the
//! JSON entry point the binding uses; a careful scope gives no warning.

use gptel_scope::emacs::api;
use serde_json::{json, Value};

const HOME: &str = "/home/u";
const ROOT: &str = "/home/u/p";

/// The warnings on `text`, an inline scope named `scope.yml`, as (code, line, message,
/// suggestion).
fn lint(text: &str) -> Vec<(String, u64, String, String)> {
    let req = json!({"sources": [{"inline": text, "name": "scope.yml"}], "home": HOME, "project_root": ROOT});
    let v = api::lint_scope(&req.to_string()).expect("lint");
    let Value::Array(items) = v else {
        panic!("not a list: {v}")
    };
    items
        .iter()
        .map(|w| {
            assert_eq!(w["file"], "scope.yml", "{w}");
            (
                w["code"].as_str().unwrap_or_default().to_string(),
                w["line"].as_u64().unwrap_or_default(),
                w["message"].as_str().unwrap_or_default().to_string(),
                w["suggestion"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Every secret location, denied: a read scope of the whole home directory is careful with it.
const CAREFUL_DENY: &str = "  deny: [\"~/.ssh/**\", \"~/.gnupg/**\", \"**/.env\", \"~/.aws/**\", \"~/.config/gcloud/**\", \"~/.azure/**\", \"~/.kube/**\", \"~/.docker/config.json\", \"~/.netrc\", \"~/.git-credentials\", \"~/.authinfo*\", \"~/.password-store/**\"]\n";

#[test]
fn each_family_gives_its_warning_on_the_line_of_the_entry() {
    let project = "paths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\n";
    /// Name, scope text, warnings expected: (code, line, message, suggestion).
    type Row<'a> = (&'a str, String, Vec<(&'a str, u64, &'a str, &'a str)>);
    let rows: Vec<Row> = vec![
        (
            "a path-qualified script in the write scope",
            format!("{project}bash_tools:\n  categories:\n    safe_write:\n      - make\n      - ./build.sh\n"),
            vec![("script_in_write_scope", 8,
                  "bash_tools.categories.safe_write lists `./build.sh`, but /home/u/p/build.sh is in the write scope (by \"/home/u/p/**\"): the model can rewrite the script and then run it, which allows any command.",
                  "Move \"./build.sh\" to bash_tools.categories.dangerous, or move the script outside paths.write and list its new path.")],
        ),
        (
            "a script given to a command of an entry",
            format!("{project}bash_tools:\n  categories:\n    read_only: [ls, \"node scripts/report.js\"]\n"),
            vec![("script_in_write_scope", 6,
                  "bash_tools.categories.read_only lists `node scripts/report.js`, but /home/u/p/scripts/report.js is in the write scope (by \"/home/u/p/**\"): the model can rewrite the script and then run it, which allows any command.",
                  "Move \"node scripts/report.js\" to bash_tools.categories.dangerous, or move the script outside paths.write and list its new path.")],
        ),
        (
            "an interpreter alone or with a code option (from the semantics), a shell alone; not a longer entry",
            format!("{project}bash_tools:\n  categories:\n    read_only:\n      - ls\n      - python3\n    safe_write: [bash, \"node -e\", \"python3 -m pytest\", \"bash -n\"]\n"),
            vec![
                ("interpreter_listed", 8,
                 "bash_tools.categories.read_only lists `python3`, an interpreter: the model can run any code with it, which is full code execution whatever else the scope says.",
                 "Move \"python3\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."),
                ("interpreter_listed", 9,
                 "bash_tools.categories.safe_write lists `bash`, a shell: the model can run any code with it, which is full code execution whatever else the scope says.",
                 "Move \"bash\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."),
                ("interpreter_listed", 9,
                 "bash_tools.categories.safe_write lists `node -e`, an interpreter: the model can run any code with it, which is full code execution whatever else the scope says.",
                 "Move \"node -e\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."),
            ],
        ),
        (
            "a home-wide read scope without the cloud credentials denied",
            "paths:\n  read:\n    - \"~/**\"\n  deny: [\"~/.ssh/**\", \"~/.gnupg/**\", \"**/.env\", \"~/.netrc\"]\n".to_string(),
            vec![("secrets_not_denied", 3,
                  "paths.read \"~/**\" covers your home directory, but paths.deny does not cover ~/.config/gcloud/**, ~/.azure/**, ~/.kube/**, ~/.docker/config.json, ~/.git-credentials, ~/.authinfo*, ~/.password-store/**: the model can read the keys and credentials kept there.",
                  "Add to paths.deny: \"~/.config/gcloud/**\", \"~/.azure/**\", \"~/.kube/**\", \"~/.docker/config.json\", \"~/.git-credentials\", \"~/.authinfo*\", \"~/.password-store/**\".")],
        ),
        (
            "a read scope of / with the built-in deny list only",
            "paths:\n  read: [\"/**\"]\n".to_string(),
            vec![("secrets_not_denied", 2,
                  "paths.read \"/**\" covers /, but paths.deny does not cover **/.env, ~/.config/gcloud/**, ~/.azure/**, ~/.kube/**, ~/.docker/config.json, ~/.netrc, ~/.git-credentials, ~/.authinfo*, ~/.password-store/**: the model can read the keys and credentials kept there.",
                  "Add to paths.deny: \"**/.env\", \"~/.config/gcloud/**\", \"~/.azure/**\", \"~/.kube/**\", \"~/.docker/config.json\", \"~/.netrc\", \"~/.git-credentials\", \"~/.authinfo*\", \"~/.password-store/**\".")],
        ),
        (
            "a read scope of the files right in the home directory",
            "paths:\n  read: [\"${project_root}/**\", \"~/*\"]\n".to_string(),
            vec![("secrets_not_denied", 2,
                  "paths.read \"~/*\" covers your home directory, but paths.deny does not cover **/.env, ~/.netrc, ~/.git-credentials, ~/.authinfo*: the model can read the keys and credentials kept there.",
                  "Add to paths.deny: \"**/.env\", \"~/.netrc\", \"~/.git-credentials\", \"~/.authinfo*\".")],
        ),
        (
            "deny patterns that cannot match: a variable not expanded, a glob that does not compile",
            format!("{project}  deny:\n    - \"$HOME/.ssh/**\"\n    - \"~/.gnupg/[\"\n"),
            vec![
                ("deny_never_matches", 5,
                 "The deny pattern \"$HOME/.ssh/**\" names `$HOME`, which is not expanded (only a leading `~` and ${project_root} are): it matches only a directory literally named `$HOME`, so it denies nothing.",
                 "Write \"~/.ssh/**\" instead."),
                ("deny_never_matches", 6,
                 "The deny pattern \"~/.gnupg/[\" is not a valid glob (pattern `~/.gnupg/[`: error parsing glob '/home/u/.gnupg/[': unclosed character class; missing ']'): the scope does not load, and every tool refuses until it is fixed.",
                 "Write the pattern as a valid glob: a `[` or `{` closed, or escaped with a backslash (for example \"~/.gnupg/\\[\")."),
            ],
        ),
        (
            "a write pattern wider than the read scope",
            "paths:\n  read: [\"${project_root}/src/**\"]\n  write:\n    - \"${project_root}/src/**\"\n    - \"${project_root}/**\"\n".to_string(),
            vec![("write_wider_than_read", 5,
                  "The write pattern \"${project_root}/**\" covers /home/u/p/x, which no read pattern covers; write implies read, so the model can read more than paths.read says.",
                  "Add \"${project_root}/**\" to paths.read too, or narrow this write pattern to a directory paths.read covers.")],
        ),
        (
            "the same entry in two categories, and in bash_tools.deny",
            format!("{project}bash_tools:\n  deny: [sudo, curl]\n  categories:\n    read_only: [git log, ls]\n    safe_write: [curl]\n    dangerous:\n      - git   log\n"),
            vec![
                ("duplicate_entry", 7,
                 "`git log` is listed in both bash_tools.categories.dangerous and bash_tools.categories.read_only; the engine takes the more restrictive category, so the read_only entry has no effect.",
                 "Remove \"git log\" from bash_tools.categories.read_only, or from bash_tools.categories.dangerous if you meant read_only."),
                ("duplicate_entry", 8,
                 "`curl` is listed in both bash_tools.deny and bash_tools.categories.safe_write; bash_tools.deny refuses it before any category is looked at, so the safe_write entry has no effect.",
                 "Remove \"curl\" from bash_tools.categories.safe_write, or from bash_tools.deny if you meant safe_write."),
            ],
        ),
    ];
    for (what, text, want) in rows {
        let got = lint(&text);
        let want: Vec<(String, u64, String, String)> = want
            .into_iter()
            .map(|(c, l, m, s)| (c.to_string(), l, m.to_string(), s.to_string()))
            .collect();
        assert_eq!(got, want, "{what}:\n{text}");
    }
}

/// A careful scope: the home directory readable with every secret denied, the project
/// writable, commands that run no code of the model's, each listed once.
#[test]
fn a_careful_scope_gives_no_warning() {
    let text = format!("paths:\n  read: [\"~/**\"]\n  write: [\"${{project_root}}/**\"]\n{CAREFUL_DENY}bash_tools:\n  categories:\n    read_only: [ls, cat, rg, \"git log\", \"git status\", \"python3 --version\"]\n    safe_write: [mkdir, touch, \"git add\", ~/bin/fmt]\n    dangerous: [rm, python3]\n");
    assert_eq!(lint(&text), Vec::new());
}

/// A preset's front matter: the line counts the file's `---` line.
#[test]
fn a_preset_front_matter_line_is_the_line_of_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let preset = tmp.path().join("preset.md");
    std::fs::write(&preset, "---\npaths:\n  read: [\"${project_root}/**\"]\n  write: [\"${project_root}/**\"]\nbash_tools:\n  categories:\n    read_only: [perl]\n---\nThe system message.\n").expect("write");
    let req = json!({"sources": [{"file": preset.display().to_string()}], "home": HOME});
    let got = api::lint_scope(&req.to_string()).expect("lint");
    assert_eq!(
        got,
        json!([{
            "code": "interpreter_listed",
            "file": preset.display().to_string(),
            "line": 7,
            "message": "bash_tools.categories.read_only lists `perl`, an interpreter: the model can run any code with it, which is full code execution whatever else the scope says.",
            "suggestion": "Move \"perl\" to bash_tools.categories.dangerous, so that each call is asked for, or list only the exact subcommands you need."
        }])
    );
}

/// A deny pattern matching a path git's history holds: a warning on the pattern's line,
/// saying which commands are refused and how to purge it; one per pattern found, in the
/// index too; none for a repository whose store holds no denied path.
#[test]
fn a_denied_path_in_git_history_is_a_warning() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(tmp.path())
        .expect("canonical")
        .join("p");
    std::fs::create_dir_all(&root).expect("mkdir");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(&root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let lint_root = || -> Vec<(String, u64, String, String)> {
        let text = "paths:\n  read: [\"${project_root}/**\"]\n  deny:\n    - \"**/.env\"\n    - \"**/*.pem\"\n";
        let req = json!({"sources": [{"inline": text, "name": "scope.yml"}], "home": HOME, "project_root": root});
        let Value::Array(items) = api::lint_scope(&req.to_string()).expect("lint") else {
            panic!("not a list")
        };
        items
            .iter()
            .map(|w| {
                (
                    w["code"].as_str().unwrap_or_default().to_string(),
                    w["line"].as_u64().unwrap_or_default(),
                    w["message"].as_str().unwrap_or_default().to_string(),
                    w["suggestion"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    };
    git(&["init", "-q"]);
    std::fs::write(root.join("a.txt"), "a\n").expect("a");
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "a"]);
    assert_eq!(lint_root(), Vec::new(), "a clean repository");
    std::fs::write(root.join(".env"), "K=1\n").expect("env");
    git(&["add", ".env"]);
    git(&["commit", "-qm", "add env"]);
    git(&["rm", "-q", "--cached", ".env"]);
    git(&["commit", "-qm", "rm env"]);
    let p = root.display().to_string();
    let message = |path: &str, pattern: &str, where_: &str| {
        format!("The deny pattern \"{pattern}\" matches {p}/{path}, which is {where_} of the git repository {p}: git commands that print files from there (`git log -p`, `git show`, `git diff REV`, `git archive`, `git grep REV`, `git cat-file -p`) will be refused unless a pathspec leaves it out; `git status`, `git diff`, `git add FILE` and `git commit` keep working.")
    };
    let suggestion = |rel: &str| {
        format!("If it was committed by mistake, rotate the secret it holds, take it out of git (`git rm --cached {rel}` and a commit, if it is still tracked) and purge it from history: `git filter-repo --invert-paths --path {rel}`, then `git reflog expire --expire=now --all && git gc --prune=now`. Until then such commands are refused.")
    };
    assert_eq!(
        lint_root(),
        vec![(
            "denied_in_history".to_string(),
            4,
            message(".env", "**/.env", "in history"),
            suggestion(".env")
        )]
    );
    // A second pattern, staged: a warning of its own, on its line.
    std::fs::write(root.join("k.pem"), "KEY\n").expect("pem");
    git(&["add", "k.pem"]);
    assert_eq!(
        lint_root(),
        vec![
            (
                "denied_in_history".to_string(),
                4,
                message(".env", "**/.env", "in history"),
                suggestion(".env")
            ),
            (
                "denied_in_history".to_string(),
                5,
                message("k.pem", "**/*.pem", "in the index"),
                suggestion("k.pem")
            ),
        ]
    );
}
