//! TEMPORARY stand-in until the seeds/001 rules land (replaced on merge).
use crate::scope::{CommandRule, Platform};

pub struct RuleViolation {
    pub reason: &'static str,
    pub message: String,
    pub rule: String,
}

pub fn check_rule(_rule: &CommandRule, _name: &str, _args: &[String], _platform: Platform) -> Result<(), RuleViolation> {
    Ok(())
}

pub fn check_argv(_scope: &crate::scope::Scope, _platform: Platform, _command: &str, _args: &[String]) -> Result<(), RuleViolation> {
    Ok(())
}
