//! What a followed session is doing, as a spinner on the terminal's last line: "thinking 3s",
//! "running Bash", "waiting for a decision on Write". Only when stderr is a terminal.
//!
//! The spinner is drawn on stderr by indicatif's ticker thread, so everything else printed
//! while it shows goes through [`Activity::suspend`] (it is cleared, the text printed, then it
//! is drawn again below), and it is hidden while a question waits for keys.

use std::io::{self, IsTerminal};
use std::time::{Duration, Instant};

use console::Term;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// How often the spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// The spinner of a followed session.
#[derive(Debug)]
pub struct Activity {
    /// Whether a spinner can be drawn (stderr is a terminal).
    enabled: bool,
    /// What the session is doing, and since when.
    doing: Option<(String, Instant)>,
    /// The message being typed, shown after the spinner (a conversation's next message).
    typed: String,
    /// The spinner on screen.
    bar: Option<ProgressBar>,
}

impl Activity {
    /// The spinner, drawn only if stderr is a terminal.
    pub fn on_terminal() -> Activity {
        Activity {
            enabled: std::io::stderr().is_terminal(),
            doing: None,
            typed: String::new(),
            bar: None,
        }
    }

    /// The session is now doing `what` (the time shown counts from the first call with it).
    pub fn doing(&mut self, what: &str) {
        if self.doing.as_ref().is_none_or(|(was, _)| was != what) {
            self.doing = Some((what.to_owned(), Instant::now()));
            if let Some(bar) = &self.bar {
                bar.set_message(what.to_owned());
                bar.reset_elapsed();
            }
        }
    }

    /// Shows `text`, the message being typed, after what the session does.
    pub fn typing(&mut self, text: &str) {
        if self.typed != text {
            self.typed = text.to_owned();
            if let Some(bar) = &self.bar {
                bar.set_prefix(typed_text(text));
            }
        }
    }

    /// Draws the spinner, with what the session is doing, if it is not on screen.
    pub fn show(&mut self) {
        let Some((what, since)) = &self.doing else {
            return;
        };
        if !self.enabled || self.bar.is_some() {
            return;
        }
        let style = ProgressStyle::with_template("{spinner} {msg} {elapsed}{prefix}")
            .expect("a valid template");
        let target = ProgressDrawTarget::term_like(Box::new(Narrow(Term::stderr())));
        let bar = ProgressBar::with_draw_target(None, target)
            .with_style(style)
            .with_message(what.clone())
            .with_prefix(typed_text(&self.typed))
            .with_elapsed(since.elapsed());
        bar.enable_steady_tick(TICK);
        self.bar = Some(bar);
    }

    /// Clears the spinner off the screen (until the next [`Activity::show`] or
    /// [`Activity::doing`]).
    pub fn hide(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    /// Runs `print` with the spinner off the screen, then draws it again.
    pub fn suspend<R>(&self, print: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }
}

/// How the spinner shows a message being typed.
fn typed_text(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("  › {text}")
    }
}

impl Drop for Activity {
    /// However following ends, no spinner is left behind (indicatif would leave it drawn).
    fn drop(&mut self) {
        self.hide();
    }
}

/// Stderr's terminal, two columns narrower than it is. indicatif pads the spinner's line to
/// the terminal's width, leaving the cursor in the last column; the `^C` the terminal echoes
/// for Ctrl-C would then wrap to a new line, and the spinner's line could no longer be
/// cleared. Two columns short, the echo stays on the spinner's line and is cleared with it.
#[derive(Debug)]
struct Narrow(Term);

impl TermLike for Narrow {
    fn width(&self) -> u16 {
        self.0.size().1.saturating_sub(2)
    }

    fn height(&self) -> u16 {
        self.0.size().0
    }

    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_up(n)
    }

    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_down(n)
    }

    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_right(n)
    }

    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        self.0.move_cursor_left(n)
    }

    fn write_line(&self, s: &str) -> io::Result<()> {
        self.0.write_line(s)
    }

    fn write_str(&self, s: &str) -> io::Result<()> {
        self.0.write_str(s)
    }

    fn clear_line(&self) -> io::Result<()> {
        self.0.clear_line()
    }

    fn flush(&self) -> io::Result<()> {
        self.0.flush()
    }
}
