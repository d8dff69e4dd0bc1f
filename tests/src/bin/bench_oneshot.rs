//! A one-shot client standing in for `hlyr sessions --json` in the start-up benchmark until
//! that command exists: connect with `hld-client` (socket from `HUMANLAYER_DAEMON_SOCKET`),
//! `listSessions`, print the JSON, exit.

use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let sessions = match hld_client::Client::connect_default().await {
        Ok(client) => client.list_sessions().await,
        Err(e) => Err(e),
    };
    let printed = sessions
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::to_string(&s).map_err(|e| e.to_string()));
    match printed {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-oneshot: {e}");
            ExitCode::FAILURE
        }
    }
}
