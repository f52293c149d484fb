//! The rows of the main bench table where mcpwire's median is behind
//! rmcp's, each shown with both clients' rounds: whether every mcpwire round
//! was behind every rmcp round, or the rounds overlap (the row is level
//! within the run's spread).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::report::{fmt, median, metrics};

/// One cell's runs, by client.
pub(crate) type Cell = BTreeMap<&'static str, Vec<Value>>;

/// A row of the table where mcpwire's median is behind rmcp's.
#[derive(Debug, PartialEq)]
pub(crate) struct Behind {
    /// Transport, workload and metric, as the table names them.
    pub(crate) row: String,
    /// mcpwire's rounds, lowest and highest (scaled as the table shows them).
    pub(crate) ours: (f64, f64),
    /// rmcp's rounds, lowest and highest.
    pub(crate) theirs: (f64, f64),
    /// mcpwire's median over rmcp's.
    pub(crate) ratio: f64,
    /// Every mcpwire round was behind every rmcp round.
    pub(crate) apart: bool,
}

/// The rows of `cells` where mcpwire's median is behind rmcp's, in the
/// table's order. A row either client did not measure is left out.
pub(crate) fn behind_rows(cells: &[((String, String), Cell)]) -> Vec<Behind> {
    let mut rows = Vec::new();
    for ((transport, workload), cell) in cells {
        for (key, label, scale, higher_is_better) in metrics(workload) {
            let rounds = |client: &str| -> Vec<f64> {
                let runs = cell.get(client).map_or(&[][..], Vec::as_slice);
                let mut xs: Vec<f64> = runs
                    .iter()
                    .filter_map(|v| v[*key].as_f64())
                    .map(|x| x * scale)
                    .collect();
                xs.sort_by(f64::total_cmp);
                xs
            };
            let (ours, theirs) = (rounds("mcpwire"), rounds("rmcp"));
            let (Some(m), Some(r)) = (
                median(cell.get("mcpwire").map(Vec::as_slice), key),
                median(cell.get("rmcp").map(Vec::as_slice), key),
            ) else {
                continue;
            };
            let worse = |a: f64, b: f64| if *higher_is_better { a < b } else { a > b };
            if r <= 0.0 || !worse(m, r) {
                continue;
            }
            let range = |xs: &[f64]| (xs[0], xs[xs.len() - 1]);
            let (ours, theirs) = (range(&ours), range(&theirs));
            // mcpwire's best round against rmcp's worst.
            let apart = if *higher_is_better {
                worse(ours.1, theirs.0)
            } else {
                worse(ours.0, theirs.1)
            };
            rows.push(Behind {
                row: format!("{transport} {workload} {label}"),
                ours,
                theirs,
                ratio: m / r,
                apart,
            });
        }
    }
    rows
}

/// The section that lists `rows` under the main table.
pub(crate) fn behind_section(rows: &[Behind]) -> String {
    let mut s = String::from("### Rows where mcpwire is behind rmcp\n\n");
    if rows.is_empty() {
        s.push_str("None: in every row, mcpwire's median is level with rmcp's or ahead of it.\n");
        return s;
    }
    let apart = rows.iter().filter(|b| b.apart).count();
    let _ = write!(
        s,
        "In {} row(s) of the table, mcpwire's median is behind rmcp's; in {apart} of them, \
         every mcpwire round was behind every rmcp round. In the others the two clients' \
         rounds overlap: the row is level within this run's spread.\n\n\
         | row | mcpwire rounds | rmcp rounds | mcpwire / rmcp | every round behind |\n\
         |---|---|---|---:|---|\n",
        rows.len()
    );
    for b in rows {
        let _ = writeln!(
            s,
            "| {} | {} to {} | {} to {} | {:.2}x | {} |",
            b.row,
            fmt(Some(b.ours.0)),
            fmt(Some(b.ours.1)),
            fmt(Some(b.theirs.0)),
            fmt(Some(b.theirs.1)),
            b.ratio,
            if b.apart { "**yes**" } else { "no" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A cell of `workload` where mcpwire's and rmcp's rounds give `key`
    /// these values (the other keys absent).
    fn cell(workload: &str, key: &str, ours: &[f64], theirs: &[f64]) -> ((String, String), Cell) {
        let runs = |xs: &[f64]| xs.iter().map(|x| json!({ key: x })).collect();
        let mut c = Cell::new();
        c.insert("mcpwire", runs(ours));
        c.insert("rmcp", runs(theirs));
        (("stdio".into(), workload.into()), c)
    }

    #[test]
    fn a_row_behind_with_overlapping_rounds_is_listed_as_not_apart() {
        let rows = behind_in("w2-task", "p50_us", [51.9, 42.0, 47.2], [48.8, 46.1, 40.3]);
        assert_eq!(
            rows,
            [Behind {
                row: "stdio w2-task p50 (us)".into(),
                ours: (42.0, 51.9),
                theirs: (40.3, 48.8),
                ratio: 47.2 / 46.1,
                apart: false,
            }]
        );
    }

    /// The rows behind in a table of one cell.
    fn behind_in(workload: &str, key: &str, ours: [f64; 3], theirs: [f64; 3]) -> Vec<Behind> {
        behind_rows(&[cell(workload, key, &ours, &theirs)])
    }

    #[test]
    fn a_row_behind_in_every_round_is_apart_whichever_way_is_better() {
        // (workload, metric, mcpwire's rounds, rmcp's rounds, apart)
        let (p50, ops) = ([40.0, 49.0, 45.0], [100.0, 120.0, 110.0]);
        let cases = [
            // Lower is better: mcpwire's lowest round above rmcp's highest.
            ("w2", "p50_us", [50.0, 51.0, 52.0], p50, true),
            // Touching is not apart.
            ("w2", "p50_us", [49.0, 51.0, 52.0], p50, false),
            // Higher is better: mcpwire's highest round below rmcp's lowest.
            ("w3", "ops_per_s", [90.0, 95.0, 99.0], ops, true),
            ("w3", "ops_per_s", [90.0, 95.0, 100.0], ops, false),
            ("w3", "ops_per_s", [90.0, 95.0, 101.0], ops, false),
        ];
        for (workload, key, ours, theirs, apart) in cases {
            let rows = behind_in(workload, key, ours, theirs);
            assert_eq!(rows.len(), 1, "{key} {ours:?} {theirs:?}");
            assert_eq!(rows[0].apart, apart, "{key} {ours:?} {theirs:?}");
        }
        assert_eq!(
            behind_in("w3", "ops_per_s", [90.0, 95.0, 99.0], ops)[0].row,
            "stdio w3 calls/s"
        );
    }

    #[test]
    fn rows_level_or_ahead_or_unmeasured_are_left_out() {
        let cases = [
            // Ahead, lower is better; level; ahead and level, higher is better.
            ("w2", "p50_us", [30.0, 31.0, 32.0], [40.0, 41.0, 42.0]),
            ("w2", "p50_us", [40.0, 41.0, 42.0], [40.0, 41.0, 42.0]),
            (
                "w3",
                "ops_per_s",
                [200.0, 210.0, 220.0],
                [100.0, 110.0, 120.0],
            ),
            ("w3", "ops_per_s", [40.0, 41.0, 42.0], [40.0, 41.0, 42.0]),
        ];
        for (workload, key, ours, theirs) in cases {
            let rows = behind_in(workload, key, ours, theirs);
            assert!(rows.is_empty(), "{key} {ours:?} {theirs:?}: {rows:?}");
        }
        // rmcp did not run.
        let (key, mut c) = cell("w2", "p50_us", &[50.0], &[40.0]);
        c.remove("rmcp");
        assert!(behind_rows(&[(key, c)]).is_empty());
    }

    #[test]
    fn rounds_are_shown_in_the_table_s_units() {
        // Peak RSS is measured in KiB and shown in MiB.
        let rows = behind_in(
            "w2",
            "peak_rss_kib",
            [2048.0, 3072.0, 2560.0],
            [1024.0, 2048.0, 1536.0],
        );
        assert_eq!(rows[0].ours, (2.0, 3.0));
        assert_eq!(rows[0].theirs, (1.0, 2.0));
        assert!(!rows[0].apart);
    }

    #[test]
    fn the_section_counts_the_rows_and_says_none_when_there_are_none() {
        assert!(behind_section(&[]).contains("None: in every row"));
        let rows = [
            Behind {
                row: "stdio w2-task p50 (us)".into(),
                ours: (42.0, 51.9),
                theirs: (40.3, 48.8),
                ratio: 1.024,
                apart: false,
            },
            Behind {
                row: "http w3 calls/s".into(),
                ours: (90.0, 99.0),
                theirs: (100.0, 120.0),
                ratio: 0.86,
                apart: true,
            },
        ];
        let s = behind_section(&rows);
        assert!(s.contains("In 2 row(s)"), "{s}");
        assert!(s.contains("in 1 of them"), "{s}");
        assert!(
            s.contains("| stdio w2-task p50 (us) | 42.0 to 51.9 | 40.3 to 48.8 | 1.02x | no |"),
            "{s}"
        );
        assert!(
            s.contains("| http w3 calls/s | 90.0 to 99.0 | 100.0 to 120.0 | 0.86x | **yes** |"),
            "{s}"
        );
    }
}
