//! The scope document: its types ([`document`], re-exported here), the command semantics it
//! may override ([`semantics`]), the environment it gives commands ([`env`](mod@env)), and its loading
//! from every source ([`config`]), checked against what the user approved ([`trust`]).

pub mod config;
pub mod document;
pub mod env;
pub mod semantics;
pub mod toolchain;
pub mod trust;

pub use document::*;
