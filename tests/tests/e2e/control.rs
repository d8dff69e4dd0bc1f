//! Organising sessions over the real daemon and `fake-claude`: titles, the archive and the
//! leaf list, auto-accept of edits and the bypass of permissions with its expiry, forks,
//! extra directories, recent paths, search and deletion.

use hld_client::protocol::*;
use hld_e2e::corpus::{self, Text};
use hld_e2e::{launch_params, DaemonOptions, Subscription, TestDaemon};
use serde_json::json;

fn fake() -> TestDaemon {
    TestDaemon::start_with(DaemonOptions::fake_claude())
}

fn workdir(d: &TestDaemon) -> String {
    let dir = d.dir.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    dir.display().to_string()
}

/// Launches `query` and waits for it to end.
fn finished(d: &TestDaemon, params: LaunchSessionParams) -> String {
    let id = d.launch(params);
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    id
}

/// Continues `parent` with `query` and waits for the continuation to end.
fn continued(d: &TestDaemon, parent: &str, query: &str) -> String {
    let id = d
        .request::<ContinueSession>(ContinueSessionParams {
            session_id: parent.to_owned(),
            query: query.to_owned(),
            ..Default::default()
        })
        .session_id;
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
    id
}

fn leaves(d: &TestDaemon, filter: Option<LeafFilter>) -> Vec<String> {
    d.request::<GetSessionLeaves>(GetSessionLeavesParams { filter })
        .sessions
        .into_iter()
        .map(|s| s.id)
        .collect()
}

fn settings_events(d: &TestDaemon) -> Subscription {
    d.subscribe(SubscribeParams {
        event_types: Some(vec!["session_settings_changed".into()]),
        ..Default::default()
    })
}

/// The next `session_settings_changed`: its settings and reason.
fn next_settings(sub: &mut Subscription) -> (SessionControl, String) {
    match sub.next_event().event {
        Event::SessionSettingsChanged {
            control, reason, ..
        } => (control, reason),
        other => panic!("subscribed to settings only: {other:?}"),
    }
}

fn settings(d: &TestDaemon, p: UpdateSessionSettingsParams) -> SuccessResult {
    d.request::<UpdateSessionSettings>(p)
}

/// Asks for `tool` on `session_id` as the approvals server does; returns the approval.
fn ask(d: &TestDaemon, session_id: &str, tool: &str) -> Approval {
    let id = d
        .request::<CreateApproval>(CreateApprovalParams {
            session_id: Some(session_id.to_owned()),
            tool_name: Some(tool.to_owned()),
            tool_input: Some(json!({"command": "ls"})),
            ..Default::default()
        })
        .approval_id;
    d.request::<GetApproval>(GetApprovalParams { approval_id: id })
        .approval
}

#[test]
fn titles_are_given_shown_changed_and_inherited() {
    let d = fake();
    let wd = workdir(&d);
    let titled = finished(
        &d,
        LaunchSessionParams {
            title: Some("Parser work".into()),
            ..launch_params("scenario:plain refactor\nthe parser", &wd)
        },
    );
    let untitled = finished(&d, launch_params("scenario:plain first line\nsecond", &wd));
    assert_eq!(d.state(&titled).control.title, "Parser work");
    assert_eq!(
        d.state(&untitled).control.title,
        "scenario:plain first line"
    );
    let listed = d.request::<ListSessions>(NoParams {}).sessions;
    let title_of = |id: &str| {
        let s = listed.iter().find(|s| s.id == id).unwrap();
        s.control.title.clone()
    };
    assert_eq!(title_of(&titled), "Parser work");

    let mut sub = settings_events(&d);
    let r = d.request::<UpdateSessionTitle>(UpdateSessionTitleParams {
        session_id: untitled.clone(),
        title: "Renamed".into(),
    });
    assert!(r.success);
    let (control, reason) = next_settings(&mut sub);
    assert_eq!(
        (control.title.as_str(), reason.as_str()),
        ("Renamed", "updated")
    );
    assert_eq!(d.state(&untitled).control.title, "Renamed");
    // A continuation inherits the title, unless it brings its own.
    let child = continued(&d, &untitled, "scenario:plain more");
    assert_eq!(d.state(&child).control.title, "Renamed");

    let e = d
        .try_request::<UpdateSessionTitle>(UpdateSessionTitleParams {
            session_id: "nope".into(),
            title: "x".into(),
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams.code());
    assert!(e.message.contains("session not found: nope"), "{e:?}");
}

/// A title is one line of at most `TITLE_MAX_CHARS` characters, whichever way it comes in:
/// whitespace runs become one space, other control characters and longer titles are refused.
#[test]
fn titles_are_one_line_of_bounded_length_however_they_come_in() {
    let d = fake();
    let wd = workdir(&d);
    let id = finished(&d, launch_params("scenario:plain hi", &wd));
    let rename = |title: String| {
        d.try_request::<UpdateSessionTitle>(UpdateSessionTitleParams {
            session_id: id.clone(),
            title,
        })
    };
    rename(" Two\nlines\tand  a tab ".into()).unwrap();
    assert_eq!(d.state(&id).control.title, "Two lines and a tab");
    let longest = "é".repeat(TITLE_MAX_CHARS);
    rename(longest.clone()).unwrap();
    let refused = |e: ErrorObject, message: &str| {
        assert_eq!(e.code, ErrorCode::InvalidParams.code(), "{e:?}");
        assert_eq!(e.message, message);
        assert_eq!(e.data.unwrap()["param"], "title");
    };
    let too_long = "title too long: 201 characters (at most 200)";
    refused(rename(format!("{longest}é")).unwrap_err(), too_long);
    let escape = "invalid title: it holds the control character \\u{1b}";
    refused(rename("red \x1b[31m".into()).unwrap_err(), escape);
    assert_eq!(d.state(&id).control.title, longest);

    let long = Some("x".repeat(TITLE_MAX_CHARS + 1));
    let launch = LaunchSessionParams {
        title: long.clone(),
        ..launch_params("scenario:plain hi", &wd)
    };
    refused(
        d.try_request::<LaunchSession>(launch).unwrap_err(),
        too_long,
    );
    let more = ContinueSessionParams {
        session_id: id.clone(),
        query: "scenario:plain more".into(),
        title: long.clone(),
        ..Default::default()
    };
    refused(
        d.try_request::<ContinueSession>(more).unwrap_err(),
        too_long,
    );
    let draft = DraftFields {
        title: long,
        ..Default::default()
    };
    refused(d.try_request::<CreateDraft>(draft).unwrap_err(), too_long);
}

#[test]
fn archiving_a_chains_leaf_hides_the_chain_and_continuing_brings_it_back() {
    let d = fake();
    let wd = workdir(&d);
    let a = finished(&d, launch_params("scenario:plain one", &wd));
    let b = continued(&d, &a, "scenario:plain two");
    let c = continued(&d, &b, "scenario:plain three");
    let other = finished(&d, launch_params("scenario:plain other", &wd));
    assert_eq!(leaves(&d, None), [other.clone(), c.clone()]);

    let r = d.request::<ArchiveSession>(ArchiveSessionParams {
        session_id: c.clone(),
        archived: true,
    });
    assert!(r.success);
    assert_eq!(leaves(&d, None), [other.as_str()]);
    assert_eq!(leaves(&d, Some(LeafFilter::Archived)), [c.as_str()]);
    assert!(d.state(&c).control.archived);

    // Continuing the archived leaf unarchives it (HumanLayer issue #586).
    let d2 = continued(&d, &c, "scenario:plain four");
    assert!(!d.state(&c).control.archived);
    assert_eq!(leaves(&d, None), [d2.clone(), other.clone()]);
    assert!(leaves(&d, Some(LeafFilter::Archived)).is_empty());

    let bulk = d.request::<BulkArchiveSessions>(BulkArchiveSessionsParams {
        session_ids: vec![d2.clone(), other.clone(), "nope".into()],
        archived: true,
    });
    assert!(!bulk.success);
    assert_eq!(bulk.failed_sessions, ["nope"]);
    assert!(leaves(&d, None).is_empty());
    let e = d
        .try_request::<BulkArchiveSessions>(BulkArchiveSessionsParams {
            session_ids: vec![],
            archived: true,
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams.code());
    // A filter this daemon does not have cannot be built by a typed client.
    let raw = d.call("getSessionLeaves", json!({"filter": "pending"}));
    assert_eq!(raw["error"]["code"], -32602, "{raw}");
}

#[test]
fn interrupting_an_archived_session_unarchives_it() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "600"),
    );
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, |s| s.status == SessionStatus::Running);
    d.request::<ArchiveSession>(ArchiveSessionParams {
        session_id: id.clone(),
        archived: true,
    });
    d.request::<InterruptSession>(SessionIdParams {
        session_id: id.clone(),
    });
    assert!(!d.state(&id).control.archived);
    d.wait_ended(&id);
}

#[test]
fn auto_accept_approves_edits_at_once_but_not_bash() {
    let d = fake();
    let wd = workdir(&d);
    let auto = |query: &str| LaunchSessionParams {
        auto_accept_edits: Some(true),
        ..launch_params(query, &wd)
    };
    // The Write goes through without anyone deciding.
    let write = d.launch(auto("scenario:tool write the file"));
    assert_eq!(d.wait_ended(&write).status, SessionStatus::Completed);
    assert!(std::path::Path::new(&wd).join("hello.txt").exists());
    let call = d
        .conversation(&write)
        .into_iter()
        .find(|e| e.tool_name.as_deref() == Some("Write"))
        .unwrap();
    assert_eq!(call.approval_status.as_deref(), Some("approved"));
    let approval = d
        .request::<GetApproval>(GetApprovalParams {
            approval_id: call.approval_id.unwrap(),
        })
        .approval;
    assert_eq!(approval.status, ApprovalStatus::Approved);
    assert_eq!(approval.decided_by.as_deref(), Some("auto_accept_edits"));
    assert!(approval.comment.unwrap().contains("auto-accept"));

    // Bash still asks.
    let bash = d.launch(auto("scenario:bash list"));
    let pending = d.wait_approvals(Some(&bash), |a| a.len() == 1);
    assert_eq!(pending[0].function_name.as_deref(), Some("Bash"));
    assert_eq!(d.state(&bash).status, SessionStatus::WaitingInput);

    // Turning the bypass on approves it, and says which rule did.
    let mut sub = settings_events(&d);
    let r = settings(
        &d,
        UpdateSessionSettingsParams {
            session_id: bash.clone(),
            dangerously_skip_permissions: Some(true),
            ..Default::default()
        },
    );
    assert!(r.success);
    let (control, _) = next_settings(&mut sub);
    assert!(control.dangerously_skip_permissions && control.auto_accept_edits);
    assert_eq!(control.dangerously_skip_permissions_expires_at, None);
    assert_eq!(d.wait_ended(&bash).status, SessionStatus::Completed);
    let decided = d
        .request::<GetApproval>(GetApprovalParams {
            approval_id: pending[0].id.clone(),
        })
        .approval;
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert_eq!(
        decided.decided_by.as_deref(),
        Some("dangerously_skip_permissions")
    );
}

#[test]
fn a_question_is_never_answered_by_a_rule() {
    let d = fake();
    let id = finished(&d, launch_params("scenario:plain hi", workdir(&d)));
    settings(
        &d,
        UpdateSessionSettingsParams {
            session_id: id.clone(),
            auto_accept_edits: Some(true),
            dangerously_skip_permissions: Some(true),
            ..Default::default()
        },
    );
    let question = d
        .request::<CreateApproval>(CreateApprovalParams {
            session_id: Some(id.clone()),
            kind: Some("human_contact".into()),
            message: Some("Which branch?".into()),
            ..Default::default()
        })
        .approval_id;
    let got = d
        .request::<GetApproval>(GetApprovalParams {
            approval_id: question,
        })
        .approval;
    assert_eq!(got.status, ApprovalStatus::Pending);
}

#[test]
fn a_bypass_with_a_timeout_expires_on_time_and_the_next_tool_asks_again() {
    let d = fake();
    let id = finished(&d, launch_params("scenario:plain hi", workdir(&d)));
    let mut sub = settings_events(&d);
    settings(
        &d,
        UpdateSessionSettingsParams {
            session_id: id.clone(),
            dangerously_skip_permissions: Some(true),
            dangerously_skip_permissions_timeout_ms: Some(200),
            ..Default::default()
        },
    );
    let (on, _) = next_settings(&mut sub);
    let expiry = on.dangerously_skip_permissions_expires_at.clone().unwrap();
    assert_eq!(ask(&d, &id, "Bash").status, ApprovalStatus::Approved);
    let (off, reason) = next_settings(&mut sub);
    assert_eq!(reason, "expired");
    assert!(!off.dangerously_skip_permissions);
    // It ended when due, on the daemon's clock, not a polling period later.
    let due = chrono::DateTime::parse_from_rfc3339(&expiry).unwrap();
    let told = chrono::Utc::now();
    assert!(told >= due, "told before the expiry");
    assert!(
        (told - due.with_timezone(&chrono::Utc)).num_milliseconds() < 1000,
        "told {told}, due {due}"
    );
    assert_eq!(ask(&d, &id, "Bash").status, ApprovalStatus::Pending);
    assert!(!d.state(&id).control.dangerously_skip_permissions);
}

#[test]
fn a_bypass_expiry_survives_a_restart_and_a_continuation_keeps_the_same_one() {
    let base = hld_e2e::short_tempdir();
    let dir = base.path().to_path_buf();
    let options = || DaemonOptions {
        dir: Some(dir.clone()),
        ..DaemonOptions::fake_claude()
    };
    let mut d = TestDaemon::start_with(options());
    let wd = workdir(&d);
    let id = finished(&d, launch_params("scenario:plain hi", &wd));
    settings(
        &d,
        UpdateSessionSettingsParams {
            session_id: id.clone(),
            dangerously_skip_permissions: Some(true),
            dangerously_skip_permissions_timeout_ms: Some(3000),
            ..Default::default()
        },
    );
    let expiry = d.state(&id).control.dangerously_skip_permissions_expires_at;
    assert!(expiry.is_some());
    let child = continued(&d, &id, "scenario:plain more");
    let inherited = d.state(&child).control;
    assert!(inherited.dangerously_skip_permissions);
    assert_eq!(inherited.dangerously_skip_permissions_expires_at, expiry);

    d.stop();
    drop(d);
    let d = TestDaemon::start_with(options());
    // Still on after the restart, until the same moment.
    assert!(d.state(&id).control.dangerously_skip_permissions);
    let mut sub = settings_events(&d);
    let mut ended = Vec::new();
    while ended.len() < 2 {
        let (control, reason) = next_settings(&mut sub);
        assert_eq!(reason, "expired");
        assert!(!control.dangerously_skip_permissions);
        ended.push(control);
    }
    assert!(!d.state(&id).control.dangerously_skip_permissions);
    assert!(!d.state(&child).control.dangerously_skip_permissions);
}

#[test]
fn settings_are_checked() {
    let d = fake();
    let id = finished(&d, launch_params("scenario:plain hi", workdir(&d)));
    for (params, param) in [
        (
            UpdateSessionSettingsParams {
                session_id: id.clone(),
                dangerously_skip_permissions: Some(true),
                dangerously_skip_permissions_timeout_ms: Some(0),
                ..Default::default()
            },
            "dangerously_skip_permissions_timeout_ms",
        ),
        (
            UpdateSessionSettingsParams {
                session_id: id.clone(),
                dangerously_skip_permissions_timeout_ms: Some(1000),
                ..Default::default()
            },
            "dangerously_skip_permissions_timeout_ms",
        ),
        (
            UpdateSessionSettingsParams {
                session_id: "nope".into(),
                auto_accept_edits: Some(true),
                ..Default::default()
            },
            "session_id",
        ),
    ] {
        let e = d.try_request::<UpdateSessionSettings>(params).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidParams.code(), "{e:?}");
        assert_eq!(e.data.unwrap()["param"], param);
    }
    let e = d
        .try_request::<LaunchSession>(LaunchSessionParams {
            dangerously_skip_permissions_timeout: Some(1000),
            ..launch_params("scenario:plain", workdir(&d))
        })
        .unwrap_err();
    assert_eq!(
        e.data.unwrap()["param"],
        "dangerously_skip_permissions_timeout"
    );
}

#[test]
fn every_continuation_forks_and_extra_directories_reach_claude() {
    let d = fake();
    let wd = workdir(&d);
    let extra = d.dir.join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let parent = finished(
        &d,
        LaunchSessionParams {
            additional_directories: Some(vec![extra.display().to_string()]),
            ..launch_params("scenario:plain hi", &wd)
        },
    );
    let first = continued(&d, &parent, "scenario:plain branch one");
    let second = continued(&d, &parent, "scenario:plain branch two");
    let claude_id = |id: &str| d.state(id).claude_session_id.unwrap();
    let parent_claude = claude_id(&parent);
    for branch in [&first, &second] {
        let invocation = d.fake_invocation(&claude_id(branch));
        assert_eq!(invocation["resume"], parent_claude.as_str());
        assert_eq!(invocation["fork_session"], true);
        let argv: Vec<String> = serde_json::from_value(invocation["argv"].clone()).unwrap();
        let at = argv
            .iter()
            .position(|a| a == "--add-dir")
            .expect("--add-dir");
        assert_eq!(argv[at + 1], extra.display().to_string());
    }
    // Two branches, each with its own Claude session.
    assert_ne!(claude_id(&first), claude_id(&second));
    assert_ne!(claude_id(&first), parent_claude);
    assert_eq!(
        d.state(&second).control.additional_directories,
        [extra.display().to_string()]
    );

    let e = d
        .try_request::<LaunchSession>(LaunchSessionParams {
            additional_directories: Some(vec!["/nonexistent/dir".into()]),
            ..launch_params("scenario:plain", &wd)
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams.code());
    assert_eq!(e.data.unwrap()["param"], "additional_directories");
}

#[test]
fn recent_paths_count_and_order_working_directories() {
    let d = fake();
    let old = d.dir.join("old");
    let new = d.dir.join("new");
    for dir in [&old, &new] {
        std::fs::create_dir_all(dir).unwrap();
    }
    finished(&d, launch_params("scenario:plain a", &old));
    finished(&d, launch_params("scenario:plain b", &old));
    finished(&d, launch_params("scenario:plain c", &new));
    let paths = d
        .request::<GetRecentPaths>(GetRecentPathsParams { limit: None })
        .paths;
    let got: Vec<(String, i64)> = paths
        .iter()
        .map(|p| (p.path.clone(), p.usage_count))
        .collect();
    assert_eq!(
        got,
        [
            (new.display().to_string(), 1),
            (old.display().to_string(), 2)
        ]
    );
    let one = d
        .request::<GetRecentPaths>(GetRecentPathsParams { limit: Some(1) })
        .paths;
    assert_eq!(one.len(), 1);
    let e = d
        .try_request::<GetRecentPaths>(GetRecentPathsParams { limit: Some(0) })
        .unwrap_err();
    assert_eq!(e.data.unwrap()["param"], "limit");
}

#[test]
fn search_finds_titles_queries_and_prefixes() {
    let d = fake();
    let wd = workdir(&d);
    let parser = finished(
        &d,
        launch_params("scenario:plain fix the flaky parser test", &wd),
    );
    let lexer = finished(
        &d,
        LaunchSessionParams {
            title: Some("Lexer speed".into()),
            ..launch_params("scenario:plain make it faster", &wd)
        },
    );
    let search = |query: &str| {
        d.request::<SearchSessions>(SearchSessionsParams {
            query: query.into(),
            limit: None,
        })
        .sessions
        .into_iter()
        .map(|s| s.id)
        .collect::<Vec<_>>()
    };
    assert_eq!(search("flak pars"), [parser.as_str()]);
    assert_eq!(search("lexer"), [lexer.as_str()]);
    assert_eq!(search("\"quotes\" OR"), Vec::<String>::new());
    d.request::<UpdateSessionTitle>(UpdateSessionTitleParams {
        session_id: parser.clone(),
        title: "Tokenizer cleanup".into(),
    });
    assert_eq!(search("tokenizer"), [parser]);
    let e = d
        .try_request::<SearchSessions>(SearchSessionsParams {
            query: "  ".into(),
            limit: None,
        })
        .unwrap_err();
    assert_eq!(e.data.unwrap()["param"], "query");
}

/// Planted among the generated sessions: words with `q`, `x` and `z`, which no generated
/// session has (see [`corpus::WORDS`]).
fn planted() -> Vec<Text> {
    let text = |title: Option<&str>, query: &str| Text {
        title: title.map(str::to_owned),
        query: query.to_owned(),
    };
    vec![
        text(Some("Quokka quokka"), "count the quokkas"),
        text(None, "feed the quokka"),
        // One in a long query, whose summary is cut.
        text(
            None,
            "a quokka in a long sentence about many different things to do with the zoo \
             later this week",
        ),
        text(None, "the quokka and the zephyr"),
        text(Some("Zephyr"), "write the release notes"),
    ]
}

#[test]
fn search_on_100k_generated_sessions() {
    const GENERATED: usize = 100_000;
    let base = hld_e2e::short_tempdir();
    let database = base.path().join("hld.db");
    let ids = corpus::fill(&database, GENERATED, 42, &planted()).unwrap();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let [most, feed, long, both, zephyr] = ids[..] else {
        panic!("{ids:?}")
    };
    let d = TestDaemon::start_with(DaemonOptions {
        dir: Some(base.path().to_path_buf()),
        ..Default::default()
    });
    let search_with = |query: &str, limit: Option<i64>| {
        d.request::<SearchSessions>(SearchSessionsParams {
            query: query.into(),
            limit,
        })
        .sessions
    };
    let search = |query: &str| -> Vec<String> {
        search_with(query, None).into_iter().map(|s| s.id).collect()
    };

    // Prefixes, the newest first (planted sessions are written in order).
    assert_eq!(search("quok"), [both, long, feed, most]);
    assert_eq!(search("QUOKKAS"), [most]);
    assert_eq!(search("zeph"), [zephyr, both]);
    // Every word must match, each as a prefix.
    assert_eq!(search("quok zeph"), [both]);
    assert_eq!(search("zeph quokka"), [both]);
    assert!(search("quok xylophone").is_empty());
    assert_eq!(search_with("quok", Some(2)).len(), 2);
    assert_eq!(
        search_with("quok", Some(2))
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        [both, long]
    );

    // A common word: the default limit, the newest first, as a query of the file itself
    // gives it.
    let raw = rusqlite::Connection::open_with_flags(
        &database,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let newest = |matching: &str, limit: i64| -> Vec<String> {
        raw.prepare(
            "SELECT id FROM sessions
             WHERE rowid IN (SELECT rowid FROM sessions_fts WHERE sessions_fts MATCH ?1)
             ORDER BY rowid DESC LIMIT ?2",
        )
        .unwrap()
        .query_map(rusqlite::params![matching, limit], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    };
    let matches: i64 = raw
        .query_row(
            "SELECT COUNT(*) FROM sessions_fts WHERE sessions_fts MATCH '\"fix\"*'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(matches > 10_000, "{matches}");
    let fix = search("fix");
    assert_eq!(fix.len(), 50);
    assert_eq!(fix, newest("\"fix\"*", 50));
    assert_eq!(
        search_with("flak test", Some(200))
            .into_iter()
            .map(|s| s.id)
            .collect::<Vec<_>>(),
        newest("\"flak\"* \"test\"*", 200)
    );

    // An archived session is still found, and says so.
    d.request::<ArchiveSession>(ArchiveSessionParams {
        session_id: both.to_owned(),
        archived: true,
    });
    let found = search_with("quok zeph", None);
    assert_eq!(found.len(), 1);
    assert!(found[0].control.archived && found[0].id == both);

    // A new title is found at once, and the old one no longer.
    d.request::<UpdateSessionTitle>(UpdateSessionTitleParams {
        session_id: zephyr.to_owned(),
        title: "Xylophone tuning".into(),
    });
    assert_eq!(search("zeph"), [both]);
    assert_eq!(search("xylo"), [zephyr]);
    // Among the generated ones too, in its place by age.
    let generated = corpus::session_id(GENERATED / 3);
    d.request::<UpdateSessionTitle>(UpdateSessionTitleParams {
        session_id: generated.clone(),
        title: "Quokka census".into(),
    });
    assert_eq!(search("quok"), [both, long, feed, generated.as_str(), most]);
    assert_eq!(
        search_with("quokka census", None)[0].control.title,
        "Quokka census"
    );
}

#[test]
fn deleting_a_session_removes_its_data_and_leaves_its_children_a_dangling_parent() {
    let d = TestDaemon::start_with(
        DaemonOptions::fake_claude()
            .env("FAKE_CLAUDE_DELAY_MS", "100")
            .env("FAKE_CLAUDE_COUNT", "600"),
    );
    let wd = workdir(&d);
    let parent = finished(&d, launch_params("scenario:plain hi", &wd));
    let child = continued(&d, &parent, "scenario:plain more");
    let running = d.launch(launch_params("scenario:slow", &wd));
    d.wait_session(&running, |s| s.status == SessionStatus::Running);
    let e = d
        .try_request::<DeleteSession>(SessionIdParams {
            session_id: running.clone(),
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidParams.code());
    assert!(e.message.contains("still running"), "{e:?}");

    let r = d.request::<DeleteSession>(SessionIdParams {
        session_id: parent.clone(),
    });
    assert!(r.success);
    let gone = d
        .try_request::<GetSessionState>(SessionIdParams {
            session_id: parent.clone(),
        })
        .unwrap_err();
    assert_eq!(gone.code, ErrorCode::InvalidParams.code());
    let s = d.state(&child);
    assert_eq!(s.parent_session_id.as_deref(), Some(parent.as_str()));
    // The child's own conversation is whole; its parent's part is gone.
    let events = d.conversation(&child);
    assert!(!events.is_empty() && events.iter().all(|e| e.session_id == child));
    assert!(leaves(&d, None).contains(&child));
}

#[test]
fn context_tokens_come_from_the_stream() {
    let d = fake();
    let id = finished(&d, launch_params("scenario:plain hi", workdir(&d)));
    let s = d.state(&id);
    assert!(
        s.effective_context_tokens.is_some() && s.context_limit.is_some(),
        "{s:?}"
    );
}
