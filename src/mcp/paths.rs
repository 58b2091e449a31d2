//! The server's one rule for path arguments: every path resolves inside the repository it was
//! started on (relative paths from the repository's root; `..`, absolute paths and symbolic
//! links may not lead out of it).

use std::path::{Component, Path, PathBuf};

use super::error::Error;

/// `arg` as an absolute path inside `root` (canonical), or why not. Each existing component is
/// looked at without following it: a symbolic link must lead to an existing place inside the
/// repository (a dangling one is refused: what it names could appear outside later). The part
/// that does not exist yet (a file a fix will write) is taken as it is written.
pub(crate) fn inside(root: &Path, arg: &str, what: &str) -> Result<PathBuf, Error> {
    let shown = || crate::text::line(arg).into_owned();
    let outside = || Error::Outside {
        what: what.into(),
        arg: shown(),
        root: crate::text::line(&root.to_string_lossy()).into_owned(),
    };
    if arg.is_empty() || arg.contains('\0') {
        return Err(Error::NotAPath { what: what.into(), arg: shown() });
    }
    let mut lexical = PathBuf::new();
    for c in root.join(arg).components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            c => lexical.push(c),
        }
    }
    // an absolute path through another name of the repository (a link to it) counts as inside
    let rest = match lexical.strip_prefix(root) {
        Ok(rest) => rest.to_path_buf(),
        Err(_) => match lexical.canonicalize() {
            Ok(c) if c.starts_with(root) => c.strip_prefix(root).expect("checked").to_path_buf(),
            _ => return Err(outside()),
        },
    };
    let mut cur = root.to_path_buf();
    let mut parts = rest.components();
    while let Some(c) = parts.next() {
        let next = cur.join(c);
        match std::fs::symlink_metadata(&next) {
            Err(_) => return Ok(parts.fold(next, |p, c| p.join(c))),
            Ok(m) if m.file_type().is_symlink() => match next.canonicalize() {
                Ok(t) if t.starts_with(root) => cur = t,
                Ok(_) => return Err(outside()),
                Err(_) => return Err(Error::Dangling { what: what.into(), arg: shown() }),
            },
            Ok(_) => cur = next,
        }
    }
    Ok(cur)
}

/// The bytes of the regular file `path` (from [`inside`]), at most `max`: opened without
/// following a last link, and refused when the file opened is not inside `root` after all (a
/// link swapped in between the check and the open).
pub(crate) fn read_inside(root: &Path, path: &Path, max: u64) -> Result<Vec<u8>, Error> {
    let shown = || crate::text::line(&path.to_string_lossy()).into_owned();
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    let file = o.open(path).map_err(|source| Error::Read { path: shown(), source })?;
    #[cfg(target_os = "linux")]
    {
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        if let Ok(real) = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            && !real.starts_with(root)
        {
            return Err(Error::LedOutside { path: shown() });
        }
    }
    let meta = file.metadata().map_err(|source| Error::Read { path: shown(), source })?;
    if !meta.is_file() {
        return Err(Error::NotAFile { path: shown() });
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, max + 1), &mut bytes)
        .map_err(|source| Error::Read { path: shown(), source })?;
    if bytes.len() as u64 > max {
        return Err(Error::TooLarge { path: shown(), mib: max >> 20 });
    }
    Ok(bytes)
}

/// `path` (inside `root`) as the repository-relative text the library takes.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_repository() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.py"), "").unwrap();
        assert_eq!(inside(&root, "src/a.py", "x").unwrap(), root.join("src/a.py"));
        assert_eq!(inside(&root, "./src/../src/new.py", "x").unwrap(), root.join("src/new.py"));
        assert_eq!(inside(&root, "brand/new/dir/f.rs", "x").unwrap(), root.join("brand/new/dir/f.rs"));
        for bad in ["../x", "/etc/passwd", "src/../../x", ""] {
            assert!(inside(&root, bad, "x").is_err(), "{bad}");
        }
        let abs = root.join("src/a.py");
        assert!(inside(&root, &abs.to_string_lossy(), "x").is_ok());
        #[cfg(unix)]
        {
            let out = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(out.path(), root.join("link")).unwrap();
            assert!(inside(&root, "link/f.py", "x").is_err(), "a symbolic link leads out");
            std::os::unix::fs::symlink(out.path().join("nothing.py"), root.join("dangle.py")).unwrap();
            std::os::unix::fs::symlink(out.path().join("nodir"), root.join("dangledir")).unwrap();
            for dangling in ["dangle.py", "dangledir/a.py"] {
                let e = inside(&root, dangling, "x").unwrap_err().to_string();
                assert!(e.contains("leads nowhere"), "{e}");
            }
            std::os::unix::fs::symlink(root.join("src"), root.join("alias")).unwrap();
            assert_eq!(inside(&root, "alias/a.py", "x").unwrap(), root.join("src/a.py"), "a link inside stays inside");
            // a link swapped in after the check is caught when the file is opened
            let checked = inside(&root, "src/later.dl", "x").unwrap();
            std::fs::write(out.path().join("secret.dl"), "S(x) :- Stage(x, _).").unwrap();
            std::os::unix::fs::symlink(out.path().join("secret.dl"), &checked).unwrap();
            assert!(read_inside(&root, &checked, 1 << 20).is_err(), "the last link is not followed");
            assert_eq!(read_inside(&root, &root.join("src/a.py"), 1 << 20).unwrap(), b"");
        }
    }
}
