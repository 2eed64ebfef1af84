//! The engine as Emacs meets it: entry points taking and returning JSON ([`api`], also what
//! the command-line check calls) and the dynamic module's binding ([`binding`]), which
//! converts values and nothing more.

pub mod api;
pub mod binding;
pub mod session;
