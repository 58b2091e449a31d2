//! `andon report` (the HTML page), `andon config show` and `andon mcp`: parse, call the API,
//! render.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::common::{Ran, Terminal, WalkArgs, emit};
use super::status::RepoArgs;
use crate::api;
use crate::output;
use crate::text;

#[derive(Args)]
pub(super) struct ReportArgs {
    /// Repository.
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Where to write the page (default: report.html under output_dir).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    walk: WalkArgs,
}

/// `andon report`: the page, written whole; its path on stdout.
pub(super) fn run(a: ReportArgs) -> Ran {
    let walk = a.walk.overrides();
    let term = Terminal::new(a.quiet);
    let out = api::report(&api::Repo { root: &a.path, walk: &walk, progress: &term }, a.output.as_deref());
    drop(term);
    let out = out?;
    let r = &out.result;
    let page = output::report::Page {
        name: &r.name,
        stream: &r.stream,
        check: r.check.as_ref(),
        status: r.status.as_ref(),
        modules: &r.modules,
    };
    let mut bytes = Vec::new();
    output::report::html_page(&mut bytes, &page).map_err(|e| e.to_string())?;
    api::write_report(&r.file, &bytes)?;
    emit(|w| writeln!(w, "{}", text::line(&r.file.to_string_lossy())))?;
    Ok(out.exit)
}

#[derive(Subcommand)]
pub(super) enum ConfigAction {
    /// Print every effective setting with its origin (default, or file:line). Runs even when disabled.
    Show(RepoArgs),
}

pub(super) fn run_config(action: ConfigAction) -> Ran {
    let ConfigAction::Show(a) = action;
    let out = api::config_show(&a.path)?;
    emit(|w| output::settings_report(w, &out.result, a.common.format()))?;
    Ok(out.exit)
}

#[derive(Args)]
pub(super) struct McpArgs {
    /// The repository the server serves: every path argument must resolve inside it.
    #[arg(default_value = ".")]
    path: PathBuf,
}

/// `andon mcp`: stdout carries the protocol's messages only; diagnostics go to stderr.
#[cfg(feature = "mcp")]
pub(super) fn run_mcp(a: McpArgs) -> Ran {
    crate::mcp::serve(&a.path, tokio::io::stdin(), tokio::io::stdout()).map_err(|e| e.to_string())?;
    Ok(crate::exit::Exit::Success)
}

/// `andon mcp` in a build without the server.
#[cfg(not(feature = "mcp"))]
pub(super) fn run_mcp(a: McpArgs) -> Ran {
    let _ = a.path;
    Err(super::common::Failure::Usage(
        "this andon was built without the MCP server (the `mcp` feature): build it with default features".into(),
    ))
}
