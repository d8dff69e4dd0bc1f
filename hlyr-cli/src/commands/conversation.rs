//! `hlyr conversation ID [--follow]`: print a session's conversation (its whole chain of
//! continued sessions), each approval below its tool call with its outcome, a failure's end
//! last, and with `--follow` keep printing until it ends, waiting out a daemon that restarts
//! (it goes on from the last line printed). `--json` prints one line per item, the same lines as a followed
//! `launch`.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{
    Approval, ApprovalStatus, ApprovalType, ConversationEventType, SessionStatus,
};

use hld_client::view::repeats_denial;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::follow::{follow, OnCtrlC, Options};
use crate::output::Update;
use crate::session::Session;
use crate::{ids, transcript, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The session (a unique prefix is enough).
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    id: String,
    /// Keep following the session until it ends, answering approvals on a terminal (Ctrl-C
    /// stops following; the session keeps running).
    #[arg(short, long)]
    follow: bool,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    if args.follow {
        return follow_session(ctx, args.id).await;
    }
    let client = ctx.connect().await?;
    let session = ids::session(&args.id, client.list_sessions().await?)?;
    let events = client.get_whole_conversation(&session.id).await?;
    // The comments of the denials printed: a tool result repeating one is not printed again.
    let mut denials: Vec<String> = Vec::new();
    for event in events {
        if !ctx.out.is_json() && denials.iter().any(|r| repeats_denial(&event, r)) {
            continue;
        }
        let approval_id = match event.event_type {
            ConversationEventType::ToolCall => event.approval_id.clone(),
            _ => None,
        };
        // A question with its approval is told once, by the approval (which names it), with
        // the choices its tool call offered.
        let asked = transcript::asked(&event);
        if approval_id.is_none() || transcript::question(&event).is_none() {
            ctx.out.print(&Update::Event(event))?;
        }
        if let Some(id) = approval_id {
            let approval = client.get_approval(&id).await?;
            print_approval(ctx, &approval, asked)?;
            // A person's reason is shown with the denial (a rule's is not: its result tells it).
            if approval.status == ApprovalStatus::Denied && approval.decided_by.is_none() {
                denials.extend(approval.comment);
            }
        }
    }
    // A failure is how the conversation ended, which its last line does not say. (The JSON
    // lines are the conversation's, and `hlyr show --json` the session's.)
    let state = client.get_session_state(&session.id).await?;
    if state.status == SessionStatus::Failed && !ctx.out.is_json() {
        ctx.out.print(&Update::Finished(Session::from(state)))?;
    }
    Ok(Exit::Ok)
}

/// An approval below its tool call, and its outcome once there is one, in the words a
/// followed session uses.
fn print_approval(
    ctx: &Context,
    approval: &Approval,
    asked: Option<String>,
) -> Result<(), CliError> {
    if ctx.out.is_json() {
        ctx.out.print(&Update::Approval(approval.clone()))?;
    } else {
        let text = match (asked, approval.kind) {
            (Some(asked), ApprovalType::HumanContact) => {
                transcript::question_approval_text(approval, Some(&asked))
            }
            _ => transcript::approval_text(approval, false),
        };
        ctx.out.line(&text)?;
    }
    if approval.status != ApprovalStatus::Pending {
        ctx.out.print(&Update::Decision {
            approval_id: approval.id.clone(),
            decision: approval.status,
            comment: approval.comment.clone(),
            decided_by: approval.decided_by.clone(),
        })?;
    }
    Ok(())
}

async fn follow_session(ctx: &Context, prefix: String) -> Result<Exit, CliError> {
    let client = ctx.connect().await?;
    let session = ids::session(&prefix, client.list_sessions().await?)?;
    let options = Options {
        on_ctrl_c: OnCtrlC::StopWatching,
        notify: false,
        converse: false,
    };
    follow(&client, ctx.out, &session.id, options).await
}
