//! Configuration: `andon.toml` at the repository root, else `[tool.andon]` in `pyproject.toml`.
//! Every key is checked: unknown keys, wrong types and missing values are errors that name the
//! file, the line and the nearest valid key. Contracts (`[[contract]]`) are parsed here into
//! [`ContractSpec`]s; what their selectors name is checked against the index by `check`.
//! Commands (`[[command]]`) are parsed into [`CommandSpec`]s; their stage names are checked by the
//! caller, which knows the stream.

use std::path::{Path, PathBuf};

pub mod settings;
pub mod source;
pub mod stream;
pub mod technique;

use toml::de::{DeTable, DeValue};

use crate::index::walk::WalkOptions;
pub use settings::{BlastRadius, GapSource, Origin, QueryBudget, Scalar, Setting, Settings};
pub use stream::DeclaredStream;

/// Default size limit for parsed files (larger files are recorded as skipped).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 4 * 1024 * 1024;

#[derive(Clone, Debug)]
pub struct Config {
    /// Where the settings came from, if anywhere.
    pub source: Option<PathBuf>,
    /// A `pyproject.toml` whose `[tool.andon]` table is ignored because `andon.toml` is read.
    pub shadowed: Option<PathBuf>,
    pub walk: WalkOptions,
    pub max_file_size: u64,
    /// The architecture contracts `andon check` proves, in file order.
    pub contracts: Vec<ContractSpec>,
    /// The repository's commands (test suites, linters) the loop runs, in file order.
    pub commands: Vec<CommandSpec>,
    /// The settings surface (legacy names, types and defaults), with where each value came from.
    pub settings: Settings,
    /// `[stream]`: stages and wires declared instead of detected.
    pub stream: Option<DeclaredStream>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // the message quotes the settings' own text (names, keys, globs): one line, escaped
        let path = crate::text::line(&self.path.to_string_lossy()).into_owned();
        write!(f, "{path}:{}: {}", self.line, crate::text::line(&self.message))
    }
}

/// The kinds of contract `andon check` knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ContractKind {
    Forbidden,
    Layers,
    Independence,
    Acyclic,
    Protected,
    Manifest,
    Rule,
    /// Not declared: the ledger's own findings (`andon check` where the repository has a ledger).
    Ledger,
    /// Not declared: a declared stream's findings (`andon check` where `[stream]` is declared).
    Stream,
}

impl ContractKind {
    pub const ALL: [ContractKind; 7] = [
        ContractKind::Forbidden,
        ContractKind::Layers,
        ContractKind::Independence,
        ContractKind::Acyclic,
        ContractKind::Protected,
        ContractKind::Manifest,
        ContractKind::Rule,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ContractKind::Forbidden => "forbidden",
            ContractKind::Layers => "layers",
            ContractKind::Independence => "independence",
            ContractKind::Acyclic => "acyclic",
            ContractKind::Protected => "protected",
            ContractKind::Manifest => "manifest",
            ContractKind::Rule => "rule",
            ContractKind::Ledger => "ledger",
            ContractKind::Stream => "stream",
        }
    }

    /// The keys a contract of this kind may have, besides `name`, `kind`, `description` and `exceptions`.
    fn keys(self) -> &'static [&'static str] {
        match self {
            ContractKind::Forbidden => &["from", "to", "transitive", "exclude_kinds"],
            ContractKind::Layers => &["layers", "transitive", "exclude_kinds"],
            ContractKind::Independence => &["members", "transitive", "exclude_kinds"],
            ContractKind::Acyclic => &["members", "exclude_kinds"],
            ContractKind::Protected => &["target", "allowed", "exclude_kinds"],
            ContractKind::Manifest => &["stages", "checks"],
            ContractKind::Rule => &["rules"],
            ContractKind::Ledger | ContractKind::Stream => &[],
        }
    }
}

/// A string from the configuration with the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub text: String,
    pub line: u32,
}

/// One `exceptions = [{ from, to, reason }]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExceptionSpec {
    pub from: Option<Located>,
    pub to: Option<Located>,
    pub reason: String,
    pub line: u32,
}

/// One `[[contract]]` table, checked for shape (keys, types, required values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractSpec {
    pub name: String,
    pub kind: ContractKind,
    pub description: Option<String>,
    /// Line of the `[[contract]]` header (or of its `name`).
    pub line: u32,
    pub from: Vec<Located>,
    pub to: Vec<Located>,
    pub transitive: bool,
    /// `layers`: top first; each layer is one or more selectors.
    pub layers: Vec<Vec<Located>>,
    pub members: Vec<Located>,
    pub target: Vec<Located>,
    pub allowed: Vec<Located>,
    pub stages: Vec<Located>,
    /// `manifest`: which checks run (`undeclared`, `unused`).
    pub checks: Vec<Located>,
    pub rules: Option<Located>,
    pub exclude_kinds: Vec<Located>,
    pub exceptions: Vec<ExceptionSpec>,
}

/// When a configured command runs: `fast` ones on every pass, `slow` ones only on explicit request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lane {
    Fast,
    Slow,
}

impl Lane {
    pub const ALL: [Lane; 2] = [Lane::Fast, Lane::Slow];

    pub fn name(self) -> &'static str {
        match self {
            Lane::Fast => "fast",
            Lane::Slow => "slow",
        }
    }
}

/// One `[[command]]` table: a repository command (test suite, linter) run with `sh -c` at the
/// repository root; a failure is a gap, a pass is executed evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    /// Unique, `[A-Za-z0-9._-]+` (it names the command's output files).
    pub name: String,
    /// The shell command line.
    pub run: String,
    /// The stages it speaks for; empty means every stage. Not checked against the stream here.
    pub stages: Vec<String>,
    pub lane: Lane,
    /// Seconds before the command (and everything it started) is killed; > 0.
    pub timeout_secs: u64,
    /// For a numeric check (approach b): the technique it applies (R95).
    pub technique: Option<technique::Technique>,
    /// Line of the command's table (its `[[command]]` header), where its gap is located.
    pub line: u32,
}

/// Default `timeout_secs` of a command.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 600;

/// Import edge kinds a contract may exclude.
pub const EDGE_KINDS: &[&str] =
    &["static", "dynamic", "type_only", "type_checking", "test", "re_export", "wildcard", "qualified", "reference"];
/// The checks of a `manifest` contract.
pub const MANIFEST_CHECKS: &[&str] = &["undeclared", "unused"];

/// Top-level keys: the tables, then the settings.
fn top_keys() -> Vec<&'static str> {
    let mut k = vec!["index", "query", "contract", "command", "stream"];
    k.extend(settings::KEYS);
    k
}
const INDEX_KEYS: &[&str] = &["exclude", "max_file_size", "hidden", "vendored", "follow_links", "no_ignore"];
const COMMON_KEYS: &[&str] = &["name", "kind", "description", "exceptions"];
const EXCEPTION_KEYS: &[&str] = &["from", "to", "reason"];
const COMMAND_KEYS: &[&str] = &["name", "run", "stages", "lane", "timeout_secs", "technique"];

/// A parsed TOML value with the line it starts on.
struct Val {
    line: u32,
    v: V,
}

enum V {
    Str(String),
    Int(i64),
    Bool(bool),
    Other,
    Array(Vec<Val>),
    Table(Vec<(String, u32, Val)>),
}

impl Val {
    fn table(&self) -> Option<&[(String, u32, Val)]> {
        match &self.v {
            V::Table(t) => Some(t),
            _ => None,
        }
    }
}

/// The byte offsets where the lines of a text start, to turn offsets into line numbers in
/// logarithmic time (a file of many tables is converted in linear time).
struct Lines(Vec<usize>);

impl Lines {
    fn of(text: &str) -> Lines {
        Lines(std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect())
    }

    /// The 1-based line of byte `offset`.
    fn at(&self, offset: usize) -> u32 {
        self.0.partition_point(|&start| start <= offset) as u32
    }
}

fn convert(lines: &Lines, v: &toml::Spanned<DeValue<'_>>) -> Val {
    let line = lines.at(v.span().start);
    let v = match v.get_ref() {
        DeValue::String(s) => V::Str(s.to_string()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => V::Int(n),
            Err(_) => V::Other,
        },
        DeValue::Float(_) => V::Other,
        DeValue::Boolean(b) => V::Bool(*b),
        DeValue::Datetime(_) => V::Other,
        DeValue::Array(a) => V::Array(a.iter().map(|x| convert(lines, x)).collect()),
        DeValue::Table(t) => V::Table(table_of(lines, t)),
    };
    Val { line, v }
}

fn convert_table(text: &str, t: &DeTable<'_>) -> Vec<(String, u32, Val)> {
    table_of(&Lines::of(text), t)
}

/// A table's keys, each with its line and converted value.
fn table_of(lines: &Lines, t: &DeTable<'_>) -> Vec<(String, u32, Val)> {
    t.iter().map(|(k, v)| (k.get_ref().to_string(), lines.at(k.span().start), convert(lines, v))).collect()
}

pub(crate) fn line_at(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())].matches('\n').count() as u32 + 1
}

/// A top-level table with its key lines: `(key, line, value)`.
type Table = Vec<(String, u32, Val)>;

impl Config {
    /// Every setting at its default, no contract and no command.
    fn defaults() -> Config {
        Config {
            source: None,
            shadowed: None,
            walk: WalkOptions::standard(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            contracts: Vec::new(),
            commands: Vec::new(),
            settings: Settings::default(),
            stream: None,
        }
    }

    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let mut cfg = Config::defaults();
        // The legacy settings file first: andon.toml (or [tool.andon]) overrides it.
        cfg.apply_legacy(&source::config_file(root, settings::LEGACY_FILE))?;
        let Some(src) = source::find(root)? else {
            return Ok(cfg);
        };
        let p = Parser { path: &src.path };
        for (k, line, v) in &source::table(&src)? {
            p.top_key(&mut cfg, k, *line, v)?;
        }
        cfg.source = Some(src.path);
        cfg.shadowed = src.shadowed;
        Ok(cfg)
    }

    /// The settings of `root` as they would be with `text` as its `andon.toml` (not read from
    /// disk): the legacy settings file, then `text`, checked as [`Config::load`] checks a file.
    pub fn with_andon_toml(root: &Path, text: &str) -> Result<Config, ConfigError> {
        let mut cfg = Config::defaults();
        cfg.apply_legacy(&source::config_file(root, settings::LEGACY_FILE))?;
        let path = source::config_file(root, "andon.toml");
        let src = source::Source { path: path.clone(), text: text.to_string(), tool_table: false, shadowed: None };
        let p = Parser { path: &path };
        for (k, line, v) in &source::table(&src)? {
            p.top_key(&mut cfg, k, *line, v)?;
        }
        cfg.source = Some(path);
        Ok(cfg)
    }

    /// Applies the settings of the legacy settings file `legacy`, when there is one.
    fn apply_legacy(&mut self, legacy: &Path) -> Result<(), ConfigError> {
        let Some(text) = source::read_text(legacy)? else {
            return Ok(());
        };
        let err = |line: u32, message: String| ConfigError { path: legacy.to_path_buf(), line, message };
        for (k, v, line) in settings::front_matter(&text).map_err(|(l, m)| err(l, m))? {
            if !settings::KEYS.contains(&k.as_str()) {
                return Err(err(line, unknown(&k, settings::KEYS, "")));
            }
            self.settings.apply(&k, &v, Origin::File(legacy.to_path_buf(), line)).map_err(|m| err(line, m))?;
        }
        Ok(())
    }
}

struct Parser<'a> {
    path: &'a Path,
}

impl Parser<'_> {
    fn err(&self, line: u32, message: impl Into<String>) -> ConfigError {
        ConfigError { path: self.path.to_path_buf(), line, message: message.into() }
    }

    /// Applies one top-level key (on `line`) to `cfg`.
    fn top_key(&self, cfg: &mut Config, k: &str, line: u32, v: &Val) -> Result<(), ConfigError> {
        match k {
            "index" => self.index(cfg, line, v)?,
            "query" => self.query(cfg, line, v)?,
            key if settings::KEYS.contains(&key) => {
                let scalar = match &v.v {
                    V::Str(x) => Scalar::Str(x.clone()),
                    V::Bool(b) => Scalar::Bool(*b),
                    V::Int(n) => Scalar::Int(*n),
                    _ => Scalar::Str(String::new()),
                };
                let origin = Origin::File(self.path.to_path_buf(), line);
                cfg.settings.apply(key, &scalar, origin).map_err(|m| self.err(line, m))?;
            }
            "contract" => self.contracts(cfg, line, v)?,
            "command" => self.commands(cfg, line, v)?,
            "stream" => cfg.stream = Some(self.stream(line, v)?),
            other => return Err(self.err(line, unknown(other, &top_keys(), ""))),
        }
        Ok(())
    }

    /// The `[[contract]]` tables, each with its own name.
    fn contracts(&self, cfg: &mut Config, line: u32, v: &Val) -> Result<(), ConfigError> {
        let V::Array(items) = &v.v else {
            return Err(self.err(line, "`contract` must be an array of tables: write `[[contract]]`"));
        };
        // the line of each name, so that many contracts are checked in linear time
        let mut lines: std::collections::HashMap<String, u32> =
            cfg.contracts.iter().map(|x| (x.name.clone(), x.line)).collect();
        for item in items {
            let c = self.contract(item)?;
            if let Some(prev) = lines.insert(c.name.clone(), c.line) {
                return Err(
                    self.err(c.line, format!("a contract named `{}` is already declared on line {prev}", c.name))
                );
            }
            cfg.contracts.push(c);
        }
        Ok(())
    }

    /// The `[[command]]` tables, each with its own name.
    fn commands(&self, cfg: &mut Config, line: u32, v: &Val) -> Result<(), ConfigError> {
        let V::Array(items) = &v.v else {
            return Err(self.err(line, "`command` must be an array of tables: write `[[command]]`"));
        };
        for item in items {
            let c = self.command(item)?;
            if let Some(prev) = cfg.commands.iter().find(|x| x.name == c.name) {
                let name_line = item.table().and_then(|t| t.iter().find(|(k, _, _)| k == "name")).map(|(_, l, _)| *l);
                return Err(self.err(
                    name_line.unwrap_or(c.line),
                    format!(
                        "a command named `{}` is already declared on line {}; give each command its own name",
                        c.name, prev.line
                    ),
                ));
            }
            cfg.commands.push(c);
        }
        Ok(())
    }

    fn index(&self, cfg: &mut Config, line: u32, v: &Val) -> Result<(), ConfigError> {
        let idx = v.table().ok_or_else(|| self.err(line, "`index` must be a table"))?;
        for (ik, kline, iv) in idx {
            let kline = *kline;
            match ik.as_str() {
                "exclude" => {
                    for g in self.strings(iv, kline, "`index.exclude` must be an array of glob strings")? {
                        cfg.walk.exclude.push(g.text);
                    }
                }
                "max_file_size" => match iv.v {
                    V::Int(n) if n > 0 => cfg.max_file_size = n as u64,
                    _ => return Err(self.err(kline, "`index.max_file_size` must be a positive number of bytes")),
                },
                "hidden" | "vendored" | "follow_links" | "no_ignore" => {
                    let V::Bool(b) = iv.v else {
                        return Err(self.err(kline, format!("`index.{ik}` must be true or false")));
                    };
                    match ik.as_str() {
                        "hidden" => cfg.walk.hidden = b,
                        "vendored" => cfg.walk.vendored = b,
                        "follow_links" => cfg.walk.follow_links = b,
                        _ => cfg.walk.no_ignore = b,
                    }
                }
                other => return Err(self.err(kline, unknown(other, INDEX_KEYS, "index."))),
            }
        }
        Ok(())
    }

    /// The `[query]` table: the budgets of a run-time evaluation.
    fn query(&self, cfg: &mut Config, line: u32, v: &Val) -> Result<(), ConfigError> {
        let t = v.table().ok_or_else(|| self.err(line, "`query` must be a table: write `[query]`"))?;
        for (k, kline, kv) in t {
            if !settings::QUERY_KEYS.contains(&k.as_str()) {
                return Err(self.err(*kline, unknown(k, settings::QUERY_KEYS, "query.")));
            }
            let scalar = match kv.v {
                V::Int(n) => Scalar::Int(n),
                _ => Scalar::Str(String::new()),
            };
            let origin = Origin::File(self.path.to_path_buf(), *kline);
            cfg.settings.query.apply(k, &scalar, origin).map_err(|m| self.err(*kline, m))?;
        }
        Ok(())
    }

    /// A string, or an array of strings.
    fn strings(&self, v: &Val, line: u32, what: &str) -> Result<Vec<Located>, ConfigError> {
        match &v.v {
            V::Str(s) => Ok(vec![Located { text: s.clone(), line: v.line.max(line) }]),
            V::Array(items) => items
                .iter()
                .map(|x| match &x.v {
                    V::Str(s) => Ok(Located { text: s.clone(), line: x.line }),
                    _ => Err(self.err(x.line, what.to_string())),
                })
                .collect(),
            _ => Err(self.err(line, what.to_string())),
        }
    }

    /// Strings that must each be one of `valid` (a `noun` of contract `contract`).
    fn words(
        &self,
        v: &Val,
        line: u32,
        what: &str,
        contract: &str,
        noun: &str,
        valid: &[&str],
    ) -> Result<Vec<Located>, ConfigError> {
        let words = self.strings(v, line, what)?;
        if let Some(x) = words.iter().find(|x| !valid.contains(&x.text.as_str())) {
            let msg = format!(
                "contract `{contract}`: unknown {noun} `{}`{}",
                x.text,
                suggest(&x.text, valid, &format!("; {noun}s: "))
            );
            return Err(self.err(x.line, msg));
        }
        Ok(words)
    }

    fn string(&self, v: &Val, line: u32, what: &str) -> Result<String, ConfigError> {
        match &v.v {
            V::Str(s) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(self.err(line, what.to_string())),
        }
    }

    /// One `[[contract]]` table: its name and kind first, then every other key, checked against
    /// the kind.
    fn contract(&self, item: &Val) -> Result<ContractSpec, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[contract]]` must be a table"))?;
        let (name, line) = match t.iter().find(|(key, _, _)| key == "name") {
            Some((_, l, v)) => (self.string(v, *l, "`name` must be a non-empty string")?, *l),
            None => return Err(self.err(item.line, "this contract has no `name`; give it one (`name = \"...\"`)")),
        };
        let kind = self.contract_kind(t, &name, line)?;
        let mut c = ContractSpec {
            name: name.clone(),
            kind,
            description: None,
            line,
            from: Vec::new(),
            to: Vec::new(),
            transitive: true,
            layers: Vec::new(),
            members: Vec::new(),
            target: Vec::new(),
            allowed: Vec::new(),
            stages: Vec::new(),
            checks: Vec::new(),
            rules: None,
            exclude_kinds: Vec::new(),
            exceptions: Vec::new(),
        };
        for (k, kl, v) in t {
            self.contract_key(&name, kind, k, *kl)?;
            self.contract_value(&mut c, k, *kl, v)?;
        }
        Ok(c)
    }

    /// The `kind` of contract `name` (whose name is on `line`).
    fn contract_kind(&self, t: &[(String, u32, Val)], name: &str, line: u32) -> Result<ContractKind, ConfigError> {
        let kinds: Vec<&str> = ContractKind::ALL.iter().map(|k| k.name()).collect();
        match t.iter().find(|(key, _, _)| key == "kind") {
            Some((_, l, v)) => {
                let s = self.string(v, *l, "`kind` must be a string")?;
                Ok(*ContractKind::ALL.iter().find(|k| k.name() == s).ok_or_else(|| {
                    self.err(
                        *l,
                        format!("contract `{name}`: unknown kind `{s}`{}", suggest(&s, &kinds, "; valid kinds: ")),
                    )
                })?)
            }
            None => Err(self.err(line, format!("contract `{name}` has no `kind`; one of {}", kinds.join(", ")))),
        }
    }

    /// Checks that key `k` (on line `kl`) belongs to contracts of `kind`; Err names the kind it
    /// belongs to, or the nearest valid key.
    fn contract_key(&self, name: &str, kind: ContractKind, k: &str, kl: u32) -> Result<(), ConfigError> {
        if COMMON_KEYS.contains(&k) || kind.keys().contains(&k) {
            return Ok(());
        }
        let mut valid: Vec<&str> = COMMON_KEYS.to_vec();
        valid.extend(kind.keys());
        let other = ContractKind::ALL.iter().find(|o| o.keys().contains(&k));
        let msg = match other {
            Some(o) if !valid.contains(&k) => format!(
                "contract `{name}`: `{k}` belongs to `{}` contracts, not `{}`; keys here: {}",
                o.name(),
                kind.name(),
                valid.join(", ")
            ),
            _ => format!("contract `{name}`: {}", unknown(k, &valid, "")),
        };
        Err(self.err(kl, msg))
    }

    /// Sets the value `v` of key `k` (on line `kl`, valid for the contract's kind) in `c`.
    fn contract_value(&self, c: &mut ContractSpec, k: &str, kl: u32, v: &Val) -> Result<(), ConfigError> {
        let name = c.name.clone();
        let sel = "must be a selector (a stage, path glob, module or package) or an array of them";
        let what = format!("contract `{name}`: `{k}` {sel}");
        match k {
            "name" | "kind" => {}
            "description" => c.description = Some(self.string(v, kl, "`description` must be a string")?),
            "from" => c.from = self.strings(v, kl, &what)?,
            "to" => c.to = self.strings(v, kl, &what)?,
            "members" => c.members = self.strings(v, kl, &what)?,
            "target" => c.target = self.strings(v, kl, &what)?,
            "allowed" => c.allowed = self.strings(v, kl, &what)?,
            "stages" => c.stages = self.strings(v, kl, &what)?,
            "transitive" => {
                let V::Bool(b) = v.v else {
                    return Err(self.err(kl, format!("contract `{name}`: `transitive` must be true or false")));
                };
                c.transitive = b;
            }
            "layers" => {
                let V::Array(items) = &v.v else {
                    return Err(self.err(kl, format!("contract `{name}`: `layers` must be an array, top layer first")));
                };
                for layer in items {
                    c.layers.push(self.strings(layer, layer.line, &what)?);
                }
            }
            "exclude_kinds" => {
                let what = "`exclude_kinds` must be an array of edge kinds";
                c.exclude_kinds = self.words(v, kl, what, &name, "edge kind", EDGE_KINDS)?;
            }
            "checks" => {
                let what = "`checks` must be an array of `undeclared`, `unused`";
                c.checks = self.words(v, kl, what, &name, "check", MANIFEST_CHECKS)?;
            }
            "rules" => {
                let s = self.string(v, kl, "`rules` must be the path of a `.dl` file")?;
                c.rules = Some(Located { text: s, line: kl });
            }
            "exceptions" => {
                let V::Array(items) = &v.v else {
                    return Err(self.err(
                        kl,
                        format!("contract `{name}`: `exceptions` must be an array of {{ from, to, reason }} tables"),
                    ));
                };
                for x in items {
                    c.exceptions.push(self.exception(&name, x)?);
                }
            }
            _ => unreachable!("key {k} is checked against the kind's keys"),
        }
        Ok(())
    }

    /// One `[[command]]` table: its name first, then every other key.
    fn command(&self, item: &Val) -> Result<CommandSpec, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[command]]` must be a table"))?;
        let get = |k: &str| t.iter().find(|(key, _, _)| key == k);
        let (name, line) = match get("name") {
            Some((_, l, v)) => (self.string(v, *l, "a command's `name` must be a non-empty string")?, *l),
            None => return Err(self.err(item.line, "this command has no `name`; give it one (`name = \"tests\"`)")),
        };
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
            return Err(self.err(
                line,
                format!("command name `{name}` may use only letters, digits, `.`, `_` and `-` (it names files)"),
            ));
        }
        let mut c = CommandSpec {
            name: name.clone(),
            run: String::new(),
            stages: Vec::new(),
            lane: Lane::Fast,
            timeout_secs: DEFAULT_COMMAND_TIMEOUT_SECS,
            technique: None,
            line: item.line,
        };
        for (k, kl, v) in t {
            self.command_value(&mut c, k, *kl, v)?;
        }
        if c.run.is_empty() {
            return Err(self.err(
                line,
                format!("command `{name}` has no `run`; give it the shell command to run (`run = \"make test\"`)"),
            ));
        }
        Ok(c)
    }

    /// Sets the value `v` of key `k` (on line `kl`) in command `c`.
    fn command_value(&self, c: &mut CommandSpec, k: &str, kl: u32, v: &Val) -> Result<(), ConfigError> {
        let name = c.name.clone();
        match k {
            "name" => {}
            "run" => {
                let what = format!("command `{name}`: `run` must be a non-empty shell command string");
                c.run = self.string(v, kl, &what)?;
            }
            "stages" => {
                let what = format!("command `{name}`: `stages` must be an array of stage names, like [\"core\"]");
                let V::Array(items) = &v.v else {
                    return Err(self.err(kl, what));
                };
                for x in items {
                    match &x.v {
                        V::Str(s) if !s.trim().is_empty() => c.stages.push(s.clone()),
                        _ => return Err(self.err(x.line, what)),
                    }
                }
            }
            "lane" => {
                let lanes: Vec<&str> = Lane::ALL.iter().map(|l| l.name()).collect();
                let bad = |s: &str| {
                    format!(
                        "command `{name}`: `lane` must be \"fast\" (every pass) or \"slow\" (only on request), not {s}"
                    )
                };
                let V::Str(s) = &v.v else {
                    return Err(self.err(kl, bad("a non-string")));
                };
                c.lane = *Lane::ALL.iter().find(|l| l.name() == s).ok_or_else(|| {
                    let hint = match nearest(s, lanes.iter().copied()) {
                        Some(n) => format!("; did you mean `{n}`?"),
                        None => String::new(),
                    };
                    self.err(kl, format!("{}{hint}", bad(&format!("`{s}`"))))
                })?;
            }
            "technique" => {
                let V::Str(t) = &v.v else {
                    return Err(self.err(kl, format!("command `{name}`: `technique` must be a string")));
                };
                c.technique =
                    Some(technique::parse(t).map_err(|e| self.err(kl, format!("command `{name}`: `technique`: {e}")))?);
            }
            "timeout_secs" => match v.v {
                V::Int(n) if n > 0 => c.timeout_secs = n as u64,
                _ => {
                    return Err(self.err(
                        kl,
                        format!("command `{name}`: `timeout_secs` must be a whole number of seconds above 0"),
                    ));
                }
            },
            other => return Err(self.err(kl, format!("command `{name}`: {}", unknown(other, COMMAND_KEYS, "")))),
        }
        Ok(())
    }

    fn exception(&self, contract: &str, x: &Val) -> Result<ExceptionSpec, ConfigError> {
        let t = x.table().ok_or_else(|| {
            self.err(x.line, format!("contract `{contract}`: each exception is a table {{ from, to, reason }}"))
        })?;
        let mut e = ExceptionSpec { from: None, to: None, reason: String::new(), line: x.line };
        for (k, kl, v) in t {
            let what = format!("contract `{contract}`: exception `{k}` must be one selector string");
            match k.as_str() {
                "from" => e.from = Some(Located { text: self.string(v, *kl, &what)?, line: *kl }),
                "to" => e.to = Some(Located { text: self.string(v, *kl, &what)?, line: *kl }),
                "reason" => {
                    e.reason = self.string(
                        v,
                        *kl,
                        &format!("contract `{contract}`: an exception's `reason` must say why, in words"),
                    )?
                }
                other => {
                    return Err(self.err(*kl, format!("contract `{contract}`: {}", unknown(other, EXCEPTION_KEYS, ""))));
                }
            }
        }
        if e.reason.is_empty() {
            return Err(self.err(
                x.line,
                format!(
                    "contract `{contract}`: this exception has no `reason`; every exception must say why it exists"
                ),
            ));
        }
        if e.from.is_none() && e.to.is_none() {
            return Err(self.err(
                x.line,
                format!(
                    "contract `{contract}`: an exception needs `from`, `to` or both, or it would excuse everything"
                ),
            ));
        }
        Ok(e)
    }
}

/// "unknown key" with the nearest valid key; `prefix` names the table (`index.`).
fn unknown(key: &str, valid: &[&str], prefix: &str) -> String {
    let near = nearest(key, valid.iter().copied());
    match near {
        Some(v) => format!("unknown key `{prefix}{key}`; did you mean `{prefix}{v}`?"),
        None => {
            let all: Vec<String> = valid.iter().map(|v| format!("{prefix}{v}")).collect();
            format!("unknown key `{prefix}{key}`; valid keys: {}", all.join(", "))
        }
    }
}

/// "; did you mean `x`?" for a near name, else `list_intro` and every valid name.
fn suggest(s: &str, valid: &[&str], list_intro: &str) -> String {
    match nearest(s, valid.iter().copied()) {
        Some(v) => format!("; did you mean `{v}`?"),
        None => format!("{list_intro}{}", valid.join(", ")),
    }
}

pub use crate::text::nearest;

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Config, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("andon.toml"), text).unwrap();
        Config::load(dir.path())
    }

    #[test]
    fn lines_agree_with_line_at_at_every_offset() {
        let text = "a = 1\n\n[index]\nexclude = [\"x\"]\nlast";
        let lines = Lines::of(text);
        for offset in 0..=text.len() + 2 {
            assert_eq!(lines.at(offset), line_at(text, offset), "offset {offset}");
        }
    }

    #[test]
    fn query_budgets_parse_and_are_checked() {
        let cfg = load("[query]\nmax_rows = 5\ntimeout_secs = 0\n").unwrap();
        let q = &cfg.settings.query;
        assert_eq!(q.max_rows.as_ref().map(|s| s.value), Some(5));
        assert_eq!(q.timeout_secs.as_ref().map(|s| s.value), Some(0));
        assert_eq!(q.max_memory_mib, None);
        let e = load("[query]\nmax_memory_mib = \"big\"\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("`query.max_memory_mib` must be a whole number"), "{e}");
        let e = load("query = 3\n").unwrap_err();
        assert!(e.message.contains("`query` must be a table"), "{e}");
    }

    #[test]
    fn contracts_parse_with_lines() {
        let cfg = load(concat!(
            "[[contract]]\nname = \"core\"\nkind = \"forbidden\"\nfrom = [\"a\"]\nto = \"src/api/**\"\ntransitive = false\n",
            "exceptions = [{ from = \"src/legacy/**\", to = \"b\", reason = \"moving out\" }]\n",
            "[[contract]]\nname = \"l\"\nkind = \"layers\"\nlayers = [\"cli\", [\"x\", \"y\"], \"core\"]\n",
        ))
        .unwrap();
        let c = &cfg.contracts[0];
        assert_eq!((c.name.as_str(), c.kind, c.line, c.transitive), ("core", ContractKind::Forbidden, 2, false));
        assert_eq!(c.to, vec![Located { text: "src/api/**".into(), line: 5 }]);
        assert_eq!(c.exceptions[0].reason, "moving out");
        assert_eq!(c.exceptions[0].line, 7);
        let l = &cfg.contracts[1];
        assert_eq!(l.layers.len(), 3);
        assert_eq!(l.layers[1].len(), 2);
    }

    #[test]
    fn shape_errors_name_the_line_and_suggest() {
        let e = load("[[contract]]\nname = \"c\"\nkind = \"forbiden\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("did you mean `forbidden`?")), (3, true), "{e}");
        let e = load("[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nfrm = [\"a\"]\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("did you mean `from`?")), (4, true), "{e}");
        let e = load("[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nmembers = [\"a\"]\n").unwrap_err();
        assert!(e.message.contains("belongs to `independence` contracts"), "{e}");
        let e =
            load("[[contract]]\nname = \"c\"\nkind = \"forbidden\"\nexceptions = [{ from = \"a\" }]\n").unwrap_err();
        assert!(e.message.contains("no `reason`"), "{e}");
        let e = load("[[contract]]\nname = \"c\"\nkind = \"acyclic\"\nexclude_kinds = [\"tst\"]\n").unwrap_err();
        assert!(e.message.contains("did you mean `test`?"), "{e}");
        let e =
            load("[[contract]]\nname = \"c\"\nkind = \"acyclic\"\n[[contract]]\nname = \"c\"\nkind = \"acyclic\"\n")
                .unwrap_err();
        assert_eq!((e.line, e.message.contains("already declared on line 2")), (5, true), "{e}");
        let e = load("[[contract]]\nkind = \"acyclic\"\n").unwrap_err();
        assert!(e.message.contains("no `name`"), "{e}");
        let e = load("[contrat]\n").unwrap_err();
        assert!(e.message.contains("did you mean `contract`?"), "{e}");
    }

    #[test]
    fn commands_parse_with_defaults_and_lines() {
        let cfg = load(
            "[[command]]\nname = \"core-tests\"\nrun = \"python -m pytest -q tests/core\"\n\n\
             [[command]]\nname = \"lint.all_2\"\nrun = \"ruff check .\"\nstages = [\"core\", \"api\"]\n\
             lane = \"slow\"\ntimeout_secs = 30\n",
        )
        .unwrap();
        assert_eq!(
            cfg.commands,
            vec![
                CommandSpec {
                    name: "core-tests".into(),
                    run: "python -m pytest -q tests/core".into(),
                    stages: vec![],
                    lane: Lane::Fast,
                    timeout_secs: 600,
                    technique: None,
                    line: 1,
                },
                CommandSpec {
                    name: "lint.all_2".into(),
                    run: "ruff check .".into(),
                    stages: vec!["core".into(), "api".into()],
                    lane: Lane::Slow,
                    timeout_secs: 30,
                    technique: None,
                    line: 5,
                },
            ]
        );
        assert_eq!((Lane::Fast.name(), Lane::Slow.name()), ("fast", "slow"));
        assert_eq!(serde_json::to_string(&Lane::Slow).unwrap(), "\"slow\"");
        assert_eq!(serde_json::from_str::<Lane>("\"fast\"").unwrap(), Lane::Fast);
    }

    #[test]
    fn command_errors_name_the_line_and_say_what_to_do() {
        let cmd = |rest: &str| load(&format!("[[command]]\nname = \"t\"\nrun = \"true\"\n{rest}")).unwrap_err();
        let e = cmd("tmeout_secs = 5\n");
        assert_eq!((e.line, e.message.contains("did you mean `timeout_secs`?")), (4, true), "{e}");
        let e = cmd("lane = \"slo\"\n");
        assert_eq!(
            (e.line, e.message.contains("\"fast\"") && e.message.contains("did you mean `slow`?")),
            (4, true),
            "{e}"
        );
        let e = cmd("lane = 1\n");
        assert_eq!((e.line, e.message.contains("`lane` must be")), (4, true), "{e}");
        let e = cmd("timeout_secs = 0\n");
        assert_eq!((e.line, e.message.contains("above 0")), (4, true), "{e}");
        let e = cmd("timeout_secs = 1.5\n");
        assert_eq!((e.line, e.message.contains("whole number of seconds")), (4, true), "{e}");
        let e = cmd("timeout_secs = \"60\"\n");
        assert_eq!(e.line, 4, "{e}");
        let e = cmd("stages = \"core\"\n");
        assert_eq!((e.line, e.message.contains("array of stage names")), (4, true), "{e}");
        let e = cmd("stages = [\"core\",\n  3]\n");
        assert_eq!((e.line, e.message.contains("array of stage names")), (5, true), "{e}");
        let e = load("[[command]]\nrun = \"true\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("no `name`")), (1, true), "{e}");
        let e = load("[[command]]\n\nname = \"t\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("no `run`")), (3, true), "{e}");
        let e = load("[[command]]\nname = \"t\"\nrun = \"  \"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("non-empty shell command")), (3, true), "{e}");
        let e = load("[[command]]\nname = \"core tests/x\"\nrun = \"true\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("only letters, digits")), (2, true), "{e}");
        let e = load("[[command]]\nname = \"\"\nrun = \"true\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("non-empty string")), (2, true), "{e}");
        let e = load("[[command]]\nname = \"t\"\nrun = \"a\"\n[[command]]\nname = \"t\"\nrun = \"b\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("already declared on line 1")), (5, true), "{e}");
        let e = load("[command]\nname = \"t\"\nrun = \"true\"\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("write `[[command]]`")), (1, true), "{e}");
        let e = load("[[comand]]\nname = \"t\"\n").unwrap_err();
        assert!(e.message.contains("did you mean `command`?"), "{e}");
    }

    #[test]
    fn pyproject_tool_andon_contracts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("pyproject.toml"),
            "[project]\nname = \"x\"\n\n[[tool.andon.contract]]\nname = \"c\"\nkind = \"acyclic\"\n\n\
             [[tool.andon.command]]\nname = \"t\"\nrun = \"make test\"\nlane = \"slow\"\n",
        )
        .unwrap();
        let cfg = Config::load(dir.path()).unwrap();
        assert_eq!(cfg.contracts[0].line, 5);
        assert_eq!((cfg.commands[0].name.as_str(), cfg.commands[0].lane, cfg.commands[0].line), ("t", Lane::Slow, 8));
    }
}
