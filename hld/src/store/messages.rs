//! Messages sent into sessions: queued while a turn runs, delivered as the next turn (a `user`
//! conversation event), cancelled, or given up; and a session's process being live.

use hld_client::protocol::{MessageMode, MessageStatus, QueuedMessage};
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::error::{Result, StoreError};
use super::read::parse_wire;
use super::types::{Change, NewEvent, SessionUpdate};
use super::writer::Writer;
use crate::claude::prompt::described;
use crate::model::Happening;

/// A message as sent: its text, the paths of the images attached, and how it was sent.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing<'a> {
    pub text: &'a str,
    pub images: &'a [String],
    pub mode: MessageMode,
}

const COLUMNS: &str = "id, session_id, text, mode, status, created_at, settled_at, error, images";

fn from_row(row: &Row<'_>) -> rusqlite::Result<QueuedMessage> {
    let mode: String = row.get(3)?;
    let status: String = row.get(4)?;
    // A JSON array of paths; NULL when none.
    let images: Option<String> = row.get(8)?;
    Ok(QueuedMessage {
        id: row.get(0)?,
        session_id: row.get(1)?,
        text: row.get(2)?,
        mode: parse_wire(&mode).unwrap_or(MessageMode::Queue),
        status: parse_wire(&status).unwrap_or(MessageStatus::Undelivered),
        created_at: row.get(5)?,
        settled_at: row.get(6)?,
        error: row.get(7)?,
        images: images
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default(),
    })
}

/// A session's queued messages, oldest (next to be delivered) first.
pub(crate) fn queued(conn: &Connection, session_id: &str) -> Result<Vec<QueuedMessage>> {
    let sql = format!(
        "SELECT {COLUMNS} FROM queued_messages WHERE session_id = ?1 AND status = 'queued'
         ORDER BY created_at, rowid"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([session_id], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The sessions that have queued messages, oldest message first.
pub(crate) fn sessions_with_queued(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT session_id FROM queued_messages WHERE status = 'queued'
         GROUP BY session_id ORDER BY MIN(created_at)",
    )?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl Writer {
    fn message(&self, id: &str) -> Result<Option<QueuedMessage>> {
        let sql = format!("SELECT {COLUMNS} FROM queued_messages WHERE id = ?1");
        Ok(self
            .conn
            .prepare_cached(&sql)?
            .query_row([id], from_row)
            .optional()?)
    }

    fn run_id(&self, session_id: &str) -> Result<String> {
        self.conn
            .prepare_cached("SELECT run_id FROM sessions WHERE id = ?1")?
            .query_row([session_id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| StoreError::SessionNotFound(session_id.into()))
    }

    fn message_changed(&self, message: QueuedMessage, out: &mut Vec<Change>) -> Result<()> {
        let run_id = self.run_id(&message.session_id)?;
        out.push(Change::Message {
            run_id,
            message: Box::new(message),
        });
        Ok(())
    }

    /// Stores a new message in `status` (`queued`, or `delivered` by [`Self::deliver`]).
    fn insert_message(
        &mut self,
        session_id: &str,
        sent: Outgoing<'_>,
        status: MessageStatus,
    ) -> Result<QueuedMessage> {
        let Outgoing { text, images, mode } = sent;
        let now = crate::time::now();
        let settled_at = (status != MessageStatus::Queued).then(|| now.clone());
        let message = QueuedMessage {
            id: uuid::Uuid::new_v4().to_string(),
            session_id: session_id.to_owned(),
            text: text.to_owned(),
            mode,
            status,
            created_at: now,
            settled_at,
            error: None,
            images: images.to_vec(),
        };
        let images = (!images.is_empty()).then(|| serde_json::Value::from(images).to_string());
        self.run_id(session_id)?;
        self.conn
            .prepare_cached(
                "INSERT INTO queued_messages (id, session_id, text, mode, status, created_at,
                    settled_at, images) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                message.id,
                message.session_id,
                message.text,
                message.mode.as_str(),
                message.status.as_str(),
                message.created_at,
                message.settled_at,
                images,
            ])?;
        Ok(message)
    }

    /// Stores a message that waits for the session's turn to end.
    pub(crate) fn queue_message(
        &mut self,
        session_id: &str,
        sent: Outgoing<'_>,
        out: &mut Vec<Change>,
    ) -> Result<QueuedMessage> {
        let message = self.insert_message(session_id, sent, MessageStatus::Queued)?;
        self.message_changed(message.clone(), out)?;
        Ok(message)
    }

    /// Stores a message handed to the agent now: `delivered`, a `user` conversation event of
    /// Claude session `claude_session_id`, and a new turn if the last one had ended.
    pub(crate) fn deliver(
        &mut self,
        session_id: &str,
        sent: Outgoing<'_>,
        claude_session_id: &str,
        out: &mut Vec<Change>,
    ) -> Result<QueuedMessage> {
        let message = self.insert_message(session_id, sent, MessageStatus::Delivered)?;
        self.delivered(message, claude_session_id, out)
    }

    /// Delivers the session's oldest queued message, if there is one.
    pub(crate) fn deliver_next(
        &mut self,
        session_id: &str,
        claude_session_id: &str,
        out: &mut Vec<Change>,
    ) -> Result<Option<QueuedMessage>> {
        let Some(next) = queued(&self.conn, session_id)?.into_iter().next() else {
            return Ok(None);
        };
        let now = crate::time::now();
        self.conn
            .prepare_cached(
                "UPDATE queued_messages SET status = 'delivered', settled_at = ?2 WHERE id = ?1",
            )?
            .execute(params![next.id, now])?;
        let message = QueuedMessage {
            status: MessageStatus::Delivered,
            settled_at: Some(now),
            ..next
        };
        self.delivered(message, claude_session_id, out).map(Some)
    }

    fn delivered(
        &mut self,
        message: QueuedMessage,
        claude_session_id: &str,
        out: &mut Vec<Change>,
    ) -> Result<QueuedMessage> {
        let session_id = message.session_id.clone();
        self.message_changed(message.clone(), out)?;
        let content = described(&message.text, &message.images);
        let event = NewEvent::message(claude_session_id, "user", content);
        let now = crate::time::now();
        let run_id = self.run_id(&session_id)?;
        let stored = self.append_events(&session_id, vec![event], &now)?;
        out.extend(stored.into_iter().map(|event| Change::Conversation {
            run_id: run_id.clone(),
            event: Box::new(event),
        }));
        self.start_turn(&session_id, out)?;
        Ok(message)
    }

    /// A session whose turn had ended starts another: what its last turn left is cleared.
    pub(super) fn start_turn(&mut self, session_id: &str, out: &mut Vec<Change>) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE sessions SET completed_at = NULL, error_message = NULL, interrupted = 0,
                    exit_code = NULL, live_until = NULL, usage_limit_kind = NULL,
                    usage_limit_resets_at = NULL
                 WHERE id = ?1 AND (status = 'completed' OR status = 'failed')",
            )?
            .execute([session_id])?;
        let update = SessionUpdate::default();
        self.advance(session_id, Happening::NewTurn, &update, out)?;
        Ok(())
    }

    /// Removes a queued message: `cancelled`, or `undelivered` with the reason.
    pub(crate) fn cancel_message(
        &mut self,
        id: &str,
        undelivered: Option<&str>,
        out: &mut Vec<Change>,
    ) -> Result<QueuedMessage> {
        let message = self
            .message(id)?
            .filter(|m| m.status == MessageStatus::Queued)
            .ok_or_else(|| StoreError::MessageNotQueued(id.into()))?;
        let status = match undelivered {
            Some(_) => MessageStatus::Undelivered,
            None => MessageStatus::Cancelled,
        };
        let now = crate::time::now();
        self.conn
            .prepare_cached(
                "UPDATE queued_messages SET status = ?2, settled_at = ?3, error = ?4
                 WHERE id = ?1",
            )?
            .execute(params![id, status.as_str(), now, undelivered])?;
        let message = QueuedMessage {
            status,
            settled_at: Some(now),
            error: undelivered.map(str::to_owned),
            ..message
        };
        self.message_changed(message.clone(), out)?;
        Ok(message)
    }

    /// Gives up every queued message of a session: `undelivered`, with `reason`.
    pub(crate) fn give_up_messages(
        &mut self,
        session_id: &str,
        reason: &str,
        out: &mut Vec<Change>,
    ) -> Result<usize> {
        let waiting = queued(&self.conn, session_id)?;
        for message in &waiting {
            self.cancel_message(&message.id, Some(reason), out)?;
        }
        Ok(waiting.len())
    }

    /// Records whether a process serves the session, and until when it stays warm.
    pub(crate) fn set_live(&mut self, id: &str, live: bool, until: Option<&str>) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE sessions SET live = ?2, live_until = ?3 WHERE id = ?1")?
            .execute(params![id, live, until])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
