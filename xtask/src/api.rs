//! `cargo xtask api [--write]`: the public-API guard. Each publishable
//! library crate's public surface is listed in `xtask/api/CRATE.txt`, one
//! item per line; `ci` fails when the sources say otherwise, so that a
//! change to the public surface is a deliberate diff a reviewer sees.
//! `--write` regenerates the listings.
//!
//! The listing is read from the sources (no build): every item declared
//! exactly `pub` (not `pub(crate)`), with its signature, the `pub use`
//! re-exports as written, and the `pub fn`s of inherent and trait impls.
//! The crates deny nothing of it, but they warn on `unreachable_pub` and CI
//! turns warnings into errors, so a `pub` item in this workspace is
//! reachable: listing every one is listing the public API. Test-only items
//! (`#[cfg(test)]`) are left out; other `cfg` attributes (features) are
//! shown with the item.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Attribute, ImplItem, Item, TraitItem, Visibility};

/// The crates whose public API is guarded: the publishable libraries.
pub(crate) const CRATES: &[(&str, &str)] = &[
    ("mcpwire-codec", "crates/codec"),
    ("mcpwire-transport", "crates/transport-core"),
    ("mcpwire-stdio", "crates/transport-stdio"),
    ("mcpwire-auth", "crates/auth"),
    ("mcpwire-http", "crates/transport-http"),
    ("mcpwire-ws", "crates/transport-ws"),
    ("mcpwire-schema", "crates/schema"),
    ("mcpwire-client", "crates/client"),
    ("mcpwire-config", "crates/config"),
    ("mcpwire-manager", "crates/manager"),
    ("mcpwire-serve", "crates/serve"),
    ("mcpwire", "crates/mcpwire"),
];

/// Compares (or, with `--write`, rewrites) every listing.
pub(crate) fn api(root: &Path, args: &[String]) -> Result<(), String> {
    let write = args.iter().any(|a| a == "--write");
    let dir = root.join("xtask/api");
    let mut stale = Vec::new();
    for (name, path) in CRATES {
        let listing = listing(&root.join(path).join("src/lib.rs"))?;
        let file = dir.join(format!("{name}.txt"));
        if write {
            fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            fs::write(&file, &listing).map_err(|e| format!("{}: {e}", file.display()))?;
            continue;
        }
        let old = fs::read_to_string(&file).unwrap_or_default();
        if old != listing {
            stale.push(describe(name, &old, &listing));
        }
    }
    if write {
        eprintln!("api: {} listings written to xtask/api/", CRATES.len());
        return Ok(());
    }
    if stale.is_empty() {
        eprintln!(
            "api: the public API of {} crates is as listed",
            CRATES.len()
        );
        return Ok(());
    }
    Err(format!(
        "the public API changed; if that is meant, run `cargo xtask api --write` and commit \
         the listings:\n{}",
        stale.join("\n")
    ))
}

/// What changed in one crate's listing: the lines gone and the lines new.
fn describe(name: &str, old: &str, new: &str) -> String {
    let old: BTreeSet<&str> = old.lines().collect();
    let new: BTreeSet<&str> = new.lines().collect();
    let mut out = format!("  {name}:");
    for gone in old.difference(&new) {
        out.push_str(&format!("\n    - {gone}"));
    }
    for added in new.difference(&old) {
        out.push_str(&format!("\n    + {added}"));
    }
    out
}

/// The sorted listing of the crate whose root is `lib`.
fn listing(lib: &Path) -> Result<String, String> {
    let mut lines = BTreeSet::new();
    walk(lib, &[], &mut lines)?;
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

/// Reads the module in `file` (at `path` from the crate root) and the
/// modules it declares.
fn walk(file: &Path, path: &[String], out: &mut BTreeSet<String>) -> Result<(), String> {
    let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let parsed = syn::parse_file(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let dir = module_dir(file, path.is_empty());
    items(&parsed.items, path, &dir, out)
}

/// Where the files of a module's children are: beside a crate root or a
/// `mod.rs`, else in the directory named after the module.
fn module_dir(file: &Path, root: bool) -> PathBuf {
    let parent = file.parent().unwrap_or(Path::new("."));
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if root || stem == "mod" {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    }
}

fn items(
    list: &[Item],
    path: &[String],
    dir: &Path,
    out: &mut BTreeSet<String>,
) -> Result<(), String> {
    // `a::b ` before what a module declares (nothing at the root).
    let here = if path.is_empty() {
        String::new()
    } else {
        format!("{} ", path.join("::"))
    };
    let at = |name: &str| {
        let mut p = path.to_vec();
        p.push(name.to_owned());
        p.join("::")
    };
    let private = private_types(list);
    for item in list {
        if test_only(attrs_of(item)) {
            continue;
        }
        let cfg = cfgs(attrs_of(item));
        match item {
            Item::Mod(m) => {
                let mut child = path.to_vec();
                child.push(m.ident.to_string());
                if is_pub(&m.vis) {
                    out.insert(format!("{cfg}mod {}", child.join("::")));
                }
                match &m.content {
                    Some((_, inner)) => items(inner, &child, &dir.join(m.ident.to_string()), out)?,
                    None => {
                        let name = m.ident.to_string();
                        let file = [
                            dir.join(format!("{name}.rs")),
                            dir.join(name).join("mod.rs"),
                        ]
                        .into_iter()
                        .find(|f| f.exists())
                        .ok_or_else(|| {
                            format!("{}: no file for `mod {}`", dir.display(), m.ident)
                        })?;
                        walk(&file, &child, out)?;
                    }
                }
            }
            Item::Use(u) if is_pub(&u.vis) => {
                out.insert(format!("{cfg}{here}use {}", tokens(&u.tree)));
            }
            Item::Fn(f) if is_pub(&f.vis) => {
                out.insert(format!(
                    "{cfg}{}: {}",
                    at(&f.sig.ident.to_string()),
                    tokens(&f.sig)
                ));
            }
            Item::Struct(s) if is_pub(&s.vis) => {
                let mut shown = s.clone();
                shown.attrs.clear();
                strip_fields(&mut shown.fields);
                out.insert(format!(
                    "{cfg}{}: {}",
                    at(&s.ident.to_string()),
                    tokens(&shown)
                ));
            }
            Item::Enum(e) if is_pub(&e.vis) => {
                let mut shown = e.clone();
                shown.attrs.clear();
                for v in &mut shown.variants {
                    v.attrs.retain(|a| !a.path().is_ident("doc"));
                    strip_fields(&mut v.fields);
                }
                out.insert(format!(
                    "{cfg}{}: {}",
                    at(&e.ident.to_string()),
                    tokens(&shown)
                ));
            }
            Item::Trait(t) if is_pub(&t.vis) => {
                let name = at(&t.ident.to_string());
                let mut head = t.clone();
                head.attrs.clear();
                head.items.clear();
                out.insert(format!("{cfg}{name}: {}", tokens(&head)));
                for ti in &t.items {
                    let line = match ti {
                        TraitItem::Fn(f) => tokens(&f.sig),
                        TraitItem::Type(ty) => format!("type {}", ty.ident),
                        TraitItem::Const(c) => format!("const {}: {}", c.ident, tokens(&c.ty)),
                        _ => continue,
                    };
                    out.insert(format!("{cfg}{name}: {line}"));
                }
            }
            Item::Type(t) if is_pub(&t.vis) => {
                out.insert(format!(
                    "{cfg}{}: type = {}",
                    at(&t.ident.to_string()),
                    tokens(&t.ty)
                ));
            }
            Item::Const(c) if is_pub(&c.vis) => {
                out.insert(format!(
                    "{cfg}{}: const {}",
                    at(&c.ident.to_string()),
                    tokens(&c.ty)
                ));
            }
            Item::Static(s) if is_pub(&s.vis) => {
                out.insert(format!(
                    "{cfg}{}: static {}",
                    at(&s.ident.to_string()),
                    tokens(&s.ty)
                ));
            }
            Item::Macro(m)
                if m.attrs.iter().any(|a| a.path().is_ident("macro_export"))
                    && let Some(name) = &m.ident =>
            {
                out.insert(format!("{cfg}macro {name}!"));
            }
            // An impl of this module's private type, or of its private
            // trait, is no one's API.
            Item::Impl(i)
                if named(&i.self_ty).is_some_and(|n| private.contains(&n))
                    || i.trait_.as_ref().is_some_and(|(_, tr, _)| {
                        tr.segments
                            .last()
                            .is_some_and(|s| private.contains(&s.ident.to_string()))
                    }) => {}
            Item::Impl(i) => {
                let of = match &i.trait_ {
                    Some((_, tr, _)) => format!("impl {} for {}", tokens(tr), tokens(&i.self_ty)),
                    None => format!("impl {}", tokens(&i.self_ty)),
                };
                if i.trait_.is_some() {
                    out.insert(format!("{cfg}{here}{of}"));
                }
                for ii in &i.items {
                    match ii {
                        ImplItem::Fn(f) if is_pub(&f.vis) && !test_only(&f.attrs) => {
                            let fcfg = cfgs(&f.attrs);
                            out.insert(format!("{cfg}{fcfg}{of}: {}", tokens(&f.sig)));
                        }
                        // Methods a macro writes (the request option
                        // setters): listed by the macro that writes them.
                        ImplItem::Macro(m) => {
                            out.insert(format!("{cfg}{of}: {}", tokens(&m.mac)));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The types and traits `list` declares without `pub`.
fn private_types(list: &[Item]) -> BTreeSet<String> {
    list.iter()
        .filter_map(|item| match item {
            Item::Struct(s) if !is_pub(&s.vis) => Some(&s.ident),
            Item::Enum(e) if !is_pub(&e.vis) => Some(&e.ident),
            Item::Union(u) if !is_pub(&u.vis) => Some(&u.ident),
            Item::Type(t) if !is_pub(&t.vis) => Some(&t.ident),
            Item::Trait(t) if !is_pub(&t.vis) => Some(&t.ident),
            _ => None,
        })
        .map(ToString::to_string)
        .collect()
}

/// The name of the type an impl is for, through references: `Compact` for
/// `&'s mut Compact<'a, B>`.
fn named(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Reference(r) => named(&r.elem),
        syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// Private fields are not API; docs are not either.
fn strip_fields(fields: &mut syn::Fields) {
    let kept: syn::punctuated::Punctuated<syn::Field, syn::Token![,]> = fields
        .iter()
        .filter(|f| is_pub(&f.vis))
        .cloned()
        .map(|mut f| {
            f.attrs.retain(|a| !a.path().is_ident("doc"));
            f
        })
        .collect();
    match fields {
        syn::Fields::Named(n) => n.named = kept,
        syn::Fields::Unnamed(u) => u.unnamed = kept,
        syn::Fields::Unit => {}
    }
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

fn attrs_of(item: &Item) -> &[Attribute] {
    match item {
        Item::Mod(i) => &i.attrs,
        Item::Use(i) => &i.attrs,
        Item::Fn(i) => &i.attrs,
        Item::Struct(i) => &i.attrs,
        Item::Enum(i) => &i.attrs,
        Item::Trait(i) => &i.attrs,
        Item::Type(i) => &i.attrs,
        Item::Const(i) => &i.attrs,
        Item::Static(i) => &i.attrs,
        Item::Impl(i) => &i.attrs,
        _ => &[],
    }
}

/// `#[cfg(test)]` (alone or in an `all`/`any`).
fn test_only(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let text = tokens(&a.meta);
            text == "cfg (test)" || text.contains("(test ,") || text.contains(", test)")
        }
    })
}

/// The item's `cfg` attributes, shown before it (`[cfg (feature = "http")] `).
fn cfgs(attrs: &[Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .map(|a| format!("[{}] ", tokens(&a.meta)))
        .collect()
}

fn tokens(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(source: &str) -> Vec<String> {
        let file = syn::parse_file(source).unwrap();
        let mut out = BTreeSet::new();
        items(&file.items, &["m".to_owned()], Path::new("."), &mut out).unwrap();
        out.into_iter().collect()
    }

    #[test]
    fn impls_of_private_types_and_traits_are_not_listed() {
        let lines = listed(
            "pub struct Open; struct Hidden; pub(crate) enum Inner { A }
             trait Quiet {} type Alias = Open;
             impl Clone for Open { fn clone(&self) -> Self { Open } }
             impl Clone for Hidden { fn clone(&self) -> Self { Hidden } }
             impl<'a> std::io::Write for &'a mut Hidden {}
             impl Default for Inner { fn default() -> Self { Inner::A } }
             impl Quiet for Open {}
             impl Alias { pub fn go(&self) {} }
             impl Hidden { pub fn go(&self) {} }",
        );
        assert_eq!(
            lines,
            ["m impl Clone for Open", "m::Open: pub struct Open ;"]
        );
    }
}
