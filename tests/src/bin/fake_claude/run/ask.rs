//! The permission step of a tool call: asking the `--permission-prompt-tool` over MCP
//! (claude-code.md §3.2) or, with `--permission-prompt-tool stdio`, with a `can_use_tool`
//! control request on stdout answered on stdin (§3.3).

use serde_json::json;

use super::{mcp_tool_name, Permission, Run, Stop, ToolUse};
use crate::control::{self, CanUseTool};
use crate::daemon;
use crate::events::Event;
use crate::input::Inbox;
use crate::mcp::CallError;
use crate::output::Output;
use crate::permissions::{first_text, Reply};
use crate::signals::{Signal, POLL};
use crate::tools::ToolOutput;

/// The denial of a `can_use_tool` request left unanswered when stdin closes.
const STREAM_CLOSED: &str =
    "Tool permission request failed: Error: Tool permission stream closed before response received";

/// What to do while an MCP call about tool use `call_id` is awaited: print `late` (the call's
/// lines held back) once `daemon` lists an approval for that tool use.
pub(super) fn print_once_listed<'a>(
    out: &'a mut Output,
    late: &'a mut Vec<Event>,
    daemon: Option<daemon::Peer>,
    call_id: &'a str,
) -> impl FnMut() + 'a {
    move || {
        if let (false, Some(daemon)) = (late.is_empty(), daemon.as_ref()) {
            if daemon.lists_approval(call_id) {
                for line in late.drain(..) {
                    let _ = out.emit(&line);
                }
            }
        }
    }
}

/// The tool_result text of a failed permission step.
fn call_error(tool: &str, text: &str) -> String {
    format!("<tool_use_error>Error calling tool ({tool}): {text}</tool_use_error>")
}

impl Run {
    /// Asks the `--permission-prompt-tool` about `call` (claude-code.md §3.2), waiting for
    /// as long as it takes unless a signal arrives. `late` (the call's lines, not
    /// printed yet) is printed as soon as the daemon lists the approval.
    pub(super) fn ask_permission(
        &mut self,
        call: &ToolUse,
        prompt_tool: &str,
        late: &mut Vec<Event>,
    ) -> Result<Permission, Stop> {
        let call_error = |text: &str| call_error(&call.name, text);
        let target = mcp_tool_name(prompt_tool).filter(|(s, t)| self.mcp.has_tool(s, t));
        let Some((server, tool)) = target else {
            let available = self.mcp.tool_names();
            let message = format!(
                "Error: MCP tool {prompt_tool} (passed via --permission-prompt-tool) not found. \
                 Available MCP tools: {}",
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            );
            eprintln!("{message}");
            self.exit_code = 1;
            return Ok(Permission::Failed(call_error(&message)));
        };
        let arguments =
            json!({"tool_name": call.name, "input": call.input, "tool_use_id": call.id});
        let daemon = self.mcp.env(server).and_then(daemon::Peer::from_env);
        let mut waiting = print_once_listed(&mut self.out, late, daemon, &call.id);
        if let Err(error) = crate::record::permission_asked(&call.id) {
            eprintln!("fake-claude: cannot write the ask log: {error}");
        }
        let reply = self.mcp.call_tool_while(
            server,
            tool,
            arguments,
            &call.id,
            &self.signals,
            &mut waiting,
        );
        drop(waiting);
        let result = match reply {
            Ok(result) => result,
            Err(CallError::Signal(signal @ (Signal::Interrupt | Signal::Requested))) => {
                self.denials.push(call.denial());
                return Err(Stop::from_signal(signal, Some(&call.id)));
            }
            Err(CallError::Signal(Signal::Fatal(code))) => {
                // The real CLI reports the MCP connection closing under it, then exits.
                let closed = ToolOutput::error(call_error(&CallError::Closed.describe()));
                let _ = self.tool_result(call, closed);
                return Err(Stop::Killed(code));
            }
            Err(error) => return Ok(Permission::Failed(call_error(&error.describe()))),
        };
        if result["isError"] == true {
            let text = first_text(&result).unwrap_or_default();
            return Ok(Permission::Failed(call_error(&text)));
        }
        self.permission(call, Reply::parse(&result))
    }

    /// What the prompt tool's `reply` means for `call`.
    fn permission(&mut self, call: &ToolUse, reply: Reply) -> Result<Permission, Stop> {
        match reply {
            Reply::Allow(input) => Ok(Permission::Allow(input)),
            Reply::Deny {
                message,
                interrupt: false,
            } => Ok(Permission::Deny(message)),
            Reply::Deny {
                interrupt: true, ..
            } => {
                self.denials.push(call.denial());
                Err(Stop::Interrupted {
                    tool_use_id: Some(call.id.clone()),
                    by_sigint: false,
                })
            }
            Reply::Invalid => Ok(Permission::Failed(call_error(
                &call.name,
                "invalid permission response",
            ))),
        }
    }

    /// Asks the SDK host with a `can_use_tool` control request and waits for its
    /// `control_response` on stdin, unless a signal or an `interrupt` request comes first;
    /// if stdin closes first, the call is denied.
    /// `late` (the call's lines, not printed yet) follows the request.
    pub(super) fn ask_stdio(
        &mut self,
        call: &ToolUse,
        late: &mut Vec<Event>,
    ) -> Result<Permission, Stop> {
        let request_id = crate::ids::uuid();
        if let Err(error) = crate::record::permission_asked(&call.id) {
            eprintln!("fake-claude: cannot write the ask log: {error}");
        }
        self.emit(&Event::ControlRequest(control::Request {
            request_id: request_id.clone(),
            request: CanUseTool::new(&self.session.cwd, &call.name, &call.input, &call.id),
        }))?;
        for line in std::mem::take(late) {
            self.emit(&line)?;
        }
        self.asking = Some((request_id.clone(), call.denial()));
        let answer = loop {
            match self.read_inbox(Some(POLL), Some(&call.id)) {
                Ok(Some(response)) if response["request_id"] == request_id.as_str() => {
                    break response
                }
                Ok(_) if self.inbox.as_ref().is_some_and(Inbox::is_closed) => {
                    self.asking = None;
                    return Ok(Permission::Deny(STREAM_CLOSED.into()));
                }
                Ok(_) => {}
                Err(stop) => {
                    self.asking = None;
                    return Err(stop);
                }
            }
            match self.signals.pending() {
                Some(Signal::Interrupt) => {
                    self.asking = None;
                    self.denials.push(call.denial());
                    return Err(Stop::from_signal(Signal::Interrupt, Some(&call.id)));
                }
                Some(Signal::Fatal(code)) => return Err(Stop::Killed(code)),
                Some(Signal::Requested) | None => {}
            }
        };
        self.asking = None;
        if answer["subtype"] == "success" {
            self.permission(call, Reply::from_value(&answer["response"]))
        } else {
            let error = answer["error"]
                .as_str()
                .unwrap_or("permission request failed");
            Ok(Permission::Failed(call_error(&call.name, error)))
        }
    }
}
