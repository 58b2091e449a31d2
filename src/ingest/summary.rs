//! The sidecar JSON ([`super::SUMMARY_FILE`]): deserialized object by object, each value validated,
//! every problem reported at the line of the offending value.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

use super::json::{self, Node, NodeBody};
use super::{
    ContractRule, Error, FORMAT, ID_MAX, ItemKind, Phase, Priority, Problems, RuleConfidence, WorkItem, quote, text,
};

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
pub(super) fn parse_summary(bytes: &[u8], errs: &mut Problems) -> Option<Vec<Option<Phase>>> {
    let text = text(bytes, errs)?;
    if let Err(e) = serde_json::from_str::<IgnoredAny>(text) {
        errs.push(json::clamp(e.line()), serde_message(&e, e.column()));
        return None;
    }
    let Some(root) = json::scan(text) else {
        errs.push(1, "cannot read the JSON structure");
        return None;
    };
    if !matches!(root.body, NodeBody::Object(_)) {
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
fn parse_phase(text: &str, node: &Node, seen: &mut Seen, errs: &mut Problems) -> Option<Phase> {
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

fn parse_rule(text: &str, node: &Node, ids: &mut HashMap<String, u32>, errs: &mut Problems) -> Option<ContractRule> {
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
    let confidence =
        RuleConfidence::parse(&r.confidence).map_err(|e| errs.push(node.line_of("confidence"), e.to_string())).ok();
    let priority = Priority::parse(&r.priority).map_err(|e| errs.push(node.line_of("priority"), e.to_string())).ok();
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

fn parse_item(text: &str, node: &Node, seen: &mut Seen, errs: &mut Problems) -> Option<WorkItem> {
    let w = part::<ItemJson>(text, node, "a work item object", errs)?;
    let before = errs.list.len();
    check_id(errs, node.line_of("id"), "work item id", &w.id);
    if let Some(first) = seen.items.get(&w.id) {
        errs.push(node.line_of("id"), format!("duplicate work item id {} (first at line {first})", quote(&w.id)));
    } else {
        seen.items.insert(w.id.clone(), node.line_of("id"));
    }
    check_text(errs, node.line_of("title"), "title", &w.title);
    if let Err(e) = check_path(&w.path) {
        errs.push(node.line_of("path"), e.to_string());
    }
    if w.line == Some(0) {
        errs.push(node.line_of("line"), "line must be 1 or more");
    }
    if let Err(e) = ItemKind::from_tag(&w.tag) {
        errs.push(node.line_of("tag"), e.to_string());
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
fn part<T: DeserializeOwned>(text: &str, node: &Node, what: &str, errs: &mut Problems) -> Option<T> {
    if !matches!(node.body, NodeBody::Object(_)) {
        let found = match node.body {
            NodeBody::Array(_) => "an array",
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

fn check_id(errs: &mut Problems, line: u32, what: &str, id: &str) {
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

fn check_text(errs: &mut Problems, line: u32, what: &str, s: &str) {
    if s.trim().is_empty() {
        errs.push(line, format!("empty {what}"));
    }
}

/// A work item's path: relative, `/`-separated, normalized.
fn check_path(path: &str) -> Result<(), Error> {
    let bad = |why: &'static str| Err(Error::Path { path: path.to_string(), why });
    if path.trim().is_empty() {
        return Err(Error::EmptyPath);
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
