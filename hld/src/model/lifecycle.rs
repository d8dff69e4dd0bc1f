//! Every rule of a session's status, in one function: status × happening → status, applied by
//! the store from the status it really has; only a new turn leaves a final status.

use hld_client::protocol::SessionStatus;

/// Something that happened to a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening {
    /// Its `claude` process started.
    Started,
    /// Its `claude` process could not be started.
    StartFailed,
    /// One of its approvals is pending.
    ApprovalRequested,
    /// None of its approvals is pending any more.
    ApprovalsSettled,
    /// An interrupt was asked for.
    InterruptRequested,
    /// A turn's `result` arrived; `failed` when the turn failed (an interrupted one did not).
    TurnEnded { failed: bool },
    /// Its process ended; `failed` when the run failed (an interrupted run did not).
    Exited { failed: bool },
    /// A previous daemon left it active: its process died with that daemon.
    Orphaned,
    /// A new message to the session starts another turn.
    NewTurn,
}

impl std::fmt::Display for Happening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Happening::Started => "started",
            Happening::StartFailed => "start-failed",
            Happening::ApprovalRequested => "approval-requested",
            Happening::ApprovalsSettled => "approvals-settled",
            Happening::InterruptRequested => "interrupt-requested",
            Happening::TurnEnded { failed: false } => "turn-ended",
            Happening::TurnEnded { failed: true } => "turn-failed",
            Happening::Exited { failed: false } => "exited",
            Happening::Exited { failed: true } => "exited-failed",
            Happening::Orphaned => "orphaned",
            Happening::NewTurn => "new-turn",
        })
    }
}

/// The status a session in `from` moves to when `happening` happens; `None` when it stays.
pub fn transition(from: &SessionStatus, happening: Happening) -> Option<SessionStatus> {
    use Happening::*;
    use SessionStatus::*;
    let to = match (from, happening) {
        (Starting, Started) => Running,
        (Starting, StartFailed) => Failed,
        (Running, ApprovalRequested) => WaitingInput,
        (WaitingInput, ApprovalsSettled) => Running,
        (Starting | Running | WaitingInput, InterruptRequested) => Completing,
        (
            Starting | Running | WaitingInput | Completing,
            Exited { failed } | TurnEnded { failed },
        ) => {
            if failed {
                Failed
            } else {
                Completed
            }
        }
        (Starting | Running | WaitingInput | Completing, Orphaned) => Failed,
        (Completed | Failed, NewTurn) => Running,
        _ => return None,
    };
    Some(to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Happening::*;
    use SessionStatus::*;

    const ALL: [Happening; 11] = [
        Started,
        StartFailed,
        ApprovalRequested,
        ApprovalsSettled,
        InterruptRequested,
        TurnEnded { failed: false },
        TurnEnded { failed: true },
        Exited { failed: false },
        Exited { failed: true },
        Orphaned,
        NewTurn,
    ];

    #[test]
    fn the_table() {
        let cases = [
            (Starting, Started, Some(Running)),
            (Running, Started, None),
            (Starting, StartFailed, Some(Failed)),
            (Running, ApprovalRequested, Some(WaitingInput)),
            (WaitingInput, ApprovalRequested, None),
            (Completing, ApprovalRequested, None),
            (WaitingInput, ApprovalsSettled, Some(Running)),
            (Completing, ApprovalsSettled, None),
            (Running, InterruptRequested, Some(Completing)),
            (WaitingInput, InterruptRequested, Some(Completing)),
            (Completing, InterruptRequested, None),
            (Completing, Exited { failed: false }, Some(Completed)),
            (Running, TurnEnded { failed: false }, Some(Completed)),
            (Completing, TurnEnded { failed: true }, Some(Failed)),
            (Completed, TurnEnded { failed: false }, None),
            (WaitingInput, Exited { failed: true }, Some(Failed)),
            (Running, Orphaned, Some(Failed)),
            (Completing, Orphaned, Some(Failed)),
            (Completed, NewTurn, Some(Running)),
            (Failed, NewTurn, Some(Running)),
            (Starting, NewTurn, None),
            (Running, NewTurn, None),
            (WaitingInput, NewTurn, None),
            (Completing, NewTurn, None),
        ];
        for (from, happening, to) in cases {
            assert_eq!(transition(&from, happening), to, "{from} × {happening}");
        }
    }

    #[test]
    fn only_a_new_turn_leaves_a_final_status() {
        for from in [Completed, Failed] {
            for happening in ALL {
                let to = transition(&from, happening);
                let expected = (happening == NewTurn).then_some(Running);
                assert_eq!(to, expected, "{from} × {happening}");
            }
        }
    }
}
