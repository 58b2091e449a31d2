//! The command line: the only code that knows clap, the terminal, environment variables and exit
//! codes. Each command parses its arguments, calls the library, and renders through `output`.

mod init;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::exit::Exit;

use crate::config::Config;
use crate::index::{self, IndexOptions};
use crate::output::{self, Format};
use crate::text;

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
    /// Write a commented andon.toml from the detected stream: contracts that hold today (CI's start).
    Init(init::InitArgs),
    /// Parse the repository into facts and persist them under .andon/ (incremental).
    Index(IndexArgs),
    /// Print facts from the index (brought up to date first), sorted, with names and repo paths.
    Facts(FactsArgs),
    /// Answer a Datalog query over the index: `andon query [PATH] 'Wire(p, c), Stage(c, root)'`.
    Query(QueryArgs),
    /// The stream: stages, wires, stream order and cycles.
    Stream(StreamArgs),
    /// The shortest dependency chain from A to B (stages, modules, files or directories).
    Why(WhyArgs),
    /// Judge the contracts of andon.toml on a fresh index: the structural gate for CI.
    Check(CheckArgs),
    /// Is the repository ready for the loop? Every check, a readiness level per capability and its fix.
    Preflight(PreflightArgs),
    /// Check a proposed fix for a gap and write it for the loop to record (never edits the repository).
    Propose(ProposeArgs),
    /// Prove the applied fix of a proposed gap (the working tree against the proposal's base commit).
    Verify(VerifyArgs),
    /// A person raises the authority for one gap's fix, bound to the diff as it is now.
    Authorize(DecisionArgs),
    /// A person defers a gap.
    Defer(DecisionArgs),
    /// A person skips a gap; the loop picks another.
    Skip(DecisionArgs),
    /// A person overrides a tier-2 contradiction with a structured reason (never a tier-1 hold).
    Override(OverrideArgs),
    /// A person confirms an entry gate of a stage (ingest mode: a P0 brief rule below High confidence).
    Confirm(ConfirmArgs),
    /// One step of the loop: detect or resume the stream, scan the cursor's stage, pick a gap, say what is next.
    #[command(name = "loop")]
    Loop(LoopArgs),
    /// The read-only board from the ledger: holds, stages and wires, counters, constraint, gaps, next step.
    Status(StatusArgs),
    /// The ledger: `andon ledger check` validates it.
    Ledger {
        #[command(subcommand)]
        action: LedgerAction,
    },
    /// Serve the repository to an agent over the Model Context Protocol (stdio): the tools index,
    /// query, stream, why, check, status, loop, packet, propose, verify, facts and preflight.
    Mcp(McpArgs),
    /// One self-contained HTML page: the stream as a layered picture, the contracts, the findings.
    Report(ReportArgs),
    /// The effective settings and where each came from.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum RadiusArg {
    #[value(name = "local+reversible")]
    LocalReversible,
    #[value(name = "hard-to-reverse")]
    HardToReverse,
    #[value(name = "shared-state-visible")]
    SharedStateVisible,
}

#[derive(Args)]
struct ProposeArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The proposal as JSON (a file, or - for standard input) instead of the flags below.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["gap", "blast_radius", "approach", "reason", "description", "write_set"])]
    json: Option<String>,
    /// Print the proposer's packet of GAP instead of proposing: the gap, its stage and wire, the
    /// stage's earlier gaps and their evidence, and the house rules. Reads only; any gap of the
    /// ledger.
    #[arg(long, value_name = "GAP", conflicts_with_all = ["json", "gap", "blast_radius", "approach", "reason", "description", "write_set", "proposer"])]
    packet: Option<String>,
    /// The gap the fix closes.
    #[arg(long)]
    gap: Option<String>,
    /// Exactly one blast-radius tag.
    #[arg(long, value_enum)]
    blast_radius: Option<RadiusArg>,
    /// Exactly one verification approach (structural, executed, numeric, rubric, agentic, proof-strength, adversarial).
    #[arg(long)]
    approach: Option<String>,
    /// Why that approach proves the wire.
    #[arg(long)]
    reason: Option<String>,
    /// What the fix does.
    #[arg(long)]
    description: Option<String>,
    /// The files the fix will write (one or more after the flag, and repeatable; every one must
    /// be declared).
    #[arg(long = "write-set", value_name = "PATH", num_args = 1..)]
    write_set: Vec<String>,
    /// Who proposes and builds the fix (a provenance id): recorded with the proposal, so the
    /// adversarial panel refuses an against case from them.
    #[arg(long, value_name = "ID")]
    proposer: Option<String>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct PreflightArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

#[derive(Args)]
struct VerifyArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// The gap whose fix was applied (the loop's proposals).
    #[arg(long, required_unless_present_any = ["request", "audit"])]
    gap: Option<String>,
    /// Approach (g): audit the strength of recorded evidence E with the language's mutation
    /// tool; the result is added to that record by the loop, never substituted for it.
    #[arg(long, value_name = "EVIDENCE", conflicts_with_all = ["gap", "request"])]
    audit: Option<String>,
    /// A `{wire, contract, fixDiff}` request (a JSON file, or - for standard input): another
    /// tool's applied change to prove. Standalone: nothing is persisted. With `--gap` (a fix
    /// applied for the loop's gap, e.g. in ingest mode) its fixDiff is that gap's fix and the
    /// evidence is written for the loop to record.
    #[arg(long, value_name = "FILE")]
    request: Option<String>,
    /// For the `executed` approach: the check to run (its exit code decides; its output is kept).
    #[arg(long)]
    command: Option<String>,
    /// The fix as a unified diff (a file, or - for standard input) instead of the working tree
    /// against the proposal's base commit.
    #[arg(long, value_name = "FILE", conflicts_with = "request")]
    diff: Option<String>,
    /// A person's choice between the approaches of a genuine routing tie (only then).
    #[arg(long)]
    approach: Option<String>,
    /// The claim rubric record, for approach (c) `rubric`.
    #[arg(long, value_name = "FILE")]
    rubric: Option<PathBuf>,
    /// The agent process record, for approach (d) `agentic`.
    #[arg(long, value_name = "FILE")]
    process: Option<PathBuf>,
    /// The adversarial panel's directory, for approach (a) `adversarial`: andon writes the role
    /// packets there and reads the role outputs (`output-<role>.json`) from it.
    #[arg(long, value_name = "DIR")]
    panel: Option<PathBuf>,
    /// Who proposed or built the fix (a provenance id): the panel refuses an against case they wrote.
    #[arg(long)]
    proposer: Option<String>,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

#[derive(Args)]
struct DecisionArgs {
    /// The gap.
    gap: String,
    /// Why (recorded in the ledger).
    #[arg(long)]
    reason: String,
    /// Who decides: the approver, recorded with the decision.
    #[arg(long)]
    by: String,
    /// Repository.
    #[arg(long, default_value = ".")]
    path: PathBuf,
    /// No person is at the keyboard: human decisions are refused.
    #[arg(long)]
    unattended: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct OverrideArgs {
    #[command(flatten)]
    decision: DecisionArgs,
    /// The tier-2 evidence record to override.
    #[arg(long)]
    evidence: String,
    /// Why the contradiction's source is distrusted (a closed list).
    #[arg(long, value_enum)]
    basis: BasisArg,
    /// A counter-artifact backing the override: a file in the repository (a query result, a test log).
    #[arg(long, value_name = "FILE")]
    artifact: Option<String>,
}

#[derive(Args)]
struct ConfirmArgs {
    #[command(flatten)]
    decision: DecisionArgs,
    /// The entry-gate rule of the stage (a Behavior Contract rule id of the brief).
    #[arg(long)]
    rule: String,
}

#[derive(Clone, Copy, ValueEnum)]
enum BasisArg {
    /// The live view the contradiction came from is stale.
    StaleLiveView,
    /// A known limit of the extractor: macros, dynamic dispatch, generated code.
    ExtractorLimitation,
    /// A syntax error in the file the contradiction rests on.
    ParseError,
}

#[derive(Args)]
struct LoopArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// At most this many passes the loop proves by itself in one run; then it stops with a budget verdict.
    #[arg(long, default_value_t = 100)]
    max_passes: u32,
    /// Run the slow lane too: configured commands with `lane = "slow"` (fast ones run on every pass).
    #[arg(long)]
    slow: bool,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    walk: WalkArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatusFormatArg {
    Text,
    Json,
    Markdown,
}

#[derive(Args)]
struct StatusArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: StatusFormatArg,
    /// Accepted as everywhere; status reads only the ledger and the stored index, so it has no
    /// progress to quiet.
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum LedgerAction {
    /// Validate the ledger: header, every record, every transition, and ledger.md against the log.
    Check(ConfigShowArgs),
    /// Set an interrupted last write aside (kept in ledger.torn-<time>.jsonl) so the loop can go
    /// on; any other problem is refused.
    Repair(ConfigShowArgs),
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Print every effective setting with its origin (default, or file:line). Runs even when disabled.
    Show(ConfigShowArgs),
}

#[derive(Args)]
struct ConfigShowArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy, ValueEnum)]
enum CheckFormatArg {
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
struct CheckArgs {
    /// Repository (its andon.toml, or [tool.andon] in pyproject.toml, declares the contracts).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Output format (default: text, or github when GITHUB_ACTIONS=true).
    #[arg(long, value_enum)]
    format: Option<CheckFormatArg>,
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

#[derive(Clone, Copy, ValueEnum)]
enum QueryFormatArg {
    Table,
    Json,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphFormatArg {
    Text,
    Json,
    Dot,
    Mermaid,
}

#[derive(Args)]
struct QueryArgs {
    /// [PATH] QUERY: the repository (default `.`) and a rule body, e.g. `Wire(p, c)`.
    #[arg(num_args = 0..=2, value_name = "[PATH] QUERY")]
    args: Vec<String>,
    /// Add the rules of this `.dl` file (repeatable); their relations can be queried.
    #[arg(long, value_name = "FILE.dl")]
    rules: Vec<PathBuf>,
    /// Print, for each answer, one minimal derivation: the facts and rules that produced it.
    #[arg(long)]
    explain: bool,
    /// List every relation (base, derived, computed, and those of --rules) with columns and doc.
    #[arg(long)]
    schema: bool,
    /// Use the stored index as it is: exit 3 when it is missing or stale instead of updating it.
    #[arg(long)]
    no_index: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: QueryFormatArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    budget: BudgetArgs,
    #[command(flatten)]
    walk: WalkArgs,
}

/// The budgets of a run-time evaluation (default: `[query]` in andon.toml, else the defaults).
#[derive(Args)]
struct BudgetArgs {
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
    fn flags(&self) -> crate::api::structure::BudgetFlags {
        crate::api::structure::BudgetFlags {
            max_rows: self.max_rows,
            max_memory_mib: self.max_memory,
            timeout_secs: self.timeout,
        }
    }
}

#[derive(Args)]
struct StreamArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: GraphFormatArg,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    walk: WalkArgs,
}

#[derive(Args)]
struct WhyArgs {
    /// [PATH] A B: the repository (default `.`), then what depends and what it depends on.
    #[arg(num_args = 2..=3, value_name = "[PATH] A B", required = true)]
    args: Vec<String>,
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    walk: WalkArgs,
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
    /// The declared stream: a file with a `[stream]` table (`[[stream.stage]] name, root`,
    /// `[[stream.wire]] producer, consumer`), instead of `[stream]` in the settings.
    #[arg(long, value_name = "FILE")]
    stream: Option<PathBuf>,
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
struct ReportArgs {
    /// Repository.
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Where to write the page (default: report.html under output_dir).
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// No progress bar.
    #[arg(long, short)]
    quiet: bool,
    #[command(flatten)]
    walk: WalkArgs,
}

#[derive(Args)]
struct McpArgs {
    /// The repository the server serves: every path argument must resolve inside it.
    #[arg(default_value = ".")]
    path: PathBuf,
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
    // `enabled = false` stops every command before any other check or write (R1).
    if let Some((path, json)) = repo_of(&cli.command)
        && let Some(d) = crate::api::Disabled::of(&path)
    {
        let _ = emit(|w| output::disabled(w, &d, json));
        return Exit::Disabled.code();
    }
    if let Some((path, _)) = repo_of(&cli.command)
        && let Some(note) = crate::api::settings_note(&path)
    {
        eprintln!("andon: note: {note}");
    }
    let result = match cli.command {
        Command::Init(a) => init::run(a),
        Command::Index(a) => run_index(a),
        Command::Facts(a) => run_facts(a),
        Command::Query(a) => run_query(a),
        Command::Stream(a) => run_stream(a),
        Command::Why(a) => run_why(a),
        Command::Check(a) => run_check(a),
        Command::Config { action: ConfigAction::Show(a) } => run_config_show(a),
        Command::Mcp(a) => run_mcp(a),
        Command::Report(a) => run_report(a),
        Command::Ledger { action: LedgerAction::Check(a) } => run_ledger_check(a),
        Command::Ledger { action: LedgerAction::Repair(a) } => run_ledger_repair(a),
        Command::Status(a) => run_status(a),
        Command::Loop(a) => run_loop(a),
        Command::Propose(a) => run_propose(a),
        Command::Verify(a) => run_verify(a),
        Command::Preflight(a) => run_preflight(a),
        Command::Authorize(a) => run_decision(
            &a.path,
            &a.gap,
            a.unattended,
            &a.common,
            crate::andon_loop::Decision::Authorize { by: a.by.clone(), reason: a.reason.clone() },
        ),
        Command::Defer(a) => run_decision(
            &a.path,
            &a.gap,
            a.unattended,
            &a.common,
            crate::andon_loop::Decision::Defer { by: a.by.clone(), reason: a.reason.clone() },
        ),
        Command::Skip(a) => run_decision(
            &a.path,
            &a.gap,
            a.unattended,
            &a.common,
            crate::andon_loop::Decision::Skip { by: a.by.clone(), reason: a.reason.clone() },
        ),
        Command::Confirm(a) => run_decision(
            &a.decision.path,
            &a.decision.gap,
            a.decision.unattended,
            &a.decision.common,
            crate::andon_loop::Decision::Confirm {
                rule: a.rule.clone(),
                by: a.decision.by.clone(),
                reason: a.decision.reason.clone(),
            },
        ),
        Command::Override(a) => run_decision(
            &a.decision.path,
            &a.decision.gap,
            a.decision.unattended,
            &a.decision.common,
            crate::andon_loop::Decision::Override {
                evidence: a.evidence.clone(),
                basis: match a.basis {
                    BasisArg::StaleLiveView => crate::ledger::OverrideBasis::StaleLiveView,
                    BasisArg::ExtractorLimitation => crate::ledger::OverrideBasis::ExtractorLimitation,
                    BasisArg::ParseError => crate::ledger::OverrideBasis::ParseError,
                },
                artifact: a.artifact.clone(),
                by: a.decision.by.clone(),
                reason: a.decision.reason.clone(),
            },
        ),
    };
    match result {
        Ok(code) => code.code(),
        Err(msg) => {
            eprintln!("error: {}", text::lines(&msg));
            Exit::Error.code()
        }
    }
}

/// The repository a command works on and whether it speaks JSON (None for commands that must run
/// even when andon is disabled).
fn repo_of(c: &Command) -> Option<(PathBuf, bool)> {
    let first_of = |args: &[String], n: usize| PathBuf::from(if args.len() == n { args[0].as_str() } else { "." });
    let json = |c: &Common| matches!(c.format, FormatArg::Json);
    Some(match c {
        Command::Init(a) => (a.path.clone(), json(&a.common)),
        Command::Index(a) => (a.path.clone(), json(&a.common)),
        Command::Facts(a) => (a.path.clone(), json(&a.common)),
        Command::Stream(a) => (a.path.clone(), matches!(a.format, GraphFormatArg::Json)),
        Command::Check(a) => (a.path.clone(), matches!(a.format, Some(CheckFormatArg::Json | CheckFormatArg::Sarif))),
        Command::Query(a) if a.schema => (first_of(&a.args, 1), matches!(a.format, QueryFormatArg::Json)),
        Command::Query(a) => (first_of(&a.args, 2), matches!(a.format, QueryFormatArg::Json)),
        Command::Why(a) => (first_of(&a.args, 3), json(&a.common)),
        Command::Ledger { action: LedgerAction::Check(a) | LedgerAction::Repair(a) } => {
            (a.path.clone(), json(&a.common))
        }
        Command::Status(a) => (a.path.clone(), matches!(a.format, StatusFormatArg::Json)),
        Command::Loop(a) => (a.path.clone(), json(&a.common)),
        Command::Propose(a) => (a.path.clone(), json(&a.common)),
        Command::Verify(a) => (a.path.clone(), json(&a.common)),
        Command::Preflight(a) => (a.path.clone(), json(&a.common)),
        Command::Authorize(a) | Command::Defer(a) | Command::Skip(a) => (a.path.clone(), json(&a.common)),
        Command::Override(a) => (a.decision.path.clone(), json(&a.decision.common)),
        Command::Confirm(a) => (a.decision.path.clone(), json(&a.decision.common)),
        // The server answers a disabled repository call by call, with each call's document.
        Command::Report(a) => (a.path.clone(), false),
        Command::Config { .. } | Command::Mcp(_) => return None,
    })
}

fn run_config_show(a: ConfigShowArgs) -> Result<Exit, String> {
    let cfg = crate::api::structure::config_show(&a.path).map_err(|e| e.to_string())?;
    emit(|w| output::settings_report(w, &cfg, format_of(&a.common)))?;
    Ok(Exit::Success)
}

/// `andon report`: the page, written whole; its path on stdout.
fn run_report(a: ReportArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let opts = options(&a.path, &a.walk, false)?;
    let idx = match fresh_index(&a.path, &a.walk, a.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let stream = crate::api::structure::stream(&idx).map_err(|e| e.to_string())?;
    let check = if cfg.contracts.is_empty() {
        None
    } else {
        let flags = crate::api::structure::BudgetFlags::default();
        Some(crate::api::structure::check(&a.path, &cfg, &opts, &idx, None, &flags).map_err(|e| e.to_string())?)
    };
    let root = std::fs::canonicalize(&a.path).map_err(|e| format!("{}: {e}", a.path.display()))?;
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let status = crate::api::work::status(&a.path).map_err(|e| e.to_string());
    let page = output::report::Page {
        name: &name,
        stream: &stream,
        check: check.as_ref(),
        status: status.as_ref().map_err(Clone::clone),
    };
    let mut bytes = Vec::new();
    output::report::html_page(&mut bytes, &page).map_err(|e| e.to_string())?;
    let file = a.output.clone().unwrap_or_else(|| cfg.settings.output_path(&a.path).join("report.html"));
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    text::write_named(&file, &bytes).map_err(|e| format!("{}: cannot write the report: {e}", file.display()))?;
    emit(|w| writeln!(w, "{}", text::line(&file.to_string_lossy())))?;
    Ok(Exit::Success)
}

/// `andon mcp`: stdout carries the protocol's messages only; diagnostics go to stderr.
fn run_mcp(a: McpArgs) -> Result<Exit, String> {
    crate::mcp::serve(&a.path, tokio::io::stdin(), tokio::io::stdout())?;
    Ok(Exit::Success)
}

fn run_decision(
    path: &Path,
    gap: &str,
    unattended: bool,
    common: &Common,
    d: crate::andon_loop::Decision,
) -> Result<Exit, String> {
    let decided = crate::api::work::decide(path, gap, &d, unattended).map_err(|e| e.to_string())?;
    emit(|w| output::decision(w, &decided, matches!(common.format, FormatArg::Json)))?;
    Ok(if decided.result.is_ok() { Exit::Success } else { Exit::Findings })
}

fn run_preflight(a: PreflightArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let idx = fresh_index(&a.path, &a.walk, a.common.quiet, false).ok().and_then(Result::ok);
    let path_var = std::env::var_os("PATH");
    let p = crate::api::work::preflight(&a.path, &cfg, idx.as_ref(), path_var.as_deref());
    let out_dir = cfg.settings.output_path(&a.path);
    write_reports(
        &out_dir,
        "preflight.md",
        &|w| output::preflight(w, &p, Format::Text, true),
        "preflight.json",
        &serde_json::to_value(&p).expect("a document serializes"),
    );
    emit(|w| output::preflight(w, &p, format_of(&a.common), false))?;
    Ok(Exit::of_preflight(&p))
}

/// `-` for standard input, else a file.
fn read_input(src: &str) -> Result<String, String> {
    if src == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map_err(|e| format!("stdin: {e}"))?;
        Ok(t)
    } else {
        std::fs::read_to_string(src).map_err(|e| format!("{src}: {e}"))
    }
}

fn run_verify(a: VerifyArgs) -> Result<Exit, String> {
    use crate::api::work::{self, VerifyResult};
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    // a bad approach is refused before any work, an audit's included
    work::approach(a.approach.as_deref()).map_err(|e| e.to_string())?;
    let json_out = matches!(a.common.format, FormatArg::Json);
    if let Some(id) = &a.audit {
        let path_var = std::env::var_os("PATH");
        let audited = work::audit(&a.path, &cfg, id, path_var.as_deref());
        emit(|w| output::audit_report(w, &audited, json_out))?;
        return Ok(Exit::of_audit(&audited));
    }
    let request = match &a.request {
        // a bad request is refused before any work
        Some(src) => match work::parse_request(&read_input(src)?) {
            Ok(r) => Some(r),
            Err(refused) => {
                emit(|w| output::request_report(w, &refused, json_out))?;
                return Ok(Exit::of_request(&refused));
            }
        },
        None => None,
    };
    let ask = work::VerifyAsk {
        gap: a.gap.clone(),
        diff: a.diff.as_deref().map(read_input).transpose()?,
        command: a.command.clone(),
        rubric: a.rubric.clone(),
        process: a.process.clone(),
        panel: a.panel.clone(),
        proposer: a.proposer.clone(),
        approach: a.approach.clone(),
    };
    let idx = match fresh_index(&a.path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    match work::verify(&a.path, &cfg, &idx, &ask, request).map_err(|e| e.to_string())? {
        VerifyResult::Request(r) => {
            emit(|w| output::request_report(w, &r, json_out))?;
            Ok(Exit::of_request(&r))
        }
        VerifyResult::Gap(v) => {
            if let Err(e) = output::evidence_report(&cfg.settings.output_path(&a.path), &v) {
                eprintln!("warning: {}", text::lines(&e));
            }
            emit(|w| output::verify_report(w, &v, json_out))?;
            Ok(Exit::of_verified(&v))
        }
    }
}

fn run_propose(a: ProposeArgs) -> Result<Exit, String> {
    use crate::andon_loop::proposal::Proposal;
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    if let Some(gap) = &a.packet {
        let packet = crate::api::work::packet(&a.path, &cfg, gap).map_err(|e| e.to_string())?;
        emit(|w| output::packet(w, &packet, matches!(a.common.format, FormatArg::Json)))?;
        return Ok(Exit::Success);
    }
    let p: Proposal = match &a.json {
        Some(src) => serde_json::from_str(&read_input(src)?).map_err(|e| format!("{src}: not a proposal: {e}"))?,
        None => {
            let need =
                |v: &Option<String>, flag: &str| v.clone().ok_or_else(|| format!("missing --{flag} (or give --json)"));
            Proposal {
                gap: need(&a.gap, "gap")?,
                blast_radius: match a.blast_radius.ok_or("missing --blast-radius (exactly one tag)")? {
                    RadiusArg::LocalReversible => crate::config::BlastRadius::LocalReversible,
                    RadiusArg::HardToReverse => crate::config::BlastRadius::HardToReverse,
                    RadiusArg::SharedStateVisible => crate::config::BlastRadius::SharedStateVisible,
                },
                approach: need(&a.approach, "approach")?,
                reason: need(&a.reason, "reason")?,
                description: need(&a.description, "description")?,
                write_set: a.write_set.clone(),
                base_commit: None,
                proposer: a.proposer.clone(),
                judging: Default::default(),
                interview: Vec::new(),
            }
        }
    };
    let proposed = crate::api::work::propose(&a.path, &cfg, p).map_err(|e| e.to_string())?;
    if let Err(e) = output::proposal_report(&proposed) {
        eprintln!("warning: {}", text::lines(&e));
    }
    emit(|w| output::proposal(w, &proposed, matches!(a.common.format, FormatArg::Json)))?;
    Ok(Exit::of_proposed(&proposed))
}

fn run_loop(a: LoopArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    crate::api::work::loop_preconditions(&a.path, &cfg).map_err(|e| e.to_string())?;
    let idx = match fresh_index(&a.path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let json_out = matches!(a.common.format, FormatArg::Json);
    let step = match crate::api::work::loop_step(&a.path, &cfg, &idx, a.max_passes, a.slow) {
        Ok(s) => s,
        Err(crate::api::Error::InvalidLedger(e)) => {
            eprintln!("error: {}", text::lines(&e));
            emit(|w| output::invalid_ledger(w, &e, json_out))?;
            return Ok(Exit::Findings);
        }
        Err(e) => return Err(e.to_string()),
    };
    // The session's report and sidecar under output_dir (R125).
    write_reports(
        &cfg.settings.output_path(&a.path),
        "loop.txt",
        &|w| output::loop_report::report(w, &step, false),
        "loop.json",
        &serde_json::to_value(&step).expect("a document serializes"),
    );
    emit(|w| output::loop_report::report(w, &step, json_out))?;
    Ok(Exit::of_step(step.session.verdict()))
}

fn run_status(a: StatusArgs) -> Result<Exit, String> {
    use crate::output::status::{StatusFormat, report};
    let status = match crate::api::work::status(&a.path) {
        Ok(s) => s,
        Err(crate::api::Error::InvalidLedger(e)) => {
            let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
            let dir = crate::ledger::dir_of(&a.path, &cfg.settings);
            eprintln!("error: {}", text::lines(&format!("{}: {e}", dir.display())));
            emit(|w| output::invalid_ledger(w, &e, matches!(a.format, StatusFormatArg::Json)))?;
            return Ok(Exit::Findings);
        }
        Err(e) => return Err(e.to_string()),
    };
    // The report and its machine sidecar under output_dir (R125); nothing else is written.
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    write_reports(
        &cfg.settings.output_path(&a.path),
        "status.md",
        &|w| report(w, &status, StatusFormat::Markdown),
        "status.json",
        &serde_json::to_value(&status).expect("a document serializes"),
    );
    let format = match a.format {
        StatusFormatArg::Text => StatusFormat::Text,
        StatusFormatArg::Json => StatusFormat::Json,
        StatusFormatArg::Markdown => StatusFormat::Markdown,
    };
    emit(|w| report(w, &status, format))?;
    Ok(Exit::Success)
}

fn run_ledger_check(a: ConfigShowArgs) -> Result<Exit, String> {
    let check = crate::api::work::ledger_check(&a.path).map_err(|e| e.to_string())?;
    emit(|w| output::ledger_check(w, &check, format_of(&a.common)))?;
    Ok(if matches!(check.outcome(), "invalid" | "stale") { Exit::Findings } else { Exit::Success })
}

fn run_ledger_repair(a: ConfigShowArgs) -> Result<Exit, String> {
    let repair = crate::api::work::ledger_repair(&a.path).map_err(|e| e.to_string())?;
    emit(|w| output::ledger_repair(w, &repair, format_of(&a.common)))?;
    Ok(if repair.result.is_ok() { Exit::Success } else { Exit::Findings })
}

fn format_of(c: &Common) -> Format {
    match c.format {
        FormatArg::Text => Format::Text,
        FormatArg::Json => Format::Json,
    }
}

fn options(path: &Path, w: &WalkArgs, rebuild: bool) -> Result<IndexOptions, String> {
    let o = crate::api::WalkOverrides {
        hidden: w.hidden,
        no_ignore: w.no_ignore,
        vendored: w.vendored,
        follow: w.follow,
        exclude: w.exclude.clone(),
        max_filesize: w.max_filesize,
        threads: w.threads,
        stream: w.stream.clone(),
    };
    crate::api::index_options(path, &o, rebuild).map_err(|e| e.to_string())
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

/// A progress bar on stderr for a parse, when stderr is a terminal and `quiet` is off: it
/// shows once 50 files or more are parsed.
fn progress_bar(quiet: bool) -> (indicatif::ProgressBar, impl Fn(u64, u64) + Sync) {
    let show = !quiet && std::io::stderr().is_terminal();
    let bar = indicatif::ProgressBar::hidden();
    if show {
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} parsing {pos}/{len} files {wide_bar} {elapsed}")
                .expect("valid template"),
        );
    }
    let b = bar.clone();
    let progress = move |done: u64, total: u64| {
        if show && total >= 50 {
            b.set_length(total);
            b.set_position(done);
        }
    };
    (bar, progress)
}

fn run_index(a: IndexArgs) -> Result<Exit, String> {
    let format = format_of(&a.common);
    let opts = options(&a.path, &a.walk, a.rebuild)?;
    if a.check {
        let check = crate::api::structure::index_check(&a.path, &opts).map_err(|e| e.to_string())?;
        emit(|w| output::check_report(w, &check, format))?;
        return Ok(if check.fresh() { Exit::Success } else { Exit::StaleIndex });
    }
    let (bar, progress) = progress_bar(a.common.quiet);
    let report = crate::api::structure::index(&a.path, &opts, &progress);
    bar.finish_and_clear();
    let report = report.map_err(|e| e.to_string())?;
    emit(|w| output::index_report(w, &report, format))?;
    Ok(Exit::Success)
}

fn run_facts(a: FactsArgs) -> Result<Exit, String> {
    let format = format_of(&a.common);
    if a.schema {
        emit(|w| output::schema_report(w, format))?;
        return Ok(Exit::Success);
    }
    if let Some(r) = &a.relation {
        crate::api::structure::relation(r).map_err(|e| e.to_string())?;
    }
    let opts = options(&a.path, &a.walk, false)?;
    let (bar, progress) = progress_bar(a.common.quiet);
    let how = crate::api::Freshness::Update(&progress);
    let list = crate::api::structure::facts(&a.path, &opts, how, a.relation.as_deref(), a.file.as_deref());
    bar.finish_and_clear();
    match list {
        Ok(list) => emit(|w| output::facts_report(w, &list, format)).map(|_| Exit::Success),
        Err(e) => api_error(e),
    }
}

/// Brings the index of `path` up to date (or, with `no_index`, insists it already is) and loads
/// it; a stale index is reported on stderr with its exit code.
fn fresh_index(
    path: &Path,
    walk: &WalkArgs,
    quiet: bool,
    no_index: bool,
) -> Result<Result<index::Index, Exit>, String> {
    let opts = options(path, walk, false)?;
    let (bar, progress) = progress_bar(quiet);
    let how = if no_index { crate::api::Freshness::Require } else { crate::api::Freshness::Update(&progress) };
    let idx = crate::api::fresh_index(path, &opts, how);
    bar.finish_and_clear();
    match idx {
        Ok(i) => Ok(Ok(i)),
        Err(crate::api::Error::StaleIndex(m)) => {
            eprintln!("error: {}", text::line(&m));
            Ok(Err(Exit::StaleIndex))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A command's error as the command line reports it: a stale index on stderr with its exit code,
/// anything else as an error (exit 2).
fn api_error(e: crate::api::Error) -> Result<Exit, String> {
    match e {
        crate::api::Error::StaleIndex(m) => {
            eprintln!("error: {}", text::line(&m));
            Ok(Exit::StaleIndex)
        }
        e => Err(e.to_string()),
    }
}

fn run_query(a: QueryArgs) -> Result<Exit, String> {
    use crate::api::structure as api;
    let (path, query) = match a.args.as_slice() {
        [] if a.schema => (PathBuf::from("."), None),
        [p] if a.schema => (PathBuf::from(p), None),
        [q] => (PathBuf::from("."), Some(q.clone())),
        [p, q] => (PathBuf::from(p), Some(q.clone())),
        _ => return Err("give a query, e.g. `andon query 'Wire(producer, consumer)'` (or --schema)".into()),
    };
    let mut files = Vec::new();
    for f in &a.rules {
        let bytes = crate::index::walk::read_regular(f, 64 << 20)
            .map_err(|e| format!("{}: cannot read rules: {e}", f.display()))?;
        let text =
            String::from_utf8(bytes).map_err(|e| format!("{}: cannot read rules: not UTF-8 ({e})", f.display()))?;
        files.push((f.display().to_string(), text));
    }
    if a.schema {
        let q = query.clone().unwrap_or_else(|| "File(_, _)".into());
        let prepared = api::prepare(&q, &files).map_err(|e| e.to_string())?;
        emit(|w| output::derived::schema(w, &prepared.prog, matches!(a.format, QueryFormatArg::Json)))?;
        return Ok(Exit::Success);
    }
    let query = query.expect("query given");
    let prepared = api::prepare(&query, &files).map_err(|e| e.to_string())?;
    let opts = options(&path, &a.walk, false)?;
    let (bar, progress) = progress_bar(a.quiet);
    let how = if a.no_index { crate::api::Freshness::Require } else { crate::api::Freshness::Update(&progress) };
    let stamp = match crate::api::freshen(&path, &opts, how) {
        Ok(s) => s,
        Err(e) => {
            bar.finish_and_clear();
            return api_error(e);
        }
    };
    // before the evaluation, which a cartesian product may take to its budget
    for w in prepared.cartesian_products() {
        eprintln!("warning: {}", crate::text::line(&w.to_string()));
    }
    let load = || crate::api::load_fresh(&path, &opts, how).map_err(|e| e.to_string());
    let facts = crate::datalog::Facts::Stored { stamp, load: &load };
    let answered = api::query(&path, &facts, &prepared, a.explain, &a.budget.flags());
    bar.finish_and_clear();
    let answered = answered.map_err(|e| e.to_string())?;
    let format = match a.format {
        QueryFormatArg::Table => output::derived::QueryFormat::Table,
        QueryFormatArg::Json => output::derived::QueryFormat::Json,
        QueryFormatArg::Csv => output::derived::QueryFormat::Csv,
    };
    if a.explain && answered.answer.rows.len() > api::EXPLAIN_LIMIT {
        eprintln!("note: explaining the first {} of {} answers", api::EXPLAIN_LIMIT, answered.answer.rows.len());
    }
    emit(|w| output::derived::answer(w, &answered, format))?;
    Ok(Exit::Success)
}

fn run_stream(a: StreamArgs) -> Result<Exit, String> {
    let idx = match fresh_index(&a.path, &a.walk, a.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let report = crate::api::structure::stream(&idx).map_err(|e| e.to_string())?;
    let format = match a.format {
        GraphFormatArg::Text => output::derived::GraphFormat::Text,
        GraphFormatArg::Json => output::derived::GraphFormat::Json,
        GraphFormatArg::Dot => output::derived::GraphFormat::Dot,
        GraphFormatArg::Mermaid => output::derived::GraphFormat::Mermaid,
    };
    emit(|w| output::derived::stream(w, &report, format))?;
    Ok(Exit::Success)
}

fn run_why(a: WhyArgs) -> Result<Exit, String> {
    let (path, from, to) = match a.args.as_slice() {
        [f, t] => (PathBuf::from("."), f, t),
        [p, f, t] => (PathBuf::from(p), f, t),
        _ => return Err("give what depends and what it depends on: `andon why [PATH] A B`".into()),
    };
    let idx = match fresh_index(&path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let report = crate::api::structure::why(&idx, from, to).map_err(|e| e.to_string())?;
    emit(|w| output::derived::why(w, &report, matches!(a.common.format, FormatArg::Json)))?;
    Ok(Exit::of_why(&report))
}

/// A configuration error with the offending line of the file.
fn config_error(e: &crate::config::ConfigError) -> String {
    crate::api::config_error(e)
}

/// A command's human report and its machine sidecar under `output_dir` (R125); a failure is a
/// warning, since the command's own result does not depend on them.
fn write_reports(
    out_dir: &Path,
    human_name: &str,
    human: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    sidecar_name: &str,
    sidecar: &serde_json::Value,
) {
    if let Err(e) = output::write_reports(out_dir, human_name, human, sidecar_name, sidecar) {
        eprintln!("warning: {}", text::lines(&e));
    }
}

fn run_check(a: CheckArgs) -> Result<Exit, String> {
    use crate::output::check::CheckFormat;
    let format = match a.format {
        Some(CheckFormatArg::Text) => CheckFormat::Text,
        Some(CheckFormatArg::Json) => CheckFormat::Json,
        Some(CheckFormatArg::Sarif) => CheckFormat::Sarif,
        Some(CheckFormatArg::Github) => CheckFormat::Github,
        Some(CheckFormatArg::Junit) => CheckFormat::Junit,
        Some(CheckFormatArg::Markdown) => CheckFormat::Markdown,
        None if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") => CheckFormat::Github,
        None => CheckFormat::Text,
    };
    let opts = options(&a.path, &a.walk, false)?;
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let idx = match fresh_index(&a.path, &a.walk, a.quiet, a.no_index)? {
        Ok(i) => i,
        Err(code) => {
            eprintln!("andon: verdict refused (stale index: no structural finding can rest on it)");
            return Ok(code);
        }
    };
    let report = crate::api::structure::check(&a.path, &cfg, &opts, &idx, a.base.as_deref(), &a.budget.flags())
        .map_err(|e| e.to_string())?;
    // the summary's chart: the stream of the same index
    let stream = if format == CheckFormat::Markdown { crate::api::structure::stream(&idx).ok() } else { None };
    let root = std::fs::canonicalize(&a.path).map_err(|e| format!("{}: {e}", a.path.display()))?;
    let root_uri = crate::output::check::dir_uri(&root);
    let version = env!("CARGO_PKG_VERSION");
    match &a.output {
        Some(file) => {
            let mut buf = Vec::new();
            crate::output::check::report(&mut buf, &report, format, version, &root_uri, stream.as_ref())
                .map_err(|e| format!("cannot render the report: {e}"))?;
            crate::text::write_named(file, &buf)
                .map_err(|e| format!("{}: cannot write the report: {e}", file.display()))?;
            if !a.quiet {
                let mut line = Vec::new();
                let _ = crate::output::check::verdict(&mut line, &report);
                eprint!("{}", String::from_utf8_lossy(&line));
            }
        }
        None => emit(|w| crate::output::check::report(w, &report, format, version, &root_uri, stream.as_ref()))?,
    }
    Ok(Exit::of_check(&report))
}
