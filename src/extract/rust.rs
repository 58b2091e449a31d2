//! Rust quirks: use-tree flattening, `#[cfg(test)]` context, visibility, out-of-line `mod`s.

use tree_sitter::Node;

use super::extractor::{Extractor, line};
use crate::facts::rel;

/// Whether a Rust file's name makes it a test file (`*_test.rs`, `tests.rs`).
pub(super) fn is_test_file_name(name: &str) -> bool {
    name.ends_with("_test.rs") || name == "tests.rs"
}

/// Records the facts of one query capture in a Rust file.
pub(super) fn on_capture<'a>(x: &mut Extractor<'a, '_>, cap: &str, node: Node<'a>, name: Option<Node<'a>>) {
    match cap {
        "import.use" => use_decl(x, node),
        "import.qualified" => qualified(x, node),
        "import.macro_tokens" => macro_paths(x, node),
        "import.extern_crate" => {
            if let Some(n) = name {
                let crate_name = x.text(n);
                let l = line(node);
                let kinds = context_kinds(x, node);
                x.import(l, crate_name, &kinds);
                x.import_lines.insert(l);
                // `extern crate x [as y];` binds `y` (else `x`) to the crate itself; `pub` puts
                // that name on the module's surface
                let alias = node.child_by_field_name("alias").map(|a| x.text(a)).unwrap_or(crate_name);
                x.imported_name(l, crate_name, "*", alias);
                let vis = visibility(x, node);
                x.define(node, alias, "extern_crate", &vis);
                if vis.starts_with("pub") && is_top_level(x, node) {
                    x.push(rel::EXPORTS, &[x.path.into(), alias.into()]);
                }
            }
        }
        "mod" => {
            let Some(n) = name else { return };
            let modname = x.text(n);
            let vis = visibility(x, node);
            let l = line(node);
            x.define(node, modname, "module", &vis);
            if is_top_level(x, node) && vis.starts_with("pub") {
                x.push(rel::EXPORTS, &[x.path.into(), modname.into()]);
            }
            if node.child_by_field_name("body").is_none() {
                if !context_kinds(x, node).is_empty() || attributes(x, node).iter().any(|a| is_cfg_test(a)) {
                    x.push(rel::CFG_TEST, &[x.path.into(), l.into()]);
                }
                let within = inline_mods(x, node);
                x.push(rel::MOD_DECL, &[x.path.into(), l.into(), modname.into(), within.as_str().into()]);
                if attributes(x, node).iter().any(|a| has_path_attribute(a)) {
                    x.push(rel::MOD_PATH_ATTR, &[x.path.into(), l.into()]);
                }
            }
        }
        c if c.starts_with("def.") => {
            let Some(n) = name else { return };
            let mut kind = &c[4..];
            let in_impl =
                x.ancestors(node).into_iter().take(2).any(|a| a.kind() == "impl_item" || a.kind() == "trait_item");
            if kind == "function" && in_impl {
                kind = "method";
            }
            let nm = x.text(n);
            let vis = visibility(x, node);
            x.define(node, nm, kind, &vis);
            crate_root_macro(x, node, nm);
            generating_attributes(x, node);
            if is_top_level(x, node) && vis.starts_with("pub") {
                x.push(rel::EXPORTS, &[x.path.into(), nm.into()]);
            }
            if kind == "method" {
                member(x, node, nm);
            }
            if kind == "function" || kind == "method" {
                if has_test_attribute(x, node) {
                    x.push(rel::TEST_DEF, &[x.path.into(), nm.into(), line(node).into()]);
                }
                if let Some(stub) = stub_body(x, node) {
                    x.push(rel::STUB_BODY, &[x.path.into(), nm.into(), line(node).into(), stub.into()]);
                }
            }
        }
        "impl" => impl_trait(x, node),
        "call" => {
            if let Some(n) = name {
                x.call(node, n);
            }
        }
        "call.macro" => {
            if let Some(n) = name {
                let m = x.text(n);
                x.call(node, n);
                if m == "todo" || m == "unimplemented" {
                    let kind = if m == "todo" { "todo!" } else { "unimplemented!" };
                    let t = x.text(node);
                    x.marker(line(node), kind, t);
                }
                item_macro(x, node, m);
            }
        }
        _ => x.common_capture(cap, node),
    }
}

/// The name of a type as an `impl` block names it: `Foo` for `Foo`, `Foo<T>`, `&Foo` or `a::Foo`.
fn type_name<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Option<&'a str> {
    let mut at = node;
    loop {
        at = match at.kind() {
            "type_identifier" | "identifier" => return Some(x.text(at)),
            "generic_type" | "reference_type" => at.child_by_field_name("type")?,
            "scoped_type_identifier" | "scoped_identifier" => at.child_by_field_name("name")?,
            _ => return None,
        };
    }
}

/// `impl Trait for Type`: the type inherits the trait (kind `impl`).
fn impl_trait<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let (Some(t), Some(ty)) = (node.child_by_field_name("trait"), node.child_by_field_name("type")) else {
        return;
    };
    let Some(class) = type_name(x, ty) else { return };
    let t = if t.kind() == "generic_type" { t.child_by_field_name("type").unwrap_or(t) } else { t };
    let base: String = x.text(t).split_whitespace().collect();
    super::classes::inherits(x, line(node), class, &base, "impl", "::");
}

/// A function of an `impl` block or a trait: a member of the type or the trait.
fn member<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: &str) {
    let owner = x.ancestors(node).into_iter().take(2).find(|a| matches!(a.kind(), "impl_item" | "trait_item"));
    let class = match owner {
        Some(o) if o.kind() == "trait_item" => o.child_by_field_name("name").map(|n| x.text(n)),
        Some(o) => o.child_by_field_name("type").and_then(|t| type_name(x, t)),
        None => None,
    };
    if let Some(class) = class {
        x.push(rel::MEMBER, &[x.path.into(), class.into(), name.into(), line(node).into()]);
    }
}

/// A path into this crate's own modules used without a `use` (`crate::a::f()`, `super::T`): an
/// import of edge kind `qualified`, so module boundaries cannot be crossed unseen.
fn qualified<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    if x.parent(node).is_some_and(|p| p.kind().starts_with("scoped_")) {
        return; // only the outermost path
    }
    if x.ancestors(node)
        .into_iter()
        .any(|a| matches!(a.kind(), "use_declaration" | "visibility_modifier" | "attribute_item"))
    {
        return;
    }
    let mut segs = Vec::new();
    segments(x, node, &mut segs);
    if !matches!(segs.first().map(String::as_str), Some("crate" | "self" | "super")) || segs.len() < 2 {
        return;
    }
    qualified_import(x, node, line(node), &segs);
}

/// Records the path `segs`, used at line `l` inside `node`, as an import of edge kind `qualified`.
fn qualified_import<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, l: u32, segs: &[String]) {
    let within = inline_mods(x, node);
    if !within.is_empty() {
        x.push(rel::IMPORT_WITHIN, &[x.path.into(), l.into(), within.as_str().into()]);
    }
    let mut kinds = context_kinds(x, node);
    kinds.push("qualified");
    x.import(l, &segs.join("::"), &kinds);
}

/// The paths into this crate's own modules inside a macro's token tree (`format!("{}",
/// crate::text::line(s))`, `vec![super::T::new()]`): tree-sitter keeps a token tree as flat tokens,
/// so each `crate`/`self`/`super` token followed by `::name` segments is read as one qualified
/// import, as [`qualified`] reads a path outside a macro.
fn macro_paths<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    // a quasi-quote's tokens are code it writes for another crate, never paths of this one
    let invoked = x.parent(node).and_then(|m| m.child_by_field_name("macro")).map(|m| x.text(m)).unwrap_or("");
    let name = invoked.rsplit("::").next().unwrap_or(invoked);
    if matches!(name, "quote" | "quote_spanned" | "parse_quote" | "parse_quote_spanned") {
        return;
    }
    let mut tokens = Vec::new();
    leaves(node, &mut tokens);
    let mut i = 0;
    while i < tokens.len() {
        let start = tokens[i];
        let after_path = i > 0 && matches!(tokens[i - 1].kind(), "::" | "$");
        if after_path || !matches!(start.kind(), "crate" | "self" | "super") {
            i += 1;
            continue;
        }
        let mut segs = vec![x.text(start).to_string()];
        let mut j = i + 1;
        while j + 1 < tokens.len()
            && tokens[j].kind() == "::"
            && matches!(tokens[j + 1].kind(), "identifier" | "super" | "self")
        {
            segs.push(x.text(tokens[j + 1]).to_string());
            j += 2;
        }
        if segs.len() >= 2 {
            qualified_import(x, node, line(start), &segs);
        }
        i = j.max(i + 1);
    }
}

/// The leaf tokens under `node`, in source order (a walk with a cursor: token trees nest as deep as
/// the source's brackets).
fn leaves<'a>(node: Node<'a>, out: &mut Vec<Node<'a>>) {
    let mut c = node.walk();
    loop {
        if c.goto_first_child() {
            continue;
        }
        out.push(c.node());
        while !c.goto_next_sibling() {
            if !c.goto_parent() {
                return;
            }
        }
    }
}

/// One `use` declaration → one import per leaf of its use tree.
fn use_decl<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    let Some(arg) = node.child_by_field_name("argument") else {
        return;
    };
    let mut leaves = Vec::new();
    flatten(x, arg, &mut leaves);
    let l = line(node);
    x.import_lines.insert(l);
    let within = inline_mods(x, node);
    if !within.is_empty() {
        x.push(rel::IMPORT_WITHIN, &[x.path.into(), l.into(), within.as_str().into()]);
    }
    let vis = visibility(x, node);
    let mut kinds = context_kinds(x, node);
    let reexport = vis.starts_with("pub");
    if reexport {
        kinds.push("re_export");
    }
    for leaf in leaves {
        let spec = leaf.path.join("::");
        let mut k = kinds.clone();
        if leaf.glob {
            k.push("wildcard");
        }
        x.import(l, &spec, &k);
        if !leaf.glob {
            let name = leaf.path.last().map(String::as_str).unwrap_or("");
            let alias = leaf.alias.as_deref().unwrap_or(name);
            x.imported_name(l, &spec, name, alias);
            if reexport && alias != "_" && is_top_level(x, node) {
                x.push(rel::EXPORTS, &[x.path.into(), alias.into()]);
            }
        }
    }
}

struct Leaf {
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
}

/// Appends the segments of the path `node` (`a::b::c`) to `out`, first to last; a path nests once
/// per segment, so it is read in a loop.
fn segments(x: &Extractor, node: Node, out: &mut Vec<String>) {
    let start = out.len();
    let mut at = Some(node);
    while let Some(n) = at {
        if matches!(n.kind(), "scoped_identifier" | "scoped_type_identifier") {
            if let Some(name) = n.child_by_field_name("name") {
                out.push(x.text(name).to_string());
            }
            at = n.child_by_field_name("path");
        } else {
            out.push(x.text(n).to_string());
            at = None;
        }
    }
    out[start..].reverse();
}

/// One step of flattening a use tree: a subtree to visit, or the prefix length to restore once a
/// `a::{…}` list is done.
enum Flatten<'a> {
    Visit(Node<'a>),
    Truncate(usize),
}

/// The leaves of the use tree `node`, each with its full path (use lists nest as deep as the source
/// does, so the walk keeps its own stack).
fn flatten<'a>(x: &Extractor, node: Node<'a>, out: &mut Vec<Leaf>) {
    let mut prefix: Vec<String> = Vec::new();
    let mut todo = vec![Flatten::Visit(node)];
    while let Some(step) = todo.pop() {
        match step {
            Flatten::Truncate(len) => prefix.truncate(len),
            Flatten::Visit(n) => flatten_step(x, n, &mut prefix, &mut todo, out),
        }
    }
}

/// Visits one node of a use tree: a leaf goes to `out`; a list schedules its children.
fn flatten_step<'a>(
    x: &Extractor,
    node: Node<'a>,
    prefix: &mut Vec<String>,
    todo: &mut Vec<Flatten<'a>>,
    out: &mut Vec<Leaf>,
) {
    match node.kind() {
        "use_as_clause" => {
            let mut path = prefix.clone();
            if let Some(p) = node.child_by_field_name("path") {
                segments(x, p, &mut path);
            }
            let alias = node.child_by_field_name("alias").map(|a| x.text(a).to_string());
            out.push(Leaf { path: strip_self(path), alias, glob: false });
        }
        "use_wildcard" => {
            let mut path = prefix.clone();
            let mut c = node.walk();
            for child in node.named_children(&mut c) {
                segments(x, child, &mut path);
            }
            out.push(Leaf { path, alias: None, glob: true });
        }
        "use_list" => {
            let mut c = node.walk();
            let kids: Vec<Node> = node
                .named_children(&mut c)
                .filter(|k| !k.kind().ends_with("comment") && k.kind() != "attribute_item")
                .collect();
            todo.extend(kids.into_iter().rev().map(Flatten::Visit));
        }
        "scoped_use_list" => {
            todo.push(Flatten::Truncate(prefix.len()));
            if let Some(p) = node.child_by_field_name("path") {
                segments(x, p, prefix);
            }
            if let Some(list) = node.child_by_field_name("list") {
                todo.push(Flatten::Visit(list));
            }
        }
        _ => {
            let mut path = prefix.clone();
            segments(x, node, &mut path);
            out.push(Leaf { path: strip_self(path), alias: None, glob: false });
        }
    }
}

/// `a::{self}` names `a` itself.
fn strip_self(mut path: Vec<String>) -> Vec<String> {
    if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    path
}

fn visibility(x: &Extractor, node: Node) -> String {
    let mut c = node.walk();
    for child in node.children(&mut c) {
        if child.kind() == "visibility_modifier" {
            return x.text(child).split_whitespace().collect::<String>();
        }
    }
    "private".to_string()
}

fn is_top_level<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> bool {
    x.parent(node).is_some_and(|p| p.kind() == "source_file")
}

/// Names of the inline `mod x { … }` blocks around a node, outermost first, joined by `::`.
fn inline_mods<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> String {
    let mut names: Vec<&str> = x
        .ancestors(node)
        .into_iter()
        .filter(|a| a.kind() == "mod_item")
        .filter_map(|a| a.child_by_field_name("name"))
        .map(|n| x.text(n))
        .collect();
    names.reverse();
    names.join("::")
}

/// The attribute items written directly before an item.
fn attributes<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut prev = x.prev_sibling(node);
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => out.push(x.text(p)),
            "line_comment" | "block_comment" => {}
            _ => break,
        }
        prev = x.prev_sibling(p);
    }
    out
}

/// Whether an attribute is `#[path = …]` or a `#[cfg_attr(…, path = …)]`.
fn has_path_attribute(attr: &str) -> bool {
    let inner: String = attr.trim_start_matches("#[").trim_end_matches(']').split_whitespace().collect();
    inner.starts_with("path=") || inner.starts_with("cfg_attr(") && inner.contains(",path=")
}

fn has_test_attribute<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> bool {
    attributes(x, node).iter().any(|a| {
        let inner = a.trim_start_matches("#[").trim_end_matches(']').trim();
        inner == "test" || inner.ends_with("::test") || inner.starts_with("test(") || inner.contains("::test(")
    })
}

fn is_cfg_test(attr: &str) -> bool {
    let a: String = attr.split_whitespace().collect();
    a.contains("cfg(test)") || (a.contains("cfg(") && a.contains("test") && !a.contains("not(test"))
}

/// Edge kinds that come from where the node sits: `test` inside `#[cfg(test)]` code or a test file.
fn context_kinds<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    let in_test = x.test_file
        || file_is_cfg_test(x)
        || x.ancestors(node)
            .into_iter()
            .filter(|a| matches!(a.kind(), "mod_item" | "function_item" | "impl_item"))
            .any(|a| {
                attributes(x, a).iter().any(|t| is_cfg_test(t))
                    || (a.kind() == "function_item" && has_test_attribute(x, a))
            });
    if in_test {
        kinds.push("test");
    }
    kinds
}

/// Whether the file starts with `#![cfg(test)]`.
#[allow(clippy::let_and_return)] // the cursor must outlive the iterator
fn file_is_cfg_test(x: &Extractor) -> bool {
    let Some(root) = x.root else {
        return false;
    };
    let mut c = root.walk();
    let found = root
        .children(&mut c)
        .take_while(|n| matches!(n.kind(), "inner_attribute_item" | "line_comment" | "block_comment"))
        .any(|n| n.kind() == "inner_attribute_item" && is_cfg_test(x.text(n)));
    found
}

/// `todo!()` / `unimplemented!()` as the whole body of a function.
fn stub_body(x: &Extractor, node: Node) -> Option<&'static str> {
    let body = node.child_by_field_name("body")?;
    let mut c = body.walk();
    let stmts: Vec<Node> = body.named_children(&mut c).filter(|n| !n.kind().ends_with("comment")).collect();
    if stmts.len() != 1 {
        return None;
    }
    let mut e = stmts[0];
    if e.kind() == "expression_statement" {
        e = e.named_child(0)?;
    }
    if e.kind() != "macro_invocation" {
        return None;
    }
    let m = e.child_by_field_name("macro")?;
    match x.text(m) {
        "todo" => Some("todo"),
        "unimplemented" => Some("unimplemented"),
        _ => None,
    }
}

/// Item-level macros whose expansion defines no Rust item: they leave a module's surface closed.
const INERT_ITEM_MACROS: &[&str] = &["compile_error", "global_asm"];

/// Captures the file's own tree already yields from a macro's token tree, not taken again from its
/// parsed body.
const SEEN_IN_TOKENS: &[&str] = &["ref", "comment", "string", "import.qualified", "import.macro_tokens"];

/// Nested macro bodies read as items, at most.
const MAX_MACRO_DEPTH: u32 = 8;

/// An item-level macro invocation (`cfg_rt! { … }`, `crate_root!();`, `include!(…)`): the module's
/// surface is open (`OpenSurface`), unless the macro is inert; the body of one at the top of the
/// file is read as items written in place.
fn item_macro<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: &str) {
    let Some(scope) = item_scope(x, node) else { return };
    if INERT_ITEM_MACROS.contains(&name) {
        return;
    }
    let reason = if name == "include" {
        "`include!` of text the index does not hold".to_string()
    } else {
        format!("item-level macro `{name}!`") // one row per macro and file, however often it is invoked
    };
    x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
    if name == "include" || scope != "source_file" || x.macro_depth >= MAX_MACRO_DEPTH {
        return;
    }
    let Some(tt) = node.named_children(&mut node.walk()).find(|c| c.kind() == "token_tree") else { return };
    match inside(tt) {
        Some(body) => super::extract_macro_body(x, body, SEEN_IN_TOKENS),
        None => {
            // `m!()`: the expansion of a `macro_rules! m` of this file that takes no input
            for body in argless_rules(x, name) {
                super::extract_macro_body(x, body, SEEN_IN_TOKENS);
            }
        }
    }
}

/// The text between a token tree's delimiters, `None` when it is empty.
fn inside(tt: Node) -> Option<tree_sitter::Range> {
    let n = tt.child_count();
    let (open, close) = (tt.child(0)?, tt.child(n.checked_sub(1)?)?);
    if n < 3 || open.end_byte() >= close.start_byte() {
        return None;
    }
    Some(tree_sitter::Range {
        start_byte: open.end_byte(),
        end_byte: close.start_byte(),
        start_point: open.end_position(),
        end_point: close.start_position(),
    })
}

/// The expansions of the rules that take no input (`() => { … }`) of the `macro_rules! name`
/// written at the top of the file.
fn argless_rules<'a>(x: &Extractor<'a, '_>, name: &str) -> Vec<tree_sitter::Range> {
    let Some(root) = x.root else { return Vec::new() };
    let mut c = root.walk();
    let defs = root
        .named_children(&mut c)
        .filter(|d| d.kind() == "macro_definition" && d.child_by_field_name("name").is_some_and(|n| x.text(n) == name));
    let mut out = Vec::new();
    for def in defs {
        let mut c = def.walk();
        for rule in def.named_children(&mut c).filter(|r| r.kind() == "macro_rule") {
            let takes_none = rule.child_by_field_name("left").is_some_and(|l| l.named_child_count() == 0);
            if let Some(body) = rule.child_by_field_name("right").filter(|_| takes_none).and_then(inside) {
                out.push(body);
            }
        }
    }
    out
}

/// Where a macro invocation sits when it is an item: `source_file` at the top of the file (or of a
/// macro body read as items), `mod_item` inside an inline module; `None` inside a function, an
/// `impl` or another expression.
fn item_scope<'a>(x: &Extractor<'a, '_>, node: Node<'a>) -> Option<&'static str> {
    let mut parent = x.parent(node)?;
    if parent.kind() == "expression_statement" {
        parent = x.parent(parent)?;
    }
    match parent.kind() {
        "source_file" => Some("source_file"),
        "declaration_list" if x.parent(parent).is_some_and(|p| p.kind() == "mod_item") => Some("mod_item"),
        _ => None,
    }
}

/// A macro its crate's root defines wherever it is written: `#[macro_export] macro_rules! m`, a
/// `#[proc_macro]` or `#[proc_macro_attribute]` function (its own name) and a
/// `#[proc_macro_derive(Name, …)]` function (the derive's name), each also under `#[cfg_attr(…)]`.
fn crate_root_macro<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>, name: &str) {
    let kinds = matches!(node.kind(), "macro_definition" | "function_item");
    if !kinds {
        return;
    }
    for attr in attributes(x, node) {
        let whole: String = attr.trim_start_matches("#[").trim_end_matches(']').split_whitespace().collect();
        for inner in applied_attributes(&whole) {
            let Some((kind, root_name)) = root_macro_attribute(node.kind(), inner, name) else { continue };
            let l = line(node);
            x.push(rel::CRATE_ROOT_MACRO, &[x.path.into(), l.into(), root_name.as_str().into(), kind.into()]);
        }
    }
}

/// Attributes the compiler itself reads (or tools, by their path): they define no item.
const BUILTIN_ATTRIBUTES: &[&str] = &[
    "allow",
    "warn",
    "deny",
    "forbid",
    "expect",
    "doc",
    "inline",
    "cold",
    "must_use",
    "deprecated",
    "repr",
    "non_exhaustive",
    "path",
    "test",
    "ignore",
    "should_panic",
    "macro_export",
    "macro_use",
    "proc_macro",
    "proc_macro_attribute",
    "proc_macro_derive",
    "no_mangle",
    "export_name",
    "link",
    "link_name",
    "link_section",
    "used",
    "track_caller",
    "automatically_derived",
    "target_feature",
    "cfg",
    "derive",
    "unsafe",
    "naked",
    "no_std",
    "instruction_set",
    "optimize",
    "coverage",
    "debugger_visualizer",
    "collapse_debuginfo",
    "cfg_attr",
];

/// Derives that only implement a trait for the item, so they define no name.
const IMPL_ONLY_DERIVES: &[&str] =
    &["Debug", "Clone", "Copy", "PartialEq", "Eq", "PartialOrd", "Ord", "Hash", "Default", "Serialize", "Deserialize"];

/// A derive or an attribute macro on a module-level item may define items the index cannot see
/// (`#[derive(Builder)]` makes `ConfigBuilder`): such an item opens its module's surface.
fn generating_attributes<'a>(x: &mut Extractor<'a, '_>, node: Node<'a>) {
    if item_scope(x, node).is_none() {
        return;
    }
    for attr in attributes(x, node) {
        let whole: String = attr.trim_start_matches("#[").trim_end_matches(']').split_whitespace().collect();
        for inner in applied_attributes(&whole) {
            let head = inner.split(['(', '=']).next().unwrap_or(inner);
            let reason = if let Some(list) = inner.strip_prefix("derive(").and_then(|d| d.strip_suffix(')')) {
                let made = list.split(',').filter(|d| !d.is_empty()).find(|d| {
                    let last = d.rsplit("::").next().unwrap_or(d);
                    !IMPL_ONLY_DERIVES.contains(&last)
                });
                match made {
                    Some(d) => format!("derive macro `{d}`"),
                    None => continue,
                }
            } else if BUILTIN_ATTRIBUTES.contains(&head)
                || head.starts_with("rustfmt::")
                || head.starts_with("clippy::")
                || head.starts_with("diagnostic::")
            {
                continue;
            } else {
                format!("attribute macro `#[{head}]`")
            };
            x.push(rel::OPEN_SURFACE, &[x.path.into(), reason.as_str().into()]);
        }
    }
}

/// The attributes an attribute's text (without `#[`, `]` and whitespace) applies: itself, or those a
/// `cfg_attr(predicate, a, b)` applies with its predicate taken as true (as the index takes every
/// `cfg`), nested `cfg_attr`s included.
fn applied_attributes(inner: &str) -> Vec<&str> {
    let Some(args) = inner.strip_prefix("cfg_attr(").and_then(|a| a.strip_suffix(')')) else {
        return vec![inner];
    };
    let (mut parts, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, ch) in args.char_indices() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&args[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&args[start..]);
    parts.into_iter().skip(1).filter(|a| !a.is_empty()).flat_map(applied_attributes).collect()
}

/// The kind and root name of the crate-root macro that the attribute `inner` makes of the item of
/// node kind `item` named `name`.
fn root_macro_attribute(item: &str, inner: &str, name: &str) -> Option<(&'static str, String)> {
    if item == "macro_definition" {
        let export = inner == "macro_export" || inner.starts_with("macro_export(");
        return export.then(|| ("macro_export", name.to_string()));
    }
    if inner == "proc_macro" || inner == "proc_macro_attribute" {
        return Some((if inner == "proc_macro" { "proc_macro" } else { "proc_macro_attribute" }, name.to_string()));
    }
    let args = inner.strip_prefix("proc_macro_derive(")?;
    let derive = args.split([',', ')']).next().unwrap_or("");
    (!derive.is_empty()).then(|| ("proc_macro_derive", derive.to_string()))
}
