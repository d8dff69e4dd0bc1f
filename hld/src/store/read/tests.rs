//! Unit tests of `read`.

use super::*;

/// A database in the current schema holding one session per query, rowids in order.
fn with_queries(queries: &[&str]) -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    super::super::schema::migrate(&mut conn).unwrap();
    for (i, query) in queries.iter().enumerate() {
        conn.execute(
            "INSERT INTO sessions (id, run_id, query, initial_status, status, created_at,
                last_activity_at)
             VALUES (?1, ?2, ?3, 'starting', 'completed', '2026-01-01T00:00:00.000Z',
                '2026-01-01T00:00:00.000Z')",
            params![format!("s{i}"), format!("run-{i}"), query],
        )
        .unwrap();
    }
    conn
}

fn ids(rows: &[SessionRow]) -> Vec<&str> {
    rows.iter().map(|s| s.new.id.as_str()).collect()
}

#[test]
fn search_finds_every_word_as_a_prefix_newest_first_up_to_the_limit() {
    let conn = with_queries(&[
        "flaky parser test in the lexer",
        "flaky flaky flaky",
        "the parser",
        "unrelated words only",
        "Flaky test",
        "a flaky one",
    ]);
    assert_eq!(
        ids(&search(&conn, "\"flak\"*", 50).unwrap()),
        ["s5", "s4", "s1", "s0"]
    );
    // The limit keeps the newest.
    assert_eq!(ids(&search(&conn, "\"flak\"*", 2).unwrap()), ["s5", "s4"]);
    assert_eq!(
        ids(&search(&conn, "\"pars\"* \"test\"*", 50).unwrap()),
        ["s0"]
    );
    assert!(search(&conn, "\"zebra\"*", 50).unwrap().is_empty());
}
