//! Why an index run, a load of the stored index or a walk failed (file-system problems and
//! damaged index files, never source text).

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: no such directory; pass the repository to index", .0.display())]
    NoSuchPath(PathBuf),
    #[error("{}: not a directory; pass the repository root", .0.display())]
    NotADirectory(PathBuf),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The index must be written, but `.andon/` cannot be (why).
    #[error(
        "{}: read-only ({why}), and the index is stale or missing: make the directory writable, \
         or run `andon index` where it is, then run this command again",
        dir.display()
    )]
    ReadOnly { dir: PathBuf, why: String },
    /// The worker pool of `n` threads could not be started.
    #[error("cannot start {n} threads: {source}")]
    Threads {
        n: usize,
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
    /// The walk met an ignore file that is not a regular file.
    #[error(
        "{}: an ignore file that is not a regular file (a FIFO, device or socket, perhaps behind a link); \
         andon will not read it: replace it with a file, or pass --no-ignore",
        crate::text::line(&.0.to_string_lossy())
    )]
    RefusedIgnoreFile(PathBuf),
    /// An `index.exclude` glob does not parse.
    #[error("bad exclude glob `{glob}`: {source}")]
    ExcludeGlob {
        glob: String,
        #[source]
        source: ignore::Error,
    },
    /// The exclude globs together do not build.
    #[error("bad exclude globs: {0}")]
    ExcludeGlobs(#[source] ignore::Error),
    /// A directory stands where the index's head is written.
    #[error("{}: a directory where andon writes its index; remove it (`rm -r`), then index again", .0.display())]
    HeadIsADirectory(PathBuf),
    /// A pack the head names stays missing.
    #[error("{pack}, a pack it names, is missing (removed, or a writer keeps replacing the index)")]
    PackGone { pack: String },
    /// A pack the head names went missing while the head was rewritten alone.
    #[error("a pack the index names is missing; run `andon index --rebuild`")]
    PackMissing,
    /// A stored blob failed its checksum.
    #[error("{pack}: checksum mismatch (corrupt)")]
    Corrupt { pack: String },
    /// A decoded segment's rows do not fit its schema.
    #[error("malformed fact rows")]
    MalformedRows,
    /// A stored blob does not decode.
    #[error("undecodable ({0})")]
    Undecodable(#[source] postcard::Error),
    /// A pack's length is not the one the head records.
    #[error("{pack}: truncated or extended ({actual} bytes, expected {expected})")]
    PackLength { pack: String, actual: u64, expected: u64 },
    /// A pack's name is not a regular file.
    #[error("{pack}: not a regular file")]
    PackNotAFile { pack: String },
    /// A pack cannot be looked at.
    #[error("{pack}: {source}")]
    PackUnreadable {
        pack: String,
        #[source]
        source: std::io::Error,
    },
    /// The stored index cannot be trusted by this build (why: the head's own words).
    #[error("{0}")]
    Untrusted(String),
}

/// Why there is no usable stored index to compare the working tree with.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unusable {
    /// None was written yet.
    #[error("no index yet; run `andon index`")]
    Missing,
    /// It cannot be trusted (damaged, of another build, a pack gone): the reason in words.
    #[error("the stored index cannot be used: {0}; run `andon index`")]
    Untrusted(String),
    /// It was written under other walk options or another declared stream.
    #[error("the walk options or the declared stream differ from those the index was written with; run `andon index`")]
    OtherSettings,
    /// A blob of it fails its checksum or cannot be read.
    #[error("the stored index cannot be used: {0}; run `andon index --rebuild`")]
    Damaged(String),
}
