//! Properties of apply_patch (F05, F06) over generated files: for random old and new texts,
//! a unified diff and an envelope computed here (an LCS diff independent of the module) apply
//! to give exactly the new text; a diff applied to the wrong file changes nothing; and no
//! input makes the parser panic.

use std::fs;
use std::path::{Path, PathBuf};

use gptel_scope::fs::tools::call;
use serde_json::{json, Value};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Lines from a tiny alphabet, so that repeats (and ambiguous contexts) are common.
fn random_lines(r: &mut Rng, max: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "a",
        "b",
        "c",
        "fn x() {",
        "}",
        "",
        "  let y = 1;",
        "ü ñ",
        "\t tab",
        "-dash",
        "+plus",
        "@@ at",
        "*** star",
        "\\ bs",
    ];
    (0..r.below(max + 1))
        .map(|_| WORDS[r.below(WORDS.len())].to_string())
        .collect()
}

fn text(lines: &[String], final_newline: bool) -> String {
    let mut s = lines.join("\n");
    if final_newline && !lines.is_empty() {
        s.push('\n');
    }
    s
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Keep,
    Del,
    Add,
}

/// An LCS edit script from `a` to `b`.
fn edit_script(a: &[String], b: &[String]) -> Vec<(Op, String)> {
    let (n, m) = (a.len(), b.len());
    let mut t = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i][j] = if a[i] == b[j] {
                t[i + 1][j + 1] + 1
            } else {
                t[i + 1][j].max(t[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            out.push((Op::Keep, a[i].clone()));
            i += 1;
            j += 1;
        } else if j < m && (i == n || t[i][j + 1] >= t[i + 1][j]) {
            out.push((Op::Add, b[j].clone()));
            j += 1;
        } else {
            out.push((Op::Del, a[i].clone()));
            i += 1;
        }
    }
    out
}

/// A unified diff of `a` → `b` with `ctx` lines of context, as diff -U would write it.
fn unified(
    name: &str,
    a: &[String],
    a_nl: bool,
    b: &[String],
    b_nl: bool,
    ctx: usize,
) -> Option<String> {
    let script = edit_script(a, b);
    let changed: Vec<usize> = script
        .iter()
        .enumerate()
        .filter(|(_, (o, _))| *o != Op::Keep)
        .map(|(k, _)| k)
        .collect();
    // A side without a final newline shows its last line, so the marker can say so.
    let ends_differ = (!a_nl || !b_nl) && !a.is_empty() && !b.is_empty();
    if changed.is_empty() && !ends_differ {
        return None;
    }
    // Group changes whose context would touch into hunks of script indices [lo, hi).
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut marks = changed.clone();
    if ends_differ {
        // The last line must be shown (its newline changes): mark the last old and new lines.
        if let Some(k) = script.iter().rposition(|(o, _)| *o != Op::Add) {
            marks.push(k);
        }
        if let Some(k) = script.iter().rposition(|(o, _)| *o != Op::Del) {
            marks.push(k);
        }
        marks.sort();
        marks.dedup();
    }
    for &k in &marks {
        let lo = k.saturating_sub(ctx);
        let hi = (k + 1 + ctx).min(script.len());
        match groups.last_mut() {
            Some(g) if lo <= g.1 => g.1 = g.1.max(hi),
            _ => groups.push((lo, hi)),
        }
    }
    let mut out = format!("--- a/{name}\n+++ b/{name}\n");
    for (lo, hi) in groups {
        let old_before = script[..lo].iter().filter(|(o, _)| *o != Op::Add).count();
        let new_before = script[..lo].iter().filter(|(o, _)| *o != Op::Del).count();
        let old_n = script[lo..hi].iter().filter(|(o, _)| *o != Op::Add).count();
        let new_n = script[lo..hi].iter().filter(|(o, _)| *o != Op::Del).count();
        let start = |before: usize, n: usize| if n == 0 { before } else { before + 1 };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(old_before, old_n),
            old_n,
            start(new_before, new_n),
            new_n
        ));
        let last_old = script.iter().rposition(|(o, _)| *o != Op::Add);
        let last_new = script.iter().rposition(|(o, _)| *o != Op::Del);
        for (k, (o, l)) in script.iter().enumerate().take(hi).skip(lo) {
            let c = match o {
                Op::Keep => ' ',
                Op::Del => '-',
                Op::Add => '+',
            };
            let no_nl_old = Some(k) == last_old && !a_nl && *o != Op::Add;
            let no_nl_new = Some(k) == last_new && !b_nl && *o != Op::Del;
            if *o == Op::Keep && (no_nl_old != no_nl_new) {
                // Same text, different ending: write it as a removal and an addition.
                out.push_str(&format!("-{l}\n"));
                if no_nl_old {
                    out.push_str("\\ No newline at end of file\n");
                }
                out.push_str(&format!("+{l}\n"));
                if no_nl_new {
                    out.push_str("\\ No newline at end of file\n");
                }
                continue;
            }
            out.push_str(&format!("{c}{l}\n"));
            if no_nl_old || no_nl_new {
                out.push_str("\\ No newline at end of file\n");
            }
        }
    }
    Some(out)
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = fs::canonicalize(tmp.path()).expect("canonical");
    fs::write(
        root.join("scope.yml"),
        "paths: {read: [\"${project_root}/**\"], write: [\"${project_root}/**\"]}\n",
    )
    .expect("scope");
    (tmp, root)
}

fn apply(root: &Path, patch: &str) -> Value {
    call(
        "apply_patch",
        &json!({"sources": [{"file": root.join("scope.yml")}], "patch": patch}).to_string(),
    )
}

#[test]
fn f05_generated_unified_diffs_apply_exactly() {
    let (_tmp, root) = project();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut applied = 0;
    for case in 0..400 {
        let a = random_lines(&mut r, 12);
        let mut b = a.clone();
        for _ in 0..r.below(4) + 1 {
            match r.below(3) {
                0 if !b.is_empty() => {
                    let i = r.below(b.len());
                    b.remove(i);
                }
                1 => {
                    let i = r.below(b.len() + 1);
                    let w = random_lines(&mut r, 2);
                    for (k, l) in w.into_iter().enumerate() {
                        b.insert(i + k, l);
                    }
                }
                _ if !b.is_empty() => {
                    let i = r.below(b.len());
                    b[i] = format!("{} changed", b[i]);
                }
                _ => {}
            }
        }
        // A last line that is empty can only be written with its newline.
        let a_nl = r.below(4) != 0 || a.last().is_some_and(String::is_empty);
        let b_nl = r.below(4) != 0 || b.last().is_some_and(String::is_empty);
        let ctx = r.below(4);
        let name = format!("f{case}.txt");
        let old = text(&a, a_nl);
        let new = text(&b, b_nl);
        fs::write(root.join(&name), &old).expect("write");
        let Some(patch) = unified(&name, &a, a_nl, &b, b_nl, ctx) else {
            continue;
        };
        let v = apply(&root, &patch);
        if old.is_empty() || new.is_empty() {
            // An empty side is a creation or deletion in diff's eyes; as an update it may
            // still apply, and when it does it must give the new text.
            if v["success"] == json!(true) {
                assert_eq!(
                    fs::read_to_string(root.join(&name)).expect("read"),
                    new,
                    "case {case}\n{patch}"
                );
            }
            continue;
        }
        assert_eq!(
            v["success"],
            json!(true),
            "case {case}: {v}\nold: {old:?}\nnew: {new:?}\n{patch}"
        );
        assert_eq!(
            fs::read_to_string(root.join(&name)).expect("read"),
            new,
            "case {case}\n{patch}"
        );
        applied += 1;
        // The same patch again no longer matches (unless it happens to): never a partial write.
        let again = apply(&root, &patch);
        if again["success"] != json!(true) {
            assert_eq!(
                fs::read_to_string(root.join(&name)).expect("read"),
                new,
                "case {case}"
            );
        }
    }
    assert!(applied > 250, "only {applied} cases applied");
}

#[test]
fn f06_generated_envelopes_apply_or_refuse_ambiguity() {
    let (_tmp, root) = project();
    let mut r = Rng(0xdead_beef_cafe_f00d);
    let (mut applied, mut ambiguous) = (0, 0);
    for case in 0..300 {
        let a = random_lines(&mut r, 10);
        if a.is_empty() {
            continue;
        }
        let i = r.below(a.len());
        let mut b = a.clone();
        b[i] = format!("{} new", b[i]);
        let lo = i.saturating_sub(r.below(3));
        let hi = (i + 1 + r.below(3)).min(a.len());
        let mut patch = format!("*** Begin Patch\n*** Update File: e{case}.txt\n@@\n");
        for (k, line) in a.iter().enumerate().take(hi).skip(lo) {
            if k == i {
                patch.push_str(&format!("-{line}\n+{}\n", b[i]));
            } else {
                patch.push_str(&format!(" {line}\n"));
            }
        }
        patch.push_str("*** End Patch\n");
        let name = format!("e{case}.txt");
        let old = text(&a, true);
        fs::write(root.join(&name), &old).expect("write");
        let v = apply(&root, &patch);
        let window = &a[lo..hi];
        let places = (0..=a.len() - window.len())
            .filter(|&s| &a[s..s + window.len()] == window)
            .count();
        if places == 1 {
            assert_eq!(v["success"], json!(true), "case {case}: {v}\n{patch}");
            assert_eq!(
                fs::read_to_string(root.join(&name)).expect("read"),
                text(&b, true)
            );
            applied += 1;
        } else {
            assert_eq!(
                v["reason"],
                json!("patch_apply_error"),
                "case {case}: {v}\n{patch}"
            );
            assert!(
                v["message"]
                    .as_str()
                    .expect("m")
                    .contains("matches at lines"),
                "{v}"
            );
            assert_eq!(fs::read_to_string(root.join(&name)).expect("read"), old);
            ambiguous += 1;
        }
    }
    assert!(
        applied > 100 && ambiguous > 10,
        "applied {applied}, ambiguous {ambiguous}"
    );
}

#[test]
fn f05_parser_never_panics_on_mangled_patches() {
    let mut r = Rng(42);
    let seeds = [
        "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n",
        "*** Begin Patch\n*** Update File: x\n*** Move to: y\n@@ h\n a\n-b\n+c\n*** End of File\n*** End Patch\n",
        "diff --git a/x b/x\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n",
    ];
    for _ in 0..20_000 {
        let mut s: Vec<char> = seeds[r.below(seeds.len())].chars().collect();
        for _ in 0..r.below(6) + 1 {
            let at = r.below(s.len() + 1);
            match r.below(4) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 => s.insert(
                    at,
                    ['\n', '@', '-', '+', ' ', '\\', '*', ',', '0', '9', 'é'][r.below(11)],
                ),
                2 if at < s.len() => s[at] = ['\n', '-', '+', '1', ' '][r.below(5)],
                _ => {
                    let cut = r.below(s.len() + 1);
                    s.truncate(cut);
                }
            }
        }
        let text: String = s.into_iter().collect();
        let _ = gptel_scope::fs::patch::parse(&text);
    }
}
