//! The routing decision table (R88–R94, R100; requirements decision 6): what crosses the wire
//! decides how it is proven, never a habit and never the proposer's say-so.
//!
//! Routing works on two axes. The *object* is what an obligation is about — structure, code
//! behaviour, a number, a prose claim, an agent's process, an invariant over an input space — and
//! each object has one approach that answers it, at a cost *rung* of the detection ladder:
//!
//! | object     | approach            | family | rung                      |
//! |------------|---------------------|--------|---------------------------|
//! | structure  | `structural`        | e      | 2 static-structural       |
//! | process    | `agentic`           | d      | 2 static-structural       |
//! | invariant  | `property`          | f      | 3 executed-and-inspected  |
//! | number     | `numeric`           | b      | 3 executed-and-inspected  |
//! | claim      | `rubric`            | c      | 5 judged                  |
//! | behaviour  | `executed`, else `adversarial` | –, a | 3, else 5      |
//!
//! The table, in order:
//! 1. A proof-strength audit (g) is never routed to on its own: it is asked for with the id of a
//!    prior evidence record, and its result is added to that record (R99).
//! 2. Every specific object (all but behaviour) proposes its approach — except structure next to
//!    behaviour: an obligation about behaviour is not a structural claim, whatever scope its words
//!    name. Among numerical approaches the more domain-specific one wins: `numeric` over
//!    `property` (R90).
//! 3. The cheapest rung among the candidates wins (the cost model: deterministic checks are
//!    exhausted before judged ones; a structural claim is never escalated, R19).
//! 4. Two or more candidates left on the same rung is a genuine tie: no verdict, a needs-human
//!    outcome listing them (R91).
//! 5. No specific object: behaviour. The repository's own checks (`executed`, rung 3) when it has
//!    any for the code; only when nothing cheaper fits, the adversarial panel (a, rung 5) (R90).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The verification approaches (the schema's vocabulary). Families a–g are the stable ids of
/// R94; `executed` (the repository's own checks) is the deterministic answer to family (a)'s
/// question, tried first.
pub use crate::facts::vocab::Approach;

impl Approach {
    /// Every approach, in the order `ids` lists them.
    pub const LISTED: [Approach; 8] = [
        Approach::Structural,
        Approach::Executed,
        Approach::Property,
        Approach::Numeric,
        Approach::Rubric,
        Approach::Agentic,
        Approach::ProofStrength,
        Approach::Adversarial,
    ];

    /// The id evidence records and proposals use (the token).
    pub fn id(self) -> &'static str {
        self.as_str()
    }

    /// The approach family letter of R94 (`executed` belongs to none: it is the repository's own
    /// deterministic check, tried before family (a)'s panel).
    pub fn family(self) -> Option<char> {
        Some(match self {
            Approach::Adversarial => 'a',
            Approach::Numeric => 'b',
            Approach::Rubric => 'c',
            Approach::Agentic => 'd',
            Approach::Structural => 'e',
            Approach::Property => 'f',
            Approach::ProofStrength => 'g',
            Approach::Executed => return None,
        })
    }

    pub fn rung(self) -> Rung {
        match self {
            Approach::Structural | Approach::Agentic => Rung::StaticStructural,
            Approach::Executed | Approach::Property | Approach::Numeric | Approach::ProofStrength => Rung::Executed,
            Approach::Rubric | Approach::Adversarial => Rung::Judged,
        }
    }

    /// Parses an id or a family letter, spaces around it ignored (what a person names; `parse`
    /// reads the id alone).
    pub fn from_id_or_family(s: &str) -> Option<Approach> {
        let s = s.trim();
        Approach::LISTED.into_iter().find(|a| a.id() == s || (s.len() == 1 && a.family() == s.chars().next()))
    }

    pub fn ids() -> Vec<&'static str> {
        Approach::LISTED.iter().map(|a| a.id()).collect()
    }
}

/// The detection ladder (R19; requirements decision 4): the cost rung of a proof attempt. Rungs
/// 1–3 are the fast lane, 4–5 the slow lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rung {
    TypeSchema = 1,
    StaticStructural = 2,
    Executed = 3,
    RenderedVisual = 4,
    Judged = 5,
}

impl Rung {
    pub fn number(self) -> u8 {
        self as u8
    }
    pub fn lane(self) -> &'static str {
        if self <= Rung::Executed { "fast" } else { "slow" }
    }
}

/// What an obligation is about (the first routing axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Object {
    Structure,
    Behavior,
    Number,
    Claim,
    Process,
    Invariant,
}

impl Object {
    pub const ALL: [Object; 6] =
        [Object::Structure, Object::Behavior, Object::Number, Object::Claim, Object::Process, Object::Invariant];

    pub fn id(self) -> &'static str {
        match self {
            Object::Structure => "structure",
            Object::Behavior => "behavior",
            Object::Number => "number",
            Object::Claim => "claim",
            Object::Process => "process",
            Object::Invariant => "invariant",
        }
    }

    pub fn parse(s: &str) -> Option<Object> {
        let s = s.trim().to_ascii_lowercase();
        let s = if s == "behaviour" { "behavior".to_string() } else { s };
        Object::ALL.into_iter().find(|o| o.id() == s)
    }

    /// The approach that answers this object (behaviour has two: see [`route`]).
    fn specific(self) -> Option<Approach> {
        match self {
            Object::Structure => Some(Approach::Structural),
            Object::Process => Some(Approach::Agentic),
            Object::Invariant => Some(Approach::Property),
            Object::Number => Some(Approach::Numeric),
            Object::Claim => Some(Approach::Rubric),
            Object::Behavior => None,
        }
    }
}

/// What routing knows about one obligation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subject {
    /// What the obligation is about, with the reason each object was seen.
    pub objects: BTreeSet<(Object, String)>,
    /// The repository has executed checks (configured commands) for the code involved.
    pub has_checks: bool,
}

impl Subject {
    pub fn with(mut self, object: Object, why: impl Into<String>) -> Subject {
        self.objects.insert((object, why.into()));
        self
    }
    pub fn kinds(&self) -> BTreeSet<Object> {
        self.objects.iter().map(|(o, _)| *o).collect()
    }
}

/// The routing decision for one proof attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Route {
    /// The approach to run; `None` when the choice is a genuine tie (needs a person).
    pub approach: Option<Approach>,
    /// Every candidate the table considered, cheapest first.
    pub candidates: Vec<Approach>,
    /// The table rows that decided, in order.
    pub why: Vec<String>,
}

impl Route {
    /// A genuine tie between non-default approaches (R91): no verdict, a person chooses.
    pub fn needs_human(&self) -> bool {
        self.approach.is_none()
    }
}

/// Routes one proof attempt by the decision table of this module. Deterministic: the same subject
/// always gives the same route.
pub fn route(subject: &Subject) -> Route {
    let mut why: Vec<String> = subject.objects.iter().map(|(o, w)| format!("{}: {w}", o.id())).collect();
    let kinds = subject.kinds();
    let mut specific: BTreeSet<Approach> = kinds.iter().copied().filter_map(Object::specific).collect();
    // A behaviour obligation that also names structure ("unit tests of every caller", "behaviour
    // is unchanged across the move") is about behaviour: the structural words name its scope, and
    // a structural check cannot show behaviour unchanged.
    if kinds.contains(&Object::Behavior) && specific.remove(&Approach::Structural) {
        why.push("behaviour and structure both named: a structural check cannot prove behaviour, so the behaviour row decides".into());
    }
    if specific.contains(&Approach::Numeric) && specific.remove(&Approach::Property) {
        why.push("numeric and property both apply: the more domain-specific numeric approach wins".into());
    }
    let mut candidates: Vec<Approach> = specific.iter().copied().collect();
    candidates.sort_by_key(|a| (a.rung(), *a));
    if let Some(cheapest) = candidates.first().map(|a| a.rung()) {
        let tied: Vec<Approach> = candidates.iter().copied().filter(|a| a.rung() == cheapest).collect();
        if tied.len() > 1 {
            let names: Vec<&str> = tied.iter().map(|a| a.id()).collect();
            why.push(format!(
                "{} tie on rung {} ({}): a person chooses which proves this",
                names.join(" and "),
                cheapest.number(),
                rung_name(cheapest)
            ));
            return Route { approach: None, candidates, why };
        }
        let chosen = candidates[0];
        if candidates.len() > 1 {
            why.push(format!(
                "{} is the cheapest rung ({} {}) of {}",
                chosen.id(),
                cheapest.number(),
                rung_name(cheapest),
                candidates.iter().map(|a| a.id()).collect::<Vec<_>>().join(", ")
            ));
        } else {
            why.push(format!("the specific approach {} applies", chosen.id()));
        }
        return Route { approach: Some(chosen), candidates, why };
    }
    if subject.has_checks {
        why.push("no specific approach fits; the repository's own checks exercise the code".into());
        Route { approach: Some(Approach::Executed), candidates: vec![Approach::Executed, Approach::Adversarial], why }
    } else {
        why.push("no specific approach fits and no executed check covers the code: the adversarial default".into());
        Route { approach: Some(Approach::Adversarial), candidates: vec![Approach::Adversarial], why }
    }
}

pub fn rung_name(r: Rung) -> &'static str {
    match r {
        Rung::TypeSchema => "type/schema",
        Rung::StaticStructural => "static-structural",
        Rung::Executed => "executed-and-inspected",
        Rung::RenderedVisual => "rendered/visual",
        Rung::Judged => "judged",
    }
}

/// Keyword rows of a validation strategy or contract text (a Behavior Contract rule's
/// `validation`, a request's contract). Whole words, case-insensitive; the first matching row
/// names the object, every row that matches adds its object.
const WORDS: &[(Object, &[&str])] = &[
    (
        Object::Invariant,
        &[
            "property",
            "properties",
            "invariant",
            "invariants",
            "forall",
            "for all",
            "generated inputs",
            "property-based",
            "proptest",
            "quickcheck",
            "hypothesis",
            "fast-check",
            "fuzz",
            "fuzzing",
        ],
    ),
    (
        Object::Number,
        &[
            "numeric",
            "numerical",
            "tolerance",
            "floating point",
            "floating-point",
            "precision",
            "conservation",
            "manufactured solution",
            "manufactured solutions",
            "metamorphic",
            "significant digits",
            "conditioning",
            "parameter recovery",
        ],
    ),
    (
        Object::Structure,
        &[
            "import",
            "imports",
            "export",
            "exports",
            "reachability",
            "reachable",
            "caller",
            "callers",
            "call graph",
            "dependency graph",
            "structural",
            "connectivity",
            "layering",
            "index query",
            "signature",
            "signatures",
        ],
    ),
    (
        Object::Claim,
        &["claim", "claims", "rationale", "documentation review", "design rationale", "falsifiable", "falsifiability"],
    ),
    (Object::Process, &["retry", "retries", "escalation", "tool scope", "agentic", "agent process"]),
    (
        Object::Behavior,
        &[
            "test",
            "tests",
            "unit test",
            "unit tests",
            "integration test",
            "integration tests",
            "golden",
            "snapshot",
            "snapshots",
            "regression",
            "behavior",
            "behaviour",
            "behavior-preserving",
            "behaviour-preserving",
            "equivalence",
            "equivalent",
        ],
    ),
];

/// The objects a free-text validation strategy or contract names (whole-word matches).
pub fn objects_in(text: &str) -> Vec<(Object, String)> {
    let lower = text.to_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !(c.is_alphanumeric() || c == '-')).filter(|w| !w.is_empty()).collect();
    let joined = format!(" {} ", words.join(" "));
    let mut out = Vec::new();
    for (object, keys) in WORDS {
        if let Some(k) = keys.iter().find(|k| joined.contains(&format!(" {k} "))) {
            out.push((*object, format!("the text says `{k}`")));
        }
    }
    out
}

/// The object of a file by its path: prose documents are claims, agent definitions are processes.
pub fn object_of_path(path: &str) -> Option<(Object, String)> {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    if lower.contains(".claude/agents/") || lower.contains(".github/agents/") || name.ends_with(".agent.md") {
        return Some((Object::Process, format!("`{path}` defines an agent")));
    }
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if matches!(ext, "md" | "markdown" | "rst" | "adoc" | "txt") {
        return Some((Object::Claim, format!("`{path}` is prose")));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(objects: &[Object], has_checks: bool) -> Subject {
        let mut s = Subject { has_checks, ..Subject::default() };
        for o in objects {
            s = s.with(*o, "test");
        }
        s
    }

    #[test]
    fn every_object_alone_routes_to_its_approach() {
        let cases = [
            (Object::Structure, Approach::Structural),
            (Object::Process, Approach::Agentic),
            (Object::Invariant, Approach::Property),
            (Object::Number, Approach::Numeric),
            (Object::Claim, Approach::Rubric),
        ];
        for (o, a) in cases {
            for checks in [false, true] {
                let r = route(&subject(&[o], checks));
                assert_eq!(r.approach, Some(a), "{o:?} checks={checks}");
                // a specific approach beats the behaviour default even next to behaviour, except
                // structure: a behaviour obligation is not a structural claim
                let r = route(&subject(&[o, Object::Behavior], checks));
                if o == Object::Structure {
                    let default = if checks { Approach::Executed } else { Approach::Adversarial };
                    assert_eq!(r.approach, Some(default), "structure+behavior checks={checks}");
                } else {
                    assert_eq!(r.approach, Some(a), "{o:?}+behavior checks={checks}");
                }
            }
        }
    }

    #[test]
    fn behaviour_runs_the_repositorys_checks_before_the_panel() {
        assert_eq!(route(&subject(&[Object::Behavior], true)).approach, Some(Approach::Executed));
        assert_eq!(route(&subject(&[Object::Behavior], false)).approach, Some(Approach::Adversarial));
        assert_eq!(route(&subject(&[], false)).approach, Some(Approach::Adversarial));
    }

    #[test]
    fn the_more_domain_specific_numeric_approach_beats_property() {
        let r = route(&subject(&[Object::Number, Object::Invariant], true));
        assert_eq!(r.approach, Some(Approach::Numeric));
        assert!(r.why.iter().any(|w| w.contains("domain-specific")));
    }

    #[test]
    fn a_structural_claim_is_never_escalated() {
        for other in [Object::Claim, Object::Invariant, Object::Number] {
            let r = route(&subject(&[Object::Structure, other], false));
            assert_eq!(r.approach, Some(Approach::Structural), "{other:?}");
        }
    }

    #[test]
    fn a_genuine_tie_needs_a_person_and_lists_both() {
        let r = route(&subject(&[Object::Structure, Object::Process], true));
        assert!(r.needs_human());
        assert_eq!(r.candidates, vec![Approach::Structural, Approach::Agentic]);
        assert!(r.why.last().unwrap().contains("structural and agentic tie"));
    }

    #[test]
    fn routing_is_total_and_deterministic_over_every_subject() {
        // every combination of objects, with and without checks: exactly one of chosen / tie, and
        // the adversarial default only when no specific object is present
        for mask in 0u32..(1 << Object::ALL.len()) {
            let objects: Vec<Object> =
                Object::ALL.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, o)| *o).collect();
            for checks in [false, true] {
                let s = subject(&objects, checks);
                let r = route(&s);
                assert_eq!(r, route(&s));
                let behavior = objects.contains(&Object::Behavior);
                let specific = objects.iter().any(|o| o.specific().is_some() && !(behavior && *o == Object::Structure));
                if r.approach == Some(Approach::Adversarial) {
                    assert!(!specific && !checks, "{objects:?}");
                }
                if let Some(a) = r.approach {
                    assert!(r.candidates.contains(&a));
                    assert!(r.candidates.iter().all(|c| c.rung() >= a.rung()));
                } else {
                    assert!(r.candidates.len() >= 2);
                }
                assert_ne!(r.approach, Some(Approach::ProofStrength), "g is never routed to on its own");
            }
        }
    }

    #[test]
    fn ids_letters_and_rungs_are_stable() {
        let letters: String =
            Approach::ALL.iter().filter_map(|a| a.family()).collect::<BTreeSet<char>>().into_iter().collect();
        assert_eq!(letters, "abcdefg");
        assert_eq!(Approach::LISTED.iter().collect::<BTreeSet<_>>().len(), Approach::ALL.len());
        for &a in Approach::ALL {
            assert_eq!(Approach::from_id_or_family(a.id()), Some(a));
            assert_eq!(Approach::from_id_or_family(&format!(" {} ", a.id())), Some(a));
            assert_eq!(Approach::parse(a.id()), Some(a));
            if let Some(l) = a.family() {
                assert_eq!(Approach::from_id_or_family(&l.to_string()), Some(a));
                assert_eq!(Approach::parse(&l.to_string()), None);
            }
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(json, format!("\"{}\"", a.id()));
        }
        assert_eq!(Rung::Executed.lane(), "fast");
        assert_eq!(Rung::Judged.lane(), "slow");
        assert_eq!(Approach::from_id_or_family("nonsense"), None);
    }

    #[test]
    fn validation_strategies_name_their_objects() {
        let kinds = |t: &str| objects_in(t).into_iter().map(|(o, _)| o).collect::<Vec<_>>();
        assert_eq!(kinds("Property-based test over generated inputs"), vec![Object::Invariant, Object::Behavior]);
        assert_eq!(kinds("golden-file snapshot comparison"), vec![Object::Behavior]);
        assert_eq!(kinds("metamorphic scaling within tolerance"), vec![Object::Number]);
        assert_eq!(kinds("index query: every caller still imports it"), vec![Object::Structure]);
        assert_eq!(kinds("Manual review"), Vec::<Object>::new());
        // whole words only: "contest" is not "test", "important" is not "import"
        assert_eq!(kinds("an important contest"), Vec::<Object>::new());
    }

    #[test]
    fn paths_name_prose_and_agents() {
        assert_eq!(object_of_path("docs/design.md").map(|o| o.0), Some(Object::Claim));
        assert_eq!(object_of_path(".claude/agents/fixer.md").map(|o| o.0), Some(Object::Process));
        assert_eq!(object_of_path("src/lib.rs"), None);
    }
}
