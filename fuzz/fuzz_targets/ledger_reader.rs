//! `ledger.jsonl` as `andon ledger check`, `andon loop` and `andon status` read it: parse, fold,
//! render `ledger.md`, the query facts and the gate's decision for each gap.
#![no_main]

use andon::config::BlastRadius;
use andon::ledger::{self, Record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let log = ledger::parse(&text);
    let (state, _issues) = ledger::fold(&log);
    // `ledger::check` renders whenever the header parsed, whatever the issues.
    if let Some(h) = &log.header {
        let records: Vec<Record> = log.records.iter().map(|(_, r)| r.clone()).collect();
        let _ = ledger::render(h, &state, &records);
    }
    let _ = ledger::facts(&state);
    for gap in state.gaps.keys().take(8) {
        for ceiling in BlastRadius::ALL {
            let _ = ledger::andon_rule::rule_on(&state, gap, ceiling, None);
            let _ = ledger::andon_rule::rule_on(&state, gap, ceiling, Some("d"));
        }
    }
});
