//! Isolated sessions from `hlyr`: `launch --worktree`, `diff` (paged, the patch `git apply`
//! takes, `--stat`, `--json`), `merge` (`--squash`, conflicts) and `discard`, over the real
//! binaries and git.

use std::path::{Path, PathBuf};

use hld_client::protocol::{DiffFile, GetSessionDiff, GetSessionDiffParams};
use hld_e2e::pty::{self, Terminal};
use hld_e2e::{workspace_bin, DaemonOptions, TestDaemon, WAIT};

use super::hlyr::{fake, hlyr, hlyr_command, printed_session, run_command};
use super::worktrees::{git, repo, shared};

/// Launches an isolated session from `hlyr` with `query`, waits for its turn's end; its id and
/// worktree.
pub(super) fn isolated(d: &TestDaemon, repo: &Path, query: &str) -> (String, PathBuf) {
    let wd = repo.display().to_string();
    let run = hlyr(
        d,
        &[
            "launch",
            "--worktree",
            "--detach",
            "-w",
            &wd,
            "--dangerously-skip-permissions",
            query,
        ],
    );
    let id = printed_session(run.assert_code(0));
    assert_eq!(d.wait_ended(&id).error_message, None);
    let path = d.state(&id).worktree.expect("isolated").path;
    (id, PathBuf::from(path))
}

/// Runs `hlyr launch --detach -w WD ARGS` and waits for the turn to end: the session's id.
fn launched_in(d: &TestDaemon, wd: &str, args: &[&str]) -> String {
    let mut all = vec!["launch", "--detach", "-w", wd];
    all.extend(args);
    let id = printed_session(hlyr(d, &all).assert_code(0));
    d.wait_ended(&id);
    id
}

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

    // Piped, the patch as git prints it (the headers, no summary).
    let patch = hlyr(&d, &["diff", &one]);
    patch.assert_code(0);
    assert!(
        patch
            .stdout
            .starts_with("diff --git a/shared.txt b/shared.txt\nindex "),
        "{}",
        patch.stdout
    );
    for part in [
        "--- a/shared.txt\n+++ b/shared.txt\n@@ -1",
        "-line 1\n+one by cli\n",
    ] {
        assert!(patch.stdout.contains(part), "{part:?} in {}", patch.stdout);
    }
    assert!(!patch.stdout.contains("changed"), "{}", patch.stdout);
    // On a terminal the patch goes through the user's pager, coloured.
    let mut term = diff_on_terminal(&d, &one, "cat -v | sed s/^/paged:/");
    let screen = term.wait_screen("paged:1 file changed");
    assert!(screen.contains("paged:^[[32m+one by cli"), "{screen}");
    assert!(
        screen.contains("paged:^[[1mshared.txt (modified)"),
        "{screen}"
    );
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
    // What to do next: the agent, or the user in the worktree, solves them on the branch.
    let ask = format!(
        "`hlyr send {} \"merge main into this branch and resolve the conflicts\"`",
        &two[..8]
    );
    assert!(conflict.stderr.contains(&ask), "{conflict:#?}");
    let worktree = d.state(&two).worktree.unwrap().path;
    assert!(conflict.stderr.contains(&worktree), "{conflict:#?}");
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
    let launch = |args: &[&str]| launched_in(&d, &wd, args);
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
    // It starts where its parent's branch got to, and merges where that one did.
    let parent_branch = d.state(&continued).worktree.expect("a worktree").branch;
    let start = format!("(from {parent_branch} at ");
    assert!(run.stdout.contains(&start), "{run:#?}");
    assert!(run.stdout.contains(", merges into main)"), "{run:#?}");
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

/// The tree `dir` holds, every file (not the ignored ones) as `git add -A` would stage it.
fn tree_of(dir: &Path) -> String {
    git(dir, &["add", "-A"]);
    git(dir, &["write-tree"]).trim().to_owned()
}

#[test]
fn a_piped_diff_is_a_patch_git_applies_at_the_base_commit() {
    // The agent changes a line to one with a tab and a CRLF, adds an executable, deletes a
    // file, renames one, and leaves one without its last newline.
    let script = r"printf 'a\tb\r\nline 2\n' > shared.txt && printf '#!/bin/sh\necho hi\n' > run.sh && chmod +x run.sh && rm gone.txt && mv moved.txt renamed.txt && printf 'no newline' > tail.txt";
    let d = TestDaemon::start_with(DaemonOptions::fake_claude().env("FAKE_CLAUDE_COMMAND", script));
    let repo = repo(&d);
    std::fs::write(repo.join("gone.txt"), "bye\n").unwrap();
    std::fs::write(repo.join("tail.txt"), "with newline\n").unwrap();
    let moved: String = (1..=20).map(|i| format!("moved line {i}\n")).collect();
    std::fs::write(repo.join("moved.txt"), &moved).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "more"]);
    let (id, worktree) = isolated(&d, &repo, "scenario:bash");
    let base = d.state(&id).worktree.expect("isolated").base_commit;
    assert!(
        worktree.join("run.sh").is_file(),
        "the agent ran its script"
    );

    let file = d.dir.join("session.patch");
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["diff", &id])
        .stdout(std::fs::File::create(&file).unwrap());
    assert!(cmd.status().unwrap().success());
    let patch = std::fs::read_to_string(&file).unwrap();
    for part in [
        "diff --git a/shared.txt b/shared.txt\n",
        "\n-line 1\n+a\tb\r\n line 2\n-line 3\n",
        "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n",
        "--- a/gone.txt\n+++ /dev/null\n",
        "diff --git a/run.sh b/run.sh\nnew file mode 100755\n",
        "--- /dev/null\n+++ b/run.sh\n",
        "rename from moved.txt\nrename to renamed.txt\n",
        "+no newline\n\\ No newline at end of file\n",
    ] {
        assert!(patch.contains(part), "{part:?} in {patch}");
    }

    // A fresh clone at the base commit takes it, and then holds what the worktree holds.
    let clone = d.dir.join("clone");
    git(
        &d.dir,
        &[
            "clone",
            "-q",
            repo.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    git(&clone, &["checkout", "-q", "--detach", &base]);
    let patch_path = file.to_str().unwrap();
    git(&clone, &["apply", "--check", patch_path]);
    git(&clone, &["apply", patch_path]);
    assert_eq!(
        std::fs::read(clone.join("shared.txt")).unwrap(),
        b"a\tb\r\nline 2\n"
    );
    assert_eq!(tree_of(&clone), tree_of(&worktree));
}

/// `len` bytes that no compression shrinks, the same for the same `seed` (xorshift).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// `hlyr diff ID` redirected to a file: the patch, and what hlyr said and exited with.
pub(super) fn piped_diff(d: &TestDaemon, id: &str) -> (PathBuf, std::process::Output) {
    let file = d.dir.join("session.patch");
    let mut cmd = hlyr_command(&d.socket, &d.dir);
    cmd.args(["diff", id])
        .stdout(std::fs::File::create(&file).unwrap());
    (file, cmd.output().unwrap())
}

/// `hlyr diff ID` on a terminal, its pager `pager`.
pub(super) fn diff_on_terminal(d: &TestDaemon, id: &str, pager: &str) -> Terminal {
    let mut cmd = pty::command(&workspace_bin("hlyr"), &d.dir);
    cmd.env("HUMANLAYER_DAEMON_SOCKET", &d.socket);
    cmd.env("PAGER", pager);
    cmd.args(["diff", id]);
    Terminal::spawn(cmd, 40, 120)
}

/// A fresh clone of `repo` at `base` with `patch` applied.
pub(super) fn applied_at(d: &TestDaemon, repo: &Path, base: &str, patch: &Path) -> PathBuf {
    let clone = d.dir.join("clone");
    let (repo, clone_at) = (repo.to_str().unwrap(), clone.to_str().unwrap());
    git(&d.dir, &["clone", "-q", repo, clone_at]);
    git(&clone, &["checkout", "-q", "--detach", base]);
    let patch = patch.to_str().unwrap();
    git(&clone, &["apply", "--check", patch]);
    git(&clone, &["apply", patch]);
    clone
}

#[test]
fn a_piped_diff_carries_binary_files_git_applies_byte_for_byte() {
    let d = fake();
    let repo = repo(&d);
    for (name, seed) in [
        ("logo.bin", 1),
        ("old.bin", 2),
        ("move.bin", 3),
        ("same.bin", 4),
    ] {
        std::fs::write(repo.join(name), noise(seed, 3000)).unwrap();
    }
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "binaries"]);
    let (id, worktree) = isolated(&d, &repo, "scenario:write notes.txt\nthe agent's\n");
    let base = d.state(&id).worktree.expect("isolated").base_commit;
    // A new binary file, one changed, one deleted, one renamed and changed, one renamed only.
    std::fs::write(worktree.join("blob.bin"), b"\0\x01\x02\xff").unwrap();
    let mut logo = noise(1, 3000);
    logo[1500..1600].fill(0);
    std::fs::write(worktree.join("logo.bin"), &logo).unwrap();
    std::fs::remove_file(worktree.join("old.bin")).unwrap();
    let mut moved = noise(3, 3000);
    moved.push(0);
    std::fs::write(worktree.join("moved.bin"), &moved).unwrap();
    std::fs::remove_file(worktree.join("move.bin")).unwrap();
    std::fs::rename(worktree.join("same.bin"), worktree.join("same2.bin")).unwrap();

    let (file, run) = piped_diff(&d, &id);
    assert!(run.status.success(), "{run:#?}");
    assert_eq!(String::from_utf8_lossy(&run.stderr), "");
    let patch = std::fs::read_to_string(&file).unwrap();
    for part in [
        "diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex 0000000000000000000000000000000000000000..",
        "diff --git a/logo.bin b/logo.bin\nindex ",
        "diff --git a/old.bin b/old.bin\ndeleted file mode 100644\n",
        "rename from move.bin\nrename to moved.bin\n",
        "rename from same.bin\nrename to same2.bin\n",
    ] {
        assert!(patch.contains(part), "{part:?} in {patch}");
    }
    assert_eq!(patch.matches("\nGIT binary patch\n").count(), 4, "{patch}");
    assert!(!patch.contains("Binary files"), "{patch}");

    let clone = applied_at(&d, &repo, &base, &file);
    assert_eq!(std::fs::read(clone.join("logo.bin")).unwrap(), logo);
    assert_eq!(std::fs::read(clone.join("moved.bin")).unwrap(), moved);
    assert!(!clone.join("old.bin").exists());
    assert_eq!(tree_of(&clone), tree_of(&worktree));

    // The JSON carries the same binary patches and headers, for a script to make the patch.
    let json = hlyr(&d, &["--json", "diff", &id]).json_as("diff");
    let files: Vec<DiffFile> = serde_json::from_value(json["files"].clone()).unwrap();
    let carried: Vec<_> = files
        .iter()
        .filter(|f| !f.binary_patch.is_empty())
        .collect();
    assert_eq!(carried.len(), 4, "{json:#}");
    for file in carried {
        let lines = file.header.iter().chain(&file.binary_patch);
        let text: String = lines.map(|l| format!("{l}\n")).collect();
        assert!(patch.contains(&text), "{text:?} in {patch}");
    }

    // On a terminal, a binary file is its name and how it changed, without its patch.
    let mut term = diff_on_terminal(&d, &id, "cat");
    term.wait_screen("files changed");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    let shown = term.output();
    assert!(shown.contains("blob.bin (binary)"), "{shown}");
    assert!(!shown.contains("GIT binary patch"), "{shown}");
}

#[test]
fn a_binary_patch_too_large_for_a_reply_is_left_out_named_and_exit_1() {
    let d = fake();
    let repo = repo(&d);
    let (id, worktree) = isolated(&d, &repo, "scenario:write notes.txt\nthe agent's\n");
    let base = d.state(&id).worktree.expect("isolated").base_commit;
    // 600 KiB of noise: over 512 KiB in base85. The two of 300 KiB fit a reply one at a time.
    let huge = noise(7, 600 << 10);
    std::fs::write(worktree.join("huge.bin"), &huge).unwrap();
    let (a, b) = (noise(8, 300 << 10), noise(9, 300 << 10));
    std::fs::write(worktree.join("a.bin"), &a).unwrap();
    std::fs::write(worktree.join("b.bin"), &b).unwrap();

    let (file, run) = piped_diff(&d, &id);
    assert_eq!(run.status.code(), Some(1), "{run:#?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("the patch lacks huge.bin (binary patch over the 512 KiB a reply carries)")
            && stderr.contains(&format!(
                "the files are in the worktree, {}",
                worktree.display()
            )),
        "{stderr}"
    );
    // The rest is a patch that applies.
    let patch = std::fs::read_to_string(&file).unwrap();
    assert!(!patch.contains("huge.bin"), "{patch}");
    let clone = applied_at(&d, &repo, &base, &file);
    assert_eq!(std::fs::read(clone.join("a.bin")).unwrap(), a);
    assert_eq!(std::fs::read(clone.join("b.bin")).unwrap(), b);
    assert!(!clone.join("huge.bin").exists());

    // A page ends before the binary patch that would take its own over the limit.
    let page = d.request::<GetSessionDiff>(GetSessionDiffParams {
        session_id: id.clone(),
        binary: true,
        ..Default::default()
    });
    assert_eq!(page.files.len(), 1, "{:?}", page.files[0].path);
    assert_eq!(page.files[0].path, "a.bin");
    assert_eq!(page.next_offset, Some(1));
    let page = d.request::<GetSessionDiff>(GetSessionDiffParams {
        session_id: id.clone(),
        offset: Some(1),
        binary: true,
        ..Default::default()
    });
    let paths: Vec<_> = page.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["b.bin", "huge.bin", "notes.txt"]);
    assert!(page.files[1].binary_patch_omitted && page.files[1].binary_patch.is_empty());
    assert!(!page.files[0].binary_patch_omitted && !page.files[0].binary_patch.is_empty());
}

#[test]
fn an_isolated_session_is_listed_and_counted_under_its_repository() {
    let d = fake();
    let repo = repo(&d);
    let wd = repo.display().to_string();
    let launch = |args: &[&str]| launched_in(&d, &wd, args);
    launch(&["scenario:plain usage:10,5,0,0 in the checkout"]);
    launch(&[
        "--worktree",
        "--branch",
        "side-quest",
        "scenario:plain usage:20,5,0,0 in a worktree",
    ]);
    // One directory, the repository's, for both; the branch tells the isolated one apart.
    let listed = hlyr(&d, &["sessions"]);
    let rows: Vec<&str> = listed.assert_code(0).stdout.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{}", listed.stdout);
    // hlyr runs with the daemon's directory as its home.
    for row in &rows {
        assert!(row.contains("  ~/repo  "), "{}", listed.stdout);
        assert!(!row.contains("worktrees"), "{}", listed.stdout);
    }
    assert!(
        rows[0].contains("  ⎇ side-quest scenario:plain"),
        "{}",
        listed.stdout
    );
    let usage = hlyr(&d, &["usage", "--by", "dir", "--json"]).json_as("usage");
    let keys: Vec<&str> = usage["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, [wd.as_str()], "{usage:#}");
    assert_eq!(usage["rows"][0]["sessions"], 2, "{usage:#}");
    // Discarded, its branch is gone: the row says so.
    let isolated = rows[0].split_whitespace().next().unwrap().to_owned();
    hlyr(&d, &["discard", &isolated, "--force"]).assert_code(0);
    let listed = hlyr(&d, &["sessions"]);
    assert!(
        listed
            .assert_code(0)
            .stdout
            .contains("  ⎇ side-quest (discarded) scenario:plain"),
        "{}",
        listed.stdout
    );
}

#[test]
fn a_branch_name_git_refuses_is_made_safe_and_said() {
    let d = fake();
    let repo = repo(&d);
    let wd = repo.display().to_string();
    let launch = |branch: &str| {
        let args = [
            "launch",
            "--detach",
            "-w",
            &wd,
            "--worktree",
            "--branch",
            branch,
        ];
        let run = hlyr(&d, &[&args[..], &["scenario:plain"]].concat());
        d.wait_ended(&printed_session(run.assert_code(0)));
        run
    };
    let run = launch("feature/my branch ✨");
    assert!(run.stdout.contains("feature/my-branch at "), "{run:#?}");
    let said = "--branch \"feature/my branch ✨\" became feature/my-branch";
    assert!(run.stderr.contains(said), "{run:#?}");
    let run = launch("feature/kept");
    assert!(!run.stderr.contains("became"), "{run:#?}");
    // A name taken is the user's to change, like every refused flag (exit 2).
    let args = [
        "launch",
        "-w",
        &wd,
        "--worktree",
        "--branch",
        "feature/kept",
        "q",
    ];
    let taken = hlyr(&d, &args);
    taken.assert_code(2);
    assert!(
        taken.stderr.contains("branch feature/kept already exists"),
        "{taken:#?}"
    );
    // Taken once made safe for git: both names are said.
    let args = [
        "launch",
        "-w",
        &wd,
        "--worktree",
        "--branch",
        "feature/my branch ✨",
        "q",
    ];
    let taken = hlyr(&d, &args);
    taken.assert_code(2);
    let said = "branch feature/my-branch (made of \"feature/my branch ✨\") already exists";
    assert!(taken.stderr.contains(said), "{taken:#?}");
}

#[test]
fn a_merge_git_refuses_names_the_files_in_the_way() {
    let d = fake();
    let repo = repo(&d);
    let (id, _) = isolated(&d, &repo, "scenario:write long.txt\nthe agent's\n");
    // The same file, untracked, in the main checkout: git will not overwrite it.
    std::fs::write(repo.join("long.txt"), "mine\n").unwrap();
    let refused = hlyr(&d, &["merge", &id]);
    assert_ne!(refused.code, 0, "{refused:#?}");
    assert!(
        refused
            .stderr
            .contains("long.txt in the main checkout would be overwritten by the merge"),
        "{refused:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("long.txt")).unwrap(),
        "mine\n"
    );
}
