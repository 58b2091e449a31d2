//! Walks over a syntax tree whose cost is its size at any depth: the survey of how deep it goes
//! (and what lies below [`MAX_DEPTH`]), and the links (parent, previous sibling) of a deep tree's
//! nodes. None recurses on the stack: a tree nests as deep as the source's brackets do.

use std::cell::RefCell;
use std::collections::HashMap;

use foldhash::fast::FixedState;
use tree_sitter::Node;

use super::extractor::line;

/// How deep in a syntax tree facts are extracted: query patterns start at nodes at most this deep.
/// Real code stays under 100 (the deepest file of Django, npm and the crates andon builds with is
/// 85); past this a query's cost grows with depth times size.
pub const MAX_DEPTH: u32 = 1000;

/// A tree deeper than this gets [`Links`]: asking a node for its parent walks down from the root,
/// which is cheap in real code only because real code is shallow.
pub(super) const LINK_DEPTH: u32 = 100;

/// How far below [`MAX_DEPTH`] nodes are linked: a pattern that starts at that depth captures
/// nodes a few levels further down.
const LINK_SLACK: u32 = 16;

/// More nesting levels than any grammar stacks on one byte of an intact tree (a level takes a token
/// or wraps one: `f(`, `-`, `[`), so a subtree this much shorter than the depth left cannot reach
/// past [`MAX_DEPTH`]. Only a tree with errors has zero-width nodes.
const LEVELS_PER_BYTE: usize = 16;

/// What one walk found about the depth of a tree.
pub(super) struct Survey<'t> {
    /// The depth of the deepest node visited (the root is 0), counted up to `MAX_DEPTH + 1`; the walk
    /// skips subtrees too short to reach past [`MAX_DEPTH`].
    pub depth: u32,
    /// The first node deeper than [`MAX_DEPTH`], if any.
    pub first_omitted: Option<Node<'t>>,
    /// Line ranges of the subtrees below [`MAX_DEPTH`], adjacent ones merged.
    pub omitted: Vec<(u32, u32)>,
}

/// Walks the tree down to [`MAX_DEPTH`] + 1 (no further) and reports its depth and what lies
/// below [`MAX_DEPTH`].
pub(super) fn survey(root: Node) -> Survey {
    let mut s = Survey { depth: 0, first_omitted: None, omitted: Vec::new() };
    let intact = !root.has_error();
    let short = |n: Node, depth: u32| {
        let room = (MAX_DEPTH - depth) as usize;
        intact && (n.end_byte() - n.start_byte()).saturating_mul(LEVELS_PER_BYTE) <= room
    };
    let mut c = root.walk();
    // `TreeCursor::depth` counts the cursor's whole stack on every call, so the walk counts.
    let mut depth = 0u32;
    loop {
        s.depth = s.depth.max(depth);
        if depth > MAX_DEPTH {
            let n = c.node();
            s.first_omitted.get_or_insert(n);
            let (from, to) = (line(n), n.end_position().row as u32 + 1);
            match s.omitted.last_mut() {
                Some(last) if from <= last.1 + 1 => last.1 = last.1.max(to),
                _ => s.omitted.push((from, to)),
            }
        } else if !short(c.node(), depth) && c.goto_first_child() {
            depth += 1;
            continue;
        }
        while !c.goto_next_sibling() {
            if !c.goto_parent() {
                return s;
            }
            depth -= 1;
        }
    }
}

/// The parent, previous sibling and depth of each node of a tree, by node id, found in one walk.
pub(crate) struct Links<'t> {
    root: Node<'t>,
    map: HashMap<usize, Link<'t>, FixedState>,
    /// The ancestors [`Links::ancestors`] found last, root first: consecutive questions, about
    /// nodes near each other, share most of them.
    last: RefCell<Vec<Node<'t>>>,
}

/// Where one node sits.
struct Link<'t> {
    parent: Node<'t>,
    prev: Option<Node<'t>>,
    depth: u32,
}

impl<'t> Links<'t> {
    /// Links every node of the tree at `root` down to `MAX_DEPTH + LINK_SLACK`.
    pub fn of(root: Node<'t>) -> Links<'t> {
        let mut map = HashMap::default();
        let mut c = root.walk();
        // the cursor's node and its ancestors, the node last
        let mut path = vec![root];
        loop {
            if path.len() as u32 <= MAX_DEPTH + LINK_SLACK && c.goto_first_child() {
                let n = c.node();
                map.insert(n.id(), Link { parent: path[path.len() - 1], prev: None, depth: path.len() as u32 });
                path.push(n);
                continue;
            }
            loop {
                let prev = path.pop();
                if c.goto_next_sibling() {
                    let n = c.node();
                    map.insert(n.id(), Link { parent: path[path.len() - 1], prev, depth: path.len() as u32 });
                    path.push(n);
                    break;
                }
                if !c.goto_parent() {
                    return Links { root, map, last: RefCell::default() };
                }
            }
        }
    }

    /// The parent of `node` (from the tree itself for a node below the linked depth).
    pub fn parent(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.map.get(&node.id()) {
            Some(l) => Some(l.parent),
            None => node.parent(),
        }
    }

    /// The previous sibling of `node` (from the tree itself for a node below the linked depth).
    pub fn prev_sibling(&self, node: Node<'t>) -> Option<Node<'t>> {
        match self.map.get(&node.id()) {
            Some(l) => l.prev,
            None => node.prev_sibling(),
        }
    }

    /// The depth of a linked node (the root is 0).
    fn depth(&self, node: Node<'t>) -> Option<u32> {
        if node.id() == self.root.id() { Some(0) } else { self.map.get(&node.id()).map(|l| l.depth) }
    }

    /// Ancestors of a node, nearest first: it climbs only until it meets the ancestors it found
    /// last, so a run of questions about nearby deep nodes costs their distance, not their depth.
    pub fn ancestors(&self, node: Node<'t>) -> Vec<Node<'t>> {
        let mut last = self.last.borrow_mut();
        let mut up = Vec::new(); // ancestors not among the last ones, nearest first
        let mut at = self.parent(node);
        while let Some(n) = at {
            if let Some(d) = self.depth(n).map(|d| d as usize)
                && last.get(d).is_some_and(|m| m.id() == n.id())
            {
                last.truncate(d + 1);
                break;
            }
            up.push(n);
            at = self.parent(n);
        }
        if at.is_none() {
            last.clear();
        }
        last.extend(up.iter().rev());
        last.iter().rev().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::Lang;

    fn parse(path: &str, src: &str) -> tree_sitter::Tree {
        let mut p = tree_sitter::Parser::new();
        p.set_language(&(Lang::from_path(path).unwrap().spec().grammar_for(path).language)()).unwrap();
        p.parse(src, None).unwrap()
    }

    /// Every node of a tree, in document order.
    fn nodes(root: Node) -> Vec<Node> {
        let mut out = Vec::new();
        let mut c = root.walk();
        loop {
            out.push(c.node());
            if c.goto_first_child() {
                continue;
            }
            while !c.goto_next_sibling() {
                if !c.goto_parent() {
                    return out;
                }
            }
        }
    }

    /// Links answer as the tree does for every node, asked in document order and backwards.
    #[test]
    fn links_agree_with_the_tree() {
        let src = include_str!("rust.rs");
        let tree = parse("rust.rs", src);
        let root = tree.root_node();
        let links = Links::of(root);
        let all = nodes(root);
        for n in all.iter().chain(all.iter().rev()) {
            assert_eq!(links.parent(*n), n.parent(), "{n:?}");
            assert_eq!(links.prev_sibling(*n), n.prev_sibling(), "{n:?}");
            let by_tree: Vec<Node> = std::iter::successors(n.parent(), |p| p.parent()).collect();
            assert_eq!(links.ancestors(*n), by_tree, "{n:?}");
        }
    }

    /// A tree past the limit: its depth is counted to the limit, the first node below it and the
    /// lines below it are reported; a shallow tree reports nothing.
    #[test]
    fn survey_finds_what_lies_below_the_limit() {
        let deep = format!("x = 1\ny = {}{}\n", "f(\n".repeat(600), ")".repeat(600));
        let tree = parse("a.py", &deep);
        let s = survey(tree.root_node());
        assert_eq!(s.depth, MAX_DEPTH + 1);
        let first = s.first_omitted.expect("a node below the limit");
        assert!(first.start_position().row > 400, "{first:?}");
        assert_eq!(s.omitted.len(), 1, "{:?}", s.omitted);
        assert_eq!(s.omitted[0].1, 602, "the omitted lines end with the closing line");
        // one level per byte, the densest nesting the grammars have, is still found
        let dense = [
            ("a.py", format!("x = {}1\n", "-".repeat(3000))),
            ("a.ts", format!("x = {}y;\n", "!".repeat(3000))),
            ("a.rs", format!("fn f() {{ {}x; }}\n", "!".repeat(3000))),
        ];
        for (path, src) in dense {
            assert!(survey(parse(path, &src).root_node()).first_omitted.is_some(), "{path}");
        }
        let shallow = parse("a.py", "def f():\n    return g(1)\n");
        let s = survey(shallow.root_node());
        assert!(s.depth < 10 && s.first_omitted.is_none() && s.omitted.is_empty());
    }
}
