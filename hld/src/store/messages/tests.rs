//! Tests of the message queue and of turns' ends, against a real SQLite file.

use hld_client::protocol::{MessageMode, MessageStatus, SessionStatus};

use crate::model::{Happening, Modes, SessionOptions};
use crate::store::messages::Outgoing;
use crate::store::{messages, read, Ingest, NewSession, SessionUpdate, Store, TurnEnd};

fn queued(text: &str) -> Outgoing<'_> {
    Outgoing {
        text,
        images: &[],
        mode: MessageMode::Queue,
    }
}

async fn running_session(store: &Store) -> String {
    let new = NewSession {
        id: "s1".into(),
        run_id: "run-s1".into(),
        parent_session_id: None,
        query: "q".into(),
        summary: "q".into(),
        options: SessionOptions::default(),
        created_at: crate::time::now(),
        title: None,
        modes: Modes::default(),
    };
    store
        .write(move |w, out| {
            w.create_session(&new)?;
            w.advance("s1", Happening::Started, &SessionUpdate::default(), out)
        })
        .await
        .unwrap();
    "s1".into()
}

/// Ends the turn with a result of `cost`; `warm`: no message is handed over at once.
async fn end_turn(store: &Store, id: &str, cost: f64, warm: bool) {
    let batch = Ingest {
        update: Some(SessionUpdate {
            cost_usd: Some(cost),
            input_tokens: Some(10),
            ..SessionUpdate::default()
        }),
        turn_end: Some(TurnEnd {
            error: None,
            live_until: warm.then(|| "2099-01-01T00:00:00.000Z".to_owned()),
            usage_limit: None,
        }),
        ..Ingest::default()
    };
    let id = id.to_owned();
    store
        .write(move |w, out| w.ingest(&id, batch, out))
        .await
        .unwrap();
}

async fn status(store: &Store, id: &str) -> (SessionStatus, Option<String>, Option<f64>) {
    let id = id.to_owned();
    let row = store
        .read(move |c| read::session(c, &id))
        .await
        .unwrap()
        .unwrap();
    (row.status, row.live_until, row.cost_usd)
}

#[tokio::test]
async fn queued_messages_are_delivered_oldest_first_each_as_a_new_turn() {
    let (_dir, store) = Store::open_temp();
    let id = running_session(&store).await;
    let queue = |text: &'static str| {
        let id = id.clone();
        store.write(move |w, out| w.queue_message(&id, queued(text), out))
    };
    let first = queue("first").await.unwrap();
    let dropped = queue("dropped").await.unwrap();
    let second = queue("second").await.unwrap();
    let cancel = |mid: String, why: Option<&'static str>| {
        store.write(move |w, out| w.cancel_message(&mid, why, out))
    };
    let cancelled = cancel(dropped.id.clone(), None).await.unwrap();
    assert_eq!(cancelled.status, MessageStatus::Cancelled);
    assert!(cancel(dropped.id.clone(), None).await.is_err());
    let sid = id.clone();
    let waiting = store
        .read(move |c| messages::queued(c, &sid))
        .await
        .unwrap();
    assert_eq!(waiting, [first.clone(), second.clone()]);

    end_turn(&store, &id, 0.5, true).await;
    let (s, until, cost) = status(&store, &id).await;
    assert_eq!(
        (s, until.is_some(), cost),
        (SessionStatus::Completed, true, Some(0.5))
    );
    for expected in [&first, &second] {
        let sid = id.clone();
        let next = store
            .write(move |w, out| w.deliver_next(&sid, "claude-1", out))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (next.id.as_str(), next.status),
            (expected.id.as_str(), MessageStatus::Delivered)
        );
        assert_eq!(status(&store, &id).await.0, SessionStatus::Running);
        end_turn(&store, &id, 0.25, true).await;
    }
    // Each turn's cost is added once.
    assert_eq!(status(&store, &id).await.2, Some(1.0));
    let sid = id.clone();
    let events = store
        .read(move |c| read::conversation_for_session(c, &sid, None, None))
        .await
        .unwrap()
        .unwrap();
    let texts: Vec<_> = events.iter().filter_map(|e| e.content.as_deref()).collect();
    assert_eq!(texts, ["first", "second"]);
    let sid = id.clone();
    let none = store.write(move |w, out| w.deliver_next(&sid, "claude-1", out));
    assert_eq!(none.await.unwrap(), None);
}

#[tokio::test]
async fn a_turn_followed_at_once_runs_on_and_a_given_up_queue_says_why() {
    let (_dir, store) = Store::open_temp();
    let id = running_session(&store).await;
    end_turn(&store, &id, 0.1, false).await;
    assert_eq!(status(&store, &id).await.0, SessionStatus::Running);
    let sid = id.clone();
    store
        .write(move |w, out| w.queue_message(&sid, queued("later"), out))
        .await
        .unwrap();
    let sid = id.clone();
    let given_up = store.write(move |w, out| w.give_up_messages(&sid, "no process", out));
    assert_eq!(given_up.await.unwrap(), 1);
    let sid = id.clone();
    assert!(store
        .read(move |c| messages::queued(c, &sid))
        .await
        .unwrap()
        .is_empty());
    assert!(store
        .read(messages::sessions_with_queued)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_queued_message_keeps_its_images_and_the_conversation_names_them() {
    let (_dir, store) = Store::open_temp();
    let id = running_session(&store).await;
    let sid = id.clone();
    let queued = store
        .write(move |w, out| {
            let images = ["/pics/one.png".to_owned(), "/pics/two.gif".to_owned()];
            let text = "see these";
            w.queue_message(
                &sid,
                Outgoing {
                    text,
                    images: &images,
                    mode: MessageMode::Queue,
                },
                out,
            )
        })
        .await
        .unwrap();
    assert_eq!(queued.images, ["/pics/one.png", "/pics/two.gif"]);
    let sid = id.clone();
    let listed = store
        .read(move |c| messages::queued(c, &sid))
        .await
        .unwrap();
    assert_eq!(listed, std::slice::from_ref(&queued));
    end_turn(&store, &id, 0.1, true).await;
    let sid = id.clone();
    let next = store
        .write(move |w, out| w.deliver_next(&sid, "claude-1", out))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.images, queued.images);
    let sid = id.clone();
    let events = store
        .read(move |c| read::conversation_for_session(c, &sid, None, None))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        events.last().unwrap().content.as_deref(),
        Some("see these\n[image: one.png]\n[image: two.gif]")
    );
}
