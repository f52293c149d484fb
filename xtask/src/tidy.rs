//! `cargo xtask tidy`: the house rules of `STYLE.md` as a check, in the
//! manner of rust-analyzer's tidy tests. For the `src/` of every workspace
//! crate (xtask included) it fails on
//!
//! - an import circle between modules of one crate target (each `use` and
//!   each path in code is resolved, through re-exports, to the module that
//!   defines what it names; `#[cfg(test)]` and `#[cfg(doctest)]` code is
//!   left out),
//! - a source file over [`MAX_LINES`] lines,
//! - a public module (`pub mod`, or the crate root) without a `//!` doc,
//!
//! and prints what it found and where. `cargo xtask tidy --print` prints
//! each crate's modules in their layers instead (top layer first), the
//! picture `docs/architecture.md` shows.

mod graph;
mod tree;

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
    /// A source file over the limit.
    TooLong { file: PathBuf, lines: usize },
    /// A public module without a `//!` doc.
    Undocumented { module: String, file: PathBuf },
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
            "tidy: {} crate targets, no import circle, no file over {MAX_LINES} lines, every public module documented",
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
                "//! A crate.\nmod a;\nmod b;\npub use a::A;\n",
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
                "//! A crate.\nmod client;\nmod error;\npub use client::Client;\npub use error::Error;\n",
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
        let dir = fixture(&[
            ("src/lib.rs", "//! A crate.\nmod a;\nmod b;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            (
                "src/b.rs",
                "pub struct B;\n#[cfg(test)]\nmod tests { use crate::a::A; }\n#[cfg(all(test, unix))]\nfn t() { crate::a::A; }\n#[cfg(doctest)]\nmod docs { fn d() { crate::a::A; } }\n",
            ),
        ]);
        assert_eq!(check(&dir), vec![]);
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
