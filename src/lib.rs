//! gptel-scope's policy engine.
//!
//! Everything here except [`module`] is pure Rust, tested by `cargo test` without Emacs.

pub mod error;
pub mod scope;
pub mod semantics;

pub use error::{Result, ScopeError};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
pub mod resolve;
pub mod config;
pub mod paths;
pub mod shell;
pub mod rules;
pub mod decide;
pub mod request;
pub mod api;
pub mod listing;
pub mod module;
pub mod truncate;
pub mod edit;
pub mod fs;
pub mod sandbox;
pub mod env;
pub mod redact;
pub mod trust;
