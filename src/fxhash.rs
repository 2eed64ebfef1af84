//! rustc's Fx hash, for the engine's own tables: keys are short (paths, pattern text, cache
//! keys), hashed on every lookup, where SipHash costs more than the lookups save. The keys of
//! every table are the user's (scope patterns, scope files) or bounded by one command (at
//! most 64 KiB), so crafted collisions can at worst slow one decision.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher: eight bytes at a time, rotate, xor, multiply.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Builds [`FxHasher`]s.
pub type FxBuild = BuildHasherDefault<FxHasher>;

/// A `HashMap` with the Fx hash.
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn equal_keys_hash_alike_and_tails_count() {
        let b = FxBuild::default();
        assert_eq!(b.hash_one("/work/src/main.rs"), b.hash_one(String::from("/work/src/main.rs")));
        // The last partial chunk is hashed: keys differing only there differ.
        assert_ne!(b.hash_one(b"abcdefgh1".as_slice()), b.hash_one(b"abcdefgh2".as_slice()));
        assert_ne!(b.hash_one(b"".as_slice()), b.hash_one(b"\0".as_slice()));
    }
}
