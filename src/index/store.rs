//! The index on disk, written in proportion to the change: a small head and immutable packs.
//!
//! `.andon/index.bin` is the head: the magic `ANDONIDX`, the format version (u32 LE), the head's
//! length (u64 LE) and xxh3-128 checksum (u128 LE), then the postcard [`HeadWire`]: header, where
//! the file table's chunks are, where the repo segment is, and the packs it names. A place is a
//! [`Loc`] (pack, offset, length, xxh3-64 checksum). A pack (`.andon/pack-<n>.bin`, the magic
//! `ANDONPAK` then blobs) is never modified once written. A chunk ([`ChunkWire`]) is a blob of
//! consecutive entries of the file table, each with where its core and detail segments are; chunks
//! are cut where a path hashes to 0 modulo [`CHUNK_EVERY`], so an added or removed file changes
//! its own chunk only.
//!
//! A run that parsed files writes their segments (and the repo segment, when it changed) and the
//! chunks whose files changed to one new pack, then a new head; a chunk of files as stored keeps
//! its place. When the live bytes fall under half of the packs' bytes (past 1 MiB), or the packs
//! number 16, every live blob is copied into one new pack (compaction). Each file is written to a
//! temporary name, fsynced and renamed, the head last, so a run killed at any point leaves the
//! previous head and the packs it names intact; the packs no head names are removed by the next
//! writer. Blobs are checksummed when decoded (chunks when the head is read), so a damaged pack is
//! found when it is read (and by `andon index --check`, which reads everything). The head also
//! seals each pack ([`Seal`]: inode and status-change time): a writer verifies whole every pack
//! whose seal moved before it keeps any of it, and rebuilds when one is damaged, so a damaged pack
//! never outlives the next `andon index` and compaction is never skipped for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{self, File};
use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::wire::{FileMeta, IndexHeader, SegmentWire};
use super::{Error, FORMAT_VERSION, io, walk};
use crate::facts::Segment;

const MAGIC: &[u8; 8] = b"ANDONIDX";
const PACK_MAGIC: &[u8; 8] = b"ANDONPAK";
/// Magic, version, head length, head checksum.
const PREAMBLE: usize = 8 + 4 + 8 + 16;
/// The prefix of the head's temporary files; the writer's process id follows.
pub(super) const TMP_PREFIX: &str = "index.bin.tmp.";
/// The prefix of a pack's temporary files; the writer's process id follows.
pub(super) const PACK_TMP_PREFIX: &str = "pack.tmp.";
/// Packs smaller than this in all are compacted only when they are many.
const COMPACT_MIN: u64 = 1 << 20;
/// At this many packs, they are compacted whatever their garbage.
const MAX_PACKS: usize = 16;

/// Where one blob is stored: pack id, offset and length in the pack, xxh3-64 of its bytes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub pack: u64,
    pub offset: u64,
    pub len: u64,
    pub sum: u64,
}

#[derive(Serialize, Deserialize)]
struct HeadWire {
    header: IndexHeader,
    /// The file table in chunks, in order: where each is stored and how many files it holds.
    chunks: Vec<(Loc, u64)>,
    /// The repo segment (resolution, modules, stages).
    global: Loc,
    /// The questions its resolution asked of the files' surfaces ([`crate::resolve::asked`]).
    reads: Loc,
    /// Every pack the head names: (id, length in bytes).
    packs: Vec<(u64, u64)>,
    /// Every pack's seal as the writer left it ([`Seal`]).
    seals: Vec<(u64, Seal)>,
}

/// What a pack's file looked like when the writer sealed it: its inode and status-change time.
/// Any write to the file moves its change time (no call sets it back), so a pack whose seal still
/// holds is the pack written; one whose seal moved (a byte flipped, the repository copied) is
/// verified whole before a writer builds on it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seal {
    ino: u64,
    changed_ns: i128,
}

impl Seal {
    /// The seal of a file with metadata `m`.
    fn of(m: &fs::Metadata) -> Seal {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Seal { ino: m.ino(), changed_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()) }
        }
        #[cfg(not(unix))]
        {
            let t = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
            Seal { ino: 0, changed_ns: t.map_or(-1, |d| d.as_nanos() as i128) }
        }
    }
}

/// [`HeadWire`] as it is written, borrowing (the same encoding).
#[derive(Serialize)]
struct HeadRef<'a> {
    header: &'a IndexHeader,
    chunks: &'a [(Loc, u64)],
    global: Loc,
    reads: Loc,
    packs: &'a [(u64, u64)],
    seals: &'a [(u64, Seal)],
}

/// One chunk of the file table, a blob in a pack: consecutive files and where their core and
/// detail segments are.
#[derive(Serialize, Deserialize)]
struct ChunkWire {
    files: Vec<FileMeta>,
    segments: Vec<(Loc, Loc)>,
}

/// [`ChunkWire`] as it is written, borrowing (the same encoding).
#[derive(Serialize)]
struct ChunkRef<'a> {
    files: &'a [FileMeta],
    segments: &'a [(Loc, Loc)],
}

/// A chunk ends after a file whose path hashes to 0 modulo this (so a file added or removed
/// changes the chunk it is in, not the chunks after it)...
const CHUNK_EVERY: u64 = 128;
/// ... or at this many files (a chunk holds at most about 45 KB).
const CHUNK_MAX: usize = 512;

/// Where the file table is cut into chunks.
fn chunk_ranges(files: &[FileMeta]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, f) in files.iter().enumerate() {
        if xxhash_rust::xxh3::xxh3_64(f.path.as_bytes()) % CHUNK_EVERY == 0 || i + 1 - start == CHUNK_MAX {
            out.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < files.len() {
        out.push(start..files.len());
    }
    out
}

/// The stored head: header, file table and where every segment is.
pub(super) struct Head {
    pub header: IndexHeader,
    pub files: Vec<FileMeta>,
    pub segments: Vec<(Loc, Loc)>,
    pub global: Loc,
    pub reads: Loc,
    pub packs: Vec<(u64, u64)>,
    /// Where the file table's chunks are and how many files each holds (a writer keeps those
    /// whose bytes it would write again).
    pub chunks: Vec<(Loc, u64)>,
    /// Each pack's seal as its writer left it.
    pub seals: Vec<(u64, Seal)>,
}

/// Why a stored index cannot be used.
#[derive(Debug)]
pub(super) enum LoadError {
    Missing,
    /// A pack the head names is gone (named): a writer replaced the head since it was read, or,
    /// when it stays gone, the pack was removed.
    Moved(String),
    Untrusted(String),
}

fn pack_name(id: u64) -> String {
    format!("pack-{id}.bin")
}

/// The id of a pack file name.
fn pack_id(name: &str) -> Option<u64> {
    name.strip_prefix("pack-")?.strip_suffix(".bin")?.parse().ok()
}

/// Opens `path` without blocking, a regular file only ([`walk::open_regular`]).
fn open_regular(path: &Path) -> Result<(File, u64), LoadError> {
    let file = match walk::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::Missing),
        Err(e) if e.kind() == std::io::ErrorKind::Other => return Err(LoadError::Untrusted(e.to_string())),
        Err(e) => return Err(LoadError::Untrusted(format!("unreadable ({e})"))),
    };
    let len = file.metadata().map_err(|e| LoadError::Untrusted(format!("unreadable ({e})")))?.len();
    Ok((file, len))
}

/// Reads and checks the head at `path` (the packs are not read).
pub(super) fn read_head(path: &Path) -> Result<Head, LoadError> {
    let unreadable = |e: std::io::Error| LoadError::Untrusted(format!("unreadable ({e})"));
    let (mut file, len) = open_regular(path)?;
    let mut pre = [0u8; PREAMBLE];
    if len < PREAMBLE as u64 || file.read_exact(&mut pre).is_err() || &pre[..8] != MAGIC {
        return Err(LoadError::Untrusted("not an andon index (bad magic or truncated)".into()));
    }
    let version = u32::from_le_bytes(pre[8..12].try_into().unwrap());
    if version != FORMAT_VERSION {
        return Err(LoadError::Untrusted(format!("index format {version}, this andon reads {FORMAT_VERSION}")));
    }
    let head_len = u64::from_le_bytes(pre[12..20].try_into().unwrap());
    let head_sum = u128::from_le_bytes(pre[20..36].try_into().unwrap());
    if Some(len) != (PREAMBLE as u64).checked_add(head_len) {
        return Err(LoadError::Untrusted(format!(
            "truncated or extended ({len} bytes, expected {})",
            (PREAMBLE as u64).saturating_add(head_len)
        )));
    }
    let mut head = vec![0u8; head_len as usize];
    file.read_exact(&mut head).map_err(unreadable)?;
    if xxhash_rust::xxh3::xxh3_128(&head) != head_sum {
        return Err(LoadError::Untrusted("checksum mismatch (corrupt)".into()));
    }
    let bad = |e: postcard::Error| LoadError::Untrusted(format!("undecodable ({e})"));
    let w: HeadWire = postcard::from_bytes(&head).map_err(bad)?;
    if w.header.fingerprint != super::fingerprint() {
        return Err(LoadError::Untrusted(format!(
            "built by a different andon, schema, grammar or rules version ({})",
            w.header.fingerprint
        )));
    }
    let named: BTreeMap<u64, u64> = w.packs.iter().copied().collect();
    let within = |l: &Loc| named.get(&l.pack).is_some_and(|&n| l.offset.checked_add(l.len).is_some_and(|e| e <= n));
    if named.len() != w.packs.len()
        || !within(&w.global)
        || !within(&w.reads)
        || !w.chunks.iter().all(|(l, _)| within(l))
    {
        return Err(LoadError::Untrusted("inconsistent file table".into()));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let (files, segments) = read_chunks(dir, &w.chunks, &named)?;
    // the walk's order: each path once, sorted
    if !segments.iter().all(|(c, d)| within(c) && within(d)) || !files.windows(2).all(|f| f[0].path < f[1].path) {
        return Err(LoadError::Untrusted("inconsistent file table".into()));
    }
    Ok(Head {
        header: w.header,
        files,
        segments,
        global: w.global,
        reads: w.reads,
        packs: w.packs,
        chunks: w.chunks,
        seals: w.seals,
    })
}

/// The file table from its chunks, each read from its pack and checked.
fn read_chunks(
    dir: &Path,
    chunks: &[(Loc, u64)],
    packs: &BTreeMap<u64, u64>,
) -> Result<(Vec<FileMeta>, Vec<(Loc, Loc)>), LoadError> {
    let (mut files, mut segments) = (Vec::new(), Vec::new());
    let mut open: BTreeMap<u64, File> = BTreeMap::new();
    for &(loc, n) in chunks {
        let file = match open.entry(loc.pack) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(open_pack(dir, loc.pack, packs[&loc.pack])?),
        };
        let damaged =
            |why: String| LoadError::Untrusted(format!("{}: a chunk of the file table {why}", pack_name(loc.pack)));
        let bytes = read_range(file, loc.offset, loc.len).map_err(|e| damaged(format!("is unreadable ({e})")))?;
        if xxhash_rust::xxh3::xxh3_64(&bytes) != loc.sum {
            return Err(damaged("is damaged (checksum mismatch)".into()));
        }
        let c: ChunkWire = postcard::from_bytes(&bytes).map_err(|e| damaged(format!("is undecodable ({e})")))?;
        if c.files.len() as u64 != n || c.segments.len() as u64 != n {
            return Err(damaged("holds another number of files".into()));
        }
        files.extend(c.files);
        segments.extend(c.segments);
    }
    Ok((files, segments))
}

/// Whether every pack `head` names is in `dir` with its recorded length (a stat each, nothing
/// read); `Err` names the first that is not. `Ok` holds the packs whose seal moved since their
/// writer sealed them ([`Seal`]).
pub(super) fn packs_present(dir: &Path, head: &Head) -> Result<Vec<u64>, Error> {
    let mut moved = Vec::new();
    for &(id, len) in &head.packs {
        let pack = pack_name(id);
        match fs::symlink_metadata(dir.join(&pack)) {
            Ok(m) if m.is_file() && m.len() == len => {
                if !head.seals.iter().any(|&(i, s)| i == id && s == Seal::of(&m)) {
                    moved.push(id);
                }
            }
            Ok(m) if m.is_file() => return Err(Error::PackLength { pack, actual: m.len(), expected: len }),
            Ok(_) => return Err(Error::PackNotAFile { pack }),
            Err(source) => return Err(Error::PackUnreadable { pack, source }),
        }
    }
    Ok(moved)
}

/// Reads pack `id` whole and checks every blob `head` places in it against its checksum: `Err`
/// says what is damaged. A writer does this to a pack whose seal moved before it keeps a byte of it.
pub(super) fn verify_pack(dir: &Path, head: &Head, id: u64) -> Result<(), Error> {
    let Some(&(_, len)) = head.packs.iter().find(|p| p.0 == id) else { return Ok(()) };
    let pack = pack_name(id);
    let damaged = || Error::Corrupt { pack: pack.clone() };
    let mut file = open_pack(dir, id, len).map_err(|_| damaged())?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.read_to_end(&mut bytes).map_err(|source| Error::PackUnreadable { pack: pack.clone(), source })?;
    if bytes.len() as u64 != len || !bytes.starts_with(PACK_MAGIC) {
        return Err(damaged());
    }
    let locs = head.segments.iter().flat_map(|(c, d)| [c, d]).chain(head.chunks.iter().map(|c| &c.0));
    for l in locs.chain([&head.global, &head.reads]).filter(|l| l.pack == id) {
        let sound = bytes
            .get(l.offset as usize..(l.offset + l.len) as usize)
            .is_some_and(|b| xxhash_rust::xxh3::xxh3_64(b) == l.sum);
        if !sound {
            return Err(damaged());
        }
    }
    Ok(())
}

/// Copies the stored index of `from` (the directory holding its head) to `to`: the head, and each
/// pack hard-linked where the file system allows (packs are never modified), else copied. Only
/// regular files are read, without blocking.
pub(super) fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    let mut head = Vec::new();
    walk::open_regular(&from.join(super::INDEX_FILE))?.read_to_end(&mut head)?;
    for id in existing_packs(from) {
        let (src, dst) = (from.join(pack_name(id)), to.join(pack_name(id)));
        if fs::hard_link(&src, &dst).is_err() {
            let mut bytes = Vec::new();
            walk::open_regular(&src)?.read_to_end(&mut bytes)?;
            fs::write(&dst, bytes)?;
        }
    }
    fs::write(to.join(super::INDEX_FILE), head)
}

/// Opens pack `id` of `dir` and checks it has its recorded length `len`; a missing pack means a
/// writer replaced the head since it was read ([`LoadError::Moved`]).
fn open_pack(dir: &Path, id: u64, len: u64) -> Result<File, LoadError> {
    let name = pack_name(id);
    let (file, actual) = match open_regular(&dir.join(&name)) {
        Ok(f) => f,
        Err(LoadError::Missing) => return Err(LoadError::Moved(name)),
        Err(LoadError::Untrusted(why)) => return Err(LoadError::Untrusted(format!("{name}: {why}"))),
        Err(e) => return Err(e),
    };
    if actual != len {
        return Err(LoadError::Untrusted(format!("{name}: truncated or extended ({actual} bytes, expected {len})")));
    }
    Ok(file)
}

/// Every pack `head` names, read whole and checked against its recorded length.
pub(super) fn read_packs(dir: &Path, head: &Head) -> Result<BTreeMap<u64, Arc<Vec<u8>>>, LoadError> {
    let mut out = BTreeMap::new();
    for &(id, len) in &head.packs {
        let mut file = open_pack(dir, id, len)?;
        let name = pack_name(id);
        let mut bytes = Vec::with_capacity(len as usize);
        file.read_to_end(&mut bytes).map_err(|e| LoadError::Untrusted(format!("{name}: unreadable ({e})")))?;
        if bytes.len() as u64 != len || !bytes.starts_with(PACK_MAGIC) {
            return Err(LoadError::Untrusted(format!("{name}: not an andon pack (bad magic or truncated)")));
        }
        out.insert(id, Arc::new(bytes));
    }
    Ok(out)
}

/// Every pack `head` names, opened and checked against its recorded length, nothing read: a blob
/// of it is read when it is used ([`Blob::Lazy`]).
pub(super) fn open_packs(dir: &Path, head: &Head) -> Result<BTreeMap<u64, Arc<Pack>>, LoadError> {
    let mut out = BTreeMap::new();
    for &(id, len) in &head.packs {
        let file = open_pack(dir, id, len)?;
        out.insert(id, Arc::new(Pack { file, whole: std::sync::OnceLock::new() }));
    }
    Ok(out)
}

/// An open pack, read whole once many of its blobs are wanted ([`Blob::read_pack`]).
pub(super) struct Pack {
    file: File,
    whole: std::sync::OnceLock<Vec<u8>>,
}

/// `len` bytes of `file` from `offset`.
fn read_range(file: &File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    #[cfg(unix)]
    std::os::unix::fs::FileExt::read_exact_at(file, &mut buf, offset)?;
    #[cfg(windows)]
    {
        let mut at = 0usize;
        while at < buf.len() {
            let n = std::os::windows::fs::FileExt::seek_read(file, &mut buf[at..], offset + at as u64)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            at += n;
        }
    }
    Ok(buf)
}

/// Encoded bytes: owned; a range of a pack read whole (not copied); or a range of an open pack,
/// read on first use. A stored blob carries the checksum it must match.
#[derive(Clone)]
pub(super) enum Blob {
    Owned(Vec<u8>),
    Stored(Arc<Vec<u8>>, Range<usize>, Loc),
    Lazy(Arc<Pack>, Loc, std::sync::OnceLock<Box<[u8]>>),
}

impl Blob {
    /// The blob of `loc` in `packs`.
    pub(super) fn stored(packs: &BTreeMap<u64, Arc<Vec<u8>>>, loc: Loc) -> Blob {
        let (start, end) = (loc.offset as usize, (loc.offset + loc.len) as usize);
        Blob::Stored(packs[&loc.pack].clone(), start..end, loc)
    }

    /// The blob of `loc` in the open `packs`, read when used.
    pub(super) fn lazy(packs: &BTreeMap<u64, Arc<Pack>>, loc: Loc) -> Blob {
        Blob::Lazy(packs[&loc.pack].clone(), loc, std::sync::OnceLock::new())
    }

    /// Its bytes (a lazy blob that cannot be read has none, which no checksum matches).
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Blob::Owned(v) => v,
            Blob::Stored(pack, r, _) => &pack[r.clone()],
            Blob::Lazy(pack, loc, bytes) => {
                let range = loc.offset as usize..(loc.offset + loc.len) as usize;
                match pack.whole.get().and_then(|w| w.get(range)) {
                    Some(b) => b,
                    None => {
                        bytes.get_or_init(|| read_range(&pack.file, loc.offset, loc.len).unwrap_or_default().into())
                    }
                }
            }
        }
    }

    /// Reads the whole pack a lazy blob is in, once: when most blobs are wanted, one read of each
    /// pack costs less than a read per blob.
    pub(super) fn read_pack(&self) {
        if let Blob::Lazy(pack, _, _) = self {
            pack.whole.get_or_init(|| {
                let len = pack.file.metadata().map(|m| m.len()).unwrap_or(0);
                read_range(&pack.file, 0, len).unwrap_or_default()
            });
        }
    }

    /// Where it is stored, if it is.
    pub(super) fn loc(&self) -> Option<Loc> {
        match self {
            Blob::Owned(_) => None,
            Blob::Stored(_, _, l) | Blob::Lazy(_, l, _) => Some(*l),
        }
    }

    /// Its length in bytes, without reading it.
    pub(super) fn len(&self) -> u64 {
        match self {
            Blob::Owned(v) => v.len() as u64,
            Blob::Stored(_, _, l) | Blob::Lazy(_, l, _) => l.len,
        }
    }

    /// Where it is stored, with its bytes when they match their checksum (read now if lazy).
    fn stored_verified(&self) -> Option<(Loc, Option<&[u8]>)> {
        let loc = match self {
            Blob::Owned(_) => return None,
            Blob::Stored(_, _, l) | Blob::Lazy(_, l, _) => *l,
        };
        let b = self.bytes();
        Some((loc, (xxhash_rust::xxh3::xxh3_64(b) == loc.sum).then_some(b)))
    }

    /// Its bytes, when they match their checksum (an owned blob's always do).
    pub(super) fn verified_bytes(&self) -> Option<&[u8]> {
        match self.stored_verified() {
            None => Some(self.bytes()),
            Some((_, b)) => b,
        }
    }

    /// Whether its bytes match their checksum (an owned blob has none to match).
    pub(super) fn verify(&self) -> Result<(), Error> {
        match self.stored_verified() {
            Some((loc, None)) => Err(Error::Corrupt { pack: pack_name(loc.pack) }),
            _ => Ok(()),
        }
    }

    /// The segment it encodes, its checksum verified first.
    pub(super) fn decode(&self) -> Result<Segment, Error> {
        if let Blob::Stored(_, _, loc) | Blob::Lazy(_, loc, _) = self
            && xxhash_rust::xxh3::xxh3_64(self.bytes()) != loc.sum
        {
            return Err(Error::Corrupt { pack: pack_name(loc.pack) });
        }
        let w: SegmentWire = postcard::from_bytes(self.bytes()).map_err(Error::Undecodable)?;
        let seg = Segment { strings: w.strings, rows: w.rows };
        if seg.validate() { Ok(seg) } else { Err(Error::MalformedRows) }
    }
}

pub(super) fn encode_segment(seg: &Segment) -> Vec<u8> {
    postcard::to_stdvec(&SegmentWire { strings: seg.strings.clone(), rows: seg.rows.clone() }).expect("serializable")
}

/// One blob to store: already stored (with its bytes, when they were read), or new.
#[derive(Clone, Copy)]
pub(super) enum Part<'a> {
    Stored(Loc, Option<&'a [u8]>),
    New(&'a [u8]),
}

impl<'a> Part<'a> {
    /// The part a blob is; with `bytes`, a stored blob's bytes are read and verified (a compaction
    /// copies them), else a lazy blob is not read at all.
    pub(super) fn of(b: &'a Blob, bytes: bool) -> Part<'a> {
        match b {
            Blob::Owned(v) => Part::New(v),
            Blob::Lazy(_, loc, _) if !bytes => Part::Stored(*loc, None),
            _ => {
                let (loc, verified) = b.stored_verified().expect("a stored blob");
                Part::Stored(loc, verified)
            }
        }
    }
}

/// What a run writes: the header and file table, and per file and for the repo its blobs.
pub(super) struct Update<'a> {
    pub header: &'a IndexHeader,
    pub files: &'a [FileMeta],
    /// File `i`'s core and detail (asked for only where needed: a one-file change of a large
    /// table places the segments of one chunk).
    pub segments: &'a dyn Fn(usize) -> (Part<'a>, Part<'a>),
    pub global: Part<'a>,
    pub reads: Part<'a>,
    /// The packs the stored head named: (id, length).
    pub packs: &'a [(u64, u64)],
    /// Where the stored head's file-table chunks are, with how many files each holds.
    pub chunks: &'a [(Loc, u64)],
    /// What the run stores, counted ([`Census::of`]).
    pub census: &'a Census,
    /// When the file table is the stored one (the same paths in the same order): per file, whether
    /// its entry and segments are as stored (a chunk of such files is kept without encoding it).
    pub untouched: Option<&'a [bool]>,
}

/// Whether the packs are due for compaction after a run that adds `fresh` bytes of new blobs and
/// keeps `live` bytes of the blobs stored in `kept` (the stored head's `packs`).
fn due(packs: &[(u64, u64)], kept: &BTreeSet<u64>, live: u64, fresh: u64) -> bool {
    let kept_bytes: u64 = packs.iter().filter(|(id, _)| kept.contains(id)).map(|(_, n)| n).sum();
    let garbage = kept_bytes + fresh > COMPACT_MIN && live * 2 < kept_bytes + fresh;
    garbage || kept.len() >= MAX_PACKS
}

/// What a run stores, counted once: the packs its stored blobs are in, and the bytes of its live
/// and of its new blobs.
pub(super) struct Census {
    kept: BTreeSet<u64>,
    live: u64,
    fresh: u64,
}

impl Census {
    /// Counts `parts`: each blob's stored place (if it is stored) and its length.
    pub(super) fn of(parts: impl Iterator<Item = (Option<Loc>, u64)>) -> Census {
        let (mut kept, mut live, mut fresh) = (BTreeSet::new(), 0, 0);
        let mut last_pack = None;
        for (loc, len) in parts {
            live += len;
            match loc {
                // consecutive blobs are mostly in one pack: one insert each run of them
                Some(l) if last_pack != Some(l.pack) => {
                    kept.insert(l.pack);
                    last_pack = Some(l.pack);
                }
                Some(_) => {}
                None => fresh += len,
            }
        }
        Census { kept, live, fresh }
    }

    /// Whether the run compacts `packs`, whose file table is in `chunks` (live too, about as many
    /// bytes as the stored ones): then every stored blob's bytes are needed.
    pub(super) fn due(&self, packs: &[(u64, u64)], chunks: &[(Loc, u64)]) -> bool {
        let mut kept = self.kept.clone();
        kept.extend(chunks.iter().map(|c| c.0.pack));
        let chunk_bytes: u64 = chunks.iter().map(|c| c.0.len).sum();
        due(packs, &kept, self.live + chunk_bytes, self.fresh)
    }
}

/// Writes the blobs not yet stored to a new pack (or, past the garbage threshold and when every
/// live blob was read, every live blob to one new pack), then the new head; then removes the
/// packs it no longer names.
pub(super) fn write(dir: &Path, u: &Update) -> Result<(), Error> {
    let head_path = dir.join(super::INDEX_FILE);
    if fs::symlink_metadata(&head_path).is_ok_and(|m| m.is_dir()) {
        return Err(Error::HeadIsADirectory(head_path));
    }
    // a compaction copies every live blob: when it is due and every stored blob was read whole
    let readable = |p: Part| !matches!(p, Part::Stored(_, None));
    let compact = u.census.due(u.packs, u.chunks)
        && (0..u.files.len()).all(|i| {
            let (c, d) = (u.segments)(i);
            readable(c) && readable(d)
        })
        && readable(u.global)
        && readable(u.reads);
    // past every pack there or named, else (a stray `pack-<u64::MAX>.bin`) the first id free
    let taken: BTreeSet<u64> = existing_packs(dir).into_iter().chain(u.packs.iter().map(|p| p.0)).collect();
    let id = match taken.last() {
        None => 1,
        Some(m) => m.checked_add(1).unwrap_or_else(|| (1..).find(|i| !taken.contains(i)).expect("an id is free")),
    };
    let mut pack = PACK_MAGIC.to_vec();
    let place = |pack: &mut Vec<u8>, p: Part| -> Loc {
        let bytes = match p {
            Part::Stored(l, _) if !compact => return l,
            Part::Stored(_, Some(b)) | Part::New(b) => b,
            Part::Stored(l, None) => unreachable!("compaction needs every blob read ({l:?})"),
        };
        let loc = Loc {
            pack: id,
            offset: pack.len() as u64,
            len: bytes.len() as u64,
            sum: xxhash_rust::xxh3::xxh3_64(bytes),
        };
        pack.extend_from_slice(bytes);
        loc
    };
    let global = place(&mut pack, u.global);
    let reads = place(&mut pack, u.reads);
    // the file table's chunks: one of files as stored, or stored with the same bytes, is kept where
    // it is
    let stored: HashMap<(u64, u64), Loc> = u.chunks.iter().map(|(l, _)| ((l.sum, l.len), *l)).collect();
    // the same paths in the same order cut into the same chunks: their counts are the stored ones
    let stored_cuts = u.chunks.iter().map(|c| c.1).sum::<u64>() == u.files.len() as u64;
    let ranges = match u.untouched {
        Some(_) if stored_cuts => u
            .chunks
            .iter()
            .scan(0usize, |start, c| {
                let r = *start..*start + c.1 as usize;
                *start = r.end;
                Some(r)
            })
            .collect(),
        _ => chunk_ranges(u.files),
    };
    let in_place = u.untouched.filter(|_| {
        !compact && ranges.len() == u.chunks.len() && ranges.iter().zip(u.chunks).all(|(r, c)| r.len() as u64 == c.1)
    });
    let named = |l: &Loc| u.packs.iter().any(|p| p.0 == l.pack);
    let mut kept = u.census.kept.clone();
    let mut chunks = Vec::with_capacity(ranges.len());
    for (k, r) in ranges.into_iter().enumerate() {
        if let Some(untouched) = in_place
            && untouched[r.clone()].iter().all(|u| *u)
            && named(&u.chunks[k].0)
        {
            kept.insert(u.chunks[k].0.pack);
            chunks.push(u.chunks[k]);
            continue;
        }
        let segments: Vec<(Loc, Loc)> = r
            .clone()
            .map(|i| {
                let (c, d) = (u.segments)(i);
                (place(&mut pack, c), place(&mut pack, d))
            })
            .collect();
        let chunk = ChunkRef { files: &u.files[r.clone()], segments: &segments };
        let bytes = postcard::to_stdvec(&chunk).expect("serializable");
        let sum = xxhash_rust::xxh3::xxh3_64(&bytes);
        let loc = match stored.get(&(sum, bytes.len() as u64)) {
            Some(l) if !compact && named(l) => {
                kept.insert(l.pack);
                *l
            }
            _ => {
                let l = Loc { pack: id, offset: pack.len() as u64, len: bytes.len() as u64, sum };
                pack.extend_from_slice(&bytes);
                l
            }
        };
        chunks.push((loc, r.len() as u64));
    }
    let mut packs: Vec<(u64, u64)> =
        if compact { Vec::new() } else { u.packs.iter().copied().filter(|(i, _)| kept.contains(i)).collect() };
    if pack.len() > PACK_MAGIC.len() {
        write_new(dir, &format!("{PACK_TMP_PREFIX}{}", std::process::id()), &pack_name(id), &pack)?;
        packs.push((id, pack.len() as u64));
    }
    let seals = seal(dir, &packs);
    let head = HeadRef { header: u.header, chunks: &chunks, global, reads, packs: &packs, seals: &seals };
    let body = postcard::to_stdvec(&head).expect("serializable");
    let mut bytes = Vec::with_capacity(PREAMBLE + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    if let Err(e) = write_new(dir, &format!("{TMP_PREFIX}{}", std::process::id()), super::INDEX_FILE, &bytes) {
        // no head names the new pack: it must not stay behind
        if pack.len() > PACK_MAGIC.len() {
            let _ = fs::remove_file(dir.join(pack_name(id)));
        }
        return Err(e);
    }
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    let named: BTreeSet<u64> = head.packs.iter().map(|p| p.0).collect();
    for old in existing_packs(dir).into_iter().filter(|p| !named.contains(p)) {
        let _ = fs::remove_file(dir.join(pack_name(old)));
    }
    Ok(())
}

/// The seal of every pack in `packs`, as it is now: a writer built on a pack only after its
/// seal held or the pack was verified whole ([`packs_present`], [`verify_pack`]).
fn seal(dir: &Path, packs: &[(u64, u64)]) -> Vec<(u64, Seal)> {
    packs
        .iter()
        .filter_map(|&(id, _)| fs::symlink_metadata(dir.join(pack_name(id))).ok().map(|m| (id, Seal::of(&m))))
        .collect()
}

/// The ids of the packs in `dir`.
fn existing_packs(dir: &Path) -> Vec<u64> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().filter_map(|e| e.file_name().to_str().and_then(pack_id)).collect()
}

/// Writes `bytes` to `tmp` (created new: a file or link already there is a dead process's and is
/// removed, never written through), fsyncs it and renames it to `name`.
fn write_new(dir: &Path, tmp: &str, name: &str, bytes: &[u8]) -> Result<(), Error> {
    let (tmp, final_path): (PathBuf, PathBuf) = (dir.join(tmp), dir.join(name));
    let _ = fs::remove_file(&tmp);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|_| f.sync_all()))
        .map_err(io(&tmp))
        .and_then(|_| fs::rename(&tmp, &final_path).map_err(io(&final_path)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rewrites the head at `path` with its chunk list changed by `edit`, checksum recomputed
    /// (what a hand-edited or forged head can be).
    fn forge(path: &Path, edit: impl Fn(&mut Vec<(Loc, u64)>)) {
        let bytes = fs::read(path).unwrap();
        let mut w: HeadWire = postcard::from_bytes(&bytes[PREAMBLE..]).unwrap();
        edit(&mut w.chunks);
        let body = postcard::to_stdvec(&w).unwrap();
        let mut out = bytes[..12].to_vec();
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(&body).to_le_bytes());
        out.extend_from_slice(&body);
        fs::write(path, out).unwrap();
    }

    #[test]
    fn a_head_whose_chunks_repeat_or_change_order_is_not_trusted() {
        let t = tempfile::tempdir().unwrap();
        // enough files for several chunks
        for i in 0..600 {
            let p = t.path().join(format!("m{i:03}.py"));
            fs::write(p, format!("X{i} = {i}\n")).unwrap();
        }
        let opts = super::super::IndexOptions {
            walk: walk::WalkOptions::standard(),
            max_file_size: 1 << 20,
            threads: Some(1),
            rebuild: false,
        };
        super::super::update(t.path(), &opts, &|_, _| {}).unwrap();
        let path = t.path().join(".andon").join(super::super::INDEX_FILE);
        let good = fs::read(&path).unwrap();
        assert!(read_head(&path).is_ok());
        let chunks = read_head(&path).ok().unwrap().chunks.len();
        assert!(chunks > 2, "{chunks} chunks");
        let forgeries: [(&str, &dyn Fn(&mut Vec<(Loc, u64)>)); 3] = [
            ("a chunk twice", &|c| c.insert(1, c[0])),
            ("two chunks swapped", &|c| c.swap(0, 1)),
            ("a chunk dropped", &|c| {
                c.remove(1);
            }),
        ];
        for (what, edit) in forgeries {
            fs::write(&path, &good).unwrap();
            forge(&path, edit);
            match read_head(&path) {
                Err(LoadError::Untrusted(_)) => {}
                Ok(h) if what == "a chunk dropped" => {
                    // a table without some files is a consistent (older) table: the next run
                    // walks and finds them again
                    assert!(h.files.windows(2).all(|f| f[0].path < f[1].path));
                }
                Ok(_) => panic!("{what}: trusted"),
                Err(e) => panic!("{what}: {e:?}"),
            }
        }
    }
}
