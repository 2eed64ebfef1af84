//! What the engine knows of git outside one decision's walk: git's configuration that
//! names programs git runs, protected like scope documents and never written ([`config`]),
//! whether a repository's index, HEAD tree or history holds a denied path, read by
//! hardened, bounded git plumbing ([`store`]), and git pathspecs, what they certainly leave
//! out ([`pathspec`]). How a git command's words are judged is the decision's
//! (`policy/decide/git/`).

pub mod config;
pub mod pathspec;
pub mod store;
