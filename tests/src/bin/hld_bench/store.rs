//! Groups 5 and 6, the store: ingest of a fast agent's stream next to raw rusqlite, and
//! `getConversation` of a long session next to the raw SQL query.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use anyhow::{bail, ensure, Context};
use serde_json::{json, Value};

use crate::groups::{median_duration, ratios, subscription, timed_call, Group, Plan};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::sqlite;
use crate::stats::{ratio, si, us, Spread};

/// The target: hld's events stored a second at least this share of raw rusqlite's rows.
const MIN_INGEST_RATIO: f64 = 0.6;
/// The target: `getConversation` at most this many times the raw query's time.
const MAX_HISTORY_RATIO: f64 = 2.0;

/// Group 5: ingest.
pub fn ingest(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let lines = plan.ingest_lines;
    let batch = 4096;
    let mut hld = Vec::new();
    let mut raw = Vec::new();
    let mut notes = Vec::new();
    for round in 0..plan.slow_rounds {
        let server = Server::daemon(
            bins,
            &DaemonOptions {
                env: vec![("FAKE_CLAUDE_COUNT".into(), lines.to_string())],
                ..Default::default()
            },
        )?;
        let mut statuses = subscription(&server.sock, &["session_status_changed"])?;
        let started = Instant::now();
        let launched = server.request(
            "launchSession",
            json!({"query": "scenario:many", "working_dir": server.dir.path()}),
        )?;
        let id = launched["session_id"]
            .as_str()
            .context("no session_id")?
            .to_owned();
        let mut line = String::new();
        let ended = loop {
            line.clear();
            ensure!(
                statuses.read_line(&mut line)? > 0,
                "the subscription closed"
            );
            let event: Value = serde_json::from_str(&line)?;
            let data = &event["result"]["event"]["data"];
            if data["session_id"] == id.as_str() {
                match data["new_status"].as_str() {
                    Some("completed") => break started.elapsed(),
                    Some("failed") => bail!("the ingest session failed: {data}"),
                    _ => {}
                }
            }
        };
        let database = server.dir.path().join("hld.db");
        let (events, raw_lines) = sqlite::stored_counts(&database, &id)?;
        ensure!(
            events > lines && raw_lines >= lines,
            "stored {events} events and {raw_lines} raw lines for {lines} lines"
        );
        server.stop()?;
        hld.push(events as f64 / ended.as_secs_f64());
        if round == 0 {
            notes.push(format!(
                "Checked: {events} conversation events (the query, {lines} texts and the \
                 turn's others) and {raw_lines} raw lines stored per run."
            ));
        }
        let dir = tempfile::tempdir()?;
        raw.push(sqlite::raw_ingest(
            &dir.path().join("raw.db"),
            lines,
            batch,
        )?);
    }
    let figure = Spread::of(&hld);
    let r = ratios(&hld, &raw);
    notes.push(
        "Durable before published: the supervisor stores each batch (one transaction, \
         committed) and only then publishes its events; the e2e tests check the order."
            .into(),
    );
    Ok(Section {
        title: Group::Ingest.title().into(),
        method: format!(
            "hld runs `fake-claude` in its `many` scenario: {lines} assistant text lines of \
             stream-json written as fast as it can (buffered stdout). The figure is the \
             conversation events stored ÷ the time from sending `launchSession` to the \
             `completed` status event (process start-up included). Baseline: rusqlite alone \
             inserting the same rows into the daemon's schema with the daemon's pragmas and \
             statements (a raw line, its conversation event, the session's activity time), \
             {batch} lines per transaction, with no parsing and no process."
        ),
        commands: vec![
            "FAKE_CLAUDE_COUNT=N hld --socket $DIR/hld.sock --database $DIR/hld.db \
             --log-file $DIR/hld.log --claude-path fake-claude &"
                .into(),
            "# Subscribe to session_status_changed, launchSession {\"query\": \"scenario:many\"}, \
             wait for completed, count the rows"
                .into(),
        ],
        rows: vec![Row {
            name: format!("ingest, {} stream lines", si(lines as f64)),
            figure: format!("{} events/s", figure.show(si)),
            baseline: format!("{} rows/s", Spread::of(&raw).show(si)),
            ratio: r.show(ratio),
            target: format!("ratio ≥ {MIN_INGEST_RATIO}"),
            verdict: Verdict::of(r.median >= MIN_INGEST_RATIO),
        }],
        notes,
    })
}

/// Group 6: history.
pub fn history(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("history.db");
    let (sessions, per) = (plan.history_sessions, plan.history_events);
    let fill_started = Instant::now();
    sqlite::fill(&database, sessions, per)?;
    let fill_secs = fill_started.elapsed().as_secs_f64();
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            database: Some(database.clone()),
            ..Default::default()
        },
    )?;
    let session = sqlite::session_id(sessions / 2);
    let whole = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"getConversation","params":{"session_id":session},"id":1})
    );
    let page = format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"getConversation","params":{"session_id":session,"after_sequence":per/2,"limit":1000},"id":2})
    );
    let mut conn = BufReader::with_capacity(1 << 20, UnixStream::connect(&server.sock)?);
    let mut line = Vec::new();
    timed_call(&mut conn, &whole, &mut line)?;
    let reply: Value = serde_json::from_slice(&line)?;
    let got = reply["result"]["events"].as_array().map_or(0, Vec::len);
    ensure!(
        got == per,
        "getConversation returned {got} events, not {per}"
    );
    let reply_bytes = line.len();
    timed_call(&mut conn, &page, &mut line)?;
    let reply: Value = serde_json::from_slice(&line)?;
    let paged = reply["result"]["events"].as_array().map_or(0, Vec::len);
    ensure!(
        paged == 1000.min(per - per / 2),
        "a page returned {paged} events"
    );

    let reader = sqlite::reader(&database)?;
    let (_, baseline_bytes) = sqlite::raw_history(&reader, &session)?;
    let (mut hld, mut raw, mut pages) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..plan.rounds {
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(timed_call(&mut conn, &whole, &mut line)?);
        }
        hld.push(median_duration(times));
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(sqlite::raw_history(&reader, &session)?.0);
        }
        raw.push(median_duration(times));
        let mut times = Vec::new();
        for _ in 0..plan.history_reps {
            times.push(timed_call(&mut conn, &page, &mut line)?);
        }
        pages.push(median_duration(times));
    }
    drop(conn);
    server.stop()?;
    let r = ratios(&hld, &raw);
    Ok(Section {
        title: Group::History.title().into(),
        method: format!(
            "A database of {sessions} completed sessions × {per} message events (200-byte \
             contents, written interleaved, {} rows) in the daemon's schema, filled with \
             rusqlite, then served by hld. The figure is the time from sending \
             `getConversation` for one session (no pagination: the whole history) to having \
             read the whole reply line, on an open connection; median of {} calls per round. \
             Baseline, same rounds, in the benchmark process: the raw SQL query \
             (`WHERE session_id = ? ORDER BY sequence`, rows mapped to the wire struct) plus \
             `serde_json::to_vec` of the result.",
            sessions * per,
            plan.history_reps
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/history.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            format!("# then on one connection: {}", whole.trim()),
        ],
        rows: vec![
            Row {
                name: format!(
                    "getConversation, {} events among {}",
                    si(per as f64),
                    si((sessions * per) as f64)
                ),
                figure: Spread::of(&hld).show(us),
                baseline: Spread::of(&raw).show(us),
                ratio: r.show(ratio),
                target: format!("ratio ≤ {MAX_HISTORY_RATIO}"),
                verdict: Verdict::of(r.median <= MAX_HISTORY_RATIO),
            },
            Row {
                name: "getConversation, one page (`after_sequence`, `limit` 1000)".into(),
                figure: Spread::of(&pages).show(us),
                baseline: "–".into(),
                ratio: "–".into(),
                target: "reported".into(),
                verdict: Verdict::Info,
            },
        ],
        notes: vec![
            format!("Filled in {fill_secs:.1} s."),
            format!(
                "Checked: {per} events returned; the reply line is {} bytes, the baseline's \
                 JSON {} bytes.",
                reply_bytes, baseline_bytes
            ),
        ],
    })
}
