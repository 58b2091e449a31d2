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

mod error;
mod reader;
mod value;

pub use error::{ConfigError, Error};
use reader::*;
use value::*;

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
    /// Every import names a module and a name that exist (and, in Python, is called with
    /// arguments its callee takes).
    Resolves,
    /// Not declared: the ledger's own findings (`andon check` where the repository has a ledger).
    Ledger,
    /// Not declared: a declared stream's findings (`andon check` where `[stream]` is declared).
    Stream,
}

impl ContractKind {
    pub const ALL: [ContractKind; 8] = [
        ContractKind::Forbidden,
        ContractKind::Layers,
        ContractKind::Independence,
        ContractKind::Acyclic,
        ContractKind::Protected,
        ContractKind::Manifest,
        ContractKind::Rule,
        ContractKind::Resolves,
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
            ContractKind::Resolves => "resolves",
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
            ContractKind::Resolves => &["from", "exclude_kinds"],
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

/// One `exceptions = [{ from, to, reason }]` entry (`{ at, name, reason }` for `resolves`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExceptionSpec {
    pub from: Option<Located>,
    pub to: Option<Located>,
    /// `resolves`: the import's `file:line`.
    pub at: Option<Located>,
    /// `resolves`: the name it imports (every name at `at` when absent).
    pub name: Option<Located>,
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
pub const EDGE_KINDS: &[&str] = &[
    "static",
    "dynamic",
    "type_only",
    "type_checking",
    "test",
    "re_export",
    "wildcard",
    "qualified",
    "reference",
    "optional",
];
/// The checks of a `manifest` contract.
pub const MANIFEST_CHECKS: &[&str] = &["undeclared", "unused"];

/// Top-level keys: the tables, then the settings.
fn top_keys() -> Vec<&'static str> {
    let mut k = vec!["index", "query", "contract", "command", "stream"];
    k.extend(settings::KEYS);
    k
}
const INDEX_KEYS: &[&str] =
    &["exclude", "max_file_size", "hidden", "vendored", "follow_links", "no_ignore", "stage_dirs"];
const COMMON_KEYS: &[&str] = &["name", "kind", "description", "exceptions"];
const EXCEPTION_KEYS: &[&str] = &["from", "to", "reason"];
const SITE_EXCEPTION_KEYS: &[&str] = &["at", "name", "reason"];
const COMMAND_KEYS: &[&str] = &["name", "run", "stages", "lane", "timeout_secs", "technique"];

/// An exception's `at`: the `file:line` of an import (the line 1-based).
pub fn site(text: &str) -> Option<(&str, u32)> {
    let (path, line) = text.rsplit_once(':')?;
    let line: u32 = line.parse().ok().filter(|l| *l > 0)?;
    (!path.is_empty()).then_some((path, line))
}

pub(crate) fn line_at(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())].matches('\n').count() as u32 + 1
}

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
        let p = ConfigReader { path: &src.path };
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
        let p = ConfigReader { path: &path };
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
            self.settings
                .apply(&k, &v, Origin::File(legacy.to_path_buf(), line))
                .map_err(|e| err(line, e.to_string()))?;
        }
        Ok(())
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
