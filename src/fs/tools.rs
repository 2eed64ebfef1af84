//! The file tools as JSON requests and JSON results, as the binding calls them.
//!
//! A request carries the scope sources (as [`crate::policy::request::Request`] does), the tool's
//! directory (relative paths start there; default the boundary root) and the tool's own
//! arguments. The result is the JSON object sent to the model: `success: true` with the
//! tool's fields, or `success: false` with `reason`, `message` and, for a path outside the
//! scope, the `resource` a `request_scope_expansion` would name.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::{apply, grep, list, patch, read, Boundary, FsError, Guard};
use crate::policy::decide::Grant;
use crate::policy::paths::Access;
use crate::policy::request::{self, SourceSpec};
use crate::Tool;

/// A file tool request.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsRequest {
    pub sources: Vec<SourceSpec>,
    pub grants: Vec<Grant>,
    pub tool: Option<String>,
    pub home: Option<String>,
    pub project_root: Option<String>,
    pub directory: Option<String>,
    pub path: Option<String>,
    pub access: Option<String>,
    pub offset: Option<i64>,
    pub limit: Option<i64>,
    pub depth: Option<i64>,
    pub mode: Option<String>,
    pub pattern: Option<String>,
    /// One glob, or a list of globs.
    pub include: Option<Value>,
    pub patch: Option<String>,
    /// As [`request::Request::check_trust`]: apply each document only with its approved content.
    pub check_trust: bool,
    /// As [`request::Request::protect`]: paths that hold rules, never written.
    pub protect: Vec<String>,
}

fn count(name: &str, v: Option<i64>) -> Result<Option<usize>, FsError> {
    match v {
        None => Ok(None),
        Some(n) if n < 0 => Err(FsError::InvalidArgument(format!(
            "`{name}` must not be negative (got {n})"
        ))),
        Some(n) => Ok(Some(n as usize)),
    }
}

fn include_list(v: &Option<Value>) -> Result<Vec<String>, FsError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|g| {
                g.as_str().map(str::to_string).ok_or_else(|| {
                    FsError::InvalidArgument("`include` must be a glob or a list of globs".into())
                })
            })
            .collect(),
        Some(_) => Err(FsError::InvalidArgument(
            "`include` must be a glob or a list of globs".into(),
        )),
    }
}

/// Runs file tool `op` on a JSON request; always answers a JSON result for the model.
pub fn call(op: &str, json: &str) -> Value {
    let tool = op.to_string();
    let req: FsRequest = match serde_json::from_str(json) {
        Ok(r) => r,
        Err(e) => {
            return failure(
                &tool,
                None,
                &FsError::InvalidArgument(format!("bad request: {e}")),
            )
        }
    };
    let tool = req.tool.clone().unwrap_or(tool);
    match run(op, &tool, &req) {
        Ok(v) => v,
        Err(e) => failure(&tool, req.path.as_deref(), &e),
    }
}

/// The failure object of a tool.
pub fn failure(tool: &str, path: Option<&str>, e: &FsError) -> Value {
    let advice = e.advice(tool);
    let message = if advice.is_empty() {
        e.to_string()
    } else {
        format!("{e}. {advice}")
    };
    let mut v = json!({
        "success": false,
        "tool": tool,
        "reason": e.reason(),
        "message": message,
    });
    // A refusal by the scope rather than a failure: Emacs tells the user of it as `denied`.
    if e.reason().refusal() {
        v["refused"] = json!(true);
    }
    if let Some(p) = path {
        v["path"] = json!(p);
    }
    if let Some(r) = e.resource() {
        v["resource"] = json!(r);
        v["validation_type"] = json!("path");
    }
    match e {
        FsError::PatchParse { line, .. } => v["line"] = json!(line),
        FsError::PatchApply { file, .. } => v["file"] = json!(file),
        FsError::Scope(crate::ScopeError::InvalidConfig {
            file, line, key, ..
        }) => v["config_error"] = json!({"file": file, "line": line, "key": key}),
        FsError::Scope(crate::ScopeError::UntrustedScope {
            file,
            sha256,
            approved,
        }) => v["untrusted"] = json!({"file": file, "sha256": sha256, "approved": approved}),
        _ => {}
    }
    v
}

fn run(op: &str, tool: &str, req: &FsRequest) -> Result<Value, FsError> {
    let Some(op) = Tool::from_name(op).filter(|t| Tool::FILE_TOOLS.contains(t)) else {
        let names: Vec<_> = Tool::FILE_TOOLS.iter().map(|t| t.name()).collect();
        return Err(FsError::InvalidArgument(format!(
            "unknown file tool `{op}` (one of {})",
            names.join(", ")
        )));
    };
    let areq = request::Request {
        sources: req.sources.clone(),
        home: req.home.clone(),
        project_root: req.project_root.clone(),
        directory: req.directory.clone(),
        tool: Some(tool.to_string()),
        check_trust: req.check_trust,
        protect: req.protect.clone(),
        ..Default::default()
    };
    let prepared = request::prepare(&areq)?;
    let scope = &prepared.loaded.scope;
    let project_root = req
        .project_root
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| prepared.loaded.project_root.clone());
    let directory = match &req.directory {
        Some(d) if !Path::new(d).is_absolute() => {
            return Err(FsError::InvalidArgument(format!(
                "the directory `{d}` must be absolute"
            )))
        }
        Some(d) => Some(PathBuf::from(d)),
        None => None,
    };
    let root = match &scope.fs.root {
        Some(r) => PathBuf::from(crate::scope::config::expand_pattern(r, prepared.home.as_deref(), project_root.as_deref()).trim_end_matches("/**")),
        None => project_root.clone().or_else(|| directory.clone()).ok_or_else(|| {
            FsError::InvalidArgument("no boundary root: the scope has no project root; set fs.root in the scope or pass a directory".into())
        })?,
    };
    if !root.is_absolute() {
        return Err(FsError::Scope(crate::ScopeError::InvalidConfig {
            file: prepared
                .loaded
                .files
                .last()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "scope".into()),
            line: None,
            key: Some("fs.root".into()),
            message: format!(
                "fs.root `{}` must be absolute (or start with ~ or ${{project_root}})",
                root.display()
            ),
        }));
    }
    let boundary = Boundary::new(scope.fs.mode, &root)?;
    let guard = Guard {
        base: directory.unwrap_or_else(|| root.clone()),
        boundary,
        matcher: &prepared.matcher,
        home: prepared.home.clone(),
        grants: &req.grants,
        tool,
        used: Default::default(),
    };
    let path = req.path.clone().unwrap_or_else(|| ".".into());
    let mut v = match op {
        Tool::ReadFile => {
            let p = req
                .path
                .as_deref()
                .ok_or_else(|| FsError::InvalidArgument("`path` is required".into()))?;
            let r = read::read_file(
                &guard,
                p,
                count("offset", req.offset)?.unwrap_or(0),
                count("limit", req.limit)?,
                read::Mode::parse(req.mode.as_deref())?,
            )?;
            to_value(&r)?
        }
        Tool::ListDir => to_value(&list::list_dir(
            &guard,
            &path,
            count("depth", req.depth)?,
            count("offset", req.offset)?.unwrap_or(0),
            count("limit", req.limit)?,
        )?)?,
        Tool::GrepFiles => {
            let pattern = req
                .pattern
                .as_deref()
                .ok_or_else(|| FsError::InvalidArgument("`pattern` is required".into()))?;
            to_value(&grep::grep_files(
                &guard,
                pattern,
                &path,
                &include_list(&req.include)?,
                count("limit", req.limit)?,
            )?)?
        }
        Tool::ApplyPatch => {
            let text = req
                .patch
                .as_deref()
                .ok_or_else(|| FsError::InvalidArgument("`patch` is required".into()))?;
            let parsed = patch::parse(text)?;
            let r = apply::apply(&guard, &parsed)?;
            let mut v = to_value(&r)?;
            v["format"] = json!(parsed.format);
            v["message"] = json!(summary(&r));
            v
        }
        _ => {
            let p = req
                .path
                .as_deref()
                .ok_or_else(|| FsError::InvalidArgument("`path` is required".into()))?;
            let access = match req.access.as_deref() {
                None | Some("read") => Access::Read,
                Some("write") => Access::Write,
                Some(o) => {
                    return Err(FsError::InvalidArgument(format!(
                        "unknown access `{o}` (read or write)"
                    )))
                }
            };
            to_value(&guard.check(p, access)?)?
        }
    };
    v["success"] = json!(true);
    v["tool"] = json!(tool);
    v["grants_used"] = json!(*guard
        .used
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner));
    Ok(v)
}

fn to_value<T: serde::Serialize>(t: &T) -> Result<Value, FsError> {
    serde_json::to_value(t).map_err(|e| FsError::InvalidArgument(e.to_string()))
}

fn summary(r: &apply::ApplyResult) -> String {
    let files: Vec<String> = r
        .files
        .iter()
        .map(|f| match &f.moved_to {
            Some(to) => format!(
                "{} {} -> {} (+{} -{})",
                f.action, f.path, to, f.added, f.removed
            ),
            None => format!("{} {} (+{} -{})", f.action, f.path, f.added, f.removed),
        })
        .collect();
    format!("Applied to {} file(s): {}", r.files.len(), files.join(", "))
}
