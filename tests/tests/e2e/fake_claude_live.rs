//! `fake-claude` with streaming input (`--input-format stream-json`), driven directly: user
//! messages and control requests written to its stdin, its stdout read line by line, as the
//! real CLI 2.1.197 behaves (claude-code.md §3.3, §3.4): a turn per message, each with its
//! own `init` and `result`, messages sent during a turn answered after it, interrupts,
//! `can_use_tool` permission requests, control requests, and resume.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};

use hld_e2e::WAIT;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

use super::fake_claude::{assistant_text, parse_line, user_block, Sandbox};

/// A fake-claude reading stream-json input.
struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
}

impl Agent {
    /// `fake-claude --input-format stream-json --output-format stream-json --verbose --print
    /// <extra>` in the sandbox, with `env` set.
    fn start(sandbox: &Sandbox, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fake-claude"))
            .args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ])
            .args(["--verbose", "--print"])
            .args(extra)
            .current_dir(&sandbox.work)
            .env("FAKE_CLAUDE_HOME", &sandbox.home)
            .env("FAKE_CLAUDE_LOG_DIR", &sandbox.log)
            .env_remove("FAKE_CLAUDE_SCENARIO")
            .env_remove("FAKE_CLAUDE_STDERR")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(parse_line(&line.unwrap())).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines,
        }
    }

    fn send(&mut self, line: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// A user message, as the Agent SDK writes it.
    fn say(&mut self, text: &str) {
        self.send(
            &json!({"type": "user", "message": {"role": "user", "content": text},
            "parent_tool_use_id": null, "session_id": ""}),
        );
    }

    fn control(&mut self, request_id: &str, request: Value) {
        self.send(&json!({"type": "control_request", "request_id": request_id,
            "request": request}));
    }

    /// Answers the `can_use_tool` request `asked` with `response`.
    fn answer(&mut self, asked: &Value, response: Value) {
        self.send(
            &json!({"type": "control_response", "response": {"subtype": "success",
            "request_id": asked["request_id"], "response": response}}),
        );
    }

    /// Reads lines up to and including the first one matching `found`.
    fn read_until(&self, found: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no line after {seen:#?}"));
            let done = found(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    /// The lines of one turn, up to its `result`.
    fn turn(&self) -> Vec<Value> {
        self.read_until(|line| line["type"] == "result")
    }

    /// Reads up to the `can_use_tool` request; returns it.
    fn asked(&self) -> Value {
        let lines = self.read_until(|line| line["type"] == "control_request");
        lines.last().unwrap().clone()
    }

    /// Closes stdin; the remaining lines, the exit code and stderr.
    fn close(mut self) -> (Vec<Value>, Option<i32>, String) {
        self.stdin = None;
        let rest = self.lines.iter().collect();
        let code = self.child.wait().unwrap().code();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (rest, code, stderr)
    }
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["type"] == kind).collect()
}

fn init(lines: &[Value]) -> &Value {
    let first = &lines[0];
    assert_eq!(
        (&first["type"], &first["subtype"]),
        (&json!("system"), &json!("init")),
        "a turn starts with init: {lines:#?}"
    );
    first
}

fn answer_text(lines: &[Value]) -> String {
    lines
        .iter()
        .filter_map(assistant_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// What fake-claude recorded about the process of `session_id`.
fn record(sandbox: &Sandbox, session_id: &str) -> Value {
    let path = sandbox.log.join(format!("{session_id}.json"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn two_turns_in_one_process_each_with_init_and_result() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &[], &[]);
    agent.say("my name is Ada");
    let first = agent.turn();
    let id = init(&first)["session_id"].as_str().unwrap().to_string();
    assert_eq!(answer_text(&first), "Hello! You asked: my name is Ada");
    agent.say("what is my name?");
    let second = agent.turn();
    assert_eq!(init(&second)["session_id"], id.as_str());
    assert!(
        answer_text(&second).contains("\"my name is Ada\""),
        "the second turn knows the first: {second:#?}"
    );
    let (rest, code, stderr) = agent.close();
    assert_eq!((rest.len(), code, stderr.as_str()), (0, Some(0), ""));

    // Each result reports its own turn (usage, num_turns), and the cost since the process
    // started, as the real CLI does.
    let (one, two) = (first.last().unwrap(), second.last().unwrap());
    for result in [one, two] {
        assert_eq!(
            (&result["subtype"], &result["num_turns"]),
            (&json!("success"), &json!(1))
        );
        assert_eq!(result["session_id"], id.as_str());
    }
    assert_eq!(two["usage"]["cache_creation_input_tokens"], 412);
    let cost = |result: &Value| result["total_cost_usd"].as_f64().unwrap();
    let model = init(&second)["model"].as_str().unwrap();
    let spent = |result: &Value| result["modelUsage"][model]["costUSD"].as_f64().unwrap();
    assert!(cost(two) > cost(one), "{one}\n{two}");
    assert_eq!(spent(two), cost(two));

    // The record lists what reached stdin, in order, stamped when read.
    let log = record(&sandbox, &id);
    assert_eq!(log["prompt"], "my name is Ada");
    let stdin = log["stdin"].as_array().unwrap();
    let texts: Vec<&Value> = stdin
        .iter()
        .map(|line| &line["line"]["message"]["content"])
        .collect();
    assert_eq!(
        texts,
        [&json!("my name is Ada"), &json!("what is my name?")]
    );
    let stamp = |i: usize, clock: &str| stdin[i][clock].as_i64().unwrap();
    assert!(
        stamp(0, "monotonic_ns") < stamp(1, "monotonic_ns"),
        "{log:#}"
    );
    assert!(stamp(0, "unix_ns") > 1_700_000_000_000_000_000, "{log:#}");
}

#[test]
fn a_message_sent_during_a_turn_is_answered_after_it() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &["--permission-prompt-tool", "stdio"], &[]);
    agent.say("scenario:tool write it");
    // The turn waits for the permission answer: the next message arrives during the turn.
    let asked = agent.asked();
    agent.say("and then?");
    agent.answer(
        &asked,
        json!({"behavior": "allow", "updatedInput": asked["request"]["input"]}),
    );
    let first = agent.turn();
    assert!(
        answer_text(&first).contains("the file hello.txt now contains"),
        "{first:#?}"
    );
    assert_eq!(first.last().unwrap()["num_turns"], 2);
    let second = agent.turn();
    init(&second);
    assert!(
        answer_text(&second).contains("You said: and then?"),
        "{second:#?}"
    );
    let (_, code, _) = agent.close();
    assert_eq!(code, Some(0));
}

#[test]
fn can_use_tool_allow_runs_the_tool_with_the_updated_input() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &["--permission-prompt-tool", "stdio"], &[]);
    agent.say("scenario:tool");
    let asked = agent.asked();
    let path = sandbox.work.join("hello.txt");
    let input = json!({"file_path": path, "content": "Hello, world!\n"});
    assert_eq!(
        asked["request"],
        json!({"subtype": "can_use_tool", "tool_name": "Write", "display_name": "Write",
            "input": input, "description": "hello.txt",
            "permission_suggestions": [{"type": "setMode", "mode": "acceptEdits",
                "destination": "session"}],
            "tool_use_id": asked["request"]["tool_use_id"]})
    );
    assert!(asked["request_id"].is_string(), "{asked}");
    assert!(!path.exists(), "the Write waits for the answer");
    let reviewed = json!({"file_path": path, "content": "MODIFIED BY REVIEWER\n"});
    agent.answer(
        &asked,
        json!({"behavior": "allow", "updatedInput": reviewed}),
    );
    let lines = agent.turn();
    let result = user_block(&lines[0]).expect("the tool_result follows the answer");
    assert_eq!(result["tool_use_id"], asked["request"]["tool_use_id"]);
    assert_eq!(
        lines[0]["tool_use_result"]["content"],
        "MODIFIED BY REVIEWER\n"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "MODIFIED BY REVIEWER\n"
    );
    assert_eq!(lines.last().unwrap()["permission_denials"], json!([]));
    agent.close();
}

#[test]
fn can_use_tool_deny_gives_an_error_tool_result_and_a_denial() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &["--permission-prompt-tool", "stdio"], &[]);
    agent.say("scenario:bash");
    let asked = agent.asked();
    assert_eq!(asked["request"]["tool_name"], "Bash");
    assert_eq!(
        asked["request"]["permission_suggestions"][0],
        json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}],
            "behavior": "allow", "destination": "localSettings"})
    );
    agent.answer(
        &asked,
        json!({"behavior": "deny", "message": "Not in this repo"}),
    );
    let lines = agent.turn();
    assert_eq!(
        user_block(&lines[0]).unwrap(),
        &json!({"type": "tool_result", "content": "Not in this repo", "is_error": true,
            "tool_use_id": asked["request"]["tool_use_id"]})
    );
    assert_eq!(lines[0]["tool_use_result"], "Error: Not in this repo");
    let result = lines.last().unwrap();
    assert_eq!(result["is_error"], false);
    assert_eq!(
        result["permission_denials"][0]["tool_use_id"],
        asked["request"]["tool_use_id"]
    );
    let (_, code, _) = agent.close();
    assert_eq!(code, Some(0));
}

#[test]
fn interrupt_cancels_the_permission_request_and_the_process_reads_on() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &["--permission-prompt-tool", "stdio"], &[]);
    agent.say("scenario:tool");
    let asked = agent.asked();
    agent.control("req_int_1", json!({"subtype": "interrupt"}));
    let lines = agent.turn();
    let kinds: Vec<&Value> = lines.iter().map(|line| &line["type"]).collect();
    assert_eq!(
        kinds,
        [
            "control_cancel_request",
            "control_response",
            "user",
            "user",
            "result"
        ]
    );
    assert_eq!(lines[0]["request_id"], asked["request_id"]);
    assert_eq!(
        lines[1]["response"],
        json!({"subtype": "success", "request_id": "req_int_1"})
    );
    assert_eq!(user_block(&lines[2]).unwrap()["is_error"], true);
    assert_eq!(lines[2]["tool_use_result"], "User rejected tool use");
    assert_eq!(
        user_block(&lines[3]).unwrap()["text"],
        "[Request interrupted by user for tool use]"
    );
    let result = &lines[4];
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert_eq!(result["permission_denials"].as_array().unwrap().len(), 1);
    assert!(!sandbox.work.join("hello.txt").exists());

    // The process stays: the next message gets a turn, and it ends the process with 0.
    agent.say("still there?");
    let next = agent.turn();
    assert_eq!(next.last().unwrap()["subtype"], "success");
    let (_, code, _) = agent.close();
    assert_eq!(code, Some(0));
}

#[test]
fn interrupt_while_streaming_ends_the_turn_and_exit_1_follows_at_eof() {
    let sandbox = Sandbox::new();
    // Chunks a minute apart: only the interrupt can end this turn within the test.
    let env = [
        ("FAKE_CLAUDE_DELAY_MS", "60000"),
        ("FAKE_CLAUDE_COUNT", "3"),
    ];
    let mut agent = Agent::start(&sandbox, &[], &env);
    agent.say("scenario:slow");
    agent.read_until(|line| assistant_text(line) == Some("chunk 1"));
    agent.control("int", json!({"subtype": "interrupt"}));
    let lines = agent.turn();
    assert_eq!(lines[0]["type"], "control_response");
    assert_eq!(
        user_block(&lines[1]).unwrap()["text"],
        "[Request interrupted by user]"
    );
    let result = &lines[2];
    assert_eq!(
        (&result["subtype"], &result["terminal_reason"]),
        (
            &json!("error_during_execution"),
            &json!("aborted_streaming")
        )
    );
    // As in the real CLI: the aborted response counts as a turn but costs nothing.
    assert_eq!(result["num_turns"], 2);
    assert_eq!(result["usage"]["output_tokens"], 0);
    assert_eq!(
        (&result["total_cost_usd"], &result["modelUsage"]),
        (&json!(0), &json!({}))
    );
    // An interrupt between turns just succeeds.
    agent.control("idle", json!({"subtype": "interrupt"}));
    let idle = agent.read_until(|line| line["type"] == "control_response");
    assert_eq!(
        idle[0]["response"],
        json!({"subtype": "success", "request_id": "idle"})
    );
    let (rest, code, _) = agent.close();
    assert_eq!((rest.len(), code), (0, Some(1)));
}

#[test]
fn control_requests_are_answered_and_change_the_next_turn() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &[], &[("ANTHROPIC_API_KEY", "k")]);
    agent.control("i", json!({"subtype": "initialize"}));
    let initialized = &agent.read_until(|line| line["type"] == "control_response")[0];
    let response = &initialized["response"];
    assert_eq!(
        (&response["subtype"], &response["request_id"]),
        (&json!("success"), &json!("i"))
    );
    let commands: Vec<&str> = response["response"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| command["name"].as_str().unwrap())
        .collect();
    assert!(commands.contains(&"compact") && commands.contains(&"review"));
    assert_eq!(
        response["response"]["account"]["apiKeySource"],
        "ANTHROPIC_API_KEY"
    );

    agent.control(
        "p",
        json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}),
    );
    let mode = agent.read_until(|line| line["subtype"] == "status");
    assert_eq!(
        mode[0]["response"],
        json!({"subtype": "success", "request_id": "p", "response": {"mode": "acceptEdits"}})
    );
    assert_eq!(mode[1]["permissionMode"], "acceptEdits");
    agent.control("m", json!({"subtype": "set_model", "model": "sonnet"}));
    let model = agent.read_until(|line| line["type"] == "control_response");
    assert_eq!(model[0]["isReplay"], true);
    assert_eq!(
        model[0]["message"]["content"],
        "<local-command-stdout>Set model to sonnet (claude-sonnet-5)</local-command-stdout>"
    );
    agent.control("x", json!({"subtype": "bogus"}));
    let unknown = &agent.read_until(|line| line["type"] == "control_response")[0];
    assert_eq!(
        unknown["response"],
        json!({"subtype": "error", "request_id": "x",
            "error": "Unsupported control request subtype: bogus"})
    );

    // acceptEdits: the Write needs no permission now; init shows the mode and the model.
    agent.say("scenario:tool");
    let lines = agent.turn();
    let first = init(&lines);
    assert_eq!(
        (&first["permissionMode"], &first["model"]),
        (&json!("acceptEdits"), &json!("claude-sonnet-5"))
    );
    assert!(of_type(&lines, "control_request").is_empty());
    assert!(sandbox.work.join("hello.txt").exists());
    agent.close();
}

#[test]
fn resume_keeps_the_session_id_and_the_history_of_every_turn() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &[], &[]);
    agent.say("first");
    let id = init(&agent.turn())["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    agent.say("second");
    agent.turn();
    agent.close();

    let mut resumed = Agent::start(&sandbox, &["--resume", &id], &[]);
    resumed.send(&json!({"type": "user", "message": {"role": "user",
        "content": [{"type": "text", "text": "third"}]}}));
    let lines = resumed.turn();
    assert_eq!(init(&lines)["session_id"], id.as_str());
    assert!(lines.iter().all(|line| line["session_id"] == id.as_str()));
    assert!(
        answer_text(&lines).contains("(turn 3). You said: third")
            && answer_text(&lines).contains("\"first\", \"second\""),
        "{lines:#?}"
    );
    resumed.close();
}

#[test]
fn a_line_that_is_not_json_ends_the_process_with_exit_1() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &[], &[]);
    let stdin = agent.stdin.as_mut().unwrap();
    writeln!(stdin, "{{not json").unwrap();
    let (lines, code, stderr) = agent.close();
    assert_eq!((lines.len(), code), (0, Some(1)));
    assert!(
        stderr.starts_with("Error parsing streaming input line: {not json: "),
        "{stderr}"
    );
}

#[test]
fn closing_stdin_during_a_permission_request_denies_the_call() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &["--permission-prompt-tool", "stdio"], &[]);
    agent.say("scenario:tool");
    agent.asked();
    let (lines, code, _) = agent.close();
    let failed = "Tool permission request failed: Error: Tool permission stream closed before \
                  response received";
    assert_eq!(user_block(&lines[0]).unwrap()["content"], failed);
    let result = lines.last().unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"].as_array().unwrap().len(), 1);
    assert_eq!(code, Some(0));
    assert!(!sandbox.work.join("hello.txt").exists());
}

#[test]
fn signals_between_turns_end_the_process_as_in_the_real_cli() {
    let sandbox = Sandbox::new();
    for (signal, expected) in [(Signal::SIGTERM, 143), (Signal::SIGINT, 0)] {
        let mut agent = Agent::start(&sandbox, &[], &[]);
        agent.say("hello");
        agent.turn();
        kill(Pid::from_raw(agent.child.id() as i32), signal).unwrap();
        // stdin stays open: the signal alone ends the process, without output.
        let code = agent.child.wait().unwrap().code();
        let rest: Vec<Value> = agent.lines.iter().collect();
        assert_eq!((code, rest.len()), (Some(expected), 0), "{signal}");
    }
}

#[test]
fn a_control_response_after_a_buffered_turn_goes_out_at_once() {
    let sandbox = Sandbox::new();
    let mut agent = Agent::start(&sandbox, &[], &[("FAKE_CLAUDE_COUNT", "3")]);
    // `many` buffers its lines; what follows the turn must not wait in the buffer.
    agent.say("scenario:many");
    agent.turn();
    agent.control("i", json!({"subtype": "initialize"}));
    let answered = agent.read_until(|line| line["type"] == "control_response");
    assert_eq!(answered[0]["response"]["request_id"], "i");
    agent.close();
}
