//! `andon index` and `andon facts`: parse, call the API, render.

use std::path::PathBuf;

use clap::Args;

use super::common::{Common, Ran, Terminal, WalkArgs, emit};
use crate::api;
use crate::output;

#[derive(Args)]
pub(super) struct IndexArgs {
    /// Repository to index.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Do not write: exit 3 and name what changed when the index is stale against the working tree.
    #[arg(long)]
    check: bool,
    /// Ignore the stored index and parse every file.
    #[arg(long)]
    rebuild: bool,
    #[command(flatten)]
    walk: WalkArgs,
    #[command(flatten)]
    pub(super) common: Common,
}

pub(super) fn run(a: IndexArgs) -> Ran {
    let walk = a.walk.overrides();
    let term = Terminal::new(a.common.quiet);
    let repo = api::Repo { root: &a.path, walk: &walk, progress: &term };
    if a.check {
        let out = api::index_check(&repo)?;
        emit(|w| output::check_report(w, &out.result, a.common.format()))?;
        return Ok(out.exit);
    }
    let out = api::index(&repo, a.rebuild);
    drop(term);
    let out = out?;
    emit(|w| output::index_report(w, &out.result, a.common.format()))?;
    Ok(out.exit)
}

#[derive(Args)]
pub(super) struct FactsArgs {
    /// Repository whose facts to print.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Only this relation (see --schema).
    #[arg(long)]
    relation: Option<String>,
    /// Only facts about this repo-relative file.
    #[arg(long)]
    file: Option<String>,
    /// List every relation with its columns and doc line.
    #[arg(long)]
    schema: bool,
    #[command(flatten)]
    walk: WalkArgs,
    #[command(flatten)]
    pub(super) common: Common,
}

pub(super) fn run_facts(a: FactsArgs) -> Ran {
    if a.schema {
        let out = api::facts_schema();
        emit(|w| output::schema_report(w, a.common.format()))?;
        return Ok(out.exit);
    }
    let walk = a.walk.overrides();
    let term = Terminal::new(a.common.quiet);
    let repo = api::Repo { root: &a.path, walk: &walk, progress: &term };
    let out = api::facts(&repo, a.relation.as_deref(), a.file.as_deref());
    drop(term);
    let out = out?;
    emit(|w| output::facts_report(w, &out.result, a.common.format()))?;
    Ok(out.exit)
}
