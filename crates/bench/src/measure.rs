//! What a run costs the client process: CPU time and peak resident memory,
//! read from `/proc/self` (Linux only, like the benchmark).

use std::time::Duration;

/// The kernel's clock tick for `/proc` times (`USER_HZ`, 100 on Linux).
const TICKS_PER_SEC: u64 = 100;

/// User plus system CPU time of this process so far, every thread included
/// (also those that have exited). Resolution: one clock tick, 10 ms.
pub(crate) fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
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
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
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
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(50) {
            std::hint::black_box(0u64);
        }
        assert!(cpu_time() > Duration::ZERO);
    }

    #[test]
    fn quantiles_pick_ranks() {
        let v: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(quantile_us(&v, 0.5), Some(51.0));
        assert_eq!(quantile_us(&v, 0.99), Some(99.0));
        assert_eq!(quantile_us(&[], 0.5), None);
    }
}
