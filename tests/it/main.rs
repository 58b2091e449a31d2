//! The integration test binary: one module per area.

mod cli;
mod extract;
mod incremental;
mod support;
