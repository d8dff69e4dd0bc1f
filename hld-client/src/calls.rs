//! The typed calls, written once for both clients: `typed_calls!(async)` inside the async
//! [`crate::Client`]'s `impl`, `typed_calls!(blocking)` inside the blocking one's. Each client
//! supplies `call_raw`; everything above it is here, with its documentation and examples.

use crate::error::Error;
use crate::protocol::{RefusalReason, SendDecisionResult};

/// The outcome of a decision on `approval_id`: a reply of `success: false` is
/// [`Error::Refused`] with the daemon's reason.
pub(crate) fn decided(approval_id: &str, result: SendDecisionResult) -> Result<(), Error> {
    if result.success {
        return Ok(());
    }
    let reason = result.reason.unwrap_or(RefusalReason::Unknown);
    Err(Error::Refused {
        approval_id: approval_id.to_owned(),
        reason,
        message: result
            .error
            .unwrap_or_else(|| format!("the daemon did not record the decision on {approval_id}")),
    })
}

/// A doc example for one client: `example!([client fn await] ["use …;\n" …] "code" ^ "code" …)`,
/// where `^` stands for that client's `.await` (nothing for the blocking one). The code runs
/// in a function returning `Result<(), hld_client::Error>`, after `let client = …?;`.
macro_rules! example {
    ([$client:literal $fn:literal $aw:literal] [$($uses:literal)*] $($piece:tt)*) => {
        example!(@ [$client $fn $aw] [$($uses)*] [] $($piece)*)
    };
    (@ [$client:literal $fn:literal $aw:literal] $uses:tt [$($out:tt)*] ^ $($rest:tt)*) => {
        example!(@ [$client $fn $aw] $uses [$($out)* $aw] $($rest)*)
    };
    (@ $head:tt $uses:tt [$($out:tt)*] $piece:literal $($rest:tt)*) => {
        example!(@ $head $uses [$($out)* $piece] $($rest)*)
    };
    (@ [$client:literal $fn:literal $aw:literal] $uses:tt [$($out:tt)*]) => {
        concat!(
            "```no_run\n",
            example!(@uses $uses),
            "# ",
            $fn,
            " demo() -> Result<(), hld_client::Error> {\nlet client = ",
            $client,
            "::connect_default()",
            $aw,
            "?;\n",
            $($out,)*
            "\n# Ok(())\n# }\n```"
        )
    };
    // The `use` lines, and a blank line after them.
    (@uses []) => {
        ""
    };
    (@uses [$($uses:literal)+]) => {
        concat!($($uses,)+ "\n")
    };
}

macro_rules! typed_calls {
    (async) => {
        typed_calls!(@ [async] [.await] ["hld_client::Client" "async fn" ".await"]);
    };
    (blocking) => {
        typed_calls!(@ [] [] ["hld_client::blocking::Client" "fn" ""]);
    };
    (@ [$($async:tt)*] [$($await:tt)*] [$($ex:tt)*]) => {
        /// Calls method `M` with its typed params and decodes its typed result: any method of
        /// [`crate::protocol`], including those without a helper here.
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::{UpdateSessionTitle, UpdateSessionTitleParams};\n"]
            "let reply = client\n"
            "    .call::<UpdateSessionTitle>(UpdateSessionTitleParams {\n"
            "        session_id: \"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\".into(),\n"
            "        title: \"Parser fix\".into(),\n"
            "    })" ^ "?;\n"
            "assert!(reply.success);")]
        pub $($async)* fn call<M: Method>(&self, params: M::Params) -> Result<M::Result, Error> {
            let value = self.call_raw(M::NAME, serde_json::to_value(params)?)$($await)*?;
            Ok(serde_json::from_value(value)?)
        }

        /// [`Health`]: whether the daemon serves, its version, and what it can run.
        ///
        #[doc = example!([$($ex)*] []
            "let health = client.health()" ^ "?;\n"
            "println!(\"daemon {} is {}\", health.version, health.status);")]
        pub $($async)* fn health(&self) -> Result<HealthResult, Error> {
            self.call::<Health>(NoParams {})$($await)*
        }

        /// [`LaunchSession`]: starts a Claude Code session and returns its ids once the
        /// process runs. To watch it too, see `Client::launch_and_follow`.
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::LaunchSessionParams;\n"]
            "let launched = client\n"
            "    .launch_session(LaunchSessionParams {\n"
            "        query: \"Fix the failing test in src/lib.rs\".into(),\n"
            "        working_dir: Some(\"~/src/app\".into()),\n"
            "        ..Default::default()\n"
            "    })" ^ "?;\n"
            "println!(\"session {} (run {})\", launched.session_id, launched.run_id);")]
        pub $($async)* fn launch_session(
            &self,
            params: LaunchSessionParams,
        ) -> Result<LaunchSessionResult, Error> {
            self.call::<LaunchSession>(params)$($await)*
        }

        /// [`ListSessions`]: every session, newest activity first.
        ///
        #[doc = example!([$($ex)*] []
            "for session in client.list_sessions()" ^ "? {\n"
            "    println!(\"{} {} {}\", session.id, session.status, session.summary);\n"
            "}")]
        pub $($async)* fn list_sessions(&self) -> Result<Vec<SessionInfo>, Error> {
            Ok(self.call::<ListSessions>(NoParams {})$($await)*?.sessions)
        }

        /// [`GetSessionState`]: one session's details, with its exact status.
        ///
        #[doc = example!([$($ex)*] []
            "let session = client.get_session_state(\"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\")" ^ "?;\n"
            "if !session.status.is_active() {\n"
            "    println!(\"ended {}: {:?}\", session.status, session.result_content);\n"
            "}")]
        pub $($async)* fn get_session_state(&self, session_id: &str) -> Result<SessionState, Error> {
            let params = SessionIdParams {
                session_id: session_id.to_owned(),
            };
            Ok(self.call::<GetSessionState>(params)$($await)*?.session)
        }

        /// [`GetConversation`]: stored conversation events, oldest first, a page at a time
        /// (`after_sequence` is the `sequence` of the last event received).
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::GetConversationParams;\n"]
            "let mut after_sequence = None;\n"
            "loop {\n"
            "    let page = client\n"
            "        .get_conversation(GetConversationParams {\n"
            "            session_id: Some(\"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\".into()),\n"
            "            after_sequence,\n"
            "            limit: Some(100),\n"
            "            ..Default::default()\n"
            "        })" ^ "?;\n"
            "    for event in &page {\n"
            "        println!(\"{} {}\", event.sequence, event.event_type.as_str());\n"
            "    }\n"
            "    match page.last() {\n"
            "        Some(last) if page.len() == 100 => after_sequence = Some(last.sequence),\n"
            "        _ => break,\n"
            "    }\n"
            "}")]
        pub $($async)* fn get_conversation(
            &self,
            params: GetConversationParams,
        ) -> Result<Vec<ConversationEvent>, Error> {
            Ok(self.call::<GetConversation>(params)$($await)*?.events)
        }

        /// [`ContinueSession`]: a new session that forks a session's Claude conversation with
        /// a new query.
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::ContinueSessionParams;\n"]
            "let next = client\n"
            "    .continue_session(ContinueSessionParams {\n"
            "        session_id: \"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\".into(),\n"
            "        query: \"Now add a regression test for it\".into(),\n"
            "        ..Default::default()\n"
            "    })" ^ "?;\n"
            "println!(\"continued as {}\", next.session_id);")]
        pub $($async)* fn continue_session(
            &self,
            params: ContinueSessionParams,
        ) -> Result<ContinueSessionResult, Error> {
            self.call::<ContinueSession>(params)$($await)*
        }

        /// [`InterruptSession`]: stops a running session; it moves to `completing`, then to
        /// `completed` with `interrupted: true`.
        ///
        #[doc = example!([$($ex)*] []
            "let reply = client.interrupt_session(\"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\")" ^ "?;\n"
            "println!(\"{}\", reply.message);")]
        pub $($async)* fn interrupt_session(
            &self,
            session_id: &str,
        ) -> Result<InterruptSessionResult, Error> {
            let params = SessionIdParams {
                session_id: session_id.to_owned(),
            };
            self.call::<InterruptSession>(params)$($await)*
        }

        /// [`FetchApprovals`]: the approvals waiting for a human, of every session or of one.
        ///
        #[doc = example!([$($ex)*] []
            "for approval in client.fetch_approvals(None)" ^ "? {\n"
            "    println!(\"{} {} {:?}\", approval.id, approval.kind.as_str(), approval.function_name);\n"
            "}")]
        pub $($async)* fn fetch_approvals(
            &self,
            session_id: Option<&str>,
        ) -> Result<Vec<Approval>, Error> {
            let params = FetchApprovalsParams {
                session_id: session_id.map(str::to_owned),
            };
            Ok(self.call::<FetchApprovals>(params)$($await)*?.approvals)
        }

        /// [`SendDecision`] as sent: a refusal is a reply with `success: false`, not an error.
        /// [`approve`](Self::approve), [`deny`](Self::deny) and [`respond`](Self::respond)
        /// build the params and turn a refusal into [`Error::Refused`].
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::SendDecisionParams;\n"]
            "let reply = client\n"
            "    .send_decision(SendDecisionParams {\n"
            "        call_id: Some(\"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35\".into()),\n"
            "        kind: Some(\"function_call\".into()),\n"
            "        decision: Some(\"approve\".into()),\n"
            "        comment: None,\n"
            "    })" ^ "?;\n"
            "if !reply.success {\n"
            "    eprintln!(\"refused ({:?}): {:?}\", reply.reason, reply.error);\n"
            "}")]
        pub $($async)* fn send_decision(
            &self,
            params: SendDecisionParams,
        ) -> Result<SendDecisionResult, Error> {
            self.call::<SendDecision>(params)$($await)*
        }

        /// Approves tool call `approval_id`. When the daemon does not record it, the error is
        /// [`Error::Refused`] with the reason: [`RefusalReason::NotFound`],
        /// [`RefusalReason::AlreadyDecided`], [`RefusalReason::Resolved`] (its session ended,
        /// or it was answered elsewhere), [`RefusalReason::WrongType`] (a question), or
        /// [`RefusalReason::Failed`] (it may be sent again).
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::RefusalReason;\n" "use hld_client::Error;\n"]
            "match client.approve(\"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35\")" ^ " {\n"
            "    Ok(()) => println!(\"approved\"),\n"
            "    Err(Error::Refused { reason: RefusalReason::AlreadyDecided, .. }) => {\n"
            "        println!(\"someone was quicker\")\n"
            "    }\n"
            "    Err(e) => return Err(e),\n"
            "}")]
        pub $($async)* fn approve(&self, approval_id: &str) -> Result<(), Error> {
            let params = SendDecisionParams {
                call_id: Some(approval_id.to_owned()),
                kind: Some(ApprovalType::FunctionCall.as_str().to_owned()),
                decision: Some("approve".to_owned()),
                comment: None,
            };
            $crate::calls::decided(approval_id, self.send_decision(params)$($await)*?)
        }

        /// Denies tool call `approval_id`, telling Claude `reason`; without one (or with a
        /// blank one) Claude is told [`NO_REASON`](crate::protocol::NO_REASON), as the daemon
        /// needs a comment. Refusals as for [`approve`](Self::approve).
        ///
        #[doc = example!([$($ex)*] []
            "client.deny(\"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35\", Some(\"Run only the parser tests\"))" ^ "?;")]
        pub $($async)* fn deny(&self, approval_id: &str, reason: Option<&str>) -> Result<(), Error> {
            let reason = reason
                .filter(|r| !r.trim().is_empty())
                .unwrap_or($crate::protocol::NO_REASON);
            let params = SendDecisionParams {
                call_id: Some(approval_id.to_owned()),
                kind: Some(ApprovalType::FunctionCall.as_str().to_owned()),
                decision: Some("deny".to_owned()),
                comment: Some(reason.to_owned()),
            };
            $crate::calls::decided(approval_id, self.send_decision(params)$($await)*?)
        }

        /// Answers question `approval_id` (a human contact) with `text`. Refusals as for
        /// [`approve`](Self::approve); asking it of a tool call is
        /// [`RefusalReason::WrongType`].
        ///
        #[doc = example!([$($ex)*] []
            "client.respond(\"local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54\", \"staging\")" ^ "?;")]
        pub $($async)* fn respond(&self, approval_id: &str, text: &str) -> Result<(), Error> {
            let params = SendDecisionParams {
                call_id: Some(approval_id.to_owned()),
                kind: Some(ApprovalType::HumanContact.as_str().to_owned()),
                decision: Some("respond".to_owned()),
                comment: Some(text.to_owned()),
            };
            $crate::calls::decided(approval_id, self.send_decision(params)$($await)*?)
        }

        /// [`CreateApproval`]: records a request for a human decision on a session's behalf,
        /// as the approvals MCP server a session runs does.
        ///
        #[doc = example!([$($ex)*] ["use hld_client::protocol::CreateApprovalParams;\n"]
            "let created = client\n"
            "    .create_approval(CreateApprovalParams {\n"
            "        session_id: Some(\"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13\".into()),\n"
            "        tool_name: Some(\"Bash\".into()),\n"
            "        tool_input: Some(serde_json::json!({\"command\": \"cargo test\"})),\n"
            "        ..Default::default()\n"
            "    })" ^ "?;\n"
            "println!(\"waiting on {}\", created.approval_id);")]
        pub $($async)* fn create_approval(
            &self,
            params: CreateApprovalParams,
        ) -> Result<CreateApprovalResult, Error> {
            self.call::<CreateApproval>(params)$($await)*
        }

        /// [`GetApproval`]: one approval, pending or decided.
        ///
        #[doc = example!([$($ex)*] []
            "let approval = client.get_approval(\"local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35\")" ^ "?;\n"
            "println!(\"{} is {}\", approval.id, approval.status.as_str());")]
        pub $($async)* fn get_approval(&self, approval_id: &str) -> Result<Approval, Error> {
            let params = GetApprovalParams {
                approval_id: approval_id.to_owned(),
            };
            Ok(self.call::<GetApproval>(params)$($await)*?.approval)
        }

        /// [`Initialize`]: the daemon's name, version and protocol.
        ///
        #[doc = example!([$($ex)*] []
            "let hello = client.initialize()" ^ "?;\n"
            "println!(\"{hello:?}\");")]
        pub $($async)* fn initialize(&self) -> Result<InitializeResult, Error> {
            self.call::<Initialize>(NoParams {})$($await)*
        }

        /// [`Version`]: the daemon's version.
        ///
        #[doc = example!([$($ex)*] []
            "println!(\"hld {}\", client.version()" ^ "?.version);")]
        pub $($async)* fn version(&self) -> Result<VersionResult, Error> {
            self.call::<Version>(NoParams {})$($await)*
        }

        /// [`ListMethods`]: every method the daemon serves, with a line each.
        ///
        #[doc = example!([$($ex)*] []
            "for method in client.list_methods()" ^ "? {\n"
            "    println!(\"{}: {}\", method.name, method.description);\n"
            "}")]
        pub $($async)* fn list_methods(&self) -> Result<Vec<MethodSummary>, Error> {
            self.call::<ListMethods>(NoParams {})$($await)*
        }

        /// [`DescribeMethods`]: every method with its params and result.
        ///
        #[doc = example!([$($ex)*] []
            "for method in client.describe_methods()" ^ "? {\n"
            "    println!(\"{}({}) -> {}\", method.name, method.params.join(\", \"), method.returns);\n"
            "}")]
        pub $($async)* fn describe_methods(&self) -> Result<Vec<MethodDescription>, Error> {
            self.call::<DescribeMethods>(NoParams {})$($await)*
        }

        /// [`SetLogLevel`]: changes the daemon's log level (`debug`, `info`, `warn`, `error`)
        /// until it restarts.
        ///
        #[doc = example!([$($ex)*] []
            "client.set_log_level(\"debug\")" ^ "?;")]
        pub $($async)* fn set_log_level(&self, level: &str) -> Result<SetLogLevelResult, Error> {
            let params = SetLogLevelParams {
                level: level.to_owned(),
            };
            self.call::<SetLogLevel>(params)$($await)*
        }

        /// [`Shutdown`]: asks the daemon to stop; running sessions are interrupted first.
        ///
        #[doc = example!([$($ex)*] []
            "client.shutdown()" ^ "?;")]
        pub $($async)* fn shutdown(&self) -> Result<ShutdownResult, Error> {
            self.call::<Shutdown>(NoParams {})$($await)*
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_decision_is_ok() {
        let result = SendDecisionResult {
            success: true,
            error: None,
            reason: None,
        };
        assert!(decided("local-1", result).is_ok());
    }

    #[test]
    fn a_refusal_is_an_error_with_the_daemons_reason_and_message() {
        let result: SendDecisionResult = serde_json::from_value(serde_json::json!({
            "success": false,
            "error": "approval local-1 was already decided: approved",
            "reason": "already_decided"
        }))
        .unwrap();
        let err = decided("local-1", result).unwrap_err();
        assert_eq!(err.refusal(), Some(RefusalReason::AlreadyDecided));
        assert_eq!(
            err.to_string(),
            "approval local-1 was already decided: approved"
        );
        let Error::Refused { approval_id, .. } = err else {
            panic!("expected a refusal, got {err:?}");
        };
        assert_eq!(approval_id, "local-1");
    }

    /// The Go daemon refuses with `error` alone; a newer one may give a reason this version
    /// does not know.
    #[test]
    fn a_refusal_without_a_known_reason_is_unknown() {
        for reply in [
            serde_json::json!({"success": false, "error": "nope"}),
            serde_json::json!({"success": false, "error": "nope", "reason": "rate_limited"}),
        ] {
            let result: SendDecisionResult = serde_json::from_value(reply).unwrap();
            let err = decided("local-1", result).unwrap_err();
            assert_eq!(err.refusal(), Some(RefusalReason::Unknown));
        }
    }
}
