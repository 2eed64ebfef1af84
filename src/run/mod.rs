//! Starting commands and capturing their output, inside the module: a command started as
//! Emacs's `make-process` starts one, under the supervisor `gptel-scope-run` that the
//! caller names as its program ([`spawn`]), its standard output and error going to a pipe
//! that a thread drains into a bounded buffer, its first and last bytes kept ([`capture`]).
//! Uses [`crate::output`] for what the model is shown of the captured output.

pub mod capture;
pub mod spawn;
