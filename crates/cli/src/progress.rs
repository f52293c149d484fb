//! The progress of a long call: a spinner until the server's first
//! progress notification, then a bar (or a counter, without a total) with
//! the server's message. Drawn on stderr, and only when both stdout and
//! stderr are terminals and neither `--no-color` nor `NO_COLOR` is set.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mcpwire::client::types::Progress;

/// How long a call runs before the spinner appears.
const SHOW_AFTER: Duration = Duration::from_millis(300);

/// Whether decorations (progress, colour) may be drawn.
pub(crate) fn fancy(no_color: bool) -> bool {
    let no_color_env = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && !no_color_env && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

/// A progress display for one request; hidden when not [`fancy`].
#[derive(Clone)]
pub(crate) struct Display {
    bar: ProgressBar,
}

impl Display {
    /// Starts a spinner labelled `what` (drawn only if `show`).
    pub(crate) fn start(what: &str, show: bool) -> Self {
        let bar = if show {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix} {msg} ({elapsed})")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(what.to_owned());
            // Drawn only if the call takes a while: a quick call leaves no
            // flicker behind.
            let shown = bar.clone();
            tokio::spawn(async move {
                tokio::time::sleep(SHOW_AFTER).await;
                if !shown.is_finished() {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(100));
                }
            });
            bar
        } else {
            ProgressBar::hidden()
        };
        Self { bar }
    }

    /// Shows one progress notification.
    pub(crate) fn update(&self, p: &Progress) {
        // A late notification must not draw the bar again once finished.
        if self.bar.is_finished() {
            return;
        }
        match p.total {
            Some(total) if total > 0.0 => {
                if self.bar.length().is_none() {
                    self.bar.set_style(
                        ProgressStyle::with_template(
                            "{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed})",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                }
                // Progress values are whole steps in practice; a fraction
                // is shown to the step below.
                self.bar.set_length(total as u64);
                self.bar.set_position(p.progress as u64);
            }
            _ => self.bar.set_position(p.progress as u64),
        }
        self.bar.set_message(p.message.clone().unwrap_or_default());
    }

    /// Removes the display.
    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
