//! The JSON-RPC core on the Unix socket, end to end against the real `hld` binary: framing,
//! validation and error data, id echo, notifications, limits, concurrency, socket lifecycle,
//! signals and the introspection methods.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use hld_client::protocol::{
    DescribeMethods, Health, Initialize, ListMethods, Method, NoParams, SetLogLevel,
    SetLogLevelParams, SetLogLevelResult, Shutdown, Version,
};
use hld_e2e::{wait_for, DaemonOptions, LineConn, TestDaemon, WAIT};
use nix::sys::signal::Signal;
use serde_json::{json, Value};

fn error(reply: &Value) -> &Value {
    reply
        .get("error")
        .unwrap_or_else(|| panic!("expected an error: {reply}"))
}

#[test]
fn parse_errors_get_32700_with_null_id_and_the_connection_stays_usable() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    for bad in [
        &b"{not json\n"[..],
        b"\xff\xfe{}\n",
        b"{\"jsonrpc\":\"2.0\"\n",
    ] {
        c.send_raw(bad);
        let reply = c.recv();
        assert_eq!(error(&reply)["code"], -32700, "{bad:?}");
        assert_eq!(reply["id"], Value::Null);
    }
    let ok = c.call(r#"{"jsonrpc":"2.0","method":"health","id":7}"#);
    assert_eq!(ok["result"]["status"], "ok");
}

#[test]
fn envelope_errors_get_32600_with_a_reason() {
    let d = TestDaemon::start();
    let mut c = d.conn();

    let reply = c.call(r#"[{"jsonrpc":"2.0","method":"health","id":1}]"#);
    assert_eq!(error(&reply)["code"], -32600);
    assert_eq!(error(&reply)["message"], "Batch requests not supported");
    assert_eq!(error(&reply)["data"]["reason"], "batch-not-supported");
    assert_eq!(reply["id"], Value::Null);

    for id in ["{}", "[1]", "true", "false"] {
        let reply = c.call(&format!(
            r#"{{"jsonrpc":"2.0","method":"health","id":{id}}}"#
        ));
        assert_eq!(error(&reply)["code"], -32600, "id {id}");
        assert_eq!(error(&reply)["data"]["reason"], "invalid-id-type");
        assert_eq!(reply["id"], Value::Null);
    }

    for (line, id) in [
        (r#"{"jsonrpc":"1.0","method":"health","id":3}"#, json!(3)),
        (r#"{"method":"health","id":"x"}"#, json!("x")),
        (r#"{"jsonrpc":2.0,"method":"health","id":4}"#, json!(4)),
        (r#"{"jsonrpc":"2.0","method":42,"id":5}"#, json!(5)),
        (r#"{"jsonrpc":"2.0","id":6}"#, json!(6)),
    ] {
        let reply = c.call(line);
        assert_eq!(error(&reply)["code"], -32600, "{line}");
        assert_eq!(
            error(&reply)["data"]["reason"],
            "invalid-envelope",
            "{line}"
        );
        assert_eq!(reply["id"], id, "the id is echoed for {line}");
    }

    let reply = c.call("42");
    assert_eq!(error(&reply)["code"], -32600);
}

#[test]
fn unknown_methods_get_32601_naming_the_method() {
    let d = TestDaemon::start();
    let reply = d
        .conn()
        .call(r#"{"jsonrpc":"2.0","method":"frobnicate","id":1}"#);
    assert_eq!(error(&reply)["code"], -32601);
    assert_eq!(error(&reply)["message"], "Method not found: frobnicate");
    assert_eq!(reply["id"], 1);
    // Method names are case-sensitive.
    let reply = d
        .conn()
        .call(r#"{"jsonrpc":"2.0","method":"Health","id":2}"#);
    assert_eq!(error(&reply)["code"], -32601);
}

#[test]
fn bad_params_get_32602_with_param_expected_received() {
    let d = TestDaemon::start();
    let mut c = d.conn();

    let reply = c.request("setLogLevel", json!({"level": 5}), json!(1));
    let e = error(&reply);
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["param"], "level");
    assert_eq!(e["data"]["expected"], "string");
    assert_eq!(e["data"]["received"], "integer");

    let reply = c.request("setLogLevel", json!({}), json!(2));
    let e = error(&reply);
    assert_eq!(e["code"], -32602);
    assert_eq!(e["message"], "level is required");
    assert_eq!(e["data"]["param"], "level");
    assert_eq!(e["data"]["received"], "missing");

    let reply = c.request("setLogLevel", json!({"level": "loud"}), json!(3));
    let e = error(&reply);
    assert_eq!(e["code"], -32602);
    assert_eq!(
        e["data"]["accepted"],
        json!(["debug", "info", "warn", "error"])
    );
    assert_eq!(e["data"]["received"], "loud");

    let reply = c.call(r#"{"jsonrpc":"2.0","method":"setLogLevel","params":["debug"],"id":4}"#);
    let e = error(&reply);
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["param"], "params");
    assert_eq!(e["data"]["expected"], "object");
    assert_eq!(e["data"]["received"], "array");
}

#[test]
fn ids_are_echoed_with_their_exact_type_and_value() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    for id in [
        r#""abc""#,
        r#""""#,
        "42",
        "0",
        "-7",
        "1.5",
        "18446744073709551615",
        "null",
    ] {
        c.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"health","id":{id}}}"#
        ));
        let line = c.recv_line().unwrap();
        assert!(
            line.trim_end().ends_with(&format!(r#","id":{id}}}"#)),
            "id {id} not echoed verbatim: {line}"
        );
    }
}

#[test]
fn params_absent_null_and_empty_object_all_mean_no_params() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    for line in [
        r#"{"jsonrpc":"2.0","method":"health","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"health","params":null,"id":2}"#,
        r#"{"jsonrpc":"2.0","method":"health","params":{},"id":3}"#,
    ] {
        let reply = c.call(line);
        assert_eq!(reply["result"]["status"], "ok", "{line}");
        assert!(reply["result"]["version"].is_string());
    }
}

#[test]
fn notifications_are_processed_and_get_no_reply() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    // A notification that changes state: it must take effect without a reply.
    c.send(r#"{"jsonrpc":"2.0","method":"setLogLevel","params":{"level":"ERROR"}}"#);
    c.send(r#"{"jsonrpc":"2.0","method":"nosuchmethod"}"#);
    let reply = c.call(r#"{"jsonrpc":"2.0","method":"version","id":"after"}"#);
    assert_eq!(
        reply["id"], "after",
        "the first line read is the request's reply"
    );
    // At error level, a rejected request is no longer logged at warn. Back at warn, the next
    // one is: once it is in the log, so would the first be if it had been logged.
    c.call(r#"{"jsonrpc":"2.0","method":"marker-after-error-level","id":9}"#);
    c.try_request::<SetLogLevel>(SetLogLevelParams {
        level: "warn".into(),
    })
    .unwrap();
    c.call(r#"{"jsonrpc":"2.0","method":"marker-after-warn-level","id":10}"#);
    wait_for(WAIT, || {
        d.log_text()
            .contains("marker-after-warn-level")
            .then_some(())
    })
    .expect("a rejected request is logged at warn");
    assert!(!d.log_text().contains("marker-after-error-level"));
}

#[test]
fn oversize_line_is_rejected_and_the_connection_stays_usable() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"health","params":{{"pad":"{}"}},"id":1}}"#,
        "x".repeat(1024 * 1024 + 10)
    );
    c.send(&big);
    let reply = c.recv();
    assert_eq!(error(&reply)["code"], -32600);
    assert_eq!(error(&reply)["data"]["reason"], "oversize");
    assert_eq!(reply["id"], Value::Null);
    let reply = c.call(r#"{"jsonrpc":"2.0","method":"health","id":2}"#);
    assert_eq!(reply["id"], 2);
    assert_eq!(reply["result"]["status"], "ok");
    // The rejected body is never logged.
    assert!(!d.log_text().contains("xxxxxxxxxxxxxxxx"));
}

#[test]
fn a_line_of_one_mib_minus_one_byte_is_accepted() {
    let d = TestDaemon::start();
    let mut c = d.conn();
    let head = r#"{"jsonrpc":"2.0","method":"health","params":{"pad":""#;
    let tail = r#""},"id":1}"#;
    let pad = 1024 * 1024 - 1 - head.len() - tail.len();
    let line = format!("{head}{}{tail}", "y".repeat(pad));
    assert_eq!(line.len(), 1024 * 1024 - 1);
    let reply = c.call(&line);
    assert_eq!(reply["result"]["status"], "ok");
}

#[test]
fn the_message_limit_is_configurable() {
    let d = TestDaemon::start_with(DaemonOptions {
        args: vec!["--max-message-size".into(), "100".into()],
        ..Default::default()
    });
    let mut c = d.conn();
    let reply = c.request("health", json!({"pad": "z".repeat(200)}), json!(1));
    assert_eq!(error(&reply)["data"]["reason"], "oversize");
    let reply = c.request("health", json!({}), json!(2));
    assert_eq!(reply["result"]["status"], "ok");
}

#[test]
fn pipelined_requests_get_one_reply_each_in_order() {
    // Successes of both kinds of handler, errors and notifications, in one write: replies
    // share a buffer until they are written, and none may be lost or reordered.
    let d = TestDaemon::start();
    let mut c = d.conn();
    let mut batch = String::new();
    for i in 0..200 {
        batch.push_str(&match i % 4 {
            0 => format!(r#"{{"jsonrpc":"2.0","method":"health","id":{i}}}"#),
            1 => format!(r#"{{"jsonrpc":"2.0","method":"version","id":{i}}}"#),
            2 => format!(r#"{{"jsonrpc":"2.0","method":"noSuchMethod","id":{i}}}"#),
            _ => r#"{"jsonrpc":"2.0","method":"health"}"#.to_owned(),
        });
        batch.push('\n');
    }
    c.send_raw(batch.as_bytes());
    for i in (0..200).filter(|i| i % 4 != 3) {
        let reply = c.recv();
        assert_eq!(reply["id"], i, "{reply}");
        match i % 4 {
            0 => assert_eq!(reply["result"]["status"], "ok", "{reply}"),
            1 => assert!(reply["result"]["version"].is_string(), "{reply}"),
            _ => assert_eq!(error(&reply)["code"], -32601, "{reply}"),
        }
    }
    // Nothing was written for the notifications: the next reply is the next request's.
    assert_eq!(
        c.request("version", json!({}), json!("after"))["id"],
        "after"
    );
}

#[test]
fn a_request_split_across_writes_is_answered() {
    // The daemon's first read finds half a line; the rest comes later on the same connection,
    // and so does another request after a pause.
    let d = TestDaemon::start();
    let mut c = d.conn();
    let line = r#"{"jsonrpc":"2.0","method":"health","id":1}"#;
    let (head, tail) = line.split_at(20);
    c.send_raw(head.as_bytes());
    // The pauses are the stimulus: the daemon reads the half line alone, then waits.
    std::thread::sleep(Duration::from_millis(100));
    c.send_raw(format!("{tail}\n").as_bytes());
    assert_eq!(c.recv()["id"], 1);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(c.request("health", json!({}), json!(2))["id"], 2);
}

#[test]
fn a_hundred_concurrent_connections_are_served() {
    let d = TestDaemon::start();
    let socket = d.socket.clone();
    let handles: Vec<_> = (0..100)
        .map(|i| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let mut c = LineConn::connect(&socket).unwrap();
                (0..10).all(|j| {
                    let id = i * 100 + j;
                    c.request("health", json!({}), json!(id))["id"] == id
                })
            })
        })
        .collect();
    let ok = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|ok| *ok)
        .count();
    assert_eq!(ok, 100);
}

#[test]
fn a_client_that_never_reads_does_not_delay_another() {
    let d = TestDaemon::start();
    let mut stuck = d.conn();
    // Enough requests that the replies fill the socket buffers of a client that never reads.
    let line = "{\"jsonrpc\":\"2.0\",\"method\":\"describeMethods\",\"id\":1}\n".repeat(2000);
    stuck.send_raw(line.as_bytes());
    let mut other = d.conn();
    other.set_timeout(Duration::from_secs(5));
    assert_eq!(
        other.try_request::<Health>(NoParams {}).unwrap().status,
        "ok"
    );
}

#[test]
fn socket_is_0600_in_a_0700_directory() {
    let base = hld_e2e::short_tempdir();
    let socket = base.path().join("nested/dir/hld.sock");
    let d = TestDaemon::start_with(DaemonOptions {
        socket: Some(socket.clone()),
        ..Default::default()
    });
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&base.path().join("nested")), 0o700);
    drop(d);
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let base = hld_e2e::short_tempdir();
    let socket = base.path().join("hld.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists(), "a stale socket file is left behind");
    let d = TestDaemon::start_with(DaemonOptions {
        socket: Some(socket.clone()),
        ..Default::default()
    });
    assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
    assert!(d.log_text().contains("removing stale socket file"));
}

#[test]
fn a_second_daemon_on_a_live_socket_is_refused() {
    let first = TestDaemon::start();
    let second = TestDaemon::spawn(DaemonOptions {
        socket: Some(first.socket.clone()),
        ..Default::default()
    });
    let (status, stderr) = second.wait_failure();
    assert!(!status.success());
    assert!(
        stderr.contains(&first.socket.display().to_string()),
        "the message names the socket: {stderr}"
    );
    assert!(stderr.contains("already running"), "{stderr}");
    // The first daemon is unaffected and still owns its socket.
    assert_eq!(first.request::<Health>(NoParams {}).status, "ok");
}

#[test]
fn a_second_daemon_on_the_same_database_is_refused_and_the_first_keeps_its_sessions() {
    let first = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = first.launch(hld_e2e::launch_params("scenario:tool", &first.dir));
    first.wait_approvals(Some(&id), |a| a.len() == 1);
    let elsewhere = tempfile::tempdir().unwrap();
    let second = TestDaemon::spawn(DaemonOptions {
        dir: Some(first.dir.clone()),
        socket: Some(elsewhere.path().join("second.sock")),
        ..DaemonOptions::fake_claude()
    });
    let (status, stderr) = second.wait_failure();
    assert!(!status.success());
    let database = first.dir.join("hld.db").display().to_string();
    assert!(
        stderr.contains(&format!("the database {database} is in use by another hld")),
        "{stderr}"
    );
    // Not taken for an orphan of a crash: the session still waits on its approval.
    let session = first.state(&id);
    let waiting = hld_client::protocol::SessionStatus::WaitingInput;
    assert_eq!(session.status, waiting, "{session:#?}");
    assert_eq!(first.approvals(Some(&id)).len(), 1);
}

fn assert_graceful_exit(signal: Signal) {
    let mut d = TestDaemon::start();
    let mut idle = d.conn();
    idle.try_request::<Health>(NoParams {}).unwrap();
    d.signal(signal);
    let (status, took) = d
        .wait_exit(Duration::from_secs(3))
        .expect("daemon exits after the signal");
    assert!(status.success(), "{signal}: exit status {status}");
    assert!(took < Duration::from_secs(2), "{signal}: took {took:?}");
    assert!(!d.socket.exists(), "{signal}: socket removed");
    assert!(
        d.log_text().contains(signal.as_str()),
        "{signal} is logged by name"
    );
}

#[test]
fn sigterm_sigint_and_sighup_shut_down_gracefully() {
    assert_graceful_exit(Signal::SIGTERM);
    assert_graceful_exit(Signal::SIGINT);
    assert_graceful_exit(Signal::SIGHUP);
}

#[test]
fn the_shutdown_method_replies_then_exits() {
    let mut d = TestDaemon::start();
    let reply = d.request::<Shutdown>(NoParams {});
    assert_eq!(reply.message, "Shutting down gracefully");
    let (status, _) = d.wait_exit(Duration::from_secs(3)).expect("exits");
    assert!(status.success());
    assert!(!d.socket.exists());
}

#[test]
fn introspection_methods() {
    let d = TestDaemon::start();
    let init = d.request::<Initialize>(NoParams {});
    assert_eq!(init.server_info.name, "hld");
    assert_eq!(init.server_info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(init.protocol_version, "2.0");
    assert_eq!(
        d.request::<Version>(NoParams {}).version,
        env!("CARGO_PKG_VERSION")
    );
    let set = d.request::<SetLogLevel>(SetLogLevelParams {
        level: "Warn".into(),
    });
    assert_eq!(
        set,
        SetLogLevelResult {
            level: "warn".into(),
            success: true
        }
    );
    let health = d.request::<Health>(NoParams {});
    assert_eq!(health.status, "ok");
    assert_eq!(health.version, env!("CARGO_PKG_VERSION"));
}

#[test]
fn list_and_describe_methods_match_what_is_served() {
    let d = TestDaemon::start();
    let listed = d.request::<ListMethods>(NoParams {});
    assert!(
        listed.iter().all(|m| !m.description.is_empty()),
        "{listed:?}"
    );
    let names: BTreeSet<String> = listed.iter().map(|m| m.name.clone()).collect();
    assert_eq!(names.len(), listed.len(), "no duplicates");
    // The typed decode checks each entry's `params` (an array) and `returns` (a string).
    let described: BTreeSet<String> = d
        .request::<DescribeMethods>(NoParams {})
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, described);
    for name in [
        Health::NAME,
        Initialize::NAME,
        ListMethods::NAME,
        DescribeMethods::NAME,
        Version::NAME,
        SetLogLevel::NAME,
        Shutdown::NAME,
        hld_client::protocol::Subscribe::NAME,
    ] {
        assert!(names.contains(name), "{name} is listed");
    }
    // Every listed method is served (none answers -32601)...
    for name in names {
        if name == "shutdown" || name == "Subscribe" {
            continue;
        }
        let reply = d.call(&name, json!({}));
        assert_ne!(
            reply.pointer("/error/code"),
            Some(&json!(-32601)),
            "{name} is listed but not served"
        );
    }
}
