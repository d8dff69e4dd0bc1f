//! Group 9, the `hld-tui` dashboard: an approval's way from the agent's request to the screen,
//! the cost of a frame over a thousand sessions and a long conversation, and the CPU an idle
//! dashboard takes.

use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, ensure, Context};
use crossterm::event::{KeyCode, KeyEvent};
use hld_client::protocol::LaunchSessionParams;
use hld_client::Client;
use hld_tui::app::{Msg, Screen};

use crate::groups::{subscription, Group};
use crate::headless::{shows, Headless};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{monotonic_ns, us, Latency, Spread};

/// The terminal every row draws on, headless or in the pty.
pub(crate) const WIDTH: u16 = 120;
pub(crate) const HEIGHT: u16 = 40;
/// How long one step of an approval (drawn, then the session ended) may take.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(30);
/// Completed sessions the idle dashboard lists.
pub(crate) const IDLE_SESSIONS: usize = 3;

/// The counts of a run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    /// Approvals timed per round, after one untimed.
    pub(crate) approvals: usize,
    /// Sessions in the list, and events in the open conversation, for the frame cost.
    pub(crate) sessions: usize,
    pub(crate) events: usize,
    /// Timed frames of each kind per round.
    pub(crate) frames: usize,
    /// How long the idle dashboard is watched.
    pub(crate) idle: Duration,
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
    let mut delivered = Vec::new();
    let mut frames = Vec::new();
    let mut idle = Vec::new();
    for _ in 0..rounds {
        let (mut on_screen, mut on_subscriber) = approvals_round(bins, counts.approvals)?;
        approvals.push(Latency::of_nanos(&mut on_screen));
        delivered.push(Latency::of_nanos(&mut on_subscriber));
        frames.push(crate::tui_frames::frame_round(&counts)?);
        idle.push(crate::tui_idle::idle_cpu(bins, counts.idle)?);
    }
    let p99 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p99_us).collect::<Vec<_>>());
    let p50 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p50_us).collect::<Vec<_>>());
    let show = |ls: &[Latency]| format!("p99 {}; p50 {}", p99(ls).show(us), us(p50(ls).median));
    let approval_p99 = p99(&approvals);
    let delivered_p99 = p99(&delivered);

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
             is not included. *On a subscriber*: the same approvals, to the moment a plain \
             `Subscribe` connection for `new_approval` (a thread of the benchmark process, \
             blocking reads) has read the event's line. The approval is then approved with `a` and the session must \
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
                    "approval on a subscriber: agent's request → MCP server → hld → a \
                     `Subscribe` connection, {} approvals",
                    counts.approvals
                ),
                figure: show(&delivered),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "p99 ≤ 10 ms".into(),
                verdict: Verdict::of(delivered_p99.median <= 10_000.0),
            },
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
pub(crate) fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::from(code))
}

/// One round of approvals against a fresh daemon, with a plain subscriber beside hld-tui;
/// returns the timed ones' latencies in ns, to the screen and to the subscriber.
fn approvals_round(bins: &Bins, count: usize) -> anyhow::Result<(Vec<u64>, Vec<u64>)> {
    let dir = tempfile::tempdir()?;
    let asks = dir.path().join("asks.log");
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            env: vec![("FAKE_CLAUDE_ASK_LOG".into(), asks.display().to_string())],
            ..Default::default()
        },
    )?;
    let subscriber = subscriber(&server.sock)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let approvals = runtime.block_on(approve_in_turn(&server.sock, dir.path(), count))?;
    drop(runtime);
    server.stop()?;
    // The daemon gone, the subscriber has read all there was.
    let received = subscriber
        .join()
        .map_err(|_| anyhow!("the subscriber panicked"))??;
    let mut on_screen = Vec::new();
    let mut on_subscriber = Vec::new();
    for (tool_use_id, asked, drawn) in approvals {
        let (_, read) = received
            .iter()
            .find(|(id, _)| *id == tool_use_id)
            .with_context(|| format!("the subscriber never read {tool_use_id}'s approval"))?;
        ensure!(*read > asked, "read before it was asked");
        on_screen.push(drawn - asked);
        on_subscriber.push(read - asked);
    }
    Ok((on_screen, on_subscriber))
}

/// A thread subscribed to `new_approval` on its own connection: when (CLOCK_MONOTONIC, ns)
/// it read each approval's event, by its tool call's id, until the daemon closes the
/// connection.
type Received = std::thread::JoinHandle<anyhow::Result<Vec<(String, u64)>>>;

fn subscriber(sock: &Path) -> anyhow::Result<Received> {
    let mut conn = subscription(sock, &["new_approval"])?;
    Ok(std::thread::spawn(move || {
        let mut received = Vec::new();
        let mut line = String::new();
        loop {
            line.clear();
            if conn.read_line(&mut line)? == 0 {
                return Ok(received);
            }
            let read = monotonic_ns()?;
            let event: serde_json::Value = serde_json::from_str(&line)?;
            let approval = &event["result"]["event"]["data"]["approval"];
            if let Some(id) = approval["tool_use_id"].as_str() {
                received.push((id.to_owned(), read));
            }
        }
    }))
}

/// Launches `count` + 1 `tool` sessions one after the other; returns, for each approval but
/// the first, its tool call's id, when the agent asked and when the draw that shows it ended.
async fn approve_in_turn(
    sock: &Path,
    dir: &Path,
    count: usize,
) -> anyhow::Result<Vec<(String, u64, u64)>> {
    let client = Client::connect(sock).await?;
    let mut ui = Headless::connect(vec![("local".into(), client)]).await?;
    ui.apply(key(KeyCode::Char('2')))?;
    ensure!(
        ui.state.screen == Screen::Approvals,
        "`2` did not show the approvals"
    );
    let mut latencies = Vec::new();
    let asks = dir.join("asks.log");
    for i in 0..=count {
        let timed = approve_one(&mut ui, 0, &dir.join(format!("w{i}")), &asks)
            .await
            .with_context(|| format!("approval {i}"))?;
        if i > 0 {
            latencies.push(timed);
        }
    }
    Ok(latencies)
}

/// One approval timed, then approved: launches a `tool` session on `daemon` in its own new
/// directory `working_dir` (so that its approval's row, the file's path, is told apart),
/// waits for the draw that shows its approval, approves it as a reviewer does (`a` on the
/// approvals screen) and waits for its end. Returns its tool call's id, when the agent asked
/// (from `asks`, its ask log) and when the draw that shows it ended.
pub(crate) async fn approve_one(
    ui: &mut Headless,
    daemon: usize,
    working_dir: &Path,
    asks: &Path,
) -> anyhow::Result<(String, u64, u64)> {
    std::fs::create_dir(working_dir)?;
    let name = working_dir.file_name().context("a directory name")?;
    let row = format!("/{}/hello.txt", name.to_string_lossy());
    let params = LaunchSessionParams {
        query: "scenario:tool make a file".into(),
        working_dir: Some(working_dir.display().to_string()),
        ..Default::default()
    };
    ui.settle().await?;
    let session = ui.clients[daemon].launch_session(params).await?.session_id;
    let drawn = ui
        .until(|ui| {
            ensure!(!ui.ended(&session)?, "the session ended without asking");
            Ok(shows(&ui.terminal, &row))
        })
        .await
        .context("its approval was not drawn")?;
    let pending: Vec<_> = ui.state.approvals.iter().collect();
    ensure!(
        pending.len() == 1 && pending[0].session_id == session,
        "expected this session's approval alone: {pending:?}"
    );
    let tool_use_id = pending[0]
        .tool_use_id
        .clone()
        .context("the approval names no tool call")?;
    let asked = asked_at(asks, &tool_use_id)?;
    ensure!(drawn > asked, "drawn before it was asked");
    ui.apply(key(KeyCode::Char('a')))?;
    ui.until(|ui| ui.ended(&session))
        .await
        .context("the session did not complete after its approval")?;
    ensure!(
        working_dir.join("hello.txt").exists(),
        "the session was approved but wrote no file"
    );
    Ok((tool_use_id, asked, drawn))
}

/// When the fake agent asked permission for `tool_use_id` (its `FAKE_CLAUDE_ASK_LOG` line).
pub(crate) fn asked_at(log: &Path, tool_use_id: &str) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(log).context("read the ask log")?;
    let stamp = text
        .lines()
        .find_map(|line| line.strip_prefix(tool_use_id)?.strip_prefix(' '))
        .with_context(|| format!("{tool_use_id} is not in the ask log"))?;
    Ok(stamp.parse()?)
}
