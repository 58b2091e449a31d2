//! Rendering of `andon check`: text, JSON, SARIF 2.1.0, GitHub workflow annotations, JUnit XML and
//! a Markdown pull-request summary.
//! Every format carries the same findings: tier, contract, location, message and witness chain.

use std::io::{self, Write};

use super::verdict_line;
use crate::api::structure::{outcome, stale_message, tally};
use crate::check::group::breaks;
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
        CheckFormat::Sarif => super::json(w, &super::sarif::log(r, version, root_uri)),
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
        "unjudged" => format!("{} to edit in {}", plural(r.unjudged.len(), "contract"), r.config),
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
        for l in breaks(f) {
            writeln!(w, "    {}", super::inline(&l))?;
        }
        for h in &f.witness {
            writeln!(w, "    {}", super::inline(&hop_text(h)))?;
        }
    }
    for u in &r.unjudged {
        let (config, contract) = (super::inline(&r.config), super::inline(&u.contract));
        writeln!(w, "{config}:{}:1: {contract}: {}", u.line, super::inline(&u.message))?;
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

/// GitHub workflow commands: one annotation per finding (its message and witness as the lines of
/// the annotation) and per stale exception, each through the one escaping of workflow commands.
fn github(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    use crate::text::{github_message, github_property};
    for f in r.findings.iter().filter(|f| f.excused.is_none()) {
        let level = if f.blocking() { "error" } else { "warning" };
        let mut body = vec![format!("{} [{}]", f.message, tags(f))];
        body.extend(breaks(f));
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
    for u in &r.unjudged {
        writeln!(
            w,
            "::error file={},line={},title={}::{}",
            github_property(&r.config),
            u.line,
            github_property(&format!("{}: cannot be judged", u.contract)),
            github_message(std::slice::from_ref(&u.message))
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
        let mine: Vec<&Finding> = r
            .findings
            .iter()
            .filter(|f| f.excused.is_none() && f.parts().iter().any(|p| p.contract == c.name))
            .collect();
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
                lines.extend(breaks(f).into_iter().map(|l| format!("    {l}")));
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
    let p = super::sarif::uri_path(&p);
    if p.ends_with('/') { format!("file://{p}") } else { format!("file://{p}/") }
}

/// The summary and the `andon: verdict …` line alone (for `--output`, on standard error).
pub fn verdict(w: &mut dyn Write, r: &CheckReport) -> io::Result<()> {
    summary_lines(w, r)?;
    verdict_line(w, outcome(r), &verdict_detail(r))
}
