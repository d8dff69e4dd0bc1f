//! The webhook: each notification POSTed as JSON, retried with exponential back-off while the
//! server fails (5xx, 408, 429 or no answer) until a time limit. Its URL is a secret: no log
//! line or error names it (reqwest's errors are stripped of it).

use std::time::Duration;

use hld_client::protocol::Notification;
use tokio::time::Instant;

use super::config::Webhook;

/// The first pause between attempts; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// How long one attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// A webhook and the HTTP client that posts to it.
#[derive(Debug, Clone)]
pub struct Poster {
    webhook: Webhook,
    client: reqwest::Client,
}

/// How one attempt went.
enum Attempt {
    Delivered,
    /// Worth another try, with what went wrong.
    Retry(String),
    /// Not worth another try (a 4xx but 408 and 429).
    Refused(String),
}

impl Poster {
    pub fn new(webhook: Webhook) -> Result<Poster, String> {
        let client = reqwest::Client::builder()
            .timeout(ATTEMPT_TIMEOUT)
            // A redirect would send the notification somewhere the user did not name.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| {
                format!(
                    "cannot build the webhook's HTTP client: {}",
                    e.without_url()
                )
            })?;
        Ok(Poster { webhook, client })
    }

    /// Posts `notification` until it is delivered, refused, or the time limit passes.
    pub async fn post(&self, notification: &Notification) {
        let deadline = Instant::now() + self.webhook.time_limit;
        let mut backoff = FIRST_BACKOFF;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let outcome = match tokio::time::timeout_at(deadline, self.attempt(notification)).await
            {
                Ok(outcome) => outcome,
                Err(_) => Attempt::Retry("no answer".into()),
            };
            let problem = match outcome {
                Attempt::Delivered => {
                    tracing::debug!(id = %notification.id, attempts, "webhook delivered");
                    return;
                }
                Attempt::Refused(problem) => {
                    tracing::warn!(id = %notification.id, "webhook failed: {problem}; not retried");
                    return;
                }
                Attempt::Retry(problem) => problem,
            };
            if Instant::now() + backoff >= deadline {
                tracing::warn!(
                    id = %notification.id,
                    attempts,
                    "webhook failed: {problem}; gave up after {} s",
                    self.webhook.time_limit.as_secs_f64()
                );
                return;
            }
            tracing::info!(id = %notification.id, attempts, "webhook failed: {problem}; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn attempt(&self, notification: &Notification) -> Attempt {
        let sent = self
            .client
            .post(self.webhook.url.clone())
            .json(notification)
            .send()
            .await;
        match sent {
            Ok(response) => {
                let status = response.status();
                if status.is_success() {
                    Attempt::Delivered
                } else if status.is_server_error()
                    || status == reqwest::StatusCode::REQUEST_TIMEOUT
                    || status == reqwest::StatusCode::TOO_MANY_REQUESTS
                {
                    Attempt::Retry(format!("status {}", status.as_u16()))
                } else {
                    Attempt::Refused(format!("status {}", status.as_u16()))
                }
            }
            Err(e) => Attempt::Retry(describe(e)),
        }
    }
}

/// What went wrong, without the URL (reqwest's own message names it).
fn describe(e: reqwest::Error) -> String {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    let mut text = what.to_owned();
    let e = e.without_url();
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
