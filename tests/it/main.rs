//! The integration test binary: one module per area.

mod check;
mod cli;
mod cycle;
mod datalog;
mod deep;
mod extract;
mod hidden_chars;
mod incremental;
mod injection;
mod ledger;
mod preflight;
mod request;
mod settings;
mod support;
