fn main() {
    for w in std::env::args().skip(1) {
        println!("{w:?} => {:?}", brush_parser::tokenize_str(&w).map(|t| t.iter().map(|t| format!("{t:?}").chars().take(40).collect::<String>()).collect::<Vec<_>>()));
    }
}
