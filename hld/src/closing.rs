//! A shutdown signal for hot loops: checking it costs an atomic load and a waker update, not
//! a lock, so the connection loop can check it before every read.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Context;

use futures::task::AtomicWaker;

/// Closed once, at shutdown; every [`Watch`] sees it and its task is woken.
#[derive(Debug, Default)]
pub struct Closing {
    closed: AtomicBool,
    next_id: AtomicU64,
    watching: Mutex<HashMap<u64, Arc<AtomicWaker>>>,
}

impl Closing {
    /// A watch for one task (a connection, the accept loop).
    pub fn watch(self: &Arc<Self>) -> Watch {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let waker = Arc::new(AtomicWaker::new());
        self.watching.lock().unwrap().insert(id, Arc::clone(&waker));
        Watch {
            closing: Arc::clone(self),
            id,
            waker,
        }
    }

    /// Closes: every watch reports it from now on, and the tasks polling them are woken.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for waker in self.watching.lock().unwrap().values() {
            waker.wake();
        }
    }
}

/// One task's view of [`Closing`]. Dropping it stops watching.
#[derive(Debug)]
pub struct Watch {
    closing: Arc<Closing>,
    id: u64,
    waker: Arc<AtomicWaker>,
}

impl Watch {
    /// Whether the daemon is closing; if not, the task of `cx` is woken when it does.
    pub fn is_closed(&self, cx: &mut Context<'_>) -> bool {
        self.waker.register(cx.waker());
        self.closing.closed.load(Ordering::SeqCst)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.closing.watching.lock().unwrap().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::poll_fn;
    use std::task::Poll;

    #[tokio::test]
    async fn closing_wakes_a_waiting_watch_and_is_seen_by_later_ones() {
        let closing = Arc::new(Closing::default());
        let waiting = {
            let watch = closing.watch();
            tokio::spawn(async move {
                poll_fn(|cx| {
                    if watch.is_closed(cx) {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    }
                })
                .await
            })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        closing.close();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiting)
            .await
            .expect("woken")
            .unwrap();
        let later = closing.watch();
        assert!(poll_fn(|cx| Poll::Ready(later.is_closed(cx))).await);
        drop(later);
        assert!(closing.watching.lock().unwrap().is_empty());
    }
}
