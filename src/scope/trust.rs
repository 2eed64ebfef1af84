//! Approval of scope documents: a document applies only when the user approved its exact
//! content.
//!
//! The user's approvals (a list of truenames and SHA-256 hashes) are kept by the elisp layer
//! outside every scope; a request passes, with each scope document it names, the hash the
//! user approved for it (`{"file": F, "sha256": H}`) and `"check_trust": true`. The engine
//! hashes the bytes it parses ([`crate::scope::config`] reads each document once), so the rules
//! that apply are exactly the rules the user saw: a document changed after its approval, by
//! another program or a `git pull`, is refused ([`crate::ScopeError::UntrustedScope`]) and
//! nothing runs under it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::{Result, ScopeError};

/// The SHA-256 of `bytes`, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Checks that every scope document of a loaded scope (its `hashes`: each document with the
/// SHA-256 of the bytes its rules were parsed from) was parsed from the content the user
/// approved: `approved` gives, for each document the request named, the approved hash (or
/// `None` when the user approved none). A document with no entry in `approved` is refused
/// too: only what the request vouches for applies.
pub fn verify(hashes: &[(PathBuf, Arc<str>)], approved: &[(&Path, Option<&str>)]) -> Result<()> {
    for (file, hash) in hashes {
        verify_one(file, hash, approved)?;
    }
    Ok(())
}

/// Checks one document, `file` whose bytes hash to `hash`, against `approved`.
pub fn verify_one(file: &Path, hash: &str, approved: &[(&Path, Option<&str>)]) -> Result<()> {
    let want = approved
        .iter()
        .find(|(f, _)| *f == file)
        .and_then(|(_, h)| *h);
    match want {
        Some(w) if w.eq_ignore_ascii_case(hash) => Ok(()),
        _ => Err(ScopeError::UntrustedScope {
            file: file.display().to_string(),
            sha256: hash.to_string(),
            approved: want.map(str::to_string),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_texts() {
        for (text, want) in [
            (
                "",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
            (
                "abc",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
        ] {
            assert_eq!(sha256_hex(text.as_bytes()), want, "{text:?}");
        }
    }
}
