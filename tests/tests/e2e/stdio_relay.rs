//! `hld --stdio` relaying a TCP socket (stdin and stdout both, as `socat` or an editor's
//! remote bridge gives it): a round trip costs about what one over pipes does. Each frame
//! leaves on stdout in one write; a frame split in two would wait for the peer's delayed ACK
//! (Nagle), some 40 ms a round trip.

use std::io::{BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hld_e2e::frames::{frame, read_frame};
use hld_e2e::{workspace_bin, TestDaemon};
use serde_json::json;

/// Round trips measured per way.
const ROUND_TRIPS: usize = 30;

/// `hld --stdio` with `stdin` and `stdout`, and our ends of them.
fn start(d: &TestDaemon, stdin: Stdio, stdout: Stdio) -> (Child, Box<dyn Write>, Box<dyn Read>) {
    let mut child = Command::new(workspace_bin("hld"))
        .args(["--stdio", "--socket"])
        .arg(&d.socket)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .expect("start hld --stdio");
    let stdin = child.stdin.take().map(|s| Box::new(s) as Box<dyn Write>);
    let stdout = child.stdout.take().map(|s| Box::new(s) as Box<dyn Read>);
    (
        child,
        stdin.unwrap_or_else(|| Box::new(std::io::sink())),
        stdout.unwrap_or_else(|| Box::new(std::io::empty())),
    )
}

/// The median of [`ROUND_TRIPS`] `version` calls, one at a time.
fn median_round_trip(to: &mut impl Write, from: &mut impl Read) -> Duration {
    let mut times: Vec<Duration> = (0..ROUND_TRIPS)
        .map(|i| {
            let request = json!({"jsonrpc": "2.0", "method": "version", "params": {}, "id": i});
            let started = Instant::now();
            to.write_all(&frame(&request)).unwrap();
            to.flush().unwrap();
            let reply = read_frame(from).unwrap().expect("a reply");
            assert_eq!(reply["id"], i, "{reply}");
            started.elapsed()
        })
        .collect();
    times.sort();
    times[ROUND_TRIPS / 2]
}

#[test]
fn a_relayed_tcp_round_trip_costs_about_what_a_handed_over_one_does() {
    let d = TestDaemon::start();

    let (mut piped, mut to, from) = start(&d, Stdio::piped(), Stdio::piped());
    let handed = median_round_trip(&mut to, &mut BufReader::new(from));
    drop(to);
    let _ = piped.wait();

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut ours = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let theirs = OwnedFd::from(listener.accept().unwrap().0);
    let (mut relay, _, _) = start(
        &d,
        Stdio::from(theirs.try_clone().unwrap()),
        Stdio::from(theirs),
    );
    let mut reader = BufReader::new(ours.try_clone().unwrap());
    let relayed = median_round_trip(&mut ours, &mut reader);
    let _ = ours.shutdown(std::net::Shutdown::Both);
    let _ = relay.wait();

    eprintln!("median round trip: handed over {handed:?}, relayed over TCP {relayed:?}");
    assert!(
        relayed < handed + Duration::from_millis(15),
        "relayed {relayed:?}, handed over {handed:?}"
    );
}
