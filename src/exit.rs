//! Exit codes are API: one table, documented in README.md, each triggered by a test. The command
//! line exits with them; the MCP server reports them with each tool result.

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

    /// The exit code of `andon verify --gap`: the halt condition its evidence stands on.
    pub fn of_verified(v: &crate::api::work::Verified) -> Exit {
        use crate::andon_loop::VerifyStop;
        use crate::ledger::andon_rule::Condition;
        match &v.result {
            Ok(o) => crate::api::work::condition_of(&o.evidence).map_or(Exit::Success, Exit::halt),
            Err(VerifyStop::Scope(_)) => Exit::Findings,
            Err(VerifyStop::Authorization(..) | VerifyStop::Judged(..)) => Exit::halt(Condition::Authorization),
            Err(VerifyStop::Refused(_)) => Exit::Error,
            Err(VerifyStop::Blocked(_)) => Exit::halt(Condition::BlockedByEnvironment),
        }
    }

    /// The exit code of `andon verify --request`.
    pub fn of_request(r: &crate::api::work::RequestVerified) -> Exit {
        use crate::andon_loop::request::Stop;
        match &r.result {
            Ok(o) => o.condition.map_or(Exit::Success, Exit::halt),
            Err(Stop::Scope(..)) => Exit::Findings,
            Err(Stop::Refused(_)) => Exit::Error,
        }
    }

    /// The exit code of `andon verify --audit`: strong 0, weak 1, inconclusive needs a person.
    pub fn of_audit(a: &crate::api::work::Audited) -> Exit {
        match &a.result {
            Ok(o) if o.strength == "strong" => Exit::Success,
            Ok(o) if o.strength == "weak" => Exit::Findings,
            Ok(_) => Exit::halt(crate::ledger::andon_rule::Condition::NeedsHuman),
            Err(_) => Exit::Error,
        }
    }

    /// The exit code of `andon propose`: written 0; another gap than the loop's picked one is a
    /// usage error; an entry gate awaits a person; any other refusal is a finding.
    pub fn of_proposed(p: &crate::api::work::Proposed) -> Exit {
        use crate::api::work::Proposed;
        match p {
            Proposed::Refused { picked: Some(_), .. } => Exit::Error,
            Proposed::Refused { gated: true, .. } => Exit::halt(crate::ledger::andon_rule::Condition::EntryGate),
            Proposed::Refused { .. } => Exit::Findings,
            Proposed::Written { .. } => Exit::Success,
        }
    }

    /// The exit code of `andon check`: a stale exception is a configuration to fix (2), a
    /// blocking finding fails the gate (1).
    pub fn of_check(r: &crate::check::CheckReport) -> Exit {
        if !r.stale_exceptions.is_empty() {
            Exit::Error
        } else if r.blocking() > 0 {
            Exit::Findings
        } else {
            Exit::Success
        }
    }

    /// The exit code of `andon why`: no chain is a finding.
    pub fn of_why(r: &crate::ops::WhyReport) -> Exit {
        if r.chain.is_some() { Exit::Success } else { Exit::Findings }
    }

    /// The exit code of `andon preflight`: a capability not ready is a finding.
    pub fn of_preflight(p: &crate::api::work::Preflight) -> Exit {
        if p.worst() == crate::preflight::Readiness::NotReady { Exit::Findings } else { Exit::Success }
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
