//! Step 7 (SPEC §3): allow-once grants cover what they may, and the decision is assembled:
//! the strictest violation ([`Reason`](crate::Reason)'s order), the message, the evidence.

use std::path::Path;

use crate::policy::paths::Access;

use super::{Decision, Grant, Judge, Violation};

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
            v.reason.grantable()
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
        // The strictest; of several as strict, the first found.
        let primary = open
            .iter()
            .copied()
            .reduce(|a, b| if b.reason > a.reason { b } else { a })
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
            reason: primary.as_ref().map(|p| p.reason.as_str()),
            grantable: primary.as_ref().is_some_and(|p| p.reason.grantable()),
            askable: primary.as_ref().is_some_and(|p| p.reason.askable()),
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
    use crate::Reason;

    #[test]
    fn grants_cover_their_resource_only() {
        let v = |vt: &'static str, resource: &str| Violation {
            reason: Reason::PathNotInScope,
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
        assert!(Reason::ParseError > Reason::Denied);
        assert!(Reason::Denied > Reason::DangerousCommand);
        assert!(Reason::DangerousCommand > Reason::DirectoryNotInScope);
        assert!(Reason::DirectoryNotInScope > Reason::PathNotInScope);
        // A code no decision produces (a file tool's) ranks below every decision's.
        assert!(Reason::PathNotInScope > Reason::NotFound);
        for r in [
            Reason::Denied,
            Reason::PrivilegeEscalation,
            Reason::PathDenied,
            Reason::ParseError,
            Reason::DynamicCommand,
            Reason::RunTimeOperand,
            Reason::UnsupportedConstruct,
            Reason::FlagNotAllowed,
            Reason::SubcommandDenied,
        ] {
            assert!(!r.grantable(), "{r}");
        }
        for r in [
            Reason::CommandNotAllowed,
            Reason::DangerousCommand,
            Reason::DirectoryNotInScope,
            Reason::PathNotInScope,
            Reason::SubcommandNotAllowed,
        ] {
            assert!(r.grantable(), "{r}");
        }
    }
}
