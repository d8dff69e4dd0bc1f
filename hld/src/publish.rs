//! The one place events are published: the store hands the bus each committed [`Change`],
//! which becomes the event subscribers see, so nothing is published before it is durable.

use hld_client::protocol::{ApprovalStatus, Event};

use crate::bus::Bus;
use crate::store::{Change, Sink};

impl Sink for Bus {
    fn changed(&self, change: Change) {
        self.publish(event(change));
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
            session_id: session.new.id,
            run_id: session.new.run_id,
            reason: if expired { "expired" } else { "updated" }.to_owned(),
        },
    }
}
