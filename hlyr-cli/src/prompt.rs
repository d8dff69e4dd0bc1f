//! Inline approvals: while a session is followed and stdin is a terminal, each requested
//! approval is asked on the spot, a key for each choice, as Claude Code asks: approve; approve
//! and auto-accept edits for the rest of the session; deny, then an optional reason; deny and
//! stop the agent's turn (Esc, as in Claude Code); skip and leave it to another front end; or
//! view the whole tool input. Questions to the human are
//! answered with a line. A plan (`ExitPlanMode`) is asked the same way: approving it leaves
//! plan mode (with `e`, for auto-accepted edits); denying it says what to change. Prompts go
//! to stderr so that stdout keeps only the session's output.
//!
//! The follow loop polls [`Prompter::keys`] alongside the daemon's events and hands each key
//! to [`Prompter::key`]. Output printed while a question is on screen goes through
//! [`Prompter::interrupt`] (ends the prompt's line) and [`Prompter::resume`] (asks again
//! below it).

use std::collections::VecDeque;
use std::io::Write;

use hld_client::protocol::{Approval, ApprovalType};
use hld_client::view::{asked_together, questions_of};

use crate::decision::Decision;
use crate::hint::hlyr_in;
use crate::keys::{self, Key, Keys};
use crate::output::{paint, short_id, BOLD, DIM, MAGENTA, YELLOW};
use crate::transcript::approval_input;
use crate::transcript::tool_input::EXIT_PLAN_MODE;

/// What a tool call's question offers, as its prompt lists it.
const CHOICES: &str = "[a]pprove  [e] approve, auto-accept edits  [d]eny  [s]kip";
/// What an invalid key is told.
const VALID_KEYS: &str =
    "press a (or y) to approve, e to approve and auto-accept edits from now on, d (or n) to \
deny, s to skip, Esc to deny and stop the agent";
/// What a plan's question offers (`ExitPlanMode`): approving leaves plan mode.
const PLAN_CHOICES: &str =
    "[a]pprove (default mode)  [e] approve, accept edits  [d]eny, say what to change  [s]kip";
/// What an invalid key is told about a plan.
const PLAN_KEYS: &str = "press a to approve the plan (edits are then asked), e to approve it and \
auto-accept edits, d to deny it and say what to change, s to skip";

/// Where the question at the head of the queue stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Approve, approve with auto-accept, deny, skip?
    Choose,
    /// The reason for a denial, typed so far.
    DenyReason(String),
    /// The answer to a question, typed so far; with several questions at once, the answers
    /// to those before it.
    Answer(String, Vec<String>),
}

/// A decision made on the terminal.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub approval: Approval,
    pub decision: Decision,
    /// The reason typed, or the answer as read (a choice's number as its label; `None`: a
    /// denial without a reason).
    pub comment: Option<String>,
    /// Turn on auto-accept of edits for the session once approved.
    pub accept_edits: bool,
    /// Stop the agent's turn once denied (Esc, as Claude Code's permission dialog takes it).
    pub stop: bool,
    /// The context of the daemon the approval is from (`None`: the one in use).
    pub context: Option<String>,
}

/// The approvals to ask, the one being asked first.
#[derive(Debug)]
pub struct Prompter {
    keys: Keys,
    queue: VecDeque<Approval>,
    stage: Stage,
    /// A prompt is on screen, its line not ended yet.
    on_screen: bool,
    /// The head of the queue was asked already (asked again after output, typed keys count).
    asked: bool,
    /// Stdin reached its end: nothing more can be asked.
    closed: bool,
    /// The context of the daemon the approvals asked are from (`None`: the one in use).
    context: Option<String>,
}

impl Prompter {
    /// A prompter reading the terminal's keys, or `None` when stdin is not a terminal.
    pub fn on_terminal() -> Option<Prompter> {
        Some(Prompter {
            keys: Keys::on_terminal()?,
            queue: VecDeque::new(),
            stage: Stage::Choose,
            on_screen: false,
            asked: false,
            closed: false,
            context: None,
        })
    }

    /// Reads keys one at a time from now on, for a conversation's messages as well as for
    /// questions.
    pub fn hold_keys(&mut self) {
        self.keys.hold();
    }

    /// Whether keys can still come (stdin has not ended).
    pub fn reads(&self) -> bool {
        !self.closed
    }

    /// Whether a question is waiting for keys.
    pub fn asking(&self) -> bool {
        !self.closed && !self.queue.is_empty()
    }

    /// The approval being asked, if any.
    pub fn asked(&self) -> Option<&Approval> {
        self.queue.front().filter(|_| !self.closed)
    }

    /// Asks from now on approvals of the daemon of `context` (`hlyr watch --all-contexts`):
    /// what is said of them, and the answers, name it.
    pub fn ask_from(&mut self, context: Option<String>) {
        self.context = context;
    }

    /// The context of the daemon the approvals asked are from (`None`: the one in use).
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }

    /// Queues an approval (asked by the next [`Prompter::resume`] when it is first in line).
    pub fn ask(&mut self, approval: Approval) {
        if self.closed || self.queue.iter().any(|a| a.id == approval.id) {
            return;
        }
        self.queue.push_back(approval);
        if self.queue.len() == 1 {
            self.next_question();
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

    /// Stops asking every approval queued: none can be decided now.
    pub fn give_up(&mut self) {
        self.interrupt();
        self.queue.clear();
    }

    /// Ends the line of a prompt on screen, before something else is printed, and gives the
    /// terminal its line mode back.
    pub fn interrupt(&mut self) {
        if std::mem::take(&mut self.on_screen) {
            anstream::eprintln!();
        }
        self.keys.lines();
    }

    /// Shows the current question unless it is on screen already.
    pub fn resume(&mut self) {
        if !self.on_screen && self.asking() {
            self.keys.single(!std::mem::replace(&mut self.asked, true));
            self.show();
        }
    }

    /// The keys pressed next (`None` at the end of stdin, which stops all asking).
    pub async fn keys(&mut self) -> Option<Vec<Key>> {
        let keys = self.keys.next().await;
        if keys.is_none() {
            self.interrupt();
            self.closed = true;
            self.queue.clear();
        }
        keys
    }

    /// Takes keys read together, in order, for the question on screen. Returns the decision
    /// to send when one completes it; keys after it, or after the question changes, are
    /// dropped (they were typed before the next question was asked).
    pub fn typed(&mut self, keys: Vec<Key>) -> Option<Answer> {
        let head = self.queue.front().map(|a| a.id.clone());
        for key in keys {
            if self.queue.front().map(|a| a.id.clone()) != head {
                break;
            }
            if let Some(answer) = self.key(key) {
                return Some(answer);
            }
        }
        None
    }

    /// Takes a key for the question on screen. Returns the decision to send when the key
    /// completes one, and moves on to the next question.
    fn key(&mut self, key: Key) -> Option<Answer> {
        let head = self.queue.front()?.clone();
        let asks = asked_together(&head).len();
        match (&mut self.stage, key) {
            // y and n too, as hld-tui takes them.
            (Stage::Choose, Key::Char('a' | 'A' | 'y' | 'Y')) => {
                self.decide(head, Decision::Approve, None, false)
            }
            (Stage::Choose, Key::Char('e' | 'E')) => {
                self.decide(head, Decision::Approve, None, true)
            }
            (Stage::Choose, Key::Char('d' | 'D' | 'n' | 'N')) => {
                self.end_line("deny");
                self.stage = Stage::DenyReason(String::new());
                self.show();
                None
            }
            (Stage::Choose, Key::Esc) => {
                let denied = self.decide(head, Decision::Deny, None, false);
                denied.map(|answer| Answer {
                    stop: true,
                    ..answer
                })
            }
            (Stage::Choose, Key::Char('s' | 'S')) => {
                self.end_line("skip");
                self.skip(&head);
                None
            }
            (Stage::Choose, Key::Char('v' | 'V')) => {
                self.end_line("view");
                for line in approval_input(&head).lines(true) {
                    anstream::eprintln!("{line}");
                }
                self.show();
                None
            }
            (Stage::Choose, _) => {
                self.end_line("");
                let view = if approval_input(&head).is_long() {
                    ", v to view the whole input"
                } else {
                    ""
                };
                let keys = if is_plan(&head) {
                    PLAN_KEYS
                } else {
                    VALID_KEYS
                };
                anstream::eprintln!("  {}", paint(YELLOW, format!("{keys}{view}")));
                self.show();
                None
            }
            (Stage::DenyReason(typed) | Stage::Answer(typed, _), Key::Char(c)) => {
                typed.push(c);
                echo(&c.to_string());
                None
            }
            (Stage::DenyReason(typed) | Stage::Answer(typed, _), Key::Backspace) => {
                if typed.pop().is_some() {
                    echo("\u{8} \u{8}");
                }
                None
            }
            (Stage::DenyReason(typed), Key::Enter) => {
                let reason = std::mem::take(typed);
                let reason = Some(reason.trim().to_owned()).filter(|r| !r.is_empty());
                self.decide(head, Decision::Deny, reason, false)
            }
            (Stage::DenyReason(_), Key::Esc) => self.decide(head, Decision::Deny, None, false),
            (Stage::Answer(typed, before), Key::Enter) if !typed.trim().is_empty() => {
                let question = questions_of(&head).and_then(|q| q.into_iter().nth(before.len()));
                if let Some(q) = question.as_ref().filter(|q| q.names_no_choice(typed)) {
                    // A number that names no choice was meant as one: asked again, not sent.
                    typed.clear();
                    self.end_line("");
                    anstream::eprintln!("  {}", paint(YELLOW, q.choose_hint()));
                    self.show();
                    return None;
                }
                // Sent as read, choices' numbers as their labels: what the daemon tells the
                // agent, and what the answer is echoed as.
                let typed = std::mem::take(typed);
                before.push(question.map_or_else(|| typed.trim().to_owned(), |q| q.read(&typed)));
                if before.len() < asks {
                    self.end_line("");
                    self.show();
                    return None;
                }
                // Several answers go a line each, in the order of their questions.
                let answer = before.join("\n");
                self.decide(head, Decision::Respond, Some(answer), false)
            }
            (Stage::Answer(..), Key::Enter | Key::Esc) => {
                self.end_line("");
                self.skip(&head);
                None
            }
            (
                Stage::DenyReason(typed) | Stage::Answer(typed, _),
                Key::KillBefore | Key::KillWord,
            ) => {
                let keep = match key {
                    Key::KillWord => keys::word_start(typed),
                    _ => 0,
                };
                let erased = typed[keep..].chars().count();
                typed.truncate(keep);
                echo(&"\u{8} \u{8}".repeat(erased));
                None
            }
            // The line is typed and erased at its end only.
            _ => None,
        }
    }

    /// Ends the question with `decision` and moves on.
    fn decide(
        &mut self,
        approval: Approval,
        decision: Decision,
        comment: Option<String>,
        accept_edits: bool,
    ) -> Option<Answer> {
        let word = match (decision, accept_edits) {
            (Decision::Approve, false) => "approve",
            (Decision::Approve, true) => "approve, auto-accept edits",
            _ => "",
        };
        self.end_line(word);
        self.queue.pop_front();
        self.next_question();
        Some(Answer {
            approval,
            decision,
            comment,
            accept_edits,
            stop: false,
            context: self.context.clone(),
        })
    }

    /// Leaves `head` pending for another front end, saying how to decide it.
    fn skip(&mut self, head: &Approval) {
        let said = left_pending(head, self.context.as_deref());
        anstream::eprintln!("  {}", paint(DIM, said));
        self.queue.pop_front();
        self.next_question();
    }

    /// Ends the prompt's line with `word` (what the key chose).
    fn end_line(&mut self, word: &str) {
        if std::mem::take(&mut self.on_screen) {
            anstream::eprintln!("{}", paint(BOLD, word));
        }
    }

    /// Prepares the question now first in line.
    fn next_question(&mut self) {
        self.asked = false;
        if let Some(head) = self.queue.front() {
            self.stage = match head.kind {
                ApprovalType::HumanContact => Stage::Answer(String::new(), Vec::new()),
                // A tool call, or a kind this version does not know: offered as a tool
                // call; the daemon refuses a decision that does not fit.
                _ => Stage::Choose,
            };
        }
    }

    /// Prints the question for the current stage (with what was typed so far).
    fn show(&mut self) {
        let Some(head) = self.queue.front() else {
            return;
        };
        let question = match &self.stage {
            Stage::Choose if is_plan(head) => {
                format!("{} {PLAN_CHOICES} ", paint(MAGENTA, "approve the plan?"))
            }
            Stage::Choose => {
                let name = head.function_name.as_deref().unwrap_or("this tool call");
                let view = if approval_input(head).is_long() {
                    "  [v]iew all"
                } else {
                    ""
                };
                format!(
                    "{} {}? {CHOICES}{view} ",
                    paint(MAGENTA, "allow"),
                    paint(BOLD, name)
                )
            }
            Stage::DenyReason(typed) if is_plan(head) => format!(
                "{} {typed}",
                paint(
                    MAGENTA,
                    "what to change in the plan (Enter or Esc for nothing):"
                )
            ),
            Stage::DenyReason(typed) => format!(
                "{} {typed}",
                paint(MAGENTA, "reason for denying (Enter or Esc for none):")
            ),
            Stage::Answer(typed, before) => match asked_together(head).get(before.len()) {
                Some(asked) => {
                    let to = format!("your answer to “{asked}” (empty to answer later):");
                    format!("{} {typed}", paint(MAGENTA, to))
                }
                None => format!(
                    "{} {typed}",
                    paint(MAGENTA, "your answer (empty to answer later):")
                ),
            },
        };
        anstream::eprint!("  {question}");
        self.on_screen = true;
    }
}

/// What `s` says of `approval`, from the daemon of `context` (`None`: the one in use), and
/// what a follower that cannot ask says when it is asked: how to decide it elsewhere.
pub fn left_pending(approval: &Approval, context: Option<&str>) -> String {
    let id = short_id(&approval.id);
    let hlyr = |args: String| hlyr_in(context, &args);
    let how = match approval.kind {
        ApprovalType::FunctionCall => format!(
            "{} or {}",
            hlyr(format!("approve {id}")),
            hlyr(format!("deny {id} [--comment …]"))
        ),
        ApprovalType::HumanContact => hlyr(format!("respond {id} --comment …")),
        // A kind this version does not know.
        _ => "a newer hlyr".to_owned(),
    };
    format!("left pending: decide it with {how}, or in another front end")
}

/// Whether `approval` is Claude's plan, asked in plan mode (`ExitPlanMode`).
pub fn is_plan(approval: &Approval) -> bool {
    approval.function_name.as_deref() == Some(EXIT_PLAN_MODE)
}

/// What the spinner and a notification say while `approval` waits.
pub fn waiting_text(approval: &Approval) -> String {
    match approval.kind {
        ApprovalType::FunctionCall if is_plan(approval) => {
            "waiting for approval of the plan".to_owned()
        }
        ApprovalType::FunctionCall => format!(
            "waiting for a decision on {}",
            approval.function_name.as_deref().unwrap_or("a tool call")
        ),
        ApprovalType::HumanContact => "waiting for an answer".to_owned(),
        // A kind this version does not know.
        _ => "waiting for a decision".to_owned(),
    }
}

/// Echoes typed text (the terminal does not while keys are read one at a time).
fn echo(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}
