//! A wire's surface: the definitions that cross it — every name the consumer's files
//! import from the producer's files, each with the text of its contract — and a fingerprint of
//! them. Evidence for a wire records the fingerprint it was proven on; when the fingerprint
//! changes, the proof is stale (R82). A name the import does not find (`MissingName`) does not
//! cross, so a name that stops resolving leaves the surface and makes the proof stale.
//!
//! The contract of a function or method is its signature (the text up to its body), so a fix
//! inside a body leaves the wires it crosses proven; the contract of any other definition (a
//! class, struct, enum, type, constant) is its whole text, because its fields are what both sides
//! read. A module imported whole contributes every name it exports. Whitespace is normalised, so
//! reformatting changes nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use crate::datalog::Store;
use crate::facts::{Segment, rel};
use crate::index::Index;
use crate::ledger::Wire;

/// What crosses one wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WireSurface {
    /// `producer file:name`, sorted.
    pub names: Vec<String>,
    /// xxh3 of the names and the normalised text of their contracts (16 hex digits).
    pub fingerprint: String,
    /// Each name with the xxh3 of its contract's normalised text (16 hex digits).
    pub contracts: BTreeMap<String, String>,
}

/// Records on the proof `ev` of a wire the surface it was proven on: its fingerprint, and each
/// name's contract digest (so a stale proof can say which names changed).
pub fn stamp(ev: &mut crate::ledger::Evidence, surface: Option<&WireSurface>) {
    ev.surface = surface.map(|s| s.fingerprint.clone());
    ev.crossing = surface.map(|s| s.contracts.clone()).unwrap_or_default();
}

/// How what crosses a wire differs from what its proof recorded (`proof`, name → contract
/// digest): the names whose contract changed, the names added and the names removed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Delta {
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl Delta {
    /// The difference between the proof's names `proof` and the surface `now`.
    pub fn of(proof: &BTreeMap<String, String>, now: &WireSurface) -> Delta {
        let mut d = Delta::default();
        for (name, digest) in &now.contracts {
            match proof.get(name) {
                None => d.added.push(name.clone()),
                Some(was) if was != digest => d.changed.push(name.clone()),
                Some(_) => {}
            }
        }
        d.removed = proof.keys().filter(|n| !now.contracts.contains_key(*n)).cloned().collect();
        d
    }

    /// Every name the delta lists, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut all: Vec<String> = self.changed.iter().chain(&self.added).chain(&self.removed).cloned().collect();
        all.sort();
        all
    }
}

/// What changed on a wire since its proof, in words: `changed: …; added: …; removed: …`. A proof
/// that recorded no names (an older ledger) gets what crosses the wire now.
pub fn what_changed(proof: &BTreeMap<String, String>, now: &WireSurface) -> String {
    let d = Delta::of(proof, now);
    let parts: Vec<String> = [("changed", &d.changed), ("added", &d.added), ("removed", &d.removed)]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| format!("{what}: {}", names.join(", ")))
        .collect();
    match (proof.is_empty(), parts.is_empty()) {
        (false, false) => parts.join("; "),
        _ if now.names.is_empty() => "nothing crosses it now".to_string(),
        _ => format!("crossing it now: {}", now.names.join(", ")),
    }
}

/// One producer file's definitions: name → (kind, start line, end line).
struct Defs {
    defs: HashMap<String, (String, u32, u32)>,
    exports: BTreeSet<String>,
    text: Option<String>,
}

fn defs_of(root: &Path, idx: &Index, file: usize) -> Defs {
    let f = &idx.facts[file];
    let mut defs: HashMap<String, (String, u32, u32)> = HashMap::new();
    // (end line, column) of each definition
    let mut spans: HashMap<(String, u32), (u32, u32)> = HashMap::new();
    if let Ok(detail) = f.detail() {
        for r in detail.rows_of(rel::DEF_SPAN) {
            spans.insert((detail.str(r[1]).to_string(), r[2]), (r[4], r[3]));
        }
    }
    let core: &Segment = f.core();
    let mut cols: HashMap<String, u32> = HashMap::new();
    for r in core.rows_of(rel::DEFINES) {
        let (name, kind, line) = (core.str(r[1]).to_string(), core.str(r[2]).to_string(), r[3]);
        let (end, col) = spans.get(&(name.clone(), line)).copied().unwrap_or((line, 1));
        // the definition an import reaches is the outermost one, and of those the last (a later
        // `def` or assignment binds the name again); nested ones sit further right
        let wins = match (defs.get(&name), cols.get(&name)) {
            (Some((_, l, _)), Some(&c)) => col < c || col == c && line > *l,
            _ => true,
        };
        if wins {
            cols.insert(name.clone(), col);
            defs.insert(name, (kind, line, end));
        }
    }
    let exports = core.rows_of(rel::EXPORTS).map(|r| core.str(r[1]).to_string()).collect();
    let text = crate::index::walk::abs_path(root, &idx.files[file].path).and_then(|p| std::fs::read_to_string(p).ok());
    Defs { defs, exports, text }
}

/// Where a name a module re-exports is defined: its imports, resolved (the index's `Resolves`).
struct Origins<'a> {
    root: &'a Path,
    idx: &'a Index,
    file_of: &'a HashMap<&'a str, usize>,
    resolves: HashMap<(&'a str, u32), Vec<&'a str>>,
}

impl<'a> Origins<'a> {
    fn new(root: &'a Path, idx: &'a Index, file_of: &'a HashMap<&'a str, usize>) -> Origins<'a> {
        let g = &idx.global;
        let mut resolves: HashMap<(&str, u32), Vec<&str>> = HashMap::new();
        for r in g.rows_of(rel::RESOLVES) {
            resolves.entry((g.str(r[0]), r[1])).or_default().push(g.str(r[2]));
        }
        Origins { root, idx, file_of, resolves }
    }

    /// The contract text of `name` as module `file` provides it: its definition there, or, where
    /// `file` re-exports it (`from .impl import f`, `export { f } from`, `pub use`, a glob), the
    /// definition it leads to (at most 8 modules deep), so a signature changed behind a re-export
    /// changes what crosses. Empty when it is found nowhere readable.
    fn text(&self, producers: &mut HashMap<String, Defs>, file: &str, name: &str) -> String {
        let mut at = (file.to_string(), name.to_string());
        let mut seen: HashSet<(String, String)> = HashSet::new();
        for _ in 0..8 {
            if !seen.insert(at.clone()) {
                break;
            }
            let Some(&f) = self.file_of.get(at.0.as_str()) else { break };
            let d = producers.entry(at.0.clone()).or_insert_with(|| defs_of(self.root, self.idx, f));
            if let (Some((kind, l, e)), Some(t)) = (d.defs.get(&at.1), &d.text)
                && kind != "import"
            {
                return format!("{kind} {}", contract(t, kind, *l, *e));
            }
            match self.reexport(producers, f, &at.0, &at.1) {
                Some(next) => at = next,
                None => break,
            }
        }
        String::new()
    }

    /// The (file, name) `name` of module `file` (index `f`) is imported from: a named import
    /// bound as `name`, else a glob import that resolves to a file.
    fn reexport(
        &self,
        producers: &mut HashMap<String, Defs>,
        f: usize,
        file: &str,
        name: &str,
    ) -> Option<(String, String)> {
        let core = self.idx.facts[f].core();
        let to = |line: u32| self.resolves.get(&(file, line)).into_iter().flatten().find(|t| **t != file).copied();
        for r in core.rows_of(rel::IMPORTED_NAME) {
            let (orig, alias) = (core.str(r[3]), core.str(r[4]));
            let bound = if alias.is_empty() { orig } else { alias };
            if bound == name
                && orig != "*"
                && let Some(t) = to(r[1])
            {
                return Some((t.to_string(), orig.to_string()));
            }
        }
        let globs: Vec<&str> =
            core.rows_of(rel::IMPORT).filter(|r| core.str(r[3]) == "wildcard").filter_map(|r| to(r[1])).collect();
        // the glob whose module defines or exports the name
        globs.into_iter().find_map(|t| {
            let &tf = self.file_of.get(t)?;
            let d = producers.entry(t.to_string()).or_insert_with(|| defs_of(self.root, self.idx, tf));
            (d.defs.contains_key(name) || d.exports.contains(name)).then(|| (t.to_string(), name.to_string()))
        })
    }
}

/// The contract text of the definition spanning `line..=end` of `text`, whitespace-normalised,
/// with the decorators and attributes written on the lines above it (a decorator may change what
/// a call takes).
fn contract(text: &str, kind: &str, line: u32, end: u32) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = line.saturating_sub(1) as usize;
    let mut first = start;
    while first > 0
        && lines.get(first - 1).is_some_and(|l| l.trim_start().starts_with('@') || l.trim_start().starts_with("#["))
    {
        first -= 1;
    }
    let above = lines.get(first..start).unwrap_or_default().join("\n");
    let body: String =
        lines.iter().skip(start).take((end.saturating_sub(line) + 1) as usize).copied().collect::<Vec<_>>().join("\n");
    let cut = if matches!(kind, "function" | "method") { signature(&body) } else { &body };
    above.split_whitespace().chain(cut.split_whitespace()).collect::<Vec<_>>().join(" ")
}

/// A function's text up to its body: the first `{` outside brackets (Rust, TypeScript), or the
/// first `:` outside brackets that ends a line (Python).
fn signature(text: &str) -> &str {
    let mut depth = 0i32;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth <= 0 => return &text[..i],
            b':' if depth <= 0 => {
                let rest = text[i + 1..].trim_start_matches([' ', '\t']);
                if rest.is_empty() || rest.starts_with('\n') || rest.starts_with('#') || rest.starts_with('\r') {
                    return &text[..i];
                }
            }
            _ => {}
        }
    }
    text
}

/// The names an import does not find where it leads (`MissingName`: path, line, name, target):
/// they do not cross the wire, so a name that stops resolving leaves the surface.
fn missing_names(store: &Store) -> HashSet<(&str, u32, &str, &str)> {
    let s = |i: u32| store.syms.str(i);
    store.rels[rel::MISSING_NAME.0 as usize].iter().map(|r| (s(r[0]), r[1], s(r[2]), s(r[3]))).collect()
}

/// The public API of `stage` (R31): every name its source files export (test files are not its
/// API), each with the text of its contract, as `file:name`.
fn public_api(
    root: &Path,
    idx: &Index,
    store: &Store,
    stage: &str,
    file_of: &HashMap<&str, usize>,
    producers: &mut HashMap<String, Defs>,
) -> BTreeMap<String, String> {
    let mut items = BTreeMap::new();
    let files: BTreeSet<&str> = store.rels[rel::IN_STAGE.0 as usize]
        .iter()
        .filter(|r| store.syms.str(r[1]) == stage)
        .map(|r| store.syms.str(r[0]))
        .collect();
    for path in files {
        let Some(&f) = file_of.get(path) else { continue };
        if idx.facts[f].core().rows_of(rel::TEST_FILE).next().is_some() {
            continue;
        }
        let d = producers.entry(path.to_string()).or_insert_with(|| defs_of(root, idx, f));
        for n in &d.exports {
            let text = match (d.defs.get(n), &d.text) {
                (Some((kind, l, e)), Some(t)) => format!("{kind} {}", contract(t, kind, *l, *e)),
                _ => String::new(),
            };
            items.insert(format!("{path}:{n}"), text);
        }
    }
    items
}

/// The surfaces of `wires`, from the index (fresh) and the derived `WireImport` rows in `store`.
/// A stage's own wire (`S -> S`, the wire-equivalent contract of a lone stage) has its public API
/// as its surface.
pub fn surfaces(root: &Path, idx: &Index, store: &Store, wires: &[Wire]) -> BTreeMap<Wire, WireSurface> {
    let wanted: BTreeSet<&Wire> = wires.iter().collect();
    let file_of: HashMap<&str, usize> = idx.files.iter().enumerate().map(|(i, f)| (f.path.as_str(), i)).collect();
    // consumer import sites per wire: (consumer file, line, producer file)
    let mut sites: BTreeMap<Wire, BTreeSet<(String, u32, String)>> = BTreeMap::new();
    for r in store.rels[rel::WIRE_IMPORT.0 as usize].iter() {
        let w = Wire { producer: store.syms.str(r[0]).to_string(), consumer: store.syms.str(r[1]).to_string() };
        if wanted.contains(&w) {
            let site = (store.syms.str(r[2]).to_string(), r[3], store.syms.str(r[4]).to_string());
            sites.entry(w).or_default().insert(site);
        }
    }
    let missing = missing_names(store);
    let mut producers: HashMap<String, Defs> = HashMap::new();
    let origin = Origins::new(root, idx, &file_of);
    let mut out = BTreeMap::new();
    for w in wires {
        let mut items: BTreeMap<String, String> = BTreeMap::new();
        if w.producer == w.consumer {
            // a lone stage's own wire: its public API is the contract (R31)
            items = public_api(root, idx, store, &w.producer, &file_of, &mut producers);
        }
        for (path, line, target) in sites.get(w).into_iter().flatten() {
            let Some(&tf) = file_of.get(target.as_str()) else { continue };
            let exports = producers.entry(target.clone()).or_insert_with(|| defs_of(root, idx, tf)).exports.clone();
            let names: Vec<String> = file_of
                .get(path.as_str())
                .map(|&cf| {
                    let core = idx.facts[cf].core();
                    core.rows_of(rel::IMPORTED_NAME)
                        .filter(|r| core.str(r[0]) == path && r[1] == *line)
                        .map(|r| core.str(r[3]).to_string())
                        .collect()
                })
                .unwrap_or_default();
            let names: Vec<String> =
                if names.is_empty() || names.iter().any(|n| n == "*") { exports.into_iter().collect() } else { names };
            for n in names {
                if missing.contains(&(path.as_str(), *line, n.as_str(), target.as_str())) {
                    continue;
                }
                let text = origin.text(&mut producers, target, &n);
                items.insert(format!("{target}:{n}"), text);
            }
        }
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        for (k, v) in &items {
            h.update(k.as_bytes());
            h.update(b"\0");
            h.update(v.as_bytes());
            h.update(b"\0");
        }
        let contracts: BTreeMap<String, String> = items
            .iter()
            .map(|(k, v)| (k.clone(), format!("{:016x}", xxhash_rust::xxh3::xxh3_64(v.as_bytes()))))
            .collect();
        out.insert(
            w.clone(),
            WireSurface { names: items.into_keys().collect(), fingerprint: format!("{:016x}", h.digest()), contracts },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surface(contracts: &[(&str, &str)]) -> WireSurface {
        let contracts: BTreeMap<String, String> =
            contracts.iter().map(|(n, d)| (n.to_string(), d.to_string())).collect();
        WireSurface { names: contracts.keys().cloned().collect(), fingerprint: "f".into(), contracts }
    }

    #[test]
    fn what_changed_names_only_the_changed_added_and_removed_contracts() {
        let proof = surface(&[("a.py:keep", "1"), ("a.py:parse", "2"), ("a.py:gone", "3")]).contracts;
        let now = surface(&[("a.py:keep", "1"), ("a.py:parse", "9"), ("a.py:new", "4")]);
        let d = Delta::of(&proof, &now);
        assert_eq!(
            (d.changed, d.added, d.removed),
            (vec!["a.py:parse".into()], vec!["a.py:new".into()], vec!["a.py:gone".into()])
        );
        assert_eq!(what_changed(&proof, &now), "changed: a.py:parse; added: a.py:new; removed: a.py:gone");
        assert_eq!(Delta::of(&proof, &now).names(), ["a.py:gone", "a.py:new", "a.py:parse"]);
        // a proof that recorded no names (an older ledger): what crosses now
        assert_eq!(what_changed(&BTreeMap::new(), &now), "crossing it now: a.py:keep, a.py:new, a.py:parse");
        assert_eq!(what_changed(&proof, &surface(&[])), "removed: a.py:gone, a.py:keep, a.py:parse");
        assert_eq!(what_changed(&BTreeMap::new(), &surface(&[])), "nothing crosses it now");
    }

    #[test]
    fn a_signature_stops_at_the_body() {
        assert_eq!(
            signature("def parse(text: str = \"a:b\") -> list[str]:\n    return x"),
            "def parse(text: str = \"a:b\") -> list[str]"
        );
        assert_eq!(
            signature("pub fn f(x: Vec<u8>) -> Result<(), E> {\n    x\n}"),
            "pub fn f(x: Vec<u8>) -> Result<(), E> "
        );
        assert_eq!(
            signature("export function f(a: {x: number}): number {\n  return 1\n}"),
            "export function f(a: {x: number}): number "
        );
    }

    #[test]
    fn a_body_change_keeps_the_contract_and_a_signature_change_does_not() {
        let a = "def parse(text):\n    return text.split()\n";
        let b = "def parse(text):\n    # comment\n    return text.split(' ')\n";
        let c = "def parse(text, sep=None):\n    return text.split(sep)\n";
        assert_eq!(contract(a, "function", 1, 2), contract(b, "function", 1, 3));
        assert_ne!(contract(a, "function", 1, 2), contract(c, "function", 1, 2));
        let s1 = "class A:\n    x: int\n";
        let s2 = "class A:\n    x: str\n";
        assert_ne!(contract(s1, "class", 1, 2), contract(s2, "class", 1, 2));
        assert_eq!(
            contract("struct A {  x: u8 }", "struct", 1, 1),
            contract("struct A {\n    x: u8\n}", "struct", 1, 3)
        );
    }
}
