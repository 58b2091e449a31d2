//! The persisted index: the only on-disk form of facts.
//!
//! On disk ([`store`]): a small head (`.andon/index.bin`: fingerprint, stamp, summary, walk
//! state, the file table and where each file's fact segments are) and immutable packs of encoded
//! segments. A run writes the segments it changed and a new head; a run that changed no fact
//! writes the head alone. The file table comes first in the head so a no-change run decodes
//! nothing else. One writer at a time holds `.andon/lock`.

mod compare;
mod error;
mod lock;
mod look;
mod store;
mod summary;
mod table;
mod update;
pub mod walk;

pub use compare::check;
pub use error::{Error, Unusable};
use lock::{Lock, lock, open_lock};
use look::*;
use summary::*;
pub use update::update;
use update::*;

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use crate::extract::{self, Lang};
use crate::facts::{EXTRACT_DIGEST, Facts, SCHEMA_TEXT, Segment, SegmentBuilder, rel};
use store::{Blob, Head, LoadError, Part, read_head};
use table::TableFacts;
use walk::{FileKind, WalkEntry, WalkOptions};

pub const FORMAT_VERSION: u32 = 9;

/// How an index run tells its caller about long work: files parsed, and a wait for another
/// writer's lock. Any `Fn(done, total)` hears the files alone.
pub trait Watch: Sync {
    /// `done` of `total` files parsed.
    fn files(&self, done: u64, total: u64);
    /// The run waits (`what`: for what, and what to do about it).
    fn waiting(&self, _what: &str) {}
}

impl<F: Fn(u64, u64) + Sync> Watch for F {
    fn files(&self, done: u64, total: u64) {
        self(done, total)
    }
}
pub const INDEX_DIR: &str = ".andon";
pub const INDEX_FILE: &str = "index.bin";

/// Serialization types of the index file; nothing else in the index derives serde traits.
pub mod wire {
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize, Clone, Debug)]
    pub struct IndexHeader {
        pub fingerprint: String,
        /// When the walk of the run that wrote this index started (ns since the epoch).
        pub stamp_ns: u64,
        pub summary: Summary,
        pub walk: WalkStateWire,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default)]
    pub struct WalkStateWire {
        pub options: u64,
        pub dirs: Vec<(String, u64, u64)>,
        pub ignore_files: Vec<(String, u64, u64)>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
    pub struct Summary {
        pub files_by_lang: Vec<(String, u64)>,
        pub manifests: u64,
        pub skipped: u64,
        pub facts: u64,
        pub parse_errors: u64,
        pub files_with_parse_errors: u64,
        pub stages: Vec<StageSummary>,
    }

    #[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
    pub struct StageSummary {
        pub name: String,
        pub root: String,
        pub ecosystem: String,
        pub confidence: String,
        pub source: String,
        pub files: u64,
    }

    pub use crate::facts::FileMeta;

    #[derive(Serialize, Deserialize, Clone, Debug)]
    pub struct SegmentWire {
        pub strings: Vec<String>,
        pub rows: Vec<u32>,
    }
}

use wire::{FileMeta, IndexHeader, StageSummary, Summary};

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// Everything that decides whether a stored index may be trusted by this build of andon.
pub fn fingerprint() -> String {
    let h = |s: &str| xxhash_rust::xxh3::xxh3_64(s.as_bytes());
    let q = extract::lang::query_sources().iter().map(|s| h(s)).fold(0u64, |a, b| a.rotate_left(7) ^ b);
    format!(
        "andon {}; index {FORMAT_VERSION}; schema {:016x}; grammars {} / queries {q:016x}; extract {EXTRACT_DIGEST:016x}",
        env!("CARGO_PKG_VERSION"),
        h(SCHEMA_TEXT),
        extract::lang::grammar_versions(),
    )
}

/// Options of one index run.
#[derive(Clone, Debug)]
pub struct IndexOptions {
    pub walk: WalkOptions,
    /// Files larger than this are recorded as `Skipped(path, "too-large")`.
    pub max_file_size: u64,
    /// Worker threads (None: one per core).
    pub threads: Option<usize>,
    /// Ignore any stored index and parse everything.
    pub rebuild: bool,
}

/// A diagnostic about one path (never fatal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    pub path: String,
    pub line: u32,
    pub kind: String,
    pub message: String,
}

/// What an index run did.
#[derive(Clone, Debug)]
pub struct IndexReport {
    pub root: PathBuf,
    pub index_path: PathBuf,
    pub summary: Summary,
    pub parsed: u64,
    pub reused: u64,
    pub removed: u64,
    /// Files re-read because their size or time changed.
    pub rehashed: u64,
    pub unchanged: bool,
    /// The whole-repo facts (resolution, modules, stages) were computed again, not kept.
    pub resolved: bool,
    /// Why the stored index was not used, if it was not.
    pub rebuilt: Option<String>,
    pub diagnostics: Vec<Diag>,
    pub elapsed_ms: f64,
}

/// A change between the stored index and the working tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub change: &'static str,
}

/// One file's stored facts: the core segment (what resolution reads) and the detail segment
/// (references, calls, spans, visibility, marker texts), each kept encoded until asked for; a
/// loaded index has every core decoded (and verified), a run of `update` decodes only the cores
/// it reads, so a one-file change neither decodes nor rewrites anything but what it changed.
pub struct FileFacts {
    /// Boxed: most files of a large table are never decoded, and the table stays small.
    core: std::sync::OnceLock<Box<Segment>>,
    core_blob: Blob,
    detail: Blob,
}

impl FileFacts {
    fn new(core: Segment, detail: &Segment) -> FileFacts {
        let core_blob = Blob::Owned(store::encode_segment(&core));
        FileFacts { core: Box::new(core).into(), core_blob, detail: Blob::Owned(store::encode_segment(detail)) }
    }

    /// Whether these facts are new: parsed in this run, not read from the index.
    fn is_new(&self) -> bool {
        matches!(self.core_blob, Blob::Owned(_))
    }

    /// Stored facts, not yet decoded.
    fn stored(core_blob: Blob, detail: Blob) -> FileFacts {
        FileFacts { core: std::sync::OnceLock::new(), core_blob, detail }
    }

    /// The core segment, decoded on first use (its checksum verified).
    fn try_core(&self) -> Result<&Segment, Error> {
        if let Some(c) = self.core.get() {
            return Ok(c);
        }
        let c = self.core_blob.decode()?;
        Ok(self.core.get_or_init(|| Box::new(c)))
    }

    /// The core segment. Every core of an index from [`load`] was decoded and verified when it was
    /// loaded.
    pub fn core(&self) -> &Segment {
        self.try_core().expect("a loaded index decoded and verified every core")
    }

    /// The detail segment, decoded (its checksum verified when it was stored).
    pub fn detail(&self) -> Result<Segment, Error> {
        self.detail.decode()
    }
}

/// The loaded index: file table, per-file facts (parallel to `files`) and the repo segment.
pub struct Index {
    pub header: IndexHeader,
    pub files: Vec<FileMeta>,
    pub facts: Vec<FileFacts>,
    pub global: Segment,
    /// Where it is stored and which facts it holds.
    pub stamp: Stamp,
}

/// Where a stored index is (its `.andon` directory) and a key of the facts it holds: the same
/// facts (every segment's checksum, in file-table order, and the extractor's fingerprint) give the
/// same key whatever the stats, the packs or the run that wrote them. Relations derived from an
/// index are kept under this key ([`crate::datalog::kept`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub dir: PathBuf,
    pub facts: u128,
}

impl Stamp {
    fn of(dir: &Path, head: &Head) -> Stamp {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(head.header.fingerprint.as_bytes());
        for (meta, (core, detail)) in head.files.iter().zip(&head.segments) {
            h.update(&(meta.path.len() as u64).to_le_bytes());
            h.update(meta.path.as_bytes());
            h.update(&core.sum.to_le_bytes());
            h.update(&detail.sum.to_le_bytes());
        }
        h.update(&head.global.sum.to_le_bytes());
        Stamp { dir: dir.to_path_buf(), facts: h.digest128() }
    }
}

/// The prefix of the temporary name of a file of relations derived from the index and kept beside
/// it (`crate::datalog::kept`); the writer's process id follows. The index's writer removes those
/// of writers that are gone, as its own.
pub const KEPT_TMP_PREFIX: &str = "derived.tmp.";

/// Why an index whose pack stays missing cannot be read.
fn gone(pack: &str) -> String {
    Error::PackGone { pack: pack.to_string() }.to_string()
}

/// The stamp of `root`'s stored index, from its head and file table (no segment is read); `None`
/// without a usable index.
pub fn stamp(root: &Path) -> Option<Stamp> {
    let dir = root.join(INDEX_DIR);
    read_head_settled(&dir.join(INDEX_FILE)).ok().map(|h| Stamp::of(&dir, &h))
}

/// The head at `path`, read again while a pack its chunks are in was removed meanwhile.
fn read_head_settled(path: &Path) -> Result<Head, LoadError> {
    settled(path.parent().unwrap_or(Path::new(".")), || read_head(path))
}

/// `read` (a read of the index in `dir` without the writer's lock) again while a pack it needs was
/// removed meanwhile (a writer replaced the head: the new one names packs that are there). A
/// reader that keeps losing the race to writers reads once more under the shared lock, which
/// waits for the writer at work.
fn settled<T>(dir: &Path, read: impl Fn() -> Result<T, LoadError>) -> Result<T, LoadError> {
    for _ in 0..5 {
        match read() {
            Err(LoadError::Moved(_)) => {}
            other => return other,
        }
    }
    match open_lock(&dir.join("lock"), false) {
        Ok(f) if f.lock_shared().is_ok() => read(),
        _ => read(),
    }
}

impl Index {
    /// Every segment, details decoded.
    pub fn segments(&self) -> Result<Vec<Segment>, Error> {
        let mut out = Vec::with_capacity(self.facts.len() * 2 + 1);
        for f in &self.facts {
            out.push(f.core().clone());
            out.push(f.detail()?);
        }
        out.push(self.global.clone());
        Ok(out)
    }

    /// All facts, merged and sorted.
    pub fn facts(&self) -> Result<Facts, Error> {
        Ok(Facts::from_segments(&self.segments()?))
    }
}

pub fn index_path(root: &Path) -> PathBuf {
    root.join(INDEX_DIR).join(INDEX_FILE)
}

/// The stored index as `update` reads it: the packs opened, no segment read.
struct Stored {
    files: Vec<FileMeta>,
    /// Each file's core and detail, where they are stored.
    segments: Vec<(store::Loc, store::Loc)>,
    open: BTreeMap<u64, std::sync::Arc<store::Pack>>,
    repo: RepoBlobs,
    packs: Vec<(u64, u64)>,
    /// Where the file table's chunks are, with how many files each holds.
    chunks: Vec<(store::Loc, u64)>,
    summary: Summary,
}

/// The whole-repo segment and the record of the questions its resolution asked of the files'
/// surfaces ([`crate::resolve::asked`]), as blobs.
struct RepoBlobs {
    global: Blob,
    reads: Blob,
}

/// The stored index's packs, opened; a segment is read and decoded when it is used.
fn read_stored_lazily(dir: &Path, head: Head) -> Result<Stored, LoadError> {
    let open = store::open_packs(dir, &head)?;
    let repo = RepoBlobs { global: Blob::lazy(&open, head.global), reads: Blob::lazy(&open, head.reads) };
    Ok(Stored {
        files: head.files,
        segments: head.segments,
        open,
        repo,
        packs: head.packs,
        chunks: head.chunks,
        summary: head.header.summary.clone(),
    })
}

/// The stored index's packs, read whole, every core and the repo segment decoded and verified,
/// and every detail's checksum verified (so a damaged detail is found where a command can index
/// again, not when it is listed).
fn read_body(dir: &Path, head: Head) -> Result<Index, LoadError> {
    let packs = store::read_packs(dir, &head)?;
    let bad = |e: Error| LoadError::Untrusted(e.to_string());
    let global = Blob::stored(&packs, head.global).decode().map_err(bad)?;
    let facts: Vec<FileFacts> = head
        .segments
        .iter()
        .map(|&(c, d)| FileFacts::stored(Blob::stored(&packs, c), Blob::stored(&packs, d)))
        .collect();
    for f in &facts {
        f.try_core().map_err(bad)?;
        f.detail.verify().map_err(bad)?;
    }
    let stamp = Stamp::of(dir, &head);
    Ok(Index { header: head.header, files: head.files, facts, global, stamp })
}

/// Reads the head and packs of `root`'s index; a pack a writer removed meanwhile means the head
/// was replaced: read again.
fn read_stored(root: &Path) -> Result<Index, LoadError> {
    let dir = root.join(INDEX_DIR);
    match settled(&dir, || read_head(&index_path(root)).and_then(|h| read_body(&dir, h))) {
        Err(LoadError::Moved(pack)) => Err(LoadError::Untrusted(gone(&pack))),
        other => other,
    }
}

/// Loads the stored index of `root` (read-only, no lock: writers replace the head atomically and
/// never modify a pack).
pub fn load(root: &Path) -> Result<Option<Index>, Error> {
    match read_stored(root) {
        Ok(i) => Ok(Some(i)),
        Err(LoadError::Missing) => Ok(None),
        Err(LoadError::Untrusted(why)) => Err(Error::Untrusted(why)),
        Err(LoadError::Moved(pack)) => Err(Error::Untrusted(gone(&pack))),
    }
}

/// Copies the stored index of the repository at `from` into the repository at `to` (so an index
/// of another tree of the same repository starts from it: segments are keyed by path and
/// content).
pub fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    store::copy(&from.join(INDEX_DIR), &to.join(INDEX_DIR))
}

/// Verifies every blob of the stored index of `root`, details too (`andon index --check`).
pub fn verify(root: &Path) -> Result<(), Error> {
    let idx = match read_stored(root) {
        Ok(i) => i,
        Err(LoadError::Missing) => return Ok(()),
        Err(LoadError::Untrusted(why)) => return Err(Error::Untrusted(why)),
        Err(LoadError::Moved(pack)) => return Err(Error::PackGone { pack }),
    };
    idx.facts.iter().try_for_each(|f| f.detail().map(drop))
}

fn check_root(root: &Path) -> Result<PathBuf, Error> {
    match fs::metadata(root) {
        Ok(m) if m.is_dir() => fs::canonicalize(root).map_err(io(root)),
        Ok(_) => Err(Error::NotADirectory(root.to_path_buf())),
        Err(_) => Err(Error::NoSuchPath(root.to_path_buf())),
    }
}
