//! `hlyr` with the real `claude` CLI 2.1.197 and the Messages API stand-in: a plan asked in
//! `hlyr launch --mode plan` and approved with `e` (its Write then goes through auto-accepted),
//! and a model switched with `/model` at the conversation's prompt, which answers the next
//! message.

use hld_client::mode::Mode;
use hld_e2e::anthropic::{AnthropicStandIn, Reply};
use hld_e2e::TestDaemon;

use crate::hlyr::assert_in_order;
use crate::hlyr_converse::{ended, PROMPT_HINT};
use crate::hlyr_modes::{on_terminal, PLAN_CHOICES};
use crate::real_claude::{options, scratch};
use crate::real_claude_modes::{models, plan_then_write};

#[test]
fn hlyr_approves_a_real_plan_with_e_and_its_write_goes_through_auto_accepted() {
    let dir = scratch();
    let api = AnthropicStandIn::start(plan_then_write(dir.path().to_owned()));
    let d = TestDaemon::start_with(options(Some(&api)));
    let wd = dir.path().display().to_string();
    let mut term = on_terminal(
        &d,
        &["launch", "--mode", "plan", "-w", &wd, "Create hello.txt"],
    );
    let screen = term.wait_screen(PLAN_CHOICES);
    assert_in_order(
        &screen,
        &[
            "→ Write",
            "✗ denied automatically (plan_mode)",
            "→ ExitPlanMode\n    # Plan\n    \n    1. Create `hello.txt` with `Hello, world!`\n",
            PLAN_CHOICES,
        ],
    );
    term.send("e");
    term.wait_screen("hello.txt is written.");
    let screen = term.wait_screen("◆ mode: accept edits");
    assert!(
        screen.contains("✓ approved automatically (auto_accept_edits)"),
        "{screen}"
    );
    assert_eq!(ended(&mut term), 0);
    let hello = dir.path().join("hello.txt");
    assert_eq!(std::fs::read_to_string(hello).unwrap(), "Hello, world!\n");
    let id = d.only_session();
    assert_eq!(Mode::of(&d.state(&id).control), Mode::AcceptEdits);
}

#[test]
fn a_model_switched_at_the_hlyr_prompt_answers_the_next_message() {
    let api = AnthropicStandIn::start(|_| Reply::text("Noted."));
    let d = TestDaemon::start_with(options(Some(&api)));
    let dir = scratch();
    let wd = dir.path().display().to_string();
    let mut term = on_terminal(&d, &["launch", "-w", &wd, "First"]);
    term.wait_screen(PROMPT_HINT);
    term.send("/model claude-haiku-4-5\r");
    term.wait_screen("◆ model: claude-haiku-4-5");
    term.send("Second\r");
    term.wait_count(PROMPT_HINT, 2);
    assert_eq!(models(&api), ["claude-opus-4-8", "claude-haiku-4-5"]);
    assert_eq!(ended(&mut term), 0);
}
