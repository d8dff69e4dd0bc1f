//! The search group: `searchSessions` over many generated sessions next to the same FTS5
//! query run with rusqlite on the same file, in the same rounds (as the history group does
//! for `getConversation`).

use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use serde_json::{json, Value};

use crate::groups::{ratios, timed_call, Group};
use crate::procs::{Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::sqlite::{self, Order};
use crate::stats::{ratio, si, us, Latency, Spread};

/// The generator's seed: the same database every run.
const SEED: u64 = 1;

/// `searchSessions`' default limit.
const LIMIT: i64 = 50;

/// The target: p99 at most this many times the raw query's, in the same round.
const MAX_RATIO: f64 = 2.0;

/// What a user types, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One word found in a fifth to two fifths of the sessions.
    Common,
    /// One word found in few: a rare word of the list, made-up project names.
    Rare,
    /// The starts of two words.
    Prefixes,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Common, Kind::Rare, Kind::Prefixes];

    fn label(self) -> &'static str {
        match self {
            Kind::Common => "common words",
            Kind::Rare => "rare words",
            Kind::Prefixes => "two-word prefixes",
        }
    }
}

/// The queries, as typed (hld makes each word a quoted prefix).
const QUERIES: [(Kind, &str); 9] = [
    (Kind::Common, "fix"),
    (Kind::Common, "test"),
    (Kind::Common, "error"),
    (Kind::Rare, "calendar"),
    (Kind::Rare, "kalomi"),
    (Kind::Rare, "rutavo"),
    (Kind::Prefixes, "fla tes"),
    (Kind::Prefixes, "pars err"),
    (Kind::Prefixes, "data mig"),
];

/// Per-operation times of one round, in ns.
#[derive(Debug, Default)]
struct Times {
    hld: Vec<u64>,
    raw: Vec<u64>,
    by_rank: Vec<u64>,
}

/// One round's percentiles of one set of queries.
#[derive(Debug, Clone, Copy)]
struct RoundFigures {
    hld: Latency,
    raw: Latency,
    by_rank: Latency,
}

fn nanos(d: Duration) -> u64 {
    d.as_nanos().try_into().unwrap_or(u64::MAX)
}

fn request(id: usize, query: &str) -> String {
    format!(
        "{}\n",
        json!({"jsonrpc":"2.0","method":"searchSessions","params":{"query":query},"id":id})
    )
}

fn reply_ids(line: &[u8]) -> anyhow::Result<Vec<String>> {
    let reply: Value = serde_json::from_slice(line)?;
    let sessions = reply["result"]["sessions"]
        .as_array()
        .with_context(|| format!("searchSessions failed: {reply}"))?;
    Ok(sessions
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_owned))
        .collect())
}

/// Runs the group: `sessions` generated sessions, `reps` calls of each query per round.
pub fn run(bins: &Bins, rounds: usize, sessions: usize, reps: usize) -> anyhow::Result<Section> {
    let dir = tempfile::tempdir()?;
    let database = dir.path().join("search.db");
    let fill_started = Instant::now();
    hld_e2e::corpus::fill(&database, sessions, SEED, &[])?;
    let fill_secs = fill_started.elapsed().as_secs_f64();
    let server = Server::daemon(
        bins,
        &DaemonOptions {
            database: Some(database.clone()),
            ..Default::default()
        },
    )?;
    let requests: Vec<String> = QUERIES
        .iter()
        .enumerate()
        .map(|(i, (_, q))| request(i + 1, q))
        .collect();
    let expressions: Vec<String> = QUERIES
        .iter()
        .map(|(_, q)| sqlite::fts_expression(q))
        .collect();
    let mut conn = BufReader::with_capacity(1 << 20, UnixStream::connect(&server.sock)?);
    let mut line = Vec::new();
    let reader = sqlite::reader(&database)?;

    // Untimed: both find the same sessions in the same order (and warm their caches).
    let mut found = Vec::new();
    let mut reply_bytes = Vec::new();
    for (i, (_, query)) in QUERIES.iter().enumerate() {
        timed_call(&mut conn, &requests[i], &mut line)?;
        let ids = reply_ids(&line)?;
        let (_, raw_ids, _) = sqlite::raw_search(&reader, Order::Newest, &expressions[i], LIMIT)?;
        ensure!(
            ids == raw_ids,
            "searchSessions {query:?} found {ids:?}, the raw query {raw_ids:?}"
        );
        let (_, by_rank, _) = sqlite::raw_search(&reader, Order::Rank, &expressions[i], LIMIT)?;
        ensure!(
            by_rank.len() == ids.len(),
            "ORDER BY rank found {by_rank:?}"
        );
        let matches = sqlite::search_matches(&reader, &expressions[i])?;
        ensure!(
            ids.len() as i64 == matches.min(LIMIT),
            "searchSessions {query:?} found {} of {matches}",
            ids.len()
        );
        found.push(format!("{query:?} {}", si(matches as f64)));
        reply_bytes.push(line.len());
    }

    let mut figures: Vec<Vec<RoundFigures>> = vec![Vec::new(); Kind::ALL.len() + 1];
    for _ in 0..rounds {
        let mut times: Vec<Times> = (0..Kind::ALL.len()).map(|_| Times::default()).collect();
        for _ in 0..reps {
            for (i, (kind, _)) in QUERIES.iter().enumerate() {
                let k = Kind::ALL.iter().position(|x| x == kind).unwrap_or(0);
                let t = &mut times[k];
                t.hld
                    .push(nanos(timed_call(&mut conn, &requests[i], &mut line)?));
                let expression = &expressions[i];
                let raw = sqlite::raw_search(&reader, Order::Newest, expression, LIMIT)?;
                t.raw.push(nanos(raw.0));
                let by_rank = sqlite::raw_search(&reader, Order::Rank, expression, LIMIT)?;
                t.by_rank.push(nanos(by_rank.0));
            }
        }
        let mut all = Times::default();
        for (k, t) in times.iter_mut().enumerate() {
            all.hld.extend(&t.hld);
            all.raw.extend(&t.raw);
            all.by_rank.extend(&t.by_rank);
            figures[k + 1].push(RoundFigures {
                hld: Latency::of_nanos(&mut t.hld),
                raw: Latency::of_nanos(&mut t.raw),
                by_rank: Latency::of_nanos(&mut t.by_rank),
            });
        }
        figures[0].push(RoundFigures {
            hld: Latency::of_nanos(&mut all.hld),
            raw: Latency::of_nanos(&mut all.raw),
            by_rank: Latency::of_nanos(&mut all.by_rank),
        });
    }
    drop(conn);
    server.stop()?;

    let show = |f: &[RoundFigures], side: fn(&RoundFigures) -> Latency| {
        let p50 = Spread::of(&f.iter().map(|r| side(r).p50_us).collect::<Vec<_>>());
        let p99 = Spread::of(&f.iter().map(|r| side(r).p99_us).collect::<Vec<_>>());
        format!("p50 {}; p99 {}", us(p50.median), p99.show(us))
    };
    let p99_ratio = |f: &[RoundFigures], a: fn(&RoundFigures) -> Latency| {
        let x: Vec<f64> = f.iter().map(|r| a(r).p99_us).collect();
        let y: Vec<f64> = f.iter().map(|r| r.raw.p99_us).collect();
        ratios(&x, &y)
    };
    let hld = |r: &RoundFigures| r.hld;
    let raw = |r: &RoundFigures| r.raw;
    let by_rank = |r: &RoundFigures| r.by_rank;

    let overall = &figures[0];
    let r = p99_ratio(overall, hld);
    let mut rows = vec![Row {
        name: format!(
            "searchSessions over {} sessions, {} queries",
            si(sessions as f64),
            QUERIES.len()
        ),
        figure: show(overall, hld),
        baseline: show(overall, raw),
        ratio: r.show(ratio),
        target: format!("p99 ratio ≤ {MAX_RATIO}"),
        verdict: Verdict::of(r.median <= MAX_RATIO),
    }];
    for (k, kind) in Kind::ALL.iter().enumerate() {
        let words: Vec<&str> = QUERIES
            .iter()
            .filter(|(x, _)| x == kind)
            .map(|(_, q)| *q)
            .collect();
        rows.push(Row {
            name: format!("… {} ({})", kind.label(), words.join(", ")),
            figure: show(&figures[k + 1], hld),
            baseline: show(&figures[k + 1], raw),
            ratio: p99_ratio(&figures[k + 1], hld).show(ratio),
            target: "reported".into(),
            verdict: Verdict::Info,
        });
    }
    rows.push(Row {
        name: "raw query ordered by relevance (FTS5's BM25 `rank`) instead (÷ the baseline)".into(),
        figure: show(overall, by_rank),
        baseline: show(overall, raw),
        ratio: p99_ratio(overall, by_rank).show(ratio),
        target: "reported".into(),
        verdict: Verdict::Info,
    });

    Ok(Section {
        title: Group::Search.title().into(),
        method: format!(
            "A database of {sessions} completed sessions in the daemon's schema, written \
             with rusqlite in one transaction by `hld_e2e::corpus::fill` (seed {SEED}): \
             a query line of 6 to 20 words drawn from a list of {} words with Zipf \
             frequencies, a made-up project name or two in half of them, a second line of 5 \
             to 24 words in a third, a title in two fifths; the summary is the daemon's; the \
             FTS5 index is built once at the end. Then served by hld. Each round sends each of {} queries {reps} times on one open \
             connection (`searchSessions {{\"query\": …}}`, the default limit of {LIMIT}), \
             the time being from sending the request to having read the whole reply line; the \
             figure is the p50 and p99 of those calls. Baseline, same rounds, each call right \
             after hld's, in the benchmark process on its own read connection to the same \
             file: the same FTS5 query (each word a quoted prefix, `MATCH`, the newest {LIMIT} \
             by rowid, joined to `sessions`), rows mapped to the wire struct, plus \
             `serde_json::to_vec` of the result. The ratio is hld's p99 ÷ the baseline's, \
             round by round.",
            hld_e2e::corpus::WORDS.len(),
            QUERIES.len(),
        ),
        commands: vec![
            "hld --socket $DIR/hld.sock --database $DIR/search.db --log-file $DIR/hld.log \
             --claude-path fake-claude &"
                .into(),
            format!("# then on one connection: {}", requests[0].trim()),
        ],
        rows,
        notes: vec![
            format!("Filled in {fill_secs:.1} s."),
            format!(
                "Sessions matching each query: {}. Checked: hld and the baseline return the \
                 same sessions in the same order; hld's replies are {}–{} bytes.",
                found.join(", "),
                reply_bytes.iter().min().unwrap_or(&0),
                reply_bytes.iter().max().unwrap_or(&0)
            ),
        ],
    })
}
