//! The follow loop, turn after turn. It watches the SDK's follow stream, the terminal's keys
//! and Ctrl-C at once. By default it stops at the end of the session's turn, as a `claude -p`
//! run does. Holding a conversation ([`Options::converse`], `hlyr launch` on a terminal), it
//! stays: after a turn it asks for the next message on a prompt line (Enter sends it into the
//! same session; an empty line or Ctrl-D ends), and while the agent works, a line typed beside
//! the spinner is queued for the turn's end (Enter) or steers the agent at once (Tab). At any
//! time Shift+Tab cycles the session's mode and `/model NAME` switches its model (see
//! [`super::course`]); the prompt line shows a mode other than `default`.
//!
//! Between turns the session is followed still ([`super::idle`]): a turn another front end
//! starts is shown as it happens. A daemon lost is waited for, with backoff: at the prompt
//! while a conversation is held (which goes on once it is back, or a line sent reaches it),
//! otherwise following on from the last event taken in ([`Turns::resume`]).

use std::io::Write;

use futures::StreamExt;
use hld_client::mode::Mode;
use hld_client::protocol::{MessageMode, SessionState, SessionStatus, TurnResult};
use hld_client::{Client, Follow, FollowItem, Subscription};
use tokio::signal::unix::{signal, SignalKind};
use unicode_width::UnicodeWidthStr;

use super::{note, Follower, Options};
use crate::activity::Activity;
use crate::composer::{Composer, Typed};
use crate::error::{CliError, Exit};
use crate::keys::{Key, QuietControls};
use crate::notify::Notify;
use crate::output::{paint, Printer, BOLD, CYAN, DIM};
use crate::prompt::Prompter;
use crate::reconnect::Reconnect;
use crate::session::shown_title;

/// What the prompt for the next message says about its keys.
const PROMPT_HELP: &str = "(Enter sends · empty line or Ctrl-D ends)";

/// How many completions Tab shows when several match, at most.
const MAX_CANDIDATES: usize = 12;

/// What a conversation's first turn says about the keys.
const TYPING_HELP: &str = "type to talk to the agent: Enter queues a message for the end of \
its turn, Tab sends it now (interrupting the turn), Esc interrupts the turn; after a turn, an \
empty line, /exit or Ctrl-D ends. Shift+Tab cycles the \
mode (accept edits, plan, default); /model NAME switches the model; Tab completes a /command \
or an @file; Up recalls a line sent";

pub(super) async fn following(
    client: &Client,
    out: Printer,
    session_id: &str,
    options: Options,
) -> Result<Exit, CliError> {
    // Listening from the start: once following has begun, Ctrl-C does what `OnCtrlC` says
    // and never kills hlyr.
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))?;
    // Before the follower, whose key reader takes the terminal's modes as they are then:
    // dropped after it, this gives the terminal its echo of `^C` back last.
    let _quiet = QuietControls::on_terminal();
    // Subscribed first: a notification sent while hlyr asks the daemon about its notifier
    // is then among what the follow yields.
    let follow = client.follow(session_id).await?;
    let notify = Notify::new(client, options.notify).await?;
    let initial = follow.initial_state();
    let mut follower = Follower {
        client: client.clone(),
        out,
        session_id,
        calls: Default::default(),
        early: Default::default(),
        queue: Default::default(),
        printed: Default::default(),
        decided: Default::default(),
        linked: Default::default(),
        held: Default::default(),
        retrying: false,
        prompter: Prompter::on_terminal(),
        activity: Activity::on_terminal(),
        notify,
        title: shown_title(&initial.control.title, &initial.summary, &initial.query),
        end_notified: false,
        doing: None,
        waiting: Vec::new(),
        tools: Default::default(),
        question: None,
        asked: Default::default(),
        queued: Vec::new(),
        interrupting: false,
        ended: false,
        converse: options.converse,
        mode: Mode::of(&initial.control),
        totals: totals(initial),
        denials: Default::default(),
        pending: Default::default(),
        stopping: false,
    };
    ring_waiting(&mut follower).await?;
    let status = &follow.initial_state().status;
    if !status.is_active() {
        // Ended already: its history is no news, and nothing is asked.
        follower.end();
    } else if *status == SessionStatus::Starting {
        follower.doing = Some("starting".to_owned());
    }
    // Up at the first prompt recalls the query the session was launched with.
    let composer = Composer::with_history([initial.query.clone()]);
    let mut turns = Turns {
        follow: Some(follow),
        watch: None,
        cut: false,
        told: None,
        last_sequence: None,
        composer,
        prompt_row: 0,
    };
    if options.converse {
        if let Some(prompter) = follower.prompter.as_mut() {
            prompter.hold_keys();
            note(TYPING_HELP);
        }
    }

    // The daemon waited for at the prompt, after its loss was said there.
    let mut back: Option<Reconnect> = None;
    loop {
        // Before the daemon is waited for: a watch that finds it gone again waits for it.
        if turns.unwatched(&follower) {
            if let Err(e) = turns.watch(&mut follower).await {
                turns.lost(&mut follower, e);
            }
        }
        let waits = turns.waits_for_daemon(&follower);
        if !waits {
            back = None;
        } else if back.is_none() {
            back = Some(Reconnect::new(follower.client.address()).said());
        }
        follower.idle();
        follower.activity.typing(&turns.composer.shown());
        let asking = follower.asking();
        let reading =
            asking || (options.converse && follower.prompter.as_ref().is_some_and(Prompter::reads));
        // Idle at the prompt, a daemon gone is said at once, not at the next line sent.
        let idle = turns.follow.is_none() && turns.told != Some(Exit::Unreachable);
        let client = follower.client.clone();
        tokio::select! {
            () = client.closed(), if idle && follower.holds_keys() => {
                let lost = super::lost_daemon(follower.session_id);
                turns.lost(&mut follower, lost);
            }
            client = async { Some(back.as_mut()?.connect("").await) }, if waits => {
                if let (Some(client), Some(reconnect)) = (client, back.as_mut()) {
                    turns.back(&mut follower, client, reconnect).await?;
                }
            }
            seen = async { turns.watch.as_mut()?.next().await }, if turns.watch.is_some() => {
                turns.watched(&mut follower, seen).await?;
            }
            item = async { turns.follow.as_mut()?.next().await }, if turns.follow.is_some() => {
                match turns.item(&mut follower, item) {
                    Ok(Some(exit)) => return Ok(exit),
                    Ok(None) => {}
                    // Holding a conversation, a daemon gone is waited for at the prompt.
                    Err(e) if e.exit == Exit::Unreachable && follower.holds_keys() => {
                        turns.lost(&mut follower, e);
                    }
                    // Otherwise it is waited for, and following goes on where it was.
                    Err(e) if e.exit == Exit::Unreachable => {
                        let resumed = turns.resume(&mut follower, &mut sigint, e, options.on_ctrl_c);
                        if let Some(exit) = resumed.await? {
                            return Ok(exit);
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            keys = async { follower.prompter.as_mut()?.keys().await }, if reading => {
                let Some(keys) = keys else {
                    // Stdin ended: nothing more can be typed.
                    match turns.told {
                        Some(exit) if turns.follow.is_none() => return Ok(exit),
                        _ => continue,
                    }
                };
                if asking {
                    let answer = follower.prompter.as_mut().and_then(|p| p.typed(keys));
                    if let Some(answer) = answer {
                        follower.answer(answer).await?;
                    }
                } else if let Some(exit) = turns.typed(&mut follower, keys).await? {
                    return Ok(exit);
                }
                follower.flush()?;
            }
            _ = sigint.recv() => {
                if let (None, Some(exit)) = (&turns.follow, turns.told) {
                    // At the prompt between turns, as in Claude Code: a line typed is cleared;
                    // with none, the conversation ends.
                    if !turns.composer.is_empty() {
                        turns.composer.clear();
                        turns.prompt(false, follower.mode);
                        continue;
                    }
                    anstream::eprintln!();
                    return Ok(exit);
                }
                // While the agent works, as in Claude Code too: a line typed beside the
                // spinner is cleared; with none, the session is stopped.
                if follower.holds_keys() && !turns.composer.is_empty() {
                    turns.composer.clear();
                    continue;
                }
                if let Some(exit) = follower.ctrl_c(options.on_ctrl_c).await {
                    return Ok(exit);
                }
                follower.flush()?;
            }
        }
    }
}

/// Where a conversation is, turn after turn.
pub(super) struct Turns {
    /// The follow of the current turn; `None` at the prompt between turns.
    pub(super) follow: Option<Follow>,
    /// The session's events, watched at the prompt for a turn started elsewhere.
    pub(super) watch: Option<Subscription>,
    /// The daemon's loss cut a turn short, whose end is to be told once it is back.
    pub(super) cut: bool,
    /// The end of the last turn was told: how it ended.
    pub(super) told: Option<Exit>,
    /// Where the last follow got to, for the next turn's.
    pub(super) last_sequence: Option<i64>,
    /// The next message, being typed.
    composer: Composer,
    /// The prompt's rows above the cursor: a line typed past the terminal's width wraps.
    prompt_row: usize,
}

impl Turns {
    /// Takes in the follow's next item; returns the exit code once following is over.
    fn item(
        &mut self,
        follower: &mut Follower<'_>,
        item: Option<Result<FollowItem, hld_client::Error>>,
    ) -> Result<Option<Exit>, CliError> {
        let converse = follower.converse && !follower.interrupting;
        match item {
            Some(Ok(FollowItem::TurnEnded { state, turn, .. })) => {
                let turn = match turn {
                    Some(turn) => *turn,
                    // A catch-up found the end: the turn is what the totals grew by.
                    None => grown(&follower.totals, &totals(&state)),
                };
                let goes_on = follower.goes_on(&state);
                let exit = follower.finish(*state, Some(turn))?;
                // Following without a conversation ends with the last turn: one a queued
                // message starts is followed too.
                if !converse && !goes_on {
                    return Ok(Some(exit));
                }
                self.told = Some(exit);
            }
            Some(Ok(FollowItem::Ended(state))) => {
                let exit = match self.told {
                    Some(exit) => exit,
                    None => follower.finish(*state, None)?,
                };
                if !converse {
                    return Ok(Some(exit));
                }
                self.told = Some(exit);
                self.last_sequence = self.follow.take().and_then(|f| f.last_sequence());
                self.prompt(true, follower.mode);
            }
            Some(Ok(item)) => {
                if matches!(&item, FollowItem::Status { new_status, .. } if new_status.is_active())
                {
                    self.told = None;
                }
                follower.item(item);
                follower.flush()?;
            }
            Some(Err(e)) => return Err(e.into()),
            // The stream ends only after `Ended` or an error.
            None => return Err(super::lost_daemon(follower.session_id)),
        }
        Ok(None)
    }

    /// Takes in keys typed for the next message (no question being on screen); returns the
    /// exit code when they end the conversation.
    async fn typed(
        &mut self,
        follower: &mut Follower<'_>,
        keys: Vec<Key>,
    ) -> Result<Option<Exit>, CliError> {
        let between_turns = self.follow.is_none();
        for key in keys {
            let (text, mode) = match self.composer.key(key, between_turns) {
                Typed::Nothing => continue,
                Typed::End => {
                    anstream::eprintln!();
                    return Ok(self.told);
                }
                Typed::Send(text) => (text, MessageMode::Queue),
                Typed::Steer(text) => (text, MessageMode::Steer),
                Typed::CycleMode => {
                    let told = follower.cycle_mode().await;
                    self.tell(follower, between_turns, told);
                    continue;
                }
                Typed::Model(model) => {
                    let told = follower.switch_model(&model).await;
                    self.tell(follower, between_turns, told);
                    continue;
                }
                Typed::Interrupt => {
                    let told = follower.interrupt_turn().await.map(|(line, back)| {
                        // Each goes before the line: the newest first keeps them in order.
                        back.iter()
                            .rev()
                            .for_each(|text| self.composer.restore(text));
                        line
                    });
                    self.tell(follower, between_turns, told);
                    continue;
                }
                Typed::Complete(word) => {
                    match follower.candidates(&word).await {
                        Ok(found) if self.composer.complete(&found) => {
                            let columns = usize::from(console::Term::stderr().size().1);
                            let line = candidates_line(&found, columns);
                            self.tell(follower, between_turns, Ok(paint(DIM, line)));
                        }
                        Ok(_) => {}
                        Err(e) => self.tell(follower, between_turns, Err(e)),
                    }
                    continue;
                }
            };
            if between_turns && self.cut {
                let mut told = self.tell_lost_end(follower).await;
                if told.as_ref().is_err_and(|e| e.exit == Exit::Unreachable)
                    && follower.reconnect().await
                {
                    told = self.tell_lost_end(follower).await;
                }
                if let Err(e) = told {
                    follower.activity.suspend(|| e.print());
                    self.composer.restore(&text);
                    continue;
                }
            }
            if mode == MessageMode::Steer {
                follower
                    .activity
                    .suspend(|| note("steering: the turn is interrupted for your message"));
            }
            let mut sent = follower
                .client
                .send_message(follower.session_id, &text, mode.clone())
                .await;
            if sent.as_ref().is_err_and(hld_client::Error::is_lost) && follower.reconnect().await {
                sent = follower
                    .client
                    .send_message(follower.session_id, &text, mode)
                    .await;
            }
            let sent = match sent {
                Ok(sent) => sent,
                Err(e) => {
                    let error = CliError::from(e).about_session(follower.session_id);
                    follower.activity.suspend(|| error.print());
                    // Not sent: the line is typed still, to send again.
                    self.composer.restore(&text);
                    continue;
                }
            };
            if sent.queued {
                follower.queued.push((sent.message_id, text));
            }
            if between_turns {
                // The conversation shows the message as the next turn starts with it.
                self.follow_next(follower).await?;
                return Ok(None);
            }
        }
        if between_turns {
            self.prompt(false, follower.mode);
        }
        Ok(None)
    }

    /// Draws the prompt line with the session's mode (unless `default`) and what was typed so
    /// far, the cursor where it is in the line; `fresh`, below a line saying which keys do what.
    pub(super) fn prompt(&mut self, fresh: bool, mode: Mode) {
        if fresh {
            anstream::eprintln!("\n{}", paint(DIM, PROMPT_HELP));
        }
        self.erase_prompt();
        let mode = match mode {
            Mode::Default => String::new(),
            mode => format!("{} ", paint(CYAN, mode.label())),
        };
        let (before, after) = self.composer.at_cursor();
        let prompt = format!("{mode}{} ", paint(BOLD, "›"));
        anstream::eprint!("{prompt}{before}{after}");
        // Where the end and the cursor are, in rows and columns of the terminal's width.
        let columns = usize::from(console::Term::stderr().size().1).max(1);
        let at = console::measure_text_width(&prompt) + UnicodeWidthStr::width(before);
        let end = at + UnicodeWidthStr::width(after);
        self.prompt_row = end.saturating_sub(1) / columns;
        if !after.is_empty() {
            // Back to the cursor. (Written past anstream, as in `erase_prompt`.)
            let up = self.prompt_row - at / columns;
            let back = format!("{}\r{}", moved(up, 'A'), moved(at % columns, 'C'));
            let _ = std::io::stderr().write_all(back.as_bytes());
            self.prompt_row = at / columns;
        }
        let _ = std::io::stderr().flush();
    }

    /// Clears the prompt, all of its rows, for it to be drawn again or to give way. (Written
    /// past anstream, which would strip the sequences under NO_COLOR.)
    pub(super) fn erase_prompt(&mut self) {
        let up = std::mem::take(&mut self.prompt_row);
        let erase = format!("{}\r\x1b[J", moved(up, 'A'));
        let _ = std::io::stderr().write_all(erase.as_bytes());
    }

    /// Tells the outcome of a change of course on its own line: above the spinner while the
    /// agent works, else in place of the prompt (drawn again after it).
    fn tell(
        &mut self,
        follower: &Follower<'_>,
        between_turns: bool,
        told: Result<String, CliError>,
    ) {
        let say = || match told {
            Ok(line) => anstream::eprintln!("{line}"),
            Err(e) => e.print(),
        };
        if between_turns {
            self.erase_prompt();
            say();
        } else {
            follower.activity.suspend(say);
        }
    }
}

/// A session's totals, as the figures of all its turns.
pub(super) fn totals(state: &SessionState) -> TurnResult {
    TurnResult {
        cost_usd: state.cost_usd,
        duration_ms: state.duration_ms,
        num_turns: state.num_turns,
        input_tokens: state.input_tokens,
        output_tokens: state.output_tokens,
    }
}

/// What the totals grew by from `before` to `now`: the figures of the turns between.
fn grown(before: &TurnResult, now: &TurnResult) -> TurnResult {
    fn less<T: std::ops::Sub<Output = T> + Default>(
        now: Option<T>,
        before: Option<T>,
    ) -> Option<T> {
        Some(now? - before.unwrap_or_default())
    }
    TurnResult {
        cost_usd: less(now.cost_usd, before.cost_usd),
        duration_ms: less(now.duration_ms, before.duration_ms),
        num_turns: less(now.num_turns, before.num_turns),
        input_tokens: less(now.input_tokens, before.input_tokens),
        output_tokens: less(now.output_tokens, before.output_tokens),
    }
}

/// Rings for the approvals waiting once a follow has subscribed: one asked before, its
/// notification gone before too, is not missed (see [`Notify::waiting`]).
pub(super) async fn ring_waiting(follower: &mut Follower<'_>) -> Result<(), CliError> {
    if follower.notify.rings_waiting() {
        let waiting = follower.client.fetch_approvals(Some(follower.session_id));
        for approval in waiting.await? {
            follower.notify.waiting(&follower.title, &approval);
        }
    }
    Ok(())
}

/// The completions Tab found, as many as fit one line of `columns` (at most
/// [`MAX_CANDIDATES`]), then how many more there are.
fn candidates_line(found: &[String], columns: usize) -> String {
    let more = |n: usize| match found.len() - n {
        0 => String::new(),
        left => format!("  … {left} more"),
    };
    let mut shown = 0;
    let mut width = 0;
    for candidate in found.iter().take(MAX_CANDIDATES) {
        let next = width + usize::from(shown > 0) * 2 + candidate.width();
        if next + more(shown + 1).width() > columns && shown > 0 {
            break;
        }
        width = next;
        shown += 1;
    }
    found[..shown].join("  ") + &more(shown)
}

/// The sequence that moves the cursor `n` cells in direction `way` (`A` up, `C` right);
/// nothing for none, which a terminal would read as one.
fn moved(n: usize, way: char) -> String {
    match n {
        0 => String::new(),
        n => format!("\x1b[{n}{way}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_found_by_a_catch_up_is_what_the_totals_grew_by() {
        let before = TurnResult {
            cost_usd: Some(0.25),
            num_turns: Some(2),
            ..TurnResult::default()
        };
        let now = TurnResult {
            cost_usd: Some(0.75),
            num_turns: Some(3),
            duration_ms: Some(1500),
            ..TurnResult::default()
        };
        let turn = grown(&before, &now);
        assert_eq!(turn.cost_usd, Some(0.5));
        assert_eq!(
            (turn.num_turns, turn.duration_ms, turn.input_tokens),
            (Some(1), Some(1500), None)
        );
    }

    #[test]
    fn the_candidates_fit_one_line_and_say_how_many_more() {
        let found: Vec<String> = (1..=20).map(|i| format!("/command{i:02}")).collect();
        // Each is 10 columns, 2 between: four and "  … 16 more" fit 60.
        assert_eq!(
            candidates_line(&found, 60),
            "/command01  /command02  /command03  /command04  … 16 more"
        );
        let wide = candidates_line(&found, 400);
        assert!(wide.starts_with("/command01") && wide.ends_with("/command12  … 8 more"));
        assert_eq!(candidates_line(&found[..2], 400), "/command01  /command02");
        // Not even one fits: one is shown all the same.
        assert_eq!(candidates_line(&found[..2], 5), "/command01  … 1 more");
    }
}
