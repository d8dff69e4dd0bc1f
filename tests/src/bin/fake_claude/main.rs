//! `fake-claude`: a test-only stand-in for Anthropic's `claude` CLI 2.1.197 in `--print`
//! mode. It takes the same command line, writes the same stream-json, starts the
//! `--mcp-config` stdio servers and asks the `--permission-prompt-tool` like the real CLI,
//! persists conversations for `--resume`, and reacts to SIGINT/SIGTERM the same way; what
//! the "model" does is scripted by a scenario. Reference: `shared/reference/claude-code.md`
//! and `tests/fixtures/transcripts/`.
//!
//! With `--input-format stream-json` the prompt is not on the command line: the process
//! reads stdin and plays one turn per user message (its own `init` and `result`; messages
//! that arrive during a turn wait for its end; image blocks read as lines `[image: …]`),
//! answers control requests (`interrupt`, `initialize`, `set_permission_mode`, `set_model`,
//! `file_suggestions`), plays `/compact` (`run/compact.rs`), asks `can_use_tool` with
//! `--permission-prompt-tool stdio`, and exits when stdin closes (`run/live.rs`).
//!
//! Environment:
//! - `FAKE_CLAUDE_SCENARIO`: the scenario (else `scenario:<name>` in the prompt or the
//!   turn's message, else `plain`); see `scenarios.rs` for the list and `FAKE_CLAUDE_COUNT`,
//!   `FAKE_CLAUDE_DELAY_MS`, `FAKE_CLAUDE_BIG_BYTES`, `FAKE_CLAUDE_COMMAND`.
//! - `FAKE_CLAUDE_HOME`: where conversations are stored (default `$HOME/.fake-claude`).
//! - `FAKE_CLAUDE_LOG_DIR`: where each invocation is recorded, with each stdin line of
//!   streaming input and when it was read (see `record.rs`).
//! - `FAKE_CLAUDE_ASK_LOG`: a file where each permission request is stamped as it is sent
//!   (see `record.rs`).
//! - `FAKE_CLAUDE_STDERR`: a text to print on stderr at start-up.
//! - `FAKE_CLAUDE_INTERRUPT_DELAY_MS`: how long an interrupted run takes to stop.

mod cli;
mod control;
mod daemon;
mod events;
mod files;
mod ids;
mod input;
mod mcp;
mod mcp_config;
mod output;
mod permissions;
mod record;
mod results;
mod run;
mod scenarios;
mod signals;
mod store;
mod tools;

use std::io::{IsTerminal, Read};
use std::path::Path;

use cli::{Args, Command, InputFormat, OutputFormat};
use events::Event;
use input::Inbox;
use mcp::McpServers;
use output::Output;
use permissions::Policy;
use record::Invocation;
use results::{Failed, Failure, RunStats, Tokens};
use run::{ends_process, Next, Run, Session};
use scenarios::Scenario;
use signals::Signals;
use store::{Conversation, Store};

/// The CLI version the fake impersonates.
const CLI_VERSION: &str = "2.1.197";

fn main() {
    let code = match Signals::install() {
        Ok(signals) => launch(&signals).unwrap_or_else(|message| {
            eprintln!("{message}");
            1
        }),
        Err(error) => {
            eprintln!("fake-claude: cannot install signal handlers: {error}");
            1
        }
    };
    std::process::exit(code);
}

/// Runs the command line and returns the exit code; `Err` is a start-up error for stderr
/// (exit 1, nothing on stdout).
fn launch(signals: &Signals) -> Result<i32, String> {
    let argv: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let args = match cli::parse(&argv).map_err(|error| error.to_string())? {
        Command::Version => {
            println!("{CLI_VERSION} (Claude Code)");
            return Ok(0);
        }
        Command::Run(args) => args,
    };
    if !args.print {
        return Err("fake-claude: only --print (-p) mode is supported".into());
    }
    if args.output_format == OutputFormat::StreamJson && !args.verbose {
        return Err(
            "Error: When using --print, --output-format=stream-json requires --verbose".into(),
        );
    }
    let streaming = args.input_format == InputFormat::StreamJson;
    if streaming && args.output_format != OutputFormat::StreamJson {
        return Err("Error: --input-format=stream-json requires output-format=stream-json.".into());
    }
    if args.permission_prompt_tool.as_deref() == Some("stdio") && !streaming {
        return Err(
            "fake-claude: --permission-prompt-tool stdio needs --input-format stream-json".into(),
        );
    }
    let cwd = std::env::current_dir()
        .map_err(|error| format!("fake-claude: no working directory: {error}"))?;
    // With stream-json input the prompts are the user messages on stdin; the real CLI
    // ignores a positional prompt then.
    let prompt = match &args.prompt {
        _ if streaming => String::new(),
        Some(prompt) => prompt.clone(),
        None => read_prompt_from_stdin()?,
    };
    let mcp_config = mcp_config::load(&args.mcp_configs, &cwd)?;
    let scenario = if streaming {
        None
    } else {
        Some(Scenario::select(&prompt)?)
    };
    if let Ok(text) = std::env::var("FAKE_CLAUDE_STDERR") {
        eprintln!("{text}");
    }

    let store = Store::from_env();
    let mut out = Output::new(args.output_format, args.verbose);
    let opened = open_conversation(&args, &store, &cwd)?;
    let session_id = match &opened {
        Opened::Ready { id, .. } | Opened::Refused { id, .. } => id.clone(),
    };
    let invocation = Invocation::new(
        &args,
        &cwd,
        mcp_config.as_ref().map(|config| &config.raw),
        &prompt,
        &session_id,
        scenario.map_or("", Scenario::name),
    );
    if let Err(error) = invocation.write() {
        eprintln!("fake-claude: cannot write the invocation log: {error}");
    }

    let (history, resumed) = match opened {
        Opened::Ready {
            history, resumed, ..
        } => (history, resumed),
        Opened::Refused { failure, .. } => return Ok(refuse(&mut out, session_id, failure)),
    };
    let mut saved = Saved {
        store: (!args.no_session_persistence).then_some(store),
        conversation: Conversation {
            session_id: session_id.clone(),
            cwd: cwd.clone(),
            prompts: history.clone(),
            forked_from: resumed.filter(|_| args.fork_session),
        },
    };
    let permission_mode = if args.skip_permissions {
        "bypassPermissions".to_string()
    } else {
        args.permission_mode
            .clone()
            .unwrap_or_else(|| "default".into())
    };
    let session = Session {
        id: session_id,
        model: resolve_model(args.model.as_deref()),
        cwd,
        prompt: String::new(),
        history,
        permission_mode,
    };
    let mcp = match McpServers::start(mcp_config.as_ref(), &session.cwd, signals) {
        Ok(mcp) => mcp,
        Err(exit_code) => return Ok(exit_code),
    };
    let inbox = streaming.then(|| Inbox::start(invocation, signals.clone()));
    let mut run = Run::new(
        session,
        Policy::new(&args),
        out,
        mcp,
        signals.clone(),
        inbox,
    );
    Ok(match scenario {
        Some(scenario) => play(&args, &mut run, scenario, prompt, &mut saved),
        None => serve(&args, &mut run, &mut saved),
    })
}

/// The conversation as stored for `--resume` (unless `--no-session-persistence`).
struct Saved {
    store: Option<Store>,
    conversation: Conversation,
}

impl Saved {
    /// Stores the conversation with `prompt` added.
    fn add(&mut self, prompt: &str) {
        let Some(store) = &self.store else { return };
        self.conversation.prompts.push(prompt.into());
        if let Err(error) = store.save(&self.conversation) {
            eprintln!("fake-claude: cannot store the conversation: {error}");
        }
    }
}

/// Plays one turn: `init`, the scenario for `prompt`, the `result`; returns its exit code.
fn play(args: &Args, run: &mut Run, scenario: Scenario, prompt: String, saved: &mut Saved) -> i32 {
    saved.add(&prompt);
    run.begin(prompt, args.max_turns.or(scenario.default_max_turns()));
    let outcome = run.announce().and_then(|()| scenario.play(run));
    run.end_turn(outcome)
}

/// Stream-json input: one turn per user message, until stdin closes (or a turn or a signal
/// ends the process); returns the last turn's exit code (0 without any).
fn serve(args: &Args, run: &mut Run, saved: &mut Saved) -> i32 {
    let mut code = 0;
    loop {
        let prompt = match run.next_message() {
            Next::Message(prompt) => prompt,
            Next::Closed => break,
            Next::Exit(code) => return code,
        };
        if run::compact::asked(&prompt) {
            let earlier = saved.conversation.prompts.len();
            run.begin(prompt, None);
            let outcome = run.compact(earlier);
            code = run.end_turn(outcome);
            continue;
        }
        let scenario = match Scenario::select(&prompt) {
            Ok(scenario) => scenario,
            Err(message) => {
                eprintln!("{message}");
                return 1;
            }
        };
        saved.add(&prompt);
        run.begin(prompt, args.max_turns.or(scenario.default_max_turns()));
        let outcome = run.announce().and_then(|()| scenario.play(run));
        let last = ends_process(&outcome);
        code = run.end_turn(outcome);
        if last {
            return code;
        }
    }
    match run.input_error() {
        Some(message) => {
            eprintln!("{message}");
            1
        }
        None => code,
    }
}

/// The conversation a run continues or starts.
enum Opened {
    Ready {
        id: String,
        /// Prompts of the resumed conversation (empty for a new one).
        history: Vec<String>,
        /// The id given to `--resume`.
        resumed: Option<String>,
    },
    /// `--resume` failed: only an error result is printed, under `id`.
    Refused { id: String, failure: Failure },
}

/// Resolves `--session-id`, `--resume` and `--fork-session` (claude-code.md §4).
fn open_conversation(args: &Args, store: &Store, cwd: &Path) -> Result<Opened, String> {
    if let Some(id) = &args.session_id {
        if uuid::Uuid::parse_str(id).is_err() {
            return Err("Error: Invalid session ID. Must be a valid UUID.".into());
        }
    }
    let Some(resume) = &args.resume else {
        let id = args.session_id.clone().unwrap_or_else(ids::uuid);
        if args.session_id.is_some() && store.exists(&id) {
            return Err(format!("Error: Session ID {id} is already in use."));
        }
        return Ok(Opened::Ready {
            id,
            history: Vec::new(),
            resumed: None,
        });
    };
    if args.session_id.is_some() && !args.fork_session {
        return Err(
            "Error: --session-id can only be used with --continue or --resume if \
                    --fork-session is also specified."
                .into(),
        );
    }
    let Some(resumed) = resume
        .clone()
        .filter(|id| uuid::Uuid::parse_str(id).is_ok())
    else {
        return Ok(Opened::Refused {
            id: ids::uuid(),
            failure: Failure::InvalidResume(
                "Error: --resume requires a valid session ID or session title when used with \
                 --print."
                    .into(),
            ),
        });
    };
    let Some(conversation) = store.load(&resumed, cwd) else {
        return Ok(Opened::Refused {
            id: resumed,
            failure: Failure::NoConversation,
        });
    };
    let id = if args.fork_session {
        args.session_id.clone().unwrap_or_else(ids::uuid)
    } else {
        resumed.clone()
    };
    Ok(Opened::Ready {
        id,
        history: conversation.prompts,
        resumed: Some(resumed),
    })
}

/// A failed `--resume`: only an error result on stdout, the error on stderr, exit 1.
fn refuse(out: &mut Output, session_id: String, failure: Failure) -> i32 {
    let stats = RunStats {
        session_id,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        tokens: Tokens::default(),
        spent: Default::default(),
        permission_denials: Vec::new(),
    };
    let result = Failed::new(stats, failure);
    let text = result.text();
    eprintln!("{text}");
    // Nothing more can be reported if stdout is gone.
    let _ = out.emit_result(&Event::FailedResult(result), &text);
    1
}

/// The prompt from stdin when none is on the command line.
fn read_prompt_from_stdin() -> Result<String, String> {
    let missing = "Error: Input must be provided either through stdin or as a prompt argument \
                   when using --print";
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(missing.into());
    }
    let mut prompt = String::new();
    stdin
        .read_to_string(&mut prompt)
        .map_err(|error| format!("fake-claude: cannot read stdin: {error}"))?;
    let prompt = prompt.trim_end_matches('\n').to_string();
    if prompt.trim().is_empty() {
        return Err(missing.into());
    }
    Ok(prompt)
}

/// The model id `init` reports for `--model` or `set_model` (aliases as resolved by 2.1.197).
pub fn resolve_model(model: Option<&str>) -> String {
    match model {
        None | Some("opus" | "default") => "claude-opus-4-8[1m]",
        Some("sonnet") => "claude-sonnet-5",
        Some("haiku") => "claude-haiku-4-5-20251001",
        Some(model) => model,
    }
    .to_string()
}
