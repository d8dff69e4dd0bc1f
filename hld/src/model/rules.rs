//! The rules that decide a tool call without asking: auto-accept of edits and the bypass
//! (until it expires) approve, plan mode refuses edits; a plan (`ExitPlanMode`) is never
//! decided by a rule. The store applies them in the transaction that stores the approval.

use chrono::{DateTime, Utc};
use hld_client::protocol::{
    ApprovalSource, ApprovalStatus, ApprovalType, PermissionMode, SessionStatus,
};

/// The comment recorded on an approval resolved because its session ended.
pub const SESSION_ENDED: &str = "the session ended before a decision";

/// The tools auto-accept covers, and plan mode refuses.
pub const EDIT_TOOLS: [&str; 3] = ["Edit", "Write", "MultiEdit"];

/// The tool whose approval carries a plan; approving it leaves plan mode.
pub const EXIT_PLAN_MODE: &str = "ExitPlanMode";

/// The comment on an edit refused in plan mode, which Claude reads.
pub const PLAN_MODE_REFUSAL: &str = "Denied: the session is in plan mode, so nothing is \
    edited yet. Present your plan with ExitPlanMode; edits are possible once it is approved.";

/// A session's modes, as stored: how its tool calls are approved, and whether the daemon
/// resumes it when a usage limit that stopped it resets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Modes {
    pub auto_accept_edits: bool,
    /// Every tool call is approved at once, until `bypass_expires_at`.
    pub dangerously_skip_permissions: bool,
    /// When the bypass ends, RFC 3339; `None`: when turned off.
    pub bypass_expires_at: Option<String>,
    /// `plan`: Claude plans, edits are refused until its plan is approved.
    pub permission_mode: PermissionMode,
    /// Resume the session when the usage limit that stopped it resets.
    pub resume_on_reset: bool,
}

impl Modes {
    /// Whether the bypass is on at `now`; an unreadable expiry counts as passed (never extended).
    pub fn bypass_active(&self, now: &str) -> bool {
        self.dangerously_skip_permissions
            && self.bypass_expires_at.as_deref().is_none_or(|expiry| {
                match (parse(expiry), parse(now)) {
                    (Some(expiry), Some(now)) => expiry > now,
                    _ => false,
                }
            })
    }

    /// The time a bypass on at `now` has left, in milliseconds (at least 1), when it expires.
    pub fn bypass_left_ms(&self, now: &str) -> Option<i64> {
        let expiry = parse(self.bypass_expires_at.as_deref()?)?;
        let left = (expiry - parse(now)?).num_milliseconds().max(1);
        self.bypass_active(now).then_some(left)
    }

    /// A continuation's modes at `now`: auto-accept, the permission mode and resume-on-reset
    /// as they are, the bypass only while it lasts.
    pub fn inherited(&self, now: &str) -> Modes {
        let bypass = self.bypass_active(now);
        Modes {
            auto_accept_edits: self.auto_accept_edits,
            dangerously_skip_permissions: bypass,
            bypass_expires_at: self.bypass_expires_at.clone().filter(|_| bypass),
            permission_mode: self.permission_mode.clone(),
            resume_on_reset: self.resume_on_reset,
        }
    }
}

fn parse(rfc3339: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A rule that approved a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    AutoAcceptEdits,
    DangerouslySkipPermissions,
}

impl Rule {
    /// What is recorded as the decider (`decided_by`).
    pub fn name(self) -> &'static str {
        match self {
            Rule::AutoAcceptEdits => "auto_accept_edits",
            Rule::DangerouslySkipPermissions => "dangerously_skip_permissions",
        }
    }

    /// The approval's comment, which Claude reads.
    pub fn comment(self) -> &'static str {
        match self {
            Rule::AutoAcceptEdits => {
                "Approved automatically: auto-accept edits is on for this session."
            }
            Rule::DangerouslySkipPermissions => {
                "Approved automatically: permissions are bypassed for this session."
            }
        }
    }
}

/// How a new approval is stored when nobody is to be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settled {
    Rule(Rule),
    /// Denied: an edit while the session plans.
    PlanMode,
    /// Resolved: its session had ended, so no `claude` waits for it.
    SessionEnded,
}

impl Settled {
    pub fn status(self) -> ApprovalStatus {
        match self {
            Settled::Rule(_) => ApprovalStatus::Approved,
            Settled::PlanMode => ApprovalStatus::Denied,
            Settled::SessionEnded => ApprovalStatus::Resolved,
        }
    }

    /// Its comment, which Claude (or the approvals server) reads.
    pub fn comment(self) -> &'static str {
        match self {
            Settled::Rule(rule) => rule.comment(),
            Settled::PlanMode => PLAN_MODE_REFUSAL,
            Settled::SessionEnded => SESSION_ENDED,
        }
    }

    /// Its decider: the rule or the mode; nobody for a resolution.
    pub fn decided_by(self) -> Option<&'static str> {
        match self {
            Settled::Rule(rule) => Some(rule.name()),
            Settled::PlanMode => Some("plan_mode"),
            Settled::SessionEnded => None,
        }
    }
}

/// How a new approval is settled as it is stored at `now`, if it is: a cloud one of an ended
/// session is resolved (the poller may see it after the end), an edit in plan mode is denied
/// (whatever else is on), one a rule covers is approved.
pub fn on_creation(
    source: ApprovalSource,
    kind: ApprovalType,
    tool: Option<&str>,
    session: &SessionStatus,
    modes: &Modes,
    now: &str,
) -> Option<Settled> {
    match source {
        ApprovalSource::Cloud => (!session.is_active()).then_some(Settled::SessionEnded),
        ApprovalSource::Local
            if modes.permission_mode == PermissionMode::Plan
                && kind == ApprovalType::FunctionCall
                && tool.is_some_and(|t| EDIT_TOOLS.contains(&t)) =>
        {
            Some(Settled::PlanMode)
        }
        ApprovalSource::Local => automatic(modes, kind, tool, now).map(Settled::Rule),
        // The daemon creates no approval from a source it does not know.
        _ => None,
    }
}

/// The rule that approves an approval of `kind` for `tool` at `now`; never a question or a
/// plan: those wait for a human.
pub fn automatic(modes: &Modes, kind: ApprovalType, tool: Option<&str>, now: &str) -> Option<Rule> {
    if kind != ApprovalType::FunctionCall || tool == Some(EXIT_PLAN_MODE) {
        return None;
    }
    if modes.bypass_active(now) {
        return Some(Rule::DangerouslySkipPermissions);
    }
    (modes.auto_accept_edits && tool.is_some_and(|t| EDIT_TOOLS.contains(&t)))
        .then_some(Rule::AutoAcceptEdits)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-27T12:00:00.000Z";

    fn modes(auto: bool, bypass: bool, expiry: Option<&str>) -> Modes {
        Modes {
            auto_accept_edits: auto,
            dangerously_skip_permissions: bypass,
            bypass_expires_at: expiry.map(str::to_owned),
            permission_mode: PermissionMode::Default,
            resume_on_reset: false,
        }
    }

    #[test]
    fn a_bypass_has_time_left_only_while_on_and_before_its_expiry() {
        let timed = modes(false, true, Some("2026-11-27T12:00:01.500Z"));
        assert_eq!(timed.bypass_left_ms(NOW), Some(1500));
        let ended = modes(false, true, Some("2026-11-27T11:59:59.000Z"));
        assert_eq!(ended.bypass_left_ms(NOW), None);
        assert_eq!(modes(false, true, None).bypass_left_ms(NOW), None);
        let off = modes(false, false, Some("2026-11-27T12:00:01.500Z"));
        assert_eq!(off.bypass_left_ms(NOW), None);
    }

    #[test]
    fn a_plan_waits_for_a_human_and_plan_mode_refuses_edits_whatever_else_is_on() {
        let call = ApprovalType::FunctionCall;
        let all = modes(true, true, None);
        assert_eq!(automatic(&all, call, Some(EXIT_PLAN_MODE), NOW), None);
        let planning = Modes {
            permission_mode: PermissionMode::Plan,
            ..all
        };
        let settle = |tool| {
            on_creation(
                ApprovalSource::Local,
                call,
                Some(tool),
                &SessionStatus::Running,
                &planning,
                NOW,
            )
        };
        let refused = settle("Write").unwrap();
        assert_eq!(refused, Settled::PlanMode);
        assert_eq!(refused.status(), ApprovalStatus::Denied);
        assert_eq!(refused.decided_by(), Some("plan_mode"));
        assert_eq!(settle(EXIT_PLAN_MODE), None);
        assert_eq!(
            settle("Bash"),
            Some(Settled::Rule(Rule::DangerouslySkipPermissions))
        );
    }

    #[test]
    fn auto_accept_covers_edits_only_and_never_questions() {
        let m = modes(true, false, None);
        let call = ApprovalType::FunctionCall;
        assert_eq!(
            automatic(&m, call, Some("Edit"), NOW),
            Some(Rule::AutoAcceptEdits)
        );
        assert_eq!(
            automatic(&m, call, Some("MultiEdit"), NOW),
            Some(Rule::AutoAcceptEdits)
        );
        assert_eq!(automatic(&m, call, Some("Bash"), NOW), None);
        let all = modes(true, true, None);
        assert_eq!(automatic(&all, ApprovalType::HumanContact, None, NOW), None);
        assert_eq!(
            automatic(&all, call, Some("Bash"), NOW),
            Some(Rule::DangerouslySkipPermissions)
        );
    }

    #[test]
    fn a_cloud_approval_of_an_ended_session_is_resolved_and_only_local_ones_meet_the_rules() {
        let call = ApprovalType::FunctionCall;
        let local = |session: &SessionStatus, modes: &Modes| {
            on_creation(
                ApprovalSource::Local,
                call,
                Some("Edit"),
                session,
                modes,
                NOW,
            )
        };
        let cloud = |session: &SessionStatus, modes: &Modes| {
            on_creation(
                ApprovalSource::Cloud,
                call,
                Some("Edit"),
                session,
                modes,
                NOW,
            )
        };
        let auto = modes(true, false, None);
        let (running, done) = (SessionStatus::Running, SessionStatus::Completed);
        let settled = cloud(&SessionStatus::Failed, &auto).unwrap();
        assert_eq!(settled, Settled::SessionEnded);
        assert_eq!(settled.status(), ApprovalStatus::Resolved);
        assert_eq!(
            (settled.comment(), settled.decided_by()),
            (SESSION_ENDED, None)
        );
        assert_eq!(cloud(&running, &auto), None);
        let ruled = local(&running, &auto).unwrap();
        assert_eq!(ruled, Settled::Rule(Rule::AutoAcceptEdits));
        assert_eq!(ruled.status(), ApprovalStatus::Approved);
        assert_eq!(ruled.decided_by(), Some("auto_accept_edits"));
        // A local approval of an ended session waits as it always did; only rules decide it.
        assert_eq!(local(&done, &modes(false, false, None)), None);
    }

    #[test]
    fn a_bypass_ends_at_its_expiry_and_a_continuation_keeps_the_same_one() {
        let m = modes(false, true, Some("2026-11-27T12:00:00.500Z"));
        assert!(m.bypass_active(NOW));
        assert!(!m.bypass_active("2026-11-27T12:00:00.500Z"));
        assert!(!modes(false, true, Some("garbage")).bypass_active(NOW));
        assert_eq!(m.inherited(NOW), m);
        assert_eq!(
            m.inherited("2026-11-27T12:00:01.000Z"),
            modes(false, false, None)
        );
    }
}
