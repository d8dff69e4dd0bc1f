//! `hlyr daemon url`: what another machine needs to reach this daemon. With `--ws`, its
//! `ws://`/`wss://` address, the certificate's fingerprint, and where the token is (the token
//! itself only with `--show-token`); with `--http`, CodeLayer's daemon URL,
//! `http://ADDR/t/<secret>` (`https://` with TLS), from the secret in `daemon.http-token` next
//! to the socket.

use std::path::Path;

use crate::connect::not_running;
use crate::error::{CliError, Exit};
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also print the WebSocket token (a secret: whoever holds it can run agents here).
    #[arg(long)]
    show_token: bool,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let socket = ctx.socket()?;
    let client = hld_client::Client::connect(&socket)
        .await
        .map_err(|e| not_running(&hld_client::Address::Socket(socket.clone()), e))?;
    let health = client.health().await?;
    if health.ws_address.is_none() && health.http_address.is_none() {
        return Err(
            CliError::failure("the daemon serves neither WebSocket nor HTTP").hint(
                "start it with --ws ADDR (with --ws-tls-cert/--ws-tls-key for other machines) \
                 or --http 127.0.0.1:7777",
            ),
        );
    }
    let mut json = serde_json::Map::new();
    let mut lines = Vec::new();
    if let Some(address) = &health.ws_address {
        let fingerprint = health.ws_tls_fingerprint.as_deref();
        let scheme = if fingerprint.is_some() { "wss" } else { "ws" };
        let url = format!("{scheme}://{address}");
        lines.push(url.clone());
        json.insert("ws".into(), url.into());
        if let Some(fingerprint) = fingerprint {
            lines.push(format!("fingerprint {fingerprint}"));
            json.insert("fingerprint".into(), fingerprint.into());
        }
        let file = socket.with_file_name("daemon.ws-token");
        if args.show_token {
            let token = ws_token(&file)?;
            lines.push(format!("token {token}"));
            json.insert("token".into(), token.into());
        } else {
            lines.push(format!(
                "token in {} (--show-token prints it)",
                file.display()
            ));
        }
    }
    if let Some(address) = &health.http_address {
        let file = socket.with_file_name("daemon.http-token");
        let secret = std::fs::read_to_string(&file)
            .map_err(|e| CliError::failure(format!("cannot read {}: {e}", file.display())))?;
        let scheme = if health.http_tls { "https" } else { "http" };
        let url = format!("{scheme}://{address}/t/{}", secret.trim());
        lines.push(url.clone());
        json.insert("http".into(), url.into());
    }
    match ctx.out.is_json() {
        true => ctx.out.line(&serde_json::Value::Object(json).to_string())?,
        false => {
            for line in lines {
                ctx.out.line(&line)?;
            }
        }
    }
    Ok(Exit::Ok)
}

/// The WebSocket token the daemon uses: `ws_token` in humanlayer.json, else its token file.
fn ws_token(file: &Path) -> Result<String, CliError> {
    if let Some(token) =
        hld_client::config::config_file_value("ws_token").map_err(CliError::usage)?
    {
        return Ok(token);
    }
    std::fs::read_to_string(file)
        .map(|token| token.trim().to_owned())
        .map_err(|e| CliError::failure(format!("cannot read {}: {e}", file.display())))
}
