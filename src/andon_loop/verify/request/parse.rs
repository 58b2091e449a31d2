//! A `{wire, contract, fixDiff}` request parsed strictly (spec 000 §7.3): every problem reported,
//! each naming its JSON path.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::super::super::error::Error;
pub use super::super::proof::RequestRule;
use crate::evidence::route::Object;
use crate::ingest::{Priority, RuleConfidence};

/// What the change crossed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireRef {
    /// A cross-stage move: producer stage → consumer stage.
    Stages { from: String, to: String },
    /// A narrower fix: a file (and line) plus the contract crossing it (a type, a signature, a
    /// schema, a rule).
    Site { path: String, line: Option<u32>, crossing: Option<String> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub wire: WireRef,
    /// The equivalence obligation.
    pub obligation: String,
    /// Declared objects (`kind`), when the caller says what the obligation is about.
    pub kinds: Vec<Object>,
    pub rules: Vec<RequestRule>,
    /// The files the fix declares it writes (its scope); empty: the diff's own files.
    pub files: Vec<String>,
    pub diff: String,
}

/// Parses a request. Every problem is reported, each naming its JSON path.
pub fn parse(text: &str) -> Result<Request, Vec<String>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let v: Value = serde_json::from_str(text)
        .map_err(|e| vec![format!("line {}, column {}: not valid JSON: {e}", e.line(), e.column())])?;
    let Value::Object(top) = v else { return Err(vec!["the request must be a JSON object".into()]) };
    let mut errs = Vec::new();
    for k in top.keys() {
        if !matches!(k.as_str(), "wire" | "contract" | "fixDiff" | "fix_diff") {
            let near = crate::config::nearest(k, ["wire", "contract", "fixDiff"])
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            errs.push(format!("`{k}`: unknown key{near}; a request has `wire`, `contract` and `fixDiff`"));
        }
    }
    let wire = match top.get("wire") {
        None => {
            errs.push("`wire` is missing: a stage-to-stage id (`core -> api`) or a `path:line`".into());
            None
        }
        Some(w) => parse_wire(w).map_err(|e| errs.push(format!("`wire`: {e}"))).ok(),
    };
    let contract = match top.get("contract") {
        None => {
            errs.push("`contract` is missing: the equivalence obligation to prove".into());
            None
        }
        Some(c) => parse_contract(c).map_err(|e| errs.extend(e.into_iter().map(|m| format!("`contract`{m}")))).ok(),
    };
    let fix = match (top.get("fixDiff"), top.get("fix_diff")) {
        (Some(_), Some(_)) => {
            errs.push("`fixDiff` and `fix_diff` are the same key: give one".into());
            None
        }
        (None, None) => {
            errs.push(
                "`fixDiff` is missing: verification runs on the applied change, never on a proposal (R110)".into(),
            );
            None
        }
        (Some(f), None) | (None, Some(f)) => {
            parse_fix(f).map_err(|e| errs.extend(e.into_iter().map(|m| format!("`fixDiff`{m}")))).ok()
        }
    };
    match (wire, contract, fix) {
        (Some(wire), Some((obligation, kinds, rules)), Some((files, diff))) if errs.is_empty() => {
            Ok(Request { wire, obligation, kinds, rules, files, diff })
        }
        _ => Err(errs),
    }
}

fn parse_wire(v: &Value) -> Result<WireRef, Error> {
    let stages = |from: &str, to: &str| -> Result<WireRef, Error> {
        let (from, to) = (from.trim(), to.trim());
        if from.is_empty() || to.is_empty() {
            return Err(Error::WireStagesMissing);
        }
        Ok(WireRef::Stages { from: from.into(), to: to.into() })
    };
    let site = |path: &str, line: Option<u32>, crossing: Option<String>| -> Result<WireRef, Error> {
        let path = path.trim();
        if path.is_empty() {
            return Err(Error::SiteFileEmpty);
        }
        if path.starts_with('/') || path.contains('\\') || path.split('/').any(|c| c == ".." || c.is_empty()) {
            return Err(Error::SiteNotRelative { path: crate::text::line(path).to_string() });
        }
        if line == Some(0) {
            return Err(Error::SiteLineZero);
        }
        Ok(WireRef::Site { path: path.into(), line, crossing })
    };
    match v {
        Value::String(s) => {
            for arrow in ["->", "→", "=>"] {
                if let Some((a, b)) = s.split_once(arrow) {
                    return stages(a, b);
                }
            }
            match s.rsplit_once(':') {
                Some((p, l)) if l.trim().parse::<u32>().is_ok() => site(p, l.trim().parse().ok(), None),
                _ => site(s, None, None),
            }
        }
        Value::Object(o) => {
            let known = ["from", "to", "producer", "consumer", "path", "file", "line", "contract", "crossing"];
            if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(Error::UnknownKey { key: k.clone(), known: known.to_vec() });
            }
            let s = |k: &str| o.get(k).and_then(Value::as_str);
            if let (Some(a), Some(b)) = (s("from").or(s("producer")), s("to").or(s("consumer"))) {
                return stages(a, b);
            }
            let line = match o.get("line") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => {
                    Some(n.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or(Error::LineNotWhole)?)
                }
                Some(_) => return Err(Error::LineNotNumber),
            };
            let crossing = s("crossing").or(s("contract")).map(str::to_string);
            match s("path").or(s("file")) {
                Some(p) => site(p, line, crossing),
                None => Err(Error::WireShape),
            }
        }
        _ => Err(Error::WireType),
    }
}

type Contract = (String, Vec<Object>, Vec<RequestRule>);

fn parse_contract(v: &Value) -> Result<Contract, Vec<String>> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Ok((s.trim().to_string(), Vec::new(), Vec::new())),
        Value::Object(o) => {
            let mut errs = Vec::new();
            let known = ["obligation", "kind", "rules"];
            for k in o.keys().filter(|k| !known.contains(&k.as_str())) {
                errs.push(format!(".{k}: unknown key (one of: {})", known.join(", ")));
            }
            let obligation = match o.get("obligation") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
                Some(_) => {
                    errs.push(".obligation: a non-empty string".into());
                    String::new()
                }
                None => "the rewrite is behavior-preserving".to_string(),
            };
            let mut kinds = Vec::new();
            let kind_values: Vec<&Value> = match o.get("kind") {
                None => Vec::new(),
                Some(Value::Array(a)) => a.iter().collect(),
                Some(one) => vec![one],
            };
            for k in kind_values {
                match k.as_str().and_then(Object::parse) {
                    Some(obj) => kinds.push(obj),
                    None => errs.push(format!(
                        ".kind: `{}` is not one of {}",
                        crate::text::line(&k.to_string()),
                        Object::ALL.map(Object::id).join(", ")
                    )),
                }
            }
            let mut rules = Vec::new();
            match o.get("rules") {
                None => {}
                Some(Value::Array(a)) => {
                    for (i, r) in a.iter().enumerate() {
                        match parse_rule(r) {
                            Ok(r) => rules.push(r),
                            Err(e) => errs.push(format!(".rules[{i}]: {e}")),
                        }
                    }
                }
                Some(_) => errs.push(".rules: an array of rules".into()),
            }
            let mut seen = BTreeSet::new();
            for r in rules.iter().filter(|r| matches!(r.id.as_str(), "contract" | "wire")) {
                errs.push(format!(".rules: the id `{}` is reserved for the request's own obligations", r.id));
            }
            for r in &rules {
                if !seen.insert(r.id.clone()) {
                    errs.push(format!(".rules: the id `{}` is given twice", crate::text::line(&r.id)));
                }
            }
            if errs.is_empty() { Ok((obligation, kinds, rules)) } else { Err(errs) }
        }
        _ => Err(vec![": a non-empty string, or an object with `obligation`, `kind` and `rules`".into()]),
    }
}

fn parse_rule(v: &Value) -> Result<RequestRule, Error> {
    let Value::Object(o) = v else { return Err(Error::RuleType) };
    let known = ["id", "rule", "validation", "priority", "confidence"];
    if let Some(k) = o.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(Error::UnknownKey { key: k.clone(), known: known.to_vec() });
    }
    let field = |k: &str| -> Result<String, Error> {
        match o.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            Some(_) => Err(Error::FieldNotString { key: k.into() }),
            None => Err(Error::FieldMissing { key: k.into() }),
        }
    };
    Ok(RequestRule {
        id: field("id")?,
        rule: field("rule")?,
        validation: field("validation")?,
        priority: Priority::parse(&field("priority")?).map_err(|e| Error::Obligation(e.to_string()))?,
        confidence: RuleConfidence::parse(&field("confidence")?).map_err(|e| Error::Obligation(e.to_string()))?,
    })
}

fn parse_fix(v: &Value) -> Result<(Vec<String>, String), Vec<String>> {
    let (files, diff) = match v {
        Value::String(s) => (Vec::new(), s.clone()),
        Value::Object(o) => {
            let mut errs = Vec::new();
            for k in o.keys().filter(|k| !matches!(k.as_str(), "files" | "diff")) {
                errs.push(format!(".{k}: unknown key (one of: files, diff)"));
            }
            let files: Vec<String> = match o.get("files") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .filter_map(|(i, f)| match f {
                        Value::String(s) if !s.trim().is_empty() => Some(s.trim().trim_start_matches("./").to_string()),
                        Value::Object(m) => match m.get("path").and_then(Value::as_str) {
                            Some(p) => Some(p.trim().trim_start_matches("./").to_string()),
                            None => {
                                errs.push(format!(".files[{i}]: a path string (or an object with `path`)"));
                                None
                            }
                        },
                        _ => {
                            errs.push(format!(".files[{i}]: a path string"));
                            None
                        }
                    })
                    .collect(),
                Some(_) => {
                    errs.push(".files: an array of paths".into());
                    Vec::new()
                }
            };
            let diff = match o.get("diff") {
                Some(Value::String(s)) => s.clone(),
                Some(_) => {
                    errs.push(".diff: the unified diff, as a string".into());
                    String::new()
                }
                None => String::new(),
            };
            if !errs.is_empty() {
                return Err(errs);
            }
            (files, diff)
        }
        _ => return Err(vec![": the applied change: `{\"files\": [...], \"diff\": \"...\"}` or the diff text".into()]),
    };
    if diff.trim().is_empty() {
        return Err(vec![
            ".diff: empty: a request without the applied diff is refused; verification proves what shipped (R110)"
                .into(),
        ]);
    }
    Ok((files, diff))
}
