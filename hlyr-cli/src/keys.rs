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
    /// The arrow left (or Ctrl-B).
    Left,
    /// The arrow right (or Ctrl-F).
    Right,
    /// Home (or Ctrl-A).
    Home,
    /// End (or Ctrl-E).
    End,
    /// Delete, the character under the cursor.
    Delete,
    /// Ctrl-U: erase the line before the cursor.
    KillBefore,
    /// Ctrl-W: erase the word before the cursor.
    KillWord,
    /// Ctrl-K: erase the line from the cursor.
    KillAfter,
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

/// Where the word that Ctrl-W erases from the end of `before` starts (after the spaces that
/// end `before`, the word they follow).
pub fn word_start(before: &str) -> usize {
    let word = before.trim_end_matches(char::is_whitespace);
    word.rfind(char::is_whitespace).map_or(0, |i| i + 1)
}

/// The keys in one read. A read of Esc alone is the Esc key; Shift+Tab is `CSI Z`; the arrows
/// `CSI` (or `SS3`, in application mode) `A` to `D`, Home and End `H` and `F` or `CSI 1~`/`7~`
/// and `CSI 4~`/`8~`, Delete `CSI 3~`; any other escape sequence (a modified key, a function
/// key, Alt with a key) is skipped whole. Of the other control characters, those of a shell's
/// line editing are keys (Ctrl-A, B, D, E, F, K, U, W) and the rest are ignored.
fn parse(chunk: &[u8]) -> Vec<Key> {
    let text = String::from_utf8_lossy(chunk);
    let mut chars = text.chars().peekable();
    let mut keys = Vec::new();
    while let Some(c) = chars.next() {
        let key = match c {
            '\r' | '\n' => Key::Enter,
            '\t' => Key::Tab,
            '\u{1}' => Key::Home,
            '\u{2}' => Key::Left,
            '\u{4}' => Key::EndOfInput,
            '\u{5}' => Key::End,
            '\u{6}' => Key::Right,
            '\u{b}' => Key::KillAfter,
            '\u{15}' => Key::KillBefore,
            '\u{17}' => Key::KillWord,
            '\u{7f}' | '\u{8}' => Key::Backspace,
            '\u{1b}' => match chars.next() {
                None => Key::Esc,
                // CSI and SS3 sequences end with a byte in `@`..=`~`, after their parameters.
                Some(lead @ ('[' | 'O')) => {
                    let mut params = String::new();
                    let mut last = None;
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            last = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    let Some(last) = last else {
                        continue;
                    };
                    match (lead, params.as_str(), last) {
                        ('[', "", 'Z') => Key::BackTab,
                        (_, "", 'A') => Key::Up,
                        (_, "", 'B') => Key::Down,
                        (_, "", 'C') => Key::Right,
                        (_, "", 'D') => Key::Left,
                        (_, "", 'H') | ('[', "1" | "7", '~') => Key::Home,
                        (_, "", 'F') | ('[', "4" | "8", '~') => Key::End,
                        ('[', "3", '~') => Key::Delete,
                        _ => continue,
                    }
                }
                Some(_) => continue,
            },
            c if c.is_control() => continue,
            c => Key::Char(c),
        };
        keys.push(key);
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
        // F5, Alt+x and Shift+Up are skipped; the arrows, Home, End and Delete are keys.
        assert_eq!(parse(b"\x1b[15~\x1bOP\x1bxq\x1b[1;2A"), [Char('q')]);
        assert_eq!(parse(b"\x1b[A\x1bOB\x1b[C\x1bOD"), [Up, Down, Right, Left]);
        assert_eq!(
            parse(b"\x1b[H\x1b[1~\x1bOF\x1b[4~\x1b[3~"),
            [Home, Home, End, End, Delete]
        );
        assert_eq!(parse(b"ab\x1b"), [Char('a'), Char('b'), Esc]);
        // A shell's line-editing keys; other control characters are skipped.
        assert_eq!(
            parse(b"\x01\x02\x04\x05\x06\x0b\x15\x17\x07z\t"),
            [
                Home,
                Left,
                EndOfInput,
                End,
                Right,
                KillAfter,
                KillBefore,
                KillWord,
                Char('z'),
                Tab
            ]
        );
        // Shift+Tab, alone or among other keys; a CSI Z with parameters is not it.
        assert_eq!(parse(b"\x1b[Z"), [BackTab]);
        assert_eq!(
            parse(b"a\x1b[Z\x1b[Zb"),
            [Char('a'), BackTab, BackTab, Char('b')]
        );
        assert_eq!(parse(b"\x1b[1;5Z\x1bOZ"), []);
    }
}
