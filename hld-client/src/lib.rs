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
//!
//! [`Client::follow`] and [`Client::launch_and_follow`] turn a session into one stream of
//! what happens to it, from its first event to its end, losing nothing ([`follow`] is the
//! guide). [`Client::approve`], [`Client::deny`] and [`Client::respond`] decide approvals and
//! report a refusal as [`Error::Refused`] with its reason. [`Client::send_message`] talks to
//! a session while it works (queued, or steering it) or after a turn, as the same session;
//! [`FollowItem::TurnEnded`] marks each turn's end. [`Client::update_session_settings`]
//! changes a session's model and mode (the Shift+Tab cycle is [`mode::Mode`]), and
//! [`Client::list_slash_commands`] and [`Client::suggest_files`] complete `/` commands and `@`
//! files; [`Client::send_message_with`] attaches images. The examples in `examples/`
//! (`launch_and_follow`, `conversation`, `approve_all_writes`, `list_json`) are whole
//! programs.
//!
//! A daemon on another machine is reached over its WebSocket (`hld --ws` with TLS): give
//! [`Client::connect_to`] an [`Address::Remote`] with the URL, the token and how to check the
//! certificate ([`address`]). Every call, [`Client::subscribe`] and [`Client::follow`] work
//! the same over both; a front end that watches several daemons holds one client per address.

pub mod address;
pub mod autostart;
mod calls;
pub mod claude_path;
mod client;
mod codec;
pub mod config;
pub mod contexts;
mod error;
pub mod follow;
mod link;
pub mod mode;
pub mod protocol;
mod subscription;
mod tls;
pub mod trust;
pub mod view;
mod worktree_calls;

pub use address::Address;
pub use client::{Client, DEFAULT_TIMEOUT};
pub use error::Error;
pub use follow::{Follow, FollowItem};
pub use subscription::{
    subscribe, SubscribeOptions, Subscription, SubscriptionItem, CONFIRM_TIMEOUT,
};
