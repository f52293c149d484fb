//! `cargo xtask tidy`: the house rules of `STYLE.md` as a check, in the
//! manner of rust-analyzer's tidy tests. For the `src/` of every workspace
//! crate (xtask included) it fails on
//!
//! - an import circle between modules of one crate target (each `use` and
//!   each path in code is resolved, through re-exports, to the module that
//!   defines what it names; `#[cfg(test)]` and `#[cfg(doctest)]` code is
//!   left out),
//! - an import that runs back up the declaration order: the child modules
//!   of a module are declared lowest layer first, so a module under an
//!   earlier-declared child may not import from one under a later-declared
//!   child (see `tidy/order.rs`),
//! - a source file over [`MAX_LINES`] lines,
//! - a public module (`pub mod`, or the crate root) without a `//!` doc,
//!
//! and prints what it found and where. `cargo xtask tidy --print` prints
//! each crate's modules in their layers instead (top layer first), the
//! picture `docs/architecture.md` shows.

mod tree;
mod graph;
mod order;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cmd::cargo;
use graph::{circles, edges, layers, one_circle};
use tree::Tree;

/// The longest a source file may be.
pub(crate) const MAX_LINES: usize = 800;

/// One crate target to check: a library or a binary of a workspace member.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The package name, and the target name if it differs.
    pub(crate) name: String,
    /// `src/lib.rs`, `src/main.rs` or `src/bin/x.rs`.
    pub(crate) root: PathBuf,
}

/// What the check found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Modules that import from each other in a circle: each step with where
    /// it happens.
    Circle {
        target: String,
        /// Every module of the circle (the strongly connected component).
        members: Vec<String>,
        /// One closed walk through it, step by step.
        steps: Vec<(String, String, graph::Site)>,
    },
    /// Child modules declared out of layer order: a module under an
    /// earlier-declared child imports from one under a later-declared child.
    Upward {
        target: String,
        /// The file whose `mod` lines are out of order.
        file: PathBuf,
        /// Each import that runs back up.
        imports: Vec<UpwardImport>,
        passing: Passing,
    },
    /// A source file over the limit.
    TooLong { file: PathBuf, lines: usize },
    /// A public module without a `//!` doc.
    Undocumented { module: String, file: PathBuf },
}

/// A declaration order of a module's children that passes, or (`Err`) the
/// children that import from one another so that none passes.
pub(crate) type Passing = Result<Vec<String>, Vec<String>>;

/// One import that runs back up the declaration order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UpwardImport {
    /// The importing module, and where it names the other.
    pub(crate) from: String,
    pub(crate) site: graph::Site,
    /// The imported module and its file.
    pub(crate) to: String,
    pub(crate) to_file: PathBuf,
    /// The children of the out-of-order module that hold `from` and `to`.
    pub(crate) lower: String,
    pub(crate) higher: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::Circle {
                target,
                members,
                steps,
            } => {
                let names: Vec<&str> = steps.iter().map(|(from, _, _)| from.as_str()).collect();
                writeln!(
                    f,
                    "import circle in {target} through {}; one way round: {} -> {}",
                    members.join(", "),
                    names.join(" -> "),
                    names[0]
                )?;
                for (from, to, site) in steps {
                    writeln!(
                        f,
                        "    {from} -> {to}: {}:{} names `{}`",
                        site.file.display(),
                        site.line,
                        site.path
                    )?;
                }
                Ok(())
            }
            Problem::Upward {
                target,
                file,
                imports,
                passing,
            } => {
                writeln!(
                    f,
                    "{}: modules of {target} declared out of layer order (lowest first); \
                     an import runs back up:",
                    file.display()
                )?;
                for i in imports {
                    writeln!(
                        f,
                        "    {}:{} (`{}`) names `{}` from `{}` ({}), but `{}` is declared before `{}`",
                        i.site.file.display(),
                        i.site.line,
                        i.from,
                        i.site.path,
                        i.to,
                        i.to_file.display(),
                        i.lower,
                        i.higher
                    )?;
                }
                match passing {
                    Ok(order) => writeln!(f, "    an order that passes: {}", order.join(", ")),
                    Err(knot) => writeln!(
                        f,
                        "    no order passes: {} import from one another; move what they share down",
                        knot.join(", ")
                    ),
                }
            }
            Problem::TooLong { file, lines } => writeln!(
                f,
                "{}: {lines} lines, over the limit of {MAX_LINES}: split it by concept",
                file.display()
            ),
            Problem::Undocumented { module, file } => writeln!(
                f,
                "{}: public module `{module}` has no `//!` doc saying what it holds",
                file.display()
            ),
        }
    }
}

/// `cargo xtask tidy [--print]`.
pub(crate) fn tidy(root: &Path, args: &[String]) -> Result<(), String> {
    let print = match args {
        [] => false,
        [flag] if flag == "--print" => true,
        _ => return Err("usage: cargo xtask tidy [--print]".into()),
    };
    // Paths are printed from the workspace root.
    std::env::set_current_dir(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let targets: Vec<Target> = workspace_targets(root)?
        .into_iter()
        .map(|t| Target {
            root: t
                .root
                .strip_prefix(root)
                .map_or(t.root.clone(), Path::to_path_buf),
            ..t
        })
        .collect();
    if print {
        for target in &targets {
            print!("{}", layer_picture(target)?);
        }
        return Ok(());
    }
    let mut problems = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    for target in &targets {
        problems.extend(check_target(target)?);
        if let Some(src) = src_dir(&target.root) {
            dirs.insert(src);
        }
    }
    for dir in &dirs {
        problems.extend(check_lengths(dir)?);
    }
    if problems.is_empty() {
        eprintln!(
            "tidy: {} crate targets, no import circle, modules declared lowest layer first, no file over {MAX_LINES} lines, every public module documented",
            targets.len()
        );
        return Ok(());
    }
    for problem in &problems {
        eprint!("tidy: {problem}");
    }
    Err(format!("tidy found {} problem(s)", problems.len()))
}

/// The `src/` directory a target root lives in.
fn src_dir(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "src"))
        .map(Path::to_path_buf)
}

/// Every library and binary target of the workspace members whose root is
/// under a `src/` directory, from `cargo metadata`.
fn workspace_targets(root: &Path) -> Result<Vec<Target>, String> {
    let out = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let mut targets = Vec::new();
    for package in meta["packages"].as_array().into_iter().flatten() {
        let package_name = package["name"].as_str().unwrap_or_default();
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str())
                .collect();
            if !kinds
                .iter()
                .any(|k| matches!(*k, "lib" | "bin" | "proc-macro"))
            {
                continue;
            }
            let path = PathBuf::from(target["src_path"].as_str().unwrap_or_default());
            if src_dir(&path).is_none() {
                continue;
            }
            let target_name = target["name"].as_str().unwrap_or_default();
            let name = if target_name.replace('_', "-") == package_name {
                package_name.to_owned()
            } else {
                format!("{package_name} ({target_name})")
            };
            targets.push(Target { name, root: path });
        }
    }
    targets.sort_by(|a, b| a.root.cmp(&b.root));
    Ok(targets)
}

/// The module-level checks of one target: circles and docs.
pub(crate) fn check_target(target: &Target) -> Result<Vec<Problem>, String> {
    let tree = Tree::read(&target.root)?;
    let edges = edges(&tree);
    let mut problems = Vec::new();
    for component in circles(tree.modules.len(), &edges) {
        let walk = one_circle(&component, &edges);
        let steps = walk
            .iter()
            .zip(walk.iter().cycle().skip(1))
            .map(|(&from, &to)| {
                (
                    module_name(&tree, from),
                    module_name(&tree, to),
                    edges[&(from, to)].clone(),
                )
            })
            .collect();
        problems.push(Problem::Circle {
            target: target.name.clone(),
            members: component.iter().map(|&m| module_name(&tree, m)).collect(),
            steps,
        });
    }
    problems.extend(upward_problems(target, &tree, &edges));
    for module in &tree.modules {
        if module.public && !module.documented {
            problems.push(Problem::Undocumented {
                module: display_path(&module.path),
                file: module
                    .declared
                    .as_ref()
                    .map_or(module.file.clone(), |(f, _)| f.clone()),
            });
        }
    }
    Ok(problems)
}

/// The imports of one target that run back up a declaration order, one
/// problem per module whose children are out of order.
fn upward_problems(target: &Target, tree: &Tree, edges: &graph::Edges) -> Vec<Problem> {
    let mut by_parent: std::collections::BTreeMap<usize, Vec<UpwardImport>> = Default::default();
    for up in order::upward(tree, edges) {
        by_parent.entry(up.parent).or_default().push(UpwardImport {
            from: module_name(tree, up.from),
            site: up.site,
            to: module_name(tree, up.to),
            to_file: tree.modules[up.to].file.clone(),
            lower: module_name(tree, up.lower),
            higher: module_name(tree, up.higher),
        });
    }
    by_parent
        .into_iter()
        .map(|(parent, imports)| {
            let names = |ms: Vec<usize>| -> Vec<String> {
                ms.into_iter().map(|m| module_name(tree, m)).collect()
            };
            Problem::Upward {
                target: target.name.clone(),
                file: tree.modules[parent].file.clone(),
                imports,
                passing: order::passing_order(tree, edges, parent)
                    .map(names)
                    .map_err(names),
            }
        })
        .collect()
}

/// Every `.rs` file under `dir` longer than [`MAX_LINES`].
pub(crate) fn check_lengths(dir: &Path) -> Result<Vec<Problem>, String> {
    let mut problems = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let lines = text.lines().count();
                if lines > MAX_LINES {
                    problems.push(Problem::TooLong { file: path, lines });
                }
            }
        }
    }
    problems.sort_by(|a, b| format!("{a}").cmp(&format!("{b}")));
    Ok(problems)
}

/// One target's modules in their layers, top first, as text.
pub(crate) fn layer_picture(target: &Target) -> Result<String, String> {
    let tree = Tree::read(&target.root)?;
    let edges = edges(&tree);
    let layer = layers(tree.modules.len(), &edges);
    let top = layer.iter().copied().max().unwrap_or(0);
    let mut out = format!("{}\n", target.name);
    for l in (0..=top).rev() {
        let mut names: Vec<String> = (0..tree.modules.len())
            .filter(|&m| layer[m] == l)
            .map(|m| module_name(&tree, m))
            .collect();
        if names.is_empty() {
            continue;
        }
        names.sort();
        let _ = writeln!(out, "  {l}  {}", names.join(", "));
    }
    Ok(out)
}

fn module_name(tree: &Tree, module: usize) -> String {
    display_path(&tree.modules[module].path)
}

fn display_path(path: &[String]) -> String {
    if path.is_empty() {
        "(root)".into()
    } else {
        path.join("::")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (path, text) under a fresh directory; returns it.
    fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn check(dir: &tempfile::TempDir) -> Vec<Problem> {
        let target = Target {
            name: "fixture".into(),
            root: dir.path().join("src/lib.rs"),
        };
        check_target(&target).unwrap()
    }

    fn circle_names(problems: &[Problem]) -> Vec<Vec<String>> {
        problems
            .iter()
            .filter_map(|p| match p {
                Problem::Circle { steps, .. } => {
                    Some(steps.iter().map(|(from, _, _)| from.clone()).collect())
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn one_way_imports_pass() {
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\nmod b;\nmod a;\npub use a::A;\n",
            ),
            ("src/a.rs", "use crate::b::B;\npub struct A(B);\n"),
            ("src/b.rs", "pub struct B;\n"),
        ]);
        assert_eq!(check(&dir), vec![]);
    }

    #[test]
    fn a_circle_through_use_items_fails_and_says_where() {
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            ("src/b.rs", "\n\nuse super::a::A;\npub struct B;\n"),
        ]);
        let problems = check(&dir);
        assert_eq!(circle_names(&problems), vec![vec!["a", "b"]]);
        let text = problems[0].to_string();
        assert!(text.contains("a -> b -> a"), "{text}");
        assert!(text.contains("b.rs:3 names `super::a::A`"), "{text}");
        assert!(text.contains("a.rs:1 names `crate::b::B`"), "{text}");
    }

    #[test]
    fn paths_in_code_and_in_macros_count() {
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\n"),
            ("src/a.rs", "pub fn f() { crate::b::g(); }\n"),
            (
                "src/b.rs",
                "pub fn g() { tokio::select! { _ = x => crate::a::f() } }\n",
            ),
        ]);
        assert_eq!(circle_names(&check(&dir)), vec![vec!["a", "b"]]);
    }

    #[test]
    fn re_exports_resolve_to_the_defining_module() {
        // `crate::Error` is defined in `error`; `lib.rs` only re-exports it,
        // so `error` and `client` do not form a circle with the root.
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\nmod error;\nmod client;\npub use client::Client;\npub use error::Error;\n",
            ),
            (
                "src/client.rs",
                "use crate::Error;\npub struct Client(Error);\n",
            ),
            ("src/error.rs", "pub struct Error;\n"),
        ]);
        assert_eq!(check(&dir), vec![]);
        // But an item the root defines itself and a child uses is an edge
        // back up: the root imports the child, the child the root.
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\nmod client;\npub use client::Client;\npub const MAX: usize = 1;\n",
            ),
            ("src/client.rs", "pub struct Client([u8; crate::MAX]);\n"),
        ]);
        assert_eq!(circle_names(&check(&dir)), vec![vec!["(root)", "client"]]);
    }

    #[test]
    fn a_longer_circle_is_found_through_a_child_module_re_export() {
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\nmod c;\n"),
            ("src/a.rs", "use crate::b::X;\n"),
            ("src/b/mod.rs", "mod inner;\npub use inner::X;\n"),
            ("src/b/inner.rs", "use crate::c::Y;\npub struct X;\n"),
            (
                "src/c.rs",
                "pub struct Y;\nfn f() { let _ = crate::a::g; }\n",
            ),
        ]);
        let circles = circle_names(&check(&dir));
        assert_eq!(circles.len(), 1);
        assert_eq!(circles[0], vec!["a", "b::inner", "c"]);
    }

    #[test]
    fn test_only_code_is_left_out() {
        // `b` is declared first, so its test code importing `a` would also
        // run back up the declaration order if it counted.
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod b;\nmod a;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            (
                "src/b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n#[cfg(all(test, unix))]\nfn t() { crate::a::A; }\n#[cfg(doctest)]\nmod docs { fn d() { crate::a::A; } }\n",
            ),
        ]);
        assert_eq!(check(&dir), vec![]);
    }

    fn upward(problems: &[Problem]) -> Vec<(PathBuf, Vec<UpwardImport>, Passing)> {
        problems
            .iter()
            .filter_map(|p| match p {
                Problem::Upward {
                    file,
                    imports,
                    passing,
                    ..
                } => Some((file.clone(), imports.clone(), passing.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn modules_declared_lowest_layer_first_pass() {
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\nmod low;\nmod mid;\nmod top;\npub use low::L;\npub use top::T;\n",
            ),
            ("src/low.rs", "pub struct L;\n"),
            (
                "src/mid/mod.rs",
                "//! Mid.\nmod base;\nmod over;\npub use over::M;\n",
            ),
            ("src/mid/base.rs", "use crate::low::L;\npub struct B(L);\n"),
            (
                "src/mid/over.rs",
                "use super::base::B;\npub struct M(B, crate::L);\n",
            ),
            // Through the root's re-export of `low`'s item: not back up.
            (
                "src/top.rs",
                "use crate::mid::M;\nuse crate::L;\npub struct T(M, L);\n",
            ),
        ]);
        assert_eq!(check(&dir), vec![]);
    }

    #[test]
    fn an_import_back_up_the_declaration_order_fails_and_says_where() {
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\nmod c;\n"),
            (
                "src/a.rs",
                "pub struct A;\n\npub fn f() { crate::b::g(); }\n",
            ),
            ("src/b.rs", "pub fn g() {}\n"),
            ("src/c.rs", "use crate::a::A;\n"),
        ]);
        let problems = check(&dir);
        let found = upward(&problems);
        assert_eq!(found.len(), 1, "{problems:?}");
        let (file, imports, passing) = &found[0];
        assert!(file.ends_with("src/lib.rs"), "{file:?}");
        assert_eq!(imports.len(), 1);
        assert_eq!((&*imports[0].from, &*imports[0].to), ("a", "b"));
        assert_eq!(passing, &Ok(vec!["b".into(), "a".into(), "c".into()]));
        let text = problems[0].to_string();
        assert!(
            text.contains("src/lib.rs: modules of fixture declared out of layer order"),
            "{text}"
        );
        assert!(
            text.contains("a.rs:3 (`a`) names `crate::b::g` from `b`"),
            "{text}"
        );
        assert!(
            text.contains("b.rs), but `a` is declared before `b`"),
            "{text}"
        );
        assert!(text.contains("an order that passes: b, a, c"), "{text}");
    }

    #[test]
    fn the_rule_holds_in_folders_and_between_them() {
        // Inside a folder: `mod.rs` declares `x` before `y`, and `x` imports `y`.
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod f;\n"),
            ("src/f/mod.rs", "mod x;\nmod y;\n"),
            ("src/f/x.rs", "use super::y::Y;\n"),
            ("src/f/y.rs", "pub struct Y;\n"),
        ]);
        let found = upward(&check(&dir));
        assert_eq!(found.len(), 1);
        assert!(found[0].0.ends_with("src/f/mod.rs"));
        assert_eq!(
            (&*found[0].1[0].lower, &*found[0].1[0].higher),
            ("f::x", "f::y")
        );
        // Between folders: a module deep in the lower folder names one deep
        // in the higher folder; the two folders are the siblings named.
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod low;\nmod high;\n"),
            ("src/low/mod.rs", "mod inner;\n"),
            ("src/low/inner.rs", "fn f() { crate::high::deep::g(); }\n"),
            ("src/high/mod.rs", "pub(crate) mod deep;\n"),
            ("src/high/deep.rs", "pub fn g() {}\n"),
        ]);
        let found = upward(&check(&dir));
        assert_eq!(found.len(), 1);
        let import = &found[0].1[0];
        assert!(found[0].0.ends_with("src/lib.rs"));
        assert_eq!(
            (&*import.from, &*import.to, &*import.lower, &*import.higher),
            ("low::inner", "high::deep", "low", "high")
        );
        assert!(import.to_file.ends_with("src/high/deep.rs"));
    }

    #[test]
    fn folders_that_import_from_each_other_have_no_passing_order() {
        // No module circle, but the folders `a` and `b` each hold a module
        // that imports from the other folder: no order of the two passes.
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\n"),
            ("src/a/mod.rs", "mod x;\nmod w;\n"),
            ("src/a/x.rs", "use crate::b::y::Y;\n"),
            ("src/a/w.rs", "pub struct W;\n"),
            ("src/b/mod.rs", "pub(crate) mod y;\nmod z;\n"),
            ("src/b/y.rs", "pub struct Y;\n"),
            ("src/b/z.rs", "use crate::a::w::W;\n"),
        ]);
        let problems = check(&dir);
        assert_eq!(circle_names(&problems), Vec::<Vec<String>>::new());
        let found = upward(&problems);
        assert_eq!(found.len(), 1, "{problems:?}");
        assert_eq!(found[0].2, Err(vec!["a".into(), "b".into()]));
        assert!(
            problems[0]
                .to_string()
                .contains("no order passes: a, b import from one another")
        );
    }

    #[test]
    fn public_modules_need_a_doc() {
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\npub mod documented;\npub mod bare;\nmod private;\n/// On the declaration.\npub mod declared;\n",
            ),
            ("src/documented.rs", "//! Holds things.\n"),
            ("src/bare.rs", "// A comment is not a doc.\npub struct S;\n"),
            ("src/private.rs", "pub struct P;\n"),
            ("src/declared.rs", "pub struct D;\n"),
        ]);
        let problems = check(&dir);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(matches!(&problems[0], Problem::Undocumented { module, .. } if module == "bare"));
        // The crate root is public too.
        let dir = fixture(&[("src/lib.rs", "mod a;\n"), ("src/a.rs", "")]);
        assert!(
            matches!(&check(&dir)[..], [Problem::Undocumented { module, .. }] if module == "(root)")
        );
    }

    #[test]
    fn long_files_fail() {
        let long = "// line\n".repeat(MAX_LINES + 1);
        let ok = "// line\n".repeat(MAX_LINES);
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod deep;\n"),
            ("src/deep/mod.rs", &long),
            ("src/ok.rs", &ok),
        ]);
        let problems = check_lengths(&dir.path().join("src")).unwrap();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            matches!(&problems[0], Problem::TooLong { file, lines } if file.ends_with("deep/mod.rs") && *lines == MAX_LINES + 1)
        );
    }

    #[test]
    fn layers_put_each_module_above_what_it_imports() {
        let dir = fixture(&[
            (
                "src/lib.rs",
                "//! A crate.\nmod top;\nmod mid;\nmod low;\npub use top::T;\n",
            ),
            (
                "src/top.rs",
                "use crate::mid::M;\nuse crate::low::L;\npub struct T;\n",
            ),
            ("src/mid.rs", "use crate::low::L;\npub struct M;\n"),
            ("src/low.rs", "pub struct L;\n"),
        ]);
        let target = Target {
            name: "fixture".into(),
            root: dir.path().join("src/lib.rs"),
        };
        let picture = layer_picture(&target).unwrap();
        assert_eq!(
            picture,
            "fixture\n  3  (root)\n  2  top\n  1  mid\n  0  low\n"
        );
    }
}
