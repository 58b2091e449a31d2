//! Rendering of query answers, the stream, dependency chains and explanations.

use std::io::{self, Write};

use super::{inline, verdict_line};
use crate::datalog::explain::Derivation;
use crate::ops::{StreamReport, WhyReport};
use crate::text::quoted;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryFormat {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Text,
    Json,
    Dot,
    Mermaid,
}

/// A query's answer; with explanations, one derivation per row.
pub fn answer(w: &mut dyn Write, answered: &crate::api::structure::Answered, format: QueryFormat) -> io::Result<()> {
    let (a, explain) = (&answered.answer, answered.explanations.as_deref());
    let n = a.rows.len();
    match format {
        QueryFormat::Json => super::json(w, answered),
        QueryFormat::Csv => {
            let record = |cells: &[String]| cells.iter().map(|c| crate::text::csv(c)).collect::<Vec<_>>().join(",");
            writeln!(w, "{}", record(&a.columns))?;
            for r in &a.rows {
                writeln!(w, "{}", record(r))?;
            }
            Ok(())
        }
        QueryFormat::Table => {
            if !a.columns.is_empty() {
                let mut width: Vec<usize> = a.columns.iter().map(|c| inline(c).chars().count()).collect();
                for r in &a.rows {
                    for (k, c) in r.iter().enumerate() {
                        width[k] = width[k].max(inline(c).chars().count()).min(80);
                    }
                }
                let line = |w: &mut dyn Write, cells: &[String]| -> io::Result<()> {
                    let parts: Vec<String> = cells.iter().zip(&width).map(|(c, &wd)| format!("{c:<wd$}")).collect();
                    writeln!(w, "{}", parts.join("  ").trim_end())
                };
                let shown =
                    |cells: &[String]| -> Vec<String> { cells.iter().map(|c| inline(c).into_owned()).collect() };
                line(w, &shown(&a.columns))?;
                line(w, &width.iter().map(|&k| "-".repeat(k)).collect::<Vec<_>>())?;
                for (i, r) in a.rows.iter().enumerate() {
                    line(w, &shown(r))?;
                    if let Some(d) = explain.and_then(|e| e.get(i)) {
                        derivation_text(w, d, 1)?;
                    }
                }
            } else if n > 0 {
                writeln!(w, "true")?;
            }
            verdict_line(w, "answered", &format!("{n} rows"))
        }
    }
}

fn derivation_text(w: &mut dyn Write, d: &Derivation, depth: usize) -> io::Result<()> {
    let pad = "    ".repeat(depth);
    match d {
        Derivation::Fact(f) => writeln!(w, "{pad}{}  [fact]", inline(f)),
        Derivation::Computed { fact, from } => {
            writeln!(w, "{pad}{}  [computed from {}]", inline(fact), inline(&from.join(", ")))
        }
        Derivation::Truncated(f) => writeln!(w, "{pad}{}  [derivation elided: too deep]", inline(f)),
        Derivation::Rule { fact, rule, at, premises, absent, checks } => {
            writeln!(w, "{pad}{}  [rule {at}]", inline(fact))?;
            writeln!(w, "{pad}  by {rule}")?;
            for p in premises {
                derivation_text(w, p, depth + 1)?;
            }
            for a in absent {
                writeln!(w, "{pad}    no {}  [absent]", inline(a))?;
            }
            for c in checks {
                writeln!(w, "{pad}    {}  [holds]", inline(c))?;
            }
            Ok(())
        }
    }
}

/// Every relation of a program (schema, built-in rules, user rules) with columns and doc line.
pub fn schema(w: &mut dyn Write, s: &crate::api::structure::QuerySchema, json_out: bool) -> io::Result<()> {
    if json_out {
        return super::json(w, s);
    }
    for r in &s.relations {
        let cols: Vec<String> = r.columns.iter().map(|(n, t)| format!("{n}: {t}")).collect();
        writeln!(w, "{}({})  [{}, {}]\n    {}", r.name, cols.join(", "), r.kind, r.source, r.doc)?;
    }
    verdict_line(w, "listed", &format!("{} relations", s.relations.len()))
}

/// Writes the stream map in `format`.
pub fn stream(w: &mut dyn Write, r: &StreamReport, format: GraphFormat) -> io::Result<()> {
    match format {
        GraphFormat::Json => super::json(w, r),
        GraphFormat::Dot => stream_dot(w, r),
        GraphFormat::Mermaid => stream_mermaid(w, r),
        GraphFormat::Text => stream_text(w, r),
    }
}

/// The stream map as a Graphviz digraph: stages in a cycle red, heuristic wires dashed; a stage's
/// label is its name and root on two lines (DOT's `\n` between them).
fn stream_dot(w: &mut dyn Write, r: &StreamReport) -> io::Result<()> {
    writeln!(w, "digraph stream {{\n  rankdir=LR;\n  node [shape=box];")?;
    let cyclic: std::collections::BTreeSet<&str> = r.cycles.iter().flatten().map(String::as_str).collect();
    for s in &r.stages {
        let color = if cyclic.contains(s.name.as_str()) { ", color=red" } else { "" };
        let (name, root) = (quoted(&s.name), quoted(&s.root));
        let label =
            format!("{}\\n{}", name.strip_suffix('"').unwrap_or(&name), root.strip_prefix('"').unwrap_or(&root));
        writeln!(w, "  {name} [label={label}{color}];")?;
    }
    for x in &r.wires {
        let style = x.confidence.dot_style();
        writeln!(w, "  {} -> {} [label=\"{}\"{style}];", quoted(&x.producer), quoted(&x.consumer), x.imports)?;
    }
    writeln!(w, "}}")
}

/// The stream map as a Mermaid flowchart, stages numbered in stream order (a node id must be
/// plain; the name is its label).
fn stream_mermaid(w: &mut dyn Write, r: &StreamReport) -> io::Result<()> {
    writeln!(w, "flowchart LR")?;
    let id: std::collections::BTreeMap<&str, usize> =
        r.order.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    for s in &r.order {
        writeln!(w, "  s{}[\"{}\"]", id[s.as_str()], crate::text::mermaid(s))?;
    }
    for x in &r.wires {
        let (Some(a), Some(b)) = (id.get(x.producer.as_str()), id.get(x.consumer.as_str())) else { continue };
        let arrow = x.confidence.mermaid_arrow();
        writeln!(w, "  s{a} {arrow}|{}| s{b}", x.imports)?;
    }
    Ok(())
}

/// The stream map as text: stages, wires, order, cycles, module cycles, then the verdict.
fn stream_text(w: &mut dyn Write, r: &StreamReport) -> io::Result<()> {
    writeln!(w, "stages ({}):", r.stages.len())?;
    for s in &r.stages {
        // a declared stage has no ecosystem or manifest of its own to name: only the declaration
        let how = if s.confidence == crate::facts::vocab::Confidence::Declared {
            "declared".to_string()
        } else {
            format!("{}, {} from {}", s.ecosystem, s.confidence, s.source)
        };
        writeln!(w, "  {}  {}  {} files  [{how}]", inline(&s.name), inline(&s.root), s.files)?;
    }
    writeln!(w, "wires ({}):", r.wires.len())?;
    for x in &r.wires {
        let shown: Vec<&str> = x.symbols.iter().take(8).map(String::as_str).collect();
        let more = if x.symbols.len() > 8 { format!(", +{}", x.symbols.len() - 8) } else { String::new() };
        writeln!(
            w,
            "  {} -> {}  {} imports, {}  [{}]{}",
            inline(&x.producer),
            inline(&x.consumer),
            x.imports,
            x.confidence,
            x.kinds.join(","),
            if shown.is_empty() { String::new() } else { format!("  symbols: {}{more}", inline(&shown.join(", "))) }
        )?;
    }
    writeln!(w, "order: {}", inline(&r.order.join(" -> ")))?;
    for c in &r.cycles {
        writeln!(w, "cycle: {}", inline(&c.join(" <-> ")))?;
    }
    if !r.module_cycles.is_empty() {
        writeln!(w, "module cycles ({}):", r.module_cycles.len())?;
        for c in &r.module_cycles {
            let shown: Vec<&str> = c.iter().take(6).map(String::as_str).collect();
            let more = if c.len() > 6 { format!(" (+{} more)", c.len() - 6) } else { String::new() };
            writeln!(w, "  {}{more}", inline(&shown.join(" <-> ")))?;
        }
    }
    if !r.support.is_empty() {
        writeln!(w, "support ({}): code beside the stages, never one", r.support.len())?;
        for x in &r.support {
            writeln!(w, "  {}  {}  {} files", inline(&x.dir), x.role, x.files)?;
        }
    }
    if let Some(x) = &r.within {
        within_text(w, x)?;
    }
    if let Some(d) = &r.declared {
        declared_text(w, d)?;
    }
    let detail = format!("{} stages, {} wires, {} cycles", r.stages.len(), r.wires.len(), r.cycles.len());
    verdict_line(w, "mapped", &detail)
}

/// The modules inside one stage: each with its layer, the imports between them, the layers.
fn within_text(w: &mut dyn Write, x: &crate::ops::WithinView) -> io::Result<()> {
    let at = if x.base.is_empty() { "." } else { x.base.as_str() };
    writeln!(w, "within {} ({}): {} modules", inline(&x.stage), inline(at), x.modules.len())?;
    for m in &x.modules {
        let layer = m.layer.map_or("no layer".to_string(), |l| format!("layer {}", l + 1));
        let kind = if m.package { "package" } else { "module" };
        writeln!(w, "  {}  {kind}, {} files, {layer}", inline(&m.name), m.files)?;
    }
    for (a, b, n) in &x.imports {
        writeln!(w, "  {} -> {}  {n} imports", inline(a), inline(b))?;
    }
    let layers: Vec<String> = x.layers.iter().map(|l| l.join(", ")).collect();
    writeln!(w, "  layers, top first: {}", inline(&layers.join(" > ")))?;
    for set in &x.independent {
        writeln!(w, "  independent: {}", inline(&set.join(", ")))?;
    }
    Ok(())
}

/// What a declared stream leaves out: its undeclared imports (findings) and the files outside
/// every declared root (the first 20 named).
fn declared_text(w: &mut dyn Write, d: &crate::ops::Declared) -> io::Result<()> {
    writeln!(w, "undeclared imports across declared stages ({}):", d.undeclared.len())?;
    for (p, c, path, line) in &d.undeclared {
        writeln!(w, "  {}:{line}: {} -> {} has no declared wire", inline(path), inline(p), inline(c))?;
    }
    writeln!(w, "files in no declared stage ({}):", d.outside.len())?;
    for f in d.outside.iter().take(20) {
        writeln!(w, "  {}", inline(f))?;
    }
    if d.outside.len() > 20 {
        writeln!(w, "  … and {} more (`--format json` lists them)", d.outside.len() - 20)?;
    }
    Ok(())
}

pub fn why(w: &mut dyn Write, r: &WhyReport, json_out: bool) -> io::Result<()> {
    if json_out {
        return super::json(w, r);
    }
    match &r.chain {
        Some(c) => {
            writeln!(
                w,
                "{} ({}) depends on {} ({}) in {} hops:",
                inline(&r.from.name),
                r.from.kind,
                inline(&r.to.name),
                r.to.kind,
                c.len()
            )?;
            for h in c {
                writeln!(
                    w,
                    "  {}:{}: imports `{}` -> {}  [{}]",
                    inline(&h.path),
                    h.line,
                    inline(&h.spec),
                    inline(&h.target),
                    h.confidence
                )?;
            }
            verdict_line(w, "found", &format!("{} hops", c.len()))
        }
        None => {
            writeln!(
                w,
                "{} ({}) does not depend on {} ({}): no chain of imports leads there",
                inline(&r.from.name),
                r.from.kind,
                inline(&r.to.name),
                r.to.kind
            )?;
            verdict_line(w, "no-chain", "")
        }
    }
}
