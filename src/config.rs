//! Configuration: `andon.toml` at the repository root, else `[tool.andon]` in `pyproject.toml`.
//! Unknown keys are errors that name the file, the line and the nearest valid key.

use std::path::{Path, PathBuf};

use crate::index::walk::WalkOptions;

/// Default size limit for parsed files (larger files are recorded as skipped).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 4 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct Config {
    /// Where the settings came from, if anywhere.
    pub source: Option<PathBuf>,
    pub walk: WalkOptions,
    pub max_file_size: u64,
}

#[derive(Debug)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

const TOP_KEYS: &[&str] = &["index"];
const INDEX_KEYS: &[&str] = &["exclude", "max_file_size", "hidden", "vendored", "follow_links", "no_ignore"];

impl Config {
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let mut cfg = Config { source: None, walk: WalkOptions::standard(), max_file_size: DEFAULT_MAX_FILE_SIZE };
        let andon = root.join("andon.toml");
        let py = root.join("pyproject.toml");
        let (path, text, table) = if let Ok(text) = std::fs::read_to_string(&andon) {
            let t = parse(&andon, &text)?;
            (andon, text, t)
        } else if let Ok(text) = std::fs::read_to_string(&py) {
            // a malformed pyproject.toml is reported by the index as a manifest error, not here
            let Ok(t) = text.parse::<toml::Table>() else {
                return Ok(cfg);
            };
            match t.get("tool").and_then(|t| t.get("andon")).and_then(|a| a.as_table()) {
                Some(a) => (py, text.clone(), a.clone()),
                None => return Ok(cfg),
            }
        } else {
            return Ok(cfg);
        };
        let err =
            |key: &str, message: String| ConfigError { path: path.clone(), line: line_of_key(&text, key), message };
        for (k, v) in &table {
            if !TOP_KEYS.contains(&k.as_str()) {
                return Err(err(k, unknown(k, TOP_KEYS, "")));
            }
            let Some(idx) = v.as_table() else {
                return Err(err(k, format!("`{k}` must be a table")));
            };
            for (ik, iv) in idx {
                match ik.as_str() {
                    "exclude" => {
                        let arr = iv
                            .as_array()
                            .ok_or_else(|| err(ik, "`index.exclude` must be an array of glob strings".into()))?;
                        for g in arr {
                            let s = g
                                .as_str()
                                .ok_or_else(|| err(ik, "`index.exclude` must be an array of glob strings".into()))?;
                            cfg.walk.exclude.push(s.to_string());
                        }
                    }
                    "max_file_size" => {
                        let n = iv.as_integer().filter(|n| *n > 0).ok_or_else(|| {
                            err(ik, "`index.max_file_size` must be a positive number of bytes".into())
                        })?;
                        cfg.max_file_size = n as u64;
                    }
                    "hidden" | "vendored" | "follow_links" | "no_ignore" => {
                        let b = iv.as_bool().ok_or_else(|| err(ik, format!("`index.{ik}` must be true or false")))?;
                        match ik.as_str() {
                            "hidden" => cfg.walk.hidden = b,
                            "vendored" => cfg.walk.vendored = b,
                            "follow_links" => cfg.walk.follow_links = b,
                            _ => cfg.walk.no_ignore = b,
                        }
                    }
                    other => return Err(err(other, unknown(other, INDEX_KEYS, "index."))),
                }
            }
        }
        cfg.source = Some(path);
        Ok(cfg)
    }
}

fn parse(path: &Path, text: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>().map_err(|e| ConfigError {
        path: path.to_path_buf(),
        line: e.span().map(|s| text[..s.start].matches('\n').count() as u32 + 1).unwrap_or(1),
        message: format!("not valid TOML: {}", e.message()),
    })
}

/// "unknown key" with the nearest valid key; `prefix` names the table (`index.`).
fn unknown(key: &str, valid: &[&str], prefix: &str) -> String {
    let near = valid.iter().min_by_key(|v| edit_distance(key, v)).filter(|v| edit_distance(key, v) <= 3);
    match near {
        Some(v) => format!("unknown key `{prefix}{key}`; did you mean `{prefix}{v}`?"),
        None => {
            let all: Vec<String> = valid.iter().map(|v| format!("{prefix}{v}")).collect();
            format!("unknown key `{prefix}{key}`; valid keys: {}", all.join(", "))
        }
    }
}

fn line_of_key(text: &str, key: &str) -> u32 {
    let short = key.rsplit('.').next().unwrap_or(key);
    text.lines()
        .position(|l| {
            let t = l.trim_start().trim_start_matches('[').trim_start();
            t.starts_with(short) && t[short.len()..].trim_start().starts_with(['=', ']', '.'])
        })
        .map(|i| i as u32 + 1)
        .unwrap_or(1)
}

pub use crate::datalog::lang::edit_distance;
