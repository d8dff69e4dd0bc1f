//! `hlyr`'s session-control commands end to end, the real binary against a real daemon running
//! `fake-claude`: titles (`launch --title`, `rename`), the archive (`archive`, `unarchive`,
//! `sessions --archived`, `prune`), approval modes (`launch --auto-accept-edits`,
//! `--dangerously-skip-permissions --bypass-for`, `settings`, and what a follower prints when a
//! rule decides or a bypass runs out), `search`, `continue --last`, `show`, and the errors.

use std::path::{Path, PathBuf};

use hld_client::protocol::{
    GetSessionState, ListSessions, NoParams, SessionIdParams, SessionInfo, SessionStatus,
};
use hld_e2e::{launch_params, TestDaemon};
use serde_json::Value;

use crate::hlyr::{
    assert_in_order, fake, hlyr, hlyr_command, printed_session, run_command, slow_daemon,
    terminal_at, workdir, Run, Running,
};

/// Runs `hlyr launch -w <the work dir> ARGS` to the end and returns the session's id.
fn launched(d: &TestDaemon, args: &[&str]) -> String {
    let wd = workdir(d);
    let run = hlyr(d, &[&["launch", "-w", &wd], args].concat());
    printed_session(run.assert_code(0))
}

/// Runs `hlyr continue PARENT QUERY` to the end and returns the new session's id.
fn continued(d: &TestDaemon, parent: &str, query: &str) -> String {
    let run = hlyr(d, &["continue", parent, query]);
    printed_session(run.assert_code(0))
}

/// A directory under the daemon's, created.
fn dir(d: &TestDaemon, name: &str) -> PathBuf {
    let dir = d.dir.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `hlyr ARGS` with `cwd` as its current directory.
fn hlyr_in(d: &TestDaemon, cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.current_dir(cwd).args(args);
    run_command(cmd)
}

/// The ids of a `--json` session list, in its order.
fn ids(run: &Run) -> Vec<String> {
    let json = run.assert_code(0).json_as("sessions");
    json.as_array()
        .unwrap_or_else(|| panic!("not a list: {json}"))
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The session object of `id` in a `--json` session list.
fn listed(run: &Run, id: &str) -> Value {
    run.json_as("sessions")
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {}", run.stdout))
        .clone()
}

/// The row of `id` in a text session table.
#[track_caller]
fn row<'a>(run: &'a Run, id: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.starts_with(&id[..8]))
        .unwrap_or_else(|| panic!("no row for {id}:\n{}", run.stdout))
}

fn all_sessions(d: &TestDaemon) -> Vec<SessionInfo> {
    d.request::<ListSessions>(NoParams {}).sessions
}

fn exists(d: &TestDaemon, id: &str) -> bool {
    d.try_request::<GetSessionState>(SessionIdParams {
        session_id: id.to_owned(),
    })
    .is_ok()
}

#[test]
fn titles_given_at_launch_and_by_rename_show_in_sessions() {
    let d = fake();
    let titled = launched(&d, &["--title", "Parser work", "scenario:plain refactor"]);
    let other = launched(&d, &["scenario:plain first line"]);
    let table = hlyr(&d, &["sessions"]);
    table.assert_code(0);
    assert!(
        row(&table, &titled).ends_with("Parser work"),
        "{}",
        table.stdout
    );
    assert!(row(&table, &other).ends_with("scenario:plain first line"));

    let rename = hlyr(&d, &["rename", &other[..6], "Renamed", "session"]);
    rename.assert_code(0);
    assert_eq!(
        rename.stdout.trim(),
        format!("✓ renamed {} to Renamed session", &other[..8])
    );
    assert_eq!(d.state(&other).control.title, "Renamed session");
    let table = hlyr(&d, &["sessions"]);
    assert!(
        row(&table, &other).ends_with("Renamed session"),
        "{}",
        table.stdout
    );
    let json = hlyr(&d, &["sessions", "--json"]);
    assert_eq!(listed(&json, &other)["title"], "Renamed session");
    assert_eq!(listed(&json, &titled)["title"], "Parser work");

    // A title is one line: its newlines and tabs become spaces.
    let rename = hlyr(&d, &["rename", &other, "Two\nlines\tand a tab"]);
    assert!(rename
        .assert_code(0)
        .stdout
        .ends_with("to Two lines and a tab\n"));
    assert_eq!(d.state(&other).control.title, "Two lines and a tab");
    // `--json`: the session and its new title.
    let renamed = hlyr(&d, &["--json", "rename", &titled, "Lexer work"]).json_as("rename");
    assert_eq!(
        renamed,
        serde_json::json!({"session_id": titled, "title": "Lexer work"})
    );
    // An empty title clears it: the query's first line shows again.
    hlyr(&d, &["rename", &other, ""]).assert_code(0);
    let table = hlyr(&d, &["sessions"]);
    assert!(row(&table, &other).ends_with("scenario:plain first line"));
    // A title too long for the daemon: its refusal, a usage error, and the title kept.
    let long = "x".repeat(201);
    let refused = hlyr(&d, &["rename", &titled, &long]);
    assert_eq!(
        refused.assert_code(2).stderr.trim(),
        "error: title too long: 201 characters (at most 200)"
    );
    assert_eq!(d.state(&titled).control.title, "Lexer work");
}

#[test]
fn archiving_hides_a_chain_from_sessions_and_archived_lists_it() {
    let d = fake();
    let first = launched(&d, &["scenario:plain one"]);
    let leaf = continued(&d, &first[..6], "scenario:plain two");
    let other = launched(&d, &["scenario:plain other"]);
    // One row per chain: its leaf.
    assert_eq!(
        ids(&hlyr(&d, &["sessions", "--json"])),
        [other.as_str(), &leaf]
    );

    let archive = hlyr(&d, &["archive", &leaf[..6]]);
    archive.assert_code(0);
    assert_eq!(archive.stdout.trim(), format!("✓ archived {}", &leaf[..8]));
    assert!(d.state(&leaf).control.archived);
    let table = hlyr(&d, &["sessions"]);
    table.assert_code(0);
    assert!(table.stdout.contains(&other[..8]), "{}", table.stdout);
    for hidden in [&first, &leaf] {
        assert!(!table.stdout.contains(&hidden[..8]), "{}", table.stdout);
    }
    assert_eq!(
        ids(&hlyr(&d, &["sessions", "--archived", "--json"])),
        [leaf.as_str()]
    );
    let archived = hlyr(&d, &["sessions", "--archived"]);
    assert!(row(&archived, &leaf).ends_with("scenario:plain one"));
    // `--all` lists every session, the archived one marked.
    let all = hlyr(&d, &["sessions", "--all"]);
    assert_eq!(
        all.assert_code(0).stdout.lines().count(),
        1 + 3,
        "{}",
        all.stdout
    );
    assert!(row(&all, &leaf).contains("[archived]"), "{}", all.stdout);
    assert!(!row(&all, &first).contains("[archived]"));
    let json = hlyr(&d, &["sessions", "--all", "--json"]);
    assert_eq!(listed(&json, &leaf)["archived"], true);

    // Several at once, by prefix; and back.
    let both = hlyr(&d, &["--json", "archive", &other[..5], &leaf[..7]]).json_as("archive");
    assert_eq!(both["archived"], true);
    assert_eq!(both["session_ids"], serde_json::json!([other, leaf]));
    assert_eq!(hlyr(&d, &["sessions"]).stdout.trim(), "no sessions");
    let back = hlyr(&d, &["unarchive", &leaf[..6], &other[..6]]);
    back.assert_code(0);
    assert!(back.stdout.starts_with("✓ unarchived"), "{}", back.stdout);
    assert_eq!(
        ids(&hlyr(&d, &["sessions", "--json"])),
        [other.as_str(), &leaf]
    );
    assert_eq!(
        hlyr(&d, &["sessions", "--archived"]).stdout.trim(),
        "no archived sessions"
    );
}

#[test]
fn launch_with_auto_accept_edits_writes_without_asking() {
    let d = fake();
    let wd = workdir(&d);
    // stdin is closed: an approval asked for would never be answered, and hlyr never end.
    let run = hlyr(
        &d,
        &[
            "launch",
            "-w",
            &wd,
            "--auto-accept-edits",
            "scenario:tool write it",
        ],
    );
    run.assert_code(0);
    let id = printed_session(&run);
    assert!(Path::new(&wd).join("hello.txt").exists());
    assert!(!run.stdout.contains("? approval"), "{}", run.stdout);
    // A rule's decision is told as such (not with the comment the daemon wrote for Claude),
    // after its tool call though it may come first.
    assert!(
        !run.stdout.contains("Approved automatically:"),
        "{}",
        run.stdout
    );
    assert_in_order(
        &run.stdout,
        &[
            "> scenario:tool write it",
            "→ Write",
            "✓ approved automatically (auto_accept_edits) local-",
            "Done - the file hello.txt",
            "✓ completed",
        ],
    );
    assert!(d.state(&id).control.auto_accept_edits);
    let table = hlyr(&d, &["sessions"]);
    assert!(
        row(&table, &id).contains("✎ scenario:tool"),
        "{}",
        table.stdout
    );
}

#[test]
fn a_bypass_for_a_while_runs_out_while_followed_and_settings_change_the_modes() {
    let d = slow_daemon(3);
    let wd = workdir(&d);
    let run = hlyr(
        &d,
        &[
            "launch",
            "-w",
            &wd,
            "--dangerously-skip-permissions",
            "--bypass-for",
            "1s",
            "scenario:slow",
        ],
    );
    run.assert_code(0);
    let id = printed_session(&run);
    assert_in_order(
        &run.stdout,
        &[
            "chunk 1\n",
            "⚠ bypass of permissions expired",
            "chunk 30\n",
            "✓ completed",
        ],
    );
    assert!(!d.state(&id).control.dangerously_skip_permissions);

    let off = hlyr(&d, &["settings", &id[..6], "--json"]).json_as("settings");
    assert_eq!(off["session_id"], id);
    assert_eq!(off["dangerously_skip_permissions"], false);
    assert_eq!(off["auto_accept_edits"], false);

    let on = hlyr(
        &d,
        &[
            "settings",
            &id[..6],
            "--bypass",
            "2h",
            "--auto-accept-edits",
            "on",
        ],
    );
    on.assert_code(0);
    assert_in_order(
        &on.stdout,
        &[
            &format!("Session  {id}"),
            "Modes    auto-accept edits, bypass permissions (",
            " left)",
        ],
    );
    let s = d.state(&id).control;
    assert!(s.auto_accept_edits && s.dangerously_skip_permissions);
    let expiry = chrono::DateTime::parse_from_rfc3339(
        s.dangerously_skip_permissions_expires_at
            .as_deref()
            .unwrap(),
    )
    .unwrap();
    let left = expiry.to_utc() - chrono::Utc::now();
    assert!(
        left > chrono::Duration::minutes(119) && left <= chrono::Duration::hours(2),
        "{left}"
    );
    let table = hlyr(&d, &["sessions"]);
    let listed_row = row(&table, &id);
    assert!(
        listed_row.contains("⚠2h ✎ scenario:slow"),
        "{}",
        table.stdout
    );

    let until_off = hlyr(&d, &["--json", "settings", &id, "--bypass", "on"]).json_as("settings");
    assert_eq!(until_off["dangerously_skip_permissions"], true);
    assert!(until_off
        .get("dangerously_skip_permissions_expires_at")
        .is_none());
    let table = hlyr(&d, &["sessions"]);
    assert!(row(&table, &id).contains("⚠∞ ✎"), "{}", table.stdout);

    let plain = hlyr(
        &d,
        &[
            "settings",
            &id,
            "--bypass",
            "off",
            "--auto-accept-edits",
            "off",
        ],
    );
    assert!(
        plain
            .assert_code(0)
            .stdout
            .contains("Modes    none: every tool call is asked"),
        "{}",
        plain.stdout
    );
    let s = d.state(&id).control;
    assert!(!s.auto_accept_edits && !s.dangerously_skip_permissions);
}

#[test]
fn turning_the_bypass_on_approves_what_a_follower_shows_pending() {
    let d = fake();
    let run = hlyr(
        &d,
        &[
            "launch",
            "--detach",
            "-w",
            &workdir(&d),
            "scenario:bash list",
        ],
    );
    let id = printed_session(run.assert_code(0));
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["conversation", "--follow", &id]);
    let follower = Running::spawn(cmd);
    follower.wait_for("? approval", 1);

    hlyr(&d, &["settings", &id[..8], "--bypass", "15m"]).assert_code(0);
    let followed = follower.finish();
    followed.assert_code(0);
    assert_in_order(
        &followed.stdout,
        &[
            "? approval",
            "✓ approved automatically (dangerously_skip_permissions) local-",
            "The directory contains:",
            "✓ completed",
        ],
    );
    assert_eq!(d.wait_ended(&id).status, SessionStatus::Completed);
}

#[test]
fn search_lists_matches_like_sessions() {
    let d = fake();
    let parser = launched(&d, &["scenario:plain fix the flaky parser test"]);
    let lexer = launched(
        &d,
        &["--title", "Lexer speed", "scenario:plain make it faster"],
    );
    assert_eq!(
        ids(&hlyr(&d, &["search", "flak", "pars", "--json"])),
        [parser.as_str()]
    );
    let found = hlyr(&d, &["search", "lexer"]);
    found.assert_code(0);
    assert_eq!(found.stdout.lines().count(), 2, "{}", found.stdout);
    for column in ["ID", "STATUS", "AGE", "MODEL", "COST"] {
        assert!(found.stdout.lines().next().unwrap().contains(column));
    }
    assert!(
        row(&found, &lexer).ends_with("Lexer speed"),
        "{}",
        found.stdout
    );
    // Archived sessions are found too, and marked.
    hlyr(&d, &["archive", &lexer]).assert_code(0);
    let found = hlyr(&d, &["search", "speed"]);
    assert!(row(&found, &lexer).contains("[archived] Lexer speed"));
    let none = hlyr(&d, &["search", "zebra"]);
    assert_eq!(none.assert_code(0).stdout.trim(), "no sessions match");
    assert_eq!(
        hlyr(&d, &["search", "zebra", "--json"]).json_as("sessions"),
        serde_json::json!([])
    );
}

#[test]
fn continue_last_continues_the_newest_session_of_the_current_directory() {
    let d = fake();
    let here = dir(&d, "here");
    let elsewhere = dir(&d, "elsewhere");
    let empty = dir(&d, "empty");
    let launch_in = |dir: &Path, query: &str| {
        let run = hlyr(&d, &["launch", "-w", &dir.display().to_string(), query]);
        printed_session(run.assert_code(0))
    };
    let _older = launch_in(&here, "scenario:plain older");
    let newer = launch_in(&here, "scenario:plain newer");
    let _newest_elsewhere = launch_in(&elsewhere, "scenario:plain elsewhere");

    let run = hlyr_in(
        &d,
        &here,
        &[
            "continue",
            "--last",
            "--title",
            "Follow-up",
            "scenario:plain",
            "more",
        ],
    );
    run.assert_code(0);
    let child = printed_session(&run);
    assert_in_order(
        &run.stdout,
        &[
            &format!("Continues {newer}"),
            "> scenario:plain newer",
            "> scenario:plain more",
            "✓ completed",
        ],
    );
    let s = d.wait_ended(&child);
    assert_eq!(s.parent_session_id.as_deref(), Some(newer.as_str()));
    assert_eq!(s.control.title, "Follow-up");
    // The continuation is now the newest here.
    let again = hlyr_in(&d, &here, &["continue", "-l", "scenario:plain", "again"]);
    assert!(
        again
            .assert_code(0)
            .stdout
            .contains(&format!("Continues {child}")),
        "{}",
        again.stdout
    );

    let none = hlyr_in(&d, &empty, &["continue", "--last", "more"]);
    none.assert_code(2);
    assert!(
        none.stderr.starts_with(&format!(
            "error: no session has run in {}\n",
            std::fs::canonicalize(&empty).unwrap().display()
        )),
        "{}",
        none.stderr
    );
}

#[test]
fn prune_deletes_the_archived_leaves_found_idle_and_dry_run_only_lists_them() {
    let d = fake();
    let root = launched(&d, &["scenario:plain one"]);
    let leaf = continued(&d, &root, "scenario:plain two");
    let kept = launched(&d, &["scenario:plain keep"]);
    hlyr(&d, &["archive", &root, &leaf]).assert_code(0);

    let refused = hlyr(&d, &["prune", "--older-than", "0s"]);
    refused.assert_code(2);
    assert!(
        refused
            .stderr
            .contains("error: only archived sessions are pruned"),
        "{}",
        refused.stderr
    );
    let young = hlyr(&d, &["prune", "--archived", "--older-than", "30d"]);
    assert_eq!(
        young.assert_code(0).stdout.trim(),
        "no archived sessions idle for more than 30d"
    );

    let dry = hlyr(
        &d,
        &["prune", "--archived", "--older-than", "0s", "--dry-run"],
    );
    dry.assert_code(0);
    assert!(
        dry.stdout.starts_with("would delete 1 archived session\n"),
        "{}",
        dry.stdout
    );
    assert!(
        row(&dry, &leaf).ends_with("scenario:plain one"),
        "{}",
        dry.stdout
    );
    assert!(
        !dry.stdout.contains(&root[..8]),
        "only leaves: {}",
        dry.stdout
    );
    assert_eq!(all_sessions(&d).len(), 3, "a dry run deletes nothing");

    let pruned =
        hlyr(&d, &["--json", "prune", "--archived", "--older-than", "0s"]).json_as("sessions");
    let deleted: Vec<&str> = pruned
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(deleted, [leaf.as_str()]);
    assert!(!exists(&d, &leaf));
    // Its parent became an archived leaf, and waits for the next run.
    assert!(exists(&d, &root) && exists(&d, &kept));
    let next = hlyr(&d, &["prune", "--archived", "--older-than", "0s"]);
    next.assert_code(0);
    assert!(
        next.stdout.starts_with("deleted 1 archived session\n"),
        "{}",
        next.stdout
    );
    assert!(row(&next, &root).ends_with("scenario:plain one"));
    assert!(!exists(&d, &root));
    let left: Vec<String> = all_sessions(&d).into_iter().map(|s| s.id).collect();
    assert_eq!(left, [kept]);
}

#[test]
fn show_tells_the_title_modes_directories_and_context() {
    let d = fake();
    let extra = dir(&d, "extra");
    let id = launched(
        &d,
        &[
            "--title",
            "Shown",
            "--auto-accept-edits",
            "--add-dir",
            &extra.display().to_string(),
            "scenario:plain hi",
        ],
    );
    let show = hlyr(&d, &["show", &id[..6]]);
    show.assert_code(0);
    let s = d.state(&id);
    let (used, limit) = (
        s.effective_context_tokens.unwrap(),
        s.context_limit.unwrap(),
    );
    assert_in_order(
        &show.stdout,
        &[
            &format!("Session         {id}"),
            "Title           Shown\n",
            "Status          completed\n",
            "Modes           auto-accept edits\n",
            "Query           scenario:plain hi\n",
            &format!(
                "Extra dirs      {}\n",
                std::fs::canonicalize(&extra).unwrap().display()
            ),
            &format!("Context         {used} of {limit} tokens ("),
        ],
    );
}

#[test]
fn unknown_ids_and_bad_values_are_refused_before_anything_changes() {
    let d = fake();
    let id = launched(&d, &["scenario:plain hi"]);
    for args in [
        vec!["rename", "ffff", "x"],
        vec!["unarchive", "ffff"],
        vec!["settings", "ffff", "--bypass", "on"],
    ] {
        let run = hlyr(&d, &args);
        run.assert_code(2);
        assert_eq!(
            run.stderr,
            "error: session not found: ffff\nhint: `hlyr sessions --all` lists every session\n",
            "{args:?}"
        );
    }
    // Every unknown id is named, and the known one is left alone.
    let run = hlyr(&d, &["archive", &id[..6], "ffff", "eeee"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .starts_with("error: sessions not found: ffff, eeee\n"),
        "{}",
        run.stderr
    );
    assert!(!d.state(&id).control.archived);

    let extra = dir(&d, "extra");
    let extra = extra.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["launch", "--bypass-for", "1s", "hi"],
            "--dangerously-skip-permissions",
        ),
        (
            vec![
                "launch",
                "--dangerously-skip-permissions",
                "--bypass-for",
                "15",
                "hi",
            ],
            "has no unit",
        ),
        (
            vec![
                "launch",
                "--dangerously-skip-permissions",
                "--bypass-for",
                "0s",
                "hi",
            ],
            "no time at all",
        ),
        (
            vec![
                "launch",
                "--add-dir",
                &extra,
                "--add-dir",
                "/nonexistent/dir",
                "hi",
            ],
            "--add-dir /nonexistent/dir does not exist",
        ),
        (vec!["launch", "--title", " ", "hi"], "must not be empty"),
        (vec!["launch", "--model", "", "hi"], "must not be empty"),
        (
            vec!["continue", &id, "--add-dir", "/nonexistent/dir", "hi"],
            "does not exist",
        ),
        (vec!["continue", &id], "required"),
        (vec!["continue", "--last"], "the query is empty"),
        (
            vec!["settings", &id, "--bypass", "soon"],
            "on, off or a duration",
        ),
        (
            vec!["settings", &id, "--auto-accept-edits", "maybe"],
            "on or off",
        ),
        (
            vec!["prune", "--archived", "--older-than", "a while"],
            "not a duration",
        ),
        (vec!["prune", "--archived"], "--older-than"),
        (vec!["archive"], "required"),
        (vec!["archive", ""], "an empty session id"),
        (vec!["rename", &id], "required"),
        (vec!["search"], "required"),
        (
            vec!["sessions", "--all", "--archived"],
            "cannot be used with",
        ),
    ];
    for (args, message) in cases {
        let run = hlyr(&d, &args);
        run.assert_code(2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
    }
    let sessions = all_sessions(&d);
    assert_eq!(sessions.len(), 1, "no usage error reached the daemon");
    assert!(!sessions[0].control.archived);
    assert!(!sessions[0].control.dangerously_skip_permissions);
}

#[test]
fn continuing_a_running_session_says_it_interrupts_and_asks_on_a_terminal() {
    let d = slow_daemon(60);
    // Running, and resumable: claude has said which conversation it keeps.
    let resumable = |s: &hld_client::protocol::SessionState| {
        s.status == SessionStatus::Running && s.claude_session_id.is_some()
    };
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&id, resumable);
    let warning = format!(
        "{} is still running: continuing it interrupts its turn",
        &id[..8]
    );

    let args = format!("continue {id} --detach scenario:plain fork");
    let mut term = terminal_at(&d.socket, &d.dir, &args, &[]);
    term.wait_for("[y/N]", 1);
    assert!(term.stdout().contains(&warning), "{}", term.stdout());
    term.type_line("n");
    let declined = term.finish();
    declined.assert_code(1);
    assert!(
        declined.stdout.contains("nothing was continued"),
        "{}",
        declined.stdout
    );
    assert!(declined.stdout.contains("--force"), "{}", declined.stdout);
    assert_eq!(d.state(&id).status, SessionStatus::Running);

    // Not on a terminal, nothing is asked: it is said, and done.
    let run = hlyr(&d, &["continue", &id, "--detach", "scenario:plain fork"]);
    assert!(run.assert_code(0).stderr.contains(&warning), "{run:#?}");
    d.wait_session(&id, |s| !s.status.is_active());

    // --force says nothing; a session that ended is continued without a word either.
    let other = d.launch(launch_params("scenario:slow", workdir(&d)));
    d.wait_session(&other, resumable);
    let forced = hlyr(
        &d,
        &["continue", "--force", &other, "--detach", "scenario:plain"],
    );
    assert!(
        !forced.assert_code(0).stderr.contains("still running"),
        "{forced:#?}"
    );
    let ended = hlyr(&d, &["continue", &id, "--detach", "scenario:plain again"]);
    assert!(
        !ended.assert_code(0).stderr.contains("still running"),
        "{ended:#?}"
    );
    let refused = hlyr(&d, &["interrupt", &id]);
    assert!(
        refused
            .stderr
            .contains("is not running (it is interrupted)"),
        "{refused:#?}"
    );
}
