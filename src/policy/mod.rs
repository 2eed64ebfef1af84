//! The policy: a request's scope prepared ([`request`]), paths matched against it
//! ([`paths`]), the command rules of `run_command` ([`rules`]), the decision on a command
//! with its evidence ([`decide`]), the denied entries under a tree ([`denied`]), what the
//! engine knows of git ([`git`]: its configuration that names programs it runs, never
//! written; whether its object store holds a denied path that a pathspec leaves out), the
//! list of allowed commands ([`listing`]), what the sandbox shows a command ([`sandbox`])
//! and where a scope defeats itself ([`lint`]).

pub mod decide;
pub mod denied;
pub mod git;
pub mod lint;
pub mod listing;
pub mod paths;
pub mod request;
pub mod rules;
pub mod sandbox;
