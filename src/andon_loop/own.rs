//! andon's own output: the repo-relative directories a fix never touches, and the JSON artifacts
//! waiting in them for the loop to record.

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
