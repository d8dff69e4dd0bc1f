//! Reading a session's stored conversation: a page at a time (`getConversation`), or whole,
//! in pages a transport can carry.

use crate::error::Error;
use crate::protocol::*;
use crate::Client;

/// Events the first page of [`Client::get_whole_conversation`] asks for.
const WHOLE_PAGE: usize = 1000;

impl Client {
    /// [`GetConversation`]: stored conversation events, oldest first, a page at a time
    /// (`after_sequence` is the `sequence` of the last event received).
    ///
    /// ```no_run
    /// use hld_client::protocol::GetConversationParams;
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let mut after_sequence = None;
    /// loop {
    ///     let page = client
    ///         .get_conversation(GetConversationParams {
    ///             session_id: Some("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13".into()),
    ///             after_sequence,
    ///             limit: Some(100),
    ///             ..Default::default()
    ///         })
    ///         .await?;
    ///     for event in &page {
    ///         println!("{} {}", event.sequence, event.event_type.as_str());
    ///     }
    ///     match page.last() {
    ///         Some(last) if page.len() == 100 => after_sequence = Some(last.sequence),
    ///         _ => break,
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_conversation(
        &self,
        params: GetConversationParams,
    ) -> Result<Vec<ConversationEvent>, Error> {
        Ok(self.call::<GetConversation>(params).await?.events)
    }

    /// A session's whole conversation (its parent chain's too, oldest first), read a page at
    /// a time; a page too large for the transport (error 8: a WebSocket's 1 MiB) is asked
    /// for again half as long.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let events = client
    ///     .get_whole_conversation("4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13")
    ///     .await?;
    /// println!("{} events", events.len());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_whole_conversation(
        &self,
        session_id: &str,
    ) -> Result<Vec<ConversationEvent>, Error> {
        let mut events: Vec<ConversationEvent> = Vec::new();
        let mut limit = WHOLE_PAGE;
        loop {
            let page = self
                .get_conversation(GetConversationParams {
                    session_id: Some(session_id.to_owned()),
                    after_sequence: events.last().map(|e| e.sequence),
                    limit: Some(limit as i64),
                    ..Default::default()
                })
                .await;
            let page = match page {
                Err(e) if e.is_too_large() && limit > 1 => {
                    limit /= 2;
                    continue;
                }
                page => page?,
            };
            let full = page.len() == limit;
            events.extend(page);
            if !full {
                return Ok(events);
            }
        }
    }
}
