//! The Datalog layer's error: facts that could not be read, or a budget that ran out while
//! deriving or rendering.

use super::budget::Exceeded;

/// What went wrong loading facts into a store or evaluating rules over them.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The detail facts (references, calls, spans) of an indexed file could not be decoded.
    #[error("{source}")]
    DecodeFacts {
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A stored index the query reads could not be loaded.
    #[error("{source}")]
    LoadIndex {
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Evaluation or the rendered answer ran out of its budget.
    #[error("{0}")]
    Budget(#[from] Exceeded),
}
