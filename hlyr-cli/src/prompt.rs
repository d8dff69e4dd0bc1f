//! Inline approvals: while a session is followed and stdin is a terminal, each requested
//! approval is asked on the spot — approve, deny with a comment, or skip and leave it to another
//! front end. Prompts go to stderr so that stdout keeps only the session's output.
//!
//! Stdin is read line by line on its own thread (a blocked read must never hold up the
//! runtime); the follow loop polls [`Prompter::line`] alongside the daemon's events.

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

/// The approvals being asked, first one on screen.
#[derive(Debug)]
pub struct Prompter {
    lines: mpsc::UnboundedReceiver<String>,
    queue: VecDeque<Approval>,
    stage: Stage,
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
            closed: false,
        })
    }

    /// Whether a question is on screen, waiting for a line.
    pub fn asking(&self) -> bool {
        !self.closed && !self.queue.is_empty()
    }

    /// Queues an approval; asks at once when nothing else is being asked.
    pub fn ask(&mut self, approval: Approval) {
        if self.closed || self.queue.iter().any(|a| a.id == approval.id) {
            return;
        }
        self.queue.push_back(approval);
        if self.queue.len() == 1 {
            self.start();
        }
    }

    /// An approval was decided (here or elsewhere): stop asking about it.
    pub fn forget(&mut self, approval_id: &str) {
        let Some(pos) = self.queue.iter().position(|a| a.id == approval_id) else {
            return;
        };
        self.queue.remove(pos);
        if pos == 0 && !self.closed {
            // End the prompt's line before whatever is printed next.
            anstream::eprintln!();
            self.start();
        }
    }

    /// The next line typed (`None` at the end of stdin, which stops all asking).
    pub async fn line(&mut self) -> Option<String> {
        let line = self.lines.recv().await;
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
                self.show();
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
                };
                let note = format!("left pending: decide it with {how} or in another front end");
                anstream::eprintln!("  {}", paint(DIM, note));
                self.next();
                return None;
            }
            (Stage::DenyReason, _) if !line.is_empty() => (Decision::Deny, Some(line.to_owned())),
            (Stage::Answer, _) => (Decision::Respond, Some(line.to_owned())),
            _ => {
                self.show();
                return None;
            }
        };
        self.next();
        Some((head, decision, comment))
    }

    /// Drops the head and asks the next one.
    fn next(&mut self) {
        self.queue.pop_front();
        self.start();
    }

    /// Starts asking the head of the queue, ignoring anything typed before the question.
    fn start(&mut self) {
        let Some(head) = self.queue.front() else {
            return;
        };
        while self.lines.try_recv().is_ok() {}
        self.stage = match head.kind {
            ApprovalType::FunctionCall => Stage::Choose,
            ApprovalType::HumanContact => Stage::Answer,
        };
        self.show();
    }

    /// Prints the question for the current stage.
    fn show(&self) {
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
    }
}
