//! Approach (c), the claim/rationale rubric (spec 000 §6; R96, R105): a prose claim (a design
//! rationale, a doc claim, a commit rationale) is scored on five criteria, of which
//! falsifiability and evidence-grounding are load-bearing. A scorer (a person, an agent, a tool)
//! hands in its per-criterion marks as strict JSON ([`parse`]); andon decides ([`score`]): a mark
//! counts only when it traces to an objective check that andon re-runs through an injected
//! runner, and a mark resting on a person's authority is rejected. Formats and rules:
//! `docs/approaches-rubric-agentic.md`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize};

use crate::config::nearest;
use crate::ledger::Verdict;
use crate::panel::{self, CheckStatus, ObjectiveCheck, Producer};
use crate::text::short as escape_inline;

/// The input format this andon reads (`"format": 1`).
pub const FORMAT: u32 = 1;

/// The five rubric criteria, in the order results list them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RubricCriterion {
    Falsifiability,
    Generalization,
    EvidenceGrounding,
    HonestyOfFraming,
    Accessibility,
}

impl RubricCriterion {
    pub const ALL: [RubricCriterion; 5] = [
        RubricCriterion::Falsifiability,
        RubricCriterion::Generalization,
        RubricCriterion::EvidenceGrounding,
        RubricCriterion::HonestyOfFraming,
        RubricCriterion::Accessibility,
    ];

    pub fn name(self) -> &'static str {
        ["falsifiability", "generalization", "evidence-grounding", "honesty-of-framing", "accessibility"][self as usize]
    }

    /// Failing a load-bearing criterion fails the claim whatever the others say (R96).
    pub fn load_bearing(self) -> bool {
        matches!(self, RubricCriterion::Falsifiability | RubricCriterion::EvidenceGrounding)
    }
}

/// By name; an unknown name is an error that suggests the nearest criterion.
impl<'de> Deserialize<'de> for RubricCriterion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        RubricCriterion::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
            let names = RubricCriterion::ALL.map(RubricCriterion::name);
            let hint = match nearest(&s, names) {
                Some(n) => format!("did you mean `{n}`?"),
                None => format!("expected one of {}", names.join(", ")),
            };
            D::Error::custom(format!("unknown criterion `{}`, {hint}", escape_inline(&s)))
        })
    }
}

/// The scorer's mark on one criterion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mark {
    Pass,
    Fail,
}

/// The objective check a `pass` traces to (R105): a command andon re-runs, and the exit code that
/// confirms the mark.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimCheck {
    pub kind: ObjectiveCheck,
    pub command: String,
    pub expect_exit: i32,
}

/// One criterion as the scorer marked it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoredCriterion {
    pub criterion: RubricCriterion,
    pub verdict: Mark,
    /// Why the scorer marked it so; must not rest on a person's authority.
    pub basis: String,
    /// `null` or absent: nothing to re-run, so a `pass` is not exercised.
    #[serde(default)]
    pub check: Option<ClaimCheck>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RubricInput {
    pub format: u32,
    /// The prose claim under review.
    pub claim: String,
    /// Where the claim is written (`docs/design.md:40`, a commit id); `null` or absent if unknown.
    #[serde(default)]
    pub source: Option<String>,
    /// Who marked the criteria.
    pub producer: Producer,
    pub criteria: Vec<ScoredCriterion>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RubricOutcome {
    /// Marked `pass`, and andon's re-run of its check gave the expected exit code.
    Pass,
    /// Marked `fail`, or its check re-ran and contradicted a `pass`.
    Fail,
    /// Not marked, or marked `pass` with no check to trace it to.
    NotExercised,
    /// Marked `pass`, but andon could not re-run its check.
    Unverifiable,
    /// The basis or the claim appeals to a person's authority (R105); counts as a fail.
    Rejected,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CriterionResult {
    pub criterion: RubricCriterion,
    pub load_bearing: bool,
    pub outcome: RubricOutcome,
    pub reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RubricResult {
    pub verdict: Verdict,
    /// All five criteria, in [`RubricCriterion::ALL`] order.
    pub criteria: Vec<CriterionResult>,
    pub claim: String,
    pub detail: String,
}

/// `line L column C: message` for a JSON error.
fn located(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = msg.strip_suffix(&format!(" at line {} column {}", e.line(), e.column())).unwrap_or(&msg);
    format!("line {} column {}: {}", e.line(), e.column(), escape_inline(msg))
}

/// Reads one strict JSON document of format [`FORMAT`] (shared by the evidence inputs): the
/// format is checked first, so a newer document is reported as such rather than by its first
/// unknown field; then unknown, duplicate or missing fields and wrong types are errors with line
/// and column. A leading byte-order mark is ignored.
pub(super) fn strict_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Vec<String>> {
    #[derive(Deserialize)]
    struct Probe {
        format: Option<serde_json::Value>,
    }
    let text = std::str::from_utf8(bytes).map_err(|e| vec![format!("invalid UTF-8 at byte {}", e.valid_up_to())])?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let probe: Probe = serde_json::from_str(text).map_err(|e| vec![located(&e)])?;
    match probe.format {
        None => return Err(vec!["missing field `format`".into()]),
        Some(f) if f != FORMAT => {
            let f = escape_inline(&f.to_string());
            return Err(vec![format!("format {f} is not one this andon reads (it reads format {FORMAT})")]);
        }
        Some(_) => {}
    }
    serde_json::from_str(text).map_err(|e| vec![located(&e)])
}

/// One rubric input, strictly (see the module doc). After the JSON itself, every problem is
/// listed: an empty claim, producer id or basis; a check with an empty command; a criterion
/// marked twice.
pub fn parse(bytes: &[u8]) -> Result<RubricInput, Vec<String>> {
    let input: RubricInput = strict_json(bytes)?;
    let mut errors = Vec::new();
    if input.claim.trim().is_empty() {
        errors.push("claim: empty".to_string());
    }
    if input.producer.id.trim().is_empty() {
        errors.push("producer.id: empty".into());
    }
    for (i, c) in input.criteria.iter().enumerate() {
        let at = format!("criteria[{i}] (`{}`)", c.criterion.name());
        if let Some(first) = input.criteria[..i].iter().position(|d| d.criterion == c.criterion) {
            errors.push(format!("{at}: marked twice (first at criteria[{first}])"));
        }
        if c.basis.trim().is_empty() {
            errors.push(format!("{at}: empty basis"));
        }
        if c.check.as_ref().is_some_and(|k| k.command.trim().is_empty()) {
            errors.push(format!("{at}: check.command: empty"));
        }
    }
    if errors.is_empty() { Ok(input) } else { Err(errors) }
}

/// Scores `input` mechanically (rules in `docs/approaches-rubric-agentic.md`): each `pass` is
/// confirmed only by re-running its check through `run(root, command)` (`None`: it could not be
/// run; each distinct command runs once).
pub fn score(input: &RubricInput, root: &Path, run: &dyn Fn(&Path, &str) -> Option<i32>) -> RubricResult {
    let ran: RefCell<BTreeMap<String, Option<i32>>> = RefCell::default();
    let memo = |root: &Path, cmd: &str| {
        let cached = ran.borrow().get(cmd).copied();
        cached.unwrap_or_else(|| {
            let code = run(root, cmd);
            ran.borrow_mut().insert(cmd.to_string(), code);
            code
        })
    };
    let claim_appeal = panel::appeals_to_authority(&input.claim);
    let criteria: Vec<CriterionResult> = (RubricCriterion::ALL.into_iter())
        .map(|criterion| {
            let scored = input.criteria.iter().find(|c| c.criterion == criterion);
            let (outcome, reason) = match scored {
                None => (RubricOutcome::NotExercised, "not marked by the scorer".to_string()),
                Some(s) => judge(s, claim_appeal.as_deref(), root, &memo),
            };
            CriterionResult { criterion, load_bearing: criterion.load_bearing(), outcome, reason }
        })
        .collect();
    let list = |pred: &dyn Fn(&CriterionResult) -> bool| {
        let named = criteria.iter().filter(|c| pred(c)).map(|c| format!("{} ({})", c.criterion.name(), c.reason));
        named.collect::<Vec<_>>().join("; ")
    };
    let failed =
        |c: &CriterionResult| c.load_bearing && matches!(c.outcome, RubricOutcome::Fail | RubricOutcome::Rejected);
    let (verdict, detail) = if criteria.iter().any(failed) {
        (Verdict::Refuted, format!("refuted: a load-bearing criterion failed: {}", list(&failed)))
    } else if criteria.iter().all(|c| c.outcome == RubricOutcome::Pass) {
        (Verdict::Proven, "proven: all five criteria pass on objective checks andon re-ran".into())
    } else {
        (Verdict::Unproven, format!("unproven: did not pass: {}", list(&|c| c.outcome != RubricOutcome::Pass)))
    };
    RubricResult { verdict, criteria, claim: input.claim.clone(), detail }
}

/// One marked criterion's outcome and reason.
fn judge(
    s: &ScoredCriterion,
    claim_appeal: Option<&str>,
    root: &Path,
    run: &dyn Fn(&Path, &str) -> Option<i32>,
) -> (RubricOutcome, String) {
    let rejected = |whose: &str, phrase: &str| {
        let phrase = escape_inline(phrase);
        let why = format!("{whose} appeals to a person's authority (`{phrase}`); only objective checks count (R105)");
        (RubricOutcome::Rejected, format!("rejected: {why}"))
    };
    if let Some(p) = panel::appeals_to_authority(&s.basis) {
        return rejected("its basis", &p);
    }
    if let Some(p) = claim_appeal {
        return rejected("the claim", p);
    }
    let check = match (s.verdict, &s.check) {
        (Mark::Fail, _) => return (RubricOutcome::Fail, format!("marked fail: {}", escape_inline(&s.basis))),
        (Mark::Pass, None) => {
            return (RubricOutcome::NotExercised, "marked pass with no objective check to trace it to (R105)".into());
        }
        (Mark::Pass, Some(k)) => k,
    };
    // The panel's re-run: the scorer "reports" the expected exit code, andon observes the real one.
    let as_evidence = panel::Check {
        id: s.criterion.name().into(),
        criteria: vec![s.criterion.name().into()],
        command: check.command.clone(),
        exit_code: Some(check.expect_exit),
        output_hash: None,
        status: CheckStatus::Confirmed,
    };
    let r = panel::rerun(root, std::slice::from_ref(&as_evidence), run).remove(0);
    let kind = serde_json::to_value(check.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    let what = format!("{kind} check `{}`", escape_inline(&check.command));
    match r.status {
        CheckStatus::Confirmed => (RubricOutcome::Pass, format!("{what}: {}", r.why)),
        CheckStatus::Refuted => (RubricOutcome::Fail, format!("marked pass, but {what} contradicts it: {}", r.why)),
        CheckStatus::Unverifiable => (RubricOutcome::Unverifiable, format!("marked pass, but {what}: {}", r.why)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-input");
        std::fs::read(dir.join(name)).unwrap()
    }

    /// A scorer that marked all five `pass`, each with a check `cargo test <criterion>`.
    fn all_pass() -> RubricInput {
        let s = |criterion: RubricCriterion| ScoredCriterion {
            criterion,
            verdict: Mark::Pass,
            basis: format!("{} is shown by a test", criterion.name()),
            check: Some(ClaimCheck {
                kind: ObjectiveCheck::TestResult,
                command: format!("cargo test {}", criterion.name()),
                expect_exit: 0,
            }),
        };
        RubricInput {
            format: FORMAT,
            claim: "Batching writes halves p99 latency on the ingest path".into(),
            source: Some("docs/design.md:40".into()),
            producer: Producer { id: "agent-scorer".into(), kind: panel::ProducerKind::Agent },
            criteria: RubricCriterion::ALL.map(s).to_vec(),
        }
    }

    /// Every command exits 0.
    fn zero(_: &Path, _: &str) -> Option<i32> {
        Some(0)
    }

    fn edit(i: usize, f: impl FnOnce(&mut ScoredCriterion)) -> RubricInput {
        let mut input = all_pass();
        f(&mut input.criteria[i]);
        input
    }

    fn outcome(r: &RubricResult, c: RubricCriterion) -> (RubricOutcome, &str) {
        let c = r.criteria.iter().find(|x| x.criterion == c).unwrap();
        (c.outcome, &c.reason)
    }

    #[test]
    fn all_five_passing_on_rerun_is_proven() {
        let seen = RefCell::new(Vec::new());
        let run = |root: &Path, cmd: &str| {
            assert_eq!(root, Path::new("/repo"));
            seen.borrow_mut().push(cmd.to_string());
            Some(0)
        };
        let r = score(&all_pass(), Path::new("/repo"), &run);
        assert_eq!(r.verdict, Verdict::Proven, "{r:?}");
        assert_eq!(r.criteria.iter().map(|c| c.criterion).collect::<Vec<_>>(), RubricCriterion::ALL);
        let lb: Vec<_> = r.criteria.iter().filter(|c| c.load_bearing).map(|c| c.criterion).collect();
        assert_eq!(lb, [RubricCriterion::Falsifiability, RubricCriterion::EvidenceGrounding]);
        assert_eq!(
            outcome(&r, RubricCriterion::Accessibility),
            (RubricOutcome::Pass, "test-result check `cargo test accessibility`: reproduced (exit 0)")
        );
        assert_eq!(seen.borrow().len(), 5);
        assert_eq!(r.claim, all_pass().claim);
    }

    #[test]
    fn a_command_shared_by_criteria_runs_once() {
        let mut input = all_pass();
        input.criteria.iter_mut().for_each(|c| c.check.as_mut().unwrap().command = "make bench".into());
        let count = RefCell::new(0);
        let r = score(&input, Path::new("/repo"), &|_, _| {
            *count.borrow_mut() += 1;
            Some(0)
        });
        assert_eq!((r.verdict, *count.borrow()), (Verdict::Proven, 1));
    }

    #[test]
    fn a_load_bearing_fail_beats_three_passes() {
        for i in [0, 2] {
            let r = score(&edit(i, |c| c.verdict = Mark::Fail), Path::new("/repo"), &zero);
            assert_eq!(r.verdict, Verdict::Refuted, "{r:?}");
            assert_eq!(r.criteria.iter().filter(|c| c.outcome == RubricOutcome::Pass).count(), 4);
            let (o, why) = outcome(&r, RubricCriterion::ALL[i]);
            assert_eq!(o, RubricOutcome::Fail);
            assert!(why.starts_with("marked fail: "), "{why}");
            assert!(
                r.detail.starts_with(&format!(
                    "refuted: a load-bearing criterion failed: {}",
                    RubricCriterion::ALL[i].name()
                ))
            );
        }
    }

    #[test]
    fn a_non_load_bearing_fail_is_unproven() {
        for i in [1, 3, 4] {
            let r = score(&edit(i, |c| c.verdict = Mark::Fail), Path::new("/repo"), &zero);
            assert_eq!(r.verdict, Verdict::Unproven, "{r:?}");
            assert_eq!(outcome(&r, RubricCriterion::ALL[i]).0, RubricOutcome::Fail);
            assert_eq!(
                r.detail,
                format!(
                    "unproven: did not pass: {} (marked fail: {} is shown by a test)",
                    RubricCriterion::ALL[i].name(),
                    RubricCriterion::ALL[i].name()
                )
            );
        }
    }

    #[test]
    fn an_appeal_to_authority_is_rejected() {
        // In a load-bearing basis: rejected, and it counts as a fail.
        let r = score(
            &edit(2, |c| c.basis = "Approved by the lead, and the bench agrees".into()),
            Path::new("/repo"),
            &zero,
        );
        assert_eq!(r.verdict, Verdict::Refuted);
        let (o, why) = outcome(&r, RubricCriterion::EvidenceGrounding);
        assert_eq!(o, RubricOutcome::Rejected);
        assert!(why.contains("its basis appeals to a person's authority (`approved by`)"), "{why}");
        // In a non-load-bearing basis: rejected, unproven.
        let r = score(&edit(4, |c| c.basis = "Plain enough, as Alice agreed".into()), Path::new("/repo"), &zero);
        assert_eq!(
            (r.verdict, outcome(&r, RubricCriterion::Accessibility).0),
            (Verdict::Unproven, RubricOutcome::Rejected)
        );
        // In the claim itself: every criterion is rejected.
        let mut input = all_pass();
        input.claim.push_str("; the architect signed off on it");
        let r = score(&input, Path::new("/repo"), &zero);
        assert_eq!(r.verdict, Verdict::Refuted);
        assert!(
            r.criteria.iter().all(|c| c.outcome == RubricOutcome::Rejected && c.reason.contains("the claim appeals"))
        );
    }

    #[test]
    fn a_rerun_that_contradicts_a_pass_fails_it() {
        let fails = |word: &'static str| move |_: &Path, c: &str| Some(i32::from(c.contains(word)));
        let r = score(&all_pass(), Path::new("/repo"), &fails("falsifiability"));
        assert_eq!(r.verdict, Verdict::Refuted);
        let (o, why) = outcome(&r, RubricCriterion::Falsifiability);
        assert_eq!(o, RubricOutcome::Fail);
        assert_eq!(
            why,
            "marked pass, but test-result check `cargo test falsifiability` contradicts it: reported exit 0, andon observed 1"
        );
        // A check that expects a non-zero exit is confirmed by that exit.
        let input = edit(1, |c| c.check.as_mut().unwrap().expect_exit = 1);
        let r = score(&input, Path::new("/repo"), &fails("generalization"));
        assert_eq!(r.verdict, Verdict::Proven, "{r:?}");
        let r = score(&input, Path::new("/repo"), &zero);
        assert_eq!(
            (r.verdict, outcome(&r, RubricCriterion::Generalization).0),
            (Verdict::Unproven, RubricOutcome::Fail)
        );
    }

    #[test]
    fn a_check_that_cannot_be_rerun_is_unverifiable() {
        let r = score(&all_pass(), Path::new("/repo"), &|_, c| (!c.contains("grounding")).then_some(0));
        assert_eq!(r.verdict, Verdict::Unproven);
        let (o, why) = outcome(&r, RubricCriterion::EvidenceGrounding);
        assert_eq!(o, RubricOutcome::Unverifiable);
        assert!(why.ends_with("andon could not run it"), "{why}");
    }

    #[test]
    fn a_missing_criterion_or_a_pass_without_a_check_is_not_exercised() {
        let mut input = all_pass();
        input.criteria.remove(3);
        let r = score(&input, Path::new("/repo"), &zero);
        assert_eq!(r.verdict, Verdict::Unproven);
        assert_eq!(
            outcome(&r, RubricCriterion::HonestyOfFraming),
            (RubricOutcome::NotExercised, "not marked by the scorer")
        );
        assert_eq!(r.detail, "unproven: did not pass: honesty-of-framing (not marked by the scorer)");
        let r = score(&edit(0, |c| c.check = None), Path::new("/repo"), &zero);
        assert_eq!(r.verdict, Verdict::Unproven);
        assert_eq!(outcome(&r, RubricCriterion::Falsifiability).0, RubricOutcome::NotExercised);
        let mut empty = all_pass();
        empty.criteria.clear();
        let r = score(&empty, Path::new("/repo"), &|_, _| unreachable!());
        assert!(r.verdict == Verdict::Unproven && r.criteria.iter().all(|c| c.outcome == RubricOutcome::NotExercised));
    }

    #[track_caller]
    fn parse_err(text: &str) -> Vec<String> {
        parse(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn parses_strictly() {
        let good = String::from_utf8(fixture("rubric-proven.json")).unwrap();
        assert_eq!(parse(good.as_bytes()).unwrap().criteria.len(), 5);
        let e = parse_err(&good.replacen("\"evidence-grounding\"", "\"evidence-grouding\"", 1));
        assert_eq!(e.len(), 1);
        assert!(
            e[0].starts_with("line ")
                && e[0].contains("unknown criterion `evidence-grouding`, did you mean `evidence-grounding`?"),
            "{e:?}"
        );
        let e = parse_err(&good.replacen("\"evidence-grounding\"", "\"novelty\"", 1));
        assert!(e[0].contains("unknown criterion `novelty`, expected one of falsifiability, generalization"), "{e:?}");
        let e = parse_err(&good.replacen("\"basis\"", "\"confidence\": 0.9, \"basis\"", 1));
        assert!(
            e[0].starts_with("line 10 column 18: unknown field `confidence`, expected one of `criterion`"),
            "{e:?}"
        );
        let e = parse_err(&good.replacen("\"verdict\": \"pass\"", "\"verdict\": \"passed\"", 1));
        assert!(e[0].contains("unknown variant `passed`, expected `pass` or `fail`"), "{e:?}");
        let e = parse_err(&good.replacen("\"test-result\"", "\"opinion\"", 1));
        assert!(e[0].contains("unknown variant `opinion`"), "{e:?}");
        let e = parse_err(&good.replacen(", \"expect_exit\": 0", "", 1));
        assert!(e[0].contains("missing field `expect_exit`"), "{e:?}");
        let e = parse_err(&good.replacen("\"format\": 1", "\"format\": 2", 1));
        assert_eq!(e, ["format 2 is not one this andon reads (it reads format 1)"]);
        assert_eq!(parse_err(r#"{"claim": "x"}"#), ["missing field `format`"]);
        let e = parse_err("{\n  \"format\": 1,\n  \"claim\": \"x\",,\n}");
        assert!(e[0].starts_with("line 3 column 16: "), "{e:?}");
        assert!(parse_err(r#"{"format": 1, "format": 1}"#)[0].contains("duplicate field `format`"));
    }

    #[test]
    fn lists_every_problem_after_the_json() {
        let bad = r#"{"format": 1, "claim": " ", "producer": {"id": "", "kind": "human"}, "criteria": [
            {"criterion": "falsifiability", "verdict": "fail", "basis": "no threshold"},
            {"criterion": "accessibility", "verdict": "pass", "basis": "",
             "check": {"kind": "test-result", "command": " ", "expect_exit": 0}},
            {"criterion": "falsifiability", "verdict": "pass", "basis": "b", "check": null}]}"#;
        assert_eq!(
            parse_err(bad),
            [
                "claim: empty",
                "producer.id: empty",
                "criteria[1] (`accessibility`): empty basis",
                "criteria[1] (`accessibility`): check.command: empty",
                "criteria[2] (`falsifiability`): marked twice (first at criteria[0])",
            ]
        );
    }

    #[test]
    fn the_fixtures_score_as_documented() {
        use RubricOutcome::*;
        let run = |_: &Path, cmd: &str| match cmd {
            c if c.contains("could-not-run") => None,
            c if c.contains("cache_hit_rate") => Some(1),
            _ => Some(0),
        };
        for (name, want, outcomes) in [
            ("rubric-proven.json", Verdict::Proven, [Pass, Pass, Pass, Pass, Pass]),
            ("rubric-refuted.json", Verdict::Refuted, [Pass, Fail, Fail, NotExercised, Pass]),
            ("rubric-unproven.json", Verdict::Unproven, [Pass, Unverifiable, Pass, Rejected, NotExercised]),
        ] {
            let input = parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let r = score(&input, Path::new("/repo"), &run);
            assert_eq!(r.verdict, want, "{name}: {r:?}");
            assert_eq!(r.criteria.iter().map(|c| c.outcome).collect::<Vec<_>>(), outcomes, "{name}");
            let json = serde_json::to_value(&r).unwrap();
            assert_eq!(json["criteria"][2]["criterion"], "evidence-grounding");
            assert_eq!(json["criteria"][3]["outcome"], serde_json::to_value(outcomes[3]).unwrap());
        }
    }

    /// Every fixture in `tests/fixtures/evidence-input/` appears verbatim in the doc, and every
    /// JSON block of the doc parses.
    #[test]
    fn the_doc_shows_the_fixtures() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let doc = std::fs::read_to_string(root.join("docs/approaches-rubric-agentic.md")).unwrap();
        let mut names: Vec<_> = std::fs::read_dir(root.join("tests/fixtures/evidence-input"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), 6, "{names:?}");
        for name in &names {
            let text = String::from_utf8(fixture(name)).unwrap();
            assert!(doc.contains(&format!("`{name}`")) && doc.contains(&text), "{name} is not shown in the doc");
        }
        let blocks: Vec<&str> = doc.split("```json\n").skip(1).filter_map(|b| b.split("```").next()).collect();
        assert_eq!(blocks.len(), 5);
        for b in blocks {
            let ok = if b.contains("\"claim\"") {
                parse(b.as_bytes()).is_ok()
            } else {
                crate::evidence::agentic::parse(b.as_bytes()).is_ok()
            };
            assert!(ok, "{b}");
        }
    }
}
