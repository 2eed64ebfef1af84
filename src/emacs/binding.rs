//! The Emacs binding: converts arguments and results, nothing more.
//!
//! Every function takes strings (a JSON request, or text and numbers) and returns a plist
//! with `:kebab-case` keywords (JSON true → t, false and null → nil, arrays → lists), or a
//! string. Errors are signals of `gptel-scope-*` error symbols with the message and, for
//! configuration errors, `:file`, `:line` and `:key`.
//!
//! The symbols `t` and `nil` and the keywords of the brief decision are interned once, when
//! the module loads; the decision `run_bash_command` asks for comes back in brief, built
//! straight from the engine's result.

use emacs::{defun, Env, IntoLisp, Result, Value};
use serde_json::Value as Json;

use crate::emacs::api;
use crate::output::truncate::Truncated;
use crate::policy::decide::Decision;
use crate::ScopeError;

emacs::plugin_is_GPL_compatible!();

// Interned once, when the module loads.
emacs::use_symbols! {
    nil t
    k_access => ":access"
    k_allowed => ":allowed"
    k_askable => ":askable"
    k_category => ":category"
    k_commands => ":commands"
    k_directory => ":directory"
    k_grantable => ":grantable"
    k_grants_used => ":grants-used"
    k_lookups => ":lookups"
    k_max_output_chars => ":max-output-chars"
    k_message => ":message"
    k_output => ":output"
    k_reason => ":reason"
    k_required_scope => ":required-scope"
    k_resource => ":resource"
    k_response => ":response"
    k_read => ":read"
    k_write => ":write"
    k_write_in => ":write-in"
    k_programs => ":programs"
    k_sandbox => ":sandbox"
    k_shown_bytes => ":shown-bytes"
    k_shown_chars => ":shown-chars"
    k_shown_lines => ":shown-lines"
    k_timeout => ":timeout"
    k_tool => ":tool"
    k_total_bytes => ":total-bytes"
    k_total_chars => ":total-chars"
    k_total_lines => ":total-lines"
    k_truncated => ":truncated"
    k_validation_type => ":validation-type"
    k_violations => ":violations"
    k_warnings => ":warnings"
}

emacs::use_functions! {
    car cdr
}

/// Error symbols: (name, message, parent).
const ERRORS: &[(&str, &str, &str)] = &[
    ("gptel-scope-error", "gptel-scope error", "error"),
    (
        "gptel-scope-invalid-config",
        "Invalid scope configuration",
        "gptel-scope-error",
    ),
    (
        "gptel-scope-no-scope-config",
        "No scope configuration",
        "gptel-scope-error",
    ),
    (
        "gptel-scope-io-error",
        "gptel-scope file error",
        "gptel-scope-error",
    ),
    (
        "gptel-scope-invalid-argument",
        "Invalid argument to gptel-scope",
        "gptel-scope-error",
    ),
    (
        "gptel-scope-edit-error",
        "Cannot edit the scope document",
        "gptel-scope-error",
    ),
];

#[emacs::module(
    name = "gptel-scope-module",
    defun_prefix = "gptel-scope-module",
    separator = "-",
    mod_in_name = false
)]
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
        ScopeError::InvalidConfig {
            file, line, key, ..
        } => {
            let line = match line {
                Some(l) => (*l as i64).into_lisp(env)?,
                None => nil.bind(env),
            };
            let key = match key {
                Some(k) => k.as_str().into_lisp(env)?,
                None => nil.bind(env),
            };
            env.signal(
                sym,
                (
                    message,
                    env.intern(":file")?,
                    file.as_str().into_lisp(env)?,
                    env.intern(":line")?,
                    line,
                    env.intern(":key")?,
                    key,
                ),
            )
        }
        _ => env.signal(sym, (message,)),
    }
}

// ---------------------------------------------------------------------------------------------
// Arguments

/// The bytes of the Lisp string `value`. A multibyte string that is not Unicode (raw
/// bytes, characters beyond U+10FFFF) is refused by Emacs.
fn string_arg(value: Value<'_>) -> Result<Vec<u8>> {
    value.clone_string_contents()
}

/// The text of the Lisp string `value` (a JSON request, a command): it must be UTF-8.
fn text_arg(env: &Env, value: Value<'_>) -> Result<String> {
    utf8_arg(env, string_arg(value)?)
}

fn utf8_arg(env: &Env, bytes: Vec<u8>) -> Result<String> {
    match api::utf8_string(bytes) {
        Ok(text) => Ok(text),
        Err(bytes) => {
            let e = std::str::from_utf8(&bytes)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            signal(
                env,
                ScopeError::InvalidArgument(format!("the text is not valid UTF-8: {e}")),
            )
        }
    }
}

fn count(env: &Env, n: i64, what: &str) -> Result<usize> {
    usize::try_from(n).or_else(|_| {
        signal(
            env,
            ScopeError::InvalidArgument(format!("{what} must not be negative: {n}")),
        )
    })
}

// ---------------------------------------------------------------------------------------------
// Results

/// The keyword for the JSON key `key` (`:kebab-case`).
fn keyword<'e>(env: &'e Env, key: &str) -> Result<Value<'e>> {
    env.intern(&format!(":{}", key.replace('_', "-")))
}

/// JSON → Lisp.
fn to_lisp<'e>(env: &'e Env, v: &Json) -> Result<Value<'e>> {
    match v {
        Json::Null | Json::Bool(false) => Ok(nil.bind(env)),
        Json::Bool(true) => Ok(t.bind(env)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => i.into_lisp(env),
            None => n.as_f64().unwrap_or(0.0).into_lisp(env),
        },
        Json::String(s) => lstr(env, s),
        Json::Array(items) if items.is_empty() => Ok(nil.bind(env)),
        Json::Array(items) => {
            let vals = items
                .iter()
                .map(|i| to_lisp(env, i))
                .collect::<Result<Vec<_>>>()?;
            env.list(&vals[..])
        }
        Json::Object(map) if map.is_empty() => Ok(nil.bind(env)),
        Json::Object(map) => {
            let mut vals = Vec::with_capacity(map.len() * 2);
            for (k, val) in map {
                vals.push(keyword(env, k)?);
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

/// A Lisp string of `s`.
fn lstr<'e>(env: &'e Env, s: &str) -> Result<Value<'e>> {
    s.into_lisp(env)
}

/// A string, or nil.
fn opt_str<'e>(env: &'e Env, s: Option<&str>) -> Result<Value<'e>> {
    match s {
        Some(s) => lstr(env, s),
        None => Ok(nil.bind(env)),
    }
}

/// A list of strings (nil when empty).
fn str_list<'e>(env: &'e Env, items: &[String]) -> Result<Value<'e>> {
    if items.is_empty() {
        return Ok(nil.bind(env));
    }
    let vals = items
        .iter()
        .map(|s| lstr(env, s))
        .collect::<Result<Vec<_>>>()?;
    env.list(&vals[..])
}

/// The plist of a truncation: (:output :truncated :shown-chars :total-chars :shown-lines
/// :total-lines :shown-bytes :total-bytes).
fn truncated<'e>(env: &'e Env, r: Truncated) -> Result<Value<'e>> {
    let n = |x: usize| i64::try_from(x).unwrap_or(i64::MAX).into_lisp(env);
    env.list(&[
        k_output.bind(env),
        lstr(env, &r.output)?,
        k_truncated.bind(env),
        if r.truncated {
            t.bind(env)
        } else {
            nil.bind(env)
        },
        k_shown_chars.bind(env),
        n(r.shown_chars)?,
        k_total_chars.bind(env),
        n(r.total_chars)?,
        k_shown_lines.bind(env),
        n(r.shown_lines)?,
        k_total_lines.bind(env),
        n(r.total_lines)?,
        k_shown_bytes.bind(env),
        n(r.shown_bytes)?,
        k_total_bytes.bind(env),
        n(r.total_bytes)?,
    ])
}

/// An allowed decision in brief: what running the command takes.
fn allowed_brief<'e>(
    env: &'e Env,
    d: &Decision,
    timeout: u64,
    max_output_chars: usize,
) -> Result<Value<'e>> {
    let grants = if d.grants_used.is_empty() {
        nil.bind(env)
    } else {
        let mut grants = Vec::with_capacity(d.grants_used.len());
        for g in &d.grants_used {
            grants.push(env.list([
                k_tool.bind(env),
                lstr(env, &g.tool)?,
                k_resource.bind(env),
                lstr(env, &g.resource)?,
            ])?);
        }
        env.list(&grants[..])?
    };
    env.list(&[
        k_allowed.bind(env),
        t.bind(env),
        k_tool.bind(env),
        lstr(env, &d.tool)?,
        k_directory.bind(env),
        lstr(env, &d.directory)?,
        k_timeout.bind(env),
        i64::try_from(timeout).unwrap_or(i64::MAX).into_lisp(env)?,
        k_max_output_chars.bind(env),
        i64::try_from(max_output_chars)
            .unwrap_or(i64::MAX)
            .into_lisp(env)?,
        k_warnings.bind(env),
        str_list(env, &d.warnings)?,
        k_grants_used.bind(env),
        grants,
        k_required_scope.bind(env),
        lstr(env, d.required_scope)?,
        k_category.bind(env),
        opt_str(env, d.category.as_deref())?,
        k_sandbox.bind(env),
        call_needs(env, &crate::policy::sandbox::call_needs(d))?,
    ])
}

/// The plist of a call's needs in the sandbox: (:read :write :write-in :programs).
fn call_needs<'e>(env: &'e Env, n: &crate::policy::sandbox::CallNeeds) -> Result<Value<'e>> {
    env.list([
        k_read.bind(env),
        str_list(env, &n.read)?,
        k_write.bind(env),
        str_list(env, &n.write)?,
        k_write_in.bind(env),
        str_list(env, &n.write_in)?,
        k_programs.bind(env),
        str_list(env, &n.programs)?,
    ])
}

/// A refusal in brief, the plist of the refused decision `d`: what the `denied` event says,
/// what the expansion menu is offered (the resource and each violation's resource, kind,
/// access and reason), whether a grant may lift it and whether the user may be asked
/// (`:grantable`, `:askable`, from [`crate::Reason`]), and `:response`, the model's answer.
/// The evidence is left out: the decision in full gives it again.
fn refused_brief<'e>(env: &'e Env, d: &Decision) -> Result<Value<'e>> {
    let resource = opt_str(env, d.resource.as_deref())?;
    let violations = if d.violations.is_empty() {
        nil.bind(env)
    } else {
        let mut vs = Vec::with_capacity(d.violations.len());
        for v in &d.violations {
            vs.push(env.list([
                k_resource.bind(env),
                lstr(env, &v.resource)?,
                k_validation_type.bind(env),
                lstr(env, v.validation_type)?,
                k_access.bind(env),
                opt_str(env, v.access)?,
                k_reason.bind(env),
                lstr(env, v.reason.as_str())?,
            ])?);
        }
        env.list(&vs[..])?
    };
    env.list(&[
        k_allowed.bind(env),
        nil.bind(env),
        k_tool.bind(env),
        lstr(env, &d.tool)?,
        k_reason.bind(env),
        opt_str(env, d.reason)?,
        k_grantable.bind(env),
        d.grantable.into_lisp(env)?,
        k_askable.bind(env),
        d.askable.into_lisp(env)?,
        k_message.bind(env),
        lstr(env, &d.message)?,
        k_resource.bind(env),
        resource,
        k_validation_type.bind(env),
        opt_str(env, d.validation_type)?,
        k_required_scope.bind(env),
        lstr(env, d.required_scope)?,
        k_category.bind(env),
        opt_str(env, d.category.as_deref())?,
        k_violations.bind(env),
        violations,
        k_response.bind(env),
        lstr(env, &api::refusal_response(d))?,
    ])
}

// ---------------------------------------------------------------------------------------------
// Functions

/// The module's version; the elisp refuses a module of another version.
#[defun]
fn version(_env: &Env) -> Result<String> {
    Ok(env!("CARGO_PKG_VERSION").to_string())
}

/// A chat's session as Lisp holds it (a `user-ptr`).
struct SessionHandle(crate::emacs::session::Session);

/// Open a session on ENVELOPE, the JSON of a chat's scope: its sources, the grants of this
/// chat, home, project root, whether approval is checked, the protected paths. Returns the session, a `user-ptr' for `gptel-scope-module-judge'.
#[defun]
fn open<'e>(env: &'e Env, envelope: Value<'e>) -> Result<Value<'e>> {
    match crate::emacs::session::Session::open(&text_arg(env, envelope)?) {
        Ok(s) => std::cell::RefCell::new(SessionHandle(s)).into_lisp(env),
        Err(e) => signal(env, e),
    }
}

/// Judge CALL, the JSON of one tool call (`tool' and the call's own fields), under SESSION.
/// Every answer is a plist; what the model is sent, when the engine writes it, is its
/// :response, JSON text. `run_bash_command' answers in brief (see below; with `evidence'
/// true, the decision in full, as explain shows it, and with `as_json' true too, that as
/// (:json TEXT), snake_case); `run_command' the decision in full; a file tool (`read_file',
/// `list_dir', `grep_files', `apply_patch', `check_path', with `for_tool' the tool it is
/// for) its result without its content, failures included, with :allowed :grantable
/// :askable :required-scope :command :lines :response (`crate::fs::tools::outcome');
/// `list_allowed_commands' (:response TEXT); `get_system_info' the scope in summary (:files
/// :project-root :timeout :max-output-chars :approval-policy :path-arguments :fs-mode :read
/// :write :deny).
///
/// The brief decision: an allowed command comes back as (:allowed t :tool :directory
/// :timeout :max-output-chars :warnings :grants-used :required-scope :category :sandbox),
/// which is all running it takes (:sandbox is what the sandbox shows the call beyond the
/// scope: :read :write :write-in :programs); a refusal as (:allowed nil :tool :reason
/// :grantable :askable :message :resource :validation-type :required-scope :category
/// :violations :response), each violation (:resource :validation-type :access :reason),
/// which is all offering the expansion menu takes, :response being the model's answer (JSON
/// text). A refusal for a bad directory or scope comes as a plist in full, with its
/// :response.
#[defun]
fn judge<'e>(env: &'e Env, session: Value<'e>, call: Value<'e>) -> Result<Value<'e>> {
    use crate::emacs::session::Call;
    let cell: &std::cell::RefCell<SessionHandle> = session.into_rust()?;
    let parsed = cell.try_borrow()?.0.call(&text_arg(env, call)?);
    match parsed {
        Err(e) => signal(env, e),
        Ok(Call::Command {
            request,
            evidence: false,
            ..
        }) => brief_reply(env, api::decide_command_request(request)),
        Ok(Call::Command {
            request,
            as_json: true,
            ..
        }) => match api::check_command_request(request) {
            Ok(v) => env.list([env.intern(":json")?, lstr(env, &v.to_string())?]),
            Err(e) => signal(env, e),
        },
        Ok(Call::Command { request, .. }) => reply(env, api::check_command_request(request)),
        Ok(Call::Argv(request)) => reply(env, api::check_argv_request(request)),
        Ok(Call::File {
            tool,
            request,
            args,
        }) => {
            let result = crate::fs::tools::run_request(tool.name(), &request, &args);
            let access = request.access.as_deref();
            to_lisp(env, &crate::fs::tools::outcome(tool.name(), access, result))
        }
        Ok(Call::FileFailure { tool, error }) => {
            let result = crate::fs::tools::failure(&tool, None, &error);
            to_lisp(env, &crate::fs::tools::outcome(&tool, None, result))
        }
        Ok(Call::ListCommands(request)) => match api::list_commands_request(&request) {
            Ok(s) => env.list([k_response.bind(env), lstr(env, &s)?]),
            Err(e) => signal(env, e),
        },
        Ok(Call::Summary(request)) => reply(env, api::load_scope_request(&request)),
    }
}

/// What an OS sandbox shows for SESSION and CALL (the JSON of the call's `call' needs, from
/// its decision's :sandbox, and `env', the variables that find its programs; `{}' for a
/// terminal session): the directories to bind, as literal prefixes of its path patterns, and
/// what to cover; returns (:read :write :hide :masks :cannot_mask), a mask being (:path
/// :kind) with kind "file" or "dir".
#[defun]
fn mounts<'e>(env: &'e Env, session: Value<'e>, call: Value<'e>) -> Result<Value<'e>> {
    let cell: &std::cell::RefCell<SessionHandle> = session.into_rust()?;
    let req = cell.try_borrow()?.0.with(&text_arg(env, call)?);
    match req {
        Ok(req) => reply(env, crate::policy::sandbox::mounts_for(&req)),
        Err(e) => signal(env, e),
    }
}

fn brief_reply<'e>(env: &'e Env, r: crate::Result<api::Judged>) -> Result<Value<'e>> {
    match r {
        Ok(api::Judged::Allowed {
            decision,
            timeout,
            max_output_chars,
        }) => allowed_brief(env, &decision, timeout, max_output_chars),
        Ok(api::Judged::Refused { decision }) => refused_brief(env, &decision),
        Ok(api::Judged::Full(v)) => to_lisp(env, &v),
        Err(e) => signal(env, e),
    }
}

/// The warnings on the scope of REQUEST: a list of plists (:code :file :line :message
/// :suggestion), nil when there is none.
#[defun]
fn lint<'e>(env: &'e Env, request: Value<'e>) -> Result<Value<'e>> {
    reply(env, api::lint_scope(&text_arg(env, request)?))
}

/// Truncate TEXT to MAX-BYTES bytes or MAX-LINES lines, whichever comes first.
#[defun]
fn truncate_stream<'e>(
    env: &'e Env,
    text: Value<'e>,
    max_bytes: i64,
    max_lines: i64,
) -> Result<Value<'e>> {
    let b = count(env, max_bytes, "max-bytes")?;
    let l = count(env, max_lines, "max-lines")?;
    let text = api::text_lossy(string_arg(text)?);
    truncated(
        env,
        crate::output::truncate::truncate_stream_owned(text, b, l),
    )
}

/// Decode and truncate the output of a command: CHUNKS is a string or a list of them,
/// newest first (as a process filter pushes them), together the raw bytes the command
/// printed (a multibyte string is read as its UTF-8). They are decoded as UTF-8, each byte
/// that is not part of a valid sequence as U+FFFD and NUL as U+2400, and the first MAX-CHARS
/// characters kept, cut back to a line's end when that keeps most of them, with a notice;
/// one chunk at a time (a character may be split between two). Returns (:output :truncated
/// :shown-chars :total-chars :shown-lines :total-lines :shown-bytes :total-bytes).
#[defun]
fn truncate<'e>(env: &'e Env, chunks: Value<'e>, max_chars: i64) -> Result<Value<'e>> {
    let max = count(env, max_chars, "max-chars")?;
    let pieces = chunk_list(env, chunks)?;
    // One chunk at a time: only what can be shown is kept, and the output is never held
    // whole.
    let mut out = api::OutputText::new(max);
    for piece in pieces.iter().rev() {
        out.push(&string_arg(*piece)?);
    }
    truncated(env, out.finish())
}

/// The strings of CHUNKS, a string or a list of them.
fn chunk_list<'e>(env: &'e Env, chunks: Value<'e>) -> Result<Vec<Value<'e>>> {
    let mut pieces = Vec::new();
    if chunks.is_not_nil() && env.call("stringp", [chunks])?.is_not_nil() {
        pieces.push(chunks);
    } else {
        // `length' refuses a list that is circular or not a list.
        let n: i64 = env.call("length", [chunks])?.into_rust()?;
        let mut list = chunks;
        for _ in 0..n {
            pieces.push(env.call(car, [list])?);
            list = env.call(cdr, [list])?;
        }
    }
    Ok(pieces)
}

/// The absolute file name PATH leads to through every symbolic link, or nil when it does
/// not exist. Emacs's `file-truename' for an existing local file, without file name
/// handlers.
#[defun]
fn truename<'e>(env: &'e Env, path: Value<'e>) -> Result<Value<'e>> {
    opt_str(env, api::truename(&text_arg(env, path)?).as_deref())
}

/// Add the resource of REQUEST to the scope document, keeping its comments; returns
/// (:file :section :patterns-added :already-present). With `plan' true in REQUEST, only
/// where it would go, editing nothing: (:section :value).
#[defun]
fn add_to_scope<'e>(env: &'e Env, request: Value<'e>) -> Result<Value<'e>> {
    reply(env, api::add_to_scope(&text_arg(env, request)?))
}

/// What the bench measures the module against and by: COMMAND parsed with the bash grammar
/// alone (no judging; its argument is copied as a decision's command is), and the paths the
/// module has looked up (`lstat') since it loaded. Returns (:commands N :lookups M), N the
/// complete commands of COMMAND.
#[defun]
fn measure<'e>(env: &'e Env, command: Value<'e>) -> Result<Value<'e>> {
    let n = match crate::shell::bare_parse(&text_arg(env, command)?) {
        Ok(n) => n,
        Err(p) => return signal(env, ScopeError::InvalidArgument(p.message().to_string())),
    };
    let lookups = crate::policy::paths::probes_asked();
    env.list([
        k_commands.bind(env),
        i64::try_from(n).unwrap_or(i64::MAX).into_lisp(env)?,
        k_lookups.bind(env),
        i64::try_from(lookups).unwrap_or(i64::MAX).into_lisp(env)?,
    ])
}

// ---------------------------------------------------------------------------------------------
// The environment of commands and redaction

/// The values a tool result must not show, as Lisp holds them (a `user-ptr`).
struct Secrets(std::sync::Arc<crate::output::redact::Redactor>);

/// The plan of [`api::environment`] for the Lisp arguments of [`environment`].
fn plan_of(
    env: &Env,
    request: Value<'_>,
    entries: Value<'_>,
    api_key: Value<'_>,
) -> Result<std::sync::Arc<crate::scope::env::Plan>> {
    let request = if request.is_not_nil() {
        Some(text_arg(env, request)?)
    } else {
        None
    };
    let mut list = Vec::new();
    for v in chunk_list(env, entries)? {
        if v.is_not_nil() {
            list.push(String::from_utf8_lossy(&string_arg(v)?).into_owned());
        }
    }
    let mut keys = Vec::new();
    for k in chunk_list(env, api_key)? {
        if k.is_not_nil() && env.call("stringp", [k])?.is_not_nil() {
            keys.push(String::from_utf8_lossy(&string_arg(k)?).into_owned());
        }
    }
    match api::environment(request.as_deref(), &list, &keys) {
        Ok(p) => Ok(p),
        Err(e) => signal(env, e),
    }
}

/// The environment of a command under the scope of REQUEST (a JSON request; nil: the
/// built-in defaults), from ENTRIES (`process-environment`) and API-KEY (gptel's keys: a
/// string or a list; what is not a string is ignored). A grant of REQUEST for `env:NAME`
/// passes NAME. Returns (:env ENTRIES :redactor R :secrets N): R hides the values left out
/// (`gptel-scope-module-redact'), nil when there are none. With NAMES-ONLY non-nil, what
/// becomes of each variable instead, names only: (:variables VARS :warnings TEXTS), each of
/// VARS (:name :fate :pattern :redacted), for explain and get_system_info.
#[defun]
fn environment<'e>(
    env: &'e Env,
    request: Value<'e>,
    entries: Value<'e>,
    api_key: Value<'e>,
    names_only: Value<'e>,
) -> Result<Value<'e>> {
    let plan = plan_of(env, request, entries, api_key)?;
    if names_only.is_not_nil() {
        return fates(env, &plan);
    }
    let redactor = match api::redactor(&plan.secrets) {
        Ok(r) => r,
        Err(e) => return signal(env, e),
    };
    let mut entries = Vec::with_capacity(plan.env.len());
    for e in &plan.env {
        entries.push(lstr(env, e)?);
    }
    let n = redactor.len() as i64;
    let redactor = if redactor.is_empty() {
        nil.bind(env)
    } else {
        std::cell::RefCell::new(Secrets(redactor)).into_lisp(env)?
    };
    env.list([
        env.intern(":env")?,
        env.list(&entries[..])?,
        env.intern(":redactor")?,
        redactor,
        env.intern(":secrets")?,
        n.into_lisp(env)?,
    ])
}

/// What [`environment`] makes of each variable of `plan`, names only.
fn fates<'e>(env: &'e Env, plan: &crate::scope::env::Plan) -> Result<Value<'e>> {
    let mut vars = Vec::with_capacity(plan.variables.len());
    for v in &plan.variables {
        let fate = serde_json::to_value(v.fate)
            .ok()
            .and_then(|f| f.as_str().map(str::to_string))
            .unwrap_or_default();
        vars.push(env.list([
            env.intern(":name")?,
            lstr(env, &v.name)?,
            env.intern(":fate")?,
            lstr(env, &fate)?,
            env.intern(":pattern")?,
            opt_str(env, v.pattern.as_deref())?,
            env.intern(":redacted")?,
            if v.redacted {
                t.bind(env)
            } else {
                nil.bind(env)
            },
        ])?);
    }
    let mut warnings = Vec::with_capacity(plan.warnings.len());
    for w in &plan.warnings {
        warnings.push(lstr(env, w)?);
    }
    env.list([
        env.intern(":variables")?,
        env.list(&vars[..])?,
        k_warnings.bind(env),
        env.list(&warnings[..])?,
    ])
}

/// TEXT with every value REDACTOR hides replaced by `[redacted: NAME]`, and the beginning of
/// one that a cut line shows; TEXT itself when it holds none (or REDACTOR is nil). A unibyte
/// TEXT is read as UTF-8.
#[defun]
fn redact<'e>(env: &'e Env, redactor: Value<'e>, text: Value<'e>) -> Result<Value<'e>> {
    if redactor.is_not_nil() {
        let cell: &std::cell::RefCell<Secrets> = redactor.into_rust()?;
        let r = cell.try_borrow()?;
        let s = api::text_lossy(string_arg(text)?);
        if let Some(out) = r.0.redact_result(&s) {
            return lstr(env, &out);
        }
    }
    Ok(text)
}

/// The index (in characters) where the end of TEXT that begins a value REDACTOR hides
/// starts: the length of TEXT when no end of it does. A cut there shows no secret's
/// beginning.
#[defun]
fn partial_tail<'e>(redactor: Value<'e>, text: Value<'e>) -> Result<i64> {
    let s = api::text_lossy(string_arg(text)?);
    let start = if redactor.is_not_nil() {
        let cell: &std::cell::RefCell<Secrets> = redactor.into_rust()?;
        let r = cell.try_borrow()?;
        r.0.partial_tail(&s)
    } else {
        s.len()
    };
    Ok(i64::try_from(s[..start].chars().count()).unwrap_or(i64::MAX))
}

// ---------------------------------------------------------------------------------------------
// The output of a command, captured by the module

/// A command's output being captured, as Lisp holds it (a `user-ptr`).
struct Capture(crate::run::capture::Capture);

/// The first and last bytes kept of CAP-BYTES in all.
fn capture_caps(env: &Env, cap_bytes: i64) -> Result<(usize, usize)> {
    let cap = count(env, cap_bytes, "cap-bytes")?;
    Ok((cap - cap / 2, cap / 2))
}

/// The bytes of each string of LIST.
fn byte_strings<'e>(env: &'e Env, list: Value<'e>) -> Result<Vec<Vec<u8>>> {
    chunk_list(env, list)?.into_iter().map(string_arg).collect()
}

/// Start PROGRAM (an absolute file name) with ARGV (a list of strings, its first word
/// included) and exactly ENVIRONMENT (NAME=VALUE strings) in DIRECTORY: in a session of its
/// own, standard input from /dev/null, standard output and error to a pipe a thread of the
/// module drains, keeping the first and the last bytes of the output, CAP-BYTES in all.
/// When the command ends, a line saying how (`exit N', `signal N' or `unknown') is written
/// to CHANNEL, a pipe process. Returns (PID . CAPTURE), or nil when this system cannot start
/// a command so (the caller then starts it with `make-process'). Signals
/// `gptel-scope-io-error' when it cannot be started.
#[defun]
fn spawn<'e>(
    env: &'e Env,
    program: Value<'e>,
    argv: Value<'e>,
    environment: Value<'e>,
    directory: Value<'e>,
    cap_bytes: i64,
    channel: Value<'e>,
) -> Result<Value<'e>> {
    use std::io::Write;
    let (head, tail) = capture_caps(env, cap_bytes)?;
    let program = std::path::PathBuf::from(text_arg(env, program)?);
    let directory = std::path::PathBuf::from(text_arg(env, directory)?);
    let argv = byte_strings(env, argv)?;
    let environment = byte_strings(env, environment)?;
    let mut writer = env.open_channel(channel)?;
    // Emacs's copy of the channel lacks close-on-exec: every program started while it is open
    // would inherit it. Where it cannot be found and set, `make-process' starts the command.
    match crate::run::spawn::descriptor_in(&format!("{writer:?}")) {
        Some(fd) if crate::run::spawn::pipe_close_on_exec(fd) => {}
        _ => return Ok(nil.bind(env)),
    }
    let cmd = crate::run::spawn::Command {
        program: &program,
        argv: &argv,
        env: &environment,
        directory: &directory,
    };
    let on_exit = Box::new(move |exit: crate::run::spawn::Exit| {
        // Emacs gone or the channel deleted: nobody is left to tell.
        let _ = writer.write_all(exit.line().as_bytes());
    });
    match crate::run::spawn::spawn(&cmd, head, tail, on_exit) {
        Ok(Some(started)) => {
            let capture = std::cell::RefCell::new(Capture(started.capture)).into_lisp(env)?;
            env.cons(i64::from(started.pid), capture)
        }
        Ok(None) => Ok(nil.bind(env)),
        Err(e) => signal(env, e),
    }
}

/// A capture that keeps the first and the last bytes, CAP-BYTES in all, of what
/// `gptel-scope-module-capture-push' gives it.
#[defun]
fn capture_new<'e>(env: &'e Env, cap_bytes: i64) -> Result<Value<'e>> {
    let (head, tail) = capture_caps(env, cap_bytes)?;
    std::cell::RefCell::new(Capture(crate::run::capture::Capture::new(head, tail))).into_lisp(env)
}

/// Give CAPTURE the next piece of the output, BYTES (a unibyte string).
#[defun]
fn capture_push<'e>(env: &'e Env, capture: Value<'e>, bytes: Value<'e>) -> Result<Value<'e>> {
    let cell: &std::cell::RefCell<Capture> = capture.into_rust()?;
    cell.try_borrow()?.0.push(&string_arg(bytes)?);
    Ok(nil.bind(env))
}

/// The output CAPTURE holds, once the command has ended: waits up to WAIT-MS milliseconds
/// for the output to end (what the command left running may hold the pipe), then stops
/// reading. Returns (:output :truncated :total-bytes :kept-bytes
/// :lines :error): the output decoded (invalid bytes as U+FFFD, NUL as U+2400), the values
/// REDACTOR hides replaced, and within MAX-CHARS characters all of it, else its first and
/// last part around a notice; :error says why the output could not be read to its end.
#[defun]
fn capture_finish<'e>(
    env: &'e Env,
    capture: Value<'e>,
    max_chars: i64,
    redactor: Value<'e>,
    wait_ms: i64,
) -> Result<Value<'e>> {
    let max = count(env, max_chars, "max-chars")?;
    let wait = std::time::Duration::from_millis(count(env, wait_ms, "wait-ms")? as u64);
    let cell: &std::cell::RefCell<Capture> = capture.into_rust()?;
    let f = cell.try_borrow_mut()?.0.finish(wait);
    let r = if redactor.is_not_nil() {
        let secrets: &std::cell::RefCell<Secrets> = redactor.into_rust()?;
        let s = secrets.try_borrow()?;
        f.buffer.result(max, Some(&s.0), f.ended)
    } else {
        f.buffer.result(max, None, f.ended)
    };
    let error = f.error;
    let n = |x: u64| i64::try_from(x).unwrap_or(i64::MAX).into_lisp(env);
    env.list([
        k_output.bind(env),
        lstr(env, &r.output)?,
        k_truncated.bind(env),
        if r.truncated {
            t.bind(env)
        } else {
            nil.bind(env)
        },
        k_total_bytes.bind(env),
        n(r.total_bytes)?,
        env.intern(":kept-bytes")?,
        n(r.kept_bytes)?,
        env.intern(":lines")?,
        n(r.total_lines)?,
        env.intern(":error")?,
        opt_str(env, error.as_deref())?,
    ])
}
