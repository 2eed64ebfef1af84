//! The policy: a request's scope prepared ([`request`]), paths matched against it
//! ([`paths`]), the command rules of `run_command` ([`rules`]), the decision on a command
//! with its evidence ([`decide`]), the denied entries under a tree ([`denied`]), git's
//! configuration that names programs it runs, never written ([`gitconfig`]), whether
//! git's object store holds a denied path ([`gitstore`]) that a git pathspec leaves out
//! ([`pathspec`]), the list of allowed commands ([`listing`]), what the sandbox shows a command
//! ([`sandbox`]) and where a scope defeats itself ([`lint`]).

pub mod decide;
pub mod denied;
pub mod gitconfig;
pub mod gitstore;
pub mod lint;
pub mod listing;
pub mod paths;
pub mod pathspec;
pub mod request;
pub mod rules;
pub mod sandbox;
