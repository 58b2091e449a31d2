//! andon turns a source repository into evidence, and refuses to move on without it.
//!
//! The map of the code (what each top-level module owns and never does, the one-way data flow,
//! the invariants stated as absences) is `ARCHITECTURE.md` at the repository's root. In short,
//! from the bottom layer up: [`text`], [`dialect`], [`facts`], [`extract`], [`resolve`], [`index`],
//! [`datalog`], [`config`], [`ops`], [`capabilities`], [`ledger`], [`panel`], [`ingest`],
//! [`evidence`], [`check`], [`status`], [`preflight`], [`andon_loop`], [`api`] (one function per
//! command, under every front end), [`output`], [`exit`] (the one table of exit codes), and the
//! front ends [`mcp`] (the MCP server) and [`cli`].

pub mod andon_loop;
pub mod api;
pub mod capabilities;
pub mod check;
pub mod cli;
pub mod config;
pub mod datalog;
pub mod dialect;
pub mod evidence;
pub mod exit;
pub mod extract;
pub mod facts;
pub mod index;
pub mod ingest;
pub mod ledger;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod ops;
pub mod output;
pub mod panel;
pub mod preflight;
pub mod resolve;
pub mod status;
pub mod text;
