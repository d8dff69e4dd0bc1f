//! `hlyr approvals [--session ID] [--all-contexts]`: pending approvals, oldest first; with
//! `--all-contexts`, those of every daemon named in `hlyr context list`, each row marked with
//! its context, and a daemon that cannot be reached said on stderr while the others show.

use clap_complete::ArgValueCompleter;
use hld_client::protocol::{Approval, ApprovalType};
use hld_client::view::clean;

use crate::complete;
use crate::error::{CliError, Exit};
use crate::output::{age, paint, short_id, shorten, Render, DIM};
use crate::table::table;
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this session's approvals (a unique prefix is enough).
    #[arg(short, long, value_name = "ID", add = ArgValueCompleter::new(complete::sessions))]
    session: Option<String>,
    /// The approvals of every context's daemon (`hlyr context list`), each marked with it.
    #[arg(long, conflicts_with = "session")]
    all_contexts: bool,
}

#[derive(serde::Serialize)]
struct Row {
    /// The context whose daemon holds it, with `--all-contexts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    #[serde(flatten)]
    approval: Approval,
}

#[derive(serde::Serialize)]
#[serde(transparent)]
struct Approvals(Vec<Row>);

impl Render for Approvals {
    fn human(&self) -> String {
        if self.0.is_empty() {
            return paint(DIM, "no pending approvals");
        }
        let rows: Vec<Vec<String>> = self
            .0
            .iter()
            .map(
                |Row {
                     context,
                     approval: a,
                 }| {
                    let (kind, what) = match a.kind {
                        // A command or a file when the tool has one, else its input.
                        ApprovalType::FunctionCall => {
                            let detail = crate::board::call_detail(a).unwrap_or_else(|| {
                                let input = a.function_args.as_ref();
                                input.map(|v| v.to_string()).unwrap_or_default()
                            });
                            let name = a.function_name.as_deref().unwrap_or("tool");
                            ("tool", format!("{name} {detail}"))
                        }
                        ApprovalType::HumanContact => {
                            ("question", a.message.clone().unwrap_or_default())
                        }
                        // A kind this version does not know: its name.
                        other => (other.as_str(), String::new()),
                    };
                    let what = shorten(&clean(&what).replace('\n', " "));
                    let mut row = context.iter().cloned().collect::<Vec<_>>();
                    row.extend([
                        short_id(&a.id).to_owned(),
                        short_id(&a.session_id).to_owned(),
                        kind.to_owned(),
                        age(&a.requested_at),
                        what,
                    ]);
                    row
                },
            )
            .collect();
        let mut headers = vec!["ID", "SESSION", "TYPE", "AGE", "REQUEST"];
        if self.0.iter().any(|row| row.context.is_some()) {
            headers.insert(0, "CONTEXT");
        }
        table(&headers, &rows)
    }
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    if args.all_contexts {
        return all_contexts(ctx).await;
    }
    let client = ctx.connect().await?;
    let session = match &args.session {
        Some(prefix) => Some(ids::session(prefix, client.list_sessions().await?)?.id),
        None => None,
    };
    let approvals = client.fetch_approvals(session.as_deref()).await?;
    let rows = approvals
        .into_iter()
        .map(|approval| Row {
            context: None,
            approval,
        })
        .collect();
    ctx.out.print(&Approvals(rows))?;
    Ok(Exit::Ok)
}

/// Every context's pending approvals; one that cannot be reached is said on stderr, and
/// makes the exit code 3 once the others are shown.
async fn all_contexts(ctx: &Context) -> Result<Exit, CliError> {
    let mut rows = Vec::new();
    let mut exit = Exit::Ok;
    for (name, address) in ctx.all_contexts()? {
        let fetched = async {
            let client = hld_client::Client::connect_to(&address?).await?;
            Ok::<_, CliError>(client.fetch_approvals(None).await?)
        };
        match fetched.await {
            Ok(approvals) => rows.extend(approvals.into_iter().map(|approval| Row {
                context: Some(name.clone()),
                approval,
            })),
            Err(e) => {
                anstream::eprintln!("{}", paint(DIM, format!("{name}: {}", e.message)));
                exit = Exit::Unreachable;
            }
        }
    }
    ctx.out.print(&Approvals(rows))?;
    Ok(exit)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A question's text comes from any local client: its escapes never reach the terminal.
    #[test]
    fn a_question_is_listed_cleaned() {
        let approval: Approval = serde_json::from_value(json!({
            "id": "local-1234abcd", "call_id": "local-1234abcd", "run_id": "r",
            "session_id": "s-12345678", "type": "human_contact", "status": "pending",
            "requested_at": "2026-01-01T00:00:00Z",
            "message": "Evil \u{1b}]0;pwned\u{7} \u{1b}[31mred\nsecond line",
        }))
        .unwrap();
        let rows = Approvals(vec![Row {
            context: None,
            approval,
        }]);
        let text = anstream::adapter::strip_str(&rows.human()).to_string();
        assert!(
            text.contains("Evil �]0;pwned� �[31mred second line"),
            "{text:?}"
        );
        assert!(!rows.human().contains("\u{1b}]"), "{:?}", rows.human());
    }
}
