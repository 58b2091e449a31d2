//! `andon loop`: parse, call the API (one step, its reports written), render.

use std::path::PathBuf;

use clap::Args;

use super::common::{Common, Ran, Reports, Terminal, WalkArgs, emit, warn};
use crate::api;
use crate::output;

#[derive(Args)]
pub(super) struct LoopArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// At most this many passes the loop proves by itself in one run; then it stops with a budget verdict.
    #[arg(long, default_value_t = api::DEFAULT_MAX_PASSES)]
    max_passes: u32,
    /// Run the slow lane too: configured commands with `lane = "slow"` (fast ones run on every pass).
    #[arg(long)]
    slow: bool,
    #[command(flatten)]
    pub(super) common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

pub(super) fn run(a: LoopArgs) -> Ran {
    let walk = a.walk.overrides();
    let term = Terminal::new(a.common.quiet);
    let out = api::loop_step(
        &api::Repo { root: &a.path, walk: &walk, progress: &term },
        Some(a.max_passes),
        a.slow,
        &Reports,
    );
    drop(term);
    let out = out?;
    warn(&out.notes);
    emit(|w| output::loop_report::report(w, &out.result, a.common.json()))?;
    Ok(out.exit)
}

#[derive(Args)]
pub(super) struct PreflightArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    #[command(flatten)]
    pub(super) common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

pub(super) fn run_preflight(a: PreflightArgs) -> Ran {
    let walk = a.walk.overrides();
    let path_var = std::env::var_os("PATH");
    let term = Terminal::new(a.common.quiet);
    let out = api::preflight(&api::Repo { root: &a.path, walk: &walk, progress: &term }, path_var.as_deref(), &Reports);
    drop(term);
    let out = out?;
    warn(&out.notes);
    emit(|w| output::preflight(w, &out.result, a.common.format(), false))?;
    Ok(out.exit)
}
