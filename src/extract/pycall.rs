//! Python signatures and call shapes: what a function takes (`Signature`, `Param`) and what a
//! call passes (`CallSite`, `CallKeyword`), for the arity check across files (`rules/calls.dl`).

use tree_sitter::Node;

use super::extractor::{Extractor, line};
use crate::facts::rel;

/// One parameter as the signature reads it.
struct Param<'a> {
    name: &'a str,
    kind: &'static str,
    required: bool,
}

/// `Signature` and `Param` facts of the function `node`. A method's first parameter (`self`,
/// `cls`) is bound by the call and left out, unless the method is a `staticmethod`. A parameter
/// form the check cannot read (a Python 2 tuple parameter) leaves the function without one.
pub(super) fn signature<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, method: bool, static_method: bool) {
    let Some(list) = node.child_by_field_name("parameters") else { return };
    let mut c = list.walk();
    let nodes: Vec<Node> = list.named_children(&mut c).filter(|n| n.kind() != "comment").collect();
    let mut kind =
        if nodes.iter().any(|n| n.kind() == "positional_separator") { "positional_only" } else { "positional" };
    let mut params: Vec<Param> = Vec::new();
    for n in nodes {
        let (name, required) = match n.kind() {
            "positional_separator" => {
                kind = "positional";
                continue;
            }
            "keyword_separator" => {
                kind = "keyword_only";
                continue;
            }
            "identifier" => (n, true),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                let inner = if n.kind() == "typed_parameter" { n.named_child(0) } else { Some(n) };
                let Some(inner) = inner else { return };
                match inner.kind() {
                    "identifier" => (inner, true),
                    "list_splat_pattern" | "dictionary_splat_pattern" => {
                        let var = if inner.kind() == "list_splat_pattern" { "var_positional" } else { "var_keyword" };
                        let Some(id) = inner.named_child(0) else { return };
                        params.push(Param { name: x.text(id), kind: var, required: false });
                        if var == "var_positional" {
                            kind = "keyword_only";
                        }
                        continue;
                    }
                    _ => return,
                }
            }
            "default_parameter" | "typed_default_parameter" => match n.child_by_field_name("name") {
                Some(id) if id.kind() == "identifier" => (id, false),
                _ => return,
            },
            _ => return,
        };
        params.push(Param { name: x.text(name), kind, required });
    }
    if method && !static_method && !params.is_empty() {
        params.remove(0);
    }
    let l = line(node);
    let positional = params.iter().filter(|p| matches!(p.kind, "positional_only" | "positional")).count() as u32;
    x.push(rel::SIGNATURE, &[x.path.into(), l.into(), positional.into()]);
    for (i, p) in params.iter().enumerate() {
        let required = if p.required { "required" } else { "optional" };
        x.push(
            rel::PARAM,
            &[x.path.into(), l.into(), (i as u32).into(), p.name.into(), p.kind.into(), required.into()],
        );
    }
}

/// `CallSite` and `CallKeyword` facts of a call of a name or of a dotted name (`f(…)`,
/// `m.f(…)`, `a.b.f(…)`); calls of anything else (a subscript, a call's result) are left out.
pub(super) fn call_site<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, function: Node<'a>) {
    let Some((qualifier, name)) = dotted(x, function) else { return };
    let (l, col) = (line(node), node.start_position().column as u32 + 1);
    let Some(args) = node.child_by_field_name("arguments") else { return };
    let (mut positional, mut star, mut double) = (0u32, false, false);
    let mut keywords: Vec<&str> = Vec::new();
    if args.kind() == "generator_expression" {
        positional = 1;
    } else {
        let mut c = args.walk();
        for a in args.named_children(&mut c) {
            match a.kind() {
                "comment" => {}
                "list_splat" => star = true,
                "dictionary_splat" => double = true,
                "keyword_argument" => match a.child_by_field_name("name") {
                    Some(k) => keywords.push(x.text(k)),
                    None => return,
                },
                _ => positional += 1,
            }
        }
    }
    let splat = match (star, double) {
        (false, false) => "none",
        (true, false) => "args",
        (false, true) => "kwargs",
        (true, true) => "both",
    };
    x.push(
        rel::CALL_SITE,
        &[x.path.into(), l.into(), col.into(), qualifier.as_str().into(), name.into(), positional.into(), splat.into()],
    );
    for k in keywords {
        x.push(rel::CALL_KEYWORD, &[x.path.into(), l.into(), col.into(), k.into()]);
    }
}

/// `f` as ("", "f"), `a.b.f` as ("a.b", "f"); None for any other callee.
fn dotted<'a>(x: &Extractor<'a, '_>, mut n: Node<'a>) -> Option<(String, &'a str)> {
    let name = match n.kind() {
        "identifier" => return Some((String::new(), x.text(n))),
        "attribute" => {
            let a = n.child_by_field_name("attribute").filter(|a| a.kind() == "identifier")?;
            n = n.child_by_field_name("object")?;
            x.text(a)
        }
        _ => return None,
    };
    let mut parts: Vec<&str> = Vec::new();
    loop {
        match n.kind() {
            "identifier" => {
                parts.push(x.text(n));
                break;
            }
            "attribute" => {
                parts.push(x.text(n.child_by_field_name("attribute").filter(|a| a.kind() == "identifier")?));
                n = n.child_by_field_name("object")?;
            }
            _ => return None,
        }
        if parts.len() > 16 {
            return None;
        }
    }
    parts.reverse();
    Some((parts.join("."), name))
}

/// `BoundLocally` for every identifier at or below `target`, a binding other than an import (a
/// parameter, an assignment, `for`, `with … as`, `:=` or `global` target), once per name: a call
/// of an imported name the file also binds so is not judged (`rules/calls.dl`).
pub(super) fn bound<'a>(x: &mut Extractor<'a, '_>, target: Node<'a>) {
    let mut names = Vec::new();
    each_node(target, |m| {
        if m.kind() == "identifier" {
            names.push(x.text(m));
        }
    });
    for n in names {
        if x.bound.insert(n) {
            x.push(rel::BOUND_LOCALLY, &[x.path.into(), n.into()]);
        }
    }
}

/// Calls `visit` on `n` and every node below it (a walk with a stack: no recursion per level).
fn each_node<'a>(n: Node<'a>, mut visit: impl FnMut(Node<'a>)) {
    let mut c = n.walk();
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        visit(m);
        c.reset(m);
        if c.goto_first_child() {
            loop {
                stack.push(c.node());
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
    }
}

/// A module-level call that rebuilds the module's namespace: `globals().update(…)`, or a call
/// named for modules or laziness that is handed `__name__` (`recreate_module(__name__, …)`,
/// `lazy.attach(__name__, …)`). The module's names are then computed: the reason, if so.
pub(super) fn rebuilds_module<'a>(x: &Extractor<'a, '_>, node: Node<'a>, function: Node<'a>) -> Option<String> {
    let text = x.text(function);
    let last = text.rsplit('.').next().unwrap_or(text).trim();
    // most calls are none of these: decided on the name alone, before anything is allocated
    let maybe = matches!(last, "update" | "exec" | "setattr" | "attach")
        || last.len() >= 4 && last.as_bytes().windows(4).any(|w| w.eq_ignore_ascii_case(b"lazy"))
        || last.len() >= 6 && last.as_bytes().windows(6).any(|w| w.eq_ignore_ascii_case(b"module"));
    if !maybe {
        return None;
    }
    let compact = text.replace(char::is_whitespace, "");
    let globals = compact == "globals().update" || compact == "exec";
    let first_arg =
        node.child_by_field_name("arguments").and_then(|a| a.named_child(0)).map(|a| x.text(a)).unwrap_or("");
    let sets_module = compact == "setattr" && (first_arg.contains("sys.modules") || first_arg.contains("globals()"));
    let named = last.to_ascii_lowercase().contains("module") || last.contains("lazy") || last == "attach";
    let given_name = || {
        let Some(args) = node.child_by_field_name("arguments") else { return false };
        let mut c = args.walk();
        args.named_children(&mut c).any(|a| a.kind() == "identifier" && x.text(a) == "__name__")
    };
    let top =
        !x.ancestors(node).iter().any(|a| matches!(a.kind(), "function_definition" | "class_definition" | "lambda"));
    (top && (globals || sets_module || named && given_name()))
        .then(|| format!("`{}` rebuilds the module's names at line {}", crate::text::short(text), line(node)))
}

/// A module-level assignment through the module's namespace (`globals()[name] = …`, `vars()[…]`,
/// `locals()[…]`): the module's names are computed. The reason, if so.
pub(super) fn assigns_namespace<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Option<String> {
    let left = node.child_by_field_name("left").filter(|l| l.kind() == "subscript")?;
    let value: String = x.text(left.child_by_field_name("value")?).split_whitespace().collect();
    matches!(value.as_str(), "globals()" | "vars()" | "locals()")
        .then(|| format!("`{value}[…]` is assigned at line {}", line(node)))
}
