//! `andon query`: parse (the rule files read here), call the API, render.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{BudgetArgs, Failure, Ran, Terminal, WalkArgs, emit};
use crate::api;
use crate::output::derived::{self, QueryFormat};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum QueryFormatArg {
    Table,
    Json,
    Csv,
}

#[derive(Args)]
pub(super) struct QueryArgs {
    /// [PATH] QUERY: the repository (default `.`) and a rule body, e.g. `Wire(p, c)`.
    #[arg(num_args = 0..=2, value_name = "[PATH] QUERY")]
    pub(super) args: Vec<String>,
    /// Add the rules of this `.dl` file (repeatable); their relations can be queried.
    #[arg(long, value_name = "FILE.dl")]
    rules: Vec<PathBuf>,
    /// Print, for each answer, one minimal derivation: the facts and rules that produced it.
    #[arg(long)]
    explain: bool,
    /// List every relation (base, derived, computed, and those of --rules) with columns and doc.
    #[arg(long)]
    pub(super) schema: bool,
    /// Use the stored index as it is: exit 3 when it is missing or stale instead of updating it.
    #[arg(long)]
    no_index: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: QueryFormatArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    budget: BudgetArgs,
    #[command(flatten)]
    walk: WalkArgs,
}

impl QueryArgs {
    /// The repository and the query the positional arguments give.
    pub(super) fn target(&self) -> Result<(PathBuf, Option<String>), Failure> {
        Ok(match self.args.as_slice() {
            [] if self.schema => (PathBuf::from("."), None),
            [p] if self.schema => (PathBuf::from(p), None),
            [q] => (PathBuf::from("."), Some(q.clone())),
            [p, q] => (PathBuf::from(p), Some(q.clone())),
            _ => {
                return Err(Failure::Usage(
                    "give a query, e.g. `andon query 'Wire(producer, consumer)'` (or --schema)".into(),
                ));
            }
        })
    }
}

/// The rule files as (name, text).
fn rule_files(rules: &[PathBuf]) -> Result<Vec<(String, String)>, Failure> {
    let mut files = Vec::new();
    for f in rules {
        let bytes = crate::index::walk::read_regular(f, 64 << 20)
            .map_err(|e| format!("{}: cannot read rules: {e}", f.display()))?;
        let text =
            String::from_utf8(bytes).map_err(|e| format!("{}: cannot read rules: not UTF-8 ({e})", f.display()))?;
        files.push((f.display().to_string(), text));
    }
    Ok(files)
}

pub(super) fn run(a: QueryArgs) -> Ran {
    let (path, query) = a.target()?;
    let rules = rule_files(&a.rules)?;
    let json = matches!(a.format, QueryFormatArg::Json);
    if a.schema {
        let out = api::query_schema(query.as_deref(), &rules)?;
        emit(|w| derived::schema(w, &out.result, json))?;
        return Ok(out.exit);
    }
    let ask = api::QueryAsk {
        query: query.expect("a query unless --schema"),
        rules,
        explain: a.explain,
        budget: a.budget.flags(),
        no_index: a.no_index,
    };
    let walk = a.walk.overrides();
    let term = Terminal::new(a.quiet);
    let out = api::query(&api::Repo { root: &path, walk: &walk, progress: &term }, &ask);
    drop(term);
    let out = out?;
    for n in &out.notes {
        eprintln!("note: {n}");
    }
    let format = match a.format {
        QueryFormatArg::Table => QueryFormat::Table,
        QueryFormatArg::Json => QueryFormat::Json,
        QueryFormatArg::Csv => QueryFormat::Csv,
    };
    emit(|w| derived::answer(w, &out.result, format))?;
    Ok(out.exit)
}
