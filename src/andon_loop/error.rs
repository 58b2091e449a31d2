//! The loop's error: what went wrong reading, proving or recording, as a typed value.

/// An error of the loop layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {}
