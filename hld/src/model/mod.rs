//! The domain's pure types and rules: status transitions, approval modes and their rules, and
//! how `claude` runs. No I/O; nothing of the daemon but `hld_client::protocol`'s wire types.

mod lifecycle;
mod options;
mod rules;

pub use lifecycle::{transition, Happening};
pub use options::{SessionOptions, Settings};
pub use rules::{
    automatic, on_creation, Modes, Rule, Settled, EDIT_TOOLS, EXIT_PLAN_MODE, SESSION_ENDED,
};
