//! Proofs read from runs of checks: the executed and property approaches' verdicts on the runs,
//! the checks run fresh (never from the cache), and commands a role or scorer reported re-run
//! under a seal on the working tree.

use std::path::Path;

use super::commands::{self, CommandSpec, Lane};
use super::proof::{Inputs, Proof, cannot_run_here, output_dir};
use crate::config::Config;
use crate::ledger::Verdict;

/// A fingerprint no cached run has: a verification runs its checks.
pub(crate) fn fresh(nonce: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{nonce}-{now:x}")
}

/// The property approach's verdict on the runs of its checks at `root`.
pub(super) fn property_proof(
    root: &Path,
    runs: &[commands::Run],
    tools: &[crate::evidence::property::Detected],
) -> Proof {
    let mut verdicts = Vec::new();
    let mut lines = Vec::new();
    let mut artifacts = Vec::new();
    let mut counterexamples = Vec::new();
    for r in runs {
        let (tool, j) = property_judgment(root, r, tools);
        lines.push(format!("`{}` ({}): {}", r.run, tool.name(), j.summary));
        if let Some(c) = &j.counterexample {
            counterexamples.push(format!("minimized counterexample ({}): {c}", tool.name()));
        }
        verdicts.push(j.verdict);
        artifacts.push(r.artifact.clone());
    }
    let declared: Vec<String> =
        tools.iter().map(|d| format!("{} ({}:{})", d.tool.name(), d.manifest, d.line)).collect();
    let mut references = counterexamples;
    references.extend(artifacts.iter().skip(1).cloned());
    let mut proof = Proof {
        verdict: property_verdict(&verdicts),
        tier: None,
        hold: false,
        claim: format!("the property checks hold over generated inputs, through {}", declared.join(", ")),
        detail: lines.join("; "),
        references,
        artifact: artifacts.first().cloned(),
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    };
    proof.explain(root, runs);
    proof
}

/// Judges one property run: the tool whose counterexample its output carries (else the first
/// declared) reads it; a missing tool knows nothing, and a pass counts only when the output shows
/// tests ran.
pub(super) fn property_judgment(
    root: &Path,
    r: &commands::Run,
    tools: &[crate::evidence::property::Detected],
) -> (crate::evidence::property::PropertyTool, crate::evidence::property::PropertyResult) {
    use crate::evidence::property;
    let output = std::fs::read_to_string(root.join(&r.artifact)).unwrap_or_else(|_| r.tail.clone());
    // the tool whose counterexample the output carries, else the first one declared
    let tool =
        tools.iter().map(|d| d.tool).find(|t| property::counterexample(*t, &output).is_some()).unwrap_or(tools[0].tool);
    let mut j = property::judge(tool, r.exit, r.timed_out, &output);
    if cannot_run_here(root, r) {
        j.verdict = Verdict::Unknown;
        j.counterexample = None;
        j.summary = format!(
            "could not run here (exit {}: the command or its tool is not available); nothing is known",
            r.exit.unwrap_or_default()
        );
    }
    // a pass counts only when the output shows tests ran: an exit 0 alone is not a property
    // test (R98)
    let ran = super::audit::count_before(&output, "passed").or_else(|| super::audit::count_before(&output, "passing"));
    if j.verdict == Verdict::Proven && ran.is_none_or(|n| n == 0) {
        j.verdict = Verdict::Unproven;
        j.summary =
            "exit 0, but the output shows no test run (no `N passed`): nothing was shown over generated inputs".into();
    }
    (tool, j)
}

/// The verdict of all property runs: proven when every run is; else refuted when any run is,
/// then unknown, then unproven.
fn property_verdict(verdicts: &[Verdict]) -> Verdict {
    if verdicts.iter().all(|v| *v == Verdict::Proven) {
        Verdict::Proven
    } else if verdicts.contains(&Verdict::Refuted) {
        Verdict::Refuted
    } else if verdicts.contains(&Verdict::Unknown) {
        Verdict::Unknown
    } else {
        Verdict::Unproven
    }
}

/// Runs the checks (never from the cache: a verification runs them) and judges by exit codes:
/// all pass → proven; any non-zero exit → refuted; timed out or never started → unproven.
pub(super) fn executed(root: &Path, out: &Path, specs: &[CommandSpec], nonce: &str) -> Proof {
    executed_proof(root, &run_checks(root, out, specs, nonce))
}

/// Runs each check at `root` (never from the cache: a fresh fingerprint), its output under `out`.
pub(super) fn run_checks(root: &Path, out: &Path, specs: &[CommandSpec], nonce: &str) -> Vec<commands::Run> {
    specs.iter().map(|c| commands::run(root, out, c, &fresh(nonce))).collect()
}

/// The executed approach's verdict on the runs of its checks.
pub(super) fn executed_proof(root: &Path, runs: &[commands::Run]) -> Proof {
    let verdict = if runs.iter().all(commands::Run::passed) {
        Verdict::Proven
    } else if runs.iter().any(|r| r.exit.is_some_and(|c| c != 0) && !cannot_run_here(root, r)) {
        Verdict::Refuted
    } else if runs.iter().any(|r| cannot_run_here(root, r)) {
        // the check could not run here: nothing is known about the fix, it is not refuted (R119)
        Verdict::Unknown
    } else {
        Verdict::Unproven
    };
    let summary: Vec<String> = runs
        .iter()
        .map(|r| {
            let how = match (r.exit, r.timed_out) {
                (_, true) => "timed out".to_string(),
                (Some(c), _) if cannot_run_here(root, r) => {
                    format!("could not run here (exit {c}: the command or its tool is not available)")
                }
                (Some(c), _) => format!("exit {c}"),
                (None, _) => format!("did not run ({})", r.error.clone().unwrap_or_default()),
            };
            format!("`{}`: {how} in {:.2} s", r.run, r.duration_ms as f64 / 1000.0)
        })
        .collect();
    let mut summary = summary;
    for r in runs.iter().filter(|r| !r.passed() && !r.tail.trim().is_empty()) {
        summary.push(format!("`{}` output ends: {}", r.run, r.tail.trim()));
    }
    let cmds: Vec<String> = runs.iter().map(|r| format!("`{}`", r.run)).collect();
    let mut proof = Proof {
        verdict,
        tier: None,
        hold: false,
        claim: match verdict {
            Verdict::Proven => format!("{} exit 0 on the applied fix", cmds.join(", ")),
            _ => {
                let failed: Vec<String> = runs
                    .iter()
                    .filter(|r| !r.passed())
                    .map(|r| match r.exit {
                        Some(c) => format!("`{}` exits {c}", r.run),
                        None => format!("`{}` does not finish", r.run),
                    })
                    .collect();
                format!("on the applied fix {}", failed.join(", "))
            }
        },
        detail: summary.join("; "),
        references: runs.iter().skip(1).map(|r| r.artifact.clone()).collect(),
        artifact: runs.first().map(|r| r.artifact.clone()),
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    };
    proof.explain(root, runs);
    proof
}

/// Runs `f` (which re-runs commands a role or scorer reported) under a seal on the working tree:
/// a command that edits the change under review voids the proof (R93: verify never edits it).
pub(super) fn sealed<T>(root: &Path, cfg: &Config, f: impl FnOnce() -> T) -> Result<T, Box<Proof>> {
    let own = super::super::own::own_paths(cfg);
    let before = super::diff::seal(root, &own, None);
    let out = f();
    match &before {
        Some((seal, untracked)) if super::diff::seal(root, &own, Some(untracked)).map(|(s, _)| s).as_ref() != Some(seal) => {
            Err(Box::new(Proof::unknown(
                "a command reported to andon changed the working tree while andon re-ran it: a verdict would not be about the change under review".into(),
                "no verdict: restore the change and verify again (a reported check must not edit the tree)",
            )))
        }
        _ => Ok(out),
    }
}

/// Re-runs a command a role or scorer reports (never from the cache): its exit code, `None` when
/// it could not run or timed out.
pub(super) fn runner<'a>(
    cfg: &'a Config,
    inputs: &'a Inputs,
    nonce: &'a str,
) -> impl Fn(&Path, &str) -> Option<i32> + 'a {
    let out = output_dir(cfg, inputs);
    move |root: &Path, command: &str| {
        let spec = CommandSpec {
            name: format!("rerun-{:08x}", xxhash_rust::xxh3::xxh3_64(command.as_bytes()) as u32),
            run: command.to_string(),
            stages: Vec::new(),
            lane: Lane::Fast,
            timeout_secs: crate::config::DEFAULT_COMMAND_TIMEOUT_SECS,
            technique: None,
            line: 0,
        };
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let r = commands::run(root, &out, &spec, &format!("{nonce}-rerun-{now:x}"));
        if r.timed_out { None } else { r.exit }
    }
}
