//! Step 7 (SPEC §3): allow-once grants cover what they may, and the decision is assembled:
//! the first violation by severity, the message, the evidence.

use super::*;

/// Reason codes no grant can cover.
pub(super) fn grantable(reason: &str) -> bool {
    matches!(
        reason,
        "command_not_allowed"
            | "dangerous_command"
            | "directory_not_in_scope"
            | "path_not_in_scope"
            | "subcommand_not_allowed"
    )
}

/// Which violation a decision reports first: what no grant can fix before what the user
/// may allow, and commands before the paths they touch.
pub(super) fn severity(reason: &str) -> usize {
    const ORDER: &[&str] = &[
        "parse_error",
        "privilege_escalation",
        "scope_document",
        "denied",
        "unsupported_construct",
        "dynamic_command",
        "path_denied",
        "reaches_denied_path",
        "flag_not_allowed",
        "subcommand_denied",
        "dangerous_command",
        "command_not_allowed",
        "subcommand_not_allowed",
        "directory_not_in_scope",
        "path_not_in_scope",
        "run_time_operand",
    ];
    ORDER
        .iter()
        .position(|r| *r == reason)
        .unwrap_or(ORDER.len())
}

pub(super) fn grant_covers(g: &Grant, v: &Violation, command: &str, home: Option<&Path>) -> bool {
    let r = g.resource.trim();
    if r == command.trim() || r == v.resource {
        return true;
    }
    if let Some(c) = &v.command {
        if r == c {
            return true;
        }
    }
    if v.validation_type == "path" {
        let mut gp = r.trim_end_matches("/**").trim_end_matches('/').to_string();
        if let (Some(rest), Some(h)) = (gp.strip_prefix('~'), home) {
            gp = format!("{}{}", h.display(), rest);
        }
        if gp.is_empty() || !gp.starts_with('/') {
            return false;
        }
        let gp = crate::resolve::normalize(Path::new(&gp));
        return Path::new(&v.resource).starts_with(&gp);
    }
    false
}

impl<'a> Judge<'a> {
    /// Whether the violation found last is one a grant of this call covers.
    pub(super) fn last_granted(&self) -> bool {
        self.violations.last().is_some_and(|v| {
            grantable(v.reason)
                && self.ctx.grants.iter().any(|g| {
                    g.tool == self.ctx.tool && grant_covers(g, v, &self.command, self.ctx.home)
                })
        })
    }

    pub(super) fn finish(mut self) -> Decision {
        // Grants.
        let mut used: Vec<Grant> = Vec::new();
        for v in self.violations.iter_mut() {
            if !v.grantable {
                continue;
            }
            if let Some(g) = self.ctx.grants.iter().find(|g| {
                g.tool == self.ctx.tool && grant_covers(g, v, &self.command, self.ctx.home)
            }) {
                v.granted = true;
                if !used.contains(g) {
                    used.push(g.clone());
                }
            }
        }
        let open: Vec<&Violation> = self.violations.iter().filter(|v| !v.granted).collect();
        let allowed = open.is_empty();
        let primary = open
            .iter()
            .min_by_key(|v| severity(v.reason))
            .copied()
            .cloned();
        let required = self.max_access.map_or("read", Access::as_str);
        let mut message = match &primary {
            None if !used.is_empty() => format!(
                "Allowed once by the user's grant ({}).",
                used.iter()
                    .map(|g| g.resource.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "Allowed.".to_string(),
            Some(p) => p.message.clone(),
        };
        // The other problems, each once, named by what it is about.
        let mut others: Vec<String> = Vec::new();
        for v in open
            .iter()
            .filter(|v| primary.as_ref().is_none_or(|p| p != **v))
        {
            let about = if v.validation_type == "path" || v.command.is_none() {
                v.resource.as_str()
            } else {
                v.command.as_deref().unwrap_or(&v.resource)
            };
            let item = format!("{} ({about})", v.reason);
            if !others.contains(&item)
                && primary
                    .as_ref()
                    .is_none_or(|p| format!("{} ({})", p.reason, p.resource) != item)
            {
                others.push(item);
            }
        }
        if !others.is_empty() {
            if !message.ends_with('.') {
                message.push('.');
            }
            message.push_str(&format!(" Also refused: {}.", others.join("; ")));
        }
        let access = if required == "write" {
            Access::Write
        } else {
            Access::Read
        };
        Decision {
            command: self.command.clone(),
            tool: self.ctx.tool.to_string(),
            allowed,
            reason: primary.as_ref().map(|p| p.reason),
            message,
            base_command: self.base.clone(),
            category: self.max_category.map(|c| c.as_str().to_string()),
            required_scope: required,
            directory: self.dir.to_string_lossy().into_owned(),
            allowed_patterns: self.ctx.matcher.patterns_for(access),
            warnings: std::mem::take(&mut self.warnings),
            commands: std::mem::take(&mut self.commands),
            paths: std::mem::take(&mut self.paths),
            grants_used: used,
            resource: primary.as_ref().map(|p| p.resource.clone()),
            validation_type: primary.as_ref().map(|p| p.validation_type),
            violations: self.violations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_cover_their_resource_only() {
        let v = |vt: &'static str, resource: &str| Violation {
            reason: "path_not_in_scope",
            message: String::new(),
            command: Some("cat /x/y".into()),
            resource: resource.into(),
            validation_type: vt,
            grantable: true,
            granted: false,
            access: None,
        };
        let g = |r: &str| Grant {
            tool: "t".into(),
            resource: r.into(),
        };
        assert!(grant_covers(
            &g("/x/**"),
            &v("path", "/x/y"),
            "cat /x/y",
            None
        ));
        assert!(grant_covers(
            &g("/x/"),
            &v("path", "/x/y/z"),
            "cat /x/y",
            None
        ));
        assert!(!grant_covers(
            &g("/x/**"),
            &v("path", "/xy/z"),
            "cat /x/y",
            None
        ));
        assert!(grant_covers(
            &g("~/d"),
            &v("path", "/home/u/d/f"),
            "c",
            Some(Path::new("/home/u"))
        ));
        assert!(grant_covers(
            &g("cat /x/y"),
            &v("path", "/q"),
            "cat /x/y",
            None
        ));
        assert!(!grant_covers(
            &g("relative/dir"),
            &v("path", "/relative/dir"),
            "c",
            None
        ));
        assert!(grant_covers(
            &g("rm"),
            &v("command", "rm"),
            "rm -rf x",
            None
        ));
        assert!(!grant_covers(
            &g("rm"),
            &v("command", "rmdir"),
            "rmdir x",
            None
        ));
    }

    #[test]
    fn severity_puts_what_no_grant_fixes_first() {
        assert!(severity("parse_error") < severity("denied"));
        assert!(severity("denied") < severity("dangerous_command"));
        assert!(severity("dangerous_command") < severity("directory_not_in_scope"));
        assert!(severity("directory_not_in_scope") < severity("path_not_in_scope"));
        assert!(severity("path_not_in_scope") < severity("something_else"));
        for r in [
            "denied",
            "privilege_escalation",
            "path_denied",
            "parse_error",
            "dynamic_command",
            "run_time_operand",
            "unsupported_construct",
            "flag_not_allowed",
            "subcommand_denied",
        ] {
            assert!(!grantable(r), "{r}");
        }
        for r in [
            "command_not_allowed",
            "dangerous_command",
            "directory_not_in_scope",
            "path_not_in_scope",
            "subcommand_not_allowed",
        ] {
            assert!(grantable(r), "{r}");
        }
    }
}
