//! The settings surface (spec 000 §7.4; R1–R12): the legacy field names, types and defaults, as
//! top-level keys of `andon.toml` (or `[tool.andon]`), and read from the legacy settings file
//! `.claude/andon.local.md` (YAML front matter) at lower precedence. Every value remembers where it
//! came from, for `andon config show`.

use std::path::{Path, PathBuf};

use super::Error;

/// The legacy settings file, relative to the repository root.
pub const LEGACY_FILE: &str = ".claude/andon.local.md";

/// The authorization ceiling and blast-radius scale (the schema's vocabulary), ordered as
/// declared: a fix whose radius exceeds the ceiling halts the loop.
pub use crate::facts::vocab::BlastRadius;

impl BlastRadius {
    /// The radius as settings and the ledger write it (its token).
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

/// Where the loop's gaps come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GapSource {
    SelfScan,
    /// Ingest an external modernization brief (legacy spelling `self-assess-brief`).
    Ingest,
}

impl GapSource {
    pub fn name(self) -> &'static str {
        match self {
            GapSource::SelfScan => "self-scan",
            GapSource::Ingest => "ingest",
        }
    }
}

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Default,
    /// A settings file and the line of the key.
    File(PathBuf, u32),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::File(p, l) => write!(f, "{}:{l}", p.display()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub origin: Origin,
}

fn default<T>(value: T) -> Setting<T> {
    Setting { value, origin: Origin::Default }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub enabled: Setting<bool>,
    /// Repo-authored conventions for `propose` (repo-relative).
    pub house_rules_path: Setting<PathBuf>,
    /// Every report and machine sidecar (repo-relative, or absolute).
    pub output_dir: Setting<PathBuf>,
    /// The ledger; `<output_dir>/ledger` unless set.
    pub ledger_dir: Setting<PathBuf>,
    /// The repository's identity in a `ledger_dir` several repositories share (empty: its root
    /// commit).
    pub repo_id: Setting<String>,
    pub authorization_level: Setting<BlastRadius>,
    pub skip_verification: Setting<bool>,
    pub lint_max_rules: Setting<u32>,
    pub gap_source: Setting<GapSource>,
    pub self_assess_output_dir: Setting<PathBuf>,
    /// How many stages back a sub-cycle re-proves wires whose surface a fix changed.
    pub backtrack_depth: Setting<u32>,
    /// A wire reopened this many times is thrashing and becomes the constraint.
    pub thrash_threshold: Setting<u32>,
    /// `[query]`: the budgets of a run-time evaluation.
    pub query: QueryBudget,
}

/// `[query]`: the budgets of one run-time evaluation (an ad hoc query, a `rule` contract), each
/// set or left to the engine's default; 0 lifts a limit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryBudget {
    /// Distinct rows any one relation may hold.
    pub max_rows: Option<Setting<u64>>,
    /// The estimated memory of the rows and indexes held, in MiB.
    pub max_memory_mib: Option<Setting<u64>>,
    /// Wall time, in seconds.
    pub timeout_secs: Option<Setting<u64>>,
}

/// The keys of `[query]`.
pub const QUERY_KEYS: &[&str] = &["max_rows", "max_memory_mib", "timeout_secs"];

impl QueryBudget {
    /// Sets `[query]` key `key` to `v`; Err is the message (the caller adds file and line).
    pub fn apply(&mut self, key: &str, v: &Scalar, origin: Origin) -> Result<(), Error> {
        let value = match v {
            Scalar::Int(n) if *n >= 0 => Setting { value: *n as u64, origin },
            _ => return Err(Error::QueryNotWhole { key: key.to_string() }),
        };
        match key {
            "max_rows" => self.max_rows = Some(value),
            "max_memory_mib" => self.max_memory_mib = Some(value),
            "timeout_secs" => self.timeout_secs = Some(value),
            _ => return Err(Error::UnknownQueryKey { key: key.to_string() }),
        }
        Ok(())
    }
}

/// The settings keys, in the order `config show` lists them.
pub const KEYS: &[&str] = &[
    "enabled",
    "house_rules_path",
    "output_dir",
    "ledger_dir",
    "repo_id",
    "authorization_level",
    "skip_verification",
    "lint_max_rules",
    "gap_source",
    "self_assess_output_dir",
    "backtrack_depth",
    "thrash_threshold",
];

/// A scalar value from either settings format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scalar {
    Str(String),
    Bool(bool),
    Int(i64),
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            enabled: default(true),
            house_rules_path: default(PathBuf::from("HOUSE_RULES.md")),
            output_dir: default(PathBuf::from("analysis/andon")),
            ledger_dir: default(PathBuf::from("analysis/andon/ledger")),
            repo_id: default(String::new()),
            authorization_level: default(BlastRadius::LocalReversible),
            skip_verification: default(false),
            lint_max_rules: default(20),
            gap_source: default(GapSource::SelfScan),
            self_assess_output_dir: default(PathBuf::from("analysis/self-assess")),
            backtrack_depth: default(2),
            thrash_threshold: default(3),
            query: QueryBudget::default(),
        }
    }
}

impl Settings {
    /// Sets `key` from `v`; Err is the message (the caller adds file and line).
    pub fn apply(&mut self, key: &str, v: &Scalar, origin: Origin) -> Result<(), Error> {
        let boolean = |v: &Scalar| match v {
            Scalar::Bool(b) => Ok(*b),
            _ => Err(Error::NotBoolean { key: key.to_string() }),
        };
        let path = |v: &Scalar| match v {
            Scalar::Str(s) if !s.trim().is_empty() => Ok(PathBuf::from(s.trim())),
            _ => Err(Error::NotAPath { key: key.to_string() }),
        };
        match key {
            "enabled" => self.enabled = Setting { value: boolean(v)?, origin },
            "skip_verification" => self.skip_verification = Setting { value: boolean(v)?, origin },
            "house_rules_path" => self.house_rules_path = Setting { value: path(v)?, origin },
            "output_dir" => {
                let value = path(v)?;
                if escapes(&value) {
                    return Err(Error::OutOfRange {
                        rule: "a relative `output_dir` must stay inside the repository (its ledger is there): a relative path out of it moves with the repository and would start the ledger over; give an absolute path",
                    });
                }
                if self.ledger_dir.origin == Origin::Default {
                    self.ledger_dir.value = value.join("ledger");
                }
                self.output_dir = Setting { value, origin };
            }
            "ledger_dir" => {
                let value = path(v)?;
                if escapes(&value) {
                    return Err(Error::OutOfRange {
                        rule: "a relative `ledger_dir` must stay inside the repository: a relative path out of it moves with the repository and would start the ledger over; give a shared `ledger_dir` as an absolute path",
                    });
                }
                self.ledger_dir = Setting { value, origin }
            }
            "repo_id" => match v {
                Scalar::Str(s) if valid_repo_id(s.trim()) => {
                    self.repo_id = Setting { value: s.trim().to_string(), origin }
                }
                _ => {
                    return Err(Error::OutOfRange {
                        rule: "`repo_id` must be 1 to 64 letters, digits, `.`, `_` or `-` (it names the repository's log in a shared `ledger_dir`)",
                    });
                }
            },
            "self_assess_output_dir" => self.self_assess_output_dir = Setting { value: path(v)?, origin },
            "backtrack_depth" => match v {
                Scalar::Int(n) if (0..=64).contains(n) => self.backtrack_depth = Setting { value: *n as u32, origin },
                _ => return Err(Error::OutOfRange { rule: "`backtrack_depth` must be a whole number from 0 to 64" }),
            },
            "thrash_threshold" => match v {
                Scalar::Int(n) if (1..=1000).contains(n) => {
                    self.thrash_threshold = Setting { value: *n as u32, origin }
                }
                _ => {
                    return Err(Error::OutOfRange { rule: "`thrash_threshold` must be a whole number from 1 to 1000" });
                }
            },
            "lint_max_rules" => match v {
                Scalar::Int(n) if *n > 0 && *n <= u32::MAX as i64 => {
                    self.lint_max_rules = Setting { value: *n as u32, origin }
                }
                _ => return Err(Error::OutOfRange { rule: "`lint_max_rules` must be a positive whole number" }),
            },
            "authorization_level" => {
                let value = match v {
                    Scalar::Str(s) => BlastRadius::parse(s.trim()),
                    _ => None,
                }
                .ok_or_else(|| Error::AuthorizationLevel { names: BlastRadius::TOKENS.join(" < ") })?;
                self.authorization_level = Setting { value, origin };
            }
            "gap_source" => {
                let value = match v {
                    Scalar::Str(s) if s.trim() == "self-scan" => GapSource::SelfScan,
                    Scalar::Str(s)
                        if matches!(s.trim(), "ingest" | "ingest-from-external-brief" | "self-assess-brief") =>
                    {
                        GapSource::Ingest
                    }
                    _ => {
                        return Err(Error::OutOfRange {
                            rule: "`gap_source` must be `self-scan` or `ingest` (also spelled `ingest-from-external-brief`; legacy: `self-assess-brief`)",
                        });
                    }
                };
                self.gap_source = Setting { value, origin };
            }
            _ => return Err(Error::UnknownKey { key: key.to_string() }),
        }
        Ok(())
    }

    /// `output_dir` for the repository at `root` (relative to it unless absolute).
    pub fn output_path(&self, root: &Path) -> PathBuf {
        let d = &self.output_dir.value;
        if d.is_absolute() { d.clone() } else { root.join(d) }
    }

    /// Every setting as (key, rendered value, origin), in [`KEYS`] order.
    pub fn rows(&self) -> Vec<(&'static str, Scalar, &Origin)> {
        let p = |s: &Setting<PathBuf>| Scalar::Str(s.value.to_string_lossy().replace('\\', "/"));
        vec![
            ("enabled", Scalar::Bool(self.enabled.value), &self.enabled.origin),
            ("house_rules_path", p(&self.house_rules_path), &self.house_rules_path.origin),
            ("output_dir", p(&self.output_dir), &self.output_dir.origin),
            ("ledger_dir", p(&self.ledger_dir), &self.ledger_dir.origin),
            ("repo_id", Scalar::Str(self.repo_id.value.clone()), &self.repo_id.origin),
            (
                "authorization_level",
                Scalar::Str(self.authorization_level.value.name().into()),
                &self.authorization_level.origin,
            ),
            ("skip_verification", Scalar::Bool(self.skip_verification.value), &self.skip_verification.origin),
            ("lint_max_rules", Scalar::Int(self.lint_max_rules.value as i64), &self.lint_max_rules.origin),
            ("gap_source", Scalar::Str(self.gap_source.value.name().into()), &self.gap_source.origin),
            ("self_assess_output_dir", p(&self.self_assess_output_dir), &self.self_assess_output_dir.origin),
            ("backtrack_depth", Scalar::Int(self.backtrack_depth.value as i64), &self.backtrack_depth.origin),
            ("thrash_threshold", Scalar::Int(self.thrash_threshold.value as i64), &self.thrash_threshold.origin),
        ]
    }
}

/// One `key: value` of the front matter, with its line.
pub type Entry = (String, Scalar, u32);

/// The YAML front matter of a legacy settings file: flat `key: value` scalars between `---` lines.
/// Err is (line, message).
pub fn front_matter(text: &str) -> Result<Vec<Entry>, (u32, String)> {
    // a byte order mark and blank lines before the opener are no reason to drop the settings
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate().skip_while(|(_, l)| l.trim().is_empty());
    match lines.next() {
        Some((_, l)) if l.trim_end() == "---" => {}
        Some((i, l)) if l.trim_start().starts_with("---") => {
            return Err((i as u32 + 1, format!("the front matter must open with a line `---`, found `{}`", l.trim())));
        }
        _ => return Ok(Vec::new()), // no front matter: nothing set
    }
    let mut out: Vec<Entry> = Vec::new();
    for (i, raw) in lines {
        let n = i as u32 + 1;
        let l = raw.trim_end();
        if l == "---" || l == "..." {
            return Ok(out);
        }
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if t.len() != l.len() || t.starts_with('-') {
            return Err((n, "only flat `key: value` settings are supported in the front matter".into()));
        }
        let Some((k, v)) = t.split_once(':') else {
            return Err((n, format!("expected `key: value`, found `{t}`")));
        };
        let k = k.trim();
        if let Some((_, _, first)) = out.iter().find(|(seen, _, _)| seen == k) {
            return Err((n, format!("`{k}` is set twice (first on line {first}); keep one")));
        }
        out.push((k.to_string(), yaml_scalar(v.trim()).map_err(|e| (n, e.to_string()))?, n));
    }
    Err((1, "the front matter opened with `---` is never closed".into()))
}

fn yaml_scalar(v: &str) -> Result<Scalar, Error> {
    for q in ['"', '\''] {
        if let Some(rest) = v.strip_prefix(q) {
            let end = rest.find(q).ok_or_else(|| Error::UnclosedQuote(v.to_string()))?;
            let tail = rest[end + 1..].trim();
            if !tail.is_empty() && !tail.starts_with('#') {
                return Err(Error::TextAfterQuote(tail.to_string()));
            }
            return Ok(Scalar::Str(rest[..end].to_string()));
        }
    }
    let v = match v.find(" #") {
        Some(i) => v[..i].trim(),
        None => v,
    };
    Ok(match v {
        "true" | "True" | "TRUE" | "yes" | "on" => Scalar::Bool(true),
        "false" | "False" | "FALSE" | "no" | "off" => Scalar::Bool(false),
        _ => match v.parse::<i64>() {
            Ok(n) => Scalar::Int(n),
            Err(_) => Scalar::Str(v.to_string()),
        },
    })
}

/// `enabled = false` from the settings of `root`, read before anything else is checked (R1): the
/// origin of the `false`, or None when andon is enabled (or the settings cannot say).
pub fn disabled(root: &Path) -> Option<Origin> {
    // `enabled` as the settings file that is read sets it; one that cannot be read says nothing
    // here, and every command then stops on it as a configuration error
    let set = || -> Option<(bool, Origin)> {
        use toml::de::{DeTable, DeValue};
        let src = super::source::find(root).ok()??;
        let doc = DeTable::parse(&src.text).ok()?;
        let mut t = doc.get_ref();
        if src.tool_table {
            let DeValue::Table(tt) = t.get("tool")?.get_ref() else { return None };
            let DeValue::Table(a) = tt.get("andon")?.get_ref() else { return None };
            t = a;
        }
        let (k, v) = t.iter().find(|(k, _)| k.get_ref() == "enabled")?;
        let DeValue::Boolean(b) = v.get_ref() else { return None };
        Some((*b, Origin::File(src.path.clone(), super::line_at(&src.text, k.span().start))))
    };
    let legacy = || {
        let path = super::source::config_file(root, LEGACY_FILE);
        let rows = front_matter(&super::source::read_text(&path).ok()??).ok()?;
        rows.into_iter().find_map(|(k, v, l)| match v {
            Scalar::Bool(b) if k == "enabled" => Some((b, Origin::File(path.clone(), l))),
            _ => None,
        })
    };
    match set().or_else(legacy) {
        Some((false, origin)) => Some(origin),
        _ => None,
    }
}

/// Is `id` a usable `repo_id`: 1–64 of letters, digits, `.`, `_` and `-`, not only dots?
pub fn valid_repo_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !id.chars().all(|c| c == '.')
}

/// Whether relative path `p` leads out of the directory it is relative to (`..` past its start).
fn escapes(p: &std::path::Path) -> bool {
    if p.is_absolute() {
        return false;
    }
    let mut depth = 0i64;
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            std::path::Component::Prefix(_) | std::path::Component::RootDir => return false,
            std::path::Component::CurDir => {}
        }
        if depth < 0 {
            return true;
        }
    }
    false
}
