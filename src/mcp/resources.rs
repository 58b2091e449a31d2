//! The resources: `andon://ledger.md`, the ledger as the log renders it now, and
//! `andon://status.md`, the status board (`andon status --format markdown`).

use std::path::Path;

use super::Error;

/// The text of resource `uri` of the repository at `root`: None for an unknown resource.
pub(crate) fn read(root: &Path, uri: &str) -> Option<Result<String, Error>> {
    match uri {
        "andon://ledger.md" => Some(ledger(root)),
        "andon://status.md" => Some(status(root)),
        _ => None,
    }
}

fn ledger(root: &Path) -> Result<String, Error> {
    let cfg = crate::api::config(root)?;
    let dir = crate::ledger::dir_of(root, &cfg.settings);
    let rendered =
        crate::ledger::rendered(&dir).map_err(|source| Error::Ledger { dir: dir.display().to_string(), source })?;
    match rendered {
        Some(text) => Ok(text),
        None => {
            Ok("# Ledger\n\nNo ledger yet: the loop has never run here. Call the `loop` tool to start it.\n".into())
        }
    }
}

fn status(root: &Path) -> Result<String, Error> {
    let s = crate::api::work::status(root)?;
    let mut out = Vec::new();
    crate::output::status::report(&mut out, &s, crate::output::status::StatusFormat::Markdown)
        .map_err(Error::Render)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
