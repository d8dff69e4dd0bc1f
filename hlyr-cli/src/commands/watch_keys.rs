//! The block `hlyr watch` draws in place on a terminal, and its keys, with one daemon or with
//! every context's (`--all-contexts`): ↑/↓ (or k/j) pick a line, Enter asks what the picked
//! line waits for (the first line waiting when it waits for nothing) with the prompt `launch`
//! asks approvals with, q or Ctrl-D quits. The command sends each answer to the daemon of
//! the line it was asked from (its [`Answer`] names the line's context).

use std::io::Write;

use hld_client::Client;

use crate::board::{Board, Row};
use crate::decision;
use crate::error::CliError;
use crate::keys::{Key, QuietControls};
use crate::output::{paint, short_id, Printer, Update, BOLD, DIM};
use crate::prompt::{Answer, Prompter};
use crate::table::cut;
use crate::transcript::approval_text;

/// What the keys do, below the block.
const KEYS: &str = "↑/↓ pick · Enter answers what waits · q quits";

/// The block on screen, the line picked, and the question Enter opened.
pub(super) struct Live {
    /// The line picked with the arrows.
    picked: Option<usize>,
    /// How many lines of sessions the block last showed (as far as ↓ goes).
    shown: usize,
    /// Asks the approval Enter opened and reads the keys; `None` when stdin is no terminal.
    prompter: Option<Prompter>,
    /// A word under the block, until the next key (`nothing waits`).
    told: Option<String>,
    /// The block as last drawn (empty: draw it anew below).
    frame: String,
    /// Ctrl-C's `^C` is not echoed over the block.
    _quiet: QuietControls,
}

/// What keys typed ask of the command.
pub(super) enum Typed {
    /// Nothing beyond drawing the block again.
    Nothing,
    /// Stop watching.
    Quit,
    /// Send this answer to the daemon of its context (`None`: the one daemon watched).
    Answer(Box<Answer>),
}

impl Live {
    /// The block on the terminal, its keys read when stdin is a terminal too.
    pub(super) fn on_terminal() -> Live {
        let _quiet = QuietControls::on_terminal();
        let mut prompter = Prompter::on_terminal();
        if let Some(prompter) = prompter.as_mut() {
            prompter.hold_keys();
        }
        Live {
            picked: None,
            shown: 0,
            prompter,
            told: None,
            frame: String::new(),
            _quiet,
        }
    }

    /// Whether keys can still come.
    pub(super) fn reads(&self) -> bool {
        self.prompter.as_ref().is_some_and(Prompter::reads)
    }

    /// The keys pressed next (`None` at the end of stdin); never, without a terminal.
    pub(super) async fn keys(&mut self) -> Option<Vec<Key>> {
        match self.prompter.as_mut() {
            Some(prompter) => prompter.keys().await,
            None => std::future::pending().await,
        }
    }

    /// Takes in keys: those of the question Enter opened, else ↑/↓, Enter and q, on `board`
    /// as last drawn.
    pub(super) fn typed(&mut self, keys: Option<Vec<Key>>, board: &Board) -> Typed {
        // `None`: stdin ended, nothing more can be typed; watching goes on.
        let (Some(keys), Some(prompter)) = (keys, self.prompter.as_mut()) else {
            return Typed::Nothing;
        };
        if prompter.asking() {
            return match prompter.typed(keys) {
                Some(answer) => Typed::Answer(Box::new(answer)),
                None => Typed::Nothing,
            };
        }
        self.told = None;
        let last = self.shown.checked_sub(1);
        for key in keys {
            match key {
                Key::Up | Key::Char('k') => {
                    self.picked = Some(self.picked.map_or(0, |p| p.saturating_sub(1)));
                }
                Key::Down | Key::Char('j') => {
                    let next = self.picked.map_or(0, |p| p + 1);
                    self.picked = last.map(|last| next.min(last));
                }
                Key::Enter => self.open(board),
                Key::Char('q') | Key::EndOfInput => return Typed::Quit,
                _ => {}
            }
        }
        Typed::Nothing
    }

    /// While the daemon is waited for: the question on screen is withdrawn (no answer could
    /// be sent; the block is read anew once the daemon is back), and keys are read until q or
    /// Ctrl-D quits, as in the view. Never returns once stdin ended.
    pub(super) async fn quit_key(&mut self) {
        if let Some(prompter) = self.prompter.as_mut() {
            if let Some(asked) = prompter.asked().map(|a| a.id.clone()) {
                prompter.forget(&asked);
            }
        }
        loop {
            match self.keys().await {
                Some(keys)
                    if keys
                        .iter()
                        .any(|k| matches!(k, Key::Char('q') | Key::EndOfInput)) =>
                {
                    return
                }
                Some(_) => {}
                // Stdin ended: only Ctrl-C ends the wait.
                None => std::future::pending().await,
            }
        }
    }

    /// Enter: asks the approval the picked line waits for, else the first one waiting.
    fn open(&mut self, board: &Board) {
        let picked = self
            .picked
            .filter(|p| board.rows.get(*p).is_some_and(|r| !r.waiting.is_empty()));
        let Some(at) = picked.or_else(|| board.first_waiting()) else {
            self.told = Some("nothing waits for you".to_owned());
            return;
        };
        let row = &board.rows[at];
        let approval = row.waiting[0].clone();
        let context = match &row.context {
            Some(context) => format!("{} ", paint(BOLD, context)),
            None => String::new(),
        };
        let session = format!(
            "{context}{} {}",
            paint(BOLD, short_id(&row.session.id)),
            row.session.shown_title()
        );
        // The block stays above; it is drawn anew below once the question is answered.
        self.frame.clear();
        anstream::eprintln!("{session}\n{}", approval_text(&approval, true));
        if let Some(prompter) = self.prompter.as_mut() {
            prompter.ask_from(row.context.clone());
            prompter.ask(approval);
            prompter.resume();
        }
    }

    /// Lines were written below the block (on stderr): it is drawn anew below them, not in
    /// place.
    pub(super) fn written_below(&mut self) {
        self.frame.clear();
    }

    /// Takes in the lines of `context`'s daemon as now read (`None`: the one daemon
    /// watched): the question asked from there is withdrawn once nothing there waits for it
    /// (it was decided elsewhere, or its session left the board).
    pub(super) fn settle(&mut self, context: Option<&str>, rows: &[Row]) {
        let Some(prompter) = self.prompter.as_mut() else {
            return;
        };
        let Some(asked) = prompter.asked().map(|a| a.id.clone()) else {
            return;
        };
        let waits = rows.iter().any(|r| r.waiting.iter().any(|a| a.id == asked));
        if prompter.context() == context && !waits {
            prompter.forget(&asked);
        }
    }

    /// Draws the block again in place (`above` the table, the lines `below` it, then the
    /// keys), when it changed and no question is on screen.
    pub(super) fn draw(
        &mut self,
        board: &Board,
        above: Option<String>,
        below: Vec<String>,
    ) -> Result<(), CliError> {
        if self.prompter.as_ref().is_some_and(Prompter::asking) {
            return Ok(());
        }
        let height = console::Term::stdout()
            .size_checked()
            .map_or(usize::MAX, |(rows, _)| usize::from(rows));
        // Besides the sessions: the header, a `… more` line, the line the cursor is left on,
        // and the lines above and below.
        let others = 3 + usize::from(above.is_some()) + below.len();
        let room = height
            .saturating_sub(others + usize::from(self.prompter.is_some()))
            .max(1);
        self.shown = board.rows.len().min(room);
        self.picked = self.picked.map(|p| p.min(self.shown.saturating_sub(1)));
        let width = crate::table::terminal_width();
        let fit = |line: String| match width {
            Some(width) => cut(&line, width),
            None => line,
        };
        let mut lines: Vec<String> = above.into_iter().map(fit).collect();
        if board.rows.is_empty() {
            lines.push(paint(DIM, "no sessions"));
        } else {
            lines.push(board.table(room, self.picked));
        }
        lines.extend(below);
        if self.prompter.is_some() {
            let keys = match &self.told {
                Some(told) => format!("{told} · {KEYS}"),
                None => KEYS.to_owned(),
            };
            lines.push(fit(paint(DIM, keys)));
        }
        redraw(&mut self.frame, lines.join("\n"))
    }
}

/// Sends an answer through `client` and says it was taken, then turns on auto-accept of edits
/// when asked to.
pub(super) async fn send(client: &Client, answer: &Answer) -> Result<(), CliError> {
    let accept_first = decision::accepts_edits_first(answer);
    if accept_first {
        decision::accept_edits(client, answer).await?;
    }
    decision::send_answer(client, answer).await?;
    let decided = Update::Decision {
        approval_id: answer.approval.id.clone(),
        decision: answer.decision.status(),
        comment: answer.comment.clone(),
        decided_by: None,
    };
    if let Ok(text) = Printer::new(false).render(&decided) {
        anstream::eprintln!("{text}");
    }
    if answer.accept_edits && !accept_first {
        decision::accept_edits(client, answer).await?;
    }
    Ok(())
}

/// Draws `frame` in place of `drawn`, the block last drawn at the bottom of the output (empty:
/// nothing to replace), unless it is the same.
fn redraw(drawn: &mut String, frame: String) -> Result<(), CliError> {
    if frame == *drawn {
        return Ok(());
    }
    // Back to the block's first line, and everything below it cleared. (Written past
    // anstream, which would strip the sequence under NO_COLOR.)
    let mut raw = std::io::stdout().lock();
    let above = drawn.lines().count();
    if above > 0 {
        write!(raw, "\r\x1b[{above}A")?;
    }
    raw.write_all(b"\r\x1b[J")?;
    raw.flush()?;
    drop(raw);
    let mut out = anstream::stdout().lock();
    writeln!(out, "{frame}")?;
    out.flush()?;
    *drawn = frame;
    Ok(())
}
