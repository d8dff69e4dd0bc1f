//! Checks of the `fake-claude` binary against the real CLI behaviour it stands in for: the
//! command line, stream-json envelopes, sessions and resume, signals, and the MCP
//! permission-prompt step (with a small Python MCP server).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};

use hld_e2e::{wait_for, WAIT};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};

/// A stdio MCP server for the permission step. `MCP_MODE` picks the answer of
/// `request_permission`: `allow`, `modify` (allow with changed content), `deny`, `hang`
/// (never answer). Every message received is appended to `MCP_LOG` as a JSON line, and
/// `{"eof": true}` once stdin closes.
const MCP_SERVER: &str = r#"
import json, os, sys
mode = os.environ.get("MCP_MODE", "allow")
log = open(os.environ["MCP_LOG"], "a")
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    log.write(json.dumps(message) + "\n")
    log.flush()
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "approver", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
            {"name": "request_permission", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        request = message["params"]["arguments"]
        if mode == "hang":
            continue
        if mode == "allow":
            reply = {"behavior": "allow", "updatedInput": request["input"]}
        elif mode == "modify":
            reply = {"behavior": "allow",
                     "updatedInput": dict(request["input"], content="MODIFIED BY REVIEWER\n")}
        else:
            reply = {"behavior": "deny", "message": "Denied by reviewer: not here"}
        send({"jsonrpc": "2.0", "id": rid,
              "result": {"content": [{"type": "text", "text": json.dumps(reply)}]}})
log.write(json.dumps({"eof": True}) + "\n")
"#;

/// A working directory, conversation store and invocation log of one test.
pub(super) struct Sandbox {
    _root: tempfile::TempDir,
    pub(super) work: PathBuf,
    pub(super) home: PathBuf,
    pub(super) log: PathBuf,
}

impl Sandbox {
    pub(super) fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let work = root.path().join("work");
        std::fs::create_dir(&work).unwrap();
        Self {
            work: work.canonicalize().unwrap(),
            home: root.path().join("home"),
            log: root.path().join("log"),
            _root: root,
        }
    }

    /// `fake-claude -p --output-format stream-json --verbose <extra> -- <prompt>` in `work`.
    fn command(&self, extra: &[&str], prompt: &str) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fake-claude"));
        command
            .args(["-p", "--output-format", "stream-json", "--verbose"])
            .args(extra)
            .args(["--", prompt])
            .current_dir(&self.work)
            .env("FAKE_CLAUDE_HOME", &self.home)
            .env("FAKE_CLAUDE_LOG_DIR", &self.log)
            .env_remove("FAKE_CLAUDE_SCENARIO")
            .env_remove("FAKE_CLAUDE_STDERR")
            .stdin(Stdio::null());
        command
    }

    /// Writes the Python MCP server and a config file for it (server `approver`); returns
    /// the config's path relative to `work` and the server's message log.
    fn mcp_server(&self, mode: &str) -> (String, PathBuf) {
        std::fs::write(self.work.join("approver.py"), MCP_SERVER).unwrap();
        let log = self.work.join("mcp-log.jsonl");
        let config = json!({"mcpServers": {"approver": {
            "command": "python3",
            "args": ["approver.py"],
            "env": {"MCP_MODE": mode, "MCP_LOG": log},
        }}});
        std::fs::write(self.work.join("mcp.json"), config.to_string()).unwrap();
        ("mcp.json".into(), log)
    }
}

/// What a finished run printed.
#[derive(Debug)]
struct Outcome {
    code: Option<i32>,
    lines: Vec<Value>,
    stderr: String,
}

impl Outcome {
    fn of(command: &mut Command) -> Self {
        let output = command.output().unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        Self {
            code: output.status.code(),
            lines: stdout.lines().map(parse_line).collect(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn result(&self) -> &Value {
        let last = self.lines.last().expect("no output");
        assert_eq!(last["type"], "result", "last line is not a result: {last}");
        last
    }

    fn session_id(&self) -> &str {
        self.lines[0]["session_id"].as_str().unwrap()
    }
}

pub(super) fn parse_line(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// The text of an assistant line, if it is a text block.
pub(super) fn assistant_text(line: &Value) -> Option<&str> {
    (line["type"] == "assistant")
        .then(|| line["message"]["content"][0]["text"].as_str())
        .flatten()
}

/// The content block of a user line.
pub(super) fn user_block(line: &Value) -> Option<&Value> {
    (line["type"] == "user").then(|| &line["message"]["content"][0])
}

fn tool_use(lines: &[Value]) -> &Value {
    lines
        .iter()
        .map(|line| &line["message"]["content"][0])
        .find(|block| block["type"] == "tool_use")
        .expect("no tool_use")
}

fn tool_result(lines: &[Value]) -> (&Value, &Value) {
    lines
        .iter()
        .find_map(|line| {
            user_block(line)
                .filter(|block| block["type"] == "tool_result")
                .map(|block| (block, &line["tool_use_result"]))
        })
        .expect("no tool_result")
}

/// A running fake whose stdout lines arrive on a channel.
struct Live {
    child: Child,
    lines: Receiver<Value>,
}

impl Live {
    fn spawn(command: &mut Command) -> Self {
        let mut child = command.stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(parse_line(&line.unwrap())).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// Reads lines up to and including the first one matching `found`.
    fn read_until(&self, found: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let line = self.lines.recv_timeout(WAIT).expect("line expected");
            let done = found(&line);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    /// The remaining lines and the exit code.
    fn finish(mut self) -> (Vec<Value>, Option<i32>) {
        let rest = self.lines.iter().collect();
        (rest, self.child.wait().unwrap().code())
    }
}

#[test]
fn plain_run_prints_init_answer_and_result_and_records_the_invocation() {
    let sandbox = Sandbox::new();
    let run = Outcome::of(
        sandbox
            .command(&["--model", "sonnet"], "What is 2+2?")
            .env("HUMANLAYER_RUN_ID", "run-7"),
    );
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stderr, "");
    let init = &run.lines[0];
    assert_eq!(
        (&init["type"], &init["subtype"]),
        (&json!("system"), &json!("init"))
    );
    assert_eq!(init["cwd"], sandbox.work.display().to_string());
    assert_eq!(init["model"], "claude-sonnet-5");
    assert_eq!(init["mcp_servers"], json!([]));
    let id = run.session_id();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "session id {id}");
    assert!(run.lines.iter().all(|line| line["session_id"] == id));
    let answer = run.lines.iter().find_map(assistant_text).unwrap();
    assert_eq!(answer, "Hello! You asked: What is 2+2?");
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], answer);
    assert_eq!(result["num_turns"], 1);
    assert!(result["total_cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(result["permission_denials"], json!([]));

    let log: Value =
        serde_json::from_slice(&std::fs::read(sandbox.log.join(format!("{id}.json"))).unwrap())
            .unwrap();
    assert_eq!(log["prompt"], "What is 2+2?");
    assert_eq!(log["model"], "sonnet");
    assert_eq!(log["cwd"], sandbox.work.display().to_string());
    assert_eq!(log["env"]["HUMANLAYER_RUN_ID"], "run-7");
    assert_eq!(log["mcp_config"], Value::Null);
    assert_eq!(log["argv"][0], "-p");
    assert_eq!(
        log["argv"].as_array().unwrap().last().unwrap(),
        "What is 2+2?"
    );
}

#[test]
fn command_line_errors_match_the_real_cli() {
    let sandbox = Sandbox::new();
    let fake = || Command::new(env!("CARGO_BIN_EXE_fake-claude"));

    let missing_verbose = Outcome::of(
        fake()
            .args(["-p", "--output-format", "stream-json", "--", "hi"])
            .current_dir(&sandbox.work),
    );
    assert_eq!(missing_verbose.code, Some(1));
    assert!(missing_verbose.lines.is_empty());
    assert_eq!(
        missing_verbose.stderr,
        "Error: When using --print, --output-format=stream-json requires --verbose\n"
    );

    let unknown = Outcome::of(fake().args(["-p", "--bogus-flag", "--", "hi"]));
    assert_eq!(unknown.code, Some(1));
    assert!(unknown.lines.is_empty());
    assert_eq!(unknown.stderr, "error: unknown option '--bogus-flag'\n");

    let version = fake().arg("--version").output().unwrap();
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(version.stdout).unwrap(),
        "2.1.197 (Claude Code)\n"
    );
}

#[test]
fn resume_keeps_the_session_id_and_loads_the_history() {
    let sandbox = Sandbox::new();
    let first = Outcome::of(&mut sandbox.command(&[], "my name is Ada"));
    let id = first.session_id().to_string();

    let resumed = Outcome::of(&mut sandbox.command(&["--resume", &id], "what is my name?"));
    assert_eq!(resumed.code, Some(0));
    assert!(resumed
        .lines
        .iter()
        .all(|line| line["session_id"] == id.as_str()));
    let answer = resumed.result()["result"].as_str().unwrap();
    assert!(answer.starts_with("Continuing our conversation (turn 2). You said: what is my name?"));
    assert!(answer.contains("\"my name is Ada\""), "{answer}");

    let forked = Outcome::of(&mut sandbox.command(&["--resume", &id, "--fork-session"], "again"));
    assert_ne!(forked.session_id(), id);
    assert!(forked.result()["result"]
        .as_str()
        .unwrap()
        .contains("(turn 3)"));
}

#[test]
fn resume_of_an_unknown_session_prints_only_an_error_result() {
    let sandbox = Sandbox::new();
    let id = "0b3c5d1e-1111-4222-8333-944455556666";
    let run = Outcome::of(&mut sandbox.command(&["--resume", id], "hello?"));
    let message = format!("No conversation found with session ID: {id}");
    assert_eq!(run.code, Some(1));
    assert_eq!(run.lines.len(), 1);
    let result = run.result();
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["session_id"], id);
    assert_eq!(result["errors"], json!([message]));
    assert_eq!(run.stderr, format!("{message}\n"));
}

#[test]
fn error_scenario_reproduces_the_not_logged_in_transcript() {
    let sandbox = Sandbox::new();
    let run = Outcome::of(
        sandbox
            .command(&[], "hello")
            .env("FAKE_CLAUDE_SCENARIO", "error"),
    );
    assert_eq!(run.code, Some(1));
    let fixture = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/transcripts/03-failed-not-logged-in.jsonl"),
    )
    .unwrap();
    let expected: Vec<Value> = fixture.lines().map(parse_line).collect();
    assert_eq!(run.lines.len(), expected.len());
    let keys = |value: &Value| {
        value
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    for (line, expected) in run.lines.iter().zip(&expected) {
        assert_eq!(keys(line), keys(expected), "fields of {line}");
    }
    let assistant = &run.lines[1];
    assert_eq!(keys(&assistant["message"]), keys(&expected[1]["message"]));
    assert_eq!(assistant["message"]["model"], "<synthetic>");
    assert_eq!(assistant["error"], "authentication_failed");
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "Not logged in · Please run /login");
    assert_eq!(result["total_cost_usd"], expected[2]["total_cost_usd"]);
}

#[test]
fn sigint_while_streaming_ends_with_an_aborted_result_and_exit_0() {
    let sandbox = Sandbox::new();
    let live = Live::spawn(
        sandbox
            .command(&[], "take your time")
            .env("FAKE_CLAUDE_SCENARIO", "slow")
            .env("FAKE_CLAUDE_DELAY_MS", "100"),
    );
    let before = live.read_until(|line| assistant_text(line) == Some("chunk 2"));
    assert_eq!(before[0]["subtype"], "init");
    live.signal(Signal::SIGINT);
    let (rest, code) = live.finish();
    assert_eq!(code, Some(0));
    let chunks = rest.iter().filter_map(assistant_text).count();
    assert!(chunks < 5, "{chunks} more chunks after SIGINT");
    let marker = user_block(&rest[rest.len() - 2]).unwrap();
    assert_eq!(marker["text"], "[Request interrupted by user]");
    let result = rest.last().unwrap();
    assert_eq!(result["subtype"], "error_during_execution");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["terminal_reason"], "aborted_streaming");
}

#[test]
fn sigterm_exits_143_without_a_result() {
    let sandbox = Sandbox::new();
    let live = Live::spawn(
        sandbox
            .command(&[], "scenario:slow")
            .env("FAKE_CLAUDE_DELAY_MS", "100"),
    );
    live.read_until(|line| assistant_text(line) == Some("chunk 1"));
    live.signal(Signal::SIGTERM);
    let (rest, code) = live.finish();
    assert_eq!(code, Some(143));
    assert!(rest.iter().all(|line| line["type"] != "result"));
}

#[test]
fn permission_allow_runs_the_tool_with_the_updated_input() {
    let sandbox = Sandbox::new();
    let (config, mcp_log) = sandbox.mcp_server("modify");
    let run = Outcome::of(&mut sandbox.command(
        &[
            "--mcp-config",
            &config,
            "--permission-prompt-tool",
            "mcp__approver__request_permission",
        ],
        "scenario:tool create hello.txt",
    ));
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let init = &run.lines[0];
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "approver", "status": "connected"}])
    );
    assert!(init["tools"]
        .as_array()
        .unwrap()
        .contains(&json!("mcp__approver__request_permission")));

    let path = sandbox.work.join("hello.txt");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "MODIFIED BY REVIEWER\n"
    );
    let call = tool_use(&run.lines);
    assert_eq!(call["name"], "Write");
    assert_eq!(call["input"]["file_path"], path.display().to_string());
    let (block, structured) = tool_result(&run.lines);
    assert_eq!(block["tool_use_id"], call["id"]);
    assert_eq!(block.get("is_error"), None);
    assert_eq!(structured["content"], "MODIFIED BY REVIEWER\n");
    assert_eq!(run.result()["permission_denials"], json!([]));

    // The handshake and the call, as the real CLI sends them; then stdin was closed.
    let messages: Vec<Value> = std::fs::read_to_string(mcp_log)
        .unwrap()
        .lines()
        .map(parse_line)
        .collect();
    let methods: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    let initialize = &messages[0]["params"];
    assert_eq!(initialize["protocolVersion"], "2025-11-25");
    assert_eq!(
        initialize["capabilities"],
        json!({"roots": {}, "elicitation": {}})
    );
    assert_eq!(initialize["clientInfo"]["name"], "claude-code");
    let params = &messages[3]["params"];
    assert_eq!(params["name"], "request_permission");
    assert_eq!(
        params["arguments"],
        json!({"tool_name": "Write", "input": call["input"], "tool_use_id": call["id"]})
    );
    assert_eq!(messages.last().unwrap(), &json!({"eof": true}));
}

#[test]
fn permission_deny_gives_an_error_tool_result_and_a_denial() {
    let sandbox = Sandbox::new();
    let (config, _) = sandbox.mcp_server("deny");
    let run = Outcome::of(&mut sandbox.command(
        &[
            "--mcp-config",
            &config,
            "--permission-prompt-tool",
            "mcp__approver__request_permission",
        ],
        "scenario:tool",
    ));
    assert_eq!(run.code, Some(0));
    assert!(!sandbox.work.join("hello.txt").exists());
    let call = tool_use(&run.lines);
    let (block, structured) = tool_result(&run.lines);
    assert_eq!(block["is_error"], true);
    assert_eq!(block["content"], "Denied by reviewer: not here");
    assert_eq!(structured, "Error: Denied by reviewer: not here");
    let result = run.result();
    assert_eq!(result["is_error"], false);
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name": "Write", "tool_use_id": call["id"], "tool_input": call["input"]}])
    );
}

#[test]
fn without_a_permission_prompt_tool_the_write_is_denied_at_once() {
    let sandbox = Sandbox::new();
    let run = Outcome::of(&mut sandbox.command(&[], "scenario:tool"));
    let path = sandbox.work.join("hello.txt");
    let (block, _) = tool_result(&run.lines);
    assert_eq!(block["is_error"], true);
    assert_eq!(
        block["content"],
        format!(
            "Claude requested permissions to write to {}, but you haven't granted it yet.",
            path.display()
        )
    );
    assert_eq!(
        run.result()["permission_denials"].as_array().unwrap().len(),
        1
    );
    assert!(!path.exists());
}

#[test]
fn sigint_while_waiting_for_permission_aborts_the_tool_use() {
    let sandbox = Sandbox::new();
    let (config, mcp_log) = sandbox.mcp_server("hang");
    let live = Live::spawn(&mut sandbox.command(
        &[
            "--mcp-config",
            &config,
            "--permission-prompt-tool",
            "mcp__approver__request_permission",
        ],
        "scenario:tool",
    ));
    let before = live.read_until(|line| line["message"]["content"][0]["type"] == "tool_use");
    let call = tool_use(&before).clone();
    // Only interrupt once the permission request has reached the server.
    wait_for(WAIT, || {
        std::fs::read_to_string(&mcp_log)
            .unwrap_or_default()
            .contains("tools/call")
            .then_some(())
    })
    .expect("no tools/call");
    live.signal(Signal::SIGINT);
    let (rest, code) = live.finish();
    assert_eq!(code, Some(0));
    let (block, structured) = tool_result(&rest);
    assert_eq!(block["tool_use_id"], call["id"]);
    assert_eq!(block["is_error"], true);
    assert_eq!(structured, "User rejected tool use");
    let marker = user_block(&rest[rest.len() - 2]).unwrap();
    assert_eq!(marker["text"], "[Request interrupted by user for tool use]");
    let result = rest.last().unwrap();
    assert_eq!(result["terminal_reason"], "aborted_tools");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], call["id"]);
    let log = std::fs::read_to_string(&mcp_log).unwrap();
    assert!(
        log.trim_end().ends_with(r#"{"eof": true}"#),
        "server not shut down: {log}"
    );
}
