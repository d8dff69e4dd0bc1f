//! What a REST request and its reply hold of the daemon's byte budget (`--max-buffered`),
//! shared with the other transports: a body is read into its share or refused unread, and a
//! reply built whole holds its size until hyper has taken it to write.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body as _, Frame, SizeHint};
use hyper::header::{self, HeaderMap};
use hyper::StatusCode;
use tokio::sync::OwnedSemaphorePermit;

use super::guard::{Refusal, MAX_BODY};
use super::{Body, Reply};
use crate::budget::Budget;

/// The share of the daemon's byte budget (`--max-buffered`) a request's body is read into: its
/// declared length, or [`MAX_BODY`] for a chunked or longer one. A longer one is refused by the
/// limit as it is read (413), not unread: that would break the pipe of a client still writing
/// it before it reads the refusal. Taken before the body is read: a body the budget cannot
/// hold is refused unread (503).
pub fn body(headers: &HeaderMap, budget: &Budget) -> Result<Option<OwnedSemaphorePermit>, Refusal> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|l| l.to_str().ok()?.trim().parse::<u64>().ok());
    let length = match declared {
        Some(n) => usize::try_from(n).map_or(MAX_BODY, |n| n.min(MAX_BODY)),
        None if headers.contains_key(header::TRANSFER_ENCODING) => MAX_BODY,
        None => 0,
    };
    if length == 0 {
        return Ok(None);
    }
    match budget.try_take(length) {
        Some(share) => Ok(Some(share)),
        None => Err(Refusal::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "HLD-503",
            "the daemon holds all it may for its clients (--max-buffered): request refused \
             unread; send it again later",
        )),
    }
}

pub fn too_large() -> Refusal {
    Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "HLD-413",
        format!("a request body is at most {MAX_BODY} bytes"),
    )
}

/// `reply` holding its size of the budget until its body is dropped, once written or given up.
/// The reply is built already: this waits while the budget is full, as a socket's reply that
/// lacks room does. A streamed body (the event stream) has no size and bounds itself.
pub async fn reply(reply: Reply, budget: &Budget) -> Reply {
    let size = match reply.body().size_hint().exact() {
        Some(0) | None => return reply,
        Some(size) => usize::try_from(size).unwrap_or(usize::MAX),
    };
    let share = budget.acquire(size).await;
    reply.map(|body| {
        Held {
            body,
            _share: share,
        }
        .boxed()
    })
}

/// A body and the share of the budget it holds, given back when it is dropped.
struct Held {
    body: Body,
    _share: OwnedSemaphorePermit,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::Full;
    use hyper::Response;

    use super::*;

    fn sized(n: usize) -> Reply {
        Response::new(Full::new(Bytes::from(vec![b' '; n])).boxed())
    }

    #[tokio::test]
    async fn a_reply_holds_its_size_until_its_body_is_dropped() {
        let budget = Budget::new(1000);
        let held = reply(sized(600), &budget).await;
        assert_eq!(
            held.body().size_hint().exact(),
            Some(600),
            "a Content-Length still"
        );
        assert!(budget.try_take(401).is_none());
        assert!(budget.try_take(400).is_some());
        // Another reply waits for room.
        let waiting = reply(sized(600), &budget);
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        drop(held);
        let second = waiting.await;
        assert!(budget.try_take(401).is_none());
        let bytes = second.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(bytes.len(), 600);
        assert!(budget.try_take(1000).is_some(), "given back once read");
    }
}
