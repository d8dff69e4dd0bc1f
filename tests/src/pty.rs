//! A program on a real pseudo-terminal, its output read back through a terminal emulator
//! (vt100) as it comes: what `hld-tui` and `hlyr` show is what the tests look at, text and
//! colours, and keys reach them as a terminal sends them (Ctrl-C included, as a signal).

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use portable_pty::{CommandBuilder, MasterPty, PtySize};

use crate::{wait_for, WAIT};

/// Ctrl+C as a terminal sends it.
pub const CTRL_C: &str = "\x03";

/// A command for [`Terminal::spawn`]: `program` with a clean environment (only `PATH`, a
/// `TERM`, a UTF-8 locale, and `home` as `HOME` and, under it, `XDG_CONFIG_HOME`), run in
/// `home`. Nothing of the developer's configuration reaches it.
pub fn command(program: &Path, home: &Path) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(program);
    cmd.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env("HOME", home);
    cmd.env("XDG_CONFIG_HOME", home.join("config"));
    cmd.cwd(home);
    cmd
}

/// A running program on a pseudo-terminal of a given size, its output fed to a terminal
/// emulator. Killed on drop if still running.
pub struct Terminal {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    parser: Arc<Mutex<vt100::Parser>>,
    /// Every byte the program wrote, for what the emulator does not keep (OSC notifications).
    raw: Arc<Mutex<Vec<u8>>>,
    /// Set by the reader once the terminal has no writer left (the program and whatever it
    /// started on it are gone) and everything they wrote has been read.
    drained: Arc<AtomicBool>,
    exited: bool,
}

impl Terminal {
    /// Starts `cmd` on a new `rows`×`cols` terminal.
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Terminal {
        let pair = portable_pty::native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let child = pair
            .slave
            .spawn_command(cmd)
            .expect("spawn on the terminal");
        // Only the program holds the terminal's other end, so reading ends when it is gone.
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let drained = Arc::new(AtomicBool::new(false));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        {
            let parser = parser.clone();
            let drained = drained.clone();
            let raw = raw.clone();
            std::thread::spawn(move || {
                let mut chunk = [0u8; 8192];
                loop {
                    match reader.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            raw.lock().unwrap().extend_from_slice(&chunk[..n]);
                            parser.lock().unwrap().process(&chunk[..n]);
                        }
                    }
                }
                drained.store(true, Ordering::SeqCst);
            });
        }
        Terminal {
            child,
            master: pair.master,
            writer,
            parser,
            raw,
            drained,
            exited: false,
        }
    }

    /// The emulator, for what the screen holds beyond its text (cells, colours, modes).
    pub fn emulator(&self) -> MutexGuard<'_, vt100::Parser> {
        self.parser.lock().unwrap()
    }

    /// Everything the program wrote so far, as text (lossy), escapes and all.
    pub fn output(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }

    /// The screen as text, a line per row.
    pub fn screen_text(&self) -> String {
        self.emulator().screen().contents()
    }

    /// Waits until the screen shows `text` ([`WAIT`] at most); returns the screen. Panics
    /// with the whole screen if it never does.
    #[track_caller]
    pub fn wait_screen(&self, text: &str) -> String {
        self.wait_until(&format!("{text:?}"), WAIT, |screen| screen.contains(text))
    }

    /// Waits until `done` holds for the screen's text (`within` at most); returns the screen.
    /// Panics with the whole screen, saying it never showed `what`, if it never does.
    #[track_caller]
    pub fn wait_until(&self, what: &str, within: Duration, done: impl Fn(&str) -> bool) -> String {
        let mut last = String::new();
        wait_for(within, || {
            last = self.screen_text();
            done(&last).then(|| last.clone())
        })
        .unwrap_or_else(|| {
            panic!("the screen never showed {what} within {within:?}; it shows:\n{last}")
        })
    }

    /// Waits until the screen shows `text` `times` times ([`WAIT`] at most); returns the
    /// screen.
    #[track_caller]
    pub fn wait_count(&self, text: &str, times: usize) -> String {
        self.wait_until(&format!("{text:?} ×{times}"), WAIT, |screen| {
            screen.matches(text).count() >= times
        })
    }

    /// Types `keys` (raw bytes, as the terminal would send them).
    pub fn send(&mut self, keys: &str) {
        self.writer
            .write_all(keys.as_bytes())
            .expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Waits for the program to exit (`within` at most) and for all it wrote to be read;
    /// returns its exit status.
    #[track_caller]
    pub fn wait_exit(&mut self, within: Duration) -> portable_pty::ExitStatus {
        let status = wait_for(within, || self.child.try_wait().expect("try_wait"));
        let status = status.unwrap_or_else(|| {
            panic!(
                "the program did not exit within {within:?}; the screen:\n{}",
                self.screen_text()
            )
        });
        self.exited = true;
        let drained = wait_for(within, || self.drained.load(Ordering::SeqCst).then_some(()));
        assert!(
            drained.is_some(),
            "the program exited but its terminal was not closed: something it started holds it"
        );
        status
    }

    /// The terminal's local modes now (`ICANON`, `ECHO`, …), as the program left them.
    pub fn local_flags(&self) -> libc::tcflag_t {
        let termios = self.master.get_termios().expect("the terminal's modes");
        termios.local_flags.bits()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if !self.exited {
            if let Some(pid) = self.child.process_id() {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
            let _ = self.child.wait();
        }
    }
}
