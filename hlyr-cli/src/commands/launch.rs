//! `hlyr launch QUERY`: start a session (and the daemon, if none answers), then follow it.
//! `hlyr launch -` reads the query from stdin.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use hld_client::protocol::{
    LaunchSessionParams, McpConfig, McpConfigParam, PermissionMode, WorktreeInfo, WorktreeParams,
};
use hld_client::view::clean;

use crate::connect::StartArgs;
use crate::error::{CliError, Exit};
use crate::follow::{follow, OnCtrlC, Options};
use crate::output::{paint, Update, YELLOW};
use crate::Context;

/// What Ctrl-C does while `launch` and `continue` follow their session.
pub const CTRL_C_HELP: &str = "\
Ctrl-C interrupts the session, as it stops `claude`, waits for it to end and exits 130; a
second Ctrl-C stops waiting (a line being typed is cleared first). With --keep-running,
Ctrl-C only stops following, and the session keeps running.";

#[derive(Debug, clap::Args)]
#[command(after_help = CTRL_C_HELP)]
pub struct Args {
    /// What to ask Claude (several words are joined with spaces; `-` reads it from stdin).
    #[arg(required = true, value_name = "QUERY")]
    query: Vec<String>,
    /// The session's working directory [default: the current directory].
    #[arg(short = 'w', long, value_name = "DIR")]
    working_dir: Option<PathBuf>,
    /// Ask no human: Claude Code then refuses the tool calls that need permission (edits,
    /// Bash…) unless --allowed-tools names them.
    #[arg(long)]
    no_approvals: bool,
    #[command(flatten)]
    agent: AgentArgs,
    /// Approve Edit, Write and MultiEdit without asking (the daemon decides; see `settings`).
    #[arg(long)]
    auto_accept_edits: bool,
    /// Approve every tool call without asking, until turned off or --bypass-for runs out
    /// (questions to the human are still asked).
    #[arg(long)]
    dangerously_skip_permissions: bool,
    /// How long --dangerously-skip-permissions lasts: 30s, 15m, 2h, 1d.
    #[arg(
        long,
        value_name = "DURATION",
        requires = "dangerously_skip_permissions",
        value_parser = crate::duration::parse_positive
    )]
    bypass_for: Option<Duration>,
    /// Run isolated: in a new git worktree of the repository, on a new branch (review it
    /// with `hlyr diff`, then `hlyr merge` or `hlyr discard`).
    #[arg(long)]
    worktree: bool,
    /// The new branch's name [default: one made from the title or query].
    #[arg(long, value_name = "NAME", requires = "worktree")]
    branch: Option<String>,
    /// What the branch starts from [default: the current branch's HEAD].
    #[arg(long, value_name = "REF", requires = "worktree")]
    base: Option<String>,
    /// Print the session and run ids and return, without following.
    #[arg(long)]
    detach: bool,
    #[command(flatten)]
    follow: FollowArgs,
    #[command(flatten)]
    start: StartArgs,
}

// How `launch` and `continue` follow their session. (A plain comment: clap would take a doc
// comment as the description of the commands that flatten it.)
#[derive(Debug, clap::Args)]
pub struct FollowArgs {
    /// On Ctrl-C, stop following and leave the session running instead of interrupting it.
    #[arg(long, conflicts_with = "detach")]
    keep_running: bool,
    /// Ring the terminal's bell and send it a notification (OSC 9 or 777) when the daemon
    /// notifies about the session (an approval waits…) and when its turn ends; on the desktop
    /// too (notify-send or osascript) unless the daemon shows desktop notifications itself.
    #[arg(long, conflicts_with = "detach")]
    notify: bool,
}

impl FollowArgs {
    /// How `launch` and `continue` follow their session: on a terminal, the conversation goes
    /// on after the first turn, as `claude`'s does.
    pub fn conversing(&self, ctx: &Context) -> Options {
        let terminal = std::io::stdin().is_terminal()
            && std::io::stdout().is_terminal()
            && std::io::stderr().is_terminal();
        Options {
            converse: terminal && !ctx.out.is_json(),
            ..self.options()
        }
    }

    /// How to follow the session.
    pub fn options(&self) -> Options {
        Options {
            on_ctrl_c: if self.keep_running {
                OnCtrlC::Detach
            } else {
                OnCtrlC::Interrupt
            },
            notify: self.notify,
            converse: false,
        }
    }
}

// Flags that shape the session and how Claude runs, shared by `launch` and `continue`. (A
// plain comment: clap would take a doc comment as the description of the commands that
// flatten them.)
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The session's title, shown in lists [default: the query's first line; a continuation
    /// keeps its parent's].
    #[arg(short, long, value_name = "TEXT", value_parser = super::title)]
    pub title: Option<String>,
    /// Another directory Claude may use (repeat the flag for more; a continuation keeps its
    /// parent's unless given).
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dirs: Vec<PathBuf>,
    /// The model: an alias (opus, sonnet, haiku) or a full model id.
    #[arg(short, long, value_parser = super::non_empty)]
    pub model: Option<String>,
    /// Stop after this many agent turns.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,
    /// Replace the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub system_prompt: Option<String>,
    /// Add to the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Tools Claude may use without asking (comma-separated, or repeat the flag).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub allowed_tools: Vec<String>,
    /// Tools Claude may not use (comma-separated, or repeat the flag).
    #[arg(long, value_name = "TOOLS", value_delimiter = ',')]
    pub disallowed_tools: Vec<String>,
    /// MCP servers for the session: a JSON file with an `mcpServers` object.
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// Start in this mode: plan (Claude plans and edits nothing until its plan is approved)
    /// or default [default: default; a continuation keeps its parent's].
    #[arg(long, value_name = "plan|default", value_parser = super::permission_mode)]
    pub mode: Option<PermissionMode>,
    /// An image to attach to the query: a PNG, JPEG, GIF or WebP file (repeat the flag for
    /// more).
    #[arg(long = "image", value_name = "PATH")]
    pub images: Vec<PathBuf>,
    /// When a usage limit stops the session, resume it when the limit resets
    /// (`--resume-on-reset=false` not to) [default: the daemon's resume_on_reset; a
    /// continuation keeps its parent's].
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub resume_on_reset: Option<bool>,
}

impl AgentArgs {
    /// The `--add-dir` directories made absolute (checked here: a missing one is a usage
    /// error); `None` when none was given.
    pub fn additional_directories(&self) -> Result<Option<Vec<String>>, CliError> {
        if self.add_dirs.is_empty() {
            return Ok(None);
        }
        let dirs = self
            .add_dirs
            .iter()
            .map(|dir| directory("--add-dir", dir))
            .collect::<Result<_, _>>()?;
        Ok(Some(dirs))
    }

    /// The `--mcp-config` file, read and checked here so that a bad file is a usage error.
    pub fn mcp_config(&self) -> Result<Option<McpConfigParam>, CliError> {
        let Some(path) = &self.mcp_config else {
            return Ok(None);
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            CliError::usage(format!("cannot read --mcp-config {}: {e}", path.display()))
        })?;
        let config: McpConfig = serde_json::from_str(&text).map_err(|e| {
            CliError::usage(format!("--mcp-config {} is not valid: {e}", path.display()))
                .hint(r#"expected {"mcpServers": {"name": {"command": "…", "args": […]}}}"#)
        })?;
        Ok(Some(McpConfigParam::Object(config)))
    }
}

/// `--image` files made absolute against the current directory (the daemon, which runs
/// elsewhere, reads and checks them); `None` when none was given.
pub fn images(paths: &[PathBuf]) -> Result<Option<Vec<String>>, CliError> {
    if paths.is_empty() {
        return Ok(None);
    }
    let absolute = paths
        .iter()
        .map(|path| {
            std::path::absolute(path)
                .map(|p| p.display().to_string())
                .map_err(|e| CliError::usage(format!("--image {}: {e}", path.display())))
        })
        .collect::<Result<_, _>>()?;
    Ok(Some(absolute))
}

/// A tool list flag as sent: trimmed, `None` when empty.
pub fn tools(list: &[String]) -> Option<Vec<String>> {
    let tools: Vec<String> = list
        .iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    (!tools.is_empty()).then_some(tools)
}

/// The query words joined, or stdin's text for `-` alone (as `claude -p` reads it); an
/// empty query is a usage error.
pub fn query(words: &[String]) -> Result<String, CliError> {
    text(words, "query")
}

/// `words` joined, or stdin's text for `-` alone; empty text is a usage error naming it
/// `what`.
pub fn text(words: &[String], what: &str) -> Result<String, CliError> {
    if words == ["-"] {
        let text = std::io::read_to_string(std::io::stdin())
            .map_err(|e| CliError::usage(format!("cannot read the {what} from stdin: {e}")))?;
        let text = text.trim_end();
        if text.trim().is_empty() {
            return Err(CliError::usage(format!(
                "the {what} read from stdin is empty"
            )));
        }
        return Ok(text.to_owned());
    }
    let text = words.join(" ");
    if text.trim().is_empty() {
        return Err(CliError::usage(format!("the {what} is empty")));
    }
    Ok(text)
}

/// `-w` made absolute (the daemon runs elsewhere), or the current directory.
fn working_dir(dir: Option<PathBuf>) -> Result<String, CliError> {
    directory(
        "working directory",
        &dir.unwrap_or_else(|| PathBuf::from(".")),
    )
}

/// A directory given on the command line (`what`), made absolute; one that is missing is a
/// usage error.
fn directory(what: &str, dir: &std::path::Path) -> Result<String, CliError> {
    let absolute = std::fs::canonicalize(dir)
        .ok()
        .filter(|d| d.is_dir())
        .ok_or_else(|| {
            CliError::usage(format!(
                "{what} {} does not exist or is not a directory",
                dir.display()
            ))
        })?;
    Ok(absolute.display().to_string())
}

pub async fn run(ctx: &Context, args: Args) -> Result<Exit, CliError> {
    let params = LaunchSessionParams {
        query: query(&args.query)?,
        working_dir: Some(working_dir(args.working_dir)?),
        additional_directories: args.agent.additional_directories()?,
        mcp_config: args.agent.mcp_config()?,
        title: args.agent.title,
        auto_accept_edits: args.auto_accept_edits.then_some(true),
        dangerously_skip_permissions: args.dangerously_skip_permissions.then_some(true),
        dangerously_skip_permissions_timeout: args.bypass_for.map(crate::duration::millis),
        model: args.agent.model,
        max_turns: args.agent.max_turns.map(i64::from),
        system_prompt: args.agent.system_prompt,
        append_system_prompt: args.agent.append_system_prompt,
        allowed_tools: tools(&args.agent.allowed_tools),
        disallowed_tools: tools(&args.agent.disallowed_tools),
        no_approvals: args.no_approvals.then_some(true),
        worktree: args.worktree.then_some(WorktreeParams {
            branch: args.branch.clone(),
            base: args.base.clone(),
        }),
        permission_mode: args.agent.mode,
        images: images(&args.agent.images)?,
        resume_on_reset: args.agent.resume_on_reset,
        ..Default::default()
    };
    let (mut client, started) = ctx.connect_or_start(&args.start).await?;
    if let Some(started) = started {
        crate::connect::announce(&started);
    }
    let launched = match client.launch_session(params.clone()).await {
        Ok(launched) => launched,
        Err(e) => {
            crate::claude::restart_to_go_on(ctx, &args.start, e.into()).await?;
            client = ctx.connect().await?;
            client.launch_session(params).await?
        }
    };
    let asked = args.branch.as_deref();
    let worktree = worktree_of(&client, &launched.session_id, args.worktree, asked).await?;
    ctx.out.print(&Update::Started {
        session_id: launched.session_id.clone(),
        run_id: launched.run_id,
        parent_session_id: None,
        worktree: worktree.clone(),
        // A base that is no branch (a tag, a commit) is where it starts, not what it merges into.
        from: args.base,
    })?;
    if let Some(repository) = worktree.as_ref().map(|w| &w.repository) {
        if has_uncommitted_changes(repository) {
            let note = format!(
                "uncommitted changes in {} stay there: the worktree starts at its last commit",
                clean(repository)
            );
            anstream::eprintln!("{}", paint(YELLOW, note));
        }
    }
    if args.detach {
        return Ok(Exit::Ok);
    }
    let options = args.follow.conversing(ctx);
    follow(&client, ctx.out, &launched.session_id, options).await
}

/// The worktree of session `id` when it was started `isolated`, to print with its start. A
/// branch the daemon named otherwise than `--branch` asked (git's rules) is said.
pub async fn worktree_of(
    client: &hld_client::Client,
    id: &str,
    isolated: bool,
    asked: Option<&str>,
) -> Result<Option<WorktreeInfo>, CliError> {
    if !isolated {
        return Ok(None);
    }
    let worktree = client.get_session_state(id).await?.worktree;
    if let (Some(asked), Some(w)) = (asked, &worktree) {
        if w.branch != asked {
            let note = format!(
                "--branch {:?} became {}: git's branch names keep letters, digits and / . _ -",
                clean(asked),
                clean(&w.branch)
            );
            anstream::eprintln!("{}", paint(YELLOW, note));
        }
    }
    Ok(worktree)
}

/// Whether `repository`'s checkout has changes not committed, new files not ignored too. A
/// repository this machine cannot see (a remote daemon's) has none to tell.
fn has_uncommitted_changes(repository: &str) -> bool {
    std::process::Command::new("git")
        .args(["-C", repository, "status", "--porcelain"])
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_made_absolute_against_the_current_directory() {
        assert_eq!(images(&[]).unwrap(), None);
        let cwd = std::env::current_dir().unwrap();
        let given = [PathBuf::from("shots/a.png"), PathBuf::from("/tmp/b.png")];
        assert_eq!(
            images(&given).unwrap(),
            Some(vec![
                cwd.join("shots/a.png").display().to_string(),
                "/tmp/b.png".to_owned()
            ])
        );
    }
}
