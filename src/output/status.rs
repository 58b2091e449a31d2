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

/// The suspected-injection section (R123): the list, or why there is none to show.
fn injections(w: &mut dyn Write, inj: &Injections, h2: &str, item: &str, md: bool) -> io::Result<()> {
    match inj {
        Injections::Listed(list) => super::injections(w, list, h2, item, md),
        Injections::NoIndex => {
            writeln!(w, "{h2}{}: unknown", super::INJECTIONS_HEADING)?;
            writeln!(w, "{item}no index yet: `andon index`, `check` or `loop` builds one (status never indexes)")
        }
        Injections::Unreadable(why) => {
            writeln!(w, "{h2}{}: unknown", super::INJECTIONS_HEADING)?;
            writeln!(w, "{item}the stored index cannot be read ({}): run `andon index`", super::inline(why))
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
    let (h1, h2, item) = if md { ("# ", "## ", "- ") } else { ("", "", "  ") };
    let Some(b) = b else {
        return never_run(w, ledger, inj, md);
    };
    writeln!(w, "{h1}andon status")?;
    holds(w, b, h2, item)?;
    stages(w, b, h2, item)?;
    summary(w, b, h2, item)?;
    decisions(w, b, h2, item)?;
    injections(w, inj, h2, item, md)?;
    writeln!(w, "{h2}next")?;
    writeln!(w, "{item}{}", super::inline(&b.next.detail))?;
    if md {
        return Ok(());
    }
    let outcome = if b.holds.is_empty() { "shown" } else { "holding" };
    verdict_line(w, outcome, &format!("{} tier-1 hold(s)", b.holds.len()))
}

/// The report when there is no ledger: the loop never ran here.
fn never_run(w: &mut dyn Write, ledger: &str, inj: &Injections, md: bool) -> io::Result<()> {
    let (h2, item) = if md { ("## ", "- ") } else { ("", "  ") };
    if md {
        writeln!(w, "# andon status\n\nThe loop has never run here (no ledger at `{ledger}`).\n")?;
        injections(w, inj, h2, item, md)?;
        writeln!(w, "\n**Next:** run `andon loop`.")?;
        return Ok(());
    }
    writeln!(w, "the loop has never run here (no ledger at {ledger})")?;
    injections(w, inj, h2, item, md)?;
    writeln!(w, "next: run `andon loop`")?;
    verdict_line(w, "never-run", "")
}

/// The standing tier-1 holds, when there are any.
fn holds(w: &mut dyn Write, b: &Board, h2: &str, item: &str) -> io::Result<()> {
    if b.holds.is_empty() {
        return Ok(());
    }
    writeln!(w, "{h2}STANDING TIER-1 HOLDS ({})", b.holds.len())?;
    for h in &b.holds {
        writeln!(
            w,
            "{item}{}: {} (evidence {}; {})",
            super::inline(&h.wire.to_string()),
            super::inline(&h.claim),
            super::inline(&h.evidence),
            super::inline(&h.references.join(", "))
        )?;
    }
    Ok(())
}

/// Every stage with its wires, open entry gates and advisory notes.
fn stages(w: &mut dyn Write, b: &Board, h2: &str, item: &str) -> io::Result<()> {
    writeln!(w, "{h2}stages and wires")?;
    for s in &b.stages {
        writeln!(w, "{item}{} [{}, {}]", super::inline(&s.name), s.confidence, s.source)?;
        for wl in &s.wires {
            let ev = wl
                .evidence
                .as_deref()
                .map(|e| format!(" (evidence {})", super::inline(e)))
                .unwrap_or_else(|| " (no evidence)".into());
            let reopened = if wl.reopened > 0 { format!(", reopened {}", wl.reopened) } else { String::new() };
            writeln!(w, "{item}  {} : {}{ev}{reopened}", super::inline(&wl.wire.to_string()), wl.status)?;
        }
        if !s.open_gates.is_empty() {
            writeln!(
                w,
                "{item}  entry gate(s) awaiting a person's `andon confirm`: {}",
                super::inline(&s.open_gates.join(", "))
            )?;
        }
        for note in &s.advisory {
            writeln!(w, "{item}  advisory (context, never a gap): \"{}\"", super::inline(note))?;
        }
    }
    Ok(())
}

/// The counters, the constraint, the gap counts and the proof approaches.
fn summary(w: &mut dyn Write, b: &Board, h2: &str, item: &str) -> io::Result<()> {
    writeln!(w, "{h2}counters")?;
    writeln!(w, "{item}passes {}, cycles {}, sub-cycles {}", b.passes, b.cycles, b.sub_cycles)?;
    writeln!(w, "{h2}constraint")?;
    match &b.constraint {
        Some(c) => writeln!(
            w,
            "{item}{} ({}; rule: {})",
            super::inline(&c.wire.to_string()),
            super::inline(&c.detail),
            c.rule
        )?,
        None => writeln!(w, "{item}none: every wire is proven")?,
    }
    writeln!(w, "{h2}gaps")?;
    writeln!(w, "{item}by status: {}", counts(&b.gaps_by_status))?;
    writeln!(w, "{item}open by kind: {}", counts(&b.open_by_kind))?;
    writeln!(w, "{item}open by blast radius: {}", counts(&b.open_by_radius))?;
    writeln!(w, "{h2}proof approaches")?;
    writeln!(w, "{item}{}", super::inline(&counts(&b.approaches)))
}

/// People's decisions and proof-strength audits, each section when it has entries.
fn decisions(w: &mut dyn Write, b: &Board, h2: &str, item: &str) -> io::Result<()> {
    if !b.decisions.is_empty() {
        writeln!(w, "{h2}decisions")?;
        for d in &b.decisions {
            writeln!(
                w,
                "{item}{} `{}` by {}: {}",
                d.action,
                super::inline(&d.gap),
                super::inline(&d.by),
                super::inline(&d.reason)
            )?;
        }
    }
    if !b.audits.is_empty() {
        writeln!(w, "{h2}proof-strength audits")?;
        for (e, t, s, d) in &b.audits {
            writeln!(w, "{item}`{}` by {}: {s}: {}", super::inline(e), super::inline(t), super::inline(d))?;
        }
    }
    Ok(())
}
