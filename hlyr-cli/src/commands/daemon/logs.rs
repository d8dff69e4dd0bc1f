//! `hlyr daemon logs [-n N] [-f]`: the daemon's log file (the one it reports, else the one a
//! daemon started by hlyr writes next to its socket), and with `--follow` what is written to
//! it next, until Ctrl-C. Under `--json`, one `{"type": "log", "line": …}` per line.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};

use crate::connect::is_not_running;
use crate::error::{CliError, Exit};
use crate::hint::hlyr_daemon;
use crate::output::Render;
use crate::Context;

/// How often a followed log is looked at for new lines.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keep printing lines as the daemon writes them (Ctrl-C stops).
    #[arg(short, long)]
    follow: bool,
    /// Only the last N lines.
    #[arg(short = 'n', long, value_name = "N")]
    lines: Option<usize>,
}

/// One line of the log under `--json`.
#[derive(serde::Serialize)]
#[serde(tag = "type", rename = "log")]
struct LogLine<'a> {
    line: &'a str,
}

impl Render for LogLine<'_> {
    fn human(&self) -> String {
        self.line.to_owned()
    }
}

/// The log file: the running daemon's, else the one next to the socket.
async fn log_file(ctx: &Context) -> Result<PathBuf, CliError> {
    let socket = ctx.socket()?;
    match hld_client::Client::connect(&socket).await {
        Ok(client) => {
            let health = client.health().await?;
            match health.log_file {
                Some(file) => Ok(PathBuf::from(file)),
                None if health.started_at.is_some() => Err(CliError::failure(
                    "the daemon logs to its stderr, not to a file",
                )
                .hint(
                    "start it with --log-file, or let hlyr start it (it logs next to its socket)",
                )),
                None => Ok(hld_client::autostart::log_path(&socket)),
            }
        }
        Err(e) if is_not_running(&e) => Ok(hld_client::autostart::log_path(&socket)),
        Err(e) => Err(crate::connect::not_running(
            &hld_client::Address::Socket(socket.clone()),
            e,
        )),
    }
}

/// Prints `text`'s lines (a last line without its newline too).
fn print_lines(ctx: &Context, text: &str) -> Result<(), CliError> {
    if ctx.out.is_json() {
        for line in text.lines() {
            ctx.out.print(&LogLine { line })?;
        }
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    if !text.is_empty() && !text.ends_with('\n') {
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// The whole of `path` from `from` on, as text, and where it ended.
fn read_from(path: &Path, from: u64) -> std::io::Result<(String, u64)> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    // Only whole lines: a line still being written waits for the next look.
    let end = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    bytes.truncate(end);
    let read = bytes.len() as u64;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), from + read))
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let path = log_file(ctx).await?;
    let (text, mut at) = read_from(&path, 0).map_err(|e| {
        CliError::failure(format!("cannot read the log {}: {e}", path.display())).hint(format!(
            "a daemon started by hlyr logs next to its socket; see {}",
            hlyr_daemon(None, "status")
        ))
    })?;
    let skip = args
        .lines
        .map_or(0, |n| text.lines().count().saturating_sub(n));
    let shown: String = text.split_inclusive('\n').skip(skip).collect();
    print_lines(ctx, &shown)?;
    if !args.follow {
        return Ok(Exit::Ok);
    }
    let mut sigint = signal(SignalKind::interrupt())
        .map_err(|e| CliError::failure(format!("cannot listen for Ctrl-C: {e}")))?;
    loop {
        tokio::select! {
            () = tokio::time::sleep(POLL) => {}
            // Between looks: nothing is left half-printed.
            _ = sigint.recv() => return Ok(Exit::CtrlC),
        }
        // A log cut short or replaced is read again from its start.
        let len = std::fs::metadata(&path).map_or(0, |m| m.len());
        if len < at {
            at = 0;
        }
        if len > at {
            let (text, end) = read_from(&path, at)?;
            print_lines(ctx, &text)?;
            at = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_lines_are_read_and_the_rest_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.log");
        std::fs::write(&path, "one\ntwo\nthr").unwrap();
        let (text, at) = read_from(&path, 0).unwrap();
        assert_eq!((text.as_str(), at), ("one\ntwo\n", 8));
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let (text, at) = read_from(&path, at).unwrap();
        assert_eq!((text.as_str(), at), ("three\n", 14));
    }
}
