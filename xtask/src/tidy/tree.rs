//! Reads one crate target's module tree from its sources: every module
//! (file or inline), the names it defines, what its `use` items import, and
//! the paths its code names, each with the line it is on.
//!
//! Test-only code (`#[cfg(test)]` items) is left out: a unit test may reach
//! anywhere in its crate without shaping the crate's layers. Macro bodies are
//! scanned token by token for `crate::`, `super::` and `self::` paths, so a
//! path inside `tokio::select!` counts like any other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One module of a crate target.
#[derive(Debug)]
pub(crate) struct Module {
    /// The path from the crate root (`[]` for the root itself).
    pub(crate) path: Vec<String>,
    /// The file it is written in (its parent's file for an inline module).
    pub(crate) file: PathBuf,
    /// Where it is declared (`mod x;`), if it is not the root.
    pub(crate) declared: Option<(PathBuf, usize)>,
    /// Declared `pub` (exactly; `pub(crate)` is not public).
    pub(crate) public: bool,
    /// It has a `//!` doc (or a doc on its declaration).
    pub(crate) documented: bool,
    /// Child modules by name.
    pub(crate) children: BTreeMap<String, usize>,
    /// Child modules in the order they are declared.
    pub(crate) order: Vec<usize>,
    /// The names of the items it defines.
    pub(crate) items: BTreeSet<String>,
    /// Its `use` items, one per leaf of each use tree.
    pub(crate) uses: Vec<Use>,
    /// Paths its code names, relative to it, as written.
    pub(crate) refs: Vec<Ref>,
}

/// One leaf of a `use` tree.
#[derive(Debug, Clone)]
pub(crate) struct Use {
    /// The name it brings into scope; `None` for a glob.
    pub(crate) name: Option<String>,
    /// The path as written (relative to the module).
    pub(crate) path: Vec<String>,
    pub(crate) line: usize,
}

/// A path named in code (`crate::a::b`, `super::c`, `child::d`), as written.
#[derive(Debug, Clone)]
pub(crate) struct Ref {
    pub(crate) path: Vec<String>,
    pub(crate) line: usize,
}

/// A crate target's modules; index 0 is the root.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) modules: Vec<Module>,
}

impl Tree {
    /// Reads the tree rooted at `root` (a `lib.rs` or `main.rs`).
    pub(crate) fn read(root: &Path) -> Result<Tree, String> {
        let mut tree = Tree {
            modules: Vec::new(),
        };
        let file = parse(root)?;
        let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
        let documented = has_doc(&file.attrs);
        tree.add_module(
            Vec::new(),
            root.to_path_buf(),
            None,
            true,
            documented,
            &file.items,
            &dir,
        )?;
        Ok(tree)
    }

    /// Adds the module made of `items`, then its children. `dir` is where
    /// its child module files live.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call site per kind of module"
    )]
    fn add_module(
        &mut self,
        path: Vec<String>,
        file: PathBuf,
        declared: Option<(PathBuf, usize)>,
        public: bool,
        documented: bool,
        items: &[syn::Item],
        dir: &Path,
    ) -> Result<usize, String> {
        let index = self.modules.len();
        let mut collector = Collector::default();
        for item in items {
            collector.visit_item(item);
        }
        self.modules.push(Module {
            path: path.clone(),
            file: file.clone(),
            declared,
            public,
            documented,
            children: BTreeMap::new(),
            order: Vec::new(),
            items: collector.items,
            uses: collector.uses,
            refs: collector.refs,
        });
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            if is_test_only(&m.attrs) {
                continue;
            }
            let name = m.ident.to_string();
            let mut child_path = path.clone();
            child_path.push(name.clone());
            let public = matches!(m.vis, syn::Visibility::Public(_));
            let line = m.ident.span().start().line;
            let decl = Some((file.clone(), line));
            let doc_on_decl = has_doc(&m.attrs);
            let child = match &m.content {
                Some((_, inline)) => self.add_module(
                    child_path,
                    file.clone(),
                    decl,
                    public,
                    doc_on_decl,
                    inline,
                    &dir.join(&name),
                )?,
                None => {
                    let child_file = module_file(dir, &name, &m.attrs)?;
                    let parsed = parse(&child_file)?;
                    let child_dir = dir.join(&name);
                    self.add_module(
                        child_path,
                        child_file,
                        decl,
                        public,
                        doc_on_decl || has_doc(&parsed.attrs),
                        &parsed.items,
                        &child_dir,
                    )?
                }
            };
            self.modules[index].children.insert(name, child);
            self.modules[index].order.push(child);
        }
        Ok(index)
    }
}

/// Where `mod name;` in a module whose children live in `dir` is written.
fn module_file(dir: &Path, name: &str, attrs: &[syn::Attribute]) -> Result<PathBuf, String> {
    for attr in attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            // `#[path]` is relative to the declaring file's directory.
            let base = dir.parent().unwrap_or(dir);
            return Ok(base.join(s.value()));
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        return Ok(flat);
    }
    let nested = dir.join(name).join("mod.rs");
    if nested.exists() {
        return Ok(nested);
    }
    Err(format!(
        "module `{name}`: neither {} nor {} exists",
        flat.display(),
        nested.display()
    ))
}

fn parse(file: &Path) -> Result<syn::File, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        format!("{}:{}:{}: {e}", file.display(), at.line, at.column + 1)
    })
}

/// A `//!` (or `///` on a declaration) doc with some text.
fn has_doc(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && match &a.meta {
                syn::Meta::NameValue(nv) => match &nv.value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => !s.value().trim().is_empty(),
                    // `#[doc = include_str!(..)]`
                    _ => true,
                },
                _ => false,
            }
    })
}

/// `#[cfg(test)]`, `#[cfg(doctest)]` or `#[cfg(all(test, ..))]`: compiled
/// for tests only.
pub(crate) fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        if !a.path().is_ident("cfg") {
            return false;
        }
        let syn::Meta::List(list) = &a.meta else {
            return false;
        };
        cfg_needs_test(list.tokens.clone())
    })
}

/// True if a cfg predicate can only hold under `test` or `doctest`: one of
/// them, or an `all(..)` with one among its arguments.
fn cfg_needs_test(tokens: TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    match trees.as_slice() {
        [TokenTree::Ident(i)] => i == "test" || i == "doctest",
        [TokenTree::Ident(i), TokenTree::Group(g)] if i == "all" => {
            split_commas(g.stream()).into_iter().any(cfg_needs_test)
        }
        _ => false,
    }
}

fn split_commas(tokens: TokenStream) -> Vec<TokenStream> {
    let mut parts = vec![TokenStream::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => parts.push(TokenStream::new()),
            _ => parts.last_mut().expect("never empty").extend([tt]),
        }
    }
    parts
}

/// Collects what one module defines, imports and names; stops at inline
/// child modules (they are modules of their own) and at test-only items.
#[derive(Default)]
struct Collector {
    items: BTreeSet<String>,
    uses: Vec<Use>,
    refs: Vec<Ref>,
    /// Depth below the module's own items (0: an item of the module).
    depth: usize,
}

impl Collector {
    fn define(&mut self, ident: &syn::Ident) {
        if self.depth == 0 {
            self.items.insert(ident.to_string());
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let mut path = prefix.clone();
                // `use a::b::{self}` imports `b` itself.
                let local = if name == "self" {
                    prefix.last().cloned()
                } else {
                    path.push(name.clone());
                    Some(name)
                };
                self.push_use(local, path, n.ident.span().start().line);
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                let local = Some(r.rename.to_string()).filter(|n| n != "_");
                self.push_use(local, path, r.ident.span().start().line);
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.push_use(None, prefix.clone(), line);
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }

    fn push_use(&mut self, name: Option<String>, path: Vec<String>, line: usize) {
        if path.is_empty() {
            return;
        }
        // An anonymous import (`as _`) still depends on its module.
        self.uses.push(Use { name, path, line });
    }

    /// Scans a macro's tokens for paths: an identifier followed by `::` and
    /// more identifiers.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(first) => {
                    let mut path = vec![first.to_string()];
                    let mut j = i + 1;
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (trees.get(j), trees.get(j + 1))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        match trees.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                path.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if path.len() > 1 {
                        self.refs.push(Ref {
                            path,
                            line: first.span().start().line,
                        });
                        i = j;
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs: &[syn::Attribute] = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            _ => &[],
        };
        if is_test_only(attrs) {
            return;
        }
        match item {
            // Child modules are read on their own.
            syn::Item::Mod(_) => {}
            syn::Item::Use(u) => {
                let mut prefix = Vec::new();
                if u.leading_colon.is_none() {
                    self.use_tree(&mut prefix, &u.tree);
                }
            }
            _ => {
                match item {
                    syn::Item::Const(i) => self.define(&i.ident),
                    syn::Item::Enum(i) => self.define(&i.ident),
                    syn::Item::Fn(i) => self.define(&i.sig.ident),
                    syn::Item::Static(i) => self.define(&i.ident),
                    syn::Item::Struct(i) => self.define(&i.ident),
                    syn::Item::Trait(i) => self.define(&i.ident),
                    syn::Item::Type(i) => self.define(&i.ident),
                    syn::Item::Union(i) => self.define(&i.ident),
                    syn::Item::Macro(i) => {
                        if let Some(ident) = &i.ident {
                            self.define(ident);
                        }
                    }
                    _ => {}
                }
                self.depth += 1;
                syn::visit::visit_item(self, item);
                self.depth -= 1;
            }
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_only(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let first = &path.segments[0].ident;
            self.refs.push(Ref {
                path: path.segments.iter().map(|s| s.ident.to_string()).collect(),
                line: first.span().start().line,
            });
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }
}
