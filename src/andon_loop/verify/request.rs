//! The `{wire, contract, fixDiff}` entry point (spec 000 §7.3; R108–R113): another tool applied a
//! change and asks andon to prove it. The request is parsed strictly, the diff must be the one
//! applied to the tree (R110) and stay inside its declared scope (R113), every obligation of the
//! contract is routed by the normal table (R109) and run, and the full andon rule decides: a
//! refutation, a tier-1 contradiction or an unmet P0 rule is an unmistakable "not proven" (R111).
//! Standalone, nothing is persisted (R112).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::fix::{self, AppliedChange};
use super::judged::Judged;
pub use super::proof::RequestRule;
use super::proof::{Inputs, Proof, ProofTarget, Routing};
use super::{prove, routing};
use crate::config::{BlastRadius, Config};
use crate::evidence::route::{self, Approach, Object, Subject};
use crate::facts::rel;
use crate::index::Index;
use crate::ingest::{Confidence, Priority};
use crate::ledger::{Verdict, Wire};

/// What the change crossed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireRef {
    /// A cross-stage move: producer stage → consumer stage.
    Stages { from: String, to: String },
    /// A narrower fix: a file (and line) plus the contract crossing it (a type, a signature, a
    /// schema, a rule).
    Site { path: String, line: Option<u32>, crossing: Option<String> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub wire: WireRef,
    /// The equivalence obligation.
    pub obligation: String,
    /// Declared objects (`kind`), when the caller says what the obligation is about.
    pub kinds: Vec<Object>,
    pub rules: Vec<RequestRule>,
    /// The files the fix declares it writes (its scope); empty: the diff's own files.
    pub files: Vec<String>,
    pub diff: String,
}

/// Parses a request. Every problem is reported, each naming its JSON path.
pub fn parse(text: &str) -> Result<Request, Vec<String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v: Value = serde_json::from_str(text)
        .map_err(|e| vec![format!("line {}, column {}: not valid JSON: {e}", e.line(), e.column())])?;
    let Value::Object(top) = v else { return Err(vec!["the request must be a JSON object".into()]) };
    let mut errs = Vec::new();
    for k in top.keys() {
        if !matches!(k.as_str(), "wire" | "contract" | "fixDiff" | "fix_diff") {
            let near = crate::config::nearest(k, ["wire", "contract", "fixDiff"])
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            errs.push(format!("`{k}`: unknown key{near}; a request has `wire`, `contract` and `fixDiff`"));
        }
    }
    let wire = match top.get("wire") {
        None => {
            errs.push("`wire` is missing: a stage-to-stage id (`core -> api`) or a `path:line`".into());
            None
        }
        Some(w) => parse_wire(w).map_err(|e| errs.push(format!("`wire`: {e}"))).ok(),
    };
    let contract = match top.get("contract") {
        None => {
            errs.push("`contract` is missing: the equivalence obligation to prove".into());
            None
        }
        Some(c) => parse_contract(c).map_err(|e| errs.extend(e.into_iter().map(|m| format!("`contract`{m}")))).ok(),
    };
    let fix = match (top.get("fixDiff"), top.get("fix_diff")) {
        (Some(_), Some(_)) => {
            errs.push("`fixDiff` and `fix_diff` are the same key: give one".into());
            None
        }
        (None, None) => {
            errs.push(
                "`fixDiff` is missing: verification runs on the applied change, never on a proposal (R110)".into(),
            );
            None
        }
        (Some(f), None) | (None, Some(f)) => {
            parse_fix(f).map_err(|e| errs.extend(e.into_iter().map(|m| format!("`fixDiff`{m}")))).ok()
        }
    };
    match (wire, contract, fix) {
        (Some(wire), Some((obligation, kinds, rules)), Some((files, diff))) if errs.is_empty() => {
            Ok(Request { wire, obligation, kinds, rules, files, diff })
        }
        _ => Err(errs),
    }
}

fn parse_wire(v: &Value) -> Result<WireRef, String> {
    let stages = |from: &str, to: &str| -> Result<WireRef, String> {
        let (from, to) = (from.trim(), to.trim());
        if from.is_empty() || to.is_empty() {
            return Err("a stage-to-stage wire names both stages".into());
        }
        Ok(WireRef::Stages { from: from.into(), to: to.into() })
    };
    let site = |path: &str, line: Option<u32>, crossing: Option<String>| -> Result<WireRef, String> {
        let path = path.trim();
        if path.is_empty() {
            return Err("the file is empty".into());
        }
        if path.starts_with('/') || path.contains('\\') || path.split('/').any(|c| c == ".." || c.is_empty()) {
            return Err(format!("`{}` must be a relative path inside the repository", crate::text::line(path)));
        }
        if line == Some(0) {
            return Err("lines count from 1".into());
        }
        Ok(WireRef::Site { path: path.into(), line, crossing })
    };
    match v {
        Value::String(s) => {
            for arrow in ["->", "→", "=>"] {
                if let Some((a, b)) = s.split_once(arrow) {
                    return stages(a, b);
                }
            }
            match s.rsplit_once(':') {
                Some((p, l)) if l.trim().parse::<u32>().is_ok() => site(p, l.trim().parse().ok(), None),
                _ => site(s, None, None),
            }
        }
        Value::Object(o) => {
            let known = ["from", "to", "producer", "consumer", "path", "file", "line", "contract", "crossing"];
            if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(format!("unknown key `{k}` (one of: {})", known.join(", ")));
            }
            let s = |k: &str| o.get(k).and_then(Value::as_str);
            if let (Some(a), Some(b)) = (s("from").or(s("producer")), s("to").or(s("consumer"))) {
                return stages(a, b);
            }
            let line = match o.get("line") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => {
                    Some(n.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or("`line` must be a whole number from 1")?)
                }
                Some(_) => return Err("`line` must be a number".into()),
            };
            let crossing = s("crossing").or(s("contract")).map(str::to_string);
            match s("path").or(s("file")) {
                Some(p) => site(p, line, crossing),
                None => Err("give `from` and `to` (stages), or `path` (and `line`) of the site".into()),
            }
        }
        _ => Err("a string (`core -> api`, `src/x.py:12`) or an object".into()),
    }
}

type Contract = (String, Vec<Object>, Vec<RequestRule>);

fn parse_contract(v: &Value) -> Result<Contract, Vec<String>> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok((s.trim().to_string(), Vec::new(), Vec::new())),
        Value::Object(o) => {
            let mut errs = Vec::new();
            let known = ["obligation", "kind", "rules"];
            for k in o.keys().filter(|k| !known.contains(&k.as_str())) {
                errs.push(format!(".{k}: unknown key (one of: {})", known.join(", ")));
            }
            let obligation = match o.get("obligation") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
                Some(_) => {
                    errs.push(".obligation: a non-empty string".into());
                    String::new()
                }
                None => "the rewrite is behavior-preserving".to_string(),
            };
            let mut kinds = Vec::new();
            let kind_values: Vec<&Value> = match o.get("kind") {
                None => Vec::new(),
                Some(Value::Array(a)) => a.iter().collect(),
                Some(one) => vec![one],
            };
            for k in kind_values {
                match k.as_str().and_then(Object::parse) {
                    Some(obj) => kinds.push(obj),
                    None => errs.push(format!(
                        ".kind: `{}` is not one of {}",
                        crate::text::line(&k.to_string()),
                        Object::ALL.map(Object::id).join(", ")
                    )),
                }
            }
            let mut rules = Vec::new();
            match o.get("rules") {
                None => {}
                Some(Value::Array(a)) => {
                    for (i, r) in a.iter().enumerate() {
                        match parse_rule(r) {
                            Ok(r) => rules.push(r),
                            Err(e) => errs.push(format!(".rules[{i}]: {e}")),
                        }
                    }
                }
                Some(_) => errs.push(".rules: an array of rules".into()),
            }
            let mut seen = BTreeSet::new();
            for r in rules.iter().filter(|r| matches!(r.id.as_str(), "contract" | "wire")) {
                errs.push(format!(".rules: the id `{}` is reserved for the request's own obligations", r.id));
            }
            for r in &rules {
                if !seen.insert(r.id.clone()) {
                    errs.push(format!(".rules: the id `{}` is given twice", crate::text::line(&r.id)));
                }
            }
            if errs.is_empty() { Ok((obligation, kinds, rules)) } else { Err(errs) }
        }
        _ => Err(vec![": a non-empty string, or an object with `obligation`, `kind` and `rules`".into()]),
    }
}

fn parse_rule(v: &Value) -> Result<RequestRule, String> {
    let Value::Object(o) = v else { return Err("a rule is an object".into()) };
    let known = ["id", "rule", "validation", "priority", "confidence"];
    if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(format!("unknown key `{k}` (one of: {})", known.join(", ")));
    }
    let field = |k: &str| -> Result<String, String> {
        match o.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(_) => Err(format!("`{k}` must be a non-empty string")),
            None => Err(format!("`{k}` is missing")),
        }
    };
    Ok(RequestRule {
        id: field("id")?,
        rule: field("rule")?,
        validation: field("validation")?,
        priority: Priority::parse(&field("priority")?)?,
        confidence: Confidence::parse(&field("confidence")?)?,
    })
}

fn parse_fix(v: &Value) -> Result<(Vec<String>, String), Vec<String>> {
    let (files, diff) = match v {
        Value::String(s) => (Vec::new(), s.clone()),
        Value::Object(o) => {
            let mut errs = Vec::new();
            for k in o.keys().filter(|k| !matches!(k.as_str(), "files" | "diff")) {
                errs.push(format!(".{k}: unknown key (one of: files, diff)"));
            }
            let files: Vec<String> = match o.get("files") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| match f {
                        Value::String(s) if !s.trim().is_empty() => Some(s.trim().trim_start_matches("./").to_string()),
                        Value::Object(m) => match m.get("path").and_then(Value::as_str) {
                            Some(p) => Some(p.trim().trim_start_matches("./").to_string()),
                            None => {
                                errs.push(format!(".files[{i}]: a path string (or an object with `path`)"));
                                None
                            }
                        },
                        _ => {
                            errs.push(format!(".files[{i}]: a path string"));
                            None
                        }
                    })
                    .collect(),
                Some(_) => {
                    errs.push(".files: an array of paths".into());
                    Vec::new()
                }
            };
            let diff = match o.get("diff") {
                Some(Value::String(s)) => s.clone(),
                Some(_) => {
                    errs.push(".diff: the unified diff, as a string".into());
                    String::new()
                }
                None => String::new(),
            };
            if !errs.is_empty() {
                return Err(errs);
            }
            (files, diff)
        }
        _ => return Err(vec![": the applied change: `{\"files\": [...], \"diff\": \"...\"}` or the diff text".into()]),
    };
    if diff.trim().is_empty() {
        return Err(vec![
            ".diff: empty: a request without the applied diff is refused; verification proves what shipped (R110)"
                .into(),
        ]);
    }
    Ok((files, diff))
}

/// One obligation's proof.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ObligationResult {
    /// `contract` for the request's own obligation, else the rule id.
    pub id: String,
    pub text: String,
    pub validation: Option<String>,
    pub priority: Option<String>,
    pub confidence: Option<String>,
    /// A P0 rule below High confidence: a blocking entry gate a person must confirm (R57).
    pub entry_gate: bool,
    pub routing: Routing,
    pub verdict: Verdict,
    /// Why the verdict is `unknown`, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<crate::ledger::Reason>,
    /// For reason `unprovable-here`: the capability the proof could not run without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capability: Option<crate::ledger::Capability>,
    pub tier: Option<u8>,
    pub hold: bool,
    pub claim: String,
    pub evidence: String,
    pub references: Vec<String>,
    pub artifact: Option<String>,
}

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
    let obligations =
        prove_all(root, cfg, idx, subjects, target, &checks, inputs, &change.hash).map_err(Stop::Refused)?;
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
    let change = fix::change_from_diff(&req.diff, "request", &[]).map_err(Stop::Refused)?;
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
                .map_err(Stop::Refused)?;
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
            .map_err(Stop::Refused)?
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

/// Every obligation of the request, each routed on its own: the wire itself (for a cross-stage
/// move), the contract, then each Behavior Contract rule.
fn obligations_of(req: &Request, has_checks: bool) -> Vec<RoutedObligation> {
    let main = contract_subject(req, has_checks);
    let mut subjects: Vec<RoutedObligation> = Vec::new();
    // a cross-stage move also owes the wire itself: every import across it still resolves
    if let WireRef::Stages { from, to } = &req.wire {
        subjects.push((
            "wire".into(),
            format!("every import across {from} -> {to} resolves to what the producer defines; no stub crosses it"),
            None,
            Subject { has_checks, ..Subject::default() }.with(Object::Structure, "the change moves code across stages"),
        ));
    }
    subjects.push(("contract".into(), req.obligation.clone(), None, main));
    for r in &req.rules {
        subjects.push((r.id.clone(), r.rule.clone(), Some(r.clone()), rule_subject(r, has_checks)));
    }
    subjects
}

/// What routing knows of the request's own obligation: its declared `kind`, else what its
/// site, crossing contract and text name, else it is about behaviour.
fn contract_subject(req: &Request, has_checks: bool) -> Subject {
    let mut main = Subject { has_checks, ..Subject::default() };
    for k in &req.kinds {
        main = main.with(*k, "the request's `kind`");
    }
    if !req.kinds.is_empty() {
        return main;
    }
    if let WireRef::Site { path, crossing, .. } = &req.wire {
        if let Some(o) = route::object_of_path(path) {
            main = main.with(o.0, o.1);
        }
        for o in route::objects_in(crossing.as_deref().unwrap_or("")) {
            main = main.with(o.0, format!("the crossing contract: {}", o.1));
        }
    }
    for o in route::objects_in(&req.obligation) {
        main = main.with(o.0, format!("the obligation: {}", o.1));
    }
    if main.objects.is_empty() {
        main = main.with(Object::Behavior, "the obligation is about what the code does");
    }
    main
}

/// Condition 3, whatever the routes: the tier-1 contradictions on the wire or in a changed
/// file, sorted and deduplicated.
fn tier1_holds(idx: &Index, wire: Option<&Wire>, change: &AppliedChange) -> Result<Vec<String>, Stop> {
    let mut holds: Vec<String> = Vec::new();
    if let Some(w) = wire {
        let (v, _, hold, claim, refs) = fix::structural_of(idx, Some(w), "", "").map_err(Stop::Refused)?;
        if hold && v != Verdict::Proven {
            holds.push(claim);
            holds.extend(refs);
        }
    }
    let changed: Vec<String> = change.files.iter().map(|(_, p)| p.clone()).collect();
    holds.extend(fix::tier1_at(idx, &changed).map_err(Stop::Refused)?);
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

/// One obligation to prove: its id (`contract` for the main one), text, rule (for an imported
/// Behavior Contract rule) and what routing knows of it.
pub type RoutedObligation = (String, String, Option<RequestRule>, Subject);

/// What routing knows of a Behavior Contract rule: its validation strategy names the object, else
/// its text, else it is about behaviour.
pub fn rule_subject(r: &RequestRule, has_checks: bool) -> Subject {
    let mut s = Subject { has_checks, ..Subject::default() };
    for o in route::objects_in(&r.validation) {
        s = s.with(o.0, format!("its validation: {}", o.1));
    }
    if s.objects.is_empty() {
        for o in route::objects_in(&r.rule) {
            s = s.with(o.0, format!("the rule: {}", o.1));
        }
    }
    if s.objects.is_empty() {
        s = s.with(Object::Behavior, "the rule is about what the code does");
    }
    s
}

/// The appeal to a person's authority in an obligation's text or its rule, if any (R105).
fn appeal(text: &str, rule: &Option<RequestRule>) -> Option<String> {
    std::iter::once(text)
        .chain(rule.iter().flat_map(|r| [r.rule.as_str(), r.validation.as_str()]))
        .find_map(crate::panel::appeals_to_authority)
}

/// Routes every obligation on its own and runs each approach once for all that route to it; the
/// panel judges, as its criteria, every obligation routed to it.
#[allow(clippy::too_many_arguments)]
pub fn prove_all(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    subjects: Vec<RoutedObligation>,
    mut target: ProofTarget,
    checks: &[crate::andon_loop::commands::CommandSpec],
    inputs: &Inputs,
    hash: &str,
) -> Result<Vec<ObligationResult>, String> {
    let routes = routing::route_all(&subjects.iter().map(|(_, _, _, s)| s).collect::<Vec<_>>(), inputs.chosen)?;
    target.criteria = subjects
        .iter()
        .zip(&routes)
        .filter(|((_, text, rule, _), r)| r.approach == Some(Approach::Adversarial) && appeal(text, rule).is_none())
        .map(|((id, text, rule, _), _)| {
            prove::criterion(id, text, rule.as_ref().is_none_or(|r| r.priority <= Priority::P1), checks)
        })
        .collect();
    let mut ran: BTreeMap<Approach, Proof> = BTreeMap::new();
    let mut obligations = Vec::new();
    for ((id, text, rule, _), route) in subjects.into_iter().zip(routes) {
        // a criterion resting on a person's say-so is rejected whatever approach it routes to (R105)
        let proof = match (appeal(&text, &rule), route.approach) {
            (Some(p), _) => Proof {
                verdict: Verdict::Unknown,
                tier: None,
                hold: false,
                claim: format!(
                    "rejected: it appeals to a person's authority (`{}`), which proves nothing; restate it as an objective check (R105)",
                    crate::text::short(&p)
                ),
                detail: "not run: a person's say-so is no evidence".into(),
                references: Vec::new(),
                artifact: None,
                per_criterion: Vec::new(),
                reason: None,
                capability: None,
            },
            (None, None) => routing::tie(&route),
            (None, Some(a)) => match ran.get(&a) {
                Some(p) => p.clone(),
                None => {
                    let mut p = prove::run(a, root, cfg, idx, &target, inputs, hash)?;
                    if let Some(scratch) = &inputs.artifacts {
                        // a scratch directory, removed when the request ends: nothing to point at
                        p.artifact = None;
                        p.references.retain(|r| !r.starts_with(&*scratch.to_string_lossy()));
                    }
                    ran.insert(a, p.clone());
                    p
                }
            },
        };
        // the panel judged each obligation as a criterion of its own: its verdict is that one's
        let mut proof = proof;
        if let Some((_, v, why)) = proof.per_criterion.iter().find(|(c, _, _)| *c == id).cloned() {
            proof.verdict = v;
            proof.detail = format!("{}: {why} (the panel: {})", id, proof.detail);
        }
        let (verdict, reason) = crate::ledger::spec_verdict(proof.verdict, proof.reason);
        let capability = proof.capability.filter(|_| reason == Some(crate::ledger::Reason::UnprovableHere));
        obligations.push(ObligationResult {
            id,
            text,
            validation: rule.as_ref().map(|r| r.validation.clone()),
            priority: rule.as_ref().map(|r| r.priority.name().to_string()),
            confidence: rule.as_ref().map(|r| r.confidence.name().to_string()),
            entry_gate: rule.as_ref().is_some_and(|r| r.priority == Priority::P0 && r.confidence < Confidence::High),
            routing: routing::routing_record(&route, None),
            verdict,
            reason,
            capability,
            tier: proof.tier,
            hold: proof.hold,
            claim: proof.claim,
            evidence: proof.detail,
            references: proof.references,
            artifact: proof.artifact,
        });
    }
    Ok(obligations)
}

/// The andon rule over a request's obligations: the condition it halts on (None: proven) and
/// every reason, worst first.
pub fn judge(
    obligations: &[ObligationResult],
    holds: &[String],
) -> (Vec<String>, Option<crate::ledger::andon_rule::Condition>) {
    use crate::ledger::andon_rule::Condition;
    let mut unmet = Vec::new();
    let mut worst: Option<(u8, Condition)> = None;
    let mut note = |rank: u8, c: Condition, why: String, unmet: &mut Vec<String>| {
        unmet.push(why);
        if worst.is_none_or(|(r, _)| rank < r) {
            worst = Some((rank, c));
        }
    };
    if !holds.is_empty() {
        note(0, Condition::Tier1Hold, format!("tier-1 contradiction: {}", holds[0]), &mut unmet);
    }
    for o in obligations {
        let p0 = if o.priority.as_deref() == Some("P0") { " (P0 blocking rule)" } else { "" };
        let name = match o.id.as_str() {
            "contract" => "the contract".to_string(),
            "wire" if o.priority.is_none() => "the wire".to_string(),
            id => format!("rule `{id}`{p0}"),
        };
        if o.entry_gate {
            note(
                3,
                Condition::EntryGate,
                format!("{name} is P0 below High confidence: an entry gate a person confirms before code changes"),
                &mut unmet,
            );
        }
        match o.verdict {
            Verdict::Proven => {}
            Verdict::Refuted if o.hold => note(0, Condition::Tier1Hold, format!("{name}: {}", o.claim), &mut unmet),
            Verdict::Refuted if o.tier == Some(2) => {
                note(2, Condition::Tier2Hold, format!("{name} refuted (tier 2): {}", o.claim), &mut unmet)
            }
            Verdict::Refuted if o.tier.is_some() => {
                note(1, Condition::Refuted, format!("{name} refuted: {}", o.claim), &mut unmet)
            }
            // what the check showed, not what it was to show
            Verdict::Refuted => note(1, Condition::Refuted, format!("{name} refuted: {}", o.evidence), &mut unmet),
            Verdict::Unknown if o.routing.approach.is_none() => {
                note(4, Condition::NeedsHuman, format!("{name}: {}", o.claim), &mut unmet)
            }
            Verdict::Unknown => match Condition::of_unknown(o.reason) {
                Condition::Unproven => {
                    let why = o.reason.map_or("unproven", |r| r.name());
                    note(6, Condition::Unproven, format!("{name} unknown ({why}): {}", o.evidence), &mut unmet)
                }
                c => note(5, c, format!("{name} unknown: {}", o.claim), &mut unmet),
            },
            Verdict::Unproven => note(6, Condition::Unproven, format!("{name} unproven: {}", o.evidence), &mut unmet),
        }
    }
    (unmet, worst.map(|(_, c)| c))
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
mod tests {
    use super::*;

    #[test]
    fn the_three_shapes_of_each_field_parse() {
        let r = parse(r#"{"wire": "core -> api", "contract": "behavior is unchanged across the move", "fixDiff": "--- a/x\n+++ b/x\n"}"#)
            .unwrap();
        assert_eq!(r.wire, WireRef::Stages { from: "core".into(), to: "api".into() });
        let r = parse(
            r#"{"wire": {"path": "src/a.py", "line": 3, "crossing": "def f(x)"},
                "contract": {"obligation": "the rewrite is behavior-preserving", "kind": "invariant",
                             "rules": [{"id": "BC-1", "rule": "totals match", "validation": "property test", "priority": "P0", "confidence": "medium"}]},
                "fixDiff": {"files": ["src/a.py"], "diff": "--- a/src/a.py\n+++ b/src/a.py\n"}}"#,
        )
        .unwrap();
        assert_eq!(r.wire, WireRef::Site { path: "src/a.py".into(), line: Some(3), crossing: Some("def f(x)".into()) });
        assert_eq!(r.kinds, vec![Object::Invariant]);
        assert_eq!(r.rules[0].confidence, Confidence::Medium);
        assert_eq!(r.files, vec!["src/a.py".to_string()]);
        let r = parse(r#"{"wire": "src/a.py:12", "contract": "x", "fix_diff": "d"}"#).unwrap();
        assert_eq!(r.wire, WireRef::Site { path: "src/a.py".into(), line: Some(12), crossing: None });
    }

    #[test]
    fn bad_requests_name_every_problem() {
        let e = parse(r#"{"wire": "/etc/passwd:1", "contract": {"rules": [{"id": "R", "rule": "r", "validation": "v", "priority": "p0", "confidence": "High"}]}, "fixDif": "x"}"#)
            .unwrap_err();
        let all = e.join("\n");
        assert!(all.contains("`fixDif`: unknown key (did you mean `fixDiff`?)"), "{all}");
        assert!(all.contains("relative path"), "{all}");
        assert!(all.contains("`fixDiff` is missing"), "{all}");
        assert!(all.contains(".rules[0]"), "{all}");
        let e = parse(r#"{"wire": "a -> b", "contract": "c", "fixDiff": {"files": ["x"], "diff": "  "}}"#).unwrap_err();
        assert!(e[0].contains("without the applied diff is refused"), "{e:?}");
        assert!(parse("[1]").is_err());
        assert!(parse("{").unwrap_err()[0].starts_with("line 1, column"));
    }

    fn ob(id: &str, verdict: Verdict, priority: Option<&str>, gate: bool) -> ObligationResult {
        ObligationResult {
            id: id.into(),
            text: String::new(),
            validation: None,
            priority: priority.map(str::to_string),
            confidence: None,
            entry_gate: gate,
            routing: Routing {
                approach: Some("executed".into()),
                family: None,
                rung: Some(3),
                candidates: vec![],
                why: vec![],
                disagreement: None,
            },
            verdict,
            reason: None,
            capability: None,
            tier: None,
            hold: false,
            claim: "c".into(),
            evidence: String::new(),
            references: vec![],
            artifact: None,
        }
    }

    #[test]
    fn the_andon_rule_decides_the_request() {
        use crate::ledger::andon_rule::Condition;
        let proven = ob("contract", Verdict::Proven, None, false);
        assert_eq!(judge(std::slice::from_ref(&proven), &[]).1, None);
        // a refutation anywhere, a tier-1 hold, an unmet P0 rule, an entry gate: never proven
        assert_eq!(
            judge(&[proven.clone(), ob("R", Verdict::Refuted, Some("P2"), false)], &[]).1,
            Some(Condition::Refuted)
        );
        assert_eq!(judge(std::slice::from_ref(&proven), &["x".into()]).1, Some(Condition::Tier1Hold));
        let (unmet, c) = judge(&[proven.clone(), ob("BC-1", Verdict::Unproven, Some("P0"), false)], &[]);
        assert_eq!(c, Some(Condition::Unproven));
        assert!(unmet[0].contains("P0 blocking rule"), "{unmet:?}");
        assert_eq!(
            judge(&[proven.clone(), ob("G", Verdict::Proven, Some("P0"), true)], &[]).1,
            Some(Condition::EntryGate)
        );
        // the worst wins: a hold over a refutation
        assert_eq!(judge(&[ob("R", Verdict::Refuted, None, false)], &["x".into()]).1, Some(Condition::Tier1Hold));
    }
}
