//! Transports: bytes to messages and back, and the one accept loop; `rpc::serve` serves each.

pub mod content_length;
pub mod http;
pub mod ndjson;
pub mod tls;
pub mod unix;
pub mod websocket;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::budget::Budget;
use crate::rpc::Router;
use crate::throttle::Throttle;

pub struct Service<S> {
    /// The method table of the daemon's own front ends (NDJSON on the socket).
    pub router: Router<S>,
    /// Editors' and browsers': `shutdown` ends only the connection.
    pub guest: Router<S>,
    pub state: Arc<S>,
    pub max_message: usize,
    pub frame_timeout: Duration,
    pub heartbeat: Duration,
}

impl<S: AsRef<Budget>> Service<S> {
    pub fn budget(&self) -> Budget {
        (*self.state).as_ref().clone()
    }
}

/// The part of a message read that is not taken from the budget: every request of a usual size.
pub const UNCOUNTED: usize = 64 * 1024;

/// Lets go of the allocation a `long` message took in the read buffer once it is taken (or
/// refused): what is left, if little, moves to a buffer of its size, so that an idle connection
/// holds no more than a usual request's room outside the budget ([`UNCOUNTED`]).
pub fn shrink(buf: &mut BytesMut, long: bool) {
    if long && buf.len() <= UNCOUNTED {
        *buf = BytesMut::from(&buf[..]);
    }
}

/// Failed accepts in a row (as at the open-files limit): the pause grows from 10 ms to 1 s,
/// and a warning a second at most counts them.
#[derive(Default)]
struct AcceptFailures {
    /// The pause after the last failure; `None` once an accept succeeds.
    pause: Option<Duration>,
    log: Throttle,
}

impl AcceptFailures {
    /// Counts a failure; returns the pause before the next accept.
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        if let Some(failures) = self.log.hit() {
            tracing::warn!(error = %e, failures, "accept failed");
        }
        let pause = self.pause.map_or(Duration::from_millis(10), |p| {
            (p * 2).min(Duration::from_secs(1))
        });
        self.pause = Some(pause);
        pause
    }
}

/// The one accept loop of every listener: each connection served by `serve` as a task.
pub async fn accept_until<T, F, C>(
    shutdown: &CancellationToken,
    connections: &TaskTracker,
    mut accept: impl FnMut() -> F,
    mut serve: impl FnMut(T) -> C,
) where
    F: Future<Output = std::io::Result<T>>,
    C: Future<Output = ()> + Send + 'static,
{
    let mut failing = AcceptFailures::default();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = accept() => accepted,
        };
        match accepted {
            Ok(connection) => {
                failing.pause = None;
                // Boxed: a connection's future is large to move into the task.
                connections.spawn(Box::pin(serve(connection)));
            }
            Err(e) => {
                let pause = failing.failed(&e);
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(pause) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod accept_tests {
    use super::*;

    #[test]
    fn failing_accepts_back_off_to_a_second() {
        let mut failing = AcceptFailures::default();
        let e = std::io::Error::from_raw_os_error(libc::EMFILE);
        let pauses: Vec<u128> = (0..10).map(|_| failing.failed(&e).as_millis()).collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000]);
        // The first failure was logged; the nine since wait for the next second.
        assert_eq!(failing.log.hit(), None);
    }
}
