//! A command's words read the way the program reads them (getopt and getopt_long): short
//! options bundled char by char, a value attached or in the next word, long options with `=`
//! or the next word, optional values only with `=` (long) or attached (short), unambiguous
//! abbreviations of the long options the semantics table lists, `--` ending the options.
//! Every walk over a command's options (`effects.rs`, `readers.rs`, the handlers) uses it.

use crate::scope::semantics::CommandSemantics;
use crate::shell::WordInfo;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// A flag.
    None,
    /// A value always: attached (`-ofile`, `--output=file`) or the next word.
    Required,
    /// A value only when attached (`-dvalue`) or given with `=` (`--color=auto`): the next
    /// word is an operand.
    Optional,
    /// Two words, a name and its value (`jq --arg NAME VALUE`).
    Pair,
}

/// How an option's value was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Given {
    /// No value.
    None,
    /// The next word (`-o file`, `--output file`).
    Separate,
    /// Attached to a short option (`-ofile`, `-xffile`).
    Attached,
    /// After `=` (`--output=file`).
    Equals,
}

/// One option as the program reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opt {
    /// Its name as the semantics table lists it (an abbreviation resolved), else as typed.
    pub name: String,
    /// The options of the table an ambiguous abbreviation could stand for (the program
    /// refuses it, or takes one the table does not list).
    pub candidates: Vec<String>,
    /// Its value; a value built at run time has no `value` of its own.
    pub value: Option<WordInfo>,
    pub given: Given,
    /// The index of the word that holds the option.
    pub index: usize,
}

/// One parsed item of a command's words.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item<'w> {
    Opt(Opt),
    /// An operand (a word after `--` included).
    Operand {
        index: usize,
        word: &'w WordInfo,
    },
    /// `--`.
    End {
        index: usize,
    },
    /// A word built at run time where an option may stand that does not start with a literal
    /// `-` (`$opt`, `"$@"`): the program may take it for an option.
    RunTime {
        index: usize,
        word: &'w WordInfo,
    },
}

/// Every option name an entry lists (`OPT=VALUE` entries by their name).
fn listed(sem: &CommandSemantics) -> impl Iterator<Item = &str> {
    let lists = [
        &sem.value_options,
        &sem.optional_value_options,
        &sem.read_options,
        &sem.write_options,
        &sem.write_mode_options,
        &sem.cwd_write_options,
        &sem.deny_options,
        &sem.code_options,
        &sem.code_file_options,
        &sem.directory_options,
        &sem.global_value_options,
        &sem.global_deny_options,
        &sem.data_operand_options,
        &sem.recursive_options,
        &sem.names_only_options,
        &sem.follow_options,
        &sem.names_from_options,
        &sem.no_follow_options,
        &sem.flag_options,
        &sem.pair_options,
    ];
    lists
        .into_iter()
        .flat_map(|l| l.iter())
        .chain(sem.path_list_options.keys())
        .map(|o| o.split_once('=').map_or(o.as_str(), |(n, _)| n))
}

/// What an option named as listed takes.
pub(crate) fn arity(sem: &CommandSemantics, name: &str) -> Arity {
    if sem.pair_options.iter().any(|o| o == name) {
        return Arity::Pair;
    }
    let required = [
        &sem.value_options,
        &sem.read_options,
        &sem.write_options,
        &sem.directory_options,
        &sem.global_value_options,
        &sem.code_options,
        &sem.code_file_options,
    ];
    if required.iter().any(|l| l.iter().any(|o| o == name))
        || sem.path_list_options.contains_key(name)
    {
        Arity::Required
    } else if sem.optional_value_options.iter().any(|o| o == name) {
        Arity::Optional
    } else {
        Arity::None
    }
}

/// A long option as typed (`--colo`) resolved against the table: the exact name, else the one
/// listed long option it abbreviates; several are the candidates of an ambiguous one.
fn resolve(sem: &CommandSemantics, typed: &str) -> (String, Vec<String>) {
    let mut matches: Vec<&str> = Vec::new();
    for o in listed(sem) {
        if o == typed {
            return (o.to_string(), Vec::new());
        }
        if typed.starts_with("--")
            && typed.len() > 2
            && o.starts_with(typed)
            && !matches.contains(&o)
        {
            matches.push(o);
        }
    }
    match matches.as_slice() {
        [one] => (one.to_string(), Vec::new()),
        _ => (
            typed.to_string(),
            matches.into_iter().map(str::to_string).collect(),
        ),
    }
}

/// A value cut from the text of `w`: built at run time when `w` is.
fn cut(w: &WordInfo, text: &str) -> WordInfo {
    if w.value.is_some() && !w.glob {
        WordInfo::literal(text)
    } else {
        WordInfo {
            raw: text.to_string(),
            value: None,
            glob: false,
        }
    }
}

/// The items of `words` for the command whose entry is `sem`. Options and operands may mix
/// (GNU permutes them); `stop_at_operand` ends the parse after the first operand (global
/// options before a subcommand).
pub(crate) fn parse<'w>(
    sem: &CommandSemantics,
    words: &'w [WordInfo],
    stop_at_operand: bool,
) -> Vec<Item<'w>> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut done = false;
    while let Some(w) = words.get(i) {
        let index = i;
        i += 1;
        let text = w.shown();
        if done
            || text == "-"
            || (w.value.is_some() && !text.starts_with('-'))
            || (w.value.is_none() && !w.raw.starts_with('-'))
        {
            if !done && w.value.is_none() && super::effects::may_be_option(&w.raw) {
                out.push(Item::RunTime { index, word: w });
            } else {
                out.push(Item::Operand { index, word: w });
            }
            if stop_at_operand {
                break;
            }
            continue;
        }
        let text = if w.value.is_some() {
            text
        } else {
            w.raw.as_str()
        };
        if text == "--" {
            out.push(Item::End { index });
            done = true;
            if stop_at_operand {
                break;
            }
            continue;
        }
        // A long option, or a multi-letter option the table lists with one dash (`-exec`,
        // `-TT`, `-eval`): `=` or the next word.
        let (head, inline) = match text.split_once('=') {
            Some((h, v)) => (h, Some(v)),
            None => (text, None),
        };
        let single_long =
            !text.starts_with("--") && head.len() > 2 && listed(sem).any(|o| o == head);
        if text.starts_with("--") || single_long {
            let (name, candidates) = resolve(sem, head);
            let ar = if candidates.is_empty() {
                arity(sem, &name)
            } else {
                Arity::None
            };
            let (value, given) = match (inline, ar) {
                (Some(v), _) => (Some(cut(w, v)), Given::Equals),
                (None, Arity::Required) => {
                    let v = words.get(i).cloned();
                    i += 1;
                    (v, Given::Separate)
                }
                (None, Arity::Pair) => {
                    let v = words.get(i + 1).cloned();
                    i += 2;
                    (v, Given::Separate)
                }
                (None, _) => (None, Given::None),
            };
            out.push(Item::Opt(Opt {
                name,
                candidates,
                value,
                given,
                index,
            }));
            continue;
        }
        // A multi-letter option of one dash with its value attached (`-TTcmd`).
        if !text.starts_with("--") {
            let mut longest: Option<&str> = None;
            for o in listed(sem) {
                if o.len() > 2
                    && !o.starts_with("--")
                    && text.len() > o.len()
                    && text.starts_with(o)
                    && longest.is_none_or(|l| o.len() > l.len())
                {
                    longest = Some(o);
                }
            }
            if let Some(o) = longest {
                let value = Some(cut(w, &text[o.len()..]));
                out.push(Item::Opt(Opt {
                    name: o.to_string(),
                    candidates: Vec::new(),
                    value,
                    given: Given::Attached,
                    index,
                }));
                continue;
            }
        }
        // A cluster of short options, char by char.
        let letters = &text[1..];
        for (k, c) in letters.char_indices() {
            let name = format!("-{c}");
            let rest = &letters[k + c.len_utf8()..];
            match arity(sem, &name) {
                Arity::None => out.push(Item::Opt(Opt {
                    name,
                    candidates: Vec::new(),
                    value: None,
                    given: Given::None,
                    index,
                })),
                Arity::Optional => {
                    let (value, given) = if rest.is_empty() {
                        (None, Given::None)
                    } else {
                        (Some(cut(w, rest)), Given::Attached)
                    };
                    out.push(Item::Opt(Opt {
                        name,
                        candidates: Vec::new(),
                        value,
                        given,
                        index,
                    }));
                    break;
                }
                Arity::Required | Arity::Pair => {
                    let (value, given) = if rest.is_empty() {
                        let v = words.get(i).cloned();
                        i += 1;
                        (v, Given::Separate)
                    } else {
                        (Some(cut(w, rest)), Given::Attached)
                    };
                    out.push(Item::Opt(Opt {
                        name,
                        candidates: Vec::new(),
                        value,
                        given,
                        index,
                    }));
                    break;
                }
            }
        }
    }
    out
}

/// The options parsed from `words`, up to the first operand when `leading`.
pub(crate) fn options(sem: &CommandSemantics, words: &[WordInfo], leading: bool) -> Vec<Opt> {
    let mut out = Vec::new();
    for item in parse(sem, words, false) {
        match item {
            Item::Opt(o) => out.push(o),
            Item::End { .. } => break,
            Item::Operand { .. } | Item::RunTime { .. } if leading => break,
            Item::Operand { .. } | Item::RunTime { .. } => {}
        }
    }
    out
}

/// Whether the options in `words` include one of `list`: a name as listed (its abbreviation
/// and its place in a bundle included), or `OPT=VALUE` for that option with that value
/// (`--directories=recurse` also matches `-d recurse` and `-drecurse`). `leading`: only
/// before the first operand.
pub(crate) fn has_option(
    sem: &CommandSemantics,
    list: &[String],
    words: &[WordInfo],
    leading: bool,
) -> bool {
    options(sem, words, leading).iter().any(|o| {
        list.iter().any(|l| match l.split_once('=') {
            Some((n, want)) => {
                n == o.name && o.value.as_ref().and_then(WordInfo::exact) == Some(want)
            }
            None => *l == o.name,
        })
    })
}

/// The values of the options named in `names`, in order, each with its name as listed; a
/// value built at run time (or missing) is `None`.
pub(crate) fn option_values(
    sem: &CommandSemantics,
    names: &[&str],
    words: &[WordInfo],
    leading: bool,
) -> Vec<(String, Option<String>)> {
    options(sem, words, leading)
        .into_iter()
        .filter(|o| names.contains(&o.name.as_str()))
        .map(|o| {
            let v = o
                .value
                .as_ref()
                .and_then(WordInfo::exact)
                .map(str::to_string);
            (o.name, v)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sem(yaml: &str) -> CommandSemantics {
        serde_yaml::from_str(yaml).unwrap_or_else(|e| panic!("{yaml}: {e}"))
    }

    /// Each item shown as text: `-o=V` (separate), `-o+V` (attached), `-o:=V` (with `=`),
    /// `-o` a flag, `@W` an operand, `--` the end, `$W` a word built at run time.
    fn shown(s: &CommandSemantics, args: &[&str], stop: bool) -> Vec<String> {
        let words: Vec<WordInfo> = args
            .iter()
            .map(|a| {
                if a.contains('$') {
                    WordInfo {
                        raw: a.to_string(),
                        value: None,
                        glob: false,
                    }
                } else {
                    WordInfo::literal(a)
                }
            })
            .collect();
        parse(s, &words, stop)
            .into_iter()
            .map(|i| match i {
                Item::Opt(o) => {
                    let v = o.value.map(|v| v.raw).unwrap_or_else(|| "?".into());
                    let amb = if o.candidates.is_empty() {
                        String::new()
                    } else {
                        format!("[{}]", o.candidates.join(","))
                    };
                    match o.given {
                        Given::None => format!("{}{amb}", o.name),
                        Given::Separate => format!("{}={v}", o.name),
                        Given::Attached => format!("{}+{v}", o.name),
                        Given::Equals => format!("{}:={v}", o.name),
                    }
                }
                Item::Operand { word, .. } => format!("@{}", word.raw),
                Item::End { .. } => "--".into(),
                Item::RunTime { word, .. } => format!("${}", word.raw),
            })
            .collect()
    }

    #[test]
    fn words_are_read_as_getopt_reads_them() {
        let grep = sem("{value_options: [-e, --regexp, -m, --max-count], optional_value_options: [--color, --colour], read_options: [-f, --file, --exclude-from], flag_options: [--count]}");
        let tar = sem("{read_options: [-f, --file, -T], value_options: [-b]}");
        let go = sem("{value_options: [-run], deny_options: [-exec]}");
        let jq = sem("{pair_options: [--arg, --rawfile], read_options: [--rawfile]}");
        let rows: &[(&CommandSemantics, &[&str], &[&str])] = &[
            (
                &grep,
                &["--color", "root", "/etc/passwd"],
                &["--color", "@root", "@/etc/passwd"],
            ),
            (&grep, &["--color=auto", "x"], &["--color:=auto", "@x"]),
            (&grep, &["--col", "x"], &["--col[--color,--colour]", "@x"]),
            (&grep, &["--colo=never", "x"], &["--colo:=never", "@x"]),
            (&grep, &["--cou", "x"], &["--count", "@x"]),
            (
                &grep,
                &["--exclude-f", "L", "x"],
                &["--exclude-from=L", "@x"],
            ),
            (&grep, &["-rf", "F", "p"], &["-r", "-f=F", "@p"]),
            (&grep, &["-rfF", "p"], &["-r", "-f+F", "@p"]),
            (&grep, &["-em", "x"], &["-e+m", "@x"]),
            (&grep, &["-m1", "-e", "x", "f"], &["-m+1", "-e=x", "@f"]),
            (&grep, &["x", "--", "-f", "y"], &["@x", "--", "@-f", "@y"]),
            (&grep, &["-", "-f"], &["@-", "-f=?"]),
            (&grep, &["$opt", "x"], &["$$opt", "@x"]),
            (&grep, &["-f$X", "x"], &["-f+$X", "@x"]),
            (&grep, &["--file=$X", "x"], &["--file:=$X", "@x"]),
            (&tar, &["-xfFILE"], &["-x", "-f+FILE"]),
            (
                &tar,
                &["-xvzf", "a.tar", "-T", "L"],
                &["-x", "-v", "-z", "-f=a.tar", "-T=L"],
            ),
            (&tar, &["-b20fA"], &["-b+20fA"]),
            (
                &go,
                &["-run", "X", "-exec", "y"],
                &["-run=X", "-exec", "@y"],
            ),
            (&go, &["-run=X", "-e"], &["-run:=X", "-e"]),
            (&go, &["-execprog", "x"], &["-exec+prog", "@x"]),
            (
                &jq,
                &["--rawfile", "n", "F1", ".", "F2"],
                &["--rawfile=F1", "@.", "@F2"],
            ),
            (&jq, &["--arg", "n", "v", "."], &["--arg=v", "@."]),
        ];
        for (s, args, want) in rows {
            assert_eq!(shown(s, args, false), *want, "{args:?}");
        }
    }

    #[test]
    fn optional_values_are_attached_to_short_options_only() {
        let s = sem("{optional_value_options: [-d]}");
        assert_eq!(shown(&s, &["-dx", "y"], false), ["-d+x", "@y"]);
        assert_eq!(shown(&s, &["-d", "y"], false), ["-d", "@y"]);
    }

    #[test]
    fn global_options_stop_at_the_subcommand() {
        let git = sem("{global_value_options: [-C, -c]}");
        assert_eq!(
            shown(&git, &["-C", "d", "log", "-p"], true),
            ["-C=d", "@log"]
        );
        assert_eq!(shown(&git, &["--", "log"], true), ["--"]);
    }

    #[test]
    fn options_with_values_match_in_every_spelling() {
        let grep = sem("{value_options: [-d, --directories], recursive_options: [-r, --recursive, -d=recurse, --directories=recurse]}");
        let w = |a: &[&str]| a.iter().map(|s| WordInfo::literal(s)).collect::<Vec<_>>();
        let rows: &[(&[&str], bool)] = &[
            (&["-r", "x"], true),
            (&["-nr", "x"], true),
            (&["--rec", "x"], true),
            (&["-d", "recurse"], true),
            (&["-drecurse"], true),
            (&["--directories=recurse"], true),
            (&["--dir", "recurse"], true),
            (&["-d", "skip", "recurse"], false),
            (&["-dr"], false),
            (&["--", "-r"], false),
        ];
        for (args, want) in rows {
            assert_eq!(
                has_option(&grep, &grep.recursive_options, &w(args), false),
                *want,
                "{args:?}"
            );
        }
    }
}
