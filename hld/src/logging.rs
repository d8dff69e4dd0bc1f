//! Logging: tracing to stderr or a file, colour only on a terminal, a level `setLogLevel` can
//! change, and control characters escaped in every record so that no client can forge a line.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use hld_client::protocol::LOG_LEVELS;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, reload, Registry};

/// Changes the log level of a running daemon.
#[derive(Clone)]
pub struct LogControl {
    handle: Option<reload::Handle<LevelFilter, Registry>>,
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
        // Private, like the database: it names sessions, tools and errors.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| (path.to_path_buf(), e))
    });
    let (writer, sink, fallback) = match opened {
        Some(Ok(f)) => (BoxMakeWriter::new(std::sync::Mutex::new(f)), "file", None),
        Some(Err((path, e))) => (
            BoxMakeWriter::new(std::io::stderr),
            "stderr",
            Some(format!(
                "cannot open log file {}: {e}; logging to stderr",
                path.display()
            )),
        ),
        None => (BoxMakeWriter::new(std::io::stderr), "stderr", None),
    };
    let ansi = sink == "stderr" && !no_color && std::io::stderr().is_terminal();
    tracing_subscriber::registry()
        .with(filter_layer)
        .with(
            fmt::layer()
                .with_writer(Escaping {
                    inner: writer,
                    keep_esc: ansi,
                })
                .with_ansi(ansi)
                .with_target(false),
        )
        .try_init()
        .map_err(|e| format!("cannot install logger: {e}"))?;
    if let Some(warning) = fallback {
        tracing::warn!("{warning}");
    }
    let control = LogControl {
        handle: Some(handle),
    };
    Ok((control, sink.to_owned()))
}

/// A writer that escapes what the formatter wrote, one record (with its newline) per call.
struct Escaping<M> {
    inner: M,
    /// Whether ESC passes: only when colouring (the formatter escapes it in fields itself).
    keep_esc: bool,
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Escaping<M> {
    type Writer = EscapingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        EscapingWriter {
            inner: self.inner.make_writer(),
            keep_esc: self.keep_esc,
        }
    }
}

struct EscapingWriter<W> {
    inner: W,
    keep_esc: bool,
}

impl<W: Write> Write for EscapingWriter<W> {
    fn write(&mut self, record: &[u8]) -> io::Result<usize> {
        self.inner
            .write_all(&escape_record(record, self.keep_esc))?;
        Ok(record.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `record` with each control character but its final newline written as an escape (`\n`,
/// `\r`, `\x1b`, …): C0 controls but tab, DEL, and the C1 controls (UTF-8 `C2 80`–`C2 9F`).
fn escape_record(record: &[u8], keep_esc: bool) -> Cow<'_, [u8]> {
    let body = record.strip_suffix(b"\n").unwrap_or(record);
    let control = |i: usize| match body[i] {
        0x1b => !keep_esc,
        b'\t' => false,
        b if b < 0x20 || b == 0x7f => true,
        0xc2 => body.get(i + 1).is_some_and(|b| (0x80..0xa0).contains(b)),
        _ => false,
    };
    if !(0..body.len()).any(control) {
        return Cow::Borrowed(record);
    }
    let mut out = Vec::with_capacity(record.len() + 16);
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            _ if !control(i) => out.push(body[i]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0xc2 => {
                i += 1;
                out.extend_from_slice(format!("\\u{{{:x}}}", body[i]).as_bytes());
            }
            b => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
        i += 1;
    }
    out.extend_from_slice(&record[body.len()..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_keeps_one_line_whatever_its_fields_hold() {
        let escaped = |record: &str, keep_esc| {
            String::from_utf8(escape_record(record.as_bytes(), keep_esc).into_owned()).unwrap()
        };
        assert_eq!(
            escaped(
                "WARN unknown method method=a\nINFO forged\r\x1b[2J\n",
                false
            ),
            "WARN unknown method method=a\\nINFO forged\\r\\x1b[2J\n"
        );
        assert_eq!(
            escaped("x\u{9b}31m\x7f\ty\n", false),
            "x\\u{9b}31m\\x7f\ty\n"
        );
        assert_eq!(
            escaped("\x1b[33mWARN\x1b[0m é\n", true),
            "\x1b[33mWARN\x1b[0m é\n"
        );
        assert!(matches!(
            escape_record(b"plain record\n", false),
            Cow::Borrowed(_)
        ));
    }
}
