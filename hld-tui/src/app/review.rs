//! Isolated sessions: their rows' diff totals, the review screen (changed files, each one's
//! hunks) and the merge and discard dialogs.

use hld_client::protocol::{DiffFile, WorktreeState};

use super::*;

/// Files asked for per page of the review screen's diff.
pub const REVIEW_PAGE: u64 = 100;

/// An isolated session's changes in all, for its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DiffStat {
    pub files: u64,
    pub additions: u64,
    pub deletions: u64,
}

/// The review screen: an isolated session's changed files, loaded a page at a time.
#[derive(Debug)]
pub struct Review {
    pub session_id: String,
    /// Whether the first page has arrived.
    pub loaded: bool,
    /// The files of the pages loaded so far, by path.
    pub files: Vec<DiffFile>,
    pub stat: DiffStat,
    /// Where the next page starts, while there is one.
    pub next_offset: Option<u64>,
    /// A page is on its way.
    pub loading: bool,
    /// Why the daemon refused the diff, shown in place of the files.
    pub refused: Option<String>,
    pub selected: usize,
    /// Keys scroll the selected file's hunks instead of moving among the files.
    pub hunks_focused: bool,
    /// The first line of the selected file's hunks shown.
    pub scroll: usize,
    /// The screen it was opened from, which Esc goes back to.
    pub from: Screen,
}

/// Lines the review screen shows for `file`: its name, then each hunk's header and lines, or
/// one line saying why there are none.
pub fn shown_lines(file: &DiffFile) -> usize {
    1 + file
        .hunks
        .iter()
        .map(|h| 1 + h.lines.len())
        .sum::<usize>()
        .max(1)
}

fn isolated(s: &SessionInfo) -> Option<&hld_client::protocol::WorktreeInfo> {
    s.worktree.as_ref()
}

fn active(s: &SessionInfo) -> bool {
    isolated(s).is_some_and(|w| w.state == WorktreeState::Active)
}

/// The diff totals to load for `sessions` as they arrive: those of isolated sessions not yet
/// known, or whose worktree changed state.
pub(super) fn stale_stats(state: &State, sessions: &[SessionInfo]) -> Vec<Command> {
    sessions
        .iter()
        .filter(|s| active(s))
        .filter(|s| {
            let before = state.sessions.iter().find(|old| old.id == s.id);
            !state.stats.contains_key(&s.id)
                || before.and_then(isolated).map(|w| &w.state) != isolated(s).map(|w| &w.state)
        })
        .map(|s| Command::LoadDiffStat(s.id.clone()))
        .collect()
}

/// A session's status changed (a turn began or ended): its changes may have too.
pub(super) fn on_status(state: &mut State, session_id: &str) -> Vec<Command> {
    let mut commands = Vec::new();
    if state
        .sessions
        .iter()
        .any(|s| s.id == session_id && active(s))
    {
        commands.push(Command::LoadDiffStat(session_id.to_owned()));
    }
    if let Some(r) = state.review.as_mut().filter(|r| r.session_id == session_id) {
        r.loading = true;
        commands.push(Command::LoadDiff {
            session_id: session_id.to_owned(),
            offset: 0,
        });
    }
    commands
}

/// Opens the review screen of the selected session, if it is isolated.
pub(super) fn open(state: &mut State) -> Vec<Command> {
    let Some(s) = state.selected_session() else {
        return Vec::new();
    };
    let Some(worktree) = isolated(s) else {
        state.flash(
            "this session is not isolated: launch with the worktree switch on to review",
            false,
        );
        return Vec::new();
    };
    if worktree.state == WorktreeState::Discarded {
        state.flash("this session's worktree was discarded", false);
        return Vec::new();
    }
    let session_id = s.id.clone();
    state.review = Some(Review {
        session_id: session_id.clone(),
        loaded: false,
        files: Vec::new(),
        stat: DiffStat::default(),
        next_offset: None,
        loading: true,
        refused: None,
        selected: 0,
        hunks_focused: false,
        scroll: 0,
        from: state.screen,
    });
    state.screen = Screen::Review;
    vec![Command::LoadDiff {
        session_id,
        offset: 0,
    }]
}

/// Rows the selected file's hunks get.
fn hunk_rows(state: &State) -> usize {
    usize::from(state.height.saturating_sub(CHROME_ROWS + 1)).max(1)
}

/// What a key bound to `action` does on the review screen.
pub(super) fn act(state: &mut State, action: Action) -> Vec<Command> {
    let rows = hunk_rows(state);
    let Some(r) = state.review.as_mut() else {
        state.screen = Screen::Sessions;
        return Vec::new();
    };
    let lines = r.files.get(r.selected).map_or(0, shown_lines);
    let last_top = lines.saturating_sub(rows);
    match action {
        Action::Back if r.hunks_focused => r.hunks_focused = false,
        Action::Back => state.screen = r.from,
        Action::FocusHunks => r.hunks_focused = !r.hunks_focused,
        Action::NextFile | Action::PreviousFile => {
            let step = if action == Action::NextFile {
                Action::Down
            } else {
                Action::Up
            };
            move_in(&mut r.selected, r.files.len(), step);
            r.scroll = 0;
        }
        Action::Merge => {
            let session_id = r.session_id.clone();
            state.modal = Some(Modal::Merge {
                session_id,
                strategy: MergeStrategy::Merge,
            });
        }
        Action::Discard => {
            let session_id = r.session_id.clone();
            state.modal = Some(Modal::ConfirmDiscard {
                session_id,
                refused: None,
            });
        }
        _ if r.hunks_focused => {
            r.scroll = match action {
                Action::Down => r.scroll + 1,
                Action::Up => r.scroll.saturating_sub(1),
                Action::PageDown => r.scroll + rows,
                Action::PageUp => r.scroll.saturating_sub(rows),
                Action::HalfPageDown => r.scroll + rows / 2,
                Action::HalfPageUp => r.scroll.saturating_sub(rows / 2),
                Action::First => 0,
                Action::Last => last_top,
                _ => r.scroll,
            }
            .min(last_top);
        }
        _ => {
            if move_in(&mut r.selected, r.files.len(), action) {
                r.scroll = 0;
            }
        }
    }
    next_page(state)
}

/// Asks for the next page once the selection reaches the last file loaded.
fn next_page(state: &mut State) -> Vec<Command> {
    let Some(r) = state.review.as_mut() else {
        return Vec::new();
    };
    match r.next_offset {
        Some(offset) if !r.loading && r.selected + 1 >= r.files.len() => {
            r.loading = true;
            vec![Command::LoadDiff {
                session_id: r.session_id.clone(),
                offset,
            }]
        }
        _ => Vec::new(),
    }
}

/// A command failed (its reason is flashed): a page the review waits for may be the one, so
/// it no longer waits.
pub(super) fn failed(state: &mut State) {
    if let Some(r) = state.review.as_mut() {
        r.loading = false;
    }
}

/// The answers of the loads and commands of isolated sessions.
pub(super) fn on_msg(state: &mut State, msg: Msg) -> Vec<Command> {
    match msg {
        Msg::DiffStat { session_id, stat } => {
            state.stats.insert(session_id, stat);
        }
        Msg::Diff {
            session_id,
            offset,
            diff,
        } => {
            let stat = DiffStat {
                files: diff.total_files,
                additions: diff.additions,
                deletions: diff.deletions,
            };
            state.stats.insert(session_id.clone(), Some(stat));
            let Some(r) = state.review.as_mut().filter(|r| r.session_id == session_id) else {
                return Vec::new();
            };
            if offset == 0 {
                r.files = diff.files;
            } else if usize::try_from(offset) == Ok(r.files.len()) {
                r.files.extend(diff.files);
            } else {
                // A page of an older load: the first page is asked for again.
                return Vec::new();
            }
            r.stat = stat;
            r.next_offset = diff.next_offset;
            r.loaded = true;
            r.loading = false;
            r.refused = None;
            r.selected = r.selected.min(r.files.len().saturating_sub(1));
            return next_page(state);
        }
        Msg::DiffRefused { session_id, reason } => {
            if let Some(r) = state.review.as_mut().filter(|r| r.session_id == session_id) {
                r.loading = false;
                r.refused = Some(reason);
            }
        }
        Msg::Merged {
            session_id,
            strategy,
            result,
        } => {
            if result.merged {
                let commit = result.commit.as_deref().unwrap_or("");
                let short = commit.get(..7).unwrap_or(commit);
                // Short enough for an 80-column footer beside its key hints.
                let next = "worktree and branch kept: X discards them";
                state.flash(format!("merged ({strategy}) {short} · {next}"), false);
            } else {
                // Solved on the session's branch, as hlyr merge says: by its agent, most
                // simply. (The footer cleans what it shows.)
                let base = state
                    .sessions
                    .iter()
                    .find(|s| s.id == session_id)
                    .and_then(|s| s.worktree.as_ref())
                    .map_or("its base", |w| w.base_branch.as_str());
                let files = result.conflicts.join(", ");
                let text = format!(
                    "not merged: conflicts in {files} · ask its agent to merge {base} into its \
                     branch"
                );
                state.flash(text, true);
            }
            return vec![Command::LoadSessions];
        }
        Msg::Discarded(session_id) => {
            state.stats.remove(&session_id);
            if state
                .review
                .as_ref()
                .is_some_and(|r| r.session_id == session_id)
            {
                state.review = None;
                state.screen = Screen::Sessions;
            }
            state.flash("discarded the worktree and its branch", false);
            return vec![Command::LoadSessions];
        }
        Msg::DiscardRefused { session_id, reason } => {
            // The dialog says why; "discarding…" no longer holds.
            state.flash = None;
            state.modal = Some(Modal::ConfirmDiscard {
                session_id,
                refused: Some(reason),
            });
        }
        _ => {}
    }
    Vec::new()
}

/// A key in the merge dialog: ←/→ (or m, s, r) choose how, y or Enter merges, n or Esc
/// cancels.
pub(super) fn merge_key(
    state: &mut State,
    session_id: String,
    mut strategy: MergeStrategy,
    key: KeyEvent,
) -> Vec<Command> {
    let known = MergeStrategy::KNOWN;
    let at = known.iter().position(|s| *s == strategy).unwrap_or(0);
    match (keys::action(&[Scope::Forms], Key::of(key, false)), key.code) {
        (Some(Action::Back), _) | (_, KeyCode::Char('n')) => return Vec::new(),
        (_, KeyCode::Enter | KeyCode::Char('y')) => {
            state.flash(format!("merging ({strategy})…"), false);
            return vec![Command::Merge {
                session_id,
                strategy,
            }];
        }
        (Some(Action::NextChoice), _) => strategy = known[(at + 1) % known.len()].clone(),
        (Some(Action::PreviousChoice), _) => {
            strategy = known[(at + known.len() - 1) % known.len()].clone()
        }
        (_, KeyCode::Char(c)) => {
            if let Some(s) = known.iter().find(|s| s.as_str().starts_with(c)) {
                strategy = s.clone();
            }
        }
        _ => {}
    }
    state.modal = Some(Modal::Merge {
        session_id,
        strategy,
    });
    Vec::new()
}

/// A key in the discard dialog: y or Enter discards (forced once the daemon refused), n or
/// Esc keeps it.
pub(super) fn discard_key(
    state: &mut State,
    session_id: String,
    refused: Option<String>,
    key: KeyEvent,
) -> Vec<Command> {
    match key.code {
        KeyCode::Enter | KeyCode::Char('y') => {
            state.flash("discarding…", false);
            vec![Command::Discard {
                session_id,
                force: refused.is_some(),
            }]
        }
        KeyCode::Esc | KeyCode::Char('n') => Vec::new(),
        _ => {
            state.modal = Some(Modal::ConfirmDiscard {
                session_id,
                refused,
            });
            Vec::new()
        }
    }
}
