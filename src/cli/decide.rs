//! A person's decisions (`authorize`, `defer`, `skip`, `override`, `confirm`): parse, call the
//! API, render. Never reachable from the MCP server.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::common::{Common, Ran, emit};
use crate::andon_loop::{Decision, Presence};
use crate::api;
use crate::ledger::OverrideBasis;
use crate::output;

#[derive(Args)]
pub(super) struct DecisionArgs {
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
    pub(super) path: PathBuf,
    /// No person is at the keyboard: the decision is refused (exit 2) and recorded as pending.
    #[arg(long)]
    unattended: bool,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct OverrideArgs {
    #[command(flatten)]
    pub(super) decision: DecisionArgs,
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
pub(super) struct ConfirmArgs {
    #[command(flatten)]
    pub(super) decision: DecisionArgs,
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

/// Which decision, with what it carries beside the gap, the reason and the approver.
pub(super) enum Kind {
    Authorize(DecisionArgs),
    Defer(DecisionArgs),
    Skip(DecisionArgs),
    Override(OverrideArgs),
    Confirm(ConfirmArgs),
}

pub(super) fn run(kind: Kind) -> Ran {
    let (a, d) = match kind {
        Kind::Authorize(a) => {
            let d = Decision::Authorize { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Defer(a) => {
            let d = Decision::Defer { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Skip(a) => {
            let d = Decision::Skip { by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Confirm(c) => {
            let a = c.decision;
            let d = Decision::Confirm { rule: c.rule, by: a.by.clone(), reason: a.reason.clone() };
            (a, d)
        }
        Kind::Override(o) => {
            let a = o.decision;
            let basis = match o.basis {
                BasisArg::StaleLiveView => OverrideBasis::StaleLiveView,
                BasisArg::ExtractorLimitation => OverrideBasis::ExtractorLimitation,
                BasisArg::ParseError => OverrideBasis::ParseError,
            };
            let d = Decision::Override {
                evidence: o.evidence,
                basis,
                artifact: o.artifact,
                by: a.by.clone(),
                reason: a.reason.clone(),
            };
            (a, d)
        }
    };
    let presence = presence(&a.gap, a.unattended);
    let out = api::decide(&a.path, &a.gap, &d, &presence)?;
    emit(|w| output::decision(w, &out.result, a.common.json()))?;
    Ok(out.exit)
}

/// Who is at the keyboard: a person at a terminal, asked to type the gap id back, or nobody (no
/// terminal on standard input, a CI run, `--unattended`). The rule that only a person's typed-back
/// id records a decision is [`Presence::witness`]'s.
fn presence(gap: &str, unattended: bool) -> Presence {
    if unattended {
        return Presence::Absent("--unattended says no person is at the keyboard".into());
    }
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0") {
        return Presence::Absent("this is a CI run (CI is set)".into());
    }
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        return Presence::Absent("standard input is not a terminal (an agent's or a script's shell has none)".into());
    }
    let mut err = std::io::stderr();
    let _ = write!(err, "A person's decision on `{gap}`. Type the id `{gap}` to record it: ");
    let _ = err.flush();
    let mut typed = String::new();
    if stdin.lock().read_line(&mut typed).is_err() {
        return Presence::Absent("the terminal could not be read".into());
    }
    Presence::Terminal { user: os_user(), terminal: terminal_name(), typed }
}

/// The operating-system user running andon: the password database's name for the effective
/// user, else `$USER`, else the numeric id.
fn os_user() -> String {
    #[cfg(unix)]
    {
        // SAFETY: getpwuid_r writes into the buffers given and returns the entry through `found`.
        unsafe {
            let uid = libc::geteuid();
            let mut pw: libc::passwd = std::mem::zeroed();
            let mut buf = vec![0 as libc::c_char; 4096];
            let mut found: *mut libc::passwd = std::ptr::null_mut();
            if libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) == 0
                && !found.is_null()
                && !pw.pw_name.is_null()
            {
                return std::ffi::CStr::from_ptr(pw.pw_name).to_string_lossy().into_owned();
            }
            return std::env::var("USER").unwrap_or_else(|_| format!("uid {uid}"));
        }
    }
    #[cfg(not(unix))]
    std::env::var("USERNAME").unwrap_or_else(|_| "unknown".into())
}

/// The name of the terminal on standard input (`/dev/pts/3`).
fn terminal_name() -> String {
    #[cfg(unix)]
    {
        let mut buf = vec![0 as libc::c_char; 256];
        // SAFETY: ttyname_r writes a NUL-terminated name into the buffer given.
        if unsafe { libc::ttyname_r(0, buf.as_mut_ptr(), buf.len()) } == 0 {
            // SAFETY: on success the buffer holds a NUL-terminated string.
            return unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned();
        }
        "a terminal".into()
    }
    #[cfg(not(unix))]
    "console".into()
}
