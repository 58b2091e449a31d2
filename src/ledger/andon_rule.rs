//! The andon rule (R71–R87): one pure function of ledger state decides whether the
//! cursor may advance past a gap's wire, or halts with the condition that stops it. The ledger
//! fold runs it on every `pass_closed` event that claims an advance, so an advance the rule does
//! not allow cannot be written, and a hand-forged one fails `andon ledger check`.

use super::{BlastRadius, Evidence, GapStatus, Reason, State, Verdict};

/// Why the loop halts. Each has its own verdict token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// The proof refuted the fix.
    Refuted,
    /// The fix's blast radius exceeds the authorization ceiling and no authority was raised for
    /// this gap and this diff.
    Authorization,
    /// A contradiction from the fresh persisted index: nothing clears it but a re-index of changed
    /// code showing it gone.
    Tier1Hold,
    /// A live-structural or heuristic contradiction: cleared only by a recorded override with a
    /// structured reason.
    Tier2Hold,
    /// The proof could not decide (unknown), or the state needs a person's decision.
    NeedsHuman,
    /// No proof yet, or the proof left the wire unproven.
    Unproven,
    /// Ingest mode: the gap's stage has an entry gate (a P0 rule below High confidence) no person
    /// has confirmed (R57).
    EntryGate,
    /// The proof cannot run here: a capability it needs is absent (decision 8). Not retried until
    /// the capability changes; a person's recorded deferral moves past it.
    BlockedByEnvironment,
}

impl Condition {
    /// The condition a `halted` record names (its token, or `authorization`).
    pub fn from_recorded(s: &str) -> Option<Condition> {
        [
            Condition::Refuted,
            Condition::Authorization,
            Condition::Tier1Hold,
            Condition::Tier2Hold,
            Condition::NeedsHuman,
            Condition::Unproven,
            Condition::EntryGate,
            Condition::BlockedByEnvironment,
        ]
        .into_iter()
        .find(|c| c.token() == s || (s == "authorization" && *c == Condition::Authorization))
    }

    /// What a proof that stands on this condition is: its verdict, its tier and whether it is a
    /// tier-1 hold (the inverse of reading a condition off evidence).
    pub fn verdict(self) -> (Verdict, Option<u8>, bool) {
        match self {
            Condition::Tier1Hold => (Verdict::Refuted, Some(1), true),
            Condition::Tier2Hold => (Verdict::Refuted, Some(2), false),
            Condition::Refuted => (Verdict::Refuted, None, false),
            Condition::Unproven => (Verdict::Unproven, None, false),
            Condition::Authorization
            | Condition::NeedsHuman
            | Condition::EntryGate
            | Condition::BlockedByEnvironment => (Verdict::Unknown, None, false),
        }
    }

    pub fn token(self) -> &'static str {
        match self {
            Condition::Refuted => "halt:refuted",
            Condition::Authorization => "halt:authorization",
            Condition::Tier1Hold => "halt:tier1-hold",
            Condition::Tier2Hold => "halt:tier2-hold",
            Condition::NeedsHuman => "halt:needs-human",
            Condition::Unproven => "halt:unproven",
            Condition::EntryGate => "halt:entry-gate",
            Condition::BlockedByEnvironment => "halt:blocked-by-environment",
        }
    }

    /// The condition an unknown verdict stands on, by its reason: a proof that cannot run here
    /// is blocked by the environment; one that ran and could not show the fix (timed out, not
    /// shown, contested) leaves it unproven; anything else waits for a person.
    pub fn of_unknown(reason: Option<Reason>) -> Condition {
        match reason {
            Some(Reason::UnprovableHere) => Condition::BlockedByEnvironment,
            Some(Reason::TimedOut | Reason::NotShown | Reason::Contested) => Condition::Unproven,
            Some(Reason::NotDiscriminating | Reason::NotPinning) | None => Condition::NeedsHuman,
        }
    }
}

/// The condition evidence `e` stands on (`None`: it proves).
pub fn condition_of(e: &Evidence) -> Option<Condition> {
    match e.verdict {
        Verdict::Proven => None,
        _ if e.hold => Some(Condition::Tier1Hold),
        Verdict::Refuted if e.tier == Some(2) => Some(Condition::Tier2Hold),
        Verdict::Refuted => Some(Condition::Refuted),
        Verdict::Unproven => Some(Condition::Unproven),
        Verdict::Unknown => Some(Condition::of_unknown(e.reason)),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ruling {
    Advance,
    Halt(Condition, String),
}

/// May the cursor advance past gap `gap`? `ceiling` is the authorization level in force;
/// `diff_hash` identifies the applied change (authority raised for another diff does not count).
pub fn rule_on(state: &State, gap: &str, ceiling: BlastRadius, diff_hash: Option<&str>) -> Ruling {
    let halt = |c: Condition, why: String| Ruling::Halt(c, why);
    let Some(g) = state.gaps.get(gap) else {
        return halt(Condition::NeedsHuman, format!("no gap `{gap}` was opened"));
    };
    // Tier 1 first: a standing hold on the gap's wire, or a hold among the gap's own evidence
    // that no later proof on a re-index superseded. No authority, override or flag reaches here.
    if let Some(w) = &g.wire
        && let Some(ws) = state.wires.get(w)
        && state.evidence.get(&ws.evidence).is_some_and(|e| e.hold)
    {
        return halt(Condition::Tier1Hold, format!("the wire {w} stands on tier-1 hold `{}`", ws.evidence));
    }
    let latest = state.gap_evidence.get(gap).and_then(|ids| ids.last()).and_then(|id| state.evidence.get(id));
    if let Some(e) = latest
        && e.hold
    {
        return halt(Condition::Tier1Hold, format!("evidence `{}` is a tier-1 hold", e.id));
    }
    // An entry gate of the stage no person confirmed: nothing there may advance (R57).
    if let Some(c) = state.context.get(&g.stage) {
        let open: Vec<&str> = c.open_gates().iter().map(|o| o.id.as_str()).collect();
        if !open.is_empty() {
            return halt(
                Condition::EntryGate,
                format!("stage `{}` has unconfirmed entry gate(s): {}", g.stage, open.join(", ")),
            );
        }
    }
    // The ceiling, at the proposal and again at the actual diff.
    // A wire gap the loop tried to prove itself, without a proposal, changed nothing: its radius
    // is the smallest, and its proof's verdict decides (evidence of an applied fix has a radius).
    let radius = match (g.blast_radius, g.kind) {
        (Some(r), _) => r,
        (None, super::GapKind::Wire) if latest.is_some_and(|e| e.verdict == Verdict::Proven || e.radius.is_none()) => {
            BlastRadius::LocalReversible
        }
        (None, _) => {
            return halt(Condition::NeedsHuman, format!("gap `{gap}` has no proposal (no blast radius)"));
        }
    };
    // the actual diff's rating, recorded with the proof, counts too (R75)
    let radius = latest.and_then(|e| e.radius).map_or(radius, |r| r.max(radius));
    if radius > ceiling {
        let raised = state
            .authority
            .get(gap)
            .is_some_and(|rs| rs.iter().any(|(hash, level)| *level >= radius && diff_hash.is_some_and(|d| d == hash)));
        if !raised {
            return halt(
                Condition::Authorization,
                format!(
                    "the fix is {} and the ceiling is {}; a person must raise the authority for this gap and this diff",
                    radius.name(),
                    ceiling.name()
                ),
            );
        }
    }
    // a gap deferred because its proof could not run here advances on a proof that ran since
    // (decision 8); any other set aside by a person stays aside
    if (g.status == GapStatus::Deferred && g.blocked.is_none()) || g.status == GapStatus::Skipped {
        return halt(Condition::NeedsHuman, format!("gap `{gap}` is {}", g.status.name()));
    }
    let Some(e) = latest else {
        return halt(Condition::Unproven, format!("gap `{gap}` has no evidence"));
    };
    match e.verdict {
        Verdict::Proven => Ruling::Advance,
        Verdict::Refuted if e.tier == Some(2) => {
            if state.overrides.get(gap).is_some_and(|ids| ids.contains(&e.id)) {
                Ruling::Advance
            } else {
                halt(
                    Condition::Tier2Hold,
                    format!("evidence `{}` is a tier-2 contradiction; only a recorded override clears it", e.id),
                )
            }
        }
        Verdict::Refuted => halt(Condition::Refuted, format!("evidence `{}` refutes the fix", e.id)),
        Verdict::Unproven => halt(Condition::Unproven, format!("evidence `{}` leaves the wire unproven", e.id)),
        Verdict::Unknown => {
            let c = Condition::of_unknown(e.reason);
            let why = match (e.reason, &e.capability) {
                (Some(Reason::UnprovableHere), Some(cap)) => {
                    format!("evidence `{}` cannot run here: `{}` is not available", e.id, cap.name)
                }
                (Some(r), _) => {
                    format!("evidence `{}` could not decide ({}): {}", e.id, r.name(), crate::text::short(&e.claim))
                }
                (None, _) => format!("evidence `{}` could not decide", e.id),
            };
            halt(c, why)
        }
    }
}
