//! `andon verify`: parse (the diff and the request read here), call the API, render.

use std::path::PathBuf;

use clap::Args;

use super::common::{Common, Ran, Reports, Terminal, WalkArgs, emit, read_input, warn};
use crate::api::{self, work::VerifyResult};
use crate::output;

#[derive(Args)]
pub(super) struct VerifyArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// The gap whose fix was applied (the loop's proposals).
    #[arg(long, required_unless_present_any = ["request", "audit"])]
    gap: Option<String>,
    /// Approach (g): audit the strength of recorded evidence E with the language's mutation
    /// tool; the result is added to that record by the loop, never substituted for it.
    #[arg(long, value_name = "EVIDENCE", conflicts_with_all = ["gap", "request"])]
    audit: Option<String>,
    /// A `{wire, contract, fixDiff}` request (a JSON file, or - for standard input): another
    /// tool's applied change to prove. Standalone: nothing is persisted. With `--gap` (a fix
    /// applied for the loop's gap, e.g. in ingest mode) its fixDiff is that gap's fix and the
    /// evidence is written for the loop to record.
    #[arg(long, value_name = "FILE")]
    request: Option<String>,
    /// For the `executed` approach: the check to run (its exit code decides; its output is kept).
    #[arg(long)]
    command: Option<String>,
    /// The fix as a unified diff (a file, or - for standard input) instead of the working tree
    /// against the proposal's base commit.
    #[arg(long, value_name = "FILE", conflicts_with = "request")]
    diff: Option<String>,
    /// A person's choice between the approaches of a genuine routing tie (only then).
    #[arg(long)]
    approach: Option<String>,
    /// The claim rubric record, for approach (c) `rubric`.
    #[arg(long, value_name = "FILE")]
    rubric: Option<PathBuf>,
    /// The agent process record, for approach (d) `agentic`.
    #[arg(long, value_name = "FILE")]
    process: Option<PathBuf>,
    /// The adversarial panel's directory, for approach (a) `adversarial`: andon writes the role
    /// packets there and reads the role outputs (`output-<role>.json`) from it.
    #[arg(long, value_name = "DIR")]
    panel: Option<PathBuf>,
    /// Who proposed or built the fix (a provenance id): the panel refuses an against case they wrote.
    #[arg(long)]
    proposer: Option<String>,
    #[command(flatten)]
    pub(super) common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

pub(super) fn run(a: VerifyArgs) -> Ran {
    let json = a.common.json();
    if let Some(id) = &a.audit {
        let path_var = std::env::var_os("PATH");
        let out = api::audit(&a.path, id, a.approach.as_deref(), path_var.as_deref())?;
        emit(|w| output::audit_report(w, &out.result, json))?;
        return Ok(out.exit);
    }
    let request = a.request.as_deref().map(read_input).transpose()?;
    let ask = api::work::VerifyAsk {
        gap: a.gap.clone(),
        diff: a.diff.as_deref().map(read_input).transpose()?,
        command: a.command.clone(),
        rubric: a.rubric.clone(),
        process: a.process.clone(),
        panel: a.panel.clone(),
        proposer: a.proposer.clone(),
        approach: a.approach.clone(),
    };
    let walk = a.walk.overrides();
    let term = Terminal::new(a.common.quiet);
    let repo = api::Repo { root: &a.path, walk: &walk, progress: &term };
    let out = api::verify(&repo, &ask, request.as_deref(), &Reports);
    drop(term);
    let out = out?;
    warn(&out.notes);
    match &out.result {
        VerifyResult::Request(r) => emit(|w| output::request_report(w, r, json))?,
        VerifyResult::Gap(v) => emit(|w| output::verify_report(w, v, json))?,
    }
    Ok(out.exit)
}
