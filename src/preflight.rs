//! `andon preflight` (R20–R26): is the repository legible enough for the loop? Every check runs and
//! is reported; each capability gets exactly one readiness level, and every level short of ready
//! says the fix. Read-only: the ledger is never initialized; the only things created are the
//! reports under `output_dir` (and that directory, which doubles as the writability probe).

use std::path::{Path, PathBuf};

use crate::config::{Config, GapSource, Settings};
use crate::ops::StreamReport;

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

fn writable(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let probe = dir.join(format!(".andon-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() { p.to_path_buf() } else { root.join(p) }
}

/// Runs every check. `stream` is the detected stream (None when the index could not be built);
/// `path_var` is the PATH to look for external tools on.
pub fn run(
    root: &Path,
    cfg: &Config,
    stream: Option<&StreamReport>,
    path_var: Option<&std::ffi::OsStr>,
) -> Vec<PreflightItem> {
    let s = &cfg.settings;
    let mut items = vec![stream_item(stream)];
    // Persistence: the ledger and the reports.
    items.push(ledger_item(root, s));
    items.push(reports_item(root, s));
    // Propose: the repository's conventions.
    items.push(house_rules_item(root, s));
    // Verify: the diff needs git; structural proofs need the index.
    items.push(applied_diff_item(root, path_var));
    items.push(structural_item(stream));
    items.push(property_item(root));
    items.extend(audit_items(path_var));
    // Ingest mode reads the brief, only when selected (R11).
    if s.gap_source.value == GapSource::Ingest {
        items.push(brief_item(root, s));
    }
    items
}

/// The stream: whether it was detected, and how exactly.
fn stream_item(stream: Option<&StreamReport>) -> PreflightItem {
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
            let heuristic = st.stages.iter().filter(|x| x.confidence != "exact").count();
            let found = format!(
                "{} stage(s), {} wire(s); {} of the stages detected with reduced confidence",
                st.stages.len(),
                st.wires.len(),
                heuristic
            );
            if heuristic > 0 {
                PreflightItem {
                    capability: "stream detection",
                    level: Readiness::ReadyWithGaps,
                    found,
                    fix: Some("declare the packages in manifests (Cargo.toml, pyproject.toml, package.json) to make the stages exact".into()),
                }
            } else {
                PreflightItem { capability: "stream detection", level: Readiness::Ready, found, fix: None }
            }
        }
    }
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

/// Property checks (approach f) run only through a tool the repository itself declares (R98).
fn property_item(root: &Path) -> PreflightItem {
    let declared = crate::evidence::property::detect(root);
    if declared.is_empty() {
        PreflightItem {
            capability: "verify: property",
            level: Readiness::ReadyWithGaps,
            found: "no property-testing tool is declared (proptest, quickcheck, hypothesis, fast-check)".into(),
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

/// Optional external capabilities (R118-R121), one item per tool: absent means unavailable, never
/// a failure.
fn audit_items(path_var: Option<&std::ffi::OsStr>) -> Vec<PreflightItem> {
    let mut items = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for t in crate::capabilities::REGISTRY.iter().filter(|t| seen.insert(t.name)) {
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
fn check_creatable(dir: &Path) -> Result<(), String> {
    let mut d = dir.to_path_buf();
    loop {
        if d.exists() {
            let meta = std::fs::metadata(&d).map_err(|e| e.to_string())?;
            if !meta.is_dir() {
                return Err(format!("{} is not a directory", d.display()));
            }
            return if meta.permissions().readonly() { Err(format!("{} is read-only", d.display())) } else { Ok(()) };
        }
        match d.parent() {
            Some(p) if p != d => d = p.to_path_buf(),
            _ => return Err("no existing parent directory".into()),
        }
    }
}
