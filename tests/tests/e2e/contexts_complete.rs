//! Shell completion over contexts (issue 42): the ids offered are those of the daemon the
//! line being completed chooses (`--context NAME`, a `wss://` daemon here), not the local one.

use hld_e2e::{launch_params, DaemonOptions, TestDaemon};

use crate::contexts::{add_box, wss_daemon};
use crate::hlyr_admin::complete_at;

#[test]
fn completion_offers_the_ids_of_the_context_named_on_the_line() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let local = TestDaemon::start_with(DaemonOptions::fake_claude());
    let (far, url, pin) = wss_daemon(home, 0);
    add_box(&local, home, &far, &url, pin);
    let mut pending = Vec::new();
    for daemon in [&local, &far] {
        let id = daemon.launch(launch_params("scenario:tool", &daemon.dir));
        let approvals = daemon.wait_approvals(Some(&id), |a| a.len() == 1);
        pending.push(approvals[0].id.clone());
    }
    let offered = |words: &[&str]| -> Vec<String> {
        let candidates = complete_at(&local.socket, home, words);
        let ids = candidates.into_iter().map(|(value, _)| value);
        ids.filter(|v| !v.starts_with('-')).collect()
    };
    let short = |id: &str| id[..14].to_owned();
    assert_eq!(offered(&["approve", ""]), [short(&pending[0])]);
    assert_eq!(
        offered(&["--context", "box", "approve", ""]),
        [short(&pending[1])]
    );
    assert_eq!(
        offered(&["approve", "--context=box", ""]),
        [short(&pending[1])]
    );
}
