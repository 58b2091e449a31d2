//! `andon propose`: parse (the proposal from flags or JSON), call the API, render.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{Common, Failure, Ran, Reports, emit, read_input, warn};
use crate::andon_loop::proposal::Proposal;
use crate::api;
use crate::config::BlastRadius;
use crate::output;

#[derive(Clone, Copy, ValueEnum)]
enum RadiusArg {
    #[value(name = "local+reversible")]
    LocalReversible,
    #[value(name = "hard-to-reverse")]
    HardToReverse,
    #[value(name = "shared-state-visible")]
    SharedStateVisible,
}

#[derive(Args)]
pub(super) struct ProposeArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// The proposal as JSON (a file, or - for standard input) instead of the flags below.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["gap", "blast_radius", "approach", "reason", "description", "write_set"])]
    json: Option<String>,
    /// Print the proposer's packet of GAP instead of proposing: the gap, its stage and wire, the
    /// stage's earlier gaps and their evidence, and the house rules. Reads only; any gap of the
    /// ledger.
    #[arg(long, value_name = "GAP", conflicts_with_all = ["json", "gap", "blast_radius", "approach", "reason", "description", "write_set", "proposer"])]
    packet: Option<String>,
    /// The gap the fix closes.
    #[arg(long)]
    gap: Option<String>,
    /// Exactly one blast-radius tag.
    #[arg(long, value_enum)]
    blast_radius: Option<RadiusArg>,
    /// Exactly one verification approach (structural, executed, numeric, rubric, agentic, proof-strength, adversarial).
    #[arg(long)]
    approach: Option<String>,
    /// Why that approach proves the wire.
    #[arg(long)]
    reason: Option<String>,
    /// What the fix does.
    #[arg(long)]
    description: Option<String>,
    /// The files the fix will write (one or more after the flag, and repeatable; every one must
    /// be declared).
    #[arg(long = "write-set", value_name = "PATH", num_args = 1..)]
    write_set: Vec<String>,
    /// Who proposes and builds the fix (a provenance id): recorded with the proposal, so the
    /// adversarial panel refuses an against case from them.
    #[arg(long, value_name = "ID")]
    proposer: Option<String>,
    #[command(flatten)]
    pub(super) common: Common,
}

impl ProposeArgs {
    /// The proposal: from `--json`, else from the flags (each one required).
    fn proposal(&self) -> Result<Proposal, Failure> {
        if let Some(src) = &self.json {
            let text = read_input(src)?;
            return Ok(serde_json::from_str(&text).map_err(|e| format!("{src}: not a proposal: {e}"))?);
        }
        let need =
            |v: &Option<String>, flag: &str| v.clone().ok_or_else(|| format!("missing --{flag} (or give --json)"));
        Ok(Proposal {
            gap: need(&self.gap, "gap")?,
            blast_radius: match self.blast_radius.ok_or("missing --blast-radius (exactly one tag)")? {
                RadiusArg::LocalReversible => BlastRadius::LocalReversible,
                RadiusArg::HardToReverse => BlastRadius::HardToReverse,
                RadiusArg::SharedStateVisible => BlastRadius::SharedStateVisible,
            },
            approach: need(&self.approach, "approach")?,
            reason: need(&self.reason, "reason")?,
            description: need(&self.description, "description")?,
            write_set: self.write_set.clone(),
            base_commit: None,
            proposer: self.proposer.clone(),
            judging: Default::default(),
            interview: Vec::new(),
            written: None,
        })
    }
}

pub(super) fn run(a: ProposeArgs) -> Ran {
    if let Some(gap) = &a.packet {
        let out = api::packet(&a.path, gap)?;
        emit(|w| output::packet(w, &out.result, a.common.json()))?;
        return Ok(out.exit);
    }
    let out = api::propose(&a.path, a.proposal()?, &Reports)?;
    warn(&out.notes);
    emit(|w| output::proposal(w, &out.result, a.common.json()))?;
    Ok(out.exit)
}
