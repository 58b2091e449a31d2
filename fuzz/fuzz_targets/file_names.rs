//! File names as bytes through the walk and the index: every name (any bytes but `/` and NUL) must
//! be indexed exactly once under a text that reads back to the same bytes and to a path on disk.
//! Two names that a lossy conversion would merge (`leak\xff.py`, `leak\xfe.py`) stay two files.
//!
//! The input, split at NUL, gives up to six names; each becomes `d/f<name>.py` (so no name is
//! hidden or empty) in a scratch repository (one per process, under $ANDON_FUZZ_SCRATCH, else
//! /dev/shm, else the temp dir), replacing the previous iteration's files, and `index::update`
//! runs incrementally over it.
#![no_main]

#[path = "scratch.rs"]
mod scratch;

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use andon::api::{WalkOverrides, index_options};
use andon::index::{self, walk};
use libfuzzer_sys::fuzz_target;

fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = scratch::dir("names");
        std::fs::create_dir_all(&root).expect("scratch dir");
        root
    })
}

/// The file names the input gives, as raw bytes relative to the repository.
fn names(data: &[u8]) -> BTreeSet<Vec<u8>> {
    data.split(|b| *b == 0)
        .take(6)
        .map(|piece| {
            let mut name = b"d/f".to_vec();
            name.extend(piece.iter().copied().filter(|b| *b != b'/').take(200));
            name.extend_from_slice(b".py");
            name
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let root = root();
    let dir = root.join("d");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let want = names(data);
    for name in &want {
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(name)), b"import os\n").expect("scratch file");
    }
    let opts = index_options(root, &WalkOverrides::default(), false).expect("options");
    index::update(root, &opts, &|_, _| {}).expect("the index is written");
    let idx = index::load(root).expect("the index reads").expect("an index");
    let mut got = BTreeSet::new();
    for f in &idx.files {
        let bytes = andon::text::path_bytes(&f.path).unwrap_or_else(|| panic!("{:?} does not read back", f.path));
        assert_eq!(andon::text::path_text(&bytes), f.path, "the text of a name is not canonical");
        let on_disk = walk::abs_path(root, &f.path).expect("a path on disk");
        assert!(on_disk.exists(), "{:?} maps to {on_disk:?}, which does not exist", f.path);
        assert!(got.insert(bytes), "{:?} is indexed twice", f.path);
    }
    assert_eq!(got, want, "the indexed files are not the files on disk");
});
