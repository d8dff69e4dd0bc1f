//! The one set of modes a person cycles with Shift+Tab, as in Claude Code: default → accept
//! edits → plan → default. "Accept edits" is the daemon's `auto_accept_edits` rule in the
//! `default` permission mode; the CLI's own `acceptEdits` is never set, so every tool call
//! still reaches the daemon's approvals. `hlyr` and `hld-tui` both cycle through this.

use crate::protocol::{PermissionMode, SessionControl, UpdateSessionSettingsParams};

/// Where a session is in the cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `permission_mode: plan`.
    Plan,
    /// `permission_mode: default` with `auto_accept_edits`.
    AcceptEdits,
    /// `permission_mode: default`, every edit asked.
    Default,
}

impl Mode {
    /// The mode a session's settings put it in.
    pub fn of(control: &SessionControl) -> Mode {
        match (&control.permission_mode, control.auto_accept_edits) {
            (PermissionMode::Plan, _) => Mode::Plan,
            (_, true) => Mode::AcceptEdits,
            _ => Mode::Default,
        }
    }

    /// The next mode of the cycle.
    pub fn next(self) -> Mode {
        match self {
            Mode::Default => Mode::AcceptEdits,
            Mode::AcceptEdits => Mode::Plan,
            Mode::Plan => Mode::Default,
        }
    }

    /// What to show the user: `plan`, `accept edits` or `default`.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::AcceptEdits => "accept edits",
            Mode::Default => "default",
        }
    }

    /// The `updateSessionSettings` params that put session `session_id` in this mode.
    pub fn settings(self, session_id: &str) -> UpdateSessionSettingsParams {
        let (permission_mode, auto_accept_edits) = match self {
            Mode::Plan => (PermissionMode::Plan, false),
            Mode::AcceptEdits => (PermissionMode::Default, true),
            Mode::Default => (PermissionMode::Default, false),
        };
        UpdateSessionSettingsParams {
            session_id: session_id.to_owned(),
            permission_mode: Some(permission_mode),
            auto_accept_edits: Some(auto_accept_edits),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_each_mode_and_its_settings_read_back_as_that_mode() {
        let mut mode = Mode::Default;
        let mut seen = Vec::new();
        for _ in 0..3 {
            let params = mode.settings("s");
            let control = SessionControl {
                permission_mode: params.permission_mode.clone().unwrap(),
                auto_accept_edits: params.auto_accept_edits.unwrap(),
                ..Default::default()
            };
            assert_eq!(Mode::of(&control), mode);
            seen.push(mode.label());
            mode = mode.next();
        }
        assert_eq!(seen, ["default", "accept edits", "plan"]);
        assert_eq!(mode, Mode::Default);
    }

    #[test]
    fn plan_mode_wins_over_auto_accept() {
        let control = SessionControl {
            permission_mode: PermissionMode::Plan,
            auto_accept_edits: true,
            ..Default::default()
        };
        assert_eq!(Mode::of(&control), Mode::Plan);
    }
}
