//! Following a session live, for `launch`, `continue` and `conversation --follow`.
//!
//! What happens to the session comes from the SDK's [`Client::follow`] stream, which catches
//! up from the store, tells each thing once, survives falling behind, and gives the
//! conversation in the session's order; a daemon lost is waited for, and followed on from
//! where it was (see [`turns`]). Three things are watched at once: that stream, the
//! keys answering an approval on screen ([`Prompter`]), and Ctrl-C ([`OnCtrlC`]). Between
//! them, a spinner ([`Activity`]) shows what the session is doing.
//!
//! An approval is printed right after the tool call it is about (matched by `tool_use_id`),
//! even when Claude asked for it before the call was stored; and while a question is on
//! screen, later lines wait below it until it is answered, so that each question is asked
//! once.

use std::collections::{HashMap, HashSet, VecDeque};

use hld_client::mode::Mode;
use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEvent, ConversationEventType,
    MessageStatus, SessionState, SessionStatus, TurnResult,
};
use hld_client::view::repeats_denial;
use hld_client::view::usage::limit_text;
use hld_client::{Client, FollowItem};

use crate::activity::Activity;
use crate::decision;
use crate::error::{CliError, Exit};
use crate::hint::hlyr;
use crate::notify::{self, Notify};
use crate::output::{paint, short_id, Printer, Update, API_RETRY, DIM};
use crate::prompt::{left_pending, waiting_text, Answer, Prompter};
use crate::session::{Session, State};
use crate::transcript;

mod course;
mod idle;
mod turns;

/// What Ctrl-C does while a session is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnCtrlC {
    /// Interrupts the session and waits for its end; a second Ctrl-C stops waiting (`launch`,
    /// `continue`).
    Interrupt,
    /// Stops following, and says how to follow again (`--keep-running`).
    Detach,
    /// Stops following (`conversation --follow`).
    StopWatching,
}

/// How to follow.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub on_ctrl_c: OnCtrlC,
    /// Ring and notify when the session needs the user and when its turn ends (see
    /// [`crate::notify`]).
    pub notify: bool,
    /// Hold a conversation: after each turn, ask for the next message (see [`turns`]).
    pub converse: bool,
}

/// Prints `session_id`'s conversation so far, then follows it until its turn ends (with
/// [`Options::converse`], until the user ends the conversation). Returns
/// [`Exit::Ok`] when it completed, [`Exit::Failure`] when it failed, [`Exit::Interrupted`]
/// when it was interrupted from elsewhere, and [`Exit::CtrlC`] after Ctrl-C.
pub async fn follow(
    client: &Client,
    out: Printer,
    session_id: &str,
    options: Options,
) -> Result<Exit, CliError> {
    turns::following(client, out, session_id, options)
        .await
        .map_err(|e| match e.exit {
            Exit::Unreachable => lost_daemon(session_id),
            _ => e,
        })
}

/// The `reason` of a `session_settings_changed` telling that a bypass of permissions ran out.
const BYPASS_EXPIRED: &str = "expired";

fn lost_daemon(session_id: &str) -> CliError {
    let again = hlyr(&format!("conversation {} --follow", short_id(session_id)));
    CliError::unreachable("lost the connection to the daemon")
        .hint(format!("once it is back, follow again with {again}"))
}

struct Follower<'a> {
    /// The daemon's connection; a new one once it was lost (see [`turns`]).
    client: Client,
    out: Printer,
    session_id: &'a str,
    /// Tool use ids whose call was taken in.
    calls: HashSet<String>,
    /// Approvals whose tool call has not come yet, by tool use id.
    early: HashMap<String, Approval>,
    /// What is to be printed, in the session's order.
    queue: VecDeque<Update>,
    /// Approval ids printed.
    printed: HashSet<String>,
    /// Approval ids whose decision was taken in.
    decided: HashSet<String>,
    /// Approval ids named by the tool calls taken in.
    linked: HashSet<String>,
    /// Decisions a session rule made before their tool call came, by approval id: such an
    /// approval was never pending (no `new_approval`), so only its tool call places it.
    held: HashMap<String, Update>,
    /// An API retry is shown on a terminal line left open, rewritten by the next one.
    retrying: bool,
    /// Asks approvals on the terminal; `None` when stdin is not one, and once the session is
    /// being interrupted or has ended.
    prompter: Option<Prompter>,
    /// The spinner.
    activity: Activity,
    notify: Notify,
    /// The session's title, for notifications.
    title: String,
    /// A daemon's notification told the end of this turn: hlyr does not tell it again.
    end_notified: bool,
    /// What the session does, as the last update printed tells.
    doing: Option<String>,
    /// The approvals printed and not decided yet, oldest first, with what the spinner says
    /// while each waits.
    waiting: Vec<(String, String)>,
    /// The tool each approval printed is about, by approval id.
    tools: HashMap<String, String>,
    /// A question's tool call, held back while live: the question's approval, which comes
    /// next, asks it (with its id). Anything else that comes first lets it be printed.
    question: Option<ConversationEvent>,
    /// What the questions taken in ask, with their choices, by tool use id: the approval
    /// that asks them shows it.
    asked: HashMap<String, String>,
    /// The messages typed in this conversation and queued for the turn's end (id, text):
    /// Ctrl-C takes back those not delivered yet, as it stops the session.
    queued: Vec<(String, String)>,
    /// Ctrl-C interrupted the session, whose end is awaited.
    interrupting: bool,
    /// The session ended (or its turn did): what is printed now is no longer news, and
    /// nothing is asked.
    ended: bool,
    /// A conversation is held: the keys are kept across turns.
    converse: bool,
    /// The session's mode of the Shift+Tab cycle, as last known.
    mode: Mode,
    /// The session's totals as last read: as following began, then at each turn's end.
    totals: TurnResult,
    /// The comments of the denials printed: a tool result repeating one is not printed.
    denials: HashSet<String>,
    /// The messages sent into the session (from any front end) queued and not delivered or
    /// cancelled yet: each starts a turn after the one running.
    pending: HashSet<String>,
    /// The turn followed was asked to stop (its status went `completing`): it ends
    /// interrupted, whatever the state read after it says (a queued message may have started
    /// the next turn by then).
    stopping: bool,
}

impl Follower<'_> {
    /// Whether the session goes on past the turn that ended in `state`: a message queued
    /// starts the next turn, or already has.
    fn goes_on(&self, state: &SessionState) -> bool {
        state.status.is_active() || !self.pending.is_empty()
    }

    /// Whether a question is on screen (what comes next waits for its answer).
    fn asking(&self) -> bool {
        self.prompter.as_ref().is_some_and(Prompter::asking)
    }

    /// Prints what is queued, until a question is asked.
    fn flush(&mut self) -> Result<(), CliError> {
        while !self.asking() {
            let Some(update) = self.queue.pop_front() else {
                break;
            };
            self.print(&update)?;
            if let Update::Approval(approval) = update {
                self.printed.insert(approval.id.clone());
                if !self.decided.contains(&approval.id) && !self.ended {
                    self.notify.own(&self.title, &waiting_text(&approval));
                    match self.prompter.as_mut() {
                        Some(prompter) => prompter.ask(approval),
                        // No terminal to ask on (stdin is not one): say how to answer.
                        None if !self.out.is_json() && !self.interrupting => {
                            note(&format!("  {}", left_pending(&approval, None)));
                        }
                        None => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Prints one item now, below any prompt on screen and above the spinner, and tells the
    /// spinner what the session does next. On a terminal, API retries share one line, each
    /// rewriting the one before.
    fn print(&mut self, update: &Update) -> Result<(), CliError> {
        self.track(update);
        let text = match update {
            // The input was shown with the tool call, if that was printed.
            Update::Approval(approval) if !self.out.is_json() => {
                let call_printed =
                    (approval.tool_use_id.as_ref()).is_some_and(|call| self.calls.contains(call));
                let asked = (approval.tool_use_id.as_ref())
                    .filter(|_| approval.kind == ApprovalType::HumanContact)
                    .and_then(|call| self.asked.remove(call));
                match asked {
                    Some(asked) => transcript::question_approval_text(approval, Some(&asked)),
                    None => transcript::approval_text(approval, !call_printed),
                }
            }
            Update::Event(e)
                if !self.out.is_json() && self.denials.iter().any(|r| repeats_denial(e, r)) =>
            {
                String::new()
            }
            _ => self.out.render(update)?,
        };
        // A person's reason is shown with the denial (a rule's is not: its result tells it).
        if let Update::Decision {
            decision: ApprovalStatus::Denied,
            comment: Some(reason),
            decided_by: None,
            ..
        } = update
        {
            self.denials.insert(reason.clone());
        }
        if text.is_empty() {
            return Ok(());
        }
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.interrupt();
        }
        let retry = matches!(update, Update::Event(e) if e.subtype.as_deref() == Some(API_RETRY));
        if retry && self.out.rewrites() {
            // The open line would be the spinner's: it waits until the line is ended.
            self.activity.hide();
            self.retrying = true;
            return self.out.rewrite_line(&text);
        }
        let out = self.out;
        let retrying = std::mem::take(&mut self.retrying);
        self.activity.suspend(|| {
            if retrying {
                out.end_line()?;
            }
            out.line(&text)
        })
    }

    /// Tells the spinner what the session does after `update`.
    fn track(&mut self, update: &Update) {
        let tool = |name: &Option<String>| name.as_deref().unwrap_or("a tool").to_owned();
        let doing = match update {
            Update::Event(event) => match event.event_type {
                ConversationEventType::ToolCall => format!("running {}", tool(&event.tool_name)),
                ConversationEventType::System => return,
                ConversationEventType::Message if event.role.as_deref() == Some("assistant") => {
                    "writing".to_owned()
                }
                _ => "thinking".to_owned(),
            },
            Update::Approval(approval) => {
                let name = tool(&approval.function_name);
                self.tools.insert(approval.id.clone(), name);
                if !self.decided.contains(&approval.id) {
                    self.waiting
                        .push((approval.id.clone(), waiting_text(approval)));
                }
                return;
            }
            Update::Decision {
                approval_id,
                decision,
                ..
            } => {
                self.waiting.retain(|(id, _)| id != approval_id);
                match (decision, self.tools.get(approval_id)) {
                    (ApprovalStatus::Approved, Some(name)) => format!("running {name}"),
                    _ => "thinking".to_owned(),
                }
            }
            Update::Status {
                new_status: SessionStatus::Completing,
                ..
            } => "interrupting".to_owned(),
            _ => return,
        };
        self.doing = Some(doing);
    }

    /// Between events: the question on screen; else the spinner, saying what the session
    /// waits for or does (unless an API retry's line is open).
    fn idle(&mut self) {
        if self.ended {
            return;
        }
        if let Some(prompter) = self.prompter.as_mut().filter(|p| p.asking()) {
            self.activity.hide();
            prompter.resume();
            return;
        }
        let what = match self.waiting.first() {
            _ if self.interrupting => Some("interrupting"),
            Some((_, waiting)) => Some(waiting.as_str()),
            None => self.doing.as_deref(),
        };
        if let Some(what) = what {
            self.activity.doing(what);
        }
        if !self.retrying {
            self.activity.show();
        }
    }

    /// Queues a conversation event (and an approval, or a rule's decision, that was waiting
    /// for it).
    fn conversation(&mut self, event: ConversationEvent) {
        self.queue.extend(self.question.take().map(Update::Event));
        let (call, linked) = match event.event_type {
            ConversationEventType::ToolCall => (event.tool_id.clone(), event.approval_id.clone()),
            _ => (None, None),
        };
        let early = call.as_ref().and_then(|id| self.early.remove(id));
        let question = transcript::question(&event).is_some();
        if let (Some(call), Some(asked)) = (&call, transcript::asked(&event)) {
            self.asked.insert(call.clone(), asked);
        }
        if question && early.is_some() {
            // Asked before its tool call was stored: the approval asks it, once.
        } else if question && !self.ended {
            self.question = Some(event);
        } else {
            self.queue.push_back(Update::Event(event));
        }
        self.queue.extend(early.map(Update::Approval));
        self.calls.extend(call);
        if let Some(id) = linked {
            self.link(id);
        }
    }

    /// Takes in that a tool call taken in names approval `id`: a rule's decision held for it
    /// follows it now.
    fn link(&mut self, id: String) {
        if let Some(decision) = self.held.remove(&id) {
            self.queue.push_back(decision);
        }
        self.linked.insert(id);
    }

    /// Takes in one item of the session (not its end, which [`Follower::finish`] takes).
    fn item(&mut self, item: FollowItem) {
        match item {
            FollowItem::Conversation(event) => self.conversation(*event),
            // A tool call shown before now names its approval, or the approval's decision.
            FollowItem::ConversationChanged(event) => {
                if let Some(id) = event.approval_id {
                    self.link(id);
                }
            }
            FollowItem::Status {
                old_status,
                new_status,
                error,
            } => {
                if !new_status.is_active() {
                    self.end();
                } else if self.ended {
                    self.next_turn();
                }
                self.stopping |= new_status == SessionStatus::Completing;
                self.queue.push_back(Update::Status {
                    session_id: self.session_id.to_owned(),
                    old_status,
                    new_status,
                    error,
                });
            }
            FollowItem::ApprovalRequested(approval) => self.approval_requested(*approval),
            FollowItem::Notification(notification) => {
                let rang = self.notify.notification(&notification);
                self.end_notified |= rang && notify::is_end(&notification);
            }
            FollowItem::Message(message) => {
                if message.status == MessageStatus::Queued {
                    self.pending.insert(message.id.clone());
                } else {
                    self.pending.remove(&message.id);
                }
                self.queue.push_back(Update::Message(*message));
            }
            FollowItem::ApprovalResolved {
                approval_id,
                decision,
                comment,
                decided_by,
            } => self.decided(Update::Decision {
                approval_id,
                decision,
                comment,
                decided_by,
            }),
            // Changes a person made are theirs to know; the end of a bypass is news, and so
            // is a new mode in a conversation, whose prompt tells the mode.
            FollowItem::SettingsChanged { control, reason } => {
                if reason.as_deref() == Some(BYPASS_EXPIRED) {
                    self.queue.push_back(Update::BypassExpired {
                        session_id: self.session_id.to_owned(),
                    });
                }
                self.mode_now(Mode::of(&control));
            }
            // A lag, which the stream caught up from the store; an item this version does not
            // know: nothing to show.
            _ => {}
        }
    }

    /// Queues an approval after its tool call, or keeps it until that call comes.
    fn approval_requested(&mut self, approval: Approval) {
        // A follow picked up after the daemon was lost asks again what is still pending.
        let id = &approval.id;
        let known = self.printed.contains(id)
            || self.early.values().any(|a| &a.id == id)
            || (self.queue.iter()).any(|u| matches!(u, Update::Approval(a) if &a.id == id));
        if known {
            return;
        }
        let asked = self.question.as_ref().and_then(transcript::question);
        if asked.is_some() && asked == approval.message {
            self.question = None;
        }
        match approval.tool_use_id.clone() {
            Some(call) if !self.calls.contains(&call) => {
                self.early.insert(call, approval);
            }
            _ => self.queue.push_back(Update::Approval(approval)),
        }
    }

    /// Takes in a decision (made here, elsewhere or by a session rule): the question stops,
    /// and the decision is printed right after its approval, once that is printed. (An
    /// approval a rule granted as it was asked was never pending: its decision comes alone.)
    fn decided(&mut self, decision: Update) {
        let Update::Decision {
            approval_id,
            decided_by,
            ..
        } = &decision
        else {
            return;
        };
        if !self.decided.insert(approval_id.clone()) {
            return;
        }
        // A question held back for its approval, which was decided without being asked (a
        // replay): told before its answer.
        if (self.question.as_ref()).is_some_and(|q| q.approval_id.as_ref() == Some(approval_id)) {
            self.queue.extend(self.question.take().map(Update::Event));
        }
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.forget(approval_id);
        }
        let queued = self
            .queue
            .iter()
            .position(|u| matches!(u, Update::Approval(a) if &a.id == approval_id));
        match queued {
            Some(at) => self.queue.insert(at + 1, decision),
            None if self.printed.contains(approval_id) => self.queue.push_front(decision),
            None => {
                let call = self
                    .early
                    .iter()
                    .find(|(_, a)| &a.id == approval_id)
                    .map(|(call, _)| call.clone());
                match call.and_then(|call| self.early.remove(&call)) {
                    // Its call never came: the approval is told now, with its decision.
                    Some(approval) => {
                        self.queue.push_back(Update::Approval(approval));
                        self.queue.push_back(decision);
                    }
                    // Granted by a rule as it was asked: it waits for its tool call.
                    None if decided_by.is_some() && !self.linked.contains(approval_id) => {
                        self.held.insert(approval_id.clone(), decision);
                    }
                    None => self.queue.push_back(decision),
                }
            }
        }
    }

    /// Sends the decision keys completed; a refused decision is reported, not fatal. An
    /// accepted one is printed at once, below its question. With `e`, auto-accept of edits is
    /// turned on too.
    async fn answer(&mut self, answer: Answer) -> Result<(), CliError> {
        let accept_first = decision::accepts_edits_first(&answer);
        if accept_first {
            self.accept_edits(&answer).await;
        }
        if let Err(e) = decision::send_answer(&self.client, &answer).await {
            e.print();
            return Ok(());
        }
        self.decided.insert(answer.approval.id.clone());
        self.print(&Update::Decision {
            approval_id: answer.approval.id.clone(),
            decision: answer.decision.status(),
            comment: answer.comment.clone(),
            decided_by: None,
        })?;
        if answer.accept_edits && !accept_first {
            self.accept_edits(&answer).await;
        }
        Ok(())
    }

    async fn accept_edits(&self, answer: &Answer) {
        match decision::accept_edits(&self.client, answer).await {
            Ok(()) => note("auto-accept of edits is on for this session"),
            Err(e) => e.print(),
        }
    }

    /// The session ended: nothing more is asked (a question's tool call held back is told),
    /// and the spinner goes.
    fn end(&mut self) {
        self.queue.extend(self.question.take().map(Update::Event));
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.interrupt();
        }
        if !self.converse {
            self.prompter = None;
        }
        self.activity.hide();
        self.ended = true;
    }

    /// A conversation's next turn started: it is news again, and its approvals are asked.
    fn next_turn(&mut self) {
        self.ended = false;
        self.end_notified = false;
        self.doing = Some("thinking".to_owned());
    }

    /// Prints what is left and the outcome of the session's turn, `state`; its line tells the
    /// `turn`'s own figures when known (the JSON line is the session, with its totals).
    fn finish(&mut self, state: SessionState, turn: Option<TurnResult>) -> Result<Exit, CliError> {
        self.end();
        let early: Vec<Approval> = self.early.drain().map(|(_, a)| a).collect();
        self.queue.extend(early.into_iter().map(Update::Approval));
        let held: Vec<Update> = self.held.drain().map(|(_, d)| d).collect();
        self.queue.extend(held);
        self.flush()?;
        let stopped = std::mem::take(&mut self.stopping) || state.interrupted;
        let (exit, how) = match (&state.status, &state.usage_limit) {
            (SessionStatus::Failed, Some(limit)) => {
                (Exit::Failure, limit_text(limit, chrono::Utc::now()))
            }
            (SessionStatus::Failed, None) => (Exit::Failure, "failed".to_owned()),
            _ if self.interrupting => (Exit::CtrlC, "interrupted".to_owned()),
            _ if stopped => (Exit::Interrupted, "interrupted".to_owned()),
            _ => (Exit::Ok, "completed".to_owned()),
        };
        if !std::mem::replace(&mut self.end_notified, true) {
            self.notify.alert(&self.title, &how);
        }
        self.totals = turns::totals(&state);
        let mut session = Session::from(state);
        if exit == Exit::Interrupted {
            session.status = State::Interrupted;
        }
        if let Some(turn) = turn.filter(|_| !self.out.is_json()) {
            session.cost_usd = turn.cost_usd;
            session.num_turns = turn.num_turns;
            session.duration_ms = turn.duration_ms;
        }
        self.print(&Update::Finished(session))?;
        Ok(exit)
    }
}

/// A dim note on stderr.
fn note(text: &str) {
    anstream::eprintln!("{}", paint(DIM, text));
}
