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

mod json;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

use json::Node;

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
    pub confidence: Confidence,
    pub priority: Priority,
}

/// A rule's confidence, ordered `Low < Medium < High`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
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

impl Confidence {
    pub const ALL: [Confidence; 3] = [Confidence::Low, Confidence::Medium, Confidence::High];

    pub fn name(self) -> &'static str {
        match self {
            Confidence::Low => "Low",
            Confidence::Medium => "Medium",
            Confidence::High => "High",
        }
    }

    /// `low`, `medium` or `high`, in any case.
    pub fn parse(s: &str) -> Result<Confidence, String> {
        Confidence::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| format!("confidence {} is not one of Low, Medium, High", quote(s)))
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
    pub fn parse(s: &str) -> Result<Priority, String> {
        if let Some(p) = Priority::ALL.into_iter().find(|p| p.name() == s) {
            return Ok(p);
        }
        let hint = Priority::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .map(|p| format!(" (did you mean `{}`?)", p.name()))
            .unwrap_or_default();
        Err(format!("priority {} is not one of P0, P1, P2, P3{hint}", quote(s)))
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
    pub fn from_tag(tag: &str) -> Result<ItemKind, String> {
        let lower = tag.trim().to_lowercase();
        if let Some((_, kind)) = TAGS.iter().find(|(t, _)| *t == lower) {
            return Ok(*kind);
        }
        let nearest = TAGS
            .iter()
            .map(|(t, _)| (crate::text::edit_distance(&lower, t), *t))
            .filter(|&(d, t)| d <= 3 && d < t.len())
            .min()
            .map(|(_, t)| format!(" (did you mean `{t}`?)"))
            .unwrap_or_default();
        let accepted: Vec<&str> = TAGS.iter().map(|(t, _)| *t).collect();
        Err(format!("unknown tag {}{nearest}; accepted tags: {}", quote(tag), accepted.join(", ")))
    }
}

impl WorkItem {
    /// The kind of gap this item becomes, from its tag (R55).
    pub fn kind(&self) -> Result<ItemKind, String> {
        ItemKind::from_tag(&self.tag)
    }
}

impl ContractRule {
    /// A top-priority (P0) rule with confidence below High blocks the phase until a human
    /// confirms it (R57).
    pub fn is_entry_gate(&self) -> bool {
        self.priority == Priority::P0 && self.confidence < Confidence::High
    }
}

impl Phase {
    /// The rules that gate entry into this phase (R57).
    pub fn entry_gates(&self) -> impl Iterator<Item = &ContractRule> {
        self.contract.iter().filter(|r| r.is_entry_gate())
    }
}

/// One problem with the brief, at a file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BriefError {
    pub file: PathBuf,
    pub line: u32,
    /// One line; text from the brief in it is quoted through [`crate::text::short`].
    pub message: String,
}

impl fmt::Display for BriefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

impl std::error::Error for BriefError {}

/// Why [`load`] returned no brief.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// The ingest source does not exist yet: `missing` names the absent files
    /// ([`BRIEF_FILE`] and/or [`SUMMARY_FILE`], in that order).
    Absent { dir: PathBuf, missing: Vec<String> },
    /// Both files exist but do not make a valid brief: every problem found, summary errors
    /// first, each file's errors in line order.
    Invalid(Vec<BriefError>),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Absent { dir, missing } => write!(
                f,
                "the ingest source does not exist yet: {} has no {}; run the external planning step ({PRODUCER}) to produce the modernization brief",
                dir.display(),
                missing.join(" or ")
            ),
            LoadError::Invalid(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {}

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
    let mut js = Errors { file: summary_file, list: Vec::new() };
    let phases = parse_summary(summary, &mut js);
    let mut mdx = Errors { file: md_file, list: Vec::new() };
    let lines = match (&phases, text(md, &mut mdx)) {
        (Some(phases), Some(md)) => Some(check_markdown(md, phases, &mut mdx)),
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

struct Errors<'a> {
    file: &'a Path,
    list: Vec<BriefError>,
}

impl Errors<'_> {
    fn push(&mut self, line: u32, message: impl Into<String>) {
        self.list.push(BriefError { file: self.file.to_path_buf(), line: line.max(1), message: message.into() });
    }
}

/// The text of a file: UTF-8, a leading byte-order mark dropped.
fn text<'a>(bytes: &'a [u8], errs: &mut Errors) -> Option<&'a str> {
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

// ---- the sidecar ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "the summary object")]
struct RootJson {
    #[allow(dead_code)]
    format: u64,
    #[allow(dead_code)]
    phases: Vec<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a phase object")]
struct PhaseJson {
    id: String,
    name: String,
    // the lists may be left out when empty (a planner omits an empty section)
    #[serde(default)]
    exit_criteria: Vec<String>,
    #[allow(dead_code)]
    #[serde(default)]
    contract: Vec<IgnoredAny>,
    #[allow(dead_code)]
    #[serde(default)]
    work_items: Vec<IgnoredAny>,
    #[serde(default)]
    advisory: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a contract rule object")]
struct RuleJson {
    id: String,
    rule: String,
    validation: String,
    confidence: String,
    priority: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a work item object")]
struct ItemJson {
    id: String,
    title: String,
    path: String,
    line: Option<u32>,
    tag: String,
    owner: String,
}

/// Validation state across the whole summary.
struct Seen {
    phases: HashMap<String, u32>,
    items: HashMap<String, u32>,
    duplicate_phase: bool,
}

/// The summary's phases (`None` for a phase object that did not deserialize), or `None` when the
/// phase list itself is unknown or unusable for the Markdown comparison. Errors go to `errs`.
fn parse_summary(bytes: &[u8], errs: &mut Errors) -> Option<Vec<Option<Phase>>> {
    let text = text(bytes, errs)?;
    if let Err(e) = serde_json::from_str::<IgnoredAny>(text) {
        errs.push(json::clamp(e.line()), serde_message(&e, e.column()));
        return None;
    }
    let Some(root) = json::scan(text) else {
        errs.push(1, "cannot read the JSON structure");
        return None;
    };
    if !matches!(root.body, json::Body::Object(_)) {
        errs.push(root.line, "the summary must be a JSON object");
        return None;
    }
    match root.member("format") {
        None => {
            errs.push(root.line, format!("missing field `format` (this andon reads format {FORMAT})"));
            return None;
        }
        Some(node) => {
            let value: serde_json::Value = serde_json::from_str(slice(text, node)).unwrap_or_default();
            if value.as_u64() != Some(FORMAT) {
                let shown = serde_json::to_string(&value).unwrap_or_default();
                errs.push(
                    node.line,
                    format!("unsupported format {} (this andon reads format {FORMAT})", quote(&shown)),
                );
                return None;
            }
        }
    }
    let _ = part::<RootJson>(text, &root, "the summary object", errs);
    let phases_node = root.member("phases")?;
    let nodes = phases_node.elements()?;
    if nodes.is_empty() {
        errs.push(phases_node.line, "the brief has no phases");
        return None;
    }
    let mut seen = Seen { phases: HashMap::new(), items: HashMap::new(), duplicate_phase: false };
    let phases: Vec<Option<Phase>> = nodes.iter().map(|n| parse_phase(text, n, &mut seen, errs)).collect();
    // Compare with the Markdown only when every phase's id and name are known and unique.
    (phases.iter().all(Option::is_some) && !seen.duplicate_phase).then_some(phases)
}

/// A phase carries its rules and items only when they all validated; otherwise it is returned
/// with the lists it has (the caller only compares ids and names once anything failed).
fn parse_phase(text: &str, node: &Node, seen: &mut Seen, errs: &mut Errors) -> Option<Phase> {
    let before = errs.list.len();
    let p = part::<PhaseJson>(text, node, "a phase object", errs);
    if let Some(p) = &p {
        check_id(errs, node.line_of("id"), "phase id", &p.id);
        if let Some(first) = seen.phases.get(&p.id) {
            errs.push(node.line_of("id"), format!("duplicate phase id {} (first at line {first})", quote(&p.id)));
            seen.duplicate_phase = true;
        } else {
            seen.phases.insert(p.id.clone(), node.line_of("id"));
        }
        let line = node.line_of("name");
        if p.name.trim().is_empty() {
            errs.push(line, "empty phase name");
        } else if p.name.trim() != p.name || p.name.chars().any(crate::text::is_hidden) {
            errs.push(
                line,
                format!(
                    "phase name {} must fit its Markdown heading: no leading or trailing space, no control characters",
                    quote(&p.name)
                ),
            );
        }
        for (i, s) in p.exit_criteria.iter().enumerate() {
            check_text(errs, node.element_line("exit_criteria", i), "exit criterion", s);
        }
        for (i, s) in p.advisory.iter().enumerate() {
            check_text(errs, node.element_line("advisory", i), "advisory note", s);
        }
    }
    let mut rule_ids: HashMap<String, u32> = HashMap::new();
    let contract: Vec<Option<ContractRule>> = node
        .member("contract")
        .and_then(Node::elements)
        .unwrap_or_default()
        .iter()
        .map(|n| parse_rule(text, n, &mut rule_ids, errs))
        .collect();
    let work_items: Vec<Option<WorkItem>> = node
        .member("work_items")
        .and_then(Node::elements)
        .unwrap_or_default()
        .iter()
        .map(|n| parse_item(text, n, seen, errs))
        .collect();
    let p = p?;
    let ok = errs.list.len() == before;
    Some(Phase {
        id: p.id,
        name: p.name,
        exit_criteria: p.exit_criteria,
        contract: if ok { contract.into_iter().flatten().collect() } else { Vec::new() },
        work_items: if ok { work_items.into_iter().flatten().collect() } else { Vec::new() },
        advisory: p.advisory,
        line: node.line,
    })
}

fn parse_rule(text: &str, node: &Node, ids: &mut HashMap<String, u32>, errs: &mut Errors) -> Option<ContractRule> {
    let r = part::<RuleJson>(text, node, "a contract rule object", errs)?;
    let before = errs.list.len();
    check_id(errs, node.line_of("id"), "rule id", &r.id);
    if let Some(first) = ids.get(&r.id) {
        errs.push(
            node.line_of("id"),
            format!("duplicate rule id {} in this phase (first at line {first})", quote(&r.id)),
        );
    } else {
        ids.insert(r.id.clone(), node.line_of("id"));
    }
    check_text(errs, node.line_of("rule"), "rule", &r.rule);
    check_text(errs, node.line_of("validation"), "validation", &r.validation);
    let confidence = Confidence::parse(&r.confidence).map_err(|m| errs.push(node.line_of("confidence"), m)).ok();
    let priority = Priority::parse(&r.priority).map_err(|m| errs.push(node.line_of("priority"), m)).ok();
    if errs.list.len() != before {
        return None;
    }
    Some(ContractRule {
        id: r.id,
        rule: r.rule,
        validation: r.validation,
        confidence: confidence?,
        priority: priority?,
    })
}

fn parse_item(text: &str, node: &Node, seen: &mut Seen, errs: &mut Errors) -> Option<WorkItem> {
    let w = part::<ItemJson>(text, node, "a work item object", errs)?;
    let before = errs.list.len();
    check_id(errs, node.line_of("id"), "work item id", &w.id);
    if let Some(first) = seen.items.get(&w.id) {
        errs.push(node.line_of("id"), format!("duplicate work item id {} (first at line {first})", quote(&w.id)));
    } else {
        seen.items.insert(w.id.clone(), node.line_of("id"));
    }
    check_text(errs, node.line_of("title"), "title", &w.title);
    if let Err(m) = check_path(&w.path) {
        errs.push(node.line_of("path"), m);
    }
    if w.line == Some(0) {
        errs.push(node.line_of("line"), "line must be 1 or more");
    }
    if let Err(m) = ItemKind::from_tag(&w.tag) {
        errs.push(node.line_of("tag"), m);
    }
    check_text(errs, node.line_of("owner"), "owner", &w.owner);
    (errs.list.len() == before).then_some(WorkItem {
        id: w.id,
        title: w.title,
        path: w.path,
        line: w.line,
        tag: w.tag,
        owner: w.owner,
    })
}

/// Deserializes one object of the summary on its own, mapping serde's position to the file's.
/// Only a JSON object is accepted (serde would also take a struct from an array).
fn part<T: DeserializeOwned>(text: &str, node: &Node, what: &str, errs: &mut Errors) -> Option<T> {
    if !matches!(node.body, json::Body::Object(_)) {
        let found = match node.body {
            json::Body::Array(_) => "an array",
            _ => match slice(text, node).as_bytes().first() {
                Some(b'"') => "a string",
                Some(b'n') => "null",
                Some(b't' | b'f') => "a boolean",
                Some(b'[') => "an array",
                Some(b'{') => "an object nested too deep",
                _ => "a number",
            },
        };
        errs.push(node.line, format!("expected {what}, found {found}"));
        return None;
    }
    match serde_json::from_str::<T>(slice(text, node)) {
        Ok(v) => Some(v),
        Err(e) if e.line() == 0 => {
            errs.push(node.line, serde_message(&e, 0));
            None
        }
        Err(e) => {
            let rel = json::clamp(e.line());
            let line = node.line.saturating_add(rel - 1);
            let col = if rel == 1 { e.column() + node.col as usize - 1 } else { e.column() };
            errs.push(line, serde_message(&e, col));
            None
        }
    }
}

fn slice<'a>(text: &'a str, node: &Node) -> &'a str {
    text.get(node.start..node.end).unwrap_or("")
}

/// serde_json's message without its own position, with the file's column, escaped.
fn serde_message(e: &serde_json::Error, col: usize) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&suffix).unwrap_or(&full);
    let msg = crate::text::short(msg);
    if col == 0 { msg } else { format!("{msg} (column {col})") }
}

fn check_id(errs: &mut Errors, line: u32, what: &str, id: &str) {
    if id.is_empty() {
        errs.push(line, format!("empty {what}"));
    } else if id.len() > ID_MAX
        || !id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        || !id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        errs.push(
            line,
            format!(
                "{what} {} must be 1 to {ID_MAX} ASCII letters, digits, `.`, `_` or `-`, starting with a letter or digit",
                quote(id)
            ),
        );
    }
}

fn check_text(errs: &mut Errors, line: u32, what: &str, s: &str) {
    if s.trim().is_empty() {
        errs.push(line, format!("empty {what}"));
    }
}

/// A work item's path: relative, `/`-separated, normalized.
fn check_path(path: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("path {} {why}", quote(path)));
    if path.trim().is_empty() {
        return Err("empty path".into());
    }
    if path.contains('\\') {
        return bad("contains a backslash; use `/`");
    }
    let b = path.as_bytes();
    if path.starts_with('/') || (b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':') {
        return bad("is absolute; it must be relative to the repository root");
    }
    if path.split('/').any(|c| c == "..") {
        return bad("contains `..`; it must stay inside the repository");
    }
    if path.chars().any(crate::text::is_hidden) {
        return bad("contains a control character");
    }
    if path.split('/').any(|c| c.is_empty() || c == ".") {
        return bad("is not normalized (empty or `.` component, or a trailing `/`)");
    }
    Ok(())
}

// ---- the Markdown ----

/// Checks the `## Phase <id>: <name>` headings against the summary's phases; returns each phase's
/// heading line (0 when it has none, which is then an error).
fn check_markdown(md: &str, phases: &[Option<Phase>], errs: &mut Errors) -> Vec<u32> {
    let mut lines = vec![0; phases.len()];
    let want: Vec<(&str, &str)> = phases.iter().flatten().map(|p| (p.id.as_str(), p.name.as_str())).collect();
    if want.len() != phases.len() {
        return lines;
    }
    let index: HashMap<&str, usize> = want.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
    let headings = headings(md, errs);
    let mut first: HashMap<&str, u32> = HashMap::new();
    // (summary index, heading line) of each first heading of a known phase, in document order.
    let mut matched: Vec<(usize, u32)> = Vec::new();
    for &(line, id, name) in &headings {
        let Some(&i) = index.get(id) else {
            errs.push(line, format!("heading names phase {}, which is not in {SUMMARY_FILE}", quote(id)));
            continue;
        };
        if let Some(f) = first.get(id) {
            errs.push(line, format!("second heading for phase {} (first at line {f})", quote(id)));
            continue;
        }
        first.insert(id, line);
        matched.push((i, line));
        lines[i] = line;
        if name != want[i].1.trim() {
            errs.push(
                line,
                format!(
                    "heading names phase {} {}, but {SUMMARY_FILE} names it {}",
                    quote(id),
                    quote(name),
                    quote(want[i].1)
                ),
            );
        }
    }
    let mut sorted: Vec<usize> = matched.iter().map(|&(i, _)| i).collect();
    sorted.sort_unstable();
    for (&(i, line), &expected) in matched.iter().zip(&sorted) {
        if i != expected {
            errs.push(
                line,
                format!(
                    "phase {} is out of order: {SUMMARY_FILE} has phase {} here (its position {})",
                    quote(want[i].0),
                    quote(want[expected].0),
                    expected + 1
                ),
            );
        }
    }
    let last = json::clamp(md.lines().count().max(1));
    for (i, (id, name)) in want.iter().enumerate() {
        if lines[i] == 0 {
            let line = matched.iter().filter(|&&(j, _)| j > i).map(|&(_, l)| l).min().unwrap_or(last);
            errs.push(
                line,
                format!(
                    "no heading for phase {}: expected `## Phase {}: {}`",
                    quote(id),
                    crate::text::short(id),
                    crate::text::short(name)
                ),
            );
        }
    }
    lines
}

/// The `## Phase <id>: <name>` headings outside fenced code blocks: (line, id, name). A line that
/// starts with `## Phase ` but has no `: ` is an error.
fn headings<'a>(md: &'a str, errs: &mut Errors) -> Vec<(u32, &'a str, &'a str)> {
    let mut out = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    for (n, raw) in md.split('\n').enumerate() {
        let line_no = json::clamp(n + 1);
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let indented = line.trim_start_matches(' ');
        let marker = |c: char| {
            let len = indented.chars().take_while(|&x| x == c).count();
            (line.len() - indented.len() <= 3 && len >= 3).then_some(len)
        };
        if let Some((c, len)) = fence {
            if marker(c).is_some_and(|l| l >= len) && indented.trim_start_matches(c).trim().is_empty() {
                fence = None;
            }
            continue;
        }
        if let Some((c, len)) = ['`', '~'].into_iter().find_map(|c| marker(c).map(|l| (c, l))) {
            fence = Some((c, len));
            continue;
        }
        // `## Phase <id>: <name>`, also at levels 3 and 4, with `—`, `–` or `-` for the colon,
        // any run of spaces, and an optional closing `#` sequence
        if line.len() - indented.len() > 3 {
            continue;
        }
        let level = indented.chars().take_while(|&c| c == '#').count();
        let Some(text) = indented[level..].strip_prefix([' ', '\t']).filter(|_| (2..=4).contains(&level)) else {
            continue;
        };
        let text = text.trim();
        let text = match text.trim_end_matches('#') {
            t if t.len() < text.len() && (t.is_empty() || t.ends_with([' ', '\t'])) => t.trim_end(),
            _ => text,
        };
        let Some(rest) = text.strip_prefix("Phase").filter(|r| r.starts_with([' ', '\t'])).map(str::trim_start) else {
            continue;
        };
        let end = rest.find(|c: char| c == ':' || c.is_whitespace()).unwrap_or(rest.len());
        let (id, after) = (&rest[..end], rest[end..].trim_start());
        let name = ["：", ":", "—", "–", "-"].iter().find_map(|sep| after.strip_prefix(sep)).map(str::trim);
        match name {
            Some(name) if !id.is_empty() && !name.is_empty() => out.push((level, line_no, id, name)),
            // a level-3 or -4 heading that only starts with the word is prose
            _ if level > 2 => {}
            _ => {
                errs.push(line_no, format!("malformed phase heading {}: expected `## Phase <id>: <name>`", quote(line)))
            }
        }
    }
    // the phases are the headings of the shallowest level that has any; deeper ones are prose
    let top = out.iter().map(|h| h.0).min();
    out.into_iter().filter(|h| Some(h.0) == top).map(|(_, line, id, name)| (line, id, name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "b.md";
    const JS: &str = "s.json";

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/briefs").join(name)
    }

    fn invalid(name: &str) -> Vec<BriefError> {
        match load(&fixture(name)) {
            Err(LoadError::Invalid(errors)) => errors,
            other => panic!("{name}: expected Invalid, got {other:?}"),
        }
    }

    fn parse_str(md: &str, summary: &str) -> Result<Brief, Vec<BriefError>> {
        parse(md.as_bytes(), summary.as_bytes(), Path::new(MD), Path::new(JS))
    }

    /// Exactly these errors, in this order: (file name, line, message fragment).
    #[track_caller]
    fn assert_errors(errors: &[BriefError], want: &[(&str, u32, &str)]) {
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(errors.len(), want.len(), "errors:\n{}", shown.join("\n"));
        for (e, &(file, line, fragment)) in errors.iter().zip(want) {
            assert!(e.file.ends_with(file), "{e} is not in {file}; errors:\n{}", shown.join("\n"));
            assert_eq!(e.line, line, "{e}; errors:\n{}", shown.join("\n"));
            assert!(e.message.contains(fragment), "{e} lacks {fragment:?}; errors:\n{}", shown.join("\n"));
        }
    }

    #[track_caller]
    fn assert_invalid(md: &str, summary: &str, want: &[(&str, u32, &str)]) {
        match parse_str(md, summary) {
            Err(errors) => assert_errors(&errors, want),
            Ok(b) => panic!("expected errors, parsed {b:?}"),
        }
    }

    /// A one-phase summary around the given work item and rule JSON.
    fn one_phase(items: &str, rules: &str) -> String {
        format!(
            "{{\n\"format\": 1,\n\"phases\": [\n{{\n\"id\": \"P1\",\n\"name\": \"Core\",\n\"exit_criteria\": [],\n\"contract\": [{rules}],\n\"work_items\": [{items}],\n\"advisory\": []\n}}\n]\n}}\n"
        )
    }

    const ONE_MD: &str = "# Brief\n\n## Phase P1: Core\n";

    #[test]
    fn valid_fixture_parses_into_the_model() {
        let brief = load(&fixture("valid")).unwrap();
        let ids: Vec<(&str, &str, u32)> =
            brief.phases.iter().map(|p| (p.id.as_str(), p.name.as_str(), p.line)).collect();
        assert_eq!(ids, [("P1", "Shared types", 6), ("P2", "Storage layer", 15), ("P3", "HTTP API", 19)]);

        let p1 = &brief.phases[0];
        assert_eq!(p1.exit_criteria, ["tests/test_types.py passes", "no module outside shared/ defines a Money type"]);
        assert!(p1.advisory.is_empty());
        assert_eq!(
            p1.contract,
            [
                ContractRule {
                    id: "BC-1".into(),
                    rule: "Money.round() keeps banker's rounding".into(),
                    validation: "property test over 10k random amounts against the old implementation".into(),
                    confidence: Confidence::High,
                    priority: Priority::P0,
                },
                ContractRule {
                    id: "BC-2".into(),
                    rule: "Serialized Money keeps its JSON shape".into(),
                    validation: "golden-file comparison of fixtures/money/*.json".into(),
                    confidence: Confidence::Low,
                    priority: Priority::P2,
                },
            ]
        );
        assert_eq!(
            p1.work_items[0],
            WorkItem {
                id: "W1".into(),
                title: "Replace manual dict merge with the | operator".into(),
                path: "shared/types.py".into(),
                line: Some(42),
                tag: "code-idiom".into(),
                owner: "self-assess-idiom-fix".into(),
            }
        );
        // P0 + High is not a gate; P2 + Low is not a gate.
        assert_eq!(p1.entry_gates().count(), 0);

        let p2 = &brief.phases[1];
        let gates: Vec<&str> = p2.entry_gates().map(|r| r.id.as_str()).collect();
        assert_eq!(gates, ["BC-1"]);
        assert_eq!(p2.contract[0].confidence, Confidence::Medium);
        assert_eq!(p2.work_items[0].line, None);
        assert_eq!(p2.work_items[0].owner, "self-assess-transform-execute");
        assert_eq!(
            p2.advisory,
            ["The retry policy in storage/retry.py looks deliberate; confirm with the owners before touching it."]
        );

        let p3 = &brief.phases[2];
        assert!(p3.contract.is_empty());

        let kinds: Vec<(&str, ItemKind)> =
            brief.phases.iter().flat_map(|p| &p.work_items).map(|w| (w.id.as_str(), w.kind().unwrap())).collect();
        assert_eq!(
            kinds,
            [
                ("W1", ItemKind::Bug),
                ("W2", ItemKind::Bug),
                ("W3", ItemKind::Wire),
                ("W4", ItemKind::Bug),
                ("W5", ItemKind::Feature),
            ]
        );
    }

    #[test]
    fn the_documented_example_parses() {
        let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/brief-format.md")).unwrap();
        let example = doc.split("## A complete example").nth(1).unwrap();
        let block = |lang: &str| {
            let start = example.find(&format!("```{lang}\n")).unwrap() + lang.len() + 4;
            let len = example[start..].find("\n```\n").unwrap() + 1;
            example[start..start + len].to_string()
        };
        let brief = parse_str(&block("markdown"), &block("json")).unwrap();
        let gates: Vec<(&str, &str)> =
            brief.phases.iter().flat_map(|p| p.entry_gates().map(move |r| (p.id.as_str(), r.id.as_str()))).collect();
        assert_eq!(gates, [("P2", "BC-1")]);
        let kinds: Vec<ItemKind> = brief.phases.iter().flat_map(|p| &p.work_items).map(|w| w.kind().unwrap()).collect();
        assert_eq!(kinds, [ItemKind::Bug, ItemKind::Wire, ItemKind::Feature]);
        assert_eq!(brief.phases[1].advisory.len(), 1);
    }

    #[test]
    fn absent_fixture_names_both_files() {
        let dir = fixture("absent");
        let err = load(&dir).unwrap_err();
        assert_eq!(err, LoadError::Absent { dir: dir.clone(), missing: vec![BRIEF_FILE.into(), SUMMARY_FILE.into()] });
        let text = err.to_string();
        assert!(text.contains("does not exist yet") && text.contains(PRODUCER), "{text}");
        // A directory that does not exist at all is absent too.
        let err = load(&dir.join("nope")).unwrap_err();
        assert!(matches!(err, LoadError::Absent { ref missing, .. } if missing.len() == 2), "{err:?}");
    }

    #[test]
    fn one_missing_file_is_absent_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::copy(fixture("valid").join(BRIEF_FILE), tmp.path().join(BRIEF_FILE)).unwrap();
        assert_eq!(
            load(tmp.path()).unwrap_err(),
            LoadError::Absent { dir: tmp.path().to_path_buf(), missing: vec![SUMMARY_FILE.into()] }
        );
        std::fs::remove_file(tmp.path().join(BRIEF_FILE)).unwrap();
        std::fs::copy(fixture("valid").join(SUMMARY_FILE), tmp.path().join(SUMMARY_FILE)).unwrap();
        assert_eq!(
            load(tmp.path()).unwrap_err(),
            LoadError::Absent { dir: tmp.path().to_path_buf(), missing: vec![BRIEF_FILE.into()] }
        );
    }

    #[test]
    fn unreadable_file_is_invalid_not_absent() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join(BRIEF_FILE)).unwrap();
        std::fs::copy(fixture("valid").join(SUMMARY_FILE), tmp.path().join(SUMMARY_FILE)).unwrap();
        let errors = match load(tmp.path()) {
            Err(LoadError::Invalid(e)) => e,
            other => panic!("{other:?}"),
        };
        assert_errors(&errors, &[(BRIEF_FILE, 1, "cannot read")]);
    }

    #[test]
    fn mismatch_fixture_reports_the_out_of_order_headings() {
        assert_errors(
            &invalid("mismatch"),
            &[
                (BRIEF_FILE, 5, "phase `P3` is out of order: transform_brief_summary.json has phase `P2` here"),
                (BRIEF_FILE, 7, "phase `P2` is out of order: transform_brief_summary.json has phase `P3` here"),
            ],
        );
    }

    #[test]
    fn bad_tag_fixture_lists_accepted_tags_and_the_nearest() {
        let errors = invalid("bad-tag");
        assert_errors(
            &errors,
            &[
                (
                    SUMMARY_FILE,
                    15,
                    "unknown tag `code-idom` (did you mean `code-idiom`?); accepted tags: code-idiom, lint,",
                ),
                (SUMMARY_FILE, 23, "unknown tag `security`; accepted tags: code-idiom,"),
            ],
        );
        assert!(errors[1].message.ends_with("docs-drift:absent"), "{}", errors[1]);
    }

    #[test]
    fn unknown_field_fixture_reports_every_unknown_field() {
        assert_errors(
            &invalid("unknown-field"),
            &[(SUMMARY_FILE, 3, "unknown field `generated_by`"), (SUMMARY_FILE, 15, "unknown field `severity`")],
        );
    }

    #[test]
    fn path_traversal_fixture_rejects_each_path() {
        assert_errors(
            &invalid("path-traversal"),
            &[
                (SUMMARY_FILE, 13, "path `../../etc/passwd` contains `..`"),
                (SUMMARY_FILE, 20, "path `/etc/passwd` is absolute"),
                (SUMMARY_FILE, 27, "path `src\\\\core.py` contains a backslash"),
            ],
        );
    }

    #[test]
    fn error_display_is_file_line_message() {
        let e = BriefError { file: PathBuf::from("dir/x.json"), line: 7, message: "boom".into() };
        assert_eq!(e.to_string(), "dir/x.json:7: boom");
    }

    #[test]
    fn json_syntax_errors_carry_serde_position() {
        assert_invalid(ONE_MD, "{\n  \"format\": 1,\n  \"phases\": [,]\n}\n", &[(JS, 3, "expected value (column 14)")]);
        assert_invalid(ONE_MD, "", &[(JS, 1, "EOF while parsing")]);
        assert_invalid(ONE_MD, "[1]", &[(JS, 1, "must be a JSON object")]);
    }

    #[test]
    fn format_is_required_and_must_be_1() {
        assert_invalid(ONE_MD, "{\"phases\": []}", &[(JS, 1, "missing field `format`")]);
        assert_invalid(
            ONE_MD,
            "{\n\"format\": 2, \"phases\": [], \"new_thing\": 1}",
            &[(JS, 2, "unsupported format `2`")],
        );
        assert_invalid(ONE_MD, "{\"format\": \"1\", \"phases\": []}", &[(JS, 1, "unsupported format `\"1\"`")]);
        assert_invalid(ONE_MD, "{\"format\": 1.0, \"phases\": []}", &[(JS, 1, "unsupported format `1.0`")]);
    }

    #[test]
    fn no_phases_is_an_error() {
        assert_invalid("", "{\"format\": 1,\n\"phases\": []}", &[(JS, 2, "the brief has no phases")]);
    }

    #[test]
    fn a_phase_without_work_items_is_valid() {
        let brief = parse_str(ONE_MD, &one_phase("", "")).unwrap();
        assert_eq!(brief.phases.len(), 1);
        assert!(brief.phases[0].work_items.is_empty());
        assert_eq!(brief.phases[0].line, 3);
    }

    #[test]
    fn strict_types_and_required_fields() {
        let item = r#"{"id": "W1", "title": "t", "path": "a.py", "line": -3, "tag": "lint", "owner": "o"}"#;
        assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "invalid value: integer `-3`, expected u32")]);
        let item = r#"{"id": "W1", "title": "t", "path": "a.py", "tag": "lint"}"#;
        assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "missing field `owner`")]);
        let item = r#""W1""#;
        assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "expected a work item object, found a string")]);
        // serde would build a struct from an array; the format does not.
        let item = r#"["W1", "t", "a.py", 1, "lint", "o"]"#;
        assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "expected a work item object, found an array")]);
        let s = "{\"format\": 1, \"phases\": [{\"id\": \"P1\", \"name\": \"Core\", \"exit_criteria\": \"x\", \"contract\": [], \"work_items\": [], \"advisory\": []}]}";
        assert_invalid(ONE_MD, s, &[(JS, 1, "invalid type: string \"x\", expected a sequence")]);
        let item = r#"{"id": "W1", "id": "W2", "title": "t", "path": "a.py", "tag": "lint", "owner": "o"}"#;
        assert_invalid(ONE_MD, &one_phase(item, ""), &[(JS, 9, "duplicate field `id`")]);
    }

    #[test]
    fn rule_confidence_and_priority_values() {
        let rule = |c: &str, p: &str| {
            format!(r#"{{"id": "R1", "rule": "r", "validation": "v", "confidence": "{c}", "priority": "{p}"}}"#)
        };
        for (c, want) in [("LOW", Confidence::Low), ("medium", Confidence::Medium), ("High", Confidence::High)] {
            let brief = parse_str(ONE_MD, &one_phase("", &rule(c, "P1"))).unwrap();
            assert_eq!(brief.phases[0].contract[0].confidence, want);
        }
        assert_invalid(
            ONE_MD,
            &one_phase("", &rule("sure", "P0")),
            &[(JS, 8, "confidence `sure` is not one of Low, Medium, High")],
        );
        assert_invalid(
            ONE_MD,
            &one_phase("", &rule("High", "p0")),
            &[(JS, 8, "priority `p0` is not one of P0, P1, P2, P3 (did you mean `P0`?)")],
        );
        assert_invalid(ONE_MD, &one_phase("", &rule("High", "P4")), &[(JS, 8, "priority `P4` is not one of")]);
    }

    #[test]
    fn entry_gate_is_p0_below_high() {
        for c in Confidence::ALL {
            for p in Priority::ALL {
                let r = ContractRule {
                    id: "R".into(),
                    rule: "r".into(),
                    validation: "v".into(),
                    confidence: c,
                    priority: p,
                };
                assert_eq!(r.is_entry_gate(), p == Priority::P0 && c != Confidence::High, "{c:?} {p:?}");
            }
        }
        assert!(Confidence::Low < Confidence::Medium && Confidence::Medium < Confidence::High);
    }

    #[test]
    fn every_tag_maps_to_its_kind() {
        let kind = |t: &str| ItemKind::from_tag(t);
        for t in ["code-idiom", "lint", "ui-audit", "confab:dependency-audit", "confab:contract-drift"] {
            assert_eq!(kind(t), Ok(ItemKind::Bug), "{t}");
        }
        for t in ["arch-health:merge", "arch-health:split", "arch-health:layering"] {
            assert_eq!(kind(t), Ok(ItemKind::Wire), "{t}");
        }
        assert_eq!(kind("documented-absent"), Ok(ItemKind::Feature));
        // the producer's own spellings, in any case
        for (t, k) in [
            ("LINT", ItemKind::Bug),
            ("lint-audit", ItemKind::Bug),
            ("confab:assertion-audit", ItemKind::Bug),
            (" arch-health ", ItemKind::Wire),
            ("arch-health:layering-fix", ItemKind::Wire),
            ("documented-but-absent", ItemKind::Feature),
            ("docs-drift", ItemKind::Feature),
        ] {
            assert_eq!(kind(t), Ok(k), "{t}");
        }
        assert!(kind("lnt").unwrap_err().contains("did you mean `lint`?"));
        assert!(kind("arch-health:splt").unwrap_err().contains("did you mean `arch-health:split`?"));
        assert!(!kind("").unwrap_err().contains("did you mean"));
        assert_eq!(ItemKind::Wire.gap_kind(), crate::ledger::GapKind::Wire);
        let w = WorkItem {
            id: "W".into(),
            title: "t".into(),
            path: "a".into(),
            line: None,
            tag: "x".into(),
            owner: "o".into(),
        };
        assert!(w.kind().unwrap_err().starts_with("unknown tag `x`"));
    }

    #[test]
    fn duplicates_are_reported_with_the_first_line() {
        let phase = |id: &str, items: &str, rules: &str| {
            format!(
                "{{\"id\": \"{id}\", \"name\": \"N{id}\", \"exit_criteria\": [], \"contract\": [{rules}], \"work_items\": [{items}], \"advisory\": []}}"
            )
        };
        let item = |id: &str| {
            format!("{{\"id\": \"{id}\", \"title\": \"t\", \"path\": \"a.py\", \"tag\": \"lint\", \"owner\": \"o\"}}")
        };
        let rule = |id: &str| {
            format!(
                "{{\"id\": \"{id}\", \"rule\": \"r\", \"validation\": \"v\", \"confidence\": \"High\", \"priority\": \"P1\"}}"
            )
        };
        let s = format!(
            "{{\"format\": 1, \"phases\": [\n{},\n{},\n{}\n]}}",
            phase("A", &item("W1"), &format!("{},\n{}", rule("R1"), rule("R1"))),
            phase("B", &item("W1"), &rule("R1")),
            phase("A", "", "")
        );
        assert_invalid(
            "",
            &s,
            &[
                (JS, 3, "duplicate rule id `R1` in this phase (first at line 2)"),
                (JS, 4, "duplicate work item id `W1` (first at line 3)"),
                (JS, 5, "duplicate phase id `A` (first at line 2)"),
            ],
        );
    }

    #[test]
    fn empty_and_malformed_values() {
        let item = r#"{"id": "", "title": " ", "path": "", "line": 0, "tag": "lint", "owner": ""}"#;
        assert_invalid(
            ONE_MD,
            &one_phase(item, ""),
            &[
                (JS, 9, "empty work item id"),
                (JS, 9, "empty title"),
                (JS, 9, "empty path"),
                (JS, 9, "line must be 1 or more"),
                (JS, 9, "empty owner"),
            ],
        );
        let item = r#"{"id": "a b", "title": "t", "path": "src/./a.py", "tag": "lint", "owner": "o"}"#;
        assert_invalid(
            ONE_MD,
            &one_phase(item, ""),
            &[(JS, 9, "work item id `a b` must be 1 to 64"), (JS, 9, "path `src/./a.py` is not normalized")],
        );
        for path in ["C:/x.py", "a/../b.py", "a//b.py", "a/", "a\u{202e}b"] {
            let item = format!(r#"{{"id": "W", "title": "t", "path": "{path}", "tag": "lint", "owner": "o"}}"#);
            let errors = parse_str(ONE_MD, &one_phase(&item, "")).unwrap_err();
            assert_eq!(errors.len(), 1, "{path}: {errors:?}");
            assert!(!errors[0].message.contains('\u{202e}'), "{}", errors[0]);
        }
        let s = "{\"format\": 1, \"phases\": [{\"id\": \"P1\", \"name\": \" Core\", \"exit_criteria\": [\"\"], \"contract\": [], \"work_items\": [], \"advisory\": [\" \"]}]}";
        assert_invalid(
            "## Phase P1:  Core\n",
            s,
            &[
                (JS, 1, "phase name ` Core` must fit its Markdown heading"),
                (JS, 1, "empty exit criterion"),
                (JS, 1, "empty advisory note"),
            ],
        );
    }

    #[test]
    fn markdown_must_match_the_phases() {
        let s = "{\"format\": 1, \"phases\": [\n{\"id\": \"P1\", \"name\": \"One\", \"exit_criteria\": [], \"contract\": [], \"work_items\": [], \"advisory\": []},\n{\"id\": \"P2\", \"name\": \"Two\", \"exit_criteria\": [], \"contract\": [], \"work_items\": [], \"advisory\": []}\n]}";
        assert!(parse_str("## Phase P1: One\r\ntext\n## Phase P2: Two   \n", s).is_ok());
        assert_invalid("## Phase P1: One\n", s, &[(MD, 1, "no heading for phase `P2`: expected `## Phase P2: Two`")]);
        assert_invalid(
            "x\n## Phase P2: Two\n",
            s,
            &[(MD, 2, "no heading for phase `P1`: expected `## Phase P1: One`")],
        );
        assert_invalid(
            "## Phase P1: One\n## Phase P2: Deux\n## Phase P3: Three\n## Phase P1: One\n## Phase P4\n",
            s,
            &[
                (MD, 2, "heading names phase `P2` `Deux`, but transform_brief_summary.json names it `Two`"),
                (MD, 3, "heading names phase `P3`, which is not in transform_brief_summary.json"),
                (MD, 4, "second heading for phase `P1` (first at line 1)"),
                (MD, 5, "malformed phase heading `## Phase P4`"),
            ],
        );
        // Headings inside fenced code blocks are prose; an unclosed fence hides the rest.
        assert_invalid("## Phase P1: One\n~~~~\n## Phase P2: Two\n~~~\n", s, &[(MD, 4, "no heading for phase `P2`")]);
        // "## Phases" is prose, and so is a deeper "### Phase" when the phases are level 2.
        assert!(parse_str("## Phases\n### Phase P9: x\n## Phase P1: One\n## Phase P2: Two\n", s).is_ok());
        // The phases may be level-3 or -4 headings under a section of their own, with a dash for
        // the colon, extra spaces, a closing `#` run and CRLF line ends.
        let md = "# Brief\r\n## 3. Phased sequence\r\n### Phase P1 — One ###\r\ntext\r\n###  Phase  P2:   Two\r\n";
        let b = parse_str(md, s).unwrap();
        assert_eq!(b.phases.iter().map(|p| p.line).collect::<Vec<_>>(), [3, 5]);
    }

    #[test]
    fn summary_errors_come_first_and_markdown_is_checked_alongside() {
        let item = r#"{"id": "W1", "title": "t", "path": "a.py", "tag": "nope", "owner": "o"}"#;
        assert_invalid(
            "## Phase P1: Kern\n",
            &one_phase(item, ""),
            &[(JS, 9, "unknown tag `nope`"), (MD, 1, "heading names phase `P1` `Kern`")],
        );
    }

    #[test]
    fn invalid_utf8_is_an_error_with_its_line() {
        let errors = parse(b"## Phase P1: Core\n\xff\n", one_phase("", "").as_bytes(), Path::new(MD), Path::new(JS))
            .unwrap_err();
        assert_errors(&errors, &[(MD, 2, "invalid UTF-8 at byte 18")]);
        let errors = parse(ONE_MD.as_bytes(), b"{\n\n\"\xc3\x28\": 1}", Path::new(MD), Path::new(JS)).unwrap_err();
        assert_errors(&errors, &[(JS, 3, "invalid UTF-8 at byte 4")]);
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        let brief = parse_str(&format!("\u{feff}{ONE_MD}"), &format!("\u{feff}{}", one_phase("", ""))).unwrap();
        assert_eq!(brief.phases[0].line, 3);
    }

    #[test]
    fn untrusted_text_in_errors_is_escaped() {
        let item =
            "{\"id\": \"W1\", \"title\": \"t\", \"path\": \"a.py\", \"tag\": \"li\\u202ent\\n\", \"owner\": \"o\"}";
        let errors = parse_str(ONE_MD, &one_phase(item, "")).unwrap_err();
        assert_errors(&errors, &[(JS, 9, "unknown tag `li\\u{202e}nt\\u{a}`")]);
        let s = "{\"format\": 1, \"phases\": [], \"\\u2066x\": 1}";
        let errors = parse_str(ONE_MD, s).unwrap_err();
        assert!(errors.iter().all(|e| !e.message.contains('\u{2066}')), "{errors:?}");
        assert!(errors.iter().any(|e| e.message.contains("unknown field `\\u{2066}x`")), "{errors:?}");
    }

    /// xorshift64*: a tiny deterministic PRNG for the mutation test.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
        const NASTY: &[&[u8]] = &[
            b"{",
            b"}",
            b"[",
            b"]",
            b"\"",
            b"\\",
            b",",
            b":",
            b"\n",
            b"\xff",
            b"\xc3",
            b"\xe2\x80\xae",
            b"null",
            b"-1",
            b"1e999",
            b"\"..\"",
            b"\\u0000",
            b"## Phase X: y\n",
        ];
        let mut v = base.to_vec();
        for _ in 0..=rng.below(4) {
            let at = rng.below(v.len() + 1);
            match rng.below(6) {
                0 => v.truncate(at),
                1 if at < v.len() => v[at] = rng.next() as u8,
                2 if at < v.len() => {
                    let end = (at + rng.below(40)).min(v.len());
                    v.drain(at..end);
                }
                3 => {
                    let chunk = NASTY[rng.below(NASTY.len())];
                    v.splice(at..at, chunk.iter().copied());
                }
                4 if at < v.len() => {
                    let end = (at + rng.below(200)).min(v.len());
                    let copy = v[at..end].to_vec();
                    v.splice(at..at, copy);
                }
                _ => {}
            }
        }
        v
    }

    #[test]
    fn mutated_briefs_never_panic() {
        let dir = fixture("valid");
        let md = std::fs::read(dir.join(BRIEF_FILE)).unwrap();
        let js = std::fs::read(dir.join(SUMMARY_FILE)).unwrap();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut ok, mut bad) = (0, 0);
        for _ in 0..600 {
            let (m, j) = match rng.below(4) {
                0 => (mutate(&mut rng, &md), js.clone()),
                _ => (md.clone(), mutate(&mut rng, &js)),
            };
            match parse(&m, &j, Path::new(MD), Path::new(JS)) {
                Ok(_) => ok += 1,
                Err(errors) => {
                    bad += 1;
                    assert!(!errors.is_empty());
                    for e in &errors {
                        assert!(e.line >= 1, "{e}");
                        assert!(!e.message.contains('\n') && !e.message.contains('\u{202e}'), "{e:?}");
                    }
                }
            }
        }
        assert!(bad > 300, "mutations too tame: {ok} ok, {bad} rejected");
    }

    #[test]
    fn deep_and_huge_inputs_are_fine() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "must be a JSON object")]);
        let deep = format!("{{\"format\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "unsupported format `null`")]);
        let deep = format!("{{\"format\": 1, \"phases\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_errors(&parse_str(ONE_MD, &deep).unwrap_err(), &[(JS, 1, "expected a phase object, found an array")]);
        let deep = format!("{{\"format\": 1, \"phases\": [{{\"id\": {}{}}}]}}", "[".repeat(120), "]".repeat(120));
        assert!(parse_str(ONE_MD, &deep).is_err());

        let item = |i: usize| {
            format!(
                "{{\"id\": \"W{i}\", \"title\": \"t\", \"path\": \"src/m{i}.py\", \"line\": {}, \"tag\": \"lint\", \"owner\": \"o\"}}",
                i + 1
            )
        };
        let items: Vec<String> = (0..20_000).map(item).collect();
        let brief = parse_str(ONE_MD, &one_phase(&items.join(",\n"), "")).unwrap();
        assert_eq!(brief.phases[0].work_items.len(), 20_000);
        assert_eq!(brief.phases[0].work_items[19_999].line, Some(20_000));
    }
}
