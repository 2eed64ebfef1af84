fn main() {
    let cmd = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let f = gptel_scope::shell::flatten(&cmd, std::path::Path::new("/tmp"), None);
    for c in &f.commands { println!("{:?} {:?}", c.context, c.words.iter().map(|w| w.display()).collect::<Vec<_>>()); }
    println!("{:?}", f.problems);
}
