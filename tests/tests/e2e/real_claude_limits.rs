//! Usage limits with the real `claude` CLI 2.1.197 and the Messages API stand-in sending
//! Anthropic's unified rate-limit headers. The CLI reads them only for a subscription login,
//! so the daemon passes it an OAuth token (`CLAUDE_CODE_OAUTH_TOKEN`) instead of an API key:
//! a window near its limit, a turn refused by the limit (429), and the daemon resuming the
//! same session when the limit resets.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hld_client::protocol::{
    Event, GetRateLimits, LaunchSessionParams, NoParams, RateLimitKind, RateLimitStatus,
    SendMessage, SendMessageParams, SessionStatus, SubscribeParams, UsageLimit,
};
use hld_e2e::anthropic::{AnthropicStandIn, Reply};
use hld_e2e::{launch_params, status_change, Subscription, TestDaemon};
use serde_json::Value;

use crate::real_claude::{message_texts, options, workdir};

/// How far ahead of the refusal the stand-in's window resets.
const RESET_AFTER: Duration = Duration::from_secs(3);

/// The Unix second `after` from now, rounded up.
fn unix_after(after: Duration) -> i64 {
    let at = (SystemTime::now() + after)
        .duration_since(UNIX_EPOCH)
        .unwrap();
    i64::try_from(at.as_millis().div_ceil(1000)).unwrap()
}

/// The last user text of a request.
fn last_user_text(request: &Value) -> String {
    message_texts(request)
        .into_iter()
        .filter_map(|t| t.strip_prefix("user: ").map(str::to_owned))
        .next_back()
        .unwrap_or_default()
}

/// Near the limit for the first prompt, refused for "Go on", answered after the reset.
fn limited(request: &Value) -> Reply {
    let last = last_user_text(request);
    if last == "Continue: the usage limit reset." {
        Reply::text("Picking up where we left off.")
    } else if last == "Go on" {
        Reply::usage_limit("five_hour", unix_after(RESET_AFTER))
    } else {
        Reply::text("Hello there.").near_limit("5h", 0.93, unix_after(Duration::from_secs(3600)))
    }
}

fn wait_status(events: &mut Subscription, id: &str, to: SessionStatus) -> Option<UsageLimit> {
    let moved = events.until(|e| status_change(e, id).is_some_and(|(_, new)| new == to));
    match &moved.last().unwrap().event {
        Event::SessionStatusChanged { usage_limit, .. } => usage_limit.clone(),
        _ => unreachable!("until stops at a status change"),
    }
}

#[test]
fn the_real_cli_near_and_at_its_limit_and_resumed_at_the_reset() {
    let api = AnthropicStandIn::start(limited);
    let d = TestDaemon::start_with(
        options(None)
            .env("CLAUDE_CODE_OAUTH_TOKEN", "test-oauth-token")
            .env("ANTHROPIC_BASE_URL", &api.base_url()),
    );
    let mut events = d.subscribe(SubscribeParams::default());
    let id = d.launch(LaunchSessionParams {
        resume_on_reset: Some(true),
        ..launch_params("Say hello", workdir(&d))
    });

    let updated = events.until(|e| matches!(e, Event::RateLimitUpdated { .. }));
    let Event::RateLimitUpdated { window, .. } = &updated.last().unwrap().event else {
        unreachable!()
    };
    assert_eq!(window.kind, RateLimitKind::FiveHour);
    assert_eq!(window.status, RateLimitStatus::AllowedWarning);
    assert_eq!(window.utilization, Some(0.93));
    wait_status(&mut events, &id, SessionStatus::Completed);
    let claude_id = d.state(&id).claude_session_id;

    d.request::<SendMessage>(SendMessageParams {
        session_id: id.clone(),
        text: "Go on".into(),
        mode: None,
        images: None,
    });
    let limit = wait_status(&mut events, &id, SessionStatus::Failed).expect("a usage limit");
    assert_eq!(limit.kind, RateLimitKind::FiveHour);
    assert!(limit.resets_at.is_some(), "{limit:?}");
    let windows = d.request::<GetRateLimits>(NoParams {}).windows;
    let five_hour = windows.iter().find(|w| w.kind == RateLimitKind::FiveHour);
    assert_eq!(
        five_hour.map(|w| &w.status),
        Some(&RateLimitStatus::Rejected)
    );
    let error = d.state(&id).error_message.unwrap_or_default();
    assert!(
        error.starts_with("You've hit your session limit"),
        "{error}"
    );

    // At the reset the daemon resumes it: the same Claude session goes on.
    wait_status(&mut events, &id, SessionStatus::Running);
    wait_status(&mut events, &id, SessionStatus::Completed);
    let state = d.state(&id);
    assert_eq!(state.usage_limit, None);
    assert_eq!(state.claude_session_id, claude_id);
    assert_eq!(
        state.result_content.as_deref(),
        Some("Picking up where we left off.")
    );
    let last = api.model_turns().pop().unwrap();
    let said = message_texts(&last);
    assert!(said.contains(&"user: Say hello".to_owned()), "{said:?}");
}
