//! The thin runtime: one `select!` loop turns terminal input, the daemon link and the clock
//! into [`Msg`]s, draws after each batch, and runs the [`Command`]s `update` returns.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use chrono::Utc;
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use hld_client::contexts::LOCAL;
use hld_client::mode::Mode;
use hld_client::protocol::{
    ArchiveSession, ArchiveSessionParams, ConversationEvent, CreateDraft, DiscardDraft, ErrorCode,
    GetRateLimits, GetSessionDiffParams, GetSessionLeaves, GetSessionLeavesParams, GetUsage,
    GetUsageParams, LaunchDraft, LaunchDraftParams, LeafFilter, ListSlashCommands,
    MergeSessionParams, MessageMode, NoParams, SessionControl, SessionIdParams, SuggestFiles,
    SuggestFilesParams, UpdateDraft, UpdateDraftParams, UpdateSessionSettings,
    UpdateSessionSettingsParams, UpdateSessionTitle, UpdateSessionTitleParams, UsageGroupBy,
};
use hld_client::Client;
use ratatui::DefaultTerminal;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::app::{route, update, Command, DiffStat, Fleet, Msg, State, UsageTable, REVIEW_PAGE};
use crate::fleet::{Links, Starter};
pub use crate::fleet::{Place, Target};
use crate::load::{Load, Tagged};
use hld_client::view::alert::Alert;

/// The clock's period while a session runs (the spinner) and while none does (ages).
const TICK_ANIMATED: Duration = Duration::from_millis(100);
const TICK_IDLE: Duration = Duration::from_secs(1);

/// How the dashboard runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// The daemons to watch, by context, in the order given. One: its name is in the title
    /// bar (unless it is `local`); several: a fleet, each row marked with its daemon's.
    pub daemons: Vec<Target>,
    /// Colours (off under NO_COLOR).
    pub color: bool,
    /// Ring the bell when the daemon notifies (an approval waits, a session ends…).
    pub bell: bool,
    /// How the terminal is told that the daemon notified.
    pub alert: Alert,
    /// The `hld` binary a launch starts where this machine's daemon went away.
    pub hld: PathBuf,
}

/// Runs the dashboard on `terminal` until the user quits.
pub async fn run(terminal: &mut DefaultTerminal, options: Options) -> anyhow::Result<()> {
    let size = terminal.size()?;
    let mut state = State::new(Utc::now(), size.width, size.height, options.bell);
    state.here = std::env::current_dir()
        .ok()
        .map(|d| d.display().to_string());
    let names: Vec<String> = options.daemons.iter().map(|d| d.name.clone()).collect();
    match names.as_slice() {
        [name] => state.context = Some(name.clone()).filter(|n| n != LOCAL),
        _ => state.fleet = Fleet::new(names),
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Tagged>();
    let links = Links::spawn(options.daemons, &options.hld, &tx);
    let mut terminal_events = EventStream::new();
    let mut latest: HashMap<(usize, Load), u64> = HashMap::new();
    let mut next_tick = Instant::now();
    loop {
        terminal.draw(|frame| crate::view::draw(&state, frame, options.color))?;
        let mut msgs = Vec::new();
        tokio::select! {
            event = terminal_events.next() => match event {
                Some(Ok(TermEvent::Key(key))) if key.kind != KeyEventKind::Release => msgs.push(Msg::Key(key)),
                Some(Ok(TermEvent::Resize(w, h))) => msgs.push(Msg::Resize(w, h)),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            Some(tagged) = rx.recv() => msgs.extend(tagged.msg_if_latest(&latest)),
            () = tokio::time::sleep_until(next_tick) => {
                let period = if state.animating() { TICK_ANIMATED } else { TICK_IDLE };
                next_tick = Instant::now() + period;
                msgs.push(Msg::Tick(Utc::now()));
            }
        }
        // Whatever else has arrived is applied before the next draw.
        while let Ok(tagged) = rx.try_recv() {
            msgs.extend(tagged.msg_if_latest(&latest));
        }
        for msg in msgs {
            for command in update(&mut state, msg) {
                match command {
                    Command::Quit => return Ok(()),
                    Command::Notify { title, text } => {
                        write_terminal(&options.alert.sequence(&title, &text))?;
                    }
                    Command::Copy(text) => {
                        let encoded = base64::engine::general_purpose::STANDARD.encode(text);
                        write_terminal(&format!("\x1b]52;c;{encoded}\x07"))?;
                    }
                    command => {
                        let (daemons, command) = links.targets(route(&state, &command), command);
                        for daemon in daemons {
                            let load = Load::of(&command).map(|load| {
                                let generation = latest.entry((daemon, load)).or_default();
                                *generation += 1;
                                (daemon, load, *generation)
                            });
                            let link = (links.client(daemon), links.starter(daemon));
                            let command = command.clone();
                            tokio::spawn(execute(daemon, link, command, load, tx.clone()));
                        }
                    }
                }
            }
        }
    }
}

fn write_terminal(bytes: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    out.write_all(bytes.as_bytes())?;
    out.flush()
}

/// Runs one command against `daemon` (its client while connected, and what starts it when it
/// is this machine's) and sends back what came of it. A load that finds no daemon, or loses
/// it, says nothing: the footer already tells that the link is down, and reconnecting loads
/// again. A launch starts a local daemon that went away, as `hlyr launch` does.
async fn execute(
    daemon: usize,
    (client, starter): (Option<Client>, Option<Starter>),
    command: Command,
    load: Option<(usize, Load, u64)>,
    tx: mpsc::UnboundedSender<Tagged>,
) {
    // A message not sent, a title refused or a draft not kept goes back to the box it was
    // typed in.
    let typed = matches!(
        command,
        Command::Send { .. } | Command::Rename { .. } | Command::SaveDraft { .. }
    )
    .then(|| command.clone());
    let launch = matches!(command, Command::Launch(_) | Command::LaunchDraft { .. });
    let result = match client {
        None if load.is_some() => return,
        None => match starter.filter(|_| launch) {
            Some(starter) => match starter.start().await {
                Ok(client) => run_command(&client, command).await.map_err(|e| said(&e)),
                Err(e) => Err((e, None)),
            },
            None => Err(("not connected to the daemon".to_owned(), None)),
        },
        Some(client) => match run_command(&client, command).await {
            Err(hld_client::Error::Disconnected) if load.is_some() => return,
            result => result.map_err(|e| said(&e)),
        },
    };
    let msg = match (result, typed) {
        (Ok(msg), _) => msg,
        (Err((error, _)), Some(Command::Send { session_id, text })) => Msg::Unsent {
            session_id,
            text,
            error,
        },
        (Err((error, _)), Some(Command::Rename { session_id, title })) => Msg::Unrenamed {
            session_id,
            title,
            error,
        },
        (Err((error, _)), Some(Command::SaveDraft { session_id, fields })) => Msg::Unsaved {
            daemon,
            session_id,
            fields,
            error,
        },
        // The form that launched waits for its answer.
        (Err((message, param)), _) if launch => Msg::LaunchFailed { message, param },
        (Err((message, _)), _) => Msg::Failed(message),
    };
    let msg = Msg::From {
        daemon,
        msg: Box::new(msg),
    };
    let _ = tx.send(Tagged { load, msg });
}

/// What the user reads of `e`: the daemon's own message for an error it answered (the code
/// is for programs), with the parameter it refused when it named one.
fn said(e: &hld_client::Error) -> (String, Option<String>) {
    let Some(rpc) = e.rpc() else {
        return (e.to_string(), None);
    };
    let param = rpc.invalid_params().map(|data| data.param);
    (rpc.message.clone(), param)
}

/// Carries out one command that calls the daemon, and says what came of it. (Copy, Notify and
/// Quit are the loop's own, and On is unwrapped by it; given one, this panics.)
pub async fn run_command(client: &Client, command: Command) -> Result<Msg, hld_client::Error> {
    Ok(match command {
        Command::LoadSessions => Msg::Sessions(client.list_sessions().await?),
        Command::LoadDrafts => {
            let params = GetSessionLeavesParams {
                filter: Some(LeafFilter::Draft),
            };
            Msg::Drafts(client.call::<GetSessionLeaves>(params).await?.sessions)
        }
        Command::SaveDraft { session_id, fields } => {
            match session_id {
                Some(session_id) => {
                    let fields = *fields;
                    let params = UpdateDraftParams { session_id, fields };
                    client.call::<UpdateDraft>(params).await?;
                }
                None => drop(client.call::<CreateDraft>(*fields).await?),
            }
            Msg::Drafted("kept as a draft (Tab: the drafts view)".into())
        }
        Command::LaunchDraft {
            session_id,
            fields,
            params,
        } if crate::app::draft_holds(&params) => {
            let update = UpdateDraftParams {
                session_id: session_id.clone(),
                fields: *fields,
            };
            client.call::<UpdateDraft>(update).await?;
            let launch = LaunchDraftParams {
                session_id,
                ..Default::default()
            };
            Msg::Opened(client.call::<LaunchDraft>(launch).await?.session_id)
        }
        Command::LaunchDraft {
            session_id, params, ..
        } => {
            let launched = client.launch_session(*params).await?.session_id;
            client
                .call::<DiscardDraft>(SessionIdParams { session_id })
                .await?;
            Msg::Opened(launched)
        }
        Command::DiscardDraft(session_id) => {
            client
                .call::<DiscardDraft>(SessionIdParams { session_id })
                .await?;
            Msg::Drafted("draft discarded".into())
        }
        Command::LoadApprovals => Msg::Approvals(client.fetch_approvals(None).await?),
        Command::LoadConversation(session_id) => {
            let events = client.get_whole_conversation(&session_id).await?;
            let mut approvals = Vec::new();
            for id in decided_approvals(&events) {
                // One that cannot be read leaves the status stored on its event shown.
                approvals.extend(client.get_approval(id).await.ok());
            }
            Msg::Conversation {
                session_id,
                events,
                approvals,
            }
        }
        Command::Launch(params) => Msg::Opened(client.launch_session(*params).await?.session_id),
        Command::LoadQueue(session_id) => Msg::Queue {
            messages: client.list_queued_messages(&session_id).await?,
            session_id,
        },
        Command::LoadCommands(session_id) => {
            let params = SessionIdParams {
                session_id: session_id.clone(),
            };
            let commands = client.call::<ListSlashCommands>(params).await?.commands;
            Msg::Commands {
                session_id,
                commands,
            }
        }
        Command::SuggestFiles { session_id, query } => {
            let params = SuggestFilesParams {
                session_id: session_id.clone(),
                query: query.clone(),
                limit: None,
            };
            let files = client.call::<SuggestFiles>(params).await?.files;
            Msg::Files {
                session_id,
                query,
                files: files.into_iter().map(|f| f.path).collect(),
            }
        }
        Command::Send { session_id, text } => {
            let sent = client
                .send_message(&session_id, &text, MessageMode::Queue)
                .await?;
            Msg::Done(if sent.queued {
                "queued: sent when the agent's turn ends (x cancels)".into()
            } else {
                "sent: the session goes on".into()
            })
        }
        Command::CancelMessage(message_id) => {
            client.cancel_queued_message(&message_id).await?;
            Msg::Done("queued message cancelled".into())
        }
        Command::Interrupt(session_id) => {
            let result = client.interrupt_session(&session_id).await?;
            Msg::Done(format!("interrupt: {}", result.message))
        }
        Command::Decide(params) => {
            let result = client.send_decision(params).await?;
            match result.success {
                true => Msg::Done("decision sent".into()),
                false => Msg::Failed(
                    result
                        .error
                        .unwrap_or_else(|| "the decision was refused".into()),
                ),
            }
        }
        Command::ApproveAcceptingEdits {
            decision,
            session_id,
        } => {
            let result = client.send_decision(decision).await?;
            if !result.success {
                let error = result.error;
                return Ok(Msg::Failed(
                    error.unwrap_or_else(|| "the decision was refused".into()),
                ));
            }
            let params = UpdateSessionSettingsParams {
                session_id,
                auto_accept_edits: Some(true),
                ..Default::default()
            };
            client.call::<UpdateSessionSettings>(params).await?;
            Msg::Done("approved; edits are accepted from now on".into())
        }
        Command::Archive {
            session_id,
            archived,
        } => {
            let params = ArchiveSessionParams {
                session_id,
                archived,
            };
            client.call::<ArchiveSession>(params).await?;
            Msg::Done(if archived { "archived" } else { "unarchived" }.into())
        }
        Command::Rename { session_id, title } => {
            let params = UpdateSessionTitleParams { session_id, title };
            client.call::<UpdateSessionTitle>(params).await?;
            Msg::Done("renamed".into())
        }
        Command::Settings(params) => {
            let done = settings_done(&params);
            client.call::<UpdateSessionSettings>(params).await?;
            Msg::Done(done)
        }
        Command::LoadDiffStat(session_id) => {
            let params = GetSessionDiffParams {
                session_id: session_id.clone(),
                offset: None,
                limit: Some(1),
                binary: false,
            };
            // A row's counts are an aside: failing, they are left out rather than flashed (a
            // failure's reload of the list would ask for them again, and again).
            let stat = client
                .get_session_diff(params)
                .await
                .ok()
                .map(|diff| DiffStat {
                    files: diff.total_files,
                    additions: diff.additions,
                    deletions: diff.deletions,
                });
            Msg::DiffStat { session_id, stat }
        }
        Command::LoadDiff { session_id, offset } => {
            let params = GetSessionDiffParams {
                session_id: session_id.clone(),
                offset: Some(offset),
                limit: Some(REVIEW_PAGE),
                // The review shows a binary file as one line: its patch is never asked for.
                binary: false,
            };
            match client.get_session_diff(params).await {
                Ok(diff) => Msg::Diff {
                    diff,
                    session_id,
                    offset,
                },
                Err(hld_client::Error::Rpc(e)) => Msg::DiffRefused {
                    session_id,
                    reason: e.message,
                },
                Err(e) => return Err(e),
            }
        }
        Command::Merge {
            session_id,
            strategy,
        } => {
            let params = MergeSessionParams {
                session_id: session_id.clone(),
                strategy: strategy.clone(),
                message: None,
            };
            // A refusal (dirty main checkout, a turn running…) is shown in the daemon's words.
            match client.merge_session(params).await {
                Ok(result) => Msg::Merged {
                    result,
                    session_id,
                    strategy,
                },
                Err(hld_client::Error::Rpc(e)) => Msg::Failed(format!("not merged: {}", e.message)),
                Err(e) => return Err(e),
            }
        }
        // A refusal of a discard not yet forced asks whether to force it.
        Command::Discard { session_id, force } => {
            match client.discard_session(&session_id, force).await {
                Ok(()) => Msg::Discarded(session_id),
                Err(hld_client::Error::Rpc(e))
                    if !force && e.code == ErrorCode::InvalidParams.code() =>
                {
                    Msg::DiscardRefused {
                        session_id,
                        reason: e.message,
                    }
                }
                Err(hld_client::Error::Rpc(e)) => {
                    Msg::Failed(format!("not discarded: {}", e.message))
                }
                Err(e) => return Err(e),
            }
        }
        // The windows are an aside: a daemon without them (or failing) leaves them out.
        Command::LoadRateLimits => Msg::RateLimits(
            client
                .call::<GetRateLimits>(NoParams {})
                .await
                .map(|r| r.windows)
                .unwrap_or_default(),
        ),
        // The view says why it has no figures, rather than a flash and reloads.
        Command::LoadUsage { table, since } => {
            let group_by = match table {
                UsageTable::Days => UsageGroupBy::Day,
                UsageTable::Models => UsageGroupBy::Model,
            };
            let result = client
                .call::<GetUsage>(GetUsageParams { since, group_by })
                .await;
            Msg::Usage {
                table,
                result: result.map_err(|e| e.to_string()),
            }
        }
        Command::Copy(_) | Command::Notify { .. } | Command::Quit | Command::On { .. } => {
            unreachable!("run by the loop")
        }
    })
}

/// What a settings change that succeeded did, for the flash.
fn settings_done(params: &UpdateSessionSettingsParams) -> String {
    if let Some(model) = &params.model {
        return format!("model: {model}");
    }
    if let Some(permission_mode) = &params.permission_mode {
        let control = SessionControl {
            permission_mode: permission_mode.clone(),
            auto_accept_edits: params.auto_accept_edits.unwrap_or_default(),
            ..Default::default()
        };
        return format!("mode: {} (S-Tab cycles)", Mode::of(&control).label());
    }
    "settings changed".into()
}

/// The approvals that `events`' tool calls link to and that are no longer pending: how each
/// ended and its comment are on the approval, not on the event.
fn decided_approvals(events: &[ConversationEvent]) -> impl Iterator<Item = &str> {
    events
        .iter()
        .filter(|e| e.approval_status.as_deref().is_some_and(|s| s != "pending"))
        .filter_map(|e| e.approval_id.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_change_says_what_it_changed() {
        let model = UpdateSessionSettingsParams {
            model: Some("haiku".into()),
            ..Default::default()
        };
        assert_eq!(settings_done(&model), "model: haiku");
        let edits = Mode::AcceptEdits.settings("s");
        assert_eq!(settings_done(&edits), "mode: accept edits (S-Tab cycles)");
        let bypass = UpdateSessionSettingsParams {
            dangerously_skip_permissions: Some(false),
            ..Default::default()
        };
        assert_eq!(settings_done(&bypass), "settings changed");
    }
}
