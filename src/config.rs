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
