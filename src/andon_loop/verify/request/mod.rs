//! The `{wire, contract, fixDiff}` entry point (spec 000 §7.3; R108–R113): another tool applied a
//! change and asks andon to prove it. The request is parsed strictly, the diff must be the one
//! applied to the tree (R110) and stay inside its declared scope (R113), every obligation of the
//! contract is routed by the normal table (R109) and run, and the full andon rule decides: a
//! refutation, a tier-1 contradiction or an unmet P0 rule is an unmistakable "not proven" (R111).
//! Standalone, nothing is persisted (R112).

mod obligations;
mod parse;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::fix::{self, AppliedChange};
use super::judged::Judged;
use super::proof::{Inputs, ProofTarget};
use super::routing;
use crate::config::{BlastRadius, Config};
use crate::facts::rel;
use crate::index::Index;
use crate::ledger::{Verdict, Wire};
use obligations::obligations_of;
pub use obligations::{ObligationResult, RoutedObligation, judge, prove_all, rule_subject};
pub use parse::{Request, RequestRule, WireRef, parse};

/// The outcome of a request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequestOutcome {
    pub wire: WireRef,
    pub change: AppliedChange,
    pub rerated: BlastRadius,
    pub rerated_because: String,
    pub obligations: Vec<ObligationResult>,
    /// Tier-1 contradictions on the wire or in the changed files (condition 3: no adjudication
    /// clears them).
    pub holds: Vec<String>,
    /// Why the request is not proven, one line each (empty when proven).
    pub unmet: Vec<String>,
    /// Text in the changed files that addresses the tool: reported, never obeyed (R123).
    #[serde(skip)]
    pub injections: Vec<crate::ops::Injection>,
    #[serde(skip)]
    pub condition: Option<crate::ledger::andon_rule::Condition>,
}

/// Why a request was stopped before anything was proven.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Diff paths outside the declared scope (R113), listed.
    Scope(Vec<String>, String),
    Refused(String),
}

/// A standalone request: proven with its artifacts in a scratch directory under the system's
/// temporary directory, removed after; nothing of the run is kept in the repository (R112).
pub fn verify_standalone(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    req: &Request,
    mut inputs: Inputs,
) -> Result<RequestOutcome, Stop> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let scratch = std::env::temp_dir().join(format!("andon-request-{}-{nanos:x}", std::process::id()));
    inputs.artifacts = Some(scratch.clone());
    let result = verify(root, cfg, idx, req, &inputs);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// Verifies a parsed request on the fresh index of `root`.
pub fn verify(root: &Path, cfg: &Config, idx: &Index, req: &Request, inputs: &Inputs) -> Result<RequestOutcome, Stop> {
    let (change, judged) = scoped_change(root, cfg, req)?;
    let stages = StageMap::of(idx, &change)?;
    let site = resolve_wire(root, &req.wire, &change, &stages)?;
    let (mut rerated, mut rerated_because) = fix::rerate(&change);
    if !judged.tests.is_empty() && BlastRadius::HardToReverse > rerated {
        (rerated, rerated_because) = (BlastRadius::HardToReverse, judged.reason());
    }
    let has_checks = !routing::checks(cfg, &site.stages, inputs.command.as_deref()).is_empty();
    let subjects = obligations_of(req, has_checks);
    let checks = routing::checks(cfg, &site.stages, inputs.command.as_deref());
    let target_wire = site.wire.clone();
    let target = ProofTarget {
        stages: site.stages,
        wire: site.wire,
        path: site.path,
        summary: String::new(),
        id: "request".into(),
        claim: req.obligation.clone(),
        criteria: Vec::new(),
        diff: req.diff.clone(),
        proposer: inputs.proposer.clone().unwrap_or_default(),
    };
    let obligations = prove_all(root, cfg, idx, subjects, target, &checks, inputs, &change.hash)
        .map_err(|e| Stop::Refused(e.to_string()))?;
    let holds = tier1_holds(idx, target_wire.as_ref(), &change)?;
    let (mut unmet, mut condition) = judge(&obligations, &holds);
    over_ceiling(cfg, rerated, &rerated_because, &mut unmet, &mut condition);
    let injections = crate::ops::injections_in(idx, change.files.iter().map(|(_, p)| p.as_str()));
    Ok(RequestOutcome {
        injections,
        wire: req.wire.clone(),
        change,
        rerated,
        rerated_because,
        obligations,
        holds,
        unmet,
        condition,
    })
}

/// The request's change, refused unless it is the whole change applied to the tree, leaves
/// andon's own settings and state alone and stays inside its declared scope (R110, R113).
fn scoped_change(root: &Path, cfg: &Config, req: &Request) -> Result<(AppliedChange, Judged), Stop> {
    let own = super::super::own::own_paths(cfg);
    let change = fix::change_from_diff(&req.diff, "request", &[]).map_err(|e| Stop::Refused(e.to_string()))?;
    let judged = super::judged::of_change(root, cfg, "HEAD", &change);
    refuse_own_state(&judged)?;
    applied(root, &req.diff)?;
    refuse_partial(root, &change, &own)?;
    refuse_undeclared(&change, &req.files)?;
    Ok((change, judged))
}

/// Refuses a diff that writes what defines its proof (andon's settings, a contract's rules, a
/// file a `[[command]]` runs) or andon's state: no change proves itself by rewriting them, and a
/// standalone request has no person to authorize it.
fn refuse_own_state(judged: &Judged) -> Result<(), Stop> {
    let own_state = judged.settings_paths();
    if !own_state.is_empty() {
        return Err(Stop::Scope(
            own_state,
            format!("the diff writes andon's own settings or state ({})", judged.reason()),
        ));
    }
    Ok(())
}

/// Refuses a diff that is not the whole change: with git, nothing else may differ in the tree
/// the checks run on.
fn refuse_partial(root: &Path, change: &AppliedChange, own: &[String]) -> Result<(), Stop> {
    let Ok(tree) = fix::change(root, "HEAD", own) else { return Ok(()) };
    let given: BTreeSet<&str> = change.files.iter().map(|(_, p)| p.as_str()).collect();
    let missing: Vec<String> = tree
        .files
        .iter()
        .map(|(_, p)| p.clone())
        .filter(|p| !given.contains(p.as_str()) && !p.starts_with(".andon/") && p != "andon.toml")
        .collect();
    if !missing.is_empty() {
        return Err(Stop::Refused(format!(
            "the fixDiff is not the whole change in the tree: it leaves out {}; verification would run on more than the diff",
            missing.iter().map(|m| crate::text::line(m)).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
}

/// Refuses a diff that writes files outside the request's declared `files` (R113); when none are
/// declared, the scope is the diff's own files.
fn refuse_undeclared(change: &AppliedChange, declared: &[String]) -> Result<(), Stop> {
    let outside: Vec<String> =
        change.files.iter().map(|(_, p)| p.clone()).filter(|p| !declared.is_empty() && !declared.contains(p)).collect();
    if !outside.is_empty() {
        return Err(Stop::Scope(outside, "the diff writes files its `files` do not declare".into()));
    }
    Ok(())
}

/// The stages the index knows, the stage of each file (indexed or changed), and the stages each
/// test file in no stage imports.
struct StageMap {
    stage_of: BTreeMap<String, String>,
    stages: BTreeSet<String>,
    tests_of: BTreeMap<String, BTreeSet<String>>,
}

impl StageMap {
    /// Reads the stages from `idx`; a changed file the index does not hold (deleted, not
    /// indexed) belongs to the stage whose root holds it.
    fn of(idx: &Index, change: &AppliedChange) -> Result<StageMap, Stop> {
        let store =
            crate::ops::derive(&crate::datalog::builtin_program(), idx, &[rel::IN_STAGE, rel::STAGE, rel::TEST_IMPORT])
                .map_err(|e| Stop::Refused(e.to_string()))?;
        let mut tests_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in store.rels[rel::TEST_IMPORT.0 as usize].iter() {
            let (stage, path) = (store.syms.str(r[0]), store.syms.str(r[1]));
            tests_of.entry(path.to_string()).or_default().insert(stage.to_string());
        }
        let mut stage_of: BTreeMap<String, String> = store.rels[rel::IN_STAGE.0 as usize]
            .iter()
            .map(|r| (store.syms.str(r[0]).to_string(), store.syms.str(r[1]).to_string()))
            .collect();
        let stages: BTreeSet<String> =
            store.rels[rel::STAGE.0 as usize].iter().map(|r| store.syms.str(r[0]).to_string()).collect();
        let roots: Vec<(String, String)> = crate::ops::stream(idx)
            .map_err(|e| Stop::Refused(e.to_string()))?
            .stages
            .into_iter()
            .filter(|s| !s.root.is_empty() && s.root != ".")
            .map(|s| (format!("{}/", s.root.trim_end_matches('/')), s.name))
            .collect();
        for (_, p) in &change.files {
            if !stage_of.contains_key(p)
                && let Some((_, st)) =
                    roots.iter().filter(|(r, _)| p.starts_with(r.as_str())).max_by_key(|(r, _)| r.len())
            {
                stage_of.insert(p.clone(), st.clone());
            }
        }
        Ok(StageMap { stage_of, stages, tests_of })
    }

    /// Why changed file `p` is outside the wire `from -> to`: it is in a third stage, or it is a
    /// test in no stage that tests only other stages (a test of a stage of the wire is in scope).
    fn outside(&self, p: &str, from: &str, to: &str) -> Option<String> {
        if let Some(s) = self.stage_of.get(p) {
            return (s != from && s != to).then(|| format!("{p} (stage `{s}`)"));
        }
        let reached = self.tests_of.get(p)?;
        (!reached.contains(from) && !reached.contains(to)).then(|| {
            let names: Vec<String> = reached.iter().map(|s| format!("`{s}`")).collect();
            format!("{p} (a test of stage {})", names.join(", "))
        })
    }
}

/// Where the request's proof looks: the wire crossed (for a cross-stage move), the stages whose
/// checks speak for the change, and the site's file.
struct WireTarget {
    wire: Option<Wire>,
    stages: Vec<String>,
    path: String,
}

/// Resolves the request's wire against the index and the change.
fn resolve_wire(root: &Path, wire: &WireRef, change: &AppliedChange, map: &StageMap) -> Result<WireTarget, Stop> {
    match wire {
        WireRef::Stages { from, to } => stages_target(from, to, change, map),
        WireRef::Site { path, .. } => site_target(root, path, change, map),
    }
}

/// A cross-stage move: both stages exist, and the diff writes no third stage.
fn stages_target(from: &str, to: &str, change: &AppliedChange, map: &StageMap) -> Result<WireTarget, Stop> {
    let stages = &map.stages;
    for s in [from, to] {
        if !stages.contains(s) {
            let near = crate::config::nearest(s, stages.iter().map(String::as_str))
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            return Err(Stop::Refused(format!(
                "the wire names stage `{}`, which the index does not have{near}; stages: {}",
                crate::text::line(s),
                stages.iter().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let other: Vec<String> = change.files.iter().filter_map(|(_, p)| map.outside(p, from, to)).collect();
    if !other.is_empty() {
        return Err(Stop::Scope(other, format!("the diff writes stages other than the wire's `{from}` and `{to}`")));
    }
    let w = Wire { producer: from.to_string(), consumer: to.to_string() };
    Ok(WireTarget { wire: Some(w), stages: vec![from.to_string(), to.to_string()], path: String::new() })
}

/// A narrower fix at a site: its file exists (or the diff deletes it); its stages are those of
/// the changed files and of the site.
fn site_target(root: &Path, path: &str, change: &AppliedChange, map: &StageMap) -> Result<WireTarget, Stop> {
    if !root.join(path).exists() && !change.files.iter().any(|(s, p)| p == path && s == "D") {
        return Err(Stop::Refused(format!(
            "the wire's file `{}` does not exist in the repository",
            crate::text::line(path)
        )));
    }
    let mut st: Vec<String> = change.files.iter().filter_map(|(_, p)| map.stage_of.get(p).cloned()).collect();
    st.extend(map.stage_of.get(path).cloned());
    st.sort();
    st.dedup();
    Ok(WireTarget { wire: None, stages: st, path: path.to_string() })
}

/// Condition 3, whatever the routes: the tier-1 contradictions on the wire or in a changed
/// file, sorted and deduplicated.
fn tier1_holds(idx: &Index, wire: Option<&Wire>, change: &AppliedChange) -> Result<Vec<String>, Stop> {
    let mut holds: Vec<String> = Vec::new();
    if let Some(w) = wire {
        let (v, _, hold, claim, refs) =
            fix::structural_of(idx, Some(w), "", "").map_err(|e| Stop::Refused(e.to_string()))?;
        if hold && v != Verdict::Proven {
            holds.push(claim);
            holds.extend(refs);
        }
    }
    let changed: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).collect();
    holds.extend(fix::tier1_at(idx, &changed).map_err(|e| Stop::Refused(e.to_string()))?);
    holds.sort();
    holds.dedup();
    Ok(holds)
}

/// Condition 2: the actual diff against the authorization ceiling. Standalone, no authority can
/// be raised for it, so it is a halt a person resolves by raising the ceiling or splitting the
/// change; it ranks after a hold and a refutation, before everything a person or a later proof
/// settles.
fn over_ceiling(
    cfg: &Config,
    rerated: BlastRadius,
    rerated_because: &str,
    unmet: &mut Vec<String>,
    condition: &mut Option<crate::ledger::andon_rule::Condition>,
) {
    use crate::ledger::andon_rule::Condition;
    let ceiling = cfg.settings.authorization_level.value;
    if rerated > ceiling {
        unmet.insert(
            0,
            format!(
                "the diff rates {} ({rerated_because}), above the authorization ceiling {}",
                rerated.name(),
                ceiling.name()
            ),
        );
        if !matches!(condition, Some(Condition::Tier1Hold | Condition::Refuted | Condition::Tier2Hold)) {
            *condition = Some(Condition::Authorization);
        }
    }
}

/// Is `diff` the change applied to the tree at `root` (it reverse-applies cleanly)? A diff that
/// is not in the tree was never shipped: proving it would prove a proposal (R110).
fn applied(root: &Path, diff: &str) -> Result<(), Stop> {
    use std::io::Write;
    let attempt = |strip: &str| -> Result<bool, Stop> {
        let mut child = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["apply", "--check", "--reverse", strip, "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| Stop::Refused(format!("checking the diff against the tree needs git on PATH: {e}")))?;
        let mut text = diff.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let _ = child.stdin.take().expect("stdin").write_all(text.as_bytes());
        Ok(child.wait().map_err(|e| Stop::Refused(format!("git apply: {e}")))?.success())
    };
    // git-style `a/` `b/` prefixes only: the paths read from the diff are the paths it writes
    if attempt("-p1")? {
        return Ok(());
    }
    Err(Stop::Refused(
        "the fixDiff is not the change applied to this tree (it does not reverse-apply): apply it first; verification proves what shipped, never a proposal (R110)".into(),
    ))
}

#[cfg(test)]
mod tests;
