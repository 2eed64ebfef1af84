//! What the sandbox must show of a developer's toolchains so that the programs of a command
//! run inside it as they do outside, and nothing more.
//!
//! The sandbox shows a command `/usr`, `/etc`, `/bin` and their like, a private `/tmp`, an
//! empty private home and the scope's directories. A toolchain installed in the home
//! (rustup's `~/.cargo/bin/cargo`, nvm's node, pyenv's shims, pipx, `pip --user`, go, asdf,
//! mise, volta, bun, deno, sdkman, a virtualenv) is missing there. [`needed`] finds, for the
//! programs a command line runs, the directories to show read-only. It follows what the
//! file system says (the `PATH` lookup, symlinks, `#!` lines, `pyvenv.cfg`); a small table
//! ([`MANAGERS`]) says only what resolution cannot: which manager a file belongs to, and
//! that manager's home and variables.
//!
//! # Rules
//!
//! 1. **Lookup.** A name holding `/` is taken relative to the command's directory. Any other
//!    name is looked up in `PATH` as bash does: the first entry holding an executable regular
//!    file (after symlinks) of that name; an empty or relative entry is skipped. A bash
//!    builtin or keyword ([`BUILTINS`]) runs in bash, which is in `/usr`: nothing to show.
//!    A name not found shows nothing (bash will say 127).
//! 2. **The chain.** The path found (unless it holds `..`), then the path with its
//!    directories resolved, then each symlink's target (relative to the link's directory),
//!    at most [`MAX_LINKS`] steps. Every step counts, the last one (the file that runs)
//!    too.
//! 3. **Roots.** For each step that the sandbox does not show already:
//!    - (a) the manager table ([`MANAGERS`]): a path under `CARGO_HOME` (`~/.cargo`) shows
//!      `CARGO_HOME`, and when the file that runs is rustup (named `rustup` or
//!      `rustup-init`, or the same inode as `$CARGO_HOME/bin/rustup`), `RUSTUP_HOME`
//!      (`~/.rustup`) too; under `NVM_DIR` (`~/.nvm`), the node version
//!      (`versions/node/VERSION`); `PYENV_ROOT` (`~/.pyenv`), `VOLTA_HOME` (`~/.volta`),
//!      `BUN_INSTALL` (`~/.bun`), `DENO_INSTALL` (`~/.deno`) and `SDKMAN_DIR`
//!      (`~/.sdkman`) whole; asdf (`ASDF_DATA_DIR`, `ASDF_DIR`: `~/.asdf`) whole with
//!      `~/.tool-versions`; mise (`MISE_DATA_DIR`: `~/.local/share/mise`) whole with
//!      `MISE_CONFIG_DIR` (`~/.config/mise`) and `~/.tool-versions`; a program in
//!      `$GOPATH/bin` (`~/go/bin`) that directory;
//!    - (b) else, a file in a directory named `bin`, `sbin` or `shims` shows that
//!      directory's parent (a prefix: a virtualenv, a toolchain unpacked in `~/opt/x`),
//!      unless the parent is the home, a directory holding it, or `~/.local`: then only the
//!      directory itself, and for `~/.local/bin` also `~/.local/lib` (the packages of
//!      `pip --user`);
//!    - (c) else the file's own directory, or the file alone when its directory is the home
//!      or holds it.
//!
//!    Whether the sandbox shows the steps or not, the file that runs brings its data: rustup
//!    `CARGO_HOME` and `RUSTUP_HOME`; `go` its `GOROOT` (the variable, else its prefix) and
//!    the module cache (`GOMODCACHE`, else `$GOPATH/pkg/mod`).
//!
//!    A virtualenv (a root, or the parent of a step's `bin/`, holding `pyvenv.cfg`): its
//!    `home = DIR` line (the file read up to [`MAX_PYVENV_CFG`] bytes) is placed as a
//!    program directory by (a) to (c), when `DIR` holds an executable `python3` or `python`.
//! 4. **Interpreters.** The first [`MAX_SHEBANG`] bytes of the file that runs: `#!/abs/interp`
//!    is resolved like a program (rules 1 to 3); when the interpreter is `env`, the program
//!    it runs too (`#!/usr/bin/env NAME`, or the first word of `#!/usr/bin/env -S ...` that
//!    is no option and no assignment), looked up in `PATH`. At most [`MAX_INTERPRETERS`]
//!    deep (a script whose interpreter is a script ...). A script of a virtualenv so brings
//!    the virtualenv's python, its root, and its `pyvenv.cfg` home.
//! 5. **Secrets are never shown.** In each root, the entries of [`SECRET_FILES`] that exist
//!    at its top (no walk) are listed in `hide`. The caller masks the scope's deny patterns
//!    as well.
//! 6. **Output.** `show` holds the outermost roots only, sorted, each existing (`lstat`),
//!    none already shown, never the home or a directory holding it (`/` among them). At most
//!    [`MAX_PROGRAMS`] programs are looked at.
//! 7. Nothing runs: the file system is read, and every read is bounded.

use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::resolve::{normalize, resolve};

/// Most programs of one command line looked at; the rest show nothing.
pub const MAX_PROGRAMS: usize = 64;
/// Most symlinks followed from a program's path to its file (the kernel's `ELOOP` bound).
pub const MAX_LINKS: usize = 40;
/// Bytes of a file read for its `#!` line (the kernel's `BINPRM_BUF_SIZE`).
pub const MAX_SHEBANG: u64 = 256;
/// Bytes of a `pyvenv.cfg` read for its `home` line.
pub const MAX_PYVENV_CFG: u64 = 4096;
/// Interpreters followed from a program: a script's, its interpreter's, ... four deep.
pub const MAX_INTERPRETERS: usize = 4;

/// The variables the toolchains read (their homes, versions and caches), for the default
/// `environment:` (`inherit: core`) to pass to commands unless they look like secrets.
pub const VARIABLES: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "NVM_DIR",
    "NVM_BIN",
    "NVM_INC",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PIPX_HOME",
    "PIPX_BIN_DIR",
    "GOPATH",
    "GOROOT",
    "GOBIN",
    "GOMODCACHE",
    "GOTOOLCHAIN",
    "JAVA_HOME",
    "ASDF_DIR",
    "ASDF_DATA_DIR",
    "MISE_DATA_DIR",
    "MISE_CONFIG_DIR",
    "VOLTA_HOME",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "SDKMAN_DIR",
];

/// Entries that hold credentials, looked for at the top of every root shown and hidden
/// when they exist: cargo's registry tokens, npm's (the user's `.npmrc`, a prefix's
/// `etc/npmrc`), yarn's, PyPI's, pip's index passwords, netrc, git's stored credentials,
/// composer's `auth.json`, the GitHub CLI's `hosts.yml`, docker's `config.json`, dotenv.
pub const SECRET_FILES: &[&str] = &[
    "credentials",
    "credentials.toml",
    ".credentials.toml",
    ".npmrc",
    "npmrc",
    "etc/npmrc",
    ".yarnrc.yml",
    ".pypirc",
    "pip.conf",
    ".netrc",
    ".git-credentials",
    "auth.json",
    "hosts.yml",
    ".docker/config.json",
    ".env",
];

/// Bash's builtins and keywords: they run in bash (in `/usr`), whatever `PATH` holds.
#[rustfmt::skip]
pub const BUILTINS: &[&str] = &[
    "!", ".", ":", "[", "[[", "]]", "{", "}", "alias", "bg", "bind", "break", "builtin",
    "caller", "case", "cd", "command", "compgen", "complete", "compopt", "continue", "coproc",
    "declare", "dirs", "disown", "do", "done", "echo", "elif", "else", "enable", "esac", "eval",
    "exec", "exit", "export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash",
    "help", "history", "if", "in", "jobs", "kill", "let", "local", "logout", "mapfile", "popd",
    "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set",
    "shift", "shopt", "source", "suspend", "test", "then", "time", "times", "trap", "true",
    "type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// What a manager's file needs shown (rule 3a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// `CARGO_HOME`; with `RUSTUP_HOME` when the file that runs is rustup.
    Cargo,
    /// The node version a file lies in (`versions/node/VERSION`); else the whole home.
    NodeVersion,
    /// The whole home.
    Whole,
    /// Every asdf home and `~/.tool-versions`.
    Asdf,
    /// The data home, `MISE_CONFIG_DIR` and `~/.tool-versions`.
    Mise,
    /// `$GOPATH/bin` for a program there; nothing for the rest of `GOPATH`.
    GoBin,
}

/// A manager of toolchains: the variable naming its home, the default home relative to
/// `HOME`, and what a file under it needs.
#[derive(Debug, Clone, Copy)]
pub struct Manager {
    /// Its name, as evidence says it.
    pub name: &'static str,
    /// The variable of its home (`GOPATH` is a list).
    pub var: &'static str,
    /// Its home when the variable is unset, relative to the home directory.
    pub default: &'static str,
    /// What a file under its home needs shown.
    pub needs: Needs,
}

/// The managers, in the order a path is matched against their homes.
#[rustfmt::skip]
pub const MANAGERS: &[Manager] = &[
    Manager { name: "mise", var: "MISE_DATA_DIR", default: ".local/share/mise", needs: Needs::Mise },
    Manager { name: "cargo", var: "CARGO_HOME", default: ".cargo", needs: Needs::Cargo },
    Manager { name: "nvm", var: "NVM_DIR", default: ".nvm", needs: Needs::NodeVersion },
    Manager { name: "pyenv", var: "PYENV_ROOT", default: ".pyenv", needs: Needs::Whole },
    Manager { name: "asdf", var: "ASDF_DATA_DIR", default: ".asdf", needs: Needs::Asdf },
    Manager { name: "asdf", var: "ASDF_DIR", default: ".asdf", needs: Needs::Asdf },
    Manager { name: "volta", var: "VOLTA_HOME", default: ".volta", needs: Needs::Whole },
    Manager { name: "bun", var: "BUN_INSTALL", default: ".bun", needs: Needs::Whole },
    Manager { name: "deno", var: "DENO_INSTALL", default: ".deno", needs: Needs::Whole },
    Manager { name: "sdkman", var: "SDKMAN_DIR", default: ".sdkman", needs: Needs::Whole },
    Manager { name: "go", var: "GOPATH", default: "go", needs: Needs::GoBin },
];

/// The environment a command runs in, as far as finding its programs goes.
pub struct Env<'a> {
    /// The command's `PATH`.
    pub path: &'a str,
    /// The home directory outside the sandbox, absolute.
    pub home: &'a Path,
    /// The value of a variable of the command's environment (one of [`VARIABLES`]), if set.
    pub var: &'a dyn Fn(&str) -> Option<String>,
}

/// What the sandbox must show read-only for a command's programs, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Shown {
    /// Directories (or files) to show read-only: outermost only, sorted, each existing.
    pub show: Vec<PathBuf>,
    /// Entries inside them that hold credentials ([`SECRET_FILES`]), to hide; sorted.
    pub hide: Vec<PathBuf>,
    /// One entry per program, interpreter and virtualenv home looked at, in that order.
    pub evidence: Vec<Evidence>,
}

/// How one program was resolved and what it needs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// The program as the command line names it, the interpreter as a `#!` line names it,
    /// or a virtualenv's `home` as its `pyvenv.cfg` says it.
    pub program: String,
    /// The script whose `#!` line names the interpreter, or the `pyvenv.cfg`; `None` for a
    /// program of the command line.
    pub from: Option<PathBuf>,
    /// The chain: the path found, then every step to the file that runs (last).
    pub resolved: Vec<PathBuf>,
    /// The roots this program needs shown (before the outermost are kept), in the order found.
    pub roots: Vec<PathBuf>,
    /// Why: each rule that gave a root (`rustup proxy: CARGO_HOME and RUSTUP_HOME`), joined
    /// by `; `; or why nothing is needed (`already shown`, `not found on PATH`, ...).
    pub why: String,
}

/// Why a builtin needs nothing.
const WHY_BUILTIN: &str = "a bash builtin or keyword: it runs in bash, which is in /usr";
/// Why a name not found needs nothing.
const WHY_NOT_FOUND: &str = "not found on PATH";
/// Why a path-qualified name that is no executable file needs nothing.
const WHY_NO_FILE: &str = "no executable file there";
/// Why a program whose every step is shown needs nothing.
const WHY_SHOWN: &str = "already shown";
/// Why rustup's homes are shown.
const WHY_RUSTUP: &str = "rustup proxy: CARGO_HOME and RUSTUP_HOME";
/// Why go's are.
const WHY_GO: &str = "go: GOROOT and the module cache";

/// A directory as a variable names it and as the file system resolves it.
#[derive(Debug, Clone)]
struct Dir {
    named: PathBuf,
    real: PathBuf,
}

impl Dir {
    fn new(p: &Path) -> Dir {
        let named = normalize(p);
        let real = resolve(&named).target;
        Dir { named, real }
    }

    /// The form of this directory that `p` lies in (or is), if any.
    fn holding(&self, p: &Path) -> Option<&Path> {
        if p.starts_with(&self.named) {
            Some(&self.named)
        } else if p.starts_with(&self.real) {
            Some(&self.real)
        } else {
            None
        }
    }

    /// Whether this directory is `p`, or lies inside it.
    fn within(&self, p: &Path) -> bool {
        self.named.starts_with(p) || self.real.starts_with(p)
    }
}

/// The homes of the managers and the other directories the rules name, read once.
struct Homes {
    home: Dir,
    local: Dir,
    managers: Vec<(&'static Manager, Vec<Dir>)>,
    rustup: PathBuf,
    mise_config: PathBuf,
    tool_versions: PathBuf,
    goroot: Option<PathBuf>,
    modcache: PathBuf,
}

/// The absolute value of `var`, if set.
fn absolute_var(env: &Env, var: &str) -> Option<PathBuf> {
    (env.var)(var)
        .filter(|v| v.starts_with('/'))
        .map(PathBuf::from)
}

impl Homes {
    fn new(env: &Env) -> Homes {
        let home = env.home;
        let managers = MANAGERS
            .iter()
            .map(|m| {
                let mut dirs: Vec<PathBuf> = match (env.var)(m.var) {
                    Some(v) if m.var == "GOPATH" => v
                        .split(':')
                        .filter(|e| e.starts_with('/'))
                        .map(PathBuf::from)
                        .collect(),
                    Some(v) if v.starts_with('/') => vec![PathBuf::from(v)],
                    _ => Vec::new(),
                };
                if dirs.is_empty() {
                    dirs.push(home.join(m.default));
                }
                (m, dirs.iter().map(|d| Dir::new(d)).collect())
            })
            .collect();
        let gopath = (env.var)("GOPATH")
            .and_then(|v| v.split(':').find(|e| e.starts_with('/')).map(PathBuf::from))
            .unwrap_or_else(|| home.join("go"));
        Homes {
            home: Dir::new(home),
            local: Dir::new(&home.join(".local")),
            managers,
            rustup: absolute_var(env, "RUSTUP_HOME").unwrap_or_else(|| home.join(".rustup")),
            mise_config: absolute_var(env, "MISE_CONFIG_DIR")
                .unwrap_or_else(|| home.join(".config/mise")),
            tool_versions: home.join(".tool-versions"),
            goroot: absolute_var(env, "GOROOT"),
            modcache: absolute_var(env, "GOMODCACHE").unwrap_or_else(|| gopath.join("pkg/mod")),
        }
    }

    /// The named homes of the managers that need `needs`.
    fn of(&self, needs: Needs) -> impl Iterator<Item = PathBuf> + '_ {
        self.managers
            .iter()
            .filter(move |(m, _)| m.needs == needs)
            .flat_map(|(_, dirs)| dirs.iter().map(|d| d.named.clone()))
    }
}

/// A root and the rule that gave it.
type Root = (PathBuf, String);

/// The walk over a command's programs.
struct Walk<'a> {
    env: &'a Env<'a>,
    directory: &'a Path,
    visible: &'a dyn Fn(&Path) -> bool,
    homes: Homes,
    /// Every root kept, before the outermost are chosen.
    roots: Vec<PathBuf>,
    evidence: Vec<Evidence>,
    /// The `pyvenv.cfg` files read already.
    venvs: Vec<PathBuf>,
}

/// What the sandbox must show read-only for `programs` (as the command line names them:
/// `cargo`, `./x.sh`, `/usr/bin/ls`) to run as they do outside, run in `directory`
/// (absolute) with `env`. `visible` says whether the sandbox shows a path already (`/usr`, `/etc`, the
/// scope's directories). See the module documentation for the rules.
pub fn needed(
    programs: &[&str],
    env: &Env,
    directory: &Path,
    visible: &dyn Fn(&Path) -> bool,
) -> Shown {
    let mut walk = Walk {
        env,
        directory,
        visible,
        homes: Homes::new(env),
        roots: Vec::new(),
        evidence: Vec::new(),
        venvs: Vec::new(),
    };
    let mut seen: Vec<&str> = Vec::new();
    for name in programs.iter().take(MAX_PROGRAMS) {
        if seen.contains(name) {
            continue;
        }
        seen.push(name);
        walk.program(name, None, 0);
    }
    let mut all = std::mem::take(&mut walk.roots);
    all.sort();
    all.dedup();
    let mut hide: Vec<PathBuf> = all
        .iter()
        .flat_map(|r| SECRET_FILES.iter().map(move |n| r.join(n)))
        .filter(|p| fs::symlink_metadata(p).is_ok())
        .collect();
    hide.sort();
    hide.dedup();
    let mut show: Vec<PathBuf> = Vec::new();
    for r in all {
        if !show.iter().any(|s| r.starts_with(s)) {
            show.push(r);
        }
    }
    Shown {
        show,
        hide,
        evidence: walk.evidence,
    }
}

impl Walk<'_> {
    /// Resolves one program (rule 1 and 2), places its steps (rule 3), and follows its
    /// interpreter (rule 4). `from`: the script whose `#!` line names it.
    fn program(&mut self, name: &str, from: Option<&Path>, depth: usize) {
        let mut ev = Evidence {
            program: name.to_string(),
            from: from.map(Path::to_path_buf),
            ..Evidence::default()
        };
        if from.is_none() && BUILTINS.contains(&name) {
            ev.why = WHY_BUILTIN.into();
            self.evidence.push(ev);
            return;
        }
        let Some(found) = self.lookup(name) else {
            ev.why = if name.contains('/') {
                WHY_NO_FILE
            } else {
                WHY_NOT_FOUND
            }
            .into();
            self.evidence.push(ev);
            return;
        };
        let chain = chain(&found);
        let last = chain.last().cloned().unwrap_or(found);
        let rustup = self.is_rustup(&last);
        let go = last.file_name().is_some_and(|n| n == "go");
        let mut roots: Vec<Root> = Vec::new();
        let mut venvs: Vec<PathBuf> = Vec::new();
        for step in &chain {
            let Some(dir) = step.parent() else { continue };
            if dir.file_name().is_some_and(|n| n == "bin") {
                venvs.extend(dir.parent().map(Path::to_path_buf));
            }
            if (self.visible)(step) || (go && *step == last) {
                continue;
            }
            let placed = self.place(Some(step), dir, rustup);
            venvs.extend(placed.iter().map(|(p, _)| p.clone()));
            roots.extend(placed);
        }
        if rustup {
            let why = WHY_RUSTUP.to_string();
            roots.extend(self.homes.of(Needs::Cargo).map(|d| (d, why.clone())));
            roots.push((self.homes.rustup.clone(), why));
        }
        if go {
            roots.extend(self.go_roots(&last));
        }
        ev.resolved = chain;
        self.finish(ev, roots);
        for v in venvs {
            self.venv(&v);
        }
        if depth >= MAX_INTERPRETERS {
            return;
        }
        if let Some((interp, rest)) = shebang(&last) {
            self.program(&interp, Some(&last), depth + 1);
            if Path::new(&interp).file_name().is_some_and(|n| n == "env") {
                if let Some(next) = env_program(&rest) {
                    self.program(next, Some(&last), depth + 1);
                }
            }
        }
    }

    /// Rule 1: the path bash runs for `name`.
    fn lookup(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() {
            return None;
        }
        if name.contains('/') {
            let p = self.directory.join(name);
            return executable(&p).then(|| p.components().collect());
        }
        self.env
            .path
            .split(':')
            .filter(|e| e.starts_with('/'))
            .map(|e| Path::new(e).join(name))
            .find(|p| executable(p))
            .map(|p| p.components().collect())
    }

    /// Whether `file` is rustup: by name, or the same file as `$CARGO_HOME/bin/rustup`.
    fn is_rustup(&self, file: &Path) -> bool {
        if file
            .file_name()
            .is_some_and(|n| n == "rustup" || n == "rustup-init")
        {
            return true;
        }
        let Ok(meta) = fs::metadata(file) else {
            return false;
        };
        self.homes.of(Needs::Cargo).any(|c| {
            fs::metadata(c.join("bin/rustup"))
                .is_ok_and(|r| r.dev() == meta.dev() && r.ino() == meta.ino())
        })
    }

    /// What `go` (its file: `go`) brings: `GOROOT` and the module cache.
    fn go_roots(&self, go: &Path) -> Vec<Root> {
        let why = WHY_GO.to_string();
        let dir = go.parent().unwrap_or(go);
        let prefix = if dir.file_name().is_some_and(|n| n == "bin") {
            dir.parent().unwrap_or(dir)
        } else {
            dir
        };
        let goroot = self
            .homes
            .goroot
            .clone()
            .unwrap_or_else(|| prefix.to_path_buf());
        vec![(goroot, why.clone()), (self.homes.modcache.clone(), why)]
    }

    /// Rule 3 (a) to (c): the roots of `file` in `dir`, or with `file` `None`, of the
    /// program directory `dir`. `rustup`: the file that runs is rustup.
    fn place(&self, file: Option<&Path>, dir: &Path, rustup: bool) -> Vec<Root> {
        let p = file.unwrap_or(dir);
        for (m, dirs) in &self.homes.managers {
            for d in dirs {
                let Some(top) = d.holding(p) else { continue };
                if let Some(roots) = self.manager_roots(m, top, p, dir, rustup) {
                    return roots;
                }
            }
        }
        let home_or_above = |x: &Path| self.homes.home.within(x);
        let kind = dir
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| matches!(*n, "bin" | "sbin" | "shims"));
        if let (Some(kind), Some(prefix)) = (kind, dir.parent()) {
            if self
                .homes
                .local
                .holding(prefix)
                .is_some_and(|l| l == prefix)
            {
                let why = format!("~/.local/{kind} and ~/.local/lib (pip --user)");
                return vec![(dir.to_path_buf(), why.clone()), (prefix.join("lib"), why)];
            }
            if home_or_above(prefix) {
                return vec![(
                    dir.to_path_buf(),
                    format!("{kind}/ only: its prefix is the home or holds it"),
                )];
            }
            return vec![(prefix.to_path_buf(), format!("the prefix of {kind}/"))];
        }
        match file {
            Some(f) if home_or_above(dir) => {
                vec![(
                    f.to_path_buf(),
                    "the file alone: its directory is the home or holds it".into(),
                )]
            }
            Some(_) => vec![(dir.to_path_buf(), "the file's directory".into())],
            None => vec![(dir.to_path_buf(), "the program directory".into())],
        }
    }

    /// Rule 3 (a): the roots of `p` (in `dir`) under `top`, the home of `m`; `None` when the
    /// manager has nothing to say of it (a file of `GOPATH` outside its `bin`).
    fn manager_roots(
        &self,
        m: &Manager,
        top: &Path,
        p: &Path,
        dir: &Path,
        rustup: bool,
    ) -> Option<Vec<Root>> {
        let whole = |why: String| Some(vec![(top.to_path_buf(), why)]);
        match m.needs {
            Needs::Cargo => whole(if rustup {
                WHY_RUSTUP.into()
            } else {
                "cargo: CARGO_HOME".into()
            }),
            Needs::Whole => whole(format!("{}: {}", m.name, m.var)),
            Needs::NodeVersion => {
                let rel: Vec<Component> = p.strip_prefix(top).ok()?.components().take(3).collect();
                match rel.as_slice() {
                    [Component::Normal(v), kind, version] if *v == "versions" => Some(vec![(
                        top.join(v).join(kind).join(version),
                        "nvm: the node version's prefix".into(),
                    )]),
                    _ => whole("nvm: NVM_DIR".into()),
                }
            }
            Needs::Asdf => {
                let why = "asdf: ASDF_DATA_DIR, ASDF_DIR and ~/.tool-versions".to_string();
                let mut out = vec![(top.to_path_buf(), why.clone())];
                out.extend(self.homes.of(Needs::Asdf).map(|d| (d, why.clone())));
                out.push((self.homes.tool_versions.clone(), why));
                Some(out)
            }
            Needs::Mise => {
                let why = "mise: MISE_DATA_DIR, MISE_CONFIG_DIR and ~/.tool-versions".to_string();
                Some(vec![
                    (top.to_path_buf(), why.clone()),
                    (self.homes.mise_config.clone(), why.clone()),
                    (self.homes.tool_versions.clone(), why),
                ])
            }
            Needs::GoBin => {
                let bin = top.join("bin");
                (dir == bin).then(|| vec![(bin, "go: GOPATH/bin".into())])
            }
        }
    }

    /// Keeps the roots that may be shown (existing, not shown already, not the home or
    /// above it), records them, and finishes the evidence with why.
    fn finish(&mut self, mut ev: Evidence, roots: Vec<Root>) {
        let mut whys: Vec<&str> = Vec::new();
        for (_, w) in &roots {
            if !whys.contains(&w.as_str()) {
                whys.push(w);
            }
        }
        ev.why = if whys.is_empty() {
            WHY_SHOWN.to_string()
        } else {
            whys.join("; ")
        };
        for (r, _) in &roots {
            if ev.roots.contains(r)
                || self.homes.home.within(r)
                || (self.visible)(r)
                || fs::symlink_metadata(r).is_err()
            {
                continue;
            }
            ev.roots.push(r.clone());
        }
        self.roots.extend(ev.roots.iter().cloned());
        self.evidence.push(ev);
    }

    /// A virtualenv at `root`: the home its `pyvenv.cfg` names is placed as a program
    /// directory, when it holds a python.
    fn venv(&mut self, root: &Path) {
        let cfg = root.join("pyvenv.cfg");
        if self.venvs.contains(&cfg) {
            return;
        }
        let Some(text) = read_bounded(&cfg, MAX_PYVENV_CFG) else {
            return;
        };
        self.venvs.push(cfg.clone());
        let text = String::from_utf8_lossy(&text);
        let Some(home) = text.lines().find_map(|l| {
            let (k, v) = l.split_once('=')?;
            k.trim().eq_ignore_ascii_case("home").then(|| v.trim())
        }) else {
            return;
        };
        let mut ev = Evidence {
            program: home.to_string(),
            from: Some(cfg),
            ..Evidence::default()
        };
        let dir = Path::new(home);
        if !dir.is_absolute()
            || !["python3", "python"]
                .iter()
                .any(|p| executable(&dir.join(p)))
        {
            ev.why = "no python in the virtualenv's home".into();
            self.evidence.push(ev);
            return;
        }
        let named = normalize(dir);
        let real = resolve(&named).target;
        ev.resolved = if named == real {
            vec![named]
        } else {
            vec![named, real]
        };
        let mut roots = Vec::new();
        for d in &ev.resolved {
            if !(self.visible)(d) {
                roots.extend(self.place(None, d, false));
            }
        }
        let roots = roots
            .into_iter()
            .map(|(r, w)| (r, format!("the virtualenv's home (pyvenv.cfg): {w}")))
            .collect();
        self.finish(ev, roots);
    }
}

/// Whether `p` leads (through symlinks) to a regular file someone may execute.
fn executable(p: &Path) -> bool {
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Rule 2: `found`, its directories resolved, then every symlink step, at most
/// [`MAX_LINKS`]; the file that runs last.
fn chain(found: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if !found.components().any(|c| c == Component::ParentDir) {
        out.push(found.to_path_buf());
    }
    let mut next = found.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let (Some(dir), Some(name)) = (next.parent(), next.file_name()) else {
            break;
        };
        let dir = resolve(dir).target;
        let here = dir.join(name);
        if out.last() != Some(&here) {
            out.retain(|p| *p != here);
            out.push(here.clone());
        }
        match fs::read_link(&here) {
            Ok(target) => next = dir.join(target),
            Err(_) => break,
        }
    }
    out
}

/// Reads at most `max` bytes of a regular file at `p` (never blocking on a FIFO or a
/// device).
fn read_bounded(p: &Path, max: u64) -> Option<Vec<u8>> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(p)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::with_capacity(usize::try_from(max).unwrap_or(0));
    file.take(max).read_to_end(&mut buf).ok()?;
    Some(buf)
}

/// The interpreter of a script and the rest of its `#!` line, when it names one by an
/// absolute path (the kernel splits the line at the first blank: the rest is one word).
fn shebang(file: &Path) -> Option<(String, String)> {
    let head = read_bounded(file, MAX_SHEBANG)?;
    let line = head.strip_prefix(b"#!")?;
    let end = line.iter().position(|b| *b == b'\n');
    let text = String::from_utf8_lossy(&line[..end.unwrap_or(line.len())]);
    let text = text.trim_start_matches([' ', '\t']);
    let (interp, rest) = match text.split_once([' ', '\t']) {
        Some((i, r)) => (i, r.trim_matches([' ', '\t'])),
        // No end of line in the bytes the kernel reads: an interpreter cut there does not run.
        None if end.is_none() && u64::try_from(head.len()).is_ok_and(|n| n >= MAX_SHEBANG) => {
            return None
        }
        None => (text, ""),
    };
    interp
        .starts_with('/')
        .then(|| (interp.to_string(), rest.to_string()))
}

/// The program `env` runs for the rest of a `#!/usr/bin/env` line: the whole rest (one
/// word for the kernel), or with `-S` its first word that is no option (with the value of
/// `-u` and `-C`) and no assignment.
fn env_program(rest: &str) -> Option<&str> {
    if let Some(split) = rest.strip_prefix("-S") {
        let mut words = split.split_whitespace();
        while let Some(w) = words.next() {
            if matches!(w, "-u" | "--unset" | "-C" | "--chdir") {
                words.next();
            } else if !w.starts_with('-') && !w.contains('=') {
                return Some(w);
            }
        }
        return None;
    }
    (!rest.is_empty() && !rest.starts_with('-') && !rest.contains([' ', '\t'])).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds `entries` under `root`: `path/` a directory, `path -> target` a symlink,
    /// `path => other` a hard link of `other` (relative to `root`), `path + TEXT` an
    /// executable file, `path = TEXT` a file. `ROOT` anywhere is `root`.
    fn build(root: &Path, entries: &[&str]) {
        for e in entries {
            let e = e.replace("ROOT", &root.to_string_lossy());
            let sep = [" -> ", " => ", " + ", " = "]
                .into_iter()
                .filter_map(|s| e.find(s).map(|i| (i, s)))
                .min();
            let (name, sep, rest) = match sep {
                Some((i, s)) => (&e[..i], s, &e[i + s.len()..]),
                None => (e.as_str(), "", ""),
            };
            let p = root.join(name.trim_end_matches('/'));
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            match sep {
                " -> " => std::os::unix::fs::symlink(rest, &p).unwrap(),
                " => " => fs::hard_link(root.join(rest), &p).unwrap(),
                " + " | " = " => {
                    fs::write(&p, rest.replace("\\n", "\n")).unwrap();
                    let mode = if sep == " + " { 0o755 } else { 0o644 };
                    fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
                }
                _ => fs::create_dir_all(&p).unwrap(),
            }
        }
    }

    /// What the system shows: `/usr` and its like, and the project.
    fn system(p: &Path) -> bool {
        ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64"]
            .iter()
            .any(|v| p.starts_with(v))
    }

    /// [`needed`] in a fresh tree of `entries` (the home `ROOT/home`, the project
    /// `ROOT/project`, shown), with `path` and `vars` (`ROOT` replaced); paths in the
    /// answer start with `ROOT`.
    fn run(entries: &[&str], path: &str, vars: &[(&str, &str)], programs: &[&str]) -> Shown {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let r = root.to_string_lossy().into_owned();
        build(&root, entries);
        fs::create_dir_all(root.join("home")).unwrap();
        fs::create_dir_all(root.join("project")).unwrap();
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.replace("ROOT", &r)))
            .collect();
        let var = move |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let path = path.replace("ROOT", &r);
        let home = root.join("home");
        let env = Env {
            path: &path,
            home: &home,
            var: &var,
        };
        let project = root.join("project");
        let visible = |p: &Path| system(p) || p.starts_with(&project);
        let programs: Vec<String> = programs.iter().map(|p| p.replace("ROOT", &r)).collect();
        let programs: Vec<&str> = programs.iter().map(String::as_str).collect();
        let shown = needed(&programs, &env, &project, &visible);
        let back = |v: &[PathBuf]| -> Vec<PathBuf> {
            v.iter()
                .map(|p| PathBuf::from(p.to_string_lossy().replace(&r, "ROOT")))
                .collect()
        };
        Shown {
            show: back(&shown.show),
            hide: back(&shown.hide),
            evidence: shown
                .evidence
                .iter()
                .map(|e| Evidence {
                    program: e.program.replace(&r, "ROOT"),
                    from: e
                        .from
                        .as_ref()
                        .map(|f| PathBuf::from(f.to_string_lossy().replace(&r, "ROOT"))),
                    resolved: back(&e.resolved),
                    roots: back(&e.roots),
                    why: e.why.clone(),
                })
                .collect(),
        }
    }

    /// One layout: its files, `PATH`, variables, the programs of the command line, and
    /// what must be shown and hidden, with the `why` of each program of the command line.
    struct Case {
        name: &'static str,
        entries: &'static [&'static str],
        path: &'static str,
        vars: &'static [(&'static str, &'static str)],
        programs: &'static [&'static str],
        show: &'static [&'static str],
        hide: &'static [&'static str],
        whys: &'static [&'static str],
    }

    const ELF: &str = "\x7fELF";
    const PY: &str = "opt/python3.12/bin/python3.12 + \x7fELF";
    const PY3: &str = "opt/python3.12/bin/python3 -> python3.12";
    const STDLIB: &str = "opt/python3.12/lib/python3.12/os.py = x";

    #[rustfmt::skip]
    const CASES: &[Case] = &[
        Case { name: "rustup proxy: ~/.cargo/bin/cargo -> rustup",
               entries: &["home/.cargo/bin/rustup + \x7fELF", "home/.cargo/bin/cargo -> rustup", "home/.cargo/registry/",
                          "home/.cargo/credentials.toml = [registry]\\ntoken = \"x\"",
                          "home/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/cargo + \x7fELF", "home/.rustup/settings.toml = x"],
               path: "ROOT/home/.cargo/bin:/usr/bin:/bin", vars: &[], programs: &["cargo"],
               show: &["ROOT/home/.cargo", "ROOT/home/.rustup"], hide: &["ROOT/home/.cargo/credentials.toml"],
               whys: &[WHY_RUSTUP] },
        Case { name: "rustup proxy as a hard link, the homes from the variables",
               entries: &["c/bin/rustup + \x7fELF", "c/bin/cargo => c/bin/rustup", "r/toolchains/x/bin/cargo + \x7fELF", "c/credentials = t",
                          "home/.rustup/"],
               path: "ROOT/c/bin:/usr/bin", vars: &[("CARGO_HOME", "ROOT/c"), ("RUSTUP_HOME", "ROOT/r")], programs: &["cargo"],
               show: &["ROOT/c", "ROOT/r"], hide: &["ROOT/c/credentials"], whys: &[WHY_RUSTUP] },
        Case { name: "a cargo-installed program, no rustup",
               entries: &["home/.cargo/bin/cargo-nextest + \x7fELF", "home/.rustup/"],
               path: "ROOT/home/.cargo/bin:/usr/bin", vars: &[], programs: &["cargo-nextest"],
               show: &["ROOT/home/.cargo"], hide: &[], whys: &["cargo: CARGO_HOME"] },
        Case { name: "nvm: npm is a link to a #!/usr/bin/env node script",
               entries: &["home/.nvm/versions/node/v20.11.0/bin/node + \x7fELF",
                          "home/.nvm/versions/node/v20.11.0/bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js",
                          "home/.nvm/versions/node/v20.11.0/lib/node_modules/npm/bin/npm-cli.js + #!/usr/bin/env node\\nrequire('../lib/cli.js')\\n",
                          "home/.nvm/versions/node/v20.11.0/etc/npmrc = //registry.npmjs.org/:_authToken=x",
                          "home/.nvm/versions/node/v18.0.0/bin/node + \x7fELF", "home/.nvm/alias/default = 20"],
               path: "ROOT/home/.nvm/versions/node/v20.11.0/bin:/usr/bin:/bin", vars: &[], programs: &["npm"],
               show: &["ROOT/home/.nvm/versions/node/v20.11.0"], hide: &["ROOT/home/.nvm/versions/node/v20.11.0/etc/npmrc"],
               whys: &["nvm: the node version's prefix"] },
        Case { name: "pyenv: a shim runs `pyenv exec`",
               entries: &["home/.pyenv/shims/python + #!/usr/bin/env bash\\nexec \"ROOT/home/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\\n",
                          "home/.pyenv/libexec/pyenv + #!/usr/bin/env bash\\n", "home/.pyenv/versions/3.12.1/bin/python3.12 + \x7fELF",
                          "home/.pyenv/version = 3.12.1"],
               path: "ROOT/home/.pyenv/shims:/usr/bin:/bin", vars: &[], programs: &["python"],
               show: &["ROOT/home/.pyenv"], hide: &[], whys: &["pyenv: PYENV_ROOT"] },
        Case { name: "pipx: ~/.local/bin/black -> its venv, whose python is elsewhere",
               entries: &["home/.local/bin/black -> ROOT/home/.local/share/pipx/venvs/black/bin/black",
                          "home/.local/share/pipx/venvs/black/bin/black + #!ROOT/home/.local/share/pipx/venvs/black/bin/python\\nimport black\\n",
                          "home/.local/share/pipx/venvs/black/bin/python -> ROOT/opt/python3.12/bin/python3.12",
                          "home/.local/share/pipx/venvs/black/pyvenv.cfg = home = ROOT/opt/python3.12/bin\\nversion = 3.12.1\\n",
                          PY, PY3, STDLIB],
               path: "ROOT/home/.local/bin:/usr/bin", vars: &[], programs: &["black"],
               show: &["ROOT/home/.local/bin", "ROOT/home/.local/share/pipx/venvs/black", "ROOT/opt/python3.12"], hide: &[],
               whys: &["~/.local/bin and ~/.local/lib (pip --user); the prefix of bin/"] },
        Case { name: "pipx, the older layout, its python in /usr",
               entries: &["home/.local/bin/black -> ROOT/home/.local/pipx/venvs/black/bin/black",
                          "home/.local/pipx/venvs/black/bin/black + #!ROOT/home/.local/pipx/venvs/black/bin/python\\n",
                          "home/.local/pipx/venvs/black/bin/python -> /usr/bin/python3",
                          "home/.local/pipx/venvs/black/pyvenv.cfg = home = /usr/bin\\n",
                          "home/.local/lib/python3.11/site-packages/"],
               path: "ROOT/home/.local/bin:/usr/bin", vars: &[], programs: &["black"],
               show: &["ROOT/home/.local/bin", "ROOT/home/.local/lib", "ROOT/home/.local/pipx/venvs/black"], hide: &[],
               whys: &["~/.local/bin and ~/.local/lib (pip --user); the prefix of bin/"] },
        Case { name: "pip --user: ~/.local/bin and its site-packages",
               entries: &["home/.local/bin/flask + #!/usr/bin/python3\\nfrom flask.cli import main\\n",
                          "home/.local/lib/python3.11/site-packages/flask/__init__.py = x", "home/.local/share/other/"],
               path: "ROOT/home/.local/bin:/usr/bin", vars: &[], programs: &["flask"],
               show: &["ROOT/home/.local/bin", "ROOT/home/.local/lib"], hide: &[], whys: &["~/.local/bin and ~/.local/lib (pip --user)"] },
        Case { name: "go: GOROOT in ~/sdk, the module cache, a program of GOPATH/bin",
               entries: &["home/sdk/go1.22.0/bin/go + \x7fELF", "home/sdk/go1.22.0/src/fmt/print.go = x", "home/go/bin/gopls + \x7fELF",
                          "home/go/pkg/mod/cache/", "home/go/src/mine/"],
               path: "ROOT/home/sdk/go1.22.0/bin:ROOT/home/go/bin:/usr/bin", vars: &[], programs: &["go", "gopls"],
               show: &["ROOT/home/go/bin", "ROOT/home/go/pkg/mod", "ROOT/home/sdk/go1.22.0"], hide: &[],
               whys: &[WHY_GO, "go: GOPATH/bin"] },
        Case { name: "go in ~/.local/go, no module cache yet",
               entries: &["home/.local/go/bin/go + \x7fELF"],
               path: "ROOT/home/.local/go/bin:/usr/bin", vars: &[], programs: &["go"],
               show: &["ROOT/home/.local/go"], hide: &[], whys: &[WHY_GO] },
        Case { name: "a project venv: its python and its pyvenv.cfg home",
               entries: &["project/venv/bin/python -> ROOT/opt/python3.12/bin/python3.12",
                          "project/venv/bin/pytest + #!ROOT/project/venv/bin/python\\nimport pytest\\n",
                          "project/venv/pyvenv.cfg = home = ROOT/opt/python3.12/bin\\n", PY, PY3, STDLIB],
               path: "/usr/bin", vars: &[], programs: &["./venv/bin/pytest"],
               show: &["ROOT/opt/python3.12"], hide: &[], whys: &[WHY_SHOWN] },
        Case { name: "a venv made with --copies, outside the project",
               entries: &["envs/tool/bin/python + \x7fELF", "envs/tool/pyvenv.cfg = home = ROOT/opt/python3.12/bin\\n", PY, PY3, STDLIB],
               path: "ROOT/envs/tool/bin:/usr/bin", vars: &[], programs: &["python"],
               show: &["ROOT/envs/tool", "ROOT/opt/python3.12"], hide: &[], whys: &["the prefix of bin/"] },
        Case { name: "a pyvenv.cfg home without a python is not shown",
               entries: &["envs/bad/bin/tool + \x7fELF", "envs/bad/pyvenv.cfg = home = ROOT/home/.ssh\\n", "home/.ssh/id_ed25519 = secret"],
               path: "ROOT/envs/bad/bin", vars: &[], programs: &["tool"],
               show: &["ROOT/envs/bad"], hide: &[], whys: &["the prefix of bin/"] },
        Case { name: "a program not found",
               entries: &[], path: "/usr/bin:/bin", vars: &[], programs: &["no-such-program-here", "./missing.sh"],
               show: &[], hide: &[], whys: &[WHY_NOT_FOUND, WHY_NO_FILE] },
        Case { name: "builtins and keywords, even when PATH has a file of the name",
               entries: &["tools/bin/echo + \x7fELF"], path: "ROOT/tools/bin:/usr/bin", vars: &[], programs: &["cd", "echo", "[", "true"],
               show: &[], hide: &[], whys: &[WHY_BUILTIN, WHY_BUILTIN, WHY_BUILTIN, WHY_BUILTIN] },
        Case { name: "./scripts/x.sh: #!/usr/bin/env python3 finds a pyenv shim",
               entries: &["project/scripts/x.sh + #!/usr/bin/env python3\\nprint(1)\\n",
                          "home/.pyenv/shims/python3 + #!/usr/bin/env bash\\nexec pyenv exec python3\\n",
                          "home/.pyenv/versions/3.12.1/bin/python3 + \x7fELF"],
               path: "ROOT/home/.pyenv/shims:/usr/bin:/bin", vars: &[], programs: &["./scripts/x.sh"],
               show: &["ROOT/home/.pyenv"], hide: &[], whys: &[WHY_SHOWN] },
        Case { name: "asdf: a shim, the installs, ~/.tool-versions",
               entries: &["home/.asdf/shims/node + #!/usr/bin/env bash\\nexec asdf exec node \"$@\"\\n",
                          "home/.asdf/installs/nodejs/20.0.0/bin/node + \x7fELF", "home/.tool-versions = nodejs 20.0.0"],
               path: "ROOT/home/.asdf/shims:/usr/bin", vars: &[], programs: &["node"],
               show: &["ROOT/home/.asdf", "ROOT/home/.tool-versions"], hide: &[],
               whys: &["asdf: ASDF_DATA_DIR, ASDF_DIR and ~/.tool-versions"] },
        Case { name: "mise: a shim is a link to mise in ~/.local/bin; its config",
               entries: &["home/.local/share/mise/shims/node -> ROOT/home/.local/bin/mise", "home/.local/bin/mise + \x7fELF",
                          "home/.local/share/mise/installs/node/20/bin/node + \x7fELF", "home/.config/mise/config.toml = [tools]\\nnode = '20'\\n",
                          "home/.config/other/"],
               path: "ROOT/home/.local/share/mise/shims:/usr/bin", vars: &[], programs: &["node"],
               show: &["ROOT/home/.config/mise", "ROOT/home/.local/bin", "ROOT/home/.local/share/mise"], hide: &[],
               whys: &["mise: MISE_DATA_DIR, MISE_CONFIG_DIR and ~/.tool-versions; ~/.local/bin and ~/.local/lib (pip --user)"] },
        Case { name: "volta", entries: &["home/.volta/bin/node + \x7fELF", "home/.volta/tools/image/node/20/bin/node + \x7fELF"],
               path: "ROOT/home/.volta/bin:/usr/bin", vars: &[], programs: &["node"],
               show: &["ROOT/home/.volta"], hide: &[], whys: &["volta: VOLTA_HOME"] },
        Case { name: "bun, with a .npmrc at its top", entries: &["home/.bun/bin/bun + \x7fELF", "home/.bun/.npmrc = //r/:_authToken=x"],
               path: "ROOT/home/.bun/bin:/usr/bin", vars: &[], programs: &["bun"],
               show: &["ROOT/home/.bun"], hide: &["ROOT/home/.bun/.npmrc"], whys: &["bun: BUN_INSTALL"] },
        Case { name: "deno from DENO_INSTALL", entries: &["opt/deno/bin/deno + \x7fELF"],
               path: "ROOT/opt/deno/bin:/usr/bin", vars: &[("DENO_INSTALL", "ROOT/opt/deno")], programs: &["deno"],
               show: &["ROOT/opt/deno"], hide: &[], whys: &["deno: DENO_INSTALL"] },
        Case { name: "sdkman: candidates/java/current is a link",
               entries: &["home/.sdkman/candidates/java/21.0.2-tem/bin/java + \x7fELF", "home/.sdkman/candidates/java/current -> 21.0.2-tem"],
               path: "ROOT/home/.sdkman/candidates/java/current/bin:/usr/bin", vars: &[], programs: &["java"],
               show: &["ROOT/home/.sdkman"], hide: &[], whys: &["sdkman: SDKMAN_DIR"] },
        Case { name: "~/bin: only the directory, never the home",
               entries: &["home/bin/tool + \x7fELF", "home/notes.txt = x"], path: "ROOT/home/bin:/usr/bin", vars: &[], programs: &["tool"],
               show: &["ROOT/home/bin"], hide: &[], whys: &["bin/ only: its prefix is the home or holds it"] },
        Case { name: "a script in the home itself: the file alone",
               entries: &["home/deploy.sh + #!/bin/sh\\n"], path: "/usr/bin", vars: &[], programs: &["ROOT/home/deploy.sh"],
               show: &["ROOT/home/deploy.sh"], hide: &[], whys: &["the file alone: its directory is the home or holds it"] },
        Case { name: "toolchains unpacked in ~/opt: with bin/ the prefix, without it the directory",
               entries: &["home/opt/zig-0.12/zig + \x7fELF", "home/opt/zig-0.12/lib/std/std.zig = x", "home/opt/node-v20/bin/node + \x7fELF"],
               path: "ROOT/home/opt/zig-0.12:ROOT/home/opt/node-v20/bin:/usr/bin", vars: &[], programs: &["zig", "node"],
               show: &["ROOT/home/opt/node-v20", "ROOT/home/opt/zig-0.12"], hide: &[], whys: &["the file's directory", "the prefix of bin/"] },
        Case { name: "PATH: empty and relative entries and files not executable are skipped",
               entries: &["project/tool + \x7fELF", "project/bin/tool + \x7fELF", "a/bin/tool = not executable", "b/bin/tool + \x7fELF"],
               path: ":.:bin:ROOT/a/bin:ROOT/b/bin", vars: &[], programs: &["tool"],
               show: &["ROOT/b"], hide: &[], whys: &["the prefix of bin/"] },
        Case { name: "what the sandbox shows already needs nothing",
               entries: &[], path: "/usr/bin:/bin", vars: &[], programs: &["ls", "/usr/bin/env", "sh"],
               show: &[], hide: &[], whys: &[WHY_SHOWN, WHY_SHOWN, WHY_SHOWN] },
        Case { name: "a symlink loop is not found",
               entries: &["loop/a -> b", "loop/b -> a"], path: "ROOT/loop", vars: &[], programs: &["a"],
               show: &[], hide: &[], whys: &[WHY_NOT_FOUND] },
        Case { name: "a manager home that is the home is never shown",
               entries: &["home/bin/cargo-x + \x7fELF"], path: "ROOT/home/bin", vars: &[("CARGO_HOME", "ROOT/home")], programs: &["cargo-x"],
               show: &[], hide: &[], whys: &["cargo: CARGO_HOME"] },
        Case { name: "interpreters are followed four deep",
               entries: &["d0/x + #!ROOT/d1/x\\n", "d1/x + #!ROOT/d2/x\\n", "d2/x + #!ROOT/d3/x\\n", "d3/x + #!ROOT/d4/x\\n",
                          "d4/x + #!ROOT/d5/x\\n", "d5/x + \x7fELF"],
               path: "/usr/bin", vars: &[], programs: &["ROOT/d0/x"],
               show: &["ROOT/d0", "ROOT/d1", "ROOT/d2", "ROOT/d3", "ROOT/d4"], hide: &[], whys: &["the file's directory"] },
        Case { name: "env -S: the first word that is no option and no assignment",
               entries: &["project/s + #!/usr/bin/env -S -u X A=b node --harmony\\n", "n/bin/node + \x7fELF"],
               path: "ROOT/n/bin:/usr/bin", vars: &[], programs: &["./s"],
               show: &["ROOT/n"], hide: &[], whys: &[WHY_SHOWN] },
    ];

    #[test]
    fn layouts() {
        assert!(!ELF.is_empty());
        for c in CASES {
            let got = run(c.entries, c.path, c.vars, c.programs);
            let paths = |v: &[&str]| -> Vec<PathBuf> { v.iter().map(PathBuf::from).collect() };
            assert_eq!(
                got.show,
                paths(c.show),
                "{}: show; evidence {:#?}",
                c.name,
                got.evidence
            );
            assert_eq!(got.hide, paths(c.hide), "{}: hide", c.name);
            let whys: Vec<&str> = got
                .evidence
                .iter()
                .filter(|e| e.from.is_none())
                .map(|e| e.why.as_str())
                .collect();
            assert_eq!(
                whys, c.whys,
                "{}: why; evidence {:#?}",
                c.name, got.evidence
            );
        }
    }

    /// The evidence of npm: its chain, then env and node from the `#!` line of npm-cli.js.
    #[test]
    fn evidence_follows_links_and_interpreters() {
        let v = "ROOT/home/.nvm/versions/node/v20";
        let cli = format!("{v}/lib/node_modules/npm/bin/npm-cli.js");
        let got = run(
            &[
                "home/.nvm/versions/node/v20/bin/node + \x7fELF",
                "home/.nvm/versions/node/v20/bin/npm -> ../lib/node_modules/npm/bin/npm-cli.js",
                "home/.nvm/versions/node/v20/lib/node_modules/npm/bin/npm-cli.js + #!/usr/bin/env node\\n",
            ],
            "ROOT/home/.nvm/versions/node/v20/bin:/usr/bin",
            &[],
            &["npm"],
        );
        let nvm = "nvm: the node version's prefix".to_string();
        let want = vec![
            Evidence {
                program: "npm".into(),
                from: None,
                resolved: vec![PathBuf::from(format!("{v}/bin/npm")), PathBuf::from(&cli)],
                roots: vec![PathBuf::from(v)],
                why: nvm.clone(),
            },
            Evidence {
                program: "/usr/bin/env".into(),
                from: Some(PathBuf::from(&cli)),
                resolved: vec![PathBuf::from("/usr/bin/env")],
                roots: vec![],
                why: WHY_SHOWN.into(),
            },
            Evidence {
                program: "node".into(),
                from: Some(PathBuf::from(&cli)),
                resolved: vec![PathBuf::from(format!("{v}/bin/node"))],
                roots: vec![PathBuf::from(v)],
                why: nvm,
            },
        ];
        assert_eq!(got.evidence, want);
        assert_eq!(got.show, vec![PathBuf::from(v)]);
    }

    #[test]
    fn at_most_max_programs_are_looked_at() {
        let entries: Vec<String> = (0..MAX_PROGRAMS + 6)
            .map(|i| format!("t/p{i:03}/prog{i:03} + \x7fELF"))
            .collect();
        let entries: Vec<&str> = entries.iter().map(String::as_str).collect();
        let programs: Vec<String> = (0..MAX_PROGRAMS + 6)
            .map(|i| format!("ROOT/t/p{i:03}/prog{i:03}"))
            .collect();
        let programs: Vec<&str> = programs.iter().map(String::as_str).collect();
        let got = run(&entries, "/usr/bin", &[], &programs);
        assert_eq!(got.show.len(), MAX_PROGRAMS);
        assert_eq!(got.evidence.len(), MAX_PROGRAMS);
        assert_eq!(
            got.show.last(),
            Some(&PathBuf::from(format!("ROOT/t/p{:03}", MAX_PROGRAMS - 1)))
        );
    }

    #[test]
    fn shebang_lines() {
        let dir = tempfile::tempdir().unwrap();
        // An interpreter cut at 256 bytes does not run; its arguments cut there do.
        let long = format!("#!/{}\n", "a".repeat(300));
        let long_args = format!("#!/bin/sh {}\n", "a".repeat(300));
        let long_rest = "a".repeat(256 - "#!/bin/sh ".len());
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("#!/usr/bin/env node\n", Some(("/usr/bin/env", "node"))),
            ("#! /bin/sh -e\nexit\n", Some(("/bin/sh", "-e"))),
            (
                "#!/usr/bin/env -S python3 -u  \n",
                Some(("/usr/bin/env", "-S python3 -u")),
            ),
            ("#!python\n", None),
            ("\x7fELF\x02\x01", None),
            ("", None),
            (long.as_str(), None),
            (long_args.as_str(), Some(("/bin/sh", long_rest.as_str()))),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let p = dir.path().join(format!("s{i}"));
            fs::write(&p, text).unwrap();
            let got = shebang(&p);
            assert_eq!(
                got.as_ref().map(|(a, b)| (a.as_str(), b.as_str())),
                *want,
                "{text:?}"
            );
        }
        assert_eq!(shebang(dir.path()), None, "a directory");
        // A FIFO is not opened for reading in a way that waits for a writer.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert_eq!(shebang(&fifo), None, "a FIFO");
        assert_eq!(read_bounded(&fifo, MAX_PYVENV_CFG), None, "a FIFO");
        assert_eq!(shebang(Path::new("/nonexistent/x")), None);
    }

    #[test]
    fn env_programs() {
        let cases: &[(&str, Option<&str>)] = &[
            ("node", Some("node")),
            ("python3 -u", None),
            ("", None),
            ("-i node", None),
            ("-S node --flag", Some("node")),
            ("-S -i -u HOME PATH=/x deno run", Some("deno")),
            ("-S -C /tmp ruby", Some("ruby")),
            ("-S", None),
        ];
        for (rest, want) in cases {
            assert_eq!(env_program(rest), *want, "{rest:?}");
        }
    }

    /// This machine's rustup, when there is one: the proxy needs both of its homes.
    #[test]
    fn the_real_rustup() {
        let home = Path::new("/root");
        if !home.join(".cargo/bin/cargo").exists() {
            return;
        }
        let var = |_: &str| None;
        let env = Env {
            path: "/root/.cargo/bin:/usr/bin:/bin",
            home,
            var: &var,
        };
        let got = needed(&["cargo"], &env, Path::new("/tmp"), &system);
        assert_eq!(
            got.show,
            vec![
                PathBuf::from("/root/.cargo"),
                PathBuf::from("/root/.rustup")
            ]
        );
        let credentials = home.join(".cargo/credentials.toml");
        assert_eq!(got.hide.contains(&credentials), credentials.exists());
        assert!(
            got.hide
                .iter()
                .all(|h| got.show.iter().any(|s| h.starts_with(s))),
            "{:?}",
            got.hide
        );
        assert_eq!(got.evidence[0].why, WHY_RUSTUP);
    }
}
