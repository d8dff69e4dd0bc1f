//! `hld-tui` changing a session's course, end to end over the real daemon and `fake-claude`:
//! Shift+Tab cycles the mode and `M` the model through `updateSessionSettings`, the reply box
//! completes `/` commands and `@` files from the daemon, and a compaction and attached images
//! read as such in the conversation.

use hld_client::protocol::{
    PermissionMode, SendMessage, SendMessageParams, UpdateSessionSettings,
    UpdateSessionSettingsParams,
};
use hld_e2e::{launch_params, TestDaemon};

use super::tui::{fake, tui_on, workdir, Tui};

/// Shift+Tab as a terminal sends it.
const SHIFT_TAB: &str = "\x1b[Z";
const ESC: &str = "\x1b";

/// A session of `fake-claude` that answered `prompt` and ended, in `dir`; its id.
fn ended_session(d: &TestDaemon, prompt: &str, dir: &std::path::Path) -> String {
    let id = d.launch(launch_params(prompt, dir));
    d.wait_ended(&id);
    id
}

/// `tui` with the only session's conversation open (Enter on the list's first row).
fn open_first(tui: &mut Tui, shows: &str) {
    tui.wait_screen("✓ completed");
    tui.send("\r");
    tui.wait_screen(shows);
}

#[test]
fn shift_tab_cycles_plan_accept_edits_default_in_the_daemon_and_shows_what_it_says() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    tui.wait_screen("✓ completed");

    // On the list: each press is the next mode, in the daemon and as the row's badge.
    tui.send(SHIFT_TAB);
    let s = d.wait_session(&id, |s| s.control.permission_mode == PermissionMode::Plan);
    assert!(!s.control.auto_accept_edits, "{s:#?}");
    tui.wait_screen("⏸ scenario:plain hello");
    tui.send(SHIFT_TAB);
    d.wait_session(&id, |s| {
        s.control.permission_mode == PermissionMode::Default && s.control.auto_accept_edits
    });
    tui.wait_screen("✎ scenario:plain hello");
    tui.send(SHIFT_TAB);
    d.wait_session(&id, |s| {
        s.control.permission_mode == PermissionMode::Default && !s.control.auto_accept_edits
    });
    tui.wait_screen("mode: default");

    // In the conversation the title bar says the mode; a change made elsewhere shows too.
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");
    tui.wait_screen("✓ completed default");
    d.request::<UpdateSessionSettings>(UpdateSessionSettingsParams {
        session_id: id.clone(),
        permission_mode: Some(PermissionMode::Plan),
        ..Default::default()
    });
    tui.wait_screen("✓ completed ⏸ plan");
}

#[test]
fn m_switches_the_model_from_the_picker_and_the_title_bar_shows_it() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");

    tui.send("M");
    let screen = tui.wait_screen(" Model (Enter picks");
    for alias in ["opus", "sonnet", "haiku"] {
        assert!(screen.contains(alias), "{screen}");
    }
    tui.send("claude-haiku-9");
    tui.send("\r");
    d.wait_session(&id, |s| s.model.as_deref() == Some("claude-haiku-9"));
    tui.wait_screen("· haiku-9");
}

/// A working directory with a source file, a note, and an ignored build directory.
fn project() -> tempfile::TempDir {
    let work = workdir();
    let root = work.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(root.join("target/mainframe.rs"), "// built\n").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    work
}

#[test]
fn the_reply_box_completes_slash_commands_and_at_files_from_the_daemon() {
    let d = fake();
    let work = project();
    ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");

    // `/` at the start: the commands the session's claude reported.
    tui.send("r");
    tui.send("/compa");
    let screen = tui.wait_screen("/compact  Clear conversation history");
    assert!(screen.contains(" Commands (Tab takes"), "{screen}");
    tui.send("\t");
    tui.wait_until("the command taken", hld_e2e::WAIT, |s| {
        s.lines().any(|l| l.trim_end() == "/compact") && !s.contains(" Commands (")
    });
    tui.send(ESC);
    tui.send(ESC);

    // `@`: the files of the working directory, the ignored ones left out.
    tui.send("r");
    tui.send("look at @mai");
    tui.wait_screen("@src/main.rs");
    let screen = tui.screen_text();
    assert!(!screen.contains("mainframe"), "{screen}");
    tui.send("\r");
    tui.wait_until("the file taken", hld_e2e::WAIT, |s| {
        s.lines().any(|l| l.trim_end() == "look at @src/main.rs") && !s.contains(" Files")
    });
}

#[test]
fn compact_sent_from_the_reply_box_shows_as_one_line() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");
    tui.send("r");
    tui.send("/compact");
    tui.wait_screen("/compact  ");
    // The token is complete: Enter sends it.
    tui.send("\r");
    tui.wait_screen("──── Conversation compacted");
    d.wait_ended(&id);
}

/// The smallest PNG a magic-number check accepts: its signature and an IHDR chunk.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\nIDATx\x9cc\0\x01\0\0\x05\0\x01\r\n-\xb4\0\0\0\0IEND\xaeB`\x82";

#[test]
fn an_image_sent_with_a_message_shows_as_an_attachment() {
    let d = fake();
    let work = workdir();
    let id = ended_session(&d, "scenario:plain hello", work.path());
    let shot = work.path().join("shot.png");
    std::fs::write(&shot, PNG).unwrap();
    let mut tui = tui_on(&d);
    open_first(&mut tui, "Hello! You asked: scenario:plain hello");
    d.request::<SendMessage>(SendMessageParams {
        session_id: id,
        text: "scenario:plain what is this".into(),
        mode: None,
        images: Some(vec![shot.display().to_string()]),
    });
    let screen = tui.wait_screen("[image] shot.png");
    assert!(screen.contains("› scenario:plain what is this"), "{screen}");
    assert!(!screen.contains("[image: "), "{screen}");
}
