//! The typed calls of [`Client`] for isolated sessions: review, merge and discard a session's
//! worktree branch.

use crate::error::Error;
use crate::protocol::*;
use crate::Client;

impl Client {
    /// [`GetSessionDiff`]: an isolated session's changes against its base, one page of files.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// use hld_client::protocol::GetSessionDiffParams;
    /// let client = hld_client::Client::connect_default().await?;
    /// let diff = client
    ///     .get_session_diff(GetSessionDiffParams {
    ///         session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// for file in diff.files {
    ///     println!("{} {} +{} -{}", file.status, file.path, file.additions, file.deletions);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_session_diff(
        &self,
        params: GetSessionDiffParams,
    ) -> Result<GetSessionDiffResult, Error> {
        self.call::<GetSessionDiff>(params).await
    }

    /// [`MergeSession`]: merges an isolated session's branch into its base branch; with
    /// conflicts, `merged` is false and `conflicts` names the files.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// use hld_client::protocol::{MergeSessionParams, MergeStrategy};
    /// let client = hld_client::Client::connect_default().await?;
    /// let merge = client
    ///     .merge_session(MergeSessionParams {
    ///         session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
    ///         strategy: MergeStrategy::Squash,
    ///         message: None,
    ///     })
    ///     .await?;
    /// println!("merged: {} conflicts: {:?}", merge.merged, merge.conflicts);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn merge_session(
        &self,
        params: MergeSessionParams,
    ) -> Result<MergeSessionResult, Error> {
        self.call::<MergeSession>(params).await
    }

    /// [`DiscardSession`]: removes an isolated session's worktree and branch (`force` for
    /// work never merged).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// client
    ///     .discard_session("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13", false)
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn discard_session(&self, session_id: &str, force: bool) -> Result<(), Error> {
        let params = DiscardSessionParams {
            session_id: session_id.to_owned(),
            force: Some(force),
        };
        self.call::<DiscardSession>(params).await.map(|_| ())
    }
}
