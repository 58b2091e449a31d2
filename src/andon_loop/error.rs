//! The loop's error: what went wrong reading, proving or recording, as a typed value whose text
//! is the message a person reads.

use std::path::{Path, PathBuf};

/// An error of the loop layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read, written or created.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A pending artifact file could not be read (its path is reported beside it).
    #[error("{source}")]
    ArtifactUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A pending artifact file is not the JSON its kind has.
    #[error("{source}")]
    ArtifactMalformed {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The house rules file exists but cannot be read.
    #[error("{}: cannot read the house rules ({source}); fix or remove it", path.display())]
    HouseRules {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A rubric or process record does not parse.
    #[error("{}: {}", path.display(), problems.join("; "))]
    Record { path: PathBuf, problems: Vec<String> },
    /// Ingest mode's brief is absent.
    #[error("{0}; andon does not fall back to scanning in ingest mode")]
    BriefAbsent(crate::ingest::LoadError),
    /// Ingest mode's brief is invalid.
    #[error("the brief is invalid:\n{}", problems.join("\n"))]
    BriefInvalid { problems: Vec<String> },
    /// The facts a proof reads could not be derived from the index.
    #[error("{0}")]
    Facts(String),
    /// The ledger could not be read.
    #[error("{0}")]
    Ledger(crate::ledger::LedgerError),
    /// A rule's priority or confidence is not one the brief knows.
    #[error("{0}")]
    Obligation(String),
    /// An event does not apply to the state.
    #[error("{0}")]
    Event(String),

    /// `root` is not in a git repository.
    #[error("not a git repository")]
    NotGit,
    /// git itself could not be started by a verify.
    #[error("verify needs git on PATH: {0}")]
    GitMissing(#[source] std::io::Error),
    /// git could not be started for a scratch copy.
    #[error("cannot run git: {0}")]
    GitUnavailable(#[source] std::io::Error),
    /// git could not be started to keep a proven tree.
    #[error("{0}")]
    GitSpawn(#[source] std::io::Error),
    /// A git command failed.
    #[error("git {args}: {stderr}")]
    Git { args: String, stderr: String },
    /// `git update-ref` failed.
    #[error("git update-ref failed")]
    UpdateRef,

    /// The proposal has no base commit to diff against.
    #[error("the proposal has no base commit (not a git repository): verify needs one to compute the diff")]
    NoBaseCommit,
    /// The diff has no file header.
    #[error("the diff names no file (expected unified diff headers `--- a/...` / `+++ b/...`)")]
    DiffNamesNoFile,
    /// A `diff --git` header could not be read.
    #[error("cannot read the diff header `{line}`")]
    DiffHeader { line: String },
    /// The diff writes outside the repository.
    #[error("the diff writes `{path}`, outside the repository")]
    DiffOutside { path: String },
    /// The diff writes a path that is not plain and relative.
    #[error("the diff writes `{path}`: not a plain relative path (no empty or `.` components)")]
    DiffPathNotPlain { path: String },
    /// The handed-in diff is not the working tree's.
    #[error("the diff does not describe the working tree: it leaves out {}", missing.join(", "))]
    DiffLeavesOut { missing: Vec<String> },
    /// The applied change touches no file.
    #[error("the applied change touches no file: apply the fix first (a hold is cleared only by changed code)")]
    NoChange,
    /// There is no git history to take the tree without the fix from.
    #[error("the repository has no git history to take the tree without the fix from")]
    NoHistory,
    /// The working tree is no longer the change `andon verify` proved.
    #[error("the working tree changed after `andon verify`; verify it again")]
    ChangedSinceVerify,
    /// The working tree changes files outside the proposal's write-set.
    #[error("files outside the write-set: {}", files.join(", "))]
    OutsideWriteSet { files: Vec<String> },
    /// The working tree's change could not be checked against the proposal.
    #[error("the change cannot be checked")]
    Uncheckable,
    /// The working tree changed while the checks ran.
    #[error("the working tree changed while the checks ran")]
    TreeChanged,

    /// No scratch directory could be made.
    #[error("no scratch directory {}: {source}", path.display())]
    ScratchDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file could not be copied into a scratch tree.
    #[error("{path}: cannot copy into the scratch tree: {source}")]
    ScratchCopy {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// An ignored file could not be linked into a scratch tree.
    #[error("{path}: cannot link it: {source}")]
    ScratchLink {
        path: String,
        #[source]
        source: std::io::Error,
    },

    /// `--approach` names another approach than the one routing chose (no tie).
    #[error(
        "--approach {approach} is refused: routing chose {routed} ({why}); a person chooses only between the candidates of a tie"
    )]
    ApproachNotATie { approach: String, routed: String, why: String },
    /// `--approach` is not one of the tie's candidates.
    #[error("--approach {approach} is not one of the tied candidates ({})", candidates.join(", "))]
    ApproachNotACandidate { approach: String, candidates: Vec<String> },
    /// `--approach` settles none of the obligations' ties.
    #[error(
        "--approach {approach} is refused: it settles no routing tie (a person chooses only between the candidates of a tie)"
    )]
    ApproachSettlesNoTie { approach: String },

    /// The gap is not in the ledger.
    #[error("no gap `{gap}` in the ledger")]
    NoGap { gap: String },
    /// The gap is not in a state verify proves.
    #[error("gap `{gap}` is {status}; only a proposed gap, or one halted on its last proof, is verified")]
    NotVerifiable { gap: String, status: String },
    /// The gap has no recorded proposal.
    #[error("gap `{gap}` has no recorded proposal")]
    NoProposal { gap: String },
    /// `--proposer` names someone other than the recorded proposer.
    #[error(
        "gap `{gap}` was proposed by `{recorded}` (recorded with the proposal); --proposer `{given}` names someone else"
    )]
    OtherProposer { gap: String, recorded: String, given: String },

    /// There is no ledger to audit.
    #[error("the loop has never run here: no ledger to audit")]
    NoLedgerToAudit,
    /// The evidence is not in the ledger.
    #[error("no evidence `{id}` in the ledger")]
    NoEvidence { id: String },
    /// The evidence is itself an audit.
    #[error("`{id}` is itself an audit; an audit audits a proof")]
    AuditOfAudit { id: String },
    /// The evidence names no gap's file.
    #[error("evidence `{id}` is not about a gap's file: there is nothing to mutate")]
    NothingToMutate { id: String },
    /// No mutation tool serves the file's language.
    #[error("`{path}` is in no language a mutation tool serves")]
    NoMutationTool { path: String },

    /// A request's wire names one stage twice.
    #[error("a stage-to-stage wire names both stages")]
    WireStagesMissing,
    /// A request's site names an empty file.
    #[error("the file is empty")]
    SiteFileEmpty,
    /// A request's site is not a relative path.
    #[error("`{path}` must be a relative path inside the repository")]
    SiteNotRelative { path: String },
    /// A request's site line is 0.
    #[error("lines count from 1")]
    SiteLineZero,
    /// A request object has a key it does not know.
    #[error("unknown key `{key}` (one of: {})", known.join(", "))]
    UnknownKey { key: String, known: Vec<&'static str> },
    /// A request's `line` is a number but not a whole one from 1.
    #[error("`line` must be a whole number from 1")]
    LineNotWhole,
    /// A request's `line` is not a number.
    #[error("`line` must be a number")]
    LineNotNumber,
    /// A request's wire object names neither stages nor a site.
    #[error("give `from` and `to` (stages), or `path` (and `line`) of the site")]
    WireShape,
    /// A request's wire is neither a string nor an object.
    #[error("a string (`core -> api`, `src/x.py:12`) or an object")]
    WireType,
    /// A request's rule is not an object.
    #[error("a rule is an object")]
    RuleType,
    /// A rule's field is not a non-empty string.
    #[error("`{key}` must be a non-empty string")]
    FieldNotString { key: String },
    /// A rule's field is missing.
    #[error("`{key}` is missing")]
    FieldMissing { key: String },
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>) -> impl FnOnce(std::io::Error) -> Error {
        let path = path.as_ref().to_path_buf();
        move |source| Error::Io { path, source }
    }
}
