fn main() {
    let w = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let w = w.trim_end();
    let opts = brush_parser::ParserOptions::default();
    match brush_parser::word::parse(w, &opts) {
        Ok(p) => for x in p { println!("{}", format!("{x:?}").chars().take(300).collect::<String>()); },
        Err(e) => println!("ERR {e:?}"),
    }
}
