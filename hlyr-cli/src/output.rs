//! Shared printing. Every command hands its result to one [`Printer`], which writes either the
//! item's JSON (one line) or its text: `--json` is a second printer, not a second code path.
//! Styles are always written; `anstream` strips them when stdout is not a terminal or
//! `NO_COLOR` is set.

use std::fmt::Display;
use std::io::{IsTerminal, Write};

use anstyle::{AnsiColor, Style};
use hld_client::protocol::{
    Approval, ApprovalStatus, ConversationEvent, PermissionMode, QueuedMessage, SessionControl,
    SessionStatus, WorktreeInfo,
};
use hld_client::view::count;
use serde::Serialize;

use crate::error::CliError;
use crate::session::Session;

pub const BOLD: Style = Style::new().bold();
pub const DIM: Style = Style::new().dimmed();
pub const RED: Style = AnsiColor::Red.on_default();
pub const GREEN: Style = AnsiColor::Green.on_default();
pub const YELLOW: Style = AnsiColor::Yellow.on_default();
pub const CYAN: Style = AnsiColor::Cyan.on_default();
pub const MAGENTA: Style = AnsiColor::Magenta.on_default();

/// The subtype of a system event that reports an API call being retried.
pub const API_RETRY: &str = "api_retry";

/// Long tool results and inputs are cut to this many lines …
const SHORT_LINES: usize = 5;
/// … and this many characters.
const SHORT_CHARS: usize = 400;

/// Something a command prints: serialisable for `--json`, rendered as text otherwise.
pub trait Render: Serialize {
    /// The text form (styled; no trailing newline). Empty prints nothing.
    fn human(&self) -> String;
}

/// Writes command output to stdout as JSON lines or text.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    json: bool,
}

impl Printer {
    pub fn new(json: bool) -> Printer {
        Printer { json }
    }

    /// Whether output is JSON (`--json`).
    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Prints one item and flushes, so that followers see it at once.
    pub fn print<T: Render + ?Sized>(&self, item: &T) -> Result<(), CliError> {
        let text = self.render(item)?;
        self.line(&text)
    }

    /// An item's output: its JSON, or its text.
    pub fn render<T: Render + ?Sized>(&self, item: &T) -> Result<String, CliError> {
        if self.json {
            serde_json::to_string(item)
                .map_err(|e| CliError::failure(format!("cannot encode output: {e}")))
        } else {
            Ok(item.human())
        }
    }

    /// Writes rendered output as a line and flushes; empty output writes nothing. `anstream`
    /// strips the styles where they do not belong (JSON has none: serde_json escapes control
    /// characters).
    pub fn line(&self, text: &str) -> Result<(), CliError> {
        if text.is_empty() {
            return Ok(());
        }
        write_line(anstream::stdout().lock(), text)
    }

    /// Whether lines can be rewritten in place: text output to a terminal.
    pub fn rewrites(&self) -> bool {
        !self.json && std::io::stdout().is_terminal()
    }

    /// Rewrites the terminal line the cursor is on with `text`, and leaves the line open (the
    /// next [`Printer::end_line`] ends it).
    pub fn rewrite_line(&self, text: &str) -> Result<(), CliError> {
        // The erase sequence bypasses anstream, which would strip it under NO_COLOR.
        let mut raw = std::io::stdout().lock();
        raw.write_all(b"\r\x1b[2K")?;
        raw.flush()?;
        drop(raw);
        let mut out = anstream::stdout().lock();
        write!(out, "{text}")?;
        out.flush()?;
        Ok(())
    }

    /// Ends a line left open by [`Printer::rewrite_line`].
    pub fn end_line(&self) -> Result<(), CliError> {
        write_line(std::io::stdout().lock(), "")
    }
}

fn write_line(mut out: impl Write, text: &str) -> Result<(), CliError> {
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// `text` in `style`.
pub fn paint(style: Style, text: impl Display) -> String {
    format!("{style}{text}{style:#}")
}

/// An id without a leading word such as `local-` (UUIDs are unchanged).
pub fn bare_id(id: &str) -> &str {
    match id.split_once('-') {
        Some((word, rest)) if !word.chars().all(|c| c.is_ascii_hexdigit()) => rest,
        _ => id,
    }
}

/// An id as shown in tables: any leading word and 8 more characters (`local-1a2b3c4d`).
/// Any unique prefix, with or without the word, is accepted back.
pub fn short_id(id: &str) -> &str {
    let word = id.len() - bare_id(id).len();
    id[word..]
        .char_indices()
        .nth(8)
        .map_or(id, |(i, _)| &id[..word + i])
}

/// `text` cut to a few lines and characters, saying how much was left out.
pub fn shorten(text: &str) -> String {
    let mut end = text.len();
    if let Some((i, _)) = text.match_indices('\n').nth(SHORT_LINES - 1) {
        end = i;
    }
    if let Some((i, _)) = text.char_indices().nth(SHORT_CHARS) {
        end = end.min(i);
    }
    let kept = text[..end].trim_end();
    if end == text.len() {
        kept.to_owned()
    } else {
        let more = count((text.len() - kept.len()) as u64, "more byte");
        format!("{kept}… ({more})")
    }
}

/// How long ago an RFC 3339 time was: `42s`, `5m`, `3h`, `2d`.
pub fn age(rfc3339: &str) -> String {
    let Ok(then) = chrono::DateTime::parse_from_rfc3339(rfc3339) else {
        return "?".to_owned();
    };
    let secs = (chrono::Utc::now() - then.to_utc()).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

pub fn cost(usd: Option<f64>) -> String {
    usd.map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"))
}

pub fn status(status: &SessionStatus) -> String {
    let style = match status {
        SessionStatus::Completed => GREEN,
        SessionStatus::Failed => RED,
        SessionStatus::WaitingInput => MAGENTA,
        SessionStatus::Running | SessionStatus::Starting => CYAN,
        SessionStatus::Completing => YELLOW,
        // A status this version does not know (from a newer daemon), as it came.
        _ => DIM,
    };
    paint(style, status)
}

/// A title as tables show it: its first line, cut to [`TITLE_CHARS`] characters.
pub fn title(title: &str) -> String {
    let line = title.lines().next().unwrap_or_default().trim_end();
    match line.char_indices().nth(TITLE_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// Titles are cut to this many characters in tables.
const TITLE_CHARS: usize = 60;

/// How long a session's bypass of permissions lasts from `now`: `Some(None)` when it has no
/// expiry, `None` when it is off or over.
pub fn bypass_left(
    control: &SessionControl,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Option<chrono::Duration>> {
    if !control.dangerously_skip_permissions {
        return None;
    }
    let Some(expiry) = &control.dangerously_skip_permissions_expires_at else {
        return Some(None);
    };
    let expiry = chrono::DateTime::parse_from_rfc3339(expiry).ok()?.to_utc();
    (expiry > now).then(|| Some(expiry - now))
}

/// A session's approval modes as a table shows them before its title, as hld-tui does: `⚠15m`
/// (the bypass of permissions and its time left, `⚠∞` without an expiry), `✎` (auto-accept of
/// edits). Empty when neither is on.
pub fn mode_marks(control: &SessionControl) -> String {
    let mut marks = String::new();
    if let Some(left) = bypass_left(control, chrono::Utc::now()) {
        let left = left.map_or_else(|| "∞".to_owned(), crate::duration::short);
        marks.push_str(&paint(RED.bold(), format!("⚠{left}")));
        marks.push(' ');
    }
    if control.auto_accept_edits {
        marks.push_str(&paint(CYAN, "✎"));
        marks.push(' ');
    }
    marks
}

/// A session's permission mode in words (`show`, `settings`).
pub fn mode_text(control: &SessionControl) -> String {
    match control.permission_mode {
        PermissionMode::Plan => format!(
            "plan {}",
            paint(DIM, "(edits wait until the plan is approved)")
        ),
        ref other => other.as_str().to_owned(),
    }
}

/// A session's approval modes in words (`show`, `settings`).
pub fn modes_text(control: &SessionControl) -> String {
    let mut modes = Vec::new();
    if control.auto_accept_edits {
        modes.push(paint(CYAN, "auto-accept edits"));
    }
    match bypass_left(control, chrono::Utc::now()) {
        Some(Some(left)) => modes.push(paint(
            RED.bold(),
            format!("bypass permissions ({} left)", crate::duration::left(left)),
        )),
        Some(None) => modes.push(paint(RED.bold(), "bypass permissions (until turned off)")),
        None => {}
    }
    if modes.is_empty() {
        "none: every tool call is asked".to_owned()
    } else {
        modes.join(", ")
    }
}

/// Lines of `key  value`, the keys bold and aligned (`show`, `settings`).
pub fn fields(fields: &[(&str, String)]) -> String {
    let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    fields
        .iter()
        .map(|(k, v)| format!("{}  {v}", paint(BOLD, format!("{k:<width$}"))))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What following a session prints, one item at a time. Under `--json` each is a line
/// `{"type": …, "data": …}`, as `hlyr events` prints the daemon's events.
#[derive(Debug, Serialize)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
// A few are queued at a time while a session is followed: boxing the larger ones would save
// nothing worth an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum Update {
    /// A session was launched or continued.
    Started {
        session_id: String,
        run_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_session_id: Option<String>,
        /// The git worktree of an isolated session.
        #[serde(skip_serializing_if = "Option::is_none")]
        worktree: Option<WorktreeInfo>,
        /// The branch the worktree's branch starts from, when not the one it merges into (a
        /// continuation's starts from its parent's branch). The JSON's worktree says the same.
        #[serde(skip)]
        from: Option<String>,
    },
    /// A conversation event.
    Event(ConversationEvent),
    /// A status change.
    Status {
        session_id: String,
        old_status: SessionStatus,
        new_status: SessionStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// An approval was requested.
    Approval(Approval),
    /// An approval was decided (here, elsewhere, or by a session rule).
    Decision {
        approval_id: String,
        decision: ApprovalStatus,
        #[serde(skip_serializing_if = "Option::is_none")]
        comment: Option<String>,
        /// The rule that decided it, when no person did (`auto_accept_edits`,
        /// `dangerously_skip_permissions`).
        #[serde(skip_serializing_if = "Option::is_none")]
        decided_by: Option<String>,
    },
    /// A message sent into the session was queued, delivered, cancelled or given up.
    Message(QueuedMessage),
    /// The session's bypass of permissions ran out: tool calls are asked again.
    BypassExpired { session_id: String },
    /// The session moved to another mode of the Shift+Tab cycle (`plan`, `accept edits`,
    /// `default`).
    Mode {
        session_id: String,
        mode: &'static str,
    },
    /// The session ended.
    Finished(Session),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--json` output never holds a raw escape, whatever the text it carries.
    #[test]
    fn json_output_escapes_control_characters() {
        #[derive(Serialize)]
        struct Item(String);
        impl Render for Item {
            fn human(&self) -> String {
                self.0.clone()
            }
        }
        let styled = paint(RED, "summary \x1b[2J with a clear-screen");
        let text = Printer::new(true).render(&Item(styled)).unwrap();
        assert!(!text.contains('\x1b'), "{text:?}");
        assert!(text.contains("\\u001b"), "{text:?}");
    }

    #[test]
    fn modes_and_titles() {
        let mut control = SessionControl::default();
        assert_eq!(mode_marks(&control), "");
        assert!(modes_text(&control).starts_with("none"));
        control.auto_accept_edits = true;
        control.dangerously_skip_permissions = true;
        let plain = |t: String| anstream::adapter::strip_str(&t).to_string();
        assert_eq!(plain(mode_marks(&control)), "⚠∞ ✎ ");
        let in_15m = chrono::Utc::now() + chrono::Duration::seconds(15 * 60 - 1);
        control.dangerously_skip_permissions_expires_at = Some(in_15m.to_rfc3339());
        assert_eq!(plain(mode_marks(&control)), "⚠15m ✎ ");
        assert_eq!(
            plain(modes_text(&control)),
            "auto-accept edits, bypass permissions (15m left)"
        );
        // Over, though the daemon has not said so yet.
        let past = chrono::Utc::now() - chrono::Duration::seconds(1);
        control.dangerously_skip_permissions_expires_at = Some(past.to_rfc3339());
        assert_eq!(plain(mode_marks(&control)), "✎ ");
        assert_eq!(title("first line\nsecond"), "first line");
        let long = "x".repeat(70);
        assert_eq!(title(&long), format!("{}…", "x".repeat(60)));
    }

    #[test]
    fn shorten_keeps_short_text_and_cuts_long_text() {
        assert_eq!(shorten("one\ntwo"), "one\ntwo");
        let long = (1..=20)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let short = shorten(&long);
        assert!(short.starts_with("line 1\n"));
        assert!(short.contains("line 5"));
        assert!(!short.contains("line 6"));
        let kept = "line 1\nline 2\nline 3\nline 4\nline 5".len();
        assert!(short.ends_with(&format!("… ({} more bytes)", long.len() - kept)));
        let wide = "é".repeat(1000);
        let short = shorten(&wide);
        assert!(short.starts_with(&"é".repeat(400)));
        assert!(short.ends_with(&format!("({} more bytes)", 2000 - 800)));
    }

    #[test]
    fn short_ids_and_ages() {
        assert_eq!(short_id("0123456789abcdef"), "01234567");
        assert_eq!(short_id("abc"), "abc");
        let uuid = "1e2409fa-b27b-4e30-9bb4-242ec0adf33d";
        assert_eq!(short_id(uuid), "1e2409fa");
        assert_eq!(bare_id(uuid), uuid);
        let local = "local-5e51132b-7b51-47b6-926e-69deebd9bcb0";
        assert_eq!(short_id(local), "local-5e51132b");
        assert_eq!(bare_id(local), "5e51132b-7b51-47b6-926e-69deebd9bcb0");
        let ten_minutes_ago = (chrono::Utc::now() - chrono::Duration::minutes(10)).to_rfc3339();
        assert_eq!(age(&ten_minutes_ago), "10m");
        assert_eq!(age("not a time"), "?");
    }
}
