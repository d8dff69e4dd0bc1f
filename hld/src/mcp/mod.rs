//! The `claude_approvals` MCP server: `request_permission` and `contact_human`, each an approval
//! in the daemon answered by a human (claude-code.md §3.2, hld-anchor.md §4.6).

mod approval;
mod stdin;

use std::future::Future;
use std::path::Path;

use hld_client::protocol::{ApprovalStatus, CreateApprovalParams};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::approval::DEFAULT_DENIAL;
use approval::{Daemon, Decision};

/// The name announced in `initialize`.
const SERVER_NAME: &str = "hld-claude-approvals";
const REQUEST_PERMISSION: &str = "request_permission";
const CONTACT_HUMAN: &str = "contact_human";
/// `contact_human` as injected (`approvals`): asking whether Claude may ask is allowed at once.
const OWN_CONTACT_TOOL: &str = "mcp__approvals__contact_human";
/// The `_meta` key under which Claude Code names the `tool_use` id of an MCP tool call.
const TOOL_USE_ID_META: &str = "claudecode/toolUseId";

/// Serves the server on stdin/stdout until the client closes stdin; `socket` is
/// `--daemon-socket`, else the usual resolution (`HUMANLAYER_DAEMON_SOCKET` first).
pub async fn serve_stdio(socket: Option<&Path>) -> Result<(), String> {
    let closed = CancellationToken::new();
    let server = ApprovalsServer {
        daemon: Daemon::from_env(socket),
        closed: closed.clone(),
    };
    let transport = (
        stdin::WatchedStdin::new(closed.clone()),
        tokio::io::stdout(),
    );
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // The client went away before the handshake: nothing to serve.
        Err(_) if closed.is_cancelled() => return Ok(()),
        Err(e) => return Err(format!("MCP handshake failed: {e}")),
    };
    running
        .waiting()
        .await
        .map_err(|e| format!("the MCP server task failed: {e}"))?;
    Ok(())
}

/// The MCP handler. Each tool call runs in its own task; `closed` ends the waits in flight
/// when stdin closes, so the process exits at once, not after rmcp's drain timeout.
struct ApprovalsServer {
    daemon: Daemon,
    closed: CancellationToken,
}

impl ServerHandler for ApprovalsServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = context
            .meta
            .get(TOOL_USE_ID_META)
            .and_then(Value::as_str)
            .map(str::to_owned);
        let arguments = request.arguments.unwrap_or_default();
        let stop = stopped(context.ct, self.closed.clone());
        let result = match request.name.as_ref() {
            REQUEST_PERMISSION => self.request_permission(&arguments, call, stop).await,
            CONTACT_HUMAN => self.contact_human(&arguments, call, stop).await,
            other => Err(ErrorData::invalid_params(
                format!("unknown tool: {other}"),
                Some(json!({"tools": [REQUEST_PERMISSION, CONTACT_HUMAN]})),
            )),
        };
        result.map(Into::into)
    }
}

impl ApprovalsServer {
    /// `call` is the `tool_use` id Claude Code names in the request's `_meta`: that of the tool
    /// call asked about, used when the `tool_use_id` argument is absent.
    async fn request_permission(
        &self,
        arguments: &JsonObject,
        call: Option<String>,
        stop: impl Future<Output = ()>,
    ) -> Result<CallToolResult, ErrorData> {
        let tool_name = required_string(arguments, "tool_name")?;
        let input = match arguments.get("input") {
            Some(Value::Object(input)) => Value::Object(input.clone()),
            Some(_) => return Err(invalid_argument("input", "an object")),
            None => return Err(invalid_argument("input", "required")),
        };
        let tool_use_id = match arguments.get("tool_use_id") {
            None | Some(Value::Null) => call,
            Some(Value::String(id)) => Some(id.clone()),
            Some(_) => return Err(invalid_argument("tool_use_id", "a string")),
        };
        if tool_name == OWN_CONTACT_TOOL {
            return Ok(text_result(allow(input)));
        }
        let params = CreateApprovalParams {
            kind: Some("function_call".into()),
            tool_name: Some(tool_name),
            tool_input: Some(input.clone()),
            tool_use_id,
            ..Default::default()
        };
        let reply = match self.daemon.ask(params, stop).await {
            Ok(Decision {
                status: ApprovalStatus::Approved,
                ..
            }) => allow(input),
            Ok(Decision { comment, .. }) => {
                deny(comment.filter(|c| !c.trim().is_empty()).as_deref())
            }
            Err(failure) => {
                eprintln!("hld mcp: {failure}");
                deny(Some(&format!("Denied: {failure}")))
            }
        };
        Ok(text_result(reply))
    }

    /// `call` is the `tool_use` id of this `contact_human` call, from the request's `_meta`:
    /// the question is tied to the tool call that asks it, as a permission request is.
    async fn contact_human(
        &self,
        arguments: &JsonObject,
        call: Option<String>,
        stop: impl Future<Output = ()>,
    ) -> Result<CallToolResult, ErrorData> {
        let message = required_string(arguments, "message")?;
        let params = CreateApprovalParams {
            kind: Some("human_contact".into()),
            message: Some(message),
            tool_use_id: call,
            ..Default::default()
        };
        Ok(match self.daemon.ask(params, stop).await {
            Ok(decision) => text_result(decision.comment.unwrap_or_default()),
            Err(failure) => {
                eprintln!("hld mcp: {failure}");
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "No answer from a human: {failure}"
                ))])
            }
        })
    }
}

/// Resolves when a call should stop waiting: the client cancelled it, or closed stdin.
async fn stopped(call: CancellationToken, closed: CancellationToken) {
    tokio::select! {
        _ = call.cancelled() => {}
        _ = closed.cancelled() => {}
    }
}

/// The tools, with the input schemas Claude Code expects.
fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            REQUEST_PERMISSION,
            "Request permission to perform an action. A human approves or denies it through \
             the hld daemon.",
            schema(json!({
                "type": "object",
                "properties": {
                    "tool_name": {"type": "string", "description": "The tool Claude wants to use"},
                    "input": {"type": "object", "description": "Its input"},
                    "tool_use_id": {"type": "string", "description": "The tool_use id"},
                },
                "required": ["tool_name", "input"],
            })),
        ),
        Tool::new(
            CONTACT_HUMAN,
            "Ask the human a question and wait for the answer.",
            schema(json!({
                "type": "object",
                "properties": {
                    "message": {"type": "string", "description": "The question"},
                },
                "required": ["message"],
            })),
        ),
    ]
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => unreachable!("schemas are written as objects"),
    }
}

fn required_string(arguments: &JsonObject, key: &str) -> Result<String, ErrorData> {
    match arguments.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(_) => Err(invalid_argument(key, "a non-empty string")),
        None => Err(invalid_argument(key, "required")),
    }
}

fn invalid_argument(key: &str, expected: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("invalid arguments: {key} must be {expected}"),
        Some(json!({"field": key, "expected": expected})),
    )
}

/// `{"behavior":"allow","updatedInput":<input>}`: the input unchanged.
fn allow(input: Value) -> String {
    json!({"behavior": "allow", "updatedInput": input}).to_string()
}

/// `{"behavior":"deny","message":<reason>}`.
fn deny(reason: Option<&str>) -> String {
    json!({"behavior": "deny", "message": reason.unwrap_or(DEFAULT_DENIAL)}).to_string()
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}
