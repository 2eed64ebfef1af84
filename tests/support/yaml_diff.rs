//! The contract of the YAML fast path (src/yaml_fast.rs), checked against serde_yaml: when
//! the fast path gives a value, serde_yaml accepts the same text and gives the same value,
//! mappings in the same order. Shared by tests/yaml_fast.rs and the `yaml` fuzz target.
#![allow(dead_code)]

use serde_yaml::Value;

/// What the fast path did with a text that keeps the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It gave serde_yaml's value.
    Handled,
    /// It left the text to serde_yaml.
    Declined,
}

/// Checks the contract on `text`. `Err`: the fast path accepted a text serde_yaml rejects,
/// or gave a different value.
pub fn check(text: &str) -> Result<Outcome, String> {
    let Some(fast) = gptel_scope::yaml_fast::parse(text) else {
        return Ok(Outcome::Declined);
    };
    match serde_yaml::from_str::<Value>(text) {
        Ok(slow) if same(&fast, &slow) => Ok(Outcome::Handled),
        Ok(slow) => Err(format!("different values for {text:?}:\n  fast path: {fast:?}\n  serde_yaml: {slow:?}")),
        Err(e) => Err(format!("the fast path accepted a text serde_yaml rejects ({e}): {text:?}\n  fast path: {fast:?}")),
    }
}

/// Equality that also requires mapping entries in the same order (`Value`'s own `==` on
/// mappings ignores order, and the order is what `merge` and error messages follow).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Mapping(x), Value::Mapping(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|((k1, v1), (k2, v2))| same(k1, k2) && same(v1, v2))
        }
        (Value::Sequence(x), Value::Sequence(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        // Tagged values are never built by the fast path: any tag is a difference.
        (Value::Tagged(_), _) | (_, Value::Tagged(_)) => false,
        _ => a == b,
    }
}
