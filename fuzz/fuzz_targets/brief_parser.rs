//! The modernization brief (`andon::ingest::parse`): `MODERNIZATION_BRIEF.md` and
//! `transform_brief_summary.json` as bytes. The input is split at its first 0xFF byte (Markdown
//! before, sidecar JSON after); without one, in halves. Also checks the documented promises of
//! `text::short` (no control chars, at most INLINE_MAX chars) and that every error is one line.
#![no_main]

use std::path::Path;

use andon::ingest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (md, summary) = match data.iter().position(|&b| b == 0xFF) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => data.split_at(data.len() / 2),
    };
    let md_file = Path::new("MODERNIZATION_BRIEF.md");
    let summary_file = Path::new("transform_brief_summary.json");
    match ingest::parse(md, summary, md_file, summary_file) {
        Ok(brief) => {
            for p in &brief.phases {
                let _ = p.entry_gates().count();
                for w in &p.work_items {
                    let _ = w.kind();
                }
            }
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "Err with no errors");
            for e in &errors {
                let shown = e.to_string();
                assert!(!shown.contains('\n') && !shown.contains('\r'), "a brief error spans lines: {shown:?}");
            }
        }
    }
    let text = String::from_utf8_lossy(data);
    let esc = andon::text::short(&text);
    assert!(esc.chars().count() <= ingest::INLINE_MAX, "text::short returned {} chars", esc.chars().count());
    assert!(!esc.chars().any(char::is_control), "text::short left a control char: {esc:?}");
});
