//! Telling the terminal: its bell, then a notification escape the terminal shows on its own
//! (as a desktop notification or a badge), on stderr and only when stderr is a terminal.
//!
//! Which escape: OSC 777 (`ESC ] 777 ; notify ; TITLE ; BODY BEL`) where the terminal says it
//! takes it: `VTE_VERSION` set (GNOME Terminal, Tilix and the other VTE terminals),
//! `TERM_PROGRAM` `WezTerm` or `ghostty`, or a `TERM` of rxvt (urxvt's notify extension).
//! Everywhere else OSC 9 (`ESC ] 9 ; BODY BEL`: iTerm2, kitty, Windows Terminal, foot…),
//! which a terminal that does not know it ignores. Written past anstream, which would strip
//! them under NO_COLOR.

use std::io::{IsTerminal, Write};

/// The notification escape a terminal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Osc {
    /// `OSC 9 ; body`.
    Nine,
    /// `OSC 777 ; notify ; title ; body`.
    SevenSevenSeven,
}

impl Osc {
    /// The escape the terminal hlyr runs in takes, by its environment.
    pub fn from_env() -> Osc {
        let var = |name| std::env::var(name).ok();
        Osc::of(
            var("TERM_PROGRAM").as_deref(),
            var("VTE_VERSION").as_deref(),
            var("TERM").as_deref(),
        )
    }

    fn of(term_program: Option<&str>, vte_version: Option<&str>, term: Option<&str>) -> Osc {
        let vte = vte_version.is_some_and(|v| !v.is_empty());
        let program = matches!(term_program, Some("WezTerm" | "ghostty"));
        let rxvt = term.is_some_and(|t| t.starts_with("rxvt"));
        if vte || program || rxvt {
            Osc::SevenSevenSeven
        } else {
            Osc::Nine
        }
    }
}

/// The bell and the notification for `title` and `text` (each one clean line).
pub fn sequence(osc: Osc, title: &str, text: &str) -> String {
    match osc {
        Osc::Nine => format!("\x07\x1b]9;{title}: {text}\x07"),
        // A `;` in the title would end it early.
        Osc::SevenSevenSeven => {
            format!("\x07\x1b]777;notify;{};{text}\x07", title.replace(';', ","))
        }
    }
}

/// Rings the terminal on stderr, when it is one.
pub fn ring(osc: Osc, title: &str, text: &str) {
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = err.write_all(sequence(osc, title, text).as_bytes());
        let _ = err.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_says_which_escape_it_takes() {
        assert_eq!(Osc::of(None, None, Some("xterm-256color")), Osc::Nine);
        assert_eq!(Osc::of(Some("iTerm.app"), None, None), Osc::Nine);
        assert_eq!(Osc::of(None, Some("7600"), None), Osc::SevenSevenSeven);
        assert_eq!(Osc::of(None, Some(""), None), Osc::Nine);
        assert_eq!(Osc::of(Some("WezTerm"), None, None), Osc::SevenSevenSeven);
        assert_eq!(
            Osc::of(None, None, Some("rxvt-unicode-256color")),
            Osc::SevenSevenSeven
        );
    }

    #[test]
    fn the_bell_comes_with_the_notification() {
        assert_eq!(
            sequence(Osc::Nine, "Fix tests", "Bash: ls"),
            "\x07\x1b]9;Fix tests: Bash: ls\x07"
        );
        assert_eq!(
            sequence(Osc::SevenSevenSeven, "a;b", "Bash: ls"),
            "\x07\x1b]777;notify;a,b;Bash: ls\x07"
        );
    }
}
