//! The fast parser against brush-parser on arbitrary text: whenever the fast parser
//! answers, brush-parser must parse the text to the same tree (source locations aside).
//! Text the precheck refuses never reaches either parser, so it is skipped.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../tests/support/tree_shape.rs"]
mod tree_shape;
use tree_shape::shape;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if gptel_scope::shell::precheck(text).is_err() {
        return;
    }
    let Some(fast) = gptel_scope::fastparse::parse(text) else { return };
    let mut parser = brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &brush_parser::ParserOptions::default());
    let reference = parser.parse_program();
    let reference = reference.unwrap_or_else(|e| panic!("fast parser accepted {text:?}, which brush-parser rejects: {e}"));
    assert_eq!(shape(&fast), shape(&reference), "trees differ for {text:?}");
});
