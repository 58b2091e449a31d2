//! `andon stream` and `andon why`: parse, call the API, render.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{Common, Failure, Ran, Terminal, WalkArgs, emit};
use crate::api;
use crate::output::derived::{self, GraphFormat};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum GraphFormatArg {
    Text,
    Json,
    Dot,
    Mermaid,
}

#[derive(Args)]
pub(super) struct StreamArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: GraphFormatArg,
    /// Also show the modules inside this stage: their imports and layers.
    #[arg(long, value_name = "STAGE")]
    within: Option<String>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    walk: WalkArgs,
}

pub(super) fn run(a: StreamArgs) -> Ran {
    let walk = a.walk.overrides();
    let term = Terminal::new(a.quiet);
    let out = api::stream(&api::Repo { root: &a.path, walk: &walk, progress: &term }, a.within.as_deref());
    drop(term);
    let out = out?;
    let format = match a.format {
        GraphFormatArg::Text => GraphFormat::Text,
        GraphFormatArg::Json => GraphFormat::Json,
        GraphFormatArg::Dot => GraphFormat::Dot,
        GraphFormatArg::Mermaid => GraphFormat::Mermaid,
    };
    emit(|w| derived::stream(w, &out.result, format))?;
    Ok(out.exit)
}

#[derive(Args)]
pub(super) struct WhyArgs {
    /// [PATH] A B: the repository (default `.`), then what depends and what it depends on.
    #[arg(num_args = 2..=3, value_name = "[PATH] A B", required = true)]
    pub(super) args: Vec<String>,
    #[command(flatten)]
    pub(super) common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

impl WhyArgs {
    /// The repository the positional arguments name (default `.`).
    pub(super) fn path(&self) -> PathBuf {
        PathBuf::from(if self.args.len() == 3 { self.args[0].as_str() } else { "." })
    }
}

pub(super) fn run_why(a: WhyArgs) -> Ran {
    let (path, from, to) = match a.args.as_slice() {
        [f, t] => (PathBuf::from("."), f, t),
        [p, f, t] => (PathBuf::from(p), f, t),
        _ => return Err(Failure::Usage("give what depends and what it depends on: `andon why [PATH] A B`".into())),
    };
    let walk = a.walk.overrides();
    let term = Terminal::new(a.common.quiet);
    let out = api::why(&api::Repo { root: &path, walk: &walk, progress: &term }, from, to);
    drop(term);
    let out = out?;
    emit(|w| derived::why(w, &out.result, a.common.json()))?;
    Ok(out.exit)
}
