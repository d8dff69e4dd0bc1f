//! The key map's tests: what keys do in each scope, and that none is bound twice.

use super::*;

#[test]
fn a_key_does_what_its_scope_binds_it_to() {
    let press = |code, modifiers| KeyEvent::new(code, modifiers);
    let none = KeyModifiers::NONE;
    let cases = [
        (
            Sessions,
            press(KeyCode::Char('j'), none),
            false,
            Some(A::Down),
        ),
        (
            Sessions,
            press(KeyCode::Char('G'), KeyModifiers::SHIFT),
            false,
            Some(A::Last),
        ),
        (
            Sessions,
            press(KeyCode::Char('g'), none),
            true,
            Some(A::First),
        ),
        (
            Approvals,
            press(KeyCode::Char('s'), none),
            true,
            Some(A::ShowSessions),
        ),
        (
            Sessions,
            press(KeyCode::Char('c'), KeyModifiers::CONTROL),
            false,
            Some(A::Quit),
        ),
        (
            Conversation,
            press(KeyCode::Char('d'), KeyModifiers::CONTROL),
            false,
            Some(A::HalfPageDown),
        ),
        (
            Conversation,
            press(KeyCode::Char('d'), none),
            false,
            Some(A::Deny),
        ),
        (
            Conversation,
            press(KeyCode::Char('a'), KeyModifiers::ALT),
            false,
            Some(A::AutoAccept),
        ),
        (
            Approvals,
            press(KeyCode::Char('a'), KeyModifiers::ALT),
            false,
            None,
        ),
        (Approvals, press(KeyCode::Char('e'), none), false, None),
        (Approvals, press(KeyCode::Enter, none), false, Some(A::Open)),
        (Approvals, press(KeyCode::Esc, none), false, Some(A::Back)),
        (Sessions, press(KeyCode::Esc, none), false, Some(A::Clear)),
        (
            Conversation,
            press(KeyCode::Enter, none),
            false,
            Some(A::Reply),
        ),
        (Sessions, press(KeyCode::Char('z'), none), false, None),
    ];
    for (scope, event, after_g, expected) in cases {
        let found = action(&[Global, scope], Key::of(event, after_g));
        assert_eq!(found, expected, "{scope:?} {event:?} after g: {after_g}");
    }
}

/// A key means one thing in each scope it is looked up in.
#[test]
fn no_key_is_bound_twice_where_it_is_looked_up() {
    for screen in [Sessions, Conversation, Approvals, Reply, Review, Forms] {
        let scopes = [Global, screen];
        let keys: Vec<Key> = BINDINGS
            .iter()
            .filter(|b| scopes.contains(&b.scope))
            .flat_map(|b| b.keys.iter().map(|(k, _)| *k))
            .collect();
        for (i, key) in keys.iter().enumerate() {
            assert!(!keys[i + 1..].contains(key), "{key:?} twice in {screen:?}");
        }
    }
}

#[test]
fn hints_too_wide_lose_whole_hints_from_the_end_but_keep_help() {
    let all = hints(crate::app::Screen::Sessions);
    assert_eq!(fit_hints(all, 500), all);
    let fitted = fit_hints(all, 78);
    assert!(fitted.chars().count() <= 78, "{fitted}");
    assert!(fitted.starts_with("j/k move · Enter open"), "{fitted}");
    assert!(fitted.ends_with(" · ? help"), "{fitted}");
    assert!(!fitted.contains("q quit"), "{fitted}");
    assert!(all.starts_with(fitted.trim_end_matches(" · ? help")));
    assert_eq!(fit_hints(all, 3), "? help");
}
