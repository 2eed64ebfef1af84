//! A brush-parser syntax tree as text, source locations left out: the fast parser does not
//! record them and nothing downstream reads them. Shared by `tests/fast_parser.rs` and the
//! `fastparse` fuzz target.

use std::sync::OnceLock;

pub fn shape(program: &brush_parser::ast::Program) -> String {
    static LOC: OnceLock<regex::Regex> = OnceLock::new();
    let loc = LOC.get_or_init(|| {
        regex::Regex::new(
            r"(, )?loc: (None|(Some\()?SourceSpan \{ start: SourcePosition \{[^}]*\}, end: SourcePosition \{[^}]*\} \}\)?)",
        )
        .expect("a valid regex")
    });
    loc.replace_all(&format!("{program:?}"), "").into_owned()
}
