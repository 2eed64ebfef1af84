//! The YAML fast path (src/yaml_fast.rs) against serde_yaml: a table of hostile cases,
//! every scope document and YAML text of the repository (and of ../shared beside it, when it
//! is there), and thousands of
//! generated and mutated documents. The contract (tests/support/yaml_diff.rs): a value from
//! the fast path is serde_yaml's value for the same text, in the same order; anything else
//! is declined and left to serde_yaml.

#[path = "support/yaml_diff.rs"]
mod yaml_diff;
use yaml_diff::{check, Outcome};

use std::path::{Path, PathBuf};

use Outcome::{Declined as D, Handled as H};

/// (document, what the fast path must do, the value as JSON when handled and JSON can say it).
const TABLE: &[(&str, Outcome, Option<&str>)] = &[
    // Comments and `#`.
    ("key: value # comment\n", H, Some(r#"{"key":"value"}"#)),
    ("key: value#x\n", H, Some(r#"{"key":"value#x"}"#)),
    ("a: b # c: d\n", H, Some(r#"{"a":"b"}"#)),
    ("a: 'b' # c\n", H, Some(r#"{"a":"b"}"#)),
    ("a:   # only a comment\n", H, Some(r#"{"a":null}"#)),
    ("# only a comment\n", H, Some("null")),
    ("a: 1\n  # indented comment\nb: 2\n", H, Some(r#"{"a":1,"b":2}"#)),
    ("a: \"x\"#c\n", D, None),
    ("a:#b\n", D, None),
    // Quoting.
    ("key: 'it''s'\n", H, Some(r#"{"key":"it's"}"#)),
    ("key: \"a\\\"b\"\n", H, Some(r#"{"key":"a\"b"}"#)),
    ("key: \"a\\\\b\\/c\\n\\t\"\n", H, Some(r#"{"key":"a\\b/c\n\t"}"#)),
    ("key: \"# not a comment: really\"\n", H, Some(r##"{"key":"# not a comment: really"}"##)),
    ("'quoted key': 1\n\"other key\": 2\n", H, Some(r#"{"quoted key":1,"other key":2}"#)),
    ("a: \"\\x41\"\n", D, None),
    ("a: \"\\u00e9\"\n", D, None),
    ("a: \"unterminated\n", D, None),
    ("a: 'multi\n  line'\n", D, None),
    ("a: \"x\\\n  y\"\n", D, None),
    ("a: 'x' y\n", D, None),
    ("a: \"x\": y\n", D, None),
    // Aliases, anchors, tags, block scalars, complex keys, directives, documents.
    ("- *\n", D, None),
    ("key:\n  - *\n", D, None),
    ("a: &x 1\nb: *x\n", D, None),
    ("a: !!str 1\n", D, None),
    ("a: !tag x\n", D, None),
    ("a: |\n  text\n", D, None),
    ("a: >\n  text\n", D, None),
    ("? a\n: b\n", D, None),
    ("%YAML 1.2\n---\na: 1\n", D, None),
    ("---\na: 1\n", D, None),
    ("a: 1\n---\nb: 2\n", D, None),
    ("a: 1\n...\n", D, None),
    ("a: @x\n", D, None),
    ("a: `x`\n", D, None),
    // `:` inside values and keys.
    ("key: a: b\n", D, None),
    ("key: a:\n", D, None),
    ("key: a:b\n", H, Some(r#"{"key":"a:b"}"#)),
    ("key: http://x/y\n", H, Some(r#"{"key":"http://x/y"}"#)),
    ("a:b: c\n", H, Some(r#"{"a:b":"c"}"#)),
    ("a :b\n", D, None),
    ("a : b\n", D, None),
    // Duplicate keys: serde_yaml refuses them, with its line.
    ("a: 1\na: 2\n", D, None),
    ("a: 1\n\"a\": 2\n", D, None),
    ("~: 1\nnull: 2\n", D, None),
    ("a: {b: c, b: d}\n", D, None),
    // Empty values and nulls, booleans, numbers.
    ("a:\nb:\n", H, Some(r#"{"a":null,"b":null}"#)),
    ("a: ~\nb: null\nc: Null\nd: NULL\ne: nUll\n", H, Some(r#"{"a":null,"b":null,"c":null,"d":null,"e":"nUll"}"#)),
    ("a: true\nb: False\nc: yes\nd: on\n", H, Some(r#"{"a":true,"b":false,"c":"yes","d":"on"}"#)),
    ("a: 30\nb: -5\nc: 0x1F\nd: 007\ne: +3\nf: 0o17\ng: 0b101\nh: 1_000\n", H, Some(r#"{"a":30,"b":-5,"c":31,"d":"007","e":3,"f":15,"g":5,"h":"1_000"}"#)),
    ("a: -0\nb: -0x10\nc: 18446744073709551615\nd: -9223372036854775808\n", H, Some(r#"{"a":0,"b":-16,"c":18446744073709551615,"d":-9223372036854775808}"#)),
    ("a: inf\nb: nan\nc: infinity\n", H, Some(r#"{"a":"inf","b":"nan","c":"infinity"}"#)),
    ("a: 1.5\n", D, None),
    ("a: 1e3\n", D, None),
    ("a: .inf\n", D, None),
    ("a: 18446744073709551616\n", D, None),
    ("1: a\ntrue: b\n~: c\n", H, None),
    // Unicode and the characters libyaml treats specially.
    ("a: é\nb: 日本語\nc: [ü, \"ß\"]\n", H, Some(r#"{"a":"é","b":"日本語","c":["ü","ß"]}"#)),
    ("a: x\u{a0}\n", H, Some("{\"a\":\"x\u{a0}\"}")),
    ("\u{feff}a: 1\n", D, None),
    ("a: x\u{2028}y\n", D, None),
    ("a: x\u{85}y\n", D, None),
    ("a: x\u{1}y\n", D, None),
    ("a:\tb\n", D, None),
    ("a: b\r\n", D, None),
    // Structure: nesting, compact sequences, indentation.
    ("paths:\n  read:\n    - \"/p/**\"\n    - '/q/*.txt'\n    - ~/r/\n", H, Some(r#"{"paths":{"read":["/p/**","/q/*.txt","~/r/"]}}"#)),
    ("paths:\n  read:\n  - a\n  - b\n  write: []\n", H, Some(r#"{"paths":{"read":["a","b"],"write":[]}}"#)),
    ("a:\n- x\n- y\nb: 1\n", H, Some(r#"{"a":["x","y"],"b":1}"#)),
    ("  a: 1\n  b: 2\n", H, Some(r#"{"a":1,"b":2}"#)),
    ("a:  b  \n", H, Some(r#"{"a":"b"}"#)),
    ("a:\n    b: 1\n  c: 2\n", D, None),
    ("a:\n  - x\n  b: 1\n", D, None),
    ("a:\n  - x\n   - y\n", D, None),
    ("a: b\n  c\n", D, None),
    ("a: b\n c: d\n", D, None),
    ("a:\n  -\n", D, None),
    ("a:\n  - - x\n", D, None),
    ("a:\n  - k: v\n", D, None),
    ("a: 1\n- x\n", D, None),
    ("-x: 1\n", D, None),
    ("- a\n- b\n", D, None),
    ("just a scalar\n", D, None),
    // Flow collections on one line.
    ("paths: {read: [a, \"b c\"], write: []}\n", H, Some(r#"{"paths":{"read":["a","b c"],"write":[]}}"#)),
    ("a: [-n, --stat, \"-1\", 'x''y']\n", H, Some(r#"{"a":["-n","--stat","-1","x'y"]}"#)),
    ("a: [1, -1, 0x10, true, ~]\n", H, Some(r#"{"a":[1,-1,16,true,null]}"#)),
    ("a: {}\nb: []\nc: { }\nd: [ ]\ne: [[a], {b: c}]\n", H, Some(r#"{"a":{},"b":[],"c":{},"d":[],"e":[["a"],{"b":"c"}]}"#)),
    ("a: [a,b]\n", H, Some(r#"{"a":["a","b"]}"#)),
    ("a: [a, b] # c\n", H, Some(r#"{"a":["a","b"]}"#)),
    ("a: [a, b,]\n", D, None),
    ("a: [a: b]\n", D, None),
    ("a: [a#b]\n", D, None),
    ("a: [\n  b]\n", H, Some(r#"{"a":["b"]}"#)),
    // Flow collections broken after a comma (the shipped profiles are written so).
    ("a: [b,\n  c]\nd: 1\n", H, Some(r#"{"a":["b","c"],"d":1}"#)),
    ("a: [b,\n\n  # a comment\n      c, \"d\",\n  'e']\n", H, Some(r#"{"a":["b","c","d","e"]}"#)),
    ("a:\n  - [b,\n    c]\n  - d\n", H, Some(r#"{"a":[["b","c"],"d"]}"#)),
    ("a: {b: c,\n  d: [e,\n   f]}\n", H, Some(r#"{"a":{"b":"c","d":["e","f"]}}"#)),
    ("a: [b,\nc]\n", D, None),
    ("a:\n  b: [c,\n  d]\n", D, None),
    ("a: [\"b,\n  c\"]\n", D, None),
    ("a: ['b,\n  c']\n", D, None),
    ("a: [b, # c,\n  d]\n", D, None),
    ("a: [b\n  , c]\n", D, None),
    ("a: [b\n  c]\n", D, None),
    ("a: [b,\n  c\n  d]\n", D, None),
    ("a: [b,\n  c,\n]\n", D, None),
    // Found by the fuzz target: a quote inside a plain scalar is no quote, so the line below
    // starts a double-quoted scalar over two lines (folded by YAML), not a new item.
    ("e: [-\",\",\n\n \"]", D, None),
    ("a: [x\", y,\n  z]\n", H, Some(r#"{"a":["x\"","y","z"]}"#)),
    ("a: [b'c,\n  d']\n", H, Some(r#"{"a":["b'c","d'"]}"#)),
    ("a: {b: c,\n  d:\n   e}\n", D, None),
    ("a: [a] x\n", D, None),
    ("a: [a\n", D, None),
    ("a: {b}\n", D, None),
    ("a: {b:c}\n", D, None),
    ("a: {b: }\n", D, None),
    ("a: [- x]\n", D, None),
    ("a: [*x]\n", D, None),
];

/// Implicit keys of every kind, up to and beyond libyaml's limit of 1024 characters.
#[test]
fn long_keys() {
    for n in [10, 255, 256, 300, 1023, 1024, 1025, 2000] {
        let k = "k".repeat(n);
        for text in [format!("{k}: v\n"), format!("\"{k}\": v\n"), format!("'{k}': v\n"), format!("a: {{{k}: v}}\n"), format!("a: {{\"{k}\": v}}\n")] {
            check(&text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    assert_eq!(check(&format!("{}: v\n", "k".repeat(200))), Ok(H));
    assert_eq!(check(&format!("\"{}\": v\n", "k".repeat(2000))), Ok(D));
}

#[test]
fn table_of_hostile_and_common_cases() {
    for (text, want, json) in TABLE {
        let got = check(text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, *want, "{text:?}");
        if let Some(json) = json {
            let value = gptel_scope::yaml_fast::parse(text).unwrap_or_else(|| panic!("{text:?} declined"));
            let as_json = serde_json::to_value(&value).unwrap();
            assert_eq!(as_json, serde_json::from_str::<serde_json::Value>(json).unwrap(), "{text:?}");
        }
    }
}

/// The repository's root and ../shared beside it (optional: more YAML texts when present).
fn roots() -> (PathBuf, Option<PathBuf>) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let shared = repo.join("../shared");
    (repo, shared.is_dir().then_some(shared))
}

fn files_under(dir: &Path, ext: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !matches!(name, "target" | ".git" | "corpus" | "artifacts") || p.ends_with("shared/corpus") || p.ends_with("tests/corpus") {
                files_under(&p, ext, out);
            }
        } else if ext.iter().any(|e| name.ends_with(e)) {
            out.push(p);
        }
    }
}

/// The ```yaml blocks of a Markdown or text file.
fn fenced_yaml(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start().starts_with("```yaml") || line.trim_start().starts_with("```yml") => current = Some(String::new()),
            Some(block) if line.trim_start().starts_with("```") => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

/// The string literals of Rust or Emacs Lisp source holding a `:` (most YAML of the tests
/// lives there). The escapes of both languages are decoded; a literal read imperfectly is
/// still a fair input, as the contract holds for any text.
fn string_literals(src: &str, rust: bool) -> Vec<String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Character literals and their Lisp cousins: `'"'`, `'\"'`, `?"`, `?\"`.
        if rust && c == '\'' && chars.get(i + 1) == Some(&'"') && chars.get(i + 2) == Some(&'\'') {
            i += 3;
            continue;
        }
        if c == '\\' && chars.get(i + 1) == Some(&'"') {
            i += 2;
            continue;
        }
        if !rust && c == '?' && chars.get(i + 1) == Some(&'"') {
            i += 2;
            continue;
        }
        if !rust && c == ';' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if rust && c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if rust && c == 'r' && matches!(chars.get(i + 1), Some('#') | Some('"')) && (i == 0 || !chars[i - 1].is_alphanumeric()) {
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) == Some(&'"') {
                let start = j + 1;
                let mut k = start;
                while k < chars.len() {
                    if chars[k] == '"' && (0..hashes).all(|h| chars.get(k + 1 + h) == Some(&'#')) {
                        break;
                    }
                    k += 1;
                }
                out.push(chars[start..k.min(chars.len())].iter().collect());
                i = k + 1 + hashes;
                continue;
            }
        }
        if c == '"' {
            let mut s = String::new();
            let mut k = i + 1;
            while k < chars.len() && chars[k] != '"' {
                if chars[k] == '\\' {
                    k += 1;
                    match chars.get(k) {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some('r') => s.push('\r'),
                        Some('0') => s.push('\0'),
                        Some('\n') => {
                            while chars.get(k + 1).is_some_and(|c| rust && c.is_whitespace()) {
                                k += 1;
                            }
                        }
                        Some('u') if rust && chars.get(k + 1) == Some(&'{') => {
                            let end = (k..chars.len()).find(|&e| chars[e] == '}').unwrap_or(k);
                            let hex: String = chars[k + 2..end].iter().collect();
                            if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                s.push(ch);
                            }
                            k = end;
                        }
                        Some(other) => s.push(*other),
                        None => {}
                    }
                } else {
                    s.push(chars[k]);
                }
                k += 1;
            }
            out.push(s);
            i = k + 1;
            continue;
        }
        i += 1;
    }
    out.retain(|s| s.contains(':'));
    out
}

/// Every YAML text of the repository and of ../shared (when present): YAML files, ```yaml
/// blocks, and the string literals of the Rust and Lisp sources and tests. (name, text)
fn corpus() -> Vec<(String, String)> {
    let (repo, shared) = roots();
    let mut docs = Vec::new();
    match &shared {
        Some(s) => eprintln!("YAML texts: the repository and {}", s.display()),
        None => eprintln!("YAML texts: the repository only (no ../shared beside it to add more)"),
    }
    for root in std::iter::once(&repo).chain(shared.as_ref()) {
        let mut files = Vec::new();
        files_under(root, &[".yml", ".yaml"], &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            docs.push((f.display().to_string(), text.clone()));
            // Also as a preset's front matter would reach the parser.
            if let Some((front, _)) = gptel_scope::config::front_matter(&format!("---\n{text}---\n")) {
                docs.push((format!("{} (front matter)", f.display()), front.to_string()));
            }
        }
        let mut texts = Vec::new();
        files_under(root, &[".md", ".txt"], &mut texts);
        for f in texts {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for (i, block) in fenced_yaml(&text).into_iter().enumerate() {
                docs.push((format!("{} block {i}", f.display()), block));
            }
        }
        let mut sources = Vec::new();
        files_under(root, &[".rs", ".el"], &mut sources);
        for f in sources {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let rust = f.extension().is_some_and(|e| e == "rs");
            for (i, lit) in string_literals(&text, rust).into_iter().enumerate() {
                docs.push((format!("{} literal {i}", f.display()), lit));
            }
        }
    }
    docs
}

#[test]
fn every_yaml_text_of_the_repository_and_shared() {
    let docs = corpus();
    let (mut handled, mut declined, mut failures) = (0, 0, Vec::new());
    for (name, text) in &docs {
        match check(text) {
            Ok(H) => handled += 1,
            Ok(D) => declined += 1,
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("repository and shared YAML texts: {} handled, {} declined", handled, declined);
    assert!(docs.len() > 300, "too few documents found: {}", docs.len());
    assert!(handled > 100, "too few handled: {handled}");
}

/// The documents the speed matters for are handled, not just checked.
#[test]
fn scope_documents_in_use_take_the_fast_path() {
    let (repo, _) = roots();
    for f in [
        repo.join("data/defaults.yml"),
        repo.join("scope-profiles/read-only.yml"),
        repo.join("scope-profiles/restricted.yml"),
        repo.join("scope-profiles/coding.yml"),
        repo.join("tests/corpus/attacks-scope.yml"),
    ] {
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(check(&text), Ok(H), "{}", f.display());
    }
    // The generated scope of benches/engine.rs.
    let mut big = String::from("# generated\npaths:\n  read:\n");
    for i in 0..500 {
        big.push_str(&format!("    - \"/tmp/x/src/module{i}/**\"\n"));
    }
    big.push_str("  write:\n");
    for i in 0..250 {
        big.push_str(&format!("    - \"/tmp/x/out/part{i}/*.txt\"\n"));
    }
    big.push_str("  deny:\n");
    for i in 0..250 {
        big.push_str(&format!("    - \"**/secret{i}/**\"\n"));
    }
    big.push_str("bash_tools:\n  categories:\n    read_only: [ls, cat, grep, git log, git diff]\n    safe_write: [mkdir, touch]\n");
    assert_eq!(check(&big), Ok(H));
}

/// A small deterministic generator (splitmix64), with the hostility of the document under
/// way: the percentage of choices that leave the ordinary shapes.
struct Rng {
    state: u64,
    hostile: usize,
}

impl Rng {
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    /// Whether this choice is an odd one.
    fn odd(&mut self) -> bool {
        let h = self.hostile;
        self.chance(h)
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// Ordinary scalars and keys: what a document of low hostility is made of.
const PLAIN_WORDS: &[&str] = &[
    "ls", "git log", "x", "/p/**", "\"**/x/**\"", "~/src/**", "${project_root}/**", "'*.txt'", "-n", "--stat", "mode", "30", "true",
    "~", "null", "é", "日本語", "it's", "0x1F", "007", "-5", "\"a#b\"", "x\"", "b'c", "-\"",
];
const PLAIN_KEYS: &[&str] = &["a", "b", "c", "paths", "read", "write", "deny", "git log", "x_y", "k1", "/p", "'q'", "\"d\"", "1", "~", "true"];

/// Scalars, ordinary and hostile, written plain (and quoted by the generator at times).
const WORDS: &[&str] = &[
    "ls", "git log", "x", "/p/**", "**/x/**", "~/src/**", "${project_root}/**", "*.txt", "-n", "--stat", "-1x", "a#b", "a #b", "a: b",
    "a:b", "a:", "http://h/p", "~", "null", "Null", "NULL", "nUll", "true", "True", "TRUE", "tRue", "false", "yes", "no", "on", "0",
    "00", "007", "08", "-0", "+0", "-1", "+1", "42", "1.5", "1.", ".5", "1e3", "-1e-3", ".inf", "-.inf", "+.inf", ".nan", ".NaN",
    "inf", "nan", "0x1F", "0x", "0xg", "0o17", "0b101", "-0x1F", "+0x1F", "0x-1", "-0b1", "18446744073709551615",
    "18446744073709551616", "-9223372036854775808", "-9223372036854775809", "1_000", "1,000", "*", "*a", "&a x", "&a", "!tag x",
    "!!str 1", "!", "|", "|-", ">", "- x", "-", "--", "---", "...", "?x", "? x", "?", ":x", ": x", "%x", "@x", "`x`", ",x", "x,y",
    "[x", "x]", "{x}", "x[0]", "x{y}", "it's", "say \"hi\"", "é", "日本語", "\u{a0}x", "x\u{a0}", "x\u{2028}y", "x\u{85}y",
    "\u{feff}x", "x\ty", "x\ry", "x\u{7f}", "x\u{1}", "\u{fffe}", "\u{10ffff}", "a  b", "a #", "#", "a#", "x:y:z", "<<", "=",
    "a'b", "a\"b", "a, b", "a,", "\\", "a\\b", "C:\\x", "$HOME", "(x)", "x|y", "x>y", "x&y", "x*y", "x!", "x?", "x%", "x@y", " x", "x ",
];

/// Keys, ordinary and hostile, as written (quotes included).
const KEYS: &[&str] = &[
    "a", "b", "c", "paths", "read", "write", "git log", "a:b", "a::", "1", "01", "-1", "0x1", "1.5", "true", "True", "~", "null",
    "-k", "?k", "? k", ":k", "k#x", "k #x", "k ", "é", "[k]", "{k}", "&k k", "*k", "!k k", "'q'", "\"d\"", "'q''s'",
    "\"a\\\"b\"", "\"a\\u0041\"", "a,b", ".inf", "<<", "%k", "@k", "`k`", "k\"q", "k'q", "|", ">", "'a'", "\"a\"", "'1'",
    "\"~\"", "k\u{2028}", "k\tx", "- k",
];

const ESCAPES: &[&str] =
    &["\\n", "\\t", "\\\"", "\\\\", "\\/", "\\0", "\\r", "\\x41", "\\u00e9", "\\U0001F600", "\\a", "\\e", "\\ ", "\\N", "\\_", "\\L", "\\P", "\\q", "\\"];

fn word(r: &mut Rng) -> &'static str {
    if r.odd() {
        r.pick(WORDS)
    } else {
        r.pick(PLAIN_WORDS)
    }
}

fn key(r: &mut Rng) -> &'static str {
    if r.odd() {
        r.pick(KEYS)
    } else {
        r.pick(PLAIN_KEYS)
    }
}

fn scalar(r: &mut Rng) -> String {
    let w = word(r);
    match r.below(10) {
        0..=4 => w.to_string(),
        5 | 6 => {
            if r.odd() {
                format!("'{w}")
            } else {
                format!("'{}'", w.replace('\'', "''"))
            }
        }
        _ => {
            let mut s = String::from("\"");
            for c in w.chars() {
                match c {
                    '"' | '\\' if !r.odd() => {
                        s.push('\\');
                        s.push(c);
                    }
                    _ => s.push(c),
                }
                if r.chance(5) {
                    s.push_str(if r.odd() { r.pick(ESCAPES) } else { r.pick(&ESCAPES[..7]) });
                }
            }
            if !r.odd() {
                s.push('"');
            }
            s
        }
    }
}

fn flow(r: &mut Rng, depth: usize) -> String {
    let n = r.below(4);
    let map = r.chance(35);
    let mut s = String::from(if map { "{" } else { "[" });
    if r.chance(20) {
        s.push(' ');
    }
    let mut used = Vec::new();
    for i in 0..n {
        if i > 0 {
            s.push_str(if r.odd() { r.pick(&[",", " , ", ",  ", " ,", ",,"]) } else { ", " });
        }
        if map {
            let mut k = key(r);
            while used.contains(&k) && !r.odd() {
                k = key(r);
            }
            used.push(k);
            s.push_str(k);
            s.push_str(if r.odd() { r.pick(&[":", " : ", ":  ", ": ", ""]) } else { ": " });
        }
        if depth < 3 && r.chance(15) {
            s.push_str(&flow(r, depth + 1));
        } else {
            s.push_str(&scalar(r));
        }
    }
    if n > 0 && r.odd() {
        s.push(',');
    }
    if r.chance(20) {
        s.push(' ');
    }
    if !r.odd() {
        s.push(if map { '}' } else { ']' });
    }
    s
}

fn value(r: &mut Rng) -> String {
    let mut s = if r.chance(25) { flow(r, 0) } else { scalar(r) };
    match r.below(10) {
        0 => s.push_str(" # comment"),
        1 if r.odd() => s.push_str("#c"),
        2 => s.push_str("  #: x"),
        3 => s.push_str("   "),
        _ => {}
    }
    s
}

/// Breaks a value over lines after some `,`, `[` and `{` (blindly: also inside quotes, at
/// times), indenting the lines after it deeper than `owner`, or not, as an odd choice.
fn break_lines(r: &mut Rng, value: &str, owner: usize) -> String {
    let mut out = String::new();
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if matches!(c, ',' | '[' | '{') && r.chance(40) {
            if chars.peek() == Some(&' ') {
                chars.next();
            }
            if r.chance(15) {
                out.push_str(r.pick(&["\n", "\n   \n", "\n  # a comment, with [x]\n", "\n# a comment\n"]));
            }
            out.push('\n');
            let deeper = if r.odd() { r.pick(&[0, 0, 1]) } else { r.pick(&[1, 2, 4, 8]) };
            out.push_str(&" ".repeat(owner + deeper));
        }
    }
    out
}

fn noise(r: &mut Rng, out: &mut String) {
    match r.below(12) {
        0 => out.push('\n'),
        1 => out.push_str("   \n"),
        2 => {
            out.push_str(&" ".repeat(r.below(6)));
            out.push_str("# a comment: with - stuff [x]\n");
        }
        _ => {}
    }
}

fn mapping(r: &mut Rng, indent: usize, depth: usize, out: &mut String) {
    let mut used = Vec::new();
    for _ in 0..1 + r.below(4) {
        noise(r, out);
        let pad = " ".repeat(indent);
        out.push_str(&pad);
        // A duplicate key only as an odd choice.
        let mut k = key(r);
        while used.contains(&k) && !r.odd() {
            k = key(r);
        }
        used.push(k);
        out.push_str(k);
        out.push(':');
        match r.below(if depth < 4 { 10 } else { 5 }) {
            0..=3 => {
                out.push_str(if r.odd() { r.pick(&["  ", ""]) } else { " " });
                let v = value(r);
                let v = if r.chance(25) { break_lines(r, &v, indent) } else { v };
                out.push_str(&v);
                out.push('\n');
            }
            4 => {
                out.push_str(r.pick(&["", "", " # c", " "]));
                out.push('\n');
            }
            5..=6 => {
                out.push('\n');
                let step = if r.odd() { r.pick(&[1, 3, 4, 0]) } else { 2 };
                mapping(r, indent + step, depth + 1, out);
            }
            _ => {
                out.push('\n');
                let at = if r.chance(30) { indent } else { indent + r.pick(&[1, 2, 2, 4]) };
                for _ in 0..1 + r.below(4) {
                    noise(r, out);
                    out.push_str(&" ".repeat(at));
                    if r.odd() {
                        match r.below(5) {
                            0 => out.push('-'),
                            1 => out.push_str("-x"),
                            2 => out.push_str("- - x"),
                            3 => {
                                out.push_str("- ");
                                out.push_str(key(r));
                                out.push_str(": v");
                            }
                            _ => out.push_str("-  "),
                        }
                    } else {
                        out.push_str("- ");
                        let v = value(r);
                        let v = if r.chance(15) { break_lines(r, &v, at) } else { v };
                        out.push_str(&v);
                    }
                    out.push('\n');
                }
            }
        }
    }
}

fn document(r: &mut Rng) -> String {
    let mut out = String::new();
    if r.odd() {
        match r.below(4) {
            0 => {
                out.push_str("- a\n- b\n");
                return out;
            }
            1 => return scalar(r),
            2 => out.push_str("---\n"),
            _ => out.push_str(&" ".repeat(1 + r.below(2))),
        }
    }
    mapping(r, 0, 0, &mut out);
    if r.chance(5) {
        out.pop();
    }
    out
}

/// Small edits that turn a good document into a bad or a different one.
fn mutate(r: &mut Rng, doc: &str) -> String {
    let mut chars: Vec<char> = doc.chars().collect();
    let specials = ['-', ':', '#', '\'', '"', '[', ']', '{', '}', ',', '&', '*', '!', '|', '>', '%', '@', '`', ' ', '\t', '\r', '\n', '\\', '?', '~', 'é', '\u{2028}', '\u{85}', '\u{a0}'];
    for _ in 0..1 + r.below(3) {
        let at = r.below(chars.len() + 1);
        match r.below(6) {
            0 | 1 => chars.insert(at, r.pick(&specials)),
            2 if at < chars.len() => {
                chars.remove(at);
            }
            3 => {
                // Indent or dedent one line by a space.
                let start = chars[..at].iter().rposition(|&c| c == '\n').map_or(0, |p| p + 1);
                if r.chance(50) {
                    chars.insert(start, ' ');
                } else if chars.get(start) == Some(&' ') {
                    chars.remove(start);
                }
            }
            4 => {
                // Duplicate a line (a duplicate key, or an item more).
                let text: String = chars.iter().collect();
                let lines: Vec<&str> = text.split_inclusive('\n').collect();
                if !lines.is_empty() {
                    let i = r.below(lines.len());
                    let mut again: Vec<&str> = lines.clone();
                    again.insert(i, lines[i]);
                    chars = again.concat().chars().collect();
                }
            }
            _ => {
                let w: Vec<char> = word(r).chars().collect();
                chars.splice(at..at, w);
            }
        }
    }
    chars.into_iter().collect()
}

#[test]
fn generated_and_mutated_documents() {
    const N: usize = 40_000;
    let mut r = Rng { state: 0x5eed_0f9a_11ed, hostile: 0 };
    let (mut handled, mut declined, mut failures) = (0, 0, Vec::new());
    // Documents of hostility 0 (before mutation) that were handled: the generator's
    // ordinary shapes are the fast path's.
    let (mut tame, mut tame_handled) = (0, 0);
    // Handled documents with a flow collection broken over lines.
    let mut broken_handled = 0;
    for i in 0..N {
        r.hostile = [0, 0, 1, 2, 5, 10, 30, 60][i % 8];
        let doc = document(&mut r);
        if r.hostile == 0 {
            tame += 1;
            tame_handled += usize::from(check(&doc) == Ok(H));
        }
        let texts = [doc.clone(), mutate(&mut r, &doc)];
        for text in &texts {
            match check(text) {
                Ok(H) if text.contains(",\n") || text.contains("[\n") || text.contains("{\n") => {
                    handled += 1;
                    broken_handled += 1;
                }
                Ok(H) => handled += 1,
                Ok(D) => declined += 1,
                Err(e) => failures.push(format!("document {i}: {e}")),
            }
        }
    }
    failures.truncate(20);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!("generated documents: {handled} handled ({broken_handled} with a flow collection over lines), {declined} declined; ordinary ones: {tame_handled} of {tame} handled");
    assert!(broken_handled > N / 50, "{broken_handled} handled with a flow collection over lines");
    assert!(tame_handled * 10 >= tame * 9, "ordinary documents declined: {tame_handled} of {tame} handled");
    // Both ways are exercised in earnest.
    assert!(handled > N / 5 && declined > N / 5, "{handled} handled, {declined} declined");
}

/// Loading through the fast path gives the scope that serde_yaml gives.
#[test]
fn loaded_scope_is_the_same_through_either_parser() {
    let (repo, _) = roots();
    for f in [
        repo.join("data/defaults.yml"),
        repo.join("scope-profiles/read-only.yml"),
        repo.join("scope-profiles/restricted.yml"),
        repo.join("scope-profiles/coding.yml"),
        repo.join("tests/corpus/attacks-scope.yml"),
    ] {
        let text = std::fs::read_to_string(&f).unwrap();
        let fast = gptel_scope::yaml_fast::parse(&text).unwrap();
        let via_fast: gptel_scope::scope::Scope = serde_yaml::from_value(fast).unwrap();
        let via_serde: gptel_scope::scope::Scope = serde_yaml::from_str(&text).unwrap();
        assert_eq!(via_fast, via_serde, "{}", f.display());
    }
}
