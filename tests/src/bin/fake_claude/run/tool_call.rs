//! Tool calls as the CLI runs them: availability, permission rules, the permission step,
//! execution, and the tool_result line.

use serde_json::{json, Value};

use super::ask::print_once_listed;
use super::{mcp_tool_name, Permission, Run, Stop, ToolReport, ToolUse};
use crate::daemon;
use crate::events::{Block, Event, System, User};
use crate::ids;
use crate::mcp::CallError;
use crate::permissions::Verdict;
use crate::tools::{self, ToolOutput};

impl Run {
    /// Runs a tool call the way the CLI does: availability, permission rules, the
    /// permission-prompt tool, execution, and the tool_result line.
    pub fn use_tool(&mut self, call: &ToolUse) -> Result<ToolReport, Stop> {
        self.run_tool(call, Vec::new())
    }

    /// A tool call whose permission is asked before its tool_use line is printed: the line
    /// (after `said`, a text block before it, if any) goes out only once the daemon lists the
    /// approval, as when Claude's stdout reaches the daemon after its permission request did.
    pub fn tool_use_asked_first(
        &mut self,
        said: Option<&str>,
        name: &str,
        input: Value,
    ) -> Result<ToolReport, Stop> {
        self.checkpoint(None)?;
        let mut late =
            Vec::from_iter(said.map(|text| self.assistant(Block::Text { text: text.into() })));
        let call = ToolUse {
            id: ids::tool_use_id(),
            name: name.into(),
            input,
        };
        late.push(self.assistant(Block::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
        }));
        self.run_tool(&call, late)
    }

    /// [`Self::use_tool`]; `late` are the call's lines not printed yet: they are printed once
    /// the approval shows, or before anything else the call prints.
    fn run_tool(&mut self, call: &ToolUse, mut late: Vec<Event>) -> Result<ToolReport, Stop> {
        self.checkpoint(Some(&call.id))?;
        if let Some((server, tool)) = mcp_tool_name(&call.name) {
            if !self.mcp.has_tool(server, tool) {
                self.print_late(&mut late)?;
                return self.tool_result(call, ToolOutput::unavailable(&call.name));
            }
        }
        let input = match self.policy.check(&call.name, &call.input) {
            Verdict::Allow => {
                self.print_late(&mut late)?;
                call.input.clone()
            }
            Verdict::Deny(message) => {
                self.print_late(&mut late)?;
                return self.deny(call, message);
            }
            Verdict::Ask(prompt_tool) => {
                let asked = if prompt_tool == "stdio" {
                    self.ask_stdio(call, &mut late)
                } else {
                    self.ask_permission(call, &prompt_tool, &mut late)
                };
                // An MCP tool allowed keeps its line back through its call.
                let held = matches!(asked, Ok(Permission::Allow(_)))
                    && mcp_tool_name(&call.name).is_some();
                if !held {
                    self.print_late(&mut late)?;
                }
                match asked? {
                    Permission::Allow(input) => input,
                    Permission::Deny(message) => return self.deny(call, message),
                    Permission::Failed(text) => {
                        return self.tool_result(call, ToolOutput::error(text))
                    }
                }
            }
        };
        let output = self.execute(call, input, &mut late);
        self.print_late(&mut late)?;
        self.tool_result(call, output?)
    }

    /// Prints the lines held back, if any.
    fn print_late(&mut self, late: &mut Vec<Event>) -> Result<(), Stop> {
        for line in std::mem::take(late) {
            self.emit(&line)?;
        }
        Ok(())
    }

    /// Prints the tool_result line of `call`.
    pub fn tool_result(&mut self, call: &ToolUse, output: ToolOutput) -> Result<ToolReport, Stop> {
        let report = ToolReport {
            ok: output.is_error != Some(true),
            text: output.text(),
        };
        self.emit(&Event::User(User::tool_result(
            &self.session.id,
            &call.id,
            output.content,
            output.is_error,
            output.tool_use_result,
        )))?;
        Ok(report)
    }

    /// A refused call: listed in `permission_denials`, error tool_result with `message`.
    fn deny(&mut self, call: &ToolUse, message: String) -> Result<ToolReport, Stop> {
        self.denials.push(call.denial());
        self.tool_result(call, ToolOutput::error(message))
    }

    /// An approved plan: the CLI leaves plan mode by itself (a `status` line says so) and
    /// tells the model, as 2.1.197 does.
    fn exit_plan_mode(&mut self, input: &Value) -> Result<ToolOutput, Stop> {
        let mode = "default";
        self.policy.set_mode(mode);
        self.session.permission_mode = mode.into();
        self.emit(&Event::System(System::Status {
            status: None,
            permission_mode: mode.into(),
            uuid: ids::uuid(),
            session_id: self.session.id.clone(),
        }))?;
        let plan = input["plan"].as_str().unwrap_or_default();
        let text = format!(
            "User has approved your plan. You can now start coding. Start with updating your \
             todo list if applicable\n\n## Approved Plan:\n{plan}"
        );
        Ok(ToolOutput {
            content: Value::String(text),
            is_error: None,
            tool_use_result: json!({"plan": plan}),
        })
    }

    /// Executes an allowed call with its (possibly updated) input. `late` are the call's lines
    /// not printed yet: an MCP tool's call prints them once the daemon lists an approval for
    /// it (a question asked by `contact_human`), others at once.
    fn execute(
        &mut self,
        call: &ToolUse,
        input: Value,
        late: &mut Vec<Event>,
    ) -> Result<ToolOutput, Stop> {
        if mcp_tool_name(&call.name).is_none() {
            self.print_late(late)?;
        }
        let cwd = &self.session.cwd;
        let stop = |signal| Stop::from_signal(signal, Some(&call.id));
        Ok(match call.name.as_str() {
            "Write" => tools::write_file(cwd, &input),
            "Edit" => tools::edit_file(cwd, &input),
            "Bash" => tools::bash(cwd, &input, &self.signals).map_err(stop)?,
            "Glob" => tools::glob(cwd),
            "ExitPlanMode" => return self.exit_plan_mode(&input),
            "AskUserQuestion" => tools::answered(&input),
            name => match mcp_tool_name(name) {
                Some((server, tool)) => {
                    let daemon = self.mcp.env(server).and_then(daemon::Peer::from_env);
                    let mut waiting = print_once_listed(&mut self.out, late, daemon, &call.id);
                    let reply = self.mcp.call_tool_while(
                        server,
                        tool,
                        input,
                        &call.id,
                        &self.signals,
                        &mut waiting,
                    );
                    drop(waiting);
                    match reply {
                        Ok(result) => {
                            let content = result.get("content").cloned().unwrap_or(json!([]));
                            ToolOutput {
                                is_error: (result["isError"] == true).then_some(true),
                                tool_use_result: content.clone(),
                                content,
                            }
                        }
                        Err(CallError::Signal(signal)) => return Err(stop(signal)),
                        Err(error) => ToolOutput::error(error.describe()),
                    }
                }
                None => ToolOutput::unavailable(name),
            },
        })
    }
}
