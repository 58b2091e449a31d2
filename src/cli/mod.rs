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
    /// A file the fix will write (repeatable; every one must be declared).
    #[arg(long = "write-set", value_name = "PATH")]
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
}

#[derive(Args)]
struct CheckArgs {
    /// Repository (its andon.toml, or [tool.andon] in pyproject.toml, declares the contracts).
    #[arg(default_value = ".")]
    path: PathBuf,
    /// Output format (default: text, or github when GITHUB_ACTIONS=true).
    #[arg(long, value_enum)]
    format: Option<CheckFormatArg>,
    /// Write the report to FILE (atomically) instead of standard output.
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
    walk: WalkArgs,
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
    // `enabled = false` stops every command before any other check or write (R1).
    if let Some((path, json)) = repo_of(&cli.command)
        && let Some(origin) = crate::config::settings::disabled(&path)
    {
        let _ = emit(|w| output::disabled(w, &origin.to_string(), json));
        return Exit::Disabled.code();
    }
    let result = match cli.command {
        Command::Index(a) => run_index(a),
        Command::Facts(a) => run_facts(a),
        Command::Query(a) => run_query(a),
        Command::Stream(a) => run_stream(a),
        Command::Why(a) => run_why(a),
        Command::Check(a) => run_check(a),
        Command::Config { action: ConfigAction::Show(a) } => run_config_show(a),
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
            eprintln!("error: {msg}");
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
        Command::Config { .. } => return None,
    })
}

fn run_config_show(a: ConfigShowArgs) -> Result<Exit, String> {
    if !a.path.exists() {
        return Err(format!("{}: no such directory", a.path.display()));
    }
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    emit(|w| output::settings_report(w, &cfg, format_of(&a.common)))?;
    Ok(Exit::Success)
}

fn run_decision(
    path: &Path,
    gap: &str,
    unattended: bool,
    common: &Common,
    d: crate::andon_loop::Decision,
) -> Result<Exit, String> {
    let json_out = matches!(common.format, FormatArg::Json);
    if unattended {
        emit(|w| output::decision(w, Err("human decisions are not taken under --unattended"), json_out))?;
        return Ok(Exit::Findings);
    }
    let cfg = Config::load(path).map_err(|e| config_error(&e))?;
    let now = now();
    match crate::andon_loop::decide(path, &cfg, gap, &d, now) {
        Ok(done) => {
            emit(|w| output::decision(w, Ok(&done), json_out))?;
            Ok(Exit::Success)
        }
        Err(e) => {
            emit(|w| output::decision(w, Err(&e.to_string()), json_out))?;
            Ok(Exit::Findings)
        }
    }
}

fn run_preflight(a: PreflightArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let stream = match fresh_index(&a.path, &a.walk, a.common.quiet, false) {
        Ok(Ok(idx)) => crate::ops::stream(&idx).ok(),
        _ => None,
    };
    let path_var = std::env::var_os("PATH");
    let items = crate::preflight::run(&a.path, &cfg, stream.as_ref(), path_var.as_deref());
    let out_dir = cfg.settings.output_path(&a.path);
    write_reports(
        &out_dir,
        "preflight.md",
        &|w| output::preflight(w, &items, Format::Text, true),
        "preflight.json",
        &output::preflight_json(&items),
    );
    emit(|w| output::preflight(w, &items, format_of(&a.common), false))?;
    let not_ready = items.iter().any(|i| i.level == crate::preflight::Readiness::NotReady);
    Ok(if not_ready { Exit::Findings } else { Exit::Success })
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
    use crate::andon_loop::VerifyStop;
    use crate::ledger::andon_rule::Condition;
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let chosen = match a.approach.as_deref() {
        None => None,
        Some(s) => Some(crate::evidence::route::Approach::parse(s).ok_or_else(|| {
            format!("unknown approach `{s}` (one of: {})", crate::evidence::route::Approach::ids().join(", "))
        })?),
    };
    let json_out = matches!(a.common.format, FormatArg::Json);
    if let Some(id) = &a.audit {
        let path_var = std::env::var_os("PATH");
        let result = crate::andon_loop::audit::audit(&a.path, &cfg, id, path_var.as_deref());
        let code = match &result {
            Ok(o) if o.strength == "strong" => Exit::Success,
            Ok(o) if o.strength == "weak" => Exit::Findings,
            Ok(_) => Exit::halt(Condition::NeedsHuman),
            Err(_) => Exit::Error,
        };
        emit(|w| output::audit_report(w, &result, json_out))?;
        return Ok(code);
    }
    let request = match &a.request {
        // a bad request is refused before any work
        Some(src) => match crate::andon_loop::request::parse(&read_input(src)?) {
            Ok(r) => Some(r),
            Err(errs) => {
                let stop =
                    crate::andon_loop::request::Stop::Refused(format!("the request is malformed: {}", errs.join("; ")));
                emit(|w| output::request_report(w, &Err(stop.clone()), json_out))?;
                return Ok(Exit::Error);
            }
        },
        None => None,
    };
    let idx = match fresh_index(&a.path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let mut inputs = crate::andon_loop::prove::Inputs {
        command: a.command.clone(),
        rubric: a.rubric.clone(),
        process: a.process.clone(),
        panel: a.panel.clone(),
        proposer: a.proposer.clone(),
        chosen,
        artifacts: None,
        rules: Vec::new(),
        declared: Vec::new(),
    };
    let mut request = request;
    let mut diff_text = match &a.diff {
        None => None,
        Some(src) => Some(read_input(src)?),
    };
    if let (Some(req), Some(gap)) = (&request, &a.gap) {
        // reached from the loop: the request's diff is the gap's applied fix, proven and persisted
        // the loop's way (R112); its wire must be the gap's
        let cfg_dir = crate::ledger::dir_of(&a.path, &cfg.settings);
        let gap_wire = crate::ledger::load(&cfg_dir)
            .map_err(|e| e.to_string())?
            .and_then(|(_, state, _)| state.gaps.get(gap).and_then(|g| g.wire.clone()));
        let asked = match &req.wire {
            crate::andon_loop::request::WireRef::Stages { from, to } => {
                Some(crate::ledger::Wire { producer: from.clone(), consumer: to.clone() })
            }
            crate::andon_loop::request::WireRef::Site { .. } => None,
        };
        if asked.is_some() && asked != gap_wire {
            let m = format!(
                "the request's wire is not gap `{gap}`'s ({}): a request reached from the loop proves that gap's fix",
                gap_wire.map(|w| w.to_string()).unwrap_or_else(|| "no wire".into())
            );
            emit(|w| output::request_report(w, &Err(crate::andon_loop::request::Stop::Refused(m.clone())), json_out))?;
            return Ok(Exit::Error);
        }
        diff_text = Some(req.diff.clone());
        inputs.rules = req.rules.clone();
        inputs.declared = req.files.clone();
        if !req.kinds.is_empty() {
            let m =
                "a request for a loop gap is routed by the gap; give `kind` only to a standalone request".to_string();
            emit(|w| output::request_report(w, &Err(crate::andon_loop::request::Stop::Refused(m.clone())), json_out))?;
            return Ok(Exit::Error);
        }
        request = None;
    }
    if let Some(req) = request {
        // standalone: nothing of the run is kept in the repository (R112)
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let scratch = std::env::temp_dir().join(format!("andon-request-{}-{nanos:x}", std::process::id()));
        inputs.artifacts = Some(scratch.clone());
        let result = crate::andon_loop::request::verify(&a.path, &cfg, &idx, &req, &inputs);
        let _ = std::fs::remove_dir_all(&scratch);
        let code = match &result {
            Ok(o) => o.condition.map_or(Exit::Success, Exit::halt),
            Err(crate::andon_loop::request::Stop::Scope(..)) => Exit::Findings,
            Err(crate::andon_loop::request::Stop::Refused(_)) => Exit::Error,
        };
        emit(|w| output::request_report(w, &result, json_out))?;
        return Ok(code);
    }
    let gap = a.gap.clone().unwrap_or_default();
    let result = crate::andon_loop::verify(&a.path, &cfg, &idx, &gap, &inputs, diff_text.as_deref())
        .map_err(|e| e.to_string())?;
    let code = match &result {
        Ok(o) => {
            let e = &o.evidence;
            match e.verdict {
                crate::ledger::Verdict::Proven => Exit::Success,
                _ if e.hold => Exit::halt(Condition::Tier1Hold),
                crate::ledger::Verdict::Refuted if e.tier == Some(2) => Exit::halt(Condition::Tier2Hold),
                crate::ledger::Verdict::Refuted => Exit::halt(Condition::Refuted),
                crate::ledger::Verdict::Unproven => Exit::halt(Condition::Unproven),
                crate::ledger::Verdict::Unknown => Exit::halt(Condition::NeedsHuman),
            }
        }
        Err(VerifyStop::Scope(_)) => Exit::Findings,
        Err(VerifyStop::Authorization(..)) => Exit::halt(Condition::Authorization),
        Err(VerifyStop::Refused(_)) => Exit::Error,
    };
    emit(|w| output::verify_report(w, &gap, &result, json_out))?;
    Ok(code)
}

fn run_propose(a: ProposeArgs) -> Result<Exit, String> {
    use crate::andon_loop::proposal::{self, Proposal};
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let mut p: Proposal = match &a.json {
        Some(src) => {
            let text = if src == "-" {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map_err(|e| format!("stdin: {e}"))?;
                t
            } else {
                std::fs::read_to_string(src).map_err(|e| format!("{src}: {e}"))?
            };
            serde_json::from_str(&text).map_err(|e| format!("{src}: not a proposal: {e}"))?
        }
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
            }
        }
    };
    let mut problems = proposal::validate(&p).err().unwrap_or_default();
    let mut gated = false;
    let dir = crate::ledger::dir_of(&a.path, &cfg.settings);
    match crate::ledger::load(&dir) {
        Ok(Some((_, state, _))) => match state.gaps.get(&p.gap) {
            None => problems.push(format!("no gap `{}` in the ledger; `andon loop` lists the open gaps", p.gap)),
            Some(g) if !g.status.takes_proposal() => {
                problems.push(format!("gap `{}` is {}; it takes no proposal", p.gap, g.status.name()))
            }
            Some(g) => {
                // no work in a stage behind an entry gate nobody confirmed (R57)
                if let Some(c) = state.context.get(&g.stage).filter(|c| !c.open_gates().is_empty()) {
                    gated = true;
                    for o in c.open_gates() {
                        problems.push(format!(
                            "stage `{}` is behind entry gate `{}` ({}, {} confidence): a person confirms it first: `andon confirm {} --rule {} --by NAME --reason WHY`",
                            g.stage, o.id, o.priority, o.confidence, g.stage, o.id
                        ));
                    }
                }
            }
        },
        Ok(None) => problems.push("the loop has never run here: run `andon loop` first".into()),
        Err(e) => problems.push(e.to_string()),
    }
    if !problems.is_empty() {
        emit(|w| output::proposal_refused(w, &problems, matches!(a.common.format, FormatArg::Json)))?;
        return Ok(if gated { Exit::halt(crate::ledger::andon_rule::Condition::EntryGate) } else { Exit::Findings });
    }
    p.base_commit = proposal::head_commit(&a.path);
    let file = proposal::artifact_path(&cfg.settings.output_path(&a.path), &p.gap);
    std::fs::create_dir_all(file.parent().expect("proposals dir")).map_err(|e| format!("{}: {e}", file.display()))?;
    write_atomic(&file, &serde_json::to_vec_pretty(&p).expect("json"))?;
    let over = p.blast_radius > cfg.settings.authorization_level.value;
    emit(|w| output::proposal_written(w, &p, &file, over, matches!(a.common.format, FormatArg::Json)))?;
    Ok(Exit::Success)
}

fn run_loop(a: LoopArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    // In ingest mode an absent or invalid brief stops the loop before anything is indexed or
    // written (R52: never a scan); the step reads it again under its lock.
    if cfg.settings.gap_source.value == crate::config::GapSource::Ingest {
        crate::andon_loop::ingest::load(&a.path, &cfg.settings.self_assess_output_dir.value)
            .map_err(|e| crate::ledger::LedgerError::Refused(e).to_string())?;
    }
    let idx = match fresh_index(&a.path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let now = now();
    // the ledger's last record at the end of the previous run, from that run's sidecar
    let out_dir = cfg.settings.output_path(&a.path);
    let since = std::fs::read(out_dir.join("loop.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["ledger_seq"].as_u64());
    let session = match crate::andon_loop::step(
        &a.path,
        &cfg,
        &idx,
        crate::andon_loop::StepOptions { now, max_passes: a.max_passes, slow: a.slow, since },
    ) {
        Ok(s) => s,
        Err(e @ crate::ledger::LedgerError::Invalid(_)) => {
            eprintln!("error: {e}");
            emit(|w| output::invalid_ledger(w, &e.to_string(), matches!(a.common.format, FormatArg::Json)))?;
            return Ok(Exit::Findings);
        }
        Err(e) => return Err(e.to_string()),
    };
    // Reported from the index the step ran on; they change nothing the step decided (R123).
    let injections = crate::ops::suspected_injections(&idx);
    // The session's report and sidecar under output_dir (R125).
    write_reports(
        &out_dir,
        "loop.txt",
        &|w| output::loop_report::report(w, &session, &injections, false),
        "loop.json",
        &output::loop_report::json_doc(&session, &injections),
    );
    emit(|w| output::loop_report::report(w, &session, &injections, matches!(a.common.format, FormatArg::Json)))?;
    Ok(Exit::of_step(session.verdict()))
}

fn run_status(a: StatusArgs) -> Result<Exit, String> {
    use crate::output::status::{StatusFormat, json_doc, report};
    if !a.path.exists() {
        return Err(format!("{}: no such directory", a.path.display()));
    }
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let dir = crate::ledger::dir_of(&a.path, &cfg.settings);
    let shown = dir.join(crate::ledger::LOG_FILE).to_string_lossy().replace('\\', "/");
    let state = match crate::ledger::load(&dir) {
        Ok(s) => s.map(|(_, state, _)| state),
        Err(e) => {
            eprintln!("error: {}: {e}", dir.display());
            emit(|w| output::invalid_ledger(w, &e.to_string(), matches!(a.format, StatusFormatArg::Json)))?;
            return Ok(Exit::Findings);
        }
    };
    let board = state.as_ref().map(|s| {
        crate::status::board(
            s,
            cfg.settings.thrash_threshold.value,
            cfg.settings.gap_source.value == crate::config::GapSource::Ingest,
        )
    });
    // The stored index as it is: status neither walks nor updates it (R114).
    let inj = crate::status::Injections::of_stored_index(&a.path);
    // The report and its machine sidecar under output_dir (R125); nothing else is written.
    let out_dir = cfg.settings.output_path(&a.path);
    write_reports(
        &out_dir,
        "status.md",
        &|w| report(w, board.as_ref(), &shown, &inj, StatusFormat::Markdown),
        "status.json",
        &json_doc(board.as_ref(), &shown, &inj),
    );
    let format = match a.format {
        StatusFormatArg::Text => StatusFormat::Text,
        StatusFormatArg::Json => StatusFormat::Json,
        StatusFormatArg::Markdown => StatusFormat::Markdown,
    };
    emit(|w| report(w, board.as_ref(), &shown, &inj, format))?;
    Ok(Exit::Success)
}

fn run_ledger_check(a: ConfigShowArgs) -> Result<Exit, String> {
    if !a.path.exists() {
        return Err(format!("{}: no such directory", a.path.display()));
    }
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let dir = crate::ledger::dir_of(&a.path, &cfg.settings);
    let result = if dir.join(crate::ledger::LOG_FILE).exists() {
        Some(crate::ledger::check(&dir).map_err(|e| e.to_string())?)
    } else {
        None
    };
    emit(|w| output::ledger_check(w, &dir, result.as_ref(), format_of(&a.common)))?;
    Ok(match result {
        Some((issues, _)) if !issues.is_empty() => Exit::Findings,
        _ => Exit::Success,
    })
}

/// Seconds since the Unix epoch (0 before it).
fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn run_ledger_repair(a: ConfigShowArgs) -> Result<Exit, String> {
    let cfg = Config::load(&a.path).map_err(|e| config_error(&e))?;
    let dir = crate::ledger::dir_of(&a.path, &cfg.settings);
    if !dir.join(crate::ledger::LOG_FILE).exists() {
        return Err(format!("no ledger in {}: nothing to repair", dir.display()));
    }
    let result = crate::ledger::repair(&dir, now());
    emit(|w| output::ledger_repair(w, &dir, &result, format_of(&a.common)))?;
    Ok(if result.is_ok() { Exit::Success } else { Exit::Findings })
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
                .min_by_key(|r| crate::text::edit_distance(&name.to_lowercase(), &r.name.to_lowercase()))
                .map(|r| r.name)
                .unwrap_or("File");
            format!("unknown relation `{name}`; did you mean `{near}`? (`andon facts --schema` lists them)")
        })?),
    };
    let idx = match fresh_index(&a.path, &a.walk, a.common.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let facts = idx.facts().map_err(|e| format!("the index cannot be read: {e}"))?;
    let file = a.file.as_deref().map(|f| f.trim_start_matches("./"));
    emit(|w| output::facts_report(w, &facts, &FactFilter { relation, file }, format))?;
    Ok(Exit::Success)
}

/// Brings the index of `path` up to date (or, with `no_index`, insists it already is) and loads it.
fn fresh_index(
    path: &Path,
    walk: &WalkArgs,
    quiet: bool,
    no_index: bool,
) -> Result<Result<index::Index, Exit>, String> {
    let opts = options(path, walk, false)?;
    if no_index {
        let changes = index::check(path, &opts).map_err(|e| e.to_string())?;
        match changes {
            Ok(c) if c.is_empty() => {}
            Ok(c) => {
                let first = c.first().map(|x| format!("{} {}", x.change, x.path)).unwrap_or_default();
                eprintln!(
                    "error: the index is stale ({} changes, first: {first}); run `andon index` or drop --no-index",
                    c.len()
                );
                return Ok(Err(Exit::StaleIndex));
            }
            Err(why) => {
                eprintln!("error: no usable index ({why}); run `andon index` or drop --no-index");
                return Ok(Err(Exit::StaleIndex));
            }
        }
    } else {
        update_index(path, &opts, quiet)?;
    }
    let idx =
        index::load(path).map_err(|e| format!("the index cannot be read: {e}"))?.ok_or("the index was not written")?;
    Ok(Ok(idx))
}

/// A Datalog error with the offending source line and a caret under the column.
fn datalog_error(e: &crate::dialect::Error, text: &str) -> String {
    let line = text.lines().nth(e.span.line.saturating_sub(1) as usize).unwrap_or("");
    let caret = format!("{}^", " ".repeat(e.span.col.saturating_sub(1) as usize));
    format!("{e}\n  | {line}\n  | {caret}")
}

fn run_query(a: QueryArgs) -> Result<Exit, String> {
    let (path, query) = match a.args.as_slice() {
        [] if a.schema => (PathBuf::from("."), None),
        [p] if a.schema => (PathBuf::from(p), None),
        [q] => (PathBuf::from("."), Some(q.clone())),
        [p, q] => (PathBuf::from(p), Some(q.clone())),
        _ => return Err("give a query, e.g. `andon query 'Wire(producer, consumer)'` (or --schema)".into()),
    };
    let mut files = Vec::new();
    for f in &a.rules {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: cannot read rules: {e}", f.display()))?;
        files.push((f.display().to_string(), text));
    }
    let src_of = |name: &str, query: &str| -> String {
        if name == "query" {
            query.to_string()
        } else {
            files.iter().find(|(n, _)| n == name).map(|(_, t)| t.clone()).unwrap_or_default()
        }
    };
    if a.schema {
        let q = query.clone().unwrap_or_else(|| "File(_, _)".into());
        let prepared = crate::datalog::prepare(&q, &files).map_err(|e| datalog_error(&e, &src_of(&e.source, &q)))?;
        emit(|w| output::derived::schema(w, &prepared.prog, matches!(a.format, QueryFormatArg::Json)))?;
        return Ok(Exit::Success);
    }
    let query = query.expect("query given");
    let prepared =
        crate::datalog::prepare(&query, &files).map_err(|e| datalog_error(&e, &src_of(&e.source, &query)))?;
    let idx = match fresh_index(&path, &a.walk, a.quiet, a.no_index)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    // Ledger relations come from the ledger: a query that reads them refuses an invalid ledger.
    let ledger_rows = if crate::datalog::needs_ledger(&prepared.prog, &prepared.prog.needed(&[prepared.rel])) {
        let cfg = Config::load(&path).map_err(|e| config_error(&e))?;
        let dir = crate::ledger::dir_of(&path, &cfg.settings);
        match crate::ledger::load(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            Some((_, state, _)) => crate::ledger::facts(&state),
            None => Vec::new(),
        }
    } else {
        Vec::new()
    };
    let (answer, store) = crate::datalog::answer(&prepared, &idx, a.explain, &ledger_rows)?;
    let explanations: Option<Vec<_>> = a.explain.then(|| {
        store
            .sorted_rows(&prepared.prog, answer.rel)
            .into_iter()
            .take(EXPLAIN_LIMIT)
            .map(|row| crate::datalog::explain::explain(&prepared.prog, &store, answer.rel, row))
            .collect()
    });
    let format = match a.format {
        QueryFormatArg::Table => output::derived::QueryFormat::Table,
        QueryFormatArg::Json => output::derived::QueryFormat::Json,
        QueryFormatArg::Csv => output::derived::QueryFormat::Csv,
    };
    if a.explain && answer.rows.len() > EXPLAIN_LIMIT {
        eprintln!("note: explaining the first {EXPLAIN_LIMIT} of {} answers", answer.rows.len());
    }
    emit(|w| output::derived::answer(w, &answer, explanations.as_deref(), format))?;
    Ok(Exit::Success)
}

/// `--explain` derives at most this many answers.
const EXPLAIN_LIMIT: usize = 100;

fn run_stream(a: StreamArgs) -> Result<Exit, String> {
    let idx = match fresh_index(&a.path, &a.walk, a.quiet, false)? {
        Ok(i) => i,
        Err(code) => return Ok(code),
    };
    let report = crate::ops::stream(&idx)?;
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
    let report = crate::ops::why(&idx, from, to)?;
    emit(|w| output::derived::why(w, &report, matches!(a.common.format, FormatArg::Json)))?;
    Ok(if report.chain.is_some() { Exit::Success } else { Exit::Findings })
}

/// A configuration error with the offending line of the file.
fn config_error(e: &crate::config::ConfigError) -> String {
    let text = std::fs::read_to_string(&e.path).unwrap_or_default();
    match text.lines().nth(e.line.saturating_sub(1) as usize) {
        Some(l) if !l.trim().is_empty() => format!("{e}\n  | {l}"),
        _ => e.to_string(),
    }
}

/// A command's human report and its machine sidecar under `output_dir` (R125), each written
/// atomically. The command's own result does not depend on them: a failure is a warning.
fn write_reports(
    out_dir: &Path,
    human_name: &str,
    human: &dyn Fn(&mut dyn Write) -> std::io::Result<()>,
    sidecar_name: &str,
    sidecar: &serde_json::Value,
) {
    let mut text = Vec::new();
    let written = std::fs::create_dir_all(out_dir)
        .map_err(|e| format!("{}: {e}", out_dir.display()))
        .and_then(|_| human(&mut text).map_err(|e| e.to_string()))
        .and_then(|_| write_atomic(&out_dir.join(human_name), &text))
        .and_then(|_| write_atomic(&out_dir.join(sidecar_name), &serde_json::to_vec_pretty(sidecar).expect("json")));
    if let Err(e) = written {
        eprintln!("warning: the report was not written under {}: {e}", out_dir.display());
    }
}

/// Writes `bytes` to `path` whole ([`crate::text::write_atomic`]).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::text::write_atomic(path, bytes).map_err(|e| format!("{}: cannot write the report: {e}", path.display()))
}

fn run_check(a: CheckArgs) -> Result<Exit, String> {
    use crate::output::check::CheckFormat;
    let format = match a.format {
        Some(CheckFormatArg::Text) => CheckFormat::Text,
        Some(CheckFormatArg::Json) => CheckFormat::Json,
        Some(CheckFormatArg::Sarif) => CheckFormat::Sarif,
        Some(CheckFormatArg::Github) => CheckFormat::Github,
        Some(CheckFormatArg::Junit) => CheckFormat::Junit,
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
    let mut report = match crate::check::run(&idx, &a.path, &cfg) {
        Ok(r) => r,
        Err(crate::check::CheckError::Config(e)) => return Err(config_error(&e)),
        Err(crate::check::CheckError::Other(m)) => return Err(m),
    };
    if let Some(base) = &a.base {
        let before = crate::check::base::fingerprints(&a.path, base, &cfg, &opts, &std::env::temp_dir())?;
        for f in &mut report.findings {
            f.new = Some(!before.contains(&f.fingerprint));
        }
        report.base = Some(base.clone());
    }
    let root = std::fs::canonicalize(&a.path).map_err(|e| format!("{}: {e}", a.path.display()))?;
    let root_uri = crate::output::check::dir_uri(&root);
    let version = env!("CARGO_PKG_VERSION");
    match &a.output {
        Some(file) => {
            let mut buf = Vec::new();
            crate::output::check::report(&mut buf, &report, format, version, &root_uri)
                .map_err(|e| format!("cannot render the report: {e}"))?;
            write_atomic(file, &buf)?;
            if !a.quiet {
                let mut line = Vec::new();
                let _ = crate::output::check::verdict(&mut line, &report);
                eprint!("{}", String::from_utf8_lossy(&line));
            }
        }
        None => emit(|w| crate::output::check::report(w, &report, format, version, &root_uri))?,
    }
    Ok(if !report.stale_exceptions.is_empty() {
        Exit::Error
    } else if report.blocking() > 0 {
        Exit::Findings
    } else {
        Exit::Success
    })
}
