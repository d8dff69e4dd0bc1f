//! The REST conversation, approval and settings routes (issue 41) over real HTTP, decoded by
//! the strict mirrors of `hld_e2e::rest_conversation` and pinned by golden files
//! (`tests/golden/rest/`): a tool call waits for its approval in `/messages`, is decided over
//! REST and the session goes on; the small reads a launcher and settings page make.

use hld_client::protocol::SessionStatus;
use hld_e2e::rest::{call, daemon};
use hld_e2e::rest_conversation::{
    Approval, Config, Created, Data, DebugInfo, Decided, DirectoryState, Event, RecentPath,
    SlashCommand, Snapshot, UserSettings,
};
use hld_e2e::{launch_params, TestDaemon};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use super::golden::golden;

/// A JSON POST as CodeLayer sends it.
fn post(c: &Client, url: String, body: Value) -> reqwest::RequestBuilder {
    c.post(url)
        .header("x-client", "codelayer")
        .header("content-type", "application/json")
        .body(body.to_string())
}

/// The status and error code of a refused request.
async fn refused_code(request: reqwest::RequestBuilder) -> (StatusCode, String) {
    let (status, body) = call(request).await;
    let code = body["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (status, code)
}

/// `GET url`, answered 200, pinned by the golden file `rest/NAME`, strictly decoded.
async fn read<T: serde::de::DeserializeOwned>(d: &TestDaemon, url: String, name: &str) -> T {
    let (status, body) = call(Client::new().get(url)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    golden(d, &format!("rest/{name}"), &body)
}

fn workdir(d: &TestDaemon) -> std::path::PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn a_pending_tool_call_is_shown_in_messages_and_approved_over_rest() {
    let (d, _address, base) = daemon(&[]);
    let api = format!("{base}/api/v1");
    let c = Client::new();
    let id = d.launch(launch_params("scenario:tool make a file", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);

    let messages: Data<Vec<Event>> = read(
        &d,
        format!("{api}/sessions/{id}/messages"),
        "messages_pending",
    )
    .await;
    let pending: Vec<&Event> = messages
        .data
        .iter()
        .filter(|e| e.approval_status.as_deref() == Some("pending"))
        .collect();
    let [row] = pending[..] else {
        panic!("one pending row: {:?}", messages.data)
    };
    assert_eq!(row.event_type, "tool_call");
    assert_eq!(row.tool_name.as_deref(), Some("Write"));
    let approval_id = row.approval_id.clone().unwrap();
    assert_eq!(
        messages.data[0].content.as_deref(),
        Some("scenario:tool make a file")
    );
    assert!(messages
        .data
        .windows(2)
        .all(|w| w[0].sequence < w[1].sequence));

    let listed: Data<Vec<Approval>> =
        read(&d, format!("{api}/approvals?sessionId={id}"), "approvals").await;
    let [approval] = &listed.data[..] else {
        panic!("{:?}", listed.data)
    };
    assert_eq!(
        (approval.id.as_str(), approval.status.as_str()),
        (approval_id.as_str(), "pending")
    );
    assert_eq!(
        approval.tool_input["file_path"],
        json!(workdir(&d).join("hello.txt"))
    );
    let none: Data<Vec<Approval>> = read(&d, format!("{api}/approvals"), "approvals_none").await;
    assert!(none.data.is_empty(), "no sessionId, no approvals");
    let one: Data<Approval> = read(&d, format!("{api}/approvals/{approval_id}"), "approval").await;
    assert_eq!(one.data.session_id, id);

    let decide = format!("{api}/approvals/{approval_id}/decide");
    let (status, code) = refused_code(post(&c, decide.clone(), json!({"decision": "deny"}))).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "HLD-3001"),
        "deny needs a comment"
    );
    let (status, code) = refused_code(post(&c, decide.clone(), json!({"decision": "maybe"}))).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "HLD-3001")
    );
    let (status, body) = call(post(&c, decide.clone(), json!({"decision": "approve"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let decided: Data<Decided> = golden(&d, "rest/decide", &body);
    assert!(decided.data.success);
    let (status, code) = refused_code(post(&c, decide, json!({"decision": "approve"}))).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "HLD-3002"),
        "decided already"
    );
    let unknown = format!("{api}/approvals/local-00000000-0000-4000-8000-000000000000/decide");
    let (status, code) = refused_code(post(&c, unknown, json!({"decision": "approve"}))).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "HLD-1002"));

    // The session goes on: the file is written and the call shows approved.
    let ended = d.wait_ended(&id);
    assert_eq!(ended.status, SessionStatus::Completed, "{ended:?}");
    assert!(workdir(&d).join("hello.txt").exists());
    let (_, body) = call(c.get(format!("{api}/sessions/{id}/messages"))).await;
    let after: Data<Vec<Event>> = serde_json::from_value(body).unwrap();
    let call_row = after
        .data
        .iter()
        .find(|e| e.approval_id.as_deref() == Some(&approval_id));
    assert_eq!(
        call_row.unwrap().approval_status.as_deref(),
        Some("approved")
    );
    let (_, body) = call(c.get(format!("{api}/approvals?sessionId={id}"))).await;
    assert_eq!(body, json!({"data": []}), "nothing pending any more");
}

/// A question (Claude Code's `AskUserQuestion`) is answered from CodeLayer as it denies a call,
/// the answer as the reason (a choice's number picks it); approving one gives no answer.
#[tokio::test]
async fn a_question_is_answered_over_rest_by_denying_it_with_the_answer() {
    let (d, _address, base) = daemon(&[]);
    let api = format!("{base}/api/v1");
    let c = Client::new();
    let id = d.launch(launch_params("scenario:ask which colour", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    let (_, body) = call(c.get(format!("{api}/approvals?sessionId={id}"))).await;
    let listed: Data<Vec<Approval>> = serde_json::from_value(body).unwrap();
    let [question] = &listed.data[..] else {
        panic!("{:?}", listed.data)
    };
    assert_eq!(question.tool_name, "AskUserQuestion");
    assert!(
        question.tool_input["questions"].is_array(),
        "{:?}",
        question.tool_input
    );
    let decide = format!("{api}/approvals/{}/decide", question.id);
    let (status, body) = call(post(&c, decide.clone(), json!({"decision": "approve"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("answer"),
        "{body}"
    );
    let answer = json!({"decision": "deny", "comment": "1"});
    let (status, body) = call(post(&c, decide, answer)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ended = d.wait_ended(&id);
    assert_eq!(ended.status, SessionStatus::Completed, "{ended:?}");
    let said = d.conversation(&id);
    let last = said.iter().rev().find_map(|e| e.content.clone()).unwrap();
    assert!(last.contains("Blue"), "{last}");
}

#[tokio::test]
async fn an_approval_made_over_rest_is_denied_with_its_reason() {
    let (d, _address, base) = daemon(&[]);
    let api = format!("{base}/api/v1");
    let c = Client::new();
    let id = d.launch(launch_params("hello", workdir(&d)));
    let run_id = d.wait_ended(&id).run_id;

    let ask = json!({"run_id": run_id, "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let (status, body) = call(post(&c, format!("{api}/approvals"), ask)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Data<Created> = golden(&d, "rest/create_approval", &body);
    let approval_id = created.data.approval_id;
    assert!(approval_id.starts_with("local-"), "{approval_id}");
    let unknown_run = json!({"run_id": "no-such-run", "tool_name": "Bash", "tool_input": {}});
    let (status, code) = refused_code(post(&c, format!("{api}/approvals"), unknown_run)).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "HLD-1002"));

    let decide = format!("{api}/approvals/{approval_id}/decide");
    let deny = json!({"decision": "deny", "comment": "not in this directory"});
    let (status, body) = call(post(&c, decide, deny)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let denied: Data<Approval> = read(
        &d,
        format!("{api}/approvals/{approval_id}"),
        "approval_denied",
    )
    .await;
    assert_eq!(denied.data.status, "denied");
    assert_eq!(
        denied.data.comment.as_deref(),
        Some("not in this directory")
    );
    assert!(denied.data.responded_at.is_some());
    assert_eq!(denied.data.tool_name, "Bash");
    let missing = format!("{api}/approvals/local-00000000-0000-4000-8000-000000000000");
    let (status, code) = refused_code(c.get(missing)).await;
    assert_eq!((status, code.as_str()), (StatusCode::NOT_FOUND, "HLD-1002"));
}

#[tokio::test]
async fn messages_and_snapshots_of_drafts_and_unknown_sessions() {
    let (d, _address, base) = daemon(&[]);
    let api = format!("{base}/api/v1");
    let c = Client::new();
    let reply = d.call(
        "createDraft",
        json!({"working_dir": workdir(&d).display().to_string()}),
    );
    let draft = reply["result"]["session_id"].as_str().unwrap().to_owned();
    let empty: Data<Vec<Event>> = read(
        &d,
        format!("{api}/sessions/{draft}/messages"),
        "messages_empty",
    )
    .await;
    assert!(empty.data.is_empty(), "no messages before Claude starts");
    let snapshots: Data<Vec<Snapshot>> =
        read(&d, format!("{api}/sessions/{draft}/snapshots"), "snapshots").await;
    assert!(snapshots.data.is_empty());
    for what in ["messages", "snapshots"] {
        let url = format!("{api}/sessions/00000000-0000-4000-8000-000000000000/{what}");
        let (status, code) = refused_code(c.get(url)).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::NOT_FOUND, "HLD-1002"),
            "{what}"
        );
    }
}

#[tokio::test]
async fn settings_paths_config_debug_info_directories_and_slash_commands() {
    let (d, _address, base) = daemon(&[]);
    let api = format!("{base}/api/v1");
    let c = Client::new();
    let settings: Data<UserSettings> =
        read(&d, format!("{api}/user-settings"), "user_settings").await;
    assert!(!settings.data.advanced_providers);
    assert_eq!(settings.data.opt_in_telemetry, None, "never chosen");
    // The choice is kept, so that CodeLayer asks once, not at every connection.
    let chose = json!({"opt_in_telemetry": false});
    let request = c
        .patch(format!("{api}/user-settings"))
        .header("x-client", "codelayer")
        .header("content-type", "application/json")
        .body(chose.to_string());
    let (status, body) = call(request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let set: Data<UserSettings> = serde_json::from_value(body).unwrap();
    assert_eq!(set.data.opt_in_telemetry, Some(false));
    assert!(!set.data.advanced_providers);
    let (_, body) = call(c.get(format!("{api}/user-settings"))).await;
    let again: Data<UserSettings> = serde_json::from_value(body).unwrap();
    assert_eq!(again.data.opt_in_telemetry, Some(false));

    let work = workdir(&d);
    std::fs::create_dir_all(work.join(".claude/commands")).unwrap();
    std::fs::write(work.join(".claude/commands/review.md"), "Review it").unwrap();
    let id = d.launch(launch_params("hello", &work));
    d.wait_ended(&id);
    let paths: Data<Vec<RecentPath>> =
        read(&d, format!("{api}/recent-paths"), "recent_paths").await;
    let [path] = &paths.data[..] else {
        panic!("{:?}", paths.data)
    };
    assert_eq!(path.path, work.display().to_string());
    assert_eq!(path.usage_count, 1);
    for bad in ["0", "101", "x"] {
        let url = format!("{api}/recent-paths?limit={bad}");
        let (status, code) = refused_code(c.get(url)).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::BAD_REQUEST, "HLD-3001"),
            "{bad}"
        );
    }
    let (status, _) = call(c.get(format!("{api}/recent-paths?limit=100"))).await;
    assert_eq!(status, StatusCode::OK);

    let (status, body) = call(c.get(format!("{api}/debug-info"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let debug: DebugInfo =
        serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(debug.path, d.dir.join("hld.db").display().to_string());
    assert!(debug.size > 0 && debug.table_count >= 3, "{debug:?}");
    assert_eq!((debug.stats.sessions, debug.stats.approvals), (1, 0));
    assert!(debug.stats.events > 0, "{debug:?}");
    assert!(debug.cli_command.ends_with("fake-claude"), "{debug:?}");
    assert!(debug.last_modified.is_some());

    let config: Config = read(&d, format!("{api}/config"), "config").await;
    assert!(config.claude_available);
    assert!(
        config.claude_detected_path.ends_with("fake-claude"),
        "{config:?}"
    );

    let check = |path: String| {
        let c = c.clone();
        let url = format!("{api}/validate-directory");
        async move { call(post(&c, url, json!({ "path": path }))).await }
    };
    let (status, body) = check(work.display().to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let there: DirectoryState = golden(&d, "rest/validate_directory", &body);
    assert!(there.exists && there.is_directory == Some(true));
    let (_, body) = check(work.join("new/deeper").display().to_string()).await;
    let missing: DirectoryState = golden(&d, "rest/validate_directory_missing", &body);
    assert!(!missing.exists && missing.can_create == Some(true));
    let (_, body) = check("~".into()).await;
    let home: DirectoryState = serde_json::from_value(body).unwrap();
    assert!(!home.expanded_path.contains('~') && home.expanded_path.starts_with('/'));
    let (status, code) =
        refused_code(post(&c, format!("{api}/validate-directory"), json!({}))).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "HLD-3001")
    );

    let dir = work.display().to_string();
    let commands = format!("{api}/slash-commands?working_dir={dir}&query=rev");
    let found: Data<Vec<SlashCommand>> = read(&d, commands, "slash_commands").await;
    let names: Vec<(&str, &str)> = found
        .data
        .iter()
        .map(|s| (s.name.as_str(), s.source.as_str()))
        .collect();
    assert!(names.contains(&("/review", "local")), "{names:?}");
    assert!(names.contains(&("/security-review", "global")), "{names:?}");
    assert!(names.iter().all(|(n, _)| n.contains("rev")), "{names:?}");
    let elsewhere = format!("{api}/slash-commands?working_dir=/nowhere");
    let (_, body) = call(c.get(elsewhere)).await;
    assert_eq!(body, json!({"data": []}), "no session ran there");
    let (status, code) = refused_code(c.get(format!("{api}/slash-commands"))).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "HLD-3001")
    );
}
