//! A shutdown signal for hot loops: checking it costs an atomic load and, under an
//! uncontended lock, a waker comparison, so the connection loop can check it before every
//! read; starting and stopping a watch allocates nothing once the slot table has grown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

/// Closed once, at shutdown; every [`Watch`] sees it and its task is woken.
#[derive(Debug, Default)]
pub struct Closing {
    closed: AtomicBool,
    watching: Mutex<Slots>,
}

/// The wakers of live watches, by slot; freed slots are reused.
#[derive(Debug, Default)]
struct Slots {
    wakers: Vec<Option<Waker>>,
    free: Vec<usize>,
}

impl Closing {
    /// A watch for one task (a connection, the accept loop).
    pub fn watch(self: &Arc<Self>) -> Watch {
        let mut slots = self.watching.lock().unwrap();
        let slot = match slots.free.pop() {
            Some(slot) => slot,
            None => {
                slots.wakers.push(None);
                slots.wakers.len() - 1
            }
        };
        Watch {
            closing: Arc::clone(self),
            slot,
        }
    }

    /// Closes: every watch reports it from now on, and the tasks polling them are woken.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for waker in self.watching.lock().unwrap().wakers.iter().flatten() {
            waker.wake_by_ref();
        }
    }
}

/// One task's view of [`Closing`]. Dropping it stops watching.
#[derive(Debug)]
pub struct Watch {
    closing: Arc<Closing>,
    slot: usize,
}

impl Watch {
    /// Whether the daemon is closing; if not, the task of `cx` is woken when it does.
    pub fn is_closed(&self, cx: &mut Context<'_>) -> bool {
        if self.closing.closed.load(Ordering::SeqCst) {
            return true;
        }
        {
            let mut slots = self.closing.watching.lock().unwrap();
            let waker = &mut slots.wakers[self.slot];
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        // `close` sets the flag before it takes the lock to wake: a close that came after the
        // check above and missed the waker set here is seen now.
        self.closing.closed.load(Ordering::SeqCst)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut slots = self.closing.watching.lock().unwrap();
        slots.wakers[self.slot] = None;
        slots.free.push(self.slot);
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
        let slots = closing.watching.lock().unwrap();
        assert!(slots.wakers.iter().all(Option::is_none));
        assert_eq!(
            slots.free.len(),
            slots.wakers.len(),
            "every slot is free again"
        );
    }
}
