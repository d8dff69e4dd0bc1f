//! Yes-or-no questions on the terminal, for what cannot be undone (`daemon stop` with
//! sessions running) or changes more than was asked (restarting the daemon). Asked on stderr,
//! only when stdin and stderr are terminals: a script is never held up by a question.

use std::io::{BufRead, IsTerminal, Write};

use crate::output::{paint, BOLD};

/// Asks `question`; `Some(true)` for an answer starting with `y`, `Some(false)` for anything
/// else (Enter too), `None` when there is no terminal to ask on.
pub fn confirm(question: &str) -> Option<bool> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return None;
    }
    let mut err = anstream::stderr().lock();
    let _ = write!(err, "{} [y/N] ", paint(BOLD, question));
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return Some(false);
    }
    Some(answer.trim_start().to_ascii_lowercase().starts_with('y'))
}
