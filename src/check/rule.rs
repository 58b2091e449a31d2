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
    let path_col = answer.types.iter().position(|t| *t == Ty::Path);
    let line_col =
        path_col.and_then(|p| answer.types.iter().skip(p + 1).position(|t| *t == Ty::Int).map(|i| i + p + 1));
    Ok(answer
        .rows
        .into_iter()
        .map(|row| {
            let path = path_col.map(|c| row[c].clone()).unwrap_or_else(|| r.text.clone());
            let line =
                line_col.and_then(|c| row[c].parse().ok()).unwrap_or(if path_col.is_some() { 1 } else { r.line });
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
