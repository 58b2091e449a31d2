//! `andon preflight` (R20–R26): is the repository legible enough for the loop? Every check runs and
//! is reported; each capability gets exactly one readiness level, and every level short of ready
//! says the fix. Read-only: the ledger is never initialized; the only things created are the
//! reports under `output_dir` (and that directory, which doubles as the writability probe).

use std::path::{Path, PathBuf};

use crate::config::{Config, GapSource, Settings};
use crate::ops::{StageRow, StreamReport};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Readiness {
    Ready,
    ReadyWithGaps,
    NotReady,
}

impl Readiness {
    pub fn name(self) -> &'static str {
        match self {
            Readiness::Ready => "ready",
            Readiness::ReadyWithGaps => "ready-with-gaps",
            Readiness::NotReady => "not-ready",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreflightItem {
    pub capability: &'static str,
    pub level: Readiness,
    /// What was found.
    pub found: String,
    /// What to do (None when ready).
    pub fix: Option<String>,
}

/// External tools the proof-strength audits can use, by exact name (R118–R121).
pub use crate::capabilities::on_path;

/// Why a directory is not writable, or could not be created.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{source}")]
    Create {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{source}")]
    Probe {
        probe: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{source}")]
    Metadata {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a directory", .path.display())]
    NotADirectory { path: PathBuf },
    #[error("{} is read-only", .path.display())]
    ReadOnly { path: PathBuf },
    #[error("no existing parent directory")]
    NoExistingParent,
}

fn writable(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Create { dir: dir.to_path_buf(), source })?;
    let probe = dir.join(format!(".andon-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| Error::Probe { probe: probe.clone(), source })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() { p.to_path_buf() } else { root.join(p) }
}

/// Runs every check. `stream` is the detected stream and `languages` the languages of the
/// indexed files (None when the index could not be built: every tool is named then); `path_var`
/// is the PATH to look for external tools on.
pub fn run(
    root: &Path,
    cfg: &Config,
    stream: Option<&StreamReport>,
    languages: Option<&[String]>,
    path_var: Option<&std::ffi::OsStr>,
) -> Vec<PreflightItem> {
    let s = &cfg.settings;
    let mut items = vec![stream_item(root, stream)];
    // Persistence: the ledger and the reports.
    items.push(ledger_item(root, s));
    items.push(reports_item(root, s));
    // Propose: the repository's conventions.
    items.push(house_rules_item(root, s));
    // Verify: the diff needs git; structural proofs need the index.
    items.push(applied_diff_item(root, path_var));
    items.push(structural_item(stream));
    items.push(property_item(root, languages));
    items.extend(audit_items(languages, path_var));
    // Ingest mode reads the brief, only when selected (R11).
    if s.gap_source.value == GapSource::Ingest {
        items.push(brief_item(root, s));
    }
    items
}

/// The stream: whether it was detected, and whether each stage is a package its manifest declares.
fn stream_item(root: &Path, stream: Option<&StreamReport>) -> PreflightItem {
    match stream {
        None => PreflightItem {
            capability: "stream detection",
            level: Readiness::NotReady,
            found: "the repository could not be indexed".into(),
            fix: Some("run `andon index` and fix what it reports".into()),
        },
        Some(st) if st.stages.is_empty() => PreflightItem {
            capability: "stream detection",
            level: Readiness::NotReady,
            found: "no stage: no Rust, Python or TypeScript/JavaScript source was found".into(),
            fix: Some("run andon at the repository root, or check `index.exclude`".into()),
        },
        Some(st) => {
            let undeclared = undeclared_stages(root, &st.stages);
            let counts = format!("{} stage(s), {} wire(s)", st.stages.len(), st.wires.len());
            if undeclared.is_empty() {
                let found = format!("{counts}; every stage is a package its manifest declares");
                PreflightItem { capability: "stream detection", level: Readiness::Ready, found, fix: None }
            } else {
                let found = format!(
                    "{counts}; {} of the stages no manifest declares (inferred from the directory layout)",
                    undeclared.len()
                );
                PreflightItem {
                    capability: "stream detection",
                    level: Readiness::ReadyWithGaps,
                    found,
                    fix: Some(declare_advice(&undeclared)),
                }
            }
        }
    }
}

/// How many undeclared stages the advice names before it counts the rest.
const NAMED_STAGES: usize = 8;

/// The stages no manifest declares: a Python package its `pyproject.toml` does not list, or a
/// directory of loose files. A Cargo crate or an npm package is its manifest.
fn undeclared_stages<'s>(root: &Path, stages: &'s [StageRow]) -> Vec<&'s StageRow> {
    stages
        .iter()
        .filter(|st| match st.ecosystem.as_str() {
            "python" => !pyproject_declares(root, st),
            "directory" => true,
            _ => false,
        })
        .collect()
}

/// What to declare, and where, for the `undeclared` stages (the first [`NAMED_STAGES`] named).
fn declare_advice(undeclared: &[&StageRow]) -> String {
    let mut names: Vec<String> = undeclared.iter().take(NAMED_STAGES).map(|s| format!("`{}`", s.name)).collect();
    if undeclared.len() > NAMED_STAGES {
        names.push(format!("and {} more", undeclared.len() - NAMED_STAGES));
    }
    let mut wheres = Vec::new();
    if undeclared.iter().any(|s| s.ecosystem == "python") {
        wheres.push(
            "a Python package in its pyproject.toml, with `[tool.setuptools.packages.find]` or `packages = [...]`",
        );
    }
    if undeclared.iter().any(|s| s.ecosystem == "directory") {
        wheres.push("loose files by making them a package a manifest declares");
    }
    format!(
        "declare {}: {}; each stage is then a package you named, not a directory andon inferred",
        names.join(", "),
        wheres.join("; ")
    )
}

/// The nearest `pyproject.toml` at or above Python stage `st`'s root declares its package.
fn pyproject_declares(root: &Path, st: &StageRow) -> bool {
    let package = st.root.rsplit('/').next().filter(|p| !p.is_empty()).unwrap_or(&st.name);
    let mut dir = st.root.trim_end_matches('/').to_string();
    loop {
        let parent = dir.rsplit_once('/').map_or("", |(p, _)| p).to_string();
        let at = if dir.is_empty() { root.to_path_buf() } else { root.join(&dir) };
        if let Ok(text) = std::fs::read_to_string(at.join("pyproject.toml")) {
            let below = st.root.strip_prefix(dir.as_str()).unwrap_or(&st.root).trim_start_matches('/');
            return declared_in(&text, package, below);
        }
        if dir.is_empty() {
            return false;
        }
        dir = parent;
    }
}

/// `pyproject` declares the top-level package `name`, at `rel` below its directory: in
/// `[tool.setuptools] packages`, `[tool.setuptools.packages.find]` (`where`, `include`, `exclude`),
/// poetry's `packages` (`include`, `from`) or hatch's wheel `packages`.
fn declared_in(pyproject: &str, name: &str, rel: &str) -> bool {
    let Ok(doc) = pyproject.parse::<toml::Table>() else { return false };
    let at = |path: &[&str]| path.iter().try_fold(&doc, |t, k| t.get(*k)?.as_table());
    let strings = |v: Option<&toml::Value>| -> Option<Vec<String>> {
        Some(v?.as_array()?.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
    };
    let glob = |pattern: &str| globset::Glob::new(pattern).map(|g| g.compile_matcher()).ok();
    let matches = |patterns: &[String]| patterns.iter().any(|p| glob(p).is_some_and(|g| g.is_match(name)));
    let joined = |base: &str| {
        let base = base.trim_start_matches("./").trim_matches('/');
        if base.is_empty() || base == "." { name.to_string() } else { format!("{base}/{name}") }
    };
    let setuptools = at(&["tool", "setuptools"]);
    if let Some(list) = strings(setuptools.and_then(|t| t.get("packages")))
        && list.iter().any(|p| p.split('.').next() == Some(name))
    {
        return true;
    }
    if let Some(find) = at(&["tool", "setuptools", "packages", "find"]) {
        let wheres = strings(find.get("where")).unwrap_or_else(|| vec![".".into()]);
        let include = strings(find.get("include")).unwrap_or_else(|| vec!["*".into()]);
        let exclude = strings(find.get("exclude")).unwrap_or_default();
        if wheres.iter().any(|w| joined(w) == rel) && matches(&include) && !matches(&exclude) {
            return true;
        }
    }
    let poetry = at(&["tool", "poetry"]).and_then(|p| p.get("packages")).and_then(|p| p.as_array());
    let in_poetry = poetry.into_iter().flatten().any(|p| {
        let from = p.get("from").and_then(|f| f.as_str()).unwrap_or(".");
        p.get("include").and_then(|i| i.as_str()).is_some_and(|i| glob(i).is_some_and(|g| g.is_match(name)))
            && joined(from) == rel
    });
    let hatch = strings(at(&["tool", "hatch", "build", "targets", "wheel"]).and_then(|t| t.get("packages")));
    in_poetry || hatch.unwrap_or_default().iter().any(|p| p.trim_start_matches("./").trim_matches('/') == rel)
}

/// Whether the ledger directory is writable, or can be created (without creating it).
fn ledger_item(root: &Path, s: &Settings) -> PreflightItem {
    let ledger = resolve(root, &s.ledger_dir.value);
    let parent = ledger.parent().map(Path::to_path_buf).unwrap_or_else(|| ledger.clone());
    let exists = ledger.exists();
    let ledger_ok = if exists { writable(&ledger) } else { check_creatable(&parent) };
    match ledger_ok {
        Ok(()) => PreflightItem {
            capability: "ledger persistence",
            level: Readiness::Ready,
            found: format!("{} {}", ledger.display(), if exists { "exists and is writable" } else { "can be created" }),
            fix: None,
        },
        Err(e) => PreflightItem {
            capability: "ledger persistence",
            level: Readiness::NotReady,
            found: format!("{}: {e}", ledger.display()),
            fix: Some("set `ledger_dir` to a writable directory".into()),
        },
    }
}

/// Whether the reports directory is writable (it is created by the probe).
fn reports_item(root: &Path, s: &Settings) -> PreflightItem {
    let out = resolve(root, &s.output_dir.value);
    match writable(&out) {
        Ok(()) => PreflightItem {
            capability: "reports",
            level: Readiness::Ready,
            found: format!("{} is writable", out.display()),
            fix: None,
        },
        Err(e) => PreflightItem {
            capability: "reports",
            level: Readiness::NotReady,
            found: format!("{}: {e}", out.display()),
            fix: Some("set `output_dir` to a writable directory".into()),
        },
    }
}

/// Whether the repository's house rules are written down for proposals.
fn house_rules_item(root: &Path, s: &Settings) -> PreflightItem {
    let rules = resolve(root, &s.house_rules_path.value);
    if rules.is_file() {
        PreflightItem {
            capability: "propose: house rules",
            level: Readiness::Ready,
            found: format!("{} found", rules.display()),
            fix: None,
        }
    } else {
        PreflightItem {
            capability: "propose: house rules",
            level: Readiness::ReadyWithGaps,
            found: format!(
                "no {}: proposals use codebase-only defaults, labeled as such",
                s.house_rules_path.value.display()
            ),
            fix: Some(format!(
                "write the repository's conventions to {}, or set `house_rules_path`",
                s.house_rules_path.value.display()
            )),
        }
    }
}

/// Whether git is on PATH and the repository is a work tree with a HEAD commit to diff against.
fn applied_diff_item(root: &Path, path_var: Option<&std::ffi::OsStr>) -> PreflightItem {
    let git = on_path("git", path_var);
    let work_tree = git
        && std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["rev-parse", "--verify", "--quiet", "HEAD"])
            .output()
            .is_ok_and(|o| o.status.success());
    if work_tree {
        PreflightItem {
            capability: "verify: applied diff",
            level: Readiness::Ready,
            found: "git work tree with a HEAD commit".into(),
            fix: None,
        }
    } else {
        PreflightItem {
            capability: "verify: applied diff",
            level: Readiness::ReadyWithGaps,
            found: if git { "not a git work tree with a commit".into() } else { "git is not on PATH".into() },
            fix: Some(
                "commit the repository in git: verify proves the working tree against the proposal's base commit"
                    .into(),
            ),
        }
    }
}

/// Whether the index is there to answer structural proofs.
fn structural_item(stream: Option<&StreamReport>) -> PreflightItem {
    PreflightItem {
        capability: "verify: structural",
        level: if stream.is_some() { Readiness::Ready } else { Readiness::NotReady },
        found: if stream.is_some() { "the index answers structural proofs".into() } else { "no index".into() },
        fix: stream.is_none().then(|| "run `andon index`".into()),
    }
}

/// Whether the repository has code in a language `serves` lists (every language when the
/// languages are not known).
fn has_any(languages: Option<&[String]>, serves: &[&str]) -> bool {
    languages.is_none_or(|have| have.iter().any(|l| serves.contains(&l.as_str())))
}

/// Property checks (approach f) run only through a tool the repository itself declares (R98);
/// the tools named are those of the repository's languages.
fn property_item(root: &Path, languages: Option<&[String]>) -> PreflightItem {
    let declared = crate::evidence::property::detect(root);
    if declared.is_empty() {
        let tools: Vec<&str> = crate::evidence::property::PropertyTool::ALL
            .iter()
            .filter(|t| has_any(languages, &t.languages()))
            .map(|t| t.name())
            .collect();
        let tools = if tools.is_empty() { String::new() } else { format!(" ({})", tools.join(", ")) };
        PreflightItem {
            capability: "verify: property",
            level: Readiness::ReadyWithGaps,
            found: format!("no property-testing tool is declared{tools}"),
            fix: Some("declare one as a (dev-)dependency to prove invariants over generated inputs; until then those obligations stay unknown".into()),
        }
    } else {
        PreflightItem {
            capability: "verify: property",
            level: Readiness::Ready,
            found: declared
                .iter()
                .map(|d| format!("{} ({}:{})", d.tool.name(), d.manifest, d.line))
                .collect::<Vec<_>>()
                .join(", "),
            fix: None,
        }
    }
}

/// Optional external capabilities (R118-R121), one item per tool of the repository's languages:
/// absent means unavailable, never a failure.
fn audit_items(languages: Option<&[String]>, path_var: Option<&std::ffi::OsStr>) -> Vec<PreflightItem> {
    let mut items = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let ours = |t: &crate::capabilities::Tool| has_any(languages, &t.languages().collect::<Vec<_>>());
    for t in crate::capabilities::REGISTRY.iter().filter(|t| ours(t) && seen.insert(t.name)) {
        let (tool, lang) = (t.name, t.language());
        items.push(if on_path(tool, path_var) {
            PreflightItem {
                capability: "proof-strength audit",
                level: Readiness::Ready,
                found: format!("`{tool}` ({lang}) on PATH"),
                fix: None,
            }
        } else {
            PreflightItem {
                capability: "proof-strength audit",
                level: Readiness::ReadyWithGaps,
                found: format!("`{tool}` ({lang}) is not on PATH: that audit reports unavailable"),
                fix: Some(format!(
                    "install `{}` from {} to audit the strength of {lang} proofs",
                    t.package, t.registry
                )),
            }
        });
    }
    items
}

/// Ingest mode: both files of the brief, parsed and validated as the loop will read them.
fn brief_item(root: &Path, s: &Settings) -> PreflightItem {
    let dir = resolve(root, &s.self_assess_output_dir.value);
    match crate::ingest::load(&dir) {
        Ok(b) => PreflightItem {
            capability: "ingest: brief",
            level: Readiness::Ready,
            found: format!("{} valid: {} phase(s)", dir.join(crate::ingest::BRIEF_FILE).display(), b.phases.len()),
            fix: None,
        },
        Err(crate::ingest::LoadError::Absent { missing, .. }) => PreflightItem {
            capability: "ingest: brief",
            level: Readiness::NotReady,
            found: format!("missing in {}: {}", dir.display(), missing.join(", ")),
            fix: Some(format!(
                "run {} to produce the brief first, or set `gap_source = \"self-scan\"`",
                crate::ingest::PRODUCER
            )),
        },
        Err(e) => PreflightItem {
            capability: "ingest: brief",
            level: Readiness::NotReady,
            found: crate::text::short(&e.to_string()),
            fix: Some("correct the brief (see docs/brief-format.md)".into()),
        },
    }
}

/// Whether `dir` exists and is writable, or could be created (without creating it).
fn check_creatable(dir: &Path) -> Result<(), Error> {
    let mut d = dir.to_path_buf();
    loop {
        if d.exists() {
            let meta = std::fs::metadata(&d).map_err(|source| Error::Metadata { path: d.clone(), source })?;
            if !meta.is_dir() {
                return Err(Error::NotADirectory { path: d });
            }
            return if meta.permissions().readonly() { Err(Error::ReadOnly { path: d }) } else { Ok(()) };
        }
        match d.parent() {
            Some(p) if p != d => d = p.to_path_buf(),
            _ => return Err(Error::NoExistingParent),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pyproject_declares_its_packages_in_the_ways_builders_read() {
        let find =
            "[tool.setuptools.packages.find]\nwhere = [\"src\"]\ninclude = [\"shop*\"]\nexclude = [\"shop_tests*\"]\n";
        assert!(declared_in(find, "shop", "src/shop"));
        assert!(!declared_in(find, "shop", "shop"), "another directory than `where`");
        assert!(!declared_in(find, "shop_tests", "src/shop_tests"), "excluded");
        assert!(!declared_in(find, "catalog", "src/catalog"), "not included");
        let default = "[tool.setuptools.packages.find]\n";
        assert!(declared_in(default, "catalog", "catalog") && !declared_in(default, "catalog", "src/catalog"));
        let list = "[tool.setuptools]\npackages = [\"shop\", \"shop.cart\"]\n";
        assert!(declared_in(list, "shop", "src/shop") && !declared_in(list, "cart", "cart"));
        let poetry = "[tool.poetry]\npackages = [{ include = \"shop\", from = \"src\" }, { include = \"cat*\" }]\n";
        assert!(declared_in(poetry, "shop", "src/shop") && declared_in(poetry, "catalog", "catalog"));
        assert!(!declared_in(poetry, "shop", "shop"));
        let hatch = "[tool.hatch.build.targets.wheel]\npackages = [\"src/shop\"]\n";
        assert!(declared_in(hatch, "shop", "src/shop") && !declared_in(hatch, "catalog", "src/catalog"));
        assert!(!declared_in("[project]\nname = \"shop\"\n", "shop", "shop"), "discovery is not a declaration");
        assert!(!declared_in("not toml [", "shop", "shop"));
    }

    #[test]
    fn the_advice_names_a_few_stages_and_counts_the_rest() {
        let stage = |n: usize| StageRow {
            name: format!("s{n}"),
            root: format!("s{n}"),
            ecosystem: "python".into(),
            confidence: crate::facts::vocab::Confidence::Heuristic,
            source: "python-package".into(),
            files: 1,
        };
        let stages: Vec<StageRow> = (0..10).map(stage).collect();
        let refs: Vec<&StageRow> = stages.iter().collect();
        let advice = declare_advice(&refs);
        assert!(advice.starts_with("declare `s0`, `s1`"), "{advice}");
        assert!(advice.contains("`s7`, and 2 more: a Python package in its pyproject.toml"), "{advice}");
        assert!(!advice.contains("`s8`") && !advice.contains("loose files"), "{advice}");
    }
}
