//! The ledger's errors: [`Error`], the rule of the fold an event breaks (the state does not allow
//! it), and [`LedgerError`], why the ledger could not be read, written or repaired; and [`Issue`].

use std::path::{Path, PathBuf};

use super::andon_rule::Condition;
use super::{GapStatus, HUMAN_FILE, LOG_FILE, Verdict, Wire, WireStatus};

/// A problem with the ledger: the line it is on (1 is the header) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub line: u64,
    pub message: String,
}

/// Why the state does not allow an event: the rule of the fold it breaks ([`super::apply`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    // A gap's lifecycle.
    #[error("no gap `{gap}` was opened")]
    NoGap { gap: String },
    #[error("gap `{gap}` is already open")]
    GapAlreadyOpen { gap: String },
    #[error("gap `{gap}` has no location; a gap needs a concrete file (and line)")]
    GapWithoutLocation { gap: String },
    #[error("gap `{gap}` has no summary")]
    GapWithoutSummary { gap: String },
    #[error("wire gap `{gap}` names no wire")]
    WireGapWithoutWire { gap: String },
    #[error("gap `{gap}` is closed; a gap found again opens anew")]
    RestatedClosed { gap: String },
    #[error("gap `{gap}` is restated without a location or a summary")]
    RestatedIncomplete { gap: String },
    /// The gap is closed or vanished already.
    #[error("gap `{gap}` is {}", status.name())]
    GapFinished { gap: String, status: GapStatus },
    #[error("gap `{gap}` is {} and takes no proposal", status.name())]
    TakesNoProposal { gap: String, status: GapStatus },
    #[error("the proposal for `{gap}` needs a description and a declared write-set")]
    ProposalIncomplete { gap: String },
    #[error(
        "gap `{gap}` halts blocked by the environment, but its last evidence names no capability it could not run without"
    )]
    HaltWithoutCapability { gap: String },
    #[error("gap `{gap}` halts on authorization without a proposal's blast radius")]
    HaltWithoutProposal { gap: String },
    #[error("gap `{gap}` stands on a tier-1 hold; evidence `{evidence}` is not about changed code")]
    GapOnHold { gap: String, evidence: String },
    #[error("gap `{gap}` is already {}", status.name())]
    AlreadyFinished { gap: String, status: GapStatus },
    #[error("gap `{gap}` closes on evidence `{evidence}`, which was never recorded")]
    ClosedOnUnrecorded { gap: String, evidence: String },
    #[error("gap `{gap}` closes on evidence `{evidence}`, which does not prove it")]
    ClosedWithoutProof { gap: String, evidence: String },
    #[error(
        "gap `{gap}` closes without a proposal's blast radius, and `{evidence}` is not the proof of a verified fix of another gap"
    )]
    ClosedWithoutProposal { gap: String, evidence: String },
    #[error("gap `{gap}` is {}: only an open gap vanishes from the scan", status.name())]
    VanishedNotOpen { gap: String, status: GapStatus },
    #[error("gap `{gap}` vanishes from no scanned tree")]
    VanishedFromNoTree { gap: String },
    // A person's decisions.
    #[error("authority for `{gap}` names who approved it")]
    AuthorityWithoutApprover { gap: String },
    #[error("no judging change `{id}` waits for a person: run `andon loop` to see what waits")]
    NoJudgingChange { id: String },
    #[error("gap `{gap}` is not halted awaiting authorization, nor proposed")]
    NotAwaitingAuthority { gap: String },
    #[error("authority for `{gap}` binds to one diff (its hash) and needs a reason")]
    AuthorityUnbound { gap: String },
    #[error("no evidence `{evidence}` to override")]
    NoEvidenceToOverride { evidence: String },
    #[error("evidence `{evidence}` is a tier-1 hold: no override or adjudication clears it")]
    OverrideOfHold { evidence: String },
    #[error("only a tier-2 contradiction can be overridden; `{evidence}` is not one")]
    NotTier2Contradiction { evidence: String },
    #[error("evidence `{evidence}` is not about gap `{gap}`")]
    EvidenceNotAboutGap { evidence: String, gap: String },
    #[error("an override of `{evidence}` names who decided and why")]
    OverrideWithoutReason { evidence: String },
    #[error("deferring or skipping `{gap}` names who decided")]
    SetAsideWithoutWho { gap: String },
    #[error("deferring or skipping `{gap}` needs a reason")]
    SetAsideWithoutReason { gap: String },
    #[error("confirming `{rule}` of stage `{stage}` names who decided and why")]
    ConfirmWithoutReason { stage: String, rule: String },
    #[error("stage `{stage}` has no brief context")]
    NoBriefContext { stage: String },
    #[error("`{rule}` is not an entry gate of stage `{stage}`")]
    NotEntryGate { stage: String, rule: String },
    // Evidence and the wires it backs.
    #[error("evidence `{evidence}` is already recorded")]
    EvidenceAlreadyRecorded { evidence: String },
    #[error("evidence `{evidence}` names gap `{gap}`, which was never opened")]
    EvidenceOfUnopenedGap { evidence: String, gap: String },
    #[error("evidence `{evidence}` has tier {tier:?}; tiers are 1, 2, 3")]
    BadTier { evidence: String, tier: Option<u8> },
    #[error("evidence `{evidence}` both holds and proves")]
    HoldsAndProves { evidence: String },
    #[error("an audit of evidence `{evidence}`, which is not recorded")]
    AuditOfUnrecorded { evidence: String },
    #[error("an audit of `{evidence}` with strength `{strength}`")]
    BadAuditStrength { evidence: String, strength: String },
    #[error("wire {wire} changes status on evidence `{evidence}`, which was never recorded")]
    WireOnUnrecorded { wire: Wire, evidence: String },
    #[error("evidence `{evidence}` is about {about}, not {wire}")]
    EvidenceOfOtherWire { evidence: String, about: Wire, wire: Wire },
    #[error("evidence `{evidence}` ({verdict:?}) does not back status {status:?} of {wire}")]
    EvidenceDoesNotBack { evidence: String, verdict: Verdict, status: WireStatus, wire: Wire },
    #[error("wire {wire} stands on tier-1 hold `{hold}`; only a proof on changed code replaces it")]
    WireOnHold { wire: Wire, hold: String },
    // The loop's progress.
    #[error("pass {pass} closes on gap `{gap}`, which was never opened")]
    PassOnUnopenedGap { pass: u32, gap: String },
    #[error("pass {pass} closes after pass {last}")]
    PassOutOfOrder { pass: u32, last: u32 },
    #[error("pass {pass} claims an advance the andon rule forbids ({}: {why})", condition.token())]
    AdvanceForbidden { pass: u32, condition: Condition, why: String },
    #[error("cycle {cycle}: intent must be harden, feature or split")]
    UnknownIntent { cycle: u32 },
    #[error("cycle {cycle} converges after cycle {last}")]
    CycleOutOfOrder { cycle: u32, last: u32 },
    #[error("cycle {cycle} claims {passes} passes; the history has {history}")]
    TooManyPasses { cycle: u32, passes: u32, history: u32 },
    #[error("cycle {cycle} claims to be hardened, but it had passes, settled gaps, or gaps a person set aside")]
    FalselyHardened { cycle: u32 },
    #[error(
        "cycle {cycle} names environment-blocked wires [{}], but the deferred gaps whose proofs could not run here are on [{}]",
        wire_list(claimed),
        wire_list(actual)
    )]
    EnvironmentBlockedMismatch { cycle: u32, claimed: Vec<Wire>, actual: Vec<Wire> },
}

fn wire_list(ws: &[Wire]) -> String {
    ws.iter().map(Wire::to_string).collect::<Vec<_>>().join(", ")
}

/// Why the ledger could not be read, written or repaired.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A failure its caller put in words.
    #[error("{0}")]
    Io(String),
    /// A file of the ledger could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The ref that anchors the ledger's head could not be moved in the git repository holding `dir`.
    #[error(
        "could not move {} in the git repository holding {}: nothing was written; check that git works there",
        super::chain::LEDGER_REF,
        dir.display()
    )]
    Anchor { dir: PathBuf },
    /// The log breaks the ledger's rules; nothing may act on it.
    #[error(
        "the ledger is invalid ({} problem(s); first: {}); run `andon ledger check`",
        .0.len(),
        first_issue(.0)
    )]
    Invalid(Vec<Issue>),
    /// A new event the state does not allow (or a step its caller refused); nothing was written.
    #[error("{0}")]
    Refused(String),
    /// The records were written, but the view could not be rendered from them.
    #[error(
        "the records were written to {LOG_FILE}, but {HUMAN_FILE} could not be rendered ({source}); the next write renders it again"
    )]
    Unrendered {
        #[source]
        source: Box<LedgerError>,
    },
    /// `ledger.md` (at `path`) differs from the log's rendering at `line` and is no earlier one: a
    /// hand edit; nothing was written.
    #[error(
        "refused, nothing written: {HUMAN_FILE} differs from {LOG_FILE} at its line {line}, and it is no earlier \
         rendering of the log: one of them was edited by hand; run `andon ledger check`, then restore the edited \
         file (or remove {HUMAN_FILE} if only the view was edited)"
    )]
    ViewEdited { path: PathBuf, line: u64 },
    /// `repair` refused: `ledger.md` (at `path`) disagrees with a whole log at `line`, which shows
    /// the record on `log_line` of the log when it is a record's history line.
    #[error(
        "not repaired: {}; if the log is right as it is (only {HUMAN_FILE} was edited, or the log was restored), delete {HUMAN_FILE} and run `andon ledger repair` again, else restore {LOG_FILE} from a copy or version control",
        view_disagrees(*line, *log_line)
    )]
    ViewDisagrees { path: PathBuf, line: u64, log_line: Option<u64> },
    /// `repair` refused: the log (at `path`) has a problem other than an interrupted last write.
    #[error(
        "not repaired: line {}: {}; only an interrupted last write is repaired; restore {LOG_FILE} from a copy or version control",
        issue.line,
        issue.message
    )]
    NotRepairable { path: PathBuf, issue: Issue },
}

fn first_issue(issues: &[Issue]) -> String {
    issues.first().map(|i| format!("line {}: {}", i.line, i.message)).unwrap_or_default()
}

fn view_disagrees(line: u64, log_line: Option<u64>) -> String {
    match log_line {
        Some(n) => format!(
            "{HUMAN_FILE} disagrees with the log at its line {line}, which shows the record on line {n} of {LOG_FILE}"
        ),
        None => format!("{HUMAN_FILE} disagrees with the log at its line {line}"),
    }
}

impl LedgerError {
    /// The file and line the error is about, when it names one.
    pub fn location(&self) -> Option<(&Path, u32)> {
        match self {
            LedgerError::ViewEdited { path, line } | LedgerError::ViewDisagrees { path, line, .. } => {
                Some((path, u32::try_from(*line).unwrap_or(u32::MAX)))
            }
            LedgerError::NotRepairable { path, issue } => Some((path, u32::try_from(issue.line).unwrap_or(u32::MAX))),
            _ => None,
        }
    }
}
