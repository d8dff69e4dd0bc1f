//! Logging: tracing to stderr or a file, colour only on a terminal, and a level that
//! `setLogLevel` can change at run time.

use std::io::IsTerminal;
use std::path::Path;

use hld_client::protocol::LOG_LEVELS;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, Registry};

/// Changes the log level of a running daemon.
#[derive(Clone)]
pub struct LogControl {
    handle: Option<reload::Handle<LevelFilter, Registry>>,
}

impl std::fmt::Debug for LogControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogControl").finish_non_exhaustive()
    }
}

/// Parses `debug|info|warn|error` in any case into (normalised name, filter).
pub fn parse_level(level: &str) -> Option<(&'static str, LevelFilter)> {
    let lower = level.trim().to_ascii_lowercase();
    let name = LOG_LEVELS.into_iter().find(|l| *l == lower)?;
    let filter = match name {
        "debug" => LevelFilter::DEBUG,
        "info" => LevelFilter::INFO,
        "warn" => LevelFilter::WARN,
        _ => LevelFilter::ERROR,
    };
    Some((name, filter))
}

impl LogControl {
    /// A control that changes nothing (for daemons embedded in tests).
    pub fn detached() -> Self {
        LogControl { handle: None }
    }

    /// Sets the level; returns the normalised name, or `None` for an unknown level.
    pub fn set_level(&self, level: &str) -> Option<&'static str> {
        let (name, filter) = parse_level(level)?;
        if let Some(handle) = &self.handle {
            // Fails only if the subscriber is gone, in which case nothing logs anyway.
            let _ = handle.modify(|f| *f = filter);
        }
        Some(name)
    }
}

/// Installs the global subscriber. Returns the control and a description of the sink.
pub fn init(
    level: &str,
    file: Option<&Path>,
    no_color: bool,
) -> Result<(LogControl, String), String> {
    let (_, filter) = parse_level(level).ok_or_else(|| {
        format!(
            "unknown log level {level:?} (accepted: {})",
            LOG_LEVELS.join(", ")
        )
    })?;
    let (filter_layer, handle) = reload::Layer::new(filter);
    let opened = file.map(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| (path.to_path_buf(), e))
    });
    let (writer, sink, fallback) = match opened {
        Some(Ok(f)) => (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::sync::Mutex::new(f)),
            "file".to_owned(),
            None,
        ),
        Some(Err((path, e))) => (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stderr),
            "stderr".to_owned(),
            Some(format!(
                "cannot open log file {}: {e}; logging to stderr",
                path.display()
            )),
        ),
        None => (
            tracing_subscriber::fmt::writer::BoxMakeWriter::new(std::io::stderr),
            "stderr".to_owned(),
            None,
        ),
    };
    let ansi = sink == "stderr" && !no_color && std::io::stderr().is_terminal();
    tracing_subscriber::registry()
        .with(filter_layer)
        .with(
            fmt::layer()
                .with_writer(writer)
                .with_ansi(ansi)
                .with_target(false),
        )
        .try_init()
        .map_err(|e| format!("cannot install logger: {e}"))?;
    if let Some(warning) = fallback {
        tracing::warn!("{warning}");
    }
    Ok((
        LogControl {
            handle: Some(handle),
        },
        sink,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_case_insensitive_and_normalised() {
        assert_eq!(parse_level("DEBUG").map(|l| l.0), Some("debug"));
        assert_eq!(parse_level("Info").map(|l| l.0), Some("info"));
        assert_eq!(parse_level("warn").map(|l| l.1), Some(LevelFilter::WARN));
        assert!(parse_level("verbose").is_none());
        assert!(parse_level("").is_none());
    }
}
