//! A person's decisions (`authorize`, `defer`, `skip`, `override`, `confirm`): parse, call the
//! API, render. Never reachable from the MCP server.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{Common, Ran, emit};
use crate::andon_loop::Decision;
use crate::api;
use crate::ledger::OverrideBasis;
use crate::output;

#[derive(Args)]
pub(super) struct DecisionArgs {
    /// The gap.
    gap: String,
    /// Why (recorded in the ledger).
    #[arg(long)]
    reason: String,
    /// Who decides: the approver, recorded with the decision.
    #[arg(long)]
    by: String,
    /// Repository.
    #[arg(long, default_value = ".")]
    pub(super) path: PathBuf,
    /// No person is at the keyboard: human decisions are refused.
    #[arg(long)]
    unattended: bool,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct OverrideArgs {
    #[command(flatten)]
    pub(super) decision: DecisionArgs,
    /// The tier-2 evidence record to override.
    #[arg(long)]
    evidence: String,
    /// Why the contradiction's source is distrusted (a closed list).
    #[arg(long, value_enum)]
    basis: BasisArg,
    /// A counter-artifact backing the override: a file in the repository (a query result, a test log).
    #[arg(long, value_name = "FILE")]
    artifact: Option<String>,
}

#[derive(Args)]
pub(super) struct ConfirmArgs {
    #[command(flatten)]
    pub(super) decision: DecisionArgs,
    /// The entry-gate rule of the stage (a Behavior Contract rule id of the brief).
    #[arg(long)]
    rule: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum BasisArg {
    /// The live view the contradiction came from is stale.
    StaleLiveView,
    /// A known limit of the extractor: macros, dynamic dispatch, generated code.
    ExtractorLimitation,
    /// A syntax error in the file the contradiction rests on.
    ParseError,
}

/// Which decision, with what it carries beside the gap, the reason and the approver.
pub(super) enum Kind {
    Authorize(DecisionArgs),
    Defer(DecisionArgs),
    Skip(DecisionArgs),
    Override(OverrideArgs),
    Confirm(ConfirmArgs),
}

pub(super) fn run(kind: Kind) -> Ran {
    let (a, d) = match kind {
        Kind::Authorize(a) => {
            let d = Decision::Authorize { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Defer(a) => {
            let d = Decision::Defer { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Skip(a) => {
            let d = Decision::Skip { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Confirm(c) => {
            let a = c.decision;
            let d = Decision::Confirm { rule: c.rule, by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Override(o) => {
            let a = o.decision;
            let basis = match o.basis {
                BasisArg::StaleLiveView => OverrideBasis::StaleLiveView,
                BasisArg::ExtractorLimitation => OverrideBasis::ExtractorLimitation,
                BasisArg::ParseError => OverrideBasis::ParseError,
            };
            let d = Decision::Override {
                evidence: o.evidence,
                basis,
                artifact: o.artifact,
                by: a.by.clone(),
                reason: a.reason.clone(),
            };
            (a, d)
        }
    };
    let out = api::decide(&a.path, &a.gap, &d, a.unattended)?;
    emit(|w| output::decision(w, &out.result, a.common.json()))?;
    Ok(out.exit)
}
