//! Telling a terminal that the daemon notified: the bell, then a notification escape the
//! terminal shows on its own (a desktop notification or a badge). `hlyr --notify` and
//! `hld-tui` both write [`Alert::sequence`].
//!
//! Which escape: OSC 777 (`ESC ] 777 ; notify ; TITLE ; BODY BEL`) where the terminal says it
//! takes it: `VTE_VERSION` set (GNOME Terminal, Tilix and the other VTE terminals),
//! `TERM_PROGRAM` `WezTerm` or `ghostty`, or a `TERM` of rxvt (urxvt's notify extension).
//! Everywhere else OSC 9 (`ESC ] 9 ; BODY BEL`: iTerm2, kitty, Windows Terminal, foot…), which
//! a terminal that does not know it ignores.

use super::{clean, ASK_USER_QUESTION};
use crate::protocol::{Approval, ApprovalType};

/// The characters of a notification's title or text sent at most: a terminal shows one line.
const TEXT_CHARS: usize = 200;

/// The notification escape a terminal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alert {
    /// `OSC 9 ; body`.
    Osc9,
    /// `OSC 777 ; notify ; title ; body`.
    Osc777,
}

impl Alert {
    /// The escape the terminal takes, by what it says of itself.
    pub fn detect(
        term_program: Option<&str>,
        vte_version: Option<&str>,
        term: Option<&str>,
    ) -> Alert {
        let vte = vte_version.is_some_and(|v| !v.is_empty());
        let program = matches!(term_program, Some("WezTerm" | "ghostty"));
        let rxvt = term.is_some_and(|t| t.starts_with("rxvt"));
        if vte || program || rxvt {
            Alert::Osc777
        } else {
            Alert::Osc9
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

    /// The bell, then the notification of `title` and `text`, each made one clean line.
    pub fn sequence(self, title: &str, text: &str) -> String {
        let title = one_line(title);
        let text = one_line(text);
        match self {
            Alert::Osc9 => format!("\x07\x1b]9;{title}: {text}\x07"),
            // A `;` in the title would end it early.
            Alert::Osc777 => format!("\x07\x1b]777;notify;{};{text}\x07", title.replace(';', ",")),
        }
    }
}

/// `text` as one short line with no control character: an agent's title must not end the
/// sequence early or send one of its own.
pub fn one_line(text: &str) -> String {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(TEXT_CHARS)
        .collect();
    clean(&line).into_owned()
}

/// The longest text a notification carries from a tool's input, a question or an error, in
/// characters.
const SUBJECT_CHARS: usize = 120;

/// `text` on one line, cut with `…` to the length of a notification's subject.
pub fn cut_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(SUBJECT_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// What a notification says of `approval` waiting, and whether it asks a question: `Asks:`
/// and the question, or the tool and what the call acts on (a command, a path, a URL or a
/// pattern; never a file's content). The daemon's notifier says it so, and so does hlyr when
/// it rings for an approval it found waiting.
pub fn waiting_line(approval: &Approval) -> (bool, String) {
    let tool = approval.function_name.as_deref().unwrap_or_default();
    let input = approval.function_args.as_ref();
    if approval.kind == ApprovalType::HumanContact || tool == ASK_USER_QUESTION {
        let first = || input?.get("questions")?.get(0)?.get("question")?.as_str();
        let asked = approval
            .message
            .as_deref()
            .or_else(first)
            .unwrap_or_default();
        return (true, format!("Asks: {}", cut_line(asked)));
    }
    let keys = [
        "command",
        "file_path",
        "notebook_path",
        "path",
        "url",
        "pattern",
    ];
    let subject = keys.iter().find_map(|key| input?.get(key)?.as_str());
    match subject {
        Some(what) => (false, format!("{tool}: {}", cut_line(what))),
        None => (false, tool.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_says_which_escape_it_takes() {
        let xterm = Some("xterm-256color");
        assert_eq!(Alert::detect(None, None, xterm), Alert::Osc9);
        assert_eq!(Alert::detect(Some("iTerm.app"), None, xterm), Alert::Osc9);
        assert_eq!(Alert::detect(Some("WezTerm"), None, xterm), Alert::Osc777);
        assert_eq!(Alert::detect(None, Some("7600"), xterm), Alert::Osc777);
        assert_eq!(Alert::detect(None, Some(""), xterm), Alert::Osc9);
        let rxvt = Some("rxvt-unicode-256color");
        assert_eq!(Alert::detect(None, None, rxvt), Alert::Osc777);
    }

    #[test]
    fn a_notification_rings_and_is_one_clean_line() {
        let title = "Fix; the\ntests\x1b]0;pwned\x07";
        let text = "Bash: cargo test";
        assert_eq!(
            Alert::Osc9.sequence(title, text),
            "\x07\x1b]9;Fix; the tests\u{FFFD}]0;pwned\u{FFFD}: Bash: cargo test\x07"
        );
        assert_eq!(
            Alert::Osc777.sequence(title, text),
            "\x07\x1b]777;notify;Fix, the tests\u{FFFD}]0,pwned\u{FFFD};Bash: cargo test\x07"
        );
        let long = "x".repeat(1000);
        assert!(Alert::Osc9.sequence(&long, "").len() < 2 * TEXT_CHARS);
    }
}
