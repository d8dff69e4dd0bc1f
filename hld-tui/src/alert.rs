//! Telling the terminal that the daemon notified: a desktop notification by OSC 9 or OSC 777
//! where the terminal says it shows one, and the bell. Written between frames, outside
//! ratatui's buffer, so the screen is not disturbed.

use hld_client::view::clean;

/// The characters of a notification's text sent at most: a terminal shows one line.
const TEXT_CHARS: usize = 200;

/// How this terminal shows a notification beyond its bell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    /// The bell alone.
    Bell,
    /// iTerm2's `OSC 9 ; text`.
    Osc9,
    /// rxvt's `OSC 777 ; notify ; title ; body` (VTE, foot, Ghostty, WezTerm).
    Osc777,
}

impl Alert {
    /// The terminal's kind from what it says of itself: `TERM_PROGRAM`, `VTE_VERSION` and
    /// `TERM`. Under tmux or screen, which keep such sequences from the outer terminal, the
    /// bell alone.
    pub fn detect(
        term_program: Option<&str>,
        vte_version: Option<&str>,
        term: Option<&str>,
    ) -> Alert {
        let term = term.unwrap_or("");
        match term_program.unwrap_or("") {
            "tmux" => Alert::Bell,
            _ if term.starts_with("tmux") || term.starts_with("screen") => Alert::Bell,
            "iTerm.app" => Alert::Osc9,
            "WezTerm" | "ghostty" => Alert::Osc777,
            _ if vte_version.is_some_and(|v| !v.is_empty()) => Alert::Osc777,
            _ if term.starts_with("foot") || term == "xterm-ghostty" => Alert::Osc777,
            _ => Alert::Bell,
        }
    }

    /// [`Alert::detect`] from this process's environment.
    pub fn from_env() -> Alert {
        let var = |name| std::env::var(name).ok();
        Alert::detect(
            var("TERM_PROGRAM").as_deref(),
            var("VTE_VERSION").as_deref(),
            var("TERM").as_deref(),
        )
    }

    /// The bytes that show `title` and `text`, then ring the bell: the notification where the
    /// terminal shows one (a terminal that does not ignores it), and a sound where bells are on.
    pub fn sequence(self, title: &str, text: &str) -> String {
        let title = one_line(title);
        let text = one_line(text);
        match self {
            Alert::Bell => "\x07".to_owned(),
            Alert::Osc9 => format!("\x1b]9;{title}: {text}\x07\x07"),
            // The title is a field of its own: a `;` in it would start the body.
            Alert::Osc777 => format!("\x1b]777;notify;{};{text}\x07\x07", title.replace(';', ",")),
        }
    }
}

/// `text` as one short line with no control character: an agent's title must not end the
/// sequence early or send one of its own.
fn one_line(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(TEXT_CHARS)
        .collect();
    clean(&line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_says_which_notification_it_shows() {
        let xterm = Some("xterm-256color");
        assert_eq!(Alert::detect(None, None, xterm), Alert::Bell);
        assert_eq!(Alert::detect(Some("iTerm.app"), None, xterm), Alert::Osc9);
        assert_eq!(Alert::detect(Some("WezTerm"), None, xterm), Alert::Osc777);
        assert_eq!(Alert::detect(None, Some("7600"), xterm), Alert::Osc777);
        assert_eq!(Alert::detect(None, Some(""), xterm), Alert::Bell);
        assert_eq!(Alert::detect(None, None, Some("foot")), Alert::Osc777);
        // tmux keeps the sequence from the terminal it runs in, whatever that is.
        assert_eq!(
            Alert::detect(Some("tmux"), Some("7600"), xterm),
            Alert::Bell
        );
        assert_eq!(
            Alert::detect(None, Some("7600"), Some("screen")),
            Alert::Bell
        );
    }

    #[test]
    fn a_notification_is_one_clean_line_and_rings() {
        let title = "Fix; the\ntests\x1b]0;pwned\x07";
        let text = "Bash: cargo test";
        assert_eq!(Alert::Bell.sequence(title, text), "\x07");
        assert_eq!(
            Alert::Osc9.sequence(title, text),
            "\x1b]9;Fix; the tests\u{FFFD}]0;pwned\u{FFFD}: Bash: cargo test\x07\x07"
        );
        assert_eq!(
            Alert::Osc777.sequence(title, text),
            "\x1b]777;notify;Fix, the tests\u{FFFD}]0,pwned\u{FFFD};Bash: cargo test\x07\x07"
        );
        let long = "x".repeat(1000);
        assert!(Alert::Osc9.sequence(&long, "").len() < 2 * TEXT_CHARS);
    }
}
