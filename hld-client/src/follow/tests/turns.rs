//! Unit tests of `follow`: a turn's end taken in live, and the next turn a queued message
//! starts at once.

use super::*;

#[test]
fn a_turn_a_queued_message_follows_ends_before_the_next_turn_and_with_its_figures() {
    let mut l = ledger();
    assert_eq!(l.live_conversation(message(1, 1)), Next::Listen);
    let mut ended = status("running", "completed");
    let turn = TurnResult {
        cost_usd: Some(0.5),
        ..TurnResult::default()
    };
    if let Event::SessionStatusChanged { turn: told, .. } = &mut ended {
        *told = Some(turn.clone());
    }
    assert_eq!(l.event(ended), Next::CatchUp);
    // The catch-up finds the next turn, which a queued message started, stored and ended: the
    // first one's end comes now, the next turn live, statuses first.
    assert_eq!(l.stored(vec![message(1, 1), message(2, 2)]), Some(1));
    l.queue_read(Vec::new());
    assert_eq!(l.state(live_state("completed")), Settled::Live);
    assert_eq!(l.event(status("completed", "running")), Next::Listen);
    assert_eq!(l.live_conversation(message(2, 2)), Next::Listen);
    assert_eq!(l.event(status("running", "completed")), Next::CatchUp);
    let items = drain(&mut l);
    let told = kinds(&items);
    assert_eq!(
        told[1..4],
        ["status completed", "turn completed", "status running"]
    );
    assert!(
        told[4].contains("line 2") && told[5] == "status completed",
        "{told:?}"
    );
    assert!(matches!(&items[2], FollowItem::TurnEnded { turn: Some(t), .. } if **t == turn));
}
