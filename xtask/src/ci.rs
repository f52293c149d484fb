//! `cargo xtask ci`: every check CI runs, in order, each step timed; the
//! times are printed again at the end, so a slow step shows in the log.

use std::path::Path;
use std::time::Instant;

use crate::cmd::{DEMO_SERVER_ENV, cargo, run, target_dir};
use crate::{api, conformance, cross, faults, fuzz, interop, mutants, package, servers, tidy};

/// The steps run so far, with how long each took.
struct Timed {
    steps: Vec<(&'static str, u64)>,
}

impl Timed {
    /// Runs one step and records its time, also when it fails.
    fn step(
        &mut self,
        name: &'static str,
        f: impl FnOnce() -> Result<(), String>,
    ) -> Result<(), String> {
        let start = Instant::now();
        let result = f();
        let secs = start.elapsed().as_secs();
        eprintln!("ci: {name}: {secs} s");
        self.steps.push((name, secs));
        result
    }

    /// Runs one of our own commands as a step: `cargo xtask NAME ARGS`.
    fn xtask(
        &mut self,
        name: &'static str,
        args: &[&str],
        command: fn(&Path, &[String]) -> Result<(), String>,
        root: &Path,
    ) -> Result<(), String> {
        self.step(name, || {
            eprintln!(
                "$ cargo xtask {}",
                [name]
                    .iter()
                    .chain(args)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            command(root, &args)
        })
    }

    fn print(&self) {
        let total: u64 = self.steps.iter().map(|(_, s)| s).sum();
        eprintln!("ci: steps (seconds), {total} s in all:");
        for (name, secs) in &self.steps {
            eprintln!("  {secs:>6}  {name}");
        }
    }
}

pub(crate) fn ci(root: &Path) -> Result<(), String> {
    let mut timed = Timed { steps: Vec::new() };
    let result = steps(root, &mut timed);
    timed.print();
    result
}

fn steps(root: &Path, t: &mut Timed) -> Result<(), String> {
    t.step("fmt", || run(cargo().args(["fmt", "--all", "--check"])))?;
    // Cheap, so early: the module rules before anything is compiled.
    t.xtask("tidy", &[], tidy::tidy, root)?;
    t.xtask("api", &[], api::api, root)?;
    // Every feature: the facade's `http` code and the feature-gated tests
    // and doctests (the README's) are built and checked too.
    t.step("clippy", || {
        run(cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]))
    })?;
    let mut dir = None;
    t.step("servers", || {
        dir = Some(servers::install(root)?);
        Ok(())
    })?;
    let dir = dir.expect("set by the step above");
    // The real-server tests are ignored by default (a plain `cargo test`
    // must not report them as passed without running them); here the
    // servers are installed, so every test runs. The tests that spawn the
    // demo server take the one this build makes (cargo builds every
    // program before it runs a test) rather than each building it with a
    // feature resolution of its own (30 s of CI).
    let demo = target_dir(root).join("debug").join(format!(
        "mcpwire-demo-server{}",
        std::env::consts::EXE_SUFFIX
    ));
    t.step("test", || {
        run(cargo()
            .args(["test", "--workspace", "--all-targets", "--all-features"])
            .args(["--", "--include-ignored"])
            .env(servers::DIR_ENV, &dir)
            .env(DEMO_SERVER_ENV, &demo))
    })?;
    t.step("doctests", || {
        run(cargo().args(["test", "--workspace", "--doc", "--all-features"]))
    })?;
    // The facade without `ws` (on everywhere above): a WebSocket entry of a
    // configuration file stays a typed unsupported-transport error.
    t.step("facade without ws", || {
        run(cargo().args([
            "test",
            "-p",
            "mcpwire",
            "--features",
            "config",
            "--test",
            "from_config",
        ]))
    })?;
    t.step("deny", || {
        run(cargo().args(["deny", "check", "licenses", "bans", "sources"]))
    })?;
    t.xtask("package", &[], package::package, root)?;
    // Misbehaving peers, then a short soak (the long one is run by hand:
    // `cargo xtask soak --minutes N`).
    t.xtask("faults", &[], faults::faults, root)?;
    t.xtask("soak", &["--cycles", "200"], faults::soak, root)?;
    // Every fuzz target for a few seconds, from a dev build without a
    // sanitizer (`--smoke`: the optimised sanitizer build of every
    // dependency costs three times the CPU). The five-minute runs are made
    // by hand and reported in docs/reliability.md.
    t.xtask(
        "fuzz",
        &["--all", "--seconds", "10", "--smoke"],
        fuzz::fuzz,
        root,
    )?;
    // After the tests: the official conformance suite and real servers.
    t.xtask("conformance", &[], conformance::conformance, root)?;
    t.xtask("interop", &[], interop::interop, root)?;
    // Windows and macOS: type-checks, then the Windows tests under Wine.
    t.xtask("cross", &[], cross::cross, root)?;
    // Last, because it edits sources in place (restoring each): the
    // mutants of the library lines changed since the commit in
    // `xtask/mutants-base`, a sample that fits about 8 minutes; a missed
    // one not in `xtask/mutants-allow.txt` fails.
    t.step("mutants", || mutants::ci(root))
}
