//! Why a command could not run: one error type for every front end, with each layer's error as
//! its source. It names its own exit code and, where there is one, the `file:line` it is about.

use std::path::{Path, PathBuf};

use crate::exit::Exit;

/// Why a command could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the API refuses on its own (bad usage, a command out of order): the message says what
    /// to do.
    #[error("{0}")]
    Failed(String),
    /// The repository named is not a directory; `hint` says what to pass.
    #[error("{}: no such directory{hint}", path.display())]
    NoSuchDirectory { path: PathBuf, hint: &'static str },
    /// A file the command writes or reads could not be.
    #[error("{}: {what}{source}", path.display())]
    Io {
        path: PathBuf,
        /// What was being done, with its trailing `: ` (or nothing).
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The settings are wrong at a line of a file; `message` quotes that line.
    #[error("{message}")]
    Config { path: PathBuf, line: u32, message: String },
    /// The index is stale or missing and the command was told not to update it.
    #[error("{0}")]
    StaleIndex(String),
    /// The ledger is invalid: nothing acts on it. `dir` is the ledger's directory where the
    /// command names it.
    #[error("{message}")]
    InvalidLedger { dir: Option<PathBuf>, message: String },
    /// The loop refused or failed.
    #[error(transparent)]
    Loop(#[from] crate::andon_loop::Error),
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(crate::ledger::LedgerError),
    /// A use case over the index failed.
    #[error(transparent)]
    Ops(#[from] crate::ops::Error),
    /// The index could not be read or written.
    #[error(transparent)]
    Index(#[from] crate::index::Error),
    /// The stored index, brought up to date, cannot be read.
    #[error("the index cannot be read: {0}")]
    IndexUnreadable(#[source] crate::index::Error),
    /// The settings are wrong (where no line of a file is to blame).
    #[error(transparent)]
    Settings(crate::config::Error),
    /// A Datalog evaluation failed (a budget ran out, facts could not be read).
    #[error(transparent)]
    Datalog(#[from] crate::datalog::Error),
    /// The structural check could not run.
    #[error(transparent)]
    Check(#[from] crate::check::Error),
}

impl Error {
    /// The exit code the error gives.
    pub fn exit(&self) -> Exit {
        match self {
            Error::StaleIndex(_) => Exit::StaleIndex,
            Error::InvalidLedger { .. } => Exit::Findings,
            Error::Failed(_)
            | Error::NoSuchDirectory { .. }
            | Error::Io { .. }
            | Error::Config { .. }
            | Error::Loop(_)
            | Error::Ledger(_)
            | Error::Ops(_)
            | Error::Index(_)
            | Error::IndexUnreadable(_)
            | Error::Settings(_)
            | Error::Datalog(_)
            | Error::Check(_) => Exit::Error,
        }
    }

    /// The file and line the error is about, where it has one.
    pub fn location(&self) -> Option<(&Path, u32)> {
        match self {
            Error::Config { path, line, .. } => Some((path, *line)),
            Error::Ledger(e) => e.location(),
            Error::Settings(e) => e.location(),
            Error::Check(e) => e.location(),
            _ => None,
        }
    }

    pub(crate) fn no_such_directory(path: &Path, hint: &'static str) -> Error {
        Error::NoSuchDirectory { path: path.to_path_buf(), hint }
    }

    pub(crate) fn io(path: &Path, what: &'static str, source: std::io::Error) -> Error {
        Error::Io { path: path.to_path_buf(), what, source }
    }
}

impl From<crate::ledger::LedgerError> for Error {
    /// An invalid ledger is its own kind: nothing acts on it.
    fn from(e: crate::ledger::LedgerError) -> Error {
        match e {
            e @ crate::ledger::LedgerError::Invalid(_) => Error::InvalidLedger { dir: None, message: e.to_string() },
            e => Error::Ledger(e),
        }
    }
}

impl From<crate::config::Error> for Error {
    /// A mistake at a line of the settings quotes that line.
    fn from(e: crate::config::Error) -> Error {
        match e {
            crate::config::Error::At(e) => Error::from(e),
            e => Error::Settings(e),
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
