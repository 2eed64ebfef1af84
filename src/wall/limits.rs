//! The resources one call may use: memory (all its processes together), processes at
//! once, CPU seconds of each process, and the size of a file it writes. Their defaults,
//! how the scope sets them (`sandbox: {limits: ...}`), how the kernel is told (`setrlimit`),
//! and the sentence a result carries when one of them stopped the command.
//!
//! The defaults are meant never to bother a build (a `cargo build` of a large workspace
//! runs a few dozen processes and a few GiB) and to stop a fork bomb or a memory bomb long
//! before the machine or Emacs suffers.

use serde::{Deserialize, Deserializer, Serialize};

/// The default number of processes one call may run at once.
pub const DEFAULT_PROCESSES: u64 = 1024;
/// The default CPU seconds of each process of a call (the call's timeout ends it sooner).
pub const DEFAULT_CPU_SECONDS: u64 = 3600;
/// The default largest file a call may write: 16 GiB.
pub const DEFAULT_FILE_SIZE: u64 = 16 << 30;
/// The smallest memory limit the defaults give: 1 GiB.
const MIN_DEFAULT_MEMORY: u64 = 1 << 30;

/// `sandbox.limits` as the scope writes it: each key unset means its default.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct LimitSettings {
    /// Bytes of memory all the call's processes may hold together (`8G`, `512M`, a number).
    #[serde(deserialize_with = "size", skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Processes the call may run at once.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// CPU seconds each process may use.
    #[serde(deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub cpu: Option<u64>,
    /// The largest file the call may write, in bytes (`1G`, a number).
    #[serde(deserialize_with = "size", skip_serializing_if = "Option::is_none")]
    pub file_size: Option<u64>,
}

/// The limits of one call, every one set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Bytes of resident memory of all the call's processes together; also each process's
    /// data limit (`RLIMIT_DATA`), so that one process cannot outrun the count.
    pub memory: u64,
    /// Processes at once, the supervisor's own not counted.
    pub processes: u64,
    /// CPU seconds of each process (`RLIMIT_CPU`).
    pub cpu: u64,
    /// Bytes of the largest file written (`RLIMIT_FSIZE`).
    pub file_size: u64,
    /// The kernel's limit on the user's processes (`RLIMIT_NPROC`), set from the
    /// processes limit when the call starts ([`user_process_limit`]).
    pub user_processes: Option<u64>,
}

impl Limits {
    /// The limits `settings` give on a machine with `physical` bytes of memory: the memory
    /// default is half of it, at least 1 GiB.
    pub fn resolve(settings: &LimitSettings, physical: u64) -> Limits {
        Limits {
            memory: settings
                .memory
                .unwrap_or((physical / 2).max(MIN_DEFAULT_MEMORY)),
            processes: settings.processes.unwrap_or(DEFAULT_PROCESSES),
            cpu: settings.cpu.unwrap_or(DEFAULT_CPU_SECONDS),
            file_size: settings.file_size.unwrap_or(DEFAULT_FILE_SIZE),
            user_processes: None,
        }
    }
}

/// The machine's memory in bytes, from `sysconf`; 0 when unknown.
pub fn physical_memory() -> u64 {
    // SAFETY: sysconf takes a constant and returns a number.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages <= 0 || size <= 0 {
        return 0;
    }
    (pages as u64).saturating_mul(size as u64)
}

/// Sets the kernel's per-process limits of `limits` on the calling process, for the
/// command it is about to become: CPU seconds (SIGXCPU at the limit, SIGKILL a second
/// later), file size (SIGXFSZ), data (an allocation beyond it fails), and no core dumps.
/// Only system calls: safe between `fork` and `exec`.
pub fn apply(limits: &Limits) -> std::io::Result<()> {
    let set = |resource, soft: u64, hard: u64| -> std::io::Result<()> {
        let r = libc::rlimit {
            rlim_cur: soft as libc::rlim_t,
            rlim_max: hard as libc::rlim_t,
        };
        // SAFETY: setrlimit with a valid pointer to an initialised struct.
        if unsafe { libc::setrlimit(resource, &r) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    };
    // A limit is only lowered: a hard limit already below ours stays.
    let lowered = |resource, want: u64| -> (u64, u64) {
        let mut cur = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit into a valid struct.
        let ok = unsafe { libc::getrlimit(resource, &mut cur) } == 0;
        let hard = if ok && cur.rlim_max != libc::RLIM_INFINITY {
            cur.rlim_max.min(want)
        } else {
            want
        };
        (want.min(hard), hard)
    };
    let (soft, hard) = lowered(libc::RLIMIT_CPU, limits.cpu.saturating_add(1));
    set(libc::RLIMIT_CPU, soft.min(limits.cpu), hard)?;
    let (soft, hard) = lowered(libc::RLIMIT_FSIZE, limits.file_size);
    set(libc::RLIMIT_FSIZE, soft, hard)?;
    let (soft, hard) = lowered(libc::RLIMIT_DATA, limits.memory);
    set(libc::RLIMIT_DATA, soft, hard)?;
    if let Some(n) = limits.user_processes {
        let (soft, hard) = lowered(libc::RLIMIT_NPROC, n);
        set(libc::RLIMIT_NPROC, soft, hard)?;
    }
    set(libc::RLIMIT_CORE, 0, 0)
}

/// The processes of the user `uid` on this machine now: the entries of `/proc` it owns.
pub fn processes_of(uid: u32) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .count() as u64
}

/// The kernel's limit on the user's processes (`RLIMIT_NPROC`) for a call that may run
/// `processes` at once: what the user runs now, the call's limit, and a margin so that the
/// supervisor's count trips first and names the limit. None for root, whom the kernel does
/// not hold to it: there the supervisor's count alone stops a fork bomb.
pub fn user_process_limit(processes: u64) -> Option<u64> {
    // SAFETY: getuid takes nothing and cannot fail.
    let uid = unsafe { libc::getuid() };
    (uid != 0).then(|| {
        processes_of(uid)
            .saturating_add(processes)
            .saturating_add(16)
    })
}

/// Which limit stopped a command, with what was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// More processes at once than the limit.
    Processes { limit: u64, seen: u64 },
    /// More resident memory, all processes together, than the limit.
    Memory { limit: u64, used: u64 },
    /// A process of it came near its memory limit, and the command failed: an allocation
    /// beyond the limit failed, most likely.
    MemoryNear { limit: u64, peak: u64 },
    /// A process used up its CPU seconds (SIGXCPU).
    Cpu { limit: u64 },
    /// A process wrote past the largest file size (SIGXFSZ).
    FileSize { limit: u64 },
}

/// `n` bytes as a person reads them: `512 MiB`, `16 GiB`, `900 bytes`.
pub fn human(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if n >= size {
            let whole = n / size;
            let tenth = (n % size) * 10 / size;
            return if tenth == 0 {
                format!("{whole} {unit}")
            } else {
                format!("{whole}.{tenth} {unit}")
            };
        }
    }
    format!("{n} bytes")
}

impl Stopped {
    /// The scope key that sets this limit.
    pub fn key(self) -> &'static str {
        match self {
            Stopped::Processes { .. } => "sandbox.limits.processes",
            Stopped::Memory { .. } | Stopped::MemoryNear { .. } => "sandbox.limits.memory",
            Stopped::Cpu { .. } => "sandbox.limits.cpu",
            Stopped::FileSize { .. } => "sandbox.limits.file_size",
        }
    }

    /// The sentence the result ends with: which limit stopped the command, what was seen,
    /// and how to raise it.
    pub fn message(self) -> String {
        let what = match self {
            Stopped::Processes { limit, seen } => {
                format!("its process limit stopped it: {seen} processes at once, over the limit of {limit}; every process of the command was killed")
            }
            Stopped::Memory { limit, used } => {
                format!("its memory limit stopped it: its processes held {} together, over the limit of {}; every process of the command was killed", human(used), human(limit))
            }
            Stopped::MemoryNear { limit, peak } => {
                format!("its memory limit most likely stopped it: a process of it reached {} and an allocation past the limit of {} fails", human(peak), human(limit))
            }
            Stopped::Cpu { limit } => {
                format!("its CPU limit stopped it: a process used its {limit} CPU seconds")
            }
            Stopped::FileSize { limit } => format!(
                "its file size limit stopped it: a process wrote past {} in one file",
                human(limit)
            ),
        };
        format!(
            "[gptel-scope: {what}. If the task needs more, ask the user to raise {} in the scope.]",
            self.key()
        )
    }
}

/// A size: a whole number of bytes, or one with a binary unit (`512M`, `8G`, `1T`, `64K`,
/// also `8GiB`, `8GB`).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

#[derive(Deserialize)]
#[serde(untagged)]
enum SizeValue {
    Number(u64),
    Text(String),
}

fn positive<E: serde::de::Error>(n: u64, what: &str) -> Result<Option<u64>, E> {
    if n == 0 {
        Err(E::custom(format!("{what} must be at least 1")))
    } else {
        Ok(Some(n))
    }
}

fn size<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<SizeValue>::deserialize(d)? {
        None => Ok(None),
        Some(SizeValue::Number(n)) => positive(n, "a size"),
        Some(SizeValue::Text(t)) => match parse_size(&t) {
            Some(n) => positive(n, "a size"),
            None => Err(serde::de::Error::custom(format!(
                "`{t}` is not a size: write bytes, or a number with K, M, G or T (512M, 8G)"
            ))),
        },
    }
}

fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    match Option::<u64>::deserialize(d)? {
        None => Ok(None),
        Some(n) => positive(n, "a count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        let cases: &[(&str, Option<u64>)] = &[
            ("512", Some(512)),
            ("64K", Some(64 << 10)),
            ("512M", Some(512 << 20)),
            ("8G", Some(8 << 30)),
            ("8GiB", Some(8 << 30)),
            ("8 GB", Some(8 << 30)),
            ("1t", Some(1 << 40)),
            ("", None),
            ("G", None),
            ("8X", None),
            ("-1G", None),
            ("99999999999T", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_size(text), *want, "{text}");
        }
    }

    #[test]
    fn settings_read_from_yaml_and_defaults_filled() {
        let s: LimitSettings = serde_yaml::from_str("{memory: 2G, processes: 64}").unwrap();
        assert_eq!(
            s,
            LimitSettings {
                memory: Some(2 << 30),
                processes: Some(64),
                cpu: None,
                file_size: None
            }
        );
        let l = Limits::resolve(&s, 24 << 30);
        assert_eq!(
            l,
            Limits {
                memory: 2 << 30,
                processes: 64,
                cpu: DEFAULT_CPU_SECONDS,
                file_size: DEFAULT_FILE_SIZE,
                user_processes: None
            }
        );
        let d = Limits::resolve(&LimitSettings::default(), 24 << 30);
        assert_eq!(d.memory, 12 << 30);
        assert_eq!(
            Limits::resolve(&LimitSettings::default(), 1 << 30).memory,
            1 << 30
        );
        for (yaml, error) in [
            ("{memory: 0}", "a size must be at least 1"),
            ("{memory: lots}", "`lots` is not a size"),
            ("{processes: 0}", "a count must be at least 1"),
            ("{threads: 3}", "unknown field `threads`"),
        ] {
            let e = serde_yaml::from_str::<LimitSettings>(yaml)
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{yaml}: {e}");
        }
    }

    #[test]
    fn messages_name_the_limit_and_its_key() {
        let cases = [
            (
                Stopped::Processes {
                    limit: 64,
                    seen: 70,
                },
                "its process limit stopped it: 70 processes at once, over the limit of 64",
                "sandbox.limits.processes",
            ),
            (
                Stopped::Memory {
                    limit: 1 << 30,
                    used: 1288490189,
                },
                "its processes held 1.2 GiB together, over the limit of 1 GiB",
                "sandbox.limits.memory",
            ),
            (
                Stopped::MemoryNear {
                    limit: 1 << 30,
                    peak: 600 << 20,
                },
                "a process of it reached 600 MiB",
                "sandbox.limits.memory",
            ),
            (
                Stopped::Cpu { limit: 5 },
                "a process used its 5 CPU seconds",
                "sandbox.limits.cpu",
            ),
            (
                Stopped::FileSize { limit: 1 << 20 },
                "wrote past 1 MiB in one file",
                "sandbox.limits.file_size",
            ),
        ];
        for (s, text, key) in cases {
            let m = s.message();
            assert!(
                m.starts_with("[gptel-scope: ")
                    && m.contains(text)
                    && m.ends_with(&format!("raise {key} in the scope.]")),
                "{m}"
            );
        }
    }
}
