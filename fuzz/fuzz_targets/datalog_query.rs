//! The Datalog dialect's parser, parse only: `dialect::parse_query` (the query text of
//! `andon query`) and `dialect::parse_program` (the `--rules FILE.dl` files and `rules/*.dl`).
#![no_main]

use andon::dialect;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = dialect::parse_query("query", &text);
    let _ = dialect::parse_program("fuzz.dl", &text);
});
