//! Desktop notifications: the freedesktop Notifications service (`org.freedesktop.
//! Notifications.Notify`) on the session D-Bus, through zbus on the daemon's runtime. A
//! missing or silent bus turns the channel off; it never stops the daemon.

use std::collections::HashMap;
use std::time::Duration;

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

/// A connection to the session bus's notification service.
#[derive(Debug, Clone)]
pub struct Desktop {
    connection: zbus::Connection,
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
        let connect = async {
            zbus::connection::Builder::session()?
                .method_timeout(CALL_TIMEOUT)
                .build()
                .await
        };
        let failure = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
            Ok(Ok(connection)) => {
                tracing::info!("desktop notifications on (session D-Bus)");
                return Some(Desktop { connection });
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
        };
        let message = "desktop notifications off: cannot reach the session D-Bus";
        match wanted {
            Some(true) => tracing::warn!(error = %failure, "{message}"),
            _ => tracing::info!(error = %failure, "{message}"),
        }
        None
    }

    /// Shows `notification`: the session's title, what waits and how to answer.
    pub async fn show(&self, notification: &Notification) {
        let (summary, body) = wording(notification);
        let sent = async {
            let proxy = NotificationsProxy::new(&self.connection).await?;
            let markup = proxy
                .get_capabilities()
                .await?
                .iter()
                .any(|c| c == "body-markup");
            let body = if markup { escape_markup(&body) } else { body };
            proxy
                .notify("hld", 0, "", &summary, &body, &[], HashMap::new(), -1)
                .await
        };
        match sent.await {
            Ok(_) => tracing::debug!(id = %notification.id, "desktop notification shown"),
            Err(e) => tracing::warn!(error = %e, "desktop notification failed"),
        }
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
