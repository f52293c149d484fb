//! The matrix once more through the `mcpwire` command: for each case that
//! needs no authorization (all but the fleet and fastmcp's authorization
//! cases), `info`, `tools` and `call` without `-v` and then
//! with it, against one server started for the case. `info` prints the
//! protocol version the command negotiated; the case fails if a command
//! fails or if `-v` changes the version (and so the era).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::cases::{Case, Transport};
use super::process::{Group, last_line, start_http};

/// How long one command may take.
const COMMAND_WALL_TIME: Duration = Duration::from_secs(60);

/// Runs the case through `mcpwire`; the versions it saw, or why it failed.
pub(super) fn run(mcpwire: &Path, case: &Case, work: &Path) -> Result<String, String> {
    let Some((tool, arguments)) = &case.cli else {
        return Err("not a CLI case".into());
    };
    let base = work.join("logs").join(format!("cli-{}", file_name(case)));
    let mut _server = None;
    // The target: `-s URL`, or `-e K=V... -- PROGRAM ARGS` at the end.
    let (before, after): (Vec<String>, Vec<String>) = match &case.how {
        Transport::Http { .. } => {
            let (server, url) = start_http(&case.how, &base)?;
            _server = Some(server);
            (vec!["-s".into(), url], Vec::new())
        }
        Transport::Stdio { program, args, env } => {
            let mut before = Vec::new();
            for (k, v) in env {
                before.push("-e".into());
                before.push(format!("{k}={v}"));
            }
            let mut after = vec!["--".into(), super::cases::path_str(program)?];
            after.extend(args.iter().cloned());
            (before, after)
        }
        Transport::Fleet { .. } => return Err("the command runs no fleet".into()),
    };
    let env: &[(&str, String)] = match &case.how {
        Transport::Http { env, .. } => env,
        _ => &[],
    };
    let mut versions = Vec::new();
    for verbose in [false, true] {
        let v = if verbose { "-v" } else { "plain" };
        let run = |command: &[&str]| -> Result<String, String> {
            let name = command[0];
            let out = base.with_extension(format!("{v}.{name}.out"));
            let err = base.with_extension(format!("{v}.{name}.log"));
            let mut cmd = Command::new(mcpwire);
            cmd.envs(env.iter().map(|(k, v)| (*k, v)));
            if verbose {
                cmd.arg("-v");
            }
            cmd.args(["--non-interactive", "--no-color"])
                .args(["--connect-timeout", "30", "--timeout", "30"])
                .args(&before)
                .args(command)
                .args(&after);
            let mut process = Group::spawn(&mut cmd, &out, &err)?;
            let status = process.wait(COMMAND_WALL_TIME);
            drop(process);
            let text = std::fs::read_to_string(&out).unwrap_or_default();
            match status {
                Some(true) => Ok(text),
                Some(false) => Err(format!(
                    "mcpwire {v} {name}: {}",
                    last_line(&std::fs::read_to_string(&err).unwrap_or_default())
                )),
                None => Err(format!(
                    "mcpwire {v} {name}: timed out after {} s",
                    COMMAND_WALL_TIME.as_secs()
                )),
            }
        };
        let info = run(&["info"])?;
        let version = protocol(&info)
            .ok_or_else(|| format!("mcpwire {v} info: no protocol line in {info:?}"))?;
        run(&["tools"])?;
        run(&["call", tool, "--args", arguments])?;
        versions.push(version);
    }
    if versions[0] == versions[1] {
        Ok(format!(
            "protocol {} with and without -v; info, tools, call {tool}",
            versions[0]
        ))
    } else {
        Err(format!(
            "protocol {} without -v but {} with -v (the -v wire log: {})",
            versions[0],
            versions[1],
            base.with_extension("-v.info.log").display()
        ))
    }
}

/// The version on `info`'s `protocol` line.
fn protocol(info: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix("protocol"))
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty() && v != "?")
}

/// The case's name as a file name.
pub(super) fn file_name(case: &Case) -> String {
    case.name()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '+' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::protocol;

    #[test]
    fn the_protocol_line_of_info_is_read() {
        let info = "server        x 1.0\nprotocol      2026-07-28\ncapabilities  tools\n";
        assert_eq!(protocol(info).as_deref(), Some("2026-07-28"));
        assert_eq!(protocol("server  x\nprotocol      ?\n"), None);
        assert_eq!(protocol("server  x\n"), None);
    }
}
