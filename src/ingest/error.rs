//! What can be wrong with a brief: one value that is not accepted ([`Error`]), one problem at a
//! file and line ([`BriefError`]), and why [`super::load`] returned no brief ([`LoadError`]).

use std::path::{Path, PathBuf};

use super::{PRODUCER, TAGS, quote};

/// One brief value andon does not accept. The messages quote the brief's text through
/// [`crate::text::short`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("confidence {} is not one of Low, Medium, High", quote(.value))]
    RuleConfidence { value: String },
    #[error("priority {} is not one of P0, P1, P2, P3{}", quote(.value), did_you_mean(*.suggestion))]
    Priority { value: String, suggestion: Option<&'static str> },
    #[error("unknown tag {}{}; accepted tags: {}", quote(.tag), did_you_mean(*.suggestion), accepted_tags())]
    Tag { tag: String, suggestion: Option<&'static str> },
    #[error("empty path")]
    EmptyPath,
    #[error("path {} {why}", quote(.path))]
    Path { path: String, why: &'static str },
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default()
}

fn accepted_tags() -> String {
    TAGS.iter().map(|(t, _)| *t).collect::<Vec<&str>>().join(", ")
}

/// One problem with the brief, at a file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}: {}", .file.display(), .line, .message)]
pub struct BriefError {
    pub file: PathBuf,
    pub line: u32,
    /// One line; text from the brief in it is quoted through [`crate::text::short`].
    pub message: String,
}

impl BriefError {
    pub fn location(&self) -> Option<(&Path, u32)> {
        Some((&self.file, self.line))
    }
}

/// Why [`super::load`] returned no brief.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// The ingest source does not exist yet: `missing` names the absent files
    /// ([`super::BRIEF_FILE`] and/or [`super::SUMMARY_FILE`], in that order).
    #[error(
        "the ingest source does not exist yet: {} has no {}; run the external planning step ({PRODUCER}) to produce the modernization brief",
        .dir.display(),
        .missing.join(" or ")
    )]
    Absent { dir: PathBuf, missing: Vec<String> },
    /// Both files exist but do not make a valid brief: every problem found, summary errors
    /// first, each file's errors in line order.
    #[error("{}", lines(.0))]
    Invalid(Vec<BriefError>),
}

impl LoadError {
    /// The file and line of the first problem, when the brief is invalid.
    pub fn location(&self) -> Option<(&Path, u32)> {
        match self {
            LoadError::Absent { .. } => None,
            LoadError::Invalid(errors) => errors.first().and_then(BriefError::location),
        }
    }
}

fn lines(errors: &[BriefError]) -> String {
    errors.iter().map(BriefError::to_string).collect::<Vec<String>>().join("\n")
}
