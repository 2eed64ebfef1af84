//! What the model is shown of an output: bounded and truncated ([`truncate`]), with the
//! values of the secrets a command did not get hidden ([`redact`]), and a command's output
//! captured as it is printed, its beginning and end kept ([`capture`]), from a command the
//! module starts ([`spawn`]). Uses no other layer.

pub mod capture;
pub mod redact;
pub mod spawn;
pub mod truncate;
