//! `gptel-scope-run`: the supervisor every command of gptel-scope runs under (its limits,
//! nothing outliving the call, Landlock where bubblewrap cannot run). All of it is in
//! `gptel_scope::wall`; this is its entry.

fn main() {
    std::process::exit(gptel_scope::wall::run::main(
        std::env::args_os().skip(1).collect(),
    ));
}
