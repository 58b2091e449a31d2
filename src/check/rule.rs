//! The `rule` contract: a Datalog rule's findings, evaluated within a budget.

use super::*;

/// A user rule file: every `Violation(...)` it derives (within `budget`) is a tier-2 finding. The
/// first `path` column and the first `int` column after it locate the finding; the other columns
/// make the message.
pub(super) fn rule(idx: &Index, root: &Path, r: &Located, budget: datalog::Budget) -> Result<Vec<Raw>, Error> {
    // The setting names the file as selectors do (a non-UTF-8 byte as `\xNN`); other text is a plain path.
    let file = walk::abs_path(root, &r.text).unwrap_or_else(|| root.join(&r.text));
    let text = read_regular(&file).map_err(|source| Error::RulesFile { file: r.text.clone(), source })?;
    let files = vec![(r.text.clone(), text)];
    let mut b = datalog::builtin_builder();
    b.implicit_heads = true;
    b.add_source(&r.text, &files[0].1, false).map_err(Error::Rules)?;
    let prog = b.finish().map_err(Error::Rules)?;
    let v = prog.relation("Violation").ok_or_else(|| Error::NoViolation { file: r.text.clone() })?;
    let arity = prog.rels[v].columns.len();
    let query: Vec<String> = (0..arity).map(|i| format!("c{i}")).collect();
    let q = datalog::prepare(&format!("Violation({})", query.join(", ")), &files).map_err(Error::Rules)?;
    let (answer, _) = datalog::answer(&q, &datalog::Facts::Loaded(idx), false, &[], budget).map_err(|why| {
        // a rule that ran out of its budget: the cartesian products in it say why, most often
        let products = q.cartesian_products();
        let mut notes: Vec<String> = products.iter().take(3).map(|c| format!("\n  note: {c}")).collect();
        if products.len() > 3 {
            notes.push(format!("\n  note: and {} more atoms like these", products.len() - 3));
        }
        Error::RuleEvaluation { why: why.to_string(), notes: notes.concat() }
    })?;
    let cols: Vec<String> = prog.rels[v].columns.iter().map(|c| c.0.clone()).collect();
    let at = prog.rels[v].span.line.max(1);
    let path_col = answer.types.iter().position(|t| *t == Ty::Path);
    let line_col =
        path_col.and_then(|p| answer.types.iter().skip(p + 1).position(|t| *t == Ty::Int).map(|i| i + p + 1));
    let mut lines_of: BTreeMap<String, Option<usize>> = BTreeMap::new();
    Ok(answer
        .rows
        .into_iter()
        .map(|row| {
            let path = path_col.map(|c| row[c].clone()).unwrap_or_else(|| r.text.clone());
            // the int column locates the row only where it is a line of the file; else it is
            // part of the message and the finding sits at the file's first line
            let lines = lines_of.entry(path.clone()).or_insert_with(|| line_count(root, &path));
            let line_col = line_col.filter(|c| row[*c].parse::<usize>().is_ok_and(|l| is_line(*lines, l)));
            // no path column: the finding sits at the rules file, where `Violation` is declared
            // (or first derived), never at a line of another file
            let line = line_col.and_then(|c| row[c].parse().ok()).unwrap_or(if path_col.is_some() { 1 } else { at });
            let rest: Vec<String> = (0..row.len())
                .filter(|i| Some(*i) != path_col && Some(*i) != line_col)
                .map(|i| if cols[i] == "message" { row[i].clone() } else { format!("{}={}", cols[i], row[i]) })
                .collect();
            let key: Vec<String> =
                (0..row.len()).filter(|i| answer.types[*i] != Ty::Int).map(|i| row[i].clone()).collect();
            Raw {
                tier: 2,
                message: if rest.is_empty() { "Violation".into() } else { rest.join(", ") },
                froms: vec![Selected { node: None, path: Some(path.clone()), stage: None, package: None }],
                at: (path, line),
                chain: Vec::new(),
                key,
                tos: Vec::new(),
                name: None,
                pair: None,
            }
        })
        .collect())
}

/// How many lines the file `path` (repo-relative text) has, `None` when it cannot be read.
fn line_count(root: &Path, path: &str) -> Option<usize> {
    let text = read_regular(&walk::abs_path(root, path)?).ok()?;
    Some(text.lines().count())
}

/// Whether `line` is a line of a file of `lines` lines (any line from 1 when it cannot be read).
fn is_line(lines: Option<usize>, line: usize) -> bool {
    line >= 1 && lines.is_none_or(|n| line <= n.max(1))
}

#[cfg(test)]
mod tests {
    use super::is_line;

    #[test]
    fn a_line_is_within_the_file() {
        assert!(is_line(Some(3), 1) && is_line(Some(3), 3));
        assert!(!is_line(Some(3), 4) && !is_line(Some(3), 0));
        assert!(is_line(Some(0), 1), "an empty file has its first line");
        assert!(is_line(None, 40) && !is_line(None, 0));
    }
}
