//! What a plan works from and returns: the step's fixed setup, the artifacts waiting to be
//! recorded, the port the plan reads the repository through, and the plan itself.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::super::error::Error;
use super::super::proposal;
use super::super::scan::Candidate;
use super::super::surface;
use super::super::verify::applied::VerifyStop;
use super::super::verify::commands::{self, CommandSpec};
use super::super::verify::{audit, fix};
use crate::config::{BlastRadius, Config};
use crate::ledger::andon_rule::Condition;
use crate::ledger::{GapState, State, Wire};
use crate::ops::StreamReport;
use crate::status::{Constraint, Next};

/// What the plan asks of the repository: the fresh index, the working tree and the configured
/// commands. The step answers from the repository; a test answers without a file system.
pub trait PlanPort {
    /// The gaps the fresh index shows in `stage` and its outgoing wires.
    fn scan(&self, state: &State, stage: &str) -> Vec<Candidate>;
    /// The structural proof of a gap's wire (or file) on the fresh index.
    fn structural(&self, gap: &GapState) -> Result<fix::StructuralProof, Error>;
    /// Runs a configured command on the working tree (cached by `fingerprint`).
    fn run_command(&mut self, spec: &CommandSpec, fingerprint: &str) -> commands::Run;
    /// The last recorded run of command `name`, if any.
    fn last_run(&self, name: &str) -> Option<commands::Run>;
    /// The output a run of a command left (empty when there is none).
    fn output_of(&self, run: &commands::Run) -> String;
    /// The working tree's change against `base`, checked against `write_set` and re-rated.
    fn applied_change(
        &self,
        base: &str,
        write_set: &[String],
    ) -> Result<Result<(fix::AppliedChange, BlastRadius, String), VerifyStop>, Error>;
    /// Whether the working tree changes the public surface of a proven wire.
    fn surface_changed(&self, state: &State) -> Result<bool, Error>;
    /// How the working tree (commits included) stands against the base fixes are judged from.
    fn judging(&self, state: &State, records: &[crate::ledger::Record]) -> super::super::judging::Drift;
}

/// What the step read and the plan works from, fixed for the whole step.
pub struct Setup<'a> {
    pub cfg: &'a Config,
    pub stream: &'a StreamReport,
    /// Ingest mode's brief; `None` in self-scan mode.
    pub brief: Option<&'a crate::ingest::Brief>,
    /// The surface of every wire on the fresh index.
    pub surfaces: &'a BTreeMap<Wire, surface::WireSurface>,
    /// The fingerprint of the indexed tree.
    pub tree: &'a str,
    /// The configuration file, repo-relative (where a failing command's gap is located).
    pub config_path: String,
    /// The brief's Markdown file, as a phase contract names it.
    pub brief_md: String,
    pub max_passes: u32,
    pub slow: bool,
    /// The ledger existed before this step.
    pub had_ledger: bool,
}

/// The artifacts waiting to be recorded, each with the file it came from.
#[derive(Default)]
pub struct Pending {
    pub proposals: Vec<(PathBuf, Result<proposal::Proposal, Error>)>,
    pub evidence: Vec<(PathBuf, Result<fix::VerifyOutcome, Error>)>,
    pub audits: Vec<(PathBuf, Result<audit::AuditOutcome, Error>)>,
}

/// What the step decided, besides the events in the book.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// The stream was recorded for the first time, or its topology changed.
    pub stream_changed: bool,
    pub cursor: Option<String>,
    pub found: Vec<Candidate>,
    /// Of `found`, how many gaps were new to the ledger.
    pub recorded: usize,
    pub picked: Option<(String, String)>,
    pub next: Next,
    pub constraint: Option<Constraint>,
    pub halt: Option<Condition>,
    pub notes: Vec<String>,
    /// Artifact files the step consumed: removed once the events are written.
    pub consumed: Vec<PathBuf>,
}
