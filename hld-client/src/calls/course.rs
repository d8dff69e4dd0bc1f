//! The typed calls that change a session's course while it lives: its model and mode
//! (`updateSessionSettings`), what its reply box completes (`listSlashCommands`,
//! `suggestFiles`), and messages with images (`sendMessage` with `images`).

use crate::error::Error;
use crate::protocol::*;
use crate::Client;

impl Client {
    /// [`UpdateSessionSettings`]: changes what the params set and leaves the rest. A model or
    /// permission mode reaches a live process at once, else the next resume;
    /// [`Mode::settings`](crate::mode::Mode::settings) builds the params of the Shift+Tab
    /// cycle (default → accept edits → plan).
    ///
    /// ```no_run
    /// use hld_client::mode::Mode;
    /// use hld_client::protocol::UpdateSessionSettingsParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let session = "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13";
    /// client
    ///     .update_session_settings(UpdateSessionSettingsParams {
    ///         session_id: session.into(),
    ///         model: Some("opus".into()),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// // The next mode of the cycle, from the one the session is in.
    /// let now = Mode::of(&client.get_session_state(session).await?.control);
    /// client.update_session_settings(now.next().settings(session)).await?;
    /// println!("{} → {}", now.label(), now.next().label());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn update_session_settings(
        &self,
        params: UpdateSessionSettingsParams,
    ) -> Result<(), Error> {
        self.call::<UpdateSessionSettings>(params).await?;
        Ok(())
    }

    /// [`ListSlashCommands`]: the slash commands, skills and agents the session's `claude`
    /// reported when it started, for `/` completion.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// for command in client.list_slash_commands("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13").await? {
    ///     println!("/{} ({}): {}", command.name, command.kind.as_str(), command.description);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_slash_commands(&self, session_id: &str) -> Result<Vec<SlashCommand>, Error> {
        let params = SessionIdParams {
            session_id: session_id.to_owned(),
        };
        Ok(self.call::<ListSlashCommands>(params).await?.commands)
    }

    /// [`SuggestFiles`]: files of the session's working directory matching `query` (what
    /// follows an `@`), best first, relative to that directory; a directory ends in `/`.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let files = client.suggest_files("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13", "main").await?;
    /// if let Some(best) = files.first() {
    ///     println!("@{}", best.path);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn suggest_files(
        &self,
        session_id: &str,
        query: &str,
    ) -> Result<Vec<FileSuggestion>, Error> {
        let params = SuggestFilesParams {
            session_id: session_id.to_owned(),
            query: query.to_owned(),
            limit: None,
        };
        Ok(self.call::<SuggestFiles>(params).await?.files)
    }

    /// [`SendMessage`] with every param: images attached (absolute paths the daemon reads,
    /// PNG, JPEG, GIF or WebP of at most [`MAX_IMAGE_BYTES`]), or the mode left to the
    /// daemon. [`send_message`](Self::send_message) is the text-only shorthand.
    ///
    /// ```no_run
    /// use hld_client::protocol::SendMessageParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let sent = client
    ///     .send_message_with(SendMessageParams {
    ///         session_id: "4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into(),
    ///         text: "The button overlaps the footer, as in this screenshot".into(),
    ///         images: Some(vec!["/home/ada/shots/footer.png".into()]),
    ///         ..Default::default()
    ///     })
    ///     .await?;
    /// println!("sent as {}", sent.message_id);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn send_message_with(
        &self,
        params: SendMessageParams,
    ) -> Result<SendMessageResult, Error> {
        self.call::<SendMessage>(params).await
    }
}
