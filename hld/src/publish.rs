//! The one place events are published: the store hands the bus each committed [`Change`],
//! which becomes the event subscribers see, so nothing is published before it is durable. A
//! decided approval also goes to its session's process, which may wait for it on the control
//! channel.

use std::sync::Arc;

use hld_client::protocol::{ApprovalStatus, Event, MessageStatus};

use crate::bus::Bus;
use crate::session::Sessions;
use crate::store::{Change, Sink};

/// Where committed changes go: the bus, and decisions to the sessions.
pub struct Publisher {
    pub bus: Bus,
    pub sessions: Arc<Sessions>,
}

impl Sink for Publisher {
    fn changed(&self, change: Change) {
        if let Change::Approval { approval, .. } = &change {
            if approval.status != ApprovalStatus::Pending {
                self.sessions.decided(approval);
            }
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
        } => Event::SessionStatusChanged {
            session_id: session.new.id,
            run_id: session.new.run_id,
            old_status,
            new_status: session.status,
            parent_session_id: session.new.parent_session_id,
            error,
            usage_limit: None,
        },
        Change::Conversation { run_id, event } => Event::ConversationUpdated {
            session_id: event.session_id.clone(),
            run_id,
            claude_session_id: event.claude_session_id.clone(),
            event,
        },
        Change::Approval { approval, pending } if approval.status == ApprovalStatus::Pending => {
            Event::NewApproval {
                session_id: approval.session_id.clone(),
                run_id: approval.run_id.clone(),
                kind: approval.kind,
                count: 1,
                total: pending,
                approval,
            }
        }
        Change::Approval { approval, pending } => Event::ApprovalResolved {
            approval_id: approval.id,
            call_id: approval.call_id,
            session_id: approval.session_id,
            run_id: approval.run_id,
            decision: approval.status,
            comment: approval.comment,
            kind: approval.kind,
            total: pending,
            decided_by: approval.decided_by,
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
