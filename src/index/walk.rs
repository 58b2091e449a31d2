//! Walking a repository like ripgrep: `.gitignore` (honoured with or without a git checkout),
//! `.ignore`, hidden and vendored directories skipped by default.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;

use crate::extract::{Lang, manifest_kind};

/// Directories skipped unless `vendored` is on: dependency trees and build output.
pub const VENDORED_DIRS: &[&str] = &[
    "node_modules",
    "bower_components",
    "jspm_packages",
    "target",
    "vendor",
    "third_party",
    "__pycache__",
    "site-packages",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
];

#[derive(Clone, Debug)]
pub struct WalkOptions {
    /// Also walk hidden files and directories.
    pub hidden: bool,
    /// Ignore `.gitignore`/`.ignore` files.
    pub no_ignore: bool,
    /// Also walk vendored directories ([`VENDORED_DIRS`]).
    pub vendored: bool,
    /// Follow symbolic links (loops are detected and reported).
    pub follow_links: bool,
    /// Extra exclusions, as gitignore-style globs relative to the root.
    pub exclude: Vec<String>,
    /// The declared stream (`[stream]`, `--stream FILE`): not the walk's, but it decides the
    /// stages, so a change of it resolves the repository again as a change of the walk does (it
    /// is part of the options' hash).
    pub stream: Option<crate::resolve::declared::DeclaredStream>,
    /// Directories that are code whatever their names say (`[index] stage_dirs`): never support.
    /// It decides the stages too, so it is part of the options' hash.
    pub stage_dirs: Vec<String>,
}

impl WalkOptions {
    pub fn standard() -> WalkOptions {
        WalkOptions {
            hidden: false,
            no_ignore: false,
            vendored: false,
            follow_links: false,
            exclude: Vec::new(),
            stream: None,
            stage_dirs: Vec::new(),
        }
    }
}

/// What a walked file is to andon.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Source(Lang),
    Manifest,
    /// Both: `setup.py` is Python source and a manifest.
    SourceAndManifest(Lang),
}

#[derive(Clone, Debug)]
pub struct WalkEntry {
    pub rel: String,
    pub abs: PathBuf,
    pub kind: FileKind,
    pub size: u64,
    pub mtime_ns: u64,
}

#[derive(Clone, Debug)]
pub struct WalkError {
    pub rel: String,
    pub reason: &'static str,
    pub message: String,
}

/// Classifies a repo-relative path.
pub fn classify(rel: &str) -> Option<FileKind> {
    let lang = Lang::from_path(rel);
    let manifest = manifest_kind(rel).is_some();
    match (lang, manifest) {
        (Some(l), true) => Some(FileKind::SourceAndManifest(l)),
        (Some(l), false) => Some(FileKind::Source(l)),
        (None, true) => Some(FileKind::Manifest),
        (None, false) => None,
    }
}

/// The repo-relative text of `path` (`/`-separated, each name as [`crate::text::path_text`] writes
/// it, so a name that is not UTF-8 keeps its own text).
pub fn rel_path(root: &Path, path: &Path) -> String {
    let r = path.strip_prefix(root).unwrap_or(path);
    let mut s = String::new();
    for (i, c) in r.components().enumerate() {
        if i > 0 {
            s.push('/');
        }
        s.push_str(&crate::text::os_path_text(c.as_os_str()));
    }
    s
}

/// The file on disk that the repo-relative text `rel` (written by [`rel_path`]) names; `None`
/// for text `rel_path` never writes.
pub fn abs_path(root: &Path, rel: &str) -> Option<PathBuf> {
    if rel.is_empty() {
        return Some(root.to_path_buf());
    }
    // a stored table is data: a path that would leave the root (absolute, `..`) names no file
    let p = crate::text::os_path(rel)?;
    p.components().all(|c| matches!(c, std::path::Component::Normal(_))).then(|| root.join(p))
}

/// Walks `root` and returns the files andon indexes, sorted by path, plus what could not be read.
/// What a walk saw that decides whether the next walk can be skipped: every directory it entered
/// (a file added, removed or renamed changes its directory's mtime) and every ignore file that can
/// apply (their contents decide what is walked).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkState {
    /// Hash of the walk options and the root ([`WalkState::options_hash`]).
    pub options: u64,
    /// (repo-relative directory, mtime ns, [`listing_hash`])
    pub dirs: Vec<(String, u64, u64)>,
    /// (absolute path as [`crate::text::path_text`] writes it, size, mtime ns); size `u64::MAX`
    /// records an absent file
    pub ignore_files: Vec<(String, u64, u64)>,
}

fn mtime_ns(m: &std::fs::Metadata) -> u64 {
    m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// Size and mtime of a file, `(u64::MAX, 0)` when absent.
pub fn stat_or_absent(p: &Path) -> (u64, u64) {
    match std::fs::metadata(p) {
        Ok(m) => (m.len(), mtime_ns(&m)),
        Err(_) => (u64::MAX, 0),
    }
}

impl WalkState {
    /// Hash of the walk options and of where the walk starts: the ignore files are recorded by
    /// absolute path, and the root's name names a package, so a state walked elsewhere (a moved
    /// repository, an index copied to another tree) is never taken for this one.
    pub(crate) fn options_hash(root: &Path, opts: &WalkOptions) -> u64 {
        xxhash_rust::xxh3::xxh3_64(format!("{root:?} {opts:?}").as_bytes())
    }

    /// Whether no ignore file the walk read changed since `stamp_ns` (one modified in the same
    /// instant as the stamp counts as changed).
    fn ignore_files_unchanged(&self, stamp_ns: u64) -> bool {
        self.ignore_files.iter().all(|(p, size, mtime)| {
            let Some(p) = crate::text::os_path(p) else { return false };
            stat_or_absent(&p) == (*size, *mtime) && (*size == u64::MAX || *mtime < stamp_ns)
        })
    }

    /// The state now, when what the walk depends on did not change but directory times may have:
    /// a changed directory whose [`listing_hash`] is the same (a notes file added, a build
    /// artefact removed) walks to the same files, so it costs a stat and a read of the directory
    /// alone. `None` when anything else changed: the options, an ignore file, or a directory's
    /// subdirectories, indexed files or ignore files.
    pub fn refreshed(&self, root: &Path, opts: &WalkOptions, stamp_ns: u64) -> Option<WalkState> {
        if self.options != Self::options_hash(root, opts)
            || self.dirs.is_empty()
            || !self.ignore_files_unchanged(stamp_ns)
        {
            return None;
        }
        let mut dirs = self.dirs.clone();
        // one stat per directory, spread over the workers of the pool the caller runs in
        dirs.par_iter_mut().with_min_len(256).try_for_each(|(rel, mtime, names)| {
            let p = abs_path(root, rel)?;
            let m = std::fs::metadata(&p).ok().filter(|m| m.is_dir())?;
            let now = mtime_ns(&m);
            if now == *mtime && *mtime < stamp_ns {
                return Some(());
            }
            if listing_hash(&p)? != *names {
                return None;
            }
            *mtime = now;
            Some(())
        })?;
        Some(WalkState { options: self.options, dirs, ignore_files: self.ignore_files.clone() })
    }
}

/// What in directory `dir` decides the walk below it, hashed: its subdirectories and links, the
/// files andon indexes, and its ignore files, by name (andon's and git's own directories left
/// out). A file andon does not index changes nothing.
pub fn listing_hash(dir: &Path) -> Option<u64> {
    let mut names: Vec<String> = Vec::new();
    for e in std::fs::read_dir(dir).ok()? {
        let e = e.ok()?;
        let name = crate::text::os_path_text(&e.file_name());
        if name == ".andon" || name == ".git" {
            continue;
        }
        let t = e.file_type().ok()?;
        if t.is_dir() {
            names.push(format!("d/{name}"));
        } else if t.is_symlink() {
            names.push(format!("l/{name}"));
        } else if IGNORE_NAMES.contains(&name.as_str()) || classify(&name).is_some() {
            names.push(format!("f/{name}"));
        }
    }
    names.sort();
    Some(xxhash_rust::xxh3::xxh3_64(names.join("\n").as_bytes()))
}

/// Ignore files that can apply to a walk of `root`: in every walked directory, in the root's
/// ancestors, the repository's `info/exclude`, and the user's global git excludes.
fn ignore_files(root: &Path, dirs: &[(String, u64, u64)]) -> Vec<(String, u64, u64)> {
    let mut candidates: Vec<std::path::PathBuf> = Vec::new();
    for (rel, _, _) in dirs {
        let Some(d) = abs_path(root, rel) else { continue };
        candidates.push(d.join(".gitignore"));
        candidates.push(d.join(".ignore"));
    }
    for a in root.ancestors().skip(1) {
        candidates.push(a.join(".gitignore"));
        candidates.push(a.join(".ignore"));
        candidates.push(a.join(".git/info/exclude"));
    }
    candidates.push(root.join(".git/info/exclude"));
    if let Some(home) = std::env::home_dir() {
        candidates.push(home.join(".config/git/ignore"));
        candidates.push(home.join(".gitconfig"));
    }
    candidates
        .into_iter()
        .map(|p| {
            let (size, mtime) = stat_or_absent(&p);
            (p, size, mtime)
        })
        // absent files inside walked directories are covered by the directory's mtime
        .filter(|(p, size, _)| *size != u64::MAX || !p.starts_with(root) || p.ends_with(".git/info/exclude"))
        .map(|(p, size, mtime)| (crate::text::os_path_text(p.as_os_str()), size, mtime))
        .collect()
}

/// Walks `root`: the files andon indexes (sorted by path), what could not be read on the way, and
/// the state that lets the next run skip the walk when nothing it depends on changed.
pub fn walk(root: &Path, opts: &WalkOptions) -> Result<(Vec<WalkEntry>, Vec<WalkError>, WalkState), super::Error> {
    let mut found = Walked::default();
    let unsafe_ignores = Arc::new(Mutex::new(Vec::new()));
    if !opts.no_ignore {
        let mut at_root = unsafe_ignore_files(root, &IGNORE_NAMES);
        at_root.extend(unsafe_ignore_files(&root.join(".git/info"), &["exclude"]));
        if let Some(p) = at_root.first() {
            return Err(super::Error::RefusedIgnoreFile(p.clone()));
        }
    }
    for item in builder(root, opts, unsafe_ignores.clone())?.build() {
        match item {
            Ok(entry) => found.visit(root, &entry),
            Err(err) => {
                let (rel, reason) = error_path(root, &err);
                found.errors.push(WalkError { rel, reason, message: err.to_string() });
            }
        }
    }
    if let Some(p) = unsafe_ignores.lock().expect("not poisoned").first() {
        return Err(super::Error::RefusedIgnoreFile(p.clone()));
    }
    let Walked { mut files, mut errors, mut dirs } = found;
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    files.dedup_by(|a, b| a.rel == b.rel);
    errors.sort_by(|a, b| a.rel.cmp(&b.rel));
    dirs.sort();
    let ignore_files = ignore_files(root, &dirs);
    let state = WalkState { options: WalkState::options_hash(root, opts), dirs, ignore_files };
    Ok((files, errors, state))
}

/// The directory walker for `opts`: ignore files honoured unless `no_ignore`, the exclude globs
/// applied, andon's and git's own directories (and vendored ones, unless asked for) left out.
/// The ignore files in `dir` that the walker must not read: a FIFO (reading it blocks), a device
/// (`/dev/zero` behind a committed link fills memory), a socket.
fn unsafe_ignore_files(dir: &Path, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file() && !m.is_dir()))
        .collect()
}

/// The ignore files the walker reads in each directory.
const IGNORE_NAMES: [&str; 2] = [".gitignore", ".ignore"];

/// `unsafe_ignores` collects the directories' ignore files that are not regular files; such a
/// directory is not entered (its ignore files are never read), and the walk fails.
fn builder(
    root: &Path,
    opts: &WalkOptions,
    unsafe_ignores: Arc<Mutex<Vec<PathBuf>>>,
) -> Result<ignore::WalkBuilder, super::Error> {
    let mut b = ignore::WalkBuilder::new(root);
    b.hidden(!opts.hidden)
        .git_ignore(!opts.no_ignore)
        .git_global(!opts.no_ignore)
        .git_exclude(!opts.no_ignore)
        .ignore(!opts.no_ignore)
        .parents(!opts.no_ignore)
        .require_git(false)
        .follow_links(opts.follow_links)
        .sort_by_file_name(|a, b| a.cmp(b));
    if !opts.exclude.is_empty() {
        let mut ob = ignore::overrides::OverrideBuilder::new(root);
        for g in &opts.exclude {
            let pat = format!("!{}", g.trim_start_matches('!'));
            ob.add(&pat).map_err(|source| super::Error::ExcludeGlob { glob: g.clone(), source })?;
        }
        let ov = ob.build().map_err(super::Error::ExcludeGlobs)?;
        b.overrides(ov);
    }
    let vendored = opts.vendored;
    let check_ignores = !opts.no_ignore;
    b.filter_entry(move |e| {
        if e.depth() == 0 {
            return true;
        }
        let name = e.file_name().to_string_lossy();
        if name == ".andon" || name == ".git" {
            return false;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        if is_dir && check_ignores {
            let bad = unsafe_ignore_files(e.path(), &IGNORE_NAMES);
            if !bad.is_empty() {
                unsafe_ignores.lock().expect("not poisoned").extend(bad);
                return false;
            }
        }
        !(is_dir && !vendored && VENDORED_DIRS.contains(&name.as_ref()))
    });
    Ok(b)
}

/// What a walk has found so far.
#[derive(Default)]
struct Walked {
    files: Vec<WalkEntry>,
    errors: Vec<WalkError>,
    /// (repo-relative directory, mtime ns, [`listing_hash`])
    dirs: Vec<(String, u64, u64)>,
}

impl Walked {
    /// Records one walked entry: a directory's mtime, or a regular file andon indexes with its
    /// size and mtime (an unreadable one as an error); anything else is passed over.
    fn visit(&mut self, root: &Path, entry: &ignore::DirEntry) {
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            if let Ok(m) = entry.metadata() {
                let names = listing_hash(entry.path()).unwrap_or(0);
                self.dirs.push((rel_path(root, entry.path()), mtime_ns(&m), names));
            }
            return;
        }
        let Some(ft) = entry.file_type() else {
            return;
        };
        if !ft.is_file() {
            return;
        }
        let rel = rel_path(root, entry.path());
        let Some(kind) = classify(&rel) else { return };
        let meta = match entry.metadata() {
            Ok(m) => m,
            Err(err) => {
                self.errors.push(WalkError { rel, reason: "unreadable", message: err.to_string() });
                return;
            }
        };
        let mtime_ns = mtime_ns(&meta);
        self.files.push(WalkEntry { rel, abs: entry.path().to_path_buf(), kind, size: meta.len(), mtime_ns });
    }
}

fn error_path(root: &Path, err: &ignore::Error) -> (String, &'static str) {
    fn find(root: &Path, err: &ignore::Error) -> Option<(String, &'static str)> {
        match err {
            ignore::Error::WithPath { path, err } => {
                let reason = find(root, err).map(|r| r.1).unwrap_or("unreadable");
                Some((rel_path(root, path), reason))
            }
            ignore::Error::Loop { child, .. } => Some((rel_path(root, child), "symlink-loop")),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => find(root, err),
            ignore::Error::Partial(errs) => errs.first().and_then(|e| find(root, e)),
            _ => None,
        }
    }
    find(root, err).unwrap_or_else(|| (String::new(), "unreadable"))
}

/// Opens `path` for reading without blocking (a FIFO would block `open` until a writer comes),
/// then refuses anything but a regular file, judged on the opened file so it cannot be swapped: a
/// FIFO, a device (`/dev/zero` behind a committed symlink), a socket or a directory.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NONBLOCK);
    let file = o.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file (a FIFO, device, socket or directory)"));
    }
    Ok(file)
}

/// What a guarded read of a walked file found ([`read_source`]).
pub enum SourceRead {
    /// Its bytes, at most the cap.
    Bytes(Vec<u8>),
    /// More bytes than the cap were there (at least this many); the rest was not read.
    TooLarge(u64),
}

/// Reads a file the walk listed, as guarded as the walk: without blocking (a FIFO swapped in after
/// the walk answers at once), no link followed unless the walk follows them (`follow`), a regular
/// file only, judged on the opened file, and never more than `max` bytes held: the size is what is
/// read, not what the walk's stat said.
pub fn read_source(path: &Path, follow: bool, max: u64) -> std::io::Result<SourceRead> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut o,
        if follow { libc::O_NONBLOCK } else { libc::O_NONBLOCK | libc::O_NOFOLLOW },
    );
    let file = o.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::other("a symbolic link swapped in after the walk; not followed");
        }
        e
    })?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file (a FIFO, device, socket or directory)"));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, max.saturating_add(1)), &mut bytes)?;
    if bytes.len() as u64 > max {
        return Ok(SourceRead::TooLarge(bytes.len() as u64));
    }
    Ok(SourceRead::Bytes(bytes))
}

/// The bytes of the regular file at `path` ([`open_regular`]), refused when longer than `max`.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(open_regular(path)?, max + 1), &mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than {} MiB", max >> 20)));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_file_swapped_after_the_walk_is_read_guarded() {
        let t = tempfile::tempdir().unwrap();
        let (fifo, link, zero, big) =
            (t.path().join("f.py"), t.path().join("l.py"), t.path().join("z.py"), t.path().join("b.py"));
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        let t0 = std::time::Instant::now();
        let e = read_source(&fifo, false, 1 << 20).err().expect("a FIFO is refused");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(t0.elapsed() < std::time::Duration::from_secs(2), "never blocks on a FIFO");
        std::fs::write(t.path().join("target.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink("target.py", &link).unwrap();
        let e = read_source(&link, false, 1 << 20).err().expect("a link is not followed");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(matches!(read_source(&link, true, 1 << 20), Ok(SourceRead::Bytes(b)) if b == b"x = 1\n"));
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(read_source(&zero, true, 1 << 20).is_err(), "a device is refused even where links are followed");
        std::fs::write(&big, vec![b'a'; 5000]).unwrap();
        assert!(matches!(read_source(&big, false, 4096), Ok(SourceRead::TooLarge(4097))), "the cap is what is read");
    }

    /// The state of a fresh walk of `root`, then what `refreshed` makes of it after `change`.
    fn after(change: impl Fn(&Path)) -> Option<WalkState> {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("pkg/sub")).unwrap();
        std::fs::write(root.join("pkg/a.py"), "import os\n").unwrap();
        std::fs::write(root.join("pkg/sub/b.py"), "import os\n").unwrap();
        let opts = WalkOptions::standard();
        let (_, _, state) = walk(root, &opts).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(5));
        let stamp = std::time::SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
        std::thread::sleep(std::time::Duration::from_millis(5));
        change(root);
        let now = state.refreshed(root, &opts, stamp);
        if let Some(s) = &now {
            assert_eq!(s.dirs.len(), state.dirs.len());
        }
        now
    }

    #[test]
    fn a_stored_path_never_leaves_the_root() {
        let root = Path::new("/repo");
        assert_eq!(abs_path(root, "pkg/a.py"), Some(PathBuf::from("/repo/pkg/a.py")));
        for outside in ["../x.py", "pkg/../../x.py", "/etc/passwd", "./a.py"] {
            assert_eq!(abs_path(root, outside), None, "{outside}");
        }
    }

    #[test]
    fn a_file_andon_does_not_index_refreshes_the_walk_and_anything_else_asks_for_one() {
        let write = |rel: &'static str| move |root: &Path| std::fs::write(root.join(rel), "x\n").unwrap();
        assert!(after(|_| {}).is_some(), "nothing changed");
        assert!(after(write("pkg/notes.txt")).is_some(), "a notes file");
        assert!(after(|r: &Path| std::fs::remove_file(r.join("pkg/a.py")).unwrap()).is_none(), "a module gone");
        assert!(after(write("pkg/c.py")).is_none(), "a new module");
        assert!(after(write("pkg/Cargo.toml")).is_none(), "a new manifest");
        assert!(after(write("pkg/.gitignore")).is_none(), "a new ignore file");
        assert!(after(|r: &Path| std::fs::create_dir(r.join("pkg/new")).unwrap()).is_none(), "a new directory");
        #[cfg(unix)]
        assert!(after(|r: &Path| std::os::unix::fs::symlink("sub", r.join("pkg/link")).unwrap()).is_none(), "a link");
    }
}
