//! The index and what is derived from it: `index`, `index --check`, `facts`, `query`, `stream`,
//! `why`, `check` (the structural gate) and `config show`, each a typed result serialized as
//! its JSON document.

use std::path::Path;

use serde_json::{Value, json};

use super::{Error, Freshness, SCHEMA_VERSION, json_document};
use crate::check::{CheckReport, Finding, Hop, StaleException};
use crate::config::Config;
use crate::datalog::Budget;
use crate::datalog::explain::Derivation;
use crate::datalog::lint::Cartesian;
use crate::dialect::Ty;
use crate::facts::{ColType, Facts, RELATIONS, RelId};
use crate::index::{self, Change, Diag, Index, IndexOptions, IndexReport};
use crate::ops::{StreamReport, WhyReport};

/// `andon index`: parses what changed and persists the index.
pub fn index(root: &Path, opts: &IndexOptions, progress: &dyn crate::index::Watch) -> Result<IndexReport, Error> {
    Ok(index::update(root, opts, progress).map_err(|e| e.to_string())?)
}

fn diag_json(d: &Diag) -> Value {
    let mut v = json!({ "path": d.path, "kind": d.kind, "message": d.message });
    if d.line > 0 {
        v["line"] = json!(d.line);
    }
    v
}

impl IndexReport {
    /// Source files indexed, over every language.
    pub fn total_files(&self) -> u64 {
        self.summary.files_by_lang.iter().map(|(_, n)| n).sum()
    }

    fn document(&self) -> Value {
        let s = &self.summary;
        let by_lang: serde_json::Map<String, Value> =
            s.files_by_lang.iter().map(|(l, n)| (l.clone(), json!(n))).collect();
        let stages: Vec<Value> = s
            .stages
            .iter()
            .map(|st| json!({"name": st.name, "root": st.root, "ecosystem": st.ecosystem, "confidence": st.confidence, "source": st.source, "files": st.files}))
            .collect();
        json!({
            "schema_version": SCHEMA_VERSION,
            "root": self.root.display().to_string(),
            "index": self.index_path.display().to_string(),
            "files": {
                "total": self.total_files(),
                "by_language": by_lang,
                "manifests": s.manifests,
                "skipped": s.skipped,
                "parsed": self.parsed,
                "reused": self.reused,
                "removed": self.removed,
                "rehashed": self.rehashed,
            },
            "facts": s.facts,
            "stages": stages,
            "parse_errors": s.parse_errors,
            "files_with_parse_errors": s.files_with_parse_errors,
            "diagnostics": self.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
            "unchanged": self.unchanged,
            "resolution": if self.resolved { "computed" } else { "kept" },
            "rebuilt": self.rebuilt,
            "elapsed_ms": (self.elapsed_ms * 1000.0).round() / 1000.0,
            "verdict": { "outcome": "indexed" },
        })
    }
}

/// `andon index --check`: what changed since the index was built, or why there is no usable
/// index. Writes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexCheck {
    pub changes: Result<Vec<Change>, index::Unusable>,
}

impl IndexCheck {
    /// The index is up to date with the working tree.
    pub fn fresh(&self) -> bool {
        matches!(&self.changes, Ok(c) if c.is_empty())
    }

    fn document(&self) -> Value {
        let fresh = self.fresh();
        match &self.changes {
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
                "reason": why.to_string(),
                "verdict": { "outcome": "stale" },
            }),
        }
    }
}

/// `andon index --check`.
pub fn index_check(root: &Path, opts: &IndexOptions) -> Result<IndexCheck, Error> {
    let changes = index::check(root, opts)?;
    // every stored blob is read and its checksum verified, details too
    let changes =
        changes.and_then(|c| index::verify(root).map(|()| c).map_err(|why| index::Unusable::Damaged(why.to_string())));
    Ok(IndexCheck { changes })
}

/// `andon facts`: the facts of the fresh index, sorted, optionally of one relation or one file.
pub struct FactList {
    pub facts: Facts,
    pub relation: Option<RelId>,
    pub file: Option<String>,
}

/// The relation named `name`, or an error naming the nearest one.
pub fn relation(name: &str) -> Result<RelId, Error> {
    RelId::by_name(name).ok_or_else(|| {
        let near = RELATIONS
            .iter()
            .min_by_key(|r| crate::text::edit_distance(&name.to_lowercase(), &r.name.to_lowercase()))
            .map(|r| r.name)
            .unwrap_or("File");
        Error::Failed(format!("unknown relation `{name}`; did you mean `{near}`? (`andon facts --schema` lists them)"))
    })
}

/// `andon facts`.
pub fn facts(
    root: &Path,
    opts: &IndexOptions,
    how: Freshness,
    relation: Option<&str>,
    file: Option<&str>,
) -> Result<FactList, Error> {
    let relation = relation.map(self::relation).transpose()?;
    let idx = super::fresh_index(root, opts, how)?;
    let facts = idx.facts().map_err(|e| format!("the index cannot be read: {e}"))?;
    Ok(FactList { facts, relation, file: file.map(|f| f.trim_start_matches("./").to_string()) })
}

impl FactList {
    /// The selected facts, in relation then row order.
    pub fn selected(&self) -> impl Iterator<Item = (RelId, &[u32])> + '_ {
        let facts = &self.facts;
        (0..RELATIONS.len()).map(|i| RelId(i as u16)).filter(move |r| self.relation.is_none_or(|x| x == *r)).flat_map(
            move |r| {
                let info = r.info();
                let path_cols: Vec<usize> =
                    info.columns.iter().enumerate().filter(|(_, c)| c.ty == ColType::Path).map(|(i, _)| i).collect();
                facts
                    .rows(r)
                    .iter()
                    .filter(move |row| match self.file.as_deref() {
                        None => true,
                        Some(p) => path_cols.first().is_some_and(|&c| facts.str(row[c]) == p),
                    })
                    .map(move |row| (r, &row[..]))
            },
        )
    }

    fn document(&self) -> Value {
        let rows: Vec<Value> = self
            .selected()
            .map(|(r, row)| {
                let info = r.info();
                let mut o = serde_json::Map::new();
                o.insert("relation".into(), json!(info.name));
                for (c, v) in info.columns.iter().zip(row) {
                    let val = if c.ty == ColType::Int { json!(v) } else { json!(self.facts.str(*v)) };
                    o.insert(c.name.into(), val);
                }
                Value::Object(o)
            })
            .collect();
        json!({ "schema_version": SCHEMA_VERSION, "count": rows.len(), "facts": rows, "verdict": { "outcome": "listed" } })
    }
}

/// `andon facts --schema`: every relation with its columns and doc line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Schema;

impl Schema {
    fn document(&self) -> Value {
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
        json!({ "schema_version": SCHEMA_VERSION, "relations": rels, "verdict": {"outcome": "listed"} })
    }
}

/// `andon query --schema`: the relations a query can name, the built-in ones and those of the
/// rule files given.
#[derive(Clone, Debug)]
pub struct QuerySchema {
    pub relations: Vec<SchemaRelation>,
}

/// A relation as `andon query --schema` lists it.
#[derive(Clone, Debug)]
pub struct SchemaRelation {
    pub name: String,
    /// `base`, `derived` or `computed`.
    pub kind: &'static str,
    pub doc: String,
    /// The file that declares it.
    pub source: String,
    /// Each column's name and type name.
    pub columns: Vec<(String, &'static str)>,
}

impl QuerySchema {
    /// The relations of `prog` but the query's own.
    pub fn of(prog: &crate::dialect::Program) -> QuerySchema {
        use crate::dialect::RelKind;
        let relations = prog
            .rels
            .iter()
            .filter(|r| r.name != crate::dialect::QUERY_REL)
            .map(|r| SchemaRelation {
                name: r.name.clone(),
                kind: match r.kind {
                    RelKind::Base => "base",
                    RelKind::Derived => "derived",
                    RelKind::Computed => "computed",
                },
                doc: r.doc.clone(),
                source: r.source.clone(),
                columns: r.columns.iter().map(|(n, t)| (n.clone(), t.name())).collect(),
            })
            .collect();
        QuerySchema { relations }
    }

    fn document(&self) -> Value {
        let rels: Vec<Value> = self
            .relations
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "kind": r.kind,
                    "doc": r.doc,
                    "source": r.source,
                    "columns": r.columns.iter().map(|(n, t)| json!({"name": n, "type": t})).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "schema_version": SCHEMA_VERSION, "relations": rels, "verdict": {"outcome": "listed"} })
    }
}

fn scalar_json(v: &crate::config::Scalar) -> Value {
    match v {
        crate::config::Scalar::Str(s) => json!(s),
        crate::config::Scalar::Bool(b) => json!(b),
        crate::config::Scalar::Int(n) => json!(n),
    }
}

/// `andon config show`: every effective setting with its value and origin. Runs even when andon
/// is disabled.
pub fn config_show(root: &Path) -> Result<Config, Error> {
    if !root.exists() {
        return Err(format!("{}: no such directory", root.display()).into());
    }
    super::config(root)
}

impl Config {
    /// The settings file, `/`-separated, if there is one.
    pub fn source_shown(&self) -> Option<String> {
        self.source.as_ref().map(|p| p.to_string_lossy().replace('\\', "/"))
    }

    fn document(&self) -> Value {
        let mut settings = serde_json::Map::new();
        for (k, v, origin) in &self.settings.rows() {
            settings.insert(k.to_string(), json!({ "value": scalar_json(v), "origin": origin.to_string() }));
        }
        json!({
            "schema_version": SCHEMA_VERSION,
            "source": self.source_shown(),
            "ignored": self.shadowed.as_ref().map(|p| p.to_string_lossy().replace('\\', "/")),
            "settings": settings,
            "contracts": self.contracts.len(),
            "verdict": { "outcome": if self.settings.enabled.value { "shown" } else { "disabled" } },
        })
    }
}

json_document!(IndexReport, IndexCheck, FactList, Schema, QuerySchema, Config);

/// Budgets given on the command line for a run-time evaluation; None keeps `[query]` of the
/// settings, else the engine's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BudgetFlags {
    pub max_rows: Option<u64>,
    pub max_memory_mib: Option<u64>,
    pub timeout_secs: Option<u64>,
}

/// The budget of a run-time evaluation: each limit from its flag, else from `[query]` of `cfg`,
/// else the engine's default.
pub fn budget(cfg: &Config, flags: &BudgetFlags) -> Budget {
    let q = &cfg.settings.query;
    let pick = |flag: Option<u64>, set: &Option<crate::config::Setting<u64>>, default: u64| {
        flag.or(set.as_ref().map(|s| s.value)).unwrap_or(default)
    };
    let d = Budget::default();
    Budget {
        max_rows: pick(flags.max_rows, &q.max_rows, d.max_rows),
        max_memory_mib: pick(flags.max_memory_mib, &q.max_memory_mib, d.max_memory_mib),
        timeout_secs: pick(flags.timeout_secs, &q.timeout_secs, d.timeout_secs),
    }
}

/// `andon check`: judges the contracts of the settings on the fresh index `idx` (`rule` contracts
/// within the budget `flags` and the settings give); with `base`, the same contracts on the tree
/// of that git revision too, marking each finding new or not.
pub fn check(
    root: &Path,
    cfg: &Config,
    opts: &IndexOptions,
    idx: &Index,
    base: Option<&str>,
    flags: &BudgetFlags,
) -> Result<CheckReport, Error> {
    let budget = budget(cfg, flags);
    let mut report = match crate::check::run(idx, root, cfg, budget) {
        Ok(r) => r,
        Err(crate::check::CheckError::Config(e)) => return Err(e.into()),
        Err(crate::check::CheckError::Other(m)) => return Err(Error::Failed(m)),
    };
    if let Some(base) = base {
        let before = crate::check::base::fingerprints(root, base, cfg, opts, budget)?;
        // the ledger is not versioned with the code: its findings are neither new nor old
        for f in report.findings.iter_mut().filter(|f| f.kind != crate::config::ContractKind::Ledger) {
            f.new = Some(!before.contains(&f.fingerprint));
        }
        // a standing tier-1 hold blocks a change that touches its paths (decision 13)
        let touched = crate::check::base::changed(root, base)?;
        report.findings.retain(|f| {
            f.kind != crate::config::ContractKind::Ledger
                || f.key.first().map(String::as_str) != Some("hold")
                || f.key[1..3].iter().any(|p| touched.contains(p))
        });
        report.base = Some(base.to_string());
    }
    // one offending import, one finding: after the findings are marked new, each group by member
    crate::check::group::group(&mut report);
    Ok(report)
}

/// Counts the summary and the verdict rest on.
pub struct Tally {
    pub blocking: usize,
    pub tiers: [usize; 3],
    pub advisory: usize,
    pub excused: usize,
    pub new: Option<usize>,
    pub broken: usize,
}

/// The counts of a check report.
pub fn tally(r: &CheckReport) -> Tally {
    let mut t = Tally { blocking: 0, tiers: [0; 3], advisory: 0, excused: 0, new: None, broken: 0 };
    for f in &r.findings {
        if f.excused.is_some() {
            t.excused += 1;
            continue;
        }
        t.tiers[(f.tier as usize).clamp(1, 3) - 1] += 1;
        if f.blocking() {
            t.blocking += 1;
        } else {
            t.advisory += 1;
        }
        if f.new == Some(true) {
            *t.new.get_or_insert(0) += 1;
        }
    }
    if r.base.is_some() {
        t.new.get_or_insert(0);
    }
    t.broken = r.contracts.iter().filter(|c| c.blocking > 0).count();
    t
}

/// The verdict: `stale-exceptions` (the configuration must change), `blocked`, or `pass`.
pub fn outcome(r: &CheckReport) -> &'static str {
    if !r.unjudged.is_empty() {
        "unjudged"
    } else if !r.stale_exceptions.is_empty() {
        "stale-exceptions"
    } else if r.blocking() > 0 {
        "blocked"
    } else {
        "pass"
    }
}

/// What a stale exception is, and what to do about it.
pub fn stale_message(s: &StaleException) -> String {
    let mut what = Vec::new();
    if let Some(f) = &s.from {
        what.push(format!("from `{f}`"));
    }
    if let Some(t) = &s.to {
        what.push(format!("to `{t}`"));
    }
    if let Some(a) = &s.at {
        what.push(format!("at `{a}`"));
    }
    if let Some(n) = &s.name {
        what.push(format!("name `{n}`"));
    }
    let why = s.unresolved.as_ref().map(|m| format!(" ({m})")).unwrap_or_default();
    format!(
        "exception ({}, reason: {:?}) matches no finding any more{why}; remove this exception",
        what.join(", "),
        s.reason
    )
}

fn hop_json(h: &Hop) -> Value {
    json!({ "path": h.path, "line": h.line, "col": h.col, "spec": h.spec, "target": h.target,
            "confidence": h.confidence, "tier": h.tier })
}

/// One finding as JSON, without what it breaks.
fn finding_json(f: &Finding) -> Value {
    json!({ "id": f.fingerprint, "contract": f.contract, "kind": f.kind.name(), "tier": f.tier,
        "blocking": f.blocking(), "path": f.path, "line": f.line, "col": f.col, "message": f.message,
        "witness": f.witness.iter().map(hop_json).collect::<Vec<_>>(),
        "excused": f.excused.as_ref().map(|e| json!({ "line": e.line, "reason": e.reason })),
        "new": f.new,
        "pair": f.pair.as_ref().map(|(a, b)| json!({ "from": a, "to": b })) })
}

impl CheckReport {
    fn document(&self) -> Value {
        let r = self;
        let t = tally(r);
        let contracts: Vec<Value> = r
            .contracts
            .iter()
            .map(|c| {
                json!({ "name": c.name, "kind": c.kind.name(), "description": c.description, "line": c.line,
                    "status": if c.blocking > 0 { "broken" } else { "kept" },
                    "findings": c.findings, "blocking": c.blocking, "excused": c.excused })
            })
            .collect();
        let findings: Vec<Value> = r
            .findings
            .iter()
            .map(|f| {
                let mut v = finding_json(f);
                v["breaks"] = f.parts().iter().map(finding_json).collect::<Vec<_>>().into();
                v
            })
            .collect();
        let stale: Vec<Value> = r
            .stale_exceptions
            .iter()
            .map(|s| {
                json!({ "contract": s.contract, "path": r.config, "line": s.line, "from": s.from, "to": s.to,
                    "at": s.at, "name": s.name,
                    "reason": s.reason, "message": stale_message(s) })
            })
            .collect();
        json!({
            "schema_version": SCHEMA_VERSION,
            "config": r.config,
            "base": r.base,
            "contracts": contracts,
            "findings": findings,
            "stale_exceptions": stale,
            "unjudged": r.unjudged.iter().map(|u| json!({ "contract": u.contract, "line": u.line, "message": u.message })).collect::<Vec<_>>(),
            "suspected_injections": super::work::injections_json(&r.suspected_injections),
            "unanalysed": r.unanalysed.iter().map(|(p, why)| json!({ "path": p, "reason": why })).collect::<Vec<_>>(),
            "summary": { "contracts": r.contracts.len(), "broken": t.broken, "blocking": t.blocking,
                         "tier1": t.tiers[0], "tier2": t.tiers[1], "tier3": t.tiers[2], "advisory": t.advisory,
                         "excused": t.excused, "exceptions_used": r.exceptions_used, "new": t.new },
            "verdict": { "outcome": outcome(r), "blocking": t.blocking },
        })
    }
}

/// `andon stream`: stages, wires, stream order and cycles, from the fresh index.
pub fn stream(idx: &Index) -> Result<StreamReport, Error> {
    Ok(crate::ops::stream(idx)?)
}

impl StreamReport {
    fn document(&self) -> Value {
        let r = self;
        json!({
        "schema_version": SCHEMA_VERSION,
        "stages": r.stages.iter().map(|s| json!({
            "name": s.name, "root": s.root, "ecosystem": s.ecosystem,
            "confidence": s.confidence, "source": s.source, "files": s.files,
        })).collect::<Vec<_>>(),
        "wires": r.wires.iter().map(|x| json!({
            "producer": x.producer, "consumer": x.consumer, "imports": x.imports,
            "symbols": x.symbols, "confidence": x.confidence, "kinds": x.kinds, "used_for": x.used_for.token(),
        })).collect::<Vec<_>>(),
        "order": r.order,
        "cycles": r.cycles,
        "module_cycles": r.module_cycles,
        "support": r.support.iter().map(|x| json!({ "dir": x.dir, "role": x.role, "files": x.files })).collect::<Vec<_>>(),
        "within": r.within.as_ref().map(|w| json!({
            "stage": w.stage, "base": w.base,
            "modules": w.modules.iter().map(|m| json!({
                "name": m.name, "paths": m.paths, "files": m.files, "layer": m.layer, "package": m.package,
            })).collect::<Vec<_>>(),
            "imports": w.imports.iter().map(|(a, b, n)| json!({ "from": a, "to": b, "imports": n })).collect::<Vec<_>>(),
            "layers": w.layers,
            "independent": w.independent,
        })),
        "declared": r.declared.as_ref().map(|d| json!({
            "undeclared_imports": d.undeclared.iter().map(|(p, c, path, line)| json!({
                "producer": p, "consumer": c, "path": path, "line": line })).collect::<Vec<_>>(),
            "outside": d.outside,
        })),
        "verdict": { "outcome": "mapped", "stages": r.stages.len(), "wires": r.wires.len(), "cycles": r.cycles.len() },
        })
    }
}

/// `andon why`: the shortest dependency chain from `from` to `to` (stages, modules, files or
/// directories), hop by hop.
pub fn why(idx: &Index, from: &str, to: &str) -> Result<WhyReport, Error> {
    Ok(crate::ops::why(idx, from, to)?)
}

impl WhyReport {
    fn document(&self) -> Value {
        let r = self;
        let hops: Option<Vec<Value>> = r.chain.as_ref().map(|c| {
            c.iter()
                .map(|h| json!({"path": h.path, "line": h.line, "spec": h.spec, "target": h.target, "confidence": h.confidence}))
                .collect()
        });
        json!({
            "schema_version": SCHEMA_VERSION,
            "from": { "name": r.from.name, "kind": r.from.kind },
            "to": { "name": r.to.name, "kind": r.to.kind },
            "found": r.chain.is_some(),
            "hops": hops.unwrap_or_default(),
            "verdict": { "outcome": if r.chain.is_some() { "found" } else { "no-chain" } },
        })
    }
}

/// `andon query`: a query (and rule files, each `(name, text)`) parsed and checked against the
/// built-in program, before any index work.
pub fn prepare(query: &str, rules: &[(String, String)]) -> Result<crate::datalog::Query, Error> {
    crate::datalog::prepare(query, rules).map_err(|e| {
        let text = if e.source == "query" {
            query.to_string()
        } else {
            rules.iter().find(|(n, _)| *n == e.source).map(|(_, t)| t.clone()).unwrap_or_default()
        };
        Error::Failed(datalog_error(&e, &text))
    })
}

/// A Datalog error with the offending source line and a caret under the column.
fn datalog_error(e: &crate::dialect::DialectError, text: &str) -> String {
    let line = text.lines().nth(e.span.line.saturating_sub(1) as usize).unwrap_or("");
    let (shown, at) = around(line, e.span.col.saturating_sub(1) as usize);
    let caret = format!("{}^", " ".repeat(at));
    format!("{e}\n  | {shown}\n  | {caret}")
}

/// At most [`AROUND`] characters each side of column `col` of `line` (a long line is cut, `…` where
/// it is), and where `col` is in what is shown.
fn around(line: &str, col: usize) -> (String, usize) {
    const AROUND: usize = 60;
    let chars: Vec<char> = line.chars().collect();
    let from = col.saturating_sub(AROUND);
    let to = (col + AROUND).min(chars.len());
    let mut shown = String::new();
    if from > 0 {
        shown.push('…');
    }
    shown.extend(&chars[from.min(chars.len())..to]);
    if to < chars.len() {
        shown.push('…');
    }
    (shown, col - from + usize::from(from > 0))
}

/// `--explain` derives at most this many answers.
pub const EXPLAIN_LIMIT: usize = 100;

/// A query's answer, with one derivation per row (the first [`EXPLAIN_LIMIT`]) when asked, and the
/// cartesian products in the bodies of the query and its rules.
pub struct Answered {
    pub answer: crate::datalog::Answer,
    pub explanations: Option<Vec<Derivation>>,
    pub warnings: Vec<Cartesian>,
}

/// `andon query`: answers `prepared` over the fresh index `idx` within the budget `flags` and the
/// settings give (an explanation has a budget of its own, as large); ledger relations come from
/// the ledger, and a query that reads them refuses an invalid ledger.
pub fn query(
    root: &Path,
    facts: &crate::datalog::Facts,
    prepared: &crate::datalog::Query,
    explain: bool,
    flags: &BudgetFlags,
) -> Result<Answered, Error> {
    let cfg = super::config(root)?;
    let budget = budget(&cfg, flags);
    let ledger_rows = if crate::datalog::needs_ledger(&prepared.prog, &prepared.prog.needed(&[prepared.rel])) {
        let dir = crate::ledger::dir_of(root, &cfg.settings);
        match crate::ledger::load(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            Some((_, state, records)) => {
                let mut rows = crate::ledger::facts(&state);
                // the constraint as status and the loop name it, from the same ledger
                let opts = crate::status::Options {
                    thrash: cfg.settings.thrash_threshold.value,
                    ingest: cfg.settings.gap_source.value == crate::config::GapSource::Ingest,
                };
                if let Some(c) = crate::status::agenda(&state, &records, opts).constraint {
                    rows.push(("LedgerConstraint", vec![c.wire.producer, c.wire.consumer, c.rule.to_string()]));
                }
                rows
            }
            None => Vec::new(),
        }
    } else {
        Vec::new()
    };
    let (answer, store) = crate::datalog::answer(prepared, facts, explain, &ledger_rows, budget)?;
    let explanations = if explain {
        let mut meter = crate::datalog::budget::Meter::new(budget);
        let rows = store.sorted_rows(&prepared.prog, answer.rel);
        let explained = rows
            .into_iter()
            .take(EXPLAIN_LIMIT)
            .map(|row| crate::datalog::explain::explain(&prepared.prog, &store, answer.rel, row, &mut meter));
        Some(explained.collect::<Result<Vec<_>, _>>().map_err(|e| e.to_string())?)
    } else {
        None
    };
    Ok(Answered { answer, explanations, warnings: prepared.cartesian_products() })
}

/// A cartesian-product warning as JSON.
fn cartesian_json(c: &Cartesian) -> Value {
    json!({ "kind": "cartesian-product", "rule": c.source, "line": c.line, "col": c.col, "atom": c.atom,
            "text": c.text, "relation": c.head, "message": c.to_string() })
}

fn cell(ty: Ty, v: &str) -> Value {
    if ty == Ty::Int { v.parse::<u64>().map(|n| json!(n)).unwrap_or_else(|_| json!(v)) } else { json!(v) }
}

impl Answered {
    fn document(&self) -> Value {
        let a = &self.answer;
        let n = a.rows.len();
        let rows: Vec<Value> =
            a.rows.iter().map(|r| Value::Array(r.iter().zip(&a.types).map(|(v, t)| cell(*t, v)).collect())).collect();
        let mut v = json!({
            "schema_version": SCHEMA_VERSION,
            "columns": a.columns,
            "rows": rows,
            "count": n,
            "warnings": self.warnings.iter().map(cartesian_json).collect::<Vec<_>>(),
            "verdict": { "outcome": "answered", "rows": n },
        });
        if let Some(ex) = &self.explanations {
            v["explanations"] = Value::Array(ex.iter().map(derivation_json).collect());
        }
        v
    }
}

fn derivation_json(d: &Derivation) -> Value {
    match d {
        Derivation::Fact(f) => json!({ "fact": f, "by": "fact" }),
        Derivation::Computed { fact, from } => json!({ "fact": fact, "by": "computed", "from": from }),
        Derivation::Truncated(f) => json!({ "fact": f, "by": "elided" }),
        Derivation::Rule { fact, rule, at, premises, absent, checks } => json!({
            "fact": fact,
            "by": "rule",
            "rule": rule,
            "at": at,
            "premises": premises.iter().map(derivation_json).collect::<Vec<_>>(),
            "absent": absent,
            "checks": checks,
        }),
    }
}

json_document!(CheckReport, StreamReport, WhyReport, Answered);

/// `andon init`: the `andon.toml` drawn from the stream, and whether it was written.
#[derive(Clone, Debug)]
pub struct Initialized {
    /// The file (`andon.toml` under the repository path).
    pub path: String,
    /// Created; false with `--print`.
    pub written: bool,
    pub plan: crate::check::init::Plan,
}

/// `andon init`: draws `andon.toml` for the repository at `root` from its fresh index (walked with
/// `walk` over the settings), judged in memory so that `andon check` passes, and (unless `print`)
/// creates it. Refuses, before any work and again at the write, when settings are there: an
/// `andon.toml` (never replaced, whatever it is), or `[tool.andon]` in `pyproject.toml`, which an
/// `andon.toml` would shadow whole.
pub fn init(
    root: &Path,
    walk: &super::WalkOverrides,
    print: bool,
    progress: &dyn crate::index::Watch,
) -> Result<Initialized, Error> {
    let path = if root == Path::new(".") { std::path::PathBuf::from("andon.toml") } else { root.join("andon.toml") };
    let shown = crate::text::os_path_text(path.as_os_str());
    let exists = || {
        format!("{shown} already exists; andon init never replaces it (`andon init --print` shows what it would write)")
    };
    if !print {
        if std::fs::symlink_metadata(&path).is_ok() {
            return Err(exists().into());
        }
        if let Ok(Some(src)) = crate::config::source::find(root)
            && src.tool_table
        {
            return Err(format!(
                "{}: the settings are in its [tool.andon] table, which an andon.toml would shadow whole; \
                 add the contracts there (`andon init --print` shows them)",
                crate::text::os_path_text(src.path.as_os_str())
            )
            .into());
        }
    }
    let opts = super::index_options(root, walk, false)?;
    let idx = super::fresh_index(root, &opts, Freshness::Update(progress))?;
    let date = crate::check::init::date_of(super::now());
    let plan = crate::check::init::plan(&idx, root, &date).map_err(|e| match e {
        crate::check::CheckError::Config(e) => e.into(),
        crate::check::CheckError::Other(m) => Error::Failed(m),
    })?;
    if !print {
        crate::text::write_new(&path, plan.text.as_bytes()).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => exists(),
            _ => format!("{shown}: cannot be written: {e}"),
        })?;
    }
    Ok(Initialized { path: shown, written: !print, plan })
}

impl Initialized {
    /// `written`, or `printed` with `--print`.
    pub fn outcome(&self) -> &'static str {
        if self.written { "written" } else { "printed" }
    }

    fn document(&self) -> Value {
        let p = &self.plan;
        let contracts: Vec<Value> = p
            .contracts
            .iter()
            .map(|c| {
                json!({ "name": c.name, "kind": c.kind.name(), "layers": c.layers, "members": c.members,
                        "exceptions": c.exceptions.len() })
            })
            .collect();
        let excused = p.report.findings.iter().filter(|f| f.excused.is_some()).count();
        json!({
            "schema_version": SCHEMA_VERSION,
            "path": self.path,
            "written": self.written,
            "date": p.date,
            "stages": p.stages,
            "wires": p.wires,
            "contracts": contracts,
            "exceptions": p.exceptions(),
            "excused": excused,
            "notes": p.notes,
            "text": p.text,
            "verdict": { "outcome": self.outcome(), "contracts": p.contracts.len(), "exceptions": p.exceptions() },
        })
    }
}

json_document!(Initialized);
