//! What a run costs the client process: CPU time and peak resident memory,
//! read from `/proc/self` (Linux only, like the benchmark).

use std::time::Duration;

/// The kernel's clock tick for `/proc` times (`USER_HZ`, 100 on Linux).
const TICKS_PER_SEC: u64 = 100;

/// User plus system CPU time of this process so far, every thread included
/// (also those that have exited). Resolution: one clock tick, 10 ms.
pub(crate) fn cpu_time() -> Duration {
    cpu_time_of(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// User plus system CPU time in a process's `/proc/PID/stat` line.
pub(crate) fn cpu_time_of(stat: &str) -> Duration {
    // The command name may contain spaces: fields are counted after its `)`.
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After `)`: state is field 3, utime 14 and stime 15 (1-based, man 5 proc).
    let ticks = |i: usize| {
        fields
            .get(i - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let total = ticks(14) + ticks(15);
    Duration::from_millis(total * 1000 / TICKS_PER_SEC)
}

/// The peak resident set size of this process (`VmHWM`), in KiB.
pub(crate) fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status_kib(&status, "VmHWM:").unwrap_or(0)
}

/// The heap and thread stacks this process holds resident now, in KiB:
/// the `Rss:` of its mappings backed by no file (`[heap]`, `[stack]`, and
/// the unnamed ones: the allocator's arenas and large blocks, the threads'
/// stacks). Not `RssAnon`, which also counts the pages of the binary and
/// its libraries written when they were loaded (relocated data), and so
/// differs from one build of the same client to another.
#[cfg(target_os = "linux")]
pub(crate) fn heap_stacks_kib() -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    Some(heap_stacks_of(&smaps))
}

/// Other systems have no `smaps`: the row reads `n/a` there. (The harness
/// compares clients on Linux, where CI runs it.)
#[cfg(not(target_os = "linux"))]
pub(crate) fn heap_stacks_kib() -> Option<u64> {
    None
}

/// [`heap_stacks_kib`] of the text of a `/proc/PID/smaps`.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn heap_stacks_of(smaps: &str) -> u64 {
    let mut counted = false;
    let mut kib = 0;
    for line in smaps.lines() {
        let mut fields = line.split_ascii_whitespace();
        let first = fields.next().unwrap_or("");
        if first.ends_with(':') {
            if counted && first == "Rss:" {
                kib += fields
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0);
            }
            continue;
        }
        // A mapping's header: range, perms, offset, device, inode, [path].
        let path = fields.nth(4);
        counted = match path {
            None => true,
            Some(p) => p == "[heap]" || p.starts_with("[stack"),
        };
    }
    kib
}

/// The figure in KiB after `key` (`VmRSS:`, `VmHWM:`) in a process's
/// `/proc/PID/status`.
pub(crate) fn status_kib(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The `q`-quantile (0..=1) of `sorted`, in microseconds.
pub(crate) fn quantile_us(sorted: &[Duration], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((sorted.len() - 1) as f64 * q).round() as usize;
    Some(sorted[rank].as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_readings_are_plausible() {
        assert!(peak_rss_kib() > 0);
        // Four megabytes written are four more resident.
        #[cfg(target_os = "linux")]
        {
            let before = heap_stacks_kib().expect("smaps is readable");
            let held = std::hint::black_box(vec![1u8; 4 << 20]);
            let after = heap_stacks_kib().expect("smaps is readable");
            assert!(after >= before + 4 * 1024 - 64, "{before} KiB before");
            drop(held);
        }
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(0u64);
        }
        assert!(cpu_time() > Duration::ZERO);
    }

    #[test]
    fn stat_and_status_lines_are_read_by_field() {
        // A command name with spaces and a `)`; utime 250, stime 50 ticks.
        let stat = "42 (a b) c) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 9 1000 200";
        assert_eq!(cpu_time_of(stat), Duration::from_millis(3000));
        assert_eq!(cpu_time_of(""), Duration::ZERO);
        let status = "Name:\tmcpwire\nVmHWM:\t   9000 kB\nVmRSS:\t   8123 kB\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(8123));
        assert_eq!(status_kib(status, "VmHWM:"), Some(9000));
        assert_eq!(status_kib(status, "VmSwap:"), None);
    }

    #[test]
    fn quantiles_pick_ranks() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(quantile_us(&v, 0.5), Some(51.0));
        assert_eq!(quantile_us(&v, 0.99), Some(99.0));
        assert_eq!(quantile_us(&[], 0.5), None);
    }

    #[test]
    fn heap_and_stacks_are_the_mappings_with_no_file() {
        let smaps = "\
55d0a000-55d0b000 r-xp 00000000 fe:01 123 /usr/bin/client
Rss:                 400 kB
Anonymous:             0 kB
55d0c000-55d0d000 rw-p 00010000 fe:01 123 /usr/bin/client
Rss:                  40 kB
Anonymous:            40 kB
55d0e000-55d2e000 rw-p 00000000 00:00 0                          [heap]
Rss:                 128 kB
7f00a000-7f00c000 rw-p 00000000 00:00 0
Rss:                  64 kB
7f00d000-7f00e000 r--p 00000000 00:00 0                          [vvar]
Rss:                   8 kB
7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]
Rss:                  12 kB
";
        assert_eq!(heap_stacks_of(smaps), 128 + 64 + 12);
        assert_eq!(heap_stacks_of(""), 0);
    }
}
