//! A person's decisions (R71–R76): authorize, defer, skip, override, confirm. A decision needs a
//! person: it is taken only from a terminal where the gap id was typed back, and recorded with the
//! operating-system user and the terminal. An agent's shell has no terminal, so an agent cannot
//! decide for the person; a decision asked for without one is recorded as pending, never applied.

use std::path::Path;

use super::diff;
use super::own_paths;
use super::recorded::{recorded_judging, recorded_proposal};
use super::verify::applied::{checked_change, surface_change};
use crate::config::{BlastRadius, Config};
use crate::ledger::{self, Event, LedgerError, Witness};

/// Who stands behind a decision, as the front end found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Presence {
    /// Standard input is a terminal: the operating-system user, the terminal's name, and what the
    /// person typed back when asked for the gap id.
    Terminal { user: String, terminal: String, typed: String },
    /// Nobody can answer here, and why (standard input is not a terminal; `--unattended`).
    Absent(String),
}

/// Why no person stood behind a decision.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unwitnessed {
    #[error(
        "a person's decision is taken only at a terminal, typed back by the person: {0}; it is recorded as pending for a person to take"
    )]
    Absent(String),
    #[error("the id typed back (`{typed}`) is not `{subject}`: nothing recorded")]
    Mistyped { typed: String, subject: String },
}

impl Presence {
    /// The witness a decision on `subject` is recorded with, or why it cannot be taken: only a
    /// person at a terminal who typed `subject` back.
    pub fn witness(&self, subject: &str) -> Result<Witness, Unwitnessed> {
        match self {
            Presence::Absent(why) => Err(Unwitnessed::Absent(why.clone())),
            Presence::Terminal { typed, .. } if typed.trim() != subject => {
                Err(Unwitnessed::Mistyped { typed: crate::text::short(typed.trim()), subject: subject.to_string() })
            }
            Presence::Terminal { user, terminal, .. } => Ok(Witness { user: user.clone(), terminal: terminal.clone() }),
        }
    }
}

/// A person's decision on a gap (the loop's human-decision actions; R71–R76). `by` names the
/// person who decided (the approver).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Raise the authority for this gap's fix, bound to the diff as it is now.
    Authorize {
        by: String,
        reason: String,
    },
    Defer {
        by: String,
        reason: String,
    },
    Skip {
        by: String,
        reason: String,
    },
    /// Confirm an entry gate (a P0 brief rule below High confidence) of a stage (R57); the
    /// decision's subject is the stage, not a gap.
    Confirm {
        rule: String,
        by: String,
        reason: String,
    },
    /// Override a tier-2 contradiction (never a tier-1 hold), on a basis from the closed list,
    /// optionally with a counter-artifact (a file in the repository).
    Override {
        evidence: String,
        basis: ledger::OverrideBasis,
        artifact: Option<String>,
        by: String,
        reason: String,
    },
}

/// Records a person's decision on `gap` through the one writer. Returns what was recorded.
pub fn record_decision(
    root: &Path,
    cfg: &Config,
    gap: &str,
    d: &Decision,
    witness: Witness,
    now: u64,
) -> Result<String, LedgerError> {
    let witness = Some(witness);
    let dir = ledger::dir_of(root, &cfg.settings);
    let (header, state, records) =
        ledger::load(&dir)?.ok_or_else(|| LedgerError::Refused("the loop has never run here: no ledger".into()))?;
    if let Decision::Confirm { rule, by, reason } = d {
        let event = Event::GateConfirmed {
            stage: gap.into(),
            rule: rule.clone(),
            by: by.clone(),
            reason: reason.clone(),
            witness: witness.clone(),
        };
        ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
        return Ok(format!("entry gate `{rule}` of stage `{gap}` confirmed"));
    }
    if let (Decision::Authorize { by, reason }, Some(j)) = (d, state.judging.as_ref().filter(|j| j.id == gap)) {
        return accept_judging(root, cfg, &dir, &header, j, by, reason, witness, now);
    }
    if !state.gaps.contains_key(gap) {
        return Err(LedgerError::Refused(format!("no gap `{gap}` in the ledger")));
    }
    let event = match d {
        Decision::Confirm { .. } => unreachable!("handled above"),
        Decision::Authorize { by, reason } => {
            let (base, write_set, _, radius) = recorded_proposal(&records, gap)
                .ok_or_else(|| LedgerError::Refused(format!("gap `{gap}` has no proposal")))?;
            // bound to the diff as it is now, at the radius that diff rates (never below the proposal's)
            let own = own_paths(cfg);
            let judging = recorded_judging(&records, gap);
            let (hash, mut level) = match checked_change(root, cfg, &base, &write_set, None, Some(&judging)) {
                Ok(Ok(c)) => (c.change.hash.clone(), radius.max(c.radius)),
                _ => (diff::hash(root, Some(&base), &write_set, &own), radius),
            };
            // a changed public surface rates the diff hard to reverse (as verify rated it)
            if let Ok(Some(idx)) = crate::index::load(root)
                && surface_change(root, &idx, &state).map_err(|e| LedgerError::Io(e.to_string()))?.is_some()
            {
                level = level.max(BlastRadius::HardToReverse);
            }
            Event::AuthorizationRaised {
                gap: gap.into(),
                diff_hash: hash,
                level,
                by: by.clone(),
                reason: reason.clone(),
                witness,
            }
        }
        Decision::Defer { by, reason } => {
            Event::GapDeferred { gap: gap.into(), by: by.clone(), reason: reason.clone(), witness }
        }
        Decision::Skip { by, reason } => {
            Event::GapSkipped { gap: gap.into(), by: by.clone(), reason: reason.clone(), witness }
        }
        Decision::Override { evidence, basis, artifact, by, reason } => {
            if let Some(a) = artifact
                && !root.join(a).is_file()
            {
                return Err(LedgerError::Refused(format!(
                    "the counter-artifact `{a}` is not a file in the repository"
                )));
            }
            Event::Overridden {
                gap: gap.into(),
                evidence: evidence.clone(),
                basis: *basis,
                by: by.clone(),
                reason: reason.clone(),
                artifact: artifact.clone(),
                witness,
            }
        }
    };
    ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
    Ok(match event {
        Event::AuthorizationRaised { level, diff_hash, .. } => {
            format!("authority raised to {} for `{gap}`, bound to diff {}", level.name(), &diff_hash[..12])
        }
        Event::GapDeferred { .. } => format!("gap `{gap}` deferred"),
        Event::GapSkipped { .. } => format!("gap `{gap}` skipped; the loop picks another"),
        _ => format!("tier-2 evidence on `{gap}` overridden"),
    })
}

impl Decision {
    /// The decision's action: `authorize`, `defer`, `skip`, `confirm` or `override`.
    pub fn action(&self) -> &'static str {
        match self {
            Decision::Authorize { .. } => "authorize",
            Decision::Defer { .. } => "defer",
            Decision::Skip { .. } => "skip",
            Decision::Confirm { .. } => "confirm",
            Decision::Override { .. } => "override",
        }
    }

    /// Who asked for it and why.
    fn said(&self) -> (&str, &str) {
        match self {
            Decision::Authorize { by, reason }
            | Decision::Defer { by, reason }
            | Decision::Skip { by, reason }
            | Decision::Confirm { by, reason, .. }
            | Decision::Override { by, reason, .. } => (by, reason),
        }
    }
}

/// Records a decision asked for where no person could give it (`why`), so a person sees what
/// waits for them. Nothing is recorded where the loop never ran or the gap is unknown.
pub fn record_pending(
    root: &Path,
    cfg: &Config,
    gap: &str,
    d: &Decision,
    why: &str,
    now: u64,
) -> Result<bool, LedgerError> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let Some((header, state, _)) = ledger::load(&dir)? else { return Ok(false) };
    let known = match d {
        Decision::Confirm { .. } => state.stages.contains_key(gap),
        _ => state.gaps.contains_key(gap),
    };
    if !known {
        return Ok(false);
    }
    let (by, reason) = d.said();
    let event = Event::DecisionPending {
        gap: gap.into(),
        action: d.action().into(),
        by: by.into(),
        reason: reason.into(),
        why: why.into(),
    };
    ledger::append(&dir, &header, std::slice::from_ref(&event), now)?;
    Ok(true)
}

/// A person accepts the judging change `j` the loop holds on: fixes are judged from the working
/// tree as it is now (kept as a commit whose parent is the base), and the hold lapses.
#[allow(clippy::too_many_arguments)]
fn accept_judging(
    root: &Path,
    cfg: &Config,
    dir: &Path,
    header: &ledger::Header,
    j: &ledger::JudgingHold,
    by: &str,
    reason: &str,
    witness: Option<Witness>,
    now: u64,
) -> Result<String, LedgerError> {
    // the change accepted is the change the loop held on, not one made since
    match super::judging::drift(root, cfg, &state_with(j), &[]) {
        super::judging::Drift::Changed(c) if c.fingerprint == j.fingerprint => {}
        _ => {
            return Err(LedgerError::Refused(format!(
                "the judging change `{}` is no longer what the working tree holds: run `andon loop` to see what waits",
                j.id
            )));
        }
    }
    let base = super::judging::accepted_tree(root, cfg, &j.base).map_err(|e| LedgerError::Io(e.to_string()))?;
    let event =
        Event::JudgingAccepted { id: j.id.clone(), base: base.clone(), by: by.into(), reason: reason.into(), witness };
    ledger::append(dir, header, std::slice::from_ref(&event), now)?;
    Ok(format!("judging change `{}` accepted: fixes are judged from `{}` on", j.id, &base[..base.len().min(12)]))
}

/// A state whose only base is the held change's, to judge the working tree against it again.
fn state_with(j: &ledger::JudgingHold) -> ledger::State {
    ledger::State { base: Some((0, j.base.clone())), ..ledger::State::default() }
}
