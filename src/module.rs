//! The Emacs binding: converts arguments and results, nothing more.
//!
//! Every function takes strings (a JSON request, or text and numbers) and returns a plist
//! with `:kebab-case` keywords (JSON true → t, false and null → nil, arrays → lists), or a
//! string. Errors are signals of `gptel-scope-*` error symbols with the message and, for
//! configuration errors, `:file`, `:line` and `:key`.

use emacs::{defun, Env, IntoLisp, Result, Value};
use serde_json::Value as Json;

use crate::{api, ScopeError};

emacs::plugin_is_GPL_compatible!();

/// Error symbols: (name, message, parent).
const ERRORS: &[(&str, &str, &str)] = &[
    ("gptel-scope-error", "gptel-scope error", "error"),
    ("gptel-scope-invalid-config", "Invalid scope configuration", "gptel-scope-error"),
    ("gptel-scope-no-scope-config", "No scope configuration", "gptel-scope-error"),
    ("gptel-scope-io-error", "gptel-scope file error", "gptel-scope-error"),
    ("gptel-scope-invalid-argument", "Invalid argument to gptel-scope", "gptel-scope-error"),
    ("gptel-scope-edit-error", "Cannot edit the scope document", "gptel-scope-error"),
];

#[emacs::module(name = "gptel-scope-module", defun_prefix = "gptel-scope-module", separator = "-", mod_in_name = false)]
fn init(env: &Env) -> Result<()> {
    for (name, message, parent) in ERRORS {
        let parents = env.list((env.intern(parent)?,))?;
        env.call("define-error", (env.intern(name)?, *message, parents))?;
    }
    Ok(())
}

fn signal<T>(env: &Env, e: ScopeError) -> Result<T> {
    let sym = env.intern(e.symbol())?;
    let message = e.to_string().into_lisp(env)?;
    match &e {
        ScopeError::InvalidConfig { file, line, key, .. } => {
            let line = match line {
                Some(l) => (*l as i64).into_lisp(env)?,
                None => env.intern("nil")?,
            };
            let key = match key {
                Some(k) => k.as_str().into_lisp(env)?,
                None => env.intern("nil")?,
            };
            env.signal(sym, (message, env.intern(":file")?, file.as_str().into_lisp(env)?, env.intern(":line")?, line, env.intern(":key")?, key))
        }
        _ => env.signal(sym, (message,)),
    }
}

/// JSON → Lisp.
fn to_lisp<'e>(env: &'e Env, v: &Json) -> Result<Value<'e>> {
    match v {
        Json::Null | Json::Bool(false) => env.intern("nil"),
        Json::Bool(true) => env.intern("t"),
        Json::Number(n) => match n.as_i64() {
            Some(i) => i.into_lisp(env),
            None => n.as_f64().unwrap_or(0.0).into_lisp(env),
        },
        Json::String(s) => s.as_str().into_lisp(env),
        Json::Array(items) => {
            let vals = items.iter().map(|i| to_lisp(env, i)).collect::<Result<Vec<_>>>()?;
            env.list(&vals[..])
        }
        Json::Object(map) => {
            let mut vals = Vec::with_capacity(map.len() * 2);
            for (k, val) in map {
                vals.push(env.intern(&format!(":{}", k.replace('_', "-")))?);
                vals.push(to_lisp(env, val)?);
            }
            env.list(&vals[..])
        }
    }
}

fn reply<'e>(env: &'e Env, r: crate::Result<Json>) -> Result<Value<'e>> {
    match r {
        Ok(v) => to_lisp(env, &v),
        Err(e) => signal(env, e),
    }
}

/// The module's version; the elisp refuses a module of another version.
#[defun]
fn version(_env: &Env) -> Result<String> {
    Ok(env!("CARGO_PKG_VERSION").to_string())
}

/// Judge a shell command: REQUEST is a JSON string; returns the decision plist.
#[defun]
fn check_command<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, api::check_command(&request))
}

/// Judge a shell command as run_bash_command does before running it: an allowed command
/// comes back in brief, (:allowed t :tool :directory :timeout :max-output-chars :warnings
/// :grants-used :required-scope :category), which is all running it takes; a refusal comes
/// back in full, as from `gptel-scope-module-check-command'.
#[defun]
fn decide<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    match api::decide_command(&request) {
        Ok(api::Judged::Full(v)) => to_lisp(env, &v),
        Ok(api::Judged::Allowed { decision: d, timeout, max_output_chars }) => {
            let warnings = d.warnings.iter().map(|w| w.as_str().into_lisp(env)).collect::<Result<Vec<_>>>()?;
            let mut grants = Vec::with_capacity(d.grants_used.len());
            for g in &d.grants_used {
                grants.push(env.list(&[env.intern(":tool")?, g.tool.as_str().into_lisp(env)?, env.intern(":resource")?, g.resource.as_str().into_lisp(env)?])?);
            }
            let nil = env.intern("nil")?;
            env.list(&[
                env.intern(":allowed")?,
                env.intern("t")?,
                env.intern(":tool")?,
                d.tool.as_str().into_lisp(env)?,
                env.intern(":directory")?,
                d.directory.as_str().into_lisp(env)?,
                env.intern(":timeout")?,
                (timeout as i64).into_lisp(env)?,
                env.intern(":max-output-chars")?,
                (max_output_chars as i64).into_lisp(env)?,
                env.intern(":warnings")?,
                if warnings.is_empty() { nil } else { env.list(&warnings[..])? },
                env.intern(":grants-used")?,
                if grants.is_empty() { nil } else { env.list(&grants[..])? },
                env.intern(":required-scope")?,
                d.required_scope.into_lisp(env)?,
                env.intern(":category")?,
                match &d.category {
                    Some(c) => c.as_str().into_lisp(env)?,
                    None => nil,
                },
            ])
        }
        Err(e) => signal(env, e),
    }
}

/// Judge a shell command; returns the decision as a JSON string (snake_case keys).
#[defun]
fn check_command_json(env: &Env, request: String) -> Result<String> {
    match api::check_command(&request) {
        Ok(v) => Ok(v.to_string()),
        Err(e) => signal(env, e),
    }
}

/// Judge an argv-form command (no shell); returns the decision plist.
#[defun]
fn check_argv<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, api::check_argv(&request))
}

/// Judge one path for read or write access; returns a plist.
#[defun]
fn check_path<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, api::check_path(&request))
}

/// Load and validate the scope of REQUEST; returns a summary plist or signals.
#[defun]
fn load_scope<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, api::load_scope(&request))
}

/// The list_allowed_commands text for the scope of REQUEST.
#[defun]
fn list_commands(env: &Env, request: String) -> Result<String> {
    match api::list_commands(&request) {
        Ok(s) => Ok(s),
        Err(e) => signal(env, e),
    }
}

fn truncated<'e>(env: &'e Env, t: crate::truncate::Truncated) -> Result<Value<'e>> {
    match serde_json::to_value(&t) {
        Ok(v) => to_lisp(env, &v),
        Err(e) => signal(env, ScopeError::InvalidArgument(e.to_string())),
    }
}

fn count(env: &Env, n: i64, what: &str) -> Result<usize> {
    usize::try_from(n).or_else(|_| signal(env, ScopeError::InvalidArgument(format!("{what} must not be negative: {n}"))))
}

/// Truncate TEXT to MAX-CHARS characters with a notice; returns a plist.
#[defun]
fn truncate<'e>(env: &'e Env, text: String, max_chars: i64) -> Result<Value<'e>> {
    let max = count(env, max_chars, "max-chars")?;
    truncated(env, crate::truncate::truncate_chars_owned(text, max))
}

/// Truncate TEXT to MAX-BYTES bytes or MAX-LINES lines, whichever comes first.
#[defun]
fn truncate_stream<'e>(env: &'e Env, text: String, max_bytes: i64, max_lines: i64) -> Result<Value<'e>> {
    let b = count(env, max_bytes, "max-bytes")?;
    let l = count(env, max_lines, "max-lines")?;
    truncated(env, crate::truncate::truncate_stream_owned(text, b, l))
}

/// Add the resource of REQUEST to the scope document, keeping its comments; returns
/// (:file :section :patterns-added :already-present).
#[defun]
fn add_to_scope<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, api::add_to_scope(&request))
}

/// Run file tool OP (`read_file`, `list_dir`, `grep_files`, `apply_patch`, `check_path`) on
/// REQUEST, a JSON string; returns the tool's JSON result (failures included) as a string.
#[defun]
fn file_tool(_env: &Env, op: String, request: String) -> Result<String> {
    Ok(crate::fs::tools::call(&op, &request).to_string())
}

/// The directories an OS sandbox shows for the scope of REQUEST, as literal prefixes of its
/// path patterns; returns (:read :write :hide).
#[defun]
fn sandbox_mounts<'e>(env: &'e Env, request: String) -> Result<Value<'e>> {
    reply(env, crate::sandbox::mounts_for_request(&request))
}

/// Parse COMMAND with the bash grammar only (no judging): the number of complete commands.
/// The reference the speed of a decision is measured against.
#[defun]
fn parse(env: &Env, command: String) -> Result<i64> {
    match crate::shell::bare_parse(&command) {
        Ok(n) => Ok(n as i64),
        Err(p) => signal(env, ScopeError::InvalidArgument(p.message().to_string())),
    }
}
