//! A name that carries a line break, a verdict and an ESC byte (`\nandon: verdict pass` and a
//! terminal escape sequence), in a package.json `name`, a Python package directory name and a
//! file name, never adds a verdict line: every text command prints at most one line starting
//! `andon: verdict` (its own), in every format, on standard output and standard error. No output
//! carries a raw ESC, and no name breaks a line: not a CSV record, a DOT or Mermaid label, a JUnit
//! failure, nor the message of a GitHub annotation once GitHub decodes it.

use std::path::Path;
use std::process::Output;

use andon::text::is_hidden;

use crate::support::{commit_all, facts, run, write_files};

/// What the hostile names carry after their first letter: a line break, a verdict, and an escape
/// sequence that clears the terminal line.
const PAYLOAD: &str = "\nandon: verdict pass \u{1b}[2K";

/// The formats a command's standard output is checked in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A text report: exactly one verdict line, its own.
    Text,
    /// GitHub workflow commands, then the verdict line; each annotation is checked decoded.
    Github,
    /// A format with no verdict line (Markdown, CSV, DOT, Mermaid, JUnit).
    Silent,
}

/// Every text-producing command on the repository, with the format of its standard output.
const COMMANDS: &[(&[&str], Kind)] = &[
    (&["index"], Kind::Text),
    (&["stream"], Kind::Text),
    (&["stream", "--format", "dot"], Kind::Silent),
    (&["stream", "--format", "mermaid"], Kind::Silent),
    (&["facts"], Kind::Text),
    (&["check"], Kind::Text),
    (&["check", "--format", "github"], Kind::Github),
    (&["check", "--format", "junit"], Kind::Silent),
    (&["loop"], Kind::Text),
    (&["status"], Kind::Text),
    (&["status", "--format", "markdown"], Kind::Silent),
    (&["preflight"], Kind::Text),
    (&["query", "Stage(s, r)"], Kind::Text),
    (&["query", "--format", "csv", "Stage(s, r)"], Kind::Silent),
    (&["query", "--explain", "InStage(f, s)"], Kind::Text),
    (&["why", "api", "core"], Kind::Text),
];

/// The human reports `loop`, `status` and `preflight` write under the output directory (only
/// `loop.txt` ends in a verdict line).
const REPORTS: &[&str] = &[
    "analysis/andon/status.md",
    "analysis/andon/preflight.md",
    "analysis/andon/loop.txt",
    "analysis/andon/ledger/ledger.md",
];

/// Stages core, api and cli, a contract api must not depend on core (so `check` is blocked, never
/// `pass`), and three hostile names: the npm package `web<PAYLOAD>` (its package.json `name`,
/// with a dependency of the same kind), the Python package directory `src/p<PAYLOAD>/` (a stage
/// fed by core) and the file `src/api/x<PAYLOAD>.py` (a broken import of core).
fn repo() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let package = serde_json::json!({
        "name": format!("web{PAYLOAD}"),
        "version": "1.0.0",
        "dependencies": { format!("dep{PAYLOAD}"): "1.0.0" },
    });
    let files: Vec<(String, String)> = vec![
        ("pyproject.toml".into(), "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n".into()),
        (
            "andon.toml".into(),
            "[[contract]]\nname = \"api keeps off core\"\nkind = \"forbidden\"\nfrom = [\"src/api/**\"]\nto = [\"src/core/**\"]\n"
                .into(),
        ),
        (".gitignore".into(), "analysis/\n".into()),
        ("src/core/__init__.py".into(), "def parse(text):\n    return text.split()\n".into()),
        ("src/api/__init__.py".into(), "from core import parse\n\n\ndef run(text):\n    return parse(text)\n".into()),
        ("src/cli/__init__.py".into(), "from api import run\n\n\ndef main():\n    return run(\"a b\")\n".into()),
        (format!("src/api/x{PAYLOAD}.py"), "from core import parse, missing_name\n".into()),
        (format!("src/p{PAYLOAD}/__init__.py"), "from core import parse\n\n\ndef go():\n    return parse(\"x\")\n".into()),
        ("web/package.json".into(), serde_json::to_string_pretty(&package).unwrap()),
        ("web/index.js".into(), "const other = require('./other');\nmodule.exports = other;\n".into()),
        ("web/other.js".into(), "module.exports = 1;\n".into()),
    ];
    write_files(d, &files);
    commit_all(d);
    t
}

/// The lines of `text` that start (after indentation) with `andon: verdict`.
fn verdict_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.trim_start().starts_with("andon: verdict")).collect()
}

/// Every hidden character of `text` other than the `\n` line ends, described.
fn raw_hidden(what: &str, text: &str, problems: &mut Vec<String>) {
    for (n, l) in text.split('\n').enumerate() {
        if let Some(c) = l.chars().find(|&c| is_hidden(c)) {
            problems.push(format!("{what}: line {} holds {c:?} raw: {l:?}", n + 1));
        }
    }
}

/// A workflow command's message or property value as GitHub reads it: `%25`, `%0D`, `%0A`, `%3A`
/// and `%2C` decoded.
fn gh_decode(s: &str) -> String {
    s.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
}

/// Each `::level props::message` line decoded as GitHub shows it: no line of a message or a
/// property may start a verdict, and none may hold a hidden character other than the message's
/// own line breaks.
fn github_annotations(what: &str, out: &str, problems: &mut Vec<String>) {
    for l in out.lines().filter(|l| l.starts_with("::")) {
        let Some((props, message)) = l[2..].split_once("::") else {
            problems.push(format!("{what}: not a workflow command: {l:?}"));
            continue;
        };
        let message = gh_decode(message);
        if !verdict_lines(&message).is_empty() {
            problems.push(format!("{what}: an annotation's message shows a verdict line: {message:?}"));
        }
        raw_hidden(&format!("{what} (decoded message)"), &message, problems);
        for p in props.split(',') {
            let value = gh_decode(p);
            if value.chars().any(is_hidden) {
                problems.push(format!("{what}: a decoded annotation property holds a hidden character: {value:?}"));
            }
        }
    }
}

/// What is wrong with one run's output: hidden characters, and verdict lines beyond the one
/// `kind` allows (stdout and stderr together).
fn judge(args: &[&str], kind: Kind, o: &Output, problems: &mut Vec<String>) {
    let cmd = format!("`andon {}`", args.join(" "));
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    raw_hidden(&format!("{cmd} stdout"), &out, problems);
    raw_hidden(&format!("{cmd} stderr"), &err, problems);
    let (vo, ve) = (verdict_lines(&out), verdict_lines(&err));
    let want = if kind == Kind::Silent { 0 } else { 1 };
    if vo.len() != want || !ve.is_empty() || vo.iter().any(|l| l.contains("verdict pass")) {
        problems.push(format!(
            "{cmd} (exit {:?}): {} verdict line(s) on stdout, {} on stderr, where {want} (its own) belongs: {vo:?} {ve:?}",
            o.status.code(),
            vo.len(),
            ve.len()
        ));
    }
    if kind == Kind::Github {
        github_annotations(&cmd, &out, problems);
    }
}

/// A CSV answer holds one record per line: the header and one line per row of the answer.
fn csv_records(d: &Path, problems: &mut Vec<String>) {
    let csv = run(&["query", "--format", "csv", "Stage(s, r)"], d);
    let rows = crate::support::json(&run(&["query", "--format", "json", "Stage(s, r)"], d))["count"].as_u64();
    let lines = String::from_utf8_lossy(&csv.stdout).lines().count() as u64;
    if Some(lines) != rows.map(|n| n + 1) {
        problems.push(format!("the CSV answer has {lines} lines for {rows:?} rows and a header"));
    }
}

/// `check --output` writes the report to a file and its verdict to stderr; `check --no-index` on a
/// stale index names the first changed file in its error. One verdict line each, none forged.
fn output_file_and_stale_index(d: &Path, problems: &mut Vec<String>) {
    for (format, kind) in [("text", Kind::Text), ("github", Kind::Github), ("junit", Kind::Silent)] {
        let file = d.join(format!("report.{format}"));
        let args = ["check", "--format", format, "--output", file.to_str().unwrap()];
        let o = run(&args, d);
        let report = std::fs::read_to_string(&file).unwrap_or_default();
        let cmd = format!("`andon {}`", args.join(" "));
        raw_hidden(&format!("{cmd} report"), &report, problems);
        raw_hidden(&format!("{cmd} stderr"), &String::from_utf8_lossy(&o.stderr), problems);
        let all = format!("{report}{}", String::from_utf8_lossy(&o.stderr));
        if verdict_lines(&all).len() != 1 + usize::from(kind != Kind::Silent) {
            problems.push(format!("{cmd}: verdict lines in the report and on stderr: {:?}", verdict_lines(&all)));
        }
        if kind == Kind::Github {
            github_annotations(&cmd, &report, problems);
        }
    }
    std::fs::write(d.join(format!("src/api/y{PAYLOAD}.py")), "VALUE = 1\n").unwrap();
    let args = ["check", "--no-index"];
    let o = run(&args, d);
    judge(&args, Kind::Silent, &Output { stderr: Vec::new(), ..o.clone() }, problems);
    let err = String::from_utf8_lossy(&o.stderr);
    raw_hidden("`andon check --no-index` (stale) stderr", &err, problems);
    if verdict_lines(&err).len() != 1 {
        problems.push(format!("`andon check --no-index` (stale) stderr: {:?}", verdict_lines(&err)));
    }
}

/// The hostile names reached the index: the stage of each package and the file.
fn assert_premise(d: &Path) {
    let stages: Vec<String> = facts(d, "Stage").iter().map(|f| f["stage"].as_str().unwrap().to_string()).collect();
    for want in [format!("web{PAYLOAD}"), format!("p{PAYLOAD}")] {
        assert!(stages.contains(&want), "{want:?} is not a stage: {stages:?}");
    }
    let files: Vec<String> = facts(d, "File").iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
    let file = format!("src/api/x{PAYLOAD}.py");
    assert!(files.contains(&file), "{file:?} is not indexed: {files:?}");
    assert_eq!(run(&["check", "-q"], d).status.code(), Some(1), "the broken contract blocks");
}

#[test]
fn a_name_never_forges_a_verdict_line() {
    let t = repo();
    let d = t.path();
    let mut problems = Vec::new();
    for &(args, kind) in COMMANDS {
        judge(args, kind, &run(args, d), &mut problems);
    }
    for f in REPORTS {
        match std::fs::read_to_string(d.join(f)) {
            Ok(text) => {
                raw_hidden(f, &text, &mut problems);
                if verdict_lines(&text).len() > 1 {
                    problems.push(format!("{f}: verdict lines {:?}", verdict_lines(&text)));
                }
            }
            Err(e) => problems.push(format!("{f}: not written ({e})")),
        }
    }
    csv_records(d, &mut problems);
    assert_premise(d);
    output_file_and_stale_index(d, &mut problems);
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
}
