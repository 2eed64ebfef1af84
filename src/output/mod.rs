//! What the model is shown of an output: bounded and truncated ([`truncate`]), with the
//! values of the secrets a command did not get hidden ([`redact`]). Uses no other layer;
//! [`crate::run`] captures a command's output and shows it through these.

pub mod redact;
pub mod truncate;
