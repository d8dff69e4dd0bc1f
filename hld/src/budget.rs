//! One budget of bytes for what all connections together hold (`--max-buffered`): replies not
//! yet written and long messages being read (refused, code 8, when it cannot hold them). A
//! full budget makes a connection write its own replies first, so it never waits for itself.

use std::io;
use std::sync::Arc;

use futures::{Sink, SinkExt};
use hld_client::protocol::{ErrorCode, ErrorObject};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::throttle::Throttle;

static FULL: Throttle = Throttle::new();

/// The error for a message the budget cannot hold now (code 8, as for a reply too large).
pub fn busy() -> ErrorObject {
    ErrorObject {
        code: ErrorCode::ResourceExhausted.code(),
        message: "the daemon holds all it may for its clients (--max-buffered): message \
                  discarded; send it again later"
            .to_owned(),
        data: None,
    }
}

/// The daemon's budget: a semaphore of bytes.
#[derive(Debug, Clone)]
pub struct Budget {
    bytes: Arc<Semaphore>,
    total: usize,
}

impl Budget {
    /// A budget of `max` bytes (at most 4 GiB, the most a semaphore hands out at once).
    pub fn new(max: usize) -> Budget {
        let total = max.clamp(8, u32::MAX as usize);
        Budget {
            bytes: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// `n` bytes of it if they are free now (at most the whole budget).
    pub fn try_take(&self, n: usize) -> Option<OwnedSemaphorePermit> {
        let n = n.min(self.total) as u32;
        Arc::clone(&self.bytes).try_acquire_many_owned(n).ok()
    }

    /// The bytes free now.
    #[cfg(test)]
    pub fn free(&self) -> usize {
        self.bytes.available_permits()
    }

    pub fn account(&self) -> Account {
        Account {
            budget: self.clone(),
            building: None,
            held: None,
        }
    }

    /// Waits for `n` bytes (at most the whole budget); only a wait is logged.
    pub async fn acquire(&self, n: usize) -> OwnedSemaphorePermit {
        if let Some(free) = self.try_take(n) {
            return free;
        }
        if let Some(count) = FULL.hit() {
            tracing::warn!(
                budget = self.total,
                count,
                "the connections' buffer budget (--max-buffered) is full: requests wait until \
                 clients read their replies"
            );
        }
        let n = n.min(self.total) as u32;
        Arc::clone(&self.bytes)
            .acquire_many_owned(n)
            .await
            .expect("the budget's semaphore is never closed")
    }
}

/// What one connection holds of the budget.
#[derive(Debug)]
pub struct Account {
    budget: Budget,
    /// Reserved for the reply being built.
    building: Option<OwnedSemaphorePermit>,
    /// The bytes of replies built and not yet written.
    held: Option<OwnedSemaphorePermit>,
}

impl Account {
    /// Reserves a quarter of the budget for building a reply; when there is no room, writes the
    /// replies this connection holds first (giving them back), then waits. `Err` if writing fails.
    pub async fn reserve<C, T>(&mut self, conn: &mut C) -> io::Result<()>
    where
        C: Sink<T, Error = io::Error> + Unpin,
    {
        self.building = None;
        let share = (self.budget.total / 4) as u32;
        let permit = match Arc::clone(&self.budget.bytes).try_acquire_many_owned(share) {
            Ok(permit) => permit,
            Err(_) => {
                self.written(conn).await?;
                self.budget.acquire(share as usize).await
            }
        };
        self.building = Some(permit);
        Ok(())
    }

    /// The reply built is queued, `bytes` long: the reservation shrinks to that until written.
    pub async fn built<C, T>(&mut self, conn: &mut C, bytes: usize) -> io::Result<()>
    where
        C: Sink<T, Error = io::Error> + Unpin,
    {
        let Some(mut permit) = self.building.take() else {
            return Ok(());
        };
        let bytes = bytes.min(self.budget.total);
        if bytes > permit.num_permits() {
            let lacking = bytes - permit.num_permits();
            match Arc::clone(&self.budget.bytes).try_acquire_many_owned(lacking as u32) {
                Ok(more) => permit.merge(more),
                Err(_) => {
                    self.written(conn).await?;
                    permit.merge(self.budget.acquire(lacking).await);
                }
            }
        } else {
            drop(permit.split(permit.num_permits() - bytes));
        }
        match &mut self.held {
            Some(held) => held.merge(permit),
            None => self.held = Some(permit),
        }
        Ok(())
    }

    /// Writes what the connection holds (waiting for its peer) and gives back its bytes.
    async fn written<C, T>(&mut self, conn: &mut C) -> io::Result<()>
    where
        C: Sink<T, Error = io::Error> + Unpin,
    {
        if self.held.is_some() {
            conn.flush().await?;
        }
        self.release();
        Ok(())
    }

    /// Gives back everything: what the connection held has been written (or dropped).
    pub fn release(&mut self) {
        self.held = None;
        self.building = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that takes everything at once.
    fn sink() -> impl Sink<(), Error = io::Error> + Unpin {
        futures::sink::drain().sink_map_err(|e| match e {})
    }

    #[tokio::test]
    async fn a_reservation_becomes_the_replys_size_and_is_given_back_when_written() {
        let budget = Budget::new(800);
        let mut conn = sink();
        let mut account = budget.account();
        account.reserve(&mut conn).await.unwrap();
        assert_eq!(budget.bytes.available_permits(), 600);
        account.built(&mut conn, 30).await.unwrap();
        assert_eq!(budget.bytes.available_permits(), 770);
        // A reply larger than the share takes what it lacks.
        account.reserve(&mut conn).await.unwrap();
        account.built(&mut conn, 500).await.unwrap();
        assert_eq!(budget.bytes.available_permits(), 270);
        account.release();
        assert_eq!(budget.bytes.available_permits(), 800);
    }
}
