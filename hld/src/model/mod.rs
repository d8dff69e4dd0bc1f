//! The domain's pure types and rules: a session's status transitions, its approval modes and
//! the rules they imply, and how its `claude` runs. No I/O, and nothing of the daemon but the
//! wire types of `hld_client::protocol`: every layer above may use them.

mod lifecycle;
mod options;
mod rules;

pub use lifecycle::{transition, Happening};
pub use options::{SessionOptions, Settings};
pub use rules::{automatic, on_creation, Modes, Rule, Settled, EDIT_TOOLS, SESSION_ENDED};
