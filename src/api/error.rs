//! Why a command could not run: one error type for every front end, which names its own exit
//! code and, where there is one, the `file:line` it is about.

use std::path::PathBuf;

use crate::exit::Exit;

/// Why a command could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Bad usage, bad configuration, an I/O error: andon could not run (the message says what to
    /// do, with `file:line` where there is one).
    #[error("{0}")]
    Failed(String),
    /// The settings are wrong at a line of a file; `quoted` is that line as the message shows it.
    #[error("{message}")]
    Config { path: PathBuf, line: u32, message: String },
    /// The index is stale or missing and the command was told not to update it.
    #[error("{0}")]
    StaleIndex(String),
    /// The ledger is invalid: nothing acts on it. `dir` is the ledger's directory where the
    /// command names it.
    #[error("{message}")]
    InvalidLedger { dir: Option<PathBuf>, message: String },
}

impl Error {
    /// The exit code the error gives.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Failed(_) | Error::Config { .. } => Exit::Error,
            Error::StaleIndex(_) => Exit::StaleIndex,
            Error::InvalidLedger { .. } => Exit::Findings,
        }
    }

    /// The file and line the error is about, where it has one.
    pub fn location(&self) -> Option<(&std::path::Path, u32)> {
        match self {
            Error::Config { path, line, .. } => Some((path, *line)),
            _ => None,
        }
    }
}

impl From<String> for Error {
    fn from(m: String) -> Error {
        Error::Failed(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Error {
        Error::Failed(m.to_string())
    }
}

impl From<crate::config::ConfigError> for Error {
    /// A configuration error, with the offending line of the file quoted.
    fn from(e: crate::config::ConfigError) -> Error {
        let message = super::config_error(&e);
        Error::Config { path: e.path, line: e.line, message }
    }
}
