//! Approves every file write (`Write`, `Edit`, `MultiEdit`) any session asks for, and leaves
//! every other approval to a person. Runs until the daemon stops; Ctrl-C ends it.
//!
//! `cargo run -p hld-client --example approve_all_writes`

use std::collections::HashSet;

use futures::StreamExt;
use hld_client::protocol::{Approval, Event, EventType, SubscribeParams};
use hld_client::{Client, Error, SubscribeOptions, SubscriptionItem};

/// The tools that write files.
const WRITES: [&str; 3] = ["Write", "Edit", "MultiEdit"];

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let client = Client::connect_default().await?;
    // Subscribe before reading what already waits: nothing falls in between.
    let mut events = client
        .subscribe(
            SubscribeParams::types([EventType::NewApproval]),
            SubscribeOptions::default(),
        )
        .await?;
    let mut seen = HashSet::new();
    for approval in client.fetch_approvals(None).await? {
        decide(&client, &mut seen, approval).await?;
    }
    println!("watching for writes");
    while let Some(item) = events.next().await {
        if let SubscriptionItem::Event(timed) = item? {
            if let Event::NewApproval { approval, .. } = timed.event {
                decide(&client, &mut seen, *approval).await?;
            }
        }
    }
    Ok(())
}

/// Approves `approval` if it is a write; each approval once.
async fn decide(
    client: &Client,
    seen: &mut HashSet<String>,
    approval: Approval,
) -> Result<(), Error> {
    if !seen.insert(approval.id.clone()) {
        return Ok(());
    }
    let tool = approval.function_name.as_deref().unwrap_or_default();
    if !WRITES.contains(&tool) {
        let what = if tool.is_empty() { "a question" } else { tool };
        println!("left {} ({what}) for a person", approval.id);
        return Ok(());
    }
    let path = approval
        .function_args
        .as_ref()
        .and_then(|args| args["file_path"].as_str())
        .unwrap_or("?");
    match client.approve(&approval.id).await {
        Ok(()) => println!("approved {} ({tool} {path})", approval.id),
        // Decided elsewhere first, or its session ended: nothing left to do.
        Err(Error::Refused { reason, .. }) => {
            println!("skipped {} ({tool} {path}): {reason:?}", approval.id)
        }
        Err(e) => return Err(e),
    }
    Ok(())
}
