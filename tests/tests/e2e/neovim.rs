//! The README's Neovim snippet for the Neovim that Debian 12 ships (0.7.2), run as written by
//! `nvim --headless` against a real daemon: `health` and `Subscribe` succeed (Neovim sends
//! their `{}` as `"params": []`) and the events of a session launched next arrive as
//! notifications. `.ci/run` installs `neovim` when it is missing.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use hld_client::protocol::SessionStatus;
use hld_e2e::{wait_for, workspace_bin, DaemonOptions, TestDaemon, WAIT};

/// The README's Lua block for Neovim 0.7 to 0.9.
fn readme_snippet() -> String {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(readme).expect("README.md");
    let after = readme
        .split_once("\nNeovim 0.7 to 0.9")
        .expect("the README's Neovim 0.7 section")
        .1;
    let block = after
        .split_once("```lua\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a lua block")
        .0;
    assert!(
        block.contains(r#"vim.lsp.rpc.start("hld", { "--stdio" }"#),
        "the 0.7 form: {block}"
    );
    block.to_owned()
}

/// The snippet inside a harness: `print` also records each line, so the harness can wait
/// for what the snippet prints; then a session is launched on the snippet's connection (after
/// its `Subscribe`, so the subscription sees it) and its completion awaited.
fn script(snippet: &str, work: &Path) -> String {
    format!(
        r#"
local printed = {{}}
print = function(...)
  local line = table.concat(vim.tbl_map(tostring, {{ ... }}), " ")
  table.insert(printed, line)
  io.stdout:write(line, "\n")
end
local ok, failure = pcall(function()
{snippet}
  local launch = {{ query = "scenario:plain hello from neovim", working_dir = "{work}" }}
  rpc.request("launchSession", launch, function(err, result)
    print("launched=" .. (result and result.session_id or vim.inspect(err)))
  end)
  local completed = vim.wait({wait_ms}, function()
    for _, line in ipairs(printed) do
      if line:find('new_status = "completed"', 1, true) then return true end
    end
    return false
  end, 20)
  io.stdout:write("completed-event=", tostring(completed), "\n")
end)
if not ok then io.stdout:write("error=", tostring(failure), "\n") end
vim.cmd(ok and "qa!" or "cquit 1")
"#,
        work = work.display(),
        wait_ms = WAIT.as_millis(),
    )
}

/// Runs `nvim --headless` on `script`, with `hld` on its PATH and the daemon's socket in
/// `HUMANLAYER_DAEMON_SOCKET`; killed if still running well after [`WAIT`].
fn run_nvim(d: &TestDaemon, script: &Path) -> Output {
    let hld = workspace_bin("hld");
    let path = format!(
        "{}:{}",
        hld.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let state = d.dir.join("nvim");
    let mut child = Command::new("nvim")
        .args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("PATH", path)
        .env("HUMANLAYER_DAEMON_SOCKET", &d.socket)
        .env("XDG_CONFIG_HOME", &state)
        .env("XDG_DATA_HOME", &state)
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CACHE_HOME", &state)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("nvim (the tests need neovim; .ci/run installs it)");
    let exited = wait_for(WAIT * 2, || child.try_wait().unwrap());
    if exited.is_none() {
        let _ = child.kill();
    }
    child.wait_with_output().unwrap()
}

#[test]
fn the_readme_neovim_snippet_gets_health_a_subscription_and_events() {
    let d = TestDaemon::start_with(DaemonOptions::fake_claude());
    let work = d.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script_path = d.dir.join("hld-test.lua");
    std::fs::write(&script_path, script(&readme_snippet(), &work)).unwrap();
    let output = run_nvim(&d, &script_path);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    // `health`'s result and `Subscribe`'s confirmation, as the snippet prints them.
    assert!(stdout.contains(r#"status = "ok""#), "{stdout}");
    assert!(stdout.contains(r#"subscription_id = "sub_"#), "{stdout}");
    assert!(!stdout.contains("code = -32602"), "{stdout}");
    assert!(stdout.contains("completed-event=true"), "{stdout}");
    let session = stdout
        .lines()
        .find_map(|l| l.strip_prefix("launched="))
        .unwrap_or_else(|| panic!("a session id: {stdout}"));
    // The daemon the test started served it.
    assert_eq!(d.state(session).status, SessionStatus::Completed);
}
