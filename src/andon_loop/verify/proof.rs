//! The vocabulary every verify shares: what is being proven ([`ProofTarget`]), the records judged
//! approaches need ([`Inputs`]), what an approach showed ([`Proof`]) and the routing record kept
//! with the evidence ([`Routing`]); and why a proof that could not decide could not.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::commands;
use crate::config::Config;
use crate::evidence::route::Approach;
use crate::ingest::{Priority, RuleConfidence};
use crate::ledger::{Capability, Reason, Verdict, Wire};

/// What is being proven.
#[derive(Clone, Debug)]
pub struct ProofTarget {
    /// The stage whose configured commands are its executed checks.
    pub stages: Vec<String>,
    pub wire: Option<Wire>,
    pub path: String,
    pub summary: String,
    /// What the panel judges (approach a): an id (the gap, or `request`), the claim under proof,
    /// its criteria, the applied diff, and who built the fix.
    pub id: String,
    pub claim: String,
    pub criteria: Vec<crate::panel::Criterion>,
    pub diff: String,
    pub proposer: String,
}

/// The records judged approaches need (R96, R97, R101–R105), each given by whoever drives verify.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// `--command`: the check the executed approach runs instead of the configured ones.
    pub command: Option<String>,
    /// `--rubric FILE`: the claim rubric record (c).
    pub rubric: Option<PathBuf>,
    /// `--process FILE`: the agentic process record (d).
    pub process: Option<PathBuf>,
    /// `--panel DIR`: the adversarial panel's role outputs (a).
    pub panel: Option<PathBuf>,
    /// `--proposer`: the provenance id of whoever proposed or built the fix (the panel refuses an
    /// against case from them, R102).
    pub proposer: Option<String>,
    /// `--approach`: a person's choice between the candidates of a genuine routing tie.
    pub chosen: Option<Approach>,
    /// Where command outputs go (default: `output_dir`); a standalone request keeps none.
    pub artifacts: Option<PathBuf>,
    /// A request handed in for a loop gap: its Behavior Contract rules (more obligations) and
    /// its declared files (the scope).
    pub rules: Vec<RequestRule>,
    pub declared: Vec<String>,
}

/// What one approach showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    pub verdict: Verdict,
    pub tier: Option<u8>,
    pub hold: bool,
    pub claim: String,
    pub detail: String,
    pub references: Vec<String>,
    pub artifact: Option<String>,
    /// The panel's verdict on each criterion it judged (criterion id, verdict, why): an
    /// obligation the panel proves takes its own criterion's, never the blend (approach a).
    pub per_criterion: Vec<(String, Verdict, String)>,
    /// Why it could not decide, when the approach knows (the ledger's reason of an unknown).
    pub reason: Option<Reason>,
    /// For reason `unprovable-here`: the capability it could not run without.
    pub capability: Option<Capability>,
}

impl Proof {
    pub(super) fn unknown(claim: String, detail: &str) -> Proof {
        Proof {
            verdict: Verdict::Unknown,
            tier: None,
            hold: false,
            claim,
            detail: detail.into(),
            references: Vec::new(),
            artifact: None,
            per_criterion: Vec::new(),
            reason: None,
            capability: None,
        }
    }

    /// Says why a proof that neither proves nor refutes could not decide, from the runs of its
    /// checks: one that could not run here names the capability it lacks (decision 8); else one
    /// that ran out of time.
    pub(super) fn explain(&mut self, root: &Path, runs: &[commands::Run]) {
        if matches!(self.verdict, Verdict::Proven | Verdict::Refuted) {
            return;
        }
        if let Some(cap) = unprovable_here(root, runs) {
            self.verdict = Verdict::Unknown;
            self.reason = Some(Reason::UnprovableHere);
            self.claim = format!(
                "`{}` cannot run here: `{}` is not available; nothing is known of the fix",
                cap.command, cap.name
            );
            self.capability = Some(cap);
        } else if runs.iter().any(|r| r.timed_out) {
            self.reason = Some(Reason::TimedOut);
        }
    }
}

/// The capability the first run that could not run here lacked ([`cannot_run_here`]), with its
/// fingerprint as it resolves now.
pub(super) fn unprovable_here(root: &Path, runs: &[commands::Run]) -> Option<Capability> {
    runs.iter().find_map(|r| lacking(root, r))
}

/// The capability run `r` lacked: it exited as the shell does for a command it cannot find (127)
/// or execute (126), and the executable it names does not resolve here. A 126 or 127 naming
/// something that resolves is the check's own exit: a failure like any other.
fn lacking(root: &Path, r: &commands::Run) -> Option<Capability> {
    if !matches!(r.exit, Some(126 | 127)) {
        return None;
    }
    let output = std::fs::read_to_string(root.join(&r.artifact)).unwrap_or_else(|_| r.tail.clone());
    let name = crate::capabilities::missing_from(&r.run, &output);
    // a shell's own word (`exit 127`, `return`) is never a tool that could be missing
    if crate::capabilities::shell_word(&name) {
        return None;
    }
    let path = std::env::var_os("PATH");
    // a command that resolves its tools its own way (its own `PATH=`, a `cd`) cannot be judged
    // from andon's PATH: its 126/127 stands as the shell reported it
    let judged_here = crate::capabilities::watchable(&name, &r.run);
    if judged_here && crate::capabilities::resolves(&name, root, path.as_deref()) {
        return None;
    }
    let fingerprint = crate::capabilities::fingerprint(&name, root, path.as_deref());
    Some(Capability { name, command: r.run.clone(), fingerprint })
}

/// Run `r` could not run here: its tool is absent ([`lacking`]), which says nothing about the fix.
pub(super) fn cannot_run_here(root: &Path, r: &commands::Run) -> bool {
    lacking(root, r).is_some()
}

/// The routing record kept with the evidence (R89, R91).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// The approach that ran (absent: a tie nobody has chosen between).
    pub approach: Option<String>,
    pub family: Option<char>,
    pub rung: Option<u8>,
    pub candidates: Vec<String>,
    pub why: Vec<String>,
    /// What the proposal recommended, when it differs from the route (R89).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<String>,
}

/// Where command outputs go: the caller's artifacts directory, else the configured `output_dir`.
pub(super) fn output_dir(cfg: &Config, inputs: &Inputs) -> PathBuf {
    inputs.artifacts.clone().unwrap_or_else(|| cfg.settings.output_dir.value.clone())
}

/// One imported Behavior Contract rule (spec 000 §7.1), with its priority and confidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRule {
    pub id: String,
    pub rule: String,
    pub validation: String,
    pub priority: Priority,
    pub confidence: RuleConfidence,
}
