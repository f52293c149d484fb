//! What the leak checks count: this process's open file descriptors and
//! resident memory, and every live process the suite started (found by a
//! tag in its environment, which grandchildren inherit, so an orphan
//! re-parented to init is still found).

use std::fs;

/// The environment variable that tags every process the suite starts.
pub const TAG_VAR: &str = "MCPWIRE_FAULTS_TAG";

/// This run's tag (the runner's process id).
pub fn tag() -> String {
    std::process::id().to_string()
}

/// Why the leak checks see nothing on this platform, or `None` where they
/// look (Linux). They read Linux's /proc; elsewhere every count below is
/// zero and every list empty, so the runner says so once instead of
/// letting "nothing leaked" pass as checked.
pub fn unavailable() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        None
    } else {
        Some(
            "no leak check on this platform: descriptors, memory and leftover processes \
             are read from /proc, which only Linux has",
        )
    }
}

/// Lists the /proc directory `path`. On Linux an unreadable /proc is a
/// broken check, not a clean result, so it panics (the run fails loudly);
/// elsewhere it is `None` (see [`unavailable`]).
fn proc_dir(path: &str) -> Option<fs::ReadDir> {
    match fs::read_dir(path) {
        Ok(dir) => Some(dir),
        Err(e) if cfg!(target_os = "linux") => {
            panic!("cannot check for leaks: {path} is not readable ({e}); is /proc mounted?")
        }
        Err(_) => None,
    }
}

/// How many file descriptors this process has open.
pub fn fd_count() -> usize {
    proc_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// What each open descriptor points at, for a failure message.
pub fn fd_targets() -> Vec<String> {
    let Some(dir) = proc_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let mut out: Vec<String> = dir
        .flatten()
        .map(|e| {
            let target = fs::read_link(e.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            format!("{}->{target}", e.file_name().to_string_lossy())
        })
        .collect();
    out.sort();
    out
}

/// Resident memory of this process, in KiB.
pub fn rss_kib() -> u64 {
    let path = "/proc/self/status";
    let status = match fs::read_to_string(path) {
        Ok(status) => status,
        Err(_) if unavailable().is_some() => return 0,
        Err(e) => panic!("cannot measure memory: {path} is not readable ({e}); is /proc mounted?"),
    };
    vm_rss_kib(&status).unwrap_or_else(|| panic!("cannot measure memory: no VmRSS line in {path}"))
}

/// The `VmRSS` figure of a `/proc/PID/status` text, in KiB.
fn vm_rss_kib(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// One process that outlived what started it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// Its process id.
    pub pid: i32,
    /// Its command line.
    pub cmdline: String,
    /// A zombie of ours (exited, never reaped) rather than a live process.
    pub zombie: bool,
}

/// Every live process carrying this run's tag, and every zombie child of
/// this process.
pub fn leftovers() -> Vec<Leftover> {
    let me = std::process::id() as i32;
    let needle = format!("{TAG_VAR}={}", tag());
    let mut out = Vec::new();
    let Some(dir) = proc_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Some((state, ppid)) = stat(pid) else {
            continue;
        };
        let zombie = state == 'Z';
        let tagged = !zombie
            && fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == needle.as_bytes()));
        if tagged || (zombie && ppid == me) {
            let cmdline = fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_owned()
                })
                .unwrap_or_default();
            out.push(Leftover {
                pid,
                cmdline,
                zombie,
            });
        }
    }
    out
}

/// The state letter and parent of `pid`.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    let rest = &text[text.rfind(')')? + 2..];
    let mut fields = rest.split(' ');
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests that open descriptors or spawn processes: the
    /// descriptor count is the whole process's, and tests run on threads
    /// side by side (spawning opens a pipe for a moment).
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[test]
    fn counts_what_this_process_opens() {
        let _serial = serial();
        // Other tests' threads may open or close a descriptor in between
        // (the test harness, a /proc read): a few tries, each needing the
        // exact change.
        let counted = (0..50).find_map(|_| {
            let before = fd_count();
            let file = fs::File::open("/proc/self/status").unwrap();
            let open = fd_count();
            drop(file);
            let closed = fd_count();
            (open == before + 1 && closed == before).then_some(())
        });
        assert!(counted.is_some(), "an open file was never counted");
        assert!(rss_kib() > 0);
    }

    /// A /proc that cannot be read fails the run instead of counting
    /// nothing: zero descriptors and no processes would pass every leak
    /// check without looking.
    #[cfg(target_os = "linux")]
    #[test]
    #[should_panic(expected = "cannot check for leaks: /nonexistent/proc/self/fd is not readable")]
    fn an_unreadable_proc_fails_loudly_on_linux() {
        let _ = proc_dir("/nonexistent/proc/self/fd");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_has_the_leak_checks() {
        assert_eq!(unavailable(), None);
    }

    #[test]
    fn reads_the_resident_memory_line() {
        let status = "Name:\tx\nVmPeak:\t 9 kB\nVmRSS:\t    1234 kB\nThreads: 1\n";
        assert_eq!(vm_rss_kib(status), Some(1234));
        assert_eq!(vm_rss_kib("Name:\tx\n"), None);
    }

    #[test]
    fn finds_a_tagged_child_and_forgets_it_once_reaped() {
        let _serial = serial();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env(TAG_VAR, tag())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // Until it has exec'd, the child shows our environment, untagged.
        let found = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            leftovers().iter().any(|l| l.pid == pid && !l.zombie)
        });
        assert!(found);
        child.kill().unwrap();
        // Killed but not reaped: a zombie of ours.
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert!(leftovers().iter().any(|l| l.pid == pid && l.zombie));
        child.wait().unwrap();
        assert!(!leftovers().iter().any(|l| l.pid == pid));
    }
}
