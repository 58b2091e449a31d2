//! The persisted index: the only on-disk form of facts.
//!
//! On disk ([`store`]): a small head (`.andon/index.bin`: fingerprint, stamp, summary, walk
//! state, the file table and where each file's fact segments are) and immutable packs of encoded
//! segments. A run writes the segments it changed and a new head; a run that changed no fact
//! writes the head alone. The file table comes first in the head so a no-change run decodes
//! nothing else. One writer at a time holds `.andon/lock`.

mod store;
mod table;
pub mod walk;

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

pub const FORMAT_VERSION: u32 = 8;
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

/// Why an index run failed (file-system problems, never source text).
#[derive(Debug)]
pub enum IndexError {
    NoSuchPath(PathBuf),
    NotADirectory(PathBuf),
    Io {
        path: PathBuf,
        err: std::io::Error,
    },
    /// The index must be written, but `.andon/` cannot be (why).
    ReadOnly {
        dir: PathBuf,
        why: String,
    },
    Config(String),
}

impl std::fmt::Display for IndexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IndexError::NoSuchPath(p) => write!(f, "{}: no such directory; pass the repository to index", p.display()),
            IndexError::NotADirectory(p) => write!(f, "{}: not a directory; pass the repository root", p.display()),
            IndexError::Io { path, err } => write!(f, "{}: {err}", path.display()),
            IndexError::ReadOnly { dir, why } => write!(
                f,
                "{}: read-only ({why}), and the index is stale or missing: make the directory writable, \
                 or run `andon index` where it is, then run this command again",
                dir.display()
            ),
            IndexError::Config(m) => write!(f, "{m}"),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
    move |err| IndexError::Io { path: path.to_path_buf(), err }
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
    fn try_core(&self) -> Result<&Segment, String> {
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
    pub fn detail(&self) -> Result<Segment, String> {
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
    format!("{pack}, a pack it names, is missing (removed, or a writer keeps replacing the index)")
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
    pub fn segments(&self) -> Result<Vec<Segment>, String> {
        let mut out = Vec::with_capacity(self.facts.len() * 2 + 1);
        for f in &self.facts {
            out.push(f.core().clone());
            out.push(f.detail()?);
        }
        out.push(self.global.clone());
        Ok(out)
    }

    /// All facts, merged and sorted.
    pub fn facts(&self) -> Result<Facts, String> {
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
    let bad = LoadError::Untrusted;
    let global = Blob::stored(&packs, head.global).decode().map_err(bad)?;
    let facts: Vec<FileFacts> = head
        .segments
        .iter()
        .map(|&(c, d)| FileFacts::stored(Blob::stored(&packs, c), Blob::stored(&packs, d)))
        .collect();
    for f in &facts {
        f.try_core().map_err(LoadError::Untrusted)?;
        f.detail.verify().map_err(LoadError::Untrusted)?;
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
pub fn load(root: &Path) -> Result<Option<Index>, String> {
    match read_stored(root) {
        Ok(i) => Ok(Some(i)),
        Err(LoadError::Missing) => Ok(None),
        Err(LoadError::Untrusted(why)) => Err(why),
        Err(LoadError::Moved(pack)) => Err(gone(&pack)),
    }
}

/// Copies the stored index of the repository at `from` into the repository at `to` (so an index
/// of another tree of the same repository starts from it: segments are keyed by path and
/// content).
pub fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    store::copy(&from.join(INDEX_DIR), &to.join(INDEX_DIR))
}

/// Verifies every blob of the stored index of `root`, details too (`andon index --check`).
pub fn verify(root: &Path) -> Result<(), String> {
    let idx = match read_stored(root) {
        Ok(i) => i,
        Err(LoadError::Missing) => return Ok(()),
        Err(LoadError::Untrusted(why)) => return Err(why),
        Err(LoadError::Moved(pack)) => return Err(gone(&pack)),
    };
    idx.facts.iter().try_for_each(|f| f.detail().map(drop))
}

/// Writes an index: its new segments to a new pack, then the head.
fn write_index(
    dir: &Path,
    header: &IndexHeader,
    files: &[FileMeta],
    facts: TableFacts,
    repo: &RepoBlobs,
    (packs, chunks, untouched): (&[(u64, u64)], &[(store::Loc, u64)], Option<&[bool]>),
) -> Result<(), IndexError> {
    let place = |b: &Blob| (b.loc(), b.len());
    let blobs = facts.places().chain([place(&repo.global), place(&repo.reads)]);
    let census = store::Census::of(blobs);
    let bytes = census.due(packs, chunks);
    // a compaction copies every blob: each file's stored ones are read
    let facts = if bytes { TableFacts::Each(facts.each()) } else { facts };
    let segments = |i: usize| facts.parts(i, bytes);
    let (global, reads) = (Part::of(&repo.global, bytes), Part::of(&repo.reads, bytes));
    let census = &census;
    store::write(
        dir,
        &store::Update { header, files, segments: &segments, global, reads, packs, chunks, census, untouched },
    )
}

/// The lock a run holds on `.andon/` while it lasts.
struct Lock {
    /// The writer's exclusive lock; where `.andon/` is read-only, a shared lock when the lock file
    /// could be opened (so no writer replaces the index while it is read), else none.
    _file: Option<File>,
    /// Why nothing may be written, when `.andon/` is read-only.
    read_only: Option<String>,
}

/// Creates `.andon/` (with a `.gitignore` so the cache is never committed) and takes the writer
/// lock; where `.andon/` is read-only, a reader's lock.
fn lock(root: &Path) -> Result<(PathBuf, Lock), IndexError> {
    let dir = root.join(INDEX_DIR);
    if let Err(err) = fs::create_dir_all(&dir) {
        return if read_only(&err) {
            Ok((dir, Lock { _file: None, read_only: Some(err.to_string()) }))
        } else {
            Err(io(&dir)(err))
        };
    }
    let gi = dir.join(".gitignore");
    if fs::symlink_metadata(&gi).is_err() {
        let _ = fs::write(&gi, "*\n");
    }
    let lock_path = dir.join("lock");
    match open_lock(&lock_path, true) {
        Ok(f) => {
            f.lock().map_err(io(&lock_path))?;
            remove_dead_temporaries(&dir);
            Ok((dir, Lock { _file: Some(f), read_only: None }))
        }
        Err(err) if read_only(&err) => {
            let why = err.to_string();
            match open_lock(&lock_path, false) {
                Ok(f) => {
                    f.lock_shared().map_err(io(&lock_path))?;
                    Ok((dir, Lock { _file: Some(f), read_only: Some(why) }))
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound || read_only(&err) => {
                    Ok((dir, Lock { _file: None, read_only: Some(why) }))
                }
                Err(err) => Err(io(&lock_path)(err)),
            }
        }
        Err(err) => Err(io(&lock_path)(err)),
    }
}

/// Opens the lock file (created when `write`) without blocking on a FIFO or following a symbolic
/// link, and refuses anything but a regular file.
fn open_lock(path: &Path, write: bool) -> std::io::Result<File> {
    let mut o = fs::OpenOptions::new();
    if write {
        o.create(true).truncate(false).write(true);
    } else {
        o.read(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK | libc::O_NOFOLLOW);
    let not_regular =
        || std::io::Error::other("not a regular file (a FIFO, device, socket, directory or symbolic link); remove it");
    match o.open(path) {
        Ok(f) if f.metadata()?.is_file() => Ok(f),
        Ok(_) => Err(not_regular()),
        Err(_) if fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) => Err(not_regular()),
        Err(err) => Err(err),
    }
}

/// Whether `err` says the file system refuses to be written here (permissions, a read-only mount).
fn read_only(err: &std::io::Error) -> bool {
    matches!(err.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem)
}

/// Removes the temporary index files of writers that are gone (their process id is not alive),
/// never a live process's. Called under the writer's lock. Only where liveness can be told
/// (Linux: `/proc/<pid>`); elsewhere they stay.
fn remove_dead_temporaries(dir: &Path) {
    if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| {
            [store::TMP_PREFIX, store::PACK_TMP_PREFIX, KEPT_TMP_PREFIX].iter().find_map(|p| n.strip_prefix(p))
        }) else {
            continue;
        };
        // `<pid>` or `<pid>.<n>`
        let pid = pid.split_once('.').map_or(pid, |(p, _)| p);
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
            let _ = fs::remove_file(e.path());
        }
    }
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

fn kind_code(k: FileKind) -> (u8, Option<Lang>) {
    match k {
        FileKind::Source(l) => (0, Some(l)),
        FileKind::Manifest => (1, None),
        FileKind::SourceAndManifest(l) => (2, Some(l)),
    }
}

/// Result of looking at one walked file.
enum Job {
    /// The stored file at this place, with new stats when they changed (`None`: as stored; boxed,
    /// as most files of a run are reused as stored).
    Reuse(usize, Option<Box<FileMeta>>),
    /// Parsed: boxed, so the table of jobs of a large repository stays small.
    New(Box<(FileMeta, FileFacts, Vec<Diag>)>),
}

/// Whether the stored entry can be trusted from its size and time alone.
fn stat_fresh(old: &FileMeta, e: &WalkEntry, stamp_ns: u64, max_size: u64) -> bool {
    // A file written in the same instant the previous walk started may have changed after it was
    // read ("racily clean"): such files are re-hashed. A changed size limit re-decides too-large.
    old.size == e.size
        && old.mtime_ns == e.mtime_ns
        && e.mtime_ns < stamp_ns
        && old.kind == kind_code(e.kind).0
        && (old.skipped.as_deref() == Some("too-large")) == (e.size > max_size)
}

/// When no directory or ignore file the last walk saw has changed, or only directories whose
/// listing of what matters is the same ([`walk::WalkState::refreshed`]), the walk's result is the
/// stored file table with fresh stats: a content edit or a new notes file then walks nothing.
fn rewalk_from_table(root: &Path, h: &Head, opts: &IndexOptions) -> Option<(Vec<WalkEntry>, walk::WalkState)> {
    let w = &h.header.walk;
    let stored = walk::WalkState { options: w.options, dirs: w.dirs.clone(), ignore_files: w.ignore_files.clone() };
    let state = stored.refreshed(root, &opts.walk, h.header.stamp_ns)?;
    // one stat per file, spread over the workers: on a large tree the stats are the run
    let entries = h
        .files
        .par_iter()
        .with_min_len(256)
        .map(|f| {
            let abs = walk::abs_path(root, &f.path)?;
            let m = if opts.walk.follow_links { fs::metadata(&abs) } else { fs::symlink_metadata(&abs) }.ok()?;
            if !m.is_file() {
                return None;
            }
            let mtime_ns = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0);
            Some(WalkEntry { rel: f.path.clone(), abs, kind: walk::classify(&f.path)?, size: m.len(), mtime_ns })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((entries, state))
}

/// Runs `work` on `threads` workers when a count was asked, else on the shared pool.
fn in_pool<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> Result<T, IndexError> {
    match threads {
        Some(n) => Ok(rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|e| IndexError::Config(format!("cannot start {n} threads: {e}")))?
            .install(work)),
        None => Ok(work()),
    }
}

/// Brings the index of `root` up to date and returns what was done.
pub fn update(
    root: &Path,
    opts: &IndexOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<IndexReport, IndexError> {
    let t0 = Instant::now();
    let root = check_root(root)?;
    let (dir, lock) = lock(&root)?;
    let stamp_ns = now_ns();
    let ipath = dir.join(INDEX_FILE);
    let (head, rebuilt) = stored_head(&root, &ipath, opts);
    // Fast path: when no directory, ignore file or indexed file changed since the last run, the
    // walk is skipped and nothing but the file table is read.
    let fast = match &head {
        Some(h) => in_pool(opts.threads, || rewalk_from_table(&root, h, opts))?,
        None => None,
    };
    if let (Some(h), Some((entries, state))) = (&head, &fast)
        && state.dirs == h.header.walk.dirs
        && entries.iter().zip(&h.files).all(|(e, f)| stat_fresh(f, e, h.header.stamp_ns, opts.max_file_size))
    {
        let head = head.expect("checked above");
        let reused = head.files.len() as u64;
        return Ok(unchanged_report(root, ipath, head.header.summary, reused, 0, rebuilt, Vec::new(), t0));
    }
    let from_table = fast.is_some();
    let (walked, walk_errors, walk_state) = match fast {
        Some((entries, state)) => (entries, Vec::new(), state),
        None => walk::walk(&root, &opts.walk).map_err(IndexError::Config)?,
    };
    let mut diagnostics: Vec<Diag> = walk_errors
        .iter()
        .map(|e| Diag { path: e.rel.clone(), line: 0, kind: e.reason.to_string(), message: e.message.clone() })
        .collect();
    let old_files: &[FileMeta] = head.as_ref().map(|h| h.files.as_slice()).unwrap_or(&[]);
    let old_stamp = head.as_ref().map(|h| h.header.stamp_ns).unwrap_or(0);
    // a walk that is the stored table has file `i` at `i`
    let olds = if from_table { (0..walked.len()).map(Some).collect() } else { old_indices(&walked, old_files) };
    let (jobs, rehashed) = look_at_all(&walked, old_files, &olds, old_stamp, opts, progress)?;
    let tally = Tally::of(&jobs, &olds, old_files, rehashed);
    // other walk options or another root (a moved repository, an index copied to another tree:
    // the root's name names a package) resolve again
    let options_changed = head.as_ref().is_some_and(|h| h.header.walk.options != walk_state.options);
    let structure_changed = tally.parsed > 0 || tally.removed > 0 || head.is_none() || options_changed;
    let walk_wire = wire::WalkStateWire {
        options: walk_state.options,
        dirs: walk_state.dirs,
        ignore_files: walk_state.ignore_files,
    };
    let walk_changed = head
        .as_ref()
        .is_none_or(|h| h.header.walk.dirs != walk_wire.dirs || h.header.walk.ignore_files != walk_wire.ignore_files);
    if let Some(why) = lock.read_only.as_ref().filter(|_| structure_changed) {
        return Err(IndexError::ReadOnly { dir, why: why.clone() });
    }
    // Where nothing can be written, new stats or directory times change no fact: the stored
    // index stands.
    if !structure_changed && ((!tally.metas_changed && !walk_changed) || lock.read_only.is_some()) {
        let head = head.expect("an unchanged index exists");
        let diags = with_stored_diags(diagnostics, &[]);
        return Ok(unchanged_report(
            root,
            ipath,
            head.header.summary,
            tally.reused,
            tally.rehashed,
            rebuilt,
            diags,
            t0,
        ));
    }
    // No fact changed, only stats or directory times: the head alone is written.
    if !structure_changed {
        let head = head.expect("an unchanged index exists");
        return head_only(root, ipath, &dir, head, jobs, stamp_ns, walk_wire, (tally, rebuilt, diagnostics), t0);
    }
    let rebuild = |why: String, lock: Lock| {
        // The head was sound but the packs are not: parse everything again.
        let why = format!("{}: {why}; rebuilding", rel_display(&root, &ipath));
        drop(lock);
        update(&root, &IndexOptions { rebuild: true, ..opts.clone() }, progress).map(|mut r| {
            r.rebuilt = Some(why);
            r
        })
    };
    let old = match stored_body(&dir, head) {
        Ok(old) => old,
        Err(why) => return rebuild(why, lock),
    };
    let (packs, chunks, old_summary) =
        old.as_ref().map(|s| (s.packs.clone(), s.chunks.clone(), Some(s.summary.clone()))).unwrap_or_default();
    let untouched = untouched(&jobs, &olds, old.as_ref().map_or(0, |s| s.files.len()));
    let (files, facts, replaced, old_repo) = assemble(jobs, &olds, old, &mut diagnostics);
    // the whole-repo facts stand when no file came or went, the walk is the same, and every
    // changed file gives resolution the same inputs: then only the changed files' cores are decoded
    let stands = tally.removed == 0
        && !options_changed
        && replaced.len() as u64 == tally.parsed
        && old_repo.as_ref().is_some_and(|r| repo_stands(r, &files, &facts, &replaced));
    let (summary, repo_blobs, facts) = match (old_repo, old_summary) {
        (Some(repo), Some(old_summary)) if stands => {
            let changed: Vec<Swap> = replaced
                .iter()
                .map(|r| {
                    let new = facts.at(r.at).expect("a re-parsed file's facts").core();
                    ((&r.meta, r.facts.core()), (&files[r.at], new))
                })
                .collect();
            let summary = summary_after(&old_summary, &changed);
            (summary, repo, facts)
        }
        _ => {
            let facts = facts.each();
            for f in &facts {
                f.core_blob.read_pack();
            }
            let cores = match facts.iter().map(FileFacts::try_core).collect::<Result<Vec<&Segment>, String>>() {
                Ok(c) => c,
                Err(why) => return rebuild(why, lock),
            };
            let resolved = crate::resolve::resolve(&files, &cores, &root_name(&root), opts.walk.stream.as_ref());
            let summary = summarize(&files, &cores, &resolved.global);
            let repo = RepoBlobs {
                global: Blob::Owned(store::encode_segment(&resolved.global)),
                reads: Blob::Owned(resolved.reads),
            };
            (summary, repo, TableFacts::Each(facts))
        }
    };
    // the diagnostics of this run: its walk's and those of the files it parsed, whether the
    // whole-repo facts were computed or kept
    let parsed: Vec<&Segment> = facts.parsed().into_iter().map(FileFacts::core).collect();
    let diagnostics = with_stored_diags(diagnostics, &parsed);
    let header = IndexHeader { fingerprint: fingerprint(), stamp_ns, summary, walk: walk_wire };
    write_index(&dir, &header, &files, facts, &repo_blobs, (&packs, &chunks, untouched.as_deref()))?;
    Ok(IndexReport {
        root,
        index_path: ipath,
        summary: header.summary,
        parsed: tally.parsed,
        reused: tally.reused,
        removed: tally.removed,
        rehashed: tally.rehashed,
        unchanged: false,
        resolved: !stands,
        rebuilt,
        diagnostics,
        elapsed_ms: ms(t0),
    })
}

/// Whether the stored whole-repo facts stand for the new file table: every re-parsed file
/// ([`Replaced`]) gives resolution the same inputs but for names of its
/// surface that resolution never asked about, as the stored record of its questions shows (a
/// record or segment that cannot be read stands for nothing).
fn repo_stands(repo: &RepoBlobs, files: &[FileMeta], facts: &TableFacts, replaced: &[Replaced]) -> bool {
    let mut reads = None;
    replaced.iter().all(|r| {
        let i = &r.at;
        let Some(new) = facts.at(*i) else { return false };
        let (Ok(old), Ok(new)) = (r.facts.try_core(), new.try_core()) else { return false };
        let Some(change) = crate::resolve::input_change(&files[*i], old, new) else { return false };
        if change.is_none() {
            return true;
        }
        let Some(reads) = *reads.get_or_insert_with(|| repo.reads.verified_bytes()) else { return false };
        !crate::resolve::asked(reads, &files[*i].path, &change)
    })
}

/// The stored index's head, unless a rebuild was requested or it cannot be trusted; with why
/// the stored index is not used, when it is not.
fn stored_head(root: &Path, ipath: &Path, opts: &IndexOptions) -> (Option<Head>, Option<String>) {
    if opts.rebuild {
        return (None, Some("rebuild requested".to_string()));
    }
    match read_head(ipath) {
        Ok(h) => match store::packs_present(ipath.parent().unwrap_or(root), &h) {
            Ok(()) => (Some(h), None),
            Err(why) => (None, Some(format!("{}: {why}; rebuilding", rel_display(root, ipath)))),
        },
        Err(LoadError::Missing) => (None, None),
        Err(LoadError::Untrusted(why)) => (None, Some(format!("{}: {why}; rebuilding", rel_display(root, ipath)))),
        Err(LoadError::Moved(pack)) => {
            (None, Some(format!("{}: {}; rebuilding", rel_display(root, ipath), gone(&pack))))
        }
    }
}

/// A run in which no fact changed but stats or directory times did: the new file table and walk
/// state go to a new head, which names the stored segments where they are (no pack is read).
#[allow(clippy::too_many_arguments)]
fn head_only(
    root: PathBuf,
    ipath: PathBuf,
    dir: &Path,
    head: Head,
    jobs: Vec<Job>,
    stamp_ns: u64,
    walk: wire::WalkStateWire,
    (tally, rebuilt, diagnostics): (Tally, Option<String>, Vec<Diag>),
    t0: Instant,
) -> Result<IndexReport, IndexError> {
    let olds: Vec<Option<usize>> =
        jobs.iter().map(|j| if let Job::Reuse(oi, _) = j { Some(*oi) } else { None }).collect();
    let untouched = untouched(&jobs, &olds, head.files.len());
    let header = IndexHeader { fingerprint: fingerprint(), stamp_ns, summary: head.header.summary.clone(), walk };
    // the stored blobs, opened (not read): when the packs are due for compaction, it copies them
    // like any run's (a run of stats alone writes the chunks of the files whose stats changed)
    let (packs, chunks) = (head.packs.clone(), head.chunks.clone());
    let stored = read_stored_lazily(dir, head).map_err(|e| {
        IndexError::Config(match e {
            LoadError::Untrusted(why) => why,
            _ => "a pack the index names is missing; run `andon index --rebuild`".into(),
        })
    })?;
    let mut diags = Vec::new();
    let (files, facts, replaced, repo) = assemble(jobs, &olds, Some(stored), &mut diags);
    debug_assert!(replaced.is_empty() && diags.is_empty(), "no file was parsed");
    let repo = repo.expect("a stored index");
    write_index(dir, &header, &files, facts, &repo, (&packs, &chunks, untouched.as_deref()))?;
    Ok(IndexReport {
        root,
        index_path: ipath,
        summary: header.summary,
        parsed: 0,
        reused: tally.reused,
        removed: 0,
        rehashed: tally.rehashed,
        unchanged: false,
        resolved: false,
        rebuilt,
        diagnostics: with_stored_diags(diagnostics, &[]),
        elapsed_ms: ms(t0),
    })
}

/// When the walked files are the stored table (file `i` at `i`): per file, whether it is reused
/// as stored (no new stats, no new facts).
fn untouched(jobs: &[Job], olds: &[Option<usize>], stored: usize) -> Option<Vec<bool>> {
    let same = olds.len() == stored && olds.iter().enumerate().all(|(i, o)| *o == Some(i));
    same.then(|| jobs.iter().map(|j| matches!(j, Job::Reuse(_, None))).collect())
}

/// Where each walked file is in the stored file table, if it is there. When the walk is the
/// stored table with fresh stats (no directory changed), file `i` is at `i`.
fn old_indices(walked: &[WalkEntry], old_files: &[FileMeta]) -> Vec<Option<usize>> {
    if walked.len() == old_files.len() && walked.iter().zip(old_files).all(|(w, f)| w.rel == f.path) {
        return (0..walked.len()).map(Some).collect();
    }
    let by_path: HashMap<&str, usize> = old_files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
    walked.iter().map(|e| by_path.get(e.rel.as_str()).copied()).collect()
}

/// Each walked file's job, and how many files were read.
type Looked = (Vec<Job>, u64);

/// Looks at every walked file, in walk order (`olds`: where each is in the stored table,
/// [`old_indices`]). Stat-fresh files are reused without reading; everything else is read, hashed
/// and (if the hash changed) parsed, in parallel and largest
/// first so one huge file never waits at the end. Also returns how many files were read.
fn look_at_all(
    walked: &[WalkEntry],
    old_files: &[FileMeta],
    olds: &[Option<usize>],
    old_stamp: u64,
    opts: &IndexOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Looked, IndexError> {
    let mut jobs: Vec<Option<Job>> = Vec::with_capacity(walked.len());
    let mut todo: Vec<usize> = Vec::new();
    for (i, e) in walked.iter().enumerate() {
        match olds[i] {
            Some(oi) if stat_fresh(&old_files[oi], e, old_stamp, opts.max_file_size) => {
                jobs.push(Some(Job::Reuse(oi, None)))
            }
            _ => {
                jobs.push(None);
                todo.push(i);
            }
        }
    }
    todo.sort_by_key(|&i| std::cmp::Reverse(walked[i].size));
    let total = todo.len() as u64;
    let done = std::sync::atomic::AtomicU64::new(0);
    let work = || -> Vec<(usize, Job)> {
        todo.par_iter()
            .with_max_len(1)
            .map_init(extract::Context::new, |ctx, &i| {
                let e = &walked[i];
                let old = olds[i].map(|oi| (oi, &old_files[oi]));
                let job = look_at(ctx, e, old, opts.max_file_size);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, total);
                (i, job)
            })
            .collect()
    };
    let results = in_pool(opts.threads, work)?;
    for (i, job) in results {
        jobs[i] = Some(job);
    }
    let jobs = jobs.into_iter().map(|j| j.expect("every walked file was looked at")).collect();
    Ok((jobs, todo.len() as u64))
}

/// What looking at the walked files found, against the stored file table.
struct Tally {
    parsed: u64,
    reused: u64,
    removed: u64,
    /// Files re-read because their size or time changed.
    rehashed: u64,
    /// A reused file's stored entry changed (its size or time).
    metas_changed: bool,
}

impl Tally {
    /// Counts the parsed, reused and removed files of one run.
    /// (`olds`: where each walked file is in the stored table, [`old_indices`]).
    fn of(jobs: &[Job], olds: &[Option<usize>], old_files: &[FileMeta], rehashed: u64) -> Tally {
        let parsed = jobs.iter().filter(|j| matches!(j, Job::New(..))).count() as u64;
        let still = olds.iter().flatten().count() as u64;
        Tally {
            parsed,
            reused: jobs.len() as u64 - parsed,
            removed: old_files.len() as u64 - still,
            rehashed,
            metas_changed: jobs.iter().any(|j| matches!(j, Job::Reuse(oi, Some(m)) if old_files[*oi] != **m)),
        }
    }
}

/// The stored index's packs, read (`None`: no stored index); `Err` says why a sound head has
/// untrustworthy packs.
fn stored_body(dir: &Path, head: Option<Head>) -> Result<Option<Stored>, String> {
    match head.map(|h| read_stored_lazily(dir, h)) {
        Some(Ok(i)) => Ok(Some(i)),
        Some(Err(LoadError::Untrusted(why))) => Err(why),
        Some(Err(LoadError::Moved(pack))) => Err(gone(&pack)),
        Some(Err(LoadError::Missing)) | None => Ok(None),
    }
}

/// A re-parsed file that was indexed before: its place in the new table, its stored entry and
/// facts.
struct Replaced {
    at: usize,
    meta: FileMeta,
    facts: FileFacts,
}

/// The new file table and its facts, in walk order: a reused file keeps its stored facts, a new
/// one brings its own (and its diagnostics). Also returns each re-parsed file that was indexed
/// before, and the stored repo blobs.
#[allow(clippy::type_complexity)]
fn assemble(
    jobs: Vec<Job>,
    olds: &[Option<usize>],
    old: Option<Stored>,
    diagnostics: &mut Vec<Diag>,
) -> (Vec<FileMeta>, TableFacts, Vec<Replaced>, Option<RepoBlobs>) {
    let (mut old_files, segments, open, old_repo) = match old {
        Some(s) => (s.files, s.segments, s.open, Some(s.repo)),
        None => (Vec::new(), Vec::new(), BTreeMap::new(), None),
    };
    let stored = |(c, d): (store::Loc, store::Loc)| FileFacts::stored(Blob::lazy(&open, c), Blob::lazy(&open, d));
    let mut replaced = Vec::new();
    // the stored table, file `i` at `i`: its entries are changed in place and its segments stay
    // where they are, with the parsed files' facts laid over them (moving or opening every entry
    // of a large table costs more than the change)
    if olds.len() == segments.len() && olds.iter().enumerate().all(|(i, o)| *o == Some(i)) {
        let mut new = Vec::new();
        for (i, job) in jobs.into_iter().enumerate() {
            match job {
                Job::Reuse(_, meta) => {
                    if let Some(meta) = meta {
                        old_files[i] = *meta;
                    }
                }
                Job::New(parsed) => {
                    let (meta, f, diags) = *parsed;
                    let meta = std::mem::replace(&mut old_files[i], meta);
                    replaced.push(Replaced { at: i, meta, facts: stored(segments[i]) });
                    new.push((i, f));
                    diagnostics.extend(diags);
                }
            }
        }
        return (old_files, TableFacts::Overlay { packs: open, stored: segments, new }, replaced, old_repo);
    }
    let mut files = Vec::with_capacity(jobs.len());
    let mut facts = Vec::with_capacity(jobs.len());
    for (job, old) in jobs.into_iter().zip(olds) {
        match job {
            Job::Reuse(oi, meta) => {
                files.push(meta.map_or_else(|| old_files.get_mut(oi).map(std::mem::take).unwrap_or_default(), |m| *m));
                let empty = || FileFacts::new(Segment::default(), &Segment::default());
                facts.push(segments.get(oi).map(|&s| stored(s)).unwrap_or_else(empty));
            }
            Job::New(new) => {
                let (meta, f, diags) = *new;
                if let Some((&prev, meta)) = old.and_then(|oi| Some((segments.get(oi)?, old_files.get(oi)?))) {
                    replaced.push(Replaced { at: facts.len(), meta: meta.clone(), facts: stored(prev) });
                }
                files.push(meta);
                facts.push(f);
                diagnostics.extend(diags);
            }
        }
    }
    (files, TableFacts::Each(facts), replaced, old_repo)
}

/// The name of the indexed directory (a package when it holds `__init__.py`).
fn root_name(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The report of a run that found nothing to change.
#[allow(clippy::too_many_arguments)]
fn unchanged_report(
    root: PathBuf,
    index_path: PathBuf,
    summary: Summary,
    reused: u64,
    rehashed: u64,
    rebuilt: Option<String>,
    diagnostics: Vec<Diag>,
    t0: Instant,
) -> IndexReport {
    IndexReport {
        root,
        index_path,
        summary,
        parsed: 0,
        reused,
        removed: 0,
        rehashed,
        unchanged: true,
        resolved: false,
        rebuilt,
        diagnostics,
        elapsed_ms: ms(t0),
    }
}

/// Adds the diagnostics that live in `cores` as facts (skipped files, too-deep files, manifest
/// errors).
fn with_stored_diags(mut diags: Vec<Diag>, cores: &[&Segment]) -> Vec<Diag> {
    for &seg in cores {
        for r in seg.rows_of(rel::SKIPPED) {
            let (p, why) = (seg.str(r[0]), seg.str(r[1]));
            if !diags.iter().any(|d| d.path == p && d.kind == why) {
                diags.push(Diag { path: p.into(), line: 0, kind: why.into(), message: skipped_message(why) });
            }
        }
        for r in seg.rows_of(rel::PARSE_ERROR).filter(|r| seg.str(r[5]) == extract::TOO_DEEP) {
            let (path, line) = (seg.str(r[0]).into(), r[1]);
            diags.push(Diag { path, line, kind: extract::TOO_DEEP.into(), message: extract::too_deep_message() });
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

fn skipped_message(why: &str) -> String {
    match why {
        "binary" => "binary file (a NUL byte in its first 8 KiB); not parsed".into(),
        "too-large" => "larger than the size limit (`index.max_file_size` / `--max-filesize`); not parsed".into(),
        "unreadable" => "cannot be read; check its permissions".into(),
        other => other.to_string(),
    }
}

fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1000.0
}

fn rel_display(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

fn check_root(root: &Path) -> Result<PathBuf, IndexError> {
    match fs::metadata(root) {
        Ok(m) if m.is_dir() => fs::canonicalize(root).map_err(io(root)),
        Ok(_) => Err(IndexError::NotADirectory(root.to_path_buf())),
        Err(_) => Err(IndexError::NoSuchPath(root.to_path_buf())),
    }
}

/// Reads, hashes and (when new) parses one file.
fn look_at(ctx: &mut extract::Context, e: &WalkEntry, old: Option<(usize, &FileMeta)>, max_size: u64) -> Job {
    let (kind, lang) = kind_code(e.kind);
    let mut meta = FileMeta {
        path: e.rel.clone(),
        kind,
        lang: lang.map(|l| l.name().to_string()).unwrap_or_default(),
        size: e.size,
        mtime_ns: e.mtime_ns,
        hash: 0,
        skipped: None,
        facts: 0,
    };
    if e.size > max_size {
        if let Some((oi, o)) = old
            && o.skipped.as_deref() == Some("too-large")
            && o.size == e.size
        {
            meta.skipped = o.skipped.clone();
            meta.facts = o.facts;
            return Job::Reuse(oi, Some(Box::new(meta)));
        }
        return skipped(e, meta, "too-large", format!("{} bytes, over the {max_size}-byte limit; not parsed", e.size));
    }
    let bytes = match fs::read(&e.abs) {
        Ok(b) => b,
        Err(err) => {
            return skipped(e, meta, "unreadable", format!("cannot be read ({err}); check its permissions"));
        }
    };
    meta.hash = xxhash_rust::xxh3::xxh3_128(&bytes);
    if let Some((oi, o)) = old
        && o.hash == meta.hash
        && o.kind == meta.kind
        && matches!(o.skipped.as_deref(), None | Some("binary"))
    {
        meta.facts = o.facts;
        meta.skipped = o.skipped.clone();
        return Job::Reuse(oi, Some(Box::new(meta)));
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return skipped(e, meta, "binary", skipped_message("binary"));
    }
    let (text, diags) = decoded(e, &bytes);
    let (core, detail) = extract_file(ctx, e, meta.hash, &text, diags.first());
    meta.facts = (core.row_count() + detail.row_count()) as u64;
    Job::New(Box::new((meta, FileFacts::new(core, &detail), diags)))
}

/// A file that is not parsed: its one `Skipped` fact and the diagnostic saying why.
fn skipped(e: &WalkEntry, mut meta: FileMeta, why: &str, message: String) -> Job {
    let mut b = SegmentBuilder::new();
    b.push(rel::SKIPPED, &[e.rel.as_str().into(), why.into()]);
    meta.skipped = Some(why.to_string());
    meta.facts = 1;
    let d = Diag { path: e.rel.clone(), line: 0, kind: why.to_string(), message };
    Job::New(Box::new((meta, FileFacts::new(b.finish(), &Segment::default()), vec![d])))
}

/// The file's text; invalid UTF-8 is replaced, with a diagnostic at the line of the first
/// invalid byte.
fn decoded<'b>(e: &WalkEntry, bytes: &'b [u8]) -> (std::borrow::Cow<'b, str>, Vec<Diag>) {
    match std::str::from_utf8(bytes) {
        Ok(t) => (std::borrow::Cow::Borrowed(t), Vec::new()),
        Err(err) => {
            let upto = &bytes[..err.valid_up_to()];
            let line = upto.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            let d = Diag {
                path: e.rel.clone(),
                line,
                kind: "invalid-utf8".into(),
                message: "not valid UTF-8; invalid bytes were replaced before parsing".into(),
            };
            (String::from_utf8_lossy(bytes), vec![d])
        }
    }
}

/// Extracts one file's facts (core and detail segments): its source facts and hash (with the
/// invalid UTF-8, if any, as a parse error) and its manifest facts.
fn extract_file(
    ctx: &mut extract::Context,
    e: &WalkEntry,
    hash: u128,
    text: &str,
    invalid_utf8: Option<&Diag>,
) -> (Segment, Segment) {
    let mut b = crate::facts::SplitBuilder::default();
    if let FileKind::Source(l) | FileKind::SourceAndManifest(l) = e.kind {
        extract::extract_source(ctx, l, &e.rel, text, &mut b);
    }
    if kind_code(e.kind).1.is_some() {
        let hex = format!("{hash:032x}");
        b.push(
            rel::FILE_HASH,
            &[e.rel.as_str().into(), hex.as_str().into(), (e.size.min(u32::MAX as u64) as u32).into()],
        );
        if let Some(d) = invalid_utf8 {
            b.push(
                rel::PARSE_ERROR,
                &[e.rel.as_str().into(), d.line.into(), 1.into(), d.line.into(), 1.into(), "invalid-utf8".into()],
            );
        }
    }
    if matches!(e.kind, FileKind::Manifest | FileKind::SourceAndManifest(_)) {
        extract::extract_manifest(&mut b.core, &e.rel, text);
    }
    b.finish()
}

/// The summary's counts that the file table alone gives: files by language, manifests, skipped
/// files and the files' facts.
fn table_counts(files: &[FileMeta]) -> Summary {
    let mut s = Summary::default();
    for f in files {
        count_file(&mut s, f, true);
    }
    s
}

/// Adds one file's part of the table's counts to `s` ([`table_counts`]), or with `add` false
/// takes it away.
fn count_file(s: &mut Summary, f: &FileMeta, add: bool) {
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
fn parse_errors(core: &Segment) -> u64 {
    core.rows_of(rel::PARSE_ERROR).count() as u64
}

/// A re-parsed file's stored entry and core, then its new ones.
type Swap<'a> = ((&'a FileMeta, &'a Segment), (&'a FileMeta, &'a Segment));

/// The summary after a run in which the whole-repo facts stood (no file came or went): the stored
/// summary with each changed file's counts and parse errors swapped; the stages and the repo facts
/// are the stored ones.
fn summary_after(old: &Summary, changed: &[Swap]) -> Summary {
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

fn summarize(files: &[FileMeta], cores: &[&Segment], global: &Segment) -> Summary {
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

/// Compares the stored index with the working tree without writing anything. Returns `None` when
/// no usable index exists (with the reason), else the changes (empty: fresh).
pub fn check(root: &Path, opts: &IndexOptions) -> Result<Result<Vec<Change>, String>, IndexError> {
    let root = check_root(root)?;
    let head = match read_head_settled(&index_path(&root)) {
        Ok(h) => h,
        Err(LoadError::Missing) => return Ok(Err("no index yet; run `andon index`".into())),
        Err(LoadError::Untrusted(why)) => {
            return Ok(Err(format!("the stored index cannot be used: {why}; run `andon index`")));
        }
        Err(LoadError::Moved(pack)) => {
            return Ok(Err(format!("the stored index cannot be used: {}; run `andon index`", gone(&pack))));
        }
    };
    // other walk options or another declared stream: the stored facts are not these settings'
    if head.header.walk.options != walk::WalkState::options_hash(&root, &opts.walk) {
        return Ok(Err(
            "the walk options or the declared stream differ from those the index was written with; run `andon index`"
                .into(),
        ));
    }
    // when no directory or ignore file changed, the walk is the file table with fresh stats
    let walked = match rewalk_from_table(&root, &head, opts) {
        Some((entries, _)) => entries,
        None => walk::walk(&root, &opts.walk).map_err(IndexError::Config)?.0,
    };
    let by_path: HashMap<&str, &FileMeta> = head.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut changes = Vec::new();
    for e in &walked {
        match by_path.get(e.rel.as_str()) {
            None => changes.push(Change { path: e.rel.clone(), change: "added" }),
            Some(old) if stat_fresh(old, e, head.header.stamp_ns, opts.max_file_size) => {}
            Some(old) => {
                let same = if e.size > opts.max_file_size {
                    old.skipped.as_deref() == Some("too-large") && old.size == e.size
                } else {
                    fs::read(&e.abs).map(|b| xxhash_rust::xxh3::xxh3_128(&b) == old.hash).unwrap_or(false)
                };
                if !same {
                    changes.push(Change { path: e.rel.clone(), change: "modified" });
                }
            }
        }
    }
    let present: std::collections::HashSet<&str> = walked.iter().map(|w| w.rel.as_str()).collect();
    for f in &head.files {
        if !present.contains(f.path.as_str()) {
            changes.push(Change { path: f.path.clone(), change: "deleted" });
        }
    }
    changes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Ok(changes))
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
