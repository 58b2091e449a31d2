//! Rendering of one `andon loop` step, in the order the session prints (R117): the stream map
//! (first run or changed), the ledger's state, this step (gap picked and why), the suspected
//! injections of the index it ran on (R123: reported, never obeyed), and the next action.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{SCHEMA_VERSION, inline, verdict_line};
use crate::andon_loop::Session;
use crate::ledger::GapKind;
use crate::ops::Injection;

/// The verdict token of a step.
pub fn outcome(s: &Session) -> &'static str {
    s.verdict().token()
}

fn kind(k: GapKind) -> &'static str {
    match k {
        GapKind::Bug => "bug",
        GapKind::Feature => "feature",
        GapKind::Wire => "wire",
    }
}

pub fn json_doc(s: &Session, injections: &[Injection]) -> Value {
    json!({
        "schema_version": SCHEMA_VERSION,
        "stream_changed": s.stream_changed,
        "stream": {
            "stages": s.stream.stages.iter().map(|x| json!({ "name": x.name, "root": x.root,
                "confidence": x.confidence, "source": x.source })).collect::<Vec<_>>(),
            "wires": s.stream.wires.iter().map(|w| json!({ "producer": w.producer, "consumer": w.consumer,
                "confidence": w.confidence })).collect::<Vec<_>>(),
            "order": s.stream.order,
        },
        "ledger": { "passes": s.passes, "cycles": s.cycles,
            "wires": s.wires.iter().map(|(w, st)| json!({ "producer": w.producer, "consumer": w.consumer, "status": st })).collect::<Vec<_>>() },
        "constraint": s.constraint.as_ref().map(|c| json!({ "producer": c.wire.producer, "consumer": c.wire.consumer, "rule": c.rule, "detail": c.detail })),
        "cursor": s.cursor,
        "gaps": s.found.iter().map(|c| json!({ "id": c.id, "kind": kind(c.kind), "stage": c.stage,
            "wire": c.wire.as_ref().map(|w| json!({ "producer": w.producer, "consumer": w.consumer })),
            "path": c.location.path, "line": c.location.line, "summary": c.summary, "source": c.source })).collect::<Vec<_>>(),
        "recorded": s.recorded,
        "notes": s.notes,
        "delta": s.delta,
        "ledger_seq": s.ledger_seq,
        "picked": s.picked.as_ref().map(|(g, rule)| json!({ "gap": g, "rule": rule })),
        "suspected_injections": super::injections_json(injections),
        "next": { "action": s.next.action.token(), "gap": s.next.gap, "detail": s.next.detail },
        "verdict": { "outcome": outcome(s) },
    })
}

pub fn report(w: &mut dyn Write, s: &Session, injections: &[Injection], json_out: bool) -> io::Result<()> {
    if json_out {
        return writeln!(w, "{}", serde_json::to_string_pretty(&json_doc(s, injections)).expect("json"));
    }
    if s.stream_changed {
        writeln!(w, "stream ({} stages, {} wires):", s.stream.stages.len(), s.stream.wires.len())?;
        for st in &s.stream.stages {
            writeln!(w, "  {}  {}  [{}, {}]", inline(&st.name), inline(&st.root), st.confidence, st.source)?;
        }
        for wi in &s.stream.wires {
            writeln!(w, "  {} -> {}  [{}]", wi.producer, wi.consumer, wi.confidence)?;
        }
        writeln!(w, "  order: {}", s.stream.order.join(" -> "))?;
    }
    if !s.delta.is_empty() {
        writeln!(w, "ledger since the last run:")?;
        for d in &s.delta {
            writeln!(w, "  {}", inline(d))?;
        }
    }
    for n in &s.notes {
        writeln!(w, "{}", inline(n))?;
    }
    writeln!(w, "ledger: {} passes, {} cycles", s.passes, s.cycles)?;
    for (wire, st) in &s.wires {
        writeln!(w, "  {wire}: {st}")?;
    }
    match &s.constraint {
        Some(c) => writeln!(w, "constraint: {} ({}; rule: {})", c.wire, c.detail, c.rule)?,
        None => writeln!(w, "constraint: none")?,
    }
    match &s.cursor {
        Some(c) => writeln!(w, "cursor: stage {c}")?,
        None => writeln!(w, "cursor: none (no stage)")?,
    }
    writeln!(w, "gaps in the cursor's stage and outgoing wire: {} ({} new)", s.found.len(), s.recorded)?;
    for c in &s.found {
        let loc = match c.location.line {
            Some(l) => format!("{}:{l}", c.location.path),
            None => c.location.path.clone(),
        };
        writeln!(w, "  {}  {:<7} {}  {}", c.id, kind(c.kind), inline(&loc), inline(&c.summary))?;
    }
    if let Some((g, rule)) = &s.picked {
        writeln!(w, "picked: {g} ({rule})")?;
    }
    if !injections.is_empty() {
        super::injections(w, injections, "", "  ", false)?;
    }
    writeln!(w, "next: {}", inline(&s.next.detail))?;
    verdict_line(w, outcome(s), s.next.gap.as_deref().unwrap_or(""))
}
