//! Which file holds the settings, read strictly: `andon.toml` at the root, else `[tool.andon]` in
//! `pyproject.toml`, never both. A settings file that is there but cannot be read or decoded is an
//! error naming it; it is never skipped for the next file or for the defaults, since either would
//! change what the gate enforces.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::{ConfigError, line_at};

/// The largest settings file andon reads (a `pyproject.toml` included).
const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// The settings file andon reads, decoded.
#[derive(Clone, Debug)]
pub struct Source {
    /// `andon.toml`, or `pyproject.toml` holding a `[tool.andon]` table.
    pub path: PathBuf,
    pub text: String,
    /// The settings are the `[tool.andon]` table of `pyproject.toml`.
    pub tool_table: bool,
    /// A `pyproject.toml` whose `[tool.andon]` table is ignored because `andon.toml` is read.
    pub shadowed: Option<PathBuf>,
}

/// `name` at `root`; `./andon.toml` reads better as `andon.toml` in messages.
pub(super) fn config_file(root: &Path, name: &str) -> PathBuf {
    if root == Path::new(".") { PathBuf::from(name) } else { root.join(name) }
}

/// The settings file of `root`: `andon.toml` when there is one (whole: `[tool.andon]` is then
/// ignored), else `pyproject.toml` when it has a `[tool.andon]` table; None when neither does.
pub fn find(root: &Path) -> Result<Option<Source>, ConfigError> {
    let andon = config_file(root, "andon.toml");
    let py = config_file(root, "pyproject.toml");
    if let Some(text) = read_text(&andon)? {
        // a pyproject.toml that cannot be read says nothing here: andon.toml is the settings
        let shadowed = matches!(pyproject_text(&py), Ok(Some(t)) if has_tool_table(&t)).then_some(py);
        return Ok(Some(Source { path: andon, text, tool_table: false, shadowed }));
    }
    Ok(pyproject_text(&py)?.filter(|t| has_tool_table(t)).map(|text| Source {
        path: py,
        text,
        tool_table: true,
        shadowed: None,
    }))
}

/// The text of a settings file: None when nothing is at `path`; an error naming the file when
/// something is there that cannot be read as UTF-8 text (a directory, a dangling link, a FIFO or
/// device, an unreadable file, one over 16 MiB, a byte that is not UTF-8, named with its line and
/// byte offset). A FIFO or `/dev/zero` behind a committed link never blocks or fills memory.
pub fn read_text(path: &Path) -> Result<Option<String>, ConfigError> {
    let err = |line: u32, message: String| ConfigError { path: path.to_path_buf(), line, message };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(1, format!("cannot be read: {e}; make it a readable file, or remove it"))),
        Ok(_) => {}
    }
    if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(err(1, "is a directory, not a settings file; remove or rename it".into()));
    }
    let bytes = crate::index::walk::read_regular(path, MAX_SETTINGS_BYTES)
        .map_err(|e| err(1, format!("cannot be read: {e}; make it a readable file, or remove it")))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..at].iter().filter(|b| **b == b'\n').count() as u32 + 1;
            Err(err(
                line,
                format!("is not UTF-8: byte 0x{:02x} at byte offset {at}; save the file as UTF-8", bytes[at]),
            ))
        }
    }
}

/// The text of `pyproject.toml`: None when there is none (or a directory is in its place). A file
/// that cannot be read or decoded is an error only when its bytes mention `tool.andon`: it may
/// hold the settings, and andon must not run without them; otherwise the index reports it as a
/// malformed manifest.
fn pyproject_text(py: &Path) -> Result<Option<String>, ConfigError> {
    if std::fs::metadata(py).is_ok_and(|m| m.is_dir()) {
        return Ok(None);
    }
    match read_text(py) {
        Ok(text) => Ok(text),
        Err(e) => match crate::index::walk::read_regular(py, MAX_SETTINGS_BYTES) {
            Ok(bytes) if !mentions_tool_table(&String::from_utf8_lossy(&bytes)) => Ok(None),
            _ => Err(e),
        },
    }
}

/// `text` (a pyproject.toml) has a `[tool.andon]` table. A file that is not TOML but mentions the
/// table is an error, named with its line, rather than a file without settings.
fn has_tool_table(text: &str) -> bool {
    match DeTable::parse(text) {
        Ok(doc) => {
            let tool = doc.get_ref().get("tool").map(|t| t.get_ref());
            matches!(tool, Some(DeValue::Table(t)) if t.get("andon").is_some())
        }
        Err(_) => mentions_tool_table(text),
    }
}

/// A line of `text` opens or sets the `[tool.andon]` table (`[tool.andon]`, `[[tool.andon.x]]`,
/// `tool.andon.x = …`, quoted keys included), however it is spaced.
fn mentions_tool_table(text: &str) -> bool {
    text.lines().any(|l| {
        let compact: String = l.chars().filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'').collect();
        let key = compact.trim_start_matches('[');
        key.starts_with("tool.andon") || (key.starts_with("tool=") && compact.contains("andon"))
    })
}

/// The configuration table of `source` with its key lines: the whole of `andon.toml`, or the
/// `[tool.andon]` table of `pyproject.toml`. TOML errors name the line.
pub(super) fn table(source: &Source) -> Result<super::Table, ConfigError> {
    let text = &source.text;
    let doc = DeTable::parse(text).map_err(|e| ConfigError {
        path: source.path.clone(),
        line: e.span().map(|s| line_at(text, s.start)).unwrap_or(1),
        message: format!("not valid TOML: {}", e.message()),
    })?;
    let top = super::convert_table(text, doc.get_ref());
    if !source.tool_table {
        return Ok(top);
    }
    let tool = top.into_iter().find(|(k, _, _)| k == "tool").map(|(_, _, v)| v);
    let andon = tool.and_then(|t| match t.v {
        super::TomlKind::Table(t) => t.into_iter().find(|(k, _, _)| k == "andon"),
        _ => None,
    });
    match andon {
        Some((_, _, super::TomlValue { v: super::TomlKind::Table(t), .. })) => Ok(t),
        Some((_, line, _)) => Err(ConfigError {
            path: source.path.clone(),
            line,
            message: "`tool.andon` must be a table of andon's settings".into(),
        }),
        None => Ok(Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            std::fs::write(dir.path().join(name), bytes).unwrap();
        }
        dir
    }

    const TOOL: &[u8] = b"[project]\nname = \"x\"\n[[tool.andon.contract]]\nname = \"c\"\nkind = \"acyclic\"\n";

    #[test]
    fn andon_toml_wins_whole_and_names_what_it_shadows() {
        let dir = repo(&[("andon.toml", b"output_dir = \"out\"\n"), ("pyproject.toml", TOOL)]);
        let s = find(dir.path()).unwrap().unwrap();
        assert!(s.path.ends_with("andon.toml") && !s.tool_table);
        assert!(s.shadowed.as_ref().is_some_and(|p| p.ends_with("pyproject.toml")));
        let dir = repo(&[("andon.toml", b""), ("pyproject.toml", b"[project]\nname = \"x\"\n")]);
        assert_eq!(find(dir.path()).unwrap().unwrap().shadowed, None);
    }

    #[test]
    fn an_andon_toml_that_cannot_be_read_is_an_error_not_a_fallback() {
        let dir = repo(&[("andon.toml", b"# ok\n# Contr\xf4les\n"), ("pyproject.toml", TOOL)]);
        let e = find(dir.path()).unwrap_err();
        assert!(e.path.ends_with("andon.toml"), "{e}");
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("not UTF-8") && e.message.contains("byte offset 12"), "{e}");
        let dir = repo(&[("pyproject.toml", TOOL)]);
        std::fs::create_dir(dir.path().join("andon.toml")).unwrap();
        let e = find(dir.path()).unwrap_err();
        assert!(e.message.contains("is a directory"), "{e}");
        let dir = repo(&[]);
        std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("andon.toml")).unwrap();
        assert!(find(dir.path()).unwrap_err().message.contains("cannot be read"));
    }

    #[test]
    fn a_pyproject_is_an_error_only_when_it_may_hold_the_settings() {
        let dir = repo(&[("pyproject.toml", b"[project]\nname = \"caf\xe9\"\n")]);
        assert!(find(dir.path()).unwrap().is_none());
        let dir = repo(&[("pyproject.toml", b"[project]\nname = \"caf\xe9\"\n[tool.andon]\n")]);
        assert_eq!(find(dir.path()).unwrap_err().line, 2);
        let dir = repo(&[("pyproject.toml", b"[project\n[ tool . \"andon\" ]\nx = 1\n")]);
        let s = find(dir.path()).unwrap().unwrap();
        assert!(table(&s).err().unwrap().message.contains("not valid TOML"));
        let dir = repo(&[("pyproject.toml", b"[project\nname = 1\n")]);
        assert!(find(dir.path()).unwrap().is_none());
    }
}
