//! Bus events and `Subscribe`: the events the daemon publishes, the lines a subscription
//! carries (events and heartbeats), and the method that opens one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::approvals::{Approval, ApprovalStatus, ApprovalType};
use super::conversation::ConversationEvent;
use super::messages::QueuedMessage;
use super::notify::Notification;
use super::sessions::{SessionControl, SessionStatus, TurnResult};
use super::usage::{RateLimitWindow, UsageLimit};

open_enum!(
    /// The type of a bus event, as `Subscribe`'s `event_types` names it and as [`Event`]'s
    /// `type` says it.
    EventType {
        /// [`Event::NewApproval`].
        NewApproval = "new_approval",
        /// [`Event::ApprovalResolved`].
        ApprovalResolved = "approval_resolved",
        /// [`Event::SessionStatusChanged`].
        SessionStatusChanged = "session_status_changed",
        /// [`Event::ConversationUpdated`].
        ConversationUpdated = "conversation_updated",
        /// [`Event::SessionSettingsChanged`].
        SessionSettingsChanged = "session_settings_changed",
        /// [`Event::MessageQueued`].
        MessageQueued = "message_queued",
        /// [`Event::MessageDelivered`].
        MessageDelivered = "message_delivered",
        /// [`Event::MessageCancelled`].
        MessageCancelled = "message_cancelled",
        /// [`Event::Notification`].
        Notification = "notification",
        /// [`Event::RateLimitUpdated`].
        RateLimitUpdated = "rate_limit_updated",
        /// [`Event::Lagged`].
        Lagged = "lagged",
    }
);

/// The names of the bus event types, as used in `Subscribe.event_types`.
pub const EVENT_TYPES: [&str; 11] = EventType::NAMES;

/// A bus event, serialised as `{"type": …, "data": {…}}`. An event of a type this version
/// does not know reads as [`Event::Unknown`], its data kept as sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// A session changed status.
    SessionStatusChanged {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The status before.
        old_status: SessionStatus,
        /// The status after.
        new_status: SessionStatus,
        /// The parent session, for continuations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_session_id: Option<String>,
        /// The error text, for failures.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The usage limit that stopped the session (with the status `failed`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage_limit: Option<UsageLimit>,
        /// What the turn this change ends reported with its `result`: that turn's own
        /// figures, where the session's are its totals.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn: Option<TurnResult>,
    },
    /// A conversation event was stored.
    ConversationUpdated {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The Claude session.
        claude_session_id: String,
        /// The stored event.
        event: Box<ConversationEvent>,
    },
    /// An approval was requested.
    NewApproval {
        /// The approval.
        approval: Box<Approval>,
        /// Its session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// Its kind (the Go daemon's `new_approval` carried `type`, `count`, `total`).
        #[serde(rename = "type")]
        kind: ApprovalType,
        /// How many approvals this event announces (always 1).
        count: u64,
        /// Pending approvals, of every session, now that this one is.
        total: u64,
    },
    /// An approval was decided.
    ApprovalResolved {
        /// The approval.
        approval_id: String,
        /// Same as `approval_id`.
        call_id: String,
        /// Its session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// `approved`, `denied`, `responded`, or `resolved` (answered elsewhere).
        decision: ApprovalStatus,
        /// The reviewer's comment or answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
        /// The approval's kind.
        #[serde(rename = "type")]
        kind: ApprovalType,
        /// Pending approvals, of every session, now that this one is not.
        total: u64,
        /// Which rule decided it, when no person did: `auto_accept_edits` or
        /// `dangerously_skip_permissions`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decided_by: Option<String>,
        /// Settled as it was requested (by a rule, the mode, or an ended session): no
        /// `new_approval` came before this event.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        settled_on_request: bool,
    },
    /// A session's title, archive state, approval modes, permission mode or model changed (by a person, or a bypass
    /// that expired).
    SessionSettingsChanged {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The settings now.
        #[serde(flatten)]
        control: SessionControl,
        /// The model now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// Why: `updated` by a method, `expired` when a bypass ran out, `inherited` by a
        /// continuation at launch.
        reason: String,
    },
    /// A message sent with `sendMessage` waits for the agent's turn to end.
    MessageQueued {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The message (status `queued`).
        message: QueuedMessage,
    },
    /// A message was handed to the agent: a turn started with it.
    MessageDelivered {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The message (status `delivered`).
        message: QueuedMessage,
    },
    /// A queued message will not be delivered: cancelled by a person (status `cancelled`), or
    /// the daemon could not hand it over (status `undelivered`, with the reason in `error`).
    MessageCancelled {
        /// The session.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The message.
        message: QueuedMessage,
    },
    /// The daemon notified the user: terminals ring once per `id`.
    Notification(Notification),
    /// A session's `claude` reported a usage-limit window (`rate_limit_event`).
    RateLimitUpdated {
        /// The session whose `claude` reported it.
        session_id: String,
        /// Its run.
        run_id: String,
        /// The window now.
        window: RateLimitWindow,
    },
    /// This subscriber fell behind and `missed` events were dropped for it.
    Lagged {
        /// How many events were dropped.
        missed: u64,
    },
    /// An event of a type this version does not know (from a newer daemon), or of a known
    /// type whose data it cannot read. Written back as it came.
    #[serde(untagged)]
    Unknown {
        /// Its `type`.
        #[serde(rename = "type")]
        type_name: String,
        /// Its `data`, as sent.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        data: Value,
    },
}

impl Event {
    /// The event's type name, as its `type` says it.
    pub fn type_name(&self) -> &str {
        match self {
            Event::SessionStatusChanged { .. } => "session_status_changed",
            Event::ConversationUpdated { .. } => "conversation_updated",
            Event::NewApproval { .. } => "new_approval",
            Event::ApprovalResolved { .. } => "approval_resolved",
            Event::SessionSettingsChanged { .. } => "session_settings_changed",
            Event::MessageQueued { .. } => "message_queued",
            Event::MessageDelivered { .. } => "message_delivered",
            Event::MessageCancelled { .. } => "message_cancelled",
            Event::Notification(_) => "notification",
            Event::RateLimitUpdated { .. } => "rate_limit_updated",
            Event::Lagged { .. } => "lagged",
            Event::Unknown { type_name, .. } => type_name,
        }
    }

    /// The event's type.
    pub fn event_type(&self) -> EventType {
        EventType::from(self.type_name())
    }

    /// The session the event is about, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Event::SessionStatusChanged { session_id, .. }
            | Event::ConversationUpdated { session_id, .. }
            | Event::NewApproval { session_id, .. }
            | Event::ApprovalResolved { session_id, .. }
            | Event::SessionSettingsChanged { session_id, .. }
            | Event::MessageQueued { session_id, .. }
            | Event::MessageDelivered { session_id, .. }
            | Event::MessageCancelled { session_id, .. }
            | Event::RateLimitUpdated { session_id, .. } => Some(session_id),
            Event::Notification(n) => Some(&n.session_id),
            Event::Lagged { .. } | Event::Unknown { .. } => None,
        }
    }

    /// The run the event is about, if any.
    pub fn run_id(&self) -> Option<&str> {
        match self {
            Event::SessionStatusChanged { run_id, .. }
            | Event::ConversationUpdated { run_id, .. }
            | Event::NewApproval { run_id, .. }
            | Event::ApprovalResolved { run_id, .. }
            | Event::SessionSettingsChanged { run_id, .. }
            | Event::MessageQueued { run_id, .. }
            | Event::MessageDelivered { run_id, .. }
            | Event::MessageCancelled { run_id, .. }
            | Event::RateLimitUpdated { run_id, .. } => Some(run_id),
            Event::Notification(n) => Some(&n.run_id),
            Event::Lagged { .. } | Event::Unknown { .. } => None,
        }
    }
}

/// An event with its publication time, as sent to subscribers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// The event (`type` and `data`).
    #[serde(flatten)]
    pub event: Event,
    /// When it was published, RFC 3339.
    pub timestamp: String,
}

/// One `result` of a subscription line after the confirmation: an event or a heartbeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum SubscriptionMessage {
    /// `{"event": {...}}`.
    Event {
        /// The event.
        event: Box<TimedEvent>,
    },
    /// `{"type": "heartbeat", "message": "Connection alive"}`.
    Heartbeat {
        /// Always `"heartbeat"`.
        #[serde(rename = "type")]
        kind: String,
        /// Always `"Connection alive"`.
        message: String,
    },
}

// ---- Subscribe ----

/// The `message` of a `Subscribe` confirmation.
pub const SUBSCRIPTION_ESTABLISHED: &str = "Subscription established. Waiting for events...";

/// The `message` of a heartbeat line.
pub const HEARTBEAT_MESSAGE: &str = "Connection alive";

/// Params of `Subscribe`; filters are ANDed.
///
/// ```
/// use hld_client::protocol::{EventType, SubscribeParams};
///
/// let params = SubscribeParams::types([EventType::NewApproval, EventType::ApprovalResolved])
///     .session("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13");
/// assert_eq!(
///     serde_json::to_value(&params).unwrap(),
///     serde_json::json!({
///         "event_types": ["new_approval", "approval_resolved"],
///         "session_id": "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"
///     })
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscribeParams {
    /// Only these event types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_types: Option<Vec<EventType>>,
    /// Only this session's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Only this run's events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl SubscribeParams {
    /// Only events of these types (of every session, until narrowed).
    pub fn types(types: impl IntoIterator<Item = EventType>) -> SubscribeParams {
        SubscribeParams {
            event_types: Some(types.into_iter().collect()),
            ..Default::default()
        }
    }

    /// Only this session's events.
    pub fn session(mut self, session_id: impl Into<String>) -> SubscribeParams {
        self.session_id = Some(session_id.into());
        self
    }

    /// Only this run's events.
    pub fn run(mut self, run_id: impl Into<String>) -> SubscribeParams {
        self.run_id = Some(run_id.into());
        self
    }
}

/// The first reply of `Subscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscribeResult {
    /// `sub_<uuid>`.
    pub subscription_id: String,
    /// `Subscription established. Waiting for events...`
    pub message: String,
}

method!(
    /// Stream events on this connection.
    ///
    /// The connection becomes the subscription's: after the confirmation (which echoes the
    /// request id) it carries only events and heartbeats (`id: null`), until either side closes
    /// it. Filters are ANDed; `event_types` takes names from [`EVENT_TYPES`]. A heartbeat comes
    /// when no event was sent for a while (30 s by default), and a `lagged` event says how many
    /// events were dropped for a subscriber that fell behind.
    ///
    /// # Request
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"Subscribe","params":{"event_types":["session_status_changed","approval_resolved"],"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// ```
    ///
    /// # Reply
    ///
    /// The confirmation, then one line per event or heartbeat:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","result":{"subscription_id":"sub_3c0f9e12-8a4b-4d6c-b5e7-0f1a2d3c4b58","message":"Subscription established. Waiting for events..."},"id":1}
    /// {"jsonrpc":"2.0","result":{"event":{"type":"session_status_changed","data":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","old_status":"running","new_status":"waiting_input"},"timestamp":"2025-06-12T09:14:09.803Z"}},"id":null}
    /// {"jsonrpc":"2.0","result":{"event":{"type":"approval_resolved","data":{"approval_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","call_id":"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35","session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","run_id":"a3e9d0c4-5b61-4f2e-8c7d-19b0f6e2a845","decision":"approved","type":"function_call","total":0},"timestamp":"2025-06-12T09:14:31.460Z"}},"id":null}
    /// {"jsonrpc":"2.0","result":{"type":"heartbeat","message":"Connection alive"},"id":null}
    /// ```
    ///
    /// # Errors
    ///
    /// -32602 for an event type that is not one of [`EVENT_TYPES`], after which the daemon closes
    /// the connection:
    ///
    /// ```json
    /// {"jsonrpc":"2.0","error":{"code":-32602,"message":"invalid event_types[0]: session_created","data":{"param":"event_types[0]","expected":"one of new_approval|approval_resolved|session_status_changed|conversation_updated|lagged","received":"session_created","accepted":["new_approval","approval_resolved","session_status_changed","conversation_updated","lagged"]}},"id":1}
    /// ```
    ///
    /// # Example
    ///
    /// Do not send it with `client.call`, which would hand the shared connection over: use
    /// [`crate::Client::subscribe`], which opens a connection of its own, waits for the
    /// confirmation, consumes heartbeats and can reconnect. To follow one session from its
    /// start without losing events, use [`crate::Client::follow`].
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use hld_client::protocol::{Event, EventType, SubscribeParams};
    /// use hld_client::{Client, SubscribeOptions, SubscriptionItem};
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = Client::connect_default().await?;
    /// let params = SubscribeParams::types([EventType::NewApproval, EventType::SessionStatusChanged]);
    /// let mut events = client
    ///     .subscribe(params, SubscribeOptions { reconnect: true })
    ///     .await?;
    /// println!("subscribed as {}", events.subscription_id);
    /// while let Some(item) = events.next().await {
    ///     match item? {
    ///         SubscriptionItem::Event(timed) => match timed.event {
    ///             Event::NewApproval { approval, .. } => {
    ///                 println!("{}: approval {} is waiting", timed.timestamp, approval.id)
    ///             }
    ///             Event::SessionStatusChanged {
    ///                 session_id,
    ///                 new_status,
    ///                 ..
    ///             } => println!("{}: {session_id} is {new_status}", timed.timestamp),
    ///             other => println!("{}", other.type_name()),
    ///         },
    ///         SubscriptionItem::Reconnected { gap } => eprintln!("events of {gap:?} were missed"),
    ///         _ => {}
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    Subscribe, "Subscribe", "Take over this connection and stream matching events to it",
    ["event_types?: [string]", "session_id?: string", "run_id?: string"],
    "{subscription_id: string, message: string}, then {event} lines",
    SubscribeParams, SubscribeResult
);
