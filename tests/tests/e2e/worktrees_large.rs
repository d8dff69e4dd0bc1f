//! Diffs larger than a reply carries: a text file's diff over `MAX_TEXT_PATCH` comes without
//! its hunks, its counts kept; `hlyr diff` says so on a terminal and, piped, names the file
//! and exits 1, the rest of the patch still applying.

use hld_client::protocol::{GetSessionDiff, GetSessionDiffParams, MAX_TEXT_PATCH};
use hld_e2e::WAIT;

use super::hlyr::fake;
use super::worktrees::repo;
use super::worktrees_hlyr::{applied_at, diff_on_terminal, isolated, piped_diff};

#[test]
fn a_text_diff_too_large_for_a_reply_is_left_out_with_its_counts_named_and_exit_1() {
    let d = fake();
    let repo = repo(&d);
    let (id, worktree) = isolated(&d, &repo, "scenario:write notes.txt\nthe agent's\n");
    let base = d.state(&id).worktree.expect("isolated").base_commit;
    // 20,000 lines of 21 bytes: a diff of about 420 KiB.
    let lock: String = (0..20_000)
        .map(|i| format!("\"pkg-{i:06}\": \"1.0\",\n"))
        .collect();
    assert!(lock.len() as u64 > MAX_TEXT_PATCH);
    std::fs::write(worktree.join("lock.json"), &lock).unwrap();

    // The file over the limit is a page of its own, with its counts and without its lines.
    let page = |offset| {
        d.request::<GetSessionDiff>(GetSessionDiffParams {
            session_id: id.clone(),
            offset,
            ..Default::default()
        })
    };
    let first = page(None);
    let lock_file = &first.files[0];
    assert_eq!(
        (first.files.len(), lock_file.path.as_str()),
        (1, "lock.json")
    );
    assert!(lock_file.hunks_omitted && lock_file.hunks.is_empty());
    assert_eq!((lock_file.additions, lock_file.deletions), (20_000, 0));
    assert_eq!(first.next_offset, Some(1));
    let second = page(Some(1));
    let notes = &second.files[0];
    assert_eq!((second.files.len(), notes.path.as_str()), (1, "notes.txt"));
    assert!(!notes.hunks_omitted && !notes.hunks.is_empty());
    assert_eq!(second.next_offset, None);

    let (file, run) = piped_diff(&d, &id);
    assert_eq!(run.status.code(), Some(1), "{run:#?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("the patch lacks lock.json (diff over the 256 KiB a reply carries)")
            && stderr.contains(&format!(
                "the files are in the worktree, {}",
                worktree.display()
            )),
        "{stderr}"
    );
    let clone = applied_at(&d, &repo, &base, &file);
    assert_eq!(
        std::fs::read_to_string(clone.join("notes.txt")).unwrap(),
        "the agent's\n"
    );
    assert!(!clone.join("lock.json").exists());

    // On a terminal, the file is its name, its counts and why its lines are not shown.
    let mut term = diff_on_terminal(&d, &id, "cat");
    term.wait_screen("+20000 -0: diff over the 256 KiB a reply carries");
    assert_eq!(term.wait_exit(WAIT).exit_code(), 0);
    assert!(term.output().contains("+the agent's"), "{}", term.output());
}
