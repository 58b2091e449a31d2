//! The library API: one function per command, the same for every front end (the command line,
//! an MCP server, an HTML report). Each returns a typed result whose serde serialization is
//! exactly the JSON document `andon <command> --format json` prints; text, Markdown, SARIF and
//! the other renderings are the presentation layer's. Nothing here prints, reads the terminal or
//! the environment, or maps an exit code: a front end does that from the result.
//!
//! - [`structure`]: the index and what is derived from it: `index`, `index --check`, `facts`,
//!   `query`, `stream`, `why`, `check` (the structural gate for pre-merge CI), `config show`.
//! - [`work`]: the loop and its ledger: `loop`, `status`, `preflight`, `propose`, `verify`, a
//!   person's decisions, `ledger check` and `ledger repair`.

use std::path::Path;

use serde_json::{Value, json};

use crate::config::Config;
use crate::index::{self, Index, IndexOptions};

pub mod command;
mod error;
pub mod structure;
pub mod work;

pub use command::*;
pub use error::Error;
pub use structure::BudgetFlags;

/// The version of every JSON document's shape (`schema_version`).
pub const SCHEMA_VERSION: u32 = 1;

/// Implements `Serialize` for a result through its `document()`: the JSON document it is.
macro_rules! json_document {
    ($($t:ty),* $(,)?) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.document().serialize(s)
            }
        }
    )*};
}
pub(crate) use json_document;

/// A document's `next`: what the caller does next, about which gap.
pub(crate) fn next(action: &str, gap: Option<&str>, detail: &str) -> Value {
    json!({ "action": action, "gap": gap, "detail": detail })
}

/// The settings of the repository at `root`, its offending line quoted on a configuration error.
pub fn config(root: &Path) -> Result<Config, Error> {
    Ok(Config::load(root)?)
}

/// Which file the settings of `root` come from, when another is ignored: `andon.toml` wins whole,
/// and a `[tool.andon]` table beside it is never merged in.
pub fn settings_note(root: &Path) -> Option<String> {
    let src = crate::config::source::find(root).ok()??;
    let shadowed = src.shadowed?;
    Some(format!(
        "settings are read from {}; the [tool.andon] table in {} is ignored (the two are never merged)",
        crate::text::line(&src.path.to_string_lossy()),
        crate::text::line(&shadowed.to_string_lossy())
    ))
}

/// A configuration error with the offending line of the file.
pub fn config_error(e: &crate::config::ConfigError) -> String {
    let bytes = crate::index::walk::read_regular(&e.path, 16 << 20).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    match text.lines().nth(e.line.saturating_sub(1) as usize) {
        Some(l) if !l.trim().is_empty() => format!("{e}\n  | {}", crate::text::line(l)),
        _ => e.to_string(),
    }
}

/// What a front end may change about the walk and the parse, over the settings.
#[derive(Clone, Debug, Default)]
pub struct WalkOverrides {
    pub hidden: bool,
    pub no_ignore: bool,
    pub vendored: bool,
    pub follow: bool,
    pub exclude: Vec<String>,
    pub max_filesize: Option<u64>,
    pub threads: Option<usize>,
    /// `--stream FILE`: the declared stream, instead of `[stream]` in the settings.
    pub stream: Option<std::path::PathBuf>,
}

/// The index options of the repository at `root`: its settings with the front end's overrides.
pub fn index_options(root: &Path, w: &WalkOverrides, rebuild: bool) -> Result<IndexOptions, Error> {
    if !root.exists() {
        return Err(format!("{}: no such directory; pass the repository to index", root.display()).into());
    }
    let cfg = Config::load(root).map_err(|e| e.to_string())?;
    let mut walk = cfg.walk;
    walk.hidden |= w.hidden;
    walk.no_ignore |= w.no_ignore;
    walk.vendored |= w.vendored;
    walk.follow_links |= w.follow;
    walk.exclude.extend(w.exclude.iter().cloned());
    walk.stream = match &w.stream {
        Some(file) => Some(crate::config::stream::load_file(file).map_err(|e| e.to_string())?),
        None => cfg.stream,
    };
    if let Some(d) = &walk.stream {
        crate::config::stream::check_roots(d, root)?;
    }
    if w.threads == Some(0) {
        return Err("--threads must be at least 1".into());
    }
    Ok(IndexOptions { walk, max_file_size: w.max_filesize.unwrap_or(cfg.max_file_size), threads: w.threads, rebuild })
}

/// How a command gets its index.
#[derive(Clone, Copy)]
pub enum Freshness<'p> {
    /// Bring the index up to date first (incrementally), reporting `(done, total)` files parsed.
    Update(&'p dyn crate::index::Watch),
    /// Refuse a stale or missing index ([`Error::StaleIndex`]).
    Require,
}

/// The fresh index of the repository at `root`.
pub fn fresh_index(root: &Path, opts: &IndexOptions, how: Freshness) -> Result<Index, Error> {
    freshen(root, opts, how)?;
    load_fresh(root, opts, how)
}

/// Brings the index of `root` up to date (or, with [`Freshness::Require`], insists it is) and
/// returns its stamp without reading its facts: a command that finds what it needs kept for
/// these facts ([`crate::datalog::kept`]) loads nothing more.
pub fn freshen(root: &Path, opts: &IndexOptions, how: Freshness) -> Result<index::Stamp, Error> {
    match how {
        Freshness::Update(progress) => {
            index::update(root, opts, progress)?;
        }
        Freshness::Require => match index::check(root, opts)? {
            Ok(c) if c.is_empty() => {}
            Ok(c) => {
                let first = c.first().map(|x| format!("{} {}", x.change, x.path)).unwrap_or_default();
                return Err(Error::StaleIndex(format!(
                    "the index is stale ({} changes, first: {first}); run `andon index` or drop --no-index",
                    c.len()
                )));
            }
            Err(why) => {
                return Err(Error::StaleIndex(format!(
                    "no usable index ({why}); run `andon index` or drop --no-index"
                )));
            }
        },
    }
    Ok(index::stamp(root).ok_or("the index cannot be read: it was replaced or damaged while this ran")?)
}

/// Loads the index of `root` that [`freshen`] brought up to date; under [`Freshness::Update`], a
/// pack damaged since it was written (found when it is read) is indexed again from scratch.
pub fn load_fresh(root: &Path, opts: &IndexOptions, how: Freshness) -> Result<Index, Error> {
    let loaded = match (index::load(root), how) {
        (Err(_), Freshness::Update(progress)) => {
            index::update(root, &IndexOptions { rebuild: true, ..opts.clone() }, progress)?;
            index::load(root)
        }
        (loaded, _) => loaded,
    };
    Ok(loaded.map_err(Error::IndexUnreadable)?.ok_or("the index was not written")?)
}

/// `enabled = false` stops every command before any other check or write (R1): the document
/// every command answers with then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disabled {
    /// Where `enabled = false` is set (`file:line`).
    pub origin: String,
}

impl Disabled {
    /// The repository at `root` is disabled by its settings, and where.
    pub fn of(root: &Path) -> Option<Disabled> {
        crate::config::settings::disabled(root).map(|o| Disabled { origin: o.to_string() })
    }

    /// What to do about it.
    pub fn message(&self) -> String {
        format!("andon is disabled by `enabled = false` at {}; set it to true (or remove it) to run andon", self.origin)
    }

    fn document(&self) -> Value {
        json!({ "schema_version": SCHEMA_VERSION, "message": self.message(),
                "verdict": { "outcome": "disabled", "origin": self.origin } })
    }
}

/// A command that reads the ledger found it invalid: the document it answers with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidLedger {
    pub error: String,
}

impl InvalidLedger {
    fn document(&self) -> Value {
        json!({
            "schema_version": SCHEMA_VERSION,
            "error": self.error,
            "next": next("repair-ledger", None,
                "run `andon ledger check` to see each problem; `andon ledger repair` sets an interrupted last write aside"),
            "verdict": { "outcome": "refused", "detail": "invalid ledger" },
        })
    }
}

json_document!(Disabled, InvalidLedger);

/// Seconds since the Unix epoch (0 before it).
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
