//! Rendering of one `andon loop` step, in the order the session prints (R117): the stream map
//! (first run or changed), the ledger's state, this step (gap picked and why), the suspected
//! injections of the index it ran on (R123: reported, never obeyed), and the next action.

use std::io::{self, Write};

use super::{inline, verdict_line};
use crate::andon_loop::Session;

/// The verdict token of a step.
pub fn outcome(s: &Session) -> &'static str {
    s.verdict().token()
}

pub fn report(w: &mut dyn Write, step: &crate::api::work::LoopStep, json_out: bool) -> io::Result<()> {
    if json_out {
        return super::json(w, step);
    }
    let (s, injections) = (&step.session, &step.injections);
    if s.stream_changed {
        writeln!(w, "stream ({} stages, {} wires):", s.stream.stages.len(), s.stream.wires.len())?;
        for st in &s.stream.stages {
            writeln!(w, "  {}  {}  [{}, {}]", inline(&st.name), inline(&st.root), st.confidence, st.source)?;
        }
        for wi in &s.stream.wires {
            writeln!(w, "  {} -> {}  [{}]", inline(&wi.producer), inline(&wi.consumer), wi.confidence)?;
        }
        writeln!(w, "  order: {}", inline(&s.stream.order.join(" -> ")))?;
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
        writeln!(w, "  {}: {st}", inline(&wire.to_string()))?;
    }
    match &s.constraint {
        Some(c) => {
            writeln!(w, "constraint: {} ({}; rule: {})", inline(&c.wire.to_string()), inline(&c.detail), c.rule)?
        }
        None => writeln!(w, "constraint: none")?,
    }
    match &s.cursor {
        Some(c) => writeln!(w, "cursor: stage {}", inline(c))?,
        None => writeln!(w, "cursor: none (no stage)")?,
    }
    writeln!(w, "gaps in the cursor's stage and outgoing wire: {} ({} new)", s.found.len(), s.recorded)?;
    for c in &s.found {
        let loc = match c.location.line {
            Some(l) => format!("{}:{l}", c.location.path),
            None => c.location.path.clone(),
        };
        writeln!(
            w,
            "  {}  {:<7} {}  {}",
            c.id,
            crate::api::work::gap_kind_name(c.kind),
            inline(&loc),
            inline(&c.summary)
        )?;
    }
    if let Some((g, rule)) = &s.picked {
        writeln!(w, "picked: {g} ({})", inline(rule))?;
    }
    if !injections.is_empty() {
        super::injections(w, injections, "", "  ", false)?;
    }
    writeln!(w, "next: {}", inline(&s.next.detail))?;
    verdict_line(w, outcome(s), s.next.gap.as_deref().unwrap_or(""))
}
