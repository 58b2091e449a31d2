//! Ingest mode's input (spec 000 §7.1; R51–R58): the modernization brief an external planning step
//! writes into `self_assess_output_dir` — [`BRIEF_FILE`] and its sidecar [`SUMMARY_FILE`] — read,
//! validated and turned into phases, contract rules and work items. The format is documented in
//! `docs/brief-format.md`.
//!
//! The sidecar JSON is authoritative for structure; the Markdown must agree with it phase by phase
//! (one `## Phase <id>: <name>` heading per phase, in the same order) and is otherwise free prose.
//!
//! The brief is external, untrusted text: strings are stored verbatim, every error message quotes
//! them through [`crate::text::short`], and nothing here panics on any input.

mod error;
mod json;
mod markdown;
mod summary;
#[cfg(test)]
mod tests;

use std::path::Path;

pub use error::{BriefError, Error, LoadError};

pub const BRIEF_FILE: &str = "MODERNIZATION_BRIEF.md";
pub const SUMMARY_FILE: &str = "transform_brief_summary.json";
/// The sidecar's `format` value this andon reads.
pub const FORMAT: u64 = 1;
/// The external step that produces the brief (named when it is absent, R52).
pub const PRODUCER: &str = "self-assess-transform-brief";
/// The longest id (phase, rule, work item) accepted.
pub const ID_MAX: usize = 64;
/// The longest string [`crate::text::short`] returns, in chars.
pub use crate::text::SHORT_MAX as INLINE_MAX;

/// A parsed brief: its phases in the brief's own (leaf-first) order (R53).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Brief {
    pub phases: Vec<Phase>,
}

/// One phase of the brief: one stage of the stream (R53).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    pub id: String,
    pub name: String,
    /// With `contract`, the contract of the wire entering this stage (R54).
    pub exit_criteria: Vec<String>,
    /// The Behavior Contract: one verification obligation per rule (R56).
    pub contract: Vec<ContractRule>,
    /// One gap each (R55).
    pub work_items: Vec<WorkItem>,
    /// Stage context only; never gaps (R58).
    pub advisory: Vec<String>,
    /// The line of the phase's heading in [`BRIEF_FILE`].
    pub line: u32,
}

/// One Behavior Contract rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractRule {
    pub id: String,
    pub rule: String,
    /// How the rule is to be validated (the brief's validation strategy).
    pub validation: String,
    pub confidence: RuleConfidence,
    pub priority: Priority,
}

/// A rule's confidence, ordered `Low < Medium < High`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleConfidence {
    Low,
    Medium,
    High,
}

/// A rule's priority; `P0` is the top priority (a blocker). Ordered `P0 < P1 < P2 < P3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    P0,
    P1,
    P2,
    P3,
}

/// One work item: a finding at a file (and line), tagged with a domain and a named fix owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkItem {
    pub id: String,
    pub title: String,
    /// Repository-relative, `/`-separated, normalized.
    pub path: String,
    /// 1-based.
    pub line: Option<u32>,
    pub tag: String,
    pub owner: String,
}

/// The kind of gap a work item becomes (R55).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ItemKind {
    Bug,
    Wire,
    Feature,
}

/// The accepted work-item tags and the kind each maps to (R55), in documentation order.
pub const TAGS: [(&str, ItemKind); 16] = [
    ("code-idiom", ItemKind::Bug),
    ("lint", ItemKind::Bug),
    ("lint-audit", ItemKind::Bug),
    ("ui-audit", ItemKind::Bug),
    ("confab:dependency-audit", ItemKind::Bug),
    ("confab:contract-drift", ItemKind::Bug),
    ("confab:assertion-audit", ItemKind::Bug),
    ("arch-health", ItemKind::Wire),
    ("arch-health:merge", ItemKind::Wire),
    ("arch-health:split", ItemKind::Wire),
    ("arch-health:layering", ItemKind::Wire),
    ("arch-health:layering-fix", ItemKind::Wire),
    ("documented-absent", ItemKind::Feature),
    ("documented-but-absent", ItemKind::Feature),
    ("docs-drift", ItemKind::Feature),
    ("docs-drift:absent", ItemKind::Feature),
];

impl RuleConfidence {
    pub const ALL: [RuleConfidence; 3] = [RuleConfidence::Low, RuleConfidence::Medium, RuleConfidence::High];

    pub fn name(self) -> &'static str {
        match self {
            RuleConfidence::Low => "Low",
            RuleConfidence::Medium => "Medium",
            RuleConfidence::High => "High",
        }
    }

    /// `low`, `medium` or `high`, in any case.
    pub fn parse(s: &str) -> Result<RuleConfidence, Error> {
        RuleConfidence::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::RuleConfidence { value: s.to_string() })
    }
}

impl Priority {
    pub const ALL: [Priority; 4] = [Priority::P0, Priority::P1, Priority::P2, Priority::P3];

    pub fn name(self) -> &'static str {
        match self {
            Priority::P0 => "P0",
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
        }
    }

    /// Exactly `P0` .. `P3`.
    pub fn parse(s: &str) -> Result<Priority, Error> {
        if let Some(p) = Priority::ALL.into_iter().find(|p| p.name() == s) {
            return Ok(p);
        }
        let suggestion =
            Priority::ALL.into_iter().find(|p| p.name().eq_ignore_ascii_case(s.trim())).map(Priority::name);
        Err(Error::Priority { value: s.to_string(), suggestion })
    }
}

impl ItemKind {
    pub fn name(self) -> &'static str {
        match self {
            ItemKind::Bug => "bug",
            ItemKind::Wire => "wire",
            ItemKind::Feature => "feature",
        }
    }

    /// The ledger's gap kind for this item kind.
    pub fn gap_kind(self) -> crate::ledger::GapKind {
        match self {
            ItemKind::Bug => crate::ledger::GapKind::Bug,
            ItemKind::Wire => crate::ledger::GapKind::Wire,
            ItemKind::Feature => crate::ledger::GapKind::Feature,
        }
    }

    /// The kind `tag` maps to (R55); an unknown tag is an error listing the accepted ones.
    pub fn from_tag(tag: &str) -> Result<ItemKind, Error> {
        let lower = tag.trim().to_lowercase();
        if let Some((_, kind)) = TAGS.iter().find(|(t, _)| *t == lower) {
            return Ok(*kind);
        }
        let suggestion = TAGS
            .iter()
            .map(|(t, _)| (crate::text::edit_distance(&lower, t), *t))
            .filter(|&(d, t)| d <= 3 && d < t.len())
            .min()
            .map(|(_, t)| t);
        Err(Error::Tag { tag: tag.to_string(), suggestion })
    }
}

impl WorkItem {
    /// The kind of gap this item becomes, from its tag (R55).
    pub fn kind(&self) -> Result<ItemKind, Error> {
        ItemKind::from_tag(&self.tag)
    }
}

impl ContractRule {
    /// A top-priority (P0) rule with confidence below High blocks the phase until a human
    /// confirms it (R57).
    pub fn is_entry_gate(&self) -> bool {
        self.priority == Priority::P0 && self.confidence < RuleConfidence::High
    }
}

impl Phase {
    /// The rules that gate entry into this phase (R57).
    pub fn entry_gates(&self) -> impl Iterator<Item = &ContractRule> {
        self.contract.iter().filter(|r| r.is_entry_gate())
    }
}

/// Reads and validates the brief in `dir` (R51).
pub fn load(dir: &Path) -> Result<Brief, LoadError> {
    let md_file = dir.join(BRIEF_FILE);
    let summary_file = dir.join(SUMMARY_FILE);
    let mut missing = Vec::new();
    let mut errors = Vec::new();
    let mut read = |file: &Path, name: &str| match std::fs::read(file) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            missing.push(name.to_string());
            None
        }
        Err(e) => {
            errors.push(BriefError { file: file.to_path_buf(), line: 1, message: format!("cannot read: {e}") });
            None
        }
    };
    let md = read(&md_file, BRIEF_FILE);
    let summary = read(&summary_file, SUMMARY_FILE);
    if !missing.is_empty() {
        return Err(LoadError::Absent { dir: dir.to_path_buf(), missing });
    }
    match (md, summary) {
        (Some(md), Some(summary)) => parse(&md, &summary, &md_file, &summary_file).map_err(LoadError::Invalid),
        _ => Err(LoadError::Invalid(errors)),
    }
}

/// Validates a brief given as bytes; `md_file` and `summary_file` only name the files in errors.
pub fn parse(md: &[u8], summary: &[u8], md_file: &Path, summary_file: &Path) -> Result<Brief, Vec<BriefError>> {
    let mut js = Problems { file: summary_file, list: Vec::new() };
    let phases = summary::parse_summary(summary, &mut js);
    let mut mdx = Problems { file: md_file, list: Vec::new() };
    let lines = match (&phases, text(md, &mut mdx)) {
        (Some(phases), Some(md)) => Some(markdown::check_markdown(md, phases, &mut mdx)),
        _ => None,
    };
    let (mut errors, mut md_errors) = (js.list, mdx.list);
    if errors.is_empty()
        && md_errors.is_empty()
        && let (Some(phases), Some(lines)) = (phases, lines)
    {
        let phases = phases.into_iter().zip(lines).map(|(p, line)| p.map(|p| Phase { line, ..p }));
        if let Some(phases) = phases.collect::<Option<Vec<Phase>>>() {
            return Ok(Brief { phases });
        }
    }
    errors.sort_by_key(|e| e.line);
    md_errors.sort_by_key(|e| e.line);
    errors.append(&mut md_errors);
    if errors.is_empty() {
        // Unreachable by construction (an unparsed phase always reports why); never return Ok on it.
        errors.push(BriefError { file: summary_file.to_path_buf(), line: 1, message: "invalid brief".into() });
    }
    Err(errors)
}

/// Brief text in backticks, escaped.
fn quote(s: &str) -> String {
    format!("`{}`", crate::text::short(s))
}

struct Problems<'a> {
    file: &'a Path,
    list: Vec<BriefError>,
}

impl Problems<'_> {
    fn push(&mut self, line: u32, message: impl Into<String>) {
        self.list.push(BriefError { file: self.file.to_path_buf(), line: line.max(1), message: message.into() });
    }
}

/// The text of a file: UTF-8, a leading byte-order mark dropped.
fn text<'a>(bytes: &'a [u8], errs: &mut Problems) -> Option<&'a str> {
    match std::str::from_utf8(bytes) {
        Ok(t) => Some(t.strip_prefix('\u{feff}').unwrap_or(t)),
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            errs.push(json::clamp(line), format!("invalid UTF-8 at byte {at}"));
            None
        }
    }
}
