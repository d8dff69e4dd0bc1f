//! Waiting out a daemon that went away, for the commands that watch it for long (`watch`, a
//! followed session): the loss is said once on stderr, connecting is tried again with
//! hld-tui's backoff (0.25 s, doubling up to 5 s), and the daemon's return is said. The
//! caller listens for Ctrl-C beside the wait, which never ends by itself.

use std::time::Duration;

use hld_client::{Address, Client};

use crate::output::{paint, DIM, YELLOW};

/// Backoff between attempts to reach the daemon: doubles from the first to the second (as
/// hld-tui's links do).
const BACKOFF: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(5));

/// The daemon watched, and how its loss was waited out so far.
pub struct Reconnect {
    address: Address,
    /// The next pause before trying to connect.
    pause: Duration,
    /// The loss was said, and the daemon not reached again since.
    told: bool,
    /// What stops the wait, as the loss says it.
    stops: &'static str,
}

impl Reconnect {
    /// For the daemon at `address`.
    pub fn new(address: &Address) -> Reconnect {
        Reconnect {
            address: address.clone(),
            pause: BACKOFF.0,
            told: false,
            stops: "Ctrl-C stops",
        }
    }

    /// For a caller that said the loss itself: only the daemon's return is said.
    pub fn said(mut self) -> Reconnect {
        self.told = true;
        self
    }

    /// The keys that stop the wait, when the caller reads more than Ctrl-C.
    pub fn stopped_by(mut self, keys: &'static str) -> Reconnect {
        self.stops = keys;
        self
    }

    /// Connects again, the connection having been lost for `why`: says so (once, until
    /// [`Self::resumed`]), then tries until the daemon answers, pausing longer each time. A
    /// connection the caller loses again before it resumes is tried again on the same backoff,
    /// unsaid.
    pub async fn connect(&mut self, why: &str) -> Client {
        if !std::mem::replace(&mut self.told, true) {
            let said = format!("daemon unreachable: {why}; reconnecting ({})", self.stops);
            anstream::eprintln!("{}", paint(YELLOW, said));
        }
        loop {
            tokio::time::sleep(self.pause).await;
            self.pause = (self.pause * 2).min(BACKOFF.1);
            if let Ok(client) = Client::connect_to(&self.address).await {
                return client;
            }
        }
    }

    /// Watching goes on with the daemon reached again: said when its loss was, and the next
    /// loss starts the backoff anew.
    pub fn resumed(&mut self) {
        if std::mem::take(&mut self.told) {
            anstream::eprintln!("{}", paint(DIM, "reconnected to the daemon"));
        }
        self.pause = BACKOFF.0;
    }
}
