//! The progress of a long call: a spinner until the server's first
//! progress notification, then a bar (or a counter, without a total) with
//! the server's message. Drawn on stderr, and only when both stdout and
//! stderr are terminals and neither `--no-color` nor `NO_COLOR` is set.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// The display being drawn, if any: a question asked at the terminal
/// hides it meanwhile ([`pause`]).
static DRAWN: Mutex<Option<ProgressBar>> = Mutex::new(None);
/// True while a question is asked: no display starts drawing.
static PAUSED: AtomicBool = AtomicBool::new(false);

fn drawn() -> std::sync::MutexGuard<'static, Option<ProgressBar>> {
    DRAWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// While this lives, no progress is drawn (the spinner would write over a
/// question asked on stderr); dropping it draws again.
pub(crate) struct Paused(Option<ProgressBar>);

/// Hides the display being drawn, and keeps any from starting, until the
/// returned guard is dropped.
pub(crate) fn pause() -> Paused {
    let bar = {
        let mut drawn = drawn();
        PAUSED.store(true, Ordering::SeqCst);
        drawn.take().filter(|b| !b.is_finished())
    };
    if let Some(bar) = &bar {
        bar.disable_steady_tick();
        bar.set_draw_target(ProgressDrawTarget::hidden());
        // The spinner's last line stays on the screen: clear it.
        eprint!("\r\x1b[2K");
    }
    Paused(bar)
}

impl Drop for Paused {
    fn drop(&mut self) {
        let mut drawn = drawn();
        PAUSED.store(false, Ordering::SeqCst);
        // One finished meanwhile (the call ended) is not drawn again.
        if let Some(bar) = self.0.take().filter(|b| !b.is_finished()) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(100));
            *drawn = Some(bar);
        }
    }
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
                // Under the lock `pause` takes: a question being asked
                // either sees this display or keeps it from drawing.
                let mut drawn = drawn();
                if !shown.is_finished() && !PAUSED.load(Ordering::SeqCst) {
                    shown.set_draw_target(ProgressDrawTarget::stderr());
                    shown.enable_steady_tick(Duration::from_millis(100));
                    *drawn = Some(shown);
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
        drawn().take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The only test of this module's statics: tests run in parallel.
    #[tokio::test]
    async fn a_question_hides_the_spinner_and_keeps_one_from_starting() {
        let question = pause();
        let quiet = Display::start("a", true);
        tokio::time::sleep(SHOW_AFTER * 2).await;
        assert!(drawn().is_none(), "a spinner started during a question");
        drop(question);
        quiet.finish();

        let shown = Display::start("b", true);
        tokio::time::sleep(SHOW_AFTER * 2).await;
        assert!(drawn().is_some(), "a spinner starts after its delay");
        let question = pause();
        assert!(question.0.is_some() && drawn().is_none(), "hidden");
        drop(question);
        assert!(drawn().is_some(), "drawn again once answered");

        // A display finished while a question is asked stays finished.
        let question = pause();
        shown.finish();
        drop(question);
        assert!(drawn().is_none());
        let again = Display::start("c", true);
        tokio::time::sleep(SHOW_AFTER * 2).await;
        again.finish();
        assert!(drawn().is_none(), "finishing forgets the display");
    }
}
