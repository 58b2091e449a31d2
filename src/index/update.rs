//! One index run: walk, reuse what is fresh, parse what changed, resolve when needed and write
//! the new head and packs.

use super::*;

/// Writes an index: its new segments to a new pack, then the head.
pub(super) fn write_index(
    dir: &Path,
    header: &IndexHeader,
    files: &[FileMeta],
    facts: TableFacts,
    repo: &RepoBlobs,
    (packs, chunks, untouched): (&[(u64, u64)], &[(store::Loc, u64)], Option<&[bool]>),
) -> Result<(), Error> {
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

pub(super) fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// Result of looking at one walked file.
pub(super) enum Job {
    /// The stored file at this place, with new stats when they changed (`None`: as stored; boxed,
    /// as most files of a run are reused as stored).
    Reuse(usize, Option<Box<FileMeta>>),
    /// Parsed: boxed, so the table of jobs of a large repository stays small.
    New(Box<(FileMeta, FileFacts, Vec<Diag>)>),
}

/// Whether the stored entry can be trusted from its size and time alone.
pub(super) fn stat_fresh(old: &FileMeta, e: &WalkEntry, stamp_ns: u64, max_size: u64) -> bool {
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
pub(super) fn rewalk_from_table(
    root: &Path,
    h: &Head,
    opts: &IndexOptions,
) -> Option<(Vec<WalkEntry>, walk::WalkState)> {
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
pub(super) fn in_pool<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> Result<T, Error> {
    match threads {
        Some(n) => Ok(rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build()
            .map_err(|source| Error::Threads { n, source })?
            .install(work)),
        None => Ok(work()),
    }
}

/// Brings the index of `root` up to date and returns what was done.
pub fn update(root: &Path, opts: &IndexOptions, progress: &dyn Watch) -> Result<IndexReport, Error> {
    let t0 = Instant::now();
    let root = check_root(root)?;
    let (dir, lock) = lock(&root, progress)?;
    let stamp_ns = now_ns();
    let ipath = dir.join(INDEX_FILE);
    let StoredHead { head, rebuilt, reseal } = stored_head(&root, &ipath, opts);
    // Fast path: when no directory, ignore file or indexed file changed since the last run, the
    // walk is skipped and nothing but the file table is read.
    let fast = match &head {
        Some(h) => in_pool(opts.threads, || rewalk_from_table(&root, h, opts))?,
        None => None,
    };
    if let (Some(h), Some((entries, state))) = (&head, &fast)
        && !reseal
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
        None => walk::walk(&root, &opts.walk)?,
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
        return Err(Error::ReadOnly { dir, why: why.clone() });
    }
    // Where nothing can be written, new stats or directory times change no fact: the stored
    // index stands.
    if !structure_changed && ((!tally.metas_changed && !walk_changed && !reseal) || lock.read_only.is_some()) {
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
    let rebuild = |why: Error, lock: Lock| {
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
        _ => match resolve_all(&root, opts, &files, facts) {
            Ok(done) => done,
            Err(why) => return rebuild(why, lock),
        },
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

/// Resolves the whole repository again from every file's core facts: the summary, the whole-repo
/// facts with the record of resolution's questions, and the facts file by file. An error is a
/// pack that cannot be read (the caller rebuilds).
fn resolve_all(
    root: &Path,
    opts: &IndexOptions,
    files: &[FileMeta],
    facts: TableFacts,
) -> Result<(Summary, RepoBlobs, TableFacts), Error> {
    let facts = facts.each();
    for f in &facts {
        f.core_blob.read_pack();
    }
    let cores = facts.iter().map(FileFacts::try_core).collect::<Result<Vec<&Segment>, Error>>()?;
    let stream = opts.walk.stream.as_ref();
    let resolved = crate::resolve::resolve(files, &cores, &root_name(root), stream, &opts.walk.stage_dirs);
    let summary = summarize(files, &cores, &resolved.global);
    let repo =
        RepoBlobs { global: Blob::Owned(store::encode_segment(&resolved.global)), reads: Blob::Owned(resolved.reads) };
    Ok((summary, repo, TableFacts::Each(facts)))
}

/// Whether the stored whole-repo facts stand for the new file table: every re-parsed file
/// ([`Replaced`]) gives resolution the same inputs but for names of its
/// surface that resolution never asked about, as the stored record of its questions shows (a
/// record or segment that cannot be read stands for nothing).
pub(super) fn repo_stands(repo: &RepoBlobs, files: &[FileMeta], facts: &TableFacts, replaced: &[Replaced]) -> bool {
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
/// the stored index is not used, when it is not. A pack whose seal moved is verified whole first
/// (a damaged one means a rebuild); then `reseal` is true: the run writes a head that seals the
/// packs as they are.
pub(super) fn stored_head(root: &Path, ipath: &Path, opts: &IndexOptions) -> StoredHead {
    let untrusted = |why: String| StoredHead {
        head: None,
        rebuilt: Some(format!("{}: {why}; rebuilding", rel_display(root, ipath))),
        reseal: false,
    };
    if opts.rebuild {
        return StoredHead { head: None, rebuilt: Some("rebuild requested".to_string()), reseal: false };
    }
    let dir = ipath.parent().unwrap_or(root);
    match read_head(ipath) {
        Ok(h) => match store::packs_present(dir, &h) {
            Ok(moved) => match moved.iter().try_for_each(|&id| store::verify_pack(dir, &h, id)) {
                Ok(()) => StoredHead { head: Some(h), rebuilt: None, reseal: !moved.is_empty() },
                Err(why) => untrusted(why.to_string()),
            },
            Err(why) => untrusted(why.to_string()),
        },
        Err(LoadError::Missing) => StoredHead { head: None, rebuilt: None, reseal: false },
        Err(LoadError::Untrusted(why)) => untrusted(why),
        Err(LoadError::Moved(pack)) => untrusted(gone(&pack)),
    }
}

/// The stored head a writer starts from ([`stored_head`]).
pub(super) struct StoredHead {
    pub(super) head: Option<Head>,
    /// Why the stored index is not used, when it is not.
    pub(super) rebuilt: Option<String>,
    /// Whether a pack's seal moved (it was verified sound): the run must write a head.
    pub(super) reseal: bool,
}

/// A run in which no fact changed but stats or directory times did: the new file table and walk
/// state go to a new head, which names the stored segments where they are (no pack is read).
#[allow(clippy::too_many_arguments)]
pub(super) fn head_only(
    root: PathBuf,
    ipath: PathBuf,
    dir: &Path,
    head: Head,
    jobs: Vec<Job>,
    stamp_ns: u64,
    walk: wire::WalkStateWire,
    (tally, rebuilt, diagnostics): (Tally, Option<String>, Vec<Diag>),
    t0: Instant,
) -> Result<IndexReport, Error> {
    let olds: Vec<Option<usize>> =
        jobs.iter().map(|j| if let Job::Reuse(oi, _) = j { Some(*oi) } else { None }).collect();
    let untouched = untouched(&jobs, &olds, head.files.len());
    let header = IndexHeader { fingerprint: fingerprint(), stamp_ns, summary: head.header.summary.clone(), walk };
    // the stored blobs, opened (not read): when the packs are due for compaction, it copies them
    // like any run's (a run of stats alone writes the chunks of the files whose stats changed)
    let (packs, chunks) = (head.packs.clone(), head.chunks.clone());
    let stored = read_stored_lazily(dir, head).map_err(|e| match e {
        LoadError::Untrusted(why) => Error::Untrusted(why),
        _ => Error::PackMissing,
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
pub(super) fn untouched(jobs: &[Job], olds: &[Option<usize>], stored: usize) -> Option<Vec<bool>> {
    let same = olds.len() == stored && olds.iter().enumerate().all(|(i, o)| *o == Some(i));
    same.then(|| jobs.iter().map(|j| matches!(j, Job::Reuse(_, None))).collect())
}

/// Where each walked file is in the stored file table, if it is there. When the walk is the
/// stored table with fresh stats (no directory changed), file `i` is at `i`.
pub(super) fn old_indices(walked: &[WalkEntry], old_files: &[FileMeta]) -> Vec<Option<usize>> {
    if walked.len() == old_files.len() && walked.iter().zip(old_files).all(|(w, f)| w.rel == f.path) {
        return (0..walked.len()).map(Some).collect();
    }
    let by_path: HashMap<&str, usize> = old_files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
    walked.iter().map(|e| by_path.get(e.rel.as_str()).copied()).collect()
}

/// Each walked file's job, and how many files were read.
pub(super) type Looked = (Vec<Job>, u64);

/// Looks at every walked file, in walk order (`olds`: where each is in the stored table,
/// [`old_indices`]). Stat-fresh files are reused without reading; everything else is read, hashed
/// and (if the hash changed) parsed, in parallel and largest
/// first so one huge file never waits at the end. Also returns how many files were read.
pub(super) fn look_at_all(
    walked: &[WalkEntry],
    old_files: &[FileMeta],
    olds: &[Option<usize>],
    old_stamp: u64,
    opts: &IndexOptions,
    progress: &dyn Watch,
) -> Result<Looked, Error> {
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
                let job = look_at(ctx, e, old, opts.max_file_size, opts.walk.follow_links);
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress.files(n, total);
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
pub(super) struct Tally {
    pub(super) parsed: u64,
    pub(super) reused: u64,
    pub(super) removed: u64,
    /// Files re-read because their size or time changed.
    pub(super) rehashed: u64,
    /// A reused file's stored entry changed (its size or time).
    pub(super) metas_changed: bool,
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
pub(super) fn stored_body(dir: &Path, head: Option<Head>) -> Result<Option<Stored>, Error> {
    match head.map(|h| read_stored_lazily(dir, h)) {
        Some(Ok(i)) => Ok(Some(i)),
        Some(Err(LoadError::Untrusted(why))) => Err(Error::Untrusted(why)),
        Some(Err(LoadError::Moved(pack))) => Err(Error::PackGone { pack }),
        Some(Err(LoadError::Missing)) | None => Ok(None),
    }
}

/// A re-parsed file that was indexed before: its place in the new table, its stored entry and
/// facts.
pub(super) struct Replaced {
    pub(super) at: usize,
    pub(super) meta: FileMeta,
    pub(super) facts: FileFacts,
}

/// The new file table and its facts, in walk order: a reused file keeps its stored facts, a new
/// one brings its own (and its diagnostics). Also returns each re-parsed file that was indexed
/// before, and the stored repo blobs.
#[allow(clippy::type_complexity)]
pub(super) fn assemble(
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
pub(super) fn root_name(root: &Path) -> String {
    root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The report of a run that found nothing to change.
#[allow(clippy::too_many_arguments)]
pub(super) fn unchanged_report(
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

pub(super) fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1000.0
}

pub(super) fn rel_display(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}
