//! Approach (f), property and invariant checks (spec 000 §6, R98), as a pure library: which
//! property-testing tools a repository declares ([`detect`]) and what one run of such a tool showed
//! ([`judge`], [`counterexample`]). The caller runs the command and hands in its exit code, whether
//! it timed out, and its captured output; nothing here spawns a process.
//!
//! Only a tool the repository declares as a dependency makes a run count as (f) evidence: a
//! hand-rolled loop over random inputs neither shrinks nor reports a minimal counterexample, so it
//! is not a property test. On failure the *minimized* counterexample is taken from the output as the
//! tool prints it. Manifests read and line shapes recognized: `docs/approaches-property-numeric.md`;
//! real outputs of each tool: `tests/fixtures/evidence-output/`.

mod detect;
mod python;
mod run;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::extract::LANGUAGES;
use crate::ledger::Verdict;

pub use detect::detect;
pub use run::{counterexample, judge};

/// The longest counterexample kept, in characters; a longer one is cut and ends in [`TRUNCATED`].
pub const MAX_COUNTEREXAMPLE_CHARS: usize = 2000;
/// What ends a counterexample cut at [`MAX_COUNTEREXAMPLE_CHARS`].
pub const TRUNCATED: &str = "\n… (truncated)";
/// How deep [`detect`] looks for manifests: the root's own files are at depth 1.
pub const MAX_DEPTH: usize = 6;
/// Manifests larger than this are not read.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;
/// The most lines a multi-line counterexample block may span before it is taken as unterminated.
const MAX_BLOCK_LINES: usize = 400;

/// A property-testing tool with automatic shrinking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PropertyTool {
    Proptest,
    Quickcheck,
    Hypothesis,
    FastCheck,
}

impl PropertyTool {
    pub const ALL: [PropertyTool; 4] =
        [PropertyTool::Proptest, PropertyTool::Quickcheck, PropertyTool::Hypothesis, PropertyTool::FastCheck];

    /// The tool's name, as its package is named.
    pub fn name(self) -> &'static str {
        match self {
            PropertyTool::Proptest => "proptest",
            PropertyTool::Quickcheck => "quickcheck",
            PropertyTool::Hypothesis => "hypothesis",
            PropertyTool::FastCheck => "fast-check",
        }
    }

    /// The language of the tests that use the tool, as the index names it; fast-check serves
    /// TypeScript and JavaScript alike (see [`PropertyTool::languages`]).
    pub fn language(self) -> &'static str {
        self.languages()[0]
    }

    /// Every language the tool serves, the primary one first: those whose row of the language
    /// table lists it among their property-testing tools, in table order.
    pub fn languages(self) -> Vec<&'static str> {
        LANGUAGES.iter().filter(|l| l.property_tools.contains(&self.name())).map(|l| l.name).collect()
    }

    /// The dependency names that declare the tool (Python names in PEP 503 normal form). Companion
    /// crates such as `proptest-derive` or `quickcheck_macros` are not listed: they cannot run a
    /// property without the tool itself, which is then declared beside them.
    pub fn packages(self) -> &'static [&'static str] {
        match self {
            PropertyTool::Proptest => &["proptest"],
            PropertyTool::Quickcheck => &["quickcheck"],
            PropertyTool::Hypothesis => &["hypothesis"],
            PropertyTool::FastCheck => &["fast-check", "@fast-check/jest", "@fast-check/vitest", "@fast-check/ava"],
        }
    }
}

/// A property-testing tool a manifest declares as a dependency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct Detected {
    pub tool: PropertyTool,
    /// The dependency as declared: one of [`PropertyTool::packages`] (for a renamed Cargo
    /// dependency, its `package`).
    pub package: String,
    /// The manifest, relative to the root, with `/` separators.
    pub manifest: String,
    /// 1-based line of the declaration.
    pub line: usize,
}

/// What one run of a property-testing tool showed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PropertyResult {
    /// Proven (exit 0), Refuted (non-zero exit), or Unproven (timed out, no exit, or no test ran).
    pub verdict: Verdict,
    /// The minimized counterexample as the tool printed it (bounded), when the run was refuted and
    /// the output carried one.
    pub counterexample: Option<String>,
    /// One line saying what the run showed.
    pub summary: String,
}
