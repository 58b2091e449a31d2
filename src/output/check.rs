//! Rendering of `andon check`: text, JSON, SARIF 2.1.0, GitHub workflow annotations, JUnit XML and
//! a Markdown pull-request summary.
//! Every format carries the same findings: tier, contract, location, message and witness chain.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::verdict_line;
use crate::api::structure::{outcome, stale_message, tally};
use crate::check::{CheckReport, Finding, Hop};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckFormat {
    Text,
    Json,
    Sarif,
    Github,
    Junit,
    /// A pull-request summary ([`super::summary`]).
    Markdown,
}

fn plural(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn hop_text(h: &Hop) -> String {
    format!("{}:{}:{}: imports `{}` -> {} ({}, tier {})", h.path, h.line, h.col, h.spec, h.target, h.confidence, h.tier)
}

fn tags(f: &Finding) -> String {
    let mut t = vec![format!("tier {}", f.tier), if f.blocking() { "blocking" } else { "advisory" }.to_string()];
    if f.new == Some(true) {
        t.push("new".into());
    }
    t.join(", ")
}

/// `r` in `format`; the Markdown summary draws `stream` when given.
pub fn report(
    w: &mut dyn Write,
    r: &CheckReport,
    format: CheckFormat,
    version: &str,
    root_uri: &str,
    stream: Option<&crate::ops::StreamReport>,
) -> io::Result<()> {
    match format {
        CheckFormat::Markdown => super::summary::markdown(w, r, stream),
        CheckFormat::Text => text(w, r),
        CheckFormat::Json => super::json(w, r),
        CheckFormat::Sarif => super::json(w, &sarif(r, version, root_uri)),
        CheckFormat::Github => github(w, r),
        CheckFormat::Junit => junit(w, r),
    }
}

fn summary_lines(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    let t = tally(r);
    writeln!(
        w,
        "contracts: {} checked, {} kept, {} broken",
        r.contracts.len(),
        r.contracts.len() - t.broken,
        t.broken
    )?;
    let new = t.new.map(|n| format!("; {n} new since {}", r.base.as_deref().unwrap_or("base"))).unwrap_or_default();
    writeln!(
        w,
        "findings: {} blocking (tier 1: {}, tier 2: {}), {} advisory (tier 3){new}",
        t.blocking, t.tiers[0], t.tiers[1], t.advisory
    )?;
    writeln!(
        w,
        "exceptions: {} used, excusing {} finding{}; {} stale",
        r.exceptions_used,
        t.excused,
        if t.excused == 1 { "" } else { "s" },
        r.stale_exceptions.len()
    )
}

fn verdict_detail(r: &CheckReport) -> String {
    match outcome(r) {
        "stale-exceptions" => format!("{} to remove from {}", plural(r.stale_exceptions.len(), "exception"), r.config),
        "blocked" => plural(r.blocking(), "blocking finding"),
        _ => format!("{} kept", plural(r.contracts.len(), "contract")),
    }
}

fn text(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    for f in r.findings.iter().filter(|f| f.excused.is_none()) {
        writeln!(
            w,
            "{}:{}:{}: {}: {} [{}]",
            super::inline(&f.path),
            f.line,
            f.col,
            super::inline(&f.contract),
            super::inline(&f.message),
            tags(f)
        )?;
        for h in &f.witness {
            writeln!(w, "    {}", super::inline(&hop_text(h)))?;
        }
    }
    for s in &r.stale_exceptions {
        writeln!(
            w,
            "{}:{}:1: {}: {}",
            super::inline(&r.config),
            s.line,
            super::inline(&s.contract),
            super::inline(&stale_message(s))
        )?;
    }
    if !r.suspected_injections.is_empty() {
        super::injections(w, &r.suspected_injections, "", "  ", false)?;
    }
    for (path, why) in &r.unanalysed {
        writeln!(
            w,
            "note: {} was not analysed ({}): no contract sees its imports; raise max_file_size or fix the file",
            super::inline(path),
            super::inline(why)
        )?;
    }
    summary_lines(w, r)?;
    verdict_line(w, outcome(r), &verdict_detail(r))
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

const STALE_RULE: &str = "andon/stale-exception";

fn location(path: &str, line: u32, col: u32) -> Value {
    json!({ "physicalLocation": {
        "artifactLocation": { "uri": uri_path(path), "uriBaseId": "SRCROOT" },
        "region": { "startLine": line.max(1), "startColumn": col.max(1) } } })
}

/// A repo-relative path as a relative URI reference (percent-encoding what a URI cannot hold).
fn uri_path(p: &str) -> String {
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

/// The SARIF 2.1.0 log: one rule per contract and one for stale exceptions, one result per
/// finding and per stale exception.
fn sarif(r: &CheckReport, version: &str, root_uri: &str) -> Value {
    let ids = rule_ids(r);
    let mut rules: Vec<Value> = r
        .contracts
        .iter()
        .zip(&ids)
        .map(|(c, id)| {
            json!({ "id": id, "name": c.kind.name(),
                    "shortDescription": { "text": c.name },
                    "fullDescription": { "text": format!("{} contract: {}", c.kind.name(), c.description) },
                    "defaultConfiguration": { "level": "error" },
                    "properties": { "kind": c.kind.name(), "contract": c.name, "config_line": c.line } })
        })
        .collect();
    let stale_index = rules.len();
    rules.push(json!({ "id": STALE_RULE, "name": "stale-exception",
        "shortDescription": { "text": "An exception that excuses nothing" },
        "fullDescription": { "text": "A contract exception that matches no finding any more must be removed, so exceptions cannot outlive their reason." },
        "defaultConfiguration": { "level": "error" } }));
    let mut results: Vec<Value> = r.findings.iter().map(|f| sarif_result(r, f, &ids)).collect();
    for s in &r.stale_exceptions {
        results.push(json!({
            "ruleId": STALE_RULE, "ruleIndex": stale_index, "level": "error",
            "message": { "text": format!("{}: {}", s.contract, stale_message(s)) },
            "locations": [location(&r.config, s.line, 1)],
            "partialFingerprints": { "andonFinding/v1": format!("{:016x}", xxhash_rust::xxh3::xxh3_64(
                format!("stale\0{}\0{:?}\0{:?}", s.contract, s.from, s.to).as_bytes())) },
        }));
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "andon", "version": version, "semanticVersion": version, "rules": rules } },
            "originalUriBaseIds": { "SRCROOT": { "uri": root_uri } },
            "columnKind": "unicodeCodePoints",
            "results": results,
            "properties": { "verdict": outcome(r), "blocking": r.blocking(), "exceptions_used": r.exceptions_used },
        }],
    })
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

/// One finding as a SARIF result: its witness as a code flow, its exception as a suppression.
fn sarif_result(r: &CheckReport, f: &Finding, ids: &[String]) -> Value {
    let ci = r.contracts.iter().position(|c| c.name == f.contract).unwrap_or(0);
    let mut v = json!({
        "ruleId": ids[ci], "ruleIndex": ci,
        "level": if f.tier <= 2 { "error" } else { "warning" },
        "message": { "text": format!("{}: {} (tier {})", f.contract, f.message, f.tier) },
        "locations": [location(&f.path, f.line, f.col)],
        "partialFingerprints": { "andonFinding/v1": f.fingerprint },
        "properties": { "tier": f.tier, "blocking": f.blocking(), "contract": f.contract },
    });
    if !f.witness.is_empty() {
        let steps: Vec<Value> = f
            .witness
            .iter()
            .map(|h| {
                let mut loc = location(&h.path, h.line, h.col);
                loc["message"] = json!({ "text": format!("imports `{}` -> {} ({}, tier {})", h.spec, h.target, h.confidence, h.tier) });
                json!({ "location": loc })
            })
            .collect();
        v["codeFlows"] = json!([{ "threadFlows": [{ "locations": steps }] }]);
    }
    if let Some(e) = &f.excused {
        v["suppressions"] = json!([{ "kind": "external", "status": "accepted",
            "justification": e.reason, "location": location(&r.config, e.line, 1) }]);
    }
    if let Some(n) = f.new {
        v["baselineState"] = json!(if n { "new" } else { "unchanged" });
    }
    v
}

/// GitHub workflow commands: one annotation per finding (its message and witness as the lines of
/// the annotation) and per stale exception, each through the one escaping of workflow commands.
fn github(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    use crate::text::{github_message, github_property};
    for f in r.findings.iter().filter(|f| f.excused.is_none()) {
        let level = if f.blocking() { "error" } else { "warning" };
        let mut body = vec![format!("{} [{}]", f.message, tags(f))];
        body.extend(f.witness.iter().map(hop_text));
        writeln!(
            w,
            "::{level} file={},line={},col={},title={}::{}",
            github_property(&f.path),
            f.line,
            f.col,
            github_property(&format!("{} (tier {})", f.contract, f.tier)),
            github_message(&body)
        )?;
    }
    for s in &r.stale_exceptions {
        writeln!(
            w,
            "::error file={},line={},title={}::{}",
            github_property(&r.config),
            s.line,
            github_property(&format!("{}: stale exception", s.contract)),
            github_message(&[stale_message(s)])
        )?;
    }
    summary_lines(w, r)?;
    verdict_line(w, outcome(r), &verdict_detail(r))
}

/// Lines of XML text: each through the one HTML/XML escaping, so no repository string breaks one.
fn xml_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{}\n", crate::text::html(l))).collect()
}

fn junit(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    let stale = !r.stale_exceptions.is_empty();
    let tests = r.contracts.len() + 1;
    let failures = r.contracts.iter().filter(|c| c.blocking > 0).count() + stale as usize;
    writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(w, r#"<testsuites name="andon check" tests="{tests}" failures="{failures}" errors="0">"#)?;
    writeln!(w, r#"  <testsuite name="andon check" tests="{tests}" failures="{failures}" errors="0" skipped="0">"#)?;
    for c in &r.contracts {
        let mine: Vec<&Finding> = r.findings.iter().filter(|f| f.contract == c.name && f.excused.is_none()).collect();
        write!(w, r#"    <testcase classname="andon.{}" name="{}""#, c.kind.name(), crate::text::html(&c.name))?;
        if mine.is_empty() {
            writeln!(w, "/>")?;
            continue;
        }
        writeln!(w, ">")?;
        let render = |fs: &[&&Finding]| {
            let mut lines = Vec::new();
            for f in fs {
                lines.push(format!("{}:{}:{}: {} [{}]", f.path, f.line, f.col, f.message, tags(f)));
                lines.extend(f.witness.iter().map(|h| format!("    {}", hop_text(h))));
            }
            xml_lines(&lines)
        };
        let blocking: Vec<&&Finding> = mine.iter().filter(|f| f.blocking()).collect();
        let advisory: Vec<&&Finding> = mine.iter().filter(|f| !f.blocking()).collect();
        if !blocking.is_empty() {
            let tier = blocking.iter().map(|f| f.tier).min().unwrap_or(2);
            writeln!(
                w,
                r#"      <failure message="{}" type="tier-{tier}">{}</failure>"#,
                plural(blocking.len(), "blocking finding"),
                render(&blocking)
            )?;
        }
        if !advisory.is_empty() {
            writeln!(w, "      <system-out>{}</system-out>", render(&advisory))?;
        }
        writeln!(w, "    </testcase>")?;
    }
    write!(w, r#"    <testcase classname="andon.exceptions" name="every exception still excuses a finding""#)?;
    if stale {
        let msg: Vec<String> = r
            .stale_exceptions
            .iter()
            .map(|s| format!("{}:{}: {}: {}", r.config, s.line, s.contract, stale_message(s)))
            .collect();
        writeln!(w, ">")?;
        writeln!(w, r#"      <failure message="stale exceptions" type="config">{}</failure>"#, xml_lines(&msg))?;
        writeln!(w, "    </testcase>")?;
    } else {
        writeln!(w, "/>")?;
    }
    writeln!(w, "  </testsuite>")?;
    writeln!(w, "</testsuites>")
}

/// The `file://` URI of a directory (absolute), ending in `/`, for SARIF's `originalUriBaseIds`.
pub fn dir_uri(abs: &std::path::Path) -> String {
    let p = abs.to_string_lossy().replace('\\', "/");
    let p = if p.starts_with('/') { p } else { format!("/{p}") };
    let p = uri_path(&p);
    if p.ends_with('/') { format!("file://{p}") } else { format!("file://{p}/") }
}

/// The summary and the `andon: verdict …` line alone (for `--output`, on standard error).
pub fn verdict(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    summary_lines(w, r)?;
    verdict_line(w, outcome(r), &verdict_detail(r))
}
