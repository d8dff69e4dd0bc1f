//! Messages into sessions: handed to the session's process (queued while a turn runs), or
//! delivered by resuming the session (`--resume`, no fork: same session, one conversation)
//! when no process is left; warm processes past `--max-live` closed; after a restart, queued
//! messages delivered by resuming, or given up as `undelivered`, never dropped silently.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use hld_client::protocol::{
    Approval, MessageMode, QueuedMessage, SendMessageResult, SessionStatus,
};
use tokio::sync::oneshot;

use super::supervisor::{Command, Sent};
use super::{Sessions, Start};
use crate::claude::prompt::{self, Prompt};
use crate::error::{Error, Result};
use crate::store::messages::Outgoing;
use crate::store::{messages, read, SessionRow};

/// How long a message waits for a closing process to end before the session is resumed.
const CLOSING_WAIT: Duration = Duration::from_secs(30);

/// The reason recorded on messages that cannot be delivered by resuming.
const CANNOT_RESUME: &str = "the session has no Claude session to resume";

impl Sessions {
    /// `sendMessage`: into the session's process, or by resuming the session.
    pub async fn send_message(
        self: &Arc<Self>,
        session_id: &str,
        prompt: Prompt,
        mode: MessageMode,
    ) -> Result<SendMessageResult> {
        let row = self.session_row(session_id).await?;
        if row.status == SessionStatus::Starting {
            return Err(Error::invalid_param(
                "session_id",
                "a session that has started",
                "starting",
                "the session is still starting: send the message once it runs",
            ));
        }
        if let Some(gone) = gone(&row.new.options.working_dir) {
            return Err(Error::invalid_param(
                "session_id",
                "a session whose working directory exists",
                "missing working directory",
                format!("cannot send to session {session_id}: {gone}"),
            ));
        }
        if let Some(sent) = self.to_process(session_id, &prompt, mode.clone()).await? {
            return Ok(sent);
        }
        let _one = self.resuming.lock().await;
        // Another message may have resumed the session meanwhile.
        if let Some(sent) = self.to_process(session_id, &prompt, mode.clone()).await? {
            return Ok(sent);
        }
        let row = self.session_row(session_id).await?;
        let Some(claude_id) = row.claude_session_id.clone() else {
            return Err(Error::invalid_param(
                "session_id",
                "a session with a claude_session_id",
                "no claude_session_id",
                format!("cannot send to session {session_id}: {CANNOT_RESUME}"),
            ));
        };
        // Checked before the message is stored as delivered.
        let claude_path = self.claude_path(&row.new.options)?;
        let id = session_id.to_owned();
        let (text, images) = (prompt.text.clone(), prompt.paths());
        let delivered = self
            .store
            .write(move |w, out| {
                let (text, images) = (&text, &images);
                w.deliver(&id, Outgoing { text, images, mode }, &claude_id, out)
            })
            .await
            .map_err(|e| Error::internal("failed to deliver the message", e))?;
        self.resume(&claude_path, &row, prompt).await?;
        Ok(SendMessageResult {
            message_id: delivered.id,
            queued: false,
        })
    }

    /// Hands a message to the session's process; `None` when there is none (or it closed).
    async fn to_process(
        &self,
        session_id: &str,
        prompt: &Prompt,
        mode: MessageMode,
    ) -> Result<Option<SendMessageResult>> {
        let (reply, answer) = oneshot::channel();
        let command = Command::Send {
            prompt: prompt.clone(),
            mode,
            reply,
        };
        let sent = match self.live.lock().unwrap().get(session_id) {
            Some(handle) => handle.commands.send(command).is_ok(),
            None => false,
        };
        if !sent {
            return Ok(None);
        }
        let (message_id, queued) = match answer.await {
            Ok(Ok(Sent::Queued(id))) => (id, true),
            Ok(Ok(Sent::Delivered(id))) => (id, false),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(Sent::Closing)) | Err(_) => {
                self.wait_finished(session_id, CLOSING_WAIT).await;
                return Ok(None);
            }
        };
        Ok(Some(SendMessageResult { message_id, queued }))
    }

    pub(super) async fn session_row(&self, session_id: &str) -> Result<SessionRow> {
        let id = session_id.to_owned();
        self.store
            .read(move |c| read::session(c, &id))
            .await
            .map_err(|e| Error::internal("failed to get session", e))?
            .ok_or_else(|| Error::not_found("session_id", "session", session_id))
    }

    /// Resumes stored session `row` in a new process (same session, no fork) with `first`,
    /// a message stored as delivered already.
    async fn resume(
        self: &Arc<Self>,
        claude_path: &Path,
        row: &SessionRow,
        first: Prompt,
    ) -> Result<()> {
        let options = row.new.options.clone();
        let start = Start {
            session_id: &row.new.id,
            run_id: &row.new.run_id,
            options,
            fork_session: false,
            resume: row.claude_session_id.clone(),
            query: None,
            permission_mode: row.new.modes.permission_mode.clone(),
        };
        tracing::info!(session = %row.new.id, "resuming the session for a message");
        self.start(claude_path, start, first).await
    }

    /// After a process ended: a steering message it never answered, else the oldest queued
    /// message, resumes the session; one that cannot be resumed gives its queue up. (Boxed:
    /// it starts a process whose actor calls it in turn.)
    pub(super) fn after_exit(
        self: Arc<Self>,
        session_id: String,
        steered: Option<Prompt>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let _one = self.resuming.lock().await;
            if self.live.lock().unwrap().contains_key(&session_id) {
                return;
            }
            let id = session_id.clone();
            let row = match self.store.read(move |c| read::session(c, &id)).await {
                Ok(Some(row)) => row,
                // Deleted with its process: nothing is left to resume.
                Ok(None) => return,
                Err(e) => {
                    return tracing::error!(session = %session_id, error = %e, "cannot read the session to resume");
                }
            };
            // Checked before a queued message is taken as delivered.
            if let Some(gone) = gone(&row.new.options.working_dir) {
                return self.give_up(&session_id, &gone).await;
            }
            let claude_path = match self.claude_path(&row.new.options) {
                Ok(path) => path,
                Err(e) => return self.give_up(&session_id, e.public_message()).await,
            };
            let first = match steered {
                Some(prompt) => Some(prompt),
                None => self.next_queued(&row).await,
            };
            let Some(first) = first else { return };
            if let Err(e) = self.resume(&claude_path, &row, first).await {
                self.give_up(&session_id, e.public_message()).await;
            }
        })
    }

    /// Delivers the session's oldest queued message, or gives the queue up when the session
    /// cannot be resumed.
    async fn next_queued(&self, row: &SessionRow) -> Option<Prompt> {
        let Some(claude_id) = row.claude_session_id.clone() else {
            self.give_up(&row.new.id, CANNOT_RESUME).await;
            return None;
        };
        let id = row.new.id.clone();
        let next = self
            .store
            .write(move |w, out| w.deliver_next(&id, &claude_id, out))
            .await;
        match next {
            Ok(Some(message)) => Some(stored_prompt(&row.new.id, message).await),
            Ok(None) => None,
            Err(e) => {
                tracing::error!(session = %row.new.id, error = %e, "cannot deliver a queued message");
                None
            }
        }
    }

    pub(super) async fn give_up(&self, session_id: &str, reason: &str) {
        let (id, why) = (session_id.to_owned(), reason.to_owned());
        let given_up = self
            .store
            .write(move |w, out| w.give_up_messages(&id, &why, out))
            .await;
        match given_up {
            Ok(0) => {}
            Ok(count) => {
                tracing::warn!(session = %session_id, count, reason = %reason, "queued messages undelivered")
            }
            Err(e) => {
                tracing::error!(session = %session_id, error = %e, "cannot give queued messages up")
            }
        }
    }

    /// At start-up: every session with queued messages is resumed with the oldest.
    pub async fn resume_queued(self: &Arc<Self>) -> anyhow::Result<()> {
        let sessions = self.store.read(messages::sessions_with_queued).await?;
        for session_id in sessions {
            Arc::clone(self).after_exit(session_id, None).await;
        }
        Ok(())
    }

    /// Marks a session's process warm (between turns) or not; past `--max-live` warm ones,
    /// the least recently used are closed, and no longer count as warm from then on (or many
    /// turns ending together would close the same one again and again).
    pub(super) fn set_warm(&self, session_id: &str, warm: bool) {
        let mut live = self.live.lock().unwrap();
        if let Some(handle) = live.get_mut(session_id) {
            handle.warm_since = warm.then(tokio::time::Instant::now);
            handle.warm.send_replace(warm);
        }
        let mut warm: Vec<_> = live
            .values_mut()
            .filter(|h| h.warm_since.is_some())
            .collect();
        let excess = warm.len().saturating_sub(self.config.max_live);
        warm.sort_by_key(|h| h.warm_since);
        for oldest in warm.into_iter().take(excess) {
            oldest.warm_since = None;
            let why = "more processes are warm than --max-live allows";
            let _ = oldest.commands.send(Command::Close(why));
        }
    }

    /// Closes a deleted session's process if it waits between turns: nobody can talk to it.
    pub fn close_deleted(&self, session_id: &str) {
        if let Some(handle) = self.live.lock().unwrap().get(session_id) {
            let _ = handle
                .commands
                .send(Command::Close("its session was deleted"));
        }
    }

    /// Ends a session's process if it waits between turns, and waits (a while) for it to exit:
    /// its worktree is about to be merged or removed.
    pub async fn end_warm(&self, session_id: &str, why: &'static str) {
        let sent = match self.live.lock().unwrap().get(session_id) {
            Some(handle) => handle.commands.send(Command::Close(why)).is_ok(),
            None => false,
        };
        if sent {
            self.wait_finished(session_id, CLOSING_WAIT).await;
        }
    }

    /// Hands a decided approval to its session's process, which may be waiting for it.
    pub fn decided(&self, approval: &Approval) {
        if let Some(handle) = self.live.lock().unwrap().get(&approval.session_id) {
            let _ = handle.commands.send(Command::Decided {
                approval_id: approval.id.clone(),
                status: approval.status,
                comment: approval.comment.clone(),
            });
        }
    }
}

/// Why no turn can run in `dir`, the session's working directory, if it was removed (by hand:
/// an isolated session's worktree deleted, say).
pub(super) fn gone(dir: &Path) -> Option<String> {
    let message = "the session's working directory no longer exists";
    (!dir.is_dir()).then(|| format!("{message}: {}", dir.display()))
}

/// A process's working directory: the path, and the directory it named when the process
/// started (device and inode). The process keeps that directory as its current one, removed
/// or not: once the path is gone, or names a directory made again, no turn runs there.
#[derive(Debug)]
pub(super) struct Workdir {
    path: PathBuf,
    started_in: Option<(u64, u64)>,
}

impl Workdir {
    pub(super) fn new(path: PathBuf) -> Workdir {
        let started_in = identity(&path);
        Workdir { path, started_in }
    }

    /// Why the process can run no more turns, if it can run none.
    pub(super) fn gone(&self) -> Option<String> {
        match identity(&self.path) {
            Some(now) if Some(now) == self.started_in => None,
            Some(_) => Some(format!(
                "the session's working directory was removed and made again: {}",
                self.path.display()
            )),
            None => gone(&self.path),
        }
    }
}

/// The directory `path` names, as device and inode.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok().filter(|m| m.is_dir())?;
    Some((meta.dev(), meta.ino()))
}

/// A stored message as the prompt it is delivered with, its images read again (off the
/// runtime); one that cannot be read any more is left out, and logged.
pub(super) async fn stored_prompt(session_id: &str, message: QueuedMessage) -> Prompt {
    let paths = message.images;
    if paths.is_empty() {
        return Prompt::text(message.text);
    }
    let id = session_id.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        let readable = |path: &String| match prompt::read(path) {
            Ok(image) => Some(image),
            Err(why) => {
                tracing::warn!(session = %id, %why, "an image of a queued message is left out");
                None
            }
        };
        paths.iter().filter_map(readable).collect()
    });
    Prompt {
        text: message.text,
        images: read.await.unwrap_or_default(),
    }
}
