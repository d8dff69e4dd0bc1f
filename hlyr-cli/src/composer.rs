//! The message being typed while `hlyr launch` holds a conversation on a terminal: between
//! turns, on a prompt line (Enter sends; an empty line or Ctrl-D ends the conversation); while
//! the agent works, beside the spinner (Enter queues the message for the turn's end; Tab sends
//! it at once, steering the agent). Shift+Tab cycles the session's mode and `/model NAME`
//! switches its model, at any time; `/exit` or `/quit` ends the conversation between turns;
//! any other line, `/compact` included, is a message. Tab on a `/command` being typed, or on
//! an `@file` word, completes it instead, and after a `/word` past the line's start does
//! nothing. The line is edited as a shell's is: the arrows, Home and End move the cursor;
//! Ctrl-U, Ctrl-W and Ctrl-K erase before it, the word before it and after it. Keys in, what
//! to do out: no I/O. Up and Down recall the lines sent before, as a shell's history does.
//! While the agent works, Esc interrupts its turn as Claude Code's does, keeping the line typed
//! (the conversation goes on); between turns, Esc clears the line.

use crate::keys::{self, Key};

/// What a key asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    /// Nothing to send yet (the line may have changed).
    Nothing,
    /// Send the message: queued while the agent works, a new turn between turns.
    Send(String),
    /// Send the message now, interrupting the agent's turn.
    Steer(String),
    /// End the conversation (between turns only).
    End,
    /// Move the session to the next mode of the Shift+Tab cycle.
    CycleMode,
    /// Switch the session's model (`/model NAME`; empty for `/model` alone).
    Model(String),
    /// Complete the word being typed: find candidates, then [`Composer::complete`].
    Complete(Completion),
    /// Interrupt the agent's turn (Esc while it works); the line typed stays.
    Interrupt,
}

/// A word to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// A slash command: the line so far without its `/`.
    Command(String),
    /// A file of an `@` mention: the word so far without its `@`.
    File(String),
}

/// The command that switches the model rather than going to the agent as a message.
const MODEL_COMMAND: &str = "/model";
/// The commands that end the conversation (between turns).
const EXIT_COMMANDS: [&str; 2] = ["/exit", "/quit"];

/// The line being typed, the cursor in it, and the lines sent before.
#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    /// A byte offset of `text`, at a character's boundary.
    cursor: usize,
    /// The lines sent, oldest first, without a line repeated right after itself.
    history: Vec<String>,
    /// The line of `history` shown by Up and Down, and the line that was being typed then.
    recalled: Option<(usize, String)>,
}

impl Composer {
    /// A composer whose history starts with `earlier` (oldest first), e.g. the session's query.
    pub fn with_history(earlier: impl IntoIterator<Item = String>) -> Self {
        let mut composer = Composer::default();
        earlier.into_iter().for_each(|line| composer.remember(line));
        composer
    }

    /// What was typed so far.
    #[cfg(test)]
    fn text(&self) -> &str {
        &self.text
    }

    /// The line split at the cursor.
    pub fn at_cursor(&self) -> (&str, &str) {
        self.text.split_at(self.cursor)
    }

    /// The line as the spinner shows it: the character under the cursor in reverse video,
    /// unless the cursor is at the end.
    pub fn shown(&self) -> String {
        let (before, after) = self.at_cursor();
        let mut rest = after.chars();
        match rest.next() {
            Some(under) => format!("{before}\x1b[7m{under}\x1b[27m{}", rest.as_str()),
            None => before.to_owned(),
        }
    }

    /// Takes an editing key; `false` for any other.
    fn edit(&mut self, key: Key) -> bool {
        let (before, after) = self.at_cursor();
        let previous = before.char_indices().next_back().map_or(0, |(i, _)| i);
        let next = self.cursor + after.chars().next().map_or(0, char::len_utf8);
        match key {
            Key::Char(c) => {
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
            }
            Key::Backspace => {
                self.text.replace_range(previous..self.cursor, "");
                self.cursor = previous;
            }
            Key::Delete => self.text.replace_range(self.cursor..next, ""),
            Key::Left => self.cursor = previous,
            Key::Right => self.cursor = next,
            Key::Home => self.cursor = 0,
            Key::End => self.cursor = self.text.len(),
            Key::KillBefore => {
                self.text.replace_range(..self.cursor, "");
                self.cursor = 0;
            }
            Key::KillWord => {
                let start = keys::word_start(before);
                self.text.replace_range(start..self.cursor, "");
                self.cursor = start;
            }
            Key::KillAfter => self.text.truncate(self.cursor),
            Key::Esc => self.clear(),
            Key::Up | Key::Down => {
                self.recall(key == Key::Up);
                return true;
            }
            _ => return false,
        }
        // A line changed is the line being typed, wherever it came from.
        self.recalled = None;
        true
    }

    /// Shows the line sent before the one shown (`older`) or after it; past the newest, the
    /// line that was being typed when Up was first pressed.
    fn recall(&mut self, older: bool) {
        let at = match (&self.recalled, older) {
            (None, true) => self.history.len().checked_sub(1),
            (None, false) => return,
            (Some((at, _)), true) => Some(at.saturating_sub(1)),
            (Some((at, _)), false) => Some(at + 1).filter(|&at| at < self.history.len()),
        };
        let Some(at) = at else {
            if let Some((_, typed)) = self.recalled.take() {
                self.text = typed;
            }
            self.cursor = self.text.len();
            return;
        };
        let typed = match self.recalled.take() {
            Some((_, typed)) => typed,
            None => self.text.clone(),
        };
        self.text = self.history[at].clone();
        self.cursor = self.text.len();
        self.recalled = Some((at, typed));
    }

    /// Adds a line sent to the history (unless it repeats the last one).
    fn remember(&mut self, line: String) {
        if !line.is_empty() && self.history.last() != Some(&line) {
            self.history.push(line);
        }
    }

    /// Puts `text`, which could not be sent, back before what was typed since.
    pub fn restore(&mut self, text: &str) {
        let typed = self.take();
        self.text = [text, typed.as_str()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        self.cursor = self.text.len();
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Empties the line.
    pub fn clear(&mut self) {
        self.take();
    }

    /// Empties the line, returning what it held.
    fn take(&mut self) -> String {
        self.cursor = 0;
        self.recalled = None;
        std::mem::take(&mut self.text)
    }

    /// The word Tab completes, with the cursor at the line's end: a line that is a `/command`
    /// so far (but `/model`, which Tab takes), or a last word that starts with `@`.
    fn completing(&self) -> Option<Completion> {
        if self.cursor < self.text.len() || model(self.text.trim()).is_some() {
            return None;
        }
        if let Some(command) = self.text.strip_prefix('/') {
            return (!command.contains(char::is_whitespace))
                .then(|| Completion::Command(command.to_owned()));
        }
        let word = self.text.rsplit(char::is_whitespace).next()?;
        let file = word.strip_prefix('@')?;
        Some(Completion::File(file.to_owned()))
    }

    /// Completes the word being typed from `candidates` (whole words, `/` or `@` included):
    /// one candidate replaces it, followed by a space unless it is a directory; several extend
    /// it to what they all start with. Returns whether several remain to be shown.
    pub fn complete(&mut self, candidates: &[String]) -> bool {
        let Some(first) = candidates.first() else {
            return false;
        };
        let common = candidates.iter().fold(first.as_str(), |common, c| {
            let same = common
                .char_indices()
                .zip(c.chars())
                .find(|((_, a), b)| a != b)
                .map_or(common.len().min(c.len()), |((i, _), _)| i);
            &common[..same]
        });
        let word = self.text.rsplit(char::is_whitespace).next().unwrap_or("");
        let start = self.text.len() - word.len();
        if common.len() > self.text.len() - start {
            self.text.truncate(start);
            self.text.push_str(common);
        }
        if candidates.len() == 1 && !first.ends_with('/') {
            self.text.push(' ');
        }
        self.cursor = self.text.len();
        candidates.len() > 1
    }

    /// Takes `key`; `between_turns` when the agent waits for the next message.
    pub fn key(&mut self, key: Key, between_turns: bool) -> Typed {
        if key == Key::Tab {
            if let Some(word) = self.completing() {
                return Typed::Complete(word);
            }
            // A `/word` past the line's start is no command to complete, but Tab there was
            // meant as completion: it does not send (nor interrupt the agent).
            let last = self.text.rsplit(char::is_whitespace).next();
            if last.is_some_and(|w| w.starts_with('/')) && !self.text.starts_with('/') {
                return Typed::Nothing;
            }
        }
        let blank = self.text.trim().is_empty();
        match key {
            Key::BackTab => return Typed::CycleMode,
            // `/exit` and `/quit` end the conversation as Claude Code's do; while the agent
            // works they are no message for it, and wait on the line.
            Key::Enter if EXIT_COMMANDS.contains(&self.text.trim()) => {
                if between_turns {
                    self.take();
                    return Typed::End;
                }
            }
            Key::Enter | Key::Tab if !blank => {
                let text = self.take().trim().to_owned();
                self.remember(text.clone());
                if let Some(model) = model(&text) {
                    return Typed::Model(model.to_owned());
                }
                return match key {
                    Key::Tab if !between_turns => Typed::Steer(text),
                    _ => Typed::Send(text),
                };
            }
            Key::Enter | Key::EndOfInput if between_turns && blank => {
                self.take();
                return Typed::End;
            }
            // On a line, Ctrl-D erases under the cursor, as a shell's does.
            Key::EndOfInput => drop(self.edit(Key::Delete)),
            // Esc stops the agent as Claude Code's does, and leaves the line typed as it is.
            Key::Esc if !between_turns => return Typed::Interrupt,
            key => drop(self.edit(key)),
        }
        Typed::Nothing
    }
}

/// The model `/model NAME` names (empty for `/model` alone); `None` for any other line.
fn model(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(MODEL_COMMAND)?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then(|| rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(composer: &mut Composer, text: &str, between_turns: bool) {
        for c in text.chars() {
            assert_eq!(composer.key(Key::Char(c), between_turns), Typed::Nothing);
        }
    }

    #[test]
    fn between_turns_enter_sends_and_an_empty_line_or_ctrl_d_ends() {
        let mut c = Composer::default();
        typed(&mut c, " now the tests ", true);
        assert_eq!(c.key(Key::Enter, true), Typed::Send("now the tests".into()));
        assert_eq!(c.text(), "");
        assert_eq!(c.key(Key::Enter, true), Typed::End);
        typed(&mut c, "  ", true);
        assert_eq!(c.key(Key::Enter, true), Typed::End);
        assert_eq!(c.key(Key::EndOfInput, true), Typed::End);
        // Tab between turns sends: there is no turn to steer.
        typed(&mut c, "x", true);
        assert_eq!(c.key(Key::Tab, true), Typed::Send("x".into()));
    }

    #[test]
    fn while_the_agent_works_enter_queues_tab_steers_and_nothing_ends() {
        let mut c = Composer::default();
        for key in [Key::Enter, Key::Tab, Key::EndOfInput] {
            assert_eq!(c.key(key, false), Typed::Nothing);
        }
        typed(&mut c, "and the docs", false);
        assert_eq!(c.key(Key::Enter, false), Typed::Send("and the docs".into()));
        typed(&mut c, "stopx", false);
        assert_eq!(c.key(Key::Backspace, false), Typed::Nothing);
        assert_eq!(c.text(), "stop");
        assert_eq!(c.key(Key::EndOfInput, false), Typed::Nothing);
        assert_eq!(c.key(Key::Tab, false), Typed::Steer("stop".into()));
        // Esc interrupts the turn and keeps the line; between turns there is none to
        // interrupt, and Esc clears the line.
        typed(&mut c, "then", false);
        assert_eq!(c.key(Key::Esc, false), Typed::Interrupt);
        assert_eq!(c.text(), "then");
        assert_eq!(c.key(Key::Esc, true), Typed::Nothing);
        assert_eq!(c.text(), "");
        assert_eq!(c.key(Key::Esc, false), Typed::Interrupt);
    }

    #[test]
    fn up_and_down_recall_the_lines_sent_and_come_back_to_the_one_typed() {
        let mut c = Composer::with_history(["fix the build".to_owned()]);
        typed(&mut c, "now the docs", true);
        assert_eq!(c.key(Key::Enter, true), Typed::Send("now the docs".into()));
        typed(&mut c, "now the docs", false);
        assert_eq!(c.key(Key::Tab, false), Typed::Steer("now the docs".into()));
        typed(&mut c, "/model opus", false);
        assert_eq!(c.key(Key::Enter, false), Typed::Model("opus".into()));
        typed(&mut c, "half", true);
        for expected in [
            "/model opus",
            "now the docs",
            "fix the build",
            "fix the build",
        ] {
            assert_eq!(c.key(Key::Up, true), Typed::Nothing);
            assert_eq!(c.at_cursor(), (expected, ""));
        }
        c.key(Key::Down, true);
        assert_eq!(c.text(), "now the docs");
        c.key(Key::Down, true);
        c.key(Key::Down, true);
        assert_eq!(c.text(), "half");
        c.key(Key::Down, true);
        assert_eq!(c.text(), "half");
        // A recalled line edited is sent as edited, and Down no longer leaves it.
        c.key(Key::Up, true);
        c.key(Key::Up, true);
        typed(&mut c, " again", true);
        c.key(Key::Down, true);
        assert_eq!(c.text(), "now the docs again");
        assert_eq!(
            c.key(Key::Enter, true),
            Typed::Send("now the docs again".into())
        );
        c.key(Key::Up, true);
        assert_eq!(c.text(), "now the docs again");
    }

    #[test]
    fn tab_completes_a_slash_command_or_an_at_file_instead_of_sending() {
        let words = |c: &[&str]| c.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        for between_turns in [true, false] {
            let mut c = Composer::default();
            typed(&mut c, "/co", between_turns);
            assert_eq!(
                c.key(Key::Tab, between_turns),
                Typed::Complete(Completion::Command("co".into()))
            );
            assert!(c.complete(&words(&["/compact", "/config", "/context"])));
            assert_eq!(c.text(), "/co");
            typed(&mut c, "mp", between_turns);
            assert!(!c.complete(&words(&["/compact"])));
            assert_eq!(c.text(), "/compact ");
            // A line past its command is a message again.
            assert_eq!(
                c.key(Key::Enter, between_turns),
                Typed::Send("/compact".into())
            );

            typed(&mut c, "look at @sr", between_turns);
            assert_eq!(
                c.key(Key::Tab, between_turns),
                Typed::Complete(Completion::File("sr".into()))
            );
            assert!(c.complete(&words(&["@src/main.rs", "@src/lib.rs"])));
            assert_eq!(c.text(), "look at @src/");
            assert!(!c.complete(&words(&["@src/main.rs"])));
            assert_eq!(c.text(), "look at @src/main.rs ");
            // Nothing found: the word stays as typed.
            typed(&mut c, "@zz", between_turns);
            assert!(!c.complete(&[]));
            assert_eq!(c.text(), "look at @src/main.rs @zz");
        }
    }

    #[test]
    fn the_line_is_edited_as_a_shells_is() {
        let mut c = Composer::default();
        typed(&mut c, "run tésts", true);
        for key in [Key::Left, Key::Left, Key::Left, Key::Backspace] {
            assert_eq!(c.key(key, true), Typed::Nothing);
        }
        assert_eq!(c.at_cursor(), ("run t", "sts"));
        typed(&mut c, "e", true);
        assert_eq!(c.shown(), "run te\x1b[7ms\x1b[27mts");
        c.key(Key::Home, true);
        typed(&mut c, "then ", true);
        c.key(Key::End, true);
        assert_eq!(c.text(), "then run tests");
        assert_eq!(c.shown(), "then run tests");
        // Ctrl-W erases the word before the cursor, spaces after it included.
        typed(&mut c, "  ", true);
        c.key(Key::KillWord, true);
        assert_eq!(c.text(), "then run ");
        // Ctrl-K after the cursor, Ctrl-U before it; Delete and Ctrl-D under it.
        c.key(Key::Home, true);
        c.key(Key::Right, true);
        c.key(Key::KillAfter, true);
        assert_eq!(c.text(), "t");
        typed(&mut c, "ab", true);
        c.key(Key::Left, true);
        c.key(Key::KillBefore, true);
        assert_eq!(c.at_cursor(), ("", "b"));
        c.key(Key::Right, true);
        c.key(Key::Right, true);
        assert_eq!(c.at_cursor(), ("b", ""));
        typed(&mut c, "cd", true);
        c.key(Key::Home, true);
        c.key(Key::Delete, true);
        // Ctrl-D on a line erases rather than ends, and drops nothing else.
        assert_eq!(c.key(Key::EndOfInput, true), Typed::Nothing);
        assert_eq!(c.text(), "d");
        // Enter sends the whole line wherever the cursor is; Tab then completes nothing.
        typed(&mut c, "/co", true);
        assert_eq!(c.key(Key::Tab, true), Typed::Send("/cod".into()));
        assert_eq!(c.at_cursor(), ("", ""));
    }

    #[test]
    fn tab_after_a_slash_word_past_the_start_neither_sends_nor_steers() {
        for between_turns in [true, false] {
            let mut c = Composer::default();
            typed(&mut c, "then run /com", between_turns);
            assert_eq!(c.key(Key::Tab, between_turns), Typed::Nothing);
            assert_eq!(c.text(), "then run /com");
            // Past the word, Tab sends (or steers) as ever.
            typed(&mut c, " ", between_turns);
            let sent = c.key(Key::Tab, between_turns);
            assert_ne!(sent, Typed::Nothing);
        }
    }

    #[test]
    fn slash_exit_ends_between_turns_and_waits_on_the_line_while_the_agent_works() {
        let mut c = Composer::default();
        typed(&mut c, "/exit", false);
        assert_eq!(c.key(Key::Enter, false), Typed::Nothing);
        assert_eq!(c.text(), "/exit");
        assert_eq!(c.key(Key::Enter, true), Typed::End);
        typed(&mut c, " /quit ", true);
        assert_eq!(c.key(Key::Enter, true), Typed::End);
        typed(&mut c, "/exits are marked", true);
        assert_eq!(
            c.key(Key::Enter, true),
            Typed::Send("/exits are marked".into())
        );
    }

    #[test]
    fn shift_tab_cycles_the_mode_and_keeps_the_line() {
        for between_turns in [true, false] {
            let mut c = Composer::default();
            typed(&mut c, "half", between_turns);
            assert_eq!(c.key(Key::BackTab, between_turns), Typed::CycleMode);
            assert_eq!(c.text(), "half");
        }
    }

    #[test]
    fn slash_model_switches_the_model_and_other_commands_are_messages() {
        for (between_turns, key) in [(true, Key::Enter), (false, Key::Enter), (false, Key::Tab)] {
            let mut c = Composer::default();
            typed(&mut c, " /model  claude-opus-4-1 ", between_turns);
            assert_eq!(
                c.key(key, between_turns),
                Typed::Model("claude-opus-4-1".into())
            );
            assert_eq!(c.text(), "");
            typed(&mut c, "/model", between_turns);
            assert_eq!(c.key(key, between_turns), Typed::Model(String::new()));
        }
        let mut c = Composer::default();
        typed(&mut c, "/compact", false);
        assert_eq!(c.key(Key::Enter, false), Typed::Send("/compact".into()));
        typed(&mut c, "/models are next", true);
        assert_eq!(
            c.key(Key::Enter, true),
            Typed::Send("/models are next".into())
        );
    }
}
