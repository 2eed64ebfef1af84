//! TEMPORARY stand-in until the listing lands (replaced on merge).
pub fn list_allowed_commands(_scope: &crate::scope::Scope, platform: crate::scope::Platform) -> String {
    format!("Platform: {}\n", platform.as_str())
}
