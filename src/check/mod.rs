//! `andon check`: the structural gate (design §4, §8). Contracts from the configuration are judged
//! on a fresh index; every finding carries its tier, its contract and a minimal witness chain.
//! Exceptions are part of the contract: each has a reason, and one that excuses nothing is an
//! error. Nothing else — no flag, environment variable or source comment — suppresses a finding.

pub mod base;
pub mod declared;
pub mod graph;
pub mod init;
pub mod ledger;
pub mod select;

use crate::index::walk::open_regular;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::config::{Config, ConfigError, ContractKind, ContractSpec, Located};
use crate::datalog::{self, lang::Ty};
use crate::facts::rel;
use crate::index::{Index, walk};
use graph::DepGraph;
use select::{Selected, Selector};

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
    /// What the fingerprint hashes besides the contract: the finding's subjects (for `manifest`,
    /// the check, the stage and the package).
    pub key: Vec<String>,
    pub excused: Option<Excused>,
    /// With `--base`: whether the base revision lacks this finding.
    pub new: Option<bool>,
}

impl Finding {
    /// A blocking (tier 2) finding of a contract andon judges on its own where it applies (the
    /// ledger, a declared stream), at `path`:`line`, fingerprinted by its contract and `key`.
    pub(crate) fn builtin(
        kind: ContractKind,
        contract: &str,
        path: String,
        line: u32,
        message: String,
        key: Vec<String>,
    ) -> Finding {
        let print = format!("{contract}\0{}\0{}", kind.name(), key.join("\0"));
        Finding {
            contract: contract.into(),
            kind,
            tier: 2,
            path,
            line,
            col: 0,
            message,
            witness: Vec::new(),
            fingerprint: format!("{:016x}", xxhash_rust::xxh3::xxh3_64(print.as_bytes())),
            key,
            excused: None,
            new: None,
        }
    }

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
    /// A selector of it names nothing in the index, and why.
    pub unresolved: Option<String>,
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
    /// Source files the index did not parse, with why (`too-large`, `binary`, …): their imports are
    /// unknown to every contract, so the report names them rather than pass over them in silence.
    pub unanalysed: Vec<(String, String)>,
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
    froms: Vec<Selected>,
    tos: Vec<Selected>,
}

/// Judges every contract of `cfg` on the index of `root`; `rule` contracts are evaluated within
/// `budget`.
pub fn run(idx: &Index, root: &Path, cfg: &Config, budget: datalog::Budget) -> Result<CheckReport, CheckError> {
    let config_path = cfg.source.clone().unwrap_or_else(|| root.join("andon.toml"));
    let ledger = ledger::judged(root, cfg);
    let stream = declared::is_declared(idx);
    // a ledger or a declared stream is judged even with no contract
    if cfg.contracts.is_empty() && ledger.is_none() && !stream {
        return Err(config_error(
            &config_path,
            1,
            "no contracts to check: `andon init` writes a starting andon.toml from the stream, or declare at least one `[[contract]]` (see README: andon check)".into(),
        ));
    }
    let store = facts_for(idx, cfg)?;
    let g = DepGraph::build(&store);
    let mut out = Outcome::default();
    for c in &cfg.contracts {
        Judge { idx, root, config_path: &config_path, g: &g, store: &store, c, budget }.judge(&mut out)?;
    }
    let judged = stream.then(|| declared::judged(&store, &config_path)).into_iter().chain(ledger);
    for (result, findings) in judged {
        out.contracts.push(result);
        out.findings.extend(findings);
    }
    Ok(out.report(idx, root, &config_path))
}

/// The fingerprints of the findings of each contract of `cfg` that can be judged on the index of
/// `root`; a contract that cannot (an error) contributes none. The facts are derived once.
pub fn fingerprints(
    idx: &Index,
    root: &Path,
    cfg: &Config,
    budget: datalog::Budget,
) -> Result<BTreeSet<String>, CheckError> {
    let config_path = cfg.source.clone().unwrap_or_else(|| root.join("andon.toml"));
    let store = facts_for(idx, cfg)?;
    let g = DepGraph::build(&store);
    let mut prints = BTreeSet::new();
    for c in &cfg.contracts {
        let mut out = Outcome::default();
        let judge = Judge { idx, root, config_path: &config_path, g: &g, store: &store, c, budget };
        if judge.judge(&mut out).is_ok() {
            prints.extend(out.findings.into_iter().map(|f| f.fingerprint));
        }
    }
    if declared::is_declared(idx) {
        prints.extend(declared::judged(&store, &config_path).1.into_iter().map(|f| f.fingerprint));
    }
    Ok(prints)
}

/// A configuration error (exit 2) at `line` of the configuration file.
fn config_error(path: &Path, line: u32, message: String) -> CheckError {
    CheckError::Config(ConfigError { path: path.to_path_buf(), line, message })
}

/// Derives the facts the contracts of `cfg` rest on: the graph's relations, the manifests' when a
/// `manifest` contract is declared, and qualified references across stages when they can exist.
fn facts_for(idx: &Index, cfg: &Config) -> Result<datalog::Store, CheckError> {
    facts(idx, cfg.contracts.iter().any(|c| c.kind == ContractKind::Manifest))
}

/// Derives the graph's relations, and the manifests' with `manifest`.
fn facts(idx: &Index, manifest: bool) -> Result<datalog::Store, CheckError> {
    let prog = datalog::builtin_program();
    let mut goals: Vec<crate::facts::RelId> = graph::GOALS.to_vec();
    goals.push(rel::UNDECLARED_WIRE_IMPORT);
    if manifest {
        goals.extend([rel::UNDECLARED_IMPORT, rel::UNUSED_DEPENDENCY_AT, rel::HAS_MANIFEST]);
    }
    // Qualified references across stages need every identifier of the repository (`References`,
    // the largest relation); they can exist only when a stage declares a dependency on another
    // stage by its import name, so the identifiers are loaded only then.
    let store = derive(&prog, idx, &goals, false)?;
    if graph::cross_stage_names(&store) {
        return derive(&prog, idx, &goals, true);
    }
    Ok(store)
}

/// What the contracts add up to, in contract order.
#[derive(Default)]
struct Outcome {
    findings: Vec<Finding>,
    contracts: Vec<ContractResult>,
    stale: Vec<StaleException>,
    /// Exceptions that excused at least one finding.
    used: usize,
}

impl Outcome {
    /// The report: findings with their columns, sorted; the configuration path repo-relative.
    fn report(mut self, idx: &Index, root: &Path, config_path: &Path) -> CheckReport {
        columns(root, &mut self.findings);
        self.findings.sort_by(|a, b| {
            (&a.path, a.line, &a.contract, &a.fingerprint).cmp(&(&b.path, b.line, &b.contract, &b.fingerprint))
        });
        let config = config_path.strip_prefix(root).unwrap_or(config_path).to_string_lossy().replace('\\', "/");
        CheckReport {
            config,
            contracts: self.contracts,
            findings: self.findings,
            stale_exceptions: self.stale,
            exceptions_used: self.used,
            base: None,
            suspected_injections: crate::ops::suspected_injections(idx),
            unanalysed: idx
                .files
                .iter()
                .filter(|f| f.kind != 1 && !f.lang.is_empty())
                .filter_map(|f| f.skipped.as_ref().map(|why| (f.path.clone(), why.clone())))
                .collect(),
        }
    }
}

/// One contract under judgement, with everything it is judged on.
struct Judge<'a> {
    idx: &'a Index,
    root: &'a Path,
    config_path: &'a Path,
    g: &'a DepGraph,
    store: &'a datalog::Store,
    c: &'a ContractSpec,
    /// The budget of a `rule` contract's evaluation.
    budget: datalog::Budget,
}

impl<'a> Judge<'a> {
    /// A configuration error at `line`, naming the contract.
    fn err(&self, line: u32, message: String) -> CheckError {
        config_error(self.config_path, line, format!("contract `{}`: {message}", self.c.name))
    }

    /// Resolves one selector of the contract.
    fn sel(&self, l: &Located) -> Result<Selector, CheckError> {
        select::resolve(self.g, &l.text, l.line).map_err(|m| self.err(l.line, m))
    }

    /// Resolves a list of selectors of the contract.
    fn sels(&self, ls: &[Located]) -> Result<Vec<Selector>, CheckError> {
        ls.iter().map(|l| self.sel(l)).collect()
    }

    /// Judges the contract: its findings, each excused or not, its result and its stale exceptions
    /// go to `out`.
    fn judge(&self, out: &mut Outcome) -> Result<(), CheckError> {
        let mask = self.edge_mask()?;
        // Exceptions: resolved first; each finding takes the first that matches (for `acyclic`, an
        // exception allows one dependency between members); those that match nothing are stale.
        let exceptions = self.exceptions()?;
        let mut hits = vec![0usize; exceptions.len()];
        let (raws, description) = self.raws(mask, &exceptions, &mut hits)?;
        let c = self.c;
        let mut result = ContractResult {
            name: c.name.clone(),
            kind: c.kind,
            description: c.description.clone().unwrap_or(description),
            line: c.line,
            findings: 0,
            blocking: 0,
            excused: 0,
        };
        for f in self.findings(raws, &exceptions, &mut hits) {
            result.findings += 1;
            result.blocking += f.blocking() as usize;
            result.excused += f.excused.is_some() as usize;
            out.findings.push(f);
        }
        self.tally_exceptions(&exceptions, &hits, out);
        out.contracts.push(result);
        Ok(())
    }

    /// The edge kinds `exclude_kinds` leaves out, as a mask; Err when it leaves out every import.
    fn edge_mask(&self) -> Result<u16, CheckError> {
        let c = self.c;
        let mask = c.exclude_kinds.iter().fold(0u16, |m, k| m | graph::kind_bit(&k.text));
        let every_form = graph::kind_bit("static") | graph::kind_bit("dynamic");
        if mask & every_form == every_form {
            let line = c.exclude_kinds.last().map(|l| l.line).unwrap_or(c.line);
            return Err(
                self.err(line, "`exclude_kinds` excludes both static and dynamic imports; it could never fire".into())
            );
        }
        Ok(mask)
    }

    /// The contract's exceptions with their selectors resolved.
    /// A selector that names nothing in the index leaves its exception unresolved: it can excuse
    /// nothing, so it is stale (a glob that does not parse is a configuration error).
    fn exceptions(&self) -> Result<Vec<Exception<'a>>, CheckError> {
        let c: &'a ContractSpec = self.c;
        c.exceptions
            .iter()
            .map(|e| {
                let mut x = Exception { from: None, to: None, unresolved: None, spec: e };
                for (slot, l) in [(&mut x.from, &e.from), (&mut x.to, &e.to)] {
                    let Some(l) = l else { continue };
                    if let Some(m) = select::bad_glob(&l.text) {
                        return Err(self.err(l.line, m));
                    }
                    match select::resolve(self.g, &l.text, l.line) {
                        Ok(sel) => *slot = Some(sel),
                        Err(m) => x.unresolved = Some(m),
                    }
                }
                Ok(x)
            })
            .collect()
    }

    /// What refutes the contract, before exceptions, and what the contract says in words.
    fn raws(&self, mask: u16, exceptions: &[Exception], hits: &mut [usize]) -> Result<(Vec<Raw>, String), CheckError> {
        match self.c.kind {
            ContractKind::Forbidden => self.judge_forbidden(mask),
            ContractKind::Layers => self.judge_layers(mask),
            ContractKind::Independence => self.judge_independence(mask),
            ContractKind::Protected => self.judge_protected(mask),
            ContractKind::Acyclic => self.judge_acyclic(mask, exceptions, hits),
            ContractKind::Manifest => self.judge_manifest(),
            ContractKind::Rule => self.judge_rule(),
            ContractKind::Ledger | ContractKind::Stream => Ok((Vec::new(), String::new())),
        }
    }

    /// `forbidden`: `from` imports nothing of `to` (directly, or also indirectly).
    fn judge_forbidden(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.from.is_empty() || c.to.is_empty() {
            return Err(self.err(c.line, "a forbidden contract needs both `from` and `to`".into()));
        }
        let from = self.sels(&c.from)?;
        let to = self.sels(&c.to)?;
        let f = union(g, &from);
        let t = union(g, &to);
        if let Some(n) = (0..g.len()).find(|&n| f[n] && t[n]) {
            return Err(self.err(
                c.to[0].line,
                format!("`from` and `to` both select `{}`; a file cannot be forbidden from itself", g.name(n as u32)),
            ));
        }
        let desc = format!(
            "{} must not import {}{}",
            labels(&c.from),
            labels(&c.to),
            if c.transitive { ", directly or indirectly" } else { " directly" }
        );
        let ban = Ban { from: &f, to: &t, barrier: &f, to_sels: &to, prefix: String::new() };
        Ok((forbid(g, &ban, c.transitive, mask), desc))
    }

    /// `layers`: each layer imports only layers below it.
    fn judge_layers(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.layers.len() < 2 {
            return Err(self.err(c.line, "`layers` needs at least two layers, top first".into()));
        }
        let layers: Vec<Vec<Selector>> = c.layers.iter().map(|l| self.sels(l)).collect::<Result<_, _>>()?;
        let sets: Vec<Vec<bool>> = layers.iter().map(|l| union(g, l)).collect();
        disjoint(g, &sets, |i| labels(&c.layers[i])).map_err(|(i, m)| self.err(c.layers[i][0].line, m))?;
        let all = any_of(g, &sets);
        let mut raws = Vec::new();
        for lower in 1..sets.len() {
            for upper in 0..lower {
                let (lo, up) = (labels(&c.layers[lower]), labels(&c.layers[upper]));
                let ban = Ban {
                    from: &sets[lower],
                    to: &sets[upper],
                    barrier: &all,
                    to_sels: &layers[upper],
                    prefix: format!("layer {lo} is below {up}: "),
                };
                raws.extend(forbid(g, &ban, c.transitive, mask));
            }
        }
        let names: Vec<String> = c.layers.iter().map(|l| labels(l)).collect();
        Ok((raws, format!("layers, top first: {}; a layer imports only layers below it", names.join(" > "))))
    }

    /// `independence`: no member imports another.
    fn judge_independence(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.members.len() < 2 {
            return Err(self.err(c.line, "`members` needs at least two members to be independent".into()));
        }
        let members = self.sels(&c.members)?;
        let sets: Vec<Vec<bool>> = members.iter().map(|m| union(g, std::slice::from_ref(m))).collect();
        disjoint(g, &sets, |i| format!("`{}`", c.members[i].text)).map_err(|(i, m)| self.err(c.members[i].line, m))?;
        let all = any_of(g, &sets);
        let mut raws = Vec::new();
        for i in 0..sets.len() {
            for j in 0..sets.len() {
                if i != j {
                    let ban = Ban {
                        from: &sets[i],
                        to: &sets[j],
                        barrier: &all,
                        to_sels: std::slice::from_ref(&members[j]),
                        prefix: String::new(),
                    };
                    raws.extend(forbid(g, &ban, c.transitive, mask));
                }
            }
        }
        Ok((raws, format!("{} import none of each other", labels(&c.members))))
    }

    /// `protected`: only `allowed` files import `target`.
    fn judge_protected(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.target.is_empty() {
            return Err(self.err(c.line, "a protected contract needs a `target`".into()));
        }
        let target = self.sels(&c.target)?;
        let allowed = self.sels(&c.allowed)?;
        let t = union(g, &target);
        let a = union(g, &allowed);
        let who = if c.allowed.is_empty() { "nothing outside it".to_string() } else { labels(&c.allowed) };
        let raws = protect(g, &t, &a, mask, &who, &c.target);
        Ok((raws, format!("only {who} may import {}", labels(&c.target))))
    }

    /// `acyclic`: no dependency cycle among the members (every stage when none are named).
    fn judge_acyclic(
        &self,
        mask: u16,
        exceptions: &[Exception],
        hits: &mut [usize],
    ) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        let members: Vec<Selector> = if c.members.is_empty() {
            g.stage_names()
                .map(|s| select::resolve(g, &format!("stage:{s}"), c.line).map_err(|m| self.err(c.line, m)))
                .collect::<Result<_, _>>()?
        } else {
            if c.members.len() < 2 {
                return Err(self.err(c.line, "`members` needs at least two members to form a cycle".into()));
            }
            self.sels(&c.members)?
        };
        let sets: Vec<Vec<bool>> = members.iter().map(|m| union(g, std::slice::from_ref(m))).collect();
        disjoint(g, &sets, |i| format!("`{}`", members[i].text))
            .map_err(|(i, m)| self.err(c.members.get(i).map(|l| l.line).unwrap_or(c.line), m))?;
        let names: Vec<String> =
            members.iter().map(|m| m.text.strip_prefix("stage:").unwrap_or(&m.text).to_string()).collect();
        let desc = if c.members.is_empty() {
            "no dependency cycle among stages".to_string()
        } else {
            format!("no dependency cycle among {}", labels(&c.members))
        };
        Ok((acyclic(g, &sets, &names, mask, exceptions, hits), desc))
    }

    /// `manifest`: the stages' manifests declare what their code imports, and nothing else.
    fn judge_manifest(&self) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g, store) = (self.c, self.g, self.store);
        let stages = self.sels(&c.stages)?;
        for (s, l) in stages.iter().zip(&c.stages) {
            if !matches!(s.kind, select::SelKind::Stage(_)) {
                return Err(self.err(l.line, format!("`stages` takes stage names; `{}` is not a stage", l.text)));
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
            return Err(self.err(
                c.line,
                "no stage in its scope has a manifest that declares dependencies; it could never fire".into(),
            ));
        }
        let raws = manifest(g, store, self.root, scope.as_ref(), &checks);
        let what: Vec<&str> = checks
            .iter()
            .map(|c| match *c {
                "undeclared" => "every imported package is declared",
                _ => "every declared dependency is used",
            })
            .collect();
        let which = if c.stages.is_empty() { "every stage".into() } else { labels(&c.stages) };
        Ok((raws, format!("{} ({})", what.join("; "), which)))
    }

    /// `rule`: the user rule file derives no `Violation`.
    fn judge_rule(&self) -> Result<(Vec<Raw>, String), CheckError> {
        let c = self.c;
        let r =
            c.rules.as_ref().ok_or_else(|| self.err(c.line, "a rule contract needs `rules = \"file.dl\"`".into()))?;
        let raws = rule(self.idx, self.root, r, self.budget).map_err(|m| self.err(r.line, m))?;
        Ok((raws, format!("no `Violation` derived by {}", r.text)))
    }

    /// Findings from `raws`: each excused by the first exception that matches (counted in `hits`),
    /// with its witness chain and a fingerprint.
    fn findings(&self, raws: Vec<Raw>, exceptions: &[Exception], hits: &mut [usize]) -> Vec<Finding> {
        let c = self.c;
        let mut seen: HashMap<String, usize> = HashMap::new();
        raws.into_iter()
            .map(|raw| {
                let excused = excuse(exceptions, &raw.froms, &raw.tos).map(|i| {
                    hits[i] += 1;
                    Excused { line: exceptions[i].spec.line, reason: exceptions[i].spec.reason.clone() }
                });
                let fingerprint = self.fingerprint(&raw.key, &mut seen);
                let witness = raw.chain.iter().map(|&e| hop(self.g, e)).collect();
                let key = raw.key;
                Finding {
                    contract: c.name.clone(),
                    kind: c.kind,
                    tier: raw.tier,
                    path: raw.at.0,
                    line: raw.at.1,
                    col: 1,
                    message: raw.message,
                    witness,
                    fingerprint,
                    key,
                    excused,
                    new: None,
                }
            })
            .collect()
    }

    /// The fingerprint of a finding with `key`: the contract and the key hashed, numbered when the
    /// contract already has a finding with that key (`seen` counts them).
    fn fingerprint(&self, key: &[String], seen: &mut HashMap<String, usize>) -> String {
        let c = self.c;
        let mut key = format!("{}\0{}\0{}", c.name, c.kind.name(), key.join("\0"));
        let n = seen.entry(key.clone()).or_default();
        *n += 1;
        if *n > 1 {
            key.push_str(&format!("\0#{n}"));
        }
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
    }

    /// Counts the exceptions that excused a finding as used; the others go to `out` as stale.
    fn tally_exceptions(&self, exceptions: &[Exception], hits: &[usize], out: &mut Outcome) {
        for (i, x) in exceptions.iter().enumerate() {
            let e = x.spec;
            if hits[i] == 0 {
                out.stale.push(StaleException {
                    contract: self.c.name.clone(),
                    line: e.line,
                    from: e.from.as_ref().map(|l| l.text.clone()),
                    to: e.to.as_ref().map(|l| l.text.clone()),
                    reason: e.reason.clone(),
                    unresolved: x.unresolved.clone(),
                });
            } else {
                out.used += 1;
            }
        }
    }
}

/// A contract exception with its selectors resolved.
struct Exception<'c> {
    from: Option<Selector>,
    to: Option<Selector>,
    /// Why a selector of it names nothing in the index: it excuses nothing.
    unresolved: Option<String>,
    spec: &'c crate::config::ExceptionSpec,
}

/// The first exception whose `from` matches one of `froms` and whose `to` matches one of `tos`.
fn excuse(exceptions: &[Exception], froms: &[Selected], tos: &[Selected]) -> Option<usize> {
    exceptions.iter().position(|x| {
        x.unresolved.is_none()
            && x.from.as_ref().is_none_or(|f| froms.iter().any(|s| f.matches(s)))
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

fn subject(g: &DepGraph, n: u32) -> Selected {
    let name = g.name(n).to_string();
    if g.is_file(n) {
        Selected { node: Some(n), stage: g.stage_of(n).map(str::to_string), path: Some(name), package: None }
    } else {
        Selected { node: Some(n), package: Some(name), ..Selected::default() }
    }
}

/// What a `forbid` search refutes: imports from `from` nodes into `to` nodes, direct or (when
/// transitive) through nodes outside `barrier`; `to_sels` name the ends, `prefix` opens messages.
struct Ban<'s> {
    from: &'s [bool],
    to: &'s [bool],
    barrier: &'s [bool],
    to_sels: &'s [Selector],
    prefix: String,
}

/// The imports `ban` refutes. One finding per import line, at the lowest tier that still refutes
/// the contract.
fn forbid(g: &DepGraph, ban: &Ban, transitive: bool, mask: u16) -> Vec<Raw> {
    let (from, to) = (ban.from, ban.to);
    let mut best: BTreeMap<(u32, u32), (u8, Vec<u32>)> = BTreeMap::new();
    for tier in 1..=3u8 {
        let next = if transitive { g.toward(to, ban.barrier, tier, mask) } else { vec![None; g.len()] };
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
    best.into_iter().map(|((f, line), (tier, chain))| banned_import(g, ban, f, line, tier, chain)).collect()
}

/// The finding for file `f`'s import on `line`, refuted at `tier` by the import chain `chain`.
fn banned_import(g: &DepGraph, ban: &Ban, f: u32, line: u32, tier: u8, chain: Vec<u32>) -> Raw {
    let first = &g.edges[chain[0] as usize];
    let end = g.edges[*chain.last().expect("a chain has an edge") as usize].to;
    let label = ban
        .to_sels
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
        message: format!("{}`{}` must not depend on {label}: it imports `{}`{via}", ban.prefix, g.name(f), first.spec),
        key: vec![g.name(f).to_string(), first.spec.clone(), g.name(end).to_string()],
        froms: vec![subject(g, f)],
        tos: chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect(),
        chain,
    }
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
    let unit_of = units_of(g, sets);
    let mut reported: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut out = Vec::new();
    for tier in 1..=3u8 {
        let mut chains = g.unit_chains(&unit_of, sets.len(), tier, mask);
        // An exception allows one dependency between members: it is no part of any cycle. It
        // excuses something only while that dependency is on a cycle; else it is stale.
        let cyclic = on_cycles(&chains, names);
        chains.retain(|pair, chain| !(cyclic.contains(pair) && excuses_chain(g, chain, exceptions, hits)));
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
            let Some(cycle) = shortest_cycle(&chains, &units) else { continue };
            out.push(cycle_finding(g, tier, &units, cycle, names));
        }
    }
    out
}

/// The dependencies between units that are on a cycle (both ends in one strongly connected set).
fn on_cycles(chains: &BTreeMap<(usize, usize), Vec<u32>>, names: &[String]) -> BTreeSet<(usize, usize)> {
    let nodes: Vec<u32> = (0..names.len() as u32).collect();
    let edges: Vec<(u32, u32)> = chains.keys().map(|&(a, b)| (a as u32, b as u32)).collect();
    let mut comp_of: HashMap<usize, usize> = HashMap::new();
    for (i, comp) in
        crate::datalog::graph::condensed_order(&nodes, &edges, |n| names[n as usize].clone()).iter().enumerate()
    {
        if comp.len() > 1 {
            comp_of.extend(comp.iter().map(|&n| (n as usize, i)));
        }
    }
    chains.keys().filter(|(a, b)| comp_of.get(a).is_some_and(|c| comp_of.get(b) == Some(c))).copied().collect()
}

/// For every node, the unit whose set holds it (the last such set).
fn units_of(g: &DepGraph, sets: &[Vec<bool>]) -> Vec<Option<usize>> {
    let mut unit_of: Vec<Option<usize>> = vec![None; g.len()];
    for (u, s) in sets.iter().enumerate() {
        for (n, b) in s.iter().enumerate() {
            if *b {
                unit_of[n] = Some(u);
            }
        }
    }
    unit_of
}

/// Whether an exception allows the dependency `chain` between two units (counted in `hits`).
fn excuses_chain(g: &DepGraph, chain: &[u32], exceptions: &[Exception], hits: &mut [usize]) -> bool {
    let froms: Vec<Selected> = chain.iter().map(|&e| subject(g, g.edges[e as usize].from)).collect();
    let tos: Vec<Selected> = chain.iter().map(|&e| subject(g, g.edges[e as usize].to)).collect();
    match excuse(exceptions, &froms, &tos) {
        Some(i) => {
            hits[i] += 1;
            true
        }
        None => false,
    }
}

/// A dependency cycle among units: the units in order from the first, and the imports that
/// close it.
struct Cycle {
    units: Vec<usize>,
    chain: Vec<u32>,
}

/// A shortest cycle through the first of `units` (a strongly connected component), within it.
fn shortest_cycle(chains: &BTreeMap<(usize, usize), Vec<u32>>, units: &[usize]) -> Option<Cycle> {
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
    let last = closing?;
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
    Some(Cycle { units: cycle, chain })
}

/// The finding for `cycle`, found at `tier` in the strongly connected set `units`.
fn cycle_finding(g: &DepGraph, tier: u8, units: &[usize], cycle: Cycle, names: &[String]) -> Raw {
    let Cycle { units: order, chain } = cycle;
    let mut path: Vec<&str> = order.iter().map(|&u| names[u].as_str()).collect();
    path.push(names[units[0]].as_str());
    let first = &g.edges[chain[0] as usize];
    let others = if units.len() > order.len() {
        let all: Vec<&str> = units.iter().map(|&u| names[u].as_str()).collect();
        format!(" (all of {} depend on each other)", all.join(", "))
    } else {
        String::new()
    };
    Raw {
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
    }
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
                .map(|(p, _)| Selected {
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
                tos: vec![Selected { node: g.package_node(&package), package: Some(package), ..Selected::default() }],
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
            let text = texts.entry(manifest.clone()).or_insert_with(|| source(root, &manifest).unwrap_or_default());
            let line = line_naming(text, &dep);
            out.push(Raw {
                tier: 2,
                at: (manifest.clone(), line),
                message: format!(
                    "stage `{stage}` declares `{dep}` ({kind}) in `{manifest}`, but none of its code imports it"
                ),
                chain: Vec::new(),
                key: vec!["unused".into(), stage.clone(), dep.clone()],
                froms: vec![Selected { node: None, path: Some(manifest), stage: Some(stage), package: None }],
                tos: vec![Selected { node: g.package_node(&dep), package: Some(dep), ..Selected::default() }],
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

/// A user rule file: every `Violation(...)` it derives (within `budget`) is a tier-2 finding. The
/// first `path` column and the first `int` column after it locate the finding; the other columns
/// make the message.
fn rule(idx: &Index, root: &Path, r: &Located, budget: datalog::Budget) -> Result<Vec<Raw>, String> {
    // The setting names the file as selectors do (a non-UTF-8 byte as `\xNN`); other text is a plain path.
    let file = walk::abs_path(root, &r.text).unwrap_or_else(|| root.join(&r.text));
    let text = read_regular(&file).map_err(|e| format!("cannot read rules file `{}`: {e}", r.text))?;
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
    let (answer, _) = datalog::answer(&q, &datalog::Facts::Loaded(idx), false, &[], budget).map_err(|e| {
        // a rule that ran out of its budget: the cartesian products in it say why, most often
        let notes: Vec<String> = q.cartesian_products().iter().map(|c| format!("\n  note: {c}")).collect();
        format!("{e}{}", notes.concat())
    })?;
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
                froms: vec![Selected { node: None, path: Some(path.clone()), stage: None, package: None }],
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

/// The text of the file stored as `path` under `root` (`None` when it cannot be read).
fn source(root: &Path, path: &str) -> Option<String> {
    read_regular(&walk::abs_path(root, path)?).ok()
}

/// The text of the regular file at `path` (see [`open_regular`]).
fn read_regular(path: &Path) -> std::io::Result<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// Fills the columns of findings and witness hops from the source: where the import's spec
/// starts on its line (else the first non-blank character).
fn columns(root: &Path, findings: &mut [Finding]) {
    let mut cache: HashMap<String, Vec<String>> = HashMap::new();
    let mut col = |path: &str, line: u32, spec: &str| -> u32 {
        let lines = cache
            .entry(path.to_string())
            .or_insert_with(|| source(root, path).map(|t| t.lines().map(str::to_string).collect()).unwrap_or_default());
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
