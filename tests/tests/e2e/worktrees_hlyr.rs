//! Isolated sessions from `hlyr`: `launch --worktree`, `diff` (patch, `--stat`, `--json`),
//! `merge` (`--squash`, conflicts) and `discard`, over the real binaries and git.

use hld_e2e::pty::{self, Terminal};
use hld_e2e::{workspace_bin, WAIT};

use super::hlyr::{fake, hlyr, hlyr_command, printed_session, run_command};
use super::worktrees::{git, repo, shared};

#[test]
fn hlyr_launches_isolated_reviews_merges_and_discards() {
    let d = fake();
    let repo = repo(&d);
    let wd = repo.display().to_string();
    let launch = |branch: &str, changes: &[(usize, &str)]| {
        let query = format!("scenario:write shared.txt\n{}", shared(changes));
        let run = hlyr(
            &d,
            &[
                "launch",
                "--worktree",
                "--branch",
                branch,
                "--detach",
                "-w",
                &wd,
                "--dangerously-skip-permissions",
                &query,
            ],
        );
        run.assert_code(0);
        let id = printed_session(&run);
        d.wait_ended(&id);
        (id, run)
    };
    let (one, run) = launch("cli-one", &[(1, "one by cli")]);
    let branch = format!("cli-one at {}", d.dir.join("worktrees").display());
    assert!(run.stdout.contains(&branch), "{run:#?}");
    assert!(run.stdout.contains("(from main at "), "{run:#?}");
    assert!(!run.stderr.contains("uncommitted"), "{run:#?}");
    // Changes not committed in the checkout, a new file too, are told to stay behind.
    std::fs::write(repo.join("notes.txt"), "mine\n").unwrap();
    let (two, run) = launch("cli-two", &[(1, "one by two")]);
    let behind = format!("uncommitted changes in {} stay there", repo.display());
    assert!(run.stderr.contains(&behind), "{run:#?}");
    std::fs::remove_file(repo.join("notes.txt")).unwrap();

    let show = hlyr(&d, &["show", &one]);
    assert!(
        show.stdout.contains("cli-one (active, from main at "),
        "{}",
        show.stdout
    );
    let shown = &hlyr(&d, &["--json", "show", &one]).json_lines_as("session")[0];
    assert_eq!(shown["worktree"]["branch"], "cli-one");

    let patch = hlyr(&d, &["diff", &one]);
    patch.assert_code(0);
    for part in ["shared.txt (modified)", "@@ -1", "-line 1", "+one by cli"] {
        assert!(patch.stdout.contains(part), "{part:?} in {}", patch.stdout);
    }
    assert!(patch
        .stdout
        .contains("1 file changed, 1 insertion(+), 1 deletion(-)"));
    // On a terminal the patch goes through the user's pager, coloured.
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.env("PAGER", "cat -v | sed s/^/paged:/");
    cmd.args(["diff", &one]);
    let mut term = Terminal::spawn(cmd, 40, 120);
    let screen = term.wait_screen("paged:1 file changed");
    assert!(screen.contains("paged:^[[32m+one by cli"), "{screen}");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);

    let stat = hlyr(&d, &["diff", &one, "--stat"]);
    assert!(
        stat.stdout.starts_with("shared.txt modified +1 -1\n"),
        "{}",
        stat.stdout
    );
    let diff = hlyr(&d, &["--json", "diff", &one]).json_as("diff");
    assert_eq!(diff["files"][0]["path"], "shared.txt");
    assert_eq!(diff["files"][0]["hunks"][0]["lines"][1], "+one by cli");

    let merged = hlyr(&d, &["merge", &one, "--squash"]);
    merged.assert_code(0);
    assert!(merged.stdout.starts_with("merged "), "{}", merged.stdout);
    let stay = format!(
        "its worktree and branch stay until `hlyr discard {}` removes them",
        &one[..8]
    );
    assert!(merged.stdout.contains(&stay), "{}", merged.stdout);
    assert_eq!(
        std::fs::read_to_string(repo.join("shared.txt")).unwrap(),
        shared(&[(1, "one by cli")])
    );
    assert_eq!(git(&repo, &["rev-list", "--count", "main"]).trim(), "2");

    let conflict = hlyr(&d, &["merge", &two]);
    assert_ne!(conflict.code, 0);
    assert!(
        conflict.stdout.contains("conflicts in shared.txt"),
        "{conflict:#?}"
    );
    let conflict = hlyr(&d, &["--json", "merge", &two]).json_as("merge");
    assert_eq!(conflict["merged"], false);
    assert_eq!(conflict["conflicts"][0], "shared.txt");
    let refused = hlyr(&d, &["discard", &two]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("never merged"), "{refused:#?}");
    // How to force it, as hlyr spells it; not what the parameter expects.
    let force = format!("`hlyr discard {two} --force` discards it anyway");
    assert!(refused.stderr.contains(&force), "{refused:#?}");
    assert!(!refused.stderr.contains("expects"), "{refused:#?}");
    let run = hlyr(&d, &["discard", &one, "--force"]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("discarded "), "{}", run.stdout);
    let run = hlyr(&d, &["--json", "discard", &two, "--force"]);
    assert_eq!(run.assert_code(0).json_as("discard")["session_id"], two);
    assert_eq!(
        git(&repo, &["branch", "--format=%(refname:short)"]).trim(),
        "main"
    );
}

#[test]
fn continue_goes_on_with_isolated_sessions_last_merged_and_discarded() {
    let d = fake();
    let repo = repo(&d);
    let wd = repo.display().to_string();
    let launch = |args: &[&str]| {
        let mut all = vec!["launch", "--detach", "-w", &wd];
        all.extend(args);
        let id = printed_session(hlyr(&d, &all).assert_code(0));
        d.wait_ended(&id);
        id
    };
    let _in_checkout = launch(&["scenario:plain in the checkout"]);
    let isolated = launch(&[
        "--worktree",
        "--dangerously-skip-permissions",
        "scenario:write new.txt\nnew\n",
    ]);
    let continue_here = |args: &[&str]| {
        let mut cmd = hlyr_command(&d.socket, &d.dir);
        cmd.current_dir(&repo).arg("continue").args(args);
        run_command(cmd)
    };
    let run = continue_here(&["--last", "--detach", "scenario:plain", "more"]);
    assert!(
        run.assert_code(0)
            .stdout
            .contains(&format!("Continues {isolated}")),
        "{run:#?}"
    );
    let continued = printed_session(&run);
    d.wait_ended(&continued);

    // Once its branch is merged, it goes on in a worktree of its own.
    hlyr(&d, &["merge", &isolated]).assert_code(0);
    let refused = continue_here(&[&continued, "scenario:plain", "again"]);
    assert!(refused.stderr.contains("was merged"), "{refused:#?}");
    let run = continue_here(&[
        "--worktree",
        "--branch",
        "again",
        "--detach",
        &continued,
        "scenario:plain again",
    ]);
    let branch = format!("again at {}", d.dir.join("worktrees").display());
    assert!(run.assert_code(0).stdout.contains(&branch), "{run:#?}");
    let again = printed_session(&run);
    d.wait_ended(&again);
    // A discarded one is passed over: the newest left is the merged one, which says so.
    hlyr(&d, &["discard", &again, "--force"]).assert_code(0);
    let run = continue_here(&["--last", "scenario:plain", "once more"]);
    assert!(run.stderr.contains("was merged"), "{run:#?}");
    // Out of any repository, the refusal speaks of hlyr's flag, not of the API's parameter.
    let outside = d.dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let outside = outside.display().to_string();
    let run = hlyr(&d, &["launch", "--worktree", "-w", &outside, "q"]);
    assert_eq!(
        run.stderr,
        "error: not a git repository: the working directory is in no git repository\n\
         hint: -w (by default the current directory) expects a repository git can work with\n",
        "{run:#?}"
    );
}

#[test]
fn the_sdk_example_runs_three_isolated_agents_and_prints_their_diffs() {
    let d = fake();
    let repo = repo(&d);
    let mut cmd = std::process::Command::new(hld_e2e::workspace_bin("examples/isolated_agents"));
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket)
        .env("HOME", &d.dir)
        .env("XDG_CONFIG_HOME", d.dir.join("config"))
        .current_dir(&repo)
        .args(["a", "b", "c"].map(|n| format!("scenario:write {n}.txt\n{n}\n")));
    let out = cmd.output().expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in ["a", "b", "c"] {
        // Each agent's diff holds its own file only.
        assert_eq!(
            stdout.matches(&format!("  added {n}.txt +1 -0")).count(),
            1,
            "{stdout}"
        );
    }
    assert_eq!(stdout.matches(": +1 -0\n").count(), 3, "{stdout}");
    assert_eq!(
        git(&repo, &["status", "--porcelain"]),
        "",
        "the main checkout is untouched"
    );
}
