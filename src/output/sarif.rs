//! `andon check --format sarif`: the SARIF 2.1.0 log as typed structs, serialized. One rule per
//! contract and one for stale exceptions, one result per finding (its witness as a code flow, its
//! exception as a suppression; a finding that stands for several has their locations as related
//! locations) and per stale exception. Fields are declared in the order the
//! log has always been written (sorted by name), so the output is stable.

use serde::Serialize;

use crate::api::structure::{outcome, stale_message};
use crate::check::{CheckReport, Finding};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const STALE_RULE: &str = "andon/stale-exception";

#[derive(Serialize)]
pub struct Log {
    #[serde(rename = "$schema")]
    schema: &'static str,
    runs: Vec<Run>,
    version: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run {
    column_kind: &'static str,
    original_uri_base_ids: UriBases,
    properties: RunProperties,
    results: Vec<ResultItem>,
    tool: Tool,
}

#[derive(Serialize)]
struct UriBases {
    #[serde(rename = "SRCROOT")]
    src_root: Uri,
}

#[derive(Serialize)]
struct Uri {
    uri: String,
}

#[derive(Serialize)]
struct RunProperties {
    blocking: usize,
    exceptions_used: usize,
    verdict: &'static str,
}

#[derive(Serialize)]
struct Tool {
    driver: Driver,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver {
    name: &'static str,
    rules: Vec<Rule>,
    semantic_version: String,
    version: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    default_configuration: Configuration,
    full_description: Text,
    id: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<RuleProperties>,
    short_description: Text,
}

#[derive(Serialize)]
struct Configuration {
    level: Level,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct RuleProperties {
    config_line: u32,
    contract: String,
    kind: &'static str,
}

/// A result's level: a finding of tier 1 or 2 is an error, a tier-3 one a warning.
#[derive(Clone, Copy, Serialize)]
#[serde(rename_all = "lowercase")]
enum Level {
    Error,
    Warning,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline_state: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    level: Level,
    locations: [Location; 1],
    message: Text,
    partial_fingerprints: Fingerprints,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties>,
    /// A finding that stands for several: where each of them is, with its contract and message.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    rule_id: String,
    rule_index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    suppressions: Option<[Suppression; 1]>,
}

#[derive(Serialize)]
struct Fingerprints {
    #[serde(rename = "andonFinding/v1")]
    andon_finding_v1: String,
}

#[derive(Serialize)]
struct ResultProperties {
    blocking: bool,
    contract: String,
    /// A finding that stands for several: every contract it breaks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    contracts: Vec<String>,
    tier: u8,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    thread_flows: [ThreadFlow; 1],
}

#[derive(Serialize)]
struct ThreadFlow {
    locations: Vec<FlowStep>,
}

#[derive(Serialize)]
struct FlowStep {
    location: Location,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    uri_base_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_column: u32,
    start_line: u32,
}

#[derive(Serialize)]
struct Suppression {
    justification: String,
    kind: &'static str,
    location: Location,
    status: &'static str,
}

/// A message: repository text in it (a path, a name) carries no hidden character a viewer would
/// obey (a bidirectional control reorders what the reader sees): each is its visible escape, as
/// in every other format.
fn text(t: String) -> Text {
    Text { text: crate::text::line(&t).into_owned() }
}

fn location(path: &str, line: u32, col: u32) -> Location {
    Location {
        message: None,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation { uri: uri_path(path), uri_base_id: "SRCROOT" },
            region: Region { start_column: col.max(1), start_line: line.max(1) },
        },
    }
}

/// A repo-relative path as a relative URI reference (percent-encoding what a URI cannot hold).
pub(super) fn uri_path(p: &str) -> String {
    let mut out = String::new();
    for b in p.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A SARIF rule id from a contract name: lowercase words joined by `-`.
fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() { "contract".into() } else { s }
}

/// One SARIF rule id per contract, in order: `andon/<slug>`, numbered when slugs collide.
fn rule_ids(r: &CheckReport) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for c in &r.contracts {
        let base = format!("andon/{}", slug(&c.name));
        let mut id = base.clone();
        let mut n = 2;
        while ids.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        ids.push(id);
    }
    ids
}

/// The SARIF 2.1.0 log of a check.
pub fn log(r: &CheckReport, version: &str, root_uri: &str) -> Log {
    let ids = rule_ids(r);
    let mut rules: Vec<Rule> = r
        .contracts
        .iter()
        .zip(&ids)
        .map(|(c, id)| Rule {
            default_configuration: Configuration { level: Level::Error },
            full_description: text(format!("{} contract: {}", c.kind.name(), c.description)),
            id: id.clone(),
            name: c.kind.name().to_string(),
            properties: Some(RuleProperties { config_line: c.line, contract: c.name.clone(), kind: c.kind.name() }),
            short_description: text(c.name.clone()),
        })
        .collect();
    let stale_index = rules.len();
    rules.push(Rule {
        default_configuration: Configuration { level: Level::Error },
        full_description: text("A contract exception that matches no finding any more must be removed, so exceptions cannot outlive their reason.".into()),
        id: STALE_RULE.into(),
        name: "stale-exception".into(),
        properties: None,
        short_description: text("An exception that excuses nothing".into()),
    });
    let mut results: Vec<ResultItem> = r.findings.iter().map(|f| result(r, f, &ids)).collect();
    results.extend(r.stale_exceptions.iter().map(|s| ResultItem {
        baseline_state: None,
        code_flows: Vec::new(),
        level: Level::Error,
        locations: [location(&r.config, s.line, 1)],
        message: text(format!("{}: {}", s.contract, stale_message(s))),
        partial_fingerprints: Fingerprints {
            andon_finding_v1: format!(
                "{:016x}",
                xxhash_rust::xxh3::xxh3_64(match (&s.at, &s.name) {
                    (None, None) => format!("stale\0{}\0{:?}\0{:?}", s.contract, s.from, s.to),
                    (at, name) => format!("stale\0{}\0{at:?}\0{name:?}", s.contract),
                }.as_bytes())
            ),
        },
        properties: None,
        related_locations: Vec::new(),
        rule_id: STALE_RULE.into(),
        rule_index: stale_index,
        suppressions: None,
    }));
    let run = Run {
        column_kind: "unicodeCodePoints",
        original_uri_base_ids: UriBases { src_root: Uri { uri: root_uri.to_string() } },
        properties: RunProperties { blocking: r.blocking(), exceptions_used: r.exceptions_used, verdict: outcome(r) },
        results,
        tool: Tool {
            driver: Driver {
                name: "andon",
                rules,
                semantic_version: version.to_string(),
                version: version.to_string(),
            },
        },
    };
    Log { schema: SCHEMA, runs: vec![run], version: "2.1.0" }
}

/// A witness as a code flow (None when it has no hop).
fn code_flow(witness: &[crate::check::Hop]) -> Option<CodeFlow> {
    let steps: Vec<FlowStep> = witness
        .iter()
        .map(|h| {
            let mut location = location(&h.path, h.line, h.col);
            location.message =
                Some(text(format!("imports `{}` -> {} ({}, tier {})", h.spec, h.target, h.confidence, h.tier)));
            FlowStep { location }
        })
        .collect();
    (!steps.is_empty()).then(|| CodeFlow { thread_flows: [ThreadFlow { locations: steps }] })
}

/// One finding as a SARIF result: its witness as a code flow, its exception as a suppression; a
/// finding that stands for several has each member's witness as a code flow and each member's
/// location as a related location.
fn result(r: &CheckReport, f: &Finding, ids: &[String]) -> ResultItem {
    let ci = r.contracts.iter().position(|c| c.name == f.contract).unwrap_or(0);
    let mut witnesses: Vec<&[crate::check::Hop]> = vec![&f.witness];
    for m in &f.members {
        if !witnesses.contains(&m.witness.as_slice()) {
            witnesses.push(&m.witness);
        }
    }
    let related: Vec<Location> = f
        .members
        .iter()
        .map(|m| {
            let mut at = location(&m.path, m.line, m.col);
            at.message = Some(text(format!("{}: {} (tier {})", m.contract, m.message, m.tier)));
            at
        })
        .collect();
    let mut contracts: Vec<String> = Vec::new();
    for m in &f.members {
        if !contracts.contains(&m.contract) {
            contracts.push(m.contract.clone());
        }
    }
    let message = match crate::check::group::breaks(f) {
        lines if lines.is_empty() => format!("{}: {} (tier {})", f.contract, f.message, f.tier),
        lines => format!("{}: {} (tier {}): {}", f.contract, f.message, f.tier, lines.join("; ")),
    };
    ResultItem {
        baseline_state: f.new.map(|n| if n { "new" } else { "unchanged" }),
        code_flows: witnesses.into_iter().filter_map(code_flow).collect(),
        level: if f.tier <= 2 { Level::Error } else { Level::Warning },
        locations: [location(&f.path, f.line, f.col)],
        message: text(message),
        partial_fingerprints: Fingerprints { andon_finding_v1: f.fingerprint.clone() },
        properties: Some(ResultProperties {
            blocking: f.blocking(),
            contract: f.contract.clone(),
            contracts,
            tier: f.tier,
        }),
        related_locations: related,
        rule_id: ids[ci].clone(),
        rule_index: ci,
        suppressions: f.excused.as_ref().map(|e| {
            [Suppression {
                justification: e.reason.clone(),
                kind: "external",
                location: location(&r.config, e.line, 1),
                status: "accepted",
            }]
        }),
    }
}
