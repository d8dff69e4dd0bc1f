//! Changing course mid-session: Shift+Tab cycles the mode (shown in the row and the title
//! bar), M picks the model, the reply box completes `/` commands and `@` files, a plan
//! approval shows the plan, and a compaction and attached images read as such.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use hld_client::mode::Mode;
use hld_client::protocol::{
    Event, PermissionMode, SendDecisionParams, SessionControl, SlashCommand, SlashCommandKind,
};
use hld_tui::app::{update, Command, Modal, Msg, State, Trigger};
use ratatui::style::Modifier;
use serde_json::json;

use super::fixtures::*;
use super::settings::settings_of;

fn back_tab() -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT))
}

fn settings_changed(session_id: &str, control: SessionControl, model: Option<&str>) -> Msg {
    timed(Event::SessionSettingsChanged {
        session_id: session_id.into(),
        run_id: format!("run-{session_id}"),
        control,
        model: model.map(str::to_owned),
        reason: "updated".into(),
    })
}

/// The text of the open conversation's reply box.
fn reply_text(state: &State) -> String {
    let c = state.conversation.as_ref().unwrap();
    c.reply
        .as_ref()
        .expect("the reply box is open")
        .lines()
        .join("\n")
}

/// The first row of the screen (the title bar).
fn title_bar(state: &State) -> String {
    screen(state, false).lines().next().unwrap().to_owned()
}

#[test]
fn shift_tab_steps_from_the_mode_the_daemon_reports_which_the_row_and_title_bar_show() {
    let mut state = loaded(120, 40);
    // The list's first row is the running session; it starts in the default mode. Each
    // press asks for the next mode; the row shows what the daemon then reports.
    for expected in [Mode::AcceptEdits, Mode::Plan, Mode::Default] {
        let params = settings_of(update(&mut state, back_tab()));
        assert_eq!(params, expected.settings("s-run"));
        let control = SessionControl {
            permission_mode: params.permission_mode.unwrap(),
            auto_accept_edits: params.auto_accept_edits.unwrap(),
            ..Default::default()
        };
        // A list loaded before the change may be on its way: a newer load is asked for.
        assert_eq!(
            update(&mut state, settings_changed("s-run", control, None)),
            [Command::LoadSessions]
        );
        let shown = screen(&state, false);
        let row = shown
            .lines()
            .find(|l| l.contains("Refactor the parser"))
            .unwrap();
        match expected {
            Mode::Plan => assert!(row.contains("⏸ Refactor"), "{row}"),
            Mode::AcceptEdits => assert!(row.contains("✎ Refactor"), "{row}"),
            Mode::Default => assert!(!row.contains('⏸') && !row.contains('✎'), "{row}"),
        }
    }
    // Pressed again before the daemon answers, it asks for the same mode: the row never
    // shows a mode the daemon does not have.
    let twice = [back_tab(), back_tab()].map(|k| settings_of(update(&mut state, k)));
    assert_eq!(
        twice,
        [
            Mode::AcceptEdits.settings("s-run"),
            Mode::AcceptEdits.settings("s-run")
        ]
    );

    // In the session's view the title bar says the mode and the model; the daemon's event
    // (another front end switched it) is what it shows.
    update(&mut state, key(KeyCode::Enter));
    assert!(
        title_bar(&state).contains("default · opus-4-1"),
        "{}",
        title_bar(&state)
    );
    let plan = SessionControl {
        permission_mode: PermissionMode::Plan,
        ..Default::default()
    };
    update(
        &mut state,
        settings_changed("s-run", plan, Some("claude-sonnet-4-5")),
    );
    let bar = title_bar(&state);
    assert!(bar.contains("⏸ plan · sonnet-4-5"), "{bar}");
    // Shift+Tab works from the reply box too, and goes on from what the daemon said.
    keys(&mut state, "r");
    let params = settings_of(update(&mut state, back_tab()));
    assert_eq!(params, Mode::Default.settings("s-run"));
    assert_eq!(reply_text(&state), "", "the key is not typed");
}

#[test]
fn m_picks_a_recent_model_an_alias_or_any_text_and_the_view_shows_the_new_model() {
    let mut state = loaded(120, 40);
    let mut sessions = sessions();
    sessions[1].model = Some("claude-sonnet-4-5".into());
    update(&mut state, Msg::Sessions(sessions));
    // The waiting session, whose model is sonnet.
    update(&mut state, key(KeyCode::Down));
    update(&mut state, key(KeyCode::Enter));
    keys(&mut state, "M");
    let shown = screen(&state, false);
    let listed: Vec<&str> = [
        "claude-opus-4-1",
        "● claude-sonnet-4-5  (now)",
        "opus",
        "haiku",
    ]
    .into_iter()
    .filter(|m| !shown.contains(m))
    .collect();
    assert!(listed.is_empty(), "missing {listed:?}:\n{shown}");
    assert_eq!(
        hld_tui::app::recent_models(&state),
        [
            "claude-opus-4-1",
            "claude-sonnet-4-5",
            "opus",
            "sonnet",
            "haiku"
        ]
    );

    // Typing narrows the list to the matches, best first, and Enter takes the first: what
    // was typed begins the alias, which comes before the recent model that only contains it.
    keys(&mut state, "sonn");
    let Some(Modal::Model(picker)) = &state.modal else {
        panic!("{:?}", state.modal)
    };
    assert_eq!(picker.choices(), ["sonnet", "claude-sonnet-4-5", "sonn"]);
    let shown = screen(&state, false);
    assert!(!shown.contains("claude-opus-4-1"), "{shown}");
    assert!(shown.contains("sonn  (as typed)"), "{shown}");
    let params = settings_of(update(&mut state, key(KeyCode::Enter)));
    assert_eq!(params.model.as_deref(), Some("sonnet"));
    assert_eq!(params.session_id, "s-wait");
    assert!(state.modal.is_none());

    // The typed text, last, is taken when moved to.
    keys(&mut state, "Mhai");
    update(&mut state, key(KeyCode::Down));
    let params = settings_of(update(&mut state, key(KeyCode::Enter)));
    assert_eq!(params.model.as_deref(), Some("hai"));

    // Any text is a model: matching none, it goes to claude unchecked.
    keys(&mut state, "Mclaude-opus-4-5-20251101");
    let params = settings_of(update(&mut state, key(KeyCode::Enter)));
    assert_eq!(params.model.as_deref(), Some("claude-opus-4-5-20251101"));

    // Esc changes nothing; the daemon's event is what the view shows.
    keys(&mut state, "M");
    assert!(update(&mut state, key(KeyCode::Esc)).is_empty());
    assert!(state.modal.is_none());
    update(
        &mut state,
        settings_changed("s-wait", SessionControl::default(), Some("haiku")),
    );
    assert!(
        title_bar(&state).contains("· haiku"),
        "{}",
        title_bar(&state)
    );
}

fn slash_commands() -> Vec<SlashCommand> {
    let command = |name: &str, description: &str, kind| SlashCommand {
        name: name.into(),
        description: description.into(),
        argument_hint: None,
        kind,
    };
    vec![
        command(
            "compact",
            "Clear conversation history but keep a summary",
            SlashCommandKind::Command,
        ),
        command("context", "Show context usage", SlashCommandKind::Command),
        command("review", "Review a pull request", SlashCommandKind::Command),
        command("code-review", "Review the code", SlashCommandKind::Skill),
        command(
            "Explore",
            "Fast read-only search agent",
            SlashCommandKind::Agent,
        ),
    ]
}

#[test]
fn slash_at_the_start_completes_the_sessions_commands() {
    let mut state = with_conversation(80, 24);
    assert_eq!(
        keys(&mut state, "r"),
        [Command::LoadCommands("s-wait".into())]
    );
    keys(&mut state, "/co");
    // The answer arrives while the list is open: it fills it.
    update(
        &mut state,
        Msg::Commands {
            session_id: "s-wait".into(),
            commands: slash_commands(),
        },
    );
    let shown = screen(&state, false);
    assert!(
        shown.contains(" Commands (Tab takes, Esc closes) "),
        "{shown}"
    );
    for line in [
        "/compact  Clear conversation",
        "/context  Show context",
        "/code-review",
    ] {
        assert!(shown.contains(line), "{line}:\n{shown}");
    }
    assert!(
        !shown.contains("/review") && !shown.contains("Explore"),
        "{shown}"
    );
    insta::assert_snapshot!("slash_completion_80x24", shown);

    // ↓ then Tab takes the second; the list closes with the token done.
    update(&mut state, key(KeyCode::Down));
    assert!(update(&mut state, key(KeyCode::Tab)).is_empty());
    assert_eq!(reply_text(&state), "/context ");
    assert!(!screen(&state, false).contains(" Commands ("));

    // Esc closes the list and keeps the box; Enter on a complete token sends it.
    for _ in 0.."/context ".len() {
        update(&mut state, key(KeyCode::Backspace));
    }
    keys(&mut state, "/compact");
    let c = state.conversation.as_ref().unwrap();
    assert_eq!(c.complete.open.as_ref().unwrap().trigger, Trigger::Command);
    update(&mut state, key(KeyCode::Esc));
    assert!(!screen(&state, false).contains(" Commands ("));
    assert_eq!(reply_text(&state), "/compact");
    keys(&mut state, "x");
    update(&mut state, key(KeyCode::Backspace));
    assert!(
        !screen(&state, false).contains(" Commands ("),
        "stays closed"
    );
    assert_eq!(
        update(&mut state, key(KeyCode::Enter)),
        [Command::Send {
            session_id: "s-wait".into(),
            text: "/compact".into()
        }]
    );
}

#[test]
fn at_completes_files_from_suggest_files_and_drops_answers_for_older_text() {
    let mut state = with_conversation(80, 24);
    keys(&mut state, "r");
    keys(&mut state, "look at ");
    let asked = keys(&mut state, "@sr");
    let suggest = |query: &str| Command::SuggestFiles {
        session_id: "s-wait".into(),
        query: query.into(),
    };
    assert_eq!(asked, [suggest(""), suggest("s"), suggest("sr")]);
    let files = |query: &str, files: &[&str]| Msg::Files {
        session_id: "s-wait".into(),
        query: query.into(),
        files: files.iter().map(|f| f.to_string()).collect(),
    };
    // An answer for text no longer typed is dropped.
    update(&mut state, files("s", &["scripts/", "src/"]));
    let shown = screen(&state, false);
    assert!(!shown.contains("@scripts/"), "{shown}");
    assert!(shown.contains("looking…"), "{shown}");
    update(&mut state, files("sr", &["src/", "src/main.rs"]));
    let shown = screen(&state, false);
    assert!(
        shown.contains("@src/") && shown.contains("@src/main.rs"),
        "{shown}"
    );

    // A directory is taken without a space, and its files are asked for next.
    assert_eq!(update(&mut state, key(KeyCode::Enter)), [suggest("src/")]);
    assert_eq!(reply_text(&state), "look at @src/");
    update(&mut state, files("src/", &["src/main.rs", "src/lib.rs"]));
    update(&mut state, key(KeyCode::Down));
    update(&mut state, key(KeyCode::Tab));
    assert_eq!(reply_text(&state), "look at @src/lib.rs ");
    // An `@` inside a word is no mention.
    assert!(keys(&mut state, "mail@x").is_empty());
}

#[test]
fn a_plan_approval_shows_the_plan_and_a_approves_while_a_capital_a_also_accepts_edits() {
    let plan =
        "# Add a greeting\n\n1. Write `hello.txt`\n2. Run the tests\n\n```sh\ncargo test\n```";
    let mut state = with_conversation(100, 40);
    let call = event(
        7,
        "s-wait",
        json!({"event_type": "tool_call", "role": "assistant", "tool_id": "tool-p1",
            "tool_name": "ExitPlanMode", "tool_input_json": json!({"plan": plan}).to_string()}),
    );
    update(&mut state, stored(call));
    let approval = approval("p1", "s-wait", "ExitPlanMode", json!({"plan": plan}), 1);
    update(&mut state, Msg::Approvals(vec![approval.clone()]));
    let shown = screen(&state, false);
    for line in [
        "│ # Add a greeting",
        "│ 1. Write hello.txt",
        "│ 2. Run the tests",
        "│ │ cargo test",
        "plan waiting: a approve · A approve + accept edits · d keep planning",
    ] {
        assert!(shown.contains(line), "{line}:\n{shown}");
    }
    assert!(!shown.contains("\"plan\""), "not as JSON:\n{shown}");

    // The approvals list names the plan by its heading, and its detail shows it whole.
    keys(&mut state, "2");
    let shown = screen(&state, false);
    assert!(shown.contains("ExitPlanMode # Add a greeting"), "{shown}");
    assert!(shown.contains("A approve + accept edits"), "{shown}");

    // d keeps planning, with what to change.
    keys(&mut state, "d");
    assert!(screen(&state, false).contains("Keep planning: what should change?"));
    update(&mut state, key(KeyCode::Esc));

    // A approves, then turns auto-accept of edits on.
    assert_eq!(
        keys(&mut state, "A"),
        [Command::ApproveAcceptingEdits {
            decision: SendDecisionParams {
                call_id: Some("p1".into()),
                kind: Some("function_call".into()),
                decision: Some("approve".into()),
                comment: None,
            },
            session_id: "s-wait".into(),
        }]
    );
    assert!(state.approvals.is_empty());
}

#[test]
fn a_compaction_is_one_dim_rule_and_attached_images_read_as_attachments() {
    let mut state = with_conversation(80, 40);
    let added = [
        event(
            7,
            "s-wait",
            json!({"event_type": "system", "subtype": "compact_boundary",
                "content": "Conversation compacted (45,210 tokens before)"}),
        ),
        event(
            8,
            "s-wait",
            json!({"event_type": "message", "role": "user",
                "content": "what is wrong here?\n[image: shot.png]\n[image: log.jpg]"}),
        ),
    ];
    for e in added {
        update(&mut state, stored(e));
    }
    let shown = screen(&state, false);
    let rule = "──── Conversation compacted (45,210 tokens before) ────";
    let row = shown.lines().position(|l| l == rule).expect(&shown);
    for line in [
        "› what is wrong here?",
        "  [image] shot.png",
        "  [image] log.jpg",
    ] {
        assert!(shown.lines().any(|l| l == line), "{line}:\n{shown}");
    }
    assert!(!shown.contains("[image: "), "{shown}");
    // The rule is dim.
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(80, 40)).unwrap();
    terminal
        .draw(|f| hld_tui::view::draw(&state, f, true))
        .unwrap();
    let cell = &terminal.backend().buffer()[(6, row as u16)];
    assert!(cell.modifier.contains(Modifier::DIM), "{cell:?}");
}

#[test]
fn screen_model_picker() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut state = with_conversation(w, h);
        keys(&mut state, "M");
        insta::assert_snapshot!(format!("model_picker_{w}x{h}"), screen(&state, true));
    }
}

#[test]
fn the_launch_form_launches_in_plan_mode() {
    let mut state = loaded(80, 24);
    keys(&mut state, "cplan the refactor");
    for _ in 0..3 {
        update(&mut state, key(KeyCode::Tab));
    }
    update(&mut state, key(KeyCode::Right));
    update(&mut state, key(KeyCode::Right));
    assert!(screen(&state, false).contains("plan mode: approve a plan first"));
    let commands = update(&mut state, key(KeyCode::Enter));
    let [Command::Launch(params)] = commands.as_slice() else {
        panic!("{commands:?}")
    };
    assert_eq!(params.permission_mode, Some(PermissionMode::Plan));
    assert_eq!(params.auto_accept_edits, None);
    assert_eq!(params.no_approvals, None);
}
