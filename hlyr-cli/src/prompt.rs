//! Inline approvals: while a session is followed and stdin is a terminal, each requested
//! approval is asked on the spot — approve, deny with a comment, or skip and leave it to another
//! front end. Prompts go to stderr so that stdout keeps only the session's output.
//!
//! Stdin is read line by line on its own thread (a blocked read must never hold up the
//! runtime); the follow loop polls [`Prompter::line`] alongside the daemon's events. Output
//! printed while a question is on screen goes through [`Prompter::interrupt`] (ends the
//! prompt's line) and [`Prompter::resume`] (asks again below it).

use std::collections::VecDeque;
use std::io::{BufRead, IsTerminal};

use hld_client::protocol::{Approval, ApprovalType};
use tokio::sync::mpsc;

use crate::decision::Decision;
use crate::output::{paint, short_id, BOLD, DIM, MAGENTA};

/// Where the question at the head of the queue stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Approve, deny or skip?
    Choose,
    /// The reason for a denial.
    DenyReason,
    /// The answer to a question.
    Answer,
}

/// The approvals to ask, the one being asked first.
#[derive(Debug)]
pub struct Prompter {
    lines: mpsc::UnboundedReceiver<String>,
    queue: VecDeque<Approval>,
    stage: Stage,
    /// A prompt is on screen, its line not ended yet.
    on_screen: bool,
    /// Stdin reached its end: nothing more can be asked.
    closed: bool,
}

impl Prompter {
    /// A prompter reading stdin, or `None` when stdin is not a terminal.
    pub fn on_terminal() -> Option<Prompter> {
        if !std::io::stdin().is_terminal() {
            return None;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut line = String::new();
            loop {
                line.clear();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line.trim().to_owned()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Some(Prompter {
            lines: rx,
            queue: VecDeque::new(),
            stage: Stage::Choose,
            on_screen: false,
            closed: false,
        })
    }

    /// Whether a question is waiting for a line.
    pub fn asking(&self) -> bool {
        !self.closed && !self.queue.is_empty()
    }

    /// Queues an approval (asked by the next [`Prompter::resume`] when it is first in line).
    pub fn ask(&mut self, approval: Approval) {
        if self.closed || self.queue.iter().any(|a| a.id == approval.id) {
            return;
        }
        self.queue.push_back(approval);
        if self.queue.len() == 1 {
            self.stage = first_stage(&self.queue[0]);
        }
    }

    /// An approval was decided (here or elsewhere): stop asking about it.
    pub fn forget(&mut self, approval_id: &str) {
        let Some(pos) = self.queue.iter().position(|a| a.id == approval_id) else {
            return;
        };
        self.queue.remove(pos);
        if pos == 0 {
            self.interrupt();
            self.next_question();
        }
    }

    /// Ends the line of a prompt on screen, before something else is printed.
    pub fn interrupt(&mut self) {
        if self.on_screen {
            anstream::eprintln!();
            self.on_screen = false;
        }
    }

    /// Shows the current question unless it is on screen already.
    pub fn resume(&mut self) {
        if !self.on_screen && self.asking() {
            self.show();
        }
    }

    /// The next line typed (`None` at the end of stdin, which stops all asking).
    pub async fn line(&mut self) -> Option<String> {
        let line = self.lines.recv().await;
        // The typed newline ended the prompt's line.
        self.on_screen = false;
        if line.is_none() {
            self.closed = true;
            self.queue.clear();
        }
        line
    }

    /// Takes a typed line for the question on screen. Returns the decision to send when the
    /// line completes one, and moves on to the next question.
    pub fn answer(&mut self, line: &str) -> Option<(Approval, Decision, Option<String>)> {
        let head = self.queue.front()?.clone();
        let (decision, comment) = match (self.stage, line.to_ascii_lowercase().as_str()) {
            (Stage::Choose, "a" | "approve" | "y" | "yes") => (Decision::Approve, None),
            (Stage::Choose, "d" | "deny" | "n" | "no") => {
                self.stage = Stage::DenyReason;
                return None;
            }
            (Stage::Choose, "s" | "skip") | (Stage::Answer, "") => {
                let how = match head.kind {
                    ApprovalType::FunctionCall => format!(
                        "`hlyr approve {0}` or `hlyr deny {0} --comment …`",
                        short_id(&head.id)
                    ),
                    ApprovalType::HumanContact => {
                        format!("`hlyr respond {} --comment …`", short_id(&head.id))
                    }
                    // A kind this version does not know.
                    _ => "a newer hlyr".to_owned(),
                };
                let note = format!("left pending: decide it with {how}, or in another front end");
                anstream::eprintln!("  {}", paint(DIM, note));
                self.queue.pop_front();
                self.next_question();
                return None;
            }
            (Stage::DenyReason, _) if !line.is_empty() => (Decision::Deny, Some(line.to_owned())),
            (Stage::Answer, _) => (Decision::Respond, Some(line.to_owned())),
            // Anything else asks again.
            _ => return None,
        };
        self.queue.pop_front();
        self.next_question();
        Some((head, decision, comment))
    }

    /// Prepares the next question, ignoring anything typed before it is asked.
    fn next_question(&mut self) {
        if let Some(head) = self.queue.front() {
            self.stage = first_stage(head);
        }
        while self.lines.try_recv().is_ok() {}
    }

    /// Prints the question for the current stage.
    fn show(&mut self) {
        let Some(head) = self.queue.front() else {
            return;
        };
        let question = match self.stage {
            Stage::Choose => format!(
                "{} {}? [a]pprove, [d]eny, [s]kip: ",
                paint(MAGENTA, "allow"),
                paint(
                    BOLD,
                    head.function_name.as_deref().unwrap_or("this tool call")
                )
            ),
            Stage::DenyReason => format!("{} ", paint(MAGENTA, "reason for denying:")),
            Stage::Answer => format!("{} ", paint(MAGENTA, "your answer (empty to skip):")),
        };
        anstream::eprint!("  {question}");
        self.on_screen = true;
    }
}

fn first_stage(approval: &Approval) -> Stage {
    match approval.kind {
        ApprovalType::FunctionCall => Stage::Choose,
        ApprovalType::HumanContact => Stage::Answer,
        // A kind this version does not know: offered as a tool call; the daemon refuses a
        // decision that does not fit.
        _ => Stage::Choose,
    }
}
