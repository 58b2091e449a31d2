//! The index and what is derived from it: `index`, `index --check`, `facts`, `query`, `stream`,
//! `why`, `check` and `config show`, each a typed result serialized as its JSON document.

use std::path::Path;

use serde_json::{Value, json};

use super::{Error, Freshness, SCHEMA_VERSION, json_document};
use crate::config::Config;
use crate::facts::{ColType, Facts, RELATIONS, RelId};
use crate::index::{self, Change, Diag, IndexOptions, IndexReport};

/// `andon index`: parses what changed and persists the index.
pub fn index(root: &Path, opts: &IndexOptions, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<IndexReport, Error> {
    Ok(index::update(root, opts, progress).map_err(|e| e.to_string())?)
}

fn diag_json(d: &Diag) -> Value {
    let mut v = json!({ "path": d.path, "kind": d.kind, "message": d.message });
    if d.line > 0 {
        v["line"] = json!(d.line);
    }
    v
}

impl IndexReport {
    /// Source files indexed, over every language.
    pub fn total_files(&self) -> u64 {
        self.summary.files_by_lang.iter().map(|(_, n)| n).sum()
    }

    fn document(&self) -> Value {
        let s = &self.summary;
        let by_lang: serde_json::Map<String, Value> =
            s.files_by_lang.iter().map(|(l, n)| (l.clone(), json!(n))).collect();
        let stages: Vec<Value> = s
            .stages
            .iter()
            .map(|st| json!({"name": st.name, "root": st.root, "ecosystem": st.ecosystem, "confidence": st.confidence, "source": st.source, "files": st.files}))
            .collect();
        json!({
            "schema_version": SCHEMA_VERSION,
            "root": self.root.display().to_string(),
            "index": self.index_path.display().to_string(),
            "files": {
                "total": self.total_files(),
                "by_language": by_lang,
                "manifests": s.manifests,
                "skipped": s.skipped,
                "parsed": self.parsed,
                "reused": self.reused,
                "removed": self.removed,
                "rehashed": self.rehashed,
            },
            "facts": s.facts,
            "stages": stages,
            "parse_errors": s.parse_errors,
            "files_with_parse_errors": s.files_with_parse_errors,
            "diagnostics": self.diagnostics.iter().map(diag_json).collect::<Vec<_>>(),
            "unchanged": self.unchanged,
            "rebuilt": self.rebuilt,
            "elapsed_ms": (self.elapsed_ms * 1000.0).round() / 1000.0,
            "verdict": { "outcome": "indexed" },
        })
    }
}

/// `andon index --check`: what changed since the index was built, or why there is no usable
/// index. Writes nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexCheck {
    pub changes: Result<Vec<Change>, String>,
}

impl IndexCheck {
    /// The index is up to date with the working tree.
    pub fn fresh(&self) -> bool {
        matches!(&self.changes, Ok(c) if c.is_empty())
    }

    fn document(&self) -> Value {
        let fresh = self.fresh();
        match &self.changes {
            Ok(c) => json!({
                "schema_version": SCHEMA_VERSION,
                "fresh": fresh,
                "changed": c.iter().map(|c| json!({"path": c.path, "change": c.change})).collect::<Vec<_>>(),
                "verdict": { "outcome": if fresh { "fresh" } else { "stale" } },
            }),
            Err(why) => json!({
                "schema_version": SCHEMA_VERSION,
                "fresh": false,
                "changed": [],
                "reason": why,
                "verdict": { "outcome": "stale" },
            }),
        }
    }
}

/// `andon index --check`.
pub fn index_check(root: &Path, opts: &IndexOptions) -> Result<IndexCheck, Error> {
    Ok(IndexCheck { changes: index::check(root, opts).map_err(|e| e.to_string())? })
}

/// `andon facts`: the facts of the fresh index, sorted, optionally of one relation or one file.
pub struct FactList {
    pub facts: Facts,
    pub relation: Option<RelId>,
    pub file: Option<String>,
}

/// The relation named `name`, or an error naming the nearest one.
pub fn relation(name: &str) -> Result<RelId, Error> {
    RelId::by_name(name).ok_or_else(|| {
        let near = RELATIONS
            .iter()
            .min_by_key(|r| crate::text::edit_distance(&name.to_lowercase(), &r.name.to_lowercase()))
            .map(|r| r.name)
            .unwrap_or("File");
        Error::Failed(format!("unknown relation `{name}`; did you mean `{near}`? (`andon facts --schema` lists them)"))
    })
}

/// `andon facts`.
pub fn facts(
    root: &Path,
    opts: &IndexOptions,
    how: Freshness,
    relation: Option<&str>,
    file: Option<&str>,
) -> Result<FactList, Error> {
    let relation = relation.map(self::relation).transpose()?;
    let idx = super::fresh_index(root, opts, how)?;
    let facts = idx.facts().map_err(|e| format!("the index cannot be read: {e}"))?;
    Ok(FactList { facts, relation, file: file.map(|f| f.trim_start_matches("./").to_string()) })
}

impl FactList {
    /// The selected facts, in relation then row order.
    pub fn selected(&self) -> impl Iterator<Item = (RelId, &[u32])> + '_ {
        let facts = &self.facts;
        (0..RELATIONS.len()).map(|i| RelId(i as u16)).filter(move |r| self.relation.is_none_or(|x| x == *r)).flat_map(
            move |r| {
                let info = r.info();
                let path_cols: Vec<usize> =
                    info.columns.iter().enumerate().filter(|(_, c)| c.ty == ColType::Path).map(|(i, _)| i).collect();
                facts
                    .rows(r)
                    .iter()
                    .filter(move |row| match self.file.as_deref() {
                        None => true,
                        Some(p) => path_cols.first().is_some_and(|&c| facts.str(row[c]) == p),
                    })
                    .map(move |row| (r, &row[..]))
            },
        )
    }

    fn document(&self) -> Value {
        let rows: Vec<Value> = self
            .selected()
            .map(|(r, row)| {
                let info = r.info();
                let mut o = serde_json::Map::new();
                o.insert("relation".into(), json!(info.name));
                for (c, v) in info.columns.iter().zip(row) {
                    let val = if c.ty == ColType::Int { json!(v) } else { json!(self.facts.str(*v)) };
                    o.insert(c.name.into(), val);
                }
                Value::Object(o)
            })
            .collect();
        json!({ "schema_version": SCHEMA_VERSION, "count": rows.len(), "facts": rows, "verdict": { "outcome": "listed" } })
    }
}

/// `andon facts --schema`: every relation with its columns and doc line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Schema;

impl Schema {
    fn document(&self) -> Value {
        let rels: Vec<Value> = RELATIONS
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "doc": r.doc,
                    "columns": r.columns.iter().map(|c| json!({"name": c.name, "type": match c.ty { ColType::Path => "path", ColType::Sym => "sym", ColType::Int => "int" }})).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({ "schema_version": SCHEMA_VERSION, "relations": rels, "verdict": {"outcome": "listed"} })
    }
}

fn scalar_json(v: &crate::config::Scalar) -> Value {
    match v {
        crate::config::Scalar::Str(s) => json!(s),
        crate::config::Scalar::Bool(b) => json!(b),
        crate::config::Scalar::Int(n) => json!(n),
    }
}

/// `andon config show`: every effective setting with its value and origin. Runs even when andon
/// is disabled.
pub fn config_show(root: &Path) -> Result<Config, Error> {
    if !root.exists() {
        return Err(format!("{}: no such directory", root.display()).into());
    }
    super::config(root)
}

impl Config {
    /// The settings file, `/`-separated, if there is one.
    pub fn source_shown(&self) -> Option<String> {
        self.source.as_ref().map(|p| p.to_string_lossy().replace('\\', "/"))
    }

    fn document(&self) -> Value {
        let mut settings = serde_json::Map::new();
        for (k, v, origin) in &self.settings.rows() {
            settings.insert(k.to_string(), json!({ "value": scalar_json(v), "origin": origin.to_string() }));
        }
        json!({
            "schema_version": SCHEMA_VERSION,
            "source": self.source_shown(),
            "settings": settings,
            "contracts": self.contracts.len(),
            "verdict": { "outcome": if self.settings.enabled.value { "shown" } else { "disabled" } },
        })
    }
}

json_document!(IndexReport, IndexCheck, FactList, Schema, Config);
