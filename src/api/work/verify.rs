//! `andon verify`: what it is asked (a gap's applied fix, a request, an audit) and what it
//! answered, each serialized as its JSON document.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::super::{Error, SCHEMA_VERSION, json_document};
use super::{condition_of, injections_json};
use crate::andon_loop::audit::AuditOutcome;
use crate::andon_loop::request::{RequestOutcome, Stop};
use crate::andon_loop::{self, VerifyStop, fix};
use crate::config::Config;
use crate::index::Index;
use crate::ledger::andon_rule::Condition;
use crate::ledger::{self, Verdict};
use crate::ops::Injection;

/// What `andon verify` is asked: the gap whose applied fix it proves (or a `{wire, contract,
/// fixDiff}` request), the fix as a unified diff instead of the working tree, and the inputs of
/// the approaches.
#[derive(Clone, Debug, Default)]
pub struct VerifyAsk {
    pub gap: Option<String>,
    /// The unified diff of the fix (`--diff`).
    pub diff: Option<String>,
    pub command: Option<String>,
    pub rubric: Option<PathBuf>,
    pub process: Option<PathBuf>,
    pub panel: Option<PathBuf>,
    pub proposer: Option<String>,
    /// The approach a person picked to settle a routing tie.
    pub approach: Option<String>,
}

/// The approach a person named to settle a routing tie, or an error listing the approaches.
pub fn approach(s: Option<&str>) -> Result<Option<crate::evidence::route::Approach>, Error> {
    use crate::evidence::route::Approach;
    s.map(|s| {
        Approach::from_id_or_family(s)
            .ok_or_else(|| Error::Failed(format!("unknown approach `{s}` (one of: {})", Approach::ids().join(", "))))
    })
    .transpose()
}

/// What `andon verify` answered.
pub enum VerifyResult {
    Gap(Verified),
    Request(RequestVerified),
}

/// A request as `andon verify --request` reads it; a malformed one is refused before any work.
pub fn parse_request(text: &str) -> Result<crate::andon_loop::request::Request, RequestVerified> {
    crate::andon_loop::request::parse(text).map_err(|errs| RequestVerified {
        result: Err(Stop::Refused(format!("the request is malformed: {}", errs.join("; ")))),
    })
}

/// `andon verify --audit`: the proof-strength audit of a recorded evidence record.
pub fn audit(root: &Path, cfg: &Config, evidence: &str, path_var: Option<&std::ffi::OsStr>) -> Audited {
    Audited { result: andon_loop::audit::audited(root, cfg, evidence, path_var) }
}

/// `andon verify`: proves the applied fix of `ask.gap` on the fresh index `idx` (the working
/// tree against the proposal's base, or `ask.diff`), or, given `request`, the request's
/// obligations. A request that names a gap is that gap's fix, proven and persisted the loop's
/// way (R112), and its wire must be the gap's; a standalone request persists nothing.
pub fn verify(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    ask: &VerifyAsk,
    request: Option<crate::andon_loop::request::Request>,
) -> Result<VerifyResult, Error> {
    let chosen = approach(ask.approach.as_deref())?;
    let mut inputs = crate::andon_loop::prove::Inputs {
        command: ask.command.clone(),
        rubric: ask.rubric.clone(),
        process: ask.process.clone(),
        panel: ask.panel.clone(),
        proposer: ask.proposer.clone(),
        chosen,
        artifacts: None,
        rules: Vec::new(),
        declared: Vec::new(),
    };
    let mut diff = ask.diff.clone();
    match (request, &ask.gap) {
        (Some(req), Some(gap)) => {
            if let Some(m) = request_for_gap(root, cfg, &req, gap) {
                return Ok(VerifyResult::Request(RequestVerified { result: Err(Stop::Refused(m)) }));
            }
            diff = Some(req.diff.clone());
            inputs.rules = req.rules.clone();
            inputs.declared = req.files.clone();
        }
        (Some(req), None) => return Ok(VerifyResult::Request(standalone(root, cfg, idx, &req, inputs))),
        (None, _) => {}
    }
    let gap = ask.gap.clone().unwrap_or_default();
    let result = andon_loop::verify(root, cfg, idx, &gap, &inputs, diff.as_deref())?;
    let injections = changed_injections(idx, &result);
    Ok(VerifyResult::Gap(Verified { gap, result, injections, recorded: None }))
}

/// The suspected injections in the files a gap's fix changed (or wrote outside its write-set).
fn changed_injections(idx: &Index, result: &Result<fix::VerifyOutcome, VerifyStop>) -> Vec<Injection> {
    match result {
        Ok(o) => crate::ops::injections_in(idx, o.change.files.iter().map(|(_, p)| p.as_str())),
        Err(VerifyStop::Scope(files)) => crate::ops::injections_in(idx, files.iter().map(String::as_str)),
        Err(_) => Vec::new(),
    }
}

/// A request reached from the loop: its wire must be the gap's, and the gap routes it (no `kind`).
fn request_for_gap(root: &Path, cfg: &Config, req: &crate::andon_loop::request::Request, gap: &str) -> Option<String> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let gap_wire = match ledger::load(&dir) {
        Ok(loaded) => loaded.and_then(|(_, state, _)| state.gaps.get(gap).and_then(|g| g.wire.clone())),
        Err(e) => return Some(e.to_string()),
    };
    let asked = match &req.wire {
        crate::andon_loop::request::WireRef::Stages { from, to } => {
            Some(ledger::Wire { producer: from.clone(), consumer: to.clone() })
        }
        crate::andon_loop::request::WireRef::Site { .. } => None,
    };
    if asked.is_some() && asked != gap_wire {
        return Some(format!(
            "the request's wire is not gap `{gap}`'s ({}): a request reached from the loop proves that gap's fix",
            gap_wire.map(|w| w.to_string()).unwrap_or_else(|| "no wire".into())
        ));
    }
    if !req.kinds.is_empty() {
        return Some("a request for a loop gap is routed by the gap; give `kind` only to a standalone request".into());
    }
    None
}

/// A standalone request: proven in a scratch directory; nothing of the run is kept in the
/// repository (R112).
fn standalone(
    root: &Path,
    cfg: &Config,
    idx: &Index,
    req: &crate::andon_loop::request::Request,
    inputs: crate::andon_loop::prove::Inputs,
) -> RequestVerified {
    RequestVerified { result: crate::andon_loop::request::verify_standalone(root, cfg, idx, req, inputs) }
}

/// `andon verify --gap`: the proof of a gap's applied fix, or why verify stopped.
pub struct Verified {
    pub gap: String,
    pub result: Result<fix::VerifyOutcome, VerifyStop>,
    /// The suspected injections of the changed files (R123: listed, never obeyed).
    pub injections: Vec<Injection>,
    /// What verify recorded of its proof at once (`None`: nothing, it stopped before proving).
    pub recorded: Option<crate::andon_loop::Recorded>,
}

impl Verified {
    /// The fix is proven: its evidence stands on no halt condition.
    pub fn cleared(&self) -> bool {
        self.result.as_ref().is_ok_and(|o| condition_of(&o.evidence).is_none())
            && self.recorded.as_ref().is_none_or(|r| r.halt.is_none())
    }

    /// The verdict token, never mistaken for cleared unless `proven`.
    pub fn token(&self) -> String {
        match &self.result {
            Ok(_) if let Some(c) = self.recorded.as_ref().and_then(|r| r.halt) => c.token().to_string(),
            Ok(o) => condition_of(&o.evidence).map_or("proven", Condition::token).to_string(),
            Err(VerifyStop::Scope(_)) => "refused:scope".into(),
            Err(VerifyStop::Authorization(..) | VerifyStop::Judged(..)) => Condition::Authorization.token().into(),
            Err(VerifyStop::Refused(_)) => "refused".into(),
            Err(VerifyStop::Blocked(_)) => Condition::BlockedByEnvironment.token().into(),
        }
    }

    /// What the proof showed, or why verify stopped, and what to do next.
    pub fn detail_and_next(&self) -> (String, String) {
        let gap = &self.gap;
        match &self.result {
            Ok(o) => {
                let e = &o.evidence;
                let next = if let Some(n) = self.recorded.as_ref().and_then(|r| r.next.as_ref()) {
                    n.detail.clone()
                } else if self.recorded.as_ref().is_some_and(|r| r.closed) {
                    format!("recorded: gap `{gap}` is closed on this proof; run `andon loop`: the cursor moves on")
                } else if e.verdict == Verdict::Proven {
                    "run `andon loop`: it records the evidence and advances".to_string()
                } else if e.hold {
                    format!(
                        "run `andon loop` to record the hold, change the code (only changed code clears a tier-1 hold), then `andon verify --gap {gap}` again"
                    )
                } else if let Some(cap) =
                    e.capability.as_ref().filter(|_| e.reason == Some(ledger::Reason::UnprovableHere))
                {
                    format!(
                        "the proof cannot run here: `{}` is not available. Run `andon loop` to record it (the gap becomes blocked-by-environment and is not retried until that changes); make `{}` available and verify again, or a person defers the gap",
                        cap.name, cap.name
                    )
                } else if matches!(e.reason, Some(ledger::Reason::NotPinning | ledger::Reason::NotDiscriminating)) {
                    crate::status::undecided_next(gap)
                } else if e.verdict == Verdict::Unknown {
                    crate::status::needs_input_next(gap)
                } else {
                    format!(
                        "run `andon loop` to record the evidence, change the fix, then `andon verify --gap {gap}` again"
                    )
                };
                (e.claim.clone(), next)
            }
            Err(VerifyStop::Scope(files)) => (
                format!("the diff writes files the proposal did not declare: {}", files.join(", ")),
                "undo those changes, or propose again with them in the write-set".into(),
            ),
            Err(VerifyStop::Authorization(level, because)) => (
                format!("the applied diff rates {} ({because}), above the ceiling", level.name()),
                format!("a person raises the authority for this diff: `andon authorize {gap} --by WHO --reason ...`"),
            ),
            Err(VerifyStop::Judged(_, what)) => (
                format!("{what}; no proof rests on that without a person"),
                format!(
                    "undo that part of the change (the proof is defined as it was at the proposal's base), or a person decides: `andon authorize {gap} --by WHO --reason ...` binds it to this diff"
                ),
            ),
            Err(VerifyStop::Refused(m)) => (m.clone(), refused_next(gap)),
            Err(VerifyStop::Blocked(cap)) => (
                format!(
                    "gap `{gap}` is blocked by the environment: `{}` (needed by `{}`) resolves here as it did when its proof could not run; the proof is not run again",
                    cap.name, cap.command
                ),
                format!(
                    "make `{}` available (install it on PATH), or change the check that needs it, then `andon verify --gap {gap}`; or a person defers it: `andon defer {gap} --by WHO --reason WHY`",
                    cap.name
                ),
            ),
        }
    }

    fn document(&self) -> Value {
        let (token, gap) = (self.token(), &self.gap);
        let (detail, next) = self.detail_and_next();
        let action = match self.recorded.as_ref().and_then(|r| r.next.as_ref()) {
            Some(n) => n.action.token(),
            None if self.cleared() => "loop",
            None => "fix",
        };
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "gap": gap, "detail": detail,
                            "next": { "action": action, "gap": gap, "detail": next },
                            "verdict": { "outcome": token } });
        if let Ok(o) = &self.result {
            v["evidence"] = json!({ "approach": o.evidence.approach, "verdict": format!("{:?}", o.evidence.verdict).to_lowercase(),
                "rung": o.evidence.rung, "tier": o.evidence.tier, "hold": o.evidence.hold, "claim": o.evidence.claim, "evidence": o.evidence.evidence,
                "references": o.evidence.references, "artifact": o.evidence.artifact,
                "red_first": o.evidence.red_first, "reason": o.evidence.reason, "capability": o.evidence.capability });
            v["diff"] = json!({ "base": o.change.base, "files": o.change.files, "hash": o.change.hash,
                "rerated": o.rerated.name(), "because": o.rerated_because });
            v["routing"] = serde_json::to_value(&o.routing).expect("json");
        }
        if let Err(VerifyStop::Scope(files)) = &self.result {
            v["outside_write_set"] = json!(files);
        }
        v["suspected_injections"] = injections_json(&self.injections);
        v
    }
}

/// The next step after `andon verify --gap` refused: nothing was proven or recorded.
fn refused_next(gap: &str) -> String {
    format!(
        "nothing was verified: do what the refusal says (`andon loop` names the next step for `{gap}`), then run `andon verify --gap {gap}` again"
    )
}

/// `andon verify --request`: the verdict a caller cannot mistake for cleared (R111).
pub struct RequestVerified {
    pub result: Result<RequestOutcome, Stop>,
}

impl RequestVerified {
    /// The verdict token and its detail.
    pub fn token_and_detail(&self) -> (String, String) {
        match &self.result {
            Ok(o) => match o.condition {
                None => ("proven".to_string(), format!("every obligation ({}) is proven", o.obligations.len())),
                Some(c) => (c.token().to_string(), o.unmet.first().cloned().unwrap_or_default()),
            },
            Err(Stop::Scope(files, why)) => ("refused:scope".into(), format!("{why}: {}", files.join(", "))),
            Err(Stop::Refused(m)) => ("refused".into(), m.clone()),
        }
    }

    /// Every obligation of the request is proven.
    pub fn cleared(&self) -> bool {
        self.result.as_ref().is_ok_and(|o| o.condition.is_none())
    }

    fn document(&self) -> Value {
        let (token, detail) = self.token_and_detail();
        let cleared = self.cleared();
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "persisted": false, "cleared": cleared,
                            "verdict": { "outcome": token, "proven": cleared, "detail": detail } });
        match &self.result {
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
        v
    }
}

/// `andon verify --audit`: the strength of an audited proof, or why it was refused.
pub struct Audited {
    pub result: Result<AuditOutcome, andon_loop::Error>,
}

impl Audited {
    /// The verdict token: `audit:<strength>` or `refused`.
    pub fn token(&self) -> String {
        match &self.result {
            Ok(o) => format!("audit:{}", o.strength),
            Err(_) => "refused".to_string(),
        }
    }

    fn document(&self) -> Value {
        let mut v = json!({ "schema_version": SCHEMA_VERSION, "verdict": { "outcome": self.token() } });
        match &self.result {
            Ok(o) => v["audit"] = serde_json::to_value(o).expect("json"),
            Err(e) => v["verdict"]["detail"] = json!(e.to_string()),
        }
        v
    }
}

json_document!(Verified, RequestVerified, Audited);
