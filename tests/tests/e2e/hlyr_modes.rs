//! Changing a session's course from `hlyr` and the SDK, over the real daemon and
//! `fake-claude`: Shift+Tab and `/model` in the prompt of `hlyr launch`, a plan shown and
//! approved, Tab completing `/commands` and `@files`, `hlyr settings --model --mode`, `--mode
//! plan` and `--image` on `launch` and `send`, and the SDK's typed calls for them.

use std::path::Path;

use hld_client::mode::Mode;
use hld_client::protocol::{
    ListSlashCommands, PermissionMode, SendMessageParams, SessionIdParams, SessionState,
    SlashCommandKind, UpdateSessionSettingsParams,
};
use hld_e2e::pty::{self, Terminal};
use hld_e2e::{launch_params, wait_for, workspace_bin, TestDaemon, WAIT};

use crate::hlyr::{assert_in_order, fake, hlyr, slow_daemon, workdir};
use crate::hlyr_converse::{ended, user_messages, PROMPT_HINT};

/// Shift+Tab, as a terminal sends it.
const SHIFT_TAB: &str = "\x1b[Z";
/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x04, 0x00, 0x00, 0x00, 0xb5, 0x1c, 0x0c,
    0x02, 0x00, 0x00, 0x00, 0x0b, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x64, 0x60, 0x00, 0x00,
    0x00, 0x06, 0x00, 0x02, 0x30, 0x81, 0xd0, 0x2f, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44,
    0xae, 0x42, 0x60, 0x82,
];

/// `hlyr ARGS` on a new terminal against `d`, in `d`'s directory.
pub(super) fn on_terminal(d: &TestDaemon, args: &[&str]) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.args(args);
    Terminal::spawn(cmd, 60, 120)
}

/// Waits until `session_id`'s state satisfies `done`.
#[track_caller]
fn wait_state(d: &TestDaemon, session_id: &str, done: impl Fn(&SessionState) -> bool) {
    let reached = wait_for(WAIT, || Some(d.state(session_id)).filter(|s| done(s)));
    assert!(
        reached.is_some(),
        "never reached: {:#?}",
        d.state(session_id)
    );
}

#[test]
fn shift_tab_cycles_the_mode_and_slash_model_switches_the_model_between_turns() {
    let d = fake();
    let mut term = on_terminal(&d, &["launch", "-w", &workdir(&d), "first question"]);
    term.wait_screen(PROMPT_HINT);
    let id = d.only_session();
    let mode = |d: &TestDaemon| Mode::of(&d.state(&id).control);

    // As in Claude Code: accept edits first, then plan.
    term.send(SHIFT_TAB);
    let screen = term.wait_screen("◆ mode: accept edits");
    assert_eq!(mode(&d), Mode::AcceptEdits);
    // The prompt line tells the mode; what was typed stays.
    assert!(screen.contains("accept edits ›"), "{screen}");
    term.send("half");
    term.send(SHIFT_TAB);
    term.wait_screen("◆ mode: plan");
    term.wait_screen("plan › half");
    assert_eq!(mode(&d), Mode::Plan);
    assert_eq!(d.state(&id).control.permission_mode, PermissionMode::Plan);
    term.send("\x7f\x7f\x7f\x7f");
    term.send(SHIFT_TAB);
    term.wait_screen("◆ mode: default");
    assert_eq!(mode(&d), Mode::Default);

    term.send("/model claude-haiku-4-5\r");
    term.wait_screen("◆ model: claude-haiku-4-5");
    wait_state(&d, &id, |s| s.model.as_deref() == Some("claude-haiku-4-5"));
    term.send("/model\r");
    term.wait_screen("◆ model: claude-haiku-4-5 (`/model NAME` switches it");

    // Any other command goes to Claude as a message, and starts a turn; a compaction (of
    // two exchanges at least) is one line.
    term.send("second question\r");
    term.wait_count(PROMPT_HINT, 2);
    term.send("/compact\r");
    term.wait_count(PROMPT_HINT, 3);
    let screen = term.wait_screen("Conversation compacted");
    let line = screen
        .lines()
        .find(|l| l.contains("Conversation compacted"));
    assert!(
        line.is_some_and(|l| l.starts_with("system: Conversation compacted (")),
        "{screen}"
    );
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(
        user_messages(&d, &id),
        ["first question", "second question", "/compact"]
    );
}

#[test]
fn tab_completes_slash_commands_and_at_files_at_the_prompt() {
    let d = fake();
    let dir = Path::new(&workdir(&d)).to_path_buf();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(dir.join(".gitignore"), "secret.txt\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "no\n").unwrap();
    let mut term = on_terminal(&d, &["launch", "-w", &workdir(&d), "first question"]);
    term.wait_screen(PROMPT_HINT);
    let id = d.only_session();
    // claude's answer to `initialize` is stored beside the turn, maybe after it ends.
    wait_for(WAIT, || {
        let listed = d.request::<ListSlashCommands>(SessionIdParams {
            session_id: id.clone(),
        });
        (!listed.commands.is_empty()).then_some(())
    })
    .expect("claude's slash commands stored");

    // Several commands match: the line keeps what they share, and they are listed.
    term.send("/co\t");
    let screen = term.wait_screen("/compact  ");
    assert!(screen.contains("/config"), "{screen}");
    // One matches: the line is the command, ready for Enter.
    term.send("mpa\t");
    term.wait_screen("› /compact ");
    // Esc clears the line; the next key waits for it (an Esc and a key at once read as Alt).
    term.send("\x1b");
    term.wait_until("the line cleared", WAIT, |s| !s.contains("› /compact"));
    // All of them: the first few, and how many more; hlyr's own among them.
    term.send("/\t");
    let screen = term.wait_screen(" more");
    assert!(screen.contains("/exit"), "{screen}");
    term.send("\x1b");
    term.wait_until("the line cleared", WAIT, |s| !s.contains(" more\n› /"));
    term.send("/mo\t");
    term.wait_screen("› /model ");
    term.send("\x1b");
    term.wait_until("the line cleared", WAIT, |s| !s.contains("› /model"));
    term.send("look at @src/ma\t");
    term.wait_screen("› look at @src/main.rs ");
    term.send("please\r");
    term.wait_count(PROMPT_HINT, 2);
    // An ignored file is never offered: the word stays as typed (keys are taken in order).
    term.send("@secr\tx");
    term.wait_screen("› @secrx");
    term.send("\x1b");
    term.wait_until("the line cleared", WAIT, |s| !s.contains("› @secrx"));
    term.send("\x04");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert_eq!(
        user_messages(&d, &id),
        ["first question", "look at @src/main.rs please"]
    );
}

#[test]
fn shift_tab_and_slash_model_reach_the_live_process_while_the_agent_works() {
    let d = slow_daemon(60);
    let mut term = on_terminal(&d, &["launch", "-w", &workdir(&d), "scenario:slow"]);
    term.wait_screen("chunk 2");
    let id = d.only_session();
    // Accept edits (a rule of the daemon's), then plan (the live process's own mode).
    term.send(SHIFT_TAB);
    term.wait_screen("◆ mode: accept edits");
    term.send(SHIFT_TAB);
    term.wait_screen("◆ mode: plan");
    term.send("/model opus\t");
    term.wait_screen("◆ model: opus");
    wait_state(&d, &id, |s| {
        s.control.permission_mode == PermissionMode::Plan && s.model.as_deref() == Some("opus")
    });
    // Neither was a message: the turn goes on.
    assert_eq!(user_messages(&d, &id), ["scenario:slow"]);
    let claude = d.state(&id).claude_session_id.unwrap();
    let asked = wait_for(WAIT, || {
        let stdin = d.fake_invocation(&claude)["stdin"].clone();
        let subtypes: Vec<String> = stdin
            .as_array()?
            .iter()
            .filter_map(|l| Some(l["line"]["request"]["subtype"].as_str()?.to_owned()))
            .collect();
        (subtypes.iter().any(|s| s == "set_permission_mode")
            && subtypes.iter().any(|s| s == "set_model"))
        .then_some(stdin)
    });
    assert!(asked.is_some(), "{:#}", d.fake_invocation(&claude)["stdin"]);
    hlyr(&d, &["interrupt", &id]).assert_code(0);
    term.wait_screen("■ interrupted");
    assert_eq!(ended(&mut term), 4);
}

/// What a plan's question offers.
pub(super) const PLAN_CHOICES: &str =
    "approve the plan? [a]pprove (default mode)  [e] approve, accept \
edits  [d]eny, say what to change  [s]kip";

#[test]
fn a_plan_shows_as_markdown_and_e_approves_it_leaving_plan_mode_for_accepted_edits() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(
        &d,
        &["launch", "--mode", "plan", "-w", &wd, "scenario:plan"],
    );
    let screen = term.wait_screen(PLAN_CHOICES);
    let id = d.only_session();
    assert_eq!(d.state(&id).control.permission_mode, PermissionMode::Plan);
    // The Write tried while planning was refused; the plan reads as its markdown.
    assert_in_order(
        &screen,
        &[
            "→ Write",
            "✗ denied automatically (plan_mode)",
            "→ ExitPlanMode\n    # Plan\n    \n    1. Create `hello.txt` with `Hello, world!`\n",
            "? approval ",
            PLAN_CHOICES,
        ],
    );
    assert!(!Path::new(&wd).join("hello.txt").exists());
    term.send("e");
    // Plan mode is left for accepted edits, on before the plan's approval: the Write that
    // follows goes through without asking.
    let screen = term.wait_screen("◆ mode: accept edits");
    assert_in_order(
        &screen,
        &[
            "[s]kip approve, auto-accept edits",
            "auto-accept of edits is on for this session",
            "✓ approved",
        ],
    );
    let screen = term.wait_screen("✓ approved automatically (auto_accept_edits)");
    assert_eq!(screen.matches("? approval ").count(), 1, "{screen}");
    assert_eq!(ended(&mut term), 0);
    assert_eq!(
        std::fs::read_to_string(Path::new(&wd).join("hello.txt")).unwrap(),
        "Hello, world!\n"
    );
    assert_eq!(Mode::of(&d.state(&id).control), Mode::AcceptEdits);
}

#[test]
fn denying_a_plan_says_what_to_change_and_stays_in_plan_mode() {
    let d = fake();
    let wd = workdir(&d);
    let mut term = on_terminal(
        &d,
        &["launch", "--mode", "plan", "-w", &wd, "scenario:plan"],
    );
    term.wait_screen(PLAN_CHOICES);
    let id = d.only_session();
    term.send("d");
    term.wait_screen("what to change in the plan (Enter or Esc for nothing):");
    term.send("smaller steps\r");
    term.wait_screen("The plan was not approved");
    term.wait_screen("smaller steps");
    assert_eq!(ended(&mut term), 0);
    let plan = d.approvals(None);
    assert!(plan.is_empty(), "{plan:#?}");
    assert_eq!(d.state(&id).control.permission_mode, PermissionMode::Plan);
    assert!(!Path::new(&wd).join("hello.txt").exists());
}

#[test]
fn settings_switch_the_model_and_the_mode_and_show_them() {
    let d = fake();
    let id = d.launch(launch_params("scenario:plain", workdir(&d)));
    d.wait_ended(&id);
    let short = &id[..8];
    let changed = hlyr(
        &d,
        &[
            "settings",
            short,
            "--model",
            "claude-haiku-4-5",
            "--mode",
            "plan",
        ],
    );
    assert_in_order(
        &changed.assert_code(0).stdout,
        &[
            &format!("Session  {id}"),
            "Model    claude-haiku-4-5\n",
            "Mode     plan (edits wait until the plan is approved)\n",
            "Modes    none: every tool call is asked",
        ],
    );
    let state = d.state(&id);
    assert_eq!(state.model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(state.control.permission_mode, PermissionMode::Plan);
    let show = hlyr(&d, &["show", short]);
    assert_in_order(
        &show.assert_code(0).stdout,
        &[
            "Mode            plan (edits wait until the plan is approved)\n",
            "Model           claude-haiku-4-5\n",
        ],
    );

    let shown = hlyr(&d, &["--json", "settings", short, "--mode", "default"]);
    let shown = shown.assert_code(0).json_as("settings");
    assert_eq!(shown["model"], "claude-haiku-4-5");
    assert_eq!(shown["permission_mode"], "default");
    assert_eq!(
        d.state(&id).control.permission_mode,
        PermissionMode::Default
    );

    // The CLI's own modes are the daemon's rules; an empty model is no model.
    let wrong = hlyr(&d, &["settings", short, "--mode", "acceptEdits"]);
    assert!(
        wrong.assert_code(2).stderr.contains("--auto-accept-edits"),
        "{}",
        wrong.stderr
    );
    hlyr(&d, &["settings", short, "--model", " "]).assert_code(2);
}

#[test]
fn images_given_relative_to_the_cwd_are_attached_to_launch_and_send() {
    let d = fake();
    std::fs::write(d.dir.join("shot.png"), PNG).unwrap();
    let launched = hlyr(
        &d,
        &[
            "launch",
            "--detach",
            "--image",
            "shot.png",
            "-w",
            &workdir(&d),
            "what is this?",
        ],
    );
    let id = crate::hlyr::printed_session(launched.assert_code(0));
    d.wait_ended(&id);
    let sent = hlyr(
        &d,
        &["--json", "send", &id, "--image", "./shot.png", "and this?"],
    );
    sent.assert_code(0).json_as("sent");
    wait_for(WAIT, || (user_messages(&d, &id).len() == 2).then_some(()))
        .expect("the message delivered");
    assert_eq!(
        user_messages(&d, &id),
        [
            "what is this?\n[image: shot.png]",
            "and this?\n[image: shot.png]"
        ]
    );
    let claude = d.state(&id).claude_session_id.unwrap();
    let stdin = d.fake_invocation(&claude)["stdin"].to_string();
    assert!(stdin.contains(r#""type":"image""#), "{stdin}");
    // An image alone is a message.
    d.wait_ended(&id);
    hlyr(&d, &["send", &id, "--image", "shot.png"]).assert_code(0);
    wait_for(WAIT, || (user_messages(&d, &id).len() == 3).then_some(()))
        .expect("the image delivered");
    assert_eq!(user_messages(&d, &id)[2], "[image: shot.png]");
    hlyr(&d, &["send", &id]).assert_code(2);

    // The daemon refuses a missing image, naming it as resolved, and one that is no image,
    // in the flag's words; nothing is sent.
    let missing = hlyr(&d, &["send", &id, "--image", "nope.png", "x"]);
    let nope = d.dir.join("nope.png").display().to_string();
    assert!(
        missing.assert_code(2).stderr.contains(&nope),
        "{}",
        missing.stderr
    );
    std::fs::write(d.dir.join("notes.txt"), "not an image\n").unwrap();
    let text = hlyr(&d, &["send", &id, "--image", "notes.txt", "x"]);
    let notes = d.dir.join("notes.txt").display().to_string();
    assert_eq!(
        text.assert_code(2).stderr,
        format!("error: --image {notes} is not a PNG, JPEG, GIF or WebP image\n")
    );
    assert_eq!(user_messages(&d, &id).len(), 3);
}

#[tokio::test]
async fn the_sdk_sets_model_and_mode_lists_commands_suggests_files_and_sends_images() {
    let d = fake();
    let wd = workdir(&d);
    std::fs::write(Path::new(&wd).join("notes.md"), "notes").unwrap();
    let image = Path::new(&wd).join("shot.png");
    std::fs::write(&image, PNG).unwrap();
    let id = d.launch(launch_params("scenario:plain", &wd));
    d.wait_ended(&id);
    let client = d.client().await;

    client
        .update_session_settings(UpdateSessionSettingsParams {
            session_id: id.clone(),
            model: Some("claude-haiku-4-5".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    client
        .update_session_settings(Mode::Plan.settings(&id))
        .await
        .unwrap();
    let state = client.get_session_state(&id).await.unwrap();
    assert_eq!(state.model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(Mode::of(&state.control), Mode::Plan);

    let commands = client.list_slash_commands(&id).await.unwrap();
    assert!(
        commands
            .iter()
            .any(|c| c.name == "compact" && c.kind == SlashCommandKind::Command),
        "{commands:#?}"
    );
    let files = client.suggest_files(&id, "notes").await.unwrap();
    assert_eq!(files[0].path, "notes.md", "{files:#?}");

    client
        .send_message_with(SendMessageParams {
            session_id: id.clone(),
            text: "look".into(),
            images: Some(vec![image.display().to_string()]),
            ..Default::default()
        })
        .await
        .unwrap();
    wait_for(WAIT, || (user_messages(&d, &id).len() == 2).then_some(()))
        .expect("the message delivered");
    assert_eq!(user_messages(&d, &id)[1], "look\n[image: shot.png]");
}
