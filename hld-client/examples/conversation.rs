//! Holds a conversation with one agent, in one session: launches it with the first prompt,
//! follows it to the end of its turn, sends the next prompt into the same session, follows
//! that turn, and so on. Exits 0 when every turn completed, 1 when one failed.
//!
//! `cargo run -p hld-client --example conversation -- "write a haiku" "now one about rust"`

use std::process::ExitCode;

use futures::StreamExt;
use hld_client::protocol::{
    ConversationEventType, LaunchSessionParams, MessageMode, SessionStatus,
};
use hld_client::{Client, Follow, FollowItem};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let mut prompts = std::env::args().skip(1);
    let Some(first) = prompts.next() else {
        eprintln!("usage: conversation PROMPT [NEXT_PROMPT…]");
        return Ok(ExitCode::from(2));
    };
    let client = Client::connect_default().await?;
    let mut follow = client
        .launch_and_follow(LaunchSessionParams {
            query: first,
            working_dir: Some(std::env::current_dir()?.display().to_string()),
            ..Default::default()
        })
        .await?;
    let session = follow.session_id().to_owned();
    println!("session {session}");
    loop {
        if turn(&mut follow).await? == SessionStatus::Failed {
            return Ok(ExitCode::FAILURE);
        }
        let Some(next) = prompts.next() else {
            return Ok(ExitCode::SUCCESS);
        };
        println!("user: {next}");
        // The same session goes on: its warm process reads the message, or the daemon
        // resumes it. Following again picks up after what was printed.
        client
            .send_message(&session, &next, MessageMode::Queue)
            .await?;
        follow = client
            .follow_after(&session, follow.last_sequence())
            .await?;
    }
}

/// Prints the agent's side of one turn, and returns how the turn ended.
async fn turn(follow: &mut Follow) -> Result<SessionStatus, hld_client::Error> {
    while let Some(item) = follow.next().await {
        match item? {
            FollowItem::Conversation(event) => match event.event_type {
                ConversationEventType::Message if event.role.as_deref() == Some("assistant") => {
                    println!(
                        "assistant: {}",
                        event.content.as_deref().unwrap_or_default()
                    )
                }
                ConversationEventType::ToolCall => {
                    println!("tool call: {}", event.tool_name.as_deref().unwrap_or("?"))
                }
                _ => {}
            },
            FollowItem::TurnEnded { status, .. } => {
                println!("turn ended: {status}");
                return Ok(status);
            }
            FollowItem::Ended(state) => {
                println!("ended: {}", state.status);
                return Ok(state.status);
            }
            _ => {}
        }
    }
    Err(hld_client::Error::Disconnected)
}
