//! `.andon/index.bin` as every command reads it: `index::load` (preamble, checksums, header,
//! file table, segments), the decoded facts, and `index::check` against the files on disk.
//!
//! At start the target indexes a small repository of each language in a scratch directory (one
//! per process, under $ANDON_FUZZ_SCRATCH, else /dev/shm, else the temp dir) and keeps the real
//! index's bytes as a template. The first input byte picks the mode: below 128, the rest is a list
//! of 3-byte edits (a u16 LE offset into the template, a byte XORed in) and the checksums are
//! resealed, so damage reaches the decoder past the checksum; otherwise the rest is the file as it
//! is. Whatever the bytes, nothing may panic; a damaged index is refused, never half-read.
#![no_main]

#[path = "scratch.rs"]
mod scratch;

use std::path::PathBuf;
use std::sync::OnceLock;

use andon::api::{WalkOverrides, index_options};
use andon::index::{self, IndexOptions};
use libfuzzer_sys::fuzz_target;

const PREAMBLE: usize = 60;

struct Repo {
    root: PathBuf,
    opts: IndexOptions,
    template: Vec<u8>,
}

const FILES: &[(&str, &str)] = &[
    ("pyproject.toml", "[project]\nname = \"acme\"\n"),
    ("acme/__init__.py", "from acme.core import run\n"),
    ("acme/core.py", "import os\n\ndef run():\n    return os.sep  # TODO: more\n"),
    ("web/package.json", "{\"name\": \"web\"}\n"),
    ("web/index.ts", "import { x } from './x';\nexport const y = x;\n"),
    ("web/x.ts", "export const x = 1;\n"),
    ("core/Cargo.toml", "[package]\nname = \"core\"\nversion = \"0.1.0\"\n"),
    ("core/src/lib.rs", "pub mod a;\npub use a::f;\n"),
    ("core/src/a.rs", "pub fn f() {}\n"),
];

fn repo() -> &'static Repo {
    static REPO: OnceLock<Repo> = OnceLock::new();
    REPO.get_or_init(|| {
        let root = scratch::dir("index");
        for (path, text) in FILES {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).expect("scratch dir");
            std::fs::write(p, text).expect("scratch file");
        }
        let opts = index_options(&root, &WalkOverrides::default(), false).expect("options");
        index::update(&root, &opts, &|_, _| {}).expect("the template index");
        let template = std::fs::read(index::index_path(&root)).expect("the template bytes");
        Repo { root, opts, template }
    })
}

/// `bytes` with its preamble's lengths and checksums made consistent with its payload.
fn reseal(mut bytes: Vec<u8>) -> Vec<u8> {
    if bytes.len() < PREAMBLE {
        return bytes;
    }
    let rest = bytes.len() - PREAMBLE;
    let head_len = (u64::from_le_bytes(bytes[12..20].try_into().unwrap()) as usize).min(rest);
    let (head, body) = bytes[PREAMBLE..].split_at(head_len);
    let sums = (xxhash_rust::xxh3::xxh3_128(head), xxhash_rust::xxh3::xxh3_128(body));
    let body_len = body.len() as u64;
    bytes[12..20].copy_from_slice(&(head_len as u64).to_le_bytes());
    bytes[20..28].copy_from_slice(&body_len.to_le_bytes());
    bytes[28..44].copy_from_slice(&sums.0.to_le_bytes());
    bytes[44..60].copy_from_slice(&sums.1.to_le_bytes());
    bytes
}

fuzz_target!(|data: &[u8]| {
    let r = repo();
    let Some((&mode, rest)) = data.split_first() else { return };
    let bytes = if mode < 128 {
        let mut b = r.template.clone();
        for e in rest.chunks_exact(3) {
            let at = u16::from_le_bytes([e[0], e[1]]) as usize % b.len();
            b[at] ^= e[2];
        }
        reseal(b)
    } else {
        rest.to_vec()
    };
    std::fs::write(index::index_path(&r.root), &bytes).expect("write scratch index");
    if let Ok(Some(idx)) = index::load(&r.root) {
        let _ = idx.facts();
    }
    let _ = index::check(&r.root, &r.opts);
});
