//! Command-line parsing with the real CLI's (commander.js) conventions and error texts.
//!
//! Variadic options (`--mcp-config`, `--allowedTools`, ...) swallow every following argument
//! that does not start with `-`, exactly like the real CLI, so a prompt must follow `--`.

use std::fmt;

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    /// `-v` / `--version`.
    Version,
    /// Anything else: a run.
    Run(Box<Args>),
}

/// `--output-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    StreamJson,
}

/// `--input-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InputFormat {
    #[default]
    Text,
    StreamJson,
}

/// The parsed flags of one run.
#[derive(Debug, Default)]
pub struct Args {
    /// The arguments as given (without the program name), for the invocation log.
    pub argv: Vec<String>,
    pub print: bool,
    pub output_format: OutputFormat,
    pub input_format: InputFormat,
    pub verbose: bool,
    pub model: Option<String>,
    pub mcp_configs: Vec<String>,
    pub permission_prompt_tool: Option<String>,
    pub permission_mode: Option<String>,
    pub skip_permissions: bool,
    pub max_turns: Option<u32>,
    pub system_prompt: Option<String>,
    pub append_system_prompt: Option<String>,
    pub allowed_tools: Vec<String>,
    pub disallowed_tools: Vec<String>,
    /// `--resume` given; the inner value is `None` when no id followed it.
    pub resume: Option<Option<String>>,
    pub session_id: Option<String>,
    pub fork_session: bool,
    pub no_session_persistence: bool,
    pub prompt: Option<String>,
}

/// A command-line error, printed on stderr as is (exit 1).
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How an option takes its value.
#[derive(Clone, Copy)]
enum Arity {
    Flag,
    Required,
    Optional,
    Variadic,
}

/// The options the fake understands: (spellings, arity, help-style usage for error texts).
///
/// Options the fake accepts but ignores: `--strict-mcp-config`, `--add-dir`,
/// `--include-partial-messages`, `--setting-sources`, `--settings`.
const OPTIONS: &[(&[&str], Arity, &str)] = &[
    (&["-p", "--print"], Arity::Flag, "--print"),
    (
        &["--output-format"],
        Arity::Required,
        "--output-format <format>",
    ),
    (
        &["--input-format"],
        Arity::Required,
        "--input-format <format>",
    ),
    (&["--verbose"], Arity::Flag, "--verbose"),
    (&["--model"], Arity::Required, "--model <model>"),
    (
        &["--mcp-config"],
        Arity::Variadic,
        "--mcp-config <configs...>",
    ),
    (&["--strict-mcp-config"], Arity::Flag, "--strict-mcp-config"),
    (
        &["--permission-prompt-tool"],
        Arity::Required,
        "--permission-prompt-tool <tool>",
    ),
    (
        &["--permission-mode"],
        Arity::Required,
        "--permission-mode <mode>",
    ),
    (
        &["--dangerously-skip-permissions"],
        Arity::Flag,
        "--dangerously-skip-permissions",
    ),
    (&["--max-turns"], Arity::Required, "--max-turns <turns>"),
    (
        &["--system-prompt"],
        Arity::Required,
        "--system-prompt <prompt>",
    ),
    (
        &["--append-system-prompt"],
        Arity::Required,
        "--append-system-prompt <prompt>",
    ),
    (
        &["--allowedTools", "--allowed-tools"],
        Arity::Variadic,
        "--allowedTools, --allowed-tools <tools...>",
    ),
    (
        &["--disallowedTools", "--disallowed-tools"],
        Arity::Variadic,
        "--disallowedTools, --disallowed-tools <tools...>",
    ),
    (
        &["--add-dir"],
        Arity::Variadic,
        "--add-dir <directories...>",
    ),
    (
        &["--include-partial-messages"],
        Arity::Flag,
        "--include-partial-messages",
    ),
    (
        &["--settings"],
        Arity::Required,
        "--settings <file-or-json>",
    ),
    (
        &["--setting-sources"],
        Arity::Required,
        "--setting-sources <sources>",
    ),
    (&["-r", "--resume"], Arity::Optional, "-r, --resume [value]"),
    (&["--session-id"], Arity::Required, "--session-id <uuid>"),
    (&["--fork-session"], Arity::Flag, "--fork-session"),
    (
        &["--no-session-persistence"],
        Arity::Flag,
        "--no-session-persistence",
    ),
    (&["-v", "--version"], Arity::Flag, "-v, --version"),
];

/// The choices of `--permission-mode` (also the modes `set_permission_mode` switches to).
pub const PERMISSION_MODES: &[&str] = &[
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "default",
    "dontAsk",
    "plan",
];

/// Parses the arguments after the program name.
pub fn parse(argv: &[String]) -> Result<Command, UsageError> {
    let mut args = Args {
        argv: argv.to_vec(),
        ..Args::default()
    };
    let mut positionals = Vec::new();
    let mut version = false;
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if arg == "--" {
            positionals.extend(argv[i..].iter().cloned());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            positionals.push(arg.clone());
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if arg.starts_with("--") => (name, Some(value.to_string())),
            _ => (arg.as_str(), None),
        };
        let Some(&(spellings, arity, usage)) =
            OPTIONS.iter().find(|(names, _, _)| names.contains(&name))
        else {
            return Err(UsageError(format!("error: unknown option '{arg}'")));
        };
        let values = take_values(arity, inline, argv, &mut i, usage)?;
        apply(&mut args, spellings[spellings.len() - 1], values, usage)?;
        version |= spellings.contains(&"--version");
    }
    if version {
        return Ok(Command::Version);
    }
    match positionals.len() {
        0 => {}
        1 => args.prompt = positionals.pop(),
        n => {
            return Err(UsageError(format!(
                "error: too many arguments. Expected 1 argument but got {n}."
            )))
        }
    }
    Ok(Command::Run(Box::new(args)))
}

/// Collects the value(s) of one option occurrence, advancing `i` past them.
fn take_values(
    arity: Arity,
    inline: Option<String>,
    argv: &[String],
    i: &mut usize,
    usage: &str,
) -> Result<Vec<String>, UsageError> {
    let is_value = |s: &String| !s.starts_with('-') || s == "-";
    let missing = || UsageError(format!("error: option '{usage}' argument missing"));
    Ok(match (arity, inline) {
        (Arity::Flag, None) => Vec::new(),
        (Arity::Flag, Some(_)) => {
            return Err(UsageError(format!(
                "error: option '{usage}' does not take an argument"
            )))
        }
        (_, Some(value)) => vec![value],
        (Arity::Required, None) => {
            let value = argv.get(*i).ok_or_else(missing)?;
            *i += 1;
            vec![value.clone()]
        }
        (Arity::Optional, None) => match argv.get(*i).filter(|s| is_value(s)) {
            Some(value) => {
                *i += 1;
                vec![value.clone()]
            }
            None => Vec::new(),
        },
        (Arity::Variadic, None) => {
            let start = *i;
            while argv.get(*i).is_some_and(is_value) {
                *i += 1;
            }
            if *i == start {
                return Err(missing());
            }
            argv[start..*i].to_vec()
        }
    })
}

/// Stores the values of one option (named by its long spelling) in `args`.
fn apply(
    args: &mut Args,
    long: &str,
    mut values: Vec<String>,
    usage: &str,
) -> Result<(), UsageError> {
    let single = |values: &mut Vec<String>| values.pop();
    match long {
        "--print" => args.print = true,
        "--verbose" => args.verbose = true,
        "--fork-session" => args.fork_session = true,
        "--no-session-persistence" => args.no_session_persistence = true,
        "--dangerously-skip-permissions" => args.skip_permissions = true,
        "--output-format" => {
            let value = single(&mut values).unwrap_or_default();
            args.output_format = match value.as_str() {
                "text" => OutputFormat::Text,
                "json" => OutputFormat::Json,
                "stream-json" => OutputFormat::StreamJson,
                _ => {
                    return Err(UsageError(format!(
                        "error: option '{usage}' argument '{value}' is invalid. \
                         Allowed choices are text, json, stream-json."
                    )))
                }
            };
        }
        "--input-format" => {
            let value = single(&mut values).unwrap_or_default();
            args.input_format = match value.as_str() {
                "text" => InputFormat::Text,
                "stream-json" => InputFormat::StreamJson,
                _ => {
                    return Err(UsageError(format!(
                        "error: option '{usage}' argument '{value}' is invalid. \
                         Allowed choices are text, stream-json."
                    )))
                }
            };
        }
        "--max-turns" => {
            let value = single(&mut values).unwrap_or_default();
            let turns = value.parse().map_err(|_| {
                UsageError(format!(
                    "error: option '{usage}' argument '{value}' is invalid."
                ))
            })?;
            args.max_turns = Some(turns);
        }
        "--model" => args.model = single(&mut values),
        "--permission-prompt-tool" => args.permission_prompt_tool = single(&mut values),
        "--permission-mode" => {
            let value = single(&mut values).unwrap_or_default();
            if !PERMISSION_MODES.contains(&value.as_str()) {
                return Err(UsageError(format!(
                    "error: option '{usage}' argument '{value}' is invalid. \
                     Allowed choices are {}.",
                    PERMISSION_MODES.join(", ")
                )));
            }
            args.permission_mode = Some(value);
        }
        "--system-prompt" => args.system_prompt = single(&mut values),
        "--append-system-prompt" => args.append_system_prompt = single(&mut values),
        "--session-id" => args.session_id = single(&mut values),
        "--resume" => args.resume = Some(single(&mut values)),
        "--mcp-config" => args.mcp_configs.extend(values),
        "--allowed-tools" => args.allowed_tools.extend(values),
        "--disallowed-tools" => args.disallowed_tools.extend(values),
        // Accepted for compatibility, without effect on the fake.
        _ => {}
    }
    Ok(())
}
