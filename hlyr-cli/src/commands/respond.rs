//! `hlyr respond CALL_ID [--comment TEXT]`: answer a pending question from Claude. Without
//! `--comment`, on a terminal, the question is shown with its choices and each question it
//! asks is answered on a line of its own; a number that names no choice is asked again.

use std::io::IsTerminal;

use clap_complete::ArgValueCompleter;
use hld_client::view::questions_of;

use crate::complete;
use crate::decision::{pending, send, Decision};
use crate::error::{CliError, Exit};
use crate::output::{paint, MAGENTA, YELLOW};
use crate::transcript::question_approval_text;
use crate::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The question (a unique prefix is enough), or its session's id when only one waits there.
    #[arg(value_name = "CALL_ID", add = ArgValueCompleter::new(complete::approvals))]
    call_id: String,
    /// The answer; to several questions asked at once, a line each. Without it, on a
    /// terminal, each question is shown with its choices and asked in turn.
    #[arg(short, long, value_name = "TEXT", value_parser = super::non_empty)]
    comment: Option<String>,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    match args.comment {
        Some(answer) => given(ctx, &args.call_id, &answer).await,
        None => ask(ctx, &args.call_id).await,
    }
}

/// Sends the answer given with `--comment`, a line to each question, read as the terminal's
/// are: a choice's number as its label, and a number that names no choice refused.
async fn given(ctx: &Context, prefix: &str, answer: &str) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let approval = pending(&client, prefix, Decision::Respond).await?;
    let questions = questions_of(&approval).unwrap_or_default();
    let lines: Vec<&str> = answer.lines().collect();
    // One line per question asked; otherwise the answer goes as it is, in words.
    let read = if questions.len() == lines.len() {
        let mut read = Vec::new();
        for (question, line) in questions.iter().zip(&lines) {
            if question.names_no_choice(line.trim()) {
                return Err(CliError::usage(format!(
                    "{:?} names no choice of “{}”: {}",
                    line.trim(),
                    question.text,
                    question.choose_hint()
                )));
            }
            read.push(question.read(line));
        }
        read.join("\n")
    } else {
        answer.to_owned()
    };
    send(ctx, &client, approval.id, Decision::Respond, Some(read)).await
}

/// Shows the question on stderr, reads an answer to each question it asks from the terminal
/// (a choice's number picks it) and sends them, a line each.
async fn ask(ctx: &Context, prefix: &str) -> Result<Exit, CliError> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CliError::usage("no answer: give it with --comment TEXT")
            .hint("on a terminal, without --comment, hlyr asks for it"));
    }
    let client = ctx.connect().await?;
    let approval = pending(&client, prefix, Decision::Respond).await?;
    anstream::eprintln!("{}", question_approval_text(&approval, None));
    let questions = questions_of(&approval).unwrap_or_default();
    let mut answers = Vec::new();
    for question in &questions {
        let prompt = match questions.len() {
            1 => "your answer: ".to_owned(),
            _ => format!("your answer to “{}”: ", question.text),
        };
        let answer = loop {
            anstream::eprint!("  {}", paint(MAGENTA, &prompt));
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .map_err(|e| CliError::failure(format!("cannot read the answer: {e}")))?;
            // A number that names no choice was meant as one: asked again, not sent.
            match line.trim() {
                answer if question.names_no_choice(answer) => {
                    anstream::eprintln!("  {}", paint(YELLOW, question.choose_hint()));
                }
                // As read, a choice's number as its label: sent and echoed so.
                answer => break question.read(answer),
            }
        };
        if answer.is_empty() {
            return Err(CliError::failure(
                "nothing answered: the question still waits",
            ));
        }
        answers.push(answer);
    }
    send(
        ctx,
        &client,
        approval.id,
        Decision::Respond,
        Some(answers.join("\n")),
    )
    .await
}
