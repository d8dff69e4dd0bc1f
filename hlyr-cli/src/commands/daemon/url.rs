//! `hlyr daemon url`: CodeLayer's daemon URL, `http://ADDR/t/<secret>`, from the address
//! `health` reports and the secret in `daemon.http-token` next to the socket.

use crate::connect::not_running;
use crate::error::{CliError, Exit};
use crate::Context;

pub async fn run(ctx: &Context) -> Result<Exit, CliError> {
    let socket = ctx.socket()?;
    let client = hld_client::Client::connect(&socket)
        .await
        .map_err(|e| not_running(&socket, e))?;
    let health = client.health().await?;
    let Some(address) = health.http_address else {
        return Err(CliError::failure("the daemon serves no HTTP API")
            .hint("start it with --http 127.0.0.1:7777 (or http_address in humanlayer.json)"));
    };
    let file = socket.with_file_name("daemon.http-token");
    let secret = std::fs::read_to_string(&file)
        .map_err(|e| CliError::failure(format!("cannot read {}: {e}", file.display())))?;
    let url = format!("http://{address}/t/{}", secret.trim());
    match ctx.out.is_json() {
        true => ctx
            .out
            .line(&serde_json::json!({ "http": url }).to_string())?,
        false => ctx.out.line(&url)?,
    }
    Ok(Exit::Ok)
}
