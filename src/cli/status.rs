//! `andon status` and `andon ledger check|repair`: parse, call the API, render.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};

use super::common::{Common, Ran, Reports, emit, warn};
use crate::api;
use crate::output::{self, status::StatusFormat};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum StatusFormatArg {
    Text,
    Json,
    Markdown,
}

#[derive(Args)]
pub(super) struct StatusArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: StatusFormatArg,
    /// Accepted as everywhere; status reads only the ledger and the stored index, so it has no
    /// progress to quiet.
    #[arg(short, long)]
    quiet: bool,
}

pub(super) fn run(a: StatusArgs) -> Ran {
    let out = api::status(&a.path, &Reports)?;
    warn(&out.notes);
    let format = match a.format {
        StatusFormatArg::Text => StatusFormat::Text,
        StatusFormatArg::Json => StatusFormat::Json,
        StatusFormatArg::Markdown => StatusFormat::Markdown,
    };
    emit(|w| output::status::report(w, &out.result, format))?;
    Ok(out.exit)
}

#[derive(Subcommand)]
pub(super) enum LedgerAction {
    /// Validate the ledger: header, every record, every transition, and ledger.md against the log.
    Check(RepoArgs),
    /// Set an interrupted last write aside (kept in ledger.torn-<time>.jsonl) so the loop can go
    /// on; any other problem is refused.
    Repair(RepoArgs),
}

/// A command with nothing but the repository and the output flags.
#[derive(Args)]
pub(super) struct RepoArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    #[command(flatten)]
    pub(super) common: Common,
}

pub(super) fn run_ledger(action: LedgerAction) -> Ran {
    match action {
        LedgerAction::Check(a) => {
            let out = api::ledger_check(&a.path)?;
            emit(|w| output::ledger_check(w, &out.result, a.common.format()))?;
            Ok(out.exit)
        }
        LedgerAction::Repair(a) => {
            let out = api::ledger_repair(&a.path)?;
            emit(|w| output::ledger_repair(w, &out.result, a.common.format()))?;
            Ok(out.exit)
        }
    }
}
