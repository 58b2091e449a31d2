//! The index's summary (files by language, parse errors, stages) and the diagnostics kept as
//! facts.

use super::*;

/// Adds the diagnostics that live in `cores` as facts (skipped files, too-deep and too-complex files, manifest
/// errors).
pub(super) fn with_stored_diags(mut diags: Vec<Diag>, cores: &[&Segment]) -> Vec<Diag> {
    for &seg in cores {
        for r in seg.rows_of(rel::SKIPPED) {
            let (p, why) = (seg.str(r[0]), seg.str(r[1]));
            if !diags.iter().any(|d| d.path == p && d.kind == why) {
                diags.push(Diag { path: p.into(), line: 0, kind: why.into(), message: skipped_message(why) });
            }
        }
        for r in seg.rows_of(rel::PARSE_ERROR) {
            let message = match seg.str(r[5]) {
                extract::TOO_DEEP => extract::too_deep_message(),
                extract::TOO_COMPLEX => extract::too_complex_message(),
                _ => continue,
            };
            diags.push(Diag { path: seg.str(r[0]).into(), line: r[1], kind: seg.str(r[5]).into(), message });
        }
        for r in seg.rows_of(rel::MANIFEST_ERROR) {
            diags.push(Diag {
                path: seg.str(r[0]).into(),
                line: r[1],
                kind: "manifest-error".into(),
                message: seg.str(r[2]).into(),
            });
        }
    }
    diags.sort_by(|a, b| (&a.path, a.line, &a.kind).cmp(&(&b.path, b.line, &b.kind)));
    diags.dedup();
    diags
}

/// The summary's counts that the file table alone gives: files by language, manifests, skipped
/// files and the files' facts.
pub(super) fn table_counts(files: &[FileMeta]) -> Summary {
    let mut s = Summary::default();
    for f in files {
        count_file(&mut s, f, true);
    }
    s
}

/// Adds one file's part of the table's counts to `s` ([`table_counts`]), or with `add` false
/// takes it away.
pub(super) fn count_file(s: &mut Summary, f: &FileMeta, add: bool) {
    let step = |n: &mut u64, by: u64| *n = if add { *n + by } else { n.saturating_sub(by) };
    step(&mut s.facts, f.facts);
    if f.skipped.is_some() {
        step(&mut s.skipped, 1);
        return;
    }
    if f.kind != 1 {
        let langs = &mut s.files_by_lang;
        let at = match langs.binary_search_by(|(l, _)| l.as_str().cmp(f.lang.as_str())) {
            Ok(at) => at,
            Err(at) => {
                langs.insert(at, (f.lang.clone(), 0));
                at
            }
        };
        step(&mut langs[at].1, 1);
        if langs[at].1 == 0 {
            langs.remove(at);
        }
    }
    if f.kind != 0 {
        step(&mut s.manifests, 1);
    }
}

/// A file's parse errors.
pub(super) fn parse_errors(core: &Segment) -> u64 {
    core.rows_of(rel::PARSE_ERROR).count() as u64
}

/// A re-parsed file's stored entry and core, then its new ones.
pub(super) type Swap<'a> = ((&'a FileMeta, &'a Segment), (&'a FileMeta, &'a Segment));

/// The summary after a run in which the whole-repo facts stood (no file came or went): the stored
/// summary with each changed file's counts and parse errors swapped; the stages and the repo facts
/// are the stored ones.
pub(super) fn summary_after(old: &Summary, changed: &[Swap]) -> Summary {
    let mut s = old.clone();
    for ((old_meta, before), (new_meta, after)) in changed {
        count_file(&mut s, old_meta, false);
        count_file(&mut s, new_meta, true);
        let (b, a) = (parse_errors(before), parse_errors(after));
        s.parse_errors = s.parse_errors.saturating_sub(b) + a;
        s.files_with_parse_errors = s.files_with_parse_errors.saturating_sub(u64::from(b > 0)) + u64::from(a > 0);
    }
    s
}

pub(super) fn summarize(files: &[FileMeta], cores: &[&Segment], global: &Segment) -> Summary {
    let mut s = table_counts(files);
    for seg in cores {
        let errs = parse_errors(seg);
        s.parse_errors += errs;
        s.files_with_parse_errors += u64::from(errs > 0);
    }
    s.facts += global.row_count() as u64;
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for r in global.rows_of(rel::IN_STAGE) {
        *counts.entry(r[1]).or_default() += 1;
    }
    let mut stages: Vec<StageSummary> = Vec::new();
    let info: HashMap<u32, &[u32]> = global.rows_of(rel::STAGE_INFO).map(|r| (r[0], r)).collect();
    for r in global.rows_of(rel::STAGE) {
        let i = info.get(&r[0]);
        let get = |k: usize| i.map(|i| global.str(i[k]).to_string()).unwrap_or_default();
        stages.push(StageSummary {
            name: global.str(r[0]).to_string(),
            root: global.str(r[1]).to_string(),
            ecosystem: get(1),
            confidence: get(2),
            source: get(3),
            files: counts.get(&r[0]).copied().unwrap_or(0),
        });
    }
    stages.sort_by(|a, b| (&a.root, &a.name).cmp(&(&b.root, &b.name)));
    s.stages = stages;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn meta() -> impl Strategy<Value = FileMeta> {
        let lang = prop::sample::select(vec!["python", "rust", "typescript", ""]);
        let skipped = prop::option::of(prop::sample::select(vec!["binary", "too-large"]));
        (0u8..3, lang, skipped, 0u64..50).prop_map(|(kind, lang, skipped, facts)| FileMeta {
            path: String::new(),
            kind,
            lang: lang.to_string(),
            skipped: skipped.map(str::to_string),
            facts,
            ..FileMeta::default()
        })
    }

    proptest! {
        /// Swapping one file's entry for another changes the table's counts as counting the new
        /// table afresh does (what a run whose whole-repo facts stand relies on).
        #[test]
        fn a_swapped_entry_counts_as_a_fresh_count(
            table in prop::collection::vec(meta(), 1..12),
            at in any::<prop::sample::Index>(),
            new in meta(),
        ) {
            let at = at.index(table.len());
            let before = table_counts(&table);
            let mut after = table.clone();
            after[at] = new.clone();
            let mut swapped = before.clone();
            count_file(&mut swapped, &table[at], false);
            count_file(&mut swapped, &new, true);
            prop_assert_eq!(swapped, table_counts(&after));
        }
    }
}
