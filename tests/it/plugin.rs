//! The Claude Code plugin under `plugin/`: its manifest and MCP configuration name andon as it
//! is, every command its skills and agents name exists, every example in a skill prints what the
//! skill shows, the panel agents' example outputs parse as their role's, and the Stop hook
//! reminds once of a gap awaiting verification.

use crate::support::{andon, run_ok, scratch, three_stages};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn plugin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin")
}

fn read(rel: &str) -> String {
    let p = plugin().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn read_json(rel: &str) -> serde_json::Value {
    serde_json::from_str(&read(rel)).unwrap_or_else(|e| panic!("plugin/{rel}: {e}"))
}

/// The files under `plugin/<dir>` whose name ends in `suffix`, sorted.
fn files(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![plugin().join(dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The `key: value` lines of a Markdown file's YAML front matter, checked to be plain scalars a
/// YAML reader cannot take for anything else.
fn front_matter(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.strip_prefix("---\n").unwrap_or_else(|| panic!("{}: no front matter", path.display()));
    let end = body.find("\n---\n").unwrap_or_else(|| panic!("{}: front matter not closed", path.display()));
    body[..end]
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(": ").unwrap_or_else(|| panic!("{}: `{l}` is not `key: value`", path.display()));
            assert!(!v.contains(": ") && !v.contains(" #"), "{}: `{k}` must be a plain scalar", path.display());
            assert!(
                !v.starts_with(|c| "`'\"[]{}>|*&!%@,?:-#".contains(c)),
                "{}: `{k}` starts with a YAML indicator",
                path.display()
            );
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn value<'a>(fm: &'a [(String, String)], key: &str, path: &Path) -> &'a str {
    fm.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("{}: no `{key}`", path.display()))
}

#[test]
fn manifest_names_andon_with_cargos_version_and_license() {
    let m = read_json(".claude-plugin/plugin.json");
    assert_eq!(m["name"], "andon");
    assert_eq!(m["version"], env!("CARGO_PKG_VERSION"), "plugin.json's version is Cargo.toml's");
    assert_eq!(m["license"], env!("CARGO_PKG_LICENSE"), "plugin.json's license is Cargo.toml's");
    assert!(m["description"].as_str().is_some_and(|d| !d.is_empty()));
    assert!(m["author"]["name"].as_str().is_some_and(|a| !a.is_empty()));
    let market: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".claude-plugin/marketplace.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(market["plugins"][0]["name"], "andon");
    assert_eq!(market["plugins"][0]["source"], "./plugin");
}

#[test]
fn mcp_json_starts_andon_mcp_on_the_project() {
    let m = read_json(".mcp.json");
    let servers = m["mcpServers"].as_object().expect("mcpServers");
    assert_eq!(servers.keys().collect::<Vec<_>>(), ["andon"]);
    assert_eq!(servers["andon"]["command"], "andon");
    assert_eq!(servers["andon"]["args"], serde_json::json!(["mcp", "${CLAUDE_PROJECT_DIR}"]));
}

#[test]
fn skills_and_agents_carry_their_front_matter() {
    let skills = files("skills", "SKILL.md");
    let names: Vec<String> =
        skills.iter().map(|p| p.parent().unwrap().file_name().unwrap().to_string_lossy().into_owned()).collect();
    for want in ["andon-gate", "andon-loop", "andon-query"] {
        assert!(names.iter().any(|n| n == want), "no skill {want}: {names:?}");
    }
    for (p, dir) in skills.iter().zip(&names) {
        let fm = front_matter(p);
        // the Agent Skills format: the name is the directory's, lowercase words joined by hyphens
        let name = value(&fm, "name", p);
        assert_eq!(name, dir, "{}: name is the directory's", p.display());
        assert!(
            name.len() <= 64
                && name
                    .split('-')
                    .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
        );
        let d = value(&fm, "description", p);
        assert!(!d.is_empty() && d.chars().count() <= 1024, "{}: description of 1 to 1024 characters", p.display());
    }
    let agents = files("agents", ".md");
    let roles: Vec<String> = agents.iter().map(|p| p.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    let want: Vec<&str> = andon::panel::Role::ALL.iter().map(|r| r.name()).collect();
    let mut sorted = want.clone();
    sorted.sort();
    assert_eq!(roles, sorted, "one agent per panel role");
    for (p, role) in agents.iter().zip(&roles) {
        let fm = front_matter(p);
        assert_eq!(value(&fm, "name", p), format!("panel-{role}"));
        assert!(!value(&fm, "description", p).is_empty());
    }
}

/// The `andon <command> [<subcommand>]` names in a text's code: fenced `sh` blocks, inline code
/// spans, and (for a script) every line that is not a comment.
fn commands_named(text: &str, script: bool) -> Vec<Vec<String>> {
    let mut code = Vec::new();
    let mut fence: Option<String> = None;
    for line in text.lines() {
        match (&fence, line.trim_start().strip_prefix("```")) {
            (None, Some(lang)) => fence = Some(lang.trim().to_string()),
            (Some(_), Some(_)) => fence = None,
            (Some(lang), None) if lang == "sh" => code.push(line.to_string()),
            (Some(_), None) => {}
            (None, None) if script => {
                if !line.trim_start().starts_with('#') {
                    code.push(line.to_string())
                }
            }
            (None, None) => code.extend(line.split('`').skip(1).step_by(2).map(str::to_string)),
        }
    }
    let mut out = Vec::new();
    for c in code {
        let mut rest = c.as_str();
        while let Some(i) = rest.find("andon ") {
            let before = rest[..i].chars().last();
            rest = &rest[i + "andon ".len()..];
            if before.is_some_and(|b| b.is_alphanumeric() || "_-./".contains(b)) {
                continue;
            }
            let words: Vec<String> = rest
                .split([' ', '\t'])
                .take(2)
                .map_while(|w| {
                    let w = w.trim_end_matches(['`', '"', '\'', ')', ',', ';', ':', '.']);
                    let ok = w.starts_with(|c: char| c.is_ascii_lowercase())
                        && w.bytes().all(|b| b.is_ascii_lowercase() || b == b'-');
                    ok.then(|| w.to_string())
                })
                .collect();
            if !words.is_empty() {
                out.push(words);
            }
        }
    }
    out
}

#[test]
fn every_andon_command_a_skill_or_agent_names_exists() {
    let mut named: Vec<(Vec<String>, String)> = Vec::new();
    let mut texts: Vec<PathBuf> = files("skills", ".md");
    texts.extend(files("agents", ".md"));
    texts.push(plugin().join("README.md"));
    for p in &texts {
        let text = std::fs::read_to_string(p).unwrap();
        named.extend(commands_named(&text, false).into_iter().map(|c| (c, p.display().to_string())));
    }
    for p in files("hooks", ".sh") {
        let text = std::fs::read_to_string(&p).unwrap();
        named.extend(commands_named(&text, true).into_iter().map(|c| (c, p.display().to_string())));
    }
    named.sort();
    named.dedup_by(|a, b| a.0 == b.0);
    for must in [["loop"], ["propose"], ["verify"], ["check"], ["query"]] {
        assert!(named.iter().any(|(c, _)| c[..1] == must), "no skill names `andon {}`", must[0]);
    }
    let dir = tempfile::tempdir().unwrap();
    let missing: Vec<String> = named
        .iter()
        .filter(|(c, _)| {
            let out = andon().args(c).arg("--help").current_dir(dir.path()).output().unwrap();
            !out.status.success()
        })
        .map(|(c, at)| format!("`andon {}` (named in {at})", c.join(" ")))
        .collect();
    assert!(missing.is_empty(), "commands the binary does not have:\n{}", missing.join("\n"));
}

/// One example of a skill: shell commands, the fixture they run on (with the `andon.toml` shown
/// before them, if any) and the standard output the skill shows.
#[derive(Debug)]
struct Example {
    fixture: String,
    toml: Option<String>,
    command: String,
    output: String,
}

/// The examples of a skill: each line "Output on andon's test fixture `tests/fixtures/NAME`:"
/// (or "…, with the `andon.toml` above:"), after the `sh` block it runs, before the `text`
/// block it prints.
fn examples(text: &str) -> Vec<Example> {
    let mut blocks: Vec<(String, String)> = Vec::new();
    let mut pending: Option<(String, String, Option<String>)> = None;
    let mut out = Vec::new();
    let mut fence: Option<(String, Vec<&str>)> = None;
    for line in text.lines() {
        if let Some((lang, body)) = &mut fence {
            if line == "```" {
                let body = body.iter().map(|l| format!("{l}\n")).collect::<String>();
                if lang == "text"
                    && let Some((fixture, command, toml)) = pending.take()
                {
                    out.push(Example { fixture, toml, command, output: body.clone() });
                }
                blocks.push((lang.clone(), body));
                fence = None;
            } else {
                body.push(line);
            }
            continue;
        }
        if let Some(lang) = line.strip_prefix("```") {
            fence = Some((lang.to_string(), Vec::new()));
            continue;
        }
        if let Some(rest) = line.strip_prefix("Output on andon's test fixture `tests/fixtures/") {
            let (fixture, tail) = rest.split_once('`').expect("fixture name in backticks");
            let with_toml = match tail {
                ":" => false,
                ", with the `andon.toml` above:" => true,
                _ => panic!("unknown example line: {line}"),
            };
            let last = |lang: &str| blocks.iter().rev().find(|(l, _)| l == lang).map(|(_, b)| b.clone());
            let command = last("sh").expect("a `sh` block before the example's output");
            let toml = with_toml.then(|| last("toml").expect("a `toml` block before the example"));
            pending = Some((fixture.to_string(), command, toml));
        }
    }
    assert!(pending.is_none() && fence.is_none(), "an example without its output block");
    out
}

/// Runs an example's commands with `sh` in a copy of its fixture, andon on PATH: its stdout.
fn run_example(e: &Example) -> String {
    let dir = scratch(&e.fixture);
    if let Some(toml) = &e.toml {
        std::fs::write(dir.path().join("andon.toml"), toml).unwrap();
    }
    let out = Command::new("sh")
        .args(["-c", &e.command])
        .current_dir(dir.path())
        .env("PATH", path_with_andon())
        .env_remove("GITHUB_ACTIONS")
        .output()
        .expect("sh runs");
    String::from_utf8(out.stdout).unwrap()
}

/// PATH with the andon under test first.
fn path_with_andon() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_andon")).parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap()
}

#[test]
fn the_cookbook_has_ten_queries_each_printing_its_shown_output() {
    let list = examples(&read("skills/andon-query/SKILL.md"));
    assert_eq!(list.len(), 10, "ten queries: {list:#?}");
    for e in &list {
        assert!(e.command.starts_with("andon query '") && e.command.lines().count() == 1, "{e:?}");
        assert_eq!(run_example(e), e.output, "`{}` on {} prints another output", e.command.trim(), e.fixture);
    }
}

#[test]
fn every_other_skill_example_prints_its_shown_output() {
    let mut n = 0;
    for p in files("skills", "SKILL.md").iter().filter(|p| !p.ends_with("andon-query/SKILL.md")) {
        for e in examples(&std::fs::read_to_string(p).unwrap()) {
            assert_eq!(
                run_example(&e),
                e.output,
                "{}: `{}` on {} prints another output",
                p.display(),
                e.command.trim(),
                e.fixture
            );
            n += 1;
        }
    }
    assert!(n >= 2, "the gate's worked examples run");
}

/// The ```json blocks of a Markdown text.
fn json_blocks(text: &str) -> Vec<String> {
    text.split("```json\n").skip(1).map(|b| b.split("\n```").next().unwrap().to_string()).collect()
}

#[test]
fn the_panel_agents_example_outputs_parse_as_their_role() {
    for r in andon::panel::Role::ALL {
        let rel = format!("agents/{}.md", r.name());
        let text = read(&rel);
        let blocks = json_blocks(&text);
        assert_eq!(blocks.len(), 1, "{rel}: one example output");
        let o = andon::panel::parse_output(blocks[0].as_bytes()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(o.role, r, "{rel}: the example is a {} output", r.name());
        assert_eq!(o.producer.id, format!("panel-{}", r.name()));
        assert!(text.contains(&format!("`packet-{}.json`", r.name())), "{rel}: names its packet");
        assert!(text.contains(&format!("`output-{}.json`", r.name())), "{rel}: names its output");
    }
    // the producers differ, so an against output never shares the for output's producer
    let ids: Vec<String> = andon::panel::Role::ALL.iter().map(|r| format!("panel-{}", r.name())).collect();
    assert!(!andon::panel::same_producer(&ids[0], &ids[1]));
}

#[test]
fn the_against_agent_is_forbidden_the_for_case() {
    let text = read("agents/against.md");
    let rule = text.lines().find(|l| l.starts_with("**Never read the for case**")).expect("the rule, in bold");
    assert!(rule.contains("`packet-for.json`") && rule.contains("`output-for.json`"), "{rule}");
}

#[test]
fn the_loop_skill_names_every_action_halt_and_exit_code() {
    use andon::ledger::andon_rule::Condition;
    use andon::status::Action;
    let text = read("skills/andon-loop/SKILL.md");
    // a new condition or action fails to compile here until the skill covers it
    let condition_listed = |c: Condition| match c {
        Condition::Refuted
        | Condition::Authorization
        | Condition::Tier1Hold
        | Condition::Tier2Hold
        | Condition::NeedsHuman
        | Condition::Unproven
        | Condition::EntryGate
        | Condition::BlockedByEnvironment => text.contains(&format!("`{}`", c.token())),
    };
    for c in [
        Condition::Refuted,
        Condition::Authorization,
        Condition::Tier1Hold,
        Condition::Tier2Hold,
        Condition::NeedsHuman,
        Condition::Unproven,
        Condition::EntryGate,
        Condition::BlockedByEnvironment,
    ] {
        assert!(condition_listed(c), "the loop skill does not name `{}`", c.token());
    }
    let action_listed = |a: Action| match a {
        Action::Propose
        | Action::ApplyAndVerify
        | Action::Decide
        | Action::FixTheCode
        | Action::Confirm
        | Action::Budget
        | Action::Converged
        | Action::Hardened
        | Action::None => text.contains(&format!("| `{}` |", a.token())),
    };
    for a in [
        Action::Propose,
        Action::ApplyAndVerify,
        Action::Decide,
        Action::FixTheCode,
        Action::Confirm,
        Action::Budget,
        Action::Converged,
        Action::Hardened,
        Action::None,
    ] {
        assert!(action_listed(a), "the loop skill's `next.action` table lacks `{}`", a.token());
    }
    let section = text.split("## Exit codes and verdicts").nth(1).expect("the exit-code section");
    let section = section.split("\n## ").next().unwrap();
    for e in andon::exit::Exit::ALL {
        let code = (e as u8).to_string();
        let named = section.split(|c: char| !c.is_ascii_digit()).any(|w| w == code);
        assert!(named, "the loop skill's exit codes do not name {code} ({e:?})");
    }
}

/// Runs the Stop hook with `input` on stdin for the repository `dir`, `path` as PATH: its
/// standard output (it always exits 0).
fn stop_hook(dir: &Path, input: &str, path: &std::ffi::OsStr) -> String {
    let mut child = Command::new("sh")
        .arg(plugin().join("hooks/stop-verify-reminder.sh"))
        .env("CLAUDE_PROJECT_DIR", dir)
        .env("PATH", path)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook exits 0: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn hook_input(active: bool) -> String {
    serde_json::json!({
        "session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "Stop", "stop_hook_active": active,
        "last_assistant_message": "Done: \"stop_hook_active\": true was not set."
    })
    .to_string()
}

/// Three stages with a broken import; the loop ran, the picked gap is proposed and recorded.
fn awaiting_verification() -> (tempfile::TempDir, String) {
    let t = three_stages();
    let d = t.path();
    let step = crate::support::json(&run_ok(&["loop", "--format", "json", "--quiet"], d));
    let gap = step["next"]["gap"].as_str().unwrap().to_string();
    run_ok(
        &[
            "propose",
            "--gap",
            &gap,
            "--blast-radius",
            "local+reversible",
            "--approach",
            "structural",
            "--reason",
            "the broken import is an exact fact of the index",
            "--description",
            "define missing_name in core",
            "--write-set",
            "src/core/__init__.py",
            "--quiet",
        ],
        d,
    );
    let step = crate::support::json(&run_ok(&["loop", "--format", "json", "--quiet"], d));
    assert_eq!(step["next"]["action"], "apply-and-verify");
    (t, gap)
}

#[test]
fn the_stop_hook_blocks_once_on_a_gap_awaiting_verification() {
    let hooks = read_json("hooks/hooks.json");
    let command = hooks["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.contains("${CLAUDE_PLUGIN_ROOT}/hooks/stop-verify-reminder.sh"), "{command}");
    let (t, gap) = awaiting_verification();
    let out = stop_hook(t.path(), &hook_input(false), &path_with_andon());
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["decision"], "block");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains(&format!("`andon verify --gap {gap}`")), "{reason}");
    // a second stop, with stop_hook_active, goes ahead
    assert_eq!(stop_hook(t.path(), &hook_input(true), &path_with_andon()), "");
    // so does one where andon is not on PATH
    assert_eq!(stop_hook(t.path(), &hook_input(false), std::ffi::OsStr::new("/usr/bin:/bin")), "");
    // and one whose input is not the hook input: nothing that cannot be read ever blocks
    for garbage in ["", "garbage", "{\"hook_event_name\": \"Stop\"}"] {
        assert_eq!(stop_hook(t.path(), garbage, &path_with_andon()), "", "input {garbage:?}");
    }
}

#[test]
fn the_stop_hook_is_silent_when_the_next_step_is_not_verification() {
    let t = three_stages();
    run_ok(&["loop", "--quiet"], t.path());
    assert_eq!(stop_hook(t.path(), &hook_input(false), &path_with_andon()), "", "the next step is `propose`");
}

#[test]
fn the_stop_hook_writes_nothing_where_the_loop_never_ran() {
    let t = three_stages();
    assert_eq!(stop_hook(t.path(), &hook_input(false), &path_with_andon()), "");
    assert!(!t.path().join("analysis").exists(), "status's board files were written");
    assert!(!t.path().join(".andon").exists(), "the index was written");
}

/// What the PreToolUse hook prints for a shell command the agent is about to run.
fn pre_tool_use(command: &str) -> String {
    let mut child = Command::new("sh")
        .arg(plugin().join("hooks/deny-decisions.sh"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let input = serde_json::json!({
        "session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": command, "description": "d" },
    });
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook exits 0: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_pre_tool_use_hook_denies_the_agent_a_persons_decision() {
    let hooks = read_json("hooks/hooks.json");
    let rule = &hooks["hooks"]["PreToolUse"][0];
    assert_eq!(rule["matcher"], "Bash");
    assert!(rule["hooks"][0]["command"].as_str().unwrap().contains("${CLAUDE_PLUGIN_ROOT}/hooks/deny-decisions.sh"));
    for cmd in [
        "andon authorize W-1 --by me --reason r",
        "cd repo && andon skip G-2 --by lead --reason later",
        "echo G-2 | andon defer G-2 --by lead --reason r",
        "./target/release/andon override G --evidence E --basis parse-error --by x --reason r",
        "andon -q confirm P2 --rule BC-1 --by x --reason r",
        "script -qc 'andon authorize W-1 --by me --reason r' /dev/null",
        "A=andon; $A skip G-2 --by lead --reason r",
        "\"andon\" --format json skip G-2 --by lead --reason r",
        "/tmp/andon-new\tdefer G-2 --by lead --reason r",
    ] {
        let out = pre_tool_use(cmd);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{cmd}: {e}: {out}"));
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{cmd}");
        assert!(v["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().contains("person"));
    }
    for cmd in ["andon loop --format json", "andon verify --gap G-2", "andon status", "git commit -m 'skip flaky'"] {
        assert_eq!(pre_tool_use(cmd), "", "{cmd} is the agent's to run");
    }
}
