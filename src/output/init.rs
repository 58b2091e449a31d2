//! `andon init`: the summary of the `andon.toml` drawn from the stream (its text with `--print`).

use std::io::{self, Write};

use super::{inline, json, verdict_line};
use crate::api::structure::Initialized;

/// The report: the JSON document, the file's text (`--print`), or the summary.
pub fn report(w: &mut dyn Write, r: &Initialized, as_json: bool) -> io::Result<()> {
    if as_json {
        json(w, r)
    } else if !r.written {
        w.write_all(r.plan.text.as_bytes())
    } else {
        summary(w, r)
    }
}

/// What was written: the contracts, their exceptions, what was left out, and the verdict line.
pub fn summary(w: &mut dyn Write, r: &Initialized) -> io::Result<()> {
    let p = &r.plan;
    let excused = p.report.findings.iter().filter(|f| f.excused.is_some()).count();
    // an acyclic exception excuses no finding: it allows a dependency that closes a cycle
    let cyclic: usize =
        p.contracts.iter().filter(|c| c.kind == crate::config::ContractKind::Acyclic).map(|c| c.exceptions.len()).sum();
    let present = match cyclic {
        0 => counted(excused, "finding"),
        1 => format!("{}, 1 dependency closing a cycle", counted(excused, "finding")),
        n => format!("{}, {n} dependencies closing cycles", counted(excused, "finding")),
    };
    let verb = if r.written { "wrote" } else { "drew" };
    writeln!(
        w,
        "{verb} {}: {} over {} and {}; {} for what was present today ({})",
        inline(&r.path),
        counted(p.contracts.len(), "contract"),
        counted(p.stages, "stage"),
        counted(p.wires, "wire"),
        counted(p.exceptions(), "exception"),
        present
    )?;
    for c in &p.contracts {
        let n = match c.exceptions.len() {
            0 => String::new(),
            1 => "  (1 exception)".into(),
            n => format!("  ({n} exceptions)"),
        };
        writeln!(w, "  {:<13}{}{n}", c.kind.name(), inline(&c.name))?;
    }
    for note in &p.notes {
        writeln!(w, "note: {}", inline(note))?;
    }
    if r.written {
        writeln!(w, "next: read {} and commit it; `andon check` gates CI with it", inline(&r.path))?;
    }
    let detail = format!("{}, {}", counted(p.contracts.len(), "contract"), counted(p.exceptions(), "exception"));
    verdict_line(w, r.outcome(), &detail)
}

/// `1 wire`, `3 wires`.
fn counted(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}
