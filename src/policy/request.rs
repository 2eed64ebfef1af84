//! A request to the engine (its scope sources, grants, directory, home, platform) and its
//! preparation: the scope loaded and its path patterns compiled, both cached. Used by the
//! JSON entry points ([`crate::emacs::api`], which re-exports it), the sandbox and the file tools.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use once_cell::sync::Lazy;
use serde::Deserialize;
use serde_json::Value;

use crate::policy::decide::Grant;
use crate::policy::paths::{self, Matcher};
use crate::scope::config::{self, LoadedScope, Source};
use crate::scope::Platform;
use crate::{Result, ScopeError};

/// One scope source of a request.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    pub file: Option<String>,
    pub profile: Option<String>,
    /// YAML or JSON text, or a JSON object.
    pub inline: Option<Value>,
    pub name: Option<String>,
    /// For a `file`: the SHA-256 (hex) of the content the user approved, or none. Checked
    /// when the request says `check_trust`.
    pub sha256: Option<String>,
}

/// A request to the engine.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Request {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub directory: Option<String>,
    pub path: Option<String>,
    pub access: Option<String>,
    pub sources: Vec<SourceSpec>,
    pub grants: Vec<Grant>,
    pub tool: Option<String>,
    pub home: Option<String>,
    pub project_root: Option<String>,
    pub platform: Option<String>,
    /// Apply a scope document only when its content is the one the user approved (the
    /// `sha256` of its source): the elisp layer always asks for it.
    pub check_trust: bool,
    /// Paths that hold rules besides the scope documents of `sources` (the session's
    /// preset.md, the profile directory, the trust list): never written by a tool.
    pub protect: Vec<String>,
    /// The command runs in a sandbox that masks every entry a deny pattern covers under the
    /// scope's directories (the elisp layer says so when bubblewrap will wrap it): a whole
    /// tree read there is allowed with a warning, since what it would read is hidden.
    pub masked: bool,
    /// For the sandbox's mounts of one call: what its decision says it needs
    /// ([`crate::policy::sandbox::call_needs`]).
    pub call: Option<crate::policy::sandbox::CallNeeds>,
    /// For the sandbox's mounts of one call: the variables of its environment that find its
    /// programs (`PATH`, the toolchains' homes), as `NAME=VALUE`.
    pub env: Vec<String>,
}

impl Request {
    pub fn parse(json: &str) -> Result<Request> {
        serde_json::from_str(json)
            .map_err(|e| ScopeError::InvalidArgument(format!("bad request: {e}")))
    }

    pub(crate) fn sources(&self) -> Result<Vec<Source>> {
        self.sources
            .iter()
            .map(|s| match (&s.file, &s.profile, &s.inline) {
                (Some(f), None, None) => Ok(Source::File(PathBuf::from(f))),
                (None, Some(p), None) => Ok(Source::Profile(PathBuf::from(p))),
                (None, None, Some(v)) => {
                    let text = match v {
                        Value::String(t) => t.clone(),
                        other => other.to_string(),
                    };
                    Ok(Source::Inline {
                        name: s.name.clone().unwrap_or_else(|| "inline scope".into()),
                        text,
                    })
                }
                _ => Err(ScopeError::InvalidArgument(
                    "each source must have exactly one of \"file\", \"profile\" or \"inline\""
                        .into(),
                )),
            })
            .collect()
    }

    /// For each scope document the request names, the SHA-256 the user approved for it
    /// (`None`: none), when the request asks for approval to be checked (`check_trust`):
    /// what [`config::load_approved`] checks before it parses anything.
    pub fn approved(&self) -> Option<Vec<(&Path, Option<&str>)>> {
        self.check_trust.then(|| {
            self.sources
                .iter()
                .filter_map(|s| {
                    s.file
                        .as_deref()
                        .map(|f| (Path::new(f), s.sha256.as_deref()))
                })
                .collect()
        })
    }

    pub(crate) fn home(&self) -> Option<PathBuf> {
        self.home
            .as_ref()
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
    }

    pub(crate) fn platform(&self) -> Result<Platform> {
        match self.platform.as_deref() {
            None => Ok(Platform::current()),
            Some("posix") => Ok(Platform::Posix),
            Some("windows") => Ok(Platform::Windows),
            Some(other) => Err(ScopeError::InvalidArgument(format!(
                "unknown platform `{other}` (posix or windows)"
            ))),
        }
    }

    pub(crate) fn directory(&self) -> Result<PathBuf> {
        let d = self
            .directory
            .as_deref()
            .ok_or_else(|| ScopeError::InvalidArgument("`directory` is required".into()))?;
        let p = PathBuf::from(d);
        if !p.is_absolute() {
            return Err(ScopeError::InvalidArgument(format!(
                "the directory `{d}` must be absolute"
            )));
        }
        if !paths::is_dir(&p) {
            return Err(ScopeError::InvalidArgument(format!(
                "the directory `{d}` does not exist or is not a directory; pass an existing directory inside the project"
            )));
        }
        Ok(p)
    }
}

/// A loaded scope with its compiled path patterns.
pub struct Prepared {
    pub loaded: Arc<LoadedScope>,
    pub matcher: Arc<Matcher>,
    pub home: Option<PathBuf>,
    /// The project root the patterns were expanded with (the request's, else the scope's).
    pub project_root: Option<PathBuf>,
}

/// Scope, home, root, and a hash of the protected paths (the entry holds them, compared on
/// a hit: a decision copies no list to look its matcher up).
type MatcherKey = (usize, Option<PathBuf>, Option<PathBuf>, u64);
/// A compiled matcher with the scope it was compiled from (kept alive by it) and the
/// protected paths it was compiled with.
type MatcherEntry = (Arc<LoadedScope>, Arc<Matcher>, Vec<String>);
/// Compiled matchers by scope (kept alive by the `Arc` stored beside), home and root.
static MATCHERS: Lazy<Mutex<HashMap<MatcherKey, MatcherEntry>>> =
    Lazy::new(|| Mutex::new(HashMap::new()));

/// Loads the sources of a request and compiles the patterns (both cached).
pub fn prepare(req: &Request) -> Result<Prepared> {
    let loaded = config::load_approved(&req.sources()?, req.approved().as_deref())?;
    let home = req.home();
    let root = req
        .project_root
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| loaded.project_root.clone());
    let protect_hash = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        req.protect.hash(&mut h);
        h.finish()
    };
    let key = (
        Arc::as_ptr(&loaded) as usize,
        home.clone(),
        root.clone(),
        protect_hash,
    );
    if let Ok(cache) = MATCHERS.lock() {
        if let Some((_, m, protect)) = cache.get(&key) {
            if *protect == req.protect {
                return Ok(Prepared {
                    loaded,
                    matcher: m.clone(),
                    home,
                    project_root: root,
                });
            }
        }
    }
    let matcher =
        Matcher::new(&loaded.scope.paths, home.as_deref(), root.as_deref()).map_err(|e| {
            ScopeError::InvalidConfig {
                file: loaded
                    .files
                    .last()
                    .map(|f| f.display().to_string())
                    .unwrap_or_else(|| "scope".into()),
                line: None,
                key: Some("paths".into()),
                message: format!("a path pattern does not compile: {e}"),
            }
        })?;
    // Every file the rules came from (documents and profiles) and what the request names.
    let protected: Vec<PathBuf> = loaded
        .files
        .iter()
        .cloned()
        .chain(req.protect.iter().map(PathBuf::from))
        .collect();
    let matcher = Arc::new(matcher.with_protected(&protected));
    if let Ok(mut cache) = MATCHERS.lock() {
        if cache.len() > 64 {
            cache.clear();
        }
        cache.insert(key, (loaded.clone(), matcher.clone(), req.protect.clone()));
    }
    Ok(Prepared {
        loaded,
        matcher,
        home,
        project_root: root,
    })
}
