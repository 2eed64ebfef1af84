//! gptel-scope's policy engine.
//!
//! The folders are layers; each uses only the ones listed before it (ARCHITECTURE.md):
//!
//! - [`error`], [`tool`], [`resolve`], [`bounded`]: typed errors and the reason codes
//!   ([`Reason`]), the tools' names ([`Tool`]), path resolution on the file system, and the bounded read of the files the engine reads
//!   for itself;
//! - [`output`]: what the model is shown of an output (truncation, redaction);
//! - [`wall`]: the supervisor every command runs under (limits, reaping, Landlock);
//! - [`run`]: commands started by the module (under the supervisor) and their output
//!   captured into a bounded buffer;
//! - [`shell`]: the bash grammar, and the simple commands a command line runs;
//! - [`scope`]: the scope document, loaded, validated and trusted;
//! - [`policy`]: the decision on a command or a path, with its evidence;
//! - [`fs`], [`edit`]: the file tools, and Add to scope;
//! - [`emacs`]: the JSON entry points and the Emacs binding.
//!
//! Everything here except [`emacs::binding`] is pure Rust, tested by `cargo test` without Emacs.

pub mod bounded;
pub mod edit;
pub mod emacs;
pub mod error;
pub mod fs;
pub mod output;
pub mod policy;
pub mod resolve;
pub mod run;
pub mod scope;
pub mod shell;
pub mod tool;
pub mod wall;

pub use error::reason::Reason;
pub use error::{Result, ScopeError};
pub use tool::Tool;

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
