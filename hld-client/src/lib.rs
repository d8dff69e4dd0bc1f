//! `hld-client`: the wire contract of the hld daemon ([`protocol`]) and a typed async [`Client`].
//!
//! ```no_run
//! use hld_client::{protocol::{Health, NoParams}, Client};
//!
//! # async fn demo() -> Result<(), hld_client::Error> {
//! let client = Client::connect_default().await?;
//! let health = client.call::<Health>(NoParams {}).await?;
//! println!("daemon {} is {}", health.version, health.status);
//! for session in client.list_sessions().await? {
//!     println!("{} {} {}", session.id, session.status, session.summary);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! `cargo run -p hld-client --example health` runs the same against a live daemon.
//! [`blocking::Client`] makes the same calls without a runtime, for one-shot programs.

#[macro_use]
mod calls;
pub mod autostart;
pub mod blocking;
pub mod claude_path;
mod client;
mod codec;
pub mod config;
mod error;
pub mod protocol;
mod subscription;

pub use client::{Client, DEFAULT_TIMEOUT};
pub use error::Error;
pub use subscription::{
    subscribe, SubscribeOptions, Subscription, SubscriptionItem, CONFIRM_TIMEOUT,
};
