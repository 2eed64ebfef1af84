//! The command semantics table: which options and operands of a command read, write or
//! execute. Shipped as data (`data/semantics.yml`), overridable per scope under
//! `semantics:`.

use std::collections::BTreeMap;

use once_cell::sync::Lazy;
use serde::{Deserialize, Serialize};

/// What the positional operands of a command are.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OperandKind {
    /// Not known: path-like operands (absolute, `~`, `..`, existing entries) are checked as
    /// reads, the rest ignored.
    #[default]
    Unknown,
    /// Data, never a path (`echo`, `printf`).
    Data,
    /// Files or directories that are read.
    Read,
    /// Files or directories that are written, created or removed.
    Write,
    /// All operands are written (sources removed, target created): `mv`.
    AllWrite,
    /// All but the last are read; the last is written (`cp`, `ln`, `install`).
    LastWrite,
    /// The first is written, the rest read (`zip ARCHIVE FILE...`).
    FirstWrite,
    /// `key=value` operands: `of=` is written, `if=` read (`dd`).
    KeyValue,
}

/// One command's entry in the semantics table. Option names are spelled as typed
/// (`-o`, `--output`); long options also match their unambiguous abbreviations.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CommandSemantics {
    /// What positional operands are.
    pub operands: OperandKind,
    /// How many leading operands are data (a pattern, a script) before the `operands` kind
    /// applies: `grep PATTERN FILE...` has 1.
    pub leading_data_operands: usize,
    /// Options that, when present, mean the leading data operands are absent
    /// (`grep -e PAT`, `grep -f FILE`).
    pub data_operand_options: Vec<String>,
    /// Options that take a value that is neither a path nor code: attached (`-m1`,
    /// `--max-count=1`) or the next word (`-m 1`).
    pub value_options: Vec<String>,
    /// Options whose value is optional: given only attached to a short option (`-d5`) or
    /// after `=` (`--color=auto`); the next word is an operand (`grep --color x FILE`).
    pub optional_value_options: Vec<String>,
    /// Options that take two words, a name and then its value (`jq --arg NAME VALUE`,
    /// `--slurpfile NAME FILE`); the value is the second, a path read when the option is
    /// also among the read options.
    pub pair_options: Vec<String>,
    /// Long options that take no value, listed so that their abbreviations are not taken for
    /// those of a longer option that does (`--count` beside `--context`).
    pub flag_options: Vec<String>,
    /// Options whose value is a list of paths that are read, by separator (`file -m
    /// a:b`: `{-m: ":"}`); the whole value and each path are checked.
    pub path_list_options: BTreeMap<String, String>,
    /// Environment variables whose value names files the command reads (`MAGIC` for
    /// `file`), a `:`-separated list: set on the command (`MAGIC=x file y`, `env MAGIC=x
    /// file y`), each path is checked as a read.
    pub read_env: Vec<String>,
    /// Environment variables that make the command run programs or take options or files of
    /// their choosing (`MANOPT` for `man`, `RSYNC_RSH`, `CURL_HOME`): a command line that
    /// names one is refused.
    pub deny_env: Vec<String>,
    /// Options whose value is a path that is read.
    pub read_options: Vec<String>,
    /// Options whose value is a path that is written.
    pub write_options: Vec<String>,
    /// Options that make the operands written instead of read (`sed -i`, `sort -o` is a
    /// write option instead).
    pub write_mode_options: Vec<String>,
    /// Options that make the command write in its working directory (`tar -x`, `file -C`).
    pub cwd_write_options: Vec<String>,
    /// The command writes in its working directory whatever its options (`unzip`, `wget`).
    pub cwd_write: bool,
    /// Operands read must be in scope even under `path_arguments: warn` (`ln`: a link to a
    /// path outside the scope would open it to every later command).
    pub enforce_operands: bool,
    /// Options that run a program or code that cannot be judged: always denied. `OPT=`
    /// denies an option of optional value only when it is given one (`git --exec-path=DIR`
    /// runs git's commands from DIR; a bare `git --exec-path` prints where they are).
    pub deny_options: Vec<String>,
    /// Options of an interpreter whose value is code it runs (`emacs --eval`, `python -c`):
    /// allowed with a warning, since listing the interpreter allows what it runs.
    pub code_options: Vec<String>,
    /// Options of an interpreter whose value is a file of code it runs (`emacs -l`,
    /// `--script`): a read path checked against the scope, with the same warning.
    pub code_file_options: Vec<String>,
    /// Options whose value is a directory the command works in (`git -C`, `make -C`): checked
    /// like the working directory, against the scope the command's category needs.
    pub directory_options: Vec<String>,
    /// The command has subcommands (`git`, `cargo`): global options come before the
    /// subcommand; multi-word category entries match after them.
    pub subcommands: bool,
    /// Global options (before the subcommand) that take a value.
    pub global_value_options: Vec<String>,
    /// Global options that are refused before the subcommand only (`OPT=` as in
    /// [`Self::deny_options`]): after it the same word is the subcommand's own (`git -c`
    /// sets configuration, `git switch -c` makes a branch; `git --git-dir` chooses the
    /// repository, `git rev-parse --git-dir` prints it).
    pub global_deny_options: Vec<String>,
    /// Per-subcommand semantics (`git diff`: `--output` writes).
    pub subcommand_semantics: BTreeMap<String, CommandSemantics>,
    /// A built-in handler in code for commands whose arguments are a language of their own:
    /// `find`, `sed`, `awk`, `xargs`, `git`, `env`, ...
    pub handler: Option<String>,
    /// The command reads every file under each directory operand it reads (`rg`, `git grep`,
    /// `tar c`): a deny pattern must then hold for the whole tree.
    pub recursive: bool,
    /// Options that make it do so (`grep -r`, `cp -a`): a name, or `OPT=VALUE` for an option
    /// with that value (`--directories=recurse` also matches `-d recurse`).
    pub recursive_options: Vec<String>,
    /// What a recursive read reads when no operand names a path (`.` for `grep -r`, `rg`).
    pub default_operand: Option<String>,
    /// With no path operand it reads its standard input when that is a pipe or a redirect,
    /// not [`Self::default_operand`] (`rg`).
    pub stdin_without_operand: bool,
    /// It lists names and metadata, never the content of files (`ls -R`, `du`, `stat`): not a
    /// read of what a deny pattern protects when run on names found at run time.
    pub names_only: bool,
    /// Options that make it list names only (`rg --files`).
    pub names_only_options: Vec<String>,
    /// Options that make a recursive read follow symbolic links (`grep -R`, `rg -L`).
    pub follow_options: Vec<String>,
    /// A recursive read follows symbolic links unless told not to (`zip`).
    pub follows_links: bool,
    /// Options that give it the names of the files it reads in a file (`tar -T`, `wc
    /// --files0-from`): they may name any entry.
    pub names_from_options: Vec<String>,
    /// Options that tell it not to (`zip -y`).
    pub no_follow_options: Vec<String>,
}

/// The built-in table, parsed once from `data/semantics.yml`.
pub static BUILTIN_SEMANTICS_YAML: &str = include_str!("../../data/semantics.yml");

/// The parsed built-in table. An error here is a bug in the shipped data; it is reported
/// by `builtin_table_error` and the table is then empty (every command `Unknown`).
static BUILTIN: Lazy<Result<BTreeMap<String, CommandSemantics>, String>> = Lazy::new(|| {
    serde_yaml::from_str::<BTreeMap<String, CommandSemantics>>(BUILTIN_SEMANTICS_YAML)
        .map_err(|e| e.to_string())
});

/// The built-in semantics table.
pub fn builtin() -> &'static BTreeMap<String, CommandSemantics> {
    static EMPTY: Lazy<BTreeMap<String, CommandSemantics>> = Lazy::new(BTreeMap::new);
    match &*BUILTIN {
        Ok(t) => t,
        Err(_) => &EMPTY,
    }
}

/// The entry of a command the table does not know: every field empty.
pub fn empty() -> &'static CommandSemantics {
    static EMPTY: Lazy<CommandSemantics> = Lazy::new(CommandSemantics::default);
    &EMPTY
}

/// The parse error of the shipped table, if any (tested to be `None`).
pub fn builtin_table_error() -> Option<&'static str> {
    BUILTIN.as_ref().err().map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses() {
        assert_eq!(builtin_table_error(), None);
        assert!(builtin().len() > 100, "{} entries", builtin().len());
    }

    #[test]
    fn handlers_named_in_the_table_exist() {
        let known = ["find", "sed", "awk", "tar"];
        for (name, s) in builtin() {
            if let Some(h) = &s.handler {
                assert!(known.contains(&h.as_str()), "{name}: unknown handler {h}");
            }
        }
    }

    /// The commands that read a whole tree, and those that list names only.
    #[test]
    fn tree_readers_are_marked() {
        let t = builtin();
        for cmd in ["rg", "ag", "tar"] {
            assert!(t[cmd].recursive, "{cmd}");
        }
        assert!(t["git"].subcommand_semantics["grep"].recursive);
        for (cmd, opt) in [
            ("grep", "-r"),
            ("grep", "-R"),
            ("grep", "--recursive"),
            ("grep", "--directories=recurse"),
            ("grep", "-d=recurse"),
            ("egrep", "-r"),
            ("fgrep", "-r"),
            ("cp", "-r"),
            ("cp", "-R"),
            ("cp", "-a"),
            ("zip", "-r"),
            ("rsync", "-r"),
            ("rsync", "-a"),
        ] {
            assert!(
                t[cmd].recursive_options.iter().any(|o| o == opt),
                "{cmd} {opt}"
            );
        }
        for cmd in ["grep", "egrep", "fgrep", "rg", "ag"] {
            assert_eq!(t[cmd].default_operand.as_deref(), Some("."), "{cmd}");
        }
        for cmd in [
            "ls", "du", "tree", "stat", "find", "fd", "realpath", "readlink",
        ] {
            assert!(t[cmd].names_only, "{cmd}");
        }
        assert!(t["rg"].names_only_options.iter().any(|o| o == "--files"));
        assert!(t["rg"].stdin_without_operand && !t["grep"].stdin_without_operand);
        for (cmd, opt) in [
            ("grep", "-R"),
            ("grep", "--dereference-recursive"),
            ("rg", "-L"),
            ("rg", "--follow"),
            ("cp", "-L"),
            ("tar", "-h"),
            ("rsync", "-L"),
        ] {
            assert!(
                t[cmd].follow_options.iter().any(|o| o == opt),
                "{cmd} {opt}"
            );
        }
        assert!(t["zip"].follows_links && t["zip"].no_follow_options.iter().any(|o| o == "-y"));
        for (cmd, opt) in [
            ("tar", "-T"),
            ("tar", "--files-from"),
            ("wc", "--files0-from"),
            ("sort", "--files0-from"),
            ("rsync", "--files-from"),
            ("zip", "-@"),
            ("file", "-f"),
            ("file", "--files-from"),
            ("du", "--files0-from"),
            ("md5sum", "-c"),
            ("sha256sum", "--check"),
        ] {
            assert!(
                t[cmd].names_from_options.iter().any(|o| o == opt),
                "{cmd} {opt}"
            );
        }
    }

    #[test]
    fn options_that_run_programs_are_denied() {
        for (cmd, opt) in [
            ("rg", "--pre"),
            ("git", "-c"),
            ("git", "--ext-diff"),
            ("sort", "--compress-program"),
            ("tar", "--checkpoint-action"),
            ("fd", "--exec"),
            ("man", "-P"),
            ("rsync", "-e"),
            ("emacs", "--user"),
            ("zip", "-TT"),
        ] {
            let s = builtin()
                .get(cmd)
                .unwrap_or_else(|| panic!("{cmd} missing"));
            assert!(
                s.deny_options
                    .iter()
                    .chain(&s.global_deny_options)
                    .any(|o| o == opt),
                "{cmd} {opt}"
            );
        }
    }
}
