//! Comparing the stored index with the working tree without writing (`andon index --check`).

use super::*;

/// Compares the stored index with the working tree without writing anything. Returns `None` when
/// no usable index exists (with the reason), else the changes (empty: fresh).
pub fn check(root: &Path, opts: &IndexOptions) -> Result<Result<Vec<Change>, Unusable>, Error> {
    let root = check_root(root)?;
    let head = match read_head_settled(&index_path(&root)) {
        Ok(h) => h,
        Err(LoadError::Missing) => return Ok(Err(Unusable::Missing)),
        Err(LoadError::Untrusted(why)) => return Ok(Err(Unusable::Untrusted(why))),
        Err(LoadError::Moved(pack)) => return Ok(Err(Unusable::Untrusted(gone(&pack)))),
    };
    // other walk options or another declared stream: the stored facts are not these settings'
    if head.header.walk.options != walk::WalkState::options_hash(&root, &opts.walk) {
        return Ok(Err(Unusable::OtherSettings));
    }
    // when no directory or ignore file changed, the walk is the file table with fresh stats
    let walked = match rewalk_from_table(&root, &head, opts) {
        Some((entries, _)) => entries,
        None => walk::walk(&root, &opts.walk)?.0,
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
