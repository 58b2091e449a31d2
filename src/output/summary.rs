//! `andon check --format markdown`: a pull-request summary that fits `$GITHUB_STEP_SUMMARY`
//! (under 64 KB): the verdict, a table of contracts, each blocking finding with what it breaks and
//! its witness (new ones first under `--base`), stale exceptions, and the stream as a Mermaid flowchart with the
//! stage edges on the blocking findings' witnesses marked. Long lists end with a count of what was left out.
//! Repository text goes through `text::markdown`, or `text::line` inside a code span (a path, an
//! import, a name a message quotes between backticks), or `text::mermaid` inside the chart.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};

use crate::api::structure::{outcome, stale_message, tally};
use crate::check::{CheckReport, Finding};
use crate::ops::StreamReport;
use crate::text::markdown as md;

/// The summary stays under this many bytes (GitHub's step summary takes 1 MiB; a PR comment 64 KiB).
pub const LIMIT: usize = 60 * 1024;

/// Writes the summary of `r`, with the chart of `stream` when there is one.
pub fn markdown(w: &mut dyn Write, r: &CheckReport, stream: Option<&StreamReport>) -> io::Result<()> {
    let chart = match stream.map(|s| chart(r, s)) {
        Some(c) if c.len() > LIMIT / 2 => {
            "### Stream\n\nToo large to draw here: `andon stream --format mermaid`.\n".to_string()
        }
        c => c.unwrap_or_default(),
    };
    let mut out = head(r);
    // a quarter for the contracts, an eighth for the stale exceptions, half for the chart: the
    // findings fill what is left
    out.push_str(&contracts(r, LIMIT / 4));
    let tail = stale(r, LIMIT / 8) + &chart;
    out.push_str(&findings(r, LIMIT.saturating_sub(out.len() + tail.len() + 200)));
    out.push_str(&tail);
    w.write_all(out.as_bytes())
}

fn head(r: &CheckReport) -> String {
    let t = tally(r);
    let verdict = outcome(r);
    let mark = match verdict {
        "pass" => "✅",
        "blocked" => "❌",
        _ => "⚠️",
    };
    // as text: inside a code span the escapes would show
    let new = t.new.map(|n| format!(", {n} new since {}", md(r.base.as_deref().unwrap_or("base")))).unwrap_or_default();
    format!(
        "## {mark} andon check: {verdict}\n\n{} contracts checked, {} broken; {} blocking findings (tier 1: {}, tier 2: {}), {} advisory{new}; {} exceptions used, {} stale.\n\n",
        r.contracts.len(),
        t.broken,
        t.blocking,
        t.tiers[0],
        t.tiers[1],
        t.advisory,
        r.exceptions_used,
        r.stale_exceptions.len()
    )
}

/// The table of contracts, at most 200 rows within `budget` bytes.
fn contracts(r: &CheckReport, budget: usize) -> String {
    let mut s = String::from(
        "### Contracts\n\n| contract | kind | status | findings | blocking | excused |\n|---|---|---|---:|---:|---:|\n",
    );
    for (shown, c) in r.contracts.iter().enumerate() {
        let status = super::contract_status(c);
        let row = format!(
            "| {} | {} | {status} | {} | {} | {} |\n",
            md(&c.name),
            c.kind.name(),
            c.findings,
            c.blocking,
            c.excused
        );
        if shown == 200 || s.len() + row.len() > budget {
            s.push_str(&format!("| … and {} more contracts | | | | | |\n", r.contracts.len() - shown));
            break;
        }
        s.push_str(&row);
    }
    s.push('\n');
    s
}

/// The blocking findings, new ones first, each with its witness, within `budget` bytes.
fn findings(r: &CheckReport, budget: usize) -> String {
    let mut blocking: Vec<&Finding> = r.findings.iter().filter(|f| f.blocking()).collect();
    if blocking.is_empty() {
        return String::new();
    }
    blocking.sort_by_key(|f| f.new != Some(true));
    let mut s = String::from("### Blocking findings\n\n");
    for (i, f) in blocking.iter().enumerate() {
        let item = finding(f);
        if s.len() + item.len() > budget {
            s.push_str(&format!(
                "… and {} more blocking findings (`andon check` lists them all)\n",
                blocking.len() - i
            ));
            break;
        }
        s.push_str(&item);
    }
    s.push('\n');
    s
}

fn finding(f: &Finding) -> String {
    let new = if f.new == Some(true) { " **new**" } else { "" };
    let mut s = format!(
        "- **{}:{}** {}: {} (tier {}){new}\n",
        md(&f.path),
        f.line,
        md(&f.contract),
        message(&f.message),
        f.tier
    );
    for l in crate::check::group::breaks(f) {
        s.push_str(&format!("  - {}\n", message(&l)));
    }
    for h in &f.witness {
        s.push_str(&format!(
            "  - {} imports {} → {} ({}, tier {})\n",
            code(&format!("{}:{}", h.path, h.line)),
            code(&h.spec),
            code(&h.target),
            md(&h.confidence),
            h.tier
        ));
    }
    s
}

/// Repository text as a Markdown code span: [`crate::text::line`], between runs of backticks one
/// longer than any it holds (padded with a space where it starts or ends with one), so nothing in
/// it is Markdown and nothing needs a backslash.
fn code(s: &str) -> String {
    let one = crate::text::line(s);
    if one.is_empty() {
        return "` `".into();
    }
    let longest = one.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if one.starts_with('`') || one.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{one}{pad}{fence}")
}

/// One of andon's messages, which quote repository text between backticks: each quoted stretch as
/// a code span ([`code`]), the rest escaped ([`md`]); a message whose backticks do not pair (a
/// quoted name held one) is escaped whole.
fn message(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len() < 3 || parts.len() % 2 == 0 {
        return md(s);
    }
    parts.iter().enumerate().map(|(i, p)| if i % 2 == 1 { code(p) } else { md(p) }).collect()
}

/// The stale exceptions, at most 50 within `budget` bytes.
fn stale(r: &CheckReport, budget: usize) -> String {
    if r.stale_exceptions.is_empty() {
        return String::new();
    }
    let mut s = String::from("### Stale exceptions\n\n");
    for (shown, x) in r.stale_exceptions.iter().enumerate() {
        let item = format!(
            "- {} {}: {}\n",
            code(&format!("{}:{}", r.config, x.line)),
            md(&x.contract),
            message(&stale_message(x))
        );
        if shown == 50 || s.len() + item.len() > budget {
            s.push_str(&format!("- … and {} more\n", r.stale_exceptions.len() - shown));
            break;
        }
        s.push_str(&item);
    }
    s.push('\n');
    s
}

/// The stage of `path`: the stage whose root holds it (the deepest).
pub(crate) fn stage_of<'a>(stream: &'a StreamReport, path: &str) -> Option<&'a str> {
    stream
        .stages
        .iter()
        .filter(|s| s.root.is_empty() || s.root == "." || path == s.root || path.starts_with(&format!("{}/", s.root)))
        .max_by_key(|s| s.root.len())
        .map(|s| s.name.as_str())
}

/// The stage edges the blocking findings' witnesses cross, producer → consumer (the importer
/// consumes): each hop from one stage into another.
fn broken_edges<'a>(r: &CheckReport, stream: &'a StreamReport) -> BTreeSet<(&'a str, &'a str)> {
    let mut out = BTreeSet::new();
    let parts = r.findings.iter().filter(|f| f.blocking()).flat_map(|f| f.parts());
    for h in parts.flat_map(|f| &f.witness) {
        if let (Some(consumer), Some(producer)) = (stage_of(stream, &h.path), stage_of(stream, &h.target))
            && consumer != producer
        {
            out.insert((producer, consumer));
        }
    }
    out
}

/// The stream as a Mermaid flowchart: wires producer → consumer with their import counts; an edge
/// on a blocking finding's witness is red, and one that is no wire of the stream is drawn as
/// `broken`.
fn chart(r: &CheckReport, stream: &StreamReport) -> String {
    if stream.stages.len() > 150 {
        return format!(
            "### Stream\n\n{} stages: too many to draw here (`andon stream --format mermaid`).\n",
            stream.stages.len()
        );
    }
    let id: BTreeMap<&str, usize> = stream.order.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    let broken = broken_edges(r, stream);
    let mut s = String::from("### Stream\n\n```mermaid\nflowchart LR\n");
    for name in &stream.order {
        s.push_str(&format!("  s{}[\"{}\"]\n", id[name.as_str()], crate::text::mermaid(name)));
    }
    let (mut red, mut n) = (Vec::new(), 0);
    let mut drawn = BTreeSet::new();
    for x in &stream.wires {
        let (Some(a), Some(b)) = (id.get(x.producer.as_str()), id.get(x.consumer.as_str())) else { continue };
        let arrow = x.confidence.mermaid_arrow();
        s.push_str(&format!("  s{a} {arrow}|{}| s{b}\n", x.imports));
        if broken.contains(&(x.producer.as_str(), x.consumer.as_str())) {
            red.push(n);
        }
        drawn.insert((x.producer.as_str(), x.consumer.as_str()));
        n += 1;
    }
    for (p, c) in broken.iter().filter(|e| !drawn.contains(*e)) {
        let (Some(a), Some(b)) = (id.get(p), id.get(c)) else { continue };
        s.push_str(&format!("  s{a} -.->|broken| s{b}\n"));
        red.push(n);
        n += 1;
    }
    for i in red {
        s.push_str(&format!("  linkStyle {i} stroke:#d73a49,stroke-width:3px\n"));
    }
    s.push_str("```\n\nRed: a stage edge on the witness of a blocking finding.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_name_is_a_code_span_and_a_backtick_in_it_lengthens_the_fence() {
        assert_eq!(message("`a_b` must not depend on `c/**`"), "`a_b` must not depend on `c/**`");
        assert_eq!(message("no `x` in *y*"), "no `x` in \\*y\\*");
        // unpaired: escaped whole
        assert_eq!(message("`a` and `b"), "\\`a\\` and \\`b");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`a"), "`` `a ``");
        assert_eq!(code(""), "` `");
        assert_eq!(code("ev\u{202e}il"), "`ev\\u{202e}il`");
    }
}
