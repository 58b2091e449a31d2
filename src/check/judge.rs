//! One contract under judgement: its selectors and exceptions resolved, its findings raised and
//! excused, its result and stale exceptions recorded.

use super::*;

/// One contract under judgement, with everything it is judged on.
pub(super) struct Judge<'a> {
    pub(super) idx: &'a Index,
    pub(super) root: &'a Path,
    pub(super) config_path: &'a Path,
    pub(super) g: &'a DepGraph,
    pub(super) store: &'a datalog::Store,
    pub(super) c: &'a ContractSpec,
    /// The budget of a `rule` contract's evaluation.
    pub(super) budget: datalog::Budget,
}

impl<'a> Judge<'a> {
    /// A configuration error at `line`, naming the contract.
    fn err(&self, line: u32, message: String) -> CheckError {
        config_error(self.config_path, line, format!("contract `{}`: {message}", self.c.name))
    }

    /// Why the contract cannot be judged: a selector of it (not of an exception) names nothing in
    /// the index any more, as when a stage was renamed or its manifest removed. None when every
    /// selector names something (a selector that cannot parse is judged, and is an error).
    pub(super) fn unnamed(&self) -> Option<Unjudged> {
        let c = self.c;
        let all = c.from.iter().chain(&c.to).chain(c.layers.iter().flatten()).chain(&c.members).chain(&c.target);
        for l in all.chain(&c.allowed) {
            if let Err(e @ (super::Error::NamesNothing { .. } | super::Error::GlobMatchesNothing { .. })) =
                select::resolve(self.g, &l.text, l.line)
            {
                return Some(Unjudged {
                    contract: c.name.clone(),
                    line: l.line,
                    message: format!("cannot be judged: {e}; edit the contract (the rest were judged)"),
                });
            }
        }
        None
    }

    /// Resolves one selector of the contract.
    fn sel(&self, l: &Located) -> Result<Selector, CheckError> {
        select::resolve(self.g, &l.text, l.line).map_err(|e| self.err(l.line, e.to_string()))
    }

    /// Resolves a list of selectors of the contract.
    fn sels(&self, ls: &[Located]) -> Result<Vec<Selector>, CheckError> {
        ls.iter().map(|l| self.sel(l)).collect()
    }

    /// Judges the contract: its findings, each excused or not, its result and its stale exceptions
    /// go to `out`.
    pub(super) fn judge(&self, out: &mut JudgedContracts) -> Result<(), CheckError> {
        let mask = self.edge_mask()?;
        // Exceptions: resolved first; each finding takes the first that matches (for `acyclic`, an
        // exception allows one dependency between members); those that match nothing are stale.
        let exceptions = self.exceptions()?;
        let mut hits = vec![0usize; exceptions.len()];
        let (raws, description) = self.raws(mask, &exceptions, &mut hits)?;
        let c = self.c;
        let mut result = ContractResult {
            name: c.name.clone(),
            kind: c.kind,
            description: c.description.clone().unwrap_or(description),
            line: c.line,
            findings: 0,
            blocking: 0,
            excused: 0,
        };
        for f in self.findings(raws, &exceptions, &mut hits) {
            result.findings += 1;
            result.blocking += f.blocking() as usize;
            result.excused += f.excused.is_some() as usize;
            out.findings.push(f);
        }
        self.tally_exceptions(&exceptions, &hits, out);
        out.contracts.push(result);
        Ok(())
    }

    /// The edge kinds `exclude_kinds` leaves out, as a mask; Err when it leaves out every import.
    fn edge_mask(&self) -> Result<u16, CheckError> {
        let c = self.c;
        let mask = c.exclude_kinds.iter().fold(0u16, |m, k| m | graph::kind_bit(&k.text));
        let every_form = graph::kind_bit("static") | graph::kind_bit("dynamic");
        if mask & every_form == every_form {
            let line = c.exclude_kinds.last().map(|l| l.line).unwrap_or(c.line);
            return Err(
                self.err(line, "`exclude_kinds` excludes both static and dynamic imports; it could never fire".into())
            );
        }
        Ok(mask)
    }

    /// The contract's exceptions with their selectors resolved.
    /// A selector that names nothing in the index leaves its exception unresolved: it can excuse
    /// nothing, so it is stale (a glob that does not parse is a configuration error).
    fn exceptions(&self) -> Result<Vec<Exception<'a>>, CheckError> {
        let c: &'a ContractSpec = self.c;
        c.exceptions
            .iter()
            .map(|e| {
                let mut x = Exception { from: None, to: None, unresolved: None, spec: e };
                for (slot, l) in [(&mut x.from, &e.from), (&mut x.to, &e.to)] {
                    let Some(l) = l else { continue };
                    if let Some(m) = select::bad_glob(&l.text) {
                        return Err(self.err(l.line, m));
                    }
                    match select::resolve(self.g, &l.text, l.line) {
                        Ok(sel) => *slot = Some(sel),
                        Err(e) => x.unresolved = Some(e.to_string()),
                    }
                }
                Ok(x)
            })
            .collect()
    }

    /// What refutes the contract, before exceptions, and what the contract says in words.
    fn raws(&self, mask: u16, exceptions: &[Exception], hits: &mut [usize]) -> Result<(Vec<Raw>, String), CheckError> {
        match self.c.kind {
            ContractKind::Forbidden => self.judge_forbidden(mask),
            ContractKind::Layers => self.judge_layers(mask),
            ContractKind::Independence => self.judge_independence(mask),
            ContractKind::Protected => self.judge_protected(mask),
            ContractKind::Acyclic => self.judge_acyclic(mask, exceptions, hits),
            ContractKind::Manifest => self.judge_manifest(),
            ContractKind::Rule => self.judge_rule(),
            ContractKind::Resolves => self.judge_resolves(mask),
            ContractKind::Ledger | ContractKind::Stream => Ok((Vec::new(), String::new())),
        }
    }

    /// `forbidden`: `from` imports nothing of `to` (directly, or also indirectly).
    fn judge_forbidden(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.from.is_empty() || c.to.is_empty() {
            return Err(self.err(c.line, "a forbidden contract needs both `from` and `to`".into()));
        }
        let from = self.sels(&c.from)?;
        let to = self.sels(&c.to)?;
        let f = union(g, &from);
        let t = union(g, &to);
        if let Some(n) = (0..g.len()).find(|&n| f[n] && t[n]) {
            return Err(self.err(
                c.to[0].line,
                format!("`from` and `to` both select `{}`; a file cannot be forbidden from itself", g.name(n as u32)),
            ));
        }
        let desc = format!(
            "{} must not import {}{}",
            labels(&c.from),
            labels(&c.to),
            if c.transitive { ", directly or indirectly" } else { " directly" }
        );
        let ban = Ban { from: &f, to: &t, barrier: &f, from_sels: &from, to_sels: &to, prefix: String::new() };
        Ok((forbid(g, &ban, c.transitive, mask), desc))
    }

    /// `layers`: each layer imports only layers below it.
    fn judge_layers(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.layers.len() < 2 {
            return Err(self.err(c.line, "`layers` needs at least two layers, top first".into()));
        }
        let layers: Vec<Vec<Selector>> = c.layers.iter().map(|l| self.sels(l)).collect::<Result<_, _>>()?;
        let sets: Vec<Vec<bool>> = layers.iter().map(|l| union(g, l)).collect();
        disjoint(g, &sets, |i| labels(&c.layers[i])).map_err(|(i, m)| self.err(c.layers[i][0].line, m))?;
        let all = any_of(g, &sets);
        let mut raws = Vec::new();
        for lower in 1..sets.len() {
            for upper in 0..lower {
                let (lo, up) = (labels(&c.layers[lower]), labels(&c.layers[upper]));
                let ban = Ban {
                    from: &sets[lower],
                    to: &sets[upper],
                    barrier: &all,
                    from_sels: &layers[lower],
                    to_sels: &layers[upper],
                    prefix: format!("layer {lo} is below {up}: "),
                };
                raws.extend(forbid(g, &ban, c.transitive, mask));
            }
        }
        let names: Vec<String> = c.layers.iter().map(|l| labels(l)).collect();
        let order = match names.len() {
            n if n <= LISTED + 1 => names.join(" > "),
            n => format!("{} > … > {} ({n} layers)", names[..LISTED].join(" > "), names[n - 1]),
        };
        Ok((raws, format!("layers, top first: {order}; a layer imports only layers below it")))
    }

    /// `independence`: no member imports another.
    fn judge_independence(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.members.len() < 2 {
            return Err(self.err(c.line, "`members` needs at least two members to be independent".into()));
        }
        let members = self.sels(&c.members)?;
        let (member_of, nodes) = owners(g, &members, |i| format!("`{}`", c.members[i].text))
            .map_err(|(i, m)| self.err(c.members[i].line, m))?;
        let raws = independent(g, &member_of, &nodes, &members, c.transitive, mask);
        Ok((raws, format!("{} import none of each other", labels(&c.members))))
    }

    /// `protected`: only `allowed` files import `target`.
    fn judge_protected(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        if c.target.is_empty() {
            return Err(self.err(c.line, "a protected contract needs a `target`".into()));
        }
        let target = self.sels(&c.target)?;
        let allowed = self.sels(&c.allowed)?;
        let t = union(g, &target);
        let a = union(g, &allowed);
        let who = if c.allowed.is_empty() { "nothing outside it".to_string() } else { labels(&c.allowed) };
        let raws = protect(g, &t, &a, mask, &who, &c.target, &target);
        Ok((raws, format!("only {who} may import {}", labels(&c.target))))
    }

    /// `acyclic`: no dependency cycle among the members (every stage when none are named).
    fn judge_acyclic(
        &self,
        mask: u16,
        exceptions: &[Exception],
        hits: &mut [usize],
    ) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        let members: Vec<Selector> = if c.members.is_empty() {
            g.stage_names().filter_map(|s| select::stage(g, s, c.line)).collect()
        } else {
            if c.members.len() < 2 {
                return Err(self.err(c.line, "`members` needs at least two members to form a cycle".into()));
            }
            self.sels(&c.members)?
        };
        let (member_of, _) = owners(g, &members, |i| format!("`{}`", members[i].text))
            .map_err(|(i, m)| self.err(c.members.get(i).map(|l| l.line).unwrap_or(c.line), m))?;
        let unit_of: Vec<Option<usize>> = member_of.iter().map(|m| m.map(|m| m as usize)).collect();
        let names: Vec<String> =
            members.iter().map(|m| m.text.strip_prefix("stage:").unwrap_or(&m.text).to_string()).collect();
        let desc = if c.members.is_empty() {
            "no dependency cycle among stages".to_string()
        } else {
            format!("no dependency cycle among {}", labels(&c.members))
        };
        Ok((acyclic(g, &unit_of, &names, mask, exceptions, hits), desc))
    }

    /// `manifest`: the stages' manifests declare what their code imports, and nothing else.
    fn judge_manifest(&self) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g, store) = (self.c, self.g, self.store);
        let stages = self.sels(&c.stages)?;
        for (s, l) in stages.iter().zip(&c.stages) {
            if !matches!(s.kind, select::SelKind::Stage(_)) {
                return Err(self.err(l.line, format!("`stages` takes stage names; `{}` is not a stage", l.text)));
            }
        }
        let scope: Option<BTreeSet<String>> =
            (!stages.is_empty()).then(|| c.stages.iter().map(|l| l.text.clone()).collect());
        let checks: BTreeSet<&str> = if c.checks.is_empty() {
            crate::config::MANIFEST_CHECKS.iter().copied().collect()
        } else {
            c.checks.iter().map(|l| l.text.as_str()).collect()
        };
        let with_manifest: Vec<String> = store.rels[rel::HAS_MANIFEST.0 as usize]
            .iter()
            .map(|r| store.syms.str(r[0]).to_string())
            .filter(|s| scope.as_ref().is_none_or(|sc| sc.contains(s)))
            .collect();
        if with_manifest.is_empty() {
            return Err(self.err(
                c.line,
                "no stage in its scope has a manifest that declares dependencies; it could never fire".into(),
            ));
        }
        let raws = manifest(g, store, self.root, scope.as_ref(), &checks);
        let what: Vec<&str> = checks
            .iter()
            .map(|c| match *c {
                "undeclared" => "every imported package is declared",
                _ => "every declared dependency is used",
            })
            .collect();
        let which = if c.stages.is_empty() { "every stage".into() } else { labels(&c.stages) };
        Ok((raws, format!("{} ({})", what.join("; "), which)))
    }

    /// `resolves`: every import of the files `from` selects (every file when empty) names a
    /// module and a name that exist, and its Python calls fit their callees' signatures.
    fn judge_resolves(&self, mask: u16) -> Result<(Vec<Raw>, String), CheckError> {
        let (c, g) = (self.c, self.g);
        let from = self.sels(&c.from)?;
        // by default, the code: support (tests, examples, docs, vendored code) is not judged
        let scope = if from.is_empty() {
            let seg = &self.idx.global;
            let support: HashSet<&str> = seg.rows_of(rel::IN_SUPPORT).map(|r| seg.str(r[0])).collect();
            (0..g.len() as u32).map(|n| !support.contains(g.name(n))).collect()
        } else {
            union(g, &from)
        };
        let raws = resolves(g, self.store, Some(&scope), mask);
        let which = if c.from.is_empty() { "every file of code".to_string() } else { labels(&c.from) };
        Ok((
            raws,
            format!("every import of {which} names a module and a name that exist, and each call fits its callee"),
        ))
    }

    /// `rule`: the user rule file derives no `Violation`.
    fn judge_rule(&self) -> Result<(Vec<Raw>, String), CheckError> {
        let c = self.c;
        let r =
            c.rules.as_ref().ok_or_else(|| self.err(c.line, "a rule contract needs `rules = \"file.dl\"`".into()))?;
        let raws = rule(self.idx, self.root, r, self.budget).map_err(|e| self.err(r.line, e.to_string()))?;
        Ok((raws, format!("no `Violation` derived by {}", r.text)))
    }

    /// Findings from `raws`: each excused by the first exception that matches (counted in `hits`),
    /// with its witness chain and a fingerprint.
    fn findings(&self, raws: Vec<Raw>, exceptions: &[Exception], hits: &mut [usize]) -> Vec<Finding> {
        let c = self.c;
        let mut seen: HashMap<String, usize> = HashMap::new();
        raws.into_iter()
            .map(|raw| {
                let matched = match c.kind {
                    ContractKind::Resolves => excuse_site(exceptions, &raw.at, raw.name.as_deref()),
                    _ => excuse(exceptions, &raw.froms, &raw.tos),
                };
                let excused = matched.map(|i| {
                    hits[i] += 1;
                    Excused { line: exceptions[i].spec.line, reason: exceptions[i].spec.reason.clone() }
                });
                let fingerprint = self.fingerprint(&raw.key, &mut seen);
                let witness = raw.chain.iter().map(|&e| hop(self.g, e)).collect();
                let (key, pair) = (raw.key, raw.pair);
                Finding {
                    contract: c.name.clone(),
                    kind: c.kind,
                    tier: raw.tier,
                    path: raw.at.0,
                    line: raw.at.1,
                    col: 1,
                    message: raw.message,
                    witness,
                    fingerprint,
                    key,
                    excused,
                    new: None,
                    pair,
                    members: Vec::new(),
                }
            })
            .collect()
    }

    /// The fingerprint of a finding with `key`: the contract and the key hashed, numbered when the
    /// contract already has a finding with that key (`seen` counts them).
    fn fingerprint(&self, key: &[String], seen: &mut HashMap<String, usize>) -> String {
        let c = self.c;
        let mut key = format!("{}\0{}\0{}", c.name, c.kind.name(), key.join("\0"));
        let n = seen.entry(key.clone()).or_default();
        *n += 1;
        if *n > 1 {
            key.push_str(&format!("\0#{n}"));
        }
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()))
    }

    /// Counts the exceptions that excused a finding as used; the others go to `out` as stale.
    fn tally_exceptions(&self, exceptions: &[Exception], hits: &[usize], out: &mut JudgedContracts) {
        for (i, x) in exceptions.iter().enumerate() {
            let e = x.spec;
            if hits[i] == 0 {
                out.stale.push(StaleException {
                    contract: self.c.name.clone(),
                    line: e.line,
                    from: e.from.as_ref().map(|l| l.text.clone()),
                    to: e.to.as_ref().map(|l| l.text.clone()),
                    at: e.at.as_ref().map(|l| l.text.clone()),
                    name: e.name.as_ref().map(|l| l.text.clone()),
                    reason: e.reason.clone(),
                    unresolved: x.unresolved.clone(),
                });
            } else {
                out.used += 1;
            }
        }
    }
}

/// A contract exception with its selectors resolved.
pub(super) struct Exception<'c> {
    pub(super) from: Option<Selector>,
    pub(super) to: Option<Selector>,
    /// Why a selector of it names nothing in the index: it excuses nothing.
    pub(super) unresolved: Option<String>,
    pub(super) spec: &'c crate::config::ExceptionSpec,
}

/// The first exception whose `from` matches one of `froms` and whose `to` matches one of `tos`.
pub(super) fn excuse(exceptions: &[Exception], froms: &[Selected], tos: &[Selected]) -> Option<usize> {
    exceptions.iter().position(|x| {
        x.unresolved.is_none()
            && x.from.as_ref().is_none_or(|f| froms.iter().any(|s| f.matches(s)))
            && x.to.as_ref().is_none_or(|t| tos.iter().any(|s| t.matches(s)))
    })
}

/// Evaluates `goals` (with `WireReference` when `references`) with the run-time engine, which runs
/// only the strata the goals need.
pub(super) fn derive(
    prog: &crate::dialect::Program,
    idx: &Index,
    goals: &[crate::facts::RelId],
    references: bool,
) -> Result<datalog::Store, CheckError> {
    let mut goals: Vec<usize> = goals.iter().map(|r| r.0 as usize).collect();
    if references {
        goals.push(rel::WIRE_REFERENCE.0 as usize);
    }
    let need = prog.needed(&goals);
    let mut store = datalog::load(prog, idx, Some(&need)).map_err(|e| CheckError::Other(e.to_string()))?;
    datalog::run_runtime(prog, &mut store, Some(&need));
    Ok(store)
}

/// Nodes in any of `sets`.
pub(super) fn any_of(g: &DepGraph, sets: &[Vec<bool>]) -> Vec<bool> {
    (0..g.len()).map(|n| sets.iter().any(|s| s[n])).collect()
}

pub(super) fn union(g: &DepGraph, sels: &[Selector]) -> Vec<bool> {
    let mut v = vec![false; g.len()];
    for s in sels {
        for (x, y) in v.iter_mut().zip(&s.nodes) {
            *x |= *y;
        }
    }
    v
}

/// How many names a message lists before it says how many more there are.
pub(super) const LISTED: usize = 3;

/// `a`, `b` and `c` as the configuration wrote them; a longer list is cut to its first
/// [`LISTED`] names: `a`, `b`, `c` and 9 more.
pub(super) fn labels(ls: &[Located]) -> String {
    let v: Vec<String> = ls.iter().map(|l| format!("`{}`", l.text)).collect();
    listed(&v)
}

/// `a`, `b` and `c`; a longer list cut to its first [`LISTED`] items and how many more there are.
pub fn listed(v: &[String]) -> String {
    match v.len() {
        0 => "nothing".into(),
        1 => v[0].clone(),
        n if n <= LISTED + 1 => format!("{} and {}", v[..n - 1].join(", "), v[n - 1]),
        n => format!("{} and {} more", v[..LISTED].join(", "), n - LISTED),
    }
}

/// Each node's selector among `sels` (which must be disjoint: Err names the later one and the
/// shared node, as [`disjoint`]) and each selector's nodes, in one pass over the selectors.
pub(super) fn owners(
    g: &DepGraph,
    sels: &[Selector],
    label: impl Fn(usize) -> String,
) -> Result<(Vec<Option<u32>>, Vec<Vec<u32>>), (usize, String)> {
    let mut member_of: Vec<Option<u32>> = vec![None; g.len()];
    let mut nodes: Vec<Vec<u32>> = vec![Vec::new(); sels.len()];
    for (i, s) in sels.iter().enumerate() {
        for &n in s.node_list(g).iter() {
            let n = n as usize;
            if let Some(first) = member_of[n] {
                let shared = g.name(n as u32);
                return Err((
                    i,
                    format!("{} and {} both select `{shared}`; make them disjoint", label(first as usize), label(i)),
                ));
            }
            member_of[n] = Some(i as u32);
            nodes[i].push(n as u32);
        }
    }
    Ok((member_of, nodes))
}

/// Checks that no node is in two sets; Err names the later set and the shared file.
pub(super) fn disjoint(
    g: &DepGraph,
    sets: &[Vec<bool>],
    label: impl Fn(usize) -> String,
) -> Result<(), (usize, String)> {
    for n in 0..g.len() {
        let owners: Vec<usize> = (0..sets.len()).filter(|&i| sets[i][n]).collect();
        if owners.len() > 1 {
            return Err((
                owners[1],
                format!(
                    "{} and {} both select `{}`; make them disjoint",
                    label(owners[0]),
                    label(owners[1]),
                    g.name(n as u32)
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn subject(g: &DepGraph, n: u32) -> Selected {
    let name = g.name(n).to_string();
    if g.is_file(n) {
        Selected { node: Some(n), stage: g.stage_of(n).map(str::to_string), path: Some(name), package: None }
    } else {
        Selected { node: Some(n), package: Some(name), ..Selected::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_list_of_stages_is_cut_to_its_first_three_and_how_many_more() {
        let names = |n: usize| -> Vec<String> { (0..n).map(|i| format!("`s{i}`")).collect() };
        assert_eq!(listed(&names(1)), "`s0`");
        assert_eq!(listed(&names(3)), "`s0`, `s1` and `s2`");
        assert_eq!(listed(&names(4)), "`s0`, `s1`, `s2` and `s3`", "one more is named, not counted");
        assert_eq!(listed(&names(12)), "`s0`, `s1`, `s2` and 9 more");
        let located: Vec<Located> = (0..12).map(|i| Located { text: format!("stage:s{i}"), line: 1 }).collect();
        assert_eq!(labels(&located), "`stage:s0`, `stage:s1`, `stage:s2` and 9 more");
    }
}
