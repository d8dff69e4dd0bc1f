//! Desktop notifications: the freedesktop Notifications service (`org.freedesktop.
//! Notifications.Notify`) on the session D-Bus, through zbus on the daemon's runtime. A
//! missing or silent bus at start turns the channel off; it never stops the daemon. A bus
//! that goes away later (the user logged out and in) is connected to again by the next
//! notification.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;

use hld_client::protocol::{Notification, NotificationKind};

/// How long connecting to the session bus may take at start-up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one notification may take to be accepted.
const CALL_TIMEOUT: Duration = Duration::from_secs(5);

#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    /// Shows a notification; returns its id.
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, zbus::zvariant::Value<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    /// What the server supports: `body-markup` means the body is read as markup.
    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;
}

/// A connection to the session bus's notification service, opened again when it broke.
#[derive(Debug, Clone)]
pub struct Desktop {
    /// `None` after a failed send: the next notification connects again.
    connection: Arc<Mutex<Option<zbus::Connection>>>,
}

/// Connects to the session bus within [`CONNECT_TIMEOUT`].
async fn open() -> Result<zbus::Connection, String> {
    let connect = async {
        zbus::connection::Builder::session()?
            .method_timeout(CALL_TIMEOUT)
            .build()
            .await
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())),
    }
}

/// Sends one notification on `connection`.
async fn send(connection: &zbus::Connection, summary: &str, body: &str) -> zbus::Result<u32> {
    let proxy = NotificationsProxy::new(connection).await?;
    let markup = proxy
        .get_capabilities()
        .await?
        .iter()
        .any(|c| c == "body-markup");
    let body = if markup {
        escape_markup(body)
    } else {
        body.to_owned()
    };
    proxy
        .notify("hld", 0, "", summary, &body, &[], HashMap::new(), -1)
        .await
}

/// The body escaped for a server that reads it as markup (`<`, `>` and `&` shown as typed).
fn escape_markup(body: &str) -> String {
    body.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Desktop {
    /// Connects when `wanted` says so (`None`: when `DBUS_SESSION_BUS_ADDRESS` is set), within
    /// [`CONNECT_TIMEOUT`]; `None` (with a log line) when off or unreachable.
    pub async fn connect(wanted: Option<bool>) -> Option<Desktop> {
        let asked = match wanted {
            Some(on) => on,
            None => std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty()),
        };
        if !asked {
            return None;
        }
        let failure = match open().await {
            Ok(connection) => {
                tracing::info!("desktop notifications on (session D-Bus)");
                let connection = Arc::new(Mutex::new(Some(connection)));
                return Some(Desktop { connection });
            }
            Err(failure) => failure,
        };
        let message = "desktop notifications off: cannot reach the session D-Bus";
        match wanted {
            Some(true) => tracing::warn!(error = %failure, "{message}"),
            _ => tracing::info!(error = %failure, "{message}"),
        }
        None
    }

    /// Shows `notification`: the session's title, what waits and how to answer. A send that
    /// fails drops the connection and is tried once more on a new one.
    pub async fn show(&self, notification: &Notification) {
        let (summary, body) = wording(notification);
        // Held while sending: notifications go one at a time, in order.
        let mut slot = self.connection.lock().await;
        let mut failure = None;
        for _ in 0..2 {
            let connection = match slot.take() {
                Some(connection) => connection,
                None => match open().await {
                    Ok(connection) => connection,
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                },
            };
            match send(&connection, &summary, &body).await {
                Ok(_) => {
                    *slot = Some(connection);
                    return tracing::debug!(id = %notification.id, "desktop notification shown");
                }
                Err(e) => failure = Some(e.to_string()),
            }
        }
        let error = failure.unwrap_or_default();
        tracing::warn!(error = %error, "desktop notification failed");
    }
}

/// The summary (the session's title) and the body (what waits, then how to answer).
fn wording(n: &Notification) -> (String, String) {
    let summary = match n.title.trim() {
        "" => format!("hld session {}", n.session_id),
        title => title.to_owned(),
    };
    let answer = match (&n.kind, &n.approval_id, &n.answer) {
        (NotificationKind::Approval, Some(id), _) => {
            Some(format!("hlyr approve {id} · hlyr deny {id}"))
        }
        (_, _, answer) => answer.clone(),
    };
    let body = match answer {
        Some(answer) => format!("{}\n{answer}", n.text),
        None => n.text.clone(),
    };
    (summary, body)
}
