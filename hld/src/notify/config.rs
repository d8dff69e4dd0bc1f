//! The notifier's flags and `humanlayer.json` keys, resolved: which kinds notify, where, and
//! the quiet period. The webhook's URL is a secret: no `Debug`, log line or error shows it.

use std::time::Duration;

use hld_client::config::{config_file, config_file_path, config_file_value};
use hld_client::protocol::NotificationKind;

/// The notifier's command-line flags (heading "Notifications" of `hld --help`).
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Notifications")]
pub struct NotifyArgs {
    /// Desktop notifications over D-Bus (freedesktop) [default: on when
    /// DBUS_SESSION_BUS_ADDRESS names a session bus that answers].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_desktop: Option<bool>,
    /// POST each notification as JSON to this http(s) URL (ntfy, a Slack-compatible service,
    /// a script). The URL is a secret: prefer the environment variable, which other users
    /// cannot read in the process list.
    #[arg(
        long,
        env = "HUMANLAYER_NOTIFY_WEBHOOK",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub notify_webhook: Option<WebhookUrl>,
    /// Notify when a tool call waits for approval [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_approval: Option<bool>,
    /// Notify when an agent asks a question [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_question: Option<bool>,
    /// Notify when a session completes a turn [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_completed: Option<bool>,
    /// Notify when a session fails [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_failed: Option<bool>,
    /// Notify when a session stops at a usage limit [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_usage_limit: Option<bool>,
    /// Notify 60 s before a bypass of permissions ends [default: true].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub notify_bypass_expiring: Option<bool>,
    /// A session's quiet period, in milliseconds: the first notification of a burst goes out
    /// at once, the rest of the period's fold into one more at its end [default: 10000].
    #[arg(long, value_name = "MS")]
    pub notify_quiet_ms: Option<u64>,
    /// How long the webhook retries one notification before giving up, in milliseconds.
    #[arg(long, default_value_t = 30_000, value_name = "MS", hide = true)]
    pub notify_webhook_time_limit_ms: u64,
}

/// The webhook URL as given (checked by [`NotifyConfig::resolve`]); `Debug` shows `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookUrl(String);

impl std::fmt::Debug for WebhookUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookUrl(<redacted>)")
    }
}

impl std::str::FromStr for WebhookUrl {
    type Err = std::convert::Infallible;

    /// Never fails: a refusal from clap would echo the value, so it is checked later.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(WebhookUrl(s.trim().to_owned()))
    }
}

/// A checked webhook: an http or https URL with a host. `Debug` shows only its scheme.
#[derive(Clone)]
pub struct Webhook {
    pub url: reqwest::Url,
    /// How long one notification is retried.
    pub time_limit: Duration,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("scheme", &self.url.scheme())
            .field("time_limit", &self.time_limit)
            .finish_non_exhaustive()
    }
}

impl Webhook {
    /// Checks `url`; the error never repeats it.
    fn parse(url: &str, from: &str, time_limit: Duration) -> Result<Webhook, String> {
        let url = reqwest::Url::parse(url)
            .map_err(|e| format!("{from} is not a URL ({e}); the value is not shown"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "{from} must be an http or https URL, not {}:; the value is not shown",
                url.scheme()
            ));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(format!("{from} has no host; the value is not shown"));
        }
        Ok(Webhook { url, time_limit })
    }
}

/// What the notifier does, resolved from flags, then `humanlayer.json`, then defaults.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// `Some(on)` when set; `None`: on if a session bus answers.
    pub desktop: Option<bool>,
    pub webhook: Option<Webhook>,
    /// The kinds turned off.
    pub off: Vec<NotificationKind>,
    pub quiet: Duration,
}

/// The default quiet period per session.
const DEFAULT_QUIET: Duration = Duration::from_secs(10);

impl NotifyConfig {
    /// Resolves `args` against `humanlayer.json`; a bad URL or value is an error.
    pub fn resolve(args: &NotifyArgs) -> Result<NotifyConfig, String> {
        let time_limit = Duration::from_millis(args.notify_webhook_time_limit_ms.max(1));
        let webhook = match args.notify_webhook.as_ref().filter(|u| !u.0.is_empty()) {
            Some(url) => Some(Webhook::parse(
                &url.0,
                "--notify-webhook (or HUMANLAYER_NOTIFY_WEBHOOK)",
                time_limit,
            )?),
            None => match config_file_value("notify_webhook")? {
                Some(url) => Some(Webhook::parse(
                    url.trim(),
                    &format!("notify_webhook in {}", config_file_path().display()),
                    time_limit,
                )?),
                None => None,
            },
        };
        let kinds = [
            (
                NotificationKind::Approval,
                args.notify_approval,
                "notify_approval",
            ),
            (
                NotificationKind::Question,
                args.notify_question,
                "notify_question",
            ),
            (
                NotificationKind::Completed,
                args.notify_completed,
                "notify_completed",
            ),
            (
                NotificationKind::Failed,
                args.notify_failed,
                "notify_failed",
            ),
            (
                NotificationKind::UsageLimit,
                args.notify_usage_limit,
                "notify_usage_limit",
            ),
            (
                NotificationKind::BypassExpiring,
                args.notify_bypass_expiring,
                "notify_bypass_expiring",
            ),
        ];
        let mut off = Vec::new();
        for (kind, flag, key) in kinds {
            if !flag_or_key(flag, key)?.unwrap_or(true) {
                off.push(kind);
            }
        }
        let quiet_ms = match args.notify_quiet_ms {
            Some(ms) => Some(ms),
            None => config_key::<u64>("notify_quiet_ms", "a number of milliseconds")?,
        };
        Ok(NotifyConfig {
            desktop: flag_or_key(args.notify_desktop, "notify_desktop")?,
            webhook,
            off,
            quiet: quiet_ms.map_or(DEFAULT_QUIET, Duration::from_millis),
        })
    }

    /// Whether notifications of `kind` are sent (and published).
    pub fn wants(&self, kind: &NotificationKind) -> bool {
        !self.off.contains(kind)
    }
}

/// The flag if given, else the boolean `key` of `humanlayer.json`.
fn flag_or_key(flag: Option<bool>, key: &str) -> Result<Option<bool>, String> {
    match flag {
        Some(on) => Ok(Some(on)),
        None => config_key::<bool>(key, "true or false"),
    }
}

/// `key` of `humanlayer.json` read as a `T`; absent or null is `None`, another type an error.
fn config_key<T: serde::de::DeserializeOwned>(key: &str, what: &str) -> Result<Option<T>, String> {
    match config_file()?.as_ref().and_then(|value| value.get(key)) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|_| format!("{key} in {} must be {what}", config_file_path().display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        notify: NotifyArgs,
    }

    fn resolve(args: &[&str]) -> Result<NotifyConfig, String> {
        let cli = Cli::try_parse_from(std::iter::once("hld").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        NotifyConfig::resolve(&cli.notify)
    }

    #[test]
    fn kinds_are_on_unless_turned_off() {
        let config = resolve(&["--notify-completed=false", "--notify-failed"]).unwrap();
        assert_eq!(config.off, vec![NotificationKind::Completed]);
        assert!(config.wants(&NotificationKind::Failed));
        assert_eq!(config.quiet, DEFAULT_QUIET);
        assert_eq!(config.desktop, None);
        let config = resolve(&["--notify-desktop", "--notify-quiet-ms", "250"]).unwrap();
        assert_eq!(config.desktop, Some(true));
        assert_eq!(config.quiet, Duration::from_millis(250));
    }

    #[test]
    fn a_webhook_must_be_http_and_its_url_never_shows() {
        let secret = "https://hooks.example/T0/very-secret-token";
        let config = resolve(&["--notify-webhook", secret]).unwrap();
        assert!(config.webhook.is_some());
        assert!(!format!("{config:?}").contains("very-secret-token"));
        for bad in [
            "ftp://host/very-secret-token",
            "very-secret-token",
            "http://",
        ] {
            let error = resolve(&["--notify-webhook", bad]).unwrap_err();
            assert!(error.contains("--notify-webhook"), "{error}");
            assert!(!error.contains("very-secret-token"), "{error}");
        }
    }
}
