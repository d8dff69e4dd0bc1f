//! The session list's order, newest activity first, with a selection that stays on its
//! session while rows move: a session that streams or changes status goes to the top, and the
//! row under the cursor (and the pane beside it) is still the one the user chose.

use hld_client::protocol::SessionInfo;

use crate::app::State;

impl State {
    /// Replaces the sessions, newest activity first.
    pub(crate) fn set_sessions(&mut self, mut sessions: Vec<SessionInfo>) {
        sessions.sort_by(|a, b| b.last_activity_at.cmp(&a.last_activity_at));
        self.keeping_selection(|state| state.sessions = sessions);
    }

    /// Records activity of `session_id` at `at` (RFC 3339): it moves to the top.
    pub(crate) fn touch(&mut self, session_id: &str, at: &str) {
        match self.sessions.iter().position(|s| s.id == session_id) {
            // Already the newest (as while it streams): no row moves.
            Some(0) => self.sessions[0].last_activity_at = at.to_owned(),
            Some(i) => self.keeping_selection(|state| {
                let mut session = state.sessions.remove(i);
                session.last_activity_at = at.to_owned();
                state.sessions.insert(0, session);
            }),
            None => {}
        }
    }

    /// Applies `change` to the sessions; the selected session's row stays selected where it
    /// is still listed.
    fn keeping_selection(&mut self, change: impl FnOnce(&mut State)) {
        let row = |state: &State| {
            state
                .rows()
                .get(state.list.selected)
                .map(|r| r.session.id.clone())
        };
        let selected = row(self);
        change(self);
        if let Some(id) = selected {
            if let Some(i) = self.rows().iter().position(|r| r.session.id == id) {
                self.list.selected = i;
            }
        }
    }
}
