//! Exit codes are API: one table, documented in README.md, each triggered by a test.

use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked.
    Success = 0,
    /// The command ran and found something that fails it (findings, refusals).
    Findings = 1,
    /// andon could not run: bad usage, bad configuration, I/O error.
    Error = 2,
    /// The persisted index is stale against the working tree (or missing).
    StaleIndex = 3,
    /// `enabled = false` in the settings: the command stopped before doing anything.
    Disabled = 4,
    /// The loop halted: a person must decide (authorize, defer, skip).
    NeedsHuman = 14,
}

impl Exit {
    pub const ALL: [Exit; 6] =
        [Exit::Success, Exit::Findings, Exit::Error, Exit::StaleIndex, Exit::Disabled, Exit::NeedsHuman];

    pub fn code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct() {
        let mut v: Vec<u8> = Exit::ALL.iter().map(|e| *e as u8).collect();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), Exit::ALL.len());
    }
}
