//! Python quirks: `from`/relative imports, `if TYPE_CHECKING:`, `importlib.import_module`,
//! `__all__`, `raise NotImplementedError` and stub bodies.

use tree_sitter::Node;

use super::extractor::{Extractor, line, string_value, unquote};
use crate::facts::rel;

/// Whether a Python file's name makes it a test file (`test_*.py`, `*_test.py`, `conftest.py`).
pub(super) fn is_test_file_name(name: &str) -> bool {
    name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py"
}

/// Records the facts of one query capture in a Python file.
pub(super) fn on_capture<'a>(x: &mut Extractor<'a, '_>, cap: &str, node: Node<'a>, name: Option<Node<'a>>) {
    match cap {
        "import.import" => import_import(x, node),
        "import.from" => import_from(x, node),
        "def.function" | "def.class" => {
            if let Some(n) = name {
                def_function_or_class(x, cap, node, n);
            }
        }
        "def.type" => {
            if let Some(n) = name.and_then(first_identifier) {
                def_type_alias(x, node, n);
            }
        }
        "def.variable" => {
            if let Some(left) = node.child_by_field_name("left") {
                super::pycall::bound(x, left);
            }
            if let Some(reason) = super::pycall::assigns_namespace(x, node) {
                x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
            }
            for n in module_level_names(node) {
                def_variable(x, node, n);
            }
        }
        "params" => super::pycall::bound(x, node),
        "def.for" | "def.with" | "def.walrus" | "def.global" => {
            for t in binding_targets(node) {
                super::pycall::bound(x, t);
            }
            // the name is the definition's span: a loop's or a block's body is no part of it
            for n in other_bindings(node) {
                def_variable(x, n, n);
            }
        }
        "call" => call(x, node),
        "open" => all_changed(x, node),
        "raise" => {
            if raises_not_implemented(x, node) {
                let t = x.text(node);
                x.marker(line(node), "NotImplementedError", t);
            }
        }
        _ => x.common_capture(cap, node),
    }
}

/// A call: a `Calls` fact for `f(…)` and `o.f(…)`, a dynamic import for `__import__(…)` and
/// `….import_module(…)`, an open surface for `__all__.extend(…)` (`append`, `insert`, `__iadd__`).
fn call<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let Some(f) = node.child_by_field_name("function") else { return };
    super::pycall::call_site(x, node, f);
    if let Some(reason) = super::pycall::rebuilds_module(x, node, f) {
        x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
    }
    match f.kind() {
        "identifier" => {
            if matches!(x.text(f), "__import__" | "import_module") {
                import_dynamic(x, node);
            }
            x.call(node, f);
        }
        "attribute" => {
            let Some(attr) = f.child_by_field_name("attribute").filter(|a| a.kind() == "identifier") else { return };
            let method = x.text(attr);
            if method == "import_module" {
                import_dynamic(x, node);
            }
            x.call(node, attr);
            let on_all =
                f.child_by_field_name("object").is_some_and(|o| o.kind() == "identifier" && x.text(o) == "__all__");
            if on_all && matches!(method, "extend" | "append" | "insert" | "__iadd__") {
                all_changed(x, node);
            }
        }
        _ => {}
    }
}

fn has_interpolation(s: Node) -> bool {
    let mut c = s.walk();
    s.named_children(&mut c).any(|n| n.kind() == "interpolation")
}

/// `__all__` changed by a statement: the module's names are computed.
fn all_changed(x: &mut Extractor<'_, '_>, node: Node<'_>) {
    let reason = format!("`__all__` is changed at line {}", line(node));
    x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
}

/// `import a.b, c as d`: one import per module, and the alias it binds.
fn import_import<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    x.import_lines.insert(l);
    let kinds = context_kinds(x, node);
    let mut c = node.walk();
    for n in node.children_by_field_name("name", &mut c) {
        match n.kind() {
            "aliased_import" => {
                let Some(m) = n.child_by_field_name("name") else {
                    continue;
                };
                let spec = x.text(m);
                x.import(l, spec, &kinds);
                // the module itself, bound under its alias: a namespace import, as TypeScript's
                // `import * as m` (never a name the module must bind)
                if let Some(a) = n.child_by_field_name("alias") {
                    let alias = x.text(a);
                    x.imported_name(l, spec, "*", alias);
                }
            }
            _ => {
                let spec = x.text(n);
                x.import(l, spec, &kinds);
            }
        }
    }
}

/// `from m import a, b as c` (or `*`): the import of `m` and each name it binds.
fn import_from<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    x.import_lines.insert(l);
    let Some(m) = node.child_by_field_name("module_name") else {
        return;
    };
    let spec: String = x.text(m).split_whitespace().collect();
    let mut kinds = context_kinds(x, node);
    let mut c = node.walk();
    let wildcard = node.children(&mut c).any(|n| n.kind() == "wildcard_import");
    if wildcard {
        kinds.push("wildcard");
    }
    x.import(l, &spec, &kinds);
    // In a statement the parser could not read, names on a later line that starts a new
    // import belong to that import (recovered separately), not to this one.
    let stray = |n: Node| {
        node.has_error() && line(n) != l && {
            let t = x.src.lines().nth(line(n) as usize - 1).unwrap_or("").trim_start();
            t.starts_with("import ") || t.starts_with("from ")
        }
    };
    let mut c = node.walk();
    for n in node.children_by_field_name("name", &mut c) {
        if stray(n) {
            continue;
        }
        let (nm, alias) = match n.kind() {
            "aliased_import" => {
                let nm = n.child_by_field_name("name").map(|v| x.text(v)).unwrap_or("");
                (nm, n.child_by_field_name("alias").map(|v| x.text(v)).unwrap_or(nm))
            }
            _ => (x.text(n), x.text(n)),
        };
        x.imported_name(l, &spec, nm, alias);
    }
}

/// `importlib.import_module("m")`: a dynamic import of its literal module (else `<dynamic>`).
fn import_dynamic<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let l = line(node);
    let spec = node
        .child_by_field_name("arguments")
        .and_then(|a| a.named_child(0))
        // an f-string's value is computed
        .filter(|a| a.kind() == "string" && !has_interpolation(*a))
        .map(|a| string_value(x.text(a)).to_string())
        .unwrap_or_else(|| "<dynamic>".to_string());
    let mut kinds = context_kinds(x, node);
    kinds.push("dynamic");
    x.import(l, &spec, &kinds);
}

/// A `def` or `class`: its definition, export (public at module level), test and stub facts.
fn def_function_or_class<'a>(x: &mut Extractor<'a, '_>, cap: &str, node: Node<'a>, name: Node<'a>) {
    let nm = x.text(name);
    let scope = enclosing_scope(x, node);
    let in_class = scope.is_some_and(|s| s.kind() == "class_definition");
    let kind = match (cap, in_class) {
        ("def.class", _) => "class",
        (_, true) => "method",
        _ => "function",
    };
    let vis = visibility(nm);
    x.define(node, nm, kind, vis);
    class_facts(x, node, nm, kind, scope);
    signature(x, node, kind, scope);
    if scope.is_none() && nm == "__getattr__" {
        let reason = format!("module-level `__getattr__` at line {}", line(node));
        x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
    }
    if scope.is_none() && vis == "public" {
        x.push(rel::EXPORTS, &[x.path.into(), nm.into()]);
    }
    if kind != "class" && is_test_function(x, scope, nm) {
        x.push(rel::TEST_DEF, &[x.path.into(), nm.into(), line(node).into()]);
    }
    if kind != "class"
        && let Some(stub) = stub_body(x, node)
    {
        x.push(rel::STUB_BODY, &[x.path.into(), nm.into(), line(node).into(), stub.into()]);
    }
}

/// The signature of a module-level function, or of a method of a module-level class.
fn signature<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, kind: &str, scope: Option<Node<'a>>) {
    let top_class = scope.is_some_and(|s| s.kind() == "class_definition" && enclosing_scope(x, s).is_none());
    let method = match kind {
        "function" if scope.is_none() => false,
        "method" if top_class => true,
        _ => return,
    };
    let static_method = x.parent(node).filter(|p| p.kind() == "decorated_definition").is_some_and(|w| {
        let mut c = w.walk();
        w.named_children(&mut c)
            .any(|d| d.kind() == "decorator" && x.text(d).trim_start_matches('@').trim() == "staticmethod")
    });
    super::pycall::signature(x, node, method, static_method);
}

/// A class's bases and metaclass, a method's class, and the decorators of either.
fn class_facts<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: &str, kind: &str, scope: Option<Node<'a>>) {
    let l = line(node);
    if kind == "method"
        && let Some(class) = scope.and_then(|s| s.child_by_field_name("name"))
    {
        let class = x.text(class);
        x.push(rel::MEMBER, &[x.path.into(), class.into(), name.into(), l.into()]);
    }
    if let Some(wrapper) = x.parent(node).filter(|p| p.kind() == "decorated_definition") {
        let mut c = wrapper.walk();
        for d in wrapper.named_children(&mut c).filter(|d| d.kind() == "decorator") {
            let Some(e) = d.named_child(0) else { continue };
            let e = if e.kind() == "call" { e.child_by_field_name("function").unwrap_or(e) } else { e };
            let text: String = x.text(e).split_whitespace().collect();
            x.push(rel::DECORATOR, &[x.path.into(), name.into(), l.into(), text.as_str().into()]);
        }
    }
    let Some(bases) = node.child_by_field_name("superclasses").filter(|_| kind == "class") else {
        return;
    };
    let mut c = bases.walk();
    for b in bases.named_children(&mut c) {
        if b.kind() == "keyword_argument" {
            let key = b.child_by_field_name("name").map(|n| x.text(n));
            if let (Some("metaclass"), Some(v)) = (key, b.child_by_field_name("value")) {
                let meta: String = x.text(v).split_whitespace().collect();
                x.push(rel::METACLASS, &[x.path.into(), l.into(), name.into(), meta.as_str().into()]);
            }
            continue;
        }
        let b = if b.kind() == "subscript" { b.child_by_field_name("value").unwrap_or(b) } else { b };
        if matches!(b.kind(), "identifier" | "attribute") {
            let base: String = x.text(b).split_whitespace().collect();
            super::classes::inherits(x, l, name, &base, "extends", ".");
        }
    }
}

/// The names a statement-level assignment binds at module level: every target of `a = …`,
/// `a, (b, *c) = …`, `[d, e] = …` and of a chain `f = g = …`, where the statement is in the
/// module's own scope (directly, or in any block of a top-level `if`, `try`, `for`, `while`,
/// `with`); none in a function, class or lambda. Python binds every one of them in the module:
/// a name missing here would make an import of it look broken.
fn module_level_names(assignment: Node<'_>) -> Vec<Node<'_>> {
    if assignment.parent().is_none_or(|p| p.kind() != "expression_statement") || !in_module_scope(assignment) {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut link = Some(assignment);
    while let Some(a) = link {
        if let Some(left) = a.child_by_field_name("left") {
            names.extend(targets(left));
        }
        link = a.child_by_field_name("right").filter(|r| r.kind() == "assignment");
    }
    names
}

/// The module-level names a `for` target, a `with … as` target, an assignment expression
/// (`name := …`) or a `global` statement binds; none outside the module's own scope (but a
/// `global` statement's names, which a function binds in the module).
/// What a `for`, `with`, `:=` or `global` binds, at any level (the targets, before
/// [`other_bindings`] keeps the module-level names among them).
fn binding_targets(node: Node<'_>) -> Vec<Node<'_>> {
    match node.kind() {
        "global_statement" => vec![node],
        "for_statement" => node.child_by_field_name("left").into_iter().collect(),
        "named_expression" => node.child_by_field_name("name").into_iter().collect(),
        "with_statement" => {
            let mut out = Vec::new();
            let mut stack = vec![node];
            while let Some(n) = stack.pop() {
                if n.kind() == "as_pattern_target" {
                    out.push(n);
                } else if n.kind() != "block" {
                    stack.extend(n.named_children(&mut n.walk()));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

fn other_bindings(node: Node<'_>) -> Vec<Node<'_>> {
    match node.kind() {
        "global_statement" => identifiers(node),
        _ if !in_module_scope(node) => Vec::new(),
        "for_statement" => node.child_by_field_name("left").map(targets).unwrap_or_default(),
        "named_expression" => node.child_by_field_name("name").map(targets).unwrap_or_default(),
        "with_statement" => {
            let mut out = Vec::new();
            let mut stack = vec![node];
            while let Some(n) = stack.pop() {
                if n.kind() == "as_pattern_target" {
                    out.extend(n.named_children(&mut n.walk()).flat_map(targets));
                } else if n.kind() != "block" {
                    stack.extend(n.named_children(&mut n.walk()));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Is `n` in the module's own scope: inside no function, class or lambda?
fn in_module_scope(n: Node<'_>) -> bool {
    let mut p = n.parent();
    while let Some(x) = p {
        if matches!(x.kind(), "function_definition" | "class_definition" | "lambda") {
            return false;
        }
        p = x.parent();
    }
    true
}

/// The names a target binds: a name, or every name of a tuple or list pattern, nested and
/// starred; none for an attribute or a subscript (they bind no name).
fn targets(n: Node<'_>) -> Vec<Node<'_>> {
    match n.kind() {
        "identifier" => vec![n],
        "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "tuple"
        | "list"
        | "parenthesized_expression"
        | "list_splat_pattern"
        | "list_splat" => n.named_children(&mut n.walk()).flat_map(targets).collect(),
        _ => Vec::new(),
    }
}

/// The identifiers among a node's named children.
fn identifiers(n: Node<'_>) -> Vec<Node<'_>> {
    let mut c = n.walk();
    n.named_children(&mut c).filter(|k| k.kind() == "identifier").collect()
}

/// The first identifier in `n` or below it (the name of `type X[T] = …`).
fn first_identifier(n: Node) -> Option<Node> {
    if n.kind() == "identifier" {
        return Some(n);
    }
    let mut c = n.walk();
    let children: Vec<Node> = n.named_children(&mut c).collect();
    children.into_iter().find_map(first_identifier)
}

/// `type X = …` (PEP 695): a definition of kind `type`, exported when public at module level.
fn def_type_alias<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: Node<'a>) {
    let nm = x.text(name);
    let vis = visibility(nm);
    x.define(node, nm, "type", vis);
    if enclosing_scope(x, node).is_none() && vis == "public" {
        x.push(rel::EXPORTS, &[x.path.into(), nm.into()]);
    }
}

fn def_variable<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: Node<'a>) {
    let nm = x.text(name);
    let vis = visibility(nm);
    x.define(node, nm, "variable", vis);
    if nm == "__getattr__" {
        // `__getattr__ = make_getattr(…)`, lazy_loader's `__getattr__, __dir__, _ = lazy.attach(…)`
        let reason = format!("module-level `__getattr__` at line {}", line(node));
        x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
    }
    if nm == "__all__" {
        computed_all(x, node);
        if let Some(list) = node.child_by_field_name("right") {
            let mut c = list.walk();
            for item in list.named_children(&mut c) {
                if item.kind() == "string" {
                    let s = unquote(x.text(item));
                    x.push(rel::EXPORTS, &[x.path.into(), s.into()]);
                }
            }
        }
    } else if vis == "public" {
        x.push(rel::EXPORTS, &[x.path.into(), nm.into()]);
    }
}

/// `private` for a `_name` (not a `__dunder__`), else `public`.
fn visibility(name: &str) -> &'static str {
    if name.starts_with('_') && !(name.starts_with("__") && name.ends_with("__")) { "private" } else { "public" }
}

/// The nearest enclosing function or class, if any.
fn enclosing_scope<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Option<Node<'a>> {
    x.ancestors(node).into_iter().find(|a| matches!(a.kind(), "function_definition" | "class_definition" | "lambda"))
}

fn raises_not_implemented(x: &Extractor, node: Node) -> bool {
    let Some(e) = node.named_child(0) else {
        return false;
    };
    let callee = if e.kind() == "call" { e.child_by_field_name("function") } else { Some(e) };
    callee.is_some_and(|c| x.text(c) == "NotImplementedError" || x.text(c).ends_with(".NotImplementedError"))
}

fn is_test_function(x: &Extractor, scope: Option<Node>, name: &str) -> bool {
    if !name.starts_with("test") {
        return false;
    }
    if x.test_file {
        return true;
    }
    // unittest: a `test*` method of a class that derives from something named *TestCase
    scope.is_some_and(|c| {
        c.kind() == "class_definition"
            && c.child_by_field_name("superclasses").is_some_and(|s| x.text(s).contains("TestCase"))
    })
}

/// `type_checking` under `if TYPE_CHECKING:`, `test` in test files.
fn context_kinds<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    let mut child = node;
    for a in x.ancestors(node) {
        if a.kind() == "if_statement"
            && a.child_by_field_name("consequence").is_some_and(|c| c.id() == child.id())
            && a.child_by_field_name("condition").is_some_and(|c| {
                let t = x.text(c);
                t == "TYPE_CHECKING" || t.ends_with(".TYPE_CHECKING")
            })
        {
            kinds.push("type_checking");
            break;
        }
        // `try: import fast … except ImportError: …`: the import may fail, and the code says so
        if a.kind() == "try_statement"
            && a.child_by_field_name("body").is_some_and(|b| b.id() == child.id())
            && !kinds.contains(&"optional")
            && catches_import_error(x, a)
        {
            kinds.push("optional");
        }
        // `… except ImportError: import fallback`: the fallback is taken where the first import
        // fails (a Python-2 module, a slower implementation), unless it imports the same package
        if a.kind() == "except_clause"
            && !kinds.contains(&"optional")
            && clause_catches_import_error(x, a)
            && let Some(t) = a.parent().filter(|t| t.kind() == "try_statement")
            && is_fallback(x, node, t)
        {
            kinds.push("optional");
        }
        child = a;
    }
    kinds
}

/// Whether a `try` statement has an `except` clause for `ImportError` or `ModuleNotFoundError`.
fn catches_import_error(x: &Extractor, try_stmt: Node) -> bool {
    let mut c = try_stmt.walk();
    let clauses: Vec<Node> = try_stmt.named_children(&mut c).filter(|n| n.kind() == "except_clause").collect();
    clauses.iter().any(|cl| clause_catches_import_error(x, *cl))
}

/// Whether an `except` clause catches `ImportError` or `ModuleNotFoundError`.
fn clause_catches_import_error(x: &Extractor, clause: Node) -> bool {
    let head = x.text(clause).split(':').next().unwrap_or("");
    head.contains("ImportError") || head.contains("ModuleNotFoundError")
}

/// Whether the import `node` in an `except` clause of `try_stmt` falls back to another package than
/// the ones the `try` body imports (`urllib.parse` → `urlparse`, `json` → `simplejson`).
fn is_fallback<'a>(x: &Extractor<'a, '_>, node: Node<'a>, try_stmt: Node<'a>) -> bool {
    let Some(body) = try_stmt.child_by_field_name("body") else { return false };
    let mut c = body.walk();
    let tried: Vec<&str> = body.named_children(&mut c).flat_map(|s| import_tops(x, s)).collect();
    let mine = import_tops(x, node);
    !mine.is_empty() && mine.iter().all(|t| !tried.contains(t))
}

/// The top-level packages an `import`/`from … import` statement names (none for a relative one).
fn import_tops<'a>(x: &Extractor<'a, '_>, stmt: Node<'a>) -> Vec<&'a str> {
    let top = |n: Node<'a>| x.text(n).split('.').next().unwrap_or("").trim();
    match stmt.kind() {
        "import_from_statement" => stmt
            .child_by_field_name("module_name")
            .filter(|m| m.kind() != "relative_import")
            .map(top)
            .into_iter()
            .collect(),
        "import_statement" => {
            let mut c = stmt.walk();
            stmt.children_by_field_name("name", &mut c)
                .map(|n| if n.kind() == "aliased_import" { n.child_by_field_name("name").unwrap_or(n) } else { n })
                .map(top)
                .collect()
        }
        _ => Vec::new(),
    }
}

/// A body of only `pass`, `...` or `raise NotImplementedError` (a docstring may precede it).
fn stub_body(x: &Extractor, node: Node) -> Option<&'static str> {
    let body = node.child_by_field_name("body")?;
    let mut c = body.walk();
    let mut stmts: Vec<Node> = body.named_children(&mut c).filter(|n| n.kind() != "comment").collect();
    if stmts.len() == 2
        && stmts[0].kind() == "expression_statement"
        && stmts[0].named_child(0).is_some_and(|s| s.kind() == "string")
    {
        stmts.remove(0);
    }
    if stmts.len() != 1 {
        return None;
    }
    let s = stmts[0];
    match s.kind() {
        "pass_statement" => Some("pass"),
        "expression_statement" if s.named_child(0).is_some_and(|e| e.kind() == "ellipsis") => Some("ellipsis"),
        "raise_statement" if raises_not_implemented(x, s) => Some("not-implemented"),
        _ => None,
    }
}

/// Recovers `import`/`from … import` lines inside regions the parser could not read.
pub(super) fn recover_imports(x: &mut Extractor, broken: &[(u32, u32)]) {
    let src = x.src;
    for (i, raw) in src.lines().enumerate() {
        let l = i as u32 + 1;
        if x.import_lines.contains(&l) || !broken.iter().any(|(a, b)| *a <= l && l <= *b) {
            continue;
        }
        let t = raw.trim_start();
        let spec = if let Some(rest) = t.strip_prefix("from ") {
            let (m, names) = match rest.split_once(" import ") {
                Some(v) => v,
                None => continue,
            };
            let _ = names;
            m.trim().to_string()
        } else if let Some(rest) = t.strip_prefix("import ") {
            rest.split([',', ' ', '#']).next().unwrap_or("").trim().to_string()
        } else {
            continue;
        };
        if spec.is_empty() || !spec.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        x.import(l, &spec, &[]);
        x.push(rel::IMPORT_RECOVERED, &[x.path.into(), l.into(), spec.as_str().into()]);
    }
}

/// `__all__ = <anything but a list or tuple of strings>` (`a.__all__ + b.__all__`, a
/// comprehension): the module's names are computed, so its surface is open.
fn computed_all<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let Some(right) = node.child_by_field_name("right") else { return };
    let literal = matches!(right.kind(), "list" | "tuple")
        && right.named_children(&mut right.walk()).all(|i| matches!(i.kind(), "string" | "comment"));
    if !literal {
        let reason = format!("`__all__` is computed at line {}", line(node));
        x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
    }
}

#[cfg(test)]
mod tests {
    use tree_sitter::{Parser, Query, QueryCursor, StreamingIterator};

    /// The patterns `module_level_names` replaced, as the query once wrote them: it finds all
    /// they found, and more.
    const NESTED_PATTERNS: &str = r#"
(module (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name) (tuple_pattern (identifier) @name)])))
(module (if_statement consequence: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)])))))
(module (if_statement alternative: (else_clause body: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]))))))
(module (try_statement body: (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)])))))
(module (try_statement (except_clause (block (expression_statement (assignment left: [(identifier) @name (pattern_list (identifier) @name)]))))))
"#;

    const SOURCE: &str = r#"
a = 1
b, c = 1, 2
(d, e) = 3, 4
[f, g] = 5, 6
h = i = 7
j: int = 8
k += 1
obj.attr = 9
xs[0] = 10
if X:
    l = 1
    m, n = 2, 3
    (o, p) = 4, 5
    if Y:
        q = 1
elif Z:
    r = 1
else:
    s = 1
    t, u = 1, 2
try:
    v = 1
except ImportError:
    w = 1
except (KeyError, ValueError) as err:
    w2 = 1
else:
    y = 1
finally:
    z = 1
for it in xs:
    aa = 1
else:
    bb = 1
while False:
    cc = 1
with ctx() as dd:
    ee = 1
def f():
    ff = 1
    if X:
        gg = 1
class C:
    hh = 1
    try:
        ii = 1
    except E:
        jj = 1
if A:
    pass
else:
    try:
        kk = 1
    except E:
        ll = 1
async def g():
    mm = 1
x = (lambda: 1)
print(nn := 1)
"#;

    type Bound = for<'t> fn(tree_sitter::Node<'t>) -> Vec<tree_sitter::Node<'t>>;

    /// The names `bound` finds in the captures of `query` on `src` (`None`: the captures).
    fn names(src: &str, query: &str, bound: Option<Bound>) -> Vec<(usize, String)> {
        let lang: tree_sitter::Language = tree_sitter_python::LANGUAGE.into();
        let mut p = Parser::new();
        p.set_language(&lang).unwrap();
        let tree = p.parse(src, None).unwrap();
        let q = Query::new(&lang, query).unwrap();
        let mut cursor = QueryCursor::new();
        let mut out = Vec::new();
        let mut m = cursor.matches(&q, tree.root_node(), src.as_bytes());
        while let Some(m) = m.next() {
            for c in m.captures() {
                let nodes = bound.map_or_else(|| vec![c.node], |f| f(c.node));
                out.extend(nodes.iter().map(|n| (n.start_byte(), n.utf8_text(src.as_bytes()).unwrap().to_string())));
            }
        }
        out.sort();
        out.dedup();
        out
    }

    fn joined(found: &[(usize, String)]) -> String {
        found.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn module_level_names_are_every_name_a_module_scope_assignment_binds() {
        let new = "(expression_statement (assignment) @a)";
        let found = names(SOURCE, new, Some(super::module_level_names));
        // chains, list and nested patterns, and the blocks of every top-level statement
        let expected = "a b c d e f g h i j l m n o p q r s t u v w w2 y z aa bb cc ee kk ll x";
        assert_eq!(joined(&found), expected, "the cases this test covers");
        let nested = "(a, (b, *c)), [d] = f()\n";
        assert_eq!(joined(&names(nested, new, Some(super::module_level_names))), "a b c d");
        // every name the once-nested patterns matched, in every Python file of the fixtures
        let mut files = 0;
        for e in walk(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))) {
            let Ok(src) = std::fs::read_to_string(&e) else { continue };
            let now = names(&src, new, Some(super::module_level_names));
            let missing: Vec<_> = names(&src, NESTED_PATTERNS, None).into_iter().filter(|n| !now.contains(n)).collect();
            assert!(missing.is_empty(), "{}: {missing:?}", e.display());
            files += 1;
        }
        assert!(files > 20, "{files} fixture files");
    }

    #[test]
    fn a_for_a_with_a_walrus_and_a_global_bind_module_names() {
        let q = "(for_statement) @a (with_statement) @a (named_expression) @a (global_statement) @a";
        assert_eq!(joined(&names(SOURCE, q, Some(super::other_bindings))), "it dd nn");
        let src = "def f():\n    global G, H\n    G = 1\n    for i in x:\n        pass\n    if (w := 1):\n        pass\nfor (k, v) in d.items():\n    pass\nwith a() as (p, q), b() as r:\n    pass\n";
        assert_eq!(joined(&names(src, q, Some(super::other_bindings))), "G H k v p q r");
    }

    fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else if p.extension().is_some_and(|x| x == "py") {
                out.push(p);
            }
        }
        out
    }
}
