//! A chat's session as the engine holds it, and the one way a tool call comes in.
//!
//! A session is opened once with the chat's scope envelope (a JSON object: its sources, the
//! grants of this chat, home, project root, platform, whether approval is checked, the
//! protected paths) and held by Emacs as a handle. Each call is a JSON object of the call's
//! own fields (`tool`, its arguments, its directory, whether it runs masked): [`Session::call`] merges the two into
//! the [`Request`] the engine judges, so the envelope is parsed once and never copied over by
//! hand. What the call is, is read from its tool ([`Call`]).

use serde_json::{Map, Value};

use crate::fs::tools::FsArgs;
use crate::fs::FsError;
use crate::policy::request::Request;
use crate::{Result, ScopeError, Tool};

/// A chat's scope envelope, parsed once.
#[derive(Debug, Clone)]
pub struct Session {
    envelope: Request,
}

/// One tool call, by what the engine does with it.
#[derive(Debug)]
pub enum Call {
    /// `run_bash_command`: a shell command line, answered in brief, or with its evidence
    /// (as JSON text with `as_json`, for `make check`).
    Command {
        request: Request,
        evidence: bool,
        as_json: bool,
    },
    /// `run_command`: a program and its arguments.
    Argv(Request),
    /// A file tool, `tool` being the operation and `request.tool` the tool the result and the
    /// grants are for.
    File {
        tool: Tool,
        request: Request,
        args: FsArgs,
    },
    /// `list_allowed_commands`.
    ListCommands(Request),
    /// `get_system_info`: the scope in summary.
    Summary(Request),
    /// A file tool whose own arguments are malformed: answered as the tool's failure.
    FileFailure { tool: String, error: FsError },
}

impl Session {
    /// Opens a session on the envelope `json`; a field of one call in it is refused.
    pub fn open(json: &str) -> Result<Session> {
        let envelope = Request::parse(json)?;
        let named = [
            ("command", envelope.command.is_some()),
            ("args", envelope.args.is_some()),
            ("directory", envelope.directory.is_some()),
            ("path", envelope.path.is_some()),
            ("access", envelope.access.is_some()),
            ("tool", envelope.tool.is_some()),
            ("call", envelope.call.is_some()),
            ("env", !envelope.env.is_empty()),
            ("masked", envelope.masked),
        ];
        if let Some((key, _)) = named.iter().find(|(_, set)| *set) {
            return Err(ScopeError::InvalidArgument(format!(
                "a session's scope must not name `{key}`: it is a field of each call"
            )));
        }
        Ok(Session { envelope })
    }

    /// The envelope, as a request of no call (lint, the environment, the sandbox of a
    /// terminal session).
    pub fn request(&self) -> &Request {
        &self.envelope
    }

    /// The call `json` under this session: its tool says what it is. `for_tool` names the
    /// tool a file operation is for (another package's, checked with `check_path`);
    /// `evidence`, for `run_bash_command`, asks for the decision in full.
    pub fn call(&self, json: &str) -> Result<Call> {
        let bad = |m: String| ScopeError::InvalidArgument(format!("bad call: {m}"));
        let mut fields: Map<String, Value> = match serde_json::from_str(json) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(bad("expected a JSON object".into())),
            Err(e) => return Err(bad(e.to_string())),
        };
        let name = match fields.remove("tool") {
            Some(Value::String(s)) => s,
            _ => return Err(bad("`tool` is required, a string".into())),
        };
        let tool = Tool::from_name(&name).ok_or_else(|| bad(format!("unknown tool `{name}`")))?;
        let evidence = matches!(fields.remove("evidence"), Some(Value::Bool(true)));
        let as_json = matches!(fields.remove("as_json"), Some(Value::Bool(true)));
        let for_tool = match fields.remove("for_tool") {
            None | Some(Value::Null) => tool.name().to_string(),
            Some(Value::String(s)) => s,
            Some(_) => return Err(bad("`for_tool` must be a string".into())),
        };
        let (own, args) = if Tool::FILE_TOOLS.contains(&tool) {
            match FsArgs::split(fields) {
                Ok((req, args)) => (req, Some(args)),
                Err(error) => {
                    return Ok(Call::FileFailure {
                        tool: for_tool,
                        error,
                    })
                }
            }
        } else {
            let req: Request =
                serde_json::from_value(Value::Object(fields)).map_err(|e| bad(e.to_string()))?;
            (req, None)
        };
        let request = self.merged(Request {
            tool: Some(for_tool),
            ..own
        })?;
        Ok(match (tool, args) {
            (Tool::RunBashCommand, _) => Call::Command {
                request,
                evidence,
                as_json,
            },
            (Tool::RunCommand, _) => Call::Argv(request),
            (Tool::ListAllowedCommands, _) => Call::ListCommands(request),
            (Tool::GetSystemInfo, _) => Call::Summary(request),
            (tool, Some(args)) => Call::File {
                tool,
                request,
                args,
            },
            (tool, None) => {
                return Err(bad(format!(
                    "`{tool}` is not judged by the engine (one of {})",
                    judged_tools()
                )))
            }
        })
    }

    /// The request of `run_bash_command` on `command` in `directory`.
    pub fn command(&self, command: &str, directory: &str) -> Request {
        Request {
            command: Some(command.to_string()),
            directory: Some(directory.to_string()),
            tool: Some(Tool::RunBashCommand.name().to_string()),
            ..self.envelope.clone()
        }
    }

    /// The envelope with the fields of `json` (a call's, its tool optional): what the sandbox
    /// of a call is built from (its `call` needs and `env`).
    pub fn with(&self, json: &str) -> Result<Request> {
        self.merged(Request::parse(json)?)
    }

    /// The envelope with the call's own fields `own`; a field of the envelope in a call is
    /// refused, so no call changes the scope it is judged under.
    fn merged(&self, own: Request) -> Result<Request> {
        let foreign = [
            ("sources", !own.sources.is_empty()),
            ("grants", !own.grants.is_empty()),
            ("home", own.home.is_some()),
            ("project_root", own.project_root.is_some()),
            ("platform", own.platform.is_some()),
            ("check_trust", own.check_trust),
            ("protect", !own.protect.is_empty()),
        ];
        if let Some((key, _)) = foreign.iter().find(|(_, set)| *set) {
            return Err(ScopeError::InvalidArgument(format!(
                "bad call: `{key}` belongs to the session, not to a call"
            )));
        }
        Ok(Request {
            command: own.command,
            args: own.args,
            directory: own.directory,
            path: own.path,
            access: own.access,
            tool: own.tool,
            call: own.call,
            env: own.env,
            masked: own.masked,
            ..self.envelope.clone()
        })
    }
}

/// The tools [`Session::call`] takes, for its message.
fn judged_tools() -> String {
    let judged = [
        Tool::RunBashCommand,
        Tool::RunCommand,
        Tool::ListAllowedCommands,
        Tool::GetSystemInfo,
    ];
    judged
        .iter()
        .chain(Tool::FILE_TOOLS.iter())
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        Session::open(r#"{"sources":[{"inline":"paths: {read: [/tmp]}"}],"home":"/home/u","grants":[{"tool":"run_bash_command","resource":"rm x"}]}"#)
            .unwrap()
    }

    #[test]
    fn a_call_is_judged_under_its_session() {
        let s = session();
        match s
            .call(r#"{"tool":"run_bash_command","command":"ls","directory":"/tmp"}"#)
            .unwrap()
        {
            Call::Command {
                request,
                evidence,
                as_json,
            } => {
                assert!(!evidence && !as_json);
                assert_eq!(request.command.as_deref(), Some("ls"));
                assert_eq!(request.directory.as_deref(), Some("/tmp"));
                assert_eq!(request.tool.as_deref(), Some("run_bash_command"));
                assert_eq!(request.home.as_deref(), Some("/home/u"));
                assert_eq!(request.grants.len(), 1);
                assert_eq!(request.sources.len(), 1);
            }
            other => panic!("{other:?}"),
        }
        match s
            .call(
                r#"{"tool":"check_path","for_tool":"write_file","path":"/tmp/a","access":"write"}"#,
            )
            .unwrap()
        {
            Call::File { tool, request, .. } => {
                assert_eq!(tool, Tool::CheckPath);
                assert_eq!(request.tool.as_deref(), Some("write_file"));
                assert_eq!(request.access.as_deref(), Some("write"));
            }
            other => panic!("{other:?}"),
        }
        match s
            .call(r#"{"tool":"read_file","path":"a","limit":3}"#)
            .unwrap()
        {
            Call::File { args, .. } => assert_eq!(args.limit, Some(3)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn what_belongs_elsewhere_is_refused() {
        let cases = [
            (
                Session::open(r#"{"command":"ls"}"#).map(|_| ()),
                "a session's scope must not name `command`: it is a field of each call",
            ),
            (
                session()
                    .call(r#"{"tool":"read_file","path":"a","sources":[{"inline":"{}"}]}"#)
                    .map(|_| ()),
                "bad call: `sources` belongs to the session, not to a call",
            ),
            (
                session()
                    .call(r#"{"tool":"run_bash_command","command":"ls","grants":[{"tool":"run_bash_command","resource":"ls"}]}"#)
                    .map(|_| ()),
                "bad call: `grants` belongs to the session, not to a call",
            ),
            (
                session().call(r#"{"command":"ls"}"#).map(|_| ()),
                "bad call: `tool` is required, a string",
            ),
            (
                session().call(r#"{"tool":"rm_rf"}"#).map(|_| ()),
                "bad call: unknown tool `rm_rf`",
            ),
            (
                session().call(r#"{"tool":"write_stdin"}"#).map(|_| ()),
                "bad call: `write_stdin` is not judged by the engine (one of run_bash_command, \
                 run_command, list_allowed_commands, get_system_info, read_file, list_dir, \
                 grep_files, apply_patch, check_path)",
            ),
        ];
        for (got, want) in cases {
            match got {
                Err(ScopeError::InvalidArgument(m)) => assert_eq!(m, want),
                other => panic!("{want}: {other:?}"),
            }
        }
    }
}
