//! Shell state that changes what later words mean, judged as a table: assignments to bash's
//! own variables (however they are made), `set` options outside the allowlist, the builtins
//! that change how the shell reads or runs commands, here-documents bash and brush-parser
//! would end in different places, globs that bash 5.1 expands through `..`, and arithmetic
//! on a value the line sets at run time (bash evaluates its text, subscripts included). The scope
//! lists every builtin used, so that only the shell-state rules can refuse; benign rows
//! must stay allowed.

mod common;

use common::*;

const SET_ALLOWED: &str = "only `set -e`, `-u`, `-x`, `-o pipefail` (`errexit`, `nounset`, `xtrace`) and their `+` forms are allowed";

fn set_refused(opt: &str) -> String {
    format!("`set {opt}` changes how the shell reads or runs later commands; {SET_ALLOWED}. Run the commands without `set {opt}`.")
}

fn shell_var(name: &str) -> String {
    format!("{name} is one of bash's own variables: setting it changes how the shell finds, expands or runs later commands; it is not allowed. Run the commands without it.")
}

fn dangerous_var(name: &str) -> String {
    format!("setting {name} can make commands run other programs or read other files; it is not allowed. Run the command without it.")
}

fn builtin_refused(name: &str) -> String {
    format!("`{name}` changes how the shell reads or runs later commands (shell options, builtins, command lookup); it is not allowed. Run the commands without it.")
}

fn shell_flag(shell: &str, opt: &str) -> String {
    format!("`{shell} {opt}` changes how the shell reads or runs the commands it is given; only `-e`, `-u`, `-x`, `-o pipefail` (`errexit`, `nounset`, `xtrace`) and their `+` forms are allowed. Run it without `{opt}`.")
}

fn heredoc(line: &str) -> String {
    format!("a line of a here-document ends in a backslash (`{line}`): bash joins it with the next line and may end the here-document elsewhere than it reads here; quote the delimiter (`<<'EOF'`) or remove the backslash")
}

fn dot_glob(word: &str) -> String {
    format!("the glob `{word}` can match `..` (the parent directory) in bash 5.1 and older; match dotfiles with `.[!.]*` or name the files")
}

/// Arithmetic (`shown`) on a variable (`what`, written `value` as a word) set at run time.
fn run_time_arithmetic(shown: &str, what: &str, value: &str) -> String {
    format!("`{shown}` evaluates the text of {what}, which this command sets at run time, as an arithmetic expression: a value such as `a[$(cmd)]` would run `cmd`. Pass the value as it is ({value}), compare numbers with `[ {value} -gt 3 ]` (`[` and `test` do not evaluate their operands), or read the value first and write the number in the next command.")
}

/// [`run_time_arithmetic`] on the variable `name`.
fn arith(shown: &str, name: &str) -> String {
    run_time_arithmetic(shown, &format!("`{name}`"), &format!("\"${name}\""))
}

/// A project with a few files, read and written whole; every builtin of the table listed.
fn fixture() -> (TempDir, gptel_scope::scope::Scope) {
    let tmp = TempDir::new("shell-state");
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("README.md"), "x\n").unwrap();
    std::fs::write(tmp.path().join("src/.hidden"), "x\n").unwrap();
    let yaml = format!(
        "paths:\n  read: [\"{root}/**\"]\n  write: [\"{root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, echo, grep, printf, read, mapfile, getopts, let, wait, shopt, enable, bind, hash, fc, history, bash, sh, wc, head]\n    safe_write: [touch]\n  path_arguments: enforce\n",
        root = tmp.path().display()
    );
    let s = scope(&yaml);
    (tmp, s)
}

/// `None` for allowed, else the reason and the exact message.
type Expected = Option<(&'static str, String)>;

/// `(id, command, expected)`.
fn table() -> Vec<(&'static str, &'static str, Expected)> {
    let deny = |r: &'static str, m: String| Some((r, m));
    vec![
        // `set`: the allowlist, bundled and long forms, `builtin`/`command` looked through.
        ("STATE-01", "set -k; ls", deny("unsupported_construct", set_refused("-k"))),
        ("STATE-02", "set -o keyword; ls", deny("unsupported_construct", set_refused("-o keyword"))),
        ("STATE-03", "set -o posix; ls", deny("unsupported_construct", set_refused("-o posix"))),
        ("STATE-04", "set -euk; ls", deny("unsupported_construct", set_refused("-k"))),
        ("STATE-05", "set -T; ls", deny("unsupported_construct", set_refused("-T"))),
        ("STATE-06", "set -o history; ls", deny("unsupported_construct", set_refused("-o history"))),
        ("STATE-07", "set +o pipefail -P; ls", deny("unsupported_construct", set_refused("-P"))),
        ("STATE-08", "builtin set -k; ls", deny("unsupported_construct", set_refused("-k"))),
        ("STATE-09", "command set -o keyword; ls", deny("unsupported_construct", set_refused("-o keyword"))),
        ("STATE-10", "set $opts; ls", deny("dynamic_command", "`set $opts`: the option `$opts` of `set` is built at run time; write the options literally".into())),
        // The shell's own options: the same allowlist.
        ("STATE-11", "bash -k -c 'ls'", deny("unsupported_construct", shell_flag("bash", "-k"))),
        ("STATE-12", "sh -o posix -c 'ls'", deny("unsupported_construct", shell_flag("sh", "-o posix"))),
        ("STATE-13", "bash --posix -c 'ls'", deny("flag_not_allowed", "`bash --posix` is not allowed (it can run startup files or change how scripts are read)".into())),
        // Builtins that change how the shell reads or runs commands, listed or not.
        ("STATE-14", "shopt -s expand_aliases", deny("unsupported_construct", builtin_refused("shopt"))),
        ("STATE-15", "shopt", deny("unsupported_construct", builtin_refused("shopt"))),
        ("STATE-16", "enable -f ./x.so x", deny("unsupported_construct", builtin_refused("enable"))),
        ("STATE-17", "bind -x '\"a\":ls'", deny("unsupported_construct", builtin_refused("bind"))),
        ("STATE-18", "hash -p /bin/sh ls; ls", deny("unsupported_construct", builtin_refused("hash"))),
        ("STATE-19", "builtin shopt -s expand_aliases", deny("unsupported_construct", builtin_refused("shopt"))),
        // bash's own variables and arrays, however they are assigned.
        ("STATE-20", "BASH_CMDS[ls]=/bin/sh; ls", deny("denied", shell_var("BASH_CMDS"))),
        ("STATE-21", "BASH_ALIASES[ls]='cat README.md'; ls", deny("denied", shell_var("BASH_ALIASES"))),
        ("STATE-22", "DIRSTACK[0]=/etc; ls", deny("denied", shell_var("DIRSTACK"))),
        ("STATE-23", "export POSIXLY_CORRECT=1; ls", deny("denied", shell_var("POSIXLY_CORRECT"))),
        ("STATE-24", "BASH_COMPAT=4.2 ls", deny("denied", shell_var("BASH_COMPAT"))),
        ("STATE-25", "declare -A BASH_ALIASES=([ls]=x); ls", deny("denied", shell_var("BASH_ALIASES") + " Also refused: dynamic_command (declare -A BASH_ALIASES=([ls]=x)).")),
        ("STATE-26", "local FUNCNEST=1", deny("denied", shell_var("FUNCNEST"))),
        ("STATE-27", "readonly EXECIGNORE='*'", deny("denied", shell_var("EXECIGNORE"))),
        ("STATE-28", "typeset HISTFILE=x", deny("denied", shell_var("HISTFILE"))),
        ("STATE-29", "for PATH in /tmp; do ls; done", deny("denied", dangerous_var("PATH"))),
        ("STATE-30", "(( BASH_XTRACEFD = 1 )); ls", deny("denied", shell_var("BASH_XTRACEFD"))),
        ("STATE-31", ": ${BASH_COMPAT:=31}; ls", deny("denied", shell_var("BASH_COMPAT"))),
        ("STATE-32", "read -r IFS < README.md", deny("denied", dangerous_var("IFS"))),
        ("STATE-33", "getopts ab PS4", deny("denied", dangerous_var("PS4"))),
        ("STATE-34", "mapfile -t BASH_ARGV < README.md", deny("denied", shell_var("BASH_ARGV"))),
        ("STATE-35", "let SECONDS=1", deny("denied", shell_var("SECONDS"))),
        ("STATE-36", "n=PATH; (( $n = 1 ))", deny("unsupported_construct", "the arithmetic `$n = 1` assigns to a variable whose name is built at run time; assign to a literal name".into())),
        ("STATE-37", "mapfile -C ls -c 1 x < README.md", deny("unsupported_construct", "`mapfile -C ls -c 1 x`: `mapfile -C` runs text as a command; it is not allowed".into())),
        ("STATE-45", "y='BASH_COMPAT=31'; (( y )); ls", deny("unsupported_construct", "the value of y (`BASH_COMPAT=31`) sets BASH_COMPAT when an arithmetic expression evaluates it; pass the text another way (a file, or an argument)".into())),
        ("STATE-46", "export y=PATH=1", deny("unsupported_construct", "the value of y (`PATH=1`) sets PATH when an arithmetic expression evaluates it; pass the text another way (a file, or an argument)".into())),
        ("STATE-50", "s=abc; echo ${s:(BASH_COMPAT=31)}", deny("denied", shell_var("BASH_COMPAT"))),
        ("STATE-51", "echo ${a[FUNCNEST=1]}", deny("denied", shell_var("FUNCNEST"))),
        ("STATE-53", "[[ BASH_COMPAT=31 -eq 31 ]] && ls", deny("denied", shell_var("BASH_COMPAT"))),
        ("STATE-52", "echo ${#a[SECONDS++]}", deny("denied", shell_var("SECONDS"))),
        // Arithmetic on a value the line sets at run time: bash evaluates the text, and a
        // subscript in it (`a[$(cmd)]`) runs the command. Every context that evaluates.
        ("STATE-54", "x=$(cat README.md); echo $((x))", deny("unsupported_construct", arith("$((x))", "x"))),
        ("STATE-55", "x=$(cat README.md); echo $(( $x + 1 ))", deny("unsupported_construct", arith("$(( $x + 1 ))", "x"))),
        ("STATE-56", "x=`cat README.md`; (( x > 3 )) && ls", deny("unsupported_construct", arith("(( x > 3 ))", "x"))),
        ("STATE-57", "read -r n < README.md; for (( i = 0; i < n; i++ )); do ls; done", deny("unsupported_construct", arith("for (( i = 0; i < n; i++ ))", "n"))),
        ("STATE-58", "read -r x < README.md; [[ $x -eq 1 ]] && ls", deny("unsupported_construct", arith("[[ $x -eq 1 ]]", "x"))),
        ("STATE-59", "read -r x < README.md; let y=x+1", deny("unsupported_construct", arith("let y=x+1", "x"))),
        ("STATE-60", "read -r i < README.md; echo \"${a[i]}\"", deny("unsupported_construct", arith("${a[i]}", "i"))),
        ("STATE-61", "read -r o < README.md; s=abc; echo \"${s:o:1}\"", deny("unsupported_construct", arith("${s:o:1}", "o"))),
        ("STATE-62", "read -r i < README.md; a[i]=1", deny("unsupported_construct", arith("a[i]=", "i"))),
        ("STATE-63", "declare -i n; n=$(cat README.md)", deny("unsupported_construct", arith("declare -i n", "n"))),
        ("STATE-64", "local -i n=m; read -r m < README.md", deny("unsupported_construct", arith("local -i n=m", "n"))),
        ("STATE-65", "x=$(cat README.md); y=${x%% *}; z=$y; echo $((z + 1))", deny("unsupported_construct", arith("$((z + 1))", "z"))),
        ("STATE-66", "for n in $(cat README.md); do echo $((n * 2)); done", deny("unsupported_construct", arith("$((n * 2))", "n"))),
        ("STATE-67", "for n in src/*; do echo $((n)); done; read n", deny("unsupported_construct", arith("$((n))", "n"))),
        ("STATE-68", "x=1; read -r x < README.md; echo $((x))", deny("unsupported_construct", arith("$((x))", "x"))),
        ("STATE-69", "while read -r n; do echo $((n + 1)); done < README.md", deny("unsupported_construct", arith("$((n + 1))", "n"))),
        ("STATE-70", "mapfile -t < README.md; echo $((MAPFILE))", deny("unsupported_construct", arith("$((MAPFILE))", "MAPFILE"))),
        ("STATE-71", "getopts ab: o; echo $((OPTARG))", deny("unsupported_construct", arith("$((OPTARG))", "OPTARG"))),
        ("STATE-72", "set -- $(cat README.md); echo $(($1))", deny("unsupported_construct", run_time_arithmetic("$(($1))", "`$1`", "\"$1\""))),
        ("STATE-73", "x=$(cat README.md) bash -c 'echo $((x))'", deny("unsupported_construct", arith("$((x))", "x"))),
        ("STATE-74", "cat README.md; echo $((_))", deny("unsupported_construct", arith("$((_))", "_"))),
        ("STATE-75", ": ${x:=$y}; read -r y < README.md; echo $((x))", deny("unsupported_construct", arith("$((x))", "x"))),
        ("STATE-76", "read -r x < README.md; set -- a; echo \"${@:x}\"", deny("unsupported_construct", arith("${@:x}", "x"))),
        ("STATE-77", "read -r x < README.md; [[ -v a[x] ]] && ls", deny("unsupported_construct", arith("[[ -v a[x] ]]", "x"))),
        ("STATE-78", "read -r x < README.md; test -v 'a[x]' && ls", deny("unsupported_construct", arith("test -v a[x]", "x"))),
        ("STATE-79", "read -r x < README.md; read -r 'a[x]' < README.md", deny("unsupported_construct", arith("read -r a[x]", "x"))),
        // A literal value that names such a variable: arithmetic evaluates that name in turn.
        ("STATE-80", "read -r x < README.md; y=x; echo $((y))", deny("unsupported_construct", arith("$((y))", "y"))),
        ("STATE-81", "read -r x < README.md; export y=x+1; (( y ))", deny("unsupported_construct", arith("(( y ))", "y"))),
        ("STATE-82", "for y in x; do echo $((y)); done; read -r x < README.md", deny("unsupported_construct", arith("$((y))", "y"))),
        ("STATE-83", ": ${y=$z}; read -r z < README.md; cat <<EOF\n$((y))\nEOF", deny("unsupported_construct", arith("$((y))", "y"))),
        ("STATE-84", "source ./README.md; echo $((x))", deny("unsupported_construct", "`source` runs text that cannot be judged before it runs; run the commands directly instead, or ask the user to list the file (`source ./README.md`) in the scope. Also refused: unsupported_construct ($((x))).".into())),
        ("STATE-85", "builtin read -r x < README.md; echo $((x))", deny("unsupported_construct", arith("$((x))", "x"))),
        // Here-documents bash ends elsewhere: a backslash-newline joins the delimiter line.
        ("STATE-38", "cat <<EOF\nE\\\nOF\ntouch pwned\nEOF", deny("unsupported_construct", heredoc("E\\"))),
        ("STATE-39", "cat <<EOF\nab\\\nEOF\nls\nEOF", deny("unsupported_construct", heredoc("ab\\") + ". Also refused: command_not_allowed (EOF).")),
        ("STATE-40", "echo \"$(cat <<EOF\nE\\\nOF\ntouch pwned\nEOF\n)\"", deny("unsupported_construct", heredoc("E\\"))),
        // Globs that bash 5.1 and older expand through `..`.
        ("STATE-41", "cat .*/x", deny("unsupported_construct", dot_glob(".*/x"))),
        ("STATE-42", "ls src/.?", deny("unsupported_construct", dot_glob("src/.?"))),
        ("STATE-43", "grep -r x .[.]*", deny("unsupported_construct", dot_glob(".[.]*"))),
        ("STATE-47", "cat \\.*/x", deny("unsupported_construct", dot_glob("\\.*/x"))),
        ("STATE-48", "ls -d .[[:punct:]]*", deny("unsupported_construct", dot_glob(".[[:punct:]]*"))),
        ("STATE-49", "declare 'DIRSTACK[0]=/etc'; ls", deny("denied", shell_var("DIRSTACK") + " Also refused: unsupported_construct (declare DIRSTACK[0]=/etc).")),
        ("STATE-44", "cat < .*/x", deny("unsupported_construct", dot_glob(".*/x"))),
        // Benign: stays allowed.
        ("STATE-B01", "set -euo pipefail; ls", None),
        ("STATE-B02", "set -x; cat README.md", None),
        ("STATE-B03", "set +eux -o errexit +o nounset -o xtrace; ls", None),
        ("STATE-B04", "export FOO=bar; echo $FOO", None),
        ("STATE-B05", "X=1 ls", None),
        ("STATE-B06", "LC_ALL=C ls", None),
        ("STATE-B07", "set -- a b; echo \"$1\"", None),
        ("STATE-B08", "set; set -o; set +o", None),
        ("STATE-B09", "for f in a b; do echo \"$f\"; done", None),
        ("STATE-B10", "for ((i = 0; i < 3; i++)); do ls; done", None),
        ("STATE-B11", ": ${X:=1}; echo $((X <= 2))", None),
        ("STATE-B12", "bash -euo pipefail -c 'ls'", None),
        ("STATE-B13", "cat <<'EOF'\nab\\\nEOF", None),
        ("STATE-B14", "cat <<EOF\nab\\\\\nEOF", None),
        ("STATE-B15", "ls -d src/.[!.]*", None),
        ("STATE-B16", "read -r line < README.md; getopts ab opt; hash -r", None),
        ("STATE-B18", "msg='a=b'; echo \"$msg\"; n=--x; echo $n", None),
        ("STATE-B19", "s=abcdef; i=1; echo ${s:i:2} ${s:(i+1)} \"${a[i]}\" \"${a[@]}\"", None),
        ("STATE-B20", "[[ -f README.md && $x == a=b && 1 -lt 2 ]] && ls", None),
        ("STATE-B17", "builtin set -e; command set -u; ls", None),
        // Arithmetic on literal values, loops over literal words, the caller's environment,
        // arithmetic results, and run-time values that arithmetic never evaluates.
        ("STATE-B21", "n=5; echo $((n+1))", None),
        ("STATE-B22", "for i in 1 2 3; do echo $((i*2)); done", None),
        ("STATE-B23", "echo $((HOME_COUNT+1)); x=$HOME_COUNT; echo $((x))", None),
        ("STATE-B24", "count=$(wc -l < README.md); echo \"$count\"", None),
        ("STATE-B25", "count=$(wc -l < README.md); [ \"$count\" -gt 3 ] && echo many; test \"$count\" -eq 1", None),
        ("STATE-B26", "i=0; i=$((i + 1)); (( i < 3 )) && echo $i", None),
        ("STATE-B27", "read -r line < README.md; s=abc; echo \"${#line} ${s:1:1} $line\"", None),
        ("STATE-B28", "read -r x < README.md; [[ $x == 1 ]] && head -n \"$x\" README.md", None),
    ]
}

/// With `alias` listed in `allow_constructs`, a definition stays inert under bash (which
/// expands no alias in a script) and is refused in a script of `sh`, which does.
#[test]
fn alias_definitions_only_where_aliases_stay_off() {
    let tmp = TempDir::new("shell-state-alias");
    let yaml = format!(
        "paths:\n  read: [\"{root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat, sh, bash]\n  allow_constructs: [alias]\n",
        root = tmp.path().display()
    );
    let s = scope(&yaml);
    for (cmd, want) in [
        ("alias ll='ls -l'; ls", None),
        ("bash -c \"alias ls='cat /etc/shadow'; ls\"", None),
        ("alias", None),
        (
            "sh -c \"alias ls='cat x'\nls\"",
            Some("`alias ls=cat x`: an alias defined in a script of sh -c is expanded in the commands after it, which are judged as written; run the commands directly instead"),
        ),
    ] {
        let d = decide_in(&s, tmp.path(), None, None, &[], cmd);
        match want {
            None => assert!(d.allowed, "{cmd}: {:?} {}", d.reason, d.message),
            Some(m) => {
                assert!(!d.allowed, "{cmd}");
                assert_eq!((d.reason, d.message.as_str()), (Some("unsupported_construct"), m), "{cmd}");
            }
        }
    }
}

/// With `trap` listed in `allow_constructs`, the action is judged as a script.
#[test]
fn trap_actions_are_judged() {
    let tmp = TempDir::new("shell-state-trap");
    let yaml = format!(
        "paths:\n  read: [\"{root}/**\"]\nbash_tools:\n  categories:\n    read_only: [ls, cat]\n  allow_constructs: [trap]\n",
        root = tmp.path().display()
    );
    let s = scope(&yaml);
    for (cmd, want) in [
        ("trap 'ls' EXIT; ls", None),
        ("trap - EXIT; trap -p; trap -l; ls", None),
        ("trap '' INT; ls", None),
        ("trap 'cat /etc/shadow' EXIT; ls", Some("path_not_in_scope")),
        ("trap -- 'touch x' EXIT", Some("command_not_allowed")),
        ("trap \"$a\" EXIT", Some("dynamic_command")),
    ] {
        let d = decide_in(&s, tmp.path(), None, None, &[], cmd);
        assert_eq!(
            (d.allowed, d.reason),
            (want.is_none(), want),
            "{cmd}: {}",
            d.message
        );
    }
}

#[test]
fn shell_state_table() {
    let (tmp, s) = fixture();
    let mut bad = Vec::new();
    for (id, cmd, want) in table() {
        let d = decide_in(&s, tmp.path(), None, None, &[], cmd);
        let ok = match &want {
            None => d.allowed,
            Some((reason, message)) => {
                !d.allowed && d.reason == Some(*reason) && &d.message == message
            }
        };
        if !ok {
            bad.push(format!(
                "{id} {cmd:?}\n  want {want:?}\n  got  allowed={} {:?} {}",
                d.allowed, d.reason, d.message
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} rows differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
