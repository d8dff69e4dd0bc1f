//! The scripted "model": what each scenario makes the fake print and do.
//!
//! Chosen by `FAKE_CLAUDE_SCENARIO`, else by the first `scenario:<name>` in the prompt, else
//! `plain`. Knobs: `FAKE_CLAUDE_COUNT`, `FAKE_CLAUDE_DELAY_MS`, `FAKE_CLAUDE_BIG_BYTES`,
//! `FAKE_CLAUDE_COMMAND`, and for usage limits `FAKE_CLAUDE_LIMIT_KIND` (a `rateLimitType`,
//! default `five_hour`), `FAKE_CLAUDE_RESET_MS` (how far ahead the window resets, default an
//! hour), `FAKE_CLAUDE_UTILIZATION_PCT` (default 93); `usage:IN,OUT,CW,CR[@MODEL]` markers in
//! a turn's message script what it reports having used (`run/usage.rs`).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::run::{Ending, Run, Stop};
use crate::tools;

/// A scripted conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// One text answer.
    Plain,
    /// Thinking, text, a `Write` of `hello.txt` through the permission step, final text.
    Tool,
    /// A `Bash` `ls`, or the command in `FAKE_CLAUDE_COMMAND` (allowed by `--allowedTools
    /// Bash`, else through the permission step).
    Bash,
    /// The offline "Not logged in" failure of transcript 03; exit 1.
    Error,
    /// `count` text lines `chunk <i>`, `delay` apart.
    Slow { count: u64, delay: Duration },
    /// A `Read` whose tool_result holds `bytes` bytes in one line.
    Big { bytes: usize },
    /// A non-JSON line and an unknown event type among normal lines.
    Malformed,
    /// One text line, then exit 2 without a result.
    Crash,
    /// `count` text lines as fast as possible (buffered stdout).
    Many { count: u64 },
    /// `count` text lines `stamp <n> <µs on CLOCK_MONOTONIC when written>`, on a schedule
    /// `delay` apart, `n` counting from the number after `scenario:stream` in the prompt
    /// (0 if none): a benchmark's streaming agent, whose lines tell when they left.
    Stream {
        count: u64,
        delay: Duration,
        first: u64,
    },
    /// The model asks the human: with `mcp__approvals__contact_human` when the approvals MCP
    /// server offers it, else with the CLI's own `AskUserQuestion` (over the control channel),
    /// asking `questions` at once (1, or 2 with `FAKE_CLAUDE_QUESTIONS=2`).
    Ask { questions: u32 },
    /// `ask`, but its text and tool_use lines follow only once the daemon lists the question.
    QuestionFirst,
    /// `Glob` calls until `--max-turns` (default 1 here) stops the run; exit 1.
    MaxTurns,
    /// `tool`, but the `Write`'s permission is asked before its tool_use line is printed,
    /// which follows only once the daemon lists the approval.
    AskedFirst,
    /// `count` (default 3) `api_retry` lines for an API answering 401, `delay` apart, then
    /// the CLI's "Invalid API key" failure; exit 1.
    Retry { count: u32, delay: Duration },
    /// An `Edit` of `greeting.txt` in the working directory, which the test writes first
    /// with the lines `Hello,` and `world!`: `world!` becomes `wide world!`.
    Edit,
    /// A `Write` of `long.txt` with `count` (default 40) lines `line <i>`.
    Long { count: u64 },
    /// A `Write` of the file named after `scenario:write` in the prompt, its content the
    /// prompt's lines after that one.
    Write,
    /// For plan mode: a `Write` of `hello.txt`, then the plan ([`PLAN`]) by `ExitPlanMode`,
    /// and once it is approved the `Write` again.
    Plan,
    /// The usage limit refuses the turn (`run/limit.rs`): window `kind` resets `reset` from
    /// now; exit 1.
    Limit { kind: &'static str, reset: Duration },
    /// One text answer, with window `kind` reported `percent` used, resetting `reset` from now.
    NearLimit {
        kind: &'static str,
        percent: u64,
        reset: Duration,
    },
}

/// The windows `FAKE_CLAUDE_LIMIT_KIND` may name.
const LIMIT_KINDS: &[&str] = &[
    "five_hour",
    "seven_day",
    "seven_day_opus",
    "seven_day_sonnet",
    "overage",
];

/// The plan of the `plan` scenario, markdown.
pub const PLAN: &str = "# Plan\n\n1. Create `hello.txt` with `Hello, world!`";

/// The scenario names, as accepted in `FAKE_CLAUDE_SCENARIO` and `scenario:<name>`.
const NAMES: &[&str] = &[
    "plain",
    "tool",
    "bash",
    "error",
    "slow",
    "big",
    "malformed",
    "crash",
    "many",
    "stream",
    "ask",
    "maxturns",
    "asked_first",
    "question_first",
    "retry",
    "edit",
    "long",
    "plan",
    "write",
    "limit",
    "near_limit",
];

impl Scenario {
    /// Picks the scenario for `prompt` (see the module docs); errors name unknown scenarios
    /// and bad knob values.
    pub fn select(prompt: &str) -> Result<Self, String> {
        let from_env = std::env::var("FAKE_CLAUDE_SCENARIO")
            .ok()
            .filter(|name| !name.is_empty());
        let from_prompt = || {
            let (_, rest) = prompt.split_once("scenario:")?;
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(rest.len());
            Some(rest[..end].to_string())
        };
        let mut scenario = match from_env.or_else(from_prompt) {
            Some(name) => Self::named(&name)?,
            None => Self::Plain,
        };
        crate::run::usage::scripted(prompt, "")?;
        if let Self::Stream { first, .. } = &mut scenario {
            *first = prompt
                .split_once("scenario:stream")
                .and_then(|(_, rest)| rest.split_whitespace().next()?.parse().ok())
                .unwrap_or(0);
        }
        Ok(scenario)
    }

    fn named(name: &str) -> Result<Self, String> {
        Ok(match name {
            "plain" => Self::Plain,
            "tool" => Self::Tool,
            "bash" => Self::Bash,
            "error" => Self::Error,
            "slow" => Self::Slow {
                count: knob("FAKE_CLAUDE_COUNT", 20)?,
                delay: Duration::from_millis(knob("FAKE_CLAUDE_DELAY_MS", 200)?),
            },
            "big" => Self::Big {
                bytes: knob("FAKE_CLAUDE_BIG_BYTES", 5_000_000)?,
            },
            "malformed" => Self::Malformed,
            "crash" => Self::Crash,
            "many" => Self::Many {
                count: knob("FAKE_CLAUDE_COUNT", 10_000)?,
            },
            "stream" => Self::Stream {
                count: knob("FAKE_CLAUDE_COUNT", 20)?,
                delay: Duration::from_millis(knob("FAKE_CLAUDE_DELAY_MS", 50)?),
                first: 0,
            },
            "ask" => Self::Ask {
                questions: knob("FAKE_CLAUDE_QUESTIONS", 1)?,
            },
            "maxturns" => Self::MaxTurns,
            "asked_first" => Self::AskedFirst,
            "question_first" => Self::QuestionFirst,
            "retry" => Self::Retry {
                count: knob("FAKE_CLAUDE_COUNT", 3)?,
                delay: Duration::from_millis(knob("FAKE_CLAUDE_DELAY_MS", 200)?),
            },
            "edit" => Self::Edit,
            "long" => Self::Long {
                count: knob("FAKE_CLAUDE_COUNT", 40)?,
            },
            "plan" => Self::Plan,
            "write" => Self::Write,
            "limit" => Self::Limit {
                kind: limit_kind()?,
                reset: Duration::from_millis(knob("FAKE_CLAUDE_RESET_MS", 3_600_000)?),
            },
            "near_limit" => Self::NearLimit {
                kind: limit_kind()?,
                percent: knob("FAKE_CLAUDE_UTILIZATION_PCT", 93)?,
                reset: Duration::from_millis(knob("FAKE_CLAUDE_RESET_MS", 3_600_000)?),
            },
            _ => {
                return Err(format!(
                    "fake-claude: unknown scenario '{name}' (known: {})",
                    NAMES.join(", ")
                ))
            }
        })
    }

    /// The name, for the invocation log.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "plain",
            Self::Tool => "tool",
            Self::Bash => "bash",
            Self::Error => "error",
            Self::Slow { .. } => "slow",
            Self::Big { .. } => "big",
            Self::Malformed => "malformed",
            Self::Crash => "crash",
            Self::Many { .. } => "many",
            Self::Stream { .. } => "stream",
            Self::Ask { .. } => "ask",
            Self::MaxTurns => "maxturns",
            Self::AskedFirst => "asked_first",
            Self::QuestionFirst => "question_first",
            Self::Retry { .. } => "retry",
            Self::Edit => "edit",
            Self::Long { .. } => "long",
            Self::Plan => "plan",
            Self::Write => "write",
            Self::Limit { .. } => "limit",
            Self::NearLimit { .. } => "near_limit",
        }
    }

    /// The turn limit when `--max-turns` is not given.
    pub fn default_max_turns(self) -> Option<u32> {
        (self == Self::MaxTurns).then_some(1)
    }

    /// Plays the scenario after `init`.
    pub fn play(self, run: &mut Run) -> Result<Ending, Stop> {
        match self {
            Self::Plain => {
                run.start_turn()?;
                let answer = run.greeting();
                run.say(&answer)?;
            }
            Self::Tool => write_hello(run, false)?,
            Self::AskedFirst => write_hello(run, true)?,
            Self::Bash => list_files(run)?,
            Self::Error => {
                return run.api_error("Not logged in · Please run /login", "authentication_failed")
            }
            Self::Retry { count, delay } => {
                for attempt in 1..=count {
                    run.api_retry(attempt, count, delay, 401)?;
                }
                return run.api_error(
                    "Invalid API key · Fix external API key",
                    "authentication_failed",
                );
            }
            Self::Slow { count, delay } => {
                run.start_turn()?;
                for i in 1..=count {
                    if i > 1 {
                        run.sleep(delay)?;
                    }
                    run.say(&format!("chunk {i}"))?;
                }
            }
            Self::Big { bytes } => {
                run.start_turn()?;
                run.say("Let me read that file.")?;
                let path = run.cwd().join("big.txt");
                let call = run.tool_use("Read", json!({"file_path": path}))?;
                run.tool_result(&call, tools::synthetic_read(&path, bytes))?;
                run.start_turn()?;
                run.say(&format!("The file big.txt has {bytes} bytes."))?;
            }
            Self::Malformed => {
                run.start_turn()?;
                run.emit_raw("{this is not json")?;
                run.mystery_event()?;
                let answer = run.greeting();
                run.say(&answer)?;
            }
            Self::Crash => {
                run.start_turn()?;
                run.say("Starting on it...")?;
                eprintln!("fake-claude: simulated crash");
                return Ok(Ending::Crash);
            }
            Self::Many { count } => {
                run.set_line_flush(false);
                run.start_turn()?;
                for i in 1..=count {
                    run.say(&format!("line {i}"))?;
                }
            }
            Self::Stream {
                count,
                delay,
                first,
            } => {
                run.start_turn()?;
                let start = Instant::now();
                for i in 0..count {
                    let at = start + delay * u32::try_from(i).unwrap_or(u32::MAX);
                    run.sleep(at.saturating_duration_since(Instant::now()))?;
                    run.say(&format!("stamp {} {}", first + i, monotonic_us()))?;
                }
            }
            Self::Ask { questions } => ask_human(run, false, questions)?,
            Self::QuestionFirst => ask_human(run, true, 1)?,
            Self::Edit => edit_greeting(run)?,
            Self::Long { count } => write_long(run, count)?,
            Self::Plan => plan_then_write(run)?,
            Self::Write => write_named(run)?,
            Self::Limit { kind, reset } => return run.limit_refusal(kind, unix_after(reset)),
            Self::NearLimit {
                kind,
                percent,
                reset,
            } => {
                run.start_turn()?;
                let answer = run.greeting();
                run.say(&answer)?;
                run.limit_warning(kind, percent as f64 / 100.0, unix_after(reset))?;
            }
            Self::MaxTurns => loop {
                run.start_turn()?;
                run.say("Let me look at the files first.")?;
                let call = run.tool_use("Glob", json!({"pattern": "*"}))?;
                run.use_tool(&call)?;
            },
        }
        Ok(Ending::Success)
    }
}

/// `FAKE_CLAUDE_LIMIT_KIND`, one of [`LIMIT_KINDS`] (default `five_hour`).
fn limit_kind() -> Result<&'static str, String> {
    let name = std::env::var("FAKE_CLAUDE_LIMIT_KIND").unwrap_or_else(|_| "five_hour".into());
    LIMIT_KINDS
        .iter()
        .find(|k| **k == name)
        .copied()
        .ok_or_else(|| format!("fake-claude: unknown FAKE_CLAUDE_LIMIT_KIND {name:?}"))
}

/// The Unix second `after` from now, rounded up: a reset never earlier than asked.
fn unix_after(after: Duration) -> i64 {
    let at = std::time::SystemTime::now() + after;
    let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis().div_ceil(1000)).unwrap_or(i64::MAX)
}

/// The time on CLOCK_MONOTONIC, which every process of the machine reads alike, in µs.
fn monotonic_us() -> u128 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map_or(0, |now| Duration::from(now).as_micros())
}

/// `tool`: transcript 02/04, with the file really written when allowed; `asked_first` asks
/// for permission before the tool_use line is printed.
fn write_hello(run: &mut Run, asked_first: bool) -> Result<(), Stop> {
    run.start_turn()?;
    run.thinking_tokens(31)?;
    run.think(
        "The user wants a new file hello.txt in the working directory with the text Hello, \
         world!. The Write tool does this directly.",
    )?;
    run.say("I'll create that file for you.")?;
    let path = run.cwd().join("hello.txt");
    let input = json!({"file_path": path, "content": "Hello, world!\n"});
    let report = if asked_first {
        run.tool_use_asked_first(None, "Write", input)?
    } else {
        let call = run.tool_use("Write", input)?;
        run.use_tool(&call)?
    };
    run.start_turn()?;
    if report.ok {
        run.say("Done - the file hello.txt now contains \"Hello, world!\".")
    } else {
        run.say(&format!("I couldn't create hello.txt: {}", report.text))
    }
}

/// `edit`: `world!` becomes `wide world!` in `greeting.txt`.
fn edit_greeting(run: &mut Run) -> Result<(), Stop> {
    run.start_turn()?;
    run.say("I'll widen the greeting.")?;
    let path = run.cwd().join("greeting.txt");
    let call = run.tool_use(
        "Edit",
        json!({"file_path": path, "old_string": "Hello,\nworld!", "new_string": "Hello,\nwide world!"}),
    )?;
    let report = run.use_tool(&call)?;
    run.start_turn()?;
    if report.ok {
        run.say("The greeting is wider now.")
    } else {
        run.say(&format!("I couldn't edit greeting.txt: {}", report.text))
    }
}

/// `long`: `long.txt` with `count` numbered lines.
fn write_long(run: &mut Run, count: u64) -> Result<(), Stop> {
    run.start_turn()?;
    run.say("I'll write the long file.")?;
    let path = run.cwd().join("long.txt");
    let content: String = (1..=count).map(|i| format!("line {i}\n")).collect();
    let call = run.tool_use("Write", json!({"file_path": path, "content": content}))?;
    let report = run.use_tool(&call)?;
    run.start_turn()?;
    if report.ok {
        run.say(&format!("long.txt has {count} lines."))
    } else {
        run.say(&format!("I couldn't write long.txt: {}", report.text))
    }
}

/// `write`: the file named after `scenario:write` gets the prompt's following lines.
fn write_named(run: &mut Run) -> Result<(), Stop> {
    let prompt = run.session.prompt.clone();
    let after = prompt.split_once("scenario:write").map_or("", |(_, r)| r);
    let (name, content) = after.split_once('\n').unwrap_or((after, ""));
    let name = name.trim();
    run.start_turn()?;
    run.say(&format!("I'll write {name}."))?;
    let path = run.cwd().join(name);
    let call = run.tool_use("Write", json!({"file_path": path, "content": content}))?;
    let report = run.use_tool(&call)?;
    run.start_turn()?;
    if report.ok {
        run.say(&format!("{name} is written."))
    } else {
        run.say(&format!("I couldn't write {name}: {}", report.text))
    }
}

/// `plan`: the `Write` of `hello.txt` (refused while planning), the plan, the `Write` again
/// once the plan is approved.
fn plan_then_write(run: &mut Run) -> Result<(), Stop> {
    run.start_turn()?;
    run.say("Let me try creating hello.txt.")?;
    let path = run.cwd().join("hello.txt");
    let input = json!({"file_path": path, "content": "Hello, world!\n"});
    let call = run.tool_use("Write", input.clone())?;
    run.use_tool(&call)?;
    run.start_turn()?;
    let call = run.tool_use("ExitPlanMode", json!({"plan": PLAN}))?;
    let plan = run.use_tool(&call)?;
    run.start_turn()?;
    if !plan.ok {
        return run.say(&format!("The plan was not approved: {}", plan.text));
    }
    let call = run.tool_use("Write", input)?;
    let report = run.use_tool(&call)?;
    run.start_turn()?;
    if report.ok {
        run.say("Done - hello.txt now contains \"Hello, world!\".")
    } else {
        run.say(&format!("I couldn't create hello.txt: {}", report.text))
    }
}

/// `bash`: `ls` (or `FAKE_CLAUDE_COMMAND`) in the working directory.
fn list_files(run: &mut Run) -> Result<(), Stop> {
    run.start_turn()?;
    run.say("Let me list the files in the working directory.")?;
    let command = std::env::var("FAKE_CLAUDE_COMMAND").unwrap_or_else(|_| "ls".to_owned());
    let call = run.tool_use(
        "Bash",
        json!({"command": command, "description": "List files in the working directory"}),
    )?;
    let report = run.use_tool(&call)?;
    run.start_turn()?;
    if report.ok {
        run.say(&format!("The directory contains:\n{}", report.text))
    } else {
        run.say(&format!("I couldn't list the files: {}", report.text))
    }
}

/// `ask`: `contact_human` answered by the `approvals` MCP server when it is there, else the
/// CLI's `AskUserQuestion` (`several` questions: one, or two), whose answers come in its
/// input; `first` holds the lines back
/// until the daemon lists the question.
fn ask_human(run: &mut Run, first: bool, several: u32) -> Result<(), Stop> {
    run.start_turn()?;
    let said = "I need to ask a human about this.";
    let question = "What colour should the button be?";
    let (tool, input) = if run.offers("approvals", "contact_human") {
        (
            "mcp__approvals__contact_human",
            json!({"message": question}),
        )
    } else {
        let ask = |question: &str, header: &str, options: [(&str, &str); 2]| {
            let options =
                options.map(|(label, meaning)| json!({"label": label, "description": meaning}));
            json!({"question": question, "header": header, "options": options,
                "multiSelect": false})
        };
        let mut questions = vec![ask(
            question,
            "Colour",
            [("Blue", "like the sky"), ("Red", "like a cherry")],
        )];
        if several > 1 {
            let sizes = [("Small", "fits a phone"), ("Large", "fills the screen")];
            questions.push(ask("What size should it be?", "Size", sizes));
        }
        ("AskUserQuestion", json!({ "questions": questions }))
    };
    let report = if first {
        run.tool_use_asked_first(Some(said), tool, input)?
    } else {
        run.say(said)?;
        let call = run.tool_use(tool, input)?;
        run.use_tool(&call)?
    };
    run.start_turn()?;
    if !report.ok {
        return run.say(&format!("I couldn't reach a human: {}", report.text));
    }
    let answers = crate::tools::answers_in(&report.text);
    let answer = answers.unwrap_or_else(|| report.text.clone());
    run.say(&format!("The human answered: {answer}"))
}

/// A numeric knob from the environment, `default` when unset.
fn knob<T: std::str::FromStr>(name: &str, default: T) -> Result<T, String> {
    match std::env::var(name) {
        Ok(value) => value
            .trim()
            .parse()
            .map_err(|_| format!("fake-claude: {name}={value:?} is not a number")),
        Err(_) => Ok(default),
    }
}
