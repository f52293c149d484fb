//! `cargo xtask mutants [CRATE...] [--diff BASE] [--sample N] [--shard K/N]
//! [--fresh] [-- ARGS...]`: mutation testing with cargo-mutants
//! (crates.io), which changes the code one small way at a time (a
//! condition negated, an operator swapped, a body replaced by a default)
//! and runs the crate's tests on each change. A change no test notices
//! ("missed") is behaviour no test holds.
//!
//! `CRATE` is a directory name under `crates/` from [`CRATES`] (the
//! library crates, and the CLI for its argument typing); none means all of
//! them, one after another. Each crate's mutants are tested against that
//! crate's own tests. `ARGS` go to `cargo mutants` as they are (`-j 1`,
//! `--file src/retry.rs`, `--re 'fn replay'`, `--in-place`, `--list`...).
//!
//! - `--diff BASE`: only the lines changed since the commit `BASE`
//!   (`git diff BASE` of the selected crates' `src/`, given to
//!   cargo-mutants' `--in-diff`); a crate the diff does not touch is
//!   skipped.
//! - `--sample N`: at most about `N` mutants in all: when there are more,
//!   every crate runs the same round-robin shard `K/S`, `S` the number of
//!   `N`-sized slices and `K` picked from the commit id of `BASE` (of
//!   `HEAD` without `--diff`), so every commit since one base tests the
//!   same mutants (checkable before CI runs), and the next base others.
//! - `--shard K/N`: one shard of each crate's mutants (cargo-mutants'
//!   round-robin sharding), for splitting a full run into resumable parts.
//!
//! Results go to `target/mutants/CRATE/` (below it `diff-BASE/` with
//! `--diff`, `sel-HASH/` for a run narrowed by `--file`, `--re`... and
//! `shard-K-of-N/` for a shard):
//! cargo-mutants' `mutants.out/` (`missed.txt`, `caught.txt`,
//! `outcomes.json`...), and a `done` file once the run finished. Running
//! the same command again skips what is done and resumes what is not
//! (cargo-mutants' `--iterate`: mutants already caught are not tested
//! again); `--fresh` starts over.
//!
//! A missed mutant fails the command unless `xtask/mutants-allow.txt`
//! names it, with a reason (an equivalent mutant: one no test can tell
//! from the original). A timeout (the tests hung past their limit) is a
//! mutant the tests noticed, so it is reported, not failed. If
//! `cargo mutants` is missing it is installed first.
//!
//! Speed: `cargo nextest` runs the tests when installed. Without
//! `--in-place`, cargo-mutants builds a copy of the tree; its builds go to
//! `target/mutants/build` without debug information, so the dependencies
//! are compiled once across runs. With `--in-place` (CI, a throwaway
//! clone) the workspace's own warm `target/` is used as it is.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::cmd::{cargo, display, run};

/// The crates mutants run on: directory under `crates/`, and package name.
const CRATES: &[(&str, &str)] = &[
    ("codec", "mcpwire-codec"),
    ("transport-core", "mcpwire-transport"),
    ("transport-stdio", "mcpwire-stdio"),
    ("transport-http", "mcpwire-http"),
    ("schema", "mcpwire-schema"),
    ("client", "mcpwire-client"),
    ("auth", "mcpwire-auth"),
    ("config", "mcpwire-config"),
    ("manager", "mcpwire-manager"),
    ("serve", "mcpwire-serve"),
    ("cli", "mcpwire-cli"),
];

/// The outcome files cargo-mutants writes, one mutant a line.
/// `previously_caught` lists, in a resumed run, what earlier runs caught or
/// found unviable (cargo-mutants does not tell those two apart).
const OUTCOMES: &[&str] = &[
    "caught",
    "missed",
    "unviable",
    "timeout",
    "previously_caught",
];

/// Equivalent mutants, each with its reason.
const ALLOW_LIST: &str = "xtask/mutants-allow.txt";

/// The parsed command line.
#[derive(Debug, Default)]
struct Opts {
    crates: Vec<(&'static str, &'static str)>,
    diff: Option<String>,
    sample: Option<usize>,
    shard: Option<(usize, usize)>,
    fresh: bool,
    theirs: Vec<String>,
}

fn usage() -> String {
    let names: Vec<&str> = CRATES.iter().map(|(dir, _)| *dir).collect();
    format!(
        "usage: cargo xtask mutants [{}]... [--diff BASE] [--sample N] [--shard K/N] [--fresh] \
         [-- CARGO_MUTANTS_ARGS...]",
        names.join("|")
    )
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let (ours, theirs) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (args, &[][..]),
    };
    let mut opts = Opts {
        theirs: theirs.to_vec(),
        ..Opts::default()
    };
    let mut it = ours.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().cloned().ok_or_else(usage);
        match arg.as_str() {
            "--diff" => opts.diff = Some(value()?),
            "--sample" => {
                let n = value()?;
                let n = n
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--sample {n}: not a positive count"))?;
                opts.sample = Some(n);
            }
            "--shard" => opts.shard = Some(parse_shard(&value()?)?),
            "--fresh" => opts.fresh = true,
            name => {
                let krate = CRATES
                    .iter()
                    .find(|(dir, _)| *dir == name)
                    .ok_or_else(usage)?;
                opts.crates.push(*krate);
            }
        }
    }
    if opts.crates.is_empty() {
        opts.crates = CRATES.to_vec();
    }
    if opts.sample.is_some() && opts.shard.is_some() {
        return Err("--sample picks its own shard: give one of --sample and --shard".into());
    }
    Ok(opts)
}

/// `K/N` with `K < N`.
fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {text}: expected K/N with 0 <= K < N");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if k < n { Ok((k, n)) } else { Err(bad()) }
}

/// The commit `cargo xtask ci` tests changes since: the last landed commit
/// before the current stop's work, written in `xtask/mutants-base` (the
/// lead moves it forward when a stop's work is merged).
const CI_BASE: &str = "xtask/mutants-base";

/// How many mutants CI tests: a sample that fits about 8 minutes on a
/// two-core machine (each mutant rebuilds a crate and its dependents' tests
/// and runs the crate's tests).
pub(crate) const CI_SAMPLE: usize = 8;

/// CI's step: the mutants of the library lines changed since [`CI_BASE`],
/// a sample of [`CI_SAMPLE`], tested in place (CI's clone is thrown away,
/// and its `target/` is warm from the tests, built with every feature as
/// here), with no baseline run (the tests just passed), a fixed
/// per-mutant limit, and no doctests (each would compile an example per
/// mutant). A missed mutant not in the allow-list fails it.
pub(crate) fn ci(root: &Path) -> Result<(), String> {
    let path = root.join(CI_BASE);
    let base = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let base = base.trim();
    if base.len() != 40 || !base.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{}: expected a full commit id, got {base:?}",
            path.display()
        ));
    }
    let args: Vec<String> = [
        "--diff",
        base,
        "--sample",
        &CI_SAMPLE.to_string(),
        "--",
        "--in-place",
        "--baseline",
        "skip",
        "--timeout",
        "120",
        "--build-timeout",
        "600",
        "--all-features",
        "--",
        "--tests",
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect();
    eprintln!("$ cargo xtask mutants {}", args.join(" "));
    mutants(root, &args)
}

/// Parses the arguments after `mutants` and runs cargo-mutants per crate.
pub(crate) fn mutants(root: &Path, args: &[String]) -> Result<(), String> {
    let mut opts = parse(args)?;
    let allow = read_allow_list(&root.join(ALLOW_LIST))?;
    ensure_cargo_mutants()?;
    let base = root.join("target").join("mutants");
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;

    let diff = match &opts.diff {
        Some(rev) => {
            let (file, touched) = write_diff(root, &base, rev, &opts.crates)?;
            opts.crates.retain(|(dir, _)| touched.contains(dir));
            if opts.crates.is_empty() {
                eprintln!("mutants: no change in {} since {rev}", crate_list());
                return Ok(());
            }
            Some(file)
        }
        None => None,
    };
    if let Some(n) = opts.sample {
        opts.shard = sample_shard(root, &opts, diff.as_deref(), n)?;
    }

    // A listing tests nothing: no results to count, nothing done.
    let listing = opts
        .theirs
        .iter()
        .any(|a| a == "--list" || a == "--list-files");
    let mut summaries = Vec::new();
    let mut failures = Vec::new();
    for (dir, package) in &opts.crates {
        let mut out = base.join(dir);
        if let Some(rev) = &opts.diff {
            out.push(format!("diff-{}", rev.get(..12).unwrap_or(rev)));
        }
        if let Some(label) = selection_label(&opts.theirs) {
            out.push(label);
        }
        if let Some((k, n)) = opts.shard {
            out.push(format!("shard-{k}-of-{n}"));
        }
        if listing {
            let cmd = mutants_command(root, package, &out, &opts, diff.as_deref(), false);
            run_one(cmd, &out)?;
            continue;
        }
        // A run that stopped before its end is resumed: cargo-mutants'
        // `--iterate` skips what it caught already.
        let resume = !opts.fresh && out.join("mutants.out").join("caught.txt").exists();
        // What the run was: the command (without `--iterate`, so that a
        // resumed run finishes the same run), and the diff it read (the
        // same `--diff BASE` names other lines once HEAD moves).
        let cmd = mutants_command(root, package, &out, &opts, diff.as_deref(), false);
        let mut key = display(&cmd);
        if let Some(diff) = &diff {
            let text = std::fs::read(diff).unwrap_or_default();
            key.push_str(&format!("\ndiff {:016x}", fnv(&text)));
        }
        let done = out.join("done");
        if !opts.fresh && std::fs::read_to_string(&done).is_ok_and(|k| k == key) {
            eprintln!(
                "$ {key}\n  already done ({}; --fresh to run it again)",
                done.display()
            );
        } else {
            let cmd = mutants_command(root, package, &out, &opts, diff.as_deref(), resume);
            run_one(cmd, &out)?;
            std::fs::write(&done, &key)
                .map_err(|e| format!("cannot write {}: {e}", done.display()))?;
        }
        let results = out.join("mutants.out");
        let counts = count_outcomes(&results);
        let line = OUTCOMES
            .iter()
            .zip(&counts)
            .map(|(name, n)| format!("{n} {name}"))
            .collect::<Vec<_>>()
            .join(", ");
        summaries.push(format!("{dir}: {line}"));
        for missed in outcome_lines(&results, "missed") {
            match allow.get(&mutant_key(&missed)) {
                Some(reason) => eprintln!("  missed, allowed: {missed} ({reason})"),
                None => {
                    eprintln!("  MISSED {missed}");
                    failures.push(missed);
                }
            }
        }
        for timeout in outcome_lines(&results, "timeout") {
            eprintln!("  timeout (counted as caught): {timeout}");
        }
    }
    eprintln!("\nmutants per crate:");
    for s in &summaries {
        eprintln!("  {s}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} mutants missed and not in {ALLOW_LIST} (see above): add a test that \
             catches each, or an allow-list line with the reason it is equivalent",
            failures.len()
        ))
    }
}

/// A directory name for a run narrowed by cargo-mutants' own filters
/// (`--file`, `--re`...), so that runs of different parts of a crate keep
/// their own results and resume separately: `sel-` and a hash of the
/// arguments. `None` for a whole-crate run.
fn selection_label(theirs: &[String]) -> Option<String> {
    const FILTERS: &[&str] = &[
        "--file",
        "-f",
        "--exclude",
        "-e",
        "--re",
        "-F",
        "--exclude-re",
        "-E",
        "--in-diff",
        "-D",
    ];
    let narrowed = theirs.iter().any(|a| {
        FILTERS
            .iter()
            .any(|f| a == f || a.starts_with(&format!("{f}=")))
    });
    if !narrowed {
        return None;
    }
    Some(format!(
        "sel-{:08x}",
        fnv(theirs.join("\0").as_bytes()) >> 32
    ))
}

/// FNV-1a: stable across runs and Rust versions, unlike `DefaultHasher`.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn crate_list() -> String {
    CRATES
        .iter()
        .map(|(dir, _)| *dir)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `cargo mutants` command of one crate.
fn mutants_command(
    root: &Path,
    package: &str,
    out: &Path,
    opts: &Opts,
    diff: Option<&Path>,
    resume: bool,
) -> Command {
    let theirs = &opts.theirs;
    let given = |flag: &str| {
        theirs
            .iter()
            .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
    };
    let mut cmd = cargo();
    cmd.args(["mutants", "--package", package, "--output"])
        .arg(out)
        .current_dir(root);
    if let Some(diff) = diff {
        cmd.arg("--in-diff").arg(diff);
    }
    if let Some((k, n)) = opts.shard {
        cmd.args(["--shard", &format!("{k}/{n}"), "--sharding", "round-robin"]);
    }
    if !given("--test-tool") && nextest_installed() {
        cmd.args(["--test-tool", "nextest"]);
    }
    // A test that hangs under a mutant waits this long at least: the
    // automatic limit (five times the baseline) is too tight on a loaded
    // two-core machine, where a baseline of 2 s says little.
    if !given("--timeout") && !given("--minimum-test-timeout") {
        cmd.args(["--minimum-test-timeout", "60"]);
    }
    if !given("--in-place") {
        cmd.env("CARGO_TARGET_DIR", root.join("target/mutants/build"))
            .env("CARGO_PROFILE_DEV_DEBUG", "0");
    }
    cmd.args(their_args(theirs, resume));
    cmd
}

/// The arguments given after our `--`, with `--iterate` added when the
/// run resumes. cargo-mutants reads its own options before the first `--`
/// in them and hands what follows to the test tool, so `--iterate` goes
/// before that `--`: after it, nextest would get an option it does not
/// know, every test run would fail, and every mutant would count as
/// caught.
fn their_args(theirs: &[String], resume: bool) -> Vec<String> {
    let mut args = theirs.to_vec();
    if resume {
        let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
        args.insert(at, "--iterate".to_owned());
    }
    args
}

/// Runs one crate's cargo-mutants into `out`.
fn run_one(mut cmd: Command, out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    eprintln!("$ {}", display(&cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run `{}`: {e}", display(&cmd)))?;
    // cargo-mutants: 0 all caught, 2 some missed, 3 some timed out;
    // anything else (a failing baseline, bad arguments) is an error.
    match status.code() {
        Some(0 | 2 | 3) => Ok(()),
        _ => Err(format!("`{}` failed: {status}", display(&cmd))),
    }
}

fn nextest_installed() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Writes `git diff BASE` of the selected crates' sources to a file;
/// returns it and the crates the diff touches.
fn write_diff(
    root: &Path,
    out: &Path,
    rev: &str,
    crates: &[(&str, &str)],
) -> Result<(PathBuf, Vec<&'static str>), String> {
    let mut git = Command::new("git");
    git.args(["diff", "--no-color", "--no-ext-diff", rev, "--"])
        .args(crates.iter().map(|(dir, _)| format!("crates/{dir}/src")))
        .current_dir(root);
    eprintln!("$ {}", display(&git));
    let output = git
        .output()
        .map_err(|e| format!("cannot run `{}`: {e}", display(&git)))?;
    if !output.status.success() {
        return Err(format!(
            "`{}` failed ({}): is {rev} a commit of this clone?\n{}",
            display(&git),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let touched = touched_crates(&text);
    let file = out.join("diff.patch");
    std::fs::write(&file, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok((file, touched))
}

/// The crates of [`CRATES`] whose sources a unified diff changes.
fn touched_crates(diff: &str) -> Vec<&'static str> {
    CRATES
        .iter()
        .map(|(dir, _)| *dir)
        .filter(|dir| {
            let prefix = format!("+++ b/crates/{dir}/src/");
            diff.lines().any(|l| l.starts_with(&prefix))
        })
        .collect()
}

/// The shard that holds about `n` of the selected mutants, or `None` if
/// there are no more than `n`.
fn sample_shard(
    root: &Path,
    opts: &Opts,
    diff: Option<&Path>,
    n: usize,
) -> Result<Option<(usize, usize)>, String> {
    let mut total = 0;
    for (_, package) in &opts.crates {
        let mut cmd = cargo();
        cmd.args(["mutants", "--list", "--package", package])
            .current_dir(root);
        if let Some(diff) = diff {
            cmd.arg("--in-diff").arg(diff);
        }
        eprintln!("$ {}", display(&cmd));
        let output = cmd
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run `{}`: {e}", display(&cmd)))?;
        if !output.status.success() {
            return Err(format!("`{}` failed: {}", display(&cmd), output.status));
        }
        total += String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count();
    }
    // With `--diff BASE` the sample is chosen by BASE: every commit of a
    // stop's work tests the same mutants (the sample can be checked before
    // the work is submitted, and a commit that touches no code cannot turn
    // CI red), and the next stop, with a new base, others.
    let seed = git_rev(root, opts.diff.as_deref().unwrap_or("HEAD"))?;
    let shard = pick_shard(total, n, &seed);
    match shard {
        Some((k, s)) => eprintln!("mutants: {total} in all; sample: shard {k}/{s} (from {seed})"),
        None => eprintln!("mutants: {total} in all; every one is tested"),
    }
    Ok(shard)
}

/// `Some((k, s))` when `total` exceeds `n`: `s` shards of at most about
/// `n` each, and `k` from the commit id `head`.
fn pick_shard(total: usize, n: usize, head: &str) -> Option<(usize, usize)> {
    if total <= n {
        return None;
    }
    let shards = total.div_ceil(n);
    let seed = u64::from_str_radix(head.get(..12).unwrap_or(head), 16).unwrap_or(0);
    let k = usize::try_from(seed % shards as u64).expect("below a usize count");
    Some((k, shards))
}

/// The full commit id `rev` names.
fn git_rev(root: &Path, rev: &str) -> Result<String, String> {
    let out = Command::new("git")
        .args(["rev-parse", rev])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(format!("`git rev-parse {rev}` failed: {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The allow-list: mutant (as [`mutant_key`] writes it) to its reason.
fn read_allow_list(path: &Path) -> Result<BTreeMap<String, String>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_allow_list(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Lines `MUTANT # REASON`, `MUTANT` as cargo-mutants names it (its line
/// and column may be left out: they move with every edit above it);
/// blank lines and lines starting with `#` are comments.
fn parse_allow_list(text: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (mutant, reason) = line
            .rsplit_once(" # ")
            .map(|(m, r)| (m.trim(), r.trim()))
            .filter(|(_, r)| !r.is_empty())
            .ok_or_else(|| format!("line {}: no `# reason` after the mutant", i + 1))?;
        out.insert(mutant_key(mutant), reason.to_owned());
    }
    Ok(out)
}

/// A mutant's name without its line and column:
/// `crates/x/src/y.rs:12:5: replace a with b` is `crates/x/src/y.rs: replace a with b`.
fn mutant_key(name: &str) -> String {
    let Some((file, rest)) = name.split_once(':') else {
        return name.to_owned();
    };
    let mut rest = rest;
    for _ in 0..2 {
        match rest.split_once(':') {
            Some((n, tail)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                rest = tail;
            }
            _ => break,
        }
    }
    format!("{file}:{rest}")
}

/// How many mutants ended in each of [`OUTCOMES`] (0 where the file is
/// missing, e.g. with `--list`).
fn count_outcomes(dir: &Path) -> Vec<usize> {
    OUTCOMES
        .iter()
        .map(|name| outcome_lines(dir, name).len())
        .collect()
}

fn outcome_lines(dir: &Path, outcome: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(format!("{outcome}.txt")))
        .map(|text| {
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// Installs cargo-mutants unless `cargo mutants --version` already works.
fn ensure_cargo_mutants() -> Result<(), String> {
    eprintln!("$ cargo mutants --version");
    let present = cargo()
        .args(["mutants", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("cargo mutants is missing; installing it");
    run(cargo().args(["install", "--locked", "cargo-mutants"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutant_is_known_without_its_line_and_column() {
        let name = "crates/manager/src/call.rs:171:21: replace != with == in route_tool";
        assert_eq!(
            mutant_key(name),
            "crates/manager/src/call.rs: replace != with == in route_tool"
        );
        assert_eq!(mutant_key(&mutant_key(name)), mutant_key(name));
        // A colon in the description is kept.
        let name = "crates/a/src/b.rs:3:1: replace f -> Result<(), E> with Ok(())";
        assert_eq!(
            mutant_key(name),
            "crates/a/src/b.rs: replace f -> Result<(), E> with Ok(())"
        );
    }

    #[test]
    fn every_allowed_mutant_needs_a_reason() {
        let text = "# equivalent mutants\n\n\
                    crates/a/src/b.rs:3:1: replace f with g # g is f here\n";
        let allow = parse_allow_list(text).expect("parses");
        assert_eq!(
            allow
                .get("crates/a/src/b.rs: replace f with g")
                .map(String::as_str),
            Some("g is f here")
        );
        assert_eq!(allow.len(), 1);
        let e = parse_allow_list("crates/a/src/b.rs:3:1: replace f with g\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse_allow_list("crates/a/src/b.rs: replace f with g #  \n").is_err());
    }

    #[test]
    fn a_diff_touches_the_crates_whose_sources_it_changes() {
        let diff = "diff --git a/crates/manager/src/catalog.rs b/crates/manager/src/catalog.rs\n\
                    --- a/crates/manager/src/catalog.rs\n\
                    +++ b/crates/manager/src/catalog.rs\n\
                    @@ -1 +1 @@\n-a\n+b\n\
                    --- a/crates/client/src/gone.rs\n+++ /dev/null\n";
        assert_eq!(touched_crates(diff), vec!["manager"]);
    }

    #[test]
    fn a_sample_is_one_shard_of_about_n_picked_by_the_commit() {
        assert_eq!(pick_shard(8, 8, "ab"), None);
        assert_eq!(pick_shard(9, 8, "00000000000a"), Some((0, 2)));
        assert_eq!(pick_shard(9, 8, "00000000000b"), Some((1, 2)));
        let (k, s) = pick_shard(100, 8, "c146cad0").unwrap();
        assert_eq!(s, 13);
        assert!(k < s);
        assert_eq!(
            pick_shard(100, 8, "c146cad0"),
            Some((k, s)),
            "the same commit, the same shard"
        );
    }

    #[test]
    fn a_narrowed_run_keeps_its_own_results() {
        let args = |s: &[&str]| s.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        assert_eq!(selection_label(&args(&["-j", "1"])), None);
        let engine = selection_label(&args(&["-j", "1", "--file", "src/engine.rs"])).unwrap();
        let ops = selection_label(&args(&["-j", "1", "--file", "src/ops.rs"])).unwrap();
        assert!(engine.starts_with("sel-"), "{engine}");
        assert_ne!(engine, ops);
        assert_eq!(
            selection_label(&args(&["-j", "1", "--file", "src/engine.rs"])).unwrap(),
            engine,
            "the same selection, the same directory"
        );
        assert!(selection_label(&args(&["--re=replay"])).is_some());
    }

    #[test]
    fn a_resumed_run_gives_iterate_to_cargo_mutants_not_to_the_test_tool() {
        let args = |s: &[&str]| s.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let theirs = args(&[
            "-j",
            "1",
            "--file",
            "src/fetch.rs",
            "--",
            "--lib",
            "--test",
            "auth",
        ]);
        assert_eq!(
            their_args(&theirs, true),
            args(&[
                "-j",
                "1",
                "--file",
                "src/fetch.rs",
                "--iterate",
                "--",
                "--lib",
                "--test",
                "auth"
            ])
        );
        // Only the first `--` splits: a later one belongs to the tests.
        assert_eq!(
            their_args(&args(&["--", "--lib", "--", "x"]), true),
            args(&["--iterate", "--", "--lib", "--", "x"])
        );
        assert_eq!(
            their_args(&args(&["-j", "1"]), true),
            args(&["-j", "1", "--iterate"])
        );
        assert_eq!(
            their_args(&theirs, false),
            theirs,
            "a fresh run adds nothing"
        );
    }

    #[test]
    fn shards_and_samples_are_checked() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("x").is_err());
        let args = |s: &[&str]| s.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
        let o = parse(&args(&[
            "manager", "--diff", "abc", "--sample", "8", "--", "-j", "1",
        ]))
        .unwrap();
        assert_eq!(o.crates, vec![("manager", "mcpwire-manager")]);
        assert_eq!(o.diff.as_deref(), Some("abc"));
        assert_eq!(o.sample, Some(8));
        assert_eq!(o.theirs, args(&["-j", "1"]));
        assert!(parse(&args(&["--sample", "0"])).is_err());
        assert!(parse(&args(&["--sample", "2", "--shard", "0/2"])).is_err());
        assert!(parse(&args(&["nope"])).is_err());
        assert_eq!(parse(&args(&[])).unwrap().crates.len(), CRATES.len());
    }
}
