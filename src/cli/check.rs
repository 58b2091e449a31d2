//! `andon check`, the structural gate: parse, call the API, render in the format CI reads.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{BudgetArgs, Failure, Ran, Terminal, WalkArgs, emit};
use crate::api;
use crate::output::check::{self, CheckFormat};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum CheckFormatArg {
    Text,
    Json,
    Sarif,
    Github,
    Junit,
    /// A pull-request summary for `$GITHUB_STEP_SUMMARY`: verdict, contracts, blocking findings
    /// with their witnesses, and the stream as a Mermaid chart with the broken edges marked.
    Markdown,
}

#[derive(Args)]
pub(super) struct CheckArgs {
    /// Repository (its andon.toml, or [tool.andon] in pyproject.toml, declares the contracts).
    #[arg(default_value = ".")]
    pub(super) path: PathBuf,
    /// Output format (default: text, or github when GITHUB_ACTIONS=true).
    #[arg(long, value_enum)]
    pub(super) format: Option<CheckFormatArg>,
    /// Write the report to FILE instead of standard output: atomically over a regular file; into a
    /// link's target, a device or a pipe in place.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Mark which findings are new relative to this git revision (the whole graph is still judged).
    #[arg(long, value_name = "REF")]
    base: Option<String>,
    /// Use the stored index as it is: exit 3 when it is missing or stale instead of updating it.
    #[arg(long)]
    no_index: bool,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// The budgets of each `rule` contract's evaluation.
    #[command(flatten)]
    budget: BudgetArgs,
    #[command(flatten)]
    walk: WalkArgs,
}

impl CheckArgs {
    /// The format asked for; GitHub's annotations inside GitHub Actions when none is.
    fn format(&self) -> CheckFormat {
        match self.format {
            Some(CheckFormatArg::Text) => CheckFormat::Text,
            Some(CheckFormatArg::Json) => CheckFormat::Json,
            Some(CheckFormatArg::Sarif) => CheckFormat::Sarif,
            Some(CheckFormatArg::Github) => CheckFormat::Github,
            Some(CheckFormatArg::Junit) => CheckFormat::Junit,
            Some(CheckFormatArg::Markdown) => CheckFormat::Markdown,
            None if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") => CheckFormat::Github,
            None => CheckFormat::Text,
        }
    }
}

pub(super) fn run(a: CheckArgs) -> Ran {
    let format = a.format();
    let ask = api::CheckAsk {
        base: a.base.clone(),
        budget: a.budget.flags(),
        no_index: a.no_index,
        // the summary's chart: the stream of the same index
        with_stream: format == CheckFormat::Markdown,
    };
    let walk = a.walk.overrides();
    let term = Terminal::new(a.quiet);
    let out = api::check(&api::Repo { root: &a.path, walk: &walk, progress: &term }, &ask);
    drop(term);
    let out = match out {
        Ok(o) => o,
        Err(e @ api::Error::StaleIndex(_)) => {
            let exit = super::common::report_failure(Failure::Api(e), false);
            eprintln!("andon: verdict refused (stale index: no structural finding can rest on it)");
            return Ok(exit);
        }
        Err(e) => return Err(e.into()),
    };
    let root = std::fs::canonicalize(&a.path).map_err(|e| format!("{}: {e}", a.path.display()))?;
    let root_uri = check::dir_uri(&root);
    let version = env!("CARGO_PKG_VERSION");
    let (report, stream) = (&out.result.report, out.result.stream.as_ref());
    match &a.output {
        Some(file) => {
            let mut buf = Vec::new();
            check::report(&mut buf, report, format, version, &root_uri, stream)
                .map_err(|e| format!("cannot render the report: {e}"))?;
            crate::text::write_named(file, &buf)
                .map_err(|e| format!("{}: cannot write the report: {e}", file.display()))?;
            if !a.quiet {
                let mut line = Vec::new();
                let _ = check::verdict(&mut line, report);
                eprint!("{}", String::from_utf8_lossy(&line));
            }
        }
        None => emit(|w| check::report(w, report, format, version, &root_uri, stream))?,
    }
    Ok(out.exit)
}
