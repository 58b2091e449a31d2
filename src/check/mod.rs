//! `andon check`: the structural gate (design §4, §8). Contracts from the configuration are judged
//! on a fresh index; every finding carries its tier, its contract and a minimal witness chain.
//! Exceptions are part of the contract: each has a reason, and one that excuses nothing is an
//! error. Nothing else — no flag, environment variable or source comment — suppresses a finding.

pub mod base;
pub mod graph;
pub mod select;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::config::{Config, ConfigError, ContractKind, Located};
use crate::datalog::{self, lang::Ty};
use crate::facts::rel;
use crate::index::Index;
use graph::DepGraph;
use select::{Selector, Subject};

/// One import on a witness chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    pub path: String,
    pub line: u32,
    pub col: u32,
    pub spec: String,
    pub target: String,
    pub confidence: String,
    pub tier: u8,
}

/// The exception that excuses a finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excused {
    pub line: u32,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub contract: String,
    pub kind: ContractKind,
    /// 1 non-overridable, 2 blocking, 3 advisory.
    pub tier: u8,
    pub path: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
    pub witness: Vec<Hop>,
    /// Stable across unrelated edits: no line numbers, only the contract and what breaks it.
    pub fingerprint: String,
    pub excused: Option<Excused>,
    /// With `--base`: whether the base revision lacks this finding.
    pub new: Option<bool>,
}

impl Finding {
    /// Fails the run: tier 1 or 2 and not excused by the contract.
    pub fn blocking(&self) -> bool {
        self.tier <= 2 && self.excused.is_none()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractResult {
    pub name: String,
    pub kind: ContractKind,
    pub description: String,
    pub line: u32,
    pub findings: usize,
    pub blocking: usize,
    pub excused: usize,
}

/// An exception that matched no finding: the contract has rotted and must be edited.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleException {
    pub contract: String,
    pub line: u32,
    pub from: Option<String>,
    pub to: Option<String>,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// The configuration file, repo-relative.
    pub config: String,
    pub contracts: Vec<ContractResult>,
    /// Sorted by path, line, contract.
    pub findings: Vec<Finding>,
    pub stale_exceptions: Vec<StaleException>,
    /// How many distinct exceptions excused at least one finding.
    pub exceptions_used: usize,
    /// `--base REF`, when given.
    pub base: Option<String>,
    /// Text of the index addressing the tool (R123): listed, never a finding, never an excuse.
    pub suspected_injections: Vec<crate::ops::Injection>,
}

impl CheckReport {
    pub fn blocking(&self) -> usize {
        self.findings.iter().filter(|f| f.blocking()).count()
    }
}

#[derive(Debug)]
pub enum CheckError {
    /// The configuration is wrong (exit 2): file, line, message.
    Config(ConfigError),
    Other(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Config(e) => write!(f, "{e}"),
            CheckError::Other(e) => write!(f, "{e}"),
        }
    }
}

/// A finding before exceptions and columns: what it rests on, as graph edges or plain values.
struct Raw {
    tier: u8,
    at: (String, u32),
    message: String,
    chain: Vec<u32>,
    key: Vec<String>,
    froms: Vec<Subject>,
    tos: Vec<Subject>,
}

/// Judges every contract of `cfg` on the index of `root`.
pub fn run(idx: &Index, root: &Path, cfg: &Config) -> Result<CheckReport, CheckError> {
    let config_path = cfg.source.clone().unwrap_or_else(|| root.join("andon.toml"));
    let cerr =
        |line: u32, message: String| CheckError::Config(ConfigError { path: config_path.clone(), line, message });
    if cfg.contracts.is_empty() {
        return Err(cerr(
            1,
            "no contracts to check: declare at least one `[[contract]]` (see README: andon check)".into(),
        ));
    }
    let prog = datalog::builtin_program();
    let mut goals: Vec<crate::facts::RelId> = graph::GOALS.to_vec();
    if cfg.contracts.iter().any(|c| c.kind == ContractKind::Manifest) {
        goals.extend([rel::UNDECLARED_IMPORT, rel::UNUSED_DEPENDENCY_AT, rel::HAS_MANIFEST]);
    }
    // Qualified references across stages need every identifier of the repository (`References`,
    // the largest relation); they can exist only when a stage declares a dependency on another
    // stage by its import name, so the identifiers are loaded only then.
    let mut store = derive(&prog, idx, &goals, false)?;
    if graph::cross_stage_names(&store) {
        store = derive(&prog, idx, &goals, true)?;
    }
    let g = DepGraph::build(&store);

    let mut findings = Vec::new();
    let mut results = Vec::new();
    let mut stale = Vec::new();
    let mut used = 0;
    for c in &cfg.contracts {
        let ctx = |m: String| format!("contract `{}`: {m}", c.name);
        let sel = |l: &Located| select::resolve(&g, &l.text, l.line).map_err(|m| cerr(l.line, ctx(m)));
        let sels = |ls: &[Located]| ls.iter().map(sel).collect::<Result<Vec<_>, _>>();
        let mask = c.exclude_kinds.iter().fold(0u16, |m, k| m | graph::kind_bit(&k.text));
        let every_form = graph::kind_bit("static") | graph::kind_bit("dynamic");
        if mask & every_form == every_form {
            let line = c.exclude_kinds.last().map(|l| l.line).unwrap_or(c.line);
            return Err(cerr(
                line,
                ctx("`exclude_kinds` excludes both static and dynamic imports; it could never fire".into()),
            ));
        }
        // Exceptions: resolved first; each finding takes the first that matches (for `acyclic`, an
        // exception allows one dependency between members); those that match nothing are stale.
        let exceptions: Vec<Exception> = c
            .exceptions
            .iter()
            .map(|e| {
                Ok(Exception {
                    from: e.from.as_ref().map(sel).transpose()?,
                    to: e.to.as_ref().map(sel).transpose()?,
                    spec: e,
                })
            })
            .collect::<Result<_, CheckError>>()?;
        let mut hits = vec![0usize; exceptions.len()];
        let (raws, description) = match c.kind {
            ContractKind::Forbidden => {
                if c.from.is_empty() || c.to.is_empty() {
                    return Err(cerr(c.line, ctx("a forbidden contract needs both `from` and `to`".into())));
                }
                let from = sels(&c.from)?;
                let to = sels(&c.to)?;
                let f = union(&g, &from);
                let t = union(&g, &to);
                if let Some(n) = (0..g.len()).find(|&n| f[n] && t[n]) {
                    return Err(cerr(
                        c.to[0].line,
                        ctx(format!(
                            "`from` and `to` both select `{}`; a file cannot be forbidden from itself",
                            g.name(n as u32)
                        )),
                    ));
                }
                let desc = format!(
                    "{} must not import {}{}",
                    labels(&c.from),
                    labels(&c.to),
                    if c.transitive { ", directly or indirectly" } else { " directly" }
                );
                let raws = forbid(&g, &f, &t, &f, c.transitive, mask, &to, "");
                (raws, desc)
            }
            ContractKind::Layers => {
                if c.layers.len() < 2 {
                    return Err(cerr(c.line, ctx("`layers` needs at least two layers, top first".into())));
                }
                let layers: Vec<Vec<Selector>> = c.layers.iter().map(|l| sels(l)).collect::<Result<_, _>>()?;
                let sets: Vec<Vec<bool>> = layers.iter().map(|l| union(&g, l)).collect();
                disjoint(&g, &sets, |i| labels(&c.layers[i])).map_err(|(i, m)| cerr(c.layers[i][0].line, ctx(m)))?;
                let all = any_of(&g, &sets);
                let mut raws = Vec::new();
                for lower in 1..sets.len() {
                    for upper in 0..lower {
                        let (lo, up) = (labels(&c.layers[lower]), labels(&c.layers[upper]));
                        raws.extend(forbid(
                            &g,
                            &sets[lower],
                            &sets[upper],
                            &all,
                            c.transitive,
                            mask,
                            &layers[upper],
                            &format!("layer {lo} is below {up}: "),
                        ));
                    }
                }
                let names: Vec<String> = c.layers.iter().map(|l| labels(l)).collect();
                (raws, format!("layers, top first: {}; a layer imports only layers below it", names.join(" > ")))
            }
            ContractKind::Independence => {
                if c.members.len() < 2 {
                    return Err(cerr(c.line, ctx("`members` needs at least two members to be independent".into())));
                }
                let members = sels(&c.members)?;
                let sets: Vec<Vec<bool>> = members.iter().map(|m| union(&g, std::slice::from_ref(m))).collect();
                disjoint(&g, &sets, |i| format!("`{}`", c.members[i].text))
                    .map_err(|(i, m)| cerr(c.members[i].line, ctx(m)))?;
                let all = any_of(&g, &sets);
                let mut raws = Vec::new();
                for i in 0..sets.len() {
                    for j in 0..sets.len() {
                        if i != j {
                            raws.extend(forbid(
                                &g,
                                &sets[i],
                                &sets[j],
                                &all,
                                c.transitive,
                                mask,
                                std::slice::from_ref(&members[j]),
                                "",
                            ));
                        }
                    }
                }
                (raws, format!("{} import none of each other", labels(&c.members)))
            }
            ContractKind::Protected => {
                if c.target.is_empty() {
                    return Err(cerr(c.line, ctx("a protected contract needs a `target`".into())));
                }
                let target = sels(&c.target)?;
                let allowed = sels(&c.allowed)?;
                let t = union(&g, &target);
                let a = union(&g, &allowed);
                let who = if c.allowed.is_empty() { "nothing outside it".to_string() } else { labels(&c.allowed) };
                let raws = protect(&g, &t, &a, mask, &who, &c.target);
                (raws, format!("only {who} may import {}", labels(&c.target)))
            }
            ContractKind::Acyclic => {
                let members: Vec<Selector> = if c.members.is_empty() {
                    g.stage_names()
                        .map(|s| select::resolve(&g, &format!("stage:{s}"), c.line).map_err(|m| cerr(c.line, ctx(m))))
                        .collect::<Result<_, _>>()?
                } else {
                    if c.members.len() < 2 {
                        return Err(cerr(c.line, ctx("`members` needs at least two members to form a cycle".into())));
                    }
                    sels(&c.members)?
                };
                let sets: Vec<Vec<bool>> = members.iter().map(|m| union(&g, std::slice::from_ref(m))).collect();
                disjoint(&g, &sets, |i| format!("`{}`", members[i].text))
                    .map_err(|(i, m)| cerr(c.members.get(i).map(|l| l.line).unwrap_or(c.line), ctx(m)))?;
                let names: Vec<String> =
                    members.iter().map(|m| m.text.strip_prefix("stage:").unwrap_or(&m.text).to_string()).collect();
                let desc = if c.members.is_empty() {
                    "no dependency cycle among stages".to_string()
                } else {
                    format!("no dependency cycle among {}", labels(&c.members))
                };
                (acyclic(&g, &sets, &names, mask, &exceptions, &mut hits), desc)
            }
            ContractKind::Manifest => {
                let stages = sels(&c.stages)?;
                for (s, l) in stages.iter().zip(&c.stages) {
                    if !matches!(s.kind, select::SelKind::Stage(_)) {
                        return Err(cerr(
                            l.line,
                            ctx(format!("`stages` takes stage names; `{}` is not a stage", l.text)),
                        ));
                    }
                }
                let scope: Option<BTreeSet<String>> =
                    (!stages.is_empty()).then(|| c.stages.iter().map(|l| l.text.clone()).collect());
                let checks: BTreeSet<&str> = if c.checks.is_empty() {
                    crate::config::MANIFEST_CHECKS.iter().copied().collect()
                } else {
                    c.checks.iter().map(|l| l.text.as_str()).collect()
                };
                let with_manifest: Vec<String> = store.rels[rel::HAS_MANIFEST.0 as usize]
                    .iter()
                    .map(|r| store.syms.str(r[0]).to_string())
                    .filter(|s| scope.as_ref().is_none_or(|sc| sc.contains(s)))
                    .collect();
                if with_manifest.is_empty() {
                    return Err(cerr(
                        c.line,
                        ctx("no stage in its scope has a manifest that declares dependencies; it could never fire"
                            .into()),
                    ));
                }
                let raws = manifest(&g, &store, root, scope.as_ref(), &checks);
                let what: Vec<&str> = checks
                    .iter()
                    .map(|c| match *c {
                        "undeclared" => "every imported package is declared",
                        _ => "every declared dependency is used",
                    })
                    .collect();
                (
                    raws,
                    format!(
                        "{} ({})",
                        what.join("; "),
                        if c.stages.is_empty() { "every stage".into() } else { labels(&c.stages) }
                    ),
                )
            }
            ContractKind::Rule => {
                let r = c
                    .rules
                    .as_ref()
                    .ok_or_else(|| cerr(c.line, ctx("a rule contract needs `rules = \"file.dl\"`".into())))?;
                (rule(idx, root, r).map_err(|m| cerr(r.line, ctx(m)))?, format!("no `Violation` derived by {}", r.text))
            }
        };
        let description = c.description.clone().unwrap_or(description);
        let mut result = ContractResult {
            name: c.name.clone(),
            kind: c.kind,
            description,
            line: c.line,
            findings: 0,
            blocking: 0,
            excused: 0,
        };
        let mut seen: HashMap<String, usize> = HashMap::new();
        for raw in raws {
            let excused = excuse(&exceptions, &raw.froms, &raw.tos).map(|i| {
                hits[i] += 1;
                Excused { line: exceptions[i].spec.line, reason: exceptions[i].spec.reason.clone() }
            });
            let mut key = format!("{}\0{}\0{}", c.name, c.kind.name(), raw.key.join("\0"));
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            if *n > 1 {
                key.push_str(&format!("\0#{n}"));
            }
            let witness = raw.chain.iter().map(|&e| hop(&g, e)).collect();
            let f = Finding {
                contract: c.name.clone(),
                kind: c.kind,
                tier: raw.tier,
                path: raw.at.0,
                line: raw.at.1,
                col: 1,
                message: raw.message,
                witness,
                fingerprint: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes())),
                excused,
                new: None,
            };
            result.findings += 1;
            result.blocking += f.blocking() as usize;
            result.excused += f.excused.is_some() as usize;
            findings.push(f);
        }
        for (i, e) in exceptions.iter().map(|x| x.spec).enumerate() {
            if hits[i] == 0 {
                stale.push(StaleException {
                    contract: c.name.clone(),
                    line: e.line,
                    from: e.from.as_ref().map(|l| l.text.clone()),
                    to: e.to.as_ref().map(|l| l.text.clone()),
                    reason: e.reason.clone(),
                });
            } else {
                used += 1;
            }
        }
        results.push(result);
    }
    columns(root, &mut findings);
    findings.sort_by(|a, b| {
        (&a.path, a.line, &a.contract, &a.fingerprint).cmp(&(&b.path, b.line, &b.contract, &b.fingerprint))
    });
    let config = config_path.strip_prefix(root).unwrap_or(&config_path).to_string_lossy().replace('\\', "/");
    Ok(CheckReport {
        config,
        contracts: results,
        findings,
        stale_exceptions: stale,
        exceptions_used: used,
        base: None,
        suspected_injections: crate::ops::suspected_injections(idx),
    })
}

/// A contract exception with its selectors resolved.
struct Exception<'c> {
    from: Option<Selector>,
    to: Option<Selector>,
    spec: &'c crate::config::ExceptionSpec,
}

/// The first exception whose `from` matches one of `froms` and whose `to` matches one of `tos`.
fn excuse(exceptions: &[Exception], froms: &[Subject], tos: &[Subject]) -> Option<usize> {
    exceptions.iter().position(|x| {
        x.from.as_ref().is_none_or(|f| froms.iter().any(|s| f.matches(s)))
            && x.to.as_ref().is_none_or(|t| tos.iter().any(|s| t.matches(s)))
    })
}

/// Evaluates `goals` (with `WireReference` when `references`) with the run-time engine, which runs
/// only the strata the goals need.
fn derive(
    prog: &datalog::lang::Program,
    idx: &Index,
    goals: &[crate::facts::RelId],
    references: bool,
) -> Result<datalog::Store, CheckError> {
    let mut goals: Vec<usize> = goals.iter().map(|r| r.0 as usize).collect();
    if references {
        goals.push(rel::WIRE_REFERENCE.0 as usize);
    }
    let need = prog.needed(&goals);
    let mut store = datalog::load(prog, idx, Some(&need)).map_err(CheckError::Other)?;
    datalog::run_runtime(prog, &mut store, Some(&need));
    Ok(store)
}

/// Nodes in any of `sets`.
fn any_of(g: &DepGraph, sets: &[Vec<bool>]) -> Vec<bool> {
    (0..g.len()).map(|n| sets.iter().any(|s| s[n])).collect()
}

fn union(g: &DepGraph, sels: &[Selector]) -> Vec<bool> {
    let mut v = vec![false; g.len()];
    for s in sels {
        for (x, y) in v.iter_mut().zip(&s.nodes) {
            *x |= *y;
        }
    }
    v
}

/// `a`, `b` and `c` as the configuration wrote them.
fn labels(ls: &[Located]) -> String {
    let v: Vec<String> = ls.iter().map(|l| format!("`{}`", l.text)).collect();
    match v.len() {
        0 => "nothing".into(),
        1 => v[0].clone(),
        _ => format!("{} and {}", v[..v.len() - 1].join(", "), v[v.len() - 1]),
    }
}

/// Checks that no node is in two sets; Err names the later set and the shared file.
fn disjoint(g: &DepGraph, sets: &[Vec<bool>], label: impl Fn(usize) -> String) -> Result<(), (usize, String)> {
    for n in 0..g.len() {
        let owners: Vec<usize> = (0..sets.len()).filter(|&i| sets[i][n]).collect();
        if owners.len() > 1 {
            return Err((
                owners[1],
                format!(
                    "{} and {} both select `{}`; make them disjoint",
                    label(owners[0]),
                    label(owners[1]),
                    g.name(n as u32)
                ),
            ));
        }
    }
    Ok(())
}

fn subject(g: &DepGraph, n: u32) -> Subject {
    let name = g.name(n).to_string();
    if g.is_file(n) {
        Subject { node: Some(n), stage: g.stage_of(n).map(str::to_string), path: Some(name), package: None }
    } else {
        Subject { node: Some(n), package: Some(name), ..Subject::default() }
    }
}

/// Imports from `from` nodes into `to` nodes: direct, or (transitive) through nodes outside
/// `barrier`. One finding per import line, at the lowest tier that still refutes the contract.
#[allow(clippy::too_many_arguments)]
fn forbid(
    g: &DepGraph,
    from: &[bool],
    to: &[bool],
    barrier: &[bool],
    transitive: bool,
    mask: u16,
    to_sels: &[Selector],
    prefix: &str,
) -> Vec<Raw> {
    let mut best: BTreeMap<(u32, u32), (u8, Vec<u32>)> = BTreeMap::new();
    for tier in 1..=3u8 {
        let next = if transitive { g.toward(to, barrier, tier, mask) } else { vec![None; g.len()] };
        for f in g.files().filter(|&f| from[f as usize]) {
            for e in g.out_edges(f) {
                if !g.allowed(e, tier, mask) {
                    continue;
                }
                let t = g.edges[e as usize].to;
                if from[t as usize] {
                    continue;
                }
                let chain = if to[t as usize] {
                    vec![e]
                } else if transitive && next[t as usize].is_some() {
                    g.follow(e, &next)
                } else {
                    continue;
                };
                let line = g.edges[e as usize].line;
                match best.get(&(f, line)) {
                    Some((t0, c0)) if *t0 < tier || c0.len() <= chain.len() => {}
                    _ => {
                        best.insert((f, line), (tier, chain));
                    }
                }
            }
        }
    }
    best.into_iter()
        .map(|((f, line), (tier, chain))| {
            let first = &g.edges[chain[0] as usize];
            let end = g.edges[*chain.last().expect("a chain has an edge") as usize].to;
            let label = to_sels
                .iter()
                .find(|s| s.nodes[end as usize])
                .map(|s| format!("`{}`", s.text))
                .unwrap_or_else(|| format!("`{}`", g.name(end)));
            let via = if chain.len() > 1 {
                format!(", which reaches `{}` through {} imports", g.name(end), chain.len())
            } else {
                String::new()
            };
            Raw {
                tier,
                at: (g.name(f).to_string(), line),
                message: format!(
                    "{}`{}` must not depend on {label}: it imports `{}`{via}",
                    prefix,
                    g.name(f),
                    first.spec
                ),
                key: vec![g.name(f).to_string(), first.spec.clone(), g.name(end).to_string()],
                froms: vec![subject(g, f)],
                tos: chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect(),
                chain,
            }
        })
        .collect()
}

/// Direct imports of `target` nodes by files that are neither `target` nor `allowed`.
fn protect(g: &DepGraph, target: &[bool], allowed: &[bool], mask: u16, who: &str, target_l: &[Located]) -> Vec<Raw> {
    let mut best: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for (i, e) in g.edges.iter().enumerate() {
        let i = i as u32;
        if target[e.to as usize] && !target[e.from as usize] && !allowed[e.from as usize] && g.allowed(i, 3, mask) {
            let k = (e.from, e.line);
            match best.get(&k) {
                Some(&j) if g.edges[j as usize].tier <= e.tier => {}
                _ => {
                    best.insert(k, i);
                }
            }
        }
    }
    best.into_values()
        .map(|i| {
            let e = &g.edges[i as usize];
            Raw {
                tier: e.tier,
                at: (g.name(e.from).to_string(), e.line),
                message: format!(
                    "only {who} may import {}: `{}` imports `{}`",
                    labels(target_l),
                    g.name(e.from),
                    e.spec
                ),
                key: vec![g.name(e.from).to_string(), e.spec.clone()],
                froms: vec![subject(g, e.from)],
                tos: vec![subject(g, e.to)],
                chain: vec![i],
            }
        })
        .collect()
}

/// Cycles among units (each a set of nodes), through nodes of no unit; one finding per cycle
/// (strongly connected set of units) at the lowest tier it appears.
fn acyclic(
    g: &DepGraph,
    sets: &[Vec<bool>],
    names: &[String],
    mask: u16,
    exceptions: &[Exception],
    hits: &mut [usize],
) -> Vec<Raw> {
    let mut unit_of: Vec<Option<usize>> = vec![None; g.len()];
    for (u, s) in sets.iter().enumerate() {
        for (n, b) in s.iter().enumerate() {
            if *b {
                unit_of[n] = Some(u);
            }
        }
    }
    let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut out = Vec::new();
    for tier in 1..=3u8 {
        let mut chains = g.unit_chains(&unit_of, sets.len(), tier, mask);
        // An exception allows one dependency between members: it is no part of any cycle.
        chains.retain(|_, chain| {
            let froms: Vec<Subject> = chain.iter().map(|&e| subject(g, g.edges[e as usize].from)).collect();
            let tos: Vec<Subject> = chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect();
            match excuse(exceptions, &froms, &tos) {
                Some(i) => {
                    hits[i] += 1;
                    false
                }
                None => true,
            }
        });
        let nodes: Vec<u32> = (0..sets.len() as u32).collect();
        let edges: Vec<(u32, u32)> = chains.keys().map(|&(a, b)| (a as u32, b as u32)).collect();
        for comp in crate::datalog::graph::condensed_order(&nodes, &edges, |n| names[n as usize].clone()) {
            if comp.len() < 2 {
                continue;
            }
            let mut units: Vec<usize> = comp.iter().map(|&n| n as usize).collect();
            units.sort_by(|a, b| names[*a].cmp(&names[*b]));
            if !reported.insert(units.clone()) {
                continue;
            }
            // A shortest cycle through the first unit, within the component.
            let start = units[0];
            let inside: BTreeSet<usize> = units.iter().copied().collect();
            let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([start]);
            let mut closing = None;
            'bfs: while let Some(u) = queue.pop_front() {
                for (&(a, b), _) in chains.range((u, 0)..(u + 1, 0)) {
                    debug_assert_eq!(a, u);
                    if b == start {
                        closing = Some(u);
                        break 'bfs;
                    }
                    if inside.contains(&b) && !prev.contains_key(&b) && b != start {
                        prev.insert(b, u);
                        queue.push_back(b);
                    }
                }
            }
            let Some(last) = closing else { continue };
            let mut cycle = vec![last];
            while let Some(&p) = prev.get(cycle.last().expect("non-empty")) {
                cycle.push(p);
            }
            cycle.reverse(); // start .. last
            let mut chain = Vec::new();
            for w in 0..cycle.len() {
                let (a, b) = (cycle[w], if w + 1 < cycle.len() { cycle[w + 1] } else { start });
                chain.extend(chains[&(a, b)].iter().copied());
            }
            let mut path: Vec<&str> = cycle.iter().map(|&u| names[u].as_str()).collect();
            path.push(names[start].as_str());
            let first = &g.edges[chain[0] as usize];
            let others = if units.len() > cycle.len() {
                let all: Vec<&str> = units.iter().map(|&u| names[u].as_str()).collect();
                format!(" (all of {} depend on each other)", all.join(", "))
            } else {
                String::new()
            };
            out.push(Raw {
                tier,
                at: (g.name(first.from).to_string(), first.line),
                message: format!(
                    "dependency cycle: {}{others}",
                    path.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" -> ")
                ),
                key: units.iter().map(|&u| names[u].clone()).collect(),
                froms: chain.iter().map(|&e| subject(g, g.edges[e as usize].from)).collect(),
                tos: chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect(),
                chain,
            });
        }
    }
    out
}

/// Undeclared imports (one finding per stage and package, at its first import) and unused
/// dependencies (at their line in the manifest). Both rest on name mapping and absence of
/// evidence, so they are tier 2.
fn manifest(
    g: &DepGraph,
    store: &datalog::Store,
    root: &Path,
    scope: Option<&BTreeSet<String>>,
    checks: &BTreeSet<&str>,
) -> Vec<Raw> {
    let s = |v: u32| store.syms.str(v).to_string();
    let in_scope = |stage: &str| scope.is_none_or(|sc| sc.contains(stage));
    let mut out = Vec::new();
    if checks.contains("undeclared") {
        let mut by: BTreeMap<(String, String), Vec<(String, u32)>> = BTreeMap::new();
        for r in store.rels[rel::UNDECLARED_IMPORT.0 as usize].iter() {
            if in_scope(store.syms.str(r[0])) {
                by.entry((s(r[0]), s(r[1]))).or_default().push((s(r[2]), r[3]));
            }
        }
        for ((stage, package), mut sites) in by {
            sites.sort();
            let n = sites.len();
            let froms = sites
                .iter()
                .map(|(p, _)| Subject {
                    node: g.file(p),
                    path: Some(p.clone()),
                    stage: Some(stage.clone()),
                    package: None,
                })
                .collect();
            out.push(Raw {
                tier: 2,
                at: sites[0].clone(),
                message: format!(
                    "stage `{stage}` imports `{package}` ({n} import{}), which its manifest does not declare",
                    if n == 1 { "" } else { "s" }
                ),
                chain: Vec::new(),
                key: vec!["undeclared".into(), stage.clone(), package.clone()],
                froms,
                tos: vec![Subject { node: g.package_node(&package), package: Some(package), ..Subject::default() }],
            });
        }
    }
    if checks.contains("unused") {
        let mut texts: HashMap<String, String> = HashMap::new();
        for r in store.rels[rel::UNUSED_DEPENDENCY_AT.0 as usize].iter() {
            let (stage, dep, kind, manifest) = (s(r[0]), s(r[1]), s(r[2]), s(r[3]));
            if !in_scope(&stage) {
                continue;
            }
            let text = texts
                .entry(manifest.clone())
                .or_insert_with(|| std::fs::read_to_string(root.join(&manifest)).unwrap_or_default());
            let line = line_naming(text, &dep);
            out.push(Raw {
                tier: 2,
                at: (manifest.clone(), line),
                message: format!(
                    "stage `{stage}` declares `{dep}` ({kind}) in `{manifest}`, but none of its code imports it"
                ),
                chain: Vec::new(),
                key: vec!["unused".into(), stage.clone(), dep.clone()],
                froms: vec![Subject { node: None, path: Some(manifest), stage: Some(stage), package: None }],
                tos: vec![Subject { node: g.package_node(&dep), package: Some(dep), ..Subject::default() }],
            });
        }
    }
    out
}

/// The first line of a manifest that names `dep` as a whole word (1 when none does).
fn line_naming(text: &str, dep: &str) -> u32 {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '-' || c == '.';
    for (i, l) in text.lines().enumerate() {
        let mut from = 0;
        while let Some(p) = l[from..].find(dep) {
            let a = from + p;
            let b = a + dep.len();
            let before = l[..a].chars().next_back().is_none_or(|c| !word(c));
            let after = l[b..].chars().next().is_none_or(|c| !word(c));
            if before && after {
                return i as u32 + 1;
            }
            from = b;
        }
    }
    1
}

/// A user rule file: every `Violation(...)` it derives is a tier-2 finding. The first `path`
/// column and the first `int` column after it locate the finding; the other columns make the
/// message.
fn rule(idx: &Index, root: &Path, r: &Located) -> Result<Vec<Raw>, String> {
    let file = root.join(&r.text);
    let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read rules file `{}`: {e}", r.text))?;
    let files = vec![(r.text.clone(), text)];
    let mut b = datalog::builtin_builder();
    b.implicit_heads = true;
    b.add_source(&r.text, &files[0].1, false).map_err(|e| e.to_string())?;
    let prog = b.finish().map_err(|e| e.to_string())?;
    let v = prog.relation("Violation").ok_or_else(|| {
        format!(
            "`{}` derives no `Violation` relation; declare `.decl Violation(path: path, line: int, message: sym)`",
            r.text
        )
    })?;
    let arity = prog.rels[v].columns.len();
    let query: Vec<String> = (0..arity).map(|i| format!("c{i}")).collect();
    let q = datalog::prepare(&format!("Violation({})", query.join(", ")), &files).map_err(|e| e.to_string())?;
    let (answer, _) = datalog::answer(&q, idx, false, &[])?;
    let cols: Vec<String> = prog.rels[v].columns.iter().map(|c| c.0.clone()).collect();
    let path_col = answer.types.iter().position(|t| *t == Ty::Path);
    let line_col =
        path_col.and_then(|p| answer.types.iter().skip(p + 1).position(|t| *t == Ty::Int).map(|i| i + p + 1));
    Ok(answer
        .rows
        .into_iter()
        .map(|row| {
            let path = path_col.map(|c| row[c].clone()).unwrap_or_else(|| r.text.clone());
            let line =
                line_col.and_then(|c| row[c].parse().ok()).unwrap_or(if path_col.is_some() { 1 } else { r.line });
            let rest: Vec<String> = (0..row.len())
                .filter(|i| Some(*i) != path_col && Some(*i) != line_col)
                .map(|i| if cols[i] == "message" { row[i].clone() } else { format!("{}={}", cols[i], row[i]) })
                .collect();
            let key: Vec<String> =
                (0..row.len()).filter(|i| answer.types[*i] != Ty::Int).map(|i| row[i].clone()).collect();
            Raw {
                tier: 2,
                message: if rest.is_empty() { "Violation".into() } else { rest.join(", ") },
                froms: vec![Subject { node: None, path: Some(path.clone()), stage: None, package: None }],
                at: (path, line),
                chain: Vec::new(),
                key,
                tos: Vec::new(),
            }
        })
        .collect())
}

fn hop(g: &DepGraph, e: u32) -> Hop {
    let e = &g.edges[e as usize];
    Hop {
        path: g.name(e.from).to_string(),
        line: e.line,
        col: 1,
        spec: e.spec.clone(),
        target: g.name(e.to).to_string(),
        confidence: e.confidence.clone(),
        tier: e.tier,
    }
}

/// Fills the columns of findings and witness hops from the source: where the import's spec
/// starts on its line (else the first non-blank character).
fn columns(root: &Path, findings: &mut [Finding]) {
    let mut cache: HashMap<String, Vec<String>> = HashMap::new();
    let mut col = |path: &str, line: u32, spec: &str| -> u32 {
        let lines = cache.entry(path.to_string()).or_insert_with(|| {
            std::fs::read_to_string(root.join(path))
                .map(|t| t.lines().map(str::to_string).collect())
                .unwrap_or_default()
        });
        let Some(l) = lines.get(line.saturating_sub(1) as usize) else { return 1 };
        let at = (!spec.is_empty()).then(|| l.find(spec)).flatten().or_else(|| l.find(|c: char| !c.is_whitespace()));
        at.map(|b| l[..b].chars().count() as u32 + 1).unwrap_or(1)
    };
    for f in findings {
        for h in &mut f.witness {
            h.col = col(&h.path, h.line, &h.spec);
        }
        f.col = match f.witness.first() {
            Some(h) if h.path == f.path && h.line == f.line => h.col,
            _ => col(&f.path, f.line, ""),
        };
    }
}
