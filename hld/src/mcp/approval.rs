//! Asking the daemon: create an approval, then await its decision via `Subscribe` (opened first),
//! with a `getApproval` poll that also covers a lost subscription and a daemon restart.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use hld_client::protocol::{
    ApprovalStatus, CreateApprovalParams, Event, EventType, SubscribeParams,
};
use hld_client::{Client, Error, SubscribeOptions, Subscription, SubscriptionItem};

/// Per-call timeout: a daemon that accepts but never answers is reported, not waited on.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the decision is polled (`HUMANLAYER_APPROVAL_POLL_MS` overrides it).
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// How this server reaches the daemon and which session it speaks for (from its environment).
#[derive(Debug)]
pub struct Daemon {
    /// The socket, or why it could not be resolved.
    socket: Result<PathBuf, String>,
    session_id: Option<String>,
    run_id: Option<String>,
    poll_interval: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub status: ApprovalStatus,
    pub comment: Option<String>,
}

/// Why no decision could be had.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// No session identity in the environment.
    #[error(
        "HUMANLAYER_SESSION_ID and HUMANLAYER_RUN_ID are not set; this MCP server must be \
         started by the hld daemon for one of its sessions"
    )]
    NoSession,
    #[error("the hld daemon socket could not be resolved ({0})")]
    NoSocket(String),
    #[error("the hld daemon could not be reached at {socket} ({error})")]
    Unreachable { socket: String, error: Error },
    #[error("the hld daemon refused the approval request ({0})")]
    Refused(String),
    #[error("approval {id} could not be read ({error})")]
    Lost { id: String, error: String },
    #[error("the request was cancelled before a human decided")]
    Cancelled,
}

impl Daemon {
    /// The socket is `explicit`, else `HUMANLAYER_DAEMON_SOCKET`, else the default; identity and
    /// poll interval from `HUMANLAYER_SESSION_ID`/`_RUN_ID`/`_APPROVAL_POLL_MS`.
    pub fn from_env(explicit: Option<&Path>) -> Daemon {
        let var = |key| std::env::var(key).ok().filter(|v| !v.trim().is_empty());
        let poll_interval = var("HUMANLAYER_APPROVAL_POLL_MS")
            .and_then(|ms| ms.trim().parse().ok())
            .map_or(POLL_INTERVAL, |ms: u64| Duration::from_millis(ms.max(10)));
        Daemon {
            socket: hld_client::config::resolve_socket_path(explicit),
            session_id: var("HUMANLAYER_SESSION_ID"),
            run_id: var("HUMANLAYER_RUN_ID"),
            poll_interval,
        }
    }

    /// Creates the approval of `params` (plus this session's identity); waits for its decision.
    pub async fn ask(
        &self,
        params: CreateApprovalParams,
        stop: impl Future<Output = ()>,
    ) -> Result<Decision, Failure> {
        tokio::select! {
            decision = self.create_and_wait(params) => decision,
            () = stop => Err(Failure::Cancelled),
        }
    }

    async fn create_and_wait(&self, params: CreateApprovalParams) -> Result<Decision, Failure> {
        if self.session_id.is_none() && self.run_id.is_none() {
            return Err(Failure::NoSession);
        }
        let socket = self.socket.clone().map_err(Failure::NoSocket)?;
        let unreachable = |error| Failure::Unreachable {
            socket: socket.display().to_string(),
            error,
        };
        let client = Client::connect_with_timeout(&socket, CALL_TIMEOUT)
            .await
            .map_err(unreachable)?;
        let events = self.subscribe(&client).await;
        let params = CreateApprovalParams {
            session_id: self.session_id.clone(),
            run_id: self.run_id.clone(),
            ..params
        };
        let id = match client.create_approval(params).await {
            Ok(created) => created.approval_id,
            Err(Error::Rpc(e)) => return Err(Failure::Refused(e.message)),
            Err(e) => return Err(unreachable(e)),
        };
        eprintln!("hld mcp: approval {id} requested; waiting for a human");
        let decision = Waiter {
            daemon: self,
            socket,
            client: Some(client),
            events,
            id,
        }
        .wait()
        .await?;
        eprintln!("hld mcp: decision received: {}", decision.status.as_str());
        Ok(decision)
    }

    /// A subscription to this session's `approval_resolved` events, if one can be had.
    async fn subscribe(&self, client: &Client) -> Option<Subscription> {
        let params = SubscribeParams {
            event_types: Some(vec![EventType::ApprovalResolved]),
            session_id: self.session_id.clone(),
            run_id: self.run_id.clone(),
        };
        match client.subscribe(params, SubscribeOptions::default()).await {
            Ok(subscription) => Some(subscription),
            Err(e) => {
                eprintln!("hld mcp: no event subscription ({e}); polling instead");
                None
            }
        }
    }
}

/// The wait for one approval's decision.
struct Waiter<'a> {
    daemon: &'a Daemon,
    socket: PathBuf,
    /// `None` after the connection was lost, until it is re-established.
    client: Option<Client>,
    events: Option<Subscription>,
    id: String,
}

impl Waiter<'_> {
    async fn wait(mut self) -> Result<Decision, Failure> {
        let mut poll = tokio::time::interval(self.daemon.poll_interval);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        poll.tick().await;
        loop {
            let check = tokio::select! {
                item = next_event(&mut self.events) => match item {
                    Some(Ok(SubscriptionItem::Event(timed))) => match timed.event {
                        Event::ApprovalResolved { approval_id, decision, comment, .. }
                            if approval_id == self.id =>
                        {
                            return Ok(Decision { status: decision, comment });
                        }
                        _ => false,
                    },
                    Some(Ok(SubscriptionItem::Reconnected { .. })) => true,
                    // An item this version does not know: nothing to decide on.
                    Some(Ok(_)) => false,
                    // The subscription is gone: poll at once, and resubscribe later.
                    Some(Err(_)) | None => {
                        self.events = None;
                        true
                    }
                },
                _ = poll.tick() => true,
            };
            if check {
                if let Some(decision) = self.check().await? {
                    return Ok(decision);
                }
            }
        }
    }

    /// Polls the approval, reconnecting first if needed; `Ok(None)` while pending or unreachable.
    async fn check(&mut self) -> Result<Option<Decision>, Failure> {
        if self.client.is_none() {
            match Client::connect_with_timeout(&self.socket, CALL_TIMEOUT).await {
                Ok(client) => {
                    eprintln!("hld mcp: reconnected to the daemon");
                    self.client = Some(client);
                }
                Err(_) => return Ok(None),
            }
        }
        let client = self.client.as_ref().expect("connected above");
        if self.events.is_none() {
            // Subscribed before the poll below, so no decision falls in between.
            self.events = self.daemon.subscribe(client).await;
        }
        match client.get_approval(&self.id).await {
            Ok(approval) if approval.status == ApprovalStatus::Pending => Ok(None),
            Ok(approval) => Ok(Some(Decision {
                status: approval.status,
                comment: approval.comment,
            })),
            Err(Error::Rpc(e)) => Err(Failure::Lost {
                id: self.id.clone(),
                error: e.message,
            }),
            Err(e) => {
                eprintln!("hld mcp: lost the daemon ({e}); still waiting");
                self.client = None;
                self.events = None;
                Ok(None)
            }
        }
    }
}

/// The next subscription item; never resolves without a subscription.
async fn next_event(events: &mut Option<Subscription>) -> Option<Result<SubscriptionItem, Error>> {
    match events {
        Some(events) => events.next().await,
        None => std::future::pending().await,
    }
}
