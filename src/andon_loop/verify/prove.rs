//! Running one routed approach on the applied change (R88–R105): the verify side shared by
//! `andon verify --gap` (the loop's proposals) and `andon verify --request` (other tools' applied
//! changes). Routing decides the approach (`evidence::route`); this module runs it and says what
//! it showed. It never writes the ledger.

use std::path::Path;

use super::super::error::Error;
use super::commands::{self, CommandSpec};
use super::executed::{executed, fresh, property_proof, run_checks, runner, sealed};
use super::fix;
use super::panel::panel;
pub use super::proof::Inputs;
use super::proof::{Proof, ProofTarget, cannot_run_here, output_dir};
use super::routing::checks;
use crate::config::Config;
use crate::evidence::route::Approach;
use crate::index::Index;
use crate::ledger::{Reason, Verdict, Wire};

/// Runs `approach` on the applied change.
pub fn run(
    approach: Approach,
    root: &Path,
    cfg: &Config,
    idx: &Index,
    target: &ProofTarget,
    inputs: &Inputs,
    nonce: &str,
) -> Result<Proof, Error> {
    match approach {
        Approach::Structural => structural(idx, target),
        Approach::Executed => Ok(configured_checks(root, cfg, target, inputs, nonce)),
        Approach::Adversarial => Ok(panel(root, cfg, idx, target, inputs, nonce)),
        Approach::Property => Ok(property(root, cfg, target, inputs, nonce)),
        Approach::Numeric => Ok(numeric(root, cfg, target, inputs, nonce)),
        Approach::Rubric => rubric(root, cfg, inputs, nonce),
        Approach::Agentic => agentic(inputs),
        other => Ok(Proof::unknown(
            format!("approach `{}` is not available in this version of andon", other.id()),
            "unavailable: the wire stays unknown",
        )),
    }
}

/// The structural approach: the fresh index after the fix, read on the target's wire or site.
fn structural(idx: &Index, target: &ProofTarget) -> Result<Proof, Error> {
    let (verdict, tier, hold, claim, references) =
        fix::structural_of(idx, target.wire.as_ref(), &target.path, &target.summary)?;
    Ok(Proof {
        verdict,
        tier,
        hold,
        claim,
        detail: "the fresh index after the fix".into(),
        references,
        artifact: None,
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    })
}

/// The executed approach: the target stages' checks (or `--command`) run on the applied fix;
/// with none, the wire stays unknown.
fn configured_checks(root: &Path, cfg: &Config, target: &ProofTarget, inputs: &Inputs, nonce: &str) -> Proof {
    let specs = checks(cfg, &target.stages, inputs.command.as_deref());
    if specs.is_empty() {
        return Proof::unknown(
            format!(
                "no executed check covers stage {}: give --command '...' or add a [[command]] for it in andon.toml",
                target.stages.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ),
            "unavailable: the wire stays unknown",
        );
    }
    executed(root, &output_dir(cfg, inputs), &specs, nonce)
}

/// Approach (b): the target stages' checks that declare a numeric `technique` run, and the
/// numeric judge reads their exits.
fn numeric(root: &Path, cfg: &Config, target: &ProofTarget, inputs: &Inputs, nonce: &str) -> Proof {
    let out = output_dir(cfg, inputs);
    let specs: Vec<CommandSpec> =
        checks(cfg, &target.stages, None).into_iter().filter(|c| c.technique.is_some()).collect();
    if specs.is_empty() {
        return Proof::unknown(
            format!(
                "approach (b) needs a numeric check: a [[command]] for stage {} with `technique = \"...\"` ({})",
                target.stages.join(", "),
                crate::evidence::numeric::Technique::ALL.map(|t| t.id()).join(", ")
            ),
            "unavailable: the wire stays unknown",
        );
    }
    let runs: Vec<commands::Run> = specs.iter().map(|c| commands::run(root, &out, c, &fresh(nonce))).collect();
    let numeric: Vec<crate::evidence::numeric::NumericRun> = specs
        .iter()
        .zip(&runs)
        .map(|(c, r)| crate::evidence::numeric::NumericRun {
            technique: c.technique.expect("filtered"),
            command: c.run.clone(),
            // a check that could not run here did not run: it shows nothing, not a failure
            exit: r.exit.filter(|_| !cannot_run_here(root, r)),
            timed_out: r.timed_out,
        })
        .collect();
    let r = crate::evidence::numeric::judge(&numeric);
    let mut proof = Proof {
        verdict: r.verdict,
        tier: None,
        hold: false,
        claim: r.claim,
        detail: r.detail,
        references: runs.iter().skip(1).map(|r| r.artifact.clone()).collect(),
        artifact: runs.first().map(|r| r.artifact.clone()),
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    };
    proof.explain(root, &runs);
    proof
}

/// Approach (c): the claim's rubric record (`--rubric`) scored, its reported commands re-run
/// under a seal on the tree.
fn rubric(root: &Path, cfg: &Config, inputs: &Inputs, nonce: &str) -> Result<Proof, Error> {
    let Some(file) = &inputs.rubric else {
        return Ok(Proof::unknown(
            "approach (c) needs the claim's rubric record: give --rubric FILE (docs/approaches-rubric-agentic.md)"
                .into(),
            "unavailable without a rubric record: the wire stays unknown",
        ));
    };
    let bytes = read_record(file)?;
    let input =
        crate::evidence::rubric::parse(&bytes).map_err(|problems| Error::Record { path: file.clone(), problems })?;
    let run = runner(cfg, inputs, nonce);
    let r = match sealed(root, cfg, || crate::evidence::rubric::score(&input, root, &run)) {
        Ok(r) => r,
        Err(p) => return Ok(*p),
    };
    Ok(Proof {
        verdict: r.verdict,
        tier: None,
        hold: false,
        claim: r.claim,
        detail: r.detail,
        references: r
            .criteria
            .iter()
            .map(|c| {
                let lb = if c.load_bearing { " (load-bearing)" } else { "" };
                let outcome = serde_json::to_value(c.outcome).ok().and_then(|v| v.as_str().map(str::to_string));
                format!("{}{lb}: {}: {}", c.criterion.name(), outcome.unwrap_or_default(), c.reason)
            })
            .collect(),
        artifact: Some(file.display().to_string()),
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    })
}

/// Approach (d): the agent's process record (`--process`) assessed.
fn agentic(inputs: &Inputs) -> Result<Proof, Error> {
    let Some(file) = &inputs.process else {
        return Ok(Proof::unknown(
            "approach (d) needs the agent's process record: give --process FILE (docs/approaches-rubric-agentic.md)"
                .into(),
            "unavailable without a process record: the wire stays unknown",
        ));
    };
    let bytes = read_record(file)?;
    let rec =
        crate::evidence::agentic::parse(&bytes).map_err(|problems| Error::Record { path: file.clone(), problems })?;
    let r = crate::evidence::agentic::assess(&rec);
    Ok(Proof {
        verdict: r.verdict,
        tier: None,
        hold: false,
        claim: r.claim,
        detail: r.detail,
        references: r.findings.iter().map(|f| format!("{}: {}", f.check.name(), f.detail)).collect(),
        artifact: Some(file.display().to_string()),
        per_criterion: Vec::new(),
        reason: None,
        capability: None,
    })
}

/// Approach (f): the stage's checks run through the property-testing tool the repository itself
/// declares (R98); a failure is refuted with the tool's minimized counterexample.
fn property(root: &Path, cfg: &Config, target: &ProofTarget, inputs: &Inputs, nonce: &str) -> Proof {
    use crate::evidence::property::{self, PropertyTool};
    let tools = property::detect(root);
    if tools.is_empty() {
        return Proof::unknown(
            format!(
                "approach (f) is unavailable: the repository declares no property-testing tool ({}); a hand-rolled loop is not a property test (R98)",
                PropertyTool::ALL.map(|t| t.name()).join(", ")
            ),
            "unavailable: the wire stays unknown",
        );
    }
    // a check with a numeric `technique` is approach (b)'s, not a property run
    let specs: Vec<CommandSpec> =
        checks(cfg, &target.stages, inputs.command.as_deref()).into_iter().filter(|c| c.technique.is_none()).collect();
    if specs.is_empty() {
        return Proof::unknown(
            format!(
                "approach (f) needs the command that runs the property tests ({} declared in {}): --command '...' or a [[command]] for stage {}",
                tools[0].tool.name(),
                tools[0].manifest,
                target.stages.join(", ")
            ),
            "unavailable: the wire stays unknown",
        );
    }
    let runs = run_checks(root, &output_dir(cfg, inputs), &specs, nonce);
    property_proof(root, &runs, &tools)
}

/// A rubric or process record: a regular file (a FIFO would block the proof forever), 16 MiB at
/// most.
fn read_record(file: &Path) -> Result<Vec<u8>, Error> {
    crate::index::walk::read_regular(file, 16 << 20).map_err(Error::io(file))
}

/// The criteria a panel judges for one obligation: load-bearing, traced to a test result, with
/// the checks that exercise it.
pub fn criterion(id: &str, text: &str, load_bearing: bool, checks: &[CommandSpec]) -> crate::panel::Criterion {
    crate::panel::Criterion {
        id: id.to_string(),
        text: text.to_string(),
        load_bearing,
        check: crate::panel::ObjectiveCheck::TestResult,
        command: checks.first().map(|c| c.run.clone()),
    }
}

/// A proof by the checks of a wire no import carries (a declared handoff) shows the handoff only
/// where a test the change writes exercises both ends: it resolves imports into the producer's
/// stage and the consumer's. Passing checks without such a test prove the stages, not the wire:
/// the proof becomes `unknown` (not discriminating) and says what test to add. `changed` are the
/// change's files; `idx` the fresh index.
pub fn handoff_exercised(
    idx: &Index,
    changed: &[String],
    wire: &Wire,
    proof: &mut Proof,
) -> Result<Vec<String>, Error> {
    use crate::facts::rel;
    if proof.verdict != Verdict::Proven {
        return Ok(Vec::new());
    }
    let store = crate::ops::derive(&crate::datalog::builtin_program(), idx, &[rel::IN_STAGE, rel::RESOLVES])
        .map_err(|e| Error::Facts(e.to_string()))?;
    let stage_of: std::collections::BTreeMap<&str, &str> =
        store.rels[rel::IN_STAGE.0 as usize].iter().map(|r| (store.syms.str(r[0]), store.syms.str(r[1]))).collect();
    let reached = |test: &str, stage: &str| {
        store.rels[rel::RESOLVES.0 as usize]
            .iter()
            .filter(|r| store.syms.str(r[0]) == test)
            .any(|r| stage_of.get(store.syms.str(r[2])) == Some(&stage))
    };
    let tests: Vec<String> = changed
        .iter()
        .filter(|p| super::red::test_file(idx, p))
        .filter(|p| reached(p, &wire.producer) && reached(p, &wire.consumer))
        .cloned()
        .collect();
    if let Some(t) = tests.first() {
        proof.claim = format!("{}; `{t}` exercises {wire} (it imports from both stages)", proof.claim);
        return Ok(tests);
    }
    proof.verdict = Verdict::Unknown;
    proof.reason = Some(Reason::NotDiscriminating);
    proof.claim = format!(
        "the checks pass, but no test the change writes imports from both `{}` and `{}`: add a test that carries a value across {wire}",
        wire.producer, wire.consumer
    );
    Ok(Vec::new())
}

/// The test files (of the fresh index `idx`) that import one of the `changed` files that is not a
/// test: the tests a command given to verify must run to speak for the change.
pub fn tests_importing(idx: &Index, changed: &[String]) -> Result<Vec<String>, Error> {
    use crate::facts::rel;
    let code: std::collections::BTreeSet<&str> =
        changed.iter().map(String::as_str).filter(|p| !super::red::test_file(idx, p)).collect();
    let store = crate::ops::derive(&crate::datalog::builtin_program(), idx, &[rel::RESOLVES])
        .map_err(|e| Error::Facts(e.to_string()))?;
    let mut tests: Vec<String> = store.rels[rel::RESOLVES.0 as usize]
        .iter()
        .filter(|r| code.contains(store.syms.str(r[2])))
        .map(|r| store.syms.str(r[0]))
        .filter(|f| super::red::test_file(idx, f))
        .map(str::to_string)
        .collect();
    tests.sort();
    tests.dedup();
    Ok(tests)
}
