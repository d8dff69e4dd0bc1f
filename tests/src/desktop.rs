//! A private session D-Bus for the notification tests: a real `dbus-daemon --session` started
//! per test, and a recorder that owns `org.freedesktop.Notifications` on it (served with zbus
//! on its own thread) and records every notification that arrives.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use crate::{wait_for, WAIT};

/// A `dbus-daemon --session` of its own, killed on drop.
#[derive(Debug)]
pub struct SessionBus {
    /// Its address, for `DBUS_SESSION_BUS_ADDRESS`.
    pub address: String,
    child: Child,
}

impl SessionBus {
    /// Starts the bus and reads its address.
    pub fn start() -> SessionBus {
        SessionBus::start_with(&[])
    }

    /// Starts a bus listening on `address` (e.g. `unix:path=…`), as a bus started again for
    /// the same user is found where the first one was.
    pub fn start_at(address: &str) -> SessionBus {
        SessionBus::start_with(&[&format!("--address={address}")])
    }

    fn start_with(args: &[&str]) -> SessionBus {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon (Debian package dbus-daemon; .ci/run installs it)");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("dbus-daemon's stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon prints its address");
        let address = line.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        SessionBus { address, child }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One notification as the desktop received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub app_name: String,
    pub summary: String,
    pub body: String,
}

/// The recorder: the notification service on a [`SessionBus`]. Stops when dropped.
#[derive(Debug)]
pub struct Recorder {
    shown: Arc<Mutex<Vec<Shown>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The served interface (`org.freedesktop.Notifications`, as desktop notification daemons
/// serve it): it advertises `body-markup`, so bodies arrive escaped.
struct Service {
    shown: Arc<Mutex<Vec<Shown>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Service {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::zvariant::OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut shown = self.shown.lock().unwrap();
        shown.push(Shown {
            app_name,
            summary,
            body,
        });
        shown.len() as u32
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into(), "body-markup".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "recorder".into(),
            "hld-e2e".into(),
            "1".into(),
            "1.2".into(),
        )
    }

    fn close_notification(&self, _id: u32) {}
}

impl Recorder {
    /// Serves the notification service on the bus at `address`; returns once the name is
    /// owned.
    pub fn start(address: &str) -> Recorder {
        let shown = Arc::new(Mutex::new(Vec::new()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, is_ready) = std::sync::mpsc::channel();
        let (address, service) = (
            address.to_owned(),
            Service {
                shown: Arc::clone(&shown),
            },
        );
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let connection = async {
                    zbus::connection::Builder::address(address.as_str())?
                        .name("org.freedesktop.Notifications")?
                        .serve_at("/org/freedesktop/Notifications", service)?
                        .build()
                        .await
                }
                .await;
                match connection {
                    // Held until the recorder is dropped: the name goes with the connection.
                    Ok(_connection) => {
                        let _ = ready.send(Ok(()));
                        let _ = stopped.await;
                    }
                    Err(e) => {
                        let _ = ready.send(Err(e.to_string()));
                    }
                }
            });
        });
        is_ready
            .recv_timeout(WAIT)
            .expect("the recorder starts")
            .expect("the recorder owns org.freedesktop.Notifications");
        Recorder {
            shown,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// What arrived so far.
    pub fn shown(&self) -> Vec<Shown> {
        self.shown.lock().unwrap().clone()
    }

    /// Waits until at least `n` notifications arrived (within [`WAIT`]) and returns them all.
    pub fn wait_count(&self, n: usize) -> Vec<Shown> {
        wait_for(WAIT, || {
            let shown = self.shown();
            (shown.len() >= n).then_some(shown)
        })
        .unwrap_or_else(|| panic!("{n} desktop notifications expected, got {:?}", self.shown()))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
