//! Both generations of HumanLayer's approvals MCP server: the older one sends `createApproval`
//! with the run id in `run_id`; HEAD's sends the session id in `run_id`, with a `tool_use_id`
//! (HEAD's daemon reads `run_id` as a session id then). `tests/node/head_approvals_server.mjs`
//! does what HEAD's `hlyr mcp claude_approvals` does, run by `fake-claude` as Claude runs it.

use std::path::Path;

use hld_client::protocol::{ApprovalStatus, SessionStatus};
use hld_e2e::{launch_params, DaemonOptions, TestDaemon};
use serde_json::{json, Value};

use super::cloud::{decide, finished_session, get_approval};

fn workdir(d: &TestDaemon) -> std::path::PathBuf {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The error message of a `createApproval` that must fail with -32602.
fn refused(d: &TestDaemon, params: Value) -> String {
    let reply = d.call("createApproval", params);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    reply["error"]["message"].as_str().unwrap().to_owned()
}

#[test]
fn heads_approvals_server_asks_with_the_session_id_in_run_id_and_is_answered() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("node/head_approvals_server.mjs");
    let mcp_config = json!({"mcpServers": {"approvals": {"command": "node",
                                                         "args": [script.display().to_string()]}}});
    let id = d.launch(hld_client::protocol::LaunchSessionParams {
        mcp_config: Some(serde_json::from_value(mcp_config).unwrap()),
        permission_prompt_tool: Some("mcp__approvals__request_permission".into()),
        ..launch_params("scenario:tool make a file", workdir(&d))
    });
    let approvals = d.wait_approvals(Some(&id), |a| !a.is_empty());
    let approval = &approvals[0];
    let state = d.wait_session(&id, |s| s.status == SessionStatus::WaitingInput);
    assert_eq!(approval.session_id, id);
    assert_eq!(approval.run_id, state.run_id, "the session's own run id");
    assert_eq!(approval.function_name.as_deref(), Some("Write"));
    let call = d.wait_tool_call(&id);
    assert_eq!(approval.tool_use_id, call.tool_id, "HEAD's tool_use_id");
    assert_eq!(call.approval_id.as_deref(), Some(approval.id.as_str()));

    // HEAD's server polls getApproval, sees the decision and lets Claude write the file.
    let reply = decide(&d, &approval.id, "function_call", "approve", None);
    assert!(reply.success, "{reply:?}");
    let ended = d.wait_ended(&id);
    assert_eq!(ended.status, SessionStatus::Completed, "{ended:?}");
    assert!(workdir(&d).join("hello.txt").exists(), "{}", d.log_text());
    assert_eq!(
        get_approval(&d, &approval.id).status,
        ApprovalStatus::Approved
    );
}

#[test]
fn run_id_is_a_run_and_with_a_tool_use_id_may_be_a_session() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (session, run) = finished_session(&d);
    let create = |params: Value| {
        let reply = d.call("createApproval", params);
        let id = reply["result"]["approval_id"].as_str();
        get_approval(&d, id.unwrap_or_else(|| panic!("{reply}")))
    };
    // The older server: the run id, no tool use id.
    let older = create(json!({"run_id": run, "tool_name": "Bash", "tool_input": {}}));
    // HEAD's: the session id, with the tool use id.
    let head = create(
        json!({"run_id": session, "tool_name": "Bash", "tool_input": {},
                             "tool_use_id": "toolu_head"}),
    );
    // A run id with a tool use id is still a run id.
    let both = create(json!({"run_id": run, "tool_name": "Bash", "tool_input": {},
                             "tool_use_id": "toolu_run"}));
    for approval in [&older, &head, &both] {
        assert_eq!(approval.session_id, session);
        assert_eq!(approval.run_id, run);
        assert_eq!(approval.status, ApprovalStatus::Pending);
    }
    assert_eq!(head.tool_use_id.as_deref(), Some("toolu_head"));

    // Without a tool use id a session id is not a run id, as for HEAD's daemon; and an id that
    // names neither is refused either way.
    assert_eq!(
        refused(
            &d,
            json!({"run_id": session, "tool_name": "Bash", "tool_input": {}})
        ),
        format!("session not found for run_id: {session}")
    );
    assert_eq!(
        refused(
            &d,
            json!({"run_id": "nope", "tool_name": "Bash", "tool_input": {}, "tool_use_id": "t"})
        ),
        "session not found for run_id: nope"
    );
}
