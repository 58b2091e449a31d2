//! Verification approaches beyond structure (spec 000 §6, R88–R105): the routing decision table,
//! and one module per approach family that turns what a check showed into a verdict. Every module
//! here is pure: commands are run by the caller (the loop), outputs are handed in as text.

pub mod agentic;
pub mod numeric;
pub mod property;
pub mod route;
pub mod rubric;
