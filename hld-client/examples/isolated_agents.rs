//! Launches one isolated agent per prompt on the git repository of the current directory, each
//! in its own worktree and branch (edits approved without asking), waits for their turns to
//! end, and prints each branch's changed files with their +/- counts.
//!
//! `cargo run -p hld-client --example isolated_agents -- "fix the parser" "add a test" "update the docs"`

use std::process::ExitCode;

use futures::StreamExt;
use hld_client::protocol::{GetSessionDiffParams, LaunchSessionParams, WorktreeParams};
use hld_client::{Client, FollowItem};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let prompts: Vec<String> = std::env::args().skip(1).collect();
    if prompts.is_empty() {
        eprintln!("usage: isolated_agents PROMPT...");
        return Ok(ExitCode::from(2));
    }
    let client = Client::connect_default().await?;
    let dir = std::env::current_dir()?.display().to_string();
    let mut follows = Vec::new();
    for query in prompts {
        let follow = client
            .launch_and_follow(LaunchSessionParams {
                query,
                working_dir: Some(dir.clone()),
                auto_accept_edits: Some(true),
                worktree: Some(WorktreeParams::default()),
                ..Default::default()
            })
            .await?;
        follows.push(follow);
    }
    // Each agent works in its own worktree at the same time; wait for each turn's end.
    for follow in &mut follows {
        while let Some(item) = follow.next().await {
            if matches!(item?, FollowItem::TurnEnded { .. }) {
                break;
            }
        }
    }
    for follow in &follows {
        let id = follow.session_id().to_owned();
        let state = client.get_session_state(&id).await?;
        let branch = state.worktree.map(|w| w.branch).unwrap_or_default();
        let diff = client
            .get_session_diff(GetSessionDiffParams {
                session_id: id.clone(),
                ..Default::default()
            })
            .await?;
        println!(
            "session {id} on {branch}: +{} -{}",
            diff.additions, diff.deletions
        );
        for file in diff.files {
            println!(
                "  {} {} +{} -{}",
                file.status, file.path, file.additions, file.deletions
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
