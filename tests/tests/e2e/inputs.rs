//! What a user puts into a session besides text, over the real daemon and `fake-claude`:
//! images attached to messages (sent as image blocks, named in the conversation, kept by a
//! queued message across a restart, refused with -32602 when they are not images),
//! `suggestFiles` for an `@` mention, and `/compact` with its boundary.

use std::path::{Path, PathBuf};

use hld_client::protocol::{
    ContinueSession, ContinueSessionParams, ConversationEvent, ConversationEventType, ErrorObject,
    Health, LaunchSession, ListQueuedMessages, NoParams, SendMessage, SendMessageParams,
    SendMessageResult, SessionIdParams, SessionStatus, SuggestFiles, SuggestFilesParams,
    MAX_IMAGE_BYTES,
};
use hld_e2e::images::{red_png, RED_PNG};
use hld_e2e::{launch_params, wait_for, DaemonOptions, TestDaemon, WAIT};
use serde_json::Value;

fn workdir(d: &TestDaemon) -> PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(super) fn send_images(
    d: &TestDaemon,
    id: &str,
    text: &str,
    images: &[&Path],
) -> SendMessageResult {
    d.request::<SendMessage>(SendMessageParams {
        session_id: id.to_owned(),
        text: text.to_owned(),
        mode: None,
        images: Some(images.iter().map(|p| p.display().to_string()).collect()),
    })
}

/// Waits until an assistant message of the session contains `part`; returns the conversation.
pub(super) fn wait_reply(d: &TestDaemon, id: &str, part: &str) -> Vec<ConversationEvent> {
    wait_for(WAIT, || {
        let events = d.conversation(id);
        events
            .iter()
            .any(|e| e.role.as_deref() == Some("assistant") && content(e).contains(part))
            .then_some(events)
    })
    .unwrap_or_else(|| panic!("no reply with {part:?}: {:#?}", d.conversation(id)))
}

fn content(event: &ConversationEvent) -> &str {
    event.content.as_deref().unwrap_or_default()
}

/// The user messages of a conversation.
pub(super) fn user_texts(events: &[ConversationEvent]) -> Vec<&str> {
    events
        .iter()
        .filter(|e| {
            e.event_type == ConversationEventType::Message && e.role.as_deref() == Some("user")
        })
        .map(content)
        .collect()
}

/// A launched session whose first turn has ended.
fn idle_session(d: &TestDaemon, query: &str) -> String {
    let id = d.launch(launch_params(query, workdir(d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    id
}

#[test]
fn an_attached_image_reaches_claude_before_the_text_and_is_named_in_the_conversation() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = idle_session(&d, "hello");
    let png = red_png(&workdir(&d), "red.png");
    let sent = send_images(&d, &id, "what is this?", &[&png, &png]);
    assert!(!sent.queued);
    // fake-claude reads each image block as a line before the text.
    let seen = format!("[image: image/png, {} bytes]", RED_PNG.len());
    let events = wait_reply(&d, &id, "I see 2 images.");
    let reply = events.last().unwrap();
    assert!(
        content(reply).contains(&format!("{seen}\n{seen}\nwhat is this?")),
        "{reply:?}"
    );
    assert_eq!(
        user_texts(&events).last().unwrap(),
        &"what is this?\n[image: red.png]\n[image: red.png]"
    );

    // Images alone are a message too.
    send_images(&d, &id, "", &[&png]);
    let events = wait_reply(&d, &id, "I see 1 image.");
    assert_eq!(user_texts(&events).last().unwrap(), &"[image: red.png]");

    // A launch and a continuation take images as well.
    let launched = d.launch(hld_client::protocol::LaunchSessionParams {
        images: Some(vec![png.display().to_string()]),
        ..launch_params("describe it", workdir(&d))
    });
    let events = wait_reply(&d, &launched, "I see 1 image.");
    assert_eq!(user_texts(&events)[0], "describe it\n[image: red.png]");
    d.wait_session(&launched, |s| s.status == SessionStatus::Completed);
    let child = d.request::<ContinueSession>(ContinueSessionParams {
        session_id: launched,
        query: "and now?".into(),
        images: Some(vec![png.display().to_string(), png.display().to_string()]),
        ..Default::default()
    });
    wait_reply(&d, &child.session_id, "I see 2 images.");
}

/// The -32602 error of a call that must be refused for its images.
fn refused_for_images(error: Result<impl std::fmt::Debug, ErrorObject>) -> String {
    let error = error.expect_err("the images must be refused");
    assert_eq!(error.code, -32602, "{error:?}");
    let data = error.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["param"], "images", "{error:?}");
    error.message
}

#[test]
fn images_that_are_missing_too_large_or_not_images_are_refused_and_nothing_is_sent() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = idle_session(&d, "hello");
    let dir = workdir(&d);
    let png = red_png(&dir, "ok.png");
    std::fs::write(dir.join("notes.png"), "just text, named like an image").unwrap();
    std::fs::File::create(dir.join("huge.png"))
        .unwrap()
        .set_len(MAX_IMAGE_BYTES + 1)
        .unwrap();
    let at = |name: &str| dir.join(name).display().to_string();
    let cases = [
        (vec!["ok.png".to_owned()], "not an absolute path"),
        (vec![at("missing.png")], "cannot open"),
        (vec![at("notes.png")], "not a PNG, JPEG, GIF or WebP image"),
        (vec![at("huge.png")], "larger than 5242880 bytes"),
        (vec![dir.display().to_string()], "not a regular file"),
        (
            vec![png.display().to_string(), at("notes.png")],
            "images[1]",
        ),
    ];
    for (images, why) in cases {
        let send = d.try_request::<SendMessage>(SendMessageParams {
            session_id: id.clone(),
            text: "look".into(),
            mode: None,
            images: Some(images.clone()),
        });
        let message = refused_for_images(send);
        assert!(message.contains(why), "{message:?} should say {why:?}");
        let launch = d.try_request::<LaunchSession>(hld_client::protocol::LaunchSessionParams {
            images: Some(images.clone()),
            ..launch_params("look", &dir)
        });
        assert!(refused_for_images(launch).contains(why));
        let continued = d.try_request::<ContinueSession>(ContinueSessionParams {
            session_id: id.clone(),
            query: "look".into(),
            images: Some(images),
            ..Default::default()
        });
        assert!(refused_for_images(continued).contains(why));
    }
    // Without images the text is required.
    let empty = d.try_request::<SendMessage>(SendMessageParams {
        session_id: id.clone(),
        text: String::new(),
        mode: None,
        images: Some(Vec::new()),
    });
    assert_eq!(empty.unwrap_err().data.unwrap()["param"], "text");
    // Nothing was delivered or launched, and the daemon serves on.
    assert_eq!(user_texts(&d.conversation(&id)), ["hello"]);
    assert_eq!(
        d.request::<hld_client::protocol::ListSessions>(NoParams {})
            .sessions
            .len(),
        1
    );
    assert_eq!(d.request::<Health>(NoParams {}).status, "ok");
}

#[test]
fn a_queued_message_keeps_its_image_while_waiting_and_across_a_restart() {
    let base = hld_e2e::short_tempdir();
    let slow = || {
        DaemonOptions {
            dir: Some(base.path().to_path_buf()),
            ..DaemonOptions::fake_claude()
        }
        .env("FAKE_CLAUDE_COUNT", "400")
        .env("FAKE_CLAUDE_DELAY_MS", "25")
    };
    let mut d = TestDaemon::start_with(slow());
    let png = red_png(&workdir(&d), "later.png");
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    // Queued behind the running turn, then delivered by the same process when it ends.
    assert!(send_images(&d, &id, "first", &[&png]).queued);
    let listed = d.request::<ListQueuedMessages>(SessionIdParams {
        session_id: id.clone(),
    });
    assert_eq!(listed.messages[0].images, [png.display().to_string()]);
    assert!(send_images(&d, &id, "scenario:slow second", &[&png, &png]).queued);
    wait_reply(&d, &id, "I see 1 image. ");

    // The second runs a slow turn; the third waits behind it, and the daemon dies meanwhile.
    wait_for(WAIT, || {
        let events = d.conversation(&id);
        let second = "scenario:slow second\n[image: later.png]\n[image: later.png]";
        user_texts(&events).contains(&second).then_some(())
    })
    .expect("the second message delivered");
    assert!(send_images(&d, &id, "third", &[&png]).queued);
    d.kill9();
    drop(d);

    // The restarted daemon resumes the session with it, its image read again.
    let d = TestDaemon::start_with(slow());
    let events = wait_reply(&d, &id, "I see 1 image. Continuing");
    assert!(user_texts(&events).contains(&"third\n[image: later.png]"));
}

pub(super) fn suggest(d: &TestDaemon, id: &str, query: &str) -> Vec<String> {
    d.request::<SuggestFiles>(SuggestFilesParams {
        session_id: id.to_owned(),
        query: query.to_owned(),
        limit: None,
    })
    .files
    .into_iter()
    .map(|f| f.path)
    .collect()
}

/// A working directory with `src/main.rs`, an ignored `build/main_out.rs` and `.git`.
pub(super) fn project(d: &TestDaemon) -> PathBuf {
    let dir = workdir(d);
    for (path, text) in [
        (".gitignore", "build/\n"),
        ("src/main.rs", "fn main() {}\n"),
        ("build/main_out.rs", "// generated\n"),
        (".git/main_ref", "x\n"),
        ("README.md", "# project\n"),
    ] {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn suggest_files_scans_a_session_without_a_process_skipping_what_is_ignored() {
    // No process stays warm after a turn: the daemon scans the directory itself.
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().arg("--live-idle-ms").arg("0"));
    let dir = project(&d);
    let id = d.launch(launch_params("hello", &dir));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed && !s.live);
    assert_eq!(suggest(&d, &id, "main"), ["src/main.rs"]);
    assert_eq!(suggest(&d, &id, "srmn"), ["src/main.rs"]);
    let all = suggest(&d, &id, "");
    assert!(all.contains(&"src/".to_owned()) && all.contains(&"README.md".to_owned()));
    assert!(!all
        .iter()
        .any(|p| p.starts_with("build") || p.starts_with(".git/")));

    for limit in [0, 201] {
        let error = d
            .try_request::<SuggestFiles>(SuggestFilesParams {
                session_id: id.clone(),
                query: "main".into(),
                limit: Some(limit),
            })
            .unwrap_err();
        assert_eq!(error.data.unwrap()["param"], "limit");
    }
    let unknown = d
        .try_request::<SuggestFiles>(SuggestFilesParams {
            session_id: "no-such-session".into(),
            query: "main".into(),
            limit: None,
        })
        .unwrap_err();
    assert_eq!(unknown.code, -32602);
    std::fs::remove_dir_all(&dir).unwrap();
    let gone = d
        .try_request::<SuggestFiles>(SuggestFilesParams {
            session_id: id.clone(),
            query: "main".into(),
            limit: None,
        })
        .unwrap_err();
    assert!(gone.message.contains("no working directory"), "{gone:?}");
}

#[test]
fn suggest_files_asks_a_live_claude() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let dir = project(&d);
    let id = d.launch(launch_params("hello", &dir));
    d.wait_session(&id, |s| s.status == SessionStatus::Completed && s.live);
    assert_eq!(suggest(&d, &id, "main"), ["src/main.rs"]);
    // claude lists the directory's own entries for an empty query, ignored ones too: the
    // answer is its, not the daemon's scan. `.git/`, which it lists too, is left out.
    let top = suggest(&d, &id, "");
    for entry in ["build/", "src/", "README.md", ".gitignore"] {
        assert!(top.contains(&entry.to_owned()), "{entry} in {top:?}");
    }
    assert!(!top.contains(&".git/".to_owned()), "{top:?}");
    assert!(d.state(&id).live);
}

#[test]
fn compact_stores_its_boundary_as_one_line_and_the_session_carries_on() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let id = idle_session(&d, "first");
    let send = |text: &str| {
        d.request::<SendMessage>(SendMessageParams {
            session_id: id.clone(),
            text: text.to_owned(),
            mode: None,
            images: None,
        })
    };
    send("second");
    wait_reply(&d, &id, "You said: second");
    d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    send("/compact");
    let boundary = wait_for(WAIT, || {
        d.conversation(&id)
            .into_iter()
            .find(|e| e.subtype.as_deref() == Some("compact_boundary"))
    })
    .unwrap_or_else(|| panic!("no boundary: {:#?}", d.conversation(&id)));
    assert_eq!(boundary.event_type, ConversationEventType::System);
    let text = content(&boundary);
    assert!(
        text.starts_with("Conversation compacted (") && text.ends_with(" tokens before)"),
        "{text}"
    );
    let s = d.wait_session(&id, |s| s.status == SessionStatus::Completed);
    assert_eq!(s.error_message, None);
    // The user's words as sent; the summary and the echo the CLI writes are not messages.
    assert_eq!(
        user_texts(&d.conversation(&id)),
        ["first", "second", "/compact"]
    );
    send("third");
    let events = wait_reply(&d, &id, "You said: third");
    let systems = events
        .iter()
        .filter(|e| e.event_type == ConversationEventType::System)
        .count();
    assert_eq!(systems, 1, "{events:#?}");
}
