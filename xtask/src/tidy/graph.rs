//! The import graph of one crate target: which module names which, found by
//! resolving every `use` and every path in code to the module that defines
//! the item (through re-exports), then its circles and its layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::tree::Tree;

/// Where one module names another: the first place found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub(crate) file: PathBuf,
    pub(crate) line: usize,
    /// The path as written.
    pub(crate) path: String,
}

/// Module `from` imports from module `to`.
pub(crate) type Edges = BTreeMap<(usize, usize), Site>;

/// The edges of `tree`, self-references left out.
pub(crate) fn edges(tree: &Tree) -> Edges {
    let mut edges = Edges::new();
    for (from, module) in tree.modules.iter().enumerate() {
        let named = module
            .uses
            .iter()
            .map(|u| (&u.path, u.line))
            .chain(module.refs.iter().map(|r| (&r.path, r.line)));
        for (path, line) in named {
            let Some(absolute) = absolute(tree, from, path) else {
                continue;
            };
            let to = resolve(tree, &absolute, 0);
            if to != from {
                edges.entry((from, to)).or_insert_with(|| Site {
                    file: module.file.clone(),
                    line,
                    path: path.join("::"),
                });
            }
        }
    }
    edges
}

/// `path` as written in module `from`, made absolute (from the crate root);
/// `None` when it leads outside the crate (`std::..`, a dependency) or is a
/// name local to the module.
fn absolute(tree: &Tree, from: usize, path: &[String]) -> Option<Vec<String>> {
    let module = &tree.modules[from];
    let first = path.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.path.clone(),
        "super" => {
            let mut base = module.path.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            base.extend(rest.iter().cloned());
            return Some(base);
        }
        name if module.children.contains_key(name) => {
            let mut base = module.path.clone();
            base.extend(path.iter().cloned());
            return Some(base);
        }
        name => {
            // A name this module imported: continue from what it names.
            let import = module
                .uses
                .iter()
                .find(|u| u.name.as_deref() == Some(name) && u.path.first() != path.first())?;
            if path.len() < 2 {
                return None;
            }
            let mut base = absolute(tree, from, &import.path)?;
            base.extend(path[1..].iter().cloned());
            return Some(base);
        }
    };
    base.extend(path[1..].iter().cloned());
    Some(base)
}

/// The module that defines what the absolute `path` names, following
/// re-exports; the deepest module on the way when the name is unknown.
fn resolve(tree: &Tree, path: &[String], depth: usize) -> usize {
    let mut at = 0;
    for (i, segment) in path.iter().enumerate() {
        let module = &tree.modules[at];
        if let Some(&child) = module.children.get(segment) {
            at = child;
            continue;
        }
        if module.items.contains(segment) || depth > 16 {
            return at;
        }
        // A re-export (or any import) of this module: where it comes from.
        let import = module
            .uses
            .iter()
            .find(|u| u.name.as_deref() == Some(segment.as_str()));
        if let Some(import) = import {
            return match absolute(tree, at, &import.path) {
                Some(mut target) => {
                    target.extend(path[i + 1..].iter().cloned());
                    resolve(tree, &target, depth + 1)
                }
                // Re-exported from another crate.
                None => at,
            };
        }
        // A glob import that brings it in.
        for glob in module.uses.iter().filter(|u| u.name.is_none()) {
            let Some(mut target) = absolute(tree, at, &glob.path) else {
                continue;
            };
            let source = resolve(tree, &target, depth + 1);
            if defines(tree, source, segment) {
                target.extend(path[i..].iter().cloned());
                return resolve(tree, &target, depth + 1);
            }
        }
        return at;
    }
    at
}

fn defines(tree: &Tree, module: usize, name: &str) -> bool {
    let m = &tree.modules[module];
    m.items.contains(name)
        || m.children.contains_key(name)
        || m.uses.iter().any(|u| u.name.as_deref() == Some(name))
}

/// The strongly connected components with more than one module (Tarjan).
pub(crate) fn circles(n: usize, edges: &Edges) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let adj = adjacency(n, edges);
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    // Iterative, so a deep module tree cannot overflow the stack.
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work = vec![(start, 0usize)];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut i)) = work.last_mut() {
            if let Some(&w) = adj[v].get(*i) {
                *i += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort_unstable();
                    out.push(component);
                }
            }
        }
    }
    out.sort();
    out
}

/// One closed walk through `component`, starting at its first module: the
/// shortest way back found breadth first.
pub(crate) fn one_circle(component: &[usize], edges: &Edges) -> Vec<usize> {
    let members: BTreeSet<usize> = component.iter().copied().collect();
    let start = component[0];
    let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &(from, to) in edges.keys() {
            if from != v || !members.contains(&to) {
                continue;
            }
            if to == start {
                let mut walk = vec![v];
                let mut at = v;
                while at != start {
                    at = came_from[&at];
                    walk.push(at);
                }
                walk.reverse();
                return walk;
            }
            if let std::collections::btree_map::Entry::Vacant(e) = came_from.entry(to) {
                e.insert(v);
                queue.push_back(to);
            }
        }
    }
    component.to_vec()
}

/// Each module's layer: 0 for a module that imports from none, else one
/// more than the highest layer it imports from. Only for an acyclic graph.
pub(crate) fn layers(n: usize, edges: &Edges) -> Vec<usize> {
    let adj = adjacency(n, edges);
    let mut layer = vec![None; n];
    fn visit(v: usize, adj: &[Vec<usize>], layer: &mut [Option<usize>], depth: usize) -> usize {
        if let Some(l) = layer[v] {
            return l;
        }
        // Bounded: a circle (not expected here) ends the walk.
        if depth > adj.len() {
            return 0;
        }
        let l = adj[v]
            .iter()
            .map(|&w| visit(w, adj, layer, depth + 1) + 1)
            .max()
            .unwrap_or(0);
        layer[v] = Some(l);
        l
    }
    (0..n)
        .map(|v| visit(v, &adj, &mut layer, 0))
        .collect::<Vec<_>>()
}

fn adjacency(n: usize, edges: &Edges) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(from, to) in edges.keys() {
        adj[from].push(to);
    }
    adj
}
