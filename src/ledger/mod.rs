//! The ledger (R34–R47): the state that must survive any interruption.
//!
//! - `ledger.jsonl` under `ledger_dir`: a header line (format, andon and rules versions, the
//!   repository), then one event per line. Append-only; strict typed records (required fields are
//!   non-optional, unknown fields are errors); one record is one gap; claim, evidence, fix and
//!   references are separate fields.
//! - One writer: [`append`] takes an exclusive lock, checks the whole log and the new events
//!   against it (a transition the state does not allow is refused and nothing is written), writes
//!   whole lines in one write, fsyncs, and re-renders `ledger.md` (write, fsync, rename).
//! - A torn last line (no newline) is detected and reported, never dropped or appended after.
//! - The header is written once, when the ledger is created; `ledger.md` is a view rendered from
//!   the log and that header alone (`view` says how it stands against the log): one a writer left behind the log is rendered again
//!   by [`repair`] or the next step ([`refresh_view`]).
//! - Current state is a fold of the events ([`fold`]); [`check`] validates everything and the
//!   agreement of `ledger.md` with the log; [`facts`] exports the state as relations for queries.

pub mod andon_rule;
pub mod chain;
mod dir;
mod error;
mod fold;
mod integrity;
mod parse;
mod presence;
mod records;
mod render;
mod state;
mod store;
mod view;

pub use crate::config::BlastRadius;
pub use dir::{dir_of, leads_out, outside, repo_identity};
pub use error::{Error, Issue, LedgerError};
pub use fold::{apply, fold};
pub use integrity::{Inspection, Repaired, SetAside, check, inspect, log_problems, repair};
pub use parse::{Log, parse, parse_bytes};
pub use presence::{Presence, presence};
pub use records::*;
pub use render::render;
pub use state::*;
pub use store::{append, load, refresh_view, rendered};
pub use view::View;

pub const LOG_FILE: &str = "ledger.jsonl";
pub const HUMAN_FILE: &str = "ledger.md";
const LOCK_FILE: &str = ".lock";
