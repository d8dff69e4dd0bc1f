//! The typed calls of [`Client`], one per method of [`crate::protocol`] that has a helper,
//! each with an example; [`Client::call_raw`] underneath them all.

use crate::error::Error;
use crate::protocol::*;
use crate::Client;

mod conversation;
mod cost;
mod course;

impl Client {
    /// Calls method `M` with its typed params and decodes its typed result: any method of
    /// [`crate::protocol`], including those without a helper here.
    ///
    /// ```no_run
    /// use hld_client::protocol::{UpdateSessionTitle, UpdateSessionTitleParams};
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let reply = client
    ///     .call::<UpdateSessionTitle>(UpdateSessionTitleParams {
    ///         session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
    ///         title: "Parser fix".into(),
    ///     })
    ///     .await?;
    /// assert!(reply.success);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call<M: Method>(&self, params: M::Params) -> Result<M::Result, Error> {
        let value = self
            .call_raw(M::NAME, serde_json::to_value(params)?)
            .await?;
        Ok(serde_json::from_value(value)?)
    }

    /// [`Health`]: whether the daemon serves, its version, and what it can run.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let health = client.health().await?;
    /// println!("daemon {} is {}", health.version, health.status);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn health(&self) -> Result<HealthResult, Error> {
        self.call::<Health>(NoParams {}).await
    }

    /// [`LaunchSession`]: starts a Claude Code session and returns its ids once the
    /// process runs. To watch it too, see `Client::launch_and_follow`.
    ///
    /// ```no_run
    /// use hld_client::protocol::LaunchSessionParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let launched = client
    ///     .launch_session(LaunchSessionParams {
    ///         query: "Fix the failing test in src/lib.rs".into(),
    ///         working_dir: Some("~/src/app".into()),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// println!("session {} (run {})", launched.session_id, launched.run_id);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn launch_session(
        &self,
        params: LaunchSessionParams,
    ) -> Result<LaunchSessionResult, Error> {
        self.call::<LaunchSession>(params).await
    }

    /// [`ListSessions`]: every session, newest activity first.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for session in client.list_sessions().await? {
    ///     println!("{} {} {}", session.id, session.status, session.summary);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, Error> {
        Ok(self.call::<ListSessions>(NoParams {}).await?.sessions)
    }

    /// [`GetSessionState`]: one session's details, with its exact status.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let session = client.get_session_state("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13").await?;
    /// if !session.status.is_active() {
    ///     println!("ended {}: {:?}", session.status, session.result_content);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_session_state(&self, session_id: &str) -> Result<SessionState, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        Ok(self.call::<GetSessionState>(params).await?.session)
    }

    /// [`ContinueSession`]: a new session that forks a session's Claude conversation with
    /// a new query.
    ///
    /// ```no_run
    /// use hld_client::protocol::ContinueSessionParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let next = client
    ///     .continue_session(ContinueSessionParams {
    ///         session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
    ///         query: "Now add a regression test for it".into(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// println!("continued as {}", next.session_id);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn continue_session(
        &self,
        params: ContinueSessionParams,
    ) -> Result<ContinueSessionResult, Error> {
        self.call::<ContinueSession>(params).await
    }

    /// [`InterruptSession`]: stops a running session; it moves to `completing`, then to
    /// `completed` with `interrupted: true`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let reply = client.interrupt_session("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13").await?;
    /// println!("{}", reply.message);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn interrupt_session(
        &self,
        session_id: &str,
    ) -> Result<InterruptSessionResult, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        self.call::<InterruptSession>(params).await
    }

    /// [`SendMessage`]: sends `text` into the session, which goes on as the same session. While
    /// the agent works, [`MessageMode::Queue`] waits for the turn to end (`queued: true`) and
    /// [`MessageMode::Steer`] interrupts it; after a turn, a new one starts at once. To attach
    /// images, see [`send_message_with`](Self::send_message_with).
    ///
    /// ```no_run
    /// use hld_client::protocol::MessageMode;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let session = "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13";
    /// let sent = client
    ///     .send_message(session, "Also update the changelog", MessageMode::Queue)
    ///     .await?;
    /// if sent.queued {
    ///     println!("queued as {}; cancel it with cancel_queued_message", sent.message_id);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_message(
        &self,
        session_id: &str,
        text: &str,
        mode: MessageMode,
    ) -> Result<SendMessageResult, Error> {
        self.send_message_with(SendMessageParams {
            session_id: session_id.to_owned(),
            text: text.to_owned(),
            mode: Some(mode),
            images: None,
        })
        .await
    }

    /// [`ListQueuedMessages`]: the session's messages waiting for its turn to end, next first.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for message in client.list_queued_messages("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13").await? {
    ///     println!("{} {}", message.id, message.text);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_queued_messages(
        &self,
        session_id: &str,
    ) -> Result<Vec<QueuedMessage>, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        Ok(self.call::<ListQueuedMessages>(params).await?.messages)
    }

    /// [`CancelQueuedMessage`]: takes a queued message back before it is delivered; one
    /// delivered or cancelled already is an [`Error::Rpc`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client.cancel_queued_message("0b6e2f1c-5d9a-4c1e-8f3b-7a2d4e6c8b10").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn cancel_queued_message(&self, message_id: &str) -> Result<(), Error> {
        let params = CancelQueuedMessageParams {
            message_id: message_id.to_owned(),
        };
        self.call::<CancelQueuedMessage>(params).await?;
        Ok(())
    }

    /// [`FetchApprovals`]: the approvals waiting for a human, of every session or of one.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for approval in client.fetch_approvals(None).await? {
    ///     println!("{} {} {:?}", approval.id, approval.kind.as_str(), approval.function_name);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn fetch_approvals(&self, session_id: Option<&str>) -> Result<Vec<Approval>, Error> {
        let params = FetchApprovalsParams {
            session_id: session_id.map(str::to_owned),
        };
        Ok(self.call::<FetchApprovals>(params).await?.approvals)
    }

    /// [`SendDecision`] as sent: a refusal is a reply with `success: false`, not an error.
    /// [`approve`](Self::approve), [`deny`](Self::deny) and [`respond`](Self::respond)
    /// build the params and turn a refusal into [`Error::Refused`].
    ///
    /// ```no_run
    /// use hld_client::protocol::SendDecisionParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let reply = client
    ///     .send_decision(SendDecisionParams {
    ///         call_id: Some("local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35".into()),
    ///         kind: Some("function_call".into()),
    ///         decision: Some("approve".into()),
    ///         comment: None,
    ///     })
    ///     .await?;
    /// if !reply.success {
    ///     eprintln!("refused ({:?}): {:?}", reply.reason, reply.error);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_decision(
        &self,
        params: SendDecisionParams,
    ) -> Result<SendDecisionResult, Error> {
        self.call::<SendDecision>(params).await
    }

    /// Approves tool call `approval_id`. When the daemon does not record it, the error is
    /// [`Error::Refused`] with the reason: [`RefusalReason::NotFound`],
    /// [`RefusalReason::AlreadyDecided`], [`RefusalReason::Resolved`] (its session ended,
    /// or it was answered elsewhere), [`RefusalReason::WrongType`] (a question), or
    /// [`RefusalReason::Failed`] (it may be sent again).
    ///
    /// ```no_run
    /// use hld_client::protocol::RefusalReason;
    /// use hld_client::Error;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// match client.approve("local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35").await {
    ///     Ok(()) => println!("approved"),
    ///     Err(Error::Refused { reason: RefusalReason::AlreadyDecided, .. }) => {
    ///         println!("someone was quicker")
    ///     }
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn approve(&self, approval_id: &str) -> Result<(), Error> {
        let params = SendDecisionParams {
            call_id: Some(approval_id.to_owned()),
            kind: Some(ApprovalType::FunctionCall.as_str().to_owned()),
            decision: Some("approve".to_owned()),
            comment: None,
        };
        decided(approval_id, self.send_decision(params).await?)
    }

    /// Denies tool call `approval_id`, telling Claude `reason`; without one (or with a
    /// blank one) Claude is told [`NO_REASON`](crate::protocol::NO_REASON), as the daemon
    /// needs a comment. Refusals as for [`approve`](Self::approve).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client.deny("local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35", Some("Run only the parser tests")).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn deny(&self, approval_id: &str, reason: Option<&str>) -> Result<(), Error> {
        let reason = reason.filter(|r| !r.trim().is_empty()).unwrap_or(NO_REASON);
        let params = SendDecisionParams {
            call_id: Some(approval_id.to_owned()),
            kind: Some(ApprovalType::FunctionCall.as_str().to_owned()),
            decision: Some("deny".to_owned()),
            comment: Some(reason.to_owned()),
        };
        decided(approval_id, self.send_decision(params).await?)
    }

    /// Answers question `approval_id` (a human contact) with `text`. Refusals as for
    /// [`approve`](Self::approve); asking it of a tool call is
    /// [`RefusalReason::WrongType`].
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client.respond("local-9b1e4c7a-5d2f-4a83-8e61-2c0d7f3b9a54", "staging").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn respond(&self, approval_id: &str, text: &str) -> Result<(), Error> {
        let params = SendDecisionParams {
            call_id: Some(approval_id.to_owned()),
            kind: Some(ApprovalType::HumanContact.as_str().to_owned()),
            decision: Some("respond".to_owned()),
            comment: Some(text.to_owned()),
        };
        decided(approval_id, self.send_decision(params).await?)
    }

    /// [`CreateApproval`]: records a request for a human decision on a session's behalf,
    /// as the approvals MCP server a session runs does.
    ///
    /// ```no_run
    /// use hld_client::protocol::CreateApprovalParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let created = client
    ///     .create_approval(CreateApprovalParams {
    ///         session_id: Some("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into()),
    ///         tool_name: Some("Bash".into()),
    ///         tool_input: Some(serde_json::json!({"command": "cargo test"})),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// println!("waiting on {}", created.approval_id);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn create_approval(
        &self,
        params: CreateApprovalParams,
    ) -> Result<CreateApprovalResult, Error> {
        self.call::<CreateApproval>(params).await
    }

    /// [`GetApproval`]: one approval, pending or decided.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let approval = client.get_approval("local-6d2f8a1c-3e5b-4f90-b7d2-1a4c9e8f0b35").await?;
    /// println!("{} is {}", approval.id, approval.status.as_str());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_approval(&self, approval_id: &str) -> Result<Approval, Error> {
        let params = GetApprovalParams {
            approval_id: approval_id.to_owned(),
        };
        Ok(self.call::<GetApproval>(params).await?.approval)
    }

    /// [`Initialize`]: the daemon's name, version and protocol.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let hello = client.initialize().await?;
    /// println!("{hello:?}");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn initialize(&self) -> Result<InitializeResult, Error> {
        self.call::<Initialize>(NoParams {}).await
    }

    /// [`Version`]: the daemon's version.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// println!("hld {}", client.version().await?.version);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn version(&self) -> Result<VersionResult, Error> {
        self.call::<Version>(NoParams {}).await
    }

    /// [`ListMethods`]: every method the daemon serves, with a line each.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for method in client.list_methods().await? {
    ///     println!("{}: {}", method.name, method.description);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_methods(&self) -> Result<Vec<MethodSummary>, Error> {
        self.call::<ListMethods>(NoParams {}).await
    }

    /// [`DescribeMethods`]: every method with its params and result.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for method in client.describe_methods().await? {
    ///     println!("{}({}) -> {}", method.name, method.params.join(", "), method.returns);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn describe_methods(&self) -> Result<Vec<MethodDescription>, Error> {
        self.call::<DescribeMethods>(NoParams {}).await
    }

    /// [`SetLogLevel`]: changes the daemon's log level (`debug`, `info`, `warn`, `error`)
    /// until it restarts.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client.set_log_level("debug").await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn set_log_level(&self, level: &str) -> Result<SetLogLevelResult, Error> {
        let params = SetLogLevelParams {
            level: level.to_owned(),
        };
        self.call::<SetLogLevel>(params).await
    }

    /// [`Shutdown`]: asks the daemon to stop; running sessions are interrupted first.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client.shutdown().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn shutdown(&self) -> Result<ShutdownResult, Error> {
        self.call::<Shutdown>(NoParams {}).await
    }
}

/// The outcome of a decision on `approval_id`: a reply of `success: false` is
/// [`Error::Refused`] with the daemon's reason.
fn decided(approval_id: &str, result: SendDecisionResult) -> Result<(), Error> {
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
