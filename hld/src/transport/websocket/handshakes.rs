//! The connections still in their handshake (TLS, then WebSocket), bounded apart from the
//! open ones: at most `--ws-max-handshakes`, each for [`HANDSHAKE_TIMEOUT`]. A new one closes
//! the oldest silent one when full (else the oldest), so silent connections cannot lock out a
//! real client, which speaks as soon as it connects.

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
    /// The connections handshaking, oldest first.
    taken: VecDeque<Taken>,
}

#[derive(Debug)]
struct Taken {
    number: u64,
    /// Closes the connection.
    evict: CancellationToken,
    /// Whether its peer has sent anything yet.
    spoke: bool,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Places> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for a new connection's handshake (the oldest silent one, else the oldest,
    /// closed when all are taken).
    pub fn enter(&self) -> Place<'_> {
        let mut places = self.lock();
        if places.taken.len() >= self.max {
            let silent = places.taken.iter().position(|t| !t.spoke).unwrap_or(0);
            if let Some(oldest) = places.taken.remove(silent) {
                oldest.evict.cancel();
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
        places.taken.push_back(Taken {
            number,
            evict: evicted.clone(),
            spoke: false,
        });
        Place {
            handshakes: self,
            number,
            evicted,
        }
    }
}

impl Place<'_> {
    /// Notes that the peer has sent something: it is closed to make room only after every
    /// silent one.
    pub fn spoke(&self) {
        let mut places = self.handshakes.lock();
        if let Some(taken) = places.taken.iter_mut().find(|t| t.number == self.number) {
            taken.spoke = true;
        }
    }

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
        let mut places = self.handshakes.lock();
        if let Some(at) = places.taken.iter().position(|t| t.number == self.number) {
            places.taken.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_connection_closes_the_oldest_silent_one_else_the_oldest() {
        let handshakes = Handshakes::new(2);
        let spoke = handshakes.enter();
        spoke.spoke();
        let silent = handshakes.enter();
        let third = handshakes.enter();
        assert!(silent.evicted.is_cancelled(), "the silent one made room");
        assert!(!spoke.evicted.is_cancelled());
        third.spoke();
        let fourth = handshakes.enter();
        assert!(
            spoke.evicted.is_cancelled(),
            "all spoke: the oldest made room"
        );
        assert!(!third.evicted.is_cancelled() && !fourth.evicted.is_cancelled());
        drop((silent, spoke));
        assert_eq!(handshakes.lock().taken.len(), 2);
    }
}
