//! Why the configuration cannot be read: [`ConfigError`], a mistake at a line of a settings file,
//! and the layer's [`Error`], whose variants say which value is wrong before the caller places it.

use std::path::{Path, PathBuf};

/// A mistake at a line of a settings file (the message quotes the file's own text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the message quotes the settings' own text (names, keys, globs): one line, escaped
        let path = crate::text::line(&self.path.to_string_lossy()).into_owned();
        write!(f, "{path}:{}: {}", self.line, crate::text::line(&self.message))
    }
}

impl std::error::Error for ConfigError {}

/// What is wrong with a setting, a declared stream or a technique name.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A mistake at a line of a settings file.
    #[error(transparent)]
    At(#[from] ConfigError),
    #[error("`{key}` must be true or false")]
    NotBoolean { key: String },
    #[error("`{key}` must be a non-empty path")]
    NotAPath { key: String },
    #[error("`query.{key}` must be a whole number, 0 or more (0 lifts the limit)")]
    QueryNotWhole { key: String },
    #[error("`query.{key}` is not a setting")]
    UnknownQueryKey { key: String },
    #[error("`{key}` is not a setting")]
    UnknownKey { key: String },
    /// A setting's value is outside what it takes (the rule, as the file's reader is told it).
    #[error("{rule}")]
    OutOfRange { rule: &'static str },
    #[error("`authorization_level` must be one of {names} (lowest first)")]
    AuthorizationLevel { names: String },
    #[error("unclosed quote in `{0}`")]
    UnclosedQuote(String),
    #[error("unexpected text after the quoted value: `{0}`")]
    TextAfterQuote(String),
    #[error(
        "{}:{line}: stage `{stage}` has root `{root}`, which is not a directory of the repository; fix the root or remove the stage",
        path.display()
    )]
    RootNotADirectory { path: PathBuf, line: u32, stage: String, root: String },
    #[error("root `{0}` must be a directory relative to the repository, with `/`")]
    RootNotRelative(String),
    #[error("root `{0}` must not contain `..`: name the directory from the repository's root")]
    RootClimbs(String),
}

impl Error {
    /// The file and line the error is at, when it names one.
    pub fn location(&self) -> Option<(&Path, u32)> {
        match self {
            Error::At(e) => Some((&e.path, e.line)),
            Error::RootNotADirectory { path, line, .. } => Some((path, *line)),
            _ => None,
        }
    }
}
