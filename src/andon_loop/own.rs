//! andon's own output: the repo-relative directories a fix never touches, the JSON artifacts
//! waiting in them for the loop to record, and the ignore file that keeps its scratch out of git.

use std::path::Path;

use super::error::Error;
use crate::config::Config;

/// andon's own reports and ledger, as repo-relative `dir/` prefixes: never part of a fix.
pub(crate) fn own_paths(cfg: &Config) -> Vec<String> {
    [cfg.settings.output_dir.value.clone(), cfg.settings.ledger_dir.value.clone()]
        .iter()
        .filter(|p| p.is_relative())
        .map(|p| {
            let p = p.to_string_lossy().replace('\\', "/");
            format!("{}/", p.trim_start_matches("./").trim_end_matches('/'))
        })
        .collect()
}

/// The JSON artifacts waiting in `dir` for the loop to record (proposals, evidence, audits),
/// sorted by file name, each read or with why it cannot be.
pub fn pending<T: serde::de::DeserializeOwned>(dir: &Path) -> Vec<(std::path::PathBuf, Result<T, Error>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<std::path::PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let r = std::fs::read_to_string(&f)
                .map_err(|source| Error::ArtifactUnreadable { path: f.clone(), source })
                .and_then(|t| {
                    serde_json::from_str::<T>(&t).map_err(|source| Error::ArtifactMalformed { path: f.clone(), source })
                });
            (f, r)
        })
        .collect()
}

/// The ignore file andon writes in its output directory, once, where there is none.
pub const SCRATCH_IGNORE: &str = ".gitignore";

/// Writes `<output_dir>/.gitignore` when the output directory is inside the repository at `root`
/// and has none (a person's own file is never replaced): everything andon writes there is scratch
/// (rendered reports, command logs and caches, proposals and evidence waiting to be taken in,
/// panel packets, red-first copies), but the ledger, which is meant to be committed. Returns the
/// file it wrote; a failure to write it only leaves the scratch unignored.
pub fn ignore_scratch(root: &Path, settings: &crate::config::Settings) -> Option<std::path::PathBuf> {
    let out = &settings.output_dir.value;
    if !inside(out) {
        return None;
    }
    let file = settings.output_path(root).join(SCRATCH_IGNORE);
    if std::fs::symlink_metadata(&file).is_ok() {
        return None;
    }
    let ledger = settings
        .ledger_dir
        .value
        .strip_prefix(out)
        .ok()
        .filter(|l| inside(l))
        .map(|l| l.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>());
    let text = scratch_ignore_text(ledger.as_deref());
    std::fs::create_dir_all(settings.output_path(root)).ok()?;
    crate::text::write_new(&file, text.as_bytes()).ok().map(|_| file)
}

/// Whether a configured directory is a relative path that stays inside where it is joined.
/// (`.` itself is not: an ignore file there would hide the whole repository).
fn inside(p: &Path) -> bool {
    use std::path::Component::{CurDir, Normal};
    p.is_relative()
        && p.components().all(|c| matches!(c, Normal(_) | CurDir))
        && p.components().any(|c| matches!(c, Normal(_)))
}

/// The text of the scratch ignore file: all but itself and, where the ledger lies under the output
/// directory (`ledger`: its path there, by component), the ledger's log and its rendered view.
pub(crate) fn scratch_ignore_text(ledger: Option<&[String]>) -> String {
    let mut t = String::from(
        "# Written by andon: what andon writes here is scratch (rendered reports, command logs and\n\
         # caches, proposals and evidence waiting to be taken in, panel packets, red-first copies).\n\
         # The ledger is the loop's memory and is meant to be committed.\n*\n!/.gitignore\n",
    );
    if let Some(parts) = ledger.filter(|p| !p.is_empty()) {
        let glob = |s: &str| {
            s.chars()
                .flat_map(|c| if matches!(c, '*' | '?' | '[' | '\\' | '!' | '#') { vec!['\\', c] } else { vec![c] })
                .collect::<String>()
        };
        let mut at = String::new();
        for p in parts {
            at.push('/');
            at.push_str(&glob(p));
            t.push_str(&format!("!{at}/\n"));
        }
        for f in ["ledger.jsonl", "ledger.md"] {
            t.push_str(&format!("!{at}/{f}\n"));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::scratch_ignore_text;

    #[test]
    fn the_ledger_is_kept_and_the_rest_ignored() {
        let t = scratch_ignore_text(Some(&["ledger".to_string()]));
        assert!(t.ends_with("*\n!/.gitignore\n!/ledger/\n!/ledger/ledger.jsonl\n!/ledger/ledger.md\n"), "{t}");
        let t = scratch_ignore_text(Some(&["a".to_string(), "b[1]".to_string()]));
        assert!(t.contains("!/a/\n!/a/b\\[1]/\n!/a/b\\[1]/ledger.jsonl\n"), "{t}");
        assert!(scratch_ignore_text(None).ends_with("*\n!/.gitignore\n"));
    }
}
