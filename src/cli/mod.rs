//! The command line: the only code that knows clap, the terminal, environment variables and exit
//! codes. Each command parses its arguments, calls the library, and renders through `output`.

mod exit;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use exit::Exit;

use crate::config::Config;
use crate::facts::{RELATIONS, RelId};
use crate::index::{self, IndexOptions};
use crate::output::{self, FactFilter, Format};

#[derive(Parser)]
#[command(
    name = "andon",
    version,
    about = "Turns a source repository into evidence, and refuses to move on without it"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse the repository into facts and persist them under .andon/ (incremental).
    Index(IndexArgs),
    /// Print facts from the index (brought up to date first), sorted, with names and repo paths.
    Facts(FactsArgs),
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Text,
    Json,
}

#[derive(Args)]
struct Common {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args)]
struct WalkArgs {
    /// Also index hidden files and directories.
    #[arg(long)]
    hidden: bool,
    /// Do not honour .gitignore/.ignore files.
    #[arg(long)]
    no_ignore: bool,
    /// Also index vendored directories (node_modules, target, vendor, .venv, ...).
    #[arg(long)]
    vendored: bool,
    /// Follow symbolic links (loops are reported, not followed).
    #[arg(long)]
    follow: bool,
    /// Exclude paths matching this gitignore-style glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Skip files larger than this many bytes (default 4 MiB, or index.max_file_size).
    #[arg(long, value_name = "BYTES")]
    max_filesize: Option<u64>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j')]
    threads: Option<usize>,
}

#[derive(Args)]
struct IndexArgs {
    /// Repository to index.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Do not write: exit 3 and name what changed when the index is stale against the working tree.
    #[arg(long)]
    check: bool,
    /// Ignore the stored index and parse every file.
    #[arg(long)]
    rebuild: bool,
    #[command(flatten)]
    walk: WalkArgs,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct FactsArgs {
    /// Repository whose facts to print.
    #[arg(default_value = ".")]
    path: PathBuf,
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
    common: Common,
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { Exit::Error.code() } else { Exit::Success.code() };
        }
    };
    let result = match cli.command {
        Command::Index(a) => run_index(a),
        Command::Facts(a) => run_facts(a),
    };
    match result {
        Ok(code) => code.code(),
        Err(msg) => {
            eprintln!("error: {msg}");
            Exit::Error.code()
        }
    }
}

fn format_of(c: &Common) -> Format {
    match c.format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    }
}

fn options(path: &Path, w: &WalkArgs, rebuild: bool) -> Result<IndexOptions, String> {
    if !path.exists() {
        return Err(format!("{}: no such directory; pass the repository to index", path.display()));
    }
    let cfg = Config::load(path).map_err(|e| e.to_string())?;
    let mut walk = cfg.walk;
    walk.hidden |= w.hidden;
    walk.no_ignore |= w.no_ignore;
    walk.vendored |= w.vendored;
    walk.follow_links |= w.follow;
    walk.exclude.extend(w.exclude.iter().cloned());
    if w.threads == Some(0) {
        return Err("--threads must be at least 1".into());
    }
    Ok(IndexOptions { walk, max_file_size: w.max_filesize.unwrap_or(cfg.max_file_size), threads: w.threads, rebuild })
}

fn emit(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), String> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match f(&mut lock).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(format!("cannot write output: {e}")),
    }
}

/// Runs the incremental index with a progress bar on stderr when it is a terminal.
fn update_index(path: &Path, opts: &IndexOptions, quiet: bool) -> Result<index::IndexReport, String> {
    let show = !quiet && std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::hidden();
    if show {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} parsing {pos}/{len} files {wide_bar} {elapsed}")
                .expect("valid template"),
        );
    }
    let progress = |done: u64, total: u64| {
        if show && total >= 50 {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let r = index::update(path, opts, &progress).map_err(|e| e.to_string());
    bar.finish_and_clear();
    r
}

fn run_index(a: IndexArgs) -> Result<Exit, String> {
    let format = format_of(&a.common);
    let opts = options(&a.path, &a.walk, a.rebuild)?;
    if a.check {
        let changes = index::check(&a.path, &opts).map_err(|e| e.to_string())?;
        let fresh = matches!(&changes, Ok(c) if c.is_empty());
        emit(|w| output::check_report(w, &changes, format))?;
        return Ok(if fresh { Exit::Success } else { Exit::StaleIndex });
    }
    let report = update_index(&a.path, &opts, a.common.quiet)?;
    emit(|w| output::index_report(w, &report, format))?;
    Ok(Exit::Success)
}

fn run_facts(a: FactsArgs) -> Result<Exit, String> {
    let format = format_of(&a.common);
    if a.schema {
        emit(|w| output::schema_report(w, format))?;
        return Ok(Exit::Success);
    }
    let relation = match &a.relation {
        None => None,
        Some(name) => Some(RelId::by_name(name).ok_or_else(|| {
            let near = RELATIONS
                .iter()
                .min_by_key(|r| crate::config::edit_distance(&name.to_lowercase(), &r.name.to_lowercase()))
                .map(|r| r.name)
                .unwrap_or("File");
            format!("unknown relation `{name}`; did you mean `{near}`? (`andon facts --schema` lists them)")
        })?),
    };
    let opts = options(&a.path, &a.walk, false)?;
    let report = update_index(&a.path, &opts, a.common.quiet)?;
    let idx = index::load(&report.root)
        .map_err(|e| format!("the index cannot be read: {e}"))?
        .ok_or("the index was not written")?;
    let facts = idx.facts().map_err(|e| format!("the index cannot be read: {e}"))?;
    let file = a.file.as_deref().map(|f| f.trim_start_matches("./"));
    emit(|w| output::facts_report(w, &facts, &FactFilter { relation, file }, format))?;
    Ok(Exit::Success)
}
