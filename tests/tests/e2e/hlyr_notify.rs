//! `hlyr --notify` against a daemon with a notifier: each `notification` rings the terminal once
//! (the bell and an OSC 9, or OSC 777 where the terminal says it takes it), and the desktop is
//! left to a daemon that shows desktop notifications (a real `dbus-daemon --session` with a
//! recorder owning `org.freedesktop.Notifications`); an approval asked before `launch`
//! subscribed rings too, once; `hlyr watch --notify` rings for every session.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use hld_client::protocol::{Event, EventType, LaunchSessionParams, SubscribeParams};
use hld_e2e::desktop::{Recorder, SessionBus};
use hld_e2e::pty::{self, Terminal};
use hld_e2e::{launch_params, wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

use crate::hlyr::workdir;

/// The prompt of a tool call's approval, after `allow TOOL?`.
const CHOICES: &str = "[a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip";

/// A `notify-send` that logs its arguments (`|` after each, a line per call) into
/// `notified.log` under `d`'s directory. Returns the `PATH` that finds it first, and a reader
/// of the log.
pub(crate) fn notify_send(d: &TestDaemon) -> (String, Box<dyn Fn() -> String>) {
    let bin = d.dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = d.dir.join("notified.log");
    let script = bin.join("notify-send");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" >> {}\necho >> {}\n",
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    // A line is written in two appends (the arguments, then the newline): only whole lines
    // are read, so a reader never sees one half written.
    let read = move || {
        let mut text = std::fs::read_to_string(&log).unwrap_or_default();
        text.truncate(text.rfind('\n').map_or(0, |end| end + 1));
        text
    };
    (path, Box::new(read))
}

/// `hlyr ARGS` on a new terminal against `d`, with `env` on top.
fn on_terminal(d: &TestDaemon, args: &[&str], env: &[(&str, &str)]) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(args);
    for (key, value) in env {
        cmd.env(key, value);
    }
    Terminal::spawn(cmd, 40, 120)
}

/// Waits until the terminal has rung `count` times.
#[track_caller]
pub(crate) fn wait_bells(term: &Terminal, count: usize) {
    let rung = wait_for(WAIT, || {
        (term.emulator().screen().audible_bell_count() >= count).then_some(())
    });
    // One lock of the emulator at a time: the count is read before the screen.
    let rang = term.emulator().screen().audible_bell_count();
    assert!(
        rung.is_some(),
        "the terminal rang {rang} times, not {count}; it shows:\n{}",
        term.screen_text()
    );
}

#[test]
fn launch_notify_rings_once_and_leaves_the_desktop_to_a_daemon_that_shows_it() {
    let bus = SessionBus::start();
    let recorder = Recorder::start(&bus.address);
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude().env("DBUS_SESSION_BUS_ADDRESS", &bus.address),
    );
    let (path, read_log) = notify_send(&d);
    let wd = workdir(&d);
    let mut term = on_terminal(
        &d,
        &["launch", "--notify", "-w", &wd, "scenario:bash list"],
        &[("PATH", &path)],
    );
    term.wait_screen(CHOICES);
    let shown = recorder.wait_count(1);
    assert!(shown[0].body.contains("Bash: ls"), "{shown:?}");
    wait_bells(&term, 1);
    assert_eq!(
        term.output()
            .matches("\x07\x1b]9;scenario:bash list: Bash: ls\x07")
            .count(),
        1
    );

    term.send("a");
    term.wait_screen("✓ completed");
    assert_eq!(crate::hlyr_converse::ended(&mut term), 0);
    // The end of the turn rings too, once; the daemon's desktop notification stands for
    // hlyr's own.
    assert_eq!(term.emulator().screen().audible_bell_count(), 2);
    assert_eq!(term.output().matches("\x1b]9;").count(), 2);
    assert_eq!(
        read_log(),
        "",
        "notify-send ran beside the daemon's desktop"
    );
}

/// A socket in front of the daemon's that relays each connection, but holds a `Subscribe`
/// sent after a `launchSession` until [released](HeldSubscribe::release): a follower's
/// subscription then reaches the daemon after whatever the launched session did meanwhile.
struct HeldSubscribe {
    socket: PathBuf,
    released: Arc<(Mutex<bool>, Condvar)>,
    stop: Arc<AtomicBool>,
}

impl HeldSubscribe {
    fn start(d: &TestDaemon) -> HeldSubscribe {
        let socket = d.dir.join("held.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let released = Arc::new((Mutex::new(false), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let launched = Arc::new(AtomicBool::new(false));
        let (daemon, held, stopped) = (d.socket.clone(), released.clone(), stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                let (Ok(client), Ok(upstream)) = (client, UnixStream::connect(&daemon)) else {
                    continue;
                };
                let (mut from, mut to) =
                    (upstream.try_clone().unwrap(), client.try_clone().unwrap());
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
                let (launched, held) = (launched.clone(), held.clone());
                std::thread::spawn(move || relay_holding(client, upstream, &launched, &held));
            }
        });
        HeldSubscribe {
            socket,
            released,
            stop,
        }
    }

    /// Lets the held subscriptions, and any later, through.
    fn release(&self) {
        let (released, changed) = &*self.released;
        *released.lock().unwrap() = true;
        changed.notify_all();
    }
}

impl Drop for HeldSubscribe {
    fn drop(&mut self) {
        self.release();
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the listener, which then stops.
        let _ = UnixStream::connect(&self.socket);
    }
}

/// Relays what a client sends to the daemon, a chunk at a time; a chunk that subscribes after
/// a launch waits until `released`.
fn relay_holding(
    mut client: UnixStream,
    mut upstream: UnixStream,
    launched: &AtomicBool,
    released: &(Mutex<bool>, Condvar),
) {
    let mut chunk = [0u8; 65536];
    while let Ok(n @ 1..) = client.read(&mut chunk) {
        let text = String::from_utf8_lossy(&chunk[..n]);
        if text.contains(r#""method":"launchSession""#) {
            launched.store(true, Ordering::SeqCst);
        } else if text.contains(r#""method":"Subscribe""#) && launched.load(Ordering::SeqCst) {
            let (done, changed) = released;
            let done = done.lock().unwrap();
            drop(changed.wait_while(done, |done| !*done).unwrap());
        }
        if upstream.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    let _ = upstream.shutdown(std::net::Shutdown::Write);
}

/// An approval asked, and notified, between the launch and the subscription that follows the
/// session is not missed: `launch --notify` finds it waiting and rings once, and its
/// notification does not ring again.
#[test]
fn launch_notify_rings_for_an_approval_asked_before_it_subscribed() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (path, _) = notify_send(&d);
    let mut events = d.subscribe(SubscribeParams {
        event_types: Some(vec![EventType::Notification]),
        ..Default::default()
    });
    let held = HeldSubscribe::start(&d);
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &held.socket);
    cmd.env("PATH", &path);
    cmd.args([
        "launch",
        "--notify",
        "-w",
        &workdir(&d),
        "scenario:bash list",
    ]);
    let mut term = Terminal::spawn(cmd, 40, 120);
    // The approval's notification went out while hlyr's subscription was held.
    loop {
        if let Event::Notification(n) = events.next_event().event {
            assert!(n.approval_id.is_some(), "{n:?}");
            break;
        }
    }
    held.release();
    term.wait_screen(CHOICES);
    wait_bells(&term, 1);
    // In the daemon's words, as its notification says it.
    let output = term.output();
    let told = "\x07\x1b]9;scenario:bash list: Bash: ls\x07";
    assert_eq!(output.matches(told).count(), 1, "{output:?}");
    term.send("a");
    term.wait_screen("✓ completed");
    assert_eq!(crate::hlyr_converse::ended(&mut term), 0);
    // Once for the approval, once for the turn's end.
    assert_eq!(term.emulator().screen().audible_bell_count(), 2);
    assert_eq!(term.output().matches("\x1b]9;").count(), 2);
}

#[test]
fn watch_notify_rings_once_per_notification_of_any_session_with_osc_777_on_vte() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let wd = workdir(&d);
    let mut events = d.subscribe(SubscribeParams {
        event_types: Some(vec![EventType::Notification]),
        ..Default::default()
    });
    let term = on_terminal(&d, &["watch", "--notify"], &[("VTE_VERSION", "7600")]);
    term.wait_screen("no sessions");
    let launch = |title: &str| {
        d.launch(LaunchSessionParams {
            title: Some(title.to_owned()),
            ..launch_params("scenario:bash list", Path::new(&wd))
        })
    };
    launch("First agent");
    launch("Second; agent");
    let mut ids = Vec::new();
    while ids.len() < 2 {
        if let Event::Notification(n) = events.next_event().event {
            ids.push(n.id);
        }
    }
    wait_bells(&term, 2);
    term.wait_screen("approve Bash: ls");
    let output = term.output();
    assert_eq!(
        output
            .matches("\x07\x1b]777;notify;First agent;Bash: ls\x07")
            .count(),
        1,
        "{output:?}"
    );
    // A `;` in the title would end it early.
    assert_eq!(
        output
            .matches("\x07\x1b]777;notify;Second, agent;Bash: ls\x07")
            .count(),
        1,
        "{output:?}"
    );
    assert_eq!(output.matches("\x1b]9;").count(), 0);
    assert_eq!(term.emulator().screen().audible_bell_count(), 2);

    // Without --notify, nothing rings.
    let quiet = on_terminal(&d, &["watch"], &[]);
    quiet.wait_screen("approve Bash: ls");
    launch("Third agent");
    quiet.wait_screen("Third agent");
    assert_eq!(quiet.emulator().screen().audible_bell_count(), 0);
    assert!(!quiet.output().contains("\x1b]"), "{:?}", quiet.output());
}
