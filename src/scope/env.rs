//! The environment of a command, from the scope and not from Emacs (`environment:`).
//!
//! Emacs's environment holds whatever its user keeps there: API keys, cloud credentials,
//! tokens, database passwords. A command run for the model gets only what the scope's
//! `environment:` key lets through:
//!
//! - `inherit: core` (the default): the variables a command needs to work (`PATH`, `HOME`,
//!   `USER`, `LOGNAME`, `SHELL`, `LANG`, `LC_*`, `TERM`, `TZ`, `TMPDIR`) and those that find
//!   the user's toolchains ([`crate::scope::toolchain::VARIABLES`]: `CARGO_HOME`,
//!   `RUSTUP_HOME`, `NVM_DIR`, `PYENV_ROOT`, `VIRTUAL_ENV`, `GOPATH`, `JAVA_HOME`, ...);
//!   `all`: every variable; `none`: nothing;
//! - `include`: more variables, by name or glob;
//! - `exclude`: variables left out, by name or glob, whatever `inherit` and `include` say;
//! - `set`: variables with the value the scope gives them;
//! - `redact`: variables whose values are secrets, by name or glob, passed or not.
//!
//! Whatever `inherit` says, a name that looks like a secret ([`SECRET_PATTERNS`]) is left
//! out unless `include` names it exactly (a glob does not). What [`crate::output::redact`]
//! hides in every tool result is the secrets: the values of the secret-looking variables
//! left out, of those `redact` names, and gptel's own keys. Another variable left out is
//! not passed, and its value is not hidden: `COLORTERM=truecolor` or `EDITOR=emacsclient`
//! are no secrets, and hiding them hid every `truecolor` and `emacsclient` of every result.
//!
//! [`plan`] is pure: it takes the entries of Emacs's `process-environment` and returns the
//! environment, each variable's fate with its evidence, and the secrets to redact.

use std::collections::BTreeMap;

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::{Result, ScopeError};

/// `environment:` in a scope document.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Environment {
    /// Which of Emacs's variables a command inherits before `include` and `exclude`.
    pub inherit: Inherit,
    /// Names or globs of more variables to pass. Only an exact name passes a secret-looking
    /// variable.
    pub include: Vec<String>,
    /// Names or globs of variables never passed (unless `include` names them exactly).
    pub exclude: Vec<String>,
    /// Variables set to these values for every command.
    pub set: BTreeMap<String, String>,
    /// Names or globs of variables whose values are hidden in tool results, passed to
    /// commands or not (beside the secret-looking names, hidden when left out).
    pub redact: Vec<String>,
}

/// `environment.inherit`.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Inherit {
    /// The [`CORE`] variables.
    #[default]
    Core,
    /// Every variable of Emacs's environment.
    All,
    /// None.
    None,
}

/// The variables a command needs to work, passed by `inherit: core`.
pub const CORE: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TERM", "TZ", "TMPDIR",
];

/// Names left out whatever `inherit` says, unless `include` names the variable exactly.
/// Matched without regard to case.
pub const SECRET_PATTERNS: &[&str] = &[
    "*KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*_PASS",
    "*_PWD",
    "*CREDENTIAL*",
    "*PRIVATE*",
    "*AUTH*",
    "*COOKIE*",
    "*SESSION_ID*",
    "*_PAT",
    "*_DSN",
    "*DATABASE_URL*",
    "*CONNECTION_STRING*",
    "*WEBHOOK*",
    "AWS_*",
    "AZURE_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GCP_*",
    "VAULT_*",
    "OP_SERVICE_*",
];

/// Values shorter than this are not redacted: too short to be a secret worth hiding, and
/// too likely to occur by chance.
pub const MIN_SECRET_LEN: usize = 8;

/// What became of one variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// Given its value by the scope's `set`.
    Set,
    /// Passed as a core variable (`inherit: core`).
    Core,
    /// Passed because `include` names it (by name or glob).
    Included,
    /// Passed by `inherit: all`.
    Inherited,
    /// Left out: its name looks like a secret.
    Secret,
    /// Left out by the scope's `exclude`.
    Excluded,
    /// Left out: `inherit` does not pass it and `include` does not name it.
    NotInherited,
}

impl Fate {
    /// Whether the command gets the variable.
    pub fn passed(self) -> bool {
        matches!(
            self,
            Fate::Set | Fate::Core | Fate::Included | Fate::Inherited
        )
    }
}

/// One variable's fate, with the pattern that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Variable {
    pub name: String,
    pub fate: Fate,
    /// The pattern (core name, include, exclude or secret pattern) that decided it.
    pub pattern: Option<String>,
    /// Whether its value is hidden in tool results.
    pub redacted: bool,
}

/// The environment of a command and what it was made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// `NAME=VALUE` entries for the command, sorted by name.
    pub env: Vec<String>,
    /// Every variable of Emacs's environment and of `set`, sorted by name.
    pub variables: Vec<Variable>,
    /// (name, value) of each value hidden in tool results.
    pub secrets: Vec<(String, String)>,
    /// What the user may want to fix in `environment:`.
    pub warnings: Vec<String>,
}

fn glob(pattern: &str, key: &str) -> Result<GlobMatcher> {
    GlobBuilder::new(pattern)
        .case_insensitive(true)
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| ScopeError::InvalidConfig {
            file: "merged scope".into(),
            line: None,
            key: Some(key.into()),
            message: format!("`{pattern}` is not a valid name pattern: {e}"),
        })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('=') && !name.contains('\0')
}

/// Checks `environment:` beyond its types: patterns that are globs, names that are names.
pub fn validate(cfg: &Environment) -> Result<()> {
    for (key, list) in [
        ("environment.include", &cfg.include),
        ("environment.exclude", &cfg.exclude),
        ("environment.redact", &cfg.redact),
    ] {
        for p in list {
            if !valid_name(p) {
                return Err(ScopeError::InvalidConfig {
                    file: "merged scope".into(),
                    line: None,
                    key: Some(key.into()),
                    message: format!("`{p}` is not a variable name or pattern"),
                });
            }
            glob(p, key)?;
        }
    }
    for (name, value) in &cfg.set {
        if !valid_name(name) || value.contains('\0') {
            return Err(ScopeError::InvalidConfig {
                file: "merged scope".into(),
                line: None,
                key: Some("environment.set".into()),
                message: format!("`{name}` cannot be set: a name has no `=` and neither has a NUL"),
            });
        }
    }
    Ok(())
}

/// Name patterns as one set: a name is matched against all of them at once.
struct Patterns {
    list: Vec<String>,
    set: globset::GlobSet,
}

impl Patterns {
    fn new(patterns: impl IntoIterator<Item = impl AsRef<str>>, key: &str) -> Result<Self> {
        let mut builder = globset::GlobSetBuilder::new();
        let mut list = Vec::new();
        for p in patterns {
            let p = p.as_ref();
            let g = GlobBuilder::new(p)
                .case_insensitive(true)
                .literal_separator(false)
                .build()
                .map_err(|e| ScopeError::InvalidConfig {
                    file: "merged scope".into(),
                    line: None,
                    key: Some(key.into()),
                    message: format!("`{p}` is not a valid name pattern: {e}"),
                })?;
            builder.add(g);
            list.push(p.to_string());
        }
        let set = builder.build().map_err(|e| ScopeError::InvalidConfig {
            file: "merged scope".into(),
            line: None,
            key: Some(key.into()),
            message: e.to_string(),
        })?;
        Ok(Patterns { list, set })
    }

    /// The first pattern (in the order written) that matches `name`.
    fn first(&self, name: &str) -> Option<&str> {
        if self.list.is_empty() {
            return None;
        }
        self.set
            .matches(name)
            .into_iter()
            .min()
            .map(|i| self.list[i].as_str())
    }
}

/// The secret pattern `name` matches, if any.
pub fn secret_pattern(name: &str) -> Option<&'static str> {
    static SECRETS: once_cell::sync::Lazy<Option<Patterns>> =
        once_cell::sync::Lazy::new(|| Patterns::new(SECRET_PATTERNS, "secret").ok());
    let p = SECRETS.as_ref()?.first(name)?;
    SECRET_PATTERNS.iter().find(|s| **s == p).copied()
}

/// Whether a variable's value is hidden in tool results: 8 characters or more, and a
/// secret: its name looks like one and the command does not get it (`fate`), or the
/// scope's `redact` names it (`marked`), passed or not. Any other value is shown as it
/// is: a variable left out for being no command's business is not a secret for that.
fn hidden(name: &str, value: &str, fate: Fate, marked: bool) -> bool {
    value.chars().count() >= MIN_SECRET_LEN
        && (marked || (!fate.passed() && secret_pattern(name).is_some()))
}

/// The environment of a command under `cfg`, from `entries` (Emacs's `process-environment`:
/// `NAME=VALUE`, the first entry of a name wins, a bare `NAME` unsets it). `api_keys` are
/// gptel's own keys (`gptel-api-key`, the backend's), always hidden.
pub fn plan(cfg: &Environment, entries: &[String], api_keys: &[String]) -> Result<Plan> {
    validate(cfg)?;
    let include = Patterns::new(&cfg.include, "environment.include")?;
    let exclude = Patterns::new(&cfg.exclude, "environment.exclude")?;
    let redact = Patterns::new(&cfg.redact, "environment.redact")?;
    static CORE_SET: once_cell::sync::Lazy<Option<Patterns>> =
        once_cell::sync::Lazy::new(|| Patterns::new(CORE, "core").ok());
    let core = CORE_SET.as_ref().ok_or_else(|| {
        ScopeError::InvalidArgument("the core variables' patterns do not build".into())
    })?;
    let mut seen: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    for e in entries {
        let (name, value) = match e.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (e.as_str(), None),
        };
        if !name.is_empty() {
            seen.entry(name).or_insert(value);
        }
    }
    let mut plan = Plan::default();
    let mut names: Vec<&str> = seen
        .keys()
        .copied()
        .chain(cfg.set.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let value = seen.get(name).copied().flatten();
        let exact = cfg.include.iter().any(|i| i == name);
        let (fate, pattern) = if let Some(v) = cfg.set.get(name) {
            plan.env.push(format!("{name}={v}"));
            (Fate::Set, None)
        } else if value.is_none() {
            continue;
        } else if let (Some(p), false) = (secret_pattern(name), exact) {
            (Fate::Secret, Some(p.to_string()))
        } else if let (Some(p), false) = (exclude.first(name), exact) {
            (Fate::Excluded, Some(p.to_string()))
        } else if let Some(p) = include.first(name) {
            (Fate::Included, Some(p.to_string()))
        } else {
            match cfg.inherit {
                Inherit::All => (Fate::Inherited, None),
                Inherit::Core => match core.first(name) {
                    Some(p) => (Fate::Core, Some(p.to_string())),
                    // The toolchains' homes and versions (rustup, nvm, pyenv, go, ...).
                    None if crate::scope::toolchain::VARIABLES.contains(&name) => {
                        (Fate::Core, Some(name.to_string()))
                    }
                    None => (Fate::NotInherited, None),
                },
                Inherit::None => (Fate::NotInherited, None),
            }
        };
        let mut redacted = false;
        if let Some(v) = value {
            if fate.passed() && fate != Fate::Set {
                plan.env.push(format!("{name}={v}"));
            }
            if fate != Fate::Set && hidden(name, v, fate, redact.first(name).is_some()) {
                plan.secrets.push((name.to_string(), v.to_string()));
                redacted = true;
            }
        }
        plan.variables.push(Variable {
            name: name.to_string(),
            fate,
            pattern,
            redacted,
        });
    }
    for k in api_keys
        .iter()
        .filter(|k| k.chars().count() >= MIN_SECRET_LEN)
    {
        plan.secrets.push(("gptel-api-key".into(), k.to_string()));
    }
    plan.warnings = lint(cfg);
    Ok(plan)
}

/// Warnings about an `environment:` that passes more than the user may think.
pub fn lint(cfg: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    if cfg.inherit == Inherit::All && cfg.exclude.is_empty() {
        out.push(
            "environment: `inherit: all` with no `exclude` passes every variable of Emacs's environment but the secret-looking ones; list what commands need in `include` instead, or exclude what they must not see"
                .to_string(),
        );
    }
    for name in &cfg.include {
        if let Some(p) = secret_pattern(name) {
            out.push(format!(
                "environment: `include` passes {name}, which looks like a secret ({p}): every command, and so the model, can read its value"
            ));
        }
    }
    out
}

/// The `NAME` of a resource `env:NAME` of request_scope_expansion, when it is one.
pub fn resource_name(resource: &str) -> Option<&str> {
    resource
        .strip_prefix("env:")
        .filter(|n| valid_name(n) && !n.contains(['*', '?', '[', '{']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|s| s.to_string()).collect()
    }

    fn cfg(yaml: &str) -> Environment {
        serde_yaml::from_str(yaml).unwrap()
    }

    const EMACS: &[&str] = &[
        "PATH=/usr/bin:/bin",
        "HOME=/tmp",
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
        "OPENAI_API_KEY=sk-openai-0123456789",
        "ANTHROPIC_API_KEY=sk-ant-0123456789",
        "AWS_SECRET_ACCESS_KEY=aws-secret-0123456789",
        "AWS_REGION=eu-west-1",
        "GITHUB_TOKEN=ghp_0123456789abcdef",
        "DATABASE_PASSWORD=hunter2hunter2",
        "github_token=lowercase-token-0123",
        "EDITOR=emacsclient",
        "COLORTERM=truecolor",
        "PROJECT_MODE=development",
        "PWD=/",
        "UNSET_ME",
    ];

    /// The secrets of [`EMACS`] by their names alone.
    const SECRETS: &[&str] = &[
        "ANTHROPIC_API_KEY",
        "AWS_REGION",
        "AWS_SECRET_ACCESS_KEY",
        "DATABASE_PASSWORD",
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "github_token",
    ];

    /// Table: scope → (passed names, hidden names). Hidden are the secrets: the
    /// secret-looking names left out and what `redact` names; `COLORTERM=truecolor`,
    /// `EDITOR=emacsclient` and `PROJECT_MODE=development`, left out, are not hidden.
    #[test]
    fn fates_table() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("{}", &["HOME", "LANG", "LC_ALL", "PATH"], SECRETS),
            (
                "{inherit: all}",
                &[
                    "COLORTERM",
                    "EDITOR",
                    "HOME",
                    "LANG",
                    "LC_ALL",
                    "PATH",
                    "PROJECT_MODE",
                    "PWD",
                ],
                SECRETS,
            ),
            (
                "{inherit: none, include: [PATH, \"PROJECT_*\"]}",
                &["PATH", "PROJECT_MODE"],
                SECRETS,
            ),
            // A glob never passes a secret; an exact name does.
            (
                "{include: [\"*\", GITHUB_TOKEN], exclude: [EDITOR]}",
                &[
                    "COLORTERM",
                    "GITHUB_TOKEN",
                    "HOME",
                    "LANG",
                    "LC_ALL",
                    "PATH",
                    "PROJECT_MODE",
                    "PWD",
                ],
                &[
                    "ANTHROPIC_API_KEY",
                    "AWS_REGION",
                    "AWS_SECRET_ACCESS_KEY",
                    "DATABASE_PASSWORD",
                    "OPENAI_API_KEY",
                    "github_token",
                ],
            ),
            (
                "{inherit: all, exclude: [\"LC_*\"], set: {PROJECT_MODE: test, NEW_VAR: \"1\"}}",
                &[
                    "COLORTERM",
                    "EDITOR",
                    "HOME",
                    "LANG",
                    "NEW_VAR",
                    "PATH",
                    "PROJECT_MODE",
                    "PWD",
                ],
                SECRETS,
            ),
            // What the user marks is hidden, passed (PROJECT_MODE) or not (EDITOR), by name
            // or glob, without regard to case; a short value is not (LANG).
            (
                "{include: [PROJECT_MODE], redact: [project_mode, \"EDIT*\", LANG]}",
                &["HOME", "LANG", "LC_ALL", "PATH", "PROJECT_MODE"],
                &[
                    "ANTHROPIC_API_KEY",
                    "AWS_REGION",
                    "AWS_SECRET_ACCESS_KEY",
                    "DATABASE_PASSWORD",
                    "EDITOR",
                    "GITHUB_TOKEN",
                    "OPENAI_API_KEY",
                    "PROJECT_MODE",
                    "github_token",
                ],
            ),
            // A secret included by its exact name is passed and shown, unless marked.
            (
                "{include: [GITHUB_TOKEN, OPENAI_API_KEY], redact: [GITHUB_TOKEN]}",
                &[
                    "GITHUB_TOKEN",
                    "HOME",
                    "LANG",
                    "LC_ALL",
                    "OPENAI_API_KEY",
                    "PATH",
                ],
                &[
                    "ANTHROPIC_API_KEY",
                    "AWS_REGION",
                    "AWS_SECRET_ACCESS_KEY",
                    "DATABASE_PASSWORD",
                    "GITHUB_TOKEN",
                    "github_token",
                ],
            ),
        ];
        for (yaml, passed, hidden) in cases {
            let p = plan(&cfg(yaml), &env(EMACS), &[]).unwrap();
            let got: Vec<&str> = p.env.iter().map(|e| e.split('=').next().unwrap()).collect();
            assert_eq!(&got, passed, "{yaml}");
            let got: Vec<&str> = p.secrets.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(&got, hidden, "{yaml}");
            // A secret a command does not get is in no entry of its environment.
            for (_, v) in p
                .secrets
                .iter()
                .filter(|(n, _)| !passed.contains(&n.as_str()))
            {
                assert!(
                    p.env.iter().all(|e| !e.contains(v.as_str())),
                    "{yaml}: {:?}",
                    p.env
                );
            }
        }
    }

    #[test]
    fn set_wins_and_first_entry_wins() {
        let p = plan(
            &cfg("{set: {LANG: C}}"),
            &env(&["LANG=fr_FR.UTF-8", "LANG=de", "HOME=/h"]),
            &["sk-gptel-key-0123".to_string()],
        )
        .unwrap();
        assert_eq!(p.env, vec!["HOME=/h".to_string(), "LANG=C".to_string()]);
        assert_eq!(
            p.secrets,
            vec![("gptel-api-key".to_string(), "sk-gptel-key-0123".to_string())]
        );
        let p = plan(&cfg("{}"), &env(&["HOME=/h"]), &["short".to_string()]).unwrap();
        assert!(p.secrets.is_empty());
    }

    #[test]
    fn evidence_names_the_pattern() {
        let p = plan(
            &cfg("{exclude: [\"PROJECT_*\"], include: [PROJECT_MODE, EDITOR]}"),
            &env(EMACS),
            &[],
        )
        .unwrap();
        let fate = |n: &str| {
            p.variables
                .iter()
                .find(|v| v.name == n)
                .map(|v| (v.fate, v.pattern.clone(), v.redacted))
                .unwrap()
        };
        assert_eq!(
            fate("OPENAI_API_KEY"),
            (Fate::Secret, Some("*KEY*".into()), true)
        );
        assert_eq!(
            fate("AWS_REGION"),
            (Fate::Secret, Some("AWS_*".into()), true)
        );
        assert_eq!(
            fate("PROJECT_MODE"),
            (Fate::Included, Some("PROJECT_MODE".into()), false)
        );
        assert_eq!(
            fate("EDITOR"),
            (Fate::Included, Some("EDITOR".into()), false)
        );
        assert_eq!(fate("LC_ALL"), (Fate::Core, Some("LC_*".into()), false));
        // A variable left out that is no secret is not hidden.
        assert_eq!(fate("PWD"), (Fate::NotInherited, None, false));
        assert_eq!(fate("COLORTERM"), (Fate::NotInherited, None, false));
        assert!(!p.variables.iter().any(|v| v.name == "UNSET_ME"));
    }

    #[test]
    fn bad_environment_is_an_error() {
        for yaml in [
            "{include: [\"a=b\"]}",
            "{exclude: [\"[\"]}",
            "{set: {\"A=B\": x}}",
            "{redact: [\"[\"]}",
            "{redact: [\"\"]}",
            "{redact: [\"A=B\"]}",
        ] {
            let e = plan(&cfg(yaml), &[], &[]).unwrap_err();
            assert!(
                matches!(e, ScopeError::InvalidConfig { .. }),
                "{yaml}: {e:?}"
            );
        }
        for yaml in [
            "{inherit: some}",
            "{includes: [A]}",
            "{set: [A]}",
            "{redact: A}",
        ] {
            assert!(serde_yaml::from_str::<Environment>(yaml).is_err(), "{yaml}");
        }
    }

    #[test]
    fn lint_table() {
        let cases: &[(&str, usize)] = &[
            ("{}", 0),
            ("{inherit: all}", 1),
            ("{inherit: all, exclude: [FOO]}", 0),
            ("{include: [OPENAI_API_KEY, EDITOR]}", 1),
            ("{inherit: all, include: [GITHUB_TOKEN, AWS_PROFILE]}", 3),
        ];
        for (yaml, n) in cases {
            assert_eq!(lint(&cfg(yaml)).len(), *n, "{yaml}: {:?}", lint(&cfg(yaml)));
        }
    }

    #[test]
    fn resource_names() {
        assert_eq!(resource_name("env:NODE_ENV"), Some("NODE_ENV"));
        for bad in ["env:", "env:A=B", "env:*", "NODE_ENV", "path:/x"] {
            assert_eq!(resource_name(bad), None, "{bad}");
        }
    }
}
