//! `andon check`: the structural gate. Contracts from the configuration are judged
//! on a fresh index; every finding carries its tier, its contract and a minimal witness chain.
//! Exceptions are part of the contract: each has a reason, and one that excuses nothing is an
//! error. Nothing else — no flag, environment variable or source comment — suppresses a finding.

pub mod base;
pub mod declared;
pub mod graph;
pub mod group;
pub mod init;
pub mod inner;
pub mod ledger;
pub mod select;

mod error;
mod imports;
mod judge;
mod manifest;
mod resolves;
mod rule;
mod witness;

pub use error::{CheckError, Error};
use imports::*;
use judge::*;
use manifest::*;
use resolves::*;
use rule::*;
use witness::*;

use crate::index::walk::open_regular;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::config::{Config, ConfigError, ContractKind, ContractSpec, Located};
use crate::datalog;
use crate::dialect::Ty;
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
    /// The two selectors of the contract it sets against each other (a layer's and the layer
    /// above's, two members, `from` and `to`), as the configuration wrote them; None for a kind
    /// judged otherwise (a cycle, a missing name, a dependency).
    pub pair: Option<(String, String)>,
    /// A finding that stands for several ([`group`]): every finding of every contract whose witness
    /// passes through its offending import; empty for a finding that stands alone.
    pub members: Vec<Finding>,
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
            pair: None,
            members: Vec::new(),
        }
    }

    /// Fails the run: tier 1 or 2 and not excused by the contract.
    pub fn blocking(&self) -> bool {
        self.tier <= 2 && self.excused.is_none()
    }

    /// The contract findings it stands for: its members, or itself alone.
    pub fn parts(&self) -> &[Finding] {
        if self.members.is_empty() { std::slice::from_ref(self) } else { &self.members }
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
    /// `resolves`: the import's `file:line` and name.
    pub at: Option<String>,
    pub name: Option<String>,
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
    /// Contracts that cannot be judged because a selector of theirs names nothing in the index any
    /// more (a stage renamed, a manifest removed): each a finding of the configuration (exit 2),
    /// while the other contracts are judged.
    pub unjudged: Vec<Unjudged>,
}

/// A contract that names what the index no longer holds: its line and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unjudged {
    pub contract: String,
    pub line: u32,
    pub message: String,
}

impl CheckReport {
    pub fn blocking(&self) -> usize {
        self.findings.iter().filter(|f| f.blocking()).count()
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
    /// `resolves`: the name imported or called, which an exception may name.
    name: Option<String>,
    /// The two selectors the finding sets against each other ([`Finding::pair`]).
    pair: Option<(String, String)>,
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
    let mut out = JudgedContracts::default();
    for c in &cfg.contracts {
        let judge = Judge { idx, root, config_path: &config_path, g: &g, store: &store, c, budget };
        if let Some(why) = judge.unnamed() {
            out.unjudged.push(why);
            continue;
        }
        judge.judge(&mut out)?;
    }
    // the loop's standing tier-1 holds fail the gate where the repository keeps a ledger
    let ledger = match ledger {
        Some((mut result, mut found)) => {
            let holds = ledger::holds(idx)?;
            result.findings += holds.len();
            result.blocking += holds.len();
            found.extend(holds);
            Some((result, found))
        }
        None => None,
    };
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
        let mut out = JudgedContracts::default();
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
    let has = |k: ContractKind| cfg.contracts.iter().any(|c| c.kind == k);
    facts(idx, has(ContractKind::Manifest), has(ContractKind::Resolves))
}

/// Derives the graph's relations, the manifests' with `manifest`, the missing names and arity
/// mismatches with `resolves`.
fn facts(idx: &Index, manifest: bool, resolves: bool) -> Result<datalog::Store, CheckError> {
    let prog = datalog::builtin_program();
    let mut goals: Vec<crate::facts::RelId> = graph::GOALS.to_vec();
    goals.push(rel::UNDECLARED_WIRE_IMPORT);
    if manifest {
        goals.extend([rel::UNDECLARED_IMPORT, rel::UNUSED_DEPENDENCY_AT, rel::HAS_MANIFEST]);
    }
    if resolves {
        goals.extend([rel::MISSING_NAME_AT, rel::ARITY_MISMATCH_AT, rel::OPEN_ABSENCE, rel::MISSING_MODULE]);
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
struct JudgedContracts {
    findings: Vec<Finding>,
    contracts: Vec<ContractResult>,
    stale: Vec<StaleException>,
    /// Exceptions that excused at least one finding.
    used: usize,
    unjudged: Vec<Unjudged>,
}

impl JudgedContracts {
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
            unjudged: self.unjudged,
        }
    }
}
