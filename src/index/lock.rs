//! The writer's lock on `.andon/` and the clean-up of temporary files of writers that are gone.

use super::*;

/// The lock a run holds on `.andon/` while it lasts.
pub(super) struct Lock {
    /// The writer's exclusive lock; where `.andon/` is read-only, a shared lock when the lock file
    /// could be opened (so no writer replaces the index while it is read), else none.
    pub(super) _file: Option<File>,
    /// Why nothing may be written, when `.andon/` is read-only.
    pub(super) read_only: Option<String>,
}

/// Creates `.andon/` (with a `.gitignore` so the cache is never committed) and takes the writer
/// lock; where `.andon/` is read-only, a reader's lock.
pub(super) fn lock(root: &Path, watch: &dyn Watch) -> Result<(PathBuf, Lock), Error> {
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
            wait_for(&f, &lock_path, watch)?;
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

/// How long a writer waits for the lock before it says it waits.
const SAY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// Takes the writer's lock on `f`; while another writer holds it past [`SAY_AFTER`], says so once
/// through `watch`, then waits on.
fn wait_for(f: &File, path: &Path, watch: &dyn Watch) -> Result<(), Error> {
    let t0 = Instant::now();
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) if t0.elapsed() < SAY_AFTER => {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            Err(fs::TryLockError::WouldBlock) => {
                watch.waiting(&format!(
                    "waiting for {}: another andon run is writing this index (it goes on when that run ends; \
                     a run that hangs can be stopped)",
                    crate::text::os_path_text(path.as_os_str())
                ));
                return f.lock().map_err(io(path));
            }
            Err(fs::TryLockError::Error(e)) => return Err(io(path)(e)),
        }
    }
}

/// Opens the lock file (created when `write`) without blocking on a FIFO or following a symbolic
/// link, and refuses anything but a regular file.
pub(super) fn open_lock(path: &Path, write: bool) -> std::io::Result<File> {
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
pub(super) fn read_only(err: &std::io::Error) -> bool {
    matches!(err.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem)
}

/// Removes the temporary index files of writers that are gone (their process id is not alive),
/// never a live process's. Called under the writer's lock. Only where liveness can be told
/// (Linux: `/proc/<pid>`); elsewhere they stay.
pub(super) fn remove_dead_temporaries(dir: &Path) {
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
