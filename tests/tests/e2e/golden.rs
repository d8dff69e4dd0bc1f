//! Golden files of the wire shapes that the anchor's clients decode (hld-anchor.md §2,
//! §4.6–4.7, §5 and §11; peers.md §1): one test per file in `tests/golden/`. Each test sends
//! the frame a client sends, normalises what changes from run to run in the reply, and
//! compares it with its file, so that a change of the wire shows as a diff; then the strict
//! mirror of the client ([`hld_e2e::anchor`]) decodes both the live reply and the file. The
//! last test checks that the mirrors do reject what their clients reject.
//!
//! `UPDATE_GOLDEN=1 cargo test -p hld-e2e golden` rewrites the files from the live daemon
//! (review the diff before committing it).
//!
//! Normalised: every UUID (alone or inside a string, such as `local-<uuid>`) becomes
//! `00000000-0000-4000-8000-<n>` and every Claude tool use id `toolu_<n>`, numbered in order
//! of appearance so that equal ids stay equal; every RFC 3339 time keeps its format with the
//! instant `2000-01-01T00:00:00` and zeroed fractional digits; the daemon's private directory
//! becomes `/tmp/hld-test`, the directory of the workspace binaries `/target/debug` and the
//! daemon's version `0.0.0`; `duration_ms` and `durationMs`, measured on the wall clock,
//! become 0. Keys come out sorted.

use std::path::{Path, PathBuf};

use hld_client::protocol::{ConversationEventType, Event, SessionStatus};
use hld_e2e::anchor::{
    self, EventNotification, Heartbeat, Reply, SubscribeConfirmation, SubscriptionLine,
    WuiContinueSession, WuiGetConversation, WuiGetSessionState, WuiHealth, WuiInterruptSession,
    WuiLaunchSession, WuiListSessions,
};
use hld_e2e::{
    ended, launch_params, status_change, workspace_bin, DaemonOptions, LineConn, TestDaemon,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

/// Numbers measured on the wall clock, and process ids.
const VOLATILE_NUMBERS: [&str; 3] = ["duration_ms", "durationMs", "pid"];

/// Replaces what changes from run to run (see the module docs).
struct Normaliser {
    /// Substrings to replace, longest first.
    literals: Vec<(String, String)>,
    /// The ids seen, in order of appearance.
    ids: Vec<String>,
}

impl Normaliser {
    fn new(d: &TestDaemon) -> Normaliser {
        let bin = workspace_bin("hld");
        let mut literals = vec![
            (d.dir.display().to_string(), "/tmp/hld-test".to_owned()),
            (
                bin.parent().unwrap().display().to_string(),
                "/target/debug".to_owned(),
            ),
        ];
        literals.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Normaliser {
            literals,
            ids: Vec::new(),
        }
    }

    fn value(&mut self, key: Option<&str>, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.string(key, s)),
            Value::Number(_) if key.is_some_and(|k| VOLATILE_NUMBERS.contains(&k)) => json!(0),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.value(None, v)).collect())
            }
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), self.value(Some(k), v)))
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }

    fn string(&mut self, key: Option<&str>, s: &str) -> String {
        if key == Some("version") && s == env!("CARGO_PKG_VERSION") {
            return "0.0.0".to_owned();
        }
        if chrono::DateTime::parse_from_rfc3339(s).is_ok() {
            return timestamp(s);
        }
        let mut out = s.to_owned();
        for (from, to) in &self.literals {
            out = out.replace(from.as_str(), to);
        }
        self.ids_in(&out)
    }

    /// `s` with each id replaced by its numbered placeholder of the same shape.
    fn ids_in(&mut self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some((at, len, tool)) = (0..rest.len())
            .filter(|&i| rest.is_char_boundary(i))
            .find_map(|i| id_at(&rest[i..]).map(|(len, tool)| (i, len, tool)))
        {
            out.push_str(&rest[..at]);
            let id = rest[at..at + len].to_owned();
            let n = match self.ids.iter().position(|seen| *seen == id) {
                Some(i) => i + 1,
                None => {
                    self.ids.push(id);
                    self.ids.len()
                }
            };
            if tool {
                out.push_str(&format!("toolu_{n:024}"));
            } else {
                out.push_str(&format!("00000000-0000-4000-8000-{n:012}"));
            }
            rest = &rest[at + len..];
        }
        out.push_str(rest);
        out
    }
}

/// The length of the id `s` starts with, if any, and whether it is a tool use id: a UUID
/// (8-4-4-4-12 hex digits) or `toolu_` and letters and digits (Claude's tool use ids).
fn id_at(s: &str) -> Option<(usize, bool)> {
    if let Some(tail) = s.strip_prefix("toolu_") {
        let len = tail.bytes().take_while(u8::is_ascii_alphanumeric).count();
        return (len > 0).then_some(("toolu_".len() + len, true));
    }
    let bytes = s.as_bytes();
    let uuid = bytes.len() >= 36
        && bytes[..36].iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    uuid.then_some((36, false))
}

/// An RFC 3339 time with the same format at `2000-01-01T00:00:00`, fractional digits zeroed
/// and the offset kept.
fn timestamp(s: &str) -> String {
    let (date_time, rest) = s.split_at(19);
    assert_eq!(date_time.len(), "2000-01-01T00:00:00".len());
    let fraction_end = rest
        .strip_prefix('.')
        .map_or(0, |f| 1 + f.bytes().take_while(u8::is_ascii_digit).count());
    let (fraction, offset) = rest.split_at(fraction_end);
    format!(
        "2000-01-01{}00:00:00{}{offset}",
        &date_time[10..11],
        fraction.replace(|c: char| c.is_ascii_digit(), "0")
    )
}

fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(format!("{name}.json"))
}

/// Normalises `live` (replies of daemon `d`), compares it with golden file `name` (or rewrites
/// the file under `UPDATE_GOLDEN`), and returns the golden value.
pub(super) fn check(d: &TestDaemon, name: &str, live: &Value) -> Value {
    let normalised = Normaliser::new(d).value(None, live);
    let path = golden_path(name);
    let text = serde_json::to_string_pretty(&normalised).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no golden file {} ({e}); UPDATE_GOLDEN=1 writes it",
            path.display()
        )
    });
    assert_eq!(
        text,
        golden,
        "the wire shape changed from {} (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
    serde_json::from_str(&golden).unwrap()
}

/// Decodes `value` as a client's type `T`, failing the test with the client's error.
pub(super) fn decode<T: DeserializeOwned>(what: &str, value: &Value) -> T {
    serde_json::from_value(value.clone()).unwrap_or_else(|e| {
        panic!(
            "{what} does not decode as {} ({e}): {value}",
            std::any::type_name::<T>()
        )
    })
}

/// Checks golden file `name` against `live` and decodes both as `T`; returns the live one.
pub(super) fn golden<T: DeserializeOwned>(d: &TestDaemon, name: &str, live: &Value) -> T {
    let file = check(d, name, live);
    decode::<T>(&format!("tests/golden/{name}.json"), &file);
    decode::<T>("the live reply", live)
}

/// Sends `frame` on a fresh connection and returns the reply line.
fn send(d: &TestDaemon, frame: Value) -> Value {
    d.conn().call(&frame.to_string())
}

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn workdir(d: &TestDaemon) -> PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A session run to its end through an approved `Write` (the approvals server asks the
/// daemon, the test approves); returns its id.
fn approved_write(d: &TestDaemon) -> String {
    let id = d.launch(launch_params("scenario:tool make a file", workdir(d)));
    let approval = d.wait_approvals(Some(&id), |a| !a.is_empty()).remove(0);
    let reply = send(
        d,
        json!({"jsonrpc": "2.0", "method": "sendDecision", "id": 1, "params":
               {"call_id": approval.id, "type": "function_call", "decision": "approve"}}),
    );
    assert_eq!(reply["result"]["success"], true, "{reply}");
    d.wait_ended(&id);
    id
}

/// A completed session and its completed continuation; returns (parent, child).
fn continued(d: &TestDaemon) -> (String, String) {
    let parent = d.launch(launch_params("first question", workdir(d)));
    d.wait_ended(&parent);
    let reply = send(
        d,
        json!({"jsonrpc": "2.0", "method": "continueSession", "id": 1,
               "params": {"session_id": parent, "query": "second question"}}),
    );
    let child = reply["result"]["session_id"].as_str().unwrap().to_owned();
    d.wait_ended(&child);
    (parent, child)
}

#[test]
fn health() {
    let d = fake();
    // The frame the anchor's CLI sends (peers.md §1).
    let live = send(&d, json!({"jsonrpc": "2.0", "method": "health", "id": 1}));
    let reply: Reply<WuiHealth> = golden(&d, "health", &live);
    assert_eq!(reply.result.status, "ok");
}

#[test]
fn launch_session() {
    let d = fake();
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "launchSession", "id": 1, "params":
               {"query": "write a haiku", "model": "sonnet", "working_dir": workdir(&d)}}),
    );
    let reply: Reply<WuiLaunchSession> = golden(&d, "launch_session", &live);
    d.wait_ended(&reply.result.session_id);
}

#[test]
fn list_sessions() {
    let d = fake();
    let (parent, child) = continued(&d);
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "listSessions", "id": 1}),
    );
    let reply: Reply<WuiListSessions> = golden(&d, "list_sessions", &live);
    let ids: Vec<&str> = reply
        .result
        .sessions
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(ids, [child.as_str(), parent.as_str()]);
}

#[test]
fn get_session_state() {
    let d = fake();
    let (_, child) = continued(&d);
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "getSessionState", "id": 1,
               "params": {"session_id": child}}),
    );
    let reply: Reply<WuiGetSessionState> = golden(&d, "get_session_state", &live);
    assert_eq!(
        reply.result.session.status,
        SessionStatus::Completed.as_str()
    );
}

#[test]
fn get_conversation() {
    let d = fake();
    let id = approved_write(&d);
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "getConversation", "id": 1,
               "params": {"session_id": id}}),
    );
    let reply: Reply<WuiGetConversation> = golden(&d, "get_conversation", &live);
    let call = reply
        .result
        .events
        .iter()
        .find(|e| e.event_type == ConversationEventType::ToolCall.as_str())
        .expect("a tool call");
    // The Go TUI prints the input; it is a string holding a JSON object.
    let input: Value = serde_json::from_str(call.tool_input_json.as_deref().unwrap()).unwrap();
    assert!(input.is_object(), "{input}");
}

#[test]
fn continue_session() {
    let d = fake();
    let parent = d.launch(launch_params("first question", workdir(&d)));
    d.wait_ended(&parent);
    // The TUI sends the id and the query only.
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "continueSession", "id": 1,
               "params": {"session_id": parent, "query": "second question"}}),
    );
    let reply: Reply<WuiContinueSession> = golden(&d, "continue_session", &live);
    assert_eq!(reply.result.parent_session_id, parent);
    d.wait_ended(&reply.result.session_id);
}

#[test]
fn interrupt_session() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_DELAY_MS", "100"));
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.claude_session_id.is_some());
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "interruptSession", "id": 1,
               "params": {"session_id": id}}),
    );
    let reply: Reply<WuiInterruptSession> = golden(&d, "interrupt_session", &live);
    assert!(reply.result.success);
    d.wait_ended(&id);
}

/// A finished session with a pending function call and a pending question, created as the
/// approvals MCP server creates them; returns (session id, function call id).
fn pending_approvals(d: &TestDaemon) -> (String, String) {
    let id = d.launch(launch_params("hello", workdir(d)));
    d.wait_ended(&id);
    let call = send(
        d,
        json!({"jsonrpc": "2.0", "method": "createApproval", "id": 1, "params":
               {"session_id": id, "tool_name": "Bash", "tool_input": {"command": "cargo test"},
                "tool_use_id": "toolu_01XkR7d3Qm8bW2pZ5vN9sLcT"}}),
    );
    send(
        d,
        json!({"jsonrpc": "2.0", "method": "createApproval", "id": 2, "params":
               {"session_id": id, "type": "human_contact", "message": "Which branch?"}}),
    );
    let call = call["result"]["approval_id"].as_str().unwrap().to_owned();
    (id, call)
}

#[test]
fn fetch_approvals() {
    let d = fake();
    let (id, _) = pending_approvals(&d);
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "fetchApprovals", "id": 1,
               "params": {"session_id": id}}),
    );
    let reply: Reply<anchor::FetchApprovals> = golden(&d, "fetch_approvals", &live);
    let kinds: Vec<_> = reply.result.approvals.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            anchor::PendingApprovalType::FunctionCall,
            anchor::PendingApprovalType::HumanContact
        ]
    );
    assert!(reply.result.approvals.iter().all(|a| a.is_consistent()));
}

#[test]
fn create_approval() {
    let d = fake();
    let id = d.launch(launch_params("hello", workdir(&d)));
    let run_id = d.wait_ended(&id).run_id;
    // What the local approvals MCP server sends (hld-anchor.md §4.6).
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "createApproval", "id": 1, "params":
               {"run_id": run_id, "tool_name": "Write",
                "tool_input": {"file_path": "/tmp/x", "content": "x"}}}),
    );
    let reply: Reply<anchor::CreateApproval> = golden(&d, "create_approval", &live);
    assert!(reply.result.approval_id.starts_with("local-"));
}

#[test]
fn get_approval() {
    let d = fake();
    let (_, call) = pending_approvals(&d);
    send(
        &d,
        json!({"jsonrpc": "2.0", "method": "sendDecision", "id": 1, "params":
               {"call_id": call, "type": "function_call", "decision": "deny",
                "comment": "Run only the parser tests"}}),
    );
    let live = send(
        &d,
        json!({"jsonrpc": "2.0", "method": "getApproval", "id": 1,
               "params": {"approval_id": call}}),
    );
    let reply: Reply<anchor::GetApproval> = golden(&d, "get_approval", &live);
    assert_eq!(
        reply.result.approval.status,
        anchor::LocalApprovalStatus::Denied
    );
}

/// A recorded decision, then the refusal of the same decision sent again.
#[test]
fn send_decision() {
    let d = fake();
    let (_, call) = pending_approvals(&d);
    let frame = json!({"jsonrpc": "2.0", "method": "sendDecision", "id": 1, "params":
                       {"call_id": call, "type": "function_call", "decision": "approve"}});
    let live = json!([send(&d, frame.clone()), send(&d, frame)]);
    let replies: Vec<Reply<anchor::SendDecision>> = golden(&d, "send_decision", &live);
    assert!(replies[0].result.success);
    assert!(!replies[1].result.success);
    assert!(replies[1].result.error.is_some());
}

#[test]
fn subscribe_confirmation() {
    let d = fake();
    let mut conn = d.conn();
    let live = conn.call(
        &json!({"jsonrpc": "2.0", "method": "Subscribe", "id": 1,
                "params": {"event_types": ["new_approval", "session_status_changed"]}})
        .to_string(),
    );
    let line: SubscriptionLine<SubscribeConfirmation> = golden(&d, "subscribe_confirmation", &live);
    assert!(!line.result.subscription_id.is_empty());
}

/// The event a subscription line carries, if it is one of the daemon's events.
fn event_of(line: &Value) -> Option<Event> {
    serde_json::from_value(json!({
        "type": line["result"]["event"]["type"],
        "data": line["result"]["event"]["data"],
    }))
    .ok()
}

/// Picks the events of one session worth a golden line (the session's id is the argument).
type Selector = fn(&Event, &str) -> bool;

/// The first event line of each kind the anchor's clients handle, from a session whose tool
/// call is approved: its start, a stored message, the approval asked, the wait for it, the
/// decision, and the end.
#[test]
fn subscribe_events() {
    let d = fake();
    let mut conn = d.conn();
    conn.call(&json!({"jsonrpc": "2.0", "method": "Subscribe", "id": 1}).to_string());
    let id = approved_write(&d);
    let wanted: [(&str, Selector); 6] = [
        ("session started", |e, id| {
            status_change(e, id) == Some((SessionStatus::Starting, SessionStatus::Running))
        }),
        ("the user's message stored", |e, _| match e {
            Event::ConversationUpdated { event, .. } => event.role.as_deref() == Some("user"),
            _ => false,
        }),
        ("an approval asked", |e, _| {
            matches!(e, Event::NewApproval { .. })
        }),
        ("the session waits", |e, id| {
            status_change(e, id).is_some_and(|(_, new)| new == SessionStatus::WaitingInput)
        }),
        ("the approval decided", |e, _| {
            matches!(e, Event::ApprovalResolved { .. })
        }),
        ("the session ended", ended),
    ];
    // The first event of each kind, in whatever order they come (two sessions' worth of
    // work interleave differently on a busy machine), kept in the order above.
    let mut lines: Vec<Option<Value>> = vec![None; wanted.len()];
    while lines.iter().any(Option::is_none) {
        let line = conn.recv();
        let Some(event) = event_of(&line) else {
            continue;
        };
        let first = wanted
            .iter()
            .zip(&lines)
            .position(|((_, select), got)| got.is_none() && select(&event, &id));
        if let Some(i) = first {
            lines[i] = Some(line);
        }
    }
    let live = Value::Array(lines.into_iter().flatten().collect());
    let parsed: Vec<SubscriptionLine<EventNotification>> = golden(&d, "subscribe_events", &live);
    for ((what, _), line) in wanted.iter().zip(&parsed) {
        assert_eq!(line.id, None, "{what}: events come with a null id");
    }
}

#[test]
fn heartbeat() {
    let d = TestDaemon::start_with(
        DaemonOptions::default()
            .arg("--heartbeat-interval-ms")
            .arg("50"),
    );
    let mut conn: LineConn = d.conn();
    conn.call(&json!({"jsonrpc": "2.0", "method": "Subscribe", "id": 1}).to_string());
    // No event comes on a fresh daemon: the next line is the heartbeat of its silence.
    let live = conn.recv();
    let line: SubscriptionLine<Heartbeat> = golden(&d, "heartbeat", &live);
    assert_eq!(line.result.kind, "heartbeat");
}

/// The golden file `name`, as JSON.
fn read_golden(name: &str) -> Value {
    let path = golden_path(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `value` with the value at JSON pointer `at` replaced by `with` (or removed, for `None`).
fn mutated(value: &Value, at: &str, with: Option<Value>) -> Value {
    let mut value = value.clone();
    let (parent, key) = at.rsplit_once('/').unwrap();
    let parent = value
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("no {parent}"));
    match (parent, with) {
        (Value::Object(fields), Some(with)) => {
            assert!(fields.insert(key.to_owned(), with).is_some(), "no {at}");
        }
        (Value::Object(fields), None) => {
            assert!(fields.remove(key).is_some(), "no {at}");
        }
        (other, _) => panic!("{at} is not in an object: {other}"),
    }
    value
}

/// The mirrors fail where their clients fail: a golden file with one field missing, renamed
/// in type, or out of its enum no longer decodes.
#[test]
fn the_mirrors_reject_what_their_clients_reject() {
    fn rejects<T: DeserializeOwned>(name: &str, at: &str, with: Option<Value>) {
        let golden = read_golden(name);
        assert!(
            serde_json::from_value::<T>(golden.clone()).is_ok(),
            "{name} decodes as it is"
        );
        let changed = mutated(&golden, at, with.clone());
        assert!(
            serde_json::from_value::<T>(changed).is_err(),
            "{name} with {at} = {with:?} still decodes as {}",
            std::any::type_name::<T>()
        );
    }
    rejects::<Reply<WuiHealth>>("health", "/result/version", None);
    rejects::<Reply<WuiHealth>>("health", "/id", Some(json!("1")));
    rejects::<Reply<WuiLaunchSession>>("launch_session", "/result/run_id", None);
    rejects::<Reply<WuiListSessions>>(
        "list_sessions",
        "/result/sessions/0/status",
        Some(json!("completing")),
    );
    rejects::<Reply<WuiListSessions>>(
        "list_sessions",
        "/result/sessions/1/start_time",
        Some(json!("yesterday")),
    );
    rejects::<Reply<WuiListSessions>>(
        "list_sessions",
        "/result/sessions/0/result/num_turns",
        Some(json!("1")),
    );
    rejects::<Reply<WuiListSessions>>("list_sessions", "/result/sessions/0/summary", None);
    rejects::<Reply<WuiGetSessionState>>(
        "get_session_state",
        "/result/session/total_tokens",
        Some(json!("37")),
    );
    rejects::<Reply<WuiGetConversation>>(
        "get_conversation",
        "/result/events/0/id",
        Some(json!("1")),
    );
    rejects::<Reply<WuiGetConversation>>("get_conversation", "/result/events/0/is_completed", None);
    rejects::<Reply<WuiContinueSession>>("continue_session", "/result/claude_session_id", None);
    rejects::<Reply<WuiInterruptSession>>(
        "interrupt_session",
        "/result/success",
        Some(json!("true")),
    );
    rejects::<Reply<anchor::FetchApprovals>>(
        "fetch_approvals",
        "/result/approvals/0/type",
        Some(json!("tool_call")),
    );
    rejects::<Reply<anchor::FetchApprovals>>(
        "fetch_approvals",
        "/result/approvals/0/function_call/spec/kwargs",
        Some(json!("cargo test")),
    );
    rejects::<Reply<anchor::FetchApprovals>>(
        "fetch_approvals",
        "/result/approvals/1/human_contact/spec/msg",
        None,
    );
    rejects::<Reply<anchor::CreateApproval>>("create_approval", "/result/approval_id", None);
    rejects::<Reply<anchor::GetApproval>>(
        "get_approval",
        "/result/approval/status",
        Some(json!("resolved")),
    );
    rejects::<Vec<Reply<anchor::SendDecision>>>("send_decision", "/0/result/success", None);
    rejects::<SubscriptionLine<SubscribeConfirmation>>(
        "subscribe_confirmation",
        "/result/subscription_id",
        None,
    );
    rejects::<Vec<SubscriptionLine<EventNotification>>>(
        "subscribe_events",
        "/0/result/event/timestamp",
        Some(json!("now")),
    );
    rejects::<SubscriptionLine<Heartbeat>>("heartbeat", "/result/type", None);
}
