//! A declared stream (R32): `[stream]` in the settings, or a file given with `--stream FILE` (the
//! same `[stream]` table), with `[[stream.stage]] name, root` and `[[stream.wire]] producer,
//! consumer`. Its stages and wires replace detection verbatim: the same names, in the same order,
//! the same wires, labelled `declared`.

use std::path::Path;

use super::{ConfigError, ConfigReader, Error, TomlKind, TomlValue};
pub use crate::resolve::declared::{DeclaredStage, DeclaredStream, DeclaredWire};

/// Every declared stage's root is a directory of the repository at `repo`: a root that names
/// nothing would leave the stage empty, silently. `Err` names the declaration's file and line.
pub fn check_roots(d: &DeclaredStream, repo: &Path) -> Result<(), Error> {
    for st in d.stages.iter().filter(|s| !s.root.is_empty()) {
        if !repo.join(&st.root).is_dir() {
            return Err(Error::RootNotADirectory {
                path: d.source.clone(),
                line: st.line,
                stage: st.name.clone(),
                root: st.root.clone(),
            });
        }
    }
    Ok(())
}

/// The stream declared in the file at `path` (its `[stream]` table and nothing else).
pub fn load_file(path: &Path) -> Result<DeclaredStream, ConfigError> {
    let err = |line: u32, message: String| ConfigError { path: path.to_path_buf(), line, message };
    let text = std::fs::read_to_string(path).map_err(|e| err(0, format!("cannot read the stream file: {e}")))?;
    let src = super::source::Source { path: path.to_path_buf(), text, tool_table: false, shadowed: None };
    let p = ConfigReader { path };
    let mut found = None;
    for (k, line, v) in &super::source::table(&src)? {
        match k.as_str() {
            "stream" => found = Some(p.stream(*line, v)?),
            other => return Err(err(*line, format!("a stream file holds only a `[stream]` table, not `{other}`"))),
        }
    }
    found.ok_or_else(|| err(1, "no `[stream]` table: declare `[[stream.stage]]` and `[[stream.wire]]`".into()))
}

impl ConfigReader<'_> {
    /// The `[stream]` table on `line`.
    pub(super) fn stream(&self, line: u32, v: &TomlValue) -> Result<DeclaredStream, ConfigError> {
        let t = v.table().ok_or_else(|| {
            self.err(line, "`stream` must be a table: write `[[stream.stage]]` and `[[stream.wire]]`")
        })?;
        let mut out = DeclaredStream { source: self.path.to_path_buf(), stages: Vec::new(), wires: Vec::new() };
        for (k, kl, kv) in t {
            match k.as_str() {
                "stage" => {
                    for item in self.items(kv, *kl, "stage")? {
                        let s = self.declared_stage(item)?;
                        self.no_clash(&out.stages, &s)?;
                        out.stages.push(s);
                    }
                }
                "wire" => {
                    for item in self.items(kv, *kl, "wire")? {
                        out.wires.push(self.declared_wire(item)?);
                    }
                }
                other => {
                    return Err(self.err(*kl, super::unknown(other, &["stage", "wire"], "stream.")));
                }
            }
        }
        if out.stages.is_empty() {
            return Err(self.err(line, "`[stream]` declares no stage: add `[[stream.stage]]` tables (`name`, `root`)"));
        }
        for (i, w) in out.wires.iter().enumerate() {
            for end in [&w.producer, &w.consumer] {
                if !out.stages.iter().any(|s| &s.name == end) {
                    let names: Vec<&str> = out.stages.iter().map(|s| s.name.as_str()).collect();
                    return Err(self.err(
                        w.line,
                        format!("wire names the unknown stage `{end}` (the declared stages: {})", names.join(", ")),
                    ));
                }
            }
            if w.producer == w.consumer {
                return Err(
                    self.err(w.line, format!("a wire joins two stages; `{}` -> `{}` is one", w.producer, w.consumer))
                );
            }
            if let Some(prev) = out.wires[..i].iter().find(|x| x.producer == w.producer && x.consumer == w.consumer) {
                return Err(self.err(
                    w.line,
                    format!("the wire `{}` -> `{}` is already declared on line {}", w.producer, w.consumer, prev.line),
                ));
            }
        }
        Ok(out)
    }

    /// The tables of an array of tables `[[stream.<what>]]`.
    fn items<'v>(&self, v: &'v TomlValue, line: u32, what: &str) -> Result<&'v [TomlValue], ConfigError> {
        match &v.v {
            TomlKind::Array(items) => Ok(items),
            _ => Err(self.err(line, format!("`stream.{what}` must be an array of tables: write `[[stream.{what}]]`"))),
        }
    }

    /// The string value of key `k` of table `t` (declared at `at`), required.
    fn required(
        &self,
        t: &[(String, u32, TomlValue)],
        k: &str,
        at: u32,
        what: &str,
    ) -> Result<(String, u32), ConfigError> {
        match t.iter().find(|(key, _, _)| key == k) {
            Some((_, l, v)) => {
                Ok((self.string(v, *l, &format!("{what}'s `{k}` must be a non-empty string"))?.trim().to_string(), *l))
            }
            None => Err(self.err(at, format!("this {what} has no `{k}`"))),
        }
    }

    fn declared_stage(&self, item: &TomlValue) -> Result<DeclaredStage, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[stream.stage]]` must be a table"))?;
        if let Some((k, l, _)) = t.iter().find(|(k, _, _)| k != "name" && k != "root") {
            return Err(self.err(*l, super::unknown(k, &["name", "root"], "stream.stage.")));
        }
        let (name, line) = self.required(t, "name", item.line, "stage")?;
        let (root, root_line) = self.required(t, "root", item.line, "stage")?;
        let root = clean_root(&root).map_err(|m| self.err(root_line, format!("stage `{name}`: {m}")))?;
        Ok(DeclaredStage { name, root, line })
    }

    fn declared_wire(&self, item: &TomlValue) -> Result<DeclaredWire, ConfigError> {
        let t = item.table().ok_or_else(|| self.err(item.line, "each `[[stream.wire]]` must be a table"))?;
        if let Some((k, l, _)) = t.iter().find(|(k, _, _)| k != "producer" && k != "consumer") {
            return Err(self.err(*l, super::unknown(k, &["producer", "consumer"], "stream.wire.")));
        }
        let (producer, line) = self.required(t, "producer", item.line, "wire")?;
        let (consumer, _) = self.required(t, "consumer", item.line, "wire")?;
        Ok(DeclaredWire { producer, consumer, line })
    }

    /// Refuses a stage whose name or root another declared stage already has, or whose root
    /// holds or lies inside another's.
    fn no_clash(&self, earlier: &[DeclaredStage], s: &DeclaredStage) -> Result<(), ConfigError> {
        for e in earlier {
            if e.name == s.name {
                return Err(
                    self.err(s.line, format!("a stage named `{}` is already declared on line {}", s.name, e.line))
                );
            }
            if overlap(&e.root, &s.root) {
                let shown = |r: &str| if r.is_empty() { ".".to_string() } else { r.to_string() };
                return Err(self.err(
                    s.line,
                    format!(
                        "stage `{}` (root `{}`) overlaps stage `{}` (root `{}`, line {}): declared roots never hold one another",
                        s.name,
                        shown(&s.root),
                        e.name,
                        shown(&e.root),
                        e.line
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Does one of two repo-relative directories hold the other (`""` holds everything)?
fn overlap(a: &str, b: &str) -> bool {
    let holds =
        |outer: &str, inner: &str| outer.is_empty() || inner == outer || inner.starts_with(&format!("{outer}/"));
    holds(a, b) || holds(b, a)
}

/// A declared root as a clean repo-relative directory (`""` for the repository itself).
fn clean_root(root: &str) -> Result<String, Error> {
    let r = root.trim();
    if r.starts_with('/') || r.contains('\\') {
        return Err(Error::RootNotRelative(root.to_string()));
    }
    let parts: Vec<&str> = r.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.contains(&"..") {
        return Err(Error::RootClimbs(root.to_string()));
    }
    Ok(parts.join("/"))
}
