//! Approach (d), agentic-process reliability (spec 000 §6; R97): whether an autonomous change's own
//! process stayed reliable, judged from a strict JSON process record ([`parse`]): a bounded retry,
//! an escalation path, and no tool scope beyond what it used ([`assess`]). It is a
//! process-reliability verdict, never a correctness one, and every claim it makes says so.
//! [`scan_agent_definition`] reads a Claude Code sub-agent file into a record, best effort.
//! Formats and rules: `docs/approaches-rubric-agentic.md`.

use serde::{Deserialize, Serialize};

use super::rubric::strict_json;
use crate::ledger::Verdict;
use crate::text::short as escape_inline;

/// The input format this andon reads (`"format": 1`).
pub const FORMAT: u32 = 1;

/// The largest retry bound taken as a bound: above it a process may as well retry forever.
pub const MAX_ATTEMPTS_LIMIT: u32 = 100;

/// What every claim of this approach ends with (R97).
pub const SCOPE: &str = "process reliability, not correctness";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub name: String,
    /// The tools this step used; each must be listed in `tools.used`.
    pub tools: Vec<String>,
    /// How many times the step was attempted (1: no retry).
    pub attempts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    pub max_attempts: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Escalation {
    /// Who or what the process hands over to.
    pub to: String,
    /// When it does.
    pub when: String,
}

/// Tool names as Claude Code permission rules spell them: `Read`, `Bash(git *)`, `*`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tools {
    pub granted: Vec<String>,
    pub used: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessRecord {
    pub format: u32,
    /// The process's name.
    pub process: String,
    /// Where the record came from (a file, a run id); `null` or absent if unknown.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// `null` or absent: no retry bound.
    #[serde(default)]
    pub retry: Option<Retry>,
    /// `null` or absent: no escalation path.
    #[serde(default)]
    pub escalation: Option<Escalation>,
    pub tools: Tools,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessCheck {
    UnboundedRetry,
    NoEscalation,
    ExcessToolScope,
}

impl ProcessCheck {
    pub fn name(self) -> &'static str {
        ["unbounded-retry", "no-escalation", "excess-tool-scope"][self as usize]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProcessFinding {
    pub check: ProcessCheck,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgenticResult {
    /// `proven` (no finding) or `refuted`.
    pub verdict: Verdict,
    pub findings: Vec<ProcessFinding>,
    /// What the verdict claims; always ends with [`SCOPE`].
    pub claim: String,
    pub detail: String,
}

/// One process record, strictly: the JSON itself (unknown, duplicate or missing fields and wrong
/// types, with line and column), then every problem listed: an empty process name or tool name, a
/// tool listed twice, `*` as a used tool, a step with no name or using a tool `tools.used` does
/// not list.
pub fn parse(bytes: &[u8]) -> Result<ProcessRecord, Vec<String>> {
    let rec: ProcessRecord = strict_json(bytes)?;
    let mut errors = Vec::new();
    if rec.process.trim().is_empty() {
        errors.push("process: empty".to_string());
    }
    for (field, list) in [("granted", &rec.tools.granted), ("used", &rec.tools.used)] {
        for (i, t) in list.iter().enumerate() {
            if t.trim().is_empty() {
                errors.push(format!("tools.{field}[{i}]: empty"));
            } else if list[..i].contains(t) {
                errors.push(format!("tools.{field}[{i}]: `{}` listed twice", escape_inline(t)));
            }
        }
    }
    if rec.tools.used.iter().any(|t| t.trim() == "*") {
        errors.push("tools.used: `*` is a grant, not a use; list the tools the process used".into());
    }
    for (i, s) in rec.steps.iter().enumerate() {
        if s.name.trim().is_empty() {
            errors.push(format!("steps[{i}]: empty name"));
        }
        for t in s.tools.iter().filter(|t| !rec.tools.used.contains(t)) {
            errors.push(format!("steps[{i}]: tool `{}` is not listed in tools.used", escape_inline(t)));
        }
    }
    if errors.is_empty() { Ok(rec) } else { Err(errors) }
}

/// `Bash(git *)` → (`Bash`, `Some("git *")`); `Read` → (`Read`, `None`).
fn split_tool(t: &str) -> (&str, Option<&str>) {
    let t = t.trim();
    match t.strip_suffix(')').and_then(|s| s.split_once('(')) {
        Some((name, arg)) => (name.trim(), Some(arg.trim())),
        None => (t, None),
    }
}

/// A permission pattern against an argument: `*` matches any run of characters; a trailing `:*`
/// (Claude Code's prefix form, `npm run test:*`) matches anything starting with what precedes it.
fn pattern_matches(pat: &str, arg: &str) -> bool {
    if let Some(prefix) = pat.strip_suffix(":*") {
        return arg.starts_with(prefix);
    }
    let (p, a): (Vec<char>, Vec<char>) = (pat.chars().collect(), arg.chars().collect());
    let (mut pi, mut ai, mut star, mut mark) = (0, 0, None, 0);
    while ai < a.len() {
        if pi < p.len() && p[pi] == '*' {
            (star, mark, pi) = (Some(pi), ai, pi + 1);
        } else if pi < p.len() && p[pi] == a[ai] {
            (pi, ai) = (pi + 1, ai + 1);
        } else if let Some(s) = star {
            (pi, mark) = (s + 1, mark + 1);
            ai = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// An argument that allows every call of its tool: none, `*` or `**`.
fn every_call(arg: Option<&str>) -> bool {
    arg.is_none_or(|a| a == "*" || a == "**")
}

/// Whether a grant and a use can be the same call: `*` grants everything; otherwise the tool
/// names must be equal and, where both give an argument, one must match the other as a pattern.
/// A use without an argument (`Bash`) overlaps every grant of that tool: the record does not say
/// more.
fn overlaps(grant: &str, used: &str) -> bool {
    if grant.trim() == "*" {
        return true;
    }
    let ((gn, ga), (un, ua)) = (split_tool(grant), split_tool(used));
    gn == un
        && match (ga, ua) {
            (Some(g), Some(u)) => pattern_matches(g, u) || pattern_matches(u, g),
            _ => true,
        }
}

fn quoted(list: &[&String]) -> String {
    list.iter().map(|t| format!("`{}`", escape_inline(t))).collect::<Vec<_>>().join(", ")
}

fn retry_findings(rec: &ProcessRecord) -> Vec<String> {
    let bound = match &rec.retry {
        None => return vec!["no retry bound: the record has no `retry`".into()],
        Some(r) if r.max_attempts == 0 => return vec!["a retry bound of 0 is no bound".into()],
        Some(r) if r.max_attempts > MAX_ATTEMPTS_LIMIT => {
            return vec![format!(
                "a retry bound of {} is above {MAX_ATTEMPTS_LIMIT} and is treated as unbounded",
                r.max_attempts
            )];
        }
        Some(r) => r.max_attempts,
    };
    (rec.steps.iter().filter(|s| s.attempts > bound))
        .map(|s| format!("step `{}` made {} attempts, beyond the bound of {bound}", escape_inline(&s.name), s.attempts))
        .collect()
}

fn escalation_findings(rec: &ProcessRecord) -> Vec<String> {
    match &rec.escalation {
        None => vec!["no escalation path: the record has no `escalation`".into()],
        Some(e) if e.to.trim().is_empty() => vec!["no escalation path: `escalation.to` is empty".into()],
        Some(e) if e.when.trim().is_empty() => {
            vec![format!("escalation to `{}` has no trigger: `escalation.when` is empty", escape_inline(&e.to))]
        }
        Some(_) => Vec::new(),
    }
}

fn scope_findings(tools: &Tools) -> Vec<String> {
    let mut out = Vec::new();
    for g in &tools.granted {
        let covered: Vec<&String> = tools.used.iter().filter(|u| overlaps(g, u)).collect();
        let (name, arg) = split_tool(g);
        if covered.is_empty() {
            out.push(format!("granted `{}`; the record shows no use of it", escape_inline(g)));
        } else if g.trim() == "*" {
            out.push(format!("`*` grants every tool; the record shows use of only {}", quoted(&covered)));
        } else if every_call(arg) && covered.iter().all(|u| !every_call(split_tool(u).1)) {
            out.push(format!(
                "`{}` grants every `{}` call; the record shows only {}",
                escape_inline(g),
                escape_inline(name),
                quoted(&covered)
            ));
        }
    }
    for u in tools.used.iter().filter(|u| !tools.granted.iter().any(|g| overlaps(g, u))) {
        out.push(format!("used `{}`, which no grant covers", escape_inline(u)));
    }
    out
}

/// The process-reliability verdict on `rec`: `proven` with no finding, `refuted` otherwise (rules
/// in `docs/approaches-rubric-agentic.md`).
pub fn assess(rec: &ProcessRecord) -> AgenticResult {
    let findings: Vec<ProcessFinding> = [
        (ProcessCheck::UnboundedRetry, retry_findings(rec)),
        (ProcessCheck::NoEscalation, escalation_findings(rec)),
        (ProcessCheck::ExcessToolScope, scope_findings(&rec.tools)),
    ]
    .into_iter()
    .flat_map(|(check, details)| details.into_iter().map(move |detail| ProcessFinding { check, detail }))
    .collect();
    let process = format!("process `{}`", escape_inline(&rec.process));
    if findings.is_empty() {
        let claim = format!("the process is bounded, has an escalation path and only the tool scope it used — {SCOPE}");
        let detail = format!(
            "{process}: at most {} attempts; escalates to `{}` when `{}`; every granted tool was used",
            rec.retry.as_ref().map_or(0, |r| r.max_attempts),
            escape_inline(rec.escalation.as_ref().map_or("", |e| &e.to)),
            escape_inline(rec.escalation.as_ref().map_or("", |e| &e.when)),
        );
        return AgenticResult { verdict: Verdict::Proven, findings, claim, detail };
    }
    let mut checks: Vec<&str> = findings.iter().map(|f| f.check.name()).collect();
    checks.dedup();
    let claim = format!("the process is not reliable: {} — {SCOPE}", checks.join(", "));
    let listed: Vec<String> = findings.iter().map(|f| format!("{}: {}", f.check.name(), f.detail)).collect();
    let detail = format!("{process}: {}", listed.join("; "));
    AgenticResult { verdict: Verdict::Refuted, findings, claim, detail }
}

/// A YAML scalar as written on one line: a trailing ` #` comment dropped, matching quotes removed.
fn scalar(v: &str) -> String {
    let v = v.trim();
    if let Some(q) = v.chars().next().filter(|c| ['"', '\''].contains(c)) {
        if let Some(end) = v[1..].find(q) {
            return v[1..1 + end].to_string();
        }
    }
    v.split(" #").next().unwrap_or("").trim().to_string()
}

/// A tool list written inline: `Read, Grep`, `"Read, Grep"` or `[Read, Grep]`, split at commas
/// outside parentheses.
fn inline_list(v: &str) -> Vec<String> {
    let v = scalar(v);
    let v = v.strip_prefix('[').and_then(|s| s.strip_suffix(']')).unwrap_or(&v);
    let (mut out, mut depth, mut cur) = (Vec::new(), 0i32, String::new());
    for c in v.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.iter().map(|t| scalar(t)).filter(|t| !t.is_empty()).collect()
}

/// Reads a Claude Code sub-agent definition (a `.md` file whose YAML front matter has `name:` and
/// optionally `tools:`, `disallowedTools:` and `maxTurns:`) into a process record, best effort and
/// without a YAML library: top-level `key: value` lines and `- item` block lists only. `None` when
/// the file is not such a definition.
///
/// - `tools` omitted grants every tool (`*`), as Claude Code does; `disallowedTools` removes exact
///   names from an explicit list (from `*` it cannot, so `*` stays).
/// - `maxTurns` becomes the retry bound (it bounds every loop the sub-agent runs); without it
///   there is none.
/// - A definition has no escalation path and records no use: `tools.used` is empty, so every grant
///   is reported unused until the caller fills `used` from a run.
pub fn scan_agent_definition(path: &str, text: &str) -> Option<ProcessRecord> {
    if !path.to_ascii_lowercase().ends_with(".md") {
        return None;
    }
    let mut lines = text.strip_prefix('\u{feff}').unwrap_or(text).lines();
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    // (key, inline value, block items), in order.
    let mut keys: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        let item = line.trim_start().strip_prefix("- ").filter(|_| line.starts_with([' ', '\t', '-']));
        match (item, keys.last_mut()) {
            (Some(item), Some(last)) => last.2.push(scalar(item)),
            _ if line.starts_with([' ', '\t', '#']) => {}
            _ => {
                if let Some((k, v)) = line.split_once(':') {
                    keys.push((k.trim().to_string(), v.trim().to_string(), Vec::new()));
                }
            }
        }
    }
    if !closed {
        return None;
    }
    let get = |key: &str| keys.iter().find(|k| k.0 == key);
    let list = |key: &str| get(key).map(|(_, v, items)| if v.is_empty() { items.clone() } else { inline_list(v) });
    let name = scalar(&get("name")?.1);
    if name.is_empty() {
        return None;
    }
    let mut granted = list("tools").unwrap_or_else(|| vec!["*".into()]);
    if let Some(denied) = list("disallowedTools") {
        granted.retain(|t| t == "*" || !denied.contains(t));
    }
    let retry = get("maxTurns").and_then(|k| scalar(&k.1).parse().ok()).map(|max_attempts| Retry { max_attempts });
    Some(ProcessRecord {
        format: FORMAT,
        process: name,
        source: Some(path.to_string()),
        steps: Vec::new(),
        retry,
        escalation: None,
        tools: Tools { granted, used: Vec::new() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> String {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-input");
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    fn record() -> ProcessRecord {
        ProcessRecord {
            format: FORMAT,
            process: "dependency-bump".into(),
            source: None,
            steps: vec![Step { name: "edit manifest".into(), tools: vec!["Edit".into()], attempts: 2 }],
            retry: Some(Retry { max_attempts: 3 }),
            escalation: Some(Escalation { to: "maintainers queue".into(), when: "a test still fails".into() }),
            tools: Tools {
                granted: vec!["Read".into(), "Edit".into(), "Bash(cargo test:*)".into()],
                used: vec!["Read".into(), "Edit".into(), "Bash(cargo test -p andon)".into()],
            },
        }
    }

    fn edited(f: impl FnOnce(&mut ProcessRecord)) -> ProcessRecord {
        let mut r = record();
        f(&mut r);
        r
    }

    /// The findings of `rec` as (check, detail).
    fn found(rec: &ProcessRecord) -> Vec<(ProcessCheck, String)> {
        assess(rec).findings.into_iter().map(|f| (f.check, f.detail)).collect()
    }

    #[test]
    fn a_bounded_escalating_minimal_process_is_proven_as_process_reliability() {
        let r = assess(&record());
        assert_eq!(r.verdict, Verdict::Proven, "{r:?}");
        assert!(r.findings.is_empty());
        assert_eq!(
            r.claim,
            "the process is bounded, has an escalation path and only the tool scope it used — process reliability, not correctness"
        );
        assert!(
            r.detail.starts_with("process `dependency-bump`: at most 3 attempts; escalates to `maintainers queue`")
        );
    }

    #[test]
    fn unbounded_retry() {
        use ProcessCheck::UnboundedRetry as U;
        let none = found(&edited(|r| r.retry = None));
        assert_eq!(none, [(U, "no retry bound: the record has no `retry`".to_string())]);
        let zero = found(&edited(|r| r.retry = Some(Retry { max_attempts: 0 })));
        assert_eq!(zero, [(U, "a retry bound of 0 is no bound".to_string())]);
        let at_limit = edited(|r| r.retry = Some(Retry { max_attempts: MAX_ATTEMPTS_LIMIT }));
        assert!(found(&at_limit).is_empty());
        let absurd = found(&edited(|r| r.retry = Some(Retry { max_attempts: 101 })));
        assert_eq!(absurd, [(U, "a retry bound of 101 is above 100 and is treated as unbounded".to_string())]);
        let exceeded = found(&edited(|r| r.steps[0].attempts = 7));
        assert_eq!(exceeded, [(U, "step `edit manifest` made 7 attempts, beyond the bound of 3".to_string())]);
        let r = assess(&edited(|r| r.retry = None));
        assert_eq!(r.verdict, Verdict::Refuted);
        assert_eq!(r.claim, "the process is not reliable: unbounded-retry — process reliability, not correctness");
    }

    #[test]
    fn no_escalation() {
        use ProcessCheck::NoEscalation as N;
        assert_eq!(
            found(&edited(|r| r.escalation = None)),
            [(N, "no escalation path: the record has no `escalation`".into())]
        );
        let empty_to = edited(|r| r.escalation.as_mut().unwrap().to = "  ".into());
        assert_eq!(found(&empty_to), [(N, "no escalation path: `escalation.to` is empty".into())]);
        let no_when = edited(|r| r.escalation.as_mut().unwrap().when = String::new());
        assert_eq!(
            found(&no_when)[0].1,
            "escalation to `maintainers queue` has no trigger: `escalation.when` is empty"
        );
    }

    #[test]
    fn excess_tool_scope() {
        let details = |f: &dyn Fn(&mut Tools)| -> Vec<String> {
            let rec = edited(|r| f(&mut r.tools));
            let fs = found(&rec);
            assert!(fs.iter().all(|(c, _)| *c == ProcessCheck::ExcessToolScope));
            fs.into_iter().map(|(_, d)| d).collect()
        };
        assert_eq!(
            details(&|t| t.granted.push("WebFetch".into())),
            ["granted `WebFetch`; the record shows no use of it"]
        );
        assert_eq!(
            details(&|t| t.granted.push("*".into())),
            ["`*` grants every tool; the record shows use of only `Read`, `Edit`, `Bash(cargo test -p andon)`"]
        );
        assert_eq!(
            details(&|t| t.granted[2] = "Bash(*)".into()),
            ["`Bash(*)` grants every `Bash` call; the record shows only `Bash(cargo test -p andon)`"]
        );
        assert_eq!(
            details(&|t| t.granted[2] = "Bash".into()),
            ["`Bash` grants every `Bash` call; the record shows only `Bash(cargo test -p andon)`"]
        );
        // A use that says no more than the tool's name cannot show the grant was wider.
        assert!(details(&|t| (t.granted[2], t.used[2]) = ("Bash(*)".into(), "Bash".into())).is_empty());
        assert_eq!(
            details(&|t| t.granted[2] = "Bash(git *)".into()),
            [
                "granted `Bash(git *)`; the record shows no use of it",
                "used `Bash(cargo test -p andon)`, which no grant covers",
            ]
        );
        assert!(details(&|t| t.granted[2] = "Bash(cargo * -p andon)".into()).is_empty());
        let r = assess(&edited(|r| {
            r.retry = None;
            r.tools.granted.push("Write".into());
        }));
        assert_eq!(
            r.claim,
            "the process is not reliable: unbounded-retry, excess-tool-scope — process reliability, not correctness"
        );
        assert_eq!(
            r.detail,
            "process `dependency-bump`: unbounded-retry: no retry bound: the record has no `retry`; excess-tool-scope: granted `Write`; the record shows no use of it"
        );
    }

    #[test]
    fn patterns() {
        for (p, a, want) in [
            ("git *", "git status", true),
            ("git *", "cargo test", false),
            ("npm run test:*", "npm run test -- --watch", true),
            ("*.rs", "src/lib.rs", true),
            ("src/**", "src/evidence/mod.rs", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
        ] {
            assert_eq!(pattern_matches(p, a), want, "{p} ~ {a}");
        }
        assert_eq!(split_tool(" Bash(git *) "), ("Bash", Some("git *")));
        assert_eq!(split_tool("mcp__github__create_issue"), ("mcp__github__create_issue", None));
    }

    #[track_caller]
    fn parse_err(text: &str) -> Vec<String> {
        parse(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn parses_strictly() {
        let good = fixture("agentic-reliable.json");
        assert_eq!(parse(good.as_bytes()).unwrap().tools.granted.len(), 4);
        let e = parse_err(&good.replacen("\"max_attempts\"", "\"max_attempts\": 3, \"backoff\"", 1));
        assert!(
            e[0].starts_with("line ") && e[0].contains("unknown field `backoff`, expected `max_attempts`"),
            "{e:?}"
        );
        let e = parse_err(&good.replacen("\"max_attempts\": 3", "\"max_attempts\": -1", 1));
        assert!(e[0].contains("invalid value: integer `-1`"), "{e:?}");
        let e = parse_err(&good.replacen("\"format\": 1", "\"format\": \"1\"", 1));
        assert_eq!(e, ["format \"1\" is not one this andon reads (it reads format 1)"]);
        let e = parse_err(&good.replacen("\"when\"", "\"if\"", 1));
        assert!(e[0].contains("unknown field `if`"), "{e:?}");
        let e = parse_err("{\"format\": 1, \"process\": \"p\"}");
        assert_eq!(e, ["line 1 column 29: missing field `tools`"]);
        let e = parse_err("{\"format\": 1,\n \"process\": \"p\",\n \"tools\": {\"granted\": [], \"used\": []\n");
        assert!(e[0].starts_with("line 4 column 0: EOF"), "{e:?}");
        let bad = r#"{"format": 1, "process": " ", "steps": [{"name": "", "tools": ["Write"], "attempts": 1}],
            "tools": {"granted": ["Read", "Read", ""], "used": ["*"]}}"#;
        assert_eq!(
            parse_err(bad),
            [
                "process: empty",
                "tools.granted[1]: `Read` listed twice",
                "tools.granted[2]: empty",
                "tools.used: `*` is a grant, not a use; list the tools the process used",
                "steps[0]: empty name",
                "steps[0]: tool `Write` is not listed in tools.used",
            ]
        );
        let minimal = parse(br#"{"format": 1, "process": "p", "tools": {"granted": [], "used": []}}"#).unwrap();
        assert_eq!((minimal.retry, minimal.escalation, minimal.steps.len()), (None, None, 0));
    }

    #[test]
    fn the_fixtures_assess_as_documented() {
        let ok = assess(&parse(fixture("agentic-reliable.json").as_bytes()).unwrap());
        assert_eq!(ok.verdict, Verdict::Proven, "{ok:?}");
        let bad = assess(&parse(fixture("agentic-unreliable.json").as_bytes()).unwrap());
        assert_eq!(bad.verdict, Verdict::Refuted);
        let checks: Vec<_> = bad.findings.iter().map(|f| f.check).collect();
        assert!(checks.contains(&ProcessCheck::UnboundedRetry) && checks.contains(&ProcessCheck::NoEscalation));
        assert!(checks.contains(&ProcessCheck::ExcessToolScope));
        let json = serde_json::to_value(&bad).unwrap();
        assert_eq!(json["verdict"], "refuted");
        assert_eq!(json["findings"][0]["check"], "unbounded-retry");
    }

    #[test]
    fn reads_a_claude_code_sub_agent() {
        let path = "tests/fixtures/evidence-input/agent-definition.md";
        let rec = scan_agent_definition(path, &fixture("agent-definition.md")).unwrap();
        assert_eq!(rec.process, "dependency-updater");
        assert_eq!(rec.source.as_deref(), Some(path));
        assert_eq!(rec.tools.granted, ["Read", "Edit", "Bash(cargo update:*)", "Bash(cargo test:*)"]);
        assert_eq!(rec.retry, Some(Retry { max_attempts: 12 }));
        let r = assess(&rec);
        assert_eq!(r.verdict, Verdict::Refuted);
        assert_eq!(r.findings.iter().filter(|f| f.check == ProcessCheck::ExcessToolScope).count(), 4);
        assert_eq!(r.findings.iter().filter(|f| f.check == ProcessCheck::NoEscalation).count(), 1);
        // Once the caller records what a run used, only the missing escalation remains.
        let mut used = rec.clone();
        used.tools.used =
            ["Read", "Edit", "Bash(cargo update -p serde)", "Bash(cargo test)"].map(String::from).to_vec();
        assert_eq!(found(&used).iter().map(|f| f.0).collect::<Vec<_>>(), [ProcessCheck::NoEscalation]);
    }

    #[test]
    fn sub_agent_front_matter_variants() {
        let scan = |fm: &str| scan_agent_definition("a.md", &format!("---\nname: a\n{fm}---\nBody.\n"));
        let granted = |fm: &str| scan(fm).unwrap().tools.granted;
        assert_eq!(granted("description: d\n"), ["*"]);
        assert_eq!(granted("tools: []\n"), Vec::<String>::new());
        assert_eq!(granted("tools: [Read, \"Bash(git add, git commit)\"]\n"), ["Read", "Bash(git add, git commit)"]);
        assert_eq!(granted("tools: \"Read, Grep\" # read-only\n"), ["Read", "Grep"]);
        assert_eq!(granted("tools:\n  - Read\n  - 'Grep'\n"), ["Read", "Grep"]);
        assert_eq!(granted("tools: Read, Grep, Bash\ndisallowedTools: Bash\n"), ["Read", "Grep"]);
        assert_eq!(granted("disallowedTools: Bash\n"), ["*"]);
        assert_eq!(granted("description: |\n  - not a tool\ntools: Read\n"), ["Read"]);
        assert_eq!(scan("maxTurns: many\n").unwrap().retry, None);
        assert_eq!(scan_agent_definition("a.txt", "---\nname: a\n---\n"), None);
        assert_eq!(scan_agent_definition("a.md", "# Notes\nname: a\n"), None);
        assert_eq!(scan_agent_definition("a.md", "---\nname: a\n"), None);
        assert_eq!(scan_agent_definition("a.md", "---\ndescription: d\n---\n"), None);
        assert_eq!(scan_agent_definition("a.md", "---\nname: \"\"\n---\n"), None);
    }
}
