//! `ledger.md`: the human rendering of the log, produced from it alone and checked against it.
//! Repository text quoted here (summaries, claims) is escaped so it cannot forge structure.

use std::fmt::Write;

use super::{Event, Header, Record, State, Wire};

/// Text for one Markdown table cell or list line: the one Markdown escaping (R123).
fn cell(s: &str) -> String {
    crate::text::markdown(s)
}

/// A commit id shortened for a line: its first 12 characters.
fn short_id(commit: &str) -> String {
    cell(&commit.chars().take(12).collect::<String>())
}

/// The whole `ledger.md`: heading and counters, then stages, wires, gaps, evidence and history.
pub fn render(h: &Header, state: &State, records: &[Record]) -> String {
    let mut o = String::new();
    heading(&mut o, h, state);
    let _ = writeln!(
        o,
        "head: `{}` after record {} (each record links to the log before it; `{}` anchors the head)",
        super::chain::Chain::over(h, records).link(),
        records.last().map_or(0, |r| r.seq),
        super::chain::LEDGER_REF
    );
    let _ = writeln!(o);
    stages(&mut o, state);
    wires(&mut o, state);
    gaps(&mut o, state);
    evidence(&mut o, state);
    history(&mut o, records);
    o
}

/// The title, where the text comes from, and the pass, cycle and sub-cycle counters.
fn heading(o: &mut String, h: &Header, state: &State) {
    let _ = writeln!(o, "# andon ledger: {}", cell(&h.repo));
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Rendered from `ledger.jsonl` (format {}, created by andon {}); do not edit: `andon ledger check` compares the two.",
        h.andon_ledger,
        cell(&h.andon)
    );
    let _ = writeln!(o);
    let _ = writeln!(o, "passes: {} · cycles: {} · sub-cycles: {}", state.passes, state.cycles, state.sub_cycles);
    let _ = writeln!(o);
}

/// The stages table.
fn stages(o: &mut String, state: &State) {
    let _ = writeln!(o, "## Stages");
    let _ = writeln!(o);
    let _ = writeln!(o, "| stage | root | confidence | source | incoming | outgoing |");
    let _ = writeln!(o, "|---|---|---|---|---|---|");
    for (name, s) in &state.stages {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} |",
            cell(name),
            cell(&s.root),
            cell(&s.confidence),
            cell(&s.source),
            cell(&s.incoming.join(", ")),
            cell(&s.outgoing.join(", "))
        );
    }
    let _ = writeln!(o);
}

/// The wires table: status, the evidence behind it, and how often each was reopened.
fn wires(o: &mut String, state: &State) {
    let _ = writeln!(o, "## Wires");
    let _ = writeln!(o);
    let _ = writeln!(o, "| wire | status | evidence | reopened |");
    let _ = writeln!(o, "|---|---|---|---|");
    for (w, s) in &state.wires {
        let status = s.status.as_str();
        let _ = writeln!(o, "| {} | {status} | {} | {} |", cell(&w.to_string()), cell(&s.evidence), s.reopened.len());
    }
    let _ = writeln!(o);
}

/// The gaps table.
fn gaps(o: &mut String, state: &State) {
    let _ = writeln!(o, "## Gaps");
    let _ = writeln!(o);
    let _ = writeln!(o, "| gap | kind | stage | location | status | blast radius | resolved by | summary |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|");
    for g in state.gaps.values() {
        let loc = match g.location.line {
            Some(l) => format!("{}:{l}", g.location.path),
            None => g.location.path.clone(),
        };
        let _ = writeln!(
            o,
            "| {} | {:?} | {} | {} | {} | {} | {} | {} |",
            cell(&g.id),
            g.kind,
            cell(&g.stage),
            cell(&loc),
            g.status.name(),
            g.blast_radius.map(|b| b.name()).unwrap_or("-"),
            cell(g.resolved_by.as_deref().unwrap_or("-")),
            cell(&g.summary)
        );
    }
    let _ = writeln!(o);
}

/// The evidence list: each record with its claim, evidence, fix and references.
fn evidence(o: &mut String, state: &State) {
    let _ = writeln!(o, "## Evidence");
    let _ = writeln!(o);
    for e in state.evidence.values() {
        let _ = writeln!(
            o,
            "- {} on {}: {:?} by {}{}{}",
            cell(&e.id),
            cell(&e.wire.to_string()),
            e.verdict,
            cell(&e.approach),
            e.tier.map(|t| format!(", tier {t}")).unwrap_or_default(),
            if e.hold { ", non-overridable hold" } else { "" }
        );
        let _ = writeln!(o, "  - claim: {}", cell(&e.claim));
        let _ = writeln!(o, "  - evidence: {}", cell(&e.evidence));
        if let Some(f) = &e.fix {
            let _ = writeln!(o, "  - fix: {}", cell(f));
        }
        for r in &e.references {
            let _ = writeln!(o, "  - reference: {}", cell(r));
        }
    }
    let _ = writeln!(o);
}

/// The history: one numbered line per record.
fn history(o: &mut String, records: &[Record]) {
    let _ = writeln!(o, "## History");
    let _ = writeln!(o);
    let mut cycle = 1;
    for r in records {
        let line = history_line(&r.event, &mut cycle);
        let _ = writeln!(o, "{}. {line}", r.seq);
    }
}

/// One event in words; `cycle` is the cycle in progress, advanced when a cycle converges.
fn history_line(e: &Event, cycle: &mut u32) -> String {
    match e {
        Event::StageRecorded { stage, .. } => format!("stage `{}` recorded", cell(stage)),
        Event::GapOpened { gap, .. } => format!("gap `{}` opened", cell(gap)),
        Event::GapRestated { gap, summary, .. } => format!("gap `{}` restated: {}", cell(gap), cell(summary)),
        Event::ProposalRecorded { gap, blast_radius, .. } => {
            format!("proposal for `{}` ({})", cell(gap), blast_radius.name())
        }
        Event::Halted { gap, condition, .. } => format!("halted on `{}`: {}", cell(gap), cell(condition)),
        Event::AuthorizationRaised { gap, level, by, .. } => {
            format!("authority raised to {} for `{}` by {}", level.name(), cell(gap), cell(by))
        }
        Event::Overridden { gap, evidence, basis, by, .. } => format!(
            "tier-2 evidence `{}` on `{}` overridden by {} ({})",
            cell(evidence),
            cell(gap),
            cell(by),
            basis.name()
        ),
        Event::GapDeferred { gap, by, .. } => format!("gap `{}` deferred by {}", cell(gap), cell(by)),
        Event::GapSkipped { gap, by, .. } => format!("gap `{}` skipped by {}", cell(gap), cell(by)),
        Event::BaseRecorded { commit, why } => format!("fixes are judged from `{}`: {}", short_id(commit), cell(why)),
        Event::JudgingChanged { id, files, .. } => format!(
            "judging change `{}` held for a person: {}",
            cell(id),
            cell(&files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", "))
        ),
        Event::JudgingUndone { id } => format!("judging change `{}` undone", cell(id)),
        Event::JudgingAccepted { id, base, by, .. } => {
            format!(
                "judging change `{}` accepted by {}; fixes are judged from `{}`",
                cell(id),
                cell(by),
                short_id(base)
            )
        }
        Event::InputsTaken { digests } => {
            format!("{} input file(s) taken in by this write, each by its digest (never taken twice)", digests.len())
        }
        Event::LedgerChained { unlinked } => {
            format!("the ledger is linked from here on ({unlinked} earlier record(s) covered by this link)")
        }
        Event::DecisionPending { gap, action, by, .. } => {
            format!("{} of `{}` asked for by {}: waits for a person at a terminal", cell(action), cell(gap), cell(by))
        }
        Event::StageContext { stage, obligations, advisory, .. } => format!(
            "stage `{}` context: {} obligation(s), {} advisory note(s)",
            cell(stage),
            obligations.len(),
            advisory.len()
        ),
        Event::GateConfirmed { stage, rule, by, .. } => {
            format!("entry gate `{}` of `{}` confirmed by {}", cell(rule), cell(stage), cell(by))
        }
        Event::EvidenceRecorded { evidence } => format!("evidence `{}` recorded", cell(&evidence.id)),
        Event::EvidenceAudited { evidence, tool, strength, .. } => {
            format!("evidence `{}` audited by {}: {}", cell(evidence), cell(tool), cell(strength))
        }
        Event::WireStatusChanged { wire, evidence, .. } => {
            format!("wire {} changed on `{}`", cell(&wire.to_string()), cell(evidence))
        }
        Event::GapClosed { gap, evidence } => format!("gap `{}` closed by `{}`", cell(gap), cell(evidence)),
        Event::GapVanished { gap, .. } => format!("gap `{}` vanished from the scan (not proven)", cell(gap)),
        Event::SubCycle { from_stage, to_stage, backtrack_depth, .. } => {
            let depth = backtrack_depth.map(|d| format!(" (backtrack_depth {d})")).unwrap_or_default();
            format!("sub-cycle from `{}` back to `{}`{depth}", cell(from_stage), cell(to_stage))
        }
        Event::Thrashing { wire, reopens, thrash_threshold, .. } => format!(
            "wire {} thrashing: reopened {reopens} times (thrash_threshold {thrash_threshold})",
            cell(&wire.to_string())
        ),
        Event::PassClosed { pass, gap, verdict, advanced, .. } => {
            format!("Pass {pass} (cycle {cycle}) closed on `{}`: {verdict:?}, advanced: {advanced}", cell(gap))
        }
        Event::CycleConverged {
            cycle: c,
            passes,
            sub_cycles,
            constraint,
            intent,
            hardened,
            environment_blocked,
            overrides,
            ..
        } => {
            *cycle = c + 1;
            let word = if *hardened { "hardened" } else { "converged" };
            let except = if environment_blocked.is_empty() {
                String::new()
            } else {
                let name = |w: &Wire| match w.producer == w.consumer {
                    true => format!("stage {}", cell(&w.producer)),
                    false => cell(&w.to_string()),
                };
                let wires: Vec<String> = environment_blocked.iter().map(name).collect();
                format!(" except {} environment-blocked wire(s) ({})", environment_blocked.len(), wires.join(", "))
            };
            let mut line = format!("Cycle {c} {word}{except} after {passes} passes, {sub_cycles} sub-cycles");
            if !overrides.is_empty() {
                let each: Vec<String> = overrides
                    .iter()
                    .map(|o| {
                        format!(
                            "`{}` (evidence `{}`, {}, by {})",
                            cell(&o.gap),
                            cell(&o.evidence),
                            o.basis.name(),
                            cell(&o.by)
                        )
                    })
                    .collect();
                line.push_str(&format!("; overrides: {}", each.join(", ")));
            }
            if let Some(k) = constraint {
                line.push_str(&format!("; constraint: {}", cell(k)));
            }
            if let Some(i) = intent {
                line.push_str(&format!("; next cycle: {} ({})", cell(&i.next), cell(&i.because)));
            }
            line
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cell_is_one_line_of_inert_text() {
        assert_eq!(super::cell("a\nb|c"), "a\\\\u{a}b\\|c");
        // a right-to-left override shows escaped, never reordering what a reader sees
        let c = super::cell("gap \u{202e}detavorp");
        assert!(!c.contains('\u{202e}') && c.contains("202e"), "{c}");
    }
}
