//! The integration test binary: one module per area.

mod agenda;
mod budget;
mod check;
mod cli;
mod cycle;
mod datalog;
mod deep;
mod extract;
mod forged_verdicts;
mod hidden_chars;
mod hostile_check;
mod hostile_index;
mod incremental;
mod injection;
mod ledger;
mod ledger_recovery;
mod names;
mod open_surface;
mod preflight;
mod request;
mod review16;
mod settings;
mod stubs;
mod support;
mod ts_parse;
