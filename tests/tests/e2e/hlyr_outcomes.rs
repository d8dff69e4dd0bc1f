//! What `hlyr` tells of approvals once they are no longer asked: denials with or without a
//! reason, an approval that ended with its session (in the live view, in `conversation`, and
//! in the errors of a late decision), and approvals a follower cannot ask (stdin is no
//! terminal), all in the same words.

use hld_client::protocol::{
    ApprovalStatus, SendDecision, SendDecisionParams, SessionStatus, NO_REASON,
};
use hld_e2e::{launch_params, TestDaemon};
use serde_json::json;

use crate::hlyr::{
    approval, ask_tool, fake, hlyr, hlyr_command, slow_daemon, wait_decided, workdir, Running,
};

/// What an approval's id looks like in `hlyr`'s text.
fn short(id: &str) -> &str {
    &id[..14]
}

/// The only pending approval of `session_id` once it is asked: its id.
fn pending(d: &TestDaemon, session_id: &str) -> String {
    d.wait_approvals(Some(session_id), |a| a.len() == 1)[0]
        .id
        .clone()
}

#[test]
fn deny_takes_an_optional_reason_as_d_does() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    for extra in [&[][..], &["--comment", ""], &["--comment", "  "]] {
        let call = ask_tool(&d, &id, "Bash", json!({"command": "make"}));
        let args = [&["deny", call.as_str()][..], extra].concat();
        let run = hlyr(&d, &args);
        assert_eq!(run.assert_code(0).stdout, format!("✗ denied {call}\n"));
        let denied = approval(&d, &call);
        assert_eq!(denied.status, ApprovalStatus::Denied);
        // The daemon wants a comment: Claude is told the one `d` sends without a reason.
        assert_eq!(denied.comment.as_deref(), Some(NO_REASON), "{extra:?}");
    }
    let call = ask_tool(&d, &id, "Bash", json!({"command": "make"}));
    let json = hlyr(&d, &["deny", &call, "--comment", "not now", "--json"]);
    let decided = json.assert_code(0).json_as("decision");
    assert_eq!(decided["comment"], "not now");
    assert_eq!(approval(&d, &call).comment.as_deref(), Some("not now"));
    hlyr(&d, &["interrupt", &id]).assert_code(0);
}

#[test]
fn a_decision_on_an_approval_its_session_ended_is_refused_as_resolved() {
    let d = slow_daemon(30);
    let id = d.launch(launch_params("scenario:slow", workdir(&d)));
    let call = ask_tool(&d, &id, "Bash", json!({"command": "make"}));
    hlyr(&d, &["interrupt", &id]).assert_code(0);
    d.wait_ended(&id);
    assert_eq!(wait_decided(&d, &call).status, ApprovalStatus::Resolved);
    for decide in [&["deny", call.as_str()][..], &["approve", &call[..14]]] {
        let run = hlyr(&d, &[decide, &["--json"]].concat());
        let error = run.assert_code(1).error_json();
        assert_eq!(error["kind"], "resolved", "{decide:?}");
    }
}

/// A denial with its reason, and an approval that ended with its session: the live view and
/// `conversation` print both below their tool calls, in the same words, the stored comment
/// included; `--json` prints the same items as a followed session.
#[test]
fn conversation_shows_each_approval_and_its_outcome_as_the_live_view_does() {
    let d = fake();
    let wd = workdir(&d);
    let denied = d.launch(launch_params("scenario:bash list", &wd));
    let call = pending(&d, &denied);
    let reply = d.request::<SendDecision>(SendDecisionParams {
        call_id: Some(call.clone()),
        kind: Some("function_call".into()),
        decision: Some("deny".into()),
        comment: Some("not now".into()),
    });
    assert!(reply.success, "{reply:?}");
    d.wait_ended(&denied);
    let run = hlyr(&d, &["conversation", &denied[..8]]);
    let denial = format!(
        "→ Bash\n    $ ls\n    # List files in the working directory\n? approval {0}: Bash\n\
         ✗ denied {0}: not now\n",
        short(&call)
    );
    assert!(
        run.assert_code(0).stdout.contains(&denial),
        "{}",
        run.stdout
    );

    // Followed live until its session ends, then printed again.
    let mut follow = hlyr_command(&d.socket, &d.dir);
    follow.args(["launch", "-w", &wd, "scenario:tool left alone"]);
    let follower = Running::spawn(follow);
    follower.wait_for("? approval", 1);
    let ended = session_in(&follower.stdout());
    let left = pending(&d, &ended);
    hlyr(&d, &["interrupt", &ended]).assert_code(0);
    let live = follower.finish();
    let asked = format!("? approval {}: Write\n", short(&left));
    let outcome = format!(
        "· ended with its session {}: the session ended before a decision\n",
        short(&left)
    );
    // Live, the outcome comes when the session's end tells it, after the call's error.
    crate::hlyr::assert_in_order(&live.stdout, &[&asked, &outcome, "■ interrupted"]);
    assert_eq!(d.state(&ended).status, SessionStatus::Completed);
    let printed = hlyr(&d, &["conversation", &ended]);
    assert!(
        printed.assert_code(0).stdout.contains(&(asked + &outcome)),
        "{}",
        printed.stdout
    );

    let json = hlyr(&d, &["conversation", &denied, "--json"]);
    let lines = json.assert_code(0).json_lines_as("update");
    let at = lines
        .iter()
        .position(|l| l["type"] == "approval")
        .expect("the approval");
    assert_eq!(lines[at - 1]["data"]["event_type"], "tool_call");
    assert_eq!(lines[at]["data"]["id"], call.as_str());
    assert_eq!(
        lines[at + 1],
        json!({"type": "decision", "data": {
            "approval_id": call, "decision": "denied", "comment": "not now"
        }})
    );
}

/// The session id `hlyr` printed in `text` (`Session <id>`).
fn session_in(text: &str) -> String {
    let id = text.lines().find_map(|l| l.strip_prefix("Session "));
    id.unwrap_or_else(|| panic!("no session id in {text:?}"))
        .trim()
        .to_owned()
}
