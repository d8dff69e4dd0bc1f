//! Unit tests of `stream`.

use super::*;
use serde_json::json;

fn event(line: &str) -> AgentEvent {
    parse_line(line).event
}

#[test]
fn system_lines_read_as_init_or_other() {
    let init = parse_line(r#"{"type":"system","subtype":"init","session_id":"S","model":"m"}"#);
    assert_eq!(init.session_id.as_deref(), Some("S"));
    let AgentEvent::System(System::Init(init)) = init.event else {
        panic!("init")
    };
    assert_eq!(init.model.as_deref(), Some("m"));

    assert_eq!(
        event(r#"{"type":"system","subtype":"thinking_tokens","session_id":"S"}"#),
        AgentEvent::System(System::Other)
    );
}

#[test]
fn odd_lines_are_malformed_or_unknown_never_an_error() {
    for line in [
        "",
        "not json",
        r#"{"type":"assistant""#,
        "[1,2]",
        "null",
        "\"s\"",
    ] {
        assert!(matches!(event(line), AgentEvent::Malformed(_)), "{line}");
    }
    assert_eq!(event("{}"), AgentEvent::Unknown { kind: None });
    assert_eq!(event(r#"{"type":5}"#), AgentEvent::Unknown { kind: None });
    let stream = parse_line(r#"{"type":"stream_event","session_id":"S"}"#);
    assert_eq!(
        stream.event,
        AgentEvent::Unknown {
            kind: Some("stream_event".into())
        }
    );
    assert_eq!(stream.session_id.as_deref(), Some("S"));
    // Fields of the wrong type read as absent.
    let AgentEvent::Assistant(msg) = event(r#"{"type":"assistant","message":"oops"}"#) else {
        panic!("assistant")
    };
    assert!(msg.message.content.is_empty());
    let AgentEvent::User(msg) = event(r#"{"type":"user","message":{"content":{"weird":true}}}"#)
    else {
        panic!("user")
    };
    assert!(msg.message.content.is_empty());
}

#[test]
fn results_read_leniently() {
    let AgentEvent::Result(old) = event(
        r#"{"type":"result","subtype":"success","cost_usd":0.5,"is_error":false,"num_turns":2.0,"duration_ms":"slow"}"#,
    ) else {
        panic!("result")
    };
    assert_eq!(old.cost(), Some(0.5));
    assert_eq!(old.num_turns, Some(2));
    assert_eq!(old.duration_ms, None);
    assert_eq!(old.error_message(), None);
    let AgentEvent::Result(max) = event(
        r#"{"type":"result","subtype":"error_max_turns","total_cost_usd":0.1,"cost_usd":9,"errors":["a","b"]}"#,
    ) else {
        panic!("result")
    };
    assert!(max.is_error(), "absent is_error on an error_* subtype");
    assert_eq!(max.cost(), Some(0.1));
    assert_eq!(max.error_message().as_deref(), Some("a; b"));
}

#[test]
fn an_api_retry_without_a_status_says_the_error_and_the_delay() {
    let AgentEvent::System(System::ApiRetry(offline)) = event(
        r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":512,"error_status":null,"error":"unknown"}"#,
    ) else {
        panic!("api_retry")
    };
    assert_eq!(
        offline.describe(),
        "API error (unknown), retrying (1/1) in 0.5 s"
    );
}

#[test]
fn tool_results_render_as_text() {
    assert_eq!(render_tool_result(&Value::Null), None);
    assert_eq!(render_tool_result(&json!("x")).as_deref(), Some("x"));
    assert_eq!(render_tool_result(&json!([])).as_deref(), Some(""));
    assert_eq!(
        render_tool_result(&json!([{"type": "document"}, "raw", {"no": "type"}])).as_deref(),
        Some("[document]\nraw\n{\"no\":\"type\"}")
    );
    assert_eq!(
        render_tool_result(&json!({"a": 1})).as_deref(),
        Some("{\"a\":1}")
    );
}

#[test]
fn control_lines_read_as_requests_and_cancellations() {
    use crate::claude::control::{
        CanUseTool, Control, ControlCancel, ControlRequest, ControlResponse, Request,
    };
    let can_use = r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","display_name":"Write","input":{"file_path":"/x"},"tool_use_id":"toolu_1"}}"#;
    assert_eq!(
        event(can_use),
        AgentEvent::Control(Control::Request(ControlRequest {
            request_id: "r1".into(),
            request: Request::CanUseTool(CanUseTool {
                tool_name: "Write".into(),
                input: json!({"file_path": "/x"}),
                tool_use_id: Some("toolu_1".into()),
            }),
        }))
    );
    let other =
        r#"{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback"}}"#;
    assert!(matches!(
        event(other),
        AgentEvent::Control(Control::Request(ControlRequest {
            request: Request::Other,
            ..
        }))
    ));
    assert_eq!(
        event(r#"{"type":"control_cancel_request","request_id":"r1"}"#),
        AgentEvent::Control(Control::Cancel(ControlCancel {
            request_id: "r1".into()
        }))
    );
    let answered = |outcome| {
        AgentEvent::ControlResponse(ControlResponse {
            request_id: "i1".into(),
            outcome,
        })
    };
    let bare = r#"{"type":"control_response","response":{"subtype":"success","request_id":"i1"}}"#;
    assert_eq!(event(bare), answered(Ok(Value::Null)));
    let mode = r#"{"type":"control_response","response":{"subtype":"success","request_id":"i1","response":{"mode":"plan"}}}"#;
    assert_eq!(event(mode), answered(Ok(json!({"mode": "plan"}))));
    let error = r#"{"type":"control_response","response":{"subtype":"error","request_id":"i1","error":"Unsupported control request subtype: compact"}}"#;
    assert_eq!(
        event(error),
        answered(Err("Unsupported control request subtype: compact".into()))
    );
}
