//! Loops over literal globs and literal words, judged with each value the loop gives its
//! variable (the glob expanded as bash would, in a real tree); operands built at run time
//! refused with one reason code whichever command they belong to; and the files `source`,
//! `.`, a shell and an interpreter run, matched by the file they name and read in the scope.

mod common;

use std::path::Path;

use common::*;

/// `None` for allowed, else the reason and the exact message.
type Expected = Option<(&'static str, String)>;

fn run_time(raw: &str, what: &str) -> String {
    format!("`{raw}` ({what}) is built at run time (a variable, substitution or glob the engine cannot expand), so it cannot be checked before the command runs; write it literally, or expand it first (list the files with a separate command, then name them).")
}

fn before(glob: &str) -> String {
    format!("a command before or beside the loop over `{glob}` may create or remove files where its glob looks, which would change what it matches when the loop runs; run that command first, on its own, then the loop")
}

fn outside(v: &str, source: &str, target: &Path, allowed: &str) -> String {
    format!(
        "`{v}` ({source}) needs read access to {}, outside the scope (allowed: {allowed}). Use a path inside the scope (relative paths are checked best), or call request_scope_expansion with tool_name \"run_bash_command\", resource \"{}\" and your reason.",
        target.display(),
        target.display()
    )
}

/// `project/` (the scope) beside `outside/`:
///
/// ```text
/// project/config/{a,b}/*.org, config/.hidden/z.org
/// project/mixed/in/, mixed/out -> ../../outside
/// project/hid/in/, hid/.out -> ../../outside
/// project/files/-rf, files/a.txt
/// project/many/ (1,001 files)
/// outside/secret.txt
/// ```
fn tree() -> TempDir {
    let tmp = TempDir::new("loops");
    let p = tmp.path().join("project");
    for d in [
        "config/a",
        "config/b",
        "config/.hidden",
        "mixed/in",
        "hid/in",
        "files",
        "many",
    ] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
    std::fs::write(tmp.path().join("outside/secret.txt"), "s\n").unwrap();
    std::fs::create_dir_all(p.join("odd")).unwrap();
    for f in [
        "config/a/x.org",
        "config/b/y.org",
        "config/.hidden/z.org",
        "files/-rf",
        "files/a.txt",
        "odd/a[$(touch x)]",
    ] {
        std::fs::write(p.join(f), "x\n").unwrap();
    }
    for i in 0..1001 {
        std::fs::write(p.join(format!("many/f{i}")), "").unwrap();
    }
    std::os::unix::fs::symlink("../../outside", p.join("mixed/out")).unwrap();
    std::os::unix::fs::symlink("../../outside", p.join("hid/.out")).unwrap();
    tmp
}

fn loop_scope(root: &Path) -> gptel_scope::scope::Scope {
    scope(&format!(
        "paths:\n  read: [\"{p}/**\"]\n  write: [\"{p}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, find, echo, read, bash, sleep, wc]\n    safe_write: [cp, touch, mkdir, ln, mv, make]\n  path_arguments: enforce\n",
        p = root.join("project").display()
    ))
}

fn check(
    rows: Vec<(&str, &str, Expected)>,
    s: &gptel_scope::scope::Scope,
    dir: &Path,
    project_root: Option<&Path>,
) {
    let mut failures = Vec::new();
    for (id, cmd, want) in rows {
        let d = decide_in(s, dir, None, project_root, &[], cmd);
        let got = if d.allowed {
            None
        } else {
            Some((d.reason.unwrap_or("?"), d.message.clone()))
        };
        if got.as_ref().map(|(r, m)| (*r, m.as_str()))
            != want.as_ref().map(|(r, m)| (*r, m.as_str()))
        {
            failures.push(format!("{id} `{cmd}`\n   want {want:?}\n   got  {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn loop_variables_take_each_value_of_a_literal_glob_or_word() {
    let tmp = tree();
    let root = tmp.path();
    let project = root.join("project");
    let s = loop_scope(root);
    let allowed = format!("{}/**", project.display());
    let secret = root.join("outside/secret.txt");
    let deny = |r: &'static str, m: String| Some((r, m));
    let rows: Vec<(&str, &str, Expected)> = vec![
        ("LOOP-01", "for d in config/*/; do find \"$d\" -name '*.org'; done", None),
        ("LOOP-02", "for d in config/*/; do (cd \"$d\" && ls); done", None),
        // Without a subshell, each pass starts where the last one went: unknown after a few.
        ("LOOP-02b", "for d in config/*/; do cd \"$d\" && ls; done", deny("unsupported_construct", "`cd config/a/` runs after a `cd` to a directory that cannot be known before running; use a literal directory. Also refused: unsupported_construct (ls); unsupported_construct (cd config/b/).".into())),
        ("LOOP-03", "for f in config/a/*.org config/b/*.org; do cat \"$f\"; done", None),
        ("LOOP-04", "for f in files/a.txt files/-rf; do cat \"$f\"; done", None),
        // A symlink among the matches leads out of the scope.
        ("LOOP-05", "for d in mixed/*/; do cat \"$d\"secret.txt; done", deny("path_not_in_scope", outside("mixed/out/secret.txt", "operand of cat", &secret, &allowed))),
        // Hidden entries match only a component that starts with `.`.
        ("LOOP-06", "for d in hid/*/; do cat \"$d\"secret.txt; done", None),
        ("LOOP-07", "for d in hid/.o*/; do cat \"$d\"secret.txt; done", deny("path_not_in_scope", outside("hid/.out/secret.txt", "operand of cat", &secret, &allowed))),
        ("LOOP-08", "for d in config/.h*/; do cat \"$d\"z.org; done", None),
        // No match: the pattern itself, as bash leaves it; unquoted, it is a glob again.
        ("LOOP-09", "for f in nothing/*.org; do cat \"$f\"; done", None),
        ("LOOP-10", "for f in nothing/*.org; do cat $f; done", deny("run_time_operand", run_time("$f", "operand of cat"))),
        // Literal words bind too; each is judged.
        ("LOOP-11", "for f in files/a.txt ../outside/secret.txt; do cat \"$f\"; done", deny("path_not_in_scope", outside("../outside/secret.txt", "operand of cat", &secret, &allowed))),
        // Values bash would not give the variable are not assumed.
        ("LOOP-12", "for f in $(ls config); do find \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "start directory of find"))),
        ("LOOP-13", "for f in files/a.txt; do f=../outside/secret.txt; cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-14", "for f in files/a.txt; do read f; cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-15", "for f in files/a.txt; do :; done; cat \"$f\"", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-16", "for f in many/*; do cat \"$f\"; done", deny("unsupported_construct", "the loop over `many/*` gives more than 1000 values, too many to judge; narrow the glob, or run the command on fewer files at a time. Also refused: run_time_operand (\"$f\").".into())),
        // The glob is expanded before the line runs: what runs before the loop must not write.
        ("LOOP-27", "touch config/c; for d in config/*/; do cat \"$d\"x.org; done", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27b", "ln -s a config/up; for d in config/*/; do cat \"$d\"x.org; done", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27c", "mv files config; for d in config/*/; do cat \"$d\"x.org; done", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27d", "make; for d in config/*/; do cat \"$d\"x.org; done", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27e", "touch x; bash -c 'for d in config/*/; do cat \"$d\"x.org; done'", deny("unsupported_construct", before("config/*/"))),
        // Beside the loop (in the background, or in a pipeline), a write counts wherever it is.
        ("LOOP-27f", "(sleep 1; for d in config/*/; do cat \"$d\"x.org; done) & touch config/c", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27g", "for d in config/*/; do cat \"$d\"x.org; done | touch config/c", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-27h", "for d in config/*/; do cat \"$d\"x.org; done | wc -l; touch files/c", None),
        // An inner loop runs again after what the outer body wrote on its previous pass.
        ("LOOP-27i", "for d in config/*/; do for f in config/*/; do cat \"$f\"x.org; done; touch config/new; done", deny("unsupported_construct", before("config/*/"))),
        ("LOOP-28", "for f in config/*/*.org; do cp \"$f\" files/; done; touch files/done", None),
        ("LOOP-28b", "mkdir -p files/out && for f in config/*/*.org; do cp \"$f\" files/out/; done", None),
        // A file name that an arithmetic expansion of the variable would run.
        ("LOOP-29", "for f in odd/*; do echo $((f)); done", deny("unsupported_construct", "the loop over `odd/*` gives the value `odd/a[$(touch x)]`, which holds command-substitution syntax that a later expansion could run; rename the file, or name the other files".into())),
        // Nested loops multiply: bounded.
        ("LOOP-26", "for a in many/f1*; do for b in many/f1*; do for c in many/f1*; do cat \"$a\" \"$b\" \"$c\"; done; done; done", deny("unsupported_construct", "the loops of this command would be judged more than 4000 times (once per value, nested loops multiplying); narrow their globs, or run them as separate commands".into())),
        ("LOOP-17", "for f in config/*/'*'.org; do cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-18", "for f in files/a.txt; do for f in $(ls); do :; done; cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-19", "for f in files/a.txt; do (( f = 1 )); cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        ("LOOP-22", "for f in files/a.txt; do command read f; cat \"$f\"; done", deny("run_time_operand", run_time("\"$f\"", "operand of cat"))),
        // Nested loops: the inner pattern is built from the outer value.
        ("LOOP-23", "for d in config/*/; do for f in \"$d\"*.org; do cat \"$f\"; done; done", None),
        ("LOOP-24", "for d in mixed/*/; do for f in \"$d\"*.txt; do cat \"$f\"; done; done", deny("path_not_in_scope", outside("mixed/out/secret.txt", "operand of cat", &secret, &allowed))),
        ("LOOP-25", "for d in config/\"a\"*/; do cat \"$d\"x.org; done", None),
        // One reason code for an operand built at run time, whichever command has it.
        ("RUNTIME-01", "cp $x files/", deny("run_time_operand", run_time("$x", "a word of cp that could be an option reading, writing or running programs"))),
        ("RUNTIME-02", "cat \"$x\"", deny("run_time_operand", run_time("\"$x\"", "operand of cat"))),
    ];
    check(rows, &s, &project, Some(&project));
    // In `files/`, `*` gives `-rf`: refused; `./*` gives `./-rf`, an operand.
    let files = project.join("files");
    check(
        vec![
            ("LOOP-20", "for f in *; do cat \"$f\"; done", deny("unsupported_construct", "the loop over `*` gives the value `-rf`, which a command would read as an option; write the pattern as `./*` so that every value starts with `./`. Also refused: run_time_operand (\"$f\").".into())),
            ("LOOP-21", "for f in ./*; do cat \"$f\"; done", None),
        ],
        &s,
        &files,
        Some(&project),
    );
}

/// `project/` (the scope, and the project root) beside `outside/`:
///
/// ```text
/// project/bin/env.sh, bin/run.sh, bin/link.sh -> ../../outside/evil.sh, scripts/x.py
/// project/sub/bin/, sub/scripts/x.py
/// outside/evil.sh, outside/evil.py
/// ```
fn scripts_tree() -> TempDir {
    let tmp = TempDir::new("sources");
    let p = tmp.path().join("project");
    for d in ["bin", "scripts", "sub/bin", "sub/scripts"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
    for f in [
        "project/bin/env.sh",
        "project/bin/run.sh",
        "project/scripts/x.py",
        "project/sub/scripts/x.py",
        "outside/evil.sh",
        "outside/evil.py",
    ] {
        std::fs::write(tmp.path().join(f), "true\n").unwrap();
    }
    std::os::unix::fs::symlink("../../outside/evil.sh", p.join("bin/link.sh")).unwrap();
    tmp
}

#[test]
fn listed_scripts_match_by_the_file_they_name() {
    let tmp = scripts_tree();
    let project = tmp.path().join("project");
    let s = scope(&format!(
        "paths:\n  read: [\"{p}/**\"]\n  write: [\"{p}/**\"]\nbash_tools:\n  categories:\n    read_only: [cat, \"source ./bin/env.sh\", \"python scripts/x.py\", \"bash ./bin/run.sh\"]\n    safe_write: [printf]\n",
        p = project.display()
    ));
    let deny = |r: &'static str, m: String| Some((r, m));
    let rows: Vec<(&str, &str, Expected)> = vec![
        ("SRC-01", "source ./bin/env.sh", None),
        ("SRC-02", ". ./bin/env.sh", None),
        ("SRC-03", "source bin/env.sh", None),
        // The command writes a file of the same name elsewhere, then sources it.
        ("SRC-04", "cd sub && printf 'x' > bin/env.sh && source ./bin/env.sh", deny("unsupported_construct", "`source` runs text that cannot be judged before it runs; run the commands directly instead, or ask the user to list the file (`source ./bin/env.sh`) in the scope".into())),
        ("SRC-05", "source env.sh", deny("unsupported_construct", "`source env.sh` looks the file up in PATH before the current directory; write its path with a slash (`source ./env.sh`).".into())),
        ("SRC-06", "source \"$f\"", deny("run_time_operand", run_time("\"$f\"", "the file source runs"))),
        ("SCRIPT-01", "python scripts/x.py", None),
        ("SCRIPT-02", "cd sub && python scripts/x.py", deny("command_not_allowed", "`python scripts/x.py` is not in any category of the scope (read_only, safe_write, dangerous). Use an allowed command (list_allowed_commands shows them), or call request_scope_expansion with tool_name \"run_bash_command\", resource \"python scripts/x.py\" and your reason.".into())),
        ("SCRIPT-03", "bash ./bin/run.sh", None),
        ("SCRIPT-04", "cd sub && bash ./bin/run.sh", deny("unsupported_construct", "`bash ./bin/run.sh` runs a script file or standard input that cannot be judged before it runs; run its commands directly, or `bash -c 'COMMANDS'`".into())),
    ];
    check(rows, &s, &project, Some(&project));
}

#[test]
fn files_that_source_shells_and_interpreters_run_are_read_in_the_scope() {
    let tmp = scripts_tree();
    let project = tmp.path().join("project");
    let evil_sh = tmp.path().join("outside/evil.sh");
    let evil_py = tmp.path().join("outside/evil.py");
    let allowed = format!("{}/**", project.display());
    let s = scope(&format!(
        "paths:\n  read: [\"{p}/**\"]\nbash_tools:\n  categories:\n    read_only: [cat, python, bash]\n  allow_constructs: [source]\n",
        p = project.display()
    ));
    let deny = |r: &'static str, m: String| Some((r, m));
    let rows: Vec<(&str, &str, Expected)> = vec![
        ("SRCB-01", "source ./bin/env.sh", None),
        ("SRCB-02", "source ../outside/evil.sh", deny("path_not_in_scope", outside("../outside/evil.sh", "file source runs", &evil_sh, &allowed))),
        ("SRCB-03", ". bin/link.sh", deny("path_not_in_scope", outside("bin/link.sh", "file . runs", &evil_sh, &allowed))),
        ("SRCB-04", "python ../outside/evil.py", deny("path_not_in_scope", outside("../outside/evil.py", "script python runs", &evil_py, &allowed))),
        // After `-c`, the operand is an argument, not a script (still a path the scope checks).
        ("SRCB-05", "python -c 'print(1)' ../outside/evil.py", deny("path_not_in_scope", outside("../outside/evil.py", "operand of python", &evil_py, &allowed))),
        ("SRCB-06", "bash bin/link.sh", deny("path_not_in_scope", outside("bin/link.sh", "script bash runs", &evil_sh, &allowed))),
        ("SRCB-07", "python scripts/x.py && bash -e bin/run.sh", None),
        // Options read as python's getopt reads them: `-X dev` takes a value, so the script is
        // the word after it; `-Bc` is -B then -c with its code (no script).
        ("SRCB-08", "python -X dev ../outside/evil.py", deny("path_not_in_scope", outside("../outside/evil.py", "script python runs", &evil_py, &allowed))),
        ("SRCB-09", "python -Bc 'print(1)'", None),
        // `.` without a file runs nothing in bash, and is refused like any construct the scope
        // does not list (found by the decide fuzz target: `x=.env .`).
        ("SRCB-10", "x=.env .", deny("unsupported_construct", "`.` needs the file it runs; name the file (`. ./FILE`), or run the commands directly.".into())),
        ("SRCB-11", "source --", deny("unsupported_construct", "`source` needs the file it runs; name the file (`source ./FILE`), or run the commands directly.".into())),
    ];
    check(rows, &s, &project, Some(&project));
    // Where read operands only warn, the files of code an interpreter runs are still checked.
    let warn = scope(&format!(
        "paths:\n  read: [\"{p}/**\"]\nbash_tools:\n  categories:\n    read_only: [cat, python, emacs]\n  path_arguments: warn\n",
        p = project.display()
    ));
    let evil_el = tmp.path().join("outside/evil.el");
    let rows: Vec<(&str, &str, Expected)> = vec![
        ("SRCW-01", "cat ../outside/evil.py", None),
        (
            "SRCW-02",
            "python ../outside/evil.py",
            deny(
                "path_not_in_scope",
                outside(
                    "../outside/evil.py",
                    "script python runs",
                    &evil_py,
                    &allowed,
                ),
            ),
        ),
        (
            "SRCW-03",
            "emacs --batch -l ../outside/evil.el",
            deny(
                "path_not_in_scope",
                outside(
                    "../outside/evil.el",
                    "file of code of emacs -l",
                    &evil_el,
                    &allowed,
                ),
            ),
        ),
        ("SRCW-04", "emacs --batch ../outside/evil.py", None),
    ];
    check(rows, &warn, &project, Some(&project));
}
