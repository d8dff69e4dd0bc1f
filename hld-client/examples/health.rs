//! Connects to the daemon at the default socket and prints its health and sessions.

use hld_client::Client;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), hld_client::Error> {
    let client = Client::connect_default().await?;
    let health = client.health().await?;
    println!("daemon {} is {}", health.version, health.status);
    for session in client.list_sessions().await? {
        println!("{} {} {}", session.id, session.status, session.summary);
    }
    Ok(())
}
