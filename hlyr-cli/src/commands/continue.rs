//! `hlyr continue ID QUERY`: continue a session with a new query (a new session resuming the
//! Claude conversation), then follow it, printing the conversation so far first. With
//! `--last`, the session continued is the newest one run in the current directory.

use clap_complete::ArgValueCompleter;
use std::path::{Path, PathBuf};

use hld_client::protocol::{
    ContinueSessionParams, SessionInfo, WorktreeInfo, WorktreeParams, WorktreeState,
};

use super::launch::{images, query, tools, worktree_of, AgentArgs, FollowArgs, CTRL_C_HELP};
use crate::complete;
use crate::connect::StartArgs;
use crate::error::{CliError, Exit, Kind};
use crate::follow::follow;
use crate::hint::hlyr;
use crate::output::{paint, short_id, Update, YELLOW};
use crate::{ids, Context};

#[derive(Debug, clap::Args)]
#[command(
    override_usage = "hlyr continue [OPTIONS] <ID> <QUERY>...\n       \
                      hlyr continue [OPTIONS] --last <QUERY>...",
    after_help = CTRL_C_HELP
)]
pub struct Args {
    /// The session to continue (a unique prefix is enough); not given with --last.
    #[arg(value_name = "ID", add = ArgValueCompleter::new(complete::sessions), required_unless_present = "last")]
    id: Option<String>,
    /// What to ask next (several words are joined with spaces; `-` reads it from stdin).
    #[arg(value_name = "QUERY", required_unless_present = "last")]
    query: Vec<String>,
    /// Continue the newest session (by last activity) run in the current directory, or isolated
    /// in a worktree of its repository; every word given is then the query.
    #[arg(short, long)]
    last: bool,
    #[command(flatten)]
    agent: AgentArgs,
    /// Work isolated, in a new git worktree of its own on a new branch from the session's
    /// (how a session whose branch was merged goes on).
    #[arg(long)]
    worktree: bool,
    /// The new branch's name [default: one made from the title or query].
    #[arg(long, value_name = "NAME", requires = "worktree")]
    branch: Option<String>,
    /// Print the new session and run ids and return, without following.
    #[arg(long)]
    detach: bool,
    /// Continue a session that is still running without asking: its turn is interrupted.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    follow: FollowArgs,
    #[command(flatten)]
    start: StartArgs,
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    // With --last, clap gives the query's first word the ID's place.
    let words: Vec<String> = if args.last {
        args.id.iter().cloned().chain(args.query).collect()
    } else {
        args.query
    };
    let query = query(&words)?;
    let here = if args.last {
        Some(current_dir()?)
    } else {
        None
    };
    let mcp_config = args.agent.mcp_config()?;
    let additional_directories = args.agent.additional_directories()?;
    let images = images(&args.agent.images)?;
    let (mut client, started) = ctx.connect_or_start(&args.start).await?;
    if let Some(started) = started {
        crate::connect::announce(&started);
    }
    let sessions = client.list_sessions().await?;
    let parent = match (&here, &args.id) {
        (Some(here), _) => last_in(here, sessions)?,
        (None, Some(id)) => ids::session(id, sessions)?,
        (None, None) => return Err(CliError::usage("give the session's ID, or --last")),
    };
    if parent.status.is_active() && !args.force {
        interrupts(&parent)?;
    }
    // An isolated parent's continuation branches from the parent's branch (the daemon's
    // `continueSession`).
    let from = (parent.worktree.as_ref()).map(|w| w.branch.clone());
    let params = ContinueSessionParams {
        session_id: parent.id,
        query,
        mcp_config,
        title: args.agent.title,
        additional_directories,
        model: args.agent.model,
        max_turns: args.agent.max_turns.map(i64::from),
        system_prompt: args.agent.system_prompt,
        append_system_prompt: args.agent.append_system_prompt,
        allowed_tools: tools(&args.agent.allowed_tools),
        disallowed_tools: tools(&args.agent.disallowed_tools),
        permission_mode: args.agent.mode,
        images,
        resume_on_reset: args.agent.resume_on_reset,
        worktree: args.worktree.then_some(WorktreeParams {
            branch: args.branch.clone(),
            base: None,
        }),
        ..Default::default()
    };
    let continued = match client.continue_session(params.clone()).await {
        Ok(continued) => continued,
        Err(e) => {
            let error = CliError::from(e).about_session(short_id(&params.session_id));
            crate::claude::restart_to_go_on(ctx, &args.start, error).await?;
            client = ctx.connect().await?;
            client.continue_session(params).await?
        }
    };
    let asked = args.branch.as_deref();
    let worktree = worktree_of(&client, &continued.session_id, args.worktree, asked).await?;
    ctx.out.print(&Update::Started {
        session_id: continued.session_id.clone(),
        run_id: continued.run_id,
        parent_session_id: Some(continued.parent_session_id),
        worktree,
        from,
    })?;
    if args.detach {
        return Ok(Exit::Ok);
    }
    let options = args.follow.conversing(ctx);
    follow(&client, ctx.out, &continued.session_id, options).await
}

/// The daemon interrupts a running session's turn to continue it (as HumanLayer's does):
/// said first, and on a terminal asked, with the way to talk to it without interrupting.
fn interrupts(parent: &SessionInfo) -> Result<(), CliError> {
    let id = short_id(&parent.id);
    let said = format!("{id} is still running: continuing it interrupts its turn");
    anstream::eprintln!("{}", paint(YELLOW, said));
    if crate::ask::confirm("Interrupt it and continue?") == Some(false) {
        return Err(CliError::failure("nothing was continued")
            .kind(Kind::Cancelled)
            .hint(format!(
                "{} gives it the message at the end of its turn instead; {} continues without \
                 asking",
                hlyr(&format!("send {id} QUERY")),
                hlyr("continue --force")
            )));
    }
    Ok(())
}

/// The current directory, with symbolic links resolved as `launch` resolves `-w`.
fn current_dir() -> Result<PathBuf, CliError> {
    std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .map_err(|e| CliError::usage(format!("cannot read the current directory: {e}")))
}

/// The session with the latest activity among those that ran in `here`: in it, or isolated
/// in a worktree of the repository checked out there (`launch --worktree` from `here`). One
/// whose worktree was discarded is passed over: nothing can continue it.
fn last_in(here: &Path, sessions: Vec<SessionInfo>) -> Result<SessionInfo, CliError> {
    let is_here = |dir: &str| {
        Path::new(dir) == here || std::fs::canonicalize(dir).is_ok_and(|dir| dir == here)
    };
    let ran_here = |s: &SessionInfo| {
        let isolated_here = |w: &WorktreeInfo| is_here(&w.repository);
        let discarded = |w: &WorktreeInfo| w.state == WorktreeState::Discarded;
        !s.worktree.as_ref().is_some_and(discarded)
            && (s.working_dir.as_deref().is_some_and(is_here)
                || s.worktree.as_ref().is_some_and(isolated_here))
    };
    let activity = |s: &SessionInfo| {
        chrono::DateTime::parse_from_rfc3339(&s.last_activity_at)
            .map(|t| t.to_utc())
            .unwrap_or_default()
    };
    sessions
        .into_iter()
        .filter(ran_here)
        .max_by_key(activity)
        .ok_or_else(|| {
            CliError::usage(format!("no session has run in {}", here.display())).hint(format!(
                "give the session's ID ({} lists them), or cd to its directory",
                hlyr("sessions")
            ))
        })
}
