//! `hlyr sessions` fitted to the terminal: on a narrow one the model gives way before the
//! working directory and the title; on a wide one every column is whole; a session stopped
//! by a usage limit shows the limit and its reset.

use hld_client::protocol::LaunchSessionParams;
use hld_e2e::launch_params;

use crate::hlyr::{fake, hlyr_command, run_command};

#[test]
fn sessions_gives_the_title_and_directory_room_before_the_model() {
    let d = fake();
    let dir = d.dir.join("work").join("payments-service");
    std::fs::create_dir_all(&dir).unwrap();
    let id = d.launch(LaunchSessionParams {
        model: Some("claude-opus-4-8[1m]".into()),
        title: Some("Fix the login form on the settings page".into()),
        ..launch_params("scenario:plain hi", &dir)
    });
    d.wait_ended(&id);
    let rows = |columns: &str| {
        let mut cmd = hlyr_command(&d.socket, &d.dir);
        cmd.args(["sessions"]).env("COLUMNS", columns);
        let run = run_command(cmd);
        run.assert_code(0);
        let lines: Vec<String> = run.stdout.lines().map(str::to_owned).collect();
        for line in &lines {
            assert!(line.chars().count() <= columns.parse().unwrap(), "{line:?}");
        }
        lines
    };

    // 100 columns: the model is left out; the directory's end, the context share and the
    // whole title show.
    let usual = rows("100");
    assert!(!usual[0].contains("MODEL"), "{usual:?}");
    assert!(usual[0].contains("CTX"), "{usual:?}");
    assert!(usual[1].contains("  …nts-service  "), "{usual:?}");
    assert!(
        usual[1].ends_with("  Fix the login form on the settings page"),
        "{usual:?}"
    );

    // 60 columns: then the title is cut.
    let narrow = rows("60");
    assert!(
        narrow[0].contains("DIR") && narrow[0].contains("TITLE"),
        "{narrow:?}"
    );
    assert!(!narrow[0].contains("MODEL"), "{narrow:?}");
    assert!(narrow[1].contains("…s-service  "), "{narrow:?}");
    assert!(narrow[1].ends_with("  Fix the…"), "{narrow:?}");
    assert!(!narrow[1].contains("opus"), "{narrow:?}");

    // 160 columns: everything whole, the home directory written `~`.
    let wide = rows("160");
    for column in [
        "ID", "STATUS", "AGE", "MODEL", "COST", "CTX", "DIR", "TITLE",
    ] {
        assert!(wide[0].contains(column), "{wide:?}");
    }
    // Without the `claude-` every model id starts with.
    assert!(wide[1].contains("  opus-4-8[1m]  "), "{wide:?}");
    assert!(wide[1].contains("~/work/payments-service"), "{wide:?}");
    assert!(
        wide[1].ends_with("Fix the login form on the settings page"),
        "{wide:?}"
    );
}
