//! The techniques a numerical claim can be checked by when no known-correct answer exists
//! (approach (b), spec 000 §6, R95), as a `[[command]]`'s `technique` names them. The approach
//! itself is the evidence layer's numeric approach.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::text::nearest;

/// A way to check a number without knowing the right answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Technique {
    ManufacturedSolution,
    ParameterRecovery,
    MetamorphicConservation,
    MetamorphicSymmetry,
    MetamorphicScaling,
    SignificantDigits,
    Differential,
}

impl Technique {
    pub const ALL: [Technique; 7] = [
        Technique::ManufacturedSolution,
        Technique::ParameterRecovery,
        Technique::MetamorphicConservation,
        Technique::MetamorphicSymmetry,
        Technique::MetamorphicScaling,
        Technique::SignificantDigits,
        Technique::Differential,
    ];

    /// The stable id, as evidence and settings spell it.
    pub fn id(self) -> &'static str {
        match self {
            Technique::ManufacturedSolution => "manufactured-solution",
            Technique::ParameterRecovery => "parameter-recovery",
            Technique::MetamorphicConservation => "metamorphic-conservation",
            Technique::MetamorphicSymmetry => "metamorphic-symmetry",
            Technique::MetamorphicScaling => "metamorphic-scaling",
            Technique::SignificantDigits => "significant-digits",
            Technique::Differential => "differential",
        }
    }

    /// One line: what a passing check of this kind shows.
    pub fn describe(self) -> &'static str {
        match self {
            Technique::ManufacturedSolution => {
                "a problem built from a chosen exact solution is solved and that solution is recovered within tolerance"
            }
            Technique::ParameterRecovery => {
                "data synthesized from known parameters is fitted and the known parameters are recovered"
            }
            Technique::MetamorphicConservation => {
                "a quantity the model conserves (mass, energy, a total) is unchanged by the computation"
            }
            Technique::MetamorphicSymmetry => {
                "transforming the input by a symmetry (permutation, reflection, rotation) changes the output as the symmetry predicts"
            }
            Technique::MetamorphicScaling => {
                "scaling the input (units, step size, problem size) changes the output by the predicted factor or order"
            }
            Technique::SignificantDigits => {
                "the digits reported are no more than the conditioning and floating-point error support"
            }
            Technique::Differential => "an independent implementation of the same computation agrees within tolerance",
        }
    }
}

impl fmt::Display for Technique {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The technique with id `s` (surrounding whitespace ignored); on a near miss the error names the
/// nearest id, otherwise every id.
pub fn parse(s: &str) -> Result<Technique, UnknownTechnique> {
    let s = s.trim();
    if let Some(t) = Technique::ALL.into_iter().find(|t| t.id() == s) {
        return Ok(t);
    }
    Err(UnknownTechnique { given: s.to_string(), nearest: nearest(s, Technique::ALL.map(Technique::id)) })
}

/// A technique id that names none, with the nearest id if there is a near miss.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown numerical technique `{given}`; {}", match nearest {
    Some(near) => format!("did you mean `{near}`?"),
    None => format!("the techniques are: {}", Technique::ALL.map(Technique::id).join(", ")),
})]
pub struct UnknownTechnique {
    pub given: String,
    pub nearest: Option<&'static str>,
}
