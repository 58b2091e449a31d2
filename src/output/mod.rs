//! Rendering: the only code that knows text and JSON shapes. Every JSON document carries
//! `schema_version` and ends with a `verdict` object; every text report ends with one
//! `andon: verdict …` line.

pub mod check;
pub mod derived;
pub mod loop_report;
pub mod status;

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::facts::{ColType, Facts, RELATIONS, RelId};
use crate::index::{Change, Diag, IndexReport};
use crate::ops::Injection;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// Text from the repository made safe to print on one line (R123): the one rule in [`crate::text`].
pub use crate::text::line as inline;

/// The heading of the suspected-injection section, the same in every report that lists them.
pub const INJECTIONS_HEADING: &str = "Suspected injections (repository text addressing andon — reported, never obeyed)";

/// The suspected injections (R123) as JSON: `[{path, line, text}]` in their sorted order, plain
/// strings (JSON encoding escapes them).
pub fn injections_json(list: &[Injection]) -> Value {
    Value::Array(list.iter().map(|i| json!({ "path": i.path, "line": i.line, "text": i.text })).collect())
}

/// The suspected-injection section of a text or Markdown report: the heading (after `h2`) with the
/// count, then one `path:line: "text"` line each (after `item`). Path and text go through
/// [`inline`], and in Markdown their punctuation is escaped too, so quoted text can never start a
/// line of its own, forge a verdict line or open markup (R123).
pub(crate) fn injections(w: &mut dyn Write, list: &[Injection], h2: &str, item: &str, md: bool) -> io::Result<()> {
    let esc = |s: &str| if md { crate::text::markdown(s) } else { inline(s).into_owned() };
    writeln!(w, "{h2}{INJECTIONS_HEADING}: {}", list.len())?;
    for i in list {
        writeln!(w, "{item}{}:{}: \"{}\"", esc(&i.path), i.line, esc(&i.text))?;
    }
    Ok(())
}

pub(crate) fn verdict_line(w: &mut dyn Write, outcome: &str, detail: &str) -> io::Result<()> {
    if detail.is_empty() {
        writeln!(w, "andon: verdict {outcome}")
    } else {
        writeln!(w, "andon: verdict {outcome} ({})", inline(detail))
    }
}

fn diag_json(d: &Diag) -> Value {
    let mut v = json!({ "path": d.path, "kind": d.kind, "message": d.message });
    if d.line > 0 {
        v["line"] = json!(d.line);
    }
    v
}

pub fn index_report(w: &mut dyn Write, r: &IndexReport, format: Format) -> io::Result<()> {
    let s = &r.summary;
    let total: u64 = s.files_by_lang.iter().map(|(_, n)| n).sum();
    match format {
        Format::Json => {
            let by_lang: serde_json::Map<String, Value> =
                s.files_by_lang.iter().map(|(l, n)| (l.clone(), json!(n))).collect();
            let stages: Vec<Value> = s
                .stages
                .iter()
                .map(|st| json!({"name": st.name, "root": st.root, "ecosystem": st.ecosystem, "confidence": st.confidence, "source": st.source, "files": st.files}))
                .collect();
            let v = json!({
                "schema_version": SCHEMA_VERSION,
                "root": r.root.display().to_string(),
                "index": r.index_path.display().to_string(),
                "files": {
                    "total": total,
                    "by_language": by_lang,
                    "manifests": s.manifests,
                    "skipped": s.skipped,
                    "parsed": r.parsed,
                    "reused": r.reused,
                    "removed": r.removed,
                    "rehashed": r.rehashed,
                },
                "facts": s.facts,
                "stages": stages,
                "parse_errors": s.parse_errors,
                "files_with_parse_errors": s.files_with_parse_errors,
                "diagnostics": r.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
                "unchanged": r.unchanged,
                "rebuilt": r.rebuilt,
                "elapsed_ms": (r.elapsed_ms * 1000.0).round() / 1000.0,
                "verdict": { "outcome": "indexed" },
            });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => {
            if let Some(why) = &r.rebuilt {
                writeln!(w, "note: {why}")?;
            }
            for d in &r.diagnostics {
                if d.line > 0 {
                    writeln!(w, "warning: {}:{}: {} ({})", d.path, d.line, d.message, d.kind)?;
                } else {
                    writeln!(w, "warning: {}: {} ({})", d.path, d.message, d.kind)?;
                }
            }
            let langs: Vec<String> = s.files_by_lang.iter().map(|(l, n)| format!("{n} {l}")).collect();
            writeln!(
                w,
                "indexed {total} source files ({}) and {} manifests in {:.0} ms",
                if langs.is_empty() { "none".to_string() } else { langs.join(", ") },
                s.manifests,
                r.elapsed_ms
            )?;
            if r.unchanged {
                writeln!(w, "  nothing changed since the last index: 0 files parsed")?;
            } else {
                writeln!(w, "  {} parsed, {} reused, {} removed", r.parsed, r.reused, r.removed)?;
            }
            writeln!(
                w,
                "  {} facts, {} parse errors in {} files, {} skipped",
                s.facts, s.parse_errors, s.files_with_parse_errors, s.skipped
            )?;
            writeln!(w, "  {} stages:", s.stages.len())?;
            for st in &s.stages {
                let root = if st.root.is_empty() { "." } else { &st.root };
                writeln!(
                    w,
                    "    {:<24} {:<32} {:<9} {} files ({}, {})",
                    st.name, root, st.ecosystem, st.files, st.source, st.confidence
                )?;
            }
            verdict_line(w, "indexed", "")
        }
    }
}

/// `andon index --check`: `changes` is Err(reason) when no usable index exists.
pub fn check_report(w: &mut dyn Write, changes: &Result<Vec<Change>, String>, format: Format) -> io::Result<()> {
    let fresh = matches!(changes, Ok(c) if c.is_empty());
    match format {
        Format::Json => {
            let v = match changes {
                Ok(c) => json!({
                    "schema_version": SCHEMA_VERSION,
                    "fresh": fresh,
                    "changed": c.iter().map(|c| json!({"path": c.path, "change": c.change})).collect::<Vec<_>>(),
                    "verdict": { "outcome": if fresh { "fresh" } else { "stale" } },
                }),
                Err(why) => json!({
                    "schema_version": SCHEMA_VERSION,
                    "fresh": false,
                    "changed": [],
                    "reason": why,
                    "verdict": { "outcome": "stale" },
                }),
            };
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => match changes {
            Ok(c) if c.is_empty() => {
                writeln!(w, "the index is fresh")?;
                verdict_line(w, "fresh", "")
            }
            Ok(c) => {
                writeln!(w, "the index is stale: {} files changed since it was built; run `andon index`", c.len())?;
                for ch in c {
                    writeln!(w, "  {:<8} {}", ch.change, ch.path)?;
                }
                verdict_line(w, "stale", &format!("{} changed", c.len()))
            }
            Err(why) => {
                writeln!(w, "the index is stale: {why}")?;
                verdict_line(w, "stale", "no usable index")
            }
        },
    }
}

/// Which facts the facts view prints.
pub struct FactFilter<'a> {
    pub relation: Option<RelId>,
    pub file: Option<&'a str>,
}

fn selected<'a>(facts: &'a Facts, f: &'a FactFilter) -> impl Iterator<Item = (RelId, &'a [u32])> + 'a {
    (0..RELATIONS.len()).map(|i| RelId(i as u16)).filter(move |r| f.relation.is_none_or(|x| x == *r)).flat_map(
        move |r| {
            let info = r.info();
            let path_cols: Vec<usize> =
                info.columns.iter().enumerate().filter(|(_, c)| c.ty == ColType::Path).map(|(i, _)| i).collect();
            facts
                .rows(r)
                .iter()
                .filter(move |row| match f.file {
                    None => true,
                    Some(p) => path_cols.first().is_some_and(|&c| facts.str(row[c]) == p),
                })
                .map(move |row| (r, &row[..]))
        },
    )
}

pub fn facts_report(w: &mut dyn Write, facts: &Facts, filter: &FactFilter, format: Format) -> io::Result<()> {
    match format {
        Format::Json => {
            let rows: Vec<Value> = selected(facts, filter)
                .map(|(r, row)| {
                    let info = r.info();
                    let mut o = serde_json::Map::new();
                    o.insert("relation".into(), json!(info.name));
                    for (c, v) in info.columns.iter().zip(row) {
                        let val = if c.ty == ColType::Int { json!(v) } else { json!(facts.str(*v)) };
                        o.insert(c.name.into(), val);
                    }
                    Value::Object(o)
                })
                .collect();
            let n = rows.len();
            let v = json!({ "schema_version": SCHEMA_VERSION, "count": n, "facts": rows, "verdict": { "outcome": "listed" } });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => {
            let mut n = 0;
            for (r, row) in selected(facts, filter) {
                n += 1;
                writeln!(w, "{}", render_fact(facts, r, row))?;
            }
            verdict_line(w, "listed", &format!("{n} facts"))
        }
    }
}

/// One fact as Datalog text: `Import("src/a.py", 3, "os", "static")`.
pub fn render_fact(facts: &Facts, r: RelId, row: &[u32]) -> String {
    let info = r.info();
    let vals: Vec<String> = info
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| if c.ty == ColType::Int { v.to_string() } else { format!("{:?}", facts.str(*v)) })
        .collect();
    format!("{}({})", info.name, vals.join(", "))
}

/// `andon facts --schema`-style listing of every relation.
pub fn schema_report(w: &mut dyn Write, format: Format) -> io::Result<()> {
    match format {
        Format::Json => {
            let rels: Vec<Value> = RELATIONS
                .iter()
                .map(|r| {
                    json!({
                        "name": r.name,
                        "doc": r.doc,
                        "columns": r.columns.iter().map(|c| json!({"name": c.name, "type": match c.ty { ColType::Path => "path", ColType::Sym => "sym", ColType::Int => "int" }})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let v = json!({ "schema_version": SCHEMA_VERSION, "relations": rels, "verdict": {"outcome": "listed"} });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => {
            for r in RELATIONS {
                let cols: Vec<&str> = r.columns.iter().map(|c| c.name).collect();
                writeln!(w, "{}({})\n    {}", r.name, cols.join(", "), r.doc)?;
            }
            verdict_line(w, "listed", &format!("{} relations", RELATIONS.len()))
        }
    }
}

fn scalar_json(v: &crate::config::Scalar) -> Value {
    match v {
        crate::config::Scalar::Str(s) => json!(s),
        crate::config::Scalar::Bool(b) => json!(b),
        crate::config::Scalar::Int(n) => json!(n),
    }
}

/// `andon config show`: every effective setting, its value and where it came from.
pub fn settings_report(w: &mut dyn Write, cfg: &crate::config::Config, format: Format) -> io::Result<()> {
    let rows = cfg.settings.rows();
    let source = cfg.source.as_ref().map(|p| p.to_string_lossy().replace('\\', "/"));
    match format {
        Format::Json => {
            let mut settings = serde_json::Map::new();
            for (k, v, origin) in &rows {
                settings.insert(k.to_string(), json!({ "value": scalar_json(v), "origin": origin.to_string() }));
            }
            let v = json!({
                "schema_version": SCHEMA_VERSION,
                "source": source,
                "settings": settings,
                "contracts": cfg.contracts.len(),
                "verdict": { "outcome": if cfg.settings.enabled.value { "shown" } else { "disabled" } },
            });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => {
            writeln!(w, "settings file: {}", source.as_deref().unwrap_or("none (all defaults)"))?;
            for (k, v, origin) in &rows {
                let v = match v {
                    crate::config::Scalar::Str(s) => s.clone(),
                    crate::config::Scalar::Bool(b) => b.to_string(),
                    crate::config::Scalar::Int(n) => n.to_string(),
                };
                writeln!(w, "  {k:<24} {v:<28} {origin}")?;
            }
            writeln!(w, "contracts: {}", cfg.contracts.len())?;
            if cfg.settings.enabled.value {
                verdict_line(w, "shown", "")
            } else {
                verdict_line(w, "disabled", "every other command stops with exit 4")
            }
        }
    }
}

/// What every command prints when `enabled = false` stops it.
pub fn disabled(w: &mut dyn Write, origin: &str, json: bool) -> io::Result<()> {
    let why = format!("andon is disabled by `enabled = false` at {origin}; set it to true (or remove it) to run andon");
    if json {
        let v = json!({ "schema_version": SCHEMA_VERSION, "message": why,
                        "verdict": { "outcome": "disabled", "origin": origin } });
        writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
    } else {
        writeln!(w, "{why}")?;
        verdict_line(w, "disabled", "")
    }
}

/// `andon ledger check`: every problem with its line, or the state's counts.
/// A command that reads the ledger found it invalid: nothing acts on it.
pub fn invalid_ledger(w: &mut dyn Write, error: &str, json_out: bool) -> io::Result<()> {
    if json_out {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "error": error,
            "next": { "action": "repair-ledger", "gap": null,
                "detail": "run `andon ledger check` to see each problem; `andon ledger repair` sets an interrupted last write aside" },
            "verdict": { "outcome": "refused", "detail": "invalid ledger" },
        });
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    verdict_line(w, "refused", "invalid ledger")
}

/// `andon ledger repair`: what was set aside, or why nothing was.
pub fn ledger_repair(
    w: &mut dyn Write,
    dir: &std::path::Path,
    result: &Result<Option<crate::ledger::Repaired>, crate::ledger::LedgerError>,
    format: Format,
) -> io::Result<()> {
    let log = dir.join(crate::ledger::LOG_FILE).to_string_lossy().replace('\\', "/");
    let (outcome, detail) = match result {
        Ok(Some(r)) => (
            "repaired",
            format!(
                "lines {}-{} of {log} were an interrupted write; they are kept in {}",
                r.lines.0,
                r.lines.1,
                r.kept_in.to_string_lossy().replace('\\', "/")
            ),
        ),
        Ok(None) => ("unchanged", format!("{log} has no interrupted write")),
        Err(e) => ("refused", e.to_string()),
    };
    match format {
        Format::Json => {
            let r = result.as_ref().ok().and_then(|r| r.as_ref());
            let v = json!({
                "schema_version": SCHEMA_VERSION,
                "ledger": log,
                "set_aside": r.map(|r| json!({ "first_line": r.lines.0, "last_line": r.lines.1,
                    "kept_in": r.kept_in.to_string_lossy().replace('\\', "/") })),
                "next": if outcome == "refused" {
                    json!({ "action": "restore-ledger", "gap": null, "detail": "restore the ledger from a copy or version control; `andon ledger check` lists each problem" })
                } else {
                    json!({ "action": "loop", "gap": null, "detail": "run `andon loop`" })
                },
                "verdict": { "outcome": outcome, "detail": detail },
            });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => verdict_line(w, outcome, &detail),
    }
}

pub fn ledger_check(
    w: &mut dyn Write,
    dir: &std::path::Path,
    result: Option<&(Vec<crate::ledger::Issue>, Option<crate::ledger::State>)>,
    format: Format,
) -> io::Result<()> {
    let log = dir.join(crate::ledger::LOG_FILE).to_string_lossy().replace('\\', "/");
    let human = dir.join(crate::ledger::HUMAN_FILE).to_string_lossy().replace('\\', "/");
    let outcome = match result {
        None => "absent",
        Some((issues, _)) if issues.is_empty() => "valid",
        Some(_) => "invalid",
    };
    let issues: Vec<(String, String)> = result
        .map(|(i, _)| {
            i.iter()
                .map(|x| (if x.line == 0 { human.clone() } else { format!("{log}:{}", x.line) }, x.message.clone()))
                .collect()
        })
        .unwrap_or_default();
    let state = result.and_then(|(_, s)| s.as_ref());
    match format {
        Format::Json => {
            let v = json!({
                "schema_version": SCHEMA_VERSION,
                "ledger": log,
                "issues": issues.iter().map(|(at, m)| json!({ "at": at, "message": m })).collect::<Vec<_>>(),
                "state": state.map(|s| json!({ "stages": s.stages.len(), "gaps": s.gaps.len(),
                    "evidence": s.evidence.len(), "wires": s.wires.len(), "passes": s.passes, "cycles": s.cycles })),
                "next": match outcome {
                    "invalid" => json!({ "action": "repair-ledger", "gap": null,
                        "detail": "an interrupted last write: `andon ledger repair`; any other problem: restore the ledger from a copy or version control" }),
                    _ => json!({ "action": "loop", "gap": null, "detail": "run `andon loop`" }),
                },
                "verdict": { "outcome": outcome, "issues": issues.len() },
            });
            writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"))
        }
        Format::Text => {
            for (at, m) in &issues {
                writeln!(w, "{at}: {m}")?;
            }
            match (outcome, state) {
                ("absent", _) => verdict_line(w, "absent", &format!("no ledger at {log}: the loop has never run here")),
                (_, Some(s)) => verdict_line(
                    w,
                    "valid",
                    &format!(
                        "{} gaps, {} evidence records, {} passes, {} cycles",
                        s.gaps.len(),
                        s.evidence.len(),
                        s.passes,
                        s.cycles
                    ),
                ),
                _ => {
                    verdict_line(w, "invalid", &format!("{} problem(s); nothing may act on this ledger", issues.len()))
                }
            }
        }
    }
}

/// `andon propose` refused: every problem, nothing written.
pub fn proposal_refused(w: &mut dyn Write, problems: &[String], json_out: bool) -> io::Result<()> {
    if json_out {
        let v = json!({ "schema_version": SCHEMA_VERSION, "problems": problems,
                        "next": { "action": "propose", "detail": "fix the proposal and propose again" },
                        "verdict": { "outcome": "refused" } });
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    for p in problems {
        writeln!(w, "refused: {p}")?;
    }
    verdict_line(w, "refused", "nothing written")
}

/// `andon propose` accepted: where the proposal is, and what happens next.
pub fn proposal_written(
    w: &mut dyn Write,
    p: &crate::andon_loop::proposal::Proposal,
    file: &std::path::Path,
    over_ceiling: bool,
    json_out: bool,
) -> io::Result<()> {
    let detail = if over_ceiling {
        format!(
            "run `andon loop`: it records the proposal and halts, because {} exceeds the authorization ceiling",
            p.blast_radius.name()
        )
    } else {
        format!("run `andon loop` to record it, apply the fix to {} yourself, then verify it", p.write_set.join(", "))
    };
    if json_out {
        let v = json!({ "schema_version": SCHEMA_VERSION, "gap": p.gap, "artifact": file.to_string_lossy(),
                        "blast_radius": p.blast_radius.name(), "over_ceiling": over_ceiling, "base_commit": p.base_commit,
                        "next": { "action": "loop", "gap": p.gap, "detail": detail },
                        "verdict": { "outcome": "proposed" } });
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    writeln!(w, "proposal for `{}` written to {}", p.gap, file.display())?;
    writeln!(w, "next: {detail}")?;
    verdict_line(w, "proposed", &p.gap)
}

/// A person's decision: what was recorded, or why it was refused (nothing written).
pub fn decision(w: &mut dyn Write, result: Result<&str, &str>, json_out: bool) -> io::Result<()> {
    let (outcome, text) = match result {
        Ok(t) => ("recorded", t),
        Err(t) => ("refused", t),
    };
    if json_out {
        let v = json!({ "schema_version": SCHEMA_VERSION, "message": text,
                        "next": { "action": "loop", "detail": "run `andon loop`" },
                        "verdict": { "outcome": outcome } });
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    writeln!(w, "{text}")?;
    verdict_line(w, outcome, "")
}

/// `andon verify`: the verdict (a token that cannot be mistaken for cleared), the evidence, the
/// diff checks, and the next action.
pub fn verify_report(
    w: &mut dyn Write,
    gap: &str,
    result: &Result<crate::andon_loop::fix::Outcome, crate::andon_loop::VerifyStop>,
    json_out: bool,
) -> io::Result<()> {
    use crate::andon_loop::VerifyStop;
    use crate::ledger::Verdict;
    let (token, detail, next): (String, String, String) = match result {
        Ok(o) => {
            let e = &o.evidence;
            let token = match e.verdict {
                Verdict::Proven => "proven".to_string(),
                _ if e.hold => "halt:tier1-hold".into(),
                Verdict::Refuted if e.tier == Some(2) => "halt:tier2-hold".into(),
                Verdict::Refuted => "halt:refuted".into(),
                Verdict::Unproven => "halt:unproven".into(),
                Verdict::Unknown => "halt:needs-human".into(),
            };
            let next = if e.verdict == Verdict::Proven {
                "run `andon loop`: it records the evidence and advances".to_string()
            } else if e.hold {
                "change the code: a tier-1 hold is cleared only by a re-index showing the contradiction gone".into()
            } else {
                "run `andon loop` to record the evidence, then fix and verify again".into()
            };
            (token, e.claim.clone(), next)
        }
        Err(VerifyStop::Scope(files)) => (
            "refused:scope".into(),
            format!("the diff writes files the proposal did not declare: {}", files.join(", ")),
            "undo those changes, or propose again with them in the write-set".into(),
        ),
        Err(VerifyStop::Authorization(level, because)) => (
            "halt:authorization".into(),
            format!("the applied diff rates {} ({because}), above the ceiling", level.name()),
            format!("a person raises the authority for this diff: `andon authorize {gap} --by WHO --reason ...`"),
        ),
        Err(VerifyStop::Refused(m)) => ("refused".into(), m.clone(), "fix the request".into()),
    };
    if json_out {
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "gap": gap, "detail": detail,
                            "next": { "action": if token == "proven" { "loop" } else { "fix" }, "gap": gap, "detail": next },
                            "verdict": { "outcome": token } });
        if let Ok(o) = result {
            v["evidence"] = json!({ "approach": o.evidence.approach, "verdict": format!("{:?}", o.evidence.verdict).to_lowercase(),
                "rung": o.evidence.rung, "tier": o.evidence.tier, "hold": o.evidence.hold, "claim": o.evidence.claim, "evidence": o.evidence.evidence,
                "references": o.evidence.references, "artifact": o.evidence.artifact });
            v["diff"] = json!({ "base": o.change.base, "files": o.change.files, "hash": o.change.hash,
                "rerated": o.rerated.name(), "because": o.rerated_because });
            v["routing"] = serde_json::to_value(&o.routing).expect("json");
        }
        if let Err(VerifyStop::Scope(files)) = result {
            v["outside_write_set"] = json!(files);
        }
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    writeln!(w, "{}", inline(&detail))?;
    if let Ok(o) = result {
        if let Some(r) = &o.routing {
            writeln!(w, "route: {} ({})", r.approach.as_deref().unwrap_or("tie"), inline(&r.why.join("; ")))?;
            if let Some(d) = &r.disagreement {
                writeln!(w, "route: {}", inline(d))?;
            }
        }
        for r in &o.evidence.references {
            writeln!(w, "  {}", inline(r))?;
        }
        writeln!(
            w,
            "diff: {} file(s) against {}; blast radius {} ({})",
            o.change.files.len(),
            inline(&o.change.base),
            o.rerated.name(),
            inline(&o.rerated_because)
        )?;
    }
    writeln!(w, "next: {}", inline(&next))?;
    verdict_line(w, &token, gap)
}

/// `andon verify --request`: the verdict a caller cannot mistake for cleared (R111), every
/// obligation with its route and what its proof showed, and the diff checks.
pub fn request_report(
    w: &mut dyn Write,
    result: &Result<crate::andon_loop::request::RequestOutcome, crate::andon_loop::request::Stop>,
    json_out: bool,
) -> io::Result<()> {
    use crate::andon_loop::request::Stop;
    let (token, detail) = match result {
        Ok(o) => match o.condition {
            None => ("proven".to_string(), format!("every obligation ({}) is proven", o.obligations.len())),
            Some(c) => (c.token().to_string(), o.unmet.first().cloned().unwrap_or_default()),
        },
        Err(Stop::Scope(files, why)) => ("refused:scope".into(), format!("{why}: {}", files.join(", "))),
        Err(Stop::Refused(m)) => ("refused".into(), m.clone()),
    };
    let cleared = token == "proven";
    if json_out {
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "persisted": false, "cleared": cleared,
                            "verdict": { "outcome": token, "proven": cleared, "detail": detail } });
        match result {
            Ok(o) => {
                v["wire"] = serde_json::to_value(&o.wire).expect("json");
                v["obligations"] = serde_json::to_value(&o.obligations).expect("json");
                v["holds"] = json!(o.holds);
                v["unmet"] = json!(o.unmet);
                v["suspected_injections"] = injections_json(&o.injections);
                v["diff"] = json!({ "files": o.change.files, "hash": o.change.hash,
                    "rerated": o.rerated.name(), "because": o.rerated_because });
            }
            Err(Stop::Scope(files, _)) => v["outside_scope"] = json!(files),
            Err(Stop::Refused(_)) => {}
        }
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    if let Ok(o) = result {
        for ob in &o.obligations {
            let route = match (&ob.routing.approach, ob.routing.rung) {
                (Some(a), Some(r)) => format!("{a}, rung {r}"),
                _ => format!("tie: {}", ob.routing.candidates.join(" or ")),
            };
            let verdict =
                serde_json::to_value(ob.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let tier = ob.tier.map(|t| format!(", tier {t}")).unwrap_or_default();
            writeln!(w, "{} [{route}{tier}]: {verdict}: {}", inline(&ob.id), inline(&ob.claim))?;
            for r in &ob.references {
                writeln!(w, "  {}", inline(r))?;
            }
        }
        for h in &o.holds {
            writeln!(w, "tier-1 hold: {}", inline(h))?;
        }
        for u in &o.unmet {
            writeln!(w, "not proven: {}", inline(u))?;
        }
        writeln!(
            w,
            "diff: {} file(s); blast radius {} ({})",
            o.change.files.len(),
            o.rerated.name(),
            inline(&o.rerated_because)
        )?;
        if !o.injections.is_empty() {
            injections(w, &o.injections, "", "  ", false)?;
        }
        writeln!(w, "nothing was persisted (standalone request)")?;
    } else {
        writeln!(w, "{}", inline(&detail))?;
    }
    verdict_line(w, &token, if cleared { "" } else { "NOT PROVEN" })
}

/// `andon verify --audit`: the strength of the audited proof, added to its record by the loop.
pub fn audit_report(
    w: &mut dyn Write,
    result: &Result<crate::andon_loop::audit::AuditOutcome, String>,
    json_out: bool,
) -> io::Result<()> {
    let token = match result {
        Ok(o) => format!("audit:{}", o.strength),
        Err(_) => "refused".to_string(),
    };
    if json_out {
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "verdict": { "outcome": token } });
        match result {
            Ok(o) => v["audit"] = serde_json::to_value(o).expect("json"),
            Err(e) => v["verdict"]["detail"] = json!(e),
        }
        return writeln!(w, "{}", serde_json::to_string_pretty(&v).expect("json"));
    }
    match result {
        Ok(o) => {
            writeln!(
                w,
                "audit of `{}` by {}: {}: {}",
                inline(&o.evidence),
                inline(&o.tool),
                o.strength,
                inline(&o.detail)
            )?;
            writeln!(w, "next: run `andon loop`: it adds the audit to the evidence record")?;
        }
        Err(e) => writeln!(w, "{}", inline(e))?,
    }
    verdict_line(w, &token, "")
}

/// `andon preflight`: every check with its readiness level and fix. The JSON sidecar and the
/// human report list the same checks with the same levels.
pub fn preflight_json(items: &[crate::preflight::Item]) -> Value {
    let worst = items.iter().map(|i| i.level).max().unwrap_or(crate::preflight::Readiness::Ready);
    json!({
        "schema_version": SCHEMA_VERSION,
        "checks": items.iter().map(|i| json!({ "capability": i.capability, "level": i.level.name(),
            "found": i.found, "fix": i.fix })).collect::<Vec<_>>(),
        "next": match items.iter().find(|i| i.level == crate::preflight::Readiness::NotReady) {
            Some(i) => json!({ "action": "fix-setup", "gap": null,
                "detail": format!("{}: {}", i.capability, i.fix.clone().unwrap_or_default()) }),
            None => json!({ "action": "loop", "gap": null, "detail": "run `andon loop`" }),
        },
        "verdict": { "outcome": worst.name() },
    })
}

pub fn preflight(
    w: &mut dyn Write,
    items: &[crate::preflight::Item],
    format: Format,
    markdown: bool,
) -> io::Result<()> {
    if format == Format::Json {
        return writeln!(w, "{}", serde_json::to_string_pretty(&preflight_json(items)).expect("json"));
    }
    let worst = items.iter().map(|i| i.level).max().unwrap_or(crate::preflight::Readiness::Ready);
    if markdown {
        writeln!(w, "# andon preflight\n\n| capability | level | found | fix |\n|---|---|---|---|")?;
        for i in items {
            let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
            writeln!(
                w,
                "| {} | {} | {} | {} |",
                i.capability,
                i.level.name(),
                cell(&i.found),
                cell(i.fix.as_deref().unwrap_or("-"))
            )?;
        }
        return writeln!(w, "\n**{}**", worst.name());
    }
    for i in items {
        writeln!(w, "{:<16} {:<24} {}", i.level.name(), i.capability, i.found)?;
        if let Some(f) = &i.fix {
            writeln!(w, "{:<16} {:<24} fix: {f}", "", "")?;
        }
    }
    verdict_line(w, worst.name(), &format!("{} checks", items.len()))
}
