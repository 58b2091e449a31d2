//! `andon init`: a first `andon.toml` drawn from the detected stream, one that holds today and fails
//! on the first new import against it. Its contracts:
//! - `acyclic` over every stage (those to come too);
//! - `layers` for each connected group of stages (weakly connected by wires): one layer per level
//!   of the stream, top (last consumers) first; a cycle's stages share a level;
//! - `independence` for stages that share no wire: the stages of one level of a group, and the
//!   stages with no wire at all, each set of one language (stages in different languages cannot
//!   import each other, so a contract over them would add nothing);
//! - inside each stage with structure of its own, `layers` over its modules' paths and
//!   `independence` of its subpackages that never import each other (`inner`);
//! - `manifest`, when a stage has a manifest that declares dependencies.
//!
//! Every finding present today becomes an exception whose reason says so; one that excuses nothing
//! is dropped. When a finding is fixed its exception matches nothing, and `andon check` asks for its
//! removal: the exceptions only shrink. The file is judged in memory by the real check before it is
//! handed out, and a contract that cannot hold today is left out, with a comment saying why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::graph::DepGraph;
use super::{CheckError, CheckReport, Finding, Judge, JudgedContracts};
use crate::config::{Config, ContractKind};
use crate::datalog;
use crate::facts::rel;
use crate::index::Index;
use crate::ops::StreamReport;

/// An exception `andon init` writes, for findings present when it ran (`resolves`: `from` is the
/// import's `file:line` and `to` its name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excepted {
    pub from: String,
    pub to: String,
    /// The findings it excuses (`path:line: message`), the first shown above it.
    pub findings: Vec<String>,
}

/// A contract `andon init` writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drafted {
    pub name: String,
    pub kind: ContractKind,
    /// What it holds the code to, in a line or two (the comment above it).
    pub why: Vec<String>,
    /// `layers`: top first, each one or more selectors.
    pub layers: Vec<Vec<String>>,
    /// `independence`: the members.
    pub members: Vec<String>,
    pub exceptions: Vec<Excepted>,
}

/// The `andon.toml` `andon init` writes, and the check it passes.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The day it was drawn (UTC, `YYYY-MM-DD`), named by every exception's reason.
    pub date: String,
    pub stages: usize,
    pub wires: usize,
    pub contracts: Vec<Drafted>,
    /// What was left out and why, and the cycles (comments at the end of the file).
    pub notes: Vec<String>,
    /// The file's text.
    pub text: String,
    /// `andon check` on the file, judged in memory: no blocking finding, no stale exception.
    pub report: CheckReport,
}

impl Plan {
    /// How many exceptions the file declares.
    pub fn exceptions(&self) -> usize {
        self.contracts.iter().map(|c| c.exceptions.len()).sum()
    }
}

/// The edge kinds `andon init` leaves out of its `layers` and `independence` contracts: imports
/// that are no run-time dependency.
pub const INIT_EXCLUDED: [&str; 2] = ["type_checking", "test"];

/// The reason of every exception `andon init` writes on `date`.
pub fn reason(date: &str) -> String {
    format!("present when andon init ran on {date}")
}

/// The `andon.toml` for the repository at `root` (index `idx`) on `date`: the contracts of its
/// stream, every finding present today excused, judged in memory by the real check.
pub fn plan(idx: &Index, root: &Path, date: &str) -> Result<Plan, CheckError> {
    let stream = crate::ops::stream(idx).map_err(|e| CheckError::Other(e.to_string()))?;
    let store = super::facts(idx, true, true)?;
    let g = DepGraph::build(&store);
    let shape = Shape::of(&stream, &g, idx);
    let mut notes = shape.notes.clone();
    let mut drafts = vec![acyclic_draft(&g, &shape)];
    for grp in &shape.groups {
        match layers_draft(grp) {
            Some(d) => drafts.push(d),
            None => {
                let all: Vec<String> = grp.levels.iter().flatten().cloned().collect();
                notes.push(format!("no layers contract for stages {}: they share one level", listed(&all)));
            }
        }
    }
    drafts.extend(independence_drafts(&shape));
    let lang: BTreeMap<&str, &str> = idx.files.iter().map(|f| (f.path.as_str(), f.lang.as_str())).collect();
    let is_test = |p: &str| {
        let l = lang.get(p).and_then(|l| crate::extract::lang::Language::by_name(l));
        l.is_some_and(|l| l.is_clear_test_path(p))
    };
    drafts.extend(super::inner::drafts(&g, &is_test));
    if store.rels[rel::HAS_MANIFEST.0 as usize].is_empty() {
        notes.push("no `manifest` contract: no stage has a manifest that declares dependencies".into());
    } else {
        drafts.push(manifest_draft());
    }
    if g.files().next().is_some() {
        drafts.push(resolves_draft());
    }
    unique_names(&mut drafts);
    let head = DraftHeader { date, stages: stream.stages.len(), wires: stream.wires.len() };
    let env = Env { idx, root, g: &g, store: &store, head: &head };
    let drafts = env.settle(drafts, &mut notes)?;
    let text = render(&head, &drafts, &notes);
    let cfg = Config::with_andon_toml(root, &text).map_err(CheckError::Config)?;
    let report = super::run(idx, root, &cfg, datalog::Budget::default())?;
    if report.blocking() > 0 || !report.stale_exceptions.is_empty() {
        let (blocking, stale) = (report.blocking(), report.stale_exceptions.len());
        return Err(super::Error::InitUnsettled { blocking, stale }.into());
    }
    Ok(Plan { date: date.to_string(), stages: head.stages, wires: head.wires, contracts: drafts, notes, text, report })
}

/// The UTC date of `secs` seconds since the Unix epoch, as `YYYY-MM-DD`.
pub fn date_of(secs: u64) -> String {
    // days to the civil calendar (proleptic Gregorian), by eras of 400 years
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The file's header facts.
struct DraftHeader<'a> {
    date: &'a str,
    stages: usize,
    wires: usize,
}

/// A connected group of two or more stages: its levels, bottom (first producers) first, each level
/// in stream order, and the stages of each level that are on no cycle.
struct Group {
    levels: Vec<Vec<String>>,
    acyclic: BTreeSet<String>,
}

/// The stream as the contracts see it.
struct Shape {
    /// Each stage's place in the stream order.
    pos: BTreeMap<String, usize>,
    /// The connected groups of two or more stages a selector can name.
    groups: Vec<Group>,
    /// The stages with no wire at all, by language.
    isolated: BTreeMap<String, Vec<String>>,
    /// Each stage's language (the one most of its files are in).
    family: BTreeMap<String, String>,
    notes: Vec<String>,
}

impl Shape {
    /// The groups, levels and languages of the stream `s` over the graph `g` of index `idx`.
    fn of(s: &StreamReport, g: &DepGraph, idx: &Index) -> Shape {
        let pos: BTreeMap<String, usize> = s.order.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
        let family = families(g, idx);
        let mut notes = Vec::new();
        let named: Vec<&str> = s
            .stages
            .iter()
            .filter(|st| st.files > 0)
            .map(|st| st.name.as_str())
            .filter(|n| {
                let ok = stage_selector(n).is_some();
                if !ok {
                    notes.push(format!(
                        "stage `{n}` is in no layers or independence contract: a selector cannot name it \
                         (space around its name); the acyclic contract covers it"
                    ));
                }
                ok
            })
            .collect();
        for c in &s.cycles {
            notes.push(format!(
                "stages {} form a cycle: they share a layer, and the acyclic contract allows what closes it",
                listed(c)
            ));
        }
        let level = levels(s);
        let on_cycle: BTreeSet<&str> = s.cycles.iter().flatten().map(String::as_str).collect();
        let mut groups = Vec::new();
        let mut isolated: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for members in components(s, &named) {
            if members.len() == 1 {
                let n = members[0];
                let fam = family.get(n).cloned().unwrap_or_default();
                isolated.entry(fam).or_default().push(n.to_string());
                continue;
            }
            let top = members.iter().map(|m| level.get(*m).copied().unwrap_or(0)).max().unwrap_or(0);
            let mut levels = vec![Vec::new(); top + 1];
            for m in &members {
                levels[level.get(*m).copied().unwrap_or(0)].push(m.to_string());
            }
            levels.retain(|l| !l.is_empty());
            for l in &mut levels {
                l.sort_by_key(|n| pos.get(n).copied().unwrap_or(usize::MAX));
            }
            let acyclic = members.iter().filter(|m| !on_cycle.contains(**m)).map(|m| m.to_string()).collect();
            groups.push(Group { levels, acyclic });
        }
        Shape { pos, groups, isolated, family, notes }
    }

    /// The place of `stage` in the stream order, ties (and stages outside it) by name.
    fn rank<'n>(&self, stage: &'n str) -> (usize, &'n str) {
        (self.pos.get(stage).copied().unwrap_or(usize::MAX), stage)
    }
}

/// Each stage's level: 0 for a stage no other stage feeds, else one above the highest stage that
/// feeds it; the stages of a cycle share one.
fn levels(s: &StreamReport) -> BTreeMap<String, usize> {
    let cycle_of: BTreeMap<&str, &Vec<String>> =
        s.cycles.iter().flat_map(|c| c.iter().map(move |m| (m.as_str(), c))).collect();
    let mut producers: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in &s.wires {
        producers.entry(w.consumer.as_str()).or_default().push(w.producer.as_str());
    }
    let mut level: BTreeMap<String, usize> = BTreeMap::new();
    // the stream order lists producers before their consumers
    for stage in &s.order {
        if level.contains_key(stage) {
            continue;
        }
        let members: Vec<&str> = match cycle_of.get(stage.as_str()) {
            Some(c) => c.iter().map(String::as_str).collect(),
            None => vec![stage.as_str()],
        };
        let lv = members
            .iter()
            .flat_map(|m| producers.get(m).into_iter().flatten())
            .filter(|p| !members.contains(p))
            .map(|p| level.get(*p).map_or(0, |l| l + 1))
            .max()
            .unwrap_or(0);
        for m in members {
            level.insert(m.to_string(), lv);
        }
    }
    level
}

/// The stages of `named`, in groups weakly connected by the wires of `s`; each group in stream
/// order, the groups by their first stage's place.
fn components<'a>(s: &StreamReport, named: &[&'a str]) -> Vec<Vec<&'a str>> {
    let index: BTreeMap<&str, usize> = named.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut parent: Vec<usize> = (0..named.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for w in &s.wires {
        if let (Some(&a), Some(&b)) = (index.get(w.producer.as_str()), index.get(w.consumer.as_str())) {
            let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let pos: BTreeMap<&str, usize> = s.order.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut by_root: BTreeMap<usize, Vec<&'a str>> = BTreeMap::new();
    for (i, n) in named.iter().enumerate() {
        by_root.entry(root(&mut parent, i)).or_default().push(n);
    }
    let mut groups: Vec<Vec<&'a str>> = by_root.into_values().collect();
    for grp in &mut groups {
        grp.sort_by_key(|n| (pos.get(n).copied().unwrap_or(usize::MAX), *n));
    }
    groups.sort_by_key(|grp| (pos.get(grp[0]).copied().unwrap_or(usize::MAX), grp[0]));
    groups
}

/// Each stage's language family (`Python`, `Rust`, `TypeScript/JavaScript`): the one most of its
/// files are in, ties by name.
fn families(g: &DepGraph, idx: &Index) -> BTreeMap<String, String> {
    let lang: BTreeMap<&str, &str> = idx.files.iter().map(|f| (f.path.as_str(), f.lang.as_str())).collect();
    // the language table names each language's family; a name it does not know stands for itself
    let family = |l: &str| crate::extract::lang::Language::by_name(l).map_or(l, |x| x.family).to_string();
    let mut out = BTreeMap::new();
    for stage in g.stage_names() {
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for &f in g.stage_files(stage).unwrap_or(&[]) {
            *count.entry(family(lang.get(g.name(f)).copied().unwrap_or(""))).or_default() += 1;
        }
        if let Some((fam, _)) = count.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))) {
            out.insert(stage.to_string(), fam);
        }
    }
    out
}

/// `stage:NAME`, when a selector can name the stage (selectors trim the space around a name).
fn stage_selector(name: &str) -> Option<String> {
    (!name.is_empty() && name.trim() == name && !name.starts_with("./")).then(|| format!("stage:{name}"))
}

/// A selector for exactly the file `path`: `path:PATH`, as a glob with its glob characters
/// escaped when it has any (a space around it, which selectors trim, as `?`).
pub(super) fn file_selector(path: &str) -> String {
    if !path.contains(['*', '?', '[', '{']) && path.trim() == path {
        return format!("path:{path}");
    }
    let n = path.chars().count();
    let lead = path.chars().take_while(|c| c.is_whitespace()).count();
    let trail = path.chars().rev().take_while(|c| c.is_whitespace()).count();
    let mut glob = String::from("path:");
    for (i, c) in path.chars().enumerate() {
        if i < lead || i >= n.saturating_sub(trail) {
            glob.push('?');
        } else {
            if "*?[]{}\\,".contains(c) {
                glob.push('\\');
            }
            glob.push(c);
        }
    }
    glob
}

/// The stage names of `stages` as selectors, in their order.
fn selectors(stages: &[String]) -> Vec<String> {
    stages.iter().filter_map(|s| stage_selector(s)).collect()
}

/// `a`, `b`, `c` and N more.
fn listed(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    match names.len() {
        0..=3 => shown.join(", "),
        n => format!("{} and {} more", shown.join(", "), n - 3),
    }
}

/// `acyclic` over every stage, with an exception for each dependency that closes a cycle today:
/// the stages on cycles are ordered producers first ([`cycle_order`]), and each dependency of a
/// stage on one after it is excepted (a cycle's weaker direction); the others form no cycle.
fn acyclic_draft(g: &DepGraph, shape: &Shape) -> Drafted {
    let names: Vec<String> = g.stage_names().map(str::to_string).collect();
    let sets: Vec<Vec<bool>> = names
        .iter()
        .map(|s| {
            let mut v = vec![false; g.len()];
            for &f in g.stage_files(s).unwrap_or(&[]) {
                v[f as usize] = true;
            }
            v
        })
        .collect();
    let unit_of = super::units_of(g, &sets);
    let chains = g.unit_chains(&unit_of, sets.len(), 3, 0);
    let cyclic = super::on_cycles(&chains, &names);
    let weight = imports_between(g, &unit_of);
    let w = |pair: &(usize, usize)| weight.get(pair).copied().unwrap_or(1);
    let place = cycle_order(&cyclic, &w, |u| shape.rank(&names[u]));
    let mut exceptions = Vec::new();
    for (&(a, b), chain) in &chains {
        if !cyclic.contains(&(a, b)) || place[&a] > place[&b] {
            continue;
        }
        let (Some(from), Some(to)) = (stage_selector(&names[a]), stage_selector(&names[b])) else { continue };
        let e = &g.edges[chain[0] as usize];
        let n = w(&(a, b));
        exceptions.push(Excepted {
            from,
            to,
            findings: vec![format!(
                "{}:{}: stage `{}` depends on stage `{}` ({n} import{}; it imports `{}`), closing a cycle",
                g.name(e.from),
                e.line,
                names[a],
                names[b],
                if n == 1 { "" } else { "s" },
                e.spec
            )],
        });
    }
    Drafted {
        name: "no dependency cycle among stages".into(),
        kind: ContractKind::Acyclic,
        why: vec![
            "No stage depends on itself through other stages: every stage, those to come too.".into(),
            "An exception here allows one dependency between two stages: any cycle through it, a new".into(),
            "one too, is allowed while it stands. Remove it once its cycle is broken.".into(),
        ],
        layers: Vec::new(),
        members: Vec::new(),
        exceptions,
    }
}

/// The place of each stage on a cycle in an order, producers first, that leaves little weight
/// `w` of the dependencies `cyclic` (`(a, b)`: `a` depends on `b`) against it: greedily, a stage
/// that depends on none left goes next, one that none left depends on goes last, else the one
/// depended on most beyond what it depends on (Eades, Lin and Smyth), ties by `tie`.
fn cycle_order<K: Ord>(
    cyclic: &BTreeSet<(usize, usize)>,
    w: &dyn Fn(&(usize, usize)) -> usize,
    tie: impl Fn(usize) -> K,
) -> BTreeMap<usize, usize> {
    let mut left: BTreeSet<usize> = cyclic.iter().flat_map(|&(a, b)| [a, b]).collect();
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    while !left.is_empty() {
        // what each stage left depends on, and how much the others left depend on it
        let (mut deps, mut used): (BTreeMap<usize, i64>, BTreeMap<usize, i64>) = Default::default();
        for pair in cyclic.iter().filter(|(a, b)| left.contains(a) && left.contains(b)) {
            *deps.entry(pair.0).or_default() += w(pair) as i64;
            *used.entry(pair.1).or_default() += w(pair) as i64;
        }
        let of = |m: &BTreeMap<usize, i64>, u: usize| m.get(&u).copied().unwrap_or(0);
        let next = if let Some(&u) = left.iter().find(|&&u| of(&deps, u) == 0) {
            head.push(u);
            u
        } else if let Some(&u) = left.iter().find(|&&u| of(&used, u) == 0) {
            tail.push(u);
            u
        } else {
            let u = *left
                .iter()
                .max_by(|&&x, &&y| {
                    (of(&used, x) - of(&deps, x)).cmp(&(of(&used, y) - of(&deps, y))).then_with(|| tie(y).cmp(&tie(x)))
                })
                .expect("a stage is left");
            head.push(u);
            u
        };
        left.remove(&next);
    }
    head.into_iter().chain(tail.into_iter().rev()).enumerate().map(|(i, u)| (u, i)).collect()
}

/// How many imports lead directly from a file of one unit to a file of another, by pair.
fn imports_between(g: &DepGraph, unit_of: &[Option<usize>]) -> BTreeMap<(usize, usize), usize> {
    let mut weight = BTreeMap::new();
    for e in &g.edges {
        if let (Some(a), Some(b)) = (unit_of[e.from as usize], unit_of[e.to as usize])
            && a != b
        {
            *weight.entry((a, b)).or_default() += 1;
        }
    }
    weight
}

/// `layers` for a group: its levels, top first; none when it has fewer than two.
fn layers_draft(grp: &Group) -> Option<Drafted> {
    let layers: Vec<Vec<String>> = grp.levels.iter().rev().map(|l| selectors(l)).filter(|l| !l.is_empty()).collect();
    if layers.len() < 2 {
        return None;
    }
    let (top, bottom) = (&grp.levels[grp.levels.len() - 1][0], &grp.levels[0][0]);
    let stages: usize = grp.levels.iter().map(Vec::len).sum();
    let name = if grp.levels.len() == 2 && stages == 2 {
        format!("layers: {top} > {bottom}")
    } else {
        format!("layers: {top} > … > {bottom} ({stages} stages)")
    };
    Some(Drafted {
        name,
        kind: ContractKind::Layers,
        why: vec![
            "These stages are connected by wires. Top first, in stream order: a layer may import the".into(),
            "layers below it, never one above (stages of one layer may import each other).".into(),
        ],
        layers,
        members: Vec::new(),
        exceptions: Vec::new(),
    })
}

/// `independence` for each set of stages that share no wire: the stages of one level of a group
/// that are on no cycle, and the stages with no wire at all; each set of one language.
fn independence_drafts(shape: &Shape) -> Vec<Drafted> {
    let mut sets: Vec<(Vec<String>, &str)> = Vec::new();
    for grp in &shape.groups {
        for level in &grp.levels {
            let mut by_family: BTreeMap<&str, Vec<String>> = BTreeMap::new();
            for s in level.iter().filter(|s| grp.acyclic.contains(*s)) {
                by_family.entry(shape.family.get(s).map_or("", String::as_str)).or_default().push(s.clone());
            }
            sets.extend(by_family.into_values().map(|m| (m, "These stages sit side by side in one layer")));
        }
    }
    sets.extend(shape.isolated.values().map(|m| (m.clone(), "These stages have no wire to any stage")));
    sets.into_iter()
        .filter(|(m, _)| m.len() >= 2)
        .map(|(m, said)| Drafted {
            name: format!("independent: {}", listed(&m)),
            kind: ContractKind::Independence,
            why: vec![
                format!("{said} and import none of each other today;"),
                "keep them apart (delete this contract to let them import each other).".into(),
            ],
            layers: Vec::new(),
            members: selectors(&m),
            exceptions: Vec::new(),
        })
        .collect()
}

/// `manifest` over every stage.
fn manifest_draft() -> Drafted {
    Drafted {
        name: "dependencies are declared and used".into(),
        kind: ContractKind::Manifest,
        why: vec![
            "Each stage's manifest (Cargo.toml, pyproject.toml, package.json) declares the packages".into(),
            "its code imports, and its code imports each dependency it declares.".into(),
        ],
        layers: Vec::new(),
        members: Vec::new(),
        exceptions: Vec::new(),
    }
}

/// `resolves` over every file.
fn resolves_draft() -> Drafted {
    Drafted {
        name: "imports resolve".into(),
        kind: ContractKind::Resolves,
        why: vec![
            "Every import names a module and a name that exist there, and each Python call of a".into(),
            "function another module defines passes arguments it takes.".into(),
        ],
        layers: Vec::new(),
        members: Vec::new(),
        exceptions: Vec::new(),
    }
}

/// Numbers repeated contract names (` (2)`, ` (3)`, …) so that each is unique.
fn unique_names(drafts: &mut [Drafted]) {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for d in drafts {
        let mut name = d.name.clone();
        let mut n = 1;
        while !seen.insert(name.clone()) {
            n += 1;
            name = format!("{} ({n})", d.name);
        }
        d.name = name;
    }
}

/// What the drafts are judged on.
struct Env<'a> {
    idx: &'a Index,
    root: &'a Path,
    g: &'a DepGraph,
    store: &'a datalog::Store,
    head: &'a DraftHeader<'a>,
}

impl Env<'_> {
    /// The drafts, each finding excused by an exception that excuses something; a draft that still
    /// fails, or cannot be judged, is left out and `notes` says why.
    fn settle(&self, mut drafts: Vec<Drafted>, notes: &mut Vec<String>) -> Result<Vec<Drafted>, CheckError> {
        let judged = self.judge(&drafts)?;
        for (d, judged) in drafts.iter_mut().zip(judged) {
            let Ok(out) = judged else { continue };
            for f in out.findings.iter().filter(|f| f.excused.is_none()) {
                add_exception(d, self.g, f);
            }
            d.exceptions.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        }
        let judged = self.judge(&drafts)?;
        for (d, judged) in drafts.iter_mut().zip(judged) {
            let Ok(out) = judged else { continue };
            let stale: BTreeSet<(Option<&str>, Option<&str>)> = out
                .stale
                .iter()
                .map(|s| (s.from.as_deref().or(s.at.as_deref()), s.to.as_deref().or(s.name.as_deref())))
                .collect();
            d.exceptions.retain(|e| !stale.contains(&(Some(e.from.as_str()), Some(e.to.as_str()))));
        }
        let judged = self.judge(&drafts)?;
        let mut kept = Vec::new();
        for (d, judged) in drafts.into_iter().zip(judged) {
            match judged {
                Ok(out) if out.stale.is_empty() && out.findings.iter().all(|f| !f.blocking()) => kept.push(d),
                Ok(out) => {
                    let n = out.findings.iter().filter(|f| f.blocking()).count();
                    notes.push(format!(
                        "left out `{}` ({}): {n} finding(s) present today that no exception can name",
                        d.name,
                        d.kind.name()
                    ));
                }
                Err(why) => notes.push(format!("left out `{}` ({}): {why}", d.name, d.kind.name())),
            }
        }
        Ok(kept)
    }

    /// Each draft judged as written in the file, in order: its outcome, or why it cannot be judged.
    fn judge(&self, drafts: &[Drafted]) -> Result<Vec<Result<JudgedContracts, CheckError>>, CheckError> {
        let text = render(self.head, drafts, &[]);
        let cfg = Config::with_andon_toml(self.root, &text).map_err(CheckError::Config)?;
        let config_path = cfg.source.clone().unwrap_or_else(|| self.root.join("andon.toml"));
        Ok(cfg
            .contracts
            .iter()
            .map(|c| {
                let mut out = JudgedContracts::default();
                let budget = datalog::Budget::default();
                let judge = Judge {
                    idx: self.idx,
                    root: self.root,
                    config_path: &config_path,
                    g: self.g,
                    store: self.store,
                    c,
                    budget,
                };
                judge.judge(&mut out).map(|_| out)
            })
            .collect())
    }
}

/// Adds to `d` the exception that excuses finding `f`, or names it on one that already does.
fn add_exception(d: &mut Drafted, g: &DepGraph, f: &Finding) {
    let Some((from, to)) = exception_for(g, f) else { return };
    let said = format!("{}:{}: {}", f.path, f.line, f.message);
    match d.exceptions.iter_mut().find(|e| e.from == from && e.to == to) {
        Some(e) => e.findings.push(said),
        None => d.exceptions.push(Excepted { from, to, findings: vec![said] }),
    }
}

/// The `from` and `to` of an exception that excuses finding `f` and as little else as it can: the
/// offending file and the file its chain reaches; for `manifest`, the stage and the package. None
/// when no selector can name them.
fn exception_for(g: &DepGraph, f: &Finding) -> Option<(String, String)> {
    let (from, to) = match f.kind {
        ContractKind::Manifest => {
            let [_, stage, package] = f.key.as_slice() else { return None };
            (stage_selector(stage)?, format!("package:{package}"))
        }
        ContractKind::Layers | ContractKind::Independence | ContractKind::Forbidden | ContractKind::Protected => {
            let end = &f.witness.last()?.target;
            let to = if g.file(end).is_some() { file_selector(end) } else { format!("package:{end}") };
            (file_selector(&f.path), to)
        }
        // an import's site and name, as they are
        ContractKind::Resolves => return Some((format!("{}:{}", f.path, f.line), f.key.get(2)?.clone())),
        ContractKind::Acyclic | ContractKind::Rule | ContractKind::Ledger | ContractKind::Stream => return None,
    };
    let names = |s: &str| super::select::resolve(g, s, 0).is_ok();
    (names(&from) && names(&to)).then_some((from, to))
}

/// The text of `andon.toml`: a header, each contract with its comment, then `notes`.
fn render(head: &DraftHeader, drafts: &[Drafted], notes: &[String]) -> String {
    let mut out = String::new();
    let stages = if head.stages == 1 { "1 stage".to_string() } else { format!("{} stages", head.stages) };
    let wires = if head.wires == 1 { "1 wire".to_string() } else { format!("{} wires", head.wires) };
    for l in [
        "# The architecture `andon check` holds this repository to.".to_string(),
        format!("# Written by `andon init` on {} from the stream it found ({stages}, {wires};", head.date),
        "# `andon stream` shows it). It holds today, and `andon check` fails (exit 1) on the first".into(),
        "# import that breaks a contract.".into(),
        "#".into(),
        "# Each finding present that day is excused by an exception that says so. When the code no".into(),
        "# longer needs one, `andon check` names it and exits 2: delete that exception (its line).".into(),
        "# Contract kinds, selectors and exceptions: docs/check.md in andon's repository.".into(),
    ] {
        out.push_str(&l);
        out.push('\n');
    }
    for d in drafts {
        out.push('\n');
        render_contract(&mut out, d, &reason(head.date));
    }
    if !notes.is_empty() {
        out.push_str("\n# Notes:\n");
        for n in notes {
            out.push_str(&format!("# - {}\n", crate::text::short(n)));
        }
    }
    out
}

/// A TOML array of strings: on one line when it is short, else one string a line under `indent`.
fn array(items: &[String], indent: &str) -> String {
    let quoted: Vec<String> = items.iter().map(|s| crate::text::toml_string(s)).collect();
    let one = format!("[{}]", quoted.join(", "));
    if one.chars().count() + indent.len() <= 90 {
        return one;
    }
    let lines: Vec<String> = quoted.iter().map(|s| format!("{indent}  {s},\n")).collect();
    format!("[\n{}{indent}]", lines.concat())
}

/// One `[[contract]]` table with the comment above it and one exception per line.
fn render_contract(out: &mut String, d: &Drafted, reason: &str) {
    let q = crate::text::toml_string;
    for l in &d.why {
        out.push_str(&format!("# {}\n", crate::text::short(l)));
    }
    let layered = matches!(d.kind, ContractKind::Layers | ContractKind::Independence);
    if layered {
        out.push_str("# Imports under `if TYPE_CHECKING:` and imports by test code are not run-time\n");
        out.push_str("# dependencies: left out (delete `exclude_kinds` to hold them too).\n");
    }
    out.push_str(&format!("[[contract]]\nname = {}\nkind = {}\n", q(&d.name), q(d.kind.name())));
    if layered {
        out.push_str(&format!("exclude_kinds = {}\n", array(&INIT_EXCLUDED.map(String::from), "")));
    }
    if !d.layers.is_empty() {
        out.push_str("layers = [\n");
        for l in &d.layers {
            match l.as_slice() {
                [one] => out.push_str(&format!("  {},\n", q(one))),
                many => out.push_str(&format!("  {},\n", array(many, "  "))),
            }
        }
        out.push_str("]\n");
    }
    if !d.members.is_empty() {
        out.push_str(&format!("members = {}\n", array(&d.members, "")));
    }
    if !d.exceptions.is_empty() {
        out.push_str("exceptions = [\n");
        for e in &d.exceptions {
            let more = match e.findings.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            out.push_str(&format!("  # {}{more}\n", crate::text::short(&e.findings[0])));
            let (a, b) = if d.kind == ContractKind::Resolves { ("at", "name") } else { ("from", "to") };
            out.push_str(&format!("  {{ {a} = {}, {b} = {}, reason = {} }},\n", q(&e.from), q(&e.to), q(reason)));
        }
        out.push_str("]\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil_utc() {
        assert_eq!(date_of(0), "1970-01-01");
        assert_eq!(date_of(951_782_400), "2000-02-29");
        assert_eq!(date_of(1_700_000_000), "2023-11-14");
        assert_eq!(date_of(4_107_542_399), "2100-02-28");
    }

    #[test]
    fn cycles_lose_their_lightest_dependencies() {
        let back = |cyclic: &[(usize, usize)], w: &dyn Fn(&(usize, usize)) -> usize| {
            let cyclic: BTreeSet<(usize, usize)> = cyclic.iter().copied().collect();
            let place = cycle_order(&cyclic, w, |u| u);
            cyclic.iter().filter(|(a, b)| place[a] < place[b]).copied().collect::<Vec<_>>()
        };
        // a three-cycle needs one exception, whatever the names
        assert_eq!(back(&[(0, 1), (1, 2), (2, 0)], &|_| 1).len(), 1);
        // of two stages on each other, the lighter direction goes
        let w = |p: &(usize, usize)| if *p == (0, 1) { 5 } else { 1 };
        assert_eq!(back(&[(0, 1), (1, 0)], &w), [(1, 0)]);
        let w = |p: &(usize, usize)| if *p == (0, 1) { 1 } else { 5 };
        assert_eq!(back(&[(0, 1), (1, 0)], &w), [(0, 1)]);
    }

    #[test]
    fn file_selectors_name_exactly_the_file() {
        assert_eq!(file_selector("src/a.py"), "path:src/a.py");
        assert_eq!(file_selector("app/[id]/page.tsx"), "path:app/\\[id\\]/page.tsx");
        for p in ["app/[id]/page.tsx", "a/{x,y}*?.ts", "a/b\\[c.py", " a.py"] {
            let sel = file_selector(p);
            let body = sel.strip_prefix("path:").unwrap();
            let glob = globset::GlobBuilder::new(body).literal_separator(true).build().unwrap().compile_matcher();
            assert!(glob.is_match(p), "{sel} matches {p}");
            assert!(!glob.is_match(format!("{p}x")) && !glob.is_match("app/i/page.tsx"), "{sel}");
        }
    }

    #[test]
    fn stage_selectors_refuse_what_a_selector_trims() {
        assert_eq!(stage_selector("@acme/core").as_deref(), Some("stage:@acme/core"));
        assert_eq!(stage_selector("a\"b"), Some("stage:a\"b".into()));
        assert_eq!(stage_selector(" core"), None);
        assert_eq!(stage_selector(""), None);
    }

    #[test]
    fn rendered_strings_read_back() {
        let d = Drafted {
            name: "independent: a\"b, c\\d".into(),
            kind: ContractKind::Independence,
            why: vec!["line\nbreak".into()],
            layers: vec![],
            members: vec!["stage:a\"b".into(), "stage:c\\d\u{202e}".into()],
            exceptions: vec![Excepted { from: "path:x".into(), to: "path:y".into(), findings: vec!["f\nx".into()] }],
        };
        let mut text = String::new();
        render_contract(&mut text, &d, "why");
        assert!(!crate::text::has_hidden(&text.replace('\n', "")), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::with_andon_toml(dir.path(), &text).unwrap();
        let c = &cfg.contracts[0];
        assert_eq!(c.name, d.name);
        assert_eq!(c.members.iter().map(|m| m.text.clone()).collect::<Vec<_>>(), d.members);
        assert_eq!(c.exceptions[0].reason, "why");
    }
}
