//! The closest names to one that routes nowhere, for the error that says so.

use crate::naming::SEPARATOR;

/// At most this many suggestions.
const MAX: usize = 3;
/// The least similarity (normalized Damerau-Levenshtein, 0 to 1) worth
/// suggesting.
const THRESHOLD: f64 = 0.6;

/// Up to three of `names` closest to `wanted`, best first: a name whose
/// part after `{server}__` is `wanted` itself (the bare name of a prefixed
/// tool) first, then by edit distance above a threshold.
pub(crate) fn closest<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = names
        .filter_map(|name| {
            let bare = name.split_once(SEPARATOR).map_or(name, |(_, tool)| tool);
            let score = if bare == wanted {
                2.0
            } else {
                strsim::normalized_damerau_levenshtein(wanted, name)
                    .max(strsim::normalized_damerau_levenshtein(wanted, bare))
            };
            (score >= THRESHOLD).then_some((score, name))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX)
        .map(|(_, n)| n.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_and_typos_are_suggested_best_first() {
        let names = ["fs__read_file", "fs__write_file", "git__log", "git__status"];
        let found = closest("read_file", names.iter().copied());
        assert_eq!(found[0], "fs__read_file", "the exact bare name first");
        assert!(!found.iter().any(|n| n.starts_with("git")), "{found:?}");
        assert_eq!(
            closest("fs__raed_file", names.iter().copied())[0],
            "fs__read_file"
        );
        assert_eq!(
            closest("git__stats", names.iter().copied())[0],
            "git__status"
        );
        assert!(closest("completely_else", names.iter().copied()).is_empty());
    }
}
