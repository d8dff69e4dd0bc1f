//! Loads and their answers: an answer overtaken by a later load of the same kind from the
//! same daemon is dropped instead of showing older data.

use std::collections::HashMap;

use crate::app::{Command, Msg, UsageTable};

/// A load whose answer a later load of the same kind overtakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Load {
    Sessions,
    Drafts,
    Approvals,
    Conversation,
    Queue,
    Commands,
    Files,
    Diff,
    RateLimits,
    Usage(UsageTable),
}

impl Load {
    pub(crate) fn of(command: &Command) -> Option<Load> {
        match command {
            Command::LoadSessions => Some(Load::Sessions),
            Command::LoadDrafts => Some(Load::Drafts),
            Command::LoadApprovals => Some(Load::Approvals),
            Command::LoadConversation(_) => Some(Load::Conversation),
            Command::LoadQueue(_) => Some(Load::Queue),
            Command::LoadCommands(_) => Some(Load::Commands),
            Command::SuggestFiles { .. } => Some(Load::Files),
            Command::LoadDiff { .. } => Some(Load::Diff),
            Command::LoadRateLimits => Some(Load::RateLimits),
            Command::LoadUsage { table, .. } => Some(Load::Usage(*table)),
            _ => None,
        }
    }
}

/// A message with the daemon and load it answers (and that load's generation), so that an
/// answer overtaken by a later load of the same kind from that daemon is dropped instead of
/// showing older data.
pub(crate) struct Tagged {
    pub(crate) load: Option<(usize, Load, u64)>,
    pub(crate) msg: Msg,
}

impl Tagged {
    pub(crate) fn msg_if_latest(self, latest: &HashMap<(usize, Load), u64>) -> Option<Msg> {
        let stale = self.load.is_some_and(|(daemon, load, generation)| {
            latest.get(&(daemon, load)) != Some(&generation)
        });
        (!stale).then_some(self.msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_overtaken_by_a_later_load_of_its_kind_is_dropped() {
        let latest = HashMap::from([
            ((0, Load::Sessions), 2),
            ((1, Load::Sessions), 1),
            ((0, Load::Conversation), 1),
        ]);
        let cases = [
            (None, true),
            (Some((0, Load::Sessions, 2)), true),
            (Some((0, Load::Sessions, 1)), false),
            (Some((1, Load::Sessions, 1)), true),
            (Some((1, Load::Sessions, 2)), false),
            (Some((0, Load::Conversation, 1)), true),
        ];
        for (load, kept) in cases {
            let tagged = Tagged {
                load,
                msg: Msg::Done("answer".into()),
            };
            assert_eq!(tagged.msg_if_latest(&latest).is_some(), kept, "{load:?}");
        }
        assert_eq!(Load::of(&Command::LoadSessions), Some(Load::Sessions));
        let suggest = Command::SuggestFiles {
            session_id: "s".into(),
            query: "src/".into(),
        };
        assert_eq!(Load::of(&suggest), Some(Load::Files));
        let commands = Command::LoadCommands("s".into());
        assert_eq!(Load::of(&commands), Some(Load::Commands));
        let days = Command::LoadUsage {
            table: UsageTable::Days,
            since: None,
        };
        assert_eq!(Load::of(&days), Some(Load::Usage(UsageTable::Days)));
        assert_eq!(Load::of(&Command::Interrupt("s".into())), None);
    }
}
