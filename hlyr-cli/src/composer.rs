//! The message being typed while `hlyr launch` holds a conversation on a terminal: between
//! turns, on a prompt line (Enter sends; an empty line or Ctrl-D ends the conversation); while
//! the agent works, beside the spinner (Enter queues the message for the turn's end; Tab sends
//! it at once, steering the agent). Shift+Tab cycles the session's mode and `/model NAME`
//! switches its model, at any time; any other line, `/compact` included, is a message. Keys
//! in, what to do out: no I/O.

use crate::keys::Key;

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
}

/// The command that switches the model rather than going to the agent as a message.
const MODEL_COMMAND: &str = "/model";

/// The line being typed.
#[derive(Debug, Default)]
pub struct Composer {
    text: String,
}

impl Composer {
    /// What was typed so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Takes `key`; `between_turns` when the agent waits for the next message.
    pub fn key(&mut self, key: Key, between_turns: bool) -> Typed {
        let blank = self.text.trim().is_empty();
        match key {
            Key::Char(c) => self.text.push(c),
            Key::Backspace => {
                self.text.pop();
            }
            Key::Esc => self.text.clear(),
            Key::BackTab => return Typed::CycleMode,
            Key::Enter | Key::Tab if !blank => {
                let text = std::mem::take(&mut self.text).trim().to_owned();
                if let Some(model) = model(&text) {
                    return Typed::Model(model.to_owned());
                }
                return match key {
                    Key::Tab if !between_turns => Typed::Steer(text),
                    _ => Typed::Send(text),
                };
            }
            Key::Enter | Key::EndOfInput if between_turns => {
                self.text.clear();
                return Typed::End;
            }
            Key::Enter | Key::Tab | Key::EndOfInput => {}
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
        typed(&mut c, "oops", false);
        assert_eq!(c.key(Key::Esc, false), Typed::Nothing);
        assert_eq!(c.text(), "");
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
