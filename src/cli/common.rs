//! What every subcommand shares: the output format and progress flags, the walk and budget
//! overrides, writing to stdout, the terminal's progress bar, and how an error is reported.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::api;
use crate::exit::Exit;
use crate::output::{self, Format};
use crate::text;

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum FormatArg {
    Text,
    Json,
}

#[derive(Args)]
pub(super) struct Common {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(super) format: FormatArg,
    /// No progress bar.
    #[arg(long, short)]
    pub(super) quiet: bool,
}

impl Common {
    pub(super) fn json(&self) -> bool {
        matches!(self.format, FormatArg::Json)
    }

    pub(super) fn format(&self) -> Format {
        match self.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(Args)]
pub(super) struct WalkArgs {
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
    /// The declared stream: a file with a `[stream]` table (`[[stream.stage]] name, root`,
    /// `[[stream.wire]] producer, consumer`), instead of `[stream]` in the settings.
    #[arg(long, value_name = "FILE")]
    stream: Option<PathBuf>,
}

impl WalkArgs {
    pub(super) fn overrides(&self) -> api::WalkOverrides {
        api::WalkOverrides {
            hidden: self.hidden,
            no_ignore: self.no_ignore,
            vendored: self.vendored,
            follow: self.follow,
            exclude: self.exclude.clone(),
            max_filesize: self.max_filesize,
            threads: self.threads,
            stream: self.stream.clone(),
        }
    }
}

/// The budgets of a run-time evaluation (default: `[query]` in andon.toml, else the defaults).
#[derive(Args)]
pub(super) struct BudgetArgs {
    /// Stop when a relation would hold more than N distinct rows (default 20000000; 0: no limit).
    #[arg(long, value_name = "N")]
    max_rows: Option<u64>,
    /// Stop when what the evaluation derives is estimated above MIB mebibytes (default 2048; 0: no limit).
    #[arg(long, value_name = "MIB")]
    max_memory: Option<u64>,
    /// Stop the evaluation after SECS seconds of wall time (default 60; 0: no limit).
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
}

impl BudgetArgs {
    pub(super) fn flags(&self) -> api::BudgetFlags {
        api::BudgetFlags { max_rows: self.max_rows, max_memory_mib: self.max_memory, timeout_secs: self.timeout }
    }
}

/// Why a subcommand ends without its result: the library's error, or output it could not write.
pub(super) enum Failure {
    Api(api::Error),
    /// Bad usage the argument parser could not catch, or stdout that cannot be written.
    Usage(String),
}

impl From<api::Error> for Failure {
    fn from(e: api::Error) -> Failure {
        Failure::Api(e)
    }
}

impl From<String> for Failure {
    fn from(m: String) -> Failure {
        Failure::Usage(m)
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Failure {
        Failure::Usage(m.to_string())
    }
}

pub(super) type Ran = Result<Exit, Failure>;

/// Reports a failure on stderr (and, for an invalid ledger, its document on stdout) and gives
/// its exit code. `json` is whether the command speaks JSON.
pub(super) fn report_failure(f: Failure, json: bool) -> Exit {
    match f {
        Failure::Usage(m) => {
            eprintln!("error: {}", text::lines(&m));
            Exit::Error
        }
        Failure::Api(e) => {
            match &e {
                api::Error::StaleIndex(m) => eprintln!("error: {}", text::line(m)),
                api::Error::InvalidLedger { dir, message } => {
                    match dir {
                        Some(d) => eprintln!("error: {}", text::lines(&format!("{}: {message}", d.display()))),
                        None => eprintln!("error: {}", text::lines(message)),
                    }
                    let _ = emit(|w| output::invalid_ledger(w, message, json));
                }
                e => eprintln!("error: {}", text::lines(&e.to_string())),
            }
            e.exit()
        }
    }
}

/// Writes to stdout; a closed pipe is no error.
pub(super) fn emit(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match f(&mut lock).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Usage(format!("cannot write output: {e}"))),
    }
}

/// Prints an outcome's notes on stderr as warnings.
pub(super) fn warn(notes: &[String]) {
    for n in notes {
        eprintln!("warning: {}", text::lines(n));
    }
}

/// `-` for standard input, else a file; the error names which (`stdin: …`, `FILE: …`).
pub(super) fn read_input(src: &str) -> Result<String, Failure> {
    read(src).map_err(|e| Failure::Usage(format!("{}: {e}", if src == "-" { "stdin" } else { src })))
}

fn read(src: &str) -> std::io::Result<String> {
    if src == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)?;
        Ok(t)
    } else {
        std::fs::read_to_string(src)
    }
}

/// The terminal's progress: a bar on stderr for a parse, when stderr is a terminal and `quiet`
/// is off (it shows once 50 files or more are parsed), and warnings on stderr.
pub(super) struct Terminal {
    bar: indicatif::ProgressBar,
    show: bool,
}

impl Terminal {
    pub(super) fn new(quiet: bool) -> Terminal {
        let show = !quiet && std::io::stderr().is_terminal();
        let bar = indicatif::ProgressBar::hidden();
        if show {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} parsing {pos}/{len} files {wide_bar} {elapsed}")
                    .expect("valid template"),
            );
        }
        Terminal { bar, show }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

impl api::Progress for Terminal {
    fn files(&self, done: u64, total: u64) {
        if self.show && total >= 50 {
            self.bar.set_length(total);
            self.bar.set_position(done);
        }
    }

    fn warning(&self, what: &str) {
        self.bar.suspend(|| eprintln!("warning: {}", text::line(what)));
    }
}

/// The human reports a command writes under `output_dir`, rendered by `output`.
pub(super) struct Reports;

impl api::Render for Reports {
    fn human(&self, report: api::Human<'_>, w: &mut dyn Write) -> std::io::Result<()> {
        output::human_report(report, w)
    }
}
