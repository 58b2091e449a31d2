//! A proposal as `andon propose --json` reads it (`serde_json::from_str::<Proposal>`, the same
//! call `proposal::pending` makes on artifacts) and `proposal::validate`. A proposal that
//! validates must survive the artifact round trip (written by `propose`, read by the loop).
#![no_main]

use std::path::Path;

use andon::andon_loop::proposal::{self, Proposal};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(p) = serde_json::from_str::<Proposal>(text) else { return };
    if proposal::validate(&p).is_ok() {
        let _ = proposal::artifact_path(Path::new("analysis/andon"), &p.gap);
        let written = serde_json::to_string_pretty(&p).expect("a proposal serializes");
        let back: Proposal = serde_json::from_str(&written).expect("a written proposal reads back");
        assert_eq!(back, p, "the artifact round trip changed the proposal");
    }
});
