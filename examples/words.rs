fn main() {
    let opts = brush_parser::ParserOptions::default();
    for w in std::env::args().skip(1) {
        println!("{w:?} => {:?}", brush_parser::word::parse(&w, &opts));
        println!("   braces => {:?}", brush_parser::word::parse_brace_expansions(&w, &opts));
    }
}
