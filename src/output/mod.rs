//! Rendering for people: text, Markdown, SARIF, DOT and the other formats of each command's
//! result. A result's JSON document is its serialization (the library API owns the shapes);
//! every JSON document carries `schema_version` and ends with a `verdict` object, and every text
//! report ends with one `andon: verdict …` line.

pub mod check;
pub mod derived;
pub mod init;
pub mod layout;
pub mod loop_report;
pub mod report;
pub mod sarif;
pub mod status;
pub mod summary;

use std::io::{self, Write};

use crate::api::structure::{FactList, IndexCheck};
use crate::facts::{ColType, Facts, RELATIONS, RelId};
use crate::index::IndexReport;
use crate::ops::Injection;

pub use crate::api::SCHEMA_VERSION;

/// A result's JSON document, pretty-printed on its own line.
pub fn json(w: &mut dyn Write, doc: &impl serde::Serialize) -> io::Result<()> {
    writeln!(w, "{}", json_text(doc))
}

/// The JSON document `doc`, pretty-printed, with no raw hidden character ([`crate::text::json`]).
pub fn json_text(doc: &impl serde::Serialize) -> String {
    crate::text::json(&serde_json::to_string_pretty(doc).expect("a document serializes")).into_owned()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// Text from the repository made safe to print on one line (R123): the one rule in [`crate::text`].
pub use crate::text::line as inline;

/// The heading of the suspected-injection section, the same in every report that lists them.
pub const INJECTIONS_HEADING: &str = "Suspected injections (repository text addressing andon — reported, never obeyed)";

/// The suspected-injection section of a text or Markdown report: the heading (after `h2`) with the
/// count, then one `path:line: "text" (suspect for "word", …)` line each (after `item`), naming the
/// words that made it suspect. Path and text go through
/// [`inline`], and in Markdown their punctuation is escaped too, so quoted text can never start a
/// line of its own, forge a verdict line or open markup (R123).
pub(crate) fn injections(w: &mut dyn Write, list: &[Injection], h2: &str, item: &str, md: bool) -> io::Result<()> {
    let esc = |s: &str| if md { crate::text::markdown(s) } else { inline(s).into_owned() };
    writeln!(w, "{h2}{INJECTIONS_HEADING}: {}", list.len())?;
    for i in list {
        let words: Vec<String> = i.words.iter().map(|x| format!("\"{}\"", esc(x))).collect();
        writeln!(w, "{item}{}:{}: \"{}\" (suspect for {})", esc(&i.path), i.line, esc(&i.text), words.join(", "))?;
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

pub fn index_report(w: &mut dyn Write, r: &IndexReport, format: Format) -> io::Result<()> {
    let s = &r.summary;
    let total = r.total_files();
    match format {
        Format::Json => json(w, r),
        Format::Text => {
            if let Some(why) = &r.rebuilt {
                writeln!(w, "note: {}", inline(why))?;
            }
            for d in &r.diagnostics {
                if d.line > 0 {
                    writeln!(w, "warning: {}:{}: {} ({})", inline(&d.path), d.line, inline(&d.message), d.kind)?;
                } else {
                    writeln!(w, "warning: {}: {} ({})", inline(&d.path), inline(&d.message), d.kind)?;
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
                    inline(&st.name),
                    inline(root),
                    st.ecosystem,
                    st.files,
                    st.source,
                    st.confidence
                )?;
            }
            verdict_line(w, "indexed", "")
        }
    }
}

/// `andon index --check`: what changed, or why no usable index exists.
pub fn check_report(w: &mut dyn Write, check: &IndexCheck, format: Format) -> io::Result<()> {
    let changes = &check.changes;
    match format {
        Format::Json => json(w, check),
        Format::Text => match changes {
            Ok(c) if c.is_empty() => {
                writeln!(w, "the index is fresh")?;
                verdict_line(w, "fresh", "")
            }
            Ok(c) => {
                writeln!(w, "the index is stale: {} files changed since it was built; run `andon index`", c.len())?;
                for ch in c {
                    writeln!(w, "  {:<8} {}", ch.change, inline(&ch.path))?;
                }
                verdict_line(w, "stale", &format!("{} changed", c.len()))
            }
            Err(why) => {
                writeln!(w, "the index is stale: {}", inline(&why.to_string()))?;
                verdict_line(w, "stale", "no usable index")
            }
        },
    }
}

pub fn facts_report(w: &mut dyn Write, list: &FactList, format: Format) -> io::Result<()> {
    if format == Format::Json {
        return json(w, list);
    }
    let mut n = 0;
    for (r, row) in list.selected() {
        n += 1;
        writeln!(w, "{}", render_fact(&list.facts, r, row))?;
    }
    verdict_line(w, "listed", &format!("{n} facts"))
}

/// One fact as Datalog text on one line: `Import("src/a.py", 3, "os", "static")`, each string
/// through the one quoted-string escaping.
pub fn render_fact(facts: &Facts, r: RelId, row: &[u32]) -> String {
    let info = r.info();
    let vals: Vec<String> = info
        .columns
        .iter()
        .zip(row)
        .map(|(c, v)| if c.ty == ColType::Int { v.to_string() } else { crate::text::quoted(facts.str(*v)) })
        .collect();
    format!("{}({})", info.name, vals.join(", "))
}

/// `andon facts --schema`-style listing of every relation.
pub fn schema_report(w: &mut dyn Write, format: Format) -> io::Result<()> {
    match format {
        Format::Json => json(w, &crate::api::structure::Schema),
        Format::Text => {
            for r in RELATIONS {
                let cols: Vec<&str> = r.columns.iter().map(|c| c.name).collect();
                writeln!(w, "{}({})\n    {}", r.name, cols.join(", "), r.doc)?;
            }
            verdict_line(w, "listed", &format!("{} relations", RELATIONS.len()))
        }
    }
}

/// `andon config show`: every effective setting, its value and where it came from.
pub fn settings_report(w: &mut dyn Write, cfg: &crate::config::Config, format: Format) -> io::Result<()> {
    let rows = cfg.settings.rows();
    let source = cfg.source_shown();
    match format {
        Format::Json => json(w, cfg),
        Format::Text => {
            writeln!(w, "settings file: {}", inline(source.as_deref().unwrap_or("none (all defaults)")))?;
            if let Some(p) = &cfg.shadowed {
                writeln!(
                    w,
                    "ignored: the [tool.andon] table in {} (andon.toml wins whole)",
                    inline(&p.to_string_lossy())
                )?;
            }
            for (k, v, origin) in &rows {
                let v = match v {
                    crate::config::Scalar::Str(s) => inline(s).into_owned(),
                    crate::config::Scalar::Bool(b) => b.to_string(),
                    crate::config::Scalar::Int(n) => n.to_string(),
                };
                writeln!(w, "  {k:<24} {v:<28} {}", inline(&origin.to_string()))?;
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
pub fn disabled(w: &mut dyn Write, d: &crate::api::Disabled, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, d);
    }
    writeln!(w, "{}", d.message())?;
    verdict_line(w, "disabled", "")
}

/// A command that reads the ledger found it invalid: nothing acts on it.
pub fn invalid_ledger(w: &mut dyn Write, error: &str, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, &crate::api::InvalidLedger { error: error.to_string() });
    }
    verdict_line(w, "refused", "invalid ledger")
}

/// `andon ledger repair`: what was set aside, or why nothing was (with every problem, as
/// `andon ledger check` lists them).
pub fn ledger_repair(w: &mut dyn Write, r: &crate::api::work::LedgerRepair, format: Format) -> io::Result<()> {
    if format == Format::Json {
        return json(w, r);
    }
    for (at, m) in &r.issues {
        writeln!(w, "{at}: {}", inline(m))?;
    }
    let (outcome, detail) = r.outcome();
    verdict_line(w, outcome, &detail)
}

/// `andon ledger check`: every problem with its line, or the state's counts.
pub fn ledger_check(w: &mut dyn Write, c: &crate::api::work::LedgerCheck, format: Format) -> io::Result<()> {
    if format == Format::Json {
        return json(w, c);
    }
    let issues = c.issues();
    for (at, m) in &issues {
        writeln!(w, "{at}: {}", inline(m))?;
    }
    let log = c.dir.join(crate::ledger::LOG_FILE).to_string_lossy().replace('\\', "/");
    match (c.outcome(), c.result.as_ref().and_then(|(_, s)| s.as_ref())) {
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
        ("stale", _) => verdict_line(
            w,
            "stale",
            "the log is valid; `andon ledger repair` or the next `andon loop` renders ledger.md again",
        ),
        _ => verdict_line(w, "invalid", &format!("{} problem(s); nothing may act on this ledger", issues.len())),
    }
}

/// `andon propose`: where the proposal is and what happens next, or every problem (nothing
/// written).
pub fn proposal(w: &mut dyn Write, p: &crate::api::work::Proposed, json_out: bool) -> io::Result<()> {
    use crate::api::work::Proposed;
    if json_out {
        return json(w, p);
    }
    match p {
        Proposed::Refused { problems, .. } => {
            for p in problems {
                writeln!(w, "refused: {}", inline(p))?;
            }
            verdict_line(w, "refused", "nothing written")
        }
        Proposed::Written { proposal, file, .. } => {
            writeln!(w, "proposal for `{}` written to {}", inline(&proposal.gap), inline(&file.display().to_string()))?;
            writeln!(w, "next: {}", inline(&p.next_detail()))?;
            verdict_line(w, "proposed", &proposal.gap)
        }
    }
}

/// `andon propose --packet`: what the proposer of one gap needs. Every string in it is
/// repository or ledger text, escaped for the terminal.
pub fn packet(w: &mut dyn Write, p: &crate::andon_loop::packet::Packet, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, p);
    }
    let g = &p.gap;
    let kind = crate::api::work::gap_kind_name(g.kind);
    writeln!(w, "gap {} ({kind}, {}) in stage `{}`", inline(&g.id), g.status.name(), inline(&g.stage))?;
    let at = g.location.line.map(|l| format!(":{l}")).unwrap_or_default();
    writeln!(w, "  {}{at}: {}", inline(&g.location.path), inline(&g.summary))?;
    if let Some(wire) = &g.wire {
        writeln!(w, "  wire {} → {}", inline(&wire.producer), inline(&wire.consumer))?;
    }
    match &p.stage {
        Some(s) => writeln!(
            w,
            "stage `{}`: root {} ({}, {})",
            inline(&g.stage),
            inline(&s.root),
            inline(&s.confidence),
            inline(&s.source)
        )?,
        None => writeln!(w, "stage `{}`: not recorded in the ledger", inline(&g.stage))?,
    }
    if !p.earlier_gaps.is_empty() {
        writeln!(w, "earlier gaps of the stage:")?;
        for e in &p.earlier_gaps {
            writeln!(w, "  {} ({}): {}", inline(&e.id), e.status.name(), inline(&e.summary))?;
        }
    }
    if !p.evidence.is_empty() {
        writeln!(w, "evidence:")?;
        for e in &p.evidence {
            let verdict =
                serde_json::to_value(e.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let of = e.gap.as_deref().map(|g| format!(" for {}", inline(g))).unwrap_or_default();
            writeln!(w, "  {}{of}: {verdict} by {}: {}", inline(&e.id), inline(&e.approach), inline(&e.claim))?;
        }
    }
    let h = &p.house_rules;
    writeln!(w, "{}", inline(&h.label()))?;
    for r in &h.rules {
        writeln!(w, "  {}: {}", r.line, inline(&r.text))?;
    }
    for s in &h.skipped {
        writeln!(w, "  skipped (past lint_max_rules): {}", inline(s))?;
    }
    for r in &h.suspected_injections {
        writeln!(w, "  suspected injection, not a rule: {}: {}", r.line, inline(&r.text))?;
    }
    verdict_line(w, "packet", &g.id)
}

/// The human report of a written proposal, beside its JSON artifact (`proposals/G.md`, R125);
/// nothing for a refused one. Err says what was not written.
fn proposal_markdown(w: &mut dyn Write, p: &crate::api::work::Proposed) -> io::Result<()> {
    let crate::api::work::Proposed::Written { proposal, .. } = p else { return Ok(()) };
    let md = |s: &str| crate::text::markdown(s);
    // inside a code span nothing is escaped but what could end it or hide
    let code = |s: &str| inline(s).replace('`', "'");
    let mut out = String::new();
    out.push_str(&format!("# Proposal for gap `{}`\n\n", code(&proposal.gap)));
    out.push_str(&format!("- **What the fix does:** {}\n", md(&proposal.description)));
    out.push_str(&format!("- **Blast radius:** {}\n", proposal.blast_radius.name()));
    out.push_str(&format!("- **Approach:** {}, because {}\n", md(&proposal.approach), md(&proposal.reason)));
    out.push_str(&format!("- **Base:** {}\n", md(proposal.base_commit.as_deref().unwrap_or("none (no git)"))));
    if let Some(who) = &proposal.proposer {
        out.push_str(&format!("- **Proposer:** {}\n", md(who)));
    }
    out.push_str("\n## Write-set\n\n");
    for f in &proposal.write_set {
        out.push_str(&format!("- `{}`\n", code(f)));
    }
    if !proposal.interview.is_empty() {
        out.push_str("\n## Interview\n\n");
        for (i, q) in proposal.interview.iter().enumerate() {
            out.push_str(&format!(
                "{}. {} (recommended: {}; answer: {})\n",
                i + 1,
                md(&q.question),
                md(&q.recommended),
                md(&q.answer)
            ));
        }
    }
    out.push_str(&format!("\nNext: {}\n", md(&p.next_detail())));
    w.write_all(out.as_bytes())
}

/// The human report of a verification, beside its evidence artifact (`evidence/G.md`, R125);
/// nothing when verify stopped before proving. Err says what was not written.
fn evidence_markdown(w: &mut dyn Write, v: &crate::api::work::Verified) -> io::Result<()> {
    let Ok(o) = &v.result else { return Ok(()) };
    let md = |s: &str| crate::text::markdown(s);
    // inside a code span nothing is escaped but what could end it or hide
    let code = |s: &str| inline(s).replace('`', "'");
    let e = &o.evidence;
    let verdict = serde_json::to_value(e.verdict).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let mut out = String::new();
    out.push_str(&format!("# Evidence `{}` for gap `{}`\n\n", code(&e.id), code(&o.gap)));
    out.push_str(&format!("- **Verdict:** {verdict} (`andon: verdict {}`)\n", v.token()));
    out.push_str(&format!("- **Approach:** {}\n", md(&e.approach)));
    out.push_str(&format!("- **Claim:** {}\n", md(&e.claim)));
    out.push_str(&format!("- **What it showed:** {}\n", md(&e.evidence)));
    out.push_str(&format!("- **Blast radius of the diff:** {} ({})\n", o.rerated.name(), md(&o.rerated_because)));
    if let Some(r) = &e.red_first {
        out.push_str("\n## Red first\n\n| run | command | exit |\n|---|---|---|\n");
        let runs =
            [("without the fix (copy)", &r.before), ("with the fix (copy)", &r.control), ("with the fix", &r.after)];
        for (what, list) in runs {
            for c in list.iter() {
                let exit = c.exit.map_or_else(
                    || if c.timed_out { "timed out".into() } else { "did not run".into() },
                    |x| x.to_string(),
                );
                out.push_str(&format!("| {what} | `{}` | {exit} |\n", code(&c.command).replace('|', "\\|")));
            }
        }
        if !r.flipped.is_empty() {
            out.push_str(&format!("\nFlipped: {}\n", r.flipped.iter().map(|f| md(f)).collect::<Vec<_>>().join(", ")));
        }
    }
    if !e.references.is_empty() {
        out.push_str("\n## References\n\n");
        for r in &e.references {
            out.push_str(&format!("- {}\n", md(r)));
        }
    }
    out.push_str("\n## Diff\n\n");
    for (status, path) in &o.change.files {
        out.push_str(&format!("- {status} `{}`\n", code(path)));
    }
    w.write_all(out.as_bytes())
}

/// A command's human report under `output_dir`, as the API asks for it.
pub fn human_report(report: crate::api::Human<'_>, w: &mut dyn Write) -> io::Result<()> {
    use crate::api::Human;
    match report {
        Human::Loop(step) => loop_report::report(w, step, false),
        Human::Status(s) => status::report(w, s, status::StatusFormat::Markdown),
        Human::Preflight(p) => preflight(w, p, Format::Text, true),
        Human::Proposal(p) => proposal_markdown(w, p),
        Human::Evidence(v) => evidence_markdown(w, v),
    }
}

/// A person's decision: what was recorded, or why it was refused (nothing written).
pub fn decision(w: &mut dyn Write, d: &crate::api::work::Decided, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, d);
    }
    let (outcome, text) = d.said();
    writeln!(w, "{}", inline(text))?;
    verdict_line(w, outcome, "")
}

/// `andon verify`: the verdict (a token that cannot be mistaken for cleared), the evidence, the
/// diff checks, and the next action.
pub fn verify_report(w: &mut dyn Write, v: &crate::api::work::Verified, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, v);
    }
    let (token, gap, result) = (v.token(), &v.gap, &v.result);
    let (detail, next) = v.detail_and_next();
    // the verdict first: a reader who stops at the first line cannot take a refutation for a pass
    writeln!(w, "{token}: {}", inline(&detail))?;
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
    if !v.injections.is_empty() {
        injections(w, &v.injections, "", "  ", false)?;
    }
    writeln!(w, "next: {}", inline(&next))?;
    verdict_line(w, &token, gap)
}

/// `andon verify --request`: the verdict a caller cannot mistake for cleared (R111), every
/// obligation with its route and what its proof showed, and the diff checks.
pub fn request_report(w: &mut dyn Write, r: &crate::api::work::RequestVerified, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, r);
    }
    let (token, detail) = r.token_and_detail();
    let (cleared, result) = (r.cleared(), &r.result);
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
pub fn audit_report(w: &mut dyn Write, a: &crate::api::work::Audited, json_out: bool) -> io::Result<()> {
    if json_out {
        return json(w, a);
    }
    let (token, result) = (a.token(), &a.result);
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
        Err(e) => writeln!(w, "{}", inline(&e.to_string()))?,
    }
    verdict_line(w, &token, "")
}

/// `andon preflight`: every check with its readiness level and fix, as text or as the
/// Markdown report. The JSON sidecar and the human report list the same checks with the same
/// levels.
pub fn preflight(w: &mut dyn Write, p: &crate::api::work::Preflight, format: Format, markdown: bool) -> io::Result<()> {
    if format == Format::Json {
        return json(w, p);
    }
    let (items, worst) = (&p.items, p.worst());
    if markdown {
        writeln!(w, "# andon preflight\n\n| capability | level | found | fix |\n|---|---|---|---|")?;
        for i in items {
            let cell = crate::text::markdown;
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
        writeln!(w, "{:<16} {:<24} {}", i.level.name(), i.capability, inline(&i.found))?;
        if let Some(f) = &i.fix {
            writeln!(w, "{:<16} {:<24} fix: {}", "", "", inline(f))?;
        }
    }
    verdict_line(w, worst.name(), &format!("{} checks", items.len()))
}

/// A contract's state in a report: `broken` while it has a blocking finding, else `kept`.
pub(crate) fn contract_status(c: &crate::check::ContractResult) -> &'static str {
    if c.blocking > 0 { "broken" } else { "kept" }
}
