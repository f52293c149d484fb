//! Whether a person is at the terminal to be asked something: standard
//! input and standard error are both a terminal.
//!
//! Kept apart so mutation testing can leave it out (`.cargo/mutants.toml`):
//! the tests that hold it type into a tmux pane, and the mutation run, like
//! `cargo test` without `--include-ignored`, does not run them.

use std::io::IsTerminal;

/// True when stdin and stderr are a terminal.
pub(crate) fn person_present() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}
