//! Where events go: one JSON line each for `stream-json`, or the final shape of the
//! `json` and `text` output formats.

use std::io::{self, BufWriter, Stdout, Write};

use crate::cli::OutputFormat;
use crate::events::Event;

/// The stdout sink of a run.
#[derive(Debug)]
pub struct Output {
    format: OutputFormat,
    verbose: bool,
    writer: BufWriter<Stdout>,
    /// Flush after every line (the default; the `many` scenario turns it off).
    line_flush: bool,
    /// `--output-format json --verbose` prints all events as one array at the end.
    collected: Vec<String>,
}

impl Output {
    pub fn new(format: OutputFormat, verbose: bool) -> Self {
        Self {
            format,
            verbose,
            writer: BufWriter::with_capacity(1 << 16, io::stdout()),
            line_flush: true,
            collected: Vec::new(),
        }
    }

    /// Whether each line is flushed as soon as it is written.
    pub fn set_line_flush(&mut self, on: bool) {
        self.line_flush = on;
    }

    /// Writes (or, for `json --verbose`, collects) an event other than `result`.
    pub fn emit(&mut self, event: &Event) -> io::Result<()> {
        let line = serde_json::to_string(event)?;
        match self.format {
            OutputFormat::StreamJson => self.write_line(&line),
            OutputFormat::Json if self.verbose => {
                self.collected.push(line);
                Ok(())
            }
            OutputFormat::Json | OutputFormat::Text => Ok(()),
        }
    }

    /// Writes a line that is not a valid event (stream-json only).
    pub fn emit_raw(&mut self, line: &str) -> io::Result<()> {
        match self.format {
            OutputFormat::StreamJson => self.write_line(line),
            OutputFormat::Json | OutputFormat::Text => Ok(()),
        }
    }

    /// Writes the `result` event, whose `text` is all that `--output-format text` prints,
    /// and flushes.
    pub fn emit_result(&mut self, event: &Event, text: &str) -> io::Result<()> {
        let line = serde_json::to_string(event)?;
        match self.format {
            OutputFormat::StreamJson => self.write_line(&line)?,
            OutputFormat::Json if self.verbose => {
                self.collected.push(line);
                let array = format!("[{}]", self.collected.join(","));
                self.write_line(&array)?;
            }
            OutputFormat::Json => self.write_line(&line)?,
            OutputFormat::Text => self.write_line(text)?,
        }
        self.flush()
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    fn write_line(&mut self, line: &str) -> io::Result<()> {
        self.writer.write_all(line.as_bytes())?;
        self.writer.write_all(b"\n")?;
        if self.line_flush {
            self.writer.flush()?;
        }
        Ok(())
    }
}
