//! The REST session operations (hld-rest.md sections 3 to 5) over real HTTP with reqwest, as
//! CodeLayer calls them: the draft flow (create, PATCH, launch refused for a missing directory
//! then with `createDirectoryIfNotExists`), discard and restore, hard delete, launch, continue,
//! interrupt, archive, search, and the bypass turned on by PATCH approving what waits. Each
//! reply shape is pinned by a golden file and decoded by a strict mirror.

use std::time::Duration;

use hld_client::protocol::SessionStatus;
use hld_e2e::rest::{
    call, code, daemon, daemon_with, refused, Bulk, Continued, Created, Data, DirectoryNotFound,
    ErrorReply, Interrupted, Session, Sessions,
};
use hld_e2e::{wait_for, DaemonOptions};
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};

use super::golden::golden;

/// A request as CodeLayer sends it: `X-Client`, and a JSON body when given.
fn request(method: Method, url: &str, body: Option<Value>) -> reqwest::RequestBuilder {
    let r = Client::new()
        .request(method, url)
        .header("x-client", "codelayer");
    match body {
        Some(body) => r.json(&body),
        None => r,
    }
}

/// The status and JSON body of `method` on `path` under the API.
async fn api(base: &str, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    call(request(method, &format!("{base}/api/v1/{path}"), body)).await
}

/// `GET /sessions/{id}`, decoded.
async fn get(base: &str, id: &str) -> Session {
    let (status, body) = api(base, Method::GET, &format!("sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value::<Data<Session>>(body.clone())
        .unwrap_or_else(|e| panic!("{e}: {body}"))
        .data
}

/// `GET /sessions?{query}`, decoded.
async fn list(base: &str, query: &str) -> Sessions {
    let (status, body) = api(base, Method::GET, &format!("sessions?{query}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"))
}

#[tokio::test]
async fn a_draft_is_created_edited_refused_for_a_missing_directory_then_launched() {
    let (d, _, base) = daemon(&[]);
    let dir = d.dir.join("new").join("project");
    let dir_text = dir.display().to_string();
    let (status, body) = api(
        &base,
        Method::POST,
        "sessions",
        Some(json!({"query": "", "working_dir": dir_text, "draft": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let created: Data<Created> = golden(&d, "rest/create_session", &body);
    let id = created.data.session_id;
    let draft = get(&base, &id).await;
    assert_eq!(draft.status, "draft");
    assert_eq!(draft.working_dir.as_deref(), Some(dir_text.as_str()));

    let extra = d.dir.display().to_string();
    let edit = json!({"title": "Flaky test", "model": "opus", "editor_state": "{\"doc\":1}",
        "auto_accept_edits": true, "dangerously_skip_permissions": true,
        "dangerously_skip_permissions_timeout_ms": 600000, "additional_directories": [extra]});
    let (status, body) = api(&base, Method::PATCH, &format!("sessions/{id}"), Some(edit)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let patched: Data<Session> = golden(&d, "rest/patch_session", &body);
    let patched = patched.data;
    assert_eq!(patched.title.as_deref(), Some("Flaky test"));
    assert_eq!(patched.model.as_deref(), Some("opus"));
    assert_eq!(patched.editor_state.as_deref(), Some("{\"doc\":1}"));
    assert!(patched.auto_accept_edits && patched.dangerously_skip_permissions);
    assert!(patched.dangerously_skip_permissions_expires_at.is_some());
    let url = format!("{base}/api/v1/sessions/{id}");
    let running = request(Method::PATCH, &url, Some(json!({"status": "running"})));
    assert_eq!(code(running).await, (400, "HLD-3001".to_owned()));
    let proxy = request(Method::PATCH, &url, Some(json!({"proxy_enabled": true})));
    assert_eq!(code(proxy).await, (400, "HLD-3001".to_owned()));
    let nowhere = json!({"additional_directories": ["/no/such/dir"]});
    let nowhere = request(Method::PATCH, &url, Some(nowhere));
    assert_eq!(code(nowhere).await, (400, "HLD-3001".to_owned()));
    // A title as `updateSessionTitle` takes it: at most 200 characters.
    let long = request(Method::PATCH, &url, Some(json!({"title": "x".repeat(201)})));
    let message = "title too long: 201 characters (at most 200)";
    assert_eq!(refused(long).await, (400, message.to_owned()));
    assert_eq!(get(&base, &id).await.title.as_deref(), Some("Flaky test"));

    // The directory does not exist: 422, and the session stays a draft.
    let launch = format!("sessions/{id}/launch");
    let first = json!({"prompt": "hello from a draft", "createDirectoryIfNotExists": false});
    let (status, body) = api(&base, Method::POST, &launch, Some(first)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let missing: DirectoryNotFound = golden(&d, "rest/directory_not_found", &body);
    assert_eq!(missing.path, dir_text);
    assert!(missing.requires_creation);
    assert_eq!(get(&base, &id).await.status, "draft");
    assert!(!dir.exists());

    let again = json!({"prompt": "hello from a draft", "createDirectoryIfNotExists": true});
    let (status, body) = api(&base, Method::POST, &launch, Some(again)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let launched: Data<Session> =
        serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"));
    let launched = launched.data;
    assert!(dir.is_dir(), "the directory was made");
    assert_eq!(launched.id, id, "the draft keeps its id");
    assert_eq!(launched.query, "hello from a draft");
    assert_eq!(launched.summary.as_deref(), Some("hello from a draft"));
    assert_eq!(
        launched.editor_state, None,
        "the editor contents are cleared"
    );
    assert_eq!(launched.title.as_deref(), Some("Flaky test"));
    assert_eq!(launched.additional_directories, Some(vec![extra]));
    assert!(["starting", "running", "completed"].contains(&launched.status.as_str()));
    assert!(
        launched.created_at > draft.created_at,
        "a launched draft is created anew"
    );
    assert!(launched.auto_accept_edits && launched.dangerously_skip_permissions);
    assert!(
        launched.dangerously_skip_permissions_expires_at.is_some(),
        "a timed bypass stays timed"
    );
    d.wait_ended(&id);
    let done = api(&base, Method::GET, &format!("sessions/{id}"), None).await;
    let done: Data<Session> = golden(&d, "rest/get_session", &done.1);
    assert_eq!(done.data.status, "completed");
    assert!(
        done.data.input_tokens.is_some(),
        "one session shows its tokens"
    );

    let launch_url = format!("{base}/api/v1/{launch}");
    let twice = request(Method::POST, &launch_url, Some(json!({"prompt": "again"})));
    assert_eq!(code(twice).await, (400, "HLD-4001".to_owned()));
    let discard = request(Method::DELETE, &launch_url, None);
    assert_eq!(code(discard).await, (400, "HLD-4002".to_owned()));
    let unknown = format!("{base}/api/v1/sessions/00000000-0000-4000-8000-000000000000");
    let (status, body) = call(request(Method::GET, &unknown, None)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: ErrorReply = golden(&d, "rest/session_not_found", &body);
    assert_eq!(error.error.code, "HLD-1002");
}

#[tokio::test]
async fn a_discarded_draft_is_restored_and_an_empty_one_hard_deleted() {
    let (d, _, base) = daemon(&[]);
    let create = |body: Value| {
        let base = base.clone();
        async move {
            let (status, body) = api(&base, Method::POST, "sessions", Some(body)).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body["data"]["session_id"].as_str().unwrap().to_owned()
        }
    };
    let kept = create(json!({"draft": true, "title": "keep me", "query": "later"})).await;
    let (status, body) = api(
        &base,
        Method::DELETE,
        &format!("sessions/{kept}/launch"),
        None,
    )
    .await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    let drafts = list(&base, "leavesOnly=true&filter=draft").await;
    assert!(drafts.data.is_empty());
    assert_eq!(drafts.counts.draft, 0, "a discarded draft is not counted");
    let all = list(&base, "leavesOnly=true").await;
    let [discarded] = &all.data[..] else {
        panic!("{:?}", all.data)
    };
    assert_eq!(
        (discarded.id.as_str(), discarded.status.as_str()),
        (kept.as_str(), "discarded")
    );
    let reason = Some("Draft session discarded");
    assert_eq!(discarded.error_message.as_deref(), reason);

    let restore = json!({"session_ids": [kept, "00000000-0000-4000-8000-000000000000"]});
    let (status, body) = api(&base, Method::POST, "sessions/restore", Some(restore)).await;
    assert_eq!(status, StatusCode::MULTI_STATUS, "{body}");
    let partial: Data<Bulk> = golden(&d, "rest/restore_partial", &body);
    assert!(!partial.data.success);
    let restored = get(&base, &kept).await;
    assert_eq!(restored.status, "draft");
    assert_eq!(
        restored.error_message.as_deref(),
        reason,
        "the reason stays"
    );
    let url = format!("{base}/api/v1/sessions/restore");
    let empty = request(Method::POST, &url, Some(json!({"session_ids": []})));
    assert_eq!(code(empty).await, (400, "HLD-3002".to_owned()));
    // PATCH moves a draft between draft and discarded, and back.
    let patch = |status: &str| {
        let url = format!("{base}/api/v1/sessions/{kept}");
        request(Method::PATCH, &url, Some(json!({"status": status})))
    };
    let (status, body) = call(patch("discarded")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["status"], "discarded");
    let (status, body) = call(patch("draft")).await;
    assert_eq!(
        (status, &body["data"]["status"]),
        (StatusCode::OK, &json!("draft"))
    );

    let hard = |id: &str| {
        let url = format!("{base}/api/v1/sessions/{id}/hard-delete-empty");
        request(Method::DELETE, &url, None)
    };
    assert_eq!(code(hard(&kept)).await, (400, "HLD-4011".to_owned()));
    let empty = create(json!({"draft": true})).await;
    let (status, _) = call(hard(&empty)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let gone = request(
        Method::GET,
        &format!("{base}/api/v1/sessions/{empty}"),
        None,
    );
    assert_eq!(code(gone).await, (404, "HLD-1002".to_owned()));
    // An empty working directory is the daemon's own.
    let ran = create(json!({"query": "hello", "working_dir": ""})).await;
    d.wait_ended(&ran);
    let dir = get(&base, &ran).await.working_dir.unwrap();
    assert!(std::path::Path::new(&dir).is_absolute(), "{dir}");
    assert_eq!(code(hard(&ran)).await, (400, "HLD-4010".to_owned()));
}

#[tokio::test]
async fn sessions_launch_continue_archive_and_are_found() {
    let (d, _, base) = daemon(&[]);
    let work = d.dir.display().to_string();
    let missing = json!({"query": "hello", "working_dir": "~/no-such-dir-for-hld"});
    let (status, body) = api(&base, Method::POST, "sessions", Some(missing)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let path = body["path"].as_str().unwrap();
    assert!(
        !path.starts_with('~') && path.ends_with("/no-such-dir-for-hld"),
        "~ is expanded: {path}"
    );

    let launch = json!({"query": "hello over rest", "working_dir": work, "title": "Greeting"});
    let (status, body) = api(&base, Method::POST, "sessions", Some(launch)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let parent = body["data"]["session_id"].as_str().unwrap().to_owned();
    d.wait_ended(&parent);
    let cont = json!({"query": "and more"});
    let path = format!("sessions/{parent}/continue");
    let (status, body) = api(&base, Method::POST, &path, Some(cont)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let child: Data<Continued> = golden(&d, "rest/continue_session", &body);
    assert_eq!(child.data.parent_session_id, parent);
    let child = child.data.session_id;
    d.wait_ended(&child);
    assert_eq!(
        get(&base, &child).await.parent_session_id.as_deref(),
        Some(parent.as_str())
    );
    let leaves = list(&base, "leavesOnly=true&filter=normal").await;
    assert_eq!(leaves.data.len(), 1, "only the child is a leaf");
    let everything = list(&base, "leavesOnly=false&filter=normal").await;
    assert_eq!(
        everything.data.len(),
        2,
        "leavesOnly=false shows the parent"
    );
    assert_eq!(everything.counts.normal, 2);
    // A list carries each run's duration (when positive), never its tokens or extra details.
    for listed in &everything.data {
        let ran = listed.duration_ms.unwrap_or_default();
        assert!(ran > 0, "{listed:?}");
        assert_eq!(listed.duration_ms, get(&base, &listed.id).await.duration_ms);
        assert_eq!(
            (listed.input_tokens, listed.effective_context_tokens),
            (None, None)
        );
        assert!(listed.model_id.is_none() && listed.additional_directories.is_none());
    }

    let (status, body) = api(
        &base,
        Method::GET,
        "sessions/search?query=greet&limit=5",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let found: Data<Vec<Session>> = golden(&d, "rest/search_sessions", &body);
    let ids: Vec<&str> = found.data.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, [child.as_str()], "the leaf, which inherits the title");
    let nothing = api(&base, Method::GET, "sessions/search?query=zebra", None).await;
    assert_eq!(nothing.1["data"], json!([]));
    let url = format!("{base}/api/v1/sessions/search?query=hello&limit=0");
    assert_eq!(code(request(Method::GET, &url, None)).await.0, 400);

    let bulk = json!({"session_ids": [child, "00000000-0000-4000-8000-000000000000"],
        "archived": true});
    let (status, body) = api(&base, Method::POST, "sessions/archive", Some(bulk)).await;
    assert_eq!(status, StatusCode::MULTI_STATUS, "{body}");
    let partial: Data<Bulk> = golden(&d, "rest/archive_partial", &body);
    assert_eq!(
        partial.data.failed_sessions,
        Some(vec!["00000000-0000-4000-8000-000000000000".to_owned()])
    );
    assert!(get(&base, &child).await.archived);
    let back = json!({"session_ids": [child], "archived": false});
    let (status, body) = api(&base, Method::POST, "sessions/archive", Some(back)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let _: Data<Bulk> = golden(&d, "rest/archive", &body);
    assert!(!get(&base, &child).await.archived);
    let url = format!("{base}/api/v1/sessions/archive");
    let empty = request(
        Method::POST,
        &url,
        Some(json!({"session_ids": [], "archived": true})),
    );
    assert_eq!(code(empty).await, (400, "HLD-3001".to_owned()));
}

#[tokio::test]
async fn a_running_session_is_interrupted_and_a_finished_one_refused() {
    let (d, _, base) = daemon_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "600"),
    );
    let launch = json!({"query": "scenario:slow", "working_dir": d.dir.display().to_string()});
    let (status, body) = api(&base, Method::POST, "sessions", Some(launch)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["data"]["session_id"].as_str().unwrap().to_owned();
    d.wait_session(&id, |s| s.status == SessionStatus::Running);
    let path = format!("sessions/{id}/interrupt");
    let (status, body) = api(&base, Method::POST, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let interrupted: Data<Interrupted> = golden(&d, "rest/interrupt_session", &body);
    assert_eq!(interrupted.data.status, "interrupting");
    d.wait_ended(&id);
    // Ended by the interrupt: `interrupted` (resumable), as the event stream says.
    let (status, body) = api(&base, Method::GET, &format!("sessions/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["status"], "interrupted", "{body}");
    let url = format!("{base}/api/v1/{path}");
    assert_eq!(
        code(request(Method::POST, &url, None)).await,
        (400, "HLD-3001".to_owned())
    );
    let unknown = format!("{base}/api/v1/sessions/nope/interrupt");
    assert_eq!(code(request(Method::POST, &unknown, None)).await.0, 404);
}

#[tokio::test]
async fn turning_the_bypass_on_by_patch_approves_the_waiting_tool_call() {
    let (d, _, base) = daemon(&[]);
    let launch =
        json!({"query": "scenario:tool write it", "working_dir": d.dir.display().to_string()});
    let (status, body) = api(&base, Method::POST, "sessions", Some(launch)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["data"]["session_id"].as_str().unwrap().to_owned();
    let pending = d.wait_approvals(Some(&id), |a| !a.is_empty()).remove(0);
    let path = format!("sessions/{id}");
    let on = json!({"dangerously_skip_permissions": true});
    let (status, body) = api(&base, Method::PATCH, &path, Some(on)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["data"]["dangerously_skip_permissions"], true);
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    let decided = wait_for(Duration::from_secs(10), || {
        let call = d
            .conversation(&id)
            .into_iter()
            .find(|e| e.approval_id.as_deref() == Some(pending.id.as_str()))?;
        call.approval_status
    });
    assert_eq!(decided.as_deref(), Some("approved"));
}
