//! Verifying an applied fix (issue 5 item 6; R71–R87, R106–R113): the fix is the working tree
//! against the proposal's base commit. Before anything is proven, files outside the declared
//! write-set are refused, and the blast radius is re-rated from the actual diff and held against
//! the ceiling again. Then the wire is proven by the proposal's approach: `structural` from the
//! freshly updated index (tiered by the confidence of the facts), or `executed` (a command's exit
//! code, its output kept as an artifact). Verify never writes the ledger: it writes an evidence
//! artifact the loop records.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::super::error::Error;
use crate::config::BlastRadius;
use crate::datalog::{self, Store};
use crate::extract::lang::is_manifest_name;
use crate::facts::rel;
use crate::index::Index;
use crate::ledger::{Evidence, GapState, Verdict, Wire};

/// What the applied change touches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppliedChange {
    pub base: String,
    /// (status letter A/M/D/R, path), sorted.
    pub files: Vec<(String, String)>,
    pub hash: String,
}

/// The verification result: the evidence, and what the diff checks found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyOutcome {
    pub gap: String,
    pub change: AppliedChange,
    /// Files the diff writes that the proposal did not declare (R113).
    pub outside_write_set: Vec<String>,
    /// The blast radius the diff shows, and the rule that rated it.
    pub rerated: BlastRadius,
    pub rerated_because: String,
    pub evidence: Evidence,
    /// How verify routed the attempt (R89–R91).
    #[serde(default)]
    pub routing: Option<super::proof::Routing>,
}

/// The change at `root` against commit `base`: the working tree as git would commit it, tracked
/// edits and untracked files alike ([`super::diff::Snapshot`]).
pub fn change(root: &Path, base: &str, exclude: &[String]) -> Result<AppliedChange, Error> {
    if base == "none" {
        return Err(Error::NoBaseCommit);
    }
    let snap = super::diff::Snapshot::take(root, exclude)?;
    change_in(&snap, base)
}

/// The change [`change`] finds, in a snapshot already taken.
pub fn change_in(snap: &super::diff::Snapshot, base: &str) -> Result<AppliedChange, Error> {
    let mut files: Vec<(String, String)> = Vec::new();
    let listing = snap.diff(base, &["--name-status", "--relative"])?;
    for line in String::from_utf8_lossy(&listing).lines() {
        if let Some((st, path)) = line.split_once('\t') {
            files.push((st.chars().next().unwrap_or('M').to_string(), unquote(path)));
        }
    }
    files.sort();
    files.dedup();
    Ok(AppliedChange { base: base.into(), hash: snap.hash(base)?, files })
}

/// The text of the working tree's diff against `base` (new files included), without the
/// `exclude`d directories (andon's own ledger and reports: a proposer's reasoning and earlier
/// verdicts live there, and the panel's roles must not read them as part of the change, R102).
pub fn diff_text(root: &Path, base: &str, exclude: &[String]) -> Result<String, Error> {
    let snap = super::diff::Snapshot::take(root, exclude)?;
    Ok(String::from_utf8_lossy(&snap.diff(base, &[])?).into_owned())
}

/// A path as git writes it in a diff or a listing: C-quoted (`"a/caf\303\251.py"`) when it has
/// special or non-ASCII characters, plain otherwise; returned as the index writes paths
/// ([`crate::text::path_text`]).
fn unquote(p: &str) -> String {
    let Some(inner) = p.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else { return p.to_string() };
    let mut bytes = Vec::new();
    let mut it = inner.bytes().peekable();
    while let Some(b) = it.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = it.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        it.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    crate::text::path_text(&bytes)
}

/// The two paths of a `diff --git a/X b/Y` header (quoted or plain).
fn git_header_paths(rest: &str) -> Option<(String, String)> {
    if let Some(tail) = rest.strip_prefix('"') {
        // quoted old path, then a space, then the new path (quoted or not)
        let end = tail.find("\" ").map(|i| i + 2)?;
        let (a, b) = (rest[..end].to_string(), rest[end..].trim_start().to_string());
        return Some((unquote(&a), unquote(&b)));
    }
    if rest.ends_with('"') {
        let start = rest.rfind(" \"")?;
        return Some((rest[..start].to_string(), unquote(&rest[start + 1..])));
    }
    // plain: the old and new paths are the same length in the common case; else split at " b/"
    let i = rest.rfind(" b/")?;
    Some((rest[..i].to_string(), rest[i + 1..].to_string()))
}

/// The change a unified diff describes (`--diff FILE`): its files from the `diff --git` headers
/// (renames, copies, mode changes and binary patches included) and the `---`/`+++` headers (added
/// from /dev/null, deleted to /dev/null), its hash from its text. Paths must be plain relative
/// paths inside the repository.
pub fn change_from_diff(text: &str, base: &str, exclude: &[String]) -> Result<AppliedChange, Error> {
    let mut files = git_section_files(text)?;
    files.extend(unified_header_files(text));
    if files.is_empty() {
        return Err(Error::DiffNamesNoFile);
    }
    plain_relative_paths(&files)?;
    files.retain(|(_, p)| !exclude.iter().any(|e| p.starts_with(e.as_str())));
    let files = one_status_per_path(files);
    Ok(AppliedChange {
        base: base.into(),
        files,
        hash: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes())),
    })
}

/// A path as a diff header gives it, without its tab-separated suffix, quotes and `a/`/`b/`
/// prefix; `None` for `/dev/null`.
fn diff_path(p: &str) -> Option<String> {
    let p = p.split('\t').next().unwrap_or(p).trim();
    if p == "/dev/null" {
        return None;
    }
    let p = unquote(p);
    Some(p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(&p).to_string())
}

/// The files of the `diff --git a/x b/y` sections: every file git touches has one, even with no
/// `---`/`+++` lines (a new or deleted empty file, a rename, a mode change, a binary patch).
fn git_section_files(text: &str) -> Result<Vec<(String, String)>, Error> {
    let mut files: Vec<(String, String)> = Vec::new();
    let mut header: Option<String> = None;
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("diff --git ") {
            if let Some((a, b)) = git_header_paths(rest) {
                let (a, b) = (diff_path(&a).unwrap_or_default(), diff_path(&b).unwrap_or_default());
                files.push(("M".into(), b.clone()));
                if a != b {
                    files.push(("M".into(), a));
                }
                header = Some(b);
            } else {
                return Err(Error::DiffHeader { line: crate::text::line(l).to_string() });
            }
        } else if let Some(from) = l.strip_prefix("rename from ") {
            files.push(("D".into(), unquote(from)));
        } else if let Some(to) = l.strip_prefix("rename to ").or_else(|| l.strip_prefix("copy to ")) {
            files.push(("A".into(), unquote(to)));
        } else if l.starts_with("deleted file mode") {
            if let Some(h) = &header {
                files.push(("D".into(), h.clone()));
            }
        } else if l.starts_with("new file mode")
            && let Some(h) = &header
        {
            files.push(("A".into(), h.clone()));
        }
    }
    Ok(files)
}

/// The files of the `---`/`+++` header pairs: added from /dev/null, deleted to /dev/null, else
/// modified.
fn unified_header_files(text: &str) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        let Some(old) = l.strip_prefix("--- ") else { continue };
        let Some(new) = lines.peek().and_then(|n| n.strip_prefix("+++ ")) else { continue };
        let (old, new) = (diff_path(old), diff_path(new));
        lines.next();
        match (old, new) {
            (None, Some(n)) => files.push(("A".into(), n)),
            (Some(o), None) => files.push(("D".into(), o)),
            (Some(_), Some(n)) => files.push(("M".into(), n)),
            (None, None) => {}
        }
    }
    files
}

/// Refuses a path outside the repository or one that is not a plain relative path.
fn plain_relative_paths(files: &[(String, String)]) -> Result<(), Error> {
    for (_, p) in files {
        if p.starts_with('/') || p.split('/').any(|c| c == "..") {
            return Err(Error::DiffOutside { path: crate::text::line(p).to_string() });
        }
        if p.is_empty() || p.contains('\\') || p.split('/').any(|c| c.is_empty() || c == ".") {
            return Err(Error::DiffPathNotPlain { path: crate::text::line(p).to_string() });
        }
    }
    Ok(())
}

/// One (status, path) per path, sorted: a deletion or addition wins over a modification.
fn one_status_per_path(mut files: Vec<(String, String)>) -> Vec<(String, String)> {
    files.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
    files.dedup_by(|b, a| {
        // the same path twice: a deletion or addition wins over a modification
        if a.1 == b.1 {
            if b.0 != "M" {
                a.0 = b.0.clone();
            }
            true
        } else {
            false
        }
    });
    files.sort();
    files
}

/// Re-rates the blast radius from the diff (design decision 5): CI, release or publish
/// configuration → shared-state-visible; deletions, manifests (dependencies, public surface) or
/// schema files → hard-to-reverse; anything else local+reversible.
pub fn rerate(change: &AppliedChange) -> (BlastRadius, String) {
    let shared = |p: &str| {
        p.starts_with(".github/")
            || p.starts_with(".ci/")
            || p.starts_with(".circleci/")
            || p == ".gitlab-ci.yml"
            || p.ends_with("Jenkinsfile")
            || p.starts_with("release")
            || p.contains("/release/")
    };
    let hard = |p: &str| {
        let name = p.rsplit('/').next().unwrap_or(p);
        is_manifest_name(name)
            || name == "go.mod"
            || p.contains("migrations/")
            || name.ends_with(".sql")
            || name.ends_with(".proto")
            || name.ends_with(".graphql")
    };
    if let Some((_, p)) = change.files.iter().find(|(_, p)| shared(p)) {
        return (BlastRadius::SharedStateVisible, format!("`{p}` is CI, release or publish configuration"));
    }
    if let Some((_, p)) = change.files.iter().find(|(s, _)| s == "D") {
        return (BlastRadius::HardToReverse, format!("`{p}` is deleted"));
    }
    if let Some((_, p)) = change.files.iter().find(|(_, p)| hard(p)) {
        return (BlastRadius::HardToReverse, format!("`{p}` is a manifest or schema (public surface)"));
    }
    (BlastRadius::LocalReversible, "only source files of the repository change; nothing is deleted".into())
}

/// A structural proof: verdict, tier, non-overridable hold, claim, references.
pub type StructuralProof = (Verdict, Option<u8>, bool, String, Vec<String>);

/// The relations structural proof reads.
const GOALS: &[crate::facts::RelId] = &[
    rel::BROKEN_IMPORT_AT,
    rel::ARITY_HANDOFF,
    rel::OPAQUE_HANDOFF,
    rel::STUB_HANDOFF,
    rel::WIRE_IMPORT,
    rel::IN_STAGE,
    rel::UNDECLARED_IMPORT,
    rel::UNUSED_DEPENDENCY_AT,
    rel::OPEN_ABSENCE,
    rel::MISSING_NAME,
    rel::DECLARED_WIRE,
    rel::UNDECLARED_WIRE_IMPORT,
];

/// Structural proof of a non-wire obligation at `path`: an undeclared import or an unused
/// dependency that must be gone (the gap's summary says which), else no broken import and no
/// stub left in the file.
fn structural_file(store: &Store, path: &str, summary: &str) -> StructuralProof {
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let named = summary.split('`').nth(1).unwrap_or("");
    let (still, what): (Vec<String>, &str) = if summary.contains("the manifest does not declare it") {
        let still = rows(rel::UNDECLARED_IMPORT)
            .filter(|r| s(r[2]) == path && (named.is_empty() || s(r[1]) == named))
            .map(|r| format!("{}:{}: `{}` is imported but not declared", s(r[2]), r[3], s(r[1])))
            .collect();
        (still, "undeclared import")
    } else if summary.contains("but no code of the stage imports it") {
        let still = rows(rel::UNUSED_DEPENDENCY_AT)
            .filter(|r| s(r[3]) == path && s(r[1]) == named)
            .map(|r| format!("{}: `{}` is declared ({}) and unused", s(r[3]), s(r[1]), s(r[2])))
            .collect();
        (still, "unused dependency")
    } else if summary.contains("but the declared stream has no wire") {
        let still = rows(rel::UNDECLARED_WIRE_IMPORT)
            .filter(|r| s(r[2]) == path && (named.is_empty() || s(r[0]) == named))
            .map(|r| format!("{}:{}: imports from `{}` across no declared wire", s(r[2]), r[3], s(r[0])))
            .collect();
        (still, "undeclared cross-stage import")
    } else {
        let mut still: Vec<String> = rows(rel::BROKEN_IMPORT_AT)
            .filter(|r| s(r[0]) == path)
            .map(|r| format!("{}:{}: `{}` is not defined or exported by {}", s(r[0]), r[1], s(r[2]), s(r[4])))
            .collect();
        still.extend(
            rows(rel::STUB_HANDOFF)
                .filter(|r| s(r[3]) == path)
                .map(|r| format!("{}:{}: `{}` crosses the wire as a stub ({})", s(r[3]), r[4], s(r[2]), s(r[5]))),
        );
        (still, "broken import or stub")
    };
    // tier 2, and why (R100): the gap is about a site, not a wire; absence at one site is a fact of
    // the index but says nothing of the handoff an exact import across a wire would show
    let why = "tier 2: a site-level check with no wire to hold it to (tier 1 needs an exact import across a wire)";
    if still.is_empty() {
        (Verdict::Proven, Some(2), false, format!("no {what} is left at {path} ({why})"), vec![])
    } else {
        let n = still.len();
        (Verdict::Refuted, Some(2), false, format!("{n} {what}(s) still at {path} ({why})"), still)
    }
}

/// Structural proof of a gap on the fresh index: contradictions on its wire (broken imports,
/// stub handoffs) refute it, at tier 1 when they rest on exact resolution (a non-overridable
/// hold), tier 2 otherwise; a wire with no contradiction and at least one exact import is proven
/// at tier 1.
pub fn structural(idx: &Index, gap: &GapState) -> Result<StructuralProof, Error> {
    structural_of(idx, gap.wire.as_ref(), &gap.location.path, &gap.summary)
}

/// Structural proof of a wire, or of the file `path` a non-wire obligation is about.
pub fn structural_of(idx: &Index, wire: Option<&Wire>, path: &str, summary: &str) -> Result<StructuralProof, Error> {
    let prog = datalog::builtin_program();
    let goals: Vec<usize> = GOALS.iter().map(|r| r.0 as usize).collect();
    let need = prog.needed(&goals);
    let mut store: Store = datalog::load(&prog, idx, Some(&need)).map_err(|e| Error::Facts(e.to_string()))?;
    datalog::run_runtime(&prog, &mut store, Some(&need));
    let s = |v: u32| store.syms.str(v).to_string();
    let rows = |r: crate::facts::RelId| store.rels[r.0 as usize].iter();
    let Some(w) = wire else {
        return Ok(structural_file(&store, path, summary));
    };
    let on_wire = |producer: u32, path: u32| {
        store.syms.str(producer) == w.producer
            && rows(rel::IN_STAGE).any(|x| x[0] == path && store.syms.str(x[1]) == w.consumer)
    };
    let mut refs = Vec::new();
    let mut tier = 3u8;
    for r in rows(rel::BROKEN_IMPORT_AT) {
        if on_wire(r[3], r[0]) {
            refs.push(format!("{}:{}: `{}` is not defined or exported by {}", s(r[0]), r[1], s(r[2]), s(r[4])));
            tier = tier.min(if s(r[5]) == "exact" { 1 } else { 2 });
        }
    }
    for r in rows(rel::ARITY_HANDOFF) {
        if store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer {
            let (problem, param) = (s(r[5]), s(r[6]));
            let about = if param.is_empty() { problem } else { format!("{problem} `{param}`") };
            refs.push(format!("{}:{}: the call of `{}` does not fit its signature ({about})", s(r[2]), r[3], s(r[4])));
            tier = tier.min(if s(r[7]) == "exact" { 1 } else { 2 });
        }
    }
    for r in rows(rel::STUB_HANDOFF) {
        if store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer {
            refs.push(format!("{}:{}: `{}` crosses the wire as a stub ({})", s(r[3]), r[4], s(r[2]), s(r[5])));
            tier = tier.min(2);
        }
    }
    if !refs.is_empty() {
        refs.sort();
        let why = if tier == 1 {
            String::new()
        } else if let Some(open) = open_absence(&store, w) {
            format!(" (tier 2, not 1: {open})")
        } else {
            " (tier 2, not 1: the contradictions rest on heuristic resolution, another definition or a stub, not an exact fact)".to_string()
        };
        return Ok((
            Verdict::Refuted,
            Some(tier),
            tier == 1,
            format!("{} contradiction(s) on {w}{why}", refs.len()),
            refs,
        ));
    }
    if w.producer == w.consumer {
        return Ok(lone_stage_proof(&store, &w.producer));
    }
    let opaque: Vec<String> = rows(rel::OPAQUE_HANDOFF)
        .filter(|r| store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer)
        .map(|r| format!("{}:{}: `{}`", s(r[2]), r[3], s(r[4])))
        .collect();
    if !opaque.is_empty() {
        // a decorator, a rebinding or a second definition decides what these calls take
        return Ok((
            Verdict::Unproven,
            None,
            false,
            format!(
                "{} call(s) across {w} reach a function whose signature a decorator, a rebinding or another definition decides: structure cannot show they fit; prove the handoff by a check that exercises it (`--approach executed`)",
                opaque.len()
            ),
            opaque,
        ));
    }
    let imports: Vec<String> = rows(rel::WIRE_IMPORT)
        .filter(|r| store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer)
        .map(|r| format!("{}:{} -> {} ({})", s(r[2]), r[3], s(r[4]), s(r[5])))
        .collect();
    let exact = rows(rel::WIRE_IMPORT).any(|r| {
        store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer && store.syms.str(r[5]) == "exact"
    });
    if imports.is_empty() {
        let declared =
            rows(rel::DECLARED_WIRE).any(|r| store.syms.str(r[0]) == w.producer && store.syms.str(r[1]) == w.consumer);
        if declared {
            // a declared wire stands whatever the imports say: an empty surface proves nothing
            return Ok((
                Verdict::Unproven,
                None,
                false,
                format!(
                    "{w} is declared, but no import carries it: there is nothing for a structural proof to read; prove the handoff by a check that exercises it (`--approach executed`)"
                ),
                vec![],
            ));
        }
        return Ok((Verdict::Proven, Some(1), false, format!("{w} no longer exists: no import crosses it"), vec![]));
    }
    let mut imports = imports;
    imports.sort();
    imports.truncate(20);
    Ok((
        Verdict::Proven,
        Some(if exact { 1 } else { 2 }),
        false,
        format!(
            "every import across {w} resolves to what the producer defines, every call across it fits its callee; no stub crosses it{}",
            if exact { "" } else { " (tier 2, not 1: no import across it resolves exactly)" }
        ),
        imports,
    ))
}

/// Why a name missing across wire `w` is no exact absence: the first open surface its target
/// rests on (R100), e.g. "`quote` is missing from src/lib.rs, whose surface is open: src/lib.rs has
/// item-level macro `m!`".
/// The structural proof of a lone stage's own wire (R31): its public API is its contract, and it
/// holds while no file of the stage imports, from another file of the stage, a name that file
/// does not define or export. Such an import refutes it at tier 2 (an import inside the stage is
/// not graded by a wire's resolution).
fn lone_stage_proof(store: &Store, stage: &str) -> StructuralProof {
    let s = |v: u32| store.syms.str(v).to_string();
    let in_stage =
        |p: u32| store.rels[rel::IN_STAGE.0 as usize].iter().any(|x| x[0] == p && store.syms.str(x[1]) == stage);
    let mut refs: Vec<String> = store.rels[rel::MISSING_NAME.0 as usize]
        .iter()
        .filter(|r| in_stage(r[0]) && in_stage(r[3]))
        .map(|r| format!("{}:{}: `{}` is not defined or exported by {}", s(r[0]), r[1], s(r[2]), s(r[3])))
        .collect();
    refs.sort();
    refs.dedup();
    if !refs.is_empty() {
        let claim = format!(
            "{} contradiction(s) inside stage `{stage}`, whose public API is its contract (tier 2: an import inside the stage)",
            refs.len()
        );
        return (Verdict::Refuted, Some(2), false, claim, refs);
    }
    let files = store.rels[rel::IN_STAGE.0 as usize].iter().filter(|x| store.syms.str(x[1]) == stage).count();
    let claim = format!(
        "stage `{stage}` is the only stage: its public API is its contract, and none of its {files} file(s) imports from another a name it does not define"
    );
    (Verdict::Proven, Some(1), false, claim, vec![])
}

fn open_absence(store: &Store, w: &Wire) -> Option<String> {
    let s = |v: u32| store.syms.str(v).to_string();
    let on_wire = |path: u32| {
        store.rels[rel::BROKEN_IMPORT_AT.0 as usize].iter().any(|r| r[0] == path && store.syms.str(r[3]) == w.producer)
            && store.rels[rel::IN_STAGE.0 as usize].iter().any(|x| x[0] == path && store.syms.str(x[1]) == w.consumer)
    };
    let mut found: Vec<String> = store.rels[rel::OPEN_ABSENCE.0 as usize]
        .iter()
        .filter(|r| on_wire(r[0]))
        .map(|r| {
            let (name, target, origin, reason) = (s(r[2]), s(r[3]), s(r[4]), s(r[5]));
            format!("`{name}` is missing from {target}, whose surface is open ({origin}: {reason})")
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// Tier-1 contradictions touching `paths` (condition 3 of the andon rule): imports in them, or of
/// them, that exact resolution shows the producer does not define or export, and Python calls in
/// them, or of functions defined in them, that exactly do not fit their callee's signature.
pub fn tier1_at(idx: &Index, paths: &[String]) -> Result<Vec<String>, Error> {
    let prog = datalog::builtin_program();
    let need = prog.needed(&[rel::BROKEN_IMPORT_AT.0 as usize, rel::ARITY_MISMATCH_AT.0 as usize]);
    let mut store: Store = datalog::load(&prog, idx, Some(&need)).map_err(|e| Error::Facts(e.to_string()))?;
    datalog::run_runtime(&prog, &mut store, Some(&need));
    let s = |v: u32| store.syms.str(v).to_string();
    let mut out: Vec<String> = store.rels[rel::BROKEN_IMPORT_AT.0 as usize]
        .iter()
        // an import in a changed file, or an import of a changed file (the change broke a consumer
        // it did not touch)
        .filter(|r| s(r[5]) == "exact" && (paths.contains(&s(r[0])) || paths.contains(&s(r[4]))))
        .map(|r| format!("{}:{}: `{}` is not defined or exported by {}", s(r[0]), r[1], s(r[2]), s(r[4])))
        .collect();
    out.extend(
        store.rels[rel::ARITY_MISMATCH_AT.0 as usize]
            .iter()
            .filter(|r| s(r[6]) == "exact" && (paths.contains(&s(r[0])) || paths.contains(&s(r[3]))))
            .map(|r| {
                let param = if s(r[5]).is_empty() { String::new() } else { format!(" `{}`", s(r[5])) };
                format!("{}:{}: the call of `{}` (defined in {}): {}{param}", s(r[0]), r[1], s(r[2]), s(r[3]), s(r[4]))
            }),
    );
    out.sort();
    Ok(out)
}

/// The evidence artifact of gap `gap`, for the loop to record.
pub fn artifact_path(out_dir: &Path, gap: &str) -> PathBuf {
    out_dir.join("evidence").join(format!("{gap}.json"))
}

/// Builds the evidence record of one proof attempt.
#[allow(clippy::too_many_arguments)]
pub fn evidence(
    gap: &GapState,
    approach: &str,
    verdict: Verdict,
    tier: Option<u8>,
    hold: bool,
    claim: String,
    detail: String,
    references: Vec<String>,
    artifact: Option<String>,
    change_hash: &str,
) -> Evidence {
    let wire = gap.wire.clone().unwrap_or(Wire { producer: gap.stage.clone(), consumer: gap.stage.clone() });
    // the spec's vocabulary: a proof that could not show the fix is unknown, with the reason
    let (verdict, reason) = crate::ledger::spec_verdict(verdict, None);
    Evidence {
        id: format!("E-{}-{}", gap.id, &change_hash[..8.min(change_hash.len())]),
        gap: Some(gap.id.clone()),
        wire,
        approach: approach.into(),
        verdict,
        hold,
        tier,
        artifact,
        claim,
        evidence: detail,
        fix: None,
        references,
        surface: None,
        crossing: Default::default(),
        radius: None,
        tree: None,
        rung: crate::evidence::route::Approach::parse(approach).map(|a| a.rung().number()),
        commit: None,
        red_first: None,
        reason,
        capability: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn git_diff_headers_name_every_file_git_writes() {
        let rename =
            "diff --git a/src/a.py b/src/b.py\nsimilarity index 100%\nrename from src/a.py\nrename to src/b.py\n";
        let c = change_from_diff(rename, "x", &[]).unwrap();
        assert_eq!(c.files, vec![("A".to_string(), "src/b.py".to_string()), ("D".to_string(), "src/a.py".to_string())]);
        let mode = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
        assert_eq!(change_from_diff(mode, "x", &[]).unwrap().files, vec![("M".to_string(), "run.sh".to_string())]);
        let quoted = "diff --git \"a/caf\\303\\251.py\" \"b/caf\\303\\251.py\"\n--- \"a/caf\\303\\251.py\"\n+++ \"b/caf\\303\\251.py\"\n";
        assert_eq!(change_from_diff(quoted, "x", &[]).unwrap().files, vec![("M".to_string(), "café.py".to_string())]);
        let odd = "--- a/src//x.py\n+++ b/src//x.py\n";
        assert!(change_from_diff(odd, "x", &[]).unwrap_err().to_string().contains("not a plain relative path"));
        let dot = "--- a/./x.py\n+++ b/./x.py\n";
        assert!(change_from_diff(dot, "x", &[]).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn git_paths_read_as_the_index_writes_them_and_edits_to_raw_names_change_the_hash() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        let raw = |name: &[u8]| d.join(std::ffi::OsStr::from_bytes(name));
        if std::fs::write(raw(b"leak\xff.py"), "a\n").is_err() {
            return; // a file system that refuses non-UTF-8 names
        }
        std::fs::write(d.join("café.py"), "a\n").unwrap();
        let ids = ["-c", "user.name=a", "-c", "user.email=a@example.invalid", "-c", "commit.gpgsign=false"];
        for args in [&["init", "-q"][..], &["add", "-A"], &["commit", "-qm", "base"]] {
            assert!(Command::new("git").arg("-C").arg(d).args(ids).args(args).output().unwrap().status.success());
        }
        std::fs::write(raw(b"leak\xff.py"), "b\n").unwrap();
        std::fs::write(d.join("café.py"), "b\n").unwrap();
        std::fs::write(raw(b"new\xfe.py"), "a\n").unwrap();
        let c = change(d, "HEAD", &[]).unwrap();
        let mut paths: Vec<&str> = c.files.iter().map(|(_, p)| p.as_str()).collect();
        paths.sort();
        assert_eq!(paths, ["café.py", "leak\\xff.py", "new\\xfe.py"]);
        for (_, p) in &c.files {
            assert_eq!(crate::index::walk::rel_path(d, &crate::index::walk::abs_path(d, p).unwrap()), *p);
        }
        std::fs::write(raw(b"new\xfe.py"), "b\n").unwrap();
        assert_ne!(change(d, "HEAD", &[]).unwrap().hash, c.hash, "an edit to an untracked raw name is seen");
    }
}
