//! The typed call that tells what sessions cost (`getUsage`).

use crate::error::Error;
use crate::protocol::*;
use crate::Client;

impl Client {
    /// [`GetUsage`]: the tokens and cost of the stored sessions since a time, grouped by day
    /// (the daemon's local days), model or working directory, with the total.
    ///
    /// ```no_run
    /// use hld_client::protocol::{GetUsageParams, UsageGroupBy};
    ///
    /// # async fn demo() -> Result<(), hld_client::Error> {
    /// let client = hld_client::Client::connect_default().await?;
    /// let usage = client
    ///     .get_usage(GetUsageParams {
    ///         since: Some("2026-11-01".into()),
    ///         group_by: UsageGroupBy::Model,
    ///     })
    ///     .await?;
    /// for row in &usage.rows {
    ///     println!("{}: ${:.2} over {} turns", row.key, row.totals.cost_usd, row.totals.turns);
    /// }
    /// println!("total: ${:.2}", usage.total.cost_usd);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn get_usage(&self, params: GetUsageParams) -> Result<GetUsageResult, Error> {
        self.call::<GetUsage>(params).await
    }
}
