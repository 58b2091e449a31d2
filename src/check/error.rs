//! Why `andon check` (or `andon init`'s drafting, or `--base`) could not judge: the layer's typed
//! [`Error`], and [`CheckError`], the form the commands take it in (a configuration error at its
//! line, or anything else as its message).

use std::path::{Path, PathBuf};

use crate::config::ConfigError;

/// What went wrong while judging, before it is told to the user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is wrong at a line of its file.
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("--base needs git on PATH: {0}")]
    NoGit(#[source] std::io::Error),
    #[error("git {args}: {stderr}")]
    Git { args: String, stderr: String },
    #[error("--base `{rev}` is not a commit of the repository at {}", root.display())]
    NotACommit { rev: String, root: PathBuf },
    #[error("git cat-file: {0}")]
    CatFile(#[source] std::io::Error),
    #[error("git cat-file: unexpected header `{0}`")]
    CatFileHeader(String),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("indexing --base {rev}: {source}")]
    IndexBase {
        rev: String,
        #[source]
        source: crate::index::Error,
    },
    /// The index written for `--base` cannot be read (why).
    #[error(transparent)]
    LoadBase(crate::index::Error),
    #[error("the --base index was not written")]
    BaseNotWritten,
    /// The contracts could not be judged on the `--base` tree.
    #[error("{0}")]
    Base(#[source] Box<CheckError>),
    #[error("cannot read rules file `{file}`: {source}")]
    RulesFile {
        file: String,
        #[source]
        source: std::io::Error,
    },
    /// A rules file does not parse or check (the dialect's diagnostic).
    #[error("{0}")]
    Rules(crate::dialect::DialectError),
    #[error("`{file}` derives no `Violation` relation; declare `.decl Violation(path: path, line: int, message: sym)`")]
    NoViolation { file: String },
    /// A rule's evaluation failed (why), with notes on what in it is costly.
    #[error("{why}{notes}")]
    RuleEvaluation { why: String, notes: String },
    #[error("`{text}` is not a valid glob: {source}")]
    BadGlob {
        text: String,
        #[source]
        source: globset::Error,
    },
    #[error("glob `{text}` matches no source file{hint}")]
    GlobMatchesNothing { text: String, hint: String },
    /// A selector names nothing the index holds (`what`: "no file", "no stage", ...).
    #[error("`{text}` names {what} of the index{hint}")]
    NamesNothing { text: String, what: String, hint: String },
    #[error(
        "andon init could not draw contracts that hold today ({blocking} blocking findings, {stale} stale exceptions)"
    )]
    InitUnsettled { blocking: usize, stale: usize },
}

impl Error {
    /// The file and line of a configuration error.
    pub fn location(&self) -> Option<(&Path, u32)> {
        match self {
            Error::Config(e) => Some((&e.path, e.line)),
            _ => None,
        }
    }
}

/// A failed check as the commands take it: a configuration error (exit 2) keeps its file and line
/// so the offending line can be quoted; anything else is its message.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The configuration is wrong (exit 2): file, line, message.
    #[error("{0}")]
    Config(ConfigError),
    #[error("{0}")]
    Other(String),
}

impl From<Error> for CheckError {
    fn from(e: Error) -> CheckError {
        match e {
            Error::Config(c) => CheckError::Config(c),
            other => CheckError::Other(other.to_string()),
        }
    }
}
