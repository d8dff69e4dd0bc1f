//! Group 9, the `hld-tui` dashboard: an approval's way from the agent's request to the screen,
//! the cost of a frame over a thousand sessions and a long conversation, and the CPU an idle
//! dashboard takes.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use chrono::{DateTime, Utc};
use crossterm::event::{KeyCode, KeyEvent};
use futures::StreamExt;
use hld_client::protocol::{
    ConversationEvent, ConversationEventType, Event, LaunchSessionParams, SessionControl,
    SessionInfo, SessionResult, SessionStatus, SubscribeParams, TimedEvent,
};
use hld_client::{Client, SubscribeOptions, SubscriptionItem};
use hld_tui::app::{update, Command, Msg, Screen, State};
use hld_tui::view::draw;
use portable_pty::{CommandBuilder, PtySize};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use tokio::sync::mpsc;

use crate::groups::{finished_session, Group};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{monotonic_ns, us, Latency, Spread};

/// The terminal every row draws on, headless or in the pty.
const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
/// How long one step of an approval (drawn, then the session ended) may take.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);
/// Completed sessions the idle dashboard lists.
const IDLE_SESSIONS: usize = 3;

/// The counts of a run.
#[derive(Debug, Clone, Copy)]
struct Counts {
    /// Approvals timed per round, after one untimed.
    approvals: usize,
    /// Sessions in the list, and events in the open conversation, for the frame cost.
    sessions: usize,
    events: usize,
    /// Timed frames of each kind per round.
    frames: usize,
    /// How long the idle dashboard is watched.
    idle: Duration,
}

impl Counts {
    fn new(smoke: bool) -> Counts {
        if smoke {
            Counts {
                approvals: 3,
                sessions: 50,
                events: 300,
                frames: 6,
                idle: Duration::from_secs(2),
            }
        } else {
            Counts {
                approvals: 20,
                sessions: 1000,
                events: 10_000,
                frames: 300,
                idle: Duration::from_secs(10),
            }
        }
    }
}

/// Runs the group: `rounds` rounds of each row, each with fresh processes and state.
pub fn run(bins: &Bins, smoke: bool, rounds: usize) -> anyhow::Result<Section> {
    let counts = Counts::new(smoke);
    let mut approvals = Vec::new();
    let mut frames = Vec::new();
    let mut idle = Vec::new();
    for _ in 0..rounds {
        approvals.push(Latency::of_nanos(&mut approvals_round(
            bins,
            counts.approvals,
        )?));
        frames.push(frame_round(&counts)?);
        idle.push(idle_cpu(bins, counts.idle)?);
    }
    let p99 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p99_us).collect::<Vec<_>>());
    let p50 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p50_us).collect::<Vec<_>>());
    let show = |ls: &[Latency]| format!("p99 {}; p50 {}", p99(ls).show(us), us(p50(ls).median));
    let approval_p99 = p99(&approvals);

    let cases: [(&str, Vec<Latency>); 3] = [
        (
            "`j`/`k` in the conversation",
            frames.iter().map(|f| f.scroll).collect(),
        ),
        (
            "`j` in the session list",
            frames.iter().map(|f| f.list).collect(),
        ),
        (
            "an event appended, following",
            frames.iter().map(|f| f.appended).collect(),
        ),
    ];
    let worst_frame = cases
        .iter()
        .map(|(_, ls)| p99(ls).median)
        .fold(0.0, f64::max);
    let mut frame_figure: Vec<String> = cases
        .iter()
        .map(|(name, ls)| format!("{name}: {}", show(ls)))
        .collect();
    let open = Spread::of(&frames.iter().map(|f| f.open_us).collect::<Vec<_>>());
    frame_figure.push(format!(
        "opening the conversation: {} (reported)",
        open.show(us)
    ));

    let idle_share = Spread::of(&idle.iter().map(|i| i.share).collect::<Vec<_>>());
    let idle_ran = Spread::of(&idle.iter().map(|i| i.ran_share).collect::<Vec<_>>());
    let idle_ms = Spread::of(&idle.iter().map(|i| i.ran_ms).collect::<Vec<_>>());
    Ok(Section {
        title: Group::Tui.title().into(),
        method: format!(
            "*Approval on screen*: a fresh daemon per round runs `fake-claude` in its `tool` \
             scenario, one session at a time (one untimed, then {approvals}), each asking \
             permission for a `Write` through the approvals MCP server (`hld mcp \
             claude_approvals`, a process of its own) as claude does. The figure runs from the \
             fake agent's stamp on CLOCK_MONOTONIC just before it writes the `tools/call` \
             request (`FAKE_CLAUDE_ASK_LOG`) to the end of the first draw whose buffer shows \
             the approval's row: through the MCP server, hld's `createApproval` (stored, \
             committed) and its `new_approval` event, to a subscription opened with \
             `hld-client` as hld-tui opens it, then hld-tui's `update` and `draw` on a \
             {WIDTH}×{HEIGHT} ratatui `TestBackend` showing the approvals screen. The loop is \
             hld-tui's own, headless: every event and command result that has arrived is \
             applied, the commands `update` returns run against the daemon in tasks of the \
             same current_thread runtime, then one draw. Writing the frame to a real terminal \
             is not included. The approval is then approved with `a` and the session must \
             complete with the file written.\n\n\
             *Frame cost*: in the benchmark process, no daemon: `update` and `draw` on the same \
             `TestBackend` over a state built through `update` ({sessions} sessions from \
             `listSessions`, the first opened with Enter, then a conversation of {events} \
             events: markdown messages, thinking, `Edit` calls with their diffs, `Bash` calls, \
             short results and 200-line results, in turn). The figure is the time of one \
             `update` plus one `draw`: {frames} `conversation_updated` events appended while \
             following, then {frames} `k`,`j` presses alternating from the bottom of the \
             conversation, then {frames} `j` presses on the session list (after Esc). Opening is \
             the `update` of the {events} events plus the first draw (`getConversation` itself \
             is section 6).\n\n\
             *Idle CPU*: the `hld-tui` binary in a {WIDTH}×{HEIGHT} pseudo-terminal \
             (`TERM=xterm-256color`, its output read all the time) against a daemon holding \
             {IDLE_SESSIONS} completed sessions; once it shows them, its utime + stime from \
             `/proc/<pid>/stat` (whole clock ticks, 10 ms at 100 Hz; the target is judged on \
             these) over {:.0} s of wall time, and, finer, the run time of its threads from \
             `/proc/<pid>/task/*/schedstat` (ns) over the same span; then `q` must end it with \
             status 0.\n\n\
             Each round runs each row once, with fresh processes and state; p99 and p50 are of \
             one round, and the table shows their median [min–max] over the rounds.",
            counts.idle.as_secs_f64(),
            approvals = counts.approvals,
            sessions = counts.sessions,
            events = counts.events,
            frames = counts.frames,
        ),
        commands: vec![
            "FAKE_CLAUDE_ASK_LOG=$DIR/asks.log hld --socket $DIR/hld.sock --database \
             $DIR/hld.db --log-file $DIR/hld.log --claude-path fake-claude &"
                .into(),
            "# Subscribe, launchSession {\"query\": \"scenario:tool make a file\", \
             \"working_dir\": \"$DIR/w1\"}, hld-tui's update + draw until the approval shows, \
             `a`, wait for completed; the next session"
                .into(),
            format!("hld-tui --no-bell --daemon-socket $DIR/hld.sock  # in a {WIDTH}×{HEIGHT} pty"),
            "awk '{print $14 + $15}' /proc/$PID/stat; cat /proc/$PID/task/*/schedstat  # once \
             it shows the sessions, and again after the span"
                .into(),
        ],
        rows: vec![
            Row {
                name: format!(
                    "approval on screen: agent's request → MCP server → hld → hld-tui, {} \
                     approvals",
                    counts.approvals
                ),
                figure: show(&approvals),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "p99 ≤ 50 ms".into(),
                verdict: Verdict::of(approval_p99.median <= 50_000.0),
            },
            Row {
                name: format!(
                    "frame cost (update + draw), {} sessions, {} events open",
                    counts.sessions, counts.events
                ),
                figure: frame_figure.join("; "),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "p99 ≤ 16 ms in each case".into(),
                verdict: Verdict::of(worst_frame <= 16_000.0),
            },
            Row {
                name: format!(
                    "idle hld-tui CPU over {:.0} s, {IDLE_SESSIONS} completed sessions",
                    counts.idle.as_secs_f64()
                ),
                figure: format!(
                    "{} by utime + stime; {} by schedstat ({:.1} ms)",
                    idle_share.show(|p| format!("{p:.2}%")),
                    idle_ran.show(|p| format!("{p:.3}%")),
                    idle_ms.median
                ),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "≤ 1%".into(),
                verdict: Verdict::of(idle_share.median <= 1.0),
            },
        ],
        notes: vec![format!(
            "Checked: every approval drawn, approved and its session completed with \
             `hello.txt` written; the conversation held {} events after the appends and \
             followed them; `j` moved the list's selection by {}.",
            counts.events + counts.frames,
            counts.frames
        )],
    })
}

/// A key press without modifiers.
fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::from(code))
}

/// The drawn screen's lines.
fn screen_lines(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buffer = terminal.backend().buffer();
    buffer
        .content
        .chunks(usize::from(buffer.area.width))
        .map(|row| row.iter().map(|c| c.symbol()).collect())
        .collect()
}

/// Whether one line of the drawn screen holds `text`.
fn shows(terminal: &Terminal<TestBackend>, text: &str) -> bool {
    screen_lines(terminal)
        .iter()
        .any(|line| line.contains(text))
}

/// One round of approvals against a fresh daemon; returns the timed ones' latencies in ns.
fn approvals_round(bins: &Bins, count: usize) -> anyhow::Result<Vec<u64>> {
    let dir = tempfile::tempdir()?;
    let asks = dir.path().join("asks.log");
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            env: vec![("FAKE_CLAUDE_ASK_LOG".into(), asks.display().to_string())],
            ..Default::default()
        },
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let latencies = runtime.block_on(approve_in_turn(&server.sock, dir.path(), count))?;
    drop(runtime);
    server.stop()?;
    Ok(latencies)
}

/// Launches `count` + 1 `tool` sessions one after the other and times each approval from the
/// agent's request to the draw that shows it, except the first.
async fn approve_in_turn(sock: &Path, dir: &Path, count: usize) -> anyhow::Result<Vec<u64>> {
    let client = Client::connect(sock).await?;
    let mut subscription = client
        .subscribe(SubscribeParams::default(), SubscribeOptions::default())
        .await?;
    let (tx, rx) = mpsc::unbounded_channel();
    // As in hld-tui's runtime, a task forwards the events into the channel that also carries
    // the commands' results.
    let events = tx.clone();
    tokio::spawn(async move {
        while let Some(Ok(item)) = subscription.next().await {
            if let SubscriptionItem::Event(event) = item {
                if events.send(Msg::Event(event)).is_err() {
                    return;
                }
            }
        }
    });
    let mut ui = Headless {
        state: State::new(Utc::now(), WIDTH, HEIGHT, false),
        terminal: Terminal::new(TestBackend::new(WIDTH, HEIGHT))?,
        client,
        tx,
        rx,
        in_flight: 0,
    };
    ui.apply(Msg::Connected)?;
    ui.apply(key(KeyCode::Char('2')))?;
    ensure!(
        ui.state.screen == Screen::Approvals,
        "`2` did not show the approvals"
    );
    let mut latencies = Vec::new();
    for i in 0..=count {
        // Its own directory, so that its approval's row (the file's path) is told apart.
        let working_dir = dir.join(format!("w{i}"));
        std::fs::create_dir(&working_dir)?;
        let row = format!("/w{i}/hello.txt");
        let params = LaunchSessionParams {
            query: "scenario:tool make a file".into(),
            working_dir: Some(working_dir.display().to_string()),
            ..Default::default()
        };
        ui.settle().await?;
        let session = ui.client.launch_session(params).await?.session_id;
        let drawn = ui
            .until(|ui| {
                ensure!(!ui.ended(&session)?, "the session ended without asking");
                Ok(shows(&ui.terminal, &row))
            })
            .await
            .with_context(|| format!("approval {i} was not drawn"))?;
        let pending: Vec<_> = ui.state.approvals.iter().collect();
        ensure!(
            pending.len() == 1 && pending[0].session_id == session,
            "expected this session's approval alone: {pending:?}"
        );
        let tool_use_id = pending[0]
            .tool_use_id
            .clone()
            .context("the approval names no tool call")?;
        let asked = asked_at(&dir.join("asks.log"), &tool_use_id)?;
        ensure!(drawn > asked, "drawn before it was asked");
        if i > 0 {
            latencies.push(drawn - asked);
        }
        // Approved as a reviewer approves: `a` on the approvals screen.
        ui.apply(key(KeyCode::Char('a')))?;
        ui.until(|ui| ui.ended(&session))
            .await
            .with_context(|| format!("session {i} did not complete after its approval"))?;
        ensure!(
            working_dir.join("hello.txt").exists(),
            "session {i} was approved but wrote no file"
        );
    }
    Ok(latencies)
}

/// When the fake agent asked permission for `tool_use_id` (its `FAKE_CLAUDE_ASK_LOG` line).
fn asked_at(log: &Path, tool_use_id: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(log).context("read the ask log")?;
    let stamp = text
        .lines()
        .find_map(|line| line.strip_prefix(tool_use_id)?.strip_prefix(' '))
        .with_context(|| format!("{tool_use_id} is not in the ask log"))?;
    Ok(stamp.parse()?)
}

/// hld-tui's loop without a terminal: each batch of messages through `update`, the commands it
/// returns run against the daemon in tasks that send their results back, then one draw.
struct Headless {
    state: State,
    terminal: Terminal<TestBackend>,
    client: Client,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    /// Commands started whose result has not been applied yet.
    in_flight: usize,
}

impl Headless {
    /// Applies one message and starts the commands it yields; a failed call fails the run.
    fn apply(&mut self, msg: Msg) -> anyhow::Result<()> {
        match &msg {
            Msg::Failed(text) => bail!("a call to the daemon failed: {text}"),
            Msg::Sessions(_) | Msg::Approvals(_) | Msg::Done(_) => self.in_flight -= 1,
            _ => {}
        }
        for command in update(&mut self.state, msg) {
            self.execute(command)?;
        }
        Ok(())
    }

    /// Runs a command with hld-tui's runtime, for the commands these sessions lead to.
    fn execute(&mut self, command: Command) -> anyhow::Result<()> {
        if matches!(command, Command::Copy(_) | Command::Bell | Command::Quit) {
            bail!("update asked for {command:?}, which no step here leads to");
        }
        let client = self.client.clone();
        let call = async move { hld_tui::runtime::run_command(&client, command).await };
        let tx = self.tx.clone();
        self.in_flight += 1;
        tokio::spawn(async move {
            let _ = tx.send(call.await.unwrap_or_else(|e| Msg::Failed(e.to_string())));
        });
        Ok(())
    }

    /// Applies batches and draws until `done` holds after a draw; returns that draw's end on
    /// CLOCK_MONOTONIC.
    async fn until(
        &mut self,
        done: impl Fn(&Headless) -> anyhow::Result<bool>,
    ) -> anyhow::Result<u64> {
        let deadline = tokio::time::Instant::now() + STEP_TIMEOUT;
        loop {
            let first = tokio::time::timeout_at(deadline, self.rx.recv())
                .await
                .map_err(|_| {
                    let statuses: Vec<_> = self
                        .state
                        .sessions
                        .iter()
                        .map(|s| s.status.clone())
                        .collect();
                    anyhow!(
                        "timed out after {STEP_TIMEOUT:?}; sessions {statuses:?}, {} pending; \
                         the screen:\n{}",
                        self.state.approvals.len(),
                        screen_lines(&self.terminal).join("\n")
                    )
                })?
                .context("the channel closed")?;
            self.apply(first)?;
            while let Ok(msg) = self.rx.try_recv() {
                self.apply(msg)?;
            }
            self.terminal.draw(|frame| draw(&self.state, frame, true))?;
            let drawn = monotonic_ns()?;
            if done(self)? {
                return Ok(drawn);
            }
        }
    }

    /// Applies messages until every command started has answered. A session is launched only
    /// then: `update` replaces the pending approvals with a `fetchApprovals` reply, so a reply
    /// still on its way would hide an approval that arrived by event after it was taken.
    async fn settle(&mut self) -> anyhow::Result<()> {
        if self.in_flight > 0 {
            self.until(|ui| Ok(ui.in_flight == 0)).await?;
        }
        Ok(())
    }

    /// Whether `session` has completed, as the dashboard knows it; an error if it failed.
    fn ended(&self, session: &str) -> anyhow::Result<bool> {
        let status = self
            .state
            .sessions
            .iter()
            .find(|s| s.id == session)
            .map(|s| &s.status);
        match status {
            Some(SessionStatus::Completed) => Ok(true),
            Some(SessionStatus::Failed) => bail!("session {session} failed"),
            _ => Ok(false),
        }
    }
}

/// One round's frame times and the time to open the conversation.
#[derive(Debug, Clone, Copy)]
struct Frames {
    scroll: Latency,
    list: Latency,
    appended: Latency,
    open_us: f64,
}

/// Builds the large state through `update` and times `update` + `draw` for each case.
fn frame_round(counts: &Counts) -> anyhow::Result<Frames> {
    let now = Utc::now();
    let mut state = State::new(now, WIDTH, HEIGHT, false);
    let mut terminal = Terminal::new(TestBackend::new(WIDTH, HEIGHT))?;
    // One frame as the runtime makes it: the message applied, then the screen drawn.
    let mut frame = |state: &mut State, msg: Msg| -> anyhow::Result<(Vec<Command>, u64)> {
        let started = Instant::now();
        let commands = update(state, msg);
        terminal.draw(|f| draw(state, f, true))?;
        Ok((commands, u64::try_from(started.elapsed().as_nanos())?))
    };
    frame(&mut state, Msg::Connected)?;
    frame(&mut state, Msg::Sessions(sessions(counts.sessions, now)))?;
    let (commands, _) = frame(&mut state, key(KeyCode::Enter))?;
    let id = session_id(0);
    ensure!(
        commands == [Command::LoadConversation(id.clone())],
        "Enter did not open the newest session: {commands:?}"
    );
    let events = (0..counts.events).map(|i| event(&id, i, now)).collect();
    let (_, open) = frame(
        &mut state,
        Msg::Conversation {
            session_id: id.clone(),
            events,
            approvals: Vec::new(),
        },
    )?;

    let mut appended = Vec::new();
    for i in counts.events..counts.events + counts.frames {
        let timed = TimedEvent {
            event: Event::ConversationUpdated {
                session_id: id.clone(),
                run_id: format!("run-{id}"),
                claude_session_id: format!("claude-{id}"),
                event: Box::new(event(&id, i, now)),
            },
            timestamp: now.to_rfc3339(),
        };
        appended.push(frame(&mut state, Msg::Event(Box::new(timed)))?.1);
    }
    let c = state
        .conversation
        .as_ref()
        .context("no open conversation")?;
    ensure!(
        c.events.len() == counts.events + counts.frames && c.follow,
        "{} events shown, following: {}",
        c.events.len(),
        c.follow
    );

    let mut scroll = Vec::new();
    for i in 0..counts.frames {
        let up = i % 2 == 0;
        let pressed = if up { 'k' } else { 'j' };
        scroll.push(frame(&mut state, key(KeyCode::Char(pressed)))?.1);
        let follows = state.conversation.as_ref().is_some_and(|c| c.follow);
        ensure!(follows != up, "`{pressed}` did not scroll the conversation");
    }

    frame(&mut state, key(KeyCode::Esc))?;
    ensure!(state.screen == Screen::Sessions, "Esc did not go back");
    let mut list = Vec::new();
    for _ in 0..counts.frames {
        list.push(frame(&mut state, key(KeyCode::Char('j')))?.1);
    }
    ensure!(
        state.list.selected == counts.frames,
        "`j` left the selection at {}",
        state.list.selected
    );
    Ok(Frames {
        scroll: Latency::of_nanos(&mut scroll),
        list: Latency::of_nanos(&mut list),
        appended: Latency::of_nanos(&mut appended),
        open_us: open as f64 / 1000.0,
    })
}

fn session_id(i: usize) -> String {
    format!("sess-{i:05}")
}

/// `n` sessions as `listSessions` returns them, newest first: mostly completed, some running,
/// waiting or failed.
fn sessions(n: usize, now: DateTime<Utc>) -> Vec<SessionInfo> {
    (0..n)
        .map(|i| {
            let at = (now - chrono::Duration::minutes(i as i64)).to_rfc3339();
            let status = match i % 20 {
                1 => SessionStatus::Running,
                2 => SessionStatus::WaitingInput,
                3 => SessionStatus::Failed,
                _ => SessionStatus::Completed,
            };
            let query = format!(
                "Refactor module {i} of the payments service so that its retries are bounded, \
                 then run the tests"
            );
            SessionInfo {
                id: session_id(i),
                run_id: format!("run-{i}"),
                claude_session_id: Some(format!("claude-{i}")),
                parent_session_id: None,
                status: status.clone(),
                interrupting: false,
                start_time: at.clone(),
                end_time: Some(at.clone()),
                last_activity_at: at,
                error: (status == SessionStatus::Failed).then(|| "exit status 1".into()),
                summary: query.chars().take(50).collect(),
                query,
                model: Some("claude-sonnet-4-5".into()),
                working_dir: Some(format!("/home/dev/projects/service-{}", i % 7)),
                result: Some(SessionResult {
                    kind: "result".into(),
                    subtype: "session_completed".into(),
                    total_cost_usd: 0.01 * i as f64,
                    num_turns: 3 + (i % 9) as i64,
                    ..Default::default()
                }),
                interrupted: false,
                cost_usd: Some(0.01 * i as f64),
                control: SessionControl {
                    title: format!("Payments module {i}"),
                    auto_accept_edits: i % 5 == 0,
                    ..Default::default()
                },
            }
        })
        .collect()
}

/// The `i`th event of a long conversation, by turns: an assistant message in markdown (every
/// tenth turn the user's), thinking, an `Edit` call, its result, a `Bash` call, and its
/// 200-line result.
fn event(session_id: &str, i: usize, now: DateTime<Utc>) -> ConversationEvent {
    let mut e = ConversationEvent {
        id: i as i64 + 1,
        session_id: session_id.into(),
        claude_session_id: format!("claude-{session_id}"),
        sequence: i as i64 + 1,
        event_type: ConversationEventType::Message,
        created_at: now.to_rfc3339(),
        role: Some("assistant".into()),
        content: None,
        tool_id: None,
        tool_name: None,
        tool_input_json: None,
        tool_result_for_id: None,
        tool_result_content: None,
        is_completed: false,
        is_error: false,
        approval_status: None,
        approval_id: None,
        parent_tool_use_id: None,
        subtype: None,
    };
    let call = |name: &str, input: serde_json::Value, e: &mut ConversationEvent| {
        e.event_type = ConversationEventType::ToolCall;
        e.tool_id = Some(format!("toolu_{i}"));
        e.tool_name = Some(name.into());
        e.tool_input_json = Some(input.to_string());
        e.is_completed = true;
        e.approval_status = Some("approved".into());
    };
    let result = |content: String, e: &mut ConversationEvent| {
        e.event_type = ConversationEventType::ToolResult;
        e.role = Some("user".into());
        e.tool_result_for_id = Some(format!("toolu_{}", i - 1));
        e.tool_result_content = Some(content);
    };
    match i % 6 {
        0 if i.is_multiple_of(60) => {
            e.role = Some("user".into());
            e.content = Some(format!("Now step {i}: keep the public API as it is."));
        }
        0 => {
            e.content = Some(format!(
                "## Step {i}\n\nThe retry loop in `client.rs` has **no bound**, so a failing \
                 upstream keeps a worker busy forever. I'll:\n\n1. cap it at `MAX_RETRIES`,\n\
                 2. back off exponentially, and\n3. surface the last error.\n\n```rust\nfor \
                 attempt in 0..MAX_RETRIES {{\n    match send(&request) {{\n        Ok(r) => \
                 return Ok(r),\n        Err(e) => sleep(backoff(attempt)),\n    }}\n}}\n```\n\n\
                 > Note: the tests in `tests/retry.rs` cover the old behaviour."
            ));
        }
        1 => {
            e.event_type = ConversationEventType::Thinking;
            e.content = Some(
                "The caller expects an error after the last attempt, so the loop must \
                 return it.\n"
                    .repeat(12),
            );
        }
        2 => call(
            "Edit",
            serde_json::json!({
                "file_path": format!("/home/dev/projects/service/src/client_{i}.rs"),
                "old_string": "loop {\n    match send(&request) {\n        Ok(r) => return Ok(r),\n        Err(_) => continue,\n    }\n}",
                "new_string": "for attempt in 0..MAX_RETRIES {\n    match send(&request) {\n        Ok(r) => return Ok(r),\n        Err(e) => {\n            last = Some(e);\n            sleep(backoff(attempt));\n        }\n    }\n}\nErr(last.unwrap())",
            }),
            &mut e,
        ),
        3 => result(
            format!("The file client_{}.rs has been updated.", i - 1),
            &mut e,
        ),
        4 => call(
            "Bash",
            serde_json::json!({
                "command": "cargo test --package payments --test retry -- --nocapture",
                "description": "Run the retry tests",
            }),
            &mut e,
        ),
        _ => result(
            (0..200)
                .map(|l| format!("test retry::case_{l:03} ... ok ({} ms)\n", l % 17))
                .collect(),
            &mut e,
        ),
    }
    e
}

/// The CPU time `pid` has used (utime + stime of `/proc/<pid>/stat`, all its threads), in
/// clock ticks.
fn cpu_ticks(pid: u32) -> anyhow::Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // After the command name (in parentheses): state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .context("no command name")?
        .split_whitespace()
        .collect();
    let utime: u64 = fields.get(11).context("no utime")?.parse()?;
    let stime: u64 = fields.get(12).context("no stime")?.parse()?;
    Ok(utime + stime)
}

/// The CPU an idle dashboard used.
#[derive(Debug, Clone, Copy)]
struct Idle {
    /// utime + stime over the wall time, in percent of one CPU.
    share: f64,
    /// The threads' run time over the wall time, in percent of one CPU, and in ms.
    ran_share: f64,
    ran_ms: f64,
}

/// The time `pid`'s threads have run, in ns (`/proc/<pid>/task/*/schedstat`, first field):
/// finer than the clock ticks of `/proc/<pid>/stat`, but blind to threads that have exited.
fn run_time_ns(pid: u32) -> anyhow::Result<u64> {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let text = std::fs::read_to_string(task?.path().join("schedstat"))?;
        let ran: u64 = text
            .split_whitespace()
            .next()
            .context("empty schedstat")?
            .parse()?;
        total += ran;
    }
    Ok(total)
}

/// Runs `hld-tui` in a pseudo-terminal against a daemon with a few completed sessions and
/// measures the CPU it uses over `span` once it shows them.
fn idle_cpu(bins: &Bins, span: Duration) -> anyhow::Result<Idle> {
    let server = Server::daemon(bins, &DaemonOptions::default())?;
    for _ in 0..IDLE_SESSIONS {
        finished_session(&server, "hello")?;
    }
    let pty = portable_pty::native_pty_system()
        .openpty(PtySize {
            rows: HEIGHT,
            cols: WIDTH,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| anyhow!("open a pty: {e}"))?;
    let mut cmd = CommandBuilder::new(&bins.tui);
    cmd.arg("--no-bell");
    cmd.arg("--daemon-socket");
    cmd.arg(&server.sock);
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(server.dir.path());
    let mut child = pty
        .slave
        .spawn_command(cmd)
        .map_err(|e| anyhow!("start hld-tui: {e}"))?;
    // Only the child holds the terminal's side now, so reads end when it exits.
    drop(pty.slave);
    let screen = Arc::new(Mutex::new(vt100::Parser::new(HEIGHT, WIDTH, 0)));
    let mut reader = pty
        .master
        .try_clone_reader()
        .map_err(|e| anyhow!("read the pty: {e}"))?;
    // Read all the time, so that hld-tui never waits on a full pty.
    let reading = {
        let screen = screen.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0; 1 << 16];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                screen.lock().unwrap().process(&buf[..n]);
            }
        })
    };
    let measured = (|| -> anyhow::Result<Idle> {
        let pid = child.process_id().context("hld-tui has no pid")?;
        let listed = format!("Sessions ({IDLE_SESSIONS})");
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            let text = screen.lock().unwrap().screen().contents();
            if text.contains(&listed) && text.contains("● connected") {
                break;
            }
            ensure!(
                Instant::now() < deadline,
                "hld-tui did not show the sessions:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let (started, ticks, ran) = (Instant::now(), cpu_ticks(pid)?, run_time_ns(pid)?);
        std::thread::sleep(span);
        let (ticks, ran) = (
            cpu_ticks(pid)? - ticks,
            run_time_ns(pid)?.saturating_sub(ran),
        );
        let wall = started.elapsed().as_secs_f64();
        let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)?
            .context("no clock tick rate")?;
        Ok(Idle {
            share: ticks as f64 / hz as f64 / wall * 100.0,
            ran_share: ran as f64 / 1e9 / wall * 100.0,
            ran_ms: ran as f64 / 1e6,
        })
    })();
    let quit = (|| -> anyhow::Result<()> {
        let mut writer = pty
            .master
            .take_writer()
            .map_err(|e| anyhow!("write to the pty: {e}"))?;
        writer.write_all(b"q")?;
        writer.flush()?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait()? {
                ensure!(status.success(), "hld-tui exited with {status:?}");
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        bail!("hld-tui did not quit on q")
    })();
    if quit.is_err() {
        let _ = child.kill();
        let _ = child.wait();
    }
    drop(pty.master);
    let _ = reading.join();
    server.stop()?;
    let measured = measured?;
    quit?;
    Ok(measured)
}
