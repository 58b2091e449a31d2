//! One offending import, one finding: the findings of every contract whose witnesses pass through
//! one import line are one finding at that import, which lists the contracts and pairs it breaks.
//!
//! A finding's offending import is chosen over the whole report, greedily: the import line (a
//! path and a line; a finding without a witness is its own location) that the most findings
//! pass through, ties to the one the most findings start from, then the first by path and line;
//! every finding through it becomes one finding, and the rest are grouped again. Removing that
//! import clears every finding of its group, so one planted import yields one finding whatever
//! number of contracts, layers, members or cycles it breaks. Blocking, advisory and excused
//! findings are grouped apart: a group is blocking exactly when its members are, its tier is the
//! strongest of theirs, and a finding excused for one contract never hides another that blocks.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::{CheckReport, Finding, judge::listed};

/// An import line: a repo-relative path and a line.
type Site<'f> = (&'f str, u32);

/// The import lines a finding passes through: its location and every hop of its witness.
fn sites(f: &Finding) -> BTreeSet<Site<'_>> {
    std::iter::once((f.path.as_str(), f.line)).chain(f.witness.iter().map(|h| (h.path.as_str(), h.line))).collect()
}

/// Groups `findings` (of one standing: all blocking, all advisory or all excused) by offending
/// import, greedily (see the module's doc): each group's site and its findings' indexes.
fn cover(findings: &[&Finding]) -> Vec<((String, u32), Vec<usize>)> {
    let through: Vec<BTreeSet<Site>> = findings.iter().map(|f| sites(f)).collect();
    // per site: how many findings pass through it and how many start from it, and which
    let mut counts: BTreeMap<Site, (usize, usize)> = BTreeMap::new();
    let mut passing: BTreeMap<Site, Vec<usize>> = BTreeMap::new();
    let starts = |i: usize, site: Site| (site == (findings[i].path.as_str(), findings[i].line)) as usize;
    for (i, s) in through.iter().enumerate() {
        for &site in s {
            let c = counts.entry(site).or_default();
            c.0 += 1;
            c.1 += starts(i, site);
            passing.entry(site).or_default().push(i);
        }
    }
    // the best site first: counts only fall, so an entry whose counts fell is pushed again as they are
    let mut heap: BinaryHeap<((usize, usize), Reverse<Site>)> = counts.iter().map(|(&s, &c)| (c, Reverse(s))).collect();
    let mut done = vec![false; findings.len()];
    let mut out = Vec::new();
    while let Some((c, Reverse(site))) = heap.pop() {
        let now = counts[&site];
        if now != c {
            if now.0 > 0 {
                heap.push((now, Reverse(site)));
            }
            continue;
        }
        let mine: Vec<usize> = passing[&site].iter().copied().filter(|&i| !done[i]).collect();
        for &i in &mine {
            done[i] = true;
            for &s in &through[i] {
                let c = counts.get_mut(&s).expect("counted");
                c.0 -= 1;
                c.1 -= starts(i, s);
            }
        }
        out.push(((site.0.to_string(), site.1), mine));
    }
    out
}

/// Groups the findings of `report` by offending import (see the module's doc) and counts each
/// contract's findings, blocking and excused ones as groups. Call it once, after the findings
/// are marked new or not: a group is new when one of its members is.
pub fn group(report: &mut CheckReport) {
    let findings = std::mem::take(&mut report.findings);
    let order: BTreeMap<&str, usize> = report.contracts.iter().enumerate().map(|(i, c)| (c.name.as_str(), i)).collect();
    let standing = |f: &Finding| match (f.blocking(), f.excused.is_some()) {
        (true, _) => 0,
        (false, false) => 1,
        (false, true) => 2,
    };
    let mut grouped = Vec::new();
    for phase in 0..3 {
        let these: Vec<&Finding> = findings.iter().filter(|f| standing(f) == phase).collect();
        for (site, idx) in cover(&these) {
            let members: Vec<Finding> = idx.iter().map(|&i| these[i].clone()).collect();
            grouped.push(one(site, members, &order));
        }
    }
    grouped.sort_by(|a, b| {
        (&a.path, a.line, &a.contract, &a.fingerprint).cmp(&(&b.path, b.line, &b.contract, &b.fingerprint))
    });
    for c in &mut report.contracts {
        let mine = grouped.iter().filter(|g| g.parts().iter().any(|p| p.contract == c.name));
        let (mut findings, mut blocking, mut excused) = (0, 0, 0);
        for g in mine {
            findings += 1;
            blocking += g.blocking() as usize;
            excused += g.excused.is_some() as usize;
        }
        (c.findings, c.blocking, c.excused) = (findings, blocking, excused);
    }
    report.findings = grouped;
}

/// The finding that stands for `members` at the import `site`: itself when alone; else the
/// strongest member (the lowest tier, one at the site first, the shortest witness, then by
/// contract) with the site as
/// its location and a message that counts the contracts and pairs it breaks.
fn one(site: (String, u32), mut members: Vec<Finding>, order: &BTreeMap<&str, usize>) -> Finding {
    if members.len() == 1 {
        return members.pop().expect("one member");
    }
    let at = |f: &Finding| f.path == site.0 && f.line == site.1;
    members.sort_by_key(|f| {
        (f.tier, !at(f), f.witness.len(), order.get(f.contract.as_str()).copied(), f.path.clone(), f.line)
    });
    let hop = members.iter().flat_map(|f| &f.witness).find(|h| h.path == site.0 && h.line == site.1);
    let mut g = members[0].clone();
    g.col = match hop {
        Some(h) => h.col,
        None if at(&g) => g.col,
        None => 1,
    };
    let what = match hop {
        Some(h) => format!("`{}` imports `{}`", site.0, h.spec),
        None => format!("`{}`:{}", site.0, site.1),
    };
    g.message = format!("{what}, which breaks {}", reach(&members));
    (g.path, g.line) = site;
    if members.iter().any(|f| f.new == Some(true)) {
        g.new = Some(true);
    }
    g.members = members;
    g
}

/// `N contracts over M pairs` (`stage pairs` when every end is a stage).
fn reach(members: &[Finding]) -> String {
    let contracts: BTreeSet<&str> = members.iter().map(|f| f.contract.as_str()).collect();
    let pairs: BTreeSet<(&str, &(String, String))> =
        members.iter().filter_map(|f| f.pair.as_ref().map(|p| (f.contract.as_str(), p))).collect();
    let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    let mut s = n(contracts.len(), "contract");
    if !pairs.is_empty() {
        let stages = pairs.iter().all(|(_, (a, b))| a.starts_with("stage:") && b.starts_with("stage:"));
        s.push_str(&format!(" over {}", n(pairs.len(), if stages { "stage pair" } else { "pair" })));
    }
    s
}

/// What a finding that stands for several breaks, one line per contract in member order: its
/// pairs (`a` -> `b`, cut to the first few and how many more), else its members' messages.
/// Empty for a finding that stands alone.
pub fn breaks(f: &Finding) -> Vec<String> {
    let mut by_contract: Vec<(&str, Vec<&Finding>)> = Vec::new();
    for m in &f.members {
        match by_contract.iter_mut().find(|(c, _)| *c == m.contract) {
            Some((_, v)) => v.push(m),
            None => by_contract.push((m.contract.as_str(), vec![m])),
        }
    }
    by_contract
        .into_iter()
        .map(|(contract, ms)| {
            let tiers: BTreeSet<u8> = ms.iter().map(|m| m.tier).collect();
            let tier = tiers.iter().map(|t| t.to_string()).collect::<Vec<_>>().join("/");
            let mut said: Vec<String> = Vec::new();
            for m in &ms {
                let s = match &m.pair {
                    Some((a, b)) => format!("`{a}` -> `{b}`"),
                    None => m.message.clone(),
                };
                if !said.contains(&s) {
                    said.push(s);
                }
            }
            format!("breaks {contract}: {} [tier {tier}]", listed(&said))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Hop;
    use crate::config::ContractKind;

    fn hop(path: &str, line: u32) -> Hop {
        Hop {
            path: path.into(),
            line,
            col: 1,
            spec: format!("m{line}"),
            target: "t".into(),
            confidence: "exact".into(),
            tier: 1,
        }
    }

    fn finding(contract: &str, tier: u8, chain: &[(&str, u32)], pair: Option<(&str, &str)>) -> Finding {
        Finding {
            contract: contract.into(),
            kind: ContractKind::Layers,
            tier,
            path: chain[0].0.into(),
            line: chain[0].1,
            col: 1,
            message: format!("{contract} broken"),
            witness: chain.iter().map(|&(p, l)| hop(p, l)).collect(),
            fingerprint: format!("{contract}{chain:?}{pair:?}"),
            key: Vec::new(),
            excused: None,
            new: None,
            pair: pair.map(|(a, b)| (a.to_string(), b.to_string())),
            members: Vec::new(),
        }
    }

    fn report(findings: Vec<Finding>) -> CheckReport {
        let names: BTreeSet<String> = findings.iter().map(|f| f.contract.clone()).collect();
        CheckReport {
            unjudged: Vec::new(),
            config: "andon.toml".into(),
            contracts: names
                .into_iter()
                .map(|name| crate::check::ContractResult {
                    name,
                    kind: ContractKind::Layers,
                    description: String::new(),
                    line: 1,
                    findings: 0,
                    blocking: 0,
                    excused: 0,
                })
                .collect(),
            findings,
            stale_exceptions: Vec::new(),
            exceptions_used: 0,
            base: None,
            suspected_injections: Vec::new(),
            unanalysed: Vec::new(),
        }
    }

    #[test]
    fn findings_through_one_import_are_one_finding_at_that_import() {
        // the planted import is b.py:5; x.py and y.py reached the target only through it
        let mut r = report(vec![
            finding("layers", 1, &[("b.py", 5)], Some(("stage:b", "stage:t"))),
            finding("independent", 1, &[("x.py", 1), ("b.py", 5)], Some(("stage:x", "stage:t"))),
            finding("independent", 2, &[("y.py", 2), ("c.py", 3), ("b.py", 5)], Some(("stage:y", "stage:t"))),
            finding("acyclic", 1, &[("t.py", 9), ("b.py", 5)], None),
        ]);
        group(&mut r);
        assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
        let g = &r.findings[0];
        assert_eq!((g.path.as_str(), g.line, g.tier), ("b.py", 5, 1));
        assert_eq!(g.contract, "layers", "the strongest member at the import leads");
        assert_eq!(g.members.len(), 4);
        assert!(g.message.contains("breaks 3 contracts over 3 stage pairs"), "{}", g.message);
        let lines = breaks(g);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines.contains(&"breaks independent: `stage:x` -> `stage:t` and `stage:y` -> `stage:t` [tier 1/2]".into()),
            "{lines:?}"
        );
        assert!(r.contracts.iter().all(|c| (c.findings, c.blocking) == (1, 1)));
    }

    #[test]
    fn separate_imports_stay_separate_and_the_tier_is_the_strongest() {
        let mut r = report(vec![
            finding("layers", 2, &[("a.py", 1)], Some(("a", "t"))),
            finding("forbidden", 1, &[("a.py", 1)], Some(("a", "t"))),
            finding("layers", 1, &[("z.py", 7)], Some(("z", "t"))),
        ]);
        group(&mut r);
        assert_eq!(r.findings.len(), 2);
        assert_eq!((r.findings[0].path.as_str(), r.findings[0].tier), ("a.py", 1));
        assert_eq!(r.findings[0].members.len(), 2);
        assert!(r.findings[1].members.is_empty(), "a finding alone stays as it was");
        assert_eq!(r.findings[1].message, "layers broken");
    }

    #[test]
    fn an_excused_finding_never_hides_one_that_blocks() {
        let mut excused = finding("layers", 1, &[("a.py", 1)], Some(("a", "t")));
        excused.excused = Some(crate::check::Excused { line: 3, reason: "legacy".into() });
        let mut r = report(vec![excused, finding("independent", 1, &[("a.py", 1)], Some(("a", "t")))]);
        group(&mut r);
        assert_eq!(r.findings.len(), 2);
        assert_eq!(r.blocking(), 1);
        let blocking = r.findings.iter().find(|f| f.blocking()).unwrap();
        assert_eq!(blocking.contract, "independent");
        let layers = r.contracts.iter().find(|c| c.name == "layers").unwrap();
        assert_eq!((layers.findings, layers.blocking, layers.excused), (1, 0, 1));
    }

    #[test]
    fn the_import_most_findings_pass_through_is_the_offending_one() {
        // two importers reach the target through one shared import: fixing it clears both
        let mut r = report(vec![
            finding("independent", 1, &[("x.py", 1), ("h.py", 4)], Some(("x", "t"))),
            finding("independent", 1, &[("y.py", 2), ("h.py", 4)], Some(("y", "t"))),
        ]);
        group(&mut r);
        assert_eq!(r.findings.len(), 1);
        assert_eq!((r.findings[0].path.as_str(), r.findings[0].line), ("h.py", 4));
        assert!(r.findings[0].message.starts_with("`h.py` imports `m4`, which breaks 1 contract over 2 pairs"));
    }

    #[test]
    fn findings_that_all_pass_through_one_import_are_always_one_finding() {
        // a small linear congruential sequence: the same reports every run
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let files = ["a.py", "b.py", "c.py", "d.py", "e.py"];
        for round in 0..200 {
            let n = 1 + next(12) as usize;
            let findings: Vec<Finding> = (0..n)
                .map(|k| {
                    // a chain of random imports with the planted one (p.py:7) somewhere on it
                    let len = 1 + next(4) as usize;
                    let at = next(len as u64) as usize;
                    let chain: Vec<(&str, u32)> = (0..len)
                        .map(|h| if h == at { ("p.py", 7) } else { (files[next(5) as usize], 1 + next(3) as u32) })
                        .collect();
                    let contract = ["layers", "independent", "acyclic"][k % 3];
                    finding(contract, 1 + next(2) as u8, &chain, Some(("x", files[k % 5])))
                })
                .collect();
            let mut r = report(findings.clone());
            group(&mut r);
            assert_eq!(r.blocking(), 1, "round {round}: {findings:#?}");
            let mut again = report(findings);
            group(&mut again);
            assert_eq!(r, again, "round {round}: the same report groups the same way");
        }
    }
}
