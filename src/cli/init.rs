//! `andon init`: parse, call the API, render.

use std::path::PathBuf;

use clap::Args;

use super::common::{Common, Ran, Terminal, emit};
use crate::api;
use crate::output;

#[derive(Args)]
pub(super) struct InitArgs {
    /// Repository (andon.toml is created at its root).
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Write the file's text to standard output instead (the summary to standard error); write nothing.
    #[arg(long)]
    print: bool,
    #[command(flatten)]
    pub(super) common: Common,
}

/// Draws andon.toml from the stream and creates it (or prints it); exit 2 when settings are there.
pub(super) fn run(a: InitArgs) -> Ran {
    let walk = api::WalkOverrides::default();
    let term = Terminal::new(a.common.quiet);
    let out = api::init(&api::Repo { root: &a.path, walk: &walk, progress: &term }, a.print);
    drop(term);
    let out = out?;
    let r = &out.result;
    let as_json = a.common.json();
    emit(|w| output::init::report(w, r, as_json))?;
    if a.print && !as_json && !a.common.quiet {
        let mut summary = Vec::new();
        let _ = output::init::summary(&mut summary, r);
        eprint!("{}", String::from_utf8_lossy(&summary));
    }
    Ok(out.exit)
}
