//! A shutdown signal for hot loops: checking it costs an atomic load and a waker update, not
//! a lock, so the connection loop can check it before every read. A watch takes a slot of a
//! table under a lock when it starts and frees it when dropped; slots are reused, so a
//! connection allocates nothing here once the table has grown.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;

/// Closed once, at shutdown; every [`Watch`] sees it and its task is woken.
#[derive(Debug, Default)]
pub struct Closing {
    closed: AtomicBool,
    watching: Mutex<Slots>,
}

/// One waker per slot, live or free; a free slot's waker is empty.
#[derive(Debug, Default)]
struct Slots {
    wakers: Vec<Arc<AtomicWaker>>,
    free: Vec<usize>,
}

impl Closing {
    /// A watch for one task (a connection, the accept loop).
    pub fn watch(self: &Arc<Self>) -> Watch {
        let mut slots = self.watching.lock().unwrap();
        let slot = match slots.free.pop() {
            Some(slot) => slot,
            None => {
                slots.wakers.push(Arc::default());
                slots.wakers.len() - 1
            }
        };
        Watch {
            closing: Arc::clone(self),
            waker: Arc::clone(&slots.wakers[slot]),
            slot,
        }
    }

    /// Closes: every watch reports it from now on, and the tasks polling them are woken.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for waker in &self.watching.lock().unwrap().wakers {
            waker.wake();
        }
    }
}

/// One task's view of [`Closing`]. Dropping it stops watching.
#[derive(Debug)]
pub struct Watch {
    closing: Arc<Closing>,
    waker: Arc<AtomicWaker>,
    slot: usize,
}

impl Watch {
    /// Whether the daemon is closing; if not, the task of `cx` is woken when it does.
    fn is_closed(&self, cx: &mut Context<'_>) -> bool {
        self.waker.register(cx.waker());
        self.closing.closed.load(Ordering::SeqCst)
    }

    /// Waits for `poll` to be ready, unless the daemon closes first (`None`); checked before
    /// each poll, so a closing daemon wins over a ready `poll`.
    pub async fn unless_closed<T>(
        &self,
        mut poll: impl FnMut(&mut Context<'_>) -> Poll<T>,
    ) -> Option<T> {
        std::future::poll_fn(|cx| {
            if self.is_closed(cx) {
                return Poll::Ready(None);
            }
            poll(cx).map(Some)
        })
        .await
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // The slot's next watch must not wake this task.
        drop(self.waker.take());
        self.closing.watching.lock().unwrap().free.push(self.slot);
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
            tokio::spawn(async move { watch.unless_closed(|_| Poll::<()>::Pending).await })
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
        // Closed wins over a ready poll; while open, the poll's value comes through.
        assert_eq!(later.unless_closed(|_| Poll::Ready(1)).await, None);
        let open = Arc::new(Closing::default());
        assert_eq!(
            open.watch().unless_closed(|_| Poll::Ready(1)).await,
            Some(1)
        );
        drop(later);
        let slots = closing.watching.lock().unwrap();
        assert!(slots.wakers.iter().all(|w| w.take().is_none()));
        assert_eq!(
            slots.free.len(),
            slots.wakers.len(),
            "every slot is free again"
        );
    }
}
