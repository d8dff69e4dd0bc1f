//! An isolated session with the real `claude` CLI (2.1.197) and the Messages API stand-in: its
//! `Write` lands in the session's worktree, not in the main checkout.

use hld_client::protocol::{LaunchSessionParams, SessionStatus, WorktreeParams};
use hld_e2e::anthropic::{self, system_text, AnthropicStandIn, Reply};
use hld_e2e::{launch_params, TestDaemon};
use serde_json::{json, Value};

use crate::real_claude::options;
use crate::worktrees::{git, repo};

/// The working directory `claude` tells the model about in its system prompt.
fn working_directory(request: &Value) -> String {
    let system = system_text(request);
    system
        .lines()
        .find_map(|l| l.trim().split_once("working directory: ").map(|(_, d)| d))
        .unwrap_or_else(|| panic!("no working directory in the system prompt:\n{system}"))
        .trim()
        .to_owned()
}

#[test]
fn the_real_clis_write_lands_in_the_worktree() {
    let api = AnthropicStandIn::start(|request| {
        if anthropic::tool_results(request).is_empty() {
            let file = format!("{}/hello.txt", working_directory(request));
            Reply::tool_use(
                "I'll create that file.",
                "toolu_01StandInWorktreeWrite001",
                "Write",
                json!({"file_path": file, "content": "Hello from the worktree!\n"}),
            )
        } else {
            Reply::text("Done.")
        }
    });
    let d = TestDaemon::start_with(options(Some(&api)));
    let repo = repo(&d);
    let id = d.launch(LaunchSessionParams {
        dangerously_skip_permissions: Some(true),
        worktree: Some(WorktreeParams {
            branch: Some("real".into()),
            base: None,
        }),
        ..launch_params("Create hello.txt", &repo)
    });
    let s = d.wait_ended(&id);
    assert_eq!(
        s.status,
        SessionStatus::Completed,
        "{s:?}\n{}",
        d.log_text()
    );
    let worktree = std::path::PathBuf::from(s.worktree.unwrap().path);
    assert_eq!(
        std::fs::read_to_string(worktree.join("hello.txt")).unwrap(),
        "Hello from the worktree!\n"
    );
    assert!(
        !repo.join("hello.txt").exists(),
        "the main checkout is untouched"
    );
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert!(git(&worktree, &["status", "--porcelain"]).contains("?? hello.txt"));
}
