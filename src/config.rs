//! TEMPORARY stand-in until the scope loader lands (replaced on merge).
use std::path::Path;

pub fn expand_pattern(pattern: &str, home: Option<&Path>, project_root: Option<&Path>) -> String {
    let mut p = pattern.to_string();
    if let Some(root) = project_root {
        p = p.replace("${project_root}", &root.to_string_lossy());
    }
    if let Some(h) = home {
        if p == "~" {
            p = h.to_string_lossy().into_owned();
        } else if let Some(rest) = p.strip_prefix("~/") {
            p = format!("{}/{}", h.to_string_lossy().trim_end_matches('/'), rest);
        }
    }
    if p.ends_with('/') && p.len() > 1 {
        p.push_str("**");
    }
    p
}

use std::path::PathBuf;
use std::sync::Arc;

use crate::scope::Scope;

pub enum Source {
    File(PathBuf),
    Profile(PathBuf),
    Inline { name: String, text: String },
}

pub struct LoadedScope {
    pub scope: Scope,
    pub project_root: Option<PathBuf>,
    pub files: Vec<PathBuf>,
}

pub fn load(sources: &[Source]) -> crate::Result<Arc<LoadedScope>> {
    if sources.is_empty() {
        return Err(crate::ScopeError::NoScopeConfig("no scope.yml".into()));
    }
    let mut scope = Scope::default();
    let mut root = None;
    let mut files = vec![];
    for s in sources {
        let (text, name) = match s {
            Source::File(p) | Source::Profile(p) => {
                if let Source::File(p) = s {
                    root = p.parent().map(|d| d.to_path_buf());
                    files.push(p.clone());
                }
                (std::fs::read_to_string(p).map_err(|e| crate::ScopeError::Io { path: p.display().to_string(), message: e.to_string() })?, p.display().to_string())
            }
            Source::Inline { name, text } => (text.clone(), name.clone()),
        };
        scope = serde_yaml::from_str(&text).map_err(|e| crate::ScopeError::InvalidConfig { file: name, line: e.location().map(|l| l.line()), key: None, message: e.to_string() })?;
    }
    Ok(Arc::new(LoadedScope { scope, project_root: root, files }))
}
