//! Prints the daemon's sessions as one JSON array, newest activity first; with a status
//! argument (`running`, `completed`, …), only the sessions in it.
//!
//! `cargo run -p hld-client --example list_json -- completed | jq '.[].id'`

use hld_client::protocol::SessionStatus;
use hld_client::Client;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let only = std::env::args()
        .nth(1)
        .map(|s| SessionStatus::from(s.as_str()));
    let client = Client::connect_default().await?;
    let mut sessions = client.list_sessions().await?;
    if let Some(status) = &only {
        sessions.retain(|s| &s.status == status);
    }
    println!("{}", serde_json::to_string_pretty(&sessions)?);
    Ok(())
}
