//! Group 3, fan-out: one event to many subscribers, next to the raw broadcast server.

use crate::fanout::FanoutResult;
use crate::groups::{finished_session, ratios, Group, Plan};
use crate::procs::{self, Bins, DaemonOptions, Server};
use crate::report::{Row, Section, Verdict};
use crate::stats::{ratio, si, us, Spread};

/// How a fan-out load sends its events.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pace {
    /// The next once every subscriber has the previous one.
    OneInFlight,
    /// On a fixed schedule, this many a second.
    Rate(f64),
    /// As fast as the server takes them, up to [`crate::fanout::WINDOW`] in flight: the most
    /// deliveries a second it manages (perf-limits' "max throughput").
    Saturated,
}

/// One fan-out row's load.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FanoutLoad {
    subs: usize,
    events: usize,
    pace: Pace,
    /// Server and client both on CPU 0.
    pinned: bool,
    /// The target: hld's p99 at most this many times the raw server's in the same round
    /// (none for the reported loads).
    max_ratio: Option<f64>,
}

impl FanoutLoad {
    /// One event in flight, pinned or not.
    pub(crate) fn one_in_flight(
        subs: usize,
        events: usize,
        pinned: bool,
        max_ratio: Option<f64>,
    ) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::OneInFlight,
            pinned,
            max_ratio,
        }
    }

    /// Events at a fixed rate, unpinned (a sustained load, placed as the daemon will run);
    /// reported.
    pub(crate) fn paced(subs: usize, events: usize, rate: f64) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::Rate(rate),
            pinned: false,
            max_ratio: None,
        }
    }

    /// As many events as the server takes, unpinned; reported.
    pub(crate) fn saturated(subs: usize, events: usize) -> Self {
        FanoutLoad {
            subs,
            events,
            pace: Pace::Saturated,
            pinned: false,
            max_ratio: None,
        }
    }
}

/// Connections a paced fan-out publishes from, in turn: as from that many sessions' approval
/// servers (one connection's requests are answered in order, one at a time).
const PACED_PUBLISHERS: usize = 8;

/// Runs the group.
pub fn run(bins: &Bins, plan: &Plan) -> anyhow::Result<Section> {
    let loads = &plan.fanout;
    let mut results: Vec<[Vec<FanoutResult>; 2]> = vec![Default::default(); loads.len()];
    let args = |load: &FanoutLoad, sock: &str, session: &str| {
        let mut a = vec![
            "fanout".to_owned(),
            "--sock".into(),
            sock.into(),
            "--subs".into(),
            load.subs.to_string(),
            "--events".into(),
            load.events.to_string(),
            "--session".into(),
            session.into(),
        ];
        match load.pace {
            Pace::OneInFlight => {}
            Pace::Rate(rate) => a.extend(["--rate".into(), rate.to_string()]),
            Pace::Saturated => a.extend(["--window".into(), crate::fanout::WINDOW.to_string()]),
        }
        if load.pace != Pace::OneInFlight {
            a.extend(["--publishers".into(), PACED_PUBLISHERS.to_string()]);
        }
        a
    };
    for _ in 0..plan.rounds {
        for (i, load) in loads.iter().enumerate() {
            let pinned = load.pinned;
            // hld first: the raw server then pads its event lines to the length of hld's.
            let server = Server::daemon(
                bins,
                &DaemonOptions {
                    pinned,
                    ..Default::default()
                },
            )?;
            let session = finished_session(&server, "hello")?;
            let sock = server.sock.display().to_string();
            let hld: FanoutResult = procs::client(bins, pinned, &args(load, &sock, &session))?;
            server.stop()?;
            let pad = (hld.line_bytes.round() as usize).to_string();
            let server = Server::raw(bins, "fanout", pinned, &["--event-bytes".into(), pad], &[])?;
            let sock = server.sock.display().to_string();
            let raw: FanoutResult = procs::client(bins, pinned, &args(load, &sock, "raw"))?;
            server.stop()?;
            results[i][0].push(raw);
            results[i][1].push(hld);
        }
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut commands = Vec::new();
    for (i, load) in loads.iter().enumerate() {
        let FanoutLoad {
            subs,
            events,
            pace,
            pinned,
            max_ratio,
        } = *load;
        let [raw, hld] = &results[i];
        let p99 = |rs: &[FanoutResult]| {
            Spread::of(&rs.iter().map(|r| r.latency.p99_us).collect::<Vec<_>>())
        };
        let p50 = |rs: &[FanoutResult]| {
            Spread::of(&rs.iter().map(|r| r.latency.p50_us).collect::<Vec<_>>())
        };
        let rates = |rs: &[FanoutResult]| rs.iter().map(|r| r.events_per_sec).collect::<Vec<_>>();
        let lost = |rs: &[FanoutResult]| rs.iter().map(|r| r.lost + r.lagged).sum::<u64>();
        let repeated = |rs: &[FanoutResult]| rs.iter().map(|r| r.repeated).sum::<u64>();
        let show = |rs: &[FanoutResult]| {
            let latency = format!("p99 {}; p50 {}", p99(rs).show(us), us(p50(rs).median));
            let eps = Spread::of(&rates(rs));
            let mut s = match pace {
                Pace::OneInFlight => latency,
                Pace::Rate(_) => format!("{latency}; {} events/s", si(eps.median)),
                Pace::Saturated => format!(
                    "{} deliveries/s ({} events/s); {latency}",
                    eps.show(|e| si(e * subs as f64)),
                    si(eps.median)
                ),
            };
            s.push_str(&format!(
                "; lost {}, repeated {} in all rounds",
                lost(rs),
                repeated(rs)
            ));
            s
        };
        let hld_p99: Vec<f64> = hld.iter().map(|r| r.latency.p99_us).collect();
        let raw_p99: Vec<f64> = raw.iter().map(|r| r.latency.p99_us).collect();
        let how = match (pace, pinned) {
            (Pace::OneInFlight, true) => "1 in flight, pinned".to_owned(),
            (Pace::OneInFlight, false) => "1 in flight, unpinned".to_owned(),
            (Pace::Rate(r), _) => format!("paced {} events/s", si(r)),
            (Pace::Saturated, _) => format!("saturated ({} in flight)", crate::fanout::WINDOW),
        };
        let p99_ratio = ratios(&hld_p99, &raw_p99);
        let ratio_shown = match pace {
            Pace::Saturated => format!(
                "deliveries/s {}",
                ratios(&rates(hld), &rates(raw)).show(ratio)
            ),
            _ => format!("p99 ×{}", p99_ratio.show(ratio)),
        };
        let (target, verdict) = match max_ratio {
            Some(max_ratio) => (
                format!("p99 ≤ {max_ratio}× the raw server's, no loss or repeat"),
                Verdict::of(p99_ratio.median <= max_ratio && lost(hld) == 0 && repeated(hld) == 0),
            ),
            None => ("reported".to_owned(), Verdict::Info),
        };
        rows.push(Row {
            name: format!("fan-out to {subs} subscribers, {how}"),
            figure: show(hld),
            baseline: show(raw),
            ratio: ratio_shown,
            target,
            verdict,
        });
        let mut note = format!(
            "{subs} subscribers, {how}: {events} events per run; event lines of {:.0} bytes \
             (hld's `new_approval`; the baseline's are padded to match)",
            Spread::of(&hld.iter().map(|r| r.line_bytes).collect::<Vec<_>>()).median
        );
        if pace == Pace::Saturated {
            note.push_str("; its latency is mostly queueing");
        }
        notes.push(note);
    }
    commands.push(
        "hld-bench serve --kind fanout --sock $DIR/raw.sock --event-bytes $BYTES &  # under \
         taskset -c 0 for the pinned rows"
            .to_owned(),
    );
    for load in loads {
        let line = format!(
            "{}hld-bench client {}",
            if load.pinned { "taskset -c 0 " } else { "" },
            args(load, "$DIR/raw.sock", "raw").join(" ")
        );
        if !commands.contains(&line) {
            commands.push(line);
        }
    }
    commands.push(
        "hld --socket $DIR/hld.sock --database $DIR/hld.db --log-file $DIR/hld.log \
         --claude-path fake-claude &  # then launchSession, wait for it to complete"
            .to_owned(),
    );
    commands.push(
        "# the same clients with --sock $DIR/hld.sock --session $SESSION (a fresh server for \
         each row)"
            .to_owned(),
    );
    Ok(Section {
        title: Group::Fanout.title().into(),
        method: "All subscriber connections and the publisher live in one tokio current_thread \
                 client process; in *pinned* rows it and the server both run under `taskset \
                 -c 0`, in the others (the paced row among them, a sustained load) the \
                 scheduler places them. Each subscriber sends `Subscribe` for \
                 `new_approval` events; the publisher sends `createApproval` with \
                 `tool_input: {\"seq\": i}`, which hld stores (insert, commit) \
                 and then publishes as one `new_approval` event. Latency runs from the \
                 publisher's write to the moment the *last* subscriber has read the line \
                 (subscribers find `\"seq\":` by substring search). \"1 in flight\" sends the \
                 next event once every subscriber has the previous one; \"paced\" sends on a \
                 fixed schedule, from 8 publisher connections in turn (as from 8 sessions; \
                 a connection's requests are answered in order); \"saturated\" sends as fast \
                 as the server takes them from the same 8 connections, with up to 1024 events \
                 in flight, and counts deliveries a second (events × subscribers). Lost counts events that never reached every subscriber within \
                 10 s plus `lagged` notices; repeated counts lines a subscriber had already \
                 read. The baseline is a raw tokio current_thread server \
                 that parses each request, serialises its params once into an event line, \
                 broadcasts it (tokio broadcast, capacity 4096) and writes what each \
                 subscriber has queued in one write (coalescing); it stores nothing, and its \
                 event lines are padded to the length of hld's. The first \
                 10 events of a run are not counted."
            .into(),
        commands,
        rows,
        notes,
    })
}
