//! The one place events are published: the store hands the bus each committed [`Change`],
//! which becomes the event subscribers see, so nothing is published before it is durable. A
//! decided approval also goes to its session's process, which may wait for it on the control
//! channel. A session stopped by a usage limit it resumes after wakes the task that resumes
//! sessions at their limit's reset.

use std::sync::Arc;

use hld_client::protocol::{ApprovalStatus, Event, MessageStatus};
use tokio::sync::Notify;

use crate::bus::Bus;
use crate::session::Sessions;
use crate::store::{Change, Sink};

/// Where committed changes go: the bus, decisions to the sessions, and limits to resume
/// after to the task that resumes them.
pub struct Publisher {
    pub bus: Bus,
    pub sessions: Arc<Sessions>,
    /// Wakes the task that resumes sessions when their usage limit resets.
    pub limit_set: Arc<Notify>,
}

impl Sink for Publisher {
    fn changed(&self, change: Change) {
        match &change {
            Change::Approval { approval, .. } if approval.status != ApprovalStatus::Pending => {
                self.sessions.decided(approval);
            }
            Change::Session { session, .. } | Change::Settings { session, .. }
                if session.usage_limit.is_some() && session.new.modes.resume_on_reset =>
            {
                self.limit_set.notify_one();
            }
            _ => {}
        }
        self.bus.publish(event(change));
    }
}

fn event(change: Change) -> Event {
    match change {
        Change::Session {
            old_status,
            session,
            error,
            turn,
        } => Event::SessionStatusChanged {
            session_id: session.new.id,
            run_id: session.new.run_id,
            old_status,
            new_status: session.status,
            parent_session_id: session.new.parent_session_id,
            error,
            usage_limit: session.usage_limit,
            turn,
        },
        Change::RateLimit {
            session_id,
            run_id,
            window,
        } => Event::RateLimitUpdated {
            session_id,
            run_id,
            window: *window,
        },
        Change::Conversation { run_id, event } => Event::ConversationUpdated {
            session_id: event.session_id.clone(),
            run_id,
            claude_session_id: event.claude_session_id.clone(),
            event,
        },
        Change::Approval {
            approval, pending, ..
        } if approval.status == ApprovalStatus::Pending => Event::NewApproval {
            session_id: approval.session_id.clone(),
            run_id: approval.run_id.clone(),
            kind: approval.kind,
            count: 1,
            total: pending,
            approval,
        },
        Change::Approval {
            approval,
            pending,
            created,
        } => Event::ApprovalResolved {
            approval_id: approval.id,
            call_id: approval.call_id,
            session_id: approval.session_id,
            run_id: approval.run_id,
            decision: approval.status,
            comment: approval.comment,
            kind: approval.kind,
            total: pending,
            decided_by: approval.decided_by,
            settled_on_request: created,
        },
        Change::Settings { session, expired } => Event::SessionSettingsChanged {
            control: session.control(),
            model: session.new.options.model.clone(),
            session_id: session.new.id,
            run_id: session.new.run_id,
            reason: if expired { "expired" } else { "updated" }.to_owned(),
        },
        Change::Message { run_id, message } => {
            let (session_id, message) = (message.session_id.clone(), *message);
            match message.status {
                MessageStatus::Queued => Event::MessageQueued {
                    session_id,
                    run_id,
                    message,
                },
                MessageStatus::Delivered => Event::MessageDelivered {
                    session_id,
                    run_id,
                    message,
                },
                _ => Event::MessageCancelled {
                    session_id,
                    run_id,
                    message,
                },
            }
        }
    }
}
