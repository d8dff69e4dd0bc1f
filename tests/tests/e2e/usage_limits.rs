//! Usage limits over `fake-claude`'s scripted lines (as the real CLI prints them, fixture 06):
//! the windows `rate_limit_event` reports (`getRateLimits`, `rate_limit_updated`), a session
//! a limit stopped (`failed` with `usage_limit` in its state, lists and status event, cleared
//! when it runs again), and `resume_on_reset`: the same session resumed when the limit resets,
//! also after a daemon restart, and never without it.

use hld_client::protocol::{
    ContinueSession, ContinueSessionParams, ConversationEvent, ConversationEventType, Event,
    GetRateLimits, LaunchSessionParams, ListSessions, NoParams, RateLimitKind, RateLimitStatus,
    SendMessage, SendMessageParams, SessionStatus, SubscribeParams, UpdateSessionSettings,
    UpdateSessionSettingsParams, UsageLimit,
};
use hld_e2e::{launch_params, status_change, DaemonOptions, Subscription, TestDaemon};

/// The message the daemon resumes a session with, and its system event's subtype.
const RESUME_PROMPT: &str = "Continue: the usage limit reset.";
const LIMIT_RESET: &str = "limit_reset";

/// A session launched into a usage limit (`scenario:limit`), `resume_on_reset` as given.
fn limited(d: &TestDaemon, resume_on_reset: Option<bool>) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    d.launch(LaunchSessionParams {
        resume_on_reset,
        ..launch_params("scenario:limit write the report", &dir)
    })
}

/// Reads events until session `id` moves to `to`; returns that event's `usage_limit`.
fn wait_status(events: &mut Subscription, id: &str, to: SessionStatus) -> Option<UsageLimit> {
    let moved = events.until(|e| status_change(e, id).is_some_and(|(_, new)| new == to));
    match &moved.last().unwrap().event {
        Event::SessionStatusChanged { usage_limit, .. } => usage_limit.clone(),
        _ => unreachable!("until stops at a status change"),
    }
}

/// The system events the daemon stored when it resumed a session.
fn resumptions(events: &[ConversationEvent]) -> Vec<&ConversationEvent> {
    events
        .iter()
        .filter(|e| {
            e.event_type == ConversationEventType::System
                && e.subtype.as_deref() == Some(LIMIT_RESET)
        })
        .collect()
}

fn user_texts(events: &[ConversationEvent]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.event_type == ConversationEventType::Message)
        .filter(|e| e.role.as_deref() == Some("user"))
        .filter_map(|e| e.content.as_deref())
        .collect()
}

#[test]
fn a_turn_refused_by_a_usage_limit_fails_with_the_limit_and_its_reset() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let mut events = d.subscribe(SubscribeParams::default());
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();

    // Near the limit: the window is reported with its use, from 0 to 1.
    let near = d.launch(launch_params("scenario:near_limit hello", &dir));
    let updates = events.until(|e| matches!(e, Event::RateLimitUpdated { .. }));
    let Event::RateLimitUpdated {
        session_id, window, ..
    } = &updates.last().unwrap().event
    else {
        unreachable!()
    };
    assert_eq!(session_id, &near);
    assert_eq!(window.kind, RateLimitKind::FiveHour);
    assert_eq!(window.status, RateLimitStatus::AllowedWarning);
    assert_eq!(window.utilization, Some(0.93));
    assert_eq!(
        wait_status(&mut events, &near, SessionStatus::Completed),
        None
    );

    // Refused: the session fails, and says it is a limit, with the window's reset.
    let id = limited(&d, None);
    let limit = wait_status(&mut events, &id, SessionStatus::Failed).expect("a usage limit");
    assert_eq!(limit.kind, RateLimitKind::FiveHour);
    let reset = limit.resets_at.clone().expect("a reset time");
    let windows = d.request::<GetRateLimits>(NoParams {}).windows;
    assert_eq!(windows.len(), 1, "{windows:?}");
    assert_eq!(windows[0].status, RateLimitStatus::Rejected);
    assert_eq!(windows[0].resets_at.as_deref(), Some(reset.as_str()));
    let state = d.state(&id);
    assert_eq!(state.status, SessionStatus::Failed);
    assert_eq!(state.usage_limit.as_ref(), Some(&limit));
    assert!(!state.control.resume_on_reset, "off unless asked");
    let error = state.error_message.unwrap_or_default();
    assert!(
        error.starts_with("You've hit your session limit"),
        "{error}"
    );
    let listed = d.request::<ListSessions>(NoParams {}).sessions;
    let info = listed.iter().find(|s| s.id == id).unwrap();
    assert_eq!(info.usage_limit.as_ref(), Some(&limit));
    assert_eq!(
        listed.iter().find(|s| s.id == near).unwrap().usage_limit,
        None
    );

    // The user sends a message: the session runs again and no longer carries the limit.
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.clone(),
        text: "try again".into(),
        mode: None,
        images: None,
    });
    assert_eq!(wait_status(&mut events, &id, SessionStatus::Running), None);
    assert_eq!(
        wait_status(&mut events, &id, SessionStatus::Completed),
        None
    );
    assert_eq!(d.state(&id).usage_limit, None);
}

#[test]
fn the_daemon_resumes_the_same_session_when_its_limit_resets() {
    let d =
        TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_RESET_MS", "2000"));
    let mut events = d.subscribe(SubscribeParams::default());
    let id = limited(&d, Some(true));
    let limit = wait_status(&mut events, &id, SessionStatus::Failed).expect("a usage limit");
    assert!(d.state(&id).control.resume_on_reset);
    let claude_id = d.state(&id).claude_session_id;

    // At the reset, the daemon resumes it: no new session, the same Claude session.
    wait_status(&mut events, &id, SessionStatus::Running);
    let resumed_at = chrono::Utc::now();
    let reset: chrono::DateTime<chrono::Utc> = limit.resets_at.unwrap().parse().unwrap();
    assert!(
        resumed_at >= reset,
        "resumed at {resumed_at}, before the reset {reset}"
    );
    wait_status(&mut events, &id, SessionStatus::Completed);
    let state = d.state(&id);
    assert_eq!(state.usage_limit, None);
    assert_eq!(state.claude_session_id, claude_id);
    assert_eq!(d.request::<ListSessions>(NoParams {}).sessions.len(), 1);
    let conversation = d.conversation(&id);
    let said = resumptions(&conversation);
    assert_eq!(said.len(), 1, "{conversation:#?}");
    let text = said[0].content.as_deref().unwrap_or_default();
    assert_eq!(
        text,
        "The 5h usage limit reset: the daemon resumed the session."
    );
    assert_eq!(
        user_texts(&conversation),
        ["scenario:limit write the report", RESUME_PROMPT]
    );

    // A continuation inherits the setting.
    let child = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: id,
        query: "and then?".into(),
        ..Default::default()
    });
    assert!(d.state(&child.session_id).control.resume_on_reset);
}

#[test]
fn a_window_whose_reset_passed_is_no_longer_reported() {
    let d =
        TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_RESET_MS", "8000"));
    let mut events = d.subscribe(SubscribeParams::default());
    let id = limited(&d, Some(false));
    let limit = wait_status(&mut events, &id, SessionStatus::Failed).expect("a usage limit");
    let reset: chrono::DateTime<chrono::Utc> = limit.resets_at.unwrap().parse().unwrap();
    let windows = || d.request::<GetRateLimits>(NoParams {}).windows;
    let before = windows();
    if chrono::Utc::now() < reset {
        assert_eq!(before.len(), 1, "{before:?}");
        assert_eq!(before[0].status, RateLimitStatus::Rejected);
    }
    // Once the window is over, what it said no longer holds: it is left out.
    let after = hld_e2e::wait_for(hld_e2e::WAIT, || {
        let now = windows();
        now.is_empty().then_some(chrono::Utc::now())
    })
    .expect("the window is left out once its reset passed");
    assert!(
        after >= reset,
        "left out at {after}, before the reset {reset}"
    );
}

#[test]
fn a_limited_session_is_left_alone_without_resume_on_reset_or_once_continued() {
    let d =
        TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_RESET_MS", "1000"));
    let mut events = d.subscribe(SubscribeParams::default());
    let off = limited(&d, Some(false));
    wait_status(&mut events, &off, SessionStatus::Failed).expect("a usage limit");
    // Continued after its limit: the continuation carries the work on.
    let continued = limited(&d, Some(true));
    wait_status(&mut events, &continued, SessionStatus::Failed).expect("a usage limit");
    let child = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: continued.clone(),
        query: "carry on".into(),
        ..Default::default()
    });
    wait_status(&mut events, &child.session_id, SessionStatus::Completed);
    // Launched later, so its limit resets later: once it has resumed, the others would have.
    let on = limited(&d, Some(true));
    wait_status(&mut events, &on, SessionStatus::Failed).expect("a usage limit");
    wait_status(&mut events, &on, SessionStatus::Completed);
    for id in [&off, &continued] {
        let state = d.state(id);
        assert_eq!(state.status, SessionStatus::Failed);
        assert!(state.usage_limit.is_some());
        assert!(resumptions(&d.conversation(id)).is_empty(), "{id} resumed");
    }

    // Turned on after its reset: resumed at once.
    d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: off.clone(),
        resume_on_reset: Some(true),
        ..Default::default()
    });
    wait_status(&mut events, &off, SessionStatus::Completed);
    assert_eq!(resumptions(&d.conversation(&off)).len(), 1);
}

#[test]
fn a_limit_reset_is_still_resumed_after_a_daemon_restart() {
    let mut d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_RESET_MS", "3000")
            .arg("--resume-on-reset"),
    );
    let mut events = d.subscribe(SubscribeParams::default());
    let kept = limited(&d, Some(false));
    let kept_limit = wait_status(&mut events, &kept, SessionStatus::Failed).expect("a usage limit");
    // Not given at launch: the daemon's default, here on.
    let id = limited(&d, None);
    let limit = wait_status(&mut events, &id, SessionStatus::Failed).expect("a usage limit");
    assert!(d.state(&id).control.resume_on_reset);
    d.stop();

    // Restarted (without the flag): the limits are still there, and the session that resumes
    // does so at its reset, or at once if that passed while the daemon was down.
    let d = TestDaemon::start_with(DaemonOptions {
        dir: Some(d.dir.clone()),
        ..DaemonOptions::fake_claude()
    });
    let mut events = d.subscribe(SubscribeParams::default());
    assert_eq!(d.state(&kept).usage_limit, Some(kept_limit));
    let windows = d.request::<GetRateLimits>(NoParams {}).windows;
    assert_eq!(windows.len(), 1, "{windows:?}");
    let state = d.state(&id);
    if state.status == SessionStatus::Failed {
        assert_eq!(state.usage_limit, Some(limit));
        wait_status(&mut events, &id, SessionStatus::Completed);
    }
    let state = d.wait_ended(&id);
    assert_eq!(state.status, SessionStatus::Completed);
    assert_eq!(state.usage_limit, None);
    let conversation = d.conversation(&id);
    assert_eq!(resumptions(&conversation).len(), 1, "{conversation:#?}");
    assert_eq!(user_texts(&conversation).last(), Some(&RESUME_PROMPT));
    assert!(resumptions(&d.conversation(&kept)).is_empty());
}

/// A daemon directory whose `humanlayer.json` holds `config`.
fn configured(config: &str) -> tempfile::TempDir {
    let root = hld_e2e::short_tempdir();
    let dir = root.path().join("config/humanlayer");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("humanlayer.json"), config).unwrap();
    root
}

#[test]
fn resume_on_reset_in_humanlayer_json_is_the_default_and_must_be_a_boolean() {
    let root = configured(r#"{"resume_on_reset": true}"#);
    let d = TestDaemon::start_with(DaemonOptions {
        dir: Some(root.path().to_owned()),
        ..DaemonOptions::fake_claude()
    });
    let on = limited(&d, None);
    let off = limited(&d, Some(false));
    assert!(d.state(&on).control.resume_on_reset);
    assert!(!d.state(&off).control.resume_on_reset);

    let root = configured(r#"{"resume_on_reset": "yes"}"#);
    let d = TestDaemon::spawn(DaemonOptions {
        dir: Some(root.path().to_owned()),
        wrapper: vec!["timeout".into(), "20".into()],
        ..Default::default()
    });
    let (status, stderr) = d.wait_failure();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("resume_on_reset in") && stderr.contains("must be true or false"),
        "{stderr}"
    );
}
