//! Group 17, the hld-tui fleet view (issue 42): an approval's way from the agent's request to
//! the screen of a dashboard watching two daemons, one on this machine's socket and one over
//! `wss://` on loopback (a self-signed certificate, pinned, and the daemon's token); the
//! remote one's time against the local one's.

use std::path::Path;

use anyhow::{ensure, Context};
use crossterm::event::KeyCode;
use hld_client::address::{Fingerprint, Remote, Token, Trust};
use hld_client::{Address, Client};
use hld_tui::app::Screen;

use crate::headless::Headless;
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, us, Latency, Spread};
use crate::tui::{approve_one, key, HEIGHT, WIDTH};

/// The target: the `wss://` daemon's p99 at most this many times the socket's.
const MAX_RATIO: f64 = 2.0;

/// Runs the group: `rounds` rounds, each with fresh daemons and dashboard.
pub fn run(bins: &Bins, smoke: bool, rounds: usize) -> anyhow::Result<Section> {
    let count = if smoke { 3 } else { 50 };
    let mut local = Vec::new();
    let mut remote = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..rounds {
        let [mut near, mut far] = round(bins, count)?;
        let (near, far) = (Latency::of_nanos(&mut near), Latency::of_nanos(&mut far));
        ratios.push(far.p99_us / near.p99_us);
        local.push(near);
        remote.push(far);
    }
    let p99 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p99_us).collect::<Vec<_>>());
    let p50 = |ls: &[Latency]| Spread::of(&ls.iter().map(|l| l.p50_us).collect::<Vec<_>>());
    let show = |ls: &[Latency]| format!("p99 {}; p50 {}", p99(ls).show(us), us(p50(ls).median));
    let ratios = Spread::of(&ratios);
    Ok(Section {
        title: crate::groups::Group::Fleet.title().into(),
        method: format!(
            "Two fresh daemons per round, each running `fake-claude` in its `tool` scenario: \
             one on its Unix socket, one also serving `wss://127.0.0.1:0` with a new \
             self-signed certificate (rcgen). The dashboard is hld-tui's loop, headless, as in \
             section 9, over both daemons at once (the fleet view of `hld-tui --context local \
             --context box`): the socket daemon reached by its socket, the other by \
             `wss://localhost:PORT` with its token and the certificate's SHA-256 pinned, each \
             through its own subscription, every command sent to the daemon its row came from. \
             Sessions run one at a time, alternately on each daemon (one untimed pair, then \
             {count} on each), each asking permission for a `Write`; the figure runs from the \
             fake agent's stamp on CLOCK_MONOTONIC before it writes the `tools/call` request \
             to the end of the first draw ({WIDTH}×{HEIGHT} `TestBackend`) whose approvals \
             screen shows the approval's row; `a` then approves it and the session must \
             complete with the file written. The ratio is the `wss://` daemon's p99 over the \
             socket daemon's, round by round."
        ),
        commands: vec![
            "FAKE_CLAUDE_ASK_LOG=$DIR/asks.log hld --socket $DIR/hld.sock --database \
             $DIR/hld.db --log-file $DIR/hld.log --claude-path fake-claude &"
                .into(),
            "FAKE_CLAUDE_ASK_LOG=$DIR2/asks.log hld --socket $DIR2/hld.sock … --ws \
             127.0.0.1:0 --ws-tls-cert $DIR2/cert.pem --ws-tls-key $DIR2/key.pem &"
                .into(),
            "# hld-tui's update + draw over both (--context local --context box), `2`; \
             launchSession {\"query\": \"scenario:tool make a file\"} on each in turn, until \
             the approval shows, `a`, wait for completed"
                .into(),
        ],
        rows: vec![Row {
            name: format!(
                "approval on the fleet view: agent's request → MCP server → hld → `wss://` \
                 loopback → hld-tui, {count} approvals; baseline, the socket daemon's beside it"
            ),
            figure: show(&remote),
            baseline: show(&local),
            ratio: ratios.show(ratio),
            target: format!("p99 ≤ ×{MAX_RATIO:.0} the socket's"),
            verdict: Verdict::of(ratios.median <= MAX_RATIO),
        }],
        notes: vec![format!(
            "Checked: every approval drawn on the fleet view, approved with `a` on the daemon \
             it came from, and its session completed with `hello.txt` written ({count} on each \
             daemon per round, after one untimed each)."
        )],
    })
}

/// A daemon serving `wss://` on a loopback port with a new self-signed certificate, asks
/// logged to `asks`; its address, token and pinned fingerprint.
fn wss_daemon(bins: &Bins, certs: &Path, asks: &Path) -> anyhow::Result<(Server, Address)> {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let certified = rcgen::generate_simple_self_signed(names)?;
    let (cert, key) = (certs.join("cert.pem"), certs.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem())?;
    std::fs::write(&key, certified.signing_key.serialize_pem())?;
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            env: vec![("FAKE_CLAUDE_ASK_LOG".into(), asks.display().to_string())],
            args: vec![
                "--ws".into(),
                "127.0.0.1:0".into(),
                "--ws-tls-cert".into(),
                cert.display().to_string(),
                "--ws-tls-key".into(),
                key.display().to_string(),
            ],
            ..Default::default()
        },
    )?;
    let addr = hld_e2e::ws::address_in_log(&server.dir.path().join("hld.log"))
        .context("the daemon logged no WebSocket address")?;
    let token = Token::from_file(server.dir.path().join("daemon.ws-token"))?;
    let pin = Trust::Fingerprint(Fingerprint::of(certified.cert.der()));
    let url = format!("wss://localhost:{}", addr.port());
    Ok((server, Address::Remote(Remote::new(&url, token, pin)?)))
}

/// One round: the two daemons, the fleet view over both, `count` + 1 approvals on each in
/// turn; the timed ones' latencies in ns, the socket daemon's then the `wss://` one's.
fn round(bins: &Bins, count: usize) -> anyhow::Result<[Vec<u64>; 2]> {
    let dir = tempfile::tempdir()?;
    let asks = [
        dir.path().join("asks-local.log"),
        dir.path().join("asks-box.log"),
    ];
    let env = vec![("FAKE_CLAUDE_ASK_LOG".into(), asks[0].display().to_string())];
    let near = Server::daemon(
        bins,
        &DaemonOptions {
            env,
            ..Default::default()
        },
    )?;
    let (far, far_address) = wss_daemon(bins, dir.path(), &asks[1])?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let latencies = runtime.block_on(async {
        let daemons = vec![
            ("local".to_owned(), Client::connect(&near.sock).await?),
            ("box".to_owned(), Client::connect_to(&far_address).await?),
        ];
        let mut ui = Headless::connect(daemons).await?;
        approve_in_turn(&mut ui, dir.path(), &asks, count).await
    })?;
    drop(runtime);
    near.stop()?;
    far.stop()?;
    Ok(latencies)
}

/// Launches `count` + 1 `tool` sessions on each daemon, alternately, one at a time; returns
/// each daemon's timed latencies (ns), from the agent's request to the draw that shows it.
async fn approve_in_turn(
    ui: &mut Headless,
    dir: &Path,
    asks: &[std::path::PathBuf; 2],
    count: usize,
) -> anyhow::Result<[Vec<u64>; 2]> {
    ui.apply(key(KeyCode::Char('2')))?;
    ensure!(
        ui.state.screen == Screen::Approvals,
        "`2` did not show the approvals"
    );
    let mut latencies = [Vec::new(), Vec::new()];
    for i in 0..=count {
        for daemon in 0..2 {
            let working_dir = dir.join(format!("w{i}-{daemon}"));
            let (_, asked, drawn) = approve_one(ui, daemon, &working_dir, &asks[daemon])
                .await
                .with_context(|| format!("approval {i} of daemon {daemon}"))?;
            if i > 0 {
                latencies[daemon].push(drawn - asked);
            }
        }
    }
    Ok(latencies)
}
