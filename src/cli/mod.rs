//! The command line: the only code that knows clap, the terminal, environment variables and
//! process exit. One file per subcommand: each parses its arguments, calls its one function of
//! the API ([`crate::api`]), renders the outcome through `output`, and exits with the code the
//! outcome names.

mod check;
mod common;
mod decide;
mod index;
mod init;
mod loop_step;
mod propose;
mod query;
mod report;
mod status;
mod stream;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::exit::Exit;
use crate::output;
use common::{emit, report_failure};

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
    Index(index::IndexArgs),
    /// Print facts from the index (brought up to date first), sorted, with names and repo paths.
    Facts(index::FactsArgs),
    /// Answer a Datalog query over the index: `andon query [PATH] 'Wire(p, c), Stage(c, root)'`.
    Query(query::QueryArgs),
    /// The stream: stages, wires, stream order and cycles.
    Stream(stream::StreamArgs),
    /// The shortest dependency chain from A to B (stages, modules, files or directories).
    Why(stream::WhyArgs),
    /// Judge the contracts of andon.toml on a fresh index: the structural gate for CI.
    Check(check::CheckArgs),
    /// Is the repository ready for the loop? Every check, a readiness level per capability and its fix.
    Preflight(loop_step::PreflightArgs),
    /// Check a proposed fix for a gap and write it for the loop to record (never edits the repository).
    Propose(propose::ProposeArgs),
    /// Prove the applied fix of a proposed gap (the working tree against the proposal's base commit).
    Verify(verify::VerifyArgs),
    /// A person raises the authority for one gap's fix, bound to the diff as it is now.
    Authorize(decide::DecisionArgs),
    /// A person defers a gap.
    Defer(decide::DecisionArgs),
    /// A person skips a gap; the loop picks another.
    Skip(decide::DecisionArgs),
    /// A person overrides a tier-2 contradiction with a structured reason (never a tier-1 hold).
    Override(decide::OverrideArgs),
    /// A person confirms an entry gate of a stage (ingest mode: a P0 brief rule below High confidence).
    Confirm(decide::ConfirmArgs),
    /// One step of the loop: detect or resume the stream, scan the cursor's stage, pick a gap, say what is next.
    #[command(name = "loop")]
    Loop(loop_step::LoopArgs),
    /// The read-only board from the ledger: holds, stages and wires, counters, constraint, gaps, next step.
    Status(status::StatusArgs),
    /// The ledger: `andon ledger check` validates it.
    Ledger {
        #[command(subcommand)]
        action: status::LedgerAction,
    },
    /// Serve the repository to an agent over the Model Context Protocol (stdio): the tools index,
    /// query, stream, why, check, status, loop, packet, propose, verify, facts and preflight.
    Mcp(report::McpArgs),
    /// One self-contained HTML page: the stream as a layered picture, the contracts, the findings.
    Report(report::ReportArgs),
    /// The effective settings and where each came from.
    Config {
        #[command(subcommand)]
        action: report::ConfigAction,
    },
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { Exit::Error.code() } else { Exit::Success.code() };
        }
    };
    let (repo, json) = match repo_of(&cli.command) {
        Some((path, json)) => (Some(path), json),
        None => (None, false),
    };
    // `enabled = false` stops every command before any other check or write (R1).
    if let Some(d) = repo.as_deref().and_then(crate::api::Disabled::of) {
        let _ = emit(|w| output::disabled(w, &d, json));
        return Exit::Disabled.code();
    }
    if let Some(note) = repo.as_deref().and_then(crate::api::settings_note) {
        eprintln!("andon: note: {note}");
    }
    match dispatch(cli.command) {
        Ok(exit) => exit.code(),
        Err(f) => report_failure(f, json).code(),
    }
}

/// Each subcommand to its file's `run`.
fn dispatch(command: Command) -> common::Ran {
    match command {
        Command::Init(a) => init::run(a),
        Command::Index(a) => index::run(a),
        Command::Facts(a) => index::run_facts(a),
        Command::Query(a) => query::run(a),
        Command::Stream(a) => stream::run(a),
        Command::Why(a) => stream::run_why(a),
        Command::Check(a) => check::run(a),
        Command::Config { action } => report::run_config(action),
        Command::Mcp(a) => report::run_mcp(a),
        Command::Report(a) => report::run(a),
        Command::Ledger { action } => status::run_ledger(action),
        Command::Status(a) => status::run(a),
        Command::Loop(a) => loop_step::run(a),
        Command::Propose(a) => propose::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Preflight(a) => loop_step::run_preflight(a),
        Command::Authorize(a) => decide::run(decide::Kind::Authorize(a)),
        Command::Defer(a) => decide::run(decide::Kind::Defer(a)),
        Command::Skip(a) => decide::run(decide::Kind::Skip(a)),
        Command::Confirm(a) => decide::run(decide::Kind::Confirm(a)),
        Command::Override(a) => decide::run(decide::Kind::Override(a)),
    }
}

/// The repository a command works on and whether it speaks JSON (None for commands that must run
/// even when andon is disabled).
fn repo_of(c: &Command) -> Option<(PathBuf, bool)> {
    use status::{LedgerAction, StatusFormatArg};
    Some(match c {
        Command::Init(a) => (a.path.clone(), a.common.json()),
        Command::Index(a) => (a.path.clone(), a.common.json()),
        Command::Facts(a) => (a.path.clone(), a.common.json()),
        Command::Stream(a) => (a.path.clone(), matches!(a.format, stream::GraphFormatArg::Json)),
        Command::Check(a) => {
            (a.path.clone(), matches!(a.format, Some(check::CheckFormatArg::Json | check::CheckFormatArg::Sarif)))
        }
        Command::Query(a) => {
            (a.target().map(|(p, _)| p).unwrap_or_else(|_| ".".into()), matches!(a.format, query::QueryFormatArg::Json))
        }
        Command::Why(a) => (a.path(), a.common.json()),
        Command::Ledger { action: LedgerAction::Check(a) | LedgerAction::Repair(a) } => {
            (a.path.clone(), a.common.json())
        }
        Command::Status(a) => (a.path.clone(), matches!(a.format, StatusFormatArg::Json)),
        Command::Loop(a) => (a.path.clone(), a.common.json()),
        Command::Propose(a) => (a.path.clone(), a.common.json()),
        Command::Verify(a) => (a.path.clone(), a.common.json()),
        Command::Preflight(a) => (a.path.clone(), a.common.json()),
        Command::Authorize(a) | Command::Defer(a) | Command::Skip(a) => (a.path.clone(), a.common.json()),
        Command::Override(a) => (a.decision.path.clone(), a.decision.common.json()),
        Command::Confirm(a) => (a.decision.path.clone(), a.decision.common.json()),
        // The server answers a disabled repository call by call, with each call's document.
        Command::Report(a) => (a.path.clone(), false),
        Command::Config { .. } | Command::Mcp(_) => return None,
    })
}
