//! Whether a person is at the terminal to be asked something (standard
//! input and standard error are both a terminal), and asking yes or no.
//!
//! Kept apart so mutation testing can leave it out (`.cargo/mutants.toml`):
//! the tests that hold it type into a tmux pane, and the mutation run, like
//! `cargo test` without `--include-ignored`, does not run them.

use std::io::IsTerminal;

/// True when stdin and stderr are a terminal.
pub(crate) fn person_present() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks `question` on stderr with `[y/N]` and reads the answer from stdin:
/// true for yes, false for anything else (Enter, end of input).
pub(crate) fn confirm(question: &str) -> bool {
    use std::io::{BufRead as _, Write as _};
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}
