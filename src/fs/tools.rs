//! The file tools as JSON requests and JSON results, as the binding calls them.
//!
//! A call is a [`Request`] (the scope sources, grants, the tool's directory: relative paths
//! start there, default the boundary root; `path`, `access`) and the tool's own arguments
//! ([`FsArgs`]). The result is the JSON object sent to the model: `success: true` with the
//! tool's fields, or `success: false` with `reason`, `message` and, for a path outside the
//! scope, the `resource` a `request_scope_expansion` would name.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{json, Value};

use super::{apply, grep, list, patch, read, Boundary, FsError, Guard};
use crate::policy::paths::Access;
use crate::policy::request::{self, Request};
use crate::Tool;

/// A file tool's own arguments, beyond the [`Request`] every call has (its scope, grants,
/// directory, `path` and `access`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FsArgs {
    pub offset: Option<i64>,
    pub limit: Option<i64>,
    pub depth: Option<i64>,
    pub mode: Option<String>,
    pub pattern: Option<String>,
    /// One glob, or a list of globs.
    pub include: Option<Value>,
    pub patch: Option<String>,
}

impl FsArgs {
    /// The keys of a call that are the tool's own.
    const KEYS: [&'static str; 7] = [
        "offset", "limit", "depth", "mode", "pattern", "include", "patch",
    ];

    /// Splits the JSON object of a call into its request and the tool's own arguments; a key
    /// neither knows is refused.
    pub fn split(mut call: serde_json::Map<String, Value>) -> Result<(Request, FsArgs), FsError> {
        let mut own = serde_json::Map::new();
        for k in Self::KEYS {
            if let Some(v) = call.remove(k) {
                own.insert(k.to_string(), v);
            }
        }
        let bad = |e: serde_json::Error| FsError::InvalidArgument(format!("bad request: {e}"));
        let req = serde_json::from_value(Value::Object(call)).map_err(bad)?;
        let args = serde_json::from_value(Value::Object(own)).map_err(bad)?;
        Ok((req, args))
    }
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
    let split = match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(m)) => FsArgs::split(m),
        Ok(_) => Err(FsError::InvalidArgument(
            "bad request: expected a JSON object".into(),
        )),
        Err(e) => Err(FsError::InvalidArgument(format!("bad request: {e}"))),
    };
    match split {
        Ok((req, args)) => run_request(op, &req, &args),
        Err(e) => failure(op, None, &e),
    }
}

/// Runs file tool `op` on `req` with its own arguments `args`; always answers a JSON result
/// for the model. The result and the grants are for `req.tool`, by default `op`.
pub fn run_request(op: &str, req: &Request, args: &FsArgs) -> Value {
    let tool = req.tool.clone().unwrap_or_else(|| op.to_string());
    match run(op, &tool, req, args) {
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
        FsError::Scope(scope) => {
            if let Some((key, detail)) = scope.detail() {
                v[key] = detail;
            }
        }
        _ => {}
    }
    v
}

/// A file tool's result as Emacs takes it (the binding makes it a plist): the fields of
/// `result` but its `content`, which the model reads in `response`, the JSON text it is sent;
/// `lines`, the lines of that content; and what telling the user and asking at a failure
/// take: `allowed`, `grantable` (of its reason), `askable` (a file tool's refusal may be asked
/// about whatever its reason, when it names a resource), `required_scope` (`access`, else
/// what `op` needs) and `command` (the path, else the resource, it was refused on).
pub fn outcome(op: &str, access: Option<&str>, result: Value) -> Value {
    let response = result.to_string();
    let Value::Object(mut fields) = result else {
        return json!({"allowed": false, "response": response});
    };
    let content = fields.remove("content");
    let allowed = fields.get("success") == Some(&Value::Bool(true));
    let lines = match content {
        Some(Value::String(c)) if !c.is_empty() => json!(1 + c.matches('\n').count()),
        _ => Value::Null,
    };
    let grantable = fields
        .get("reason")
        .and_then(Value::as_str)
        .and_then(crate::Reason::from_code)
        .is_some_and(crate::Reason::grantable);
    let required = access.unwrap_or(if op == Tool::ApplyPatch.name() {
        "write"
    } else {
        "read"
    });
    let command = fields
        .get("path")
        .or_else(|| fields.get("resource"))
        .cloned()
        .unwrap_or(Value::Null);
    fields.insert("allowed".into(), json!(allowed));
    fields.insert("grantable".into(), json!(grantable));
    fields.insert("askable".into(), json!(!allowed));
    fields.insert("required_scope".into(), json!(required));
    fields.insert("command".into(), command);
    fields.insert("lines".into(), lines);
    fields.insert("response".into(), json!(response));
    Value::Object(fields)
}

fn run(op: &str, tool: &str, req: &Request, args: &FsArgs) -> Result<Value, FsError> {
    let Some(op) = Tool::from_name(op).filter(|t| Tool::FILE_TOOLS.contains(t)) else {
        let names: Vec<_> = Tool::FILE_TOOLS.iter().map(|t| t.name()).collect();
        return Err(FsError::InvalidArgument(format!(
            "unknown file tool `{op}` (one of {})",
            names.join(", ")
        )));
    };
    let prepared = request::prepare(req)?;
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
                count("offset", args.offset)?.unwrap_or(0),
                count("limit", args.limit)?,
                read::Mode::parse(args.mode.as_deref())?,
            )?;
            to_value(&r)?
        }
        Tool::ListDir => to_value(&list::list_dir(
            &guard,
            &path,
            count("depth", args.depth)?,
            count("offset", args.offset)?.unwrap_or(0),
            count("limit", args.limit)?,
        )?)?,
        Tool::GrepFiles => {
            let pattern = args
                .pattern
                .as_deref()
                .ok_or_else(|| FsError::InvalidArgument("`pattern` is required".into()))?;
            to_value(&grep::grep_files(
                &guard,
                pattern,
                &path,
                &include_list(&args.include)?,
                count("limit", args.limit)?,
            )?)?
        }
        Tool::ApplyPatch => {
            let text = args
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
