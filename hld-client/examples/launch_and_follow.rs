//! Launches a session in the current directory with the prompt given as arguments, prints it
//! as it happens (from its first event to its end, nothing lost or twice), and exits 0 when it
//! completed, 1 when it failed.
//!
//! `cargo run -p hld-client --example launch_and_follow -- "write a haiku about sockets"`

use std::process::ExitCode;

use futures::StreamExt;
use hld_client::protocol::{ConversationEventType, LaunchSessionParams, SessionStatus};
use hld_client::{Client, FollowItem};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let query = std::env::args().skip(1).collect::<Vec<_>>().join(" ");
    if query.is_empty() {
        eprintln!("usage: launch_and_follow PROMPT");
        return Ok(ExitCode::from(2));
    }
    let client = Client::connect_default().await?;
    let mut follow = client
        .launch_and_follow(LaunchSessionParams {
            query,
            working_dir: Some(std::env::current_dir()?.display().to_string()),
            ..Default::default()
        })
        .await?;
    println!("session {}", follow.session_id());
    while let Some(item) = follow.next().await {
        match item? {
            FollowItem::Conversation(event) => match event.event_type {
                ConversationEventType::Message => println!(
                    "{}: {}",
                    event.role.as_deref().unwrap_or("?"),
                    event.content.as_deref().unwrap_or_default()
                ),
                ConversationEventType::ToolCall => println!(
                    "tool call: {} {}",
                    event.tool_name.as_deref().unwrap_or("?"),
                    event.tool_input_json.as_deref().unwrap_or_default()
                ),
                ConversationEventType::ToolResult => {
                    let content = event.tool_result_content.unwrap_or_default();
                    println!(
                        "tool result: {}",
                        content.lines().next().unwrap_or_default()
                    )
                }
                _ => {}
            },
            FollowItem::ApprovalRequested(approval) => println!(
                "approval {} waits for a decision on {}",
                approval.id,
                approval.function_name.as_deref().unwrap_or("a question")
            ),
            FollowItem::ApprovalResolved {
                approval_id,
                decision,
                ..
            } => println!("approval {approval_id}: {}", decision.as_str()),
            FollowItem::Status { new_status, .. } => println!("status: {new_status}"),
            FollowItem::Lagged { missed } => {
                eprintln!("fell behind by {missed} events; caught up from the store")
            }
            FollowItem::Ended(state) => {
                println!("ended: {}", state.status);
                if state.status == SessionStatus::Failed {
                    return Ok(ExitCode::FAILURE);
                }
            }
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}
