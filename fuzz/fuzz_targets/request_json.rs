//! A `{wire, contract, fixDiff}` request as `andon verify --request` reads it
//! (`cycle::request::parse`), then the diff's files as verify reads them
//! (`fix::change_from_diff`). Neither may panic; a parsed request always carries a non-empty
//! diff, and every error names what is wrong.
#![no_main]

use andon::andon_loop::{fix, request};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match request::parse(text) {
        Ok(r) => {
            assert!(!r.diff.trim().is_empty(), "a request without a diff was accepted");
            if let Ok(change) = fix::change_from_diff(&r.diff, "request", &[]) {
                for (_, p) in &change.files {
                    assert!(!p.starts_with('/') && !p.split('/').any(|c| c == ".."), "a path outside: {p}");
                }
            }
        }
        Err(errs) => assert!(!errs.is_empty() && errs.iter().all(|e| !e.is_empty()), "an empty error"),
    }
});
