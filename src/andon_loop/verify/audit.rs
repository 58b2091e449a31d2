//! Approach (g), the proof-strength audit (R99, R118–R121): did an existing proof prove anything?
//! It never runs on its own: it takes the id of a recorded evidence record, mutates the code that
//! proof is about with the language's mutation-testing tool (by exact name, from
//! [`crate::capabilities`]) and counts the mutants the checks did not catch. The result is added
//! to the evidence record (`EvidenceAudited`), never substituted for it. An absent tool is
//! reported `unavailable` with what to install; the run goes on.

use std::ffi::OsStr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::super::error::Error;
use super::commands::{self, CommandSpec, Lane};
use crate::config::Config;
use crate::extract::lang::{Language, strip_source_extension};
use crate::ledger;

/// What one audit found, written for the loop to record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditOutcome {
    pub evidence: String,
    pub tool: String,
    /// `strong`, `weak`, `inconclusive` or `unavailable`.
    pub strength: String,
    pub detail: String,
    pub command: Option<String>,
    pub artifact: Option<String>,
}

/// The audit artifact of evidence `id`.
pub fn artifact_path(out_dir: &Path, id: &str) -> std::path::PathBuf {
    out_dir.join("audits").join(format!("{id}.json"))
}

/// The language of the file an audit mutates, as the index names it: by any extension the
/// language table knows.
fn language_of(path: &str) -> Option<&'static str> {
    Language::by_path(path).map(|l| l.name)
}

/// The tool's command line for mutating `path` only.
fn command_for(tool: &str, path: &str) -> String {
    let quoted = format!("'{}'", path.replace('\'', "'\\''"));
    match tool {
        "cargo-mutants" => format!("cargo-mutants mutants --file {quoted} --no-shuffle --colors never"),
        // mutmut 3 takes mutant names, not paths: `<module>.x…` are the functions of one module
        // (`src/` is not part of the module name); `results --all true` lists every mutant's status.
        "mutmut" => {
            let module = mutmut_module(path);
            let glob = format!("'{}.x*'", module.replace('\'', "'\\''"));
            format!("mutmut run {glob}; mutmut results --all true")
        }
        _ => format!("{tool} run --mutate {quoted}"),
    }
}

/// The module mutmut 3 names the mutants of a Python file by: the path without its extension, the
/// `src/` layout prefix and `__init__`, dotted.
fn mutmut_module(path: &str) -> String {
    let stem = strip_source_extension(path);
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    stem.replace('/', ".")
}

/// The mutants a `name: status` listing (mutmut 3's `results`) gives `status`, if it lists any.
fn listed(output: &str, status: &str) -> Option<u64> {
    let n = output
        .lines()
        .filter(|l| l.trim().rsplit_once(": ").is_some_and(|(name, s)| !name.contains(' ') && s == status))
        .count() as u64;
    (n > 0).then_some(n)
}

/// Stryker's clear-text table: the `All files` row's count under `column` (`# survived`, …).
fn table_count(output: &str, column: &str) -> Option<u64> {
    let cells = |l: &str| l.split('|').map(str::trim).map(str::to_lowercase).collect::<Vec<_>>();
    let header = output.lines().map(cells).find(|c| c.iter().any(|h| h == "# killed"))?;
    let at = header.iter().position(|h| h == column)?;
    let row = output.lines().map(cells).find(|c| c.first().is_some_and(|f| f == "all files"))?;
    row.get(at)?.parse().ok()
}

/// The number written just before `word` ("3 missed", "12 survived"), summed over the output.
pub(crate) fn count_before(output: &str, word: &str) -> Option<u64> {
    let lower = output.to_lowercase();
    let mut total = None;
    let mut rest = lower.as_str();
    while let Some(i) = rest.find(word) {
        let before = rest[..i].trim_end();
        let digits: String = before.chars().rev().take_while(char::is_ascii_digit).collect();
        if !digits.is_empty() {
            let n: u64 = digits.chars().rev().collect::<String>().parse().unwrap_or(0);
            total = Some(total.unwrap_or(0) + n);
        }
        rest = &rest[i + word.len()..];
    }
    total
}

/// Judges a mutation run by its output: mutants that survived (`missed` in cargo-mutants,
/// `survived` in mutmut and Stryker) make the audited proof weak; none surviving of some tested,
/// strong; anything else inconclusive.
pub fn strength(exit: Option<i32>, timed_out: bool, output: &str) -> (&'static str, String) {
    if timed_out {
        return ("inconclusive", "the mutation run timed out".into());
    }
    let survived = count_before(output, "missed")
        .or_else(|| count_before(output, "survived"))
        .or_else(|| listed(output, "survived"))
        .or_else(|| Some(table_count(output, "# survived")? + table_count(output, "# no cov").unwrap_or(0)));
    let caught = count_before(output, "caught")
        .or_else(|| count_before(output, "killed"))
        .or_else(|| listed(output, "killed"))
        .or_else(|| table_count(output, "# killed"));
    match (survived, caught) {
        (Some(s), _) if s > 0 => ("weak", format!("{s} mutant(s) survived: the checks did not notice those changes")),
        (Some(0), Some(c)) if c > 0 => ("strong", format!("every mutant tested was caught ({c})")),
        (None, Some(c)) if c > 0 && exit == Some(0) => ("strong", format!("every mutant tested was caught ({c})")),
        _ => (
            "inconclusive",
            format!(
                "no mutant counts in the tool's output (exit {})",
                exit.map(|c| c.to_string()).unwrap_or_else(|| "none".into())
            ),
        ),
    }
}

/// `andon verify --audit EVIDENCE`: the proof-strength audit of a recorded evidence record, or
/// why it was refused.
pub fn audited(root: &Path, cfg: &Config, id: &str, path_var: Option<&OsStr>) -> Result<AuditOutcome, Error> {
    let dir = ledger::dir_of(root, &cfg.settings);
    let (_, state, _) = ledger::load(&dir).map_err(Error::Ledger)?.ok_or(Error::NoLedgerToAudit)?;
    let ev = state.evidence.get(id).ok_or_else(|| Error::NoEvidence { id: id.into() })?;
    if ev.approach == "proof-strength" {
        return Err(Error::AuditOfAudit { id: id.into() });
    }
    let path = ev
        .gap
        .as_ref()
        .and_then(|g| state.gaps.get(g))
        .map(|g| g.location.path.clone())
        .ok_or_else(|| Error::NothingToMutate { id: id.into() })?;
    let lang = language_of(&path).ok_or_else(|| Error::NoMutationTool { path: path.clone() })?;
    let out_dir = cfg.settings.output_path(root);
    let outcome = match crate::capabilities::available("proof-strength", lang, path_var) {
        Err(why) => AuditOutcome {
            evidence: id.into(),
            tool: crate::capabilities::REGISTRY
                .iter()
                .filter(|t| t.approach == "proof-strength" && t.serves(lang))
                .map(|t| t.name)
                .collect::<Vec<_>>()
                .join(" or "),
            strength: "unavailable".into(),
            detail: why.to_string(),
            command: None,
            artifact: None,
        },
        Ok(tool) => {
            let spec = CommandSpec {
                name: format!("audit-{id}"),
                run: command_for(tool.name, &path),
                stages: Vec::new(),
                lane: Lane::Slow,
                timeout_secs: 3600,
                technique: None,
                line: 0,
            };
            let now =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
            let r = commands::run(root, &cfg.settings.output_dir.value, &spec, &format!("{id}-{now:x}"));
            let output = std::fs::read_to_string(root.join(&r.artifact)).unwrap_or_else(|_| r.tail.clone());
            let (strength, detail) = strength(r.exit, r.timed_out, &output);
            AuditOutcome {
                evidence: id.into(),
                tool: tool.name.into(),
                strength: strength.into(),
                detail: format!("{detail} (mutating `{path}`)"),
                command: Some(spec.run),
                artifact: Some(r.artifact),
            }
        }
    };
    let file = artifact_path(&out_dir, id);
    std::fs::create_dir_all(file.parent().expect("parent")).map_err(Error::io(&out_dir))?;
    crate::text::write_atomic(&file, &serde_json::to_vec_pretty(&outcome).expect("json")).map_err(Error::io(&file))?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutation_outputs_rate_the_audited_proof() {
        let cm = "Found 12 mutants to test\n12 mutants tested in 1m 3s: 2 missed, 9 caught, 1 unviable\n";
        assert_eq!(strength(Some(2), false, cm).0, "weak");
        let cm = "5 mutants tested in 20s: 5 caught\n";
        assert_eq!(strength(Some(0), false, cm).0, "strong");
        assert_eq!(strength(Some(0), false, "0 missed, 4 caught").0, "strong");
        assert_eq!(strength(None, true, "").0, "inconclusive");
        assert_eq!(strength(Some(1), false, "error: could not compile").0, "inconclusive");
        // Stryker and mutmut speak of survivors
        assert_eq!(strength(Some(0), false, "Killed: 7\n3 survived\n").0, "weak");
        // mutmut 3.8.1's `results --all true` on a module whose clamp() is under-tested (real output)
        let mm = "    calc.ops.x_add__mutmut_1: killed\n    calc.ops.x_clamp__mutmut_1: survived\n    calc.ops.x_clamp__mutmut_2: survived\n";
        assert_eq!(
            strength(Some(0), false, mm),
            ("weak", "2 mutant(s) survived: the checks did not notice those changes".into())
        );
        assert_eq!(strength(Some(0), false, "    calc.ops.x_add__mutmut_1: killed\n").0, "strong");
        // Stryker 9's clear-text table (real output; uncovered mutants survive too)
        let st = "[Survived] ConditionalExpression\nsrc/ops.js:1:33\n\
----------|------------------|----------|-----------|------------|----------|----------|\n\
          | % Mutation score |          |           |            |          |          |\n\
File      |  total | covered | # killed | # timeout | # survived | # no cov | # errors |\n\
----------|--------|---------|----------|-----------|------------|----------|----------|\n\
All files |  66.67 |   66.67 |        8 |         0 |          3 |        1 |        0 |\n\
 ops.js   |  66.67 |   66.67 |        8 |         0 |          3 |        1 |        0 |\n";
        assert_eq!(strength(Some(0), false, st).1, "4 mutant(s) survived: the checks did not notice those changes");
        let st = st.replace("|          3 |        1 |", "|          0 |        0 |");
        assert_eq!(strength(Some(0), false, &st), ("strong", "every mutant tested was caught (8)".into()));
    }

    #[test]
    fn only_a_number_right_before_the_word_counts() {
        assert_eq!(count_before("2 missed, 3 missed", "missed"), Some(5));
        assert_eq!(count_before("nothing missed", "missed"), None);
        assert_eq!(count_before("x12 missed", "missed"), Some(12));
    }

    #[test]
    fn each_tool_mutates_only_the_file() {
        assert_eq!(
            command_for("cargo-mutants", "src/a b.rs"),
            "cargo-mutants mutants --file 'src/a b.rs' --no-shuffle --colors never"
        );
        assert!(command_for("stryker", "src/x.ts").starts_with("stryker run --mutate 'src/x.ts'"));
        assert_eq!(command_for("mutmut", "src/calc/ops.py"), "mutmut run 'calc.ops.x*'; mutmut results --all true");
        assert_eq!(mutmut_module("pkg/__init__.py"), "pkg");
        assert_eq!(mutmut_module("lib/a.py"), "lib.a");
        assert_eq!(mutmut_module("src/calc/stubs.pyi"), "calc.stubs");
    }

    #[test]
    fn every_extension_of_the_language_table_is_audited() {
        for (path, lang) in [
            ("a/b.py", "python"),
            ("a/b.pyi", "python"),
            ("src/lib.rs", "rust"),
            ("src/a.ts", "typescript"),
            ("src/a.tsx", "typescript"),
            ("src/a.mts", "typescript"),
            ("src/a.cts", "typescript"),
            ("src/a.js", "javascript"),
            ("src/a.jsx", "javascript"),
            ("src/a.mjs", "javascript"),
            ("src/a.cjs", "javascript"),
        ] {
            assert_eq!(language_of(path), Some(lang), "{path}");
        }
        for l in &crate::extract::LANGUAGES {
            for (ext, _) in l.extensions {
                assert_eq!(language_of(&format!("src/x.{ext}")), Some(l.name), ".{ext}");
                // and a mutation tool serves it
                assert!(crate::capabilities::REGISTRY.iter().any(|t| t.serves(l.name)), ".{ext}");
            }
        }
        assert_eq!(language_of("README.md"), None);
        assert_eq!(language_of("Makefile"), None);
    }
}
