//! Running one routed approach on the applied change (R88–R105): the verify side shared by
//! `andon verify --gap` (the loop's proposals) and `andon verify --request` (other tools' applied
//! changes). Routing decides the approach (`evidence::route`); this module runs it and says what
//! it showed. It never writes the ledger.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::commands::{self, CommandSpec, Lane};
use super::fix;
use crate::config::Config;
use crate::evidence::route::{self, Approach, Object, Route, Subject};
use crate::index::Index;
use crate::ledger::{Capability, GapState, Reason, Verdict, Wire};

/// What is being proven.
#[derive(Clone, Debug)]
pub struct Target {
    /// The stage whose configured commands are its executed checks.
    pub stages: Vec<String>,
    pub wire: Option<Wire>,
    pub path: String,
    pub summary: String,
    /// What the panel judges (approach a): an id (the gap, or `request`), the claim under proof,
    /// its criteria, the applied diff, and who built the fix.
    pub id: String,
    pub claim: String,
    pub criteria: Vec<crate::panel::Criterion>,
    pub diff: String,
    pub proposer: String,
}

/// The records judged approaches need (R96, R97, R101–R105), each given by whoever drives verify.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// `--command`: the check the executed approach runs instead of the configured ones.
    pub command: Option<String>,
    /// `--rubric FILE`: the claim rubric record (c).
    pub rubric: Option<PathBuf>,
    /// `--process FILE`: the agentic process record (d).
    pub process: Option<PathBuf>,
    /// `--panel DIR`: the adversarial panel's role outputs (a).
    pub panel: Option<PathBuf>,
    /// `--proposer`: the provenance id of whoever proposed or built the fix (the panel refuses an
    /// against case from them, R102).
    pub proposer: Option<String>,
    /// `--approach`: a person's choice between the candidates of a genuine routing tie.
    pub chosen: Option<Approach>,
    /// Where command outputs go (default: `output_dir`); a standalone request keeps none.
    pub artifacts: Option<PathBuf>,
    /// A request handed in for a loop gap: its Behavior Contract rules (more obligations) and
    /// its declared files (the scope).
    pub rules: Vec<super::request::RequestRule>,
    pub declared: Vec<String>,
}

/// What one approach showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proof {
    pub verdict: Verdict,
    pub tier: Option<u8>,
    pub hold: bool,
    pub claim: String,
    pub detail: String,
    pub references: Vec<String>,
    pub artifact: Option<String>,
    /// The panel's verdict on each criterion it judged (criterion id, verdict, why): an
    /// obligation the panel proves takes its own criterion's, never the blend (approach a).
    pub per_criterion: Vec<(String, Verdict, String)>,
    /// Why it could not decide, when the approach knows (the ledger's reason of an unknown).
    pub reason: Option<Reason>,
    /// For reason `unprovable-here`: the capability it could not run without.
    pub capability: Option<Capability>,
}

impl Proof {
    pub(super) fn unknown(claim: String, detail: &str) -> Proof {
        Proof {
            verdict: Verdict::Unknown,
            tier: None,
            hold: false,
            claim,
            detail: detail.into(),
            references: Vec::new(),
            artifact: None,
            per_criterion: Vec::new(),
            reason: None,
            capability: None,
        }
    }

    /// Says why a proof that neither proves nor refutes could not decide, from the runs of its
    /// checks: one that could not run here names the capability it lacks (decision 8); else one
    /// that ran out of time.
    pub(super) fn explain(&mut self, root: &Path, runs: &[commands::Run]) {
        if matches!(self.verdict, Verdict::Proven | Verdict::Refuted) {
            return;
        }
        if let Some(cap) = unprovable_here(root, runs) {
            self.verdict = Verdict::Unknown;
            self.reason = Some(Reason::UnprovableHere);
            self.claim = format!(
                "`{}` cannot run here: `{}` is not available; nothing is known of the fix",
                cap.command, cap.name
            );
            self.capability = Some(cap);
        } else if runs.iter().any(|r| r.timed_out) {
            self.reason = Some(Reason::TimedOut);
        }
    }
}

/// The capability the first run that could not run here lacked ([`cannot_run_here`]), with its
/// fingerprint as it resolves now.
pub(super) fn unprovable_here(root: &Path, runs: &[commands::Run]) -> Option<Capability> {
    runs.iter().find_map(|r| lacking(root, r))
}

/// The capability run `r` lacked: it exited as the shell does for a command it cannot find (127)
/// or execute (126), and the executable it names does not resolve here. A 126 or 127 naming
/// something that resolves is the check's own exit: a failure like any other.
fn lacking(root: &Path, r: &commands::Run) -> Option<Capability> {
    if !matches!(r.exit, Some(126 | 127)) {
        return None;
    }
    let output = std::fs::read_to_string(root.join(&r.artifact)).unwrap_or_else(|_| r.tail.clone());
    let name = crate::capabilities::missing_from(&r.run, &output);
    // a shell's own word (`exit 127`, `return`) is never a tool that could be missing
    if crate::capabilities::shell_word(&name) {
        return None;
    }
    let path = std::env::var_os("PATH");
    // a command that resolves its tools its own way (its own `PATH=`, a `cd`) cannot be judged
    // from andon's PATH: its 126/127 stands as the shell reported it
    let judged_here = crate::capabilities::watchable(&name, &r.run);
    if judged_here && crate::capabilities::resolves(&name, root, path.as_deref()) {
        return None;
    }
    let fingerprint = crate::capabilities::fingerprint(&name, root, path.as_deref());
    Some(Capability { name, command: r.run.clone(), fingerprint })
}

/// The routing record kept with the evidence (R89, R91).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    /// The approach that ran (absent: a tie nobody has chosen between).
    pub approach: Option<String>,
    pub family: Option<char>,
    pub rung: Option<u8>,
    pub candidates: Vec<String>,
    pub why: Vec<String>,
    /// What the proposal recommended, when it differs from the route (R89).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<String>,
}

/// The configured commands that speak for any of `stages`, both lanes (verifying is an explicit
/// request), or the one `--command`.
pub fn checks(cfg: &Config, stages: &[String], command: Option<&str>) -> Vec<CommandSpec> {
    if let Some(c) = command {
        return vec![CommandSpec {
            name: "given".into(),
            run: c.to_string(),
            stages: Vec::new(),
            lane: Lane::Fast,
            timeout_secs: crate::config::DEFAULT_COMMAND_TIMEOUT_SECS,
            technique: None,
            line: 0,
        }];
    }
    let mut out: Vec<CommandSpec> = Vec::new();
    for s in stages {
        for c in commands::applicable(&cfg.commands, s, true) {
            if !out.iter().any(|o| o.name == c.name) {
                out.push(c.clone());
            }
        }
    }
    out
}

/// What a ledger gap is about, for routing: its source fact, its wire, its file.
pub fn subject_of_gap(g: &GapState, has_checks: bool) -> Subject {
    subject_of(g, has_checks, false)
}

/// [`subject_of_gap`], knowing whether the structural facts already said nothing of it: a wire
/// the loop's own structural proof could not show (a declared wire no import carries) is about
/// what the code does across it, and the stage's checks prove it.
pub fn subject_of(g: &GapState, has_checks: bool, structure_said_nothing: bool) -> Subject {
    let mut s = Subject { has_checks, ..Subject::default() };
    if structure_said_nothing && g.source == "UnprovenWire" {
        let w = g.wire.as_ref().map(|w| w.to_string()).unwrap_or_default();
        return s.with(
            Object::Behavior,
            format!("no import carries the handoff {w}: only a check that exercises it shows it"),
        );
    }
    let structural = matches!(
        g.source.as_str(),
        "BrokenImport"
            | "StubHandoff"
            | "UndeclaredImport"
            | "UndeclaredWireImport"
            | "UnusedDependency"
            | "UnprovenWire"
    );
    if structural {
        s = s.with(Object::Structure, format!("the gap comes from `{}`, a structural fact", g.source));
    } else if g.wire.is_some() {
        s = s.with(Object::Structure, format!("the gap is about the handoff {}", g.wire.as_ref().expect("wire")));
    }
    if let Some((o, why)) = route::object_of_path(&g.location.path) {
        s = s.with(o, why);
    }
    if s.objects.is_empty() {
        s = s.with(Object::Behavior, format!("the gap (`{}`) is about what the code does", g.source));
    }
    s
}

/// The route for a subject, with a person's choice applied when (and only when) the table tied
/// and the choice is one of the candidates. `Err` refuses a choice routing does not allow.
pub fn route_one(subject: &Subject, chosen: Option<Approach>) -> Result<Route, String> {
    let mut r = route::route(subject);
    if let Some(c) = chosen {
        if !r.needs_human() {
            let routed = r.approach.map(Approach::id).unwrap_or_default();
            if Some(c) == r.approach {
                return Ok(r);
            }
            return Err(format!(
                "--approach {} is refused: routing chose {routed} ({}); a person chooses only between the candidates of a tie",
                c.id(),
                r.why.join("; ")
            ));
        }
        if !r.candidates.contains(&c) {
            let names: Vec<&str> = r.candidates.iter().map(|a| a.id()).collect();
            return Err(format!("--approach {} is not one of the tied candidates ({})", c.id(), names.join(", ")));
        }
        r.approach = Some(c);
        r.why.push(format!("a person chose {} (--approach)", c.id()));
    }
    Ok(r)
}

/// Routes several obligations with one person's choice: applied to each tie it is a candidate
/// of, ignored elsewhere; refused when it settles no tie.
pub fn route_all(subjects: &[&Subject], chosen: Option<Approach>) -> Result<Vec<Route>, String> {
    let mut used = false;
    let routes = subjects
        .iter()
        .map(|s| {
            let mut r = route::route(s);
            if let Some(c) = chosen
                && r.needs_human()
                && r.candidates.contains(&c)
            {
                r.approach = Some(c);
                r.why.push(format!("a person chose {} (--approach)", c.id()));
                used = true;
            }
            r
        })
        .collect();
    match chosen {
        Some(c) if !used => Err(format!(
            "--approach {} is refused: it settles no routing tie (a person chooses only between the candidates of a tie)",
            c.id()
        )),
        _ => Ok(routes),
    }
}

pub fn routing_record(r: &Route, proposed: Option<&str>) -> Routing {
    let disagreement = match (proposed, r.approach) {
        (Some(p), Some(a)) if p != a.id() => {
            Some(format!("the proposal recommended `{p}`; routing chose `{}` and ran it", a.id()))
        }
        _ => None,
    };
    Routing {
        approach: r.approach.map(|a| a.id().to_string()),
        family: r.approach.and_then(Approach::family),
        rung: r.approach.map(|a| a.rung().number()),
        candidates: r.candidates.iter().map(|a| a.id().to_string()).collect(),
        why: r.why.clone(),
        disagreement,
    }
}

/// The proof of a tie: no verdict, the candidates listed (R91).
pub fn tie(r: &Route) -> Proof {
    let names: Vec<&str> = r.candidates.iter().map(|a| a.id()).collect();
    Proof::unknown(
        format!("routing is a genuine tie between {}: a person chooses (`--approach`)", names.join(" and ")),
        "needs-human: no verdict is rendered on a tie",
    )
}

/// Runs `approach` on the applied change.
pub fn run(
    approach: Approach,
    root: &Path,
    cfg: &Config,
    idx: &Index,
    target: &Target,
    inputs: &Inputs,
    nonce: &str,
) -> Result<Proof, String> {
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

/// Where command outputs go: the caller's artifacts directory, else the configured `output_dir`.
pub(super) fn output_dir(cfg: &Config, inputs: &Inputs) -> PathBuf {
    inputs.artifacts.clone().unwrap_or_else(|| cfg.settings.output_dir.value.clone())
}

/// The structural approach: the fresh index after the fix, read on the target's wire or site.
fn structural(idx: &Index, target: &Target) -> Result<Proof, String> {
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
fn configured_checks(root: &Path, cfg: &Config, target: &Target, inputs: &Inputs, nonce: &str) -> Proof {
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
fn numeric(root: &Path, cfg: &Config, target: &Target, inputs: &Inputs, nonce: &str) -> Proof {
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
fn rubric(root: &Path, cfg: &Config, inputs: &Inputs, nonce: &str) -> Result<Proof, String> {
    let Some(file) = &inputs.rubric else {
        return Ok(Proof::unknown(
            "approach (c) needs the claim's rubric record: give --rubric FILE (docs/approaches-rubric-agentic.md)"
                .into(),
            "unavailable without a rubric record: the wire stays unknown",
        ));
    };
    let bytes = read_record(file)?;
    let input = crate::evidence::rubric::parse(&bytes).map_err(|e| format!("{}: {}", file.display(), e.join("; ")))?;
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
fn agentic(inputs: &Inputs) -> Result<Proof, String> {
    let Some(file) = &inputs.process else {
        return Ok(Proof::unknown(
            "approach (d) needs the agent's process record: give --process FILE (docs/approaches-rubric-agentic.md)"
                .into(),
            "unavailable without a process record: the wire stays unknown",
        ));
    };
    let bytes = read_record(file)?;
    let rec = crate::evidence::agentic::parse(&bytes).map_err(|e| format!("{}: {}", file.display(), e.join("; ")))?;
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

/// A fingerprint no cached run has: a verification runs its checks.
fn fresh(nonce: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{nonce}-{now:x}")
}

/// Approach (f): the stage's checks run through the property-testing tool the repository itself
/// declares (R98); a failure is refuted with the tool's minimized counterexample.
fn property(root: &Path, cfg: &Config, target: &Target, inputs: &Inputs, nonce: &str) -> Proof {
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
    let specs = checks(cfg, &target.stages, inputs.command.as_deref());
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

/// Run `r` could not run here: its tool is absent ([`lacking`]), which says nothing about the fix.
pub(super) fn cannot_run_here(root: &Path, r: &commands::Run) -> bool {
    lacking(root, r).is_some()
}

/// Runs the checks (never from the cache: a verification runs them) and judges by exit codes:
/// all pass → proven; any non-zero exit → refuted; timed out or never started → unproven.
fn executed(root: &Path, out: &Path, specs: &[CommandSpec], nonce: &str) -> Proof {
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
        claim: format!("{} exit 0 on the applied fix", cmds.join(", ")),
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

/// Approach (a), the adversarial panel (R101–R105; `docs/panel.md`). andon calls no model: it
/// writes the role packets into `--panel DIR`, reads the role outputs from it
/// (`output-for.json`, `output-against.json`, `output-evidence.json`, then
/// `output-adjudicator.json`), re-runs every command the evidence role reports, and judges.
fn panel(root: &Path, cfg: &Config, idx: &Index, target: &Target, inputs: &Inputs, nonce: &str) -> Proof {
    use crate::panel::{self, Role};
    let Some(dir) = &inputs.panel else {
        return Proof::unknown(
            "approach (a) needs the panel: give --panel DIR; andon writes the role packets there and reads the role outputs from it".into(),
            "unavailable without role outputs: the wire stays unknown",
        );
    };
    let input = panel_input(idx, target, inputs);
    let (outputs, refused) = read_role_outputs(dir);
    // skip_verification (R7): the adjudicator's pass, the panel's referee, is neither asked nor read
    let referee = !cfg.settings.skip_verification.value;
    if let Some(waiting) = await_round(dir, &input, &outputs, refused, referee) {
        return waiting;
    }
    let runner = runner(cfg, inputs, nonce);
    let checks: Vec<panel::Check> =
        outputs.iter().filter(|o| o.role == Role::Evidence).flat_map(|o| o.checks.clone()).collect();
    let reruns = match sealed(root, cfg, || panel::rerun(root, &checks, &runner)) {
        Ok(r) => r,
        Err(p) => return *p,
    };
    // condition 3: the panel cannot adjudicate away a tier-1 hold on the wire
    let hold = target
        .wire
        .as_ref()
        .and_then(|w| fix::structural_of(idx, Some(w), "", "").ok())
        .is_some_and(|(v, _, hold, _, _)| hold && v != Verdict::Proven);
    let j = panel::judge_with(&input, &outputs, &reruns, hold, referee);
    let mut proof = panel_proof(&input, &j, hold);
    if !referee {
        proof
            .references
            .push("verification_skipped: no adjudicator judged the panel (skip_verification = true)".into());
        proof.detail = format!("{}; verification_skipped", proof.detail);
    }
    proof
}

/// What the panel is told about the fix under review: the target's wire (else its site), claim,
/// criteria and diff, who built it, and the repository text that addresses the tool.
fn panel_input(idx: &Index, target: &Target, inputs: &Inputs) -> crate::panel::PanelInput {
    crate::panel::PanelInput {
        wire: target.wire.clone().unwrap_or(Wire { producer: target.path.clone(), consumer: target.path.clone() }),
        gap: target.id.clone(),
        claim: target.claim.clone(),
        criteria: target.criteria.clone(),
        diff: target.diff.clone(),
        proposer: inputs.proposer.clone().unwrap_or_default(),
        for_case: None,
        prior_verdicts: Vec::new(),
        proposer_reasoning: None,
        // text in the changed files that addresses the tool: quoted to the roles as data (R123)
        repo_text: crate::ops::suspected_injections(idx)
            .into_iter()
            .filter(|i| i.path == target.path || target.diff.contains(&format!("+++ b/{}", i.path)))
            .map(|i| (format!("{}:{}", i.path, i.line), i.text))
            .collect(),
    }
}

/// A rubric or process record: a regular file (a FIFO would block the proof forever), 16 MiB at
/// most.
fn read_record(file: &Path) -> Result<Vec<u8>, String> {
    crate::index::walk::read_regular(file, 16 << 20).map_err(|e| format!("{}: {e}", file.display()))
}

/// A role's output: a regular file in the panel directory itself (a link is refused: it could
/// lead anywhere; a FIFO would block the proof forever), 16 MiB at most.
fn read_output(file: &Path) -> std::io::Result<Vec<u8>> {
    if std::fs::symlink_metadata(file)?.file_type().is_symlink() {
        return Err(std::io::Error::other(
            "a symbolic link: a role writes its output as a file in the panel directory",
        ));
    }
    crate::index::walk::read_regular(file, 16 << 20)
}

/// Reads every role's output from `dir`: the outputs that parse as their role's, and why each
/// other one was refused (a missing output is simply not there yet).
fn read_role_outputs(dir: &Path) -> (Vec<crate::panel::RoleOutput>, Vec<String>) {
    use crate::panel::{self, Role};
    let mut outputs = Vec::new();
    let mut refused = Vec::new();
    for r in Role::ALL {
        let file = dir.join(format!("output-{}.json", r.name()));
        match read_output(&file) {
            Ok(bytes) => match panel::parse_output(&bytes) {
                Ok(o) if o.role == r => outputs.push(o),
                Ok(o) => refused.push(format!("{}: holds a {} output", file.display(), o.role.name())),
                Err(e) => refused.push(format!("{}: {e}", file.display())),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => refused.push(format!("{}: {e}", file.display())),
        }
    }
    (outputs, refused)
}

/// The panel's three rounds, each with who answers it: the two advocates; the evidence role,
/// shown both advocates' claims to turn into checked facts; the adjudicator, shown all three.
fn panel_rounds(
    input: &crate::panel::PanelInput,
    outputs: &[crate::panel::RoleOutput],
) -> [(Vec<crate::panel::Packet>, &'static str); 3] {
    use crate::panel::{self, Role};
    let advocates: Vec<panel::RoleOutput> =
        outputs.iter().filter(|o| matches!(o.role, Role::For | Role::Against)).cloned().collect();
    let mut first = panel::packets(input, &advocates);
    let evidence = first.split_off(2);
    let quoted: Vec<panel::RoleOutput> = outputs.iter().filter(|o| o.role != Role::Adjudicator).cloned().collect();
    [
        (first, "the advocates (for, against)"),
        (evidence, "the evidence role"),
        (vec![panel::adjudicator_packet(input, &quoted)], "the adjudicator"),
    ]
}

/// The first round not every role of which has an accepted output: its packets (and the index
/// of all packets so far) are written to `dir`, and the proof says the panel awaits it. `None`:
/// every role has answered.
fn await_round(
    dir: &Path,
    input: &crate::panel::PanelInput,
    outputs: &[crate::panel::RoleOutput],
    mut refused: Vec<String>,
    referee: bool,
) -> Option<Proof> {
    use crate::panel::{self, Role};
    // An output counts once andon accepts it against the packet it answers; a refused one (and
    // one that answered an older packet: an output its packet quotes changed) is asked again.
    let checked = panel::validate(input, outputs);
    let accepted = |r: Role| outputs.iter().zip(&checked).any(|(o, ok)| o.role == r && ok.is_ok());
    refused.extend(checked.iter().filter_map(|c| c.as_ref().err()).map(|e| format!("refused: {e}")));
    let all = panel_rounds(input, outputs);
    let rounds = &all[..if referee { all.len() } else { all.len() - 1 }];
    for (i, (round, who)) in rounds.iter().enumerate() {
        if round.iter().all(|p| accepted(p.role)) {
            continue;
        }
        // `packets.json` lists every packet handed out so far: this round's and the earlier ones
        let index: Vec<panel::Packet> = rounds[..=i].iter().flat_map(|(r, _)| r.iter().cloned()).collect();
        let written =
            round.iter().try_for_each(|p| write_packet(dir, p.role.name(), p)).and_then(|_| write_index(dir, &index));
        if let Err(e) = written {
            return Some(Proof::unknown(format!("the panel packets could not be written: {e}"), "unknown"));
        }
        let files: Vec<String> = round.iter().map(|p| format!("packet-{}.json", p.role.name())).collect();
        let mut p = Proof::unknown(
            format!(
                "the panel awaits {who}: {} in {}; each role writes output-<role>.json there",
                files.join(", "),
                dir.display()
            ),
            "no verdict until every role has answered",
        );
        p.references = round.iter().map(|p| format!("{} {}", p.role.name(), p.hash)).collect();
        p.references.extend(refused);
        return Some(p);
    }
    None
}

/// Writes one role packet to `dir` as `packet-<name>.json`, atomically.
fn write_packet(dir: &Path, name: &str, p: &crate::panel::Packet) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let file = dir.join(format!("packet-{name}.json"));
    // whole, through a fresh temporary file: never through a link planted in the directory
    crate::text::write_atomic(&file, p.body.as_bytes()).map_err(|e| format!("{}: {e}", file.display()))
}

/// The proof of a panel that rendered its judgment.
fn panel_proof(input: &crate::panel::PanelInput, j: &crate::panel::Judgment, hold: bool) -> Proof {
    use crate::panel::Outcome;
    let per: Vec<String> = j
        .per_criterion
        .iter()
        .map(|(id, o, why)| format!("{}: {}: {why}", crate::text::short(id), format!("{o:?}").to_lowercase()))
        .collect();
    Proof {
        verdict: j.verdict,
        tier: None,
        hold,
        claim: format!("the adversarial panel judged {} criteria mechanically", input.criteria.len()),
        detail: if j.reasons.is_empty() { "every criterion passed".into() } else { j.reasons.join("; ") },
        references: per,
        artifact: None,
        // each criterion's own verdict, once the panel rendered one at all (an incomplete panel
        // or a standing hold leaves every obligation with the panel's verdict)
        per_criterion: if j.verdict == Verdict::Unknown || hold { Vec::new() } else { criterion_verdicts(input, j) },
        // a load-bearing criterion neither side carries: the evidence is contested (R92)
        reason: (j.verdict == Verdict::Unproven && j.per_criterion.iter().any(|(_, o, _)| *o == Outcome::Neither))
            .then_some(Reason::Contested),
        capability: None,
    }
}

/// Each criterion's own verdict from the panel's outcome for it.
fn criterion_verdicts(input: &crate::panel::PanelInput, j: &crate::panel::Judgment) -> Vec<(String, Verdict, String)> {
    use crate::panel::Outcome;
    j.per_criterion
        .iter()
        .map(|(id, o, why)| {
            let lb = input.criteria.iter().any(|c| &c.id == id && c.load_bearing);
            let v = match o {
                Outcome::Pass => Verdict::Proven,
                Outcome::Fail => Verdict::Refuted,
                Outcome::Neither if lb => Verdict::Unproven,
                // not load-bearing: neither side carrying it does not block (R104)
                Outcome::Neither => Verdict::Proven,
                Outcome::Unbacked => Verdict::Unproven,
                Outcome::Unknown => Verdict::Unknown,
            };
            (id.clone(), v, why.clone())
        })
        .collect()
}

/// Runs `f` (which re-runs commands a role or scorer reported) under a seal on the working tree:
/// a command that edits the change under review voids the proof (R93: verify never edits it).
fn sealed<T>(root: &Path, cfg: &Config, f: impl FnOnce() -> T) -> Result<T, Box<Proof>> {
    let own = super::own_paths(cfg);
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
fn runner<'a>(cfg: &'a Config, inputs: &'a Inputs, nonce: &'a str) -> impl Fn(&Path, &str) -> Option<i32> + 'a {
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

/// `packets.json`: every packet written, with the hash its role output must quote.
fn write_index(dir: &Path, packets: &[crate::panel::Packet]) -> Result<(), String> {
    let rows: Vec<serde_json::Value> = packets
        .iter()
        .map(|p| {
            serde_json::json!({ "role": p.role.name(), "file": format!("packet-{}.json", p.role.name()),
                "packet_hash": p.hash, "output": format!("output-{}.json", p.role.name()), "access": p.access })
        })
        .collect();
    let file = dir.join("packets.json");
    let text =
        serde_json::to_string_pretty(&serde_json::json!({ "andon_panel_index": 1, "packets": rows })).expect("json");
    crate::text::write_atomic(&file, text.as_bytes()).map_err(|e| format!("{}: {e}", file.display()))
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
) -> Result<Vec<String>, String> {
    use crate::facts::rel;
    if proof.verdict != Verdict::Proven {
        return Ok(Vec::new());
    }
    let store = crate::ops::derive(&crate::datalog::builtin_program(), idx, &[rel::IN_STAGE, rel::RESOLVES])?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_packet_is_never_written_through_a_link_planted_in_the_panel_directory() {
        let panel = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = panel.path();
        for name in ["packet-for.json.tmp", "packets.json.tmp", "packet-for.json"] {
            std::os::unix::fs::symlink(outside.path().join(name), dir.join(name)).unwrap();
        }
        let p = crate::panel::Packet {
            role: crate::panel::Role::For,
            access: vec![],
            body: "{}".into(),
            hash: "0".repeat(32),
        };
        write_packet(dir, "for", &p).unwrap();
        write_index(dir, &[p]).unwrap();
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0, "nothing was written outside");
        let written = std::fs::symlink_metadata(dir.join("packet-for.json")).unwrap();
        assert!(written.is_file(), "the packet replaced the link, as a file");
        assert!(std::fs::symlink_metadata(dir.join("packets.json")).unwrap().is_file());
    }

    #[cfg(unix)]
    #[test]
    fn a_role_output_that_is_a_fifo_or_a_link_is_refused_never_waited_on() {
        let panel = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let dir = panel.path();
        assert!(std::process::Command::new("mkfifo").arg(dir.join("output-for.json")).status().unwrap().success());
        std::fs::write(outside.path().join("o.json"), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path().join("o.json"), dir.join("output-against.json")).unwrap();
        let (outputs, refused) = read_role_outputs(dir);
        assert!(outputs.is_empty());
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(refused.iter().any(|r| r.contains("not a regular file")), "{refused:?}");
        assert!(refused.iter().any(|r| r.contains("symbolic link")), "{refused:?}");
    }
}
