//! The typed calls, written once for both clients: `typed_calls!([async] [.await])` inside
//! the async [`crate::Client`]'s `impl`, `typed_calls!([] [])` inside the blocking one's.
//! Each client supplies `call_raw`; everything above it is here.

macro_rules! typed_calls {
    ([$($async:tt)*] [$($await:tt)*]) => {
        /// Calls method `M` and decodes its result.
        pub $($async)* fn call<M: Method>(&self, params: M::Params) -> Result<M::Result, Error> {
            let value = self.call_raw(M::NAME, serde_json::to_value(params)?)$($await)*?;
            Ok(serde_json::from_value(value)?)
        }

        /// `health`.
        pub $($async)* fn health(&self) -> Result<HealthResult, Error> {
            self.call::<Health>(NoParams {})$($await)*
        }

        /// `launchSession`.
        pub $($async)* fn launch_session(
            &self,
            params: LaunchSessionParams,
        ) -> Result<LaunchSessionResult, Error> {
            self.call::<LaunchSession>(params)$($await)*
        }

        /// `listSessions`.
        pub $($async)* fn list_sessions(&self) -> Result<Vec<SessionInfo>, Error> {
            Ok(self.call::<ListSessions>(NoParams {})$($await)*?.sessions)
        }

        /// `getSessionState`.
        pub $($async)* fn get_session_state(&self, session_id: &str) -> Result<SessionState, Error> {
            let params = SessionIdParams {
                session_id: session_id.to_owned(),
            };
            Ok(self.call::<GetSessionState>(params)$($await)*?.session)
        }

        /// `getConversation`.
        pub $($async)* fn get_conversation(
            &self,
            params: GetConversationParams,
        ) -> Result<Vec<ConversationEvent>, Error> {
            Ok(self.call::<GetConversation>(params)$($await)*?.events)
        }

        /// `continueSession`.
        pub $($async)* fn continue_session(
            &self,
            params: ContinueSessionParams,
        ) -> Result<ContinueSessionResult, Error> {
            self.call::<ContinueSession>(params)$($await)*
        }

        /// `interruptSession`.
        pub $($async)* fn interrupt_session(
            &self,
            session_id: &str,
        ) -> Result<InterruptSessionResult, Error> {
            let params = SessionIdParams {
                session_id: session_id.to_owned(),
            };
            self.call::<InterruptSession>(params)$($await)*
        }

        /// `fetchApprovals`.
        pub $($async)* fn fetch_approvals(
            &self,
            session_id: Option<&str>,
        ) -> Result<Vec<Approval>, Error> {
            let params = FetchApprovalsParams {
                session_id: session_id.map(str::to_owned),
            };
            Ok(self.call::<FetchApprovals>(params)$($await)*?.approvals)
        }

        /// `sendDecision`.
        pub $($async)* fn send_decision(
            &self,
            params: SendDecisionParams,
        ) -> Result<SendDecisionResult, Error> {
            self.call::<SendDecision>(params)$($await)*
        }

        /// `createApproval`.
        pub $($async)* fn create_approval(
            &self,
            params: CreateApprovalParams,
        ) -> Result<CreateApprovalResult, Error> {
            self.call::<CreateApproval>(params)$($await)*
        }

        /// `getApproval`.
        pub $($async)* fn get_approval(&self, approval_id: &str) -> Result<Approval, Error> {
            let params = GetApprovalParams {
                approval_id: approval_id.to_owned(),
            };
            Ok(self.call::<GetApproval>(params)$($await)*?.approval)
        }

        /// `initialize`.
        pub $($async)* fn initialize(&self) -> Result<InitializeResult, Error> {
            self.call::<Initialize>(NoParams {})$($await)*
        }

        /// `version`.
        pub $($async)* fn version(&self) -> Result<VersionResult, Error> {
            self.call::<Version>(NoParams {})$($await)*
        }

        /// `listMethods`.
        pub $($async)* fn list_methods(&self) -> Result<Vec<MethodSummary>, Error> {
            self.call::<ListMethods>(NoParams {})$($await)*
        }

        /// `describeMethods`.
        pub $($async)* fn describe_methods(&self) -> Result<Vec<MethodDescription>, Error> {
            self.call::<DescribeMethods>(NoParams {})$($await)*
        }

        /// `setLogLevel`.
        pub $($async)* fn set_log_level(&self, level: &str) -> Result<SetLogLevelResult, Error> {
            let params = SetLogLevelParams {
                level: level.to_owned(),
            };
            self.call::<SetLogLevel>(params)$($await)*
        }

        /// `shutdown`.
        pub $($async)* fn shutdown(&self) -> Result<ShutdownResult, Error> {
            self.call::<Shutdown>(NoParams {})$($await)*
        }
    };
}
