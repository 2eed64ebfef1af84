//! The fast parser (`gptel_scope::fastparse`) against brush-parser: whenever it answers,
//! its syntax tree must be brush-parser's, source locations aside; and every decision must
//! be the same with and without it.

mod common;
#[path = "support/tree_shape.rs"]
mod tree_shape;

use common::*;
use gptel_scope::{fastparse, shell};
use tree_shape::shape;

fn brush(src: &str) -> Option<brush_parser::ast::Program> {
    let mut p = brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), &brush_parser::ParserOptions::default());
    p.parse_program().ok()
}

/// `Err` when the fast parser answers differently from brush-parser; `Ok(true)` when it
/// answered.
fn agrees(src: &str) -> Result<bool, String> {
    let Some(fast) = fastparse::parse(src) else { return Ok(false) };
    match brush(src) {
        None => Err(format!("fast parser accepted what brush-parser rejects: {src:?}")),
        Some(reference) if shape(&reference) != shape(&fast) => Err(format!(
            "trees differ for {src:?}\n brush: {}\n  fast: {}",
            shape(&reference),
            shape(&fast)
        )),
        Some(_) => Ok(true),
    }
}

fn real_commands() -> Vec<String> {
    let text = std::fs::read_to_string(corpus_dir().join("real-commands.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["command"].as_str().unwrap().to_string())
        .collect()
}

fn all_corpus_commands() -> Vec<String> {
    let mut v = real_commands();
    v.extend(attack_cases().into_iter().map(|c| c.command));
    v.extend(attack_cases_from(&extra_corpus_path()).into_iter().map(|c| c.command));
    v
}

#[test]
fn fast_parser_table() {
    // (command, whether the fast parser takes it)
    let cases: &[(&str, bool)] = &[
        ("ls -la", true),
        ("", true),
        ("\n\n", true),
        ("a | b && c || d; e\nf", true),
        ("a=1 b+=2 cmd x=3 2>&1 >f <g 3>>h &>o &>>p >&2 <&0 1>&- >|q <>r", true),
        ("echo hi>f", true),
        ("a &", true),
        ("a & b", true),
        ("a &&\n# comment\nb", true),
        ("x<<<\"$y\"", true),
        ("echo \"$(git rev-parse HEAD)\" '$(not)' `date` ${HOME} $'a\\'b' $\"g\"", true),
        ("echo $(echo ')' \"(\")", true),
        ("echo \"it's $'5\" 'x'", true),
        ("a \\\nb", true),
        ("echo a#b # comment", true),
        ("cmd 10>f", true),
        (">f echo", true),
        ("a=1", true),
        ("echo {a,b} } {", true),
        ("echo if then", true),
        ("cat <<'EOF' > f\na 'b' (c)\nEOF\necho done", true),
        ("cat <<EOF | x\n$y\nEOF", true),
        ("cat <<-\"E\"\n\tt\n\tE", true),
        ("a <<A <<B && c\n1\nA\n2\nB\nd", true),
        ("git commit -m \"$(cat <<'EOF'\nmsg it's (x)\nEOF\n)\" && git log", true),
        ("echo \"$(cat <<EOF\n$(date)\nEOF\n)\"", true),
        ("cat <<EOF # note\nx\nEOF", true),
        ("cat <<EOF\nunterminated", false),
        ("cat <<EOF", false),
        ("cat <<E\\OF\nx\nE\\OF", false),
        ("cat <<EOF\na \\\nb\nEOF", false),
        ("echo \"$(cat <<EOF 'x'\nbody\nEOF\n)\"", false),
        ("cat <<$x\nb\n$x", false),
        ("echo ${<<EOF}", false),
        ("echo \"$(a\tb)\"", false),
        ("ls $(a $[b; c)", false),
        ("cat <<A \"$(cat <<'EOF'\nx\nEOF\n)\"\nbody\nA", false),
        ("cat \"a\nb\" <<A\nbody\nA", false),
        ("cat <<A \"a\nb\"\nbody\nA", false),
        ("cat <<A $(echo src; rm x)\nbody\nA", false),
        ("cat <<A `b`\nbody\nA", false),
        ("cat <<A ; echo 1 >> f\nx\nA", false),
        ("cat <<A x${1..3}y\nx\nA", false),
        ("git commit -m \"$(cat <<'EOF'\n)\nEOF\n)\"", false),
        ("git commit -m \"$(cat <<'EOF'\n1) a (b\nEOF\n)\"", false),
        ("cat <<'A' > \"out file.txt\" && git add 'out file.txt'\nx\nA", true),
        ("ls $( !(git x) )", false),
        ("ls $(a \"@(cat <<'EOF'\nx\nEOF\n)\" b)", false),
        ("echo \"$(cat <<EOF | sort\nb\nEOF\n)\"", false),
        ("echo \"$(cat  <<  'EOF'  \nb\nEOF\n  \n)\"", false),
        ("echo \"$(cat  <<  \"EOF\"\nb\nEOF\n)\"", false),
        ("echo \"$(cat  << \"EOF\"\nb\nEOF\n)\"", true),
        ("echo 1 >> f; cat <<A\nx\nA", true),
        ("echo \"$(a \"x\ty\" b)\"", true),
        ("echo ${a b}", false),
        // Left to brush-parser.
        ("if true; then echo; fi", false),
        ("for f in *; do echo $f; done", false),
        ("x=1 if", false),
        ("! a", false),
        ("{ a; }", false),
        ("(a)", false),
        ("f() { a; }", false),
        ("diff <(a) b", false),
        ("a |& b", false),
        ("echo $((1+2))", false),
        ("a=(1 2)", false),
        ("x[1]=2 cmd", false),
        ("echo a\\\nb", false),
        ("echo \"unterminated", false),
        ("echo 'unterminated", false),
        ("echo `unterminated", false),
        ("echo $(a # )\n)", false),
        ("echo $(case a in a) b;; esac)", false),
        ("echo 2&>f", false),
        ("echo\u{a0}x", false),
        (";", false),
        ("a;;", false),
        ("a && ", false),
        ("a | ", false),
        ("a >", false),
        ("a > >b", false),
        ("time a", false),
        ("[[ -f x ]]", false),
    ];
    let mut failures = Vec::new();
    for (src, expect_fast) in cases {
        match agrees(src) {
            Err(e) => failures.push(e),
            Ok(fast) if fast != *expect_fast => failures.push(format!("{src:?}: fast path taken = {fast}, expected {expect_fast}")),
            Ok(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fast_parser_matches_brush_on_every_corpus_command() {
    let commands = all_corpus_commands();
    let mut failures = Vec::new();
    let mut fast = 0;
    for c in &commands {
        match agrees(c) {
            Ok(true) => fast += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), commands.len(), failures.join("\n"));
    // The fast path must keep covering most real command lines, or it stops paying.
    let real = real_commands();
    let real_fast = real.iter().filter(|c| fastparse::parse(c).is_some()).count();
    eprintln!("fast path: {fast} of {} corpus commands, {real_fast} of {} real commands", commands.len(), real.len());
    assert!(real_fast * 2 >= real.len(), "the fast path takes only {real_fast} of {} real commands", real.len());
}

#[test]
fn fast_parser_matches_brush_on_every_prefix_of_the_real_corpus() {
    // Cutting a command anywhere leaves unterminated quotes, dangling operators and
    // half substitutions: the cases where a hand-written scanner goes wrong.
    let mut failures = Vec::new();
    let mut n = 0;
    for c in real_commands().iter().filter(|c| c.len() < 400) {
        for (i, _) in c.char_indices().skip(1) {
            n += 1;
            if let Err(e) = agrees(&c[..i]) {
                failures.push(e);
            }
        }
    }
    assert!(n > 10_000);
    assert!(failures.is_empty(), "{} of {n} prefixes differ:\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}

/// Pieces of command lines, shell syntax heavy, for the generated cases.
const PIECES: &[&str] = &[
    "ls", "a", "-la", "x=1", "a+=2", "'q r'", "\"d $x\"", "\"$(b c)\"", "$(echo ')')", "${HOME}", "`w`", "\\;", "#c", "a#b",
    "{a,b}", "*.rs", "if", "done", "{", "}", "!", "2", "10", "~/x", "$'a\\'b'", "$\"g\"", "é", "\"é\"", "x[1]=2", "a=(1)",
    "\\\n", "$((1))", "$(a | b)", "$(a\nb)", "$( (x) )", "$(x # c\n)", "\"a\\\"b\"", "'", "\"", "`", "$", "$(", "${", "(",
    ")", "\\", "=", "+=", "\"$'x'\"", "$'\"'", "`a\\`b`", "$(`a`)", "${a:-b}", "${a%\"x\"}", "\"${a}\"", "$(\"$(x)\")",
    " ", " ", " ", "\t", ";", " ; ", "&&", "||", "|", "&", "\n", ">", ">>", "2>&1", "<", "<<<", "&>", "&>>", ">&", "<&",
    "<>", ">|", "<<", "<(", ">(", "|&", ";;", "2>", " # c\n", "1", "-", ">&-", "in", "time", "[[", "]]", "case", "$(case",
    "<<EOF", "<<'EOF'", "<<-E", "EOF", "\tE", "E", "\nEOF\n", "$(cat <<EOF\n", "\"$(cat <<'EOF'\n", "it's )", "\nEOF\n)\"",
];

/// A small deterministic generator (xorshift), so a failure names a reproducible case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn fast_parser_matches_brush_on_generated_commands() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut failures = Vec::new();
    let (mut n, mut fast) = (0, 0);
    for _ in 0..30_000 {
        let len = 1 + rng.below(9);
        let src: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        n += 1;
        match agrees(&src) {
            Ok(true) => fast += 1,
            Ok(false) => {}
            Err(e) => failures.push(e),
        }
    }
    // Every pair of pieces, too.
    for a in PIECES {
        for b in PIECES {
            let src = format!("{a}{b}");
            n += 1;
            match agrees(&src) {
                Ok(true) => fast += 1,
                Ok(false) => {}
                Err(e) => failures.push(e),
            }
        }
    }
    eprintln!("generated: {fast} of {n} taken by the fast path");
    assert!(fast > n / 10, "the generator hardly reaches the fast path ({fast} of {n})");
    assert!(failures.is_empty(), "{} of {n} differ:\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}

#[test]
fn decisions_are_the_same_with_and_without_the_fast_path() {
    let fx = AttackFixture::new();
    let scopes = [scope(&fx.scope_text(false)), scope(&fx.scope_text(true))];
    let home = fx.home();
    let mut differ = Vec::new();
    let commands = all_corpus_commands();
    for s in &scopes {
        for c in &commands {
            let text = c.replace("@ROOT@", &fx.root().to_string_lossy());
            let fast = decide_in(s, &fx.repo(), Some(&home), None, &[], &text);
            let reference = shell::without_fast_path(|| decide_in(s, &fx.repo(), Some(&home), None, &[], &text));
            let (a, b) = (format!("{fast:?}"), format!("{reference:?}"));
            if a != b {
                let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count().saturating_sub(80);
                let tail = |s: &str| s.get(at..).unwrap_or("").chars().take(400).collect::<String>();
                differ.push(format!("{text:?}\n  fast: ...{}\n brush: ...{}", tail(&a), tail(&b)));
            }
        }
    }
    assert!(differ.is_empty(), "{} decisions differ:\n{}", differ.len(), differ.join("\n"));
}
