//! Remote daemons (issue 42): two daemons on this machine, one on its socket and one on
//! `wss://` (loopback, a self-signed certificate from rcgen, the token). The SDK and
//! `hlyr --context` reach both alike; a wrong fingerprint, a wrong token and a contexts file
//! others can read are refused; a subscription over `wss://` comes back after a restart.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use futures::StreamExt;
use hld_client::address::{Address, Fingerprint, Remote, Token, Trust};
use hld_client::protocol::{SessionStatus, SubscribeParams};
use hld_client::{Client, Error, FollowItem, SubscribeOptions, SubscriptionItem};
use hld_e2e::{launch_params, ws, DaemonOptions, TestDaemon};

use crate::hlyr::{hlyr_at, Run};

/// A daemon serving `wss://` on a loopback port with a new self-signed certificate; its
/// address, and the certificate's fingerprint.
pub(super) fn wss_daemon(dir: &Path, port: u16) -> (TestDaemon, String, Fingerprint) {
    wss_daemon_with(dir, port, DaemonOptions::fake_claude())
}

/// [`wss_daemon`], started with `options`.
pub(super) fn wss_daemon_with(
    dir: &Path,
    port: u16,
    options: DaemonOptions,
) -> (TestDaemon, String, Fingerprint) {
    let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    let certified = rcgen::generate_simple_self_signed(names).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let options = options
        .arg("--ws")
        .arg(&format!("127.0.0.1:{port}"))
        .arg("--ws-tls-cert")
        .arg(cert.to_str().unwrap())
        .arg("--ws-tls-key")
        .arg(key.to_str().unwrap());
    let daemon = TestDaemon::start_with(options);
    let address = ws::address_in_log(&daemon.log).expect("the WebSocket address");
    let url = format!("wss://localhost:{}", address.port());
    (daemon, url, Fingerprint::of(certified.cert.der()))
}

/// `far`, stopped, started again: the same daemon (its directory, token and the certificate
/// [`wss_daemon`] wrote in `certs`) on the same port.
pub(super) fn restart_wss(far: &TestDaemon, certs: &Path, port: u16) -> TestDaemon {
    let again = DaemonOptions {
        dir: Some(far.dir.clone()),
        ..DaemonOptions::fake_claude()
    }
    .arg("--ws")
    .arg(&format!("127.0.0.1:{port}"))
    .arg("--ws-tls-cert")
    .arg(certs.join("cert.pem").to_str().unwrap())
    .arg("--ws-tls-key")
    .arg(certs.join("key.pem").to_str().unwrap());
    TestDaemon::start_with(again)
}

/// The token file of `daemon`, as a remote machine keeps it: a private copy.
pub(super) fn token_file(daemon: &TestDaemon, dir: &Path) -> PathBuf {
    let file = dir.join("box.token");
    std::fs::write(&file, ws::token_in(&daemon.dir)).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

/// `hlyr context add box URL --token-file F --fingerprint PIN` in `home`, for the daemon
/// `far` at `url`.
pub(super) fn add_box(
    local: &TestDaemon,
    home: &Path,
    far: &TestDaemon,
    url: &str,
    pin: Fingerprint,
) {
    let token = token_file(far, home);
    let token = token.to_str().unwrap();
    let pin = pin.to_string();
    let add = [
        "context",
        "add",
        "box",
        url,
        "--token-file",
        token,
        "--fingerprint",
        &pin,
    ];
    let run = hlyr(local, home, &add, &[]);
    assert_eq!(run.code, 0, "{run:#?}");
}

fn remote(url: &str, token: &str, pin: Fingerprint) -> Address {
    let token = Token::new(token).unwrap();
    Address::Remote(Remote::new(url, token, Trust::Fingerprint(pin)).unwrap())
}

/// Launches `scenario:tool` and follows it to its end, approving its Write: calls,
/// `Subscribe` and the decision all over `client`'s connection.
async fn approve_a_write(client: &Client, workdir: &Path) -> String {
    let params = launch_params("scenario:tool", workdir);
    let mut follow = client.launch_and_follow(params).await.unwrap();
    let mut approved = 0;
    let mut status = None;
    while let Some(item) = follow.next().await {
        match item.unwrap() {
            FollowItem::ApprovalRequested(approval) => {
                client.approve(&approval.id).await.unwrap();
                approved += 1;
            }
            FollowItem::Ended(state) => status = Some(state.status),
            _ => {}
        }
    }
    assert_eq!(approved, 1);
    assert_eq!(status, Some(SessionStatus::Completed));
    follow.session_id().to_owned()
}

#[tokio::test]
async fn the_sdk_runs_and_approves_agents_on_a_socket_daemon_and_a_wss_daemon_alike() {
    let certs = tempfile::tempdir().unwrap();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let token = ws::token_in(&far.dir);
    let clients = [
        Client::connect_to(&Address::Socket(local.socket.clone()))
            .await
            .unwrap(),
        Client::connect_to(&remote(&url, &token, pin))
            .await
            .unwrap(),
    ];
    let mut ids = Vec::new();
    for (client, daemon) in clients.iter().zip([&local, &far]) {
        let id = approve_a_write(client, &daemon.dir).await;
        let listed = client.list_sessions().await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, id, "each client sees its own daemon");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    assert_eq!(far.state(&ids[1]).status, SessionStatus::Completed);

    let health = clients[1].health().await.unwrap();
    assert_eq!(health.ws_tls_fingerprint, Some(pin.to_string()));
    assert!(
        !format!("{health:?}").contains(&token),
        "health never shows the token"
    );
}

#[tokio::test]
async fn a_conversation_over_the_wss_message_limit_is_read_whole_in_pages() {
    // Two turns reading a 900 kB file each: one event fits a 1 MiB WebSocket message, the
    // conversation does not.
    let certs = tempfile::tempdir().unwrap();
    let options = DaemonOptions::fake_claude().env("FAKE_CLAUDE_BIG_BYTES", "900000");
    let (far, url, pin) = wss_daemon_with(certs.path(), 0, options);
    let token = ws::token_in(&far.dir);
    let local = Client::connect_to(&Address::Socket(far.socket.clone()))
        .await
        .unwrap();
    let first = far.launch(launch_params("scenario:big", &far.dir));
    far.wait_ended(&first);
    let params = hld_client::protocol::ContinueSessionParams {
        session_id: first,
        query: "scenario:big".into(),
        ..Default::default()
    };
    let second = local.continue_session(params).await.unwrap().session_id;
    far.wait_ended(&second);
    let whole = local.get_whole_conversation(&second).await.unwrap();
    let remote = Client::connect_to(&remote(&url, &token, pin))
        .await
        .unwrap();
    let one_call = hld_client::protocol::GetConversationParams {
        session_id: Some(second.clone()),
        ..Default::default()
    };
    assert!(remote
        .get_conversation(one_call)
        .await
        .unwrap_err()
        .is_too_large());
    assert_eq!(remote.get_whole_conversation(&second).await.unwrap(), whole);
    let read = whole.iter().filter_map(|e| e.tool_result_content.as_ref());
    assert_eq!(
        read.filter(|r| r.len() >= 900_000).count(),
        2,
        "both reads whole"
    );
}

#[tokio::test]
async fn a_wrong_fingerprint_a_wrong_token_and_plain_ws_afar_are_refused() {
    let certs = tempfile::tempdir().unwrap();
    let (far, url, pin) = wss_daemon(certs.path(), 0);
    let token = ws::token_in(&far.dir);

    let wrong: Fingerprint = "00".repeat(32).parse().unwrap();
    let e = Client::connect_to(&remote(&url, &token, wrong))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Tls { .. }), "{e:?}");
    let said = e.to_string();
    assert!(
        said.contains(&pin.to_string()),
        "names the fingerprint seen: {said}"
    );

    let roots = Trust::SystemRoots;
    let untrusted = Remote::new(&url, Token::new(&token).unwrap(), roots).unwrap();
    let e = Client::connect_to(&Address::Remote(untrusted))
        .await
        .unwrap_err();
    assert!(e.to_string().contains(&pin.to_string()), "{e}");

    let e = Client::connect_to(&remote(&url, "not-the-token-0123456789", pin))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Rejected { status: 401, .. }), "{e:?}");

    let token = Token::new(&token).unwrap();
    let e = Remote::new("ws://192.0.2.1:7777", token, Trust::SystemRoots).unwrap_err();
    assert!(e.to_string().contains("in clear"), "{e}");
}

/// `hlyr` with its own home (where `contexts.json` lives), the local daemon's socket in the
/// environment, and `env`.
pub(super) fn hlyr(local: &TestDaemon, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    hlyr_at(&local.socket, home, args, env)
}

/// The (context, id) of each row `hlyr approvals --all-contexts --json` printed.
fn context_ids(run: &Run) -> Vec<(String, String)> {
    let rows: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let field = |row: &serde_json::Value, name: &str| row[name].as_str().unwrap().to_owned();
    let rows = rows.as_array().expect("a list").iter();
    rows.map(|r| (field(r, "context"), field(r, "id")))
        .collect()
}

fn session_ids(run: &Run) -> Vec<String> {
    assert_eq!(run.code, 0, "{run:#?}");
    let listed: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rows = listed.as_array().expect("a list");
    rows.iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn hlyr_context_reaches_either_daemon_in_its_order_of_precedence() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(home, 0);
    let local_id = local.launch(launch_params("scenario:plain hello", &local.dir));
    let far_id = far.launch(launch_params("scenario:plain hello", &far.dir));
    let token = token_file(&far, home);

    let pin_plain = pin.to_string().replace(':', "").to_ascii_lowercase();
    let add = [
        "context",
        "add",
        "box",
        &url,
        "--token-file",
        token.to_str().unwrap(),
        "--fingerprint",
        &pin_plain,
    ];
    let run = hlyr(&local, home, &add, &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let file = home.join("config/humanlayer/contexts.json");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let sessions = ["sessions", "--json"];
    assert_eq!(
        session_ids(&hlyr(&local, home, &sessions, &[])),
        [local_id.as_str()]
    );
    let flagged = ["--context", "box", "sessions", "--json"];
    assert_eq!(
        session_ids(&hlyr(&local, home, &flagged, &[])),
        [far_id.as_str()]
    );
    let box_env = [("HLD_CONTEXT", "box")];
    assert_eq!(
        session_ids(&hlyr(&local, home, &sessions, &box_env)),
        [far_id.as_str()]
    );
    let local_flag = ["--context", "local", "sessions", "--json"];
    let run = hlyr(&local, home, &local_flag, &box_env);
    assert_eq!(
        session_ids(&run),
        [local_id.as_str()],
        "--context wins over HLD_CONTEXT"
    );

    let run = hlyr(&local, home, &["context", "use", "box"], &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        session_ids(&hlyr(&local, home, &sessions, &[])),
        [far_id.as_str()]
    );
    let local_env = [("HLD_CONTEXT", "local")];
    let run = hlyr(&local, home, &sessions, &local_env);
    assert_eq!(
        session_ids(&run),
        [local_id.as_str()],
        "HLD_CONTEXT wins over `context use`"
    );
    let run = hlyr(&local, home, &["context", "list"], &[]);
    assert!(run.stdout.contains("* box"), "{run:#?}");

    let run = hlyr(&local, home, &["context", "remove", "box"], &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        session_ids(&hlyr(&local, home, &sessions, &[])),
        [local_id.as_str()]
    );
    let run = hlyr(&local, home, &flagged, &[]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("no context named"), "{}", run.stderr);
}

#[test]
fn a_contexts_file_others_can_read_is_refused_whatever_it_holds() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let dir = home.join("config/humanlayer");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("contexts.json");
    std::fs::write(&file, "{}").unwrap();
    for mode in [0o644, 0o620] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let run = hlyr(&local, home, &["sessions"], &[]);
        assert_eq!(run.code, 2, "{run:#?}");
        assert!(run.stderr.contains("refusing"), "{}", run.stderr);
        assert!(run.stderr.contains("chmod 600"), "{}", run.stderr);
    }
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(hlyr(&local, home, &["sessions"], &[]).code, 0);
}

#[test]
fn hlyr_daemon_url_prints_the_wss_address_and_fingerprint_and_the_token_only_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let (far, url, pin) = wss_daemon(home.path(), 0);
    let token = ws::token_in(&far.dir);
    let port = url.rsplit(':').next().unwrap();
    let run = hlyr(&far, home.path(), &["daemon", "url"], &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains(&format!("wss://127.0.0.1:{port}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("fingerprint {pin}")),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains(&token),
        "no token without --show-token"
    );
    let run = hlyr(&far, home.path(), &["daemon", "url", "--show-token"], &[]);
    assert!(
        run.stdout.contains(&format!("token {token}")),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn a_subscription_over_wss_comes_back_when_its_daemon_restarts() {
    let certs = tempfile::tempdir().unwrap();
    let (mut far, url, pin) = wss_daemon(certs.path(), 0);
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    let token = ws::token_in(&far.dir);
    let address = remote(&url, &token, pin);
    let client = Client::connect_to(&address).await.unwrap();
    let options = SubscribeOptions { reconnect: true };
    let mut events = client
        .subscribe(SubscribeParams::default(), options)
        .await
        .unwrap();
    far.stop();
    let again = restart_wss(&far, certs.path(), port);
    match events.next().await {
        Some(Ok(SubscriptionItem::Reconnected { .. })) => {}
        other => panic!("expected a reconnection, got {other:?}"),
    }
    let id = again.launch(launch_params("scenario:plain hello", &again.dir));
    while let Some(item) = events.next().await {
        if let SubscriptionItem::Event(timed) = item.unwrap() {
            if timed.event.session_id() == Some(id.as_str()) {
                break;
            }
        }
    }
}

#[test]
fn hlyr_approvals_all_contexts_lists_every_daemons_approvals_and_says_which_is_down() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(home, 0);
    add_box(&local, home, &far, &url, pin);
    let gone = home.join("gone.sock");
    let add_gone = ["context", "add", "gone", gone.to_str().unwrap()];
    assert_eq!(hlyr(&local, home, &add_gone, &[]).code, 0);
    let mut pending = Vec::new();
    for daemon in [&local, &far] {
        let id = daemon.launch(launch_params("scenario:tool", &daemon.dir));
        let approvals = daemon.wait_approvals(Some(&id), |a| a.len() == 1);
        pending.push(approvals[0].id.clone());
    }

    let run = hlyr(
        &local,
        home,
        &["approvals", "--all-contexts", "--json"],
        &[],
    );
    assert_eq!(run.code, 3, "one daemon is down: {run:#?}");
    assert!(run.stderr.contains("gone:"), "{}", run.stderr);
    let expected = [
        ("local".to_owned(), pending[0].clone()),
        ("box".to_owned(), pending[1].clone()),
    ];
    assert_eq!(context_ids(&run), expected);
    let run = hlyr(&local, home, &["approvals", "--all-contexts"], &[]);
    assert!(run.stdout.contains("CONTEXT"), "{}", run.stdout);
}

#[test]
fn a_context_that_reaches_a_listed_daemon_again_is_listed_once() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    // `again` names the local daemon's socket through a link to its directory.
    let link = home.join("link");
    std::os::unix::fs::symlink(local.socket.parent().unwrap(), &link).unwrap();
    let again = link.join(local.socket.file_name().unwrap());
    let add = ["context", "add", "again", again.to_str().unwrap()];
    assert_eq!(hlyr(&local, home, &add, &[]).code, 0);
    let id = local.launch(launch_params("scenario:tool", &local.dir));
    let pending = local.wait_approvals(Some(&id), |a| a.len() == 1);

    let all = ["approvals", "--all-contexts", "--json"];
    let run = hlyr(&local, home, &all, &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let expected = [("local".to_owned(), pending[0].id.clone())];
    assert_eq!(context_ids(&run), expected);
    let run = hlyr(&local, home, &["approvals", "--all-contexts"], &[]);
    assert!(
        run.stderr
            .contains("context again reaches the same daemon as local"),
        "{run:#?}"
    );
}
