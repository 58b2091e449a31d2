//! Exit codes are API: one table, documented in README.md, each triggered by a test. Each
//! command's outcome in `api` names its code from this table; the command line exits with it, the
//! MCP server reports it with each tool result.

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
    /// Halted: the proof refuted the fix.
    Refuted = 10,
    /// Halted: the fix's blast radius exceeds the authorization ceiling.
    Authorization = 11,
    /// Halted: a tier-1 contradiction from the fresh index; nothing but changed code clears it.
    Tier1Hold = 12,
    /// Halted: a tier-2 contradiction; only a recorded override clears it.
    Tier2Hold = 13,
    /// Halted: a person must decide (authorize, defer, skip), or the proof could not decide.
    NeedsHuman = 14,
    /// Halted: the wire is still unproven.
    Unproven = 15,
    /// The loop spent its pass budget (`--max-passes`) before it needed anyone.
    Budget = 16,
    /// Halted: an entry gate of the stage (a P0 brief rule below High confidence) awaits a
    /// person's `andon confirm`.
    EntryGate = 17,
    /// Halted: the proof cannot run here (a tool it needs is absent); not retried until the
    /// capability changes, and a person's recorded deferral moves past it.
    BlockedByEnvironment = 18,
}

impl Exit {
    pub const ALL: [Exit; 14] = [
        Exit::Success,
        Exit::Findings,
        Exit::Error,
        Exit::StaleIndex,
        Exit::Disabled,
        Exit::Refuted,
        Exit::Authorization,
        Exit::Tier1Hold,
        Exit::Tier2Hold,
        Exit::NeedsHuman,
        Exit::Unproven,
        Exit::Budget,
        Exit::EntryGate,
        Exit::BlockedByEnvironment,
    ];

    /// The exit code of a halt condition of the andon rule.
    pub fn halt(c: crate::ledger::andon_rule::Condition) -> Exit {
        use crate::ledger::andon_rule::Condition;
        match c {
            Condition::Refuted => Exit::Refuted,
            Condition::Authorization => Exit::Authorization,
            Condition::Tier1Hold => Exit::Tier1Hold,
            Condition::Tier2Hold => Exit::Tier2Hold,
            Condition::NeedsHuman => Exit::NeedsHuman,
            Condition::Unproven => Exit::Unproven,
            Condition::EntryGate => Exit::EntryGate,
            Condition::BlockedByEnvironment => Exit::BlockedByEnvironment,
        }
    }

    /// The exit code of a loop step's verdict.
    pub fn of_step(v: crate::andon_loop::StepVerdict) -> Exit {
        use crate::andon_loop::StepVerdict;
        match v {
            StepVerdict::Halted(c) => Exit::halt(c),
            StepVerdict::NeedsHuman => Exit::NeedsHuman,
            StepVerdict::FixTheCode => Exit::Findings,
            StepVerdict::Budget => Exit::Budget,
            StepVerdict::AwaitingProposal
            | StepVerdict::AwaitingVerification
            | StepVerdict::Hardened
            | StepVerdict::Converged
            | StepVerdict::Clear => Exit::Success,
        }
    }

    /// The code's name, as README's table of exit codes gives it.
    pub fn name(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::Findings => "findings",
            Exit::Error => "error",
            Exit::StaleIndex => "stale-index",
            Exit::Disabled => "disabled",
            Exit::Refuted => "halt:refuted",
            Exit::Authorization => "halt:authorization",
            Exit::Tier1Hold => "halt:tier1-hold",
            Exit::Tier2Hold => "halt:tier2-hold",
            Exit::NeedsHuman => "halt:needs-human",
            Exit::Unproven => "halt:unproven",
            Exit::Budget => "budget",
            Exit::EntryGate => "halt:entry-gate",
            Exit::BlockedByEnvironment => "halt:blocked-by-environment",
        }
    }

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
