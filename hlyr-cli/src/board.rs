//! What `hlyr watch` shows: one line per session (its status, what it waits for, its cost,
//! age and title) under a line with the usage-limit windows, kept current from the daemon's
//! events. Pure: the command fetches and draws, this keeps the lines and words them. Every
//! string from the daemon is cleaned before it is shown.

use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, Event, RateLimitWindow, SessionControl,
};
use hld_client::view::usage::{until, window_current, window_text, window_warns};
use hld_client::view::{clean, ToolInput};
use serde::Serialize;

use crate::output::{age, cost, paint, short_id, DIM, YELLOW};
use crate::session::Session;
use crate::table::{fit_table, terminal_width, Gives};
use crate::transcript::tool_input::EXIT_PLAN_MODE;

/// When the table is too wide, what waits and the title give way in turn, so that neither
/// alone is cut to nothing: what waits to 24 columns, the title to 16; then the context share
/// and the cost are left out; then what waits and the title are cut to 16 and 10, and last
/// the age is left out. Which session it is and what it waits for matter most.
const GIVES: [Gives; 7] = [
    Gives::start(7, 24),
    Gives::start(8, 16),
    Gives::start(6, 0),
    Gives::start(5, 0),
    Gives::start(7, 16),
    Gives::start(8, 10),
    Gives::start(4, 0),
];

/// The table's header; the first column marks the row picked with the arrows, the second
/// (`CONTEXT`, left out when no row has one) names each row's daemon.
const HEADER: [&str; 9] = [
    "",
    "",
    "ID",
    "STATUS",
    "AGE",
    "COST",
    "CTX",
    "WAITS FOR",
    "TITLE",
];

/// One session's line.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The context whose daemon runs the session (`watch --all-contexts`).
    pub context: Option<String>,
    pub session: Session,
    /// Its approvals waiting for a decision, oldest first.
    pub waiting: Vec<Approval>,
    /// What each waiting approval asks, in words (`approve Bash: cargo test`).
    pub waiting_text: Vec<String>,
}

/// A line as `--json` prints it: the session, and what waits.
#[derive(Debug, Serialize)]
pub struct RowJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<&'a str>,
    pub session: &'a Session,
    pub waiting: Vec<Waiting<'a>>,
}

/// An approval a session waits for, and what it asks in words.
#[derive(Debug, Serialize)]
pub struct Waiting<'a> {
    pub approval_id: &'a str,
    pub text: &'a str,
}

impl Row {
    pub fn new(session: Session) -> Row {
        Row {
            context: None,
            session,
            waiting: Vec::new(),
            waiting_text: Vec::new(),
        }
    }

    fn wait(&mut self, approval: Approval) {
        if self.waiting.iter().all(|a| a.id != approval.id) {
            self.waiting_text.push(waits_for(&approval));
            self.waiting.push(approval);
        }
    }

    /// Stops waiting for `approval_id`; returns whether it was waited for.
    fn decided(&mut self, approval_id: &str) -> bool {
        let Some(at) = self.waiting.iter().position(|a| a.id == approval_id) else {
            return false;
        };
        self.waiting.remove(at);
        self.waiting_text.remove(at);
        true
    }

    /// The line as `--json` prints it.
    pub fn json(&self) -> RowJson<'_> {
        RowJson {
            context: self.context.as_deref(),
            session: &self.session,
            waiting: (self.waiting.iter().zip(&self.waiting_text))
                .map(|(a, text)| Waiting {
                    approval_id: &a.id,
                    text,
                })
                .collect(),
        }
    }

    /// The cells of its line, styled; `picked` marks it.
    fn cells(&self, picked: bool) -> Vec<String> {
        let s = &self.session;
        let waits = match self.waiting_text.as_slice() {
            [] => String::new(),
            [one] => paint(YELLOW, one),
            [first, more @ ..] => format!(
                "{} {}",
                paint(YELLOW, first),
                paint(DIM, format!("+{}", more.len()))
            ),
        };
        vec![
            if picked { "›" } else { " " }.to_owned(),
            self.context.clone().unwrap_or_default(),
            clean(short_id(&s.id)).into_owned(),
            s.status_cell(),
            age(&s.last_activity_at),
            cost(s.cost_usd),
            s.context_text().unwrap_or_else(|| "-".to_owned()),
            waits,
            s.shown_title(),
        ]
    }

    /// Its line without the age, which changes by itself: a line is printed again (without
    /// a terminal) only when this changes.
    pub fn key(&self) -> Vec<String> {
        let mut cells = self.cells(false);
        cells.remove(4);
        cells
    }

    /// Its line as printed without a terminal: the cells, two spaces apart.
    pub fn plain_line(&self) -> String {
        let cells = self.cells(false);
        let shown: Vec<&str> = cells[1..]
            .iter()
            .map(String::as_str)
            .filter(|c| !c.is_empty())
            .collect();
        shown.join("  ")
    }
}

/// What an approval waits for, in a few words: `approve Bash: cargo test`, `approve Write:
/// src/lib.rs`, `approve the plan`, `answer: Which database?`.
pub fn waits_for(approval: &Approval) -> String {
    let first_line = |text: &str| clean(text.lines().next().unwrap_or_default()).into_owned();
    match approval.kind {
        ApprovalType::FunctionCall => {
            let name = approval.function_name.as_deref().unwrap_or("a tool call");
            if name == EXIT_PLAN_MODE {
                return "approve the plan".to_owned();
            }
            let detail = call_detail(approval);
            let name = clean(name);
            match detail {
                Some(detail) => format!("approve {name}: {detail}"),
                None => format!("approve {name}"),
            }
        }
        ApprovalType::HumanContact => {
            format!(
                "answer: {}",
                first_line(approval.message.as_deref().unwrap_or_default())
            )
        }
        // A kind this version does not know.
        _ => "a decision".to_owned(),
    }
}

/// What a tool call is about, in a line: a command's first line, the file written or edited;
/// `None` for other tools.
pub fn call_detail(approval: &Approval) -> Option<String> {
    let name = approval.function_name.as_deref().unwrap_or_default();
    let input = approval.function_args.clone().unwrap_or_default();
    match ToolInput::of(name, &input) {
        ToolInput::Bash { command, .. } => {
            Some(clean(command.lines().next().unwrap_or_default()).into_owned())
        }
        ToolInput::Write { path, .. } | ToolInput::Edit { path, .. } => Some(path),
        ToolInput::Questions(_) | ToolInput::Other(_) => None,
    }
}

/// The sessions watched and the usage-limit windows.
#[derive(Debug, Default)]
pub struct Board {
    /// The lines, most recent session first (new ones come on top).
    pub rows: Vec<Row>,
    /// The latest of each window, in the order first reported.
    pub windows: Vec<RateLimitWindow>,
    /// Every session (`--all`), not one per chain: a continuation does not take its parent's
    /// line, and an archived session keeps its own.
    pub all: bool,
}

/// What an event asks of the command beyond showing the board again.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Nothing more.
    Show,
    /// Read session `.0` (its state is news, or it is not on the board yet).
    Fetch(String),
    /// Read everything again (events were missed).
    Reload,
}

impl Board {
    pub fn row(&self, session_id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.session.id == session_id)
    }

    fn row_mut(&mut self, session_id: &str) -> Option<&mut Row> {
        self.rows.iter_mut().find(|r| r.session.id == session_id)
    }

    /// Puts a session read from the daemon on the board: in its line, else in the line of the
    /// chain it continues (one line per chain, unless `all`), else on top. An archived one
    /// leaves the board unless `all`.
    pub fn put(&mut self, session: Session) {
        let id = session.id.clone();
        if session.control.archived && !self.all {
            self.rows.retain(|r| r.session.id != id);
            return;
        }
        if let Some(row) = self.row_mut(&id) {
            row.session = session;
            return;
        }
        let parent = session.parent_session_id.clone().filter(|_| !self.all);
        match parent.and_then(|p| self.rows.iter().position(|r| r.session.id == p)) {
            Some(at) => {
                let waiting = std::mem::take(&mut self.rows[at].waiting);
                self.rows[at] = Row::new(session);
                for approval in waiting {
                    self.rows[at].wait(approval);
                }
            }
            None => self.rows.insert(0, Row::new(session)),
        }
    }

    /// Takes in a pending approval; returns whether its session is on the board.
    pub fn wait(&mut self, approval: Approval) -> bool {
        match self.row_mut(&approval.session_id) {
            Some(row) => {
                row.wait(approval);
                true
            }
            None => false,
        }
    }

    /// Takes in a window reported.
    pub fn window(&mut self, window: RateLimitWindow) {
        match self.windows.iter_mut().find(|w| w.kind == window.kind) {
            Some(known) => *known = window,
            None => self.windows.push(window),
        }
    }

    /// Takes in an event.
    pub fn event(&mut self, event: &Event) -> Next {
        match event {
            Event::SessionStatusChanged { session_id, .. } => Next::Fetch(session_id.clone()),
            Event::NewApproval { approval, .. }
                if approval.status == ApprovalStatus::Pending
                    && !self.wait(approval.as_ref().clone()) =>
            {
                Next::Fetch(approval.session_id.clone())
            }
            Event::ApprovalResolved { approval_id, .. } => {
                self.rows.iter_mut().any(|row| row.decided(approval_id));
                Next::Show
            }
            Event::SessionSettingsChanged {
                session_id,
                control,
                ..
            } => self.settings(session_id, control),
            Event::ConversationUpdated { event, .. } => {
                if let Some(row) = self.row_mut(&event.session_id) {
                    row.session.last_activity_at = event.created_at.clone();
                }
                Next::Show
            }
            Event::RateLimitUpdated { window, .. } => {
                self.window(window.clone());
                Next::Show
            }
            Event::Lagged { .. } => Next::Reload,
            _ => Next::Show,
        }
    }

    fn settings(&mut self, session_id: &str, control: &SessionControl) -> Next {
        if control.archived && !self.all {
            self.rows.retain(|r| r.session.id != session_id);
            return Next::Show;
        }
        match self.row_mut(session_id) {
            Some(row) => {
                row.session.control = control.clone();
                Next::Show
            }
            None => Next::Fetch(session_id.to_owned()),
        }
    }

    /// The windows' line: `limits  5h 91% (resets in 2h 13m) · 7d 40%`, each window near its
    /// limit in the warning colour; `None` before any was reported or once every reset passed.
    pub fn windows_line(&self, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
        let current = self.windows.iter().filter(|w| window_current(w, now));
        let shown: Vec<String> = current
            .map(|w| {
                // A window this version does not know is named as the daemon sent it.
                let shown = clean(&window_text(w)).into_owned();
                if !window_warns(w) {
                    return shown;
                }
                let reset = w.resets_at.as_deref().and_then(|at| until(at, now));
                let text = match reset {
                    Some(left) => format!("{shown} (resets in {left})"),
                    None => shown,
                };
                paint(YELLOW.bold(), text)
            })
            .collect();
        if shown.is_empty() {
            return None;
        }
        Some(format!(
            "{}  {}",
            paint(DIM, "limits"),
            shown.join(&paint(DIM, " · "))
        ))
    }

    /// The table of the first `rows` lines (the one at `picked` marked), fitted to the
    /// terminal, and a line saying how many more there are.
    pub fn table(&self, rows: usize, picked: Option<usize>) -> String {
        self.table_within(rows, picked, terminal_width())
    }

    /// [`table`](Self::table) in `width` columns (`None`: no limit).
    fn table_within(&self, rows: usize, picked: Option<usize>, width: Option<usize>) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .take(rows)
            .enumerate()
            .map(|(i, row)| row.cells(picked == Some(i)))
            .collect();
        let mut header = HEADER;
        if self.rows.iter().any(|r| r.context.is_some()) {
            header[1] = "CONTEXT";
        }
        let mut text = fit_table(&header, &cells, &GIVES, width);
        if self.rows.len() > rows {
            let more = self.rows.len() - rows;
            text.push_str(&format!("\n{}", paint(DIM, format!("… {more} more"))));
        }
        text
    }

    /// The first row that waits for something.
    pub fn first_waiting(&self) -> Option<usize> {
        self.rows.iter().position(|r| !r.waiting.is_empty())
    }
}

#[cfg(test)]
mod tests;
