//! The server's one rule for path arguments: every path resolves inside the repository it was
//! started on (relative paths from the repository's root; `..`, absolute paths and symbolic
//! links may not lead out of it).

use std::path::{Component, Path, PathBuf};

/// `arg` as an absolute path inside `root` (canonical), or why not. A path that does not exist
/// yet (a file a fix will write) is judged by its nearest existing ancestor.
pub(crate) fn inside(root: &Path, arg: &str, what: &str) -> Result<PathBuf, String> {
    if arg.is_empty() || arg.contains('\0') {
        return Err(format!("`{what}`: `{}` is not a path", crate::text::line(arg)));
    }
    let joined = root.join(arg);
    let mut lexical = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            c => lexical.push(c),
        }
    }
    let (mut existing, mut rest) = (lexical.as_path(), Vec::new());
    let resolved = loop {
        match existing.canonicalize() {
            Ok(p) => break p,
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent;
                }
                _ => break existing.to_path_buf(),
            },
        }
    };
    let full = rest.iter().rev().fold(resolved, |p, n| p.join(n));
    if full.starts_with(root) {
        Ok(full)
    } else {
        Err(format!(
            "`{what}`: `{}` is outside the repository {}; every path must resolve inside it",
            crate::text::line(arg),
            crate::text::line(&root.to_string_lossy())
        ))
    }
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
        }
    }
}
