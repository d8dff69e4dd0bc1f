//! The connections still in their handshake (TLS, then WebSocket), bounded apart from the
//! open ones: at most `--ws-max-handshakes`, each for [`HANDSHAKE_TIMEOUT`]. A new one closes
//! the oldest when full, so silent connections cannot lock out a real client.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::throttle::Throttle;

/// How long a connection may take to finish its TLS and WebSocket handshakes together.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);

static EVICTED: Throttle = Throttle::new();

#[derive(Debug)]
pub struct Handshakes {
    max: usize,
    state: Mutex<Places>,
}

#[derive(Debug, Default)]
struct Places {
    next: u64,
    /// The connections handshaking, oldest first: their number and what closes them.
    taken: VecDeque<(u64, CancellationToken)>,
}

/// One connection's place, given back when dropped (its handshake done, or failed).
#[derive(Debug)]
pub struct Place<'a> {
    handshakes: &'a Handshakes,
    number: u64,
    evicted: CancellationToken,
}

impl Handshakes {
    pub fn new(max: usize) -> Handshakes {
        Handshakes {
            max: max.max(1),
            state: Mutex::new(Places::default()),
        }
    }

    /// A place for a new connection's handshake (the oldest closed when all are taken).
    pub fn enter(&self) -> Place<'_> {
        let mut places = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if places.taken.len() >= self.max {
            if let Some((_, oldest)) = places.taken.pop_front() {
                oldest.cancel();
                if let Some(count) = EVICTED.hit() {
                    tracing::warn!(
                        count,
                        max = self.max,
                        "closed the oldest connection still in its WebSocket handshake to make \
                         room for a new one (--ws-max-handshakes)"
                    );
                }
            }
        }
        let number = places.next;
        places.next += 1;
        let evicted = CancellationToken::new();
        places.taken.push_back((number, evicted.clone()));
        Place {
            handshakes: self,
            number,
            evicted,
        }
    }
}

impl Place<'_> {
    /// Runs a step of the handshake: `None` if the connection is closed to make room first.
    pub async fn run<F: Future>(&self, step: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            () = self.evicted.cancelled() => None,
            output = step => Some(output),
        }
    }
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut places = self
            .handshakes
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(at) = places.taken.iter().position(|(n, _)| *n == self.number) {
            places.taken.remove(at);
        }
    }
}
