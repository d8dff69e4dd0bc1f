//! Keys typed on the terminal, one at a time, while a question waits for them, or all along
//! while `hlyr launch` holds a conversation.
//!
//! Stdin is read on its own thread (a blocked read must never hold up the runtime), and what it
//! reads is parsed into [`Key`]s. Only while a question is on screen, or while a conversation
//! [holds](Keys::hold) them, is the terminal taken out of its line mode (no line editing, no
//! echo, so that each key arrives as it is pressed); its other modes stay, so Ctrl-C is still a
//! signal and a newline still starts a line. The modes it had are restored as soon as the
//! question leaves the screen (unless held), and on drop.

use std::io::{IsTerminal, Read};

use nix::sys::termios::{self, FlushArg, LocalFlags, SetArg, SpecialCharacterIndices, Termios};
use tokio::sync::mpsc;

/// A key as the questions read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Esc,
    Backspace,
    Tab,
    /// Shift+Tab.
    BackTab,
    /// The arrow up.
    Up,
    /// The arrow down.
    Down,
    /// Ctrl-D.
    EndOfInput,
}

/// The terminal on stdin, read key by key while a question waits.
#[derive(Debug)]
pub struct Keys {
    chunks: mpsc::UnboundedReceiver<Vec<u8>>,
    /// The terminal's modes as found.
    found: Termios,
    /// Whether keys are read one at a time now.
    single: bool,
    /// Keys are read one at a time until drop, questions or not.
    held: bool,
}

impl Keys {
    /// The keys of the terminal on stdin; `None` when stdin is not a terminal.
    pub fn on_terminal() -> Option<Keys> {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return None;
        }
        let found = termios::tcgetattr(&stdin).ok()?;
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut chunk = [0u8; 1024];
            loop {
                match stdin.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(chunk[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Some(Keys {
            chunks: rx,
            found,
            single: false,
            held: false,
        })
    }

    /// Reads keys one at a time, unechoed, from now on. `fresh` forgets anything typed before
    /// (a new question is not answered by keys pressed before it was asked).
    pub fn single(&mut self, fresh: bool) {
        let stdin = std::io::stdin();
        if fresh {
            let _ = termios::tcflush(&stdin, FlushArg::TCIFLUSH);
            while self.chunks.try_recv().is_ok() {}
        }
        if self.single {
            return;
        }
        let mut modes = self.found.clone();
        modes
            .local_flags
            .remove(LocalFlags::ICANON | LocalFlags::ECHO);
        modes.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        modes.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        self.single = termios::tcsetattr(&stdin, SetArg::TCSANOW, &modes).is_ok();
    }

    /// Reads keys one at a time from now until drop: [`Keys::lines`] no longer gives the
    /// terminal its line mode back.
    pub fn hold(&mut self) {
        self.single(false);
        self.held = true;
    }

    /// Gives the terminal its modes back: lines, echoed (unless [held](Keys::hold)).
    pub fn lines(&mut self) {
        if !self.held && std::mem::take(&mut self.single) {
            let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, &self.found);
        }
    }

    /// The keys of the next chunk read; `None` once stdin has ended.
    pub async fn next(&mut self) -> Option<Vec<Key>> {
        self.chunks.recv().await.map(|chunk| parse(&chunk))
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.held = false;
        self.lines();
    }
}

/// While it lives, the terminal on stdin does not echo control characters: Ctrl-C is still a
/// signal, but its `^C` is not written wherever the cursor happens to be (mid-line, before
/// the spinner is drawn or while the session's output goes on), where nothing would clear it.
#[derive(Debug)]
pub struct QuietControls {
    /// The terminal's modes as found, given back on drop; `None` when stdin is no terminal.
    found: Option<Termios>,
}

impl QuietControls {
    /// Stops the terminal on stdin, if it is one, from echoing control characters.
    pub fn on_terminal() -> QuietControls {
        let stdin = std::io::stdin();
        let found = stdin
            .is_terminal()
            .then(|| termios::tcgetattr(&stdin).ok())
            .flatten();
        if let Some(found) = &found {
            let mut modes = found.clone();
            modes.local_flags.remove(LocalFlags::ECHOCTL);
            let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &modes);
        }
        QuietControls { found }
    }
}

impl Drop for QuietControls {
    fn drop(&mut self) {
        if let Some(found) = &self.found {
            let _ = termios::tcsetattr(std::io::stdin(), SetArg::TCSANOW, found);
        }
    }
}

/// The keys in one read. A read of Esc alone is the Esc key; Shift+Tab is `CSI Z`, the arrows
/// up and down `CSI A` and `CSI B`; any other escape sequence (another arrow, a function key,
/// Alt with a key) is skipped whole. Other control
/// characters are ignored.
fn parse(chunk: &[u8]) -> Vec<Key> {
    let text = String::from_utf8_lossy(chunk);
    let mut chars = text.chars().peekable();
    let mut keys = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => keys.push(Key::Enter),
            '\t' => keys.push(Key::Tab),
            '\u{4}' => keys.push(Key::EndOfInput),
            '\u{7f}' | '\u{8}' => keys.push(Key::Backspace),
            '\u{1b}' => match chars.next() {
                None => keys.push(Key::Esc),
                // CSI and SS3 sequences end with a byte in `@`..=`~`.
                Some(lead @ ('[' | 'O')) => {
                    for (at, c) in chars.by_ref().enumerate() {
                        if ('@'..='~').contains(&c) {
                            // Shift+Tab is CSI Z without parameters; the arrows up and
                            // down CSI (or SS3, in application mode) A and B.
                            match (lead, c) {
                                ('[', 'Z') if at == 0 => keys.push(Key::BackTab),
                                (_, 'A') if at == 0 => keys.push(Key::Up),
                                (_, 'B') if at == 0 => keys.push(Key::Down),
                                _ => {}
                            }
                            break;
                        }
                    }
                }
                Some(_) => {}
            },
            c if c.is_control() => {}
            c => keys.push(Key::Char(c)),
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_parsed_and_escape_sequences_skipped() {
        use Key::*;
        assert_eq!(parse(b"a"), [Char('a')]);
        assert_eq!(parse("né\r".as_bytes()), [Char('n'), Char('é'), Enter]);
        assert_eq!(parse(b"\x1b"), [Esc]);
        assert_eq!(parse(b"\x7f\x08"), [Backspace, Backspace]);
        // Left and right, F5 and Alt+x are skipped; up and down are keys.
        assert_eq!(parse(b"\x1b[D\x1b[15~\x1bOP\x1bxq"), [Char('q')]);
        assert_eq!(parse(b"\x1b[A\x1bOB\x1b[1;2A"), [Up, Down]);
        assert_eq!(parse(b"ab\x1b"), [Char('a'), Char('b'), Esc]);
        assert_eq!(parse(b"\x01\x04z\t"), [EndOfInput, Char('z'), Tab]);
        // Shift+Tab, alone or among other keys; a CSI Z with parameters is not it.
        assert_eq!(parse(b"\x1b[Z"), [BackTab]);
        assert_eq!(
            parse(b"a\x1b[Z\x1b[Zb"),
            [Char('a'), BackTab, BackTab, Char('b')]
        );
        assert_eq!(parse(b"\x1b[1;5Z\x1bOZ"), []);
    }
}
