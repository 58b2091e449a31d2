//! `andon init`: parse, call `api::structure::init`, render.

use std::path::PathBuf;

use clap::Args;

use super::{Common, Exit, FormatArg};
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
pub(super) fn run(a: InitArgs) -> Result<Exit, String> {
    let (bar, progress) = super::progress_bar(a.common.quiet);
    let r = crate::api::structure::init(&a.path, &crate::api::WalkOverrides::default(), a.print, &progress);
    bar.finish_and_clear();
    let r = r.map_err(|e| e.to_string())?;
    let as_json = matches!(a.common.format, FormatArg::Json);
    super::emit(|w| output::init::report(w, &r, as_json))?;
    if a.print && !as_json && !a.common.quiet {
        let mut summary = Vec::new();
        let _ = output::init::summary(&mut summary, &r);
        eprint!("{}", String::from_utf8_lossy(&summary));
    }
    Ok(Exit::Success)
}
