//! The declaration-order rule: the child modules of a module (the `mod`
//! lines of a `lib.rs`, a `main.rs`, a `mod.rs` or a `foo.rs` with a
//! `foo/` folder) are declared lowest layer first, so a reader of the list
//! knows what may use what. An import from a module under an
//! earlier-declared child into a module under a later-declared one runs
//! back up and breaks the rule.
//!
//! Only siblings are compared. A module and its ancestors are not: a parent
//! is the top of its own folder (a crate root re-exports everything below
//! it), re-exports are already resolved to the module that defines the item
//! (so `use crate::Error` counts as an import from `error`, not from the
//! root), and an item a parent defines itself and a child uses is a circle
//! if the parent imports the child, which the circle check reports.

use std::collections::BTreeMap;

use super::graph::{Edges, Site};
use super::tree::Tree;

/// One import that runs back up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Upward {
    /// The module whose children are declared out of order.
    pub(crate) parent: usize,
    /// The importing module, under the earlier-declared child `lower`.
    pub(crate) from: usize,
    /// The imported module, under the later-declared child `higher`.
    pub(crate) to: usize,
    pub(crate) lower: usize,
    pub(crate) higher: usize,
    /// Where `from` names `to` (the first place found).
    pub(crate) site: Site,
}

/// Every import in `edges` from under an earlier-declared child of a module
/// into a later-declared one, in edge order.
pub(crate) fn upward(tree: &Tree, edges: &Edges) -> Vec<Upward> {
    let mut out = Vec::new();
    for (&(from, to), site) in edges {
        let Some((parent, a, b)) = siblings(tree, from, to) else {
            continue;
        };
        let order = &tree.modules[parent].order;
        let position = |m: usize| order.iter().position(|&c| c == m);
        if let (Some(pa), Some(pb)) = (position(a), position(b))
            && pa < pb
        {
            out.push(Upward {
                parent,
                from,
                to,
                lower: a,
                higher: b,
                site: site.clone(),
            });
        }
    }
    out
}

/// The children of `parent` in a declaration order that passes the rule,
/// keeping the present order wherever the imports allow; `Err` with the
/// children that import from one another (through what they hold) when no
/// order passes.
pub(crate) fn passing_order(
    tree: &Tree,
    edges: &Edges,
    parent: usize,
) -> Result<Vec<usize>, Vec<usize>> {
    let children = &tree.modules[parent].order;
    // For each child, the siblings it imports from (which must come first).
    let mut needs: BTreeMap<usize, Vec<usize>> = children.iter().map(|&c| (c, vec![])).collect();
    for &(from, to) in edges.keys() {
        if let Some((p, a, b)) = siblings(tree, from, to)
            && p == parent
        {
            needs.entry(a).or_default().push(b);
        }
    }
    let mut placed: Vec<usize> = Vec::new();
    let mut left: Vec<usize> = children.clone();
    while !left.is_empty() {
        // The earliest-declared child whose needs are all placed.
        let ready = left
            .iter()
            .position(|c| needs[c].iter().all(|n| placed.contains(n)));
        match ready {
            Some(i) => placed.push(left.remove(i)),
            None => return Err(left),
        }
    }
    Ok(placed)
}

/// The module both `from` and `to` sit under, and its two children that hold
/// them; `None` when one is the other's ancestor.
fn siblings(tree: &Tree, from: usize, to: usize) -> Option<(usize, usize, usize)> {
    let a = &tree.modules[from].path;
    let b = &tree.modules[to].path;
    let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    if common == a.len() || common == b.len() {
        return None;
    }
    let mut parent = 0;
    for segment in &a[..common] {
        parent = tree.modules[parent].children[segment];
    }
    let children = &tree.modules[parent].children;
    Some((parent, children[&a[common]], children[&b[common]]))
}
