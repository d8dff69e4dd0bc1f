//! Notifications end to end: the real daemon and `fake-claude`, a real `dbus-daemon --session`
//! with a recorder owning `org.freedesktop.Notifications`, and a loopback webhook whose URL
//! holds a secret that must never show in the log or in `health`.

use hld_client::protocol::*;
use hld_e2e::desktop::{Recorder, SessionBus};
use hld_e2e::webhook::Webhook;
use hld_e2e::{launch_params, wait_for, DaemonOptions, Subscription, TestDaemon, WAIT};
use serde_json::json;

/// The secret part of the webhook's URL.
const SECRET: &str = "T0KEN-notify-s3cr3t";

/// A daemon running `fake-claude`, with `args`, notifying the desktop of `bus` (if any).
fn daemon(bus: Option<&SessionBus>, hook: Option<&Webhook>, args: &[&str]) -> TestDaemon {
    let mut options = DaemonOptions::fake_claude();
    if let Some(bus) = bus {
        options = options.env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    }
    if let Some(hook) = hook {
        let url = hook.url(&format!("/hooks/{SECRET}?token={SECRET}"));
        options = options.env("HUMANLAYER_NOTIFY_WEBHOOK", &url);
    }
    for arg in args {
        options = options.arg(arg);
    }
    TestDaemon::start_with(options)
}

fn workdir(d: &TestDaemon) -> std::path::PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn launch(d: &TestDaemon, query: &str, title: &str) -> String {
    d.launch(LaunchSessionParams {
        title: Some(title.to_owned()),
        ..launch_params(query, workdir(d))
    })
}

fn notifications(d: &TestDaemon) -> Subscription {
    d.subscribe(SubscribeParams {
        event_types: Some(vec![EventType::Notification]),
        ..Default::default()
    })
}

/// The next `notification` event.
fn next(sub: &mut Subscription) -> Notification {
    match sub.next_event().event {
        Event::Notification(n) => n,
        other => panic!("not a notification: {other:?}"),
    }
}

/// Neither the log nor `health` shows the webhook's secret.
fn assert_secret_kept(d: &TestDaemon) {
    let health = serde_json::to_string(&d.request::<Health>(NoParams {})).unwrap();
    assert!(!health.contains(SECRET), "{health}");
    let log = d.log_text();
    assert!(
        !log.contains(SECRET),
        "the log shows the webhook's URL:\n{log}"
    );
}

#[test]
fn a_waiting_approval_reaches_the_desktop_and_the_webhook_once() {
    let bus = SessionBus::start();
    let desktop = Recorder::start(&bus.address);
    let hook = Webhook::start(&[200]);
    let d = daemon(Some(&bus), Some(&hook), &["--notify-quiet-ms", "1000"]);
    let health = d.request::<Health>(NoParams {});
    let channels = NotificationChannels {
        desktop: true,
        webhook: true,
    };
    assert_eq!(health.notifications, Some(channels));
    let mut sub = notifications(&d);
    let id = launch(&d, "scenario:tool make a file", "Build the parser");

    let first = next(&mut sub);
    let pending = d.wait_approvals(Some(&id), |a| a.len() == 1);
    let approval_id = pending[0].id.clone();
    assert_eq!(first.kind, NotificationKind::Approval);
    assert_eq!(first.session_id, id);
    assert_eq!(first.title, "Build the parser");
    assert!(first.text.starts_with("Write: "), "{first:?}");
    assert!(first.text.ends_with("hello.txt"), "{first:?}");
    assert_eq!(first.approval_id.as_deref(), Some(approval_id.as_str()));
    assert_eq!(first.answer, Some(format!("hlyr approve {approval_id}")));
    assert_eq!(first.folded, 0);

    let shown = desktop.wait_count(1);
    assert_eq!(shown[0].app_name, "hld");
    assert_eq!(shown[0].summary, "Build the parser");
    assert!(shown[0].body.starts_with(&first.text), "{shown:?}");
    assert!(
        shown[0].body.contains(&format!("hlyr deny {approval_id}")),
        "{shown:?}"
    );
    let posted = hook.wait_count(1);
    assert_eq!(posted[0].method, "POST");
    assert!(posted[0].target.starts_with(&format!("/hooks/{SECRET}")));
    assert_eq!(posted[0].body, serde_json::to_value(&first).unwrap());
    assert_eq!(posted[0].body["kind"], "approval");

    // Answered: the session completes, which is notified once more; the approval never again.
    let decided = d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(approval_id.clone()),
        kind: Some("function_call".into()),
        decision: Some("approve".into()),
        comment: None,
    });
    assert!(decided.success, "{decided:?}");
    let second = next(&mut sub);
    assert_eq!(second.kind, NotificationKind::Completed, "{second:?}");
    assert_eq!(second.text, "Completed");
    assert_eq!(second.answer, Some(format!("hlyr send {id} \"…\"")));
    let shown = desktop.wait_count(2);
    let posted = hook.wait_count(2);
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert!(shown[1].body.starts_with("Completed"), "{shown:?}");
    assert_secret_kept(&d);
}

#[test]
fn a_burst_of_approvals_folds_into_two_notifications() {
    let bus = SessionBus::start();
    let desktop = Recorder::start(&bus.address);
    let mut options = DaemonOptions::fake_claude()
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .env("FAKE_CLAUDE_COMMAND", "echo a && echo <b>")
        .arg("--notify-quiet-ms")
        .arg("5000");
    options.args.push("--notify-desktop=true".into());
    let d = TestDaemon::start_with(options);
    let mut sub = notifications(&d);
    let id = launch(&d, "scenario:bash list", "Burst");
    let first = next(&mut sub);
    assert_eq!(first.kind, NotificationKind::Approval);
    assert_eq!(first.text, "Bash: echo a && echo <b>");
    // Four more approvals of the same session, in the quiet period the first one started.
    for n in 0..4 {
        d.request::<CreateApproval>(CreateApprovalParams {
            session_id: Some(id.clone()),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": format!("make step{n}")})),
            ..Default::default()
        });
    }
    let fold = next(&mut sub);
    assert_eq!(fold.kind, NotificationKind::Approval);
    assert_eq!(fold.folded, 4, "{fold:?}");
    assert_eq!(fold.text, "4 more: 4 approvals");
    let shown = desktop.wait_count(2);
    assert_eq!(shown.len(), 2, "{shown:?}");
    // The server reads bodies as markup: the command arrives escaped, shown as typed.
    assert!(
        shown[0]
            .body
            .starts_with("Bash: echo a &amp;&amp; echo &lt;b&gt;"),
        "{shown:?}"
    );
    assert!(
        shown[1].body.starts_with("4 more: 4 approvals"),
        "{shown:?}"
    );
}

#[test]
fn an_auto_approved_call_does_not_notify_but_its_completion_does() {
    let bus = SessionBus::start();
    let desktop = Recorder::start(&bus.address);
    let d = daemon(Some(&bus), None, &[]);
    let mut sub = notifications(&d);
    let id = d.launch(LaunchSessionParams {
        auto_accept_edits: Some(true),
        ..launch_params("scenario:tool write the file", workdir(&d))
    });
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let approvals = d.request::<FetchApprovals>(FetchApprovalsParams::default());
    assert!(approvals.approvals.is_empty(), "{approvals:?}");
    let call = d
        .conversation(&id)
        .into_iter()
        .find(|e| e.tool_name.as_deref() == Some("Write"))
        .unwrap();
    assert_eq!(call.approval_status.as_deref(), Some("approved"));
    // The first notification is the completion: the Write, approved by the rule, made none.
    let first = next(&mut sub);
    assert_eq!(first.kind, NotificationKind::Completed, "{first:?}");
    let shown = desktop.wait_count(1);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].body.starts_with("Completed"), "{shown:?}");
}

#[test]
fn approvals_a_rule_decides_in_the_quiet_period_are_not_notified() {
    let d = daemon(None, None, &["--notify-quiet-ms", "5000"]);
    let mut sub = notifications(&d);
    let id = launch(&d, "scenario:bash list", "Bypass later");
    assert_eq!(next(&mut sub).kind, NotificationKind::Approval);
    // Held by the quiet period the first one started, then approved by the bypass.
    for n in 0..2 {
        d.request::<CreateApproval>(CreateApprovalParams {
            session_id: Some(id.clone()),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": format!("make step{n}")})),
            ..Default::default()
        });
    }
    let r = d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        dangerously_skip_permissions: Some(true),
        ..Default::default()
    });
    assert!(r.success);
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    // What is left to say is the completion alone, not "3 more: 2 approvals, completed".
    let last = next(&mut sub);
    assert_eq!(last.kind, NotificationKind::Completed, "{last:?}");
    assert_eq!(last.text, "Completed", "{last:?}");
}

#[test]
fn a_failure_notifies_and_a_kind_turned_off_does_not() {
    let bus = SessionBus::start();
    let desktop = Recorder::start(&bus.address);
    let d = daemon(Some(&bus), None, &["--notify-completed=false"]);
    let mut sub = notifications(&d);
    let done = launch(&d, "scenario:plain hello", "Quiet one");
    assert_eq!(d.wait_ended(&done).status, SessionStatus::Completed);
    let failed = launch(&d, "scenario:error", "Broken one");
    assert_eq!(d.wait_ended(&failed).status, SessionStatus::Failed);
    // The completion came first and was not notified: the failure is the first notification.
    let first = next(&mut sub);
    assert_eq!(first.kind, NotificationKind::Failed, "{first:?}");
    assert_eq!(first.session_id, failed);
    assert!(first.text.starts_with("Failed"), "{first:?}");
    let shown = desktop.wait_count(1);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0].summary, "Broken one");
}

#[test]
fn a_bypass_about_to_end_notifies() {
    let d = daemon(None, None, &["--notify-quiet-ms", "200"]);
    let mut sub = notifications(&d);
    let id = launch(&d, "scenario:plain hello", "Bypassed");
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    // Ends in 61 s: the warning, 60 s before, is due at once.
    let r = d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        dangerously_skip_permissions: Some(true),
        dangerously_skip_permissions_timeout_ms: Some(61_000),
        ..Default::default()
    });
    assert!(r.success);
    let warned = std::iter::from_fn(|| Some(next(&mut sub)))
        .find(|n| n.kind == NotificationKind::BypassExpiring)
        .unwrap();
    assert_eq!(warned.session_id, id);
    assert!(
        warned.text.starts_with("Bypass of permissions ends"),
        "{warned:?}"
    );
    assert_eq!(warned.answer, Some(format!("hlyr settings {id}")));

    // Other changes of its settings repeat the same expiry: it is not warned of again.
    d.request::<UpdateSessionTitle>(UpdateSessionTitleParams {
        session_id: id.clone(),
        title: "Bypassed, renamed".into(),
    });
    let off = d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        dangerously_skip_permissions: Some(false),
        ..Default::default()
    });
    assert!(off.success);
    d.request::<CreateApproval>(CreateApprovalParams {
        session_id: Some(id.clone()),
        tool_name: Some("Bash".into()),
        tool_input: Some(json!({"command": "make it"})),
        ..Default::default()
    });
    let after = next(&mut sub);
    assert_eq!(after.kind, NotificationKind::Approval, "{after:?}");
    assert_eq!(after.text, "Bash: make it", "{after:?}");
}

#[test]
fn a_bypass_set_before_a_restart_is_warned_of_after_it() {
    let base = hld_e2e::short_tempdir();
    let options = || DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..DaemonOptions::fake_claude()
    };
    // The first daemon does not warn of bypasses.
    let mut first = TestDaemon::start_with(options().arg("--notify-bypass-expiring=false"));
    let id = launch(&first, "scenario:plain hello", "Restarted");
    assert_eq!(first.wait_ended(&id).status, SessionStatus::Completed);
    let r = first.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        dangerously_skip_permissions: Some(true),
        dangerously_skip_permissions_timeout_ms: Some(61_000),
        ..Default::default()
    });
    assert!(r.success);
    first.stop();
    // The next one finds the bypass in the store, and warns at once (it ends within 60 s).
    let hook = Webhook::start(&[200]);
    let url = hook.url(&format!("/hooks/{SECRET}"));
    let _second = TestDaemon::start_with(options().env("HUMANLAYER_NOTIFY_WEBHOOK", &url));
    let posted = hook.wait_count(1);
    assert_eq!(posted[0].body["kind"], "bypass_expiring", "{posted:?}");
    assert_eq!(posted[0].body["session_id"], id.as_str());
    assert_eq!(posted[0].body["title"], "Restarted");
}

#[test]
fn the_webhook_retries_after_500s_then_delivers() {
    let hook = Webhook::start(&[500, 500, 200]);
    let d = daemon(None, Some(&hook), &[]);
    let health = d.request::<Health>(NoParams {});
    assert_eq!(
        health.notifications,
        Some(NotificationChannels {
            desktop: false,
            webhook: true
        })
    );
    let id = launch(&d, "scenario:plain hello", "Hooked");
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let posted = hook.wait_count(3);
    let statuses: Vec<u16> = posted.iter().map(|p| p.status).collect();
    assert_eq!(statuses, [500, 500, 200]);
    assert!(posted.iter().all(|p| p.body == posted[0].body));
    assert_eq!(posted[0].body["kind"], "completed");
    assert_eq!(posted[0].body["session_id"], id.as_str());
    assert_eq!(posted[0].body["title"], "Hooked");
    // The agent, which can send its environment anywhere, never gets the URL.
    let claude_session = d.state(&id).claude_session_id.unwrap();
    let invocation = d.fake_invocation(&claude_session);
    assert_eq!(invocation["env"].get("HUMANLAYER_NOTIFY_WEBHOOK"), None);
    let delivered = wait_for(WAIT, || {
        let log = d.log_text();
        log.contains("webhook delivered").then_some(log)
    })
    .expect("the delivery is logged");
    assert!(
        delivered.contains("webhook failed: status 500"),
        "{delivered}"
    );
    assert_secret_kept(&d);
}

#[test]
fn the_webhook_gives_up_after_its_time_limit() {
    let hook = Webhook::start(&[503]);
    let d = daemon(
        None,
        Some(&hook),
        &["--notify-webhook-time-limit-ms", "1500"],
    );
    let id = launch(&d, "scenario:plain hello", "Hooked");
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let log = wait_for(WAIT, || {
        let log = d.log_text();
        log.contains("gave up").then_some(log)
    })
    .expect("the webhook gives up");
    assert!(log.contains("webhook failed: status 503"), "{log}");
    let attempts = hook.posted().len();
    assert!(attempts >= 2, "retried before giving up: {attempts}");
    assert_secret_kept(&d);
}

#[test]
fn without_a_session_bus_the_daemon_serves_and_still_publishes() {
    let missing = DaemonOptions::fake_claude()
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hld-bus")
        .arg("--notify-desktop=true");
    let d = TestDaemon::start_with(missing);
    let health = d.request::<Health>(NoParams {});
    assert_eq!(health.notifications, Some(NotificationChannels::default()));
    assert!(d.log_text().contains("desktop notifications off"));
    let mut sub = notifications(&d);
    let id = launch(&d, "scenario:plain hello", "No desktop");
    assert_eq!(next(&mut sub).session_id, id);
}

#[test]
fn a_bad_webhook_url_stops_the_start_without_showing_it() {
    let bad = DaemonOptions::default()
        .arg("--notify-webhook")
        .arg(&format!("ftp://host/{SECRET}"));
    let (status, stderr) = TestDaemon::spawn(bad).wait_failure();
    assert!(!status.success());
    assert!(stderr.contains("--notify-webhook"), "{stderr}");
    assert!(stderr.contains("http or https"), "{stderr}");
    assert!(!stderr.contains(SECRET), "{stderr}");
    // `--help` does not show the environment's value either.
    let help = std::process::Command::new(hld_e2e::workspace_bin("hld"))
        .arg("--help")
        .env("HUMANLAYER_NOTIFY_WEBHOOK", format!("https://h/{SECRET}"))
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--notify-webhook"), "{help}");
    assert!(help.contains("--notify-quiet-ms"), "{help}");
    assert!(!help.contains(SECRET), "{help}");
}

#[test]
fn a_session_bus_started_again_gets_the_next_notification() {
    let dir = tempfile::tempdir().unwrap();
    let address = format!("unix:path={}", dir.path().join("bus").display());
    let bus = SessionBus::start_at(&address);
    let first_desktop = Recorder::start(&bus.address);
    // The address as a login session sets it: a path, without the bus's guid.
    let options = DaemonOptions::fake_claude()
        .env("DBUS_SESSION_BUS_ADDRESS", &address)
        .arg("--notify-quiet-ms")
        .arg("0");
    let d = TestDaemon::start_with(options);
    let mut sub = notifications(&d);
    let first = launch(&d, "scenario:plain the first", "First");
    assert_eq!(next(&mut sub).kind, NotificationKind::Completed);
    d.wait_ended(&first);
    first_desktop.wait_count(1);

    // The user's bus goes away and comes back at the same address.
    drop(first_desktop);
    drop(bus);
    let _ = std::fs::remove_file(dir.path().join("bus"));
    let bus = SessionBus::start_at(&address);
    let desktop = Recorder::start(&bus.address);
    launch(&d, "scenario:plain the second", "Second");
    assert_eq!(next(&mut sub).kind, NotificationKind::Completed);
    let shown = desktop.wait_count(1);
    assert_eq!(shown[0].summary, "Second", "{shown:?}");
}
