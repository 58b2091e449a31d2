//! Approach (b), numerical checks without an oracle (spec 000 §6, R95), as a pure library: the
//! techniques a numerical claim can be checked by when no known-correct answer exists, and the
//! judgment of the runs the caller made of them ([`judge`]). Each run is a repository command that
//! exits 0 when its check holds; the evidence names every technique that ran. Technique ids:
//! `docs/approaches-property-numeric.md`.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ledger::Verdict;

pub use crate::config::technique::{Technique, parse};

/// One command run for one technique: exit 0 means its check held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NumericRun {
    pub technique: Technique,
    pub command: String,
    /// None when the command did not run to an exit (never started, or killed by a signal).
    pub exit: Option<i32>,
    pub timed_out: bool,
}

/// What the runs of approach (b) showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct NumericResult {
    pub verdict: Verdict,
    /// The techniques that ran (started, whether they finished or not), sorted, each once.
    pub techniques: Vec<Technique>,
    /// One line naming the techniques behind the verdict.
    pub claim: String,
    /// Each run's outcome, and what the evidence is worth.
    pub detail: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RunOutcome {
    Held,
    Failed(i32),
    TimedOut,
    NotRun,
}

fn outcome(r: &NumericRun) -> RunOutcome {
    match (r.timed_out, r.exit) {
        (true, _) => RunOutcome::TimedOut,
        (false, None) => RunOutcome::NotRun,
        (false, Some(0)) => RunOutcome::Held,
        (false, Some(code)) => RunOutcome::Failed(code),
    }
}

fn names(ts: &BTreeSet<Technique>) -> String {
    ts.iter().map(|t| t.id()).collect::<Vec<_>>().join(", ")
}

/// Judges the runs: none is Unknown (nothing was checked); any failed check is Refuted, naming the
/// techniques that failed; otherwise any run that timed out or never ran leaves it Unproven; when
/// every run held it is Proven, and the claim names every technique that ran. A single technique
/// (a differential check alone, say) is enough, and the detail says that only one ran.
pub fn judge(runs: &[NumericRun]) -> NumericResult {
    if runs.is_empty() {
        return NumericResult {
            verdict: Verdict::Unknown,
            techniques: Vec::new(),
            claim: "no numerical check ran".to_string(),
            detail: "nothing was checked: no technique was run".to_string(),
        };
    }
    let of = |keep: fn(RunOutcome) -> bool| -> BTreeSet<Technique> {
        runs.iter().filter(|r| keep(outcome(r))).map(|r| r.technique).collect()
    };
    let ran = of(|o| o != RunOutcome::NotRun);
    let failed = of(|o| matches!(o, RunOutcome::Failed(_)));
    let unfinished = of(|o| matches!(o, RunOutcome::TimedOut | RunOutcome::NotRun));
    let mut lines: Vec<String> = runs
        .iter()
        .map(|r| {
            let what = match outcome(r) {
                RunOutcome::Held => "held (exit 0)".to_string(),
                RunOutcome::Failed(code) => format!("failed (exit {code})"),
                RunOutcome::TimedOut => "timed out".to_string(),
                RunOutcome::NotRun => "did not run to an exit".to_string(),
            };
            format!("{}: `{}` {what}", r.technique, r.command)
        })
        .collect();
    let (verdict, claim) = if !failed.is_empty() {
        (Verdict::Refuted, format!("refuted by {}", names(&failed)))
    } else if !unfinished.is_empty() {
        let held = of(|o| o == RunOutcome::Held);
        let also = if held.is_empty() { String::new() } else { format!("; held under {}", names(&held)) };
        (Verdict::Unproven, format!("not shown: {} did not finish{also}", names(&unfinished)))
    } else {
        (Verdict::Proven, format!("held under {}", names(&ran)))
    };
    if verdict == Verdict::Proven && ran.len() == 1 {
        lines.push(format!(
            "only one technique ran ({}); it shows {}",
            names(&ran),
            ran.first().map_or("", |t| t.describe())
        ));
    }
    NumericResult { verdict, techniques: ran.into_iter().collect(), claim, detail: lines.join("; ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(technique: Technique, exit: Option<i32>, timed_out: bool) -> NumericRun {
        NumericRun { technique, command: format!("./check-{technique}"), exit, timed_out }
    }

    #[test]
    fn ids_round_trip_and_match_serde() {
        for t in Technique::ALL {
            assert_eq!(parse(t.id()), Ok(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.id());
            assert!(!t.describe().is_empty() && !t.describe().contains('\n'));
        }
        assert_eq!(parse("  differential\n"), Ok(Technique::Differential));
    }

    #[test]
    fn near_misses_name_the_nearest_id() {
        for (typo, near) in [
            ("manufactured-solutions", "manufactured-solution"),
            ("parameter_recovery", "parameter-recovery"),
            ("metamorphic-symetry", "metamorphic-symmetry"),
            ("Metamorphic-Scaling", "metamorphic-scaling"),
            ("significant-digit", "significant-digits"),
            ("diferential", "differential"),
        ] {
            assert_eq!(
                parse(typo).map_err(|e| e.to_string()),
                Err(format!("unknown numerical technique `{typo}`; did you mean `{near}`?"))
            );
        }
    }

    #[test]
    fn a_far_miss_lists_every_id() {
        let e = parse("vibes").unwrap_err().to_string();
        assert!(
            e.starts_with("unknown numerical technique `vibes`; the techniques are: manufactured-solution, "),
            "{e}"
        );
        assert!(e.ends_with("significant-digits, differential"), "{e}");
    }

    #[test]
    fn no_runs_is_unknown() {
        let r = judge(&[]);
        assert_eq!((r.verdict, r.techniques.len()), (Verdict::Unknown, 0));
        assert!(r.detail.starts_with("nothing was checked"), "{}", r.detail);
    }

    #[test]
    fn every_run_holding_is_proven_and_names_every_technique() {
        let r = judge(&[
            run(Technique::Differential, Some(0), false),
            run(Technique::ManufacturedSolution, Some(0), false),
            run(Technique::MetamorphicConservation, Some(0), false),
            run(Technique::Differential, Some(0), false),
        ]);
        assert_eq!(r.verdict, Verdict::Proven);
        assert_eq!(
            r.techniques,
            [Technique::ManufacturedSolution, Technique::MetamorphicConservation, Technique::Differential]
        );
        assert_eq!(r.claim, "held under manufactured-solution, metamorphic-conservation, differential");
        assert!(!r.detail.contains("only one technique"), "{}", r.detail);
    }

    #[test]
    fn one_technique_alone_is_proven_and_says_so() {
        let r = judge(&[run(Technique::Differential, Some(0), false)]);
        assert_eq!((r.verdict, r.claim.as_str()), (Verdict::Proven, "held under differential"));
        assert_eq!(
            r.detail,
            "differential: `./check-differential` held (exit 0); only one technique ran (differential); it shows \
             an independent implementation of the same computation agrees within tolerance"
        );
    }

    #[test]
    fn a_failure_is_refuted_and_names_the_failing_techniques() {
        let r = judge(&[
            run(Technique::MetamorphicSymmetry, Some(1), false),
            run(Technique::ParameterRecovery, Some(0), false),
            run(Technique::SignificantDigits, None, true),
            run(Technique::MetamorphicScaling, Some(3), false),
        ]);
        assert_eq!(r.verdict, Verdict::Refuted);
        assert_eq!(r.claim, "refuted by metamorphic-symmetry, metamorphic-scaling");
        assert_eq!(r.techniques.len(), 4);
        assert!(
            r.detail.contains("metamorphic-scaling: `./check-metamorphic-scaling` failed (exit 3)"),
            "{}",
            r.detail
        );
        assert!(r.detail.contains("significant-digits: `./check-significant-digits` timed out"), "{}", r.detail);
    }

    #[test]
    fn a_timeout_without_a_failure_is_unproven() {
        let r =
            judge(&[run(Technique::ManufacturedSolution, Some(0), false), run(Technique::Differential, Some(0), true)]);
        assert_eq!(r.verdict, Verdict::Unproven);
        assert_eq!(r.claim, "not shown: differential did not finish; held under manufactured-solution");
        assert_eq!(r.techniques, [Technique::ManufacturedSolution, Technique::Differential]);
    }

    #[test]
    fn a_run_that_never_started_is_unproven_and_did_not_run() {
        let r = judge(&[run(Technique::ParameterRecovery, None, false)]);
        assert_eq!(r.verdict, Verdict::Unproven);
        assert_eq!(r.claim, "not shown: parameter-recovery did not finish");
        assert!(r.techniques.is_empty());
        assert!(r.detail.ends_with("did not run to an exit"), "{}", r.detail);
    }

    #[test]
    fn results_serialize_in_kebab_case() {
        let r = judge(&[run(Technique::MetamorphicConservation, Some(0), false)]);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["verdict"], "proven");
        assert_eq!(v["techniques"][0], "metamorphic-conservation");
        let back: NumericResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
        let v = serde_json::to_value(run(Technique::Differential, Some(0), true)).unwrap();
        assert_eq!(v["timed-out"], true);
    }
}
