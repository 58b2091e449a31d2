//! Rendering of `andon status`: text, JSON and Markdown of one board.

use std::io::{self, Write};

use super::verdict_line;
use crate::status::{Board, Injections};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFormat {
    Text,
    Json,
    Markdown,
}

fn counts<K: std::fmt::Display>(m: &std::collections::BTreeMap<K, usize>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

/// How a report is laid out: text or Markdown, with the one escaping of repository text for each.
#[derive(Clone, Copy)]
struct Style {
    md: bool,
    h2: &'static str,
    item: &'static str,
}

impl Style {
    fn of(md: bool) -> Style {
        if md { Style { md, h2: "## ", item: "- " } } else { Style { md, h2: "", item: "  " } }
    }

    /// Repository text on one line of the report.
    fn esc(self, s: &str) -> String {
        if self.md { crate::text::markdown(s) } else { super::inline(s).into_owned() }
    }

    /// An id or name set off from the text: in backticks as text; escaped, without a code span (in
    /// which an escape would not hold), in Markdown.
    fn code(self, s: &str) -> String {
        if self.md { self.esc(s) } else { format!("`{}`", self.esc(s)) }
    }
}

/// The suspected-injection section (R123): the list, or why there is none to show.
fn injections(w: &mut dyn Write, inj: &Injections, st: Style) -> io::Result<()> {
    let Style { md, h2, item } = st;
    match inj {
        Injections::Listed(list) => super::injections(w, list, h2, item, md),
        Injections::NoIndex => {
            writeln!(w, "{h2}{}: unknown", super::INJECTIONS_HEADING)?;
            writeln!(w, "{item}no index yet: `andon index`, `check` or `loop` builds one (status never indexes)")
        }
        Injections::Unreadable(why) => {
            writeln!(w, "{h2}{}: unknown", super::INJECTIONS_HEADING)?;
            writeln!(w, "{item}the stored index cannot be read ({}): run `andon index --rebuild`", st.esc(why))
        }
    }
}

/// Writes the board (or that the loop never ran) as text, JSON or Markdown.
pub fn report(w: &mut dyn Write, status: &crate::api::work::Status, format: StatusFormat) -> io::Result<()> {
    if format == StatusFormat::Json {
        return super::json(w, status);
    }
    let (b, ledger, inj) = (status.board.as_ref(), status.ledger.as_str(), &status.injections);
    let md = format == StatusFormat::Markdown;
    let st = Style::of(md);
    let Some(b) = b else {
        return never_run(w, ledger, inj, st);
    };
    writeln!(w, "{}andon status", if md { "# " } else { "" })?;
    holds(w, b, st)?;
    stages(w, b, st)?;
    summary(w, b, st)?;
    decisions(w, b, st)?;
    injections(w, inj, st)?;
    writeln!(w, "{}next", st.h2)?;
    writeln!(w, "{}{}", st.item, st.esc(&b.next.detail))?;
    if md {
        return Ok(());
    }
    let outcome = if b.holds.is_empty() { "shown" } else { "holding" };
    verdict_line(w, outcome, &format!("{} tier-1 hold(s)", b.holds.len()))
}

/// The report when there is no ledger: the loop never ran here.
fn never_run(w: &mut dyn Write, ledger: &str, inj: &Injections, st: Style) -> io::Result<()> {
    if st.md {
        writeln!(w, "# andon status\n\nThe loop has never run here (no ledger at {}).\n", st.esc(ledger))?;
        injections(w, inj, st)?;
        writeln!(w, "\n**Next:** run `andon loop`.")?;
        return Ok(());
    }
    writeln!(w, "the loop has never run here (no ledger at {})", st.esc(ledger))?;
    injections(w, inj, st)?;
    writeln!(w, "next: run `andon loop`")?;
    verdict_line(w, "never-run", "")
}

/// The standing tier-1 holds, when there are any.
fn holds(w: &mut dyn Write, b: &Board, st: Style) -> io::Result<()> {
    let Style { h2, item, .. } = st;
    if b.holds.is_empty() {
        return Ok(());
    }
    writeln!(w, "{h2}STANDING TIER-1 HOLDS ({})", b.holds.len())?;
    for h in &b.holds {
        writeln!(
            w,
            "{item}{}: {} (evidence {}; {})",
            st.esc(&h.wire.to_string()),
            st.esc(&h.claim),
            st.esc(&h.evidence),
            st.esc(&h.references.join(", "))
        )?;
    }
    Ok(())
}

/// Every stage with its wires, open entry gates and advisory notes.
fn stages(w: &mut dyn Write, b: &Board, st: Style) -> io::Result<()> {
    let Style { h2, item, .. } = st;
    writeln!(w, "{h2}stages and wires")?;
    for s in &b.stages {
        let lane = s.lane.map(|l| format!(", {l} lane")).unwrap_or_default();
        writeln!(w, "{item}{} [{}, {}{lane}]", st.esc(&s.name), s.confidence, s.source)?;
        for wl in &s.wires {
            let ev = wl
                .evidence
                .as_deref()
                .map(|e| format!(" (evidence {})", st.esc(e)))
                .unwrap_or_else(|| " (no evidence)".into());
            let reopened = if wl.reopened > 0 { format!(", reopened {}", wl.reopened) } else { String::new() };
            writeln!(w, "{item}  {} : {}{ev}{reopened}", st.esc(&wl.wire.to_string()), wl.status)?;
        }
        if !s.open_gates.is_empty() {
            writeln!(
                w,
                "{item}  entry gate(s) awaiting a person's `andon confirm`: {}",
                st.esc(&s.open_gates.join(", "))
            )?;
        }
        for note in &s.advisory {
            writeln!(w, "{item}  advisory (context, never a gap): \"{}\"", st.esc(note))?;
        }
    }
    Ok(())
}

/// The counters, the constraint, the gap counts and the proof approaches.
fn summary(w: &mut dyn Write, b: &Board, st: Style) -> io::Result<()> {
    let Style { h2, item, .. } = st;
    writeln!(w, "{h2}counters")?;
    writeln!(w, "{item}passes {}, cycles {}, sub-cycles {}", b.passes, b.cycles, b.sub_cycles)?;
    writeln!(w, "{h2}constraint")?;
    match &b.constraint {
        Some(c) => writeln!(w, "{item}{} ({}; rule: {})", st.esc(&c.wire.to_string()), st.esc(&c.detail), c.rule)?,
        None => writeln!(w, "{item}none: every wire is proven")?,
    }
    writeln!(w, "{h2}gaps")?;
    writeln!(w, "{item}by status: {}", counts(&b.gaps_by_status))?;
    writeln!(w, "{item}open by kind: {}", counts(&b.open_by_kind))?;
    writeln!(w, "{item}open by blast radius: {}", counts(&b.open_by_radius))?;
    for g in &b.vanished {
        let at = g.location.line.map_or(g.location.path.clone(), |l| format!("{}:{l}", g.location.path));
        writeln!(w, "{item}vanished, not proven: {} {}: {}", st.code(&g.id), st.esc(&at), st.esc(&g.summary))?;
    }
    writeln!(w, "{h2}proof approaches")?;
    writeln!(w, "{item}{}", st.esc(&counts(&b.approaches)))
}

/// People's decisions, those waiting for a person, and proof-strength audits, each section when it has entries.
fn decisions(w: &mut dyn Write, b: &Board, st: Style) -> io::Result<()> {
    let Style { h2, item, .. } = st;
    if !b.decisions.is_empty() {
        writeln!(w, "{h2}decisions")?;
        for d in &b.decisions {
            writeln!(w, "{item}{} {} by {}: {}", d.action, st.code(&d.gap), st.esc(&d.by), st.esc(&d.reason))?;
        }
    }
    if !b.pending_decisions.is_empty() {
        writeln!(w, "{h2}decisions waiting for a person at a terminal")?;
        for d in &b.pending_decisions {
            writeln!(w, "{item}{} {} asked for by {}: {}", d.action, st.code(&d.gap), st.esc(&d.by), st.esc(&d.why))?;
        }
    }
    if !b.audits.is_empty() {
        writeln!(w, "{h2}proof-strength audits")?;
        for (e, t, s, d) in &b.audits {
            writeln!(w, "{item}{} by {}: {s}: {}", st.code(e), st.esc(t), st.esc(d))?;
        }
    }
    Ok(())
}
