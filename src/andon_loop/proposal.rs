//! Proposals (R66–R70): exactly one blast-radius tag, one verification approach with its reason, a
//! description and a declared file write-set — anything else is refused. `andon propose` checks one
//! and writes it as an artifact under `output_dir/proposals/`; the loop, the only ledger writer,
//! records it on its next step. andon never edits the repository: the fix is applied by whoever
//! drives the loop.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::BlastRadius;

/// The verification approaches (spec 000 §6), cheapest deterministic rung first.
pub const APPROACHES: &[&str] =
    &["structural", "executed", "numeric", "rubric", "agentic", "proof-strength", "adversarial"];

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    pub gap: String,
    pub blast_radius: BlastRadius,
    pub approach: String,
    /// Why this approach proves this wire.
    pub reason: String,
    pub description: String,
    /// The repo-relative files the fix will write.
    pub write_set: Vec<String>,
    /// The commit the fix is applied on (recorded by `andon propose`).
    #[serde(default)]
    pub base_commit: Option<String>,
    /// Who proposes and builds the fix (a provenance id; optional): recorded, so the adversarial
    /// panel can refuse an against case from them without trusting a flag given at verify time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposer: Option<String>,
    /// What defines how the fix is judged, as `andon propose` found it (recorded by it; a digest
    /// per part, see [`super::verify::judged::fingerprint`]).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub judging: std::collections::BTreeMap<String, String>,
    /// The interview questions the proposer resolved (R67, R69): each a load-bearing fork with its
    /// recommended answer and the answer taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interview: Vec<crate::ledger::Interview>,
    /// When and by which process `andon propose` wrote it: two proposals with the same words are
    /// two inputs, and a file the loop already took in is known by its digest
    /// ([`crate::ledger::Event::InputsTaken`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<String>,
}

/// Words of a question that asks for a confirmation rather than settle a fork (R69: a
/// local+reversible change never asks one).
const CONFIRMING: &[&str] = &[
    "confirm",
    "proceed",
    "go ahead",
    "ok to",
    "okay to",
    "is it ok",
    "is that ok",
    "approve",
    "sign off",
    "shall i",
    "should i",
    "do you want me to",
    "may i",
    "can i go",
];

/// Does `question` ask for a confirmation?
pub fn asks_confirmation(question: &str) -> bool {
    let q = question.to_lowercase();
    CONFIRMING.iter().any(|w| q.contains(w))
}

/// Checks a proposal's fields; Err names every problem.
pub fn validate(p: &Proposal) -> Result<(), Vec<String>> {
    let mut errs = Vec::new();
    if p.gap.trim().is_empty() {
        errs.push("`gap` is empty".to_string());
    }
    if !APPROACHES.contains(&p.approach.as_str()) {
        let near = crate::config::nearest(&p.approach, APPROACHES.iter().copied())
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        errs.push(format!("unknown approach `{}`{near} (one of: {})", p.approach, APPROACHES.join(", ")));
    }
    if p.reason.trim().is_empty() {
        errs.push("the approach needs its `reason`".to_string());
    }
    if p.description.trim().is_empty() {
        errs.push("`description` is empty".to_string());
    }
    if p.write_set.is_empty() {
        errs.push("`write_set` is empty: declare every file the fix will write".to_string());
    }
    for f in &p.write_set {
        let bad = f.trim().is_empty()
            || f.starts_with('/')
            || f.contains('\\')
            || f.split('/').any(|c| c == ".." || c == "." || c.is_empty());
        if bad {
            errs.push(format!("write-set entry `{f}` is not a clean repo-relative path"));
        }
    }
    for (i, q) in p.interview.iter().enumerate() {
        let n = i + 1;
        if q.question.trim().is_empty() || q.recommended.trim().is_empty() || q.answer.trim().is_empty() {
            errs.push(format!("interview question {n} needs its `question`, `recommended` answer and `answer`"));
        }
        if p.blast_radius == BlastRadius::LocalReversible && asks_confirmation(&q.question) {
            errs.push(format!(
                "interview question {n} asks for a confirmation (`{}`), and a local+reversible change never asks one (R69): drop it, or ask the fork it stands for",
                crate::text::short(&q.question)
            ));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}

/// The artifact of a proposal for `gap`.
pub fn artifact_path(out_dir: &Path, gap: &str) -> PathBuf {
    out_dir.join("proposals").join(format!("{gap}.json"))
}

pub use super::verify::diff::head_commit;

/// Every pending proposal artifact under `out_dir`, sorted by gap.
pub fn pending(out_dir: &Path) -> Vec<(PathBuf, Result<Proposal, super::error::Error>)> {
    super::own::pending(&out_dir.join("proposals"))
}
