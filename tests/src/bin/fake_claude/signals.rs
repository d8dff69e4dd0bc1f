//! Signal flags: SIGINT interrupts the turn, SIGTERM/SIGHUP end the process (exit 143/129),
//! and an `interrupt` control request on stdin (stream-json input) interrupts the turn too.
//!
//! The handlers only set atomics; every waiting loop in the fake polls [`Signals::pending`]
//! at [`POLL`] intervals, so a signal is noticed promptly wherever the fake is blocked.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// How often blocking waits look at the signal flags.
pub const POLL: Duration = Duration::from_millis(10);

/// A signal that must stop what the fake is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGINT: abort the turn, print the interrupt markers and a result, exit 0.
    Interrupt,
    /// An `interrupt` control request: abort the turn like SIGINT, then read on.
    Requested,
    /// SIGTERM or SIGHUP: exit with this code (128 + signal number), no result line.
    Fatal(i32),
}

/// The installed signal flags (cheap to clone).
#[derive(Debug, Clone)]
pub struct Signals {
    interrupted: Arc<AtomicBool>,
    fatal_exit: Arc<AtomicUsize>,
    /// `interrupt` control requests read from stdin and not answered yet.
    requested: Arc<AtomicUsize>,
}

impl Signals {
    /// Installs the handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> io::Result<Self> {
        let signals = Self {
            interrupted: Arc::new(AtomicBool::new(false)),
            fatal_exit: Arc::new(AtomicUsize::new(0)),
            requested: Arc::new(AtomicUsize::new(0)),
        };
        signal_hook::flag::register(SIGINT, Arc::clone(&signals.interrupted))?;
        for signal in [SIGTERM, SIGHUP] {
            let code = 128 + usize::try_from(signal).expect("signal numbers are positive");
            signal_hook::flag::register_usize(signal, Arc::clone(&signals.fatal_exit), code)?;
        }
        Ok(signals)
    }

    /// The signal received so far, if any; a fatal one wins over an interrupt, SIGINT over a
    /// control request.
    pub fn pending(&self) -> Option<Signal> {
        match self.fatal_exit.load(Ordering::SeqCst) {
            0 if self.interrupted.load(Ordering::SeqCst) => Some(Signal::Interrupt),
            0 if self.requested.load(Ordering::SeqCst) > 0 => Some(Signal::Requested),
            0 => None,
            code => Some(Signal::Fatal(
                i32::try_from(code).expect("exit codes are small"),
            )),
        }
    }

    /// Counts an `interrupt` control request, raised by the stdin reader as soon as it reads
    /// one, so that every wait of a running turn stops at once.
    pub fn request_interrupt(&self) {
        self.requested.fetch_add(1, Ordering::SeqCst);
    }

    /// Marks one `interrupt` control request as answered.
    pub fn interrupt_answered(&self) {
        let _ = self
            .requested
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }

    /// Whether `interrupt` control requests wait for their answer.
    pub fn interrupt_requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst) > 0
    }

    /// Sleeps for `duration` unless a signal arrives first.
    pub fn sleep(&self, duration: Duration) -> Result<(), Signal> {
        let deadline = Instant::now() + duration;
        loop {
            if let Some(signal) = self.pending() {
                return Err(signal);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(POLL));
        }
    }
}
