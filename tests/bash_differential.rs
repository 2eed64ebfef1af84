//! brush-parser's reading held to bash's own. Each command line becomes the body of a
//! function; `declare -f` prints bash's parse of it in canonical form, and the names of the
//! simple commands found there are compared with the names the engine's flattening finds.
//! A row may differ only when the engine refuses it (a problem reported: it fails closed).
//! Skipped, with a note, when bash is not installed.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Words that open, continue or close a compound command: never a command's name.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time",
    "in", "esac", "[[", "]]",
];

/// The names of the simple commands in bash's canonical text of a function body: a small
/// scanner over `declare -f` output, which puts one construct on a line, quotes as written,
/// prints `$(...)`, backquotes, `<(...)`, `((...))` and `[[ ... ]]` as written, and
/// here-document bodies after their line.
fn bash_names(text: &str) -> BTreeSet<String> {
    let mut s = Scanner {
        b: text.as_bytes().to_vec(),
        i: 0,
        names: BTreeSet::new(),
        heredocs: Vec::new(),
    };
    s.list(None);
    s.names
}

struct Scanner {
    b: Vec<u8>,
    i: usize,
    names: BTreeSet<String>,
    /// Here-documents whose bodies start at the next newline: (delimiter, expanded).
    heredocs: Vec<(String, bool)>,
}

#[derive(PartialEq)]
enum Skip {
    /// Words of a command: the first that is not an assignment or reserved is its name.
    Command,
    /// Words after the name, or of a construct that runs nothing (`for x in ...`).
    Words,
    /// `case WORD in`: words up to `in`, then patterns.
    CaseWord,
    /// A case pattern, up to its `)`.
    Pattern,
    /// `[[ ... ]]`.
    Test,
}

impl Scanner {
    fn peek(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    /// Scans commands until `close` (a `)` or backquote ending a substitution) at depth 0.
    fn list(&mut self, close: Option<u8>) {
        let mut mode = Skip::Command;
        let mut word = String::new();
        let mut cases = 0usize;
        let mut parens = 0usize;
        while let Some(c) = self.peek(0) {
            match c {
                b'\'' => {
                    let end = self.b[self.i + 1..]
                        .iter()
                        .position(|&x| x == b'\'')
                        .map_or(self.b.len(), |p| self.i + 1 + p);
                    word.push_str(&String::from_utf8_lossy(
                        &self.b[self.i..(end + 1).min(self.b.len())],
                    ));
                    self.i = end + 1;
                    continue;
                }
                b'"' => {
                    word.push('"');
                    self.i += 1;
                    while let Some(d) = self.peek(0) {
                        if d == b'"' {
                            self.i += 1;
                            break;
                        }
                        if d == b'\\' {
                            self.i += 2;
                        } else if d == b'$'
                            && self.peek(1) == Some(b'(')
                            && self.peek(2) != Some(b'(')
                        {
                            self.i += 2;
                            self.list(Some(b')'));
                        } else if d == b'`' {
                            self.i += 1;
                            self.list(Some(b'`'));
                        } else {
                            self.i += 1;
                        }
                    }
                    word.push('"');
                    continue;
                }
                b'\\' => {
                    word.push_str(&String::from_utf8_lossy(
                        &self.b[self.i..(self.i + 2).min(self.b.len())],
                    ));
                    self.i += 2;
                    continue;
                }
                b'$' if self.peek(1) == Some(b'(') && self.peek(2) == Some(b'(') => {
                    self.skip_arithmetic(3);
                    word.push_str("$((...))");
                    continue;
                }
                b'$' | b'<' | b'>' if self.peek(1) == Some(b'(') => {
                    self.i += 2;
                    self.list(Some(b')'));
                    word.push_str("$(...)");
                    continue;
                }
                b'`' if close == Some(b'`') => {
                    self.end_word(&mut word, &mut mode, &mut cases);
                    self.i += 1;
                    return;
                }
                b'`' => {
                    self.i += 1;
                    self.list(Some(b'`'));
                    word.push_str("`...`");
                    continue;
                }
                b'(' if mode != Skip::Pattern && word.is_empty() && self.peek(1) == Some(b'(') => {
                    self.skip_arithmetic(2);
                    mode = Skip::Words;
                    continue;
                }
                b'<' if self.peek(1) == Some(b'<') && self.peek(2) != Some(b'<') => {
                    self.end_word(&mut word, &mut mode, &mut cases);
                    self.i += 2;
                    if self.peek(0) == Some(b'-') {
                        self.i += 1;
                    }
                    let start = self.i;
                    while self
                        .peek(0)
                        .is_some_and(|x| !x.is_ascii_whitespace() && !b";|&)".contains(&x))
                    {
                        self.i += 1;
                    }
                    let raw = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
                    let quoted = raw.contains(['\'', '"', '\\']);
                    self.heredocs
                        .push((raw.replace(['\'', '"', '\\'], ""), !quoted));
                    continue;
                }
                b'<' | b'>' => {
                    // A redirection: its operator, then its target (never a name).
                    if word.bytes().all(|x| x.is_ascii_digit()) {
                        word.clear();
                    }
                    self.end_word(&mut word, &mut mode, &mut cases);
                    while self.peek(0).is_some_and(|x| b"<>&|-".contains(&x)) {
                        self.i += 1;
                    }
                    while self.peek(0).is_some_and(|x| x == b' ') {
                        self.i += 1;
                    }
                    while self
                        .peek(0)
                        .is_some_and(|x| !x.is_ascii_whitespace() && !b";|&()".contains(&x))
                    {
                        self.i += 1;
                    }
                    continue;
                }
                b'\n' => {
                    self.end_word(&mut word, &mut mode, &mut cases);
                    self.i += 1;
                    self.heredoc_bodies();
                    if !matches!(mode, Skip::Pattern | Skip::CaseWord | Skip::Test) {
                        mode = Skip::Command;
                    }
                    continue;
                }
                b' ' | b'\t' => self.end_word(&mut word, &mut mode, &mut cases),
                b')' if close == Some(b')') && parens == 0 && mode != Skip::Pattern => {
                    self.end_word(&mut word, &mut mode, &mut cases);
                    self.i += 1;
                    return;
                }
                b')' if mode == Skip::Pattern => {
                    word.clear();
                    mode = Skip::Command;
                }
                b';' if self.peek(1) == Some(b';') && cases > 0 => {
                    self.end_word(&mut word, &mut mode, &mut cases);
                    while self.peek(1).is_some_and(|x| x == b';' || x == b'&') {
                        self.i += 1;
                    }
                    mode = Skip::Pattern;
                }
                b'(' | b')' | b';' | b'|' | b'&' | b'{' | b'}' if mode != Skip::Pattern => {
                    if c == b'(' {
                        parens += 1;
                    } else if c == b')' {
                        parens = parens.saturating_sub(1);
                    }
                    if (c == b'{' || c == b'}') && !word.is_empty() {
                        word.push(c as char);
                    } else {
                        self.end_word(&mut word, &mut mode, &mut cases);
                        if mode != Skip::Test || c != b'|' && c != b'&' {
                            mode = Skip::Command;
                        }
                    }
                }
                _ => word.push(c as char),
            }
            self.i += 1;
        }
        self.end_word(&mut word, &mut mode, &mut cases);
    }

    /// The end of a word: the first of a command that is not an assignment or reserved
    /// is its name.
    fn end_word(&mut self, word: &mut String, mode: &mut Skip, cases: &mut usize) {
        if word.is_empty() {
            return;
        }
        let w = std::mem::take(word);
        match mode {
            Skip::Command => {
                if w == "for" || w == "select" || w == "function" {
                    *mode = Skip::Words;
                } else if w == "case" {
                    *mode = Skip::CaseWord;
                    *cases += 1;
                } else if w == "[[" {
                    *mode = Skip::Test;
                } else if RESERVED.contains(&w.as_str())
                    || w.split_once('=').is_some_and(|(n, _)| {
                        !n.is_empty() && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
                    })
                {
                    // Not a name: the command's name comes later.
                } else {
                    self.names.insert(w);
                    *mode = Skip::Words;
                }
            }
            Skip::CaseWord if w == "in" => *mode = Skip::Pattern,
            Skip::Pattern if w == "esac" => {
                *cases -= 1;
                *mode = Skip::Words;
            }
            Skip::Test if w == "]]" => *mode = Skip::Words,
            _ => {}
        }
    }

    /// Skips `((...))` from `self.i + open` (after the opening parentheses).
    fn skip_arithmetic(&mut self, open: usize) {
        self.i += open;
        let mut depth = 2usize;
        while let Some(c) = self.peek(0) {
            self.i += 1;
            match c {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    /// The bodies of the pending here-documents: the substitutions of expanded ones scanned.
    fn heredoc_bodies(&mut self) {
        for (delim, expanded) in std::mem::take(&mut self.heredocs) {
            loop {
                let end = self.b[self.i..]
                    .iter()
                    .position(|&x| x == b'\n')
                    .map_or(self.b.len(), |p| self.i + p);
                let line = String::from_utf8_lossy(&self.b[self.i..end]).into_owned();
                if line.trim_start_matches('\t') == delim || end >= self.b.len() {
                    self.i = (end + 1).min(self.b.len());
                    break;
                }
                if expanded {
                    let mut k = 0;
                    while let Some(p) = line[k..].find("$(") {
                        let mut sub = Scanner {
                            b: line.as_bytes()[k + p + 2..].to_vec(),
                            i: 0,
                            names: BTreeSet::new(),
                            heredocs: Vec::new(),
                        };
                        sub.list(Some(b')'));
                        self.names.extend(sub.names);
                        k += p + 2 + sub.i;
                    }
                }
                self.i = end + 1;
            }
        }
    }
}

/// bash's canonical text of `cmd` as a function body, or `None` when bash is missing.
fn bash_parse(cmd: &str, dir: &Path) -> Option<Result<String, String>> {
    let script = format!("f() {{\n{cmd}\n}}\ndeclare -f f");
    let out = Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .ok()?;
    Some(if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

/// The command lines compared: lists, pipelines, compound commands, substitutions nested
/// and quoted, here-documents (expanded, quoted, `<<-`), redirections, process
/// substitutions, and the shapes bash and brush-parser read differently (there the engine
/// must refuse).
const ROWS: &[&str] = &[
    "ls -la; cat README.md | grep x && echo ok || echo no",
    "if test -f a; then cat a; elif [ -d b ]; then ls b; else echo none; fi",
    "for f in a b c; do wc -l \"$f\"; done",
    "for ((i = 0; i < 3; i++)); do echo $i; done",
    "while read -r line; do printf '%s\\n' \"$line\"; done < file",
    "until false; do sleep 1; done",
    "case \"$x\" in a|b) head -1 f ;; (c) ls ;; *) tail -1 f ;; esac",
    "echo \"$(date) $(whoami)\"",
    "echo $(basename $(pwd))",
    "x=$(git rev-parse HEAD) && git show \"$x\"",
    "cat <<EOF\nhello $(uname)\nEOF",
    "cat <<'EOF'\n$(not run)\nEOF\nls",
    "cat <<-EOF\n\tindented $(hostname)\n\tEOF",
    "cat <<A; cat <<B\n$(one)\nA\n$(two)\nB",
    "diff <(sort a) <(sort b)",
    "(cd src && make); { ls; pwd; }",
    "echo `date` x",
    "! grep -q x f",
    "[[ -n $(id -u) ]] && echo yes",
    "X=1 Y=2 env | sort",
    "ls 2>&1 >/dev/null | cat",
    "echo \"a;b|c\" 'd;e' && ls",
    "cat file | while read l; do echo \"$l\"; done &",
    "if grep -q x f; then for y in 1 2; do case $y in 1) touch a ;; esac; done; fi",
    "echo $(( 1 + 2 )) $((3)); true",
    "time ls | wc -l",
    "a=1; b=$a; echo \"$b\"",
    "g() { ls; }; g",
    "echo ${x:-$(id)}",
    "echo \"$(echo \"$(id)\")\"",
    "cat <<EOF | grep x\n$(a)\nEOF\nls",
    "echo 'it''s' \"q\\\"x\" && ls",
    "exec 3>&1; ls >&3",
    "echo $(cat <<EOF\nin $(id)\nEOF\n)",
    "if ! ls; then :; fi",
    "while :; do break; done",
];

/// Rows bash and brush-parser read differently: the engine must refuse each.
const DIFFERENT: &[&str] = &[
    // bash joins `E\` and `OF` into the delimiter: `touch` runs.
    "cat <<EOF\nE\\\nOF\ntouch pwned\nEOF",
    // bash joins `ab\` and `EOF`: the here-document goes on, and `rm` is data.
    "cat <<EOF\nab\\\nEOF\nrm x\nEOF",
];

#[test]
fn brush_reads_commands_as_bash_does() {
    let dir = std::env::temp_dir();
    if bash_parse("true", &dir).is_none() {
        eprintln!("bash is not installed: the differential test is skipped");
        return;
    }
    let mut bad = Vec::new();
    let mut refused = 0;
    for cmd in ROWS.iter().chain(DIFFERENT) {
        let canonical = match bash_parse(cmd, &dir) {
            Some(Ok(t)) => t,
            other => {
                bad.push(format!("{cmd:?}: bash does not parse it: {other:?}"));
                continue;
            }
        };
        // The body, without the `f () {` and `}` lines.
        let body: Vec<&str> = canonical.lines().collect();
        let body = body
            .get(2..body.len().saturating_sub(1))
            .unwrap_or(&[])
            .join("\n");
        let want = bash_names(&body);
        let flat = gptel_scope::shell::flatten(cmd, &dir, None);
        let got: BTreeSet<String> = flat
            .commands
            .iter()
            .filter_map(|c| c.words.first())
            .map(|w| w.display())
            .collect();
        if DIFFERENT.contains(cmd) && (got == want || flat.problems.is_empty()) {
            bad.push(format!("{cmd:?}: expected bash and the engine to differ and the engine to refuse\n  bash:   {want:?}\n  engine: {got:?} {:?}", flat.problems));
        }
        if !flat.problems.is_empty() && !DIFFERENT.contains(cmd) {
            refused += 1;
        }
        if got != want && flat.problems.is_empty() {
            bad.push(format!(
                "{cmd:?}\n  bash:   {want:?}\n  engine: {got:?}\n  canonical:\n{body}"
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} rows read differently:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // Most rows are judged, not refused: the comparison is not empty.
    assert!(refused <= 3, "{refused} rows refused by the engine");
}

/// The scanner itself, on canonical text written out.
#[test]
fn canonical_text_scanner() {
    for (text, want) in [
        ("    ls -la;\n    cat f | grep x", vec!["cat", "grep", "ls"]),
        ("    case \"$x\" in \n        a | b)\n            head -1 f\n        ;;\n        *)\n            tail f\n        ;;\n    esac", vec!["head", "tail"]),
        ("    cat <<EOF\nx $(uname -a)\nEOF\n\n    ls", vec!["cat", "ls", "uname"]),
        ("    cat <<'EOF'\n$(no)\nEOF\n", vec!["cat"]),
        ("    for ((i = 0; i < 3; i++))\n    do\n        echo $i;\n    done", vec!["echo"]),
        ("    X=1 env 2>&1 > /dev/null", vec!["env"]),
        ("    echo `date` \"$(id) x\" $(( 1 + 2 ))", vec!["date", "echo", "id"]),
        ("    [[ -n $(id -u) ]] && ! grep -q x f & time ls | wc -l", vec!["grep", "id", "ls", "wc"]),
        ("    diff <(sort a) >(sort b)", vec!["diff", "sort"]),
    ] {
        let got: Vec<String> = bash_names(text).into_iter().collect();
        assert_eq!(got, want, "{text}");
    }
}
