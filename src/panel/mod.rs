//! Approach (a), the adversarial panel (spec 000 §6, §8; R101–R105, R123), as a pure library: andon
//! never calls a model. It writes one *role packet* per role (for, against, evidence, adjudicator),
//! reads each role's output as strict JSON, re-runs the evidence role's commands through an injected
//! runner, and judges mechanically. Formats and rules: `docs/panel.md`.
//!
//! - [`packets`] builds the for, against and evidence packets; [`adjudicator_packet`] the fourth,
//!   once the other outputs exist. The against packet never holds the for case, a prior verdict or
//!   the proposer's reasoning (R102). Text from outside andon is escaped through
//!   [`escape_inline`]; repository text sits only in `quoted_repository_text` fields (R123).
//! - [`parse_output`] reads one role output; [`validate`] checks it against the input and packets.
//! - [`rerun`] re-runs the evidence role's checks; [`judge`] renders the [`Judgment`].

mod authority;
mod error;
mod judge;
mod output;
mod packet;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::ledger::{Verdict, Wire};
use crate::text::short as escape_inline;

pub use authority::{AUTHORITY_PHRASES, appeals_to_authority};
pub use error::Error;
pub use judge::{judge, judge_with, rerun};
pub use output::{input_problems, parse_output, same_producer, validate};
pub use packet::{adjudicator_packet, packets};

/// The packet format this andon writes (`andon_panel_packet`).
pub const FORMAT: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    For,
    Against,
    Evidence,
    Adjudicator,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::For, Role::Against, Role::Evidence, Role::Adjudicator];

    pub fn name(self) -> &'static str {
        ["for", "against", "evidence", "adjudicator"][self as usize]
    }

    /// The stances this role may take.
    fn stances(self) -> &'static [Stance] {
        match self {
            Role::For => &[Stance::Pass, Stance::Concede],
            Role::Against => &[Stance::Fail, Stance::Concede],
            Role::Evidence => &[],
            Role::Adjudicator => &[Stance::Pass, Stance::Fail, Stance::Neither],
        }
    }
}

/// The objective check a criterion traces to (R105).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ObjectiveCheck {
    TestResult,
    MeasuredCost,
    Invariant,
    Reproducibility,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    pub id: String,
    pub text: String,
    /// `neither` on a load-bearing criterion leaves the wire unproven (R104).
    pub load_bearing: bool,
    pub check: ObjectiveCheck,
    /// A command known to exercise the check, listed in the evidence packet.
    pub command: Option<String>,
}

/// What andon knows about the fix under review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanelInput {
    pub wire: Wire,
    pub gap: String,
    pub claim: String,
    pub criteria: Vec<Criterion>,
    pub diff: String,
    /// Provenance id of whoever proposed or built the fix.
    pub proposer: String,
    pub for_case: Option<String>,
    pub prior_verdicts: Vec<String>,
    pub proposer_reasoning: Option<String>,
    /// (`path:line`, quoted text) from the repository.
    pub repo_text: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    pub role: Role,
    /// The body's data fields, sorted: exactly what the role is given.
    pub access: Vec<String>,
    /// Pretty JSON.
    pub body: String,
    /// xxh3-128 of `body`, 32 hex digits.
    pub hash: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProducerKind {
    Agent,
    Human,
    Tool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Producer {
    pub id: String,
    pub kind: ProducerKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stance {
    Pass,
    Fail,
    Concede,
    Neither,
}

/// One role's position on one criterion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionOutput {
    pub id: String,
    pub stance: Stance,
    /// Evidence: check ids (which link to the evidence role's checks) or other references.
    pub cites: Vec<String>,
    pub reason: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckStatus {
    Confirmed,
    Refuted,
    Unverifiable,
}

/// One check the evidence role ran (or could not run).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub id: String,
    /// The criteria the check bears on.
    pub criteria: Vec<String>,
    pub command: String,
    /// `null` when it could not be run.
    pub exit_code: Option<i32>,
    /// Recorded, not compared: the runner reports exit codes only.
    pub output_hash: Option<String>,
    pub status: CheckStatus,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleOutput {
    pub role: Role,
    pub producer: Producer,
    pub packet_hash: String,
    /// Empty for the evidence role; one entry per input criterion for the others.
    pub criteria: Vec<CriterionOutput>,
    /// Only the evidence role reports checks.
    pub checks: Vec<Check>,
}

/// andon's re-run of one evidence check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub id: String,
    pub command: String,
    pub reported: Option<i32>,
    /// `None`: andon could not run it.
    pub observed: Option<i32>,
    pub status: CheckStatus,
    pub why: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    Fail,
    /// Adjudicated `neither`: blocks only a load-bearing criterion.
    Neither,
    /// Adjudicated `pass` with no confirmed evidence behind it.
    Unbacked,
    /// Not adjudicated.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Judgment {
    pub verdict: Verdict,
    pub per_criterion: Vec<(String, Outcome, String)>,
    pub reasons: Vec<String>,
}

fn hash(s: &str) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(s.as_bytes()))
}

/// The hash the adjudicator packet lists for an output (of its canonical compact JSON).
pub fn output_hash(o: &RoleOutput) -> String {
    hash(&serde_json::to_string(o).unwrap_or_default())
}
