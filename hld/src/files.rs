//! Files for an `@` mention: the live `claude`'s `file_suggestions` (claude-code.md 3.4), or,
//! when none answers, a walk of the working directory with the `ignore` crate (what
//! `.gitignore` and `.ignore` exclude is skipped, and `.git`), bounded in time and entries,
//! and a fuzzy match of the relative paths (`nucleo-matcher`, helix's matcher), best first.

use std::path::Path;
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher};
use serde_json::{json, Value};

/// How long a scan walks before it matches what it found.
pub const SCAN_TIME: Duration = Duration::from_millis(200);
/// The most entries a scan collects.
pub const SCAN_ENTRIES: usize = 50_000;

/// The control request that asks `claude` for the files matching `query`.
pub fn request(query: &str) -> Value {
    json!({"subtype": "file_suggestions", "query": query})
}

/// The paths of `claude`'s answer, `{"suggestions": [{"path", "score"?}]}`, best first.
pub fn answered(answer: &Value) -> Vec<String> {
    let suggestions = answer["suggestions"].as_array().into_iter().flatten();
    suggestions
        .filter_map(|s| s["path"].as_str().filter(|p| !p.is_empty()))
        .map(str::to_owned)
        .collect()
}

/// The paths under `root` (relative, directories ending in `/`) that match `query`, best
/// first, at most `limit`; an empty query lists those nearest the top. Blocking: the walk
/// reads the file system.
pub fn suggest(root: &Path, query: &str, limit: usize) -> Vec<String> {
    let mut paths = scan(root, Instant::now() + SCAN_TIME, SCAN_ENTRIES);
    // Nearest the top first, then shortest, then by name: the order among equal matches.
    let depth = |p: &String| p.trim_end_matches('/').matches('/').count();
    paths.sort_by(|a, b| (depth(a), a.len(), a).cmp(&(depth(b), b.len(), b)));
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    pattern
        .match_list(paths, &mut matcher)
        .into_iter()
        .take(limit)
        .map(|(path, _)| path)
        .collect()
}

/// Walks `root` until `deadline` or `max` entries, skipping what is ignored and `.git`.
fn scan(root: &Path, deadline: Instant, max: usize) -> Vec<String> {
    let walk = ignore::WalkBuilder::new(root)
        .hidden(false)
        // A `.gitignore` counts outside a git repository too, as a person expects.
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut paths = Vec::new();
    for entry in walk {
        if paths.len() >= max || Instant::now() >= deadline {
            break;
        }
        let Ok(entry) = entry else { continue };
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str().filter(|r| !r.is_empty()) else {
            continue;
        };
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        paths.push(if dir {
            format!("{relative}/")
        } else {
            relative.to_owned()
        });
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        dir
    }

    #[test]
    fn matches_skip_what_is_ignored_and_git() {
        let dir = tree(&[
            ".gitignore",
            "src/main.rs",
            "src/lib.rs",
            "build/main_out.rs",
            ".git/main_head",
            "docs/.ignore",
            "docs/main_draft.md",
            "README.md",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(dir.path().join("docs/.ignore"), "*_draft.md\n").unwrap();
        assert_eq!(suggest(dir.path(), "main", 20), ["src/main.rs"]);
        assert_eq!(suggest(dir.path(), "smain", 20), ["src/main.rs"]);
        let all = suggest(dir.path(), "", 100);
        assert_eq!(
            all[..4],
            ["src/", "docs/", "README.md", ".gitignore"].map(String::from)
        );
        assert!(all.contains(&"docs/.ignore".to_owned()));
        assert!(!all
            .iter()
            .any(|p| p.starts_with(".git/") || p.starts_with("build")));
        assert_eq!(suggest(dir.path(), "", 2).len(), 2);
    }

    #[test]
    fn claudes_answer_reads_as_paths() {
        let answer = json!({"suggestions": [{"path": "src/"}, {"path": "src/main.rs", "score": 0.5},
            {"score": 1}, {"path": ""}]});
        assert_eq!(answered(&answer), ["src/", "src/main.rs"]);
        assert!(answered(&Value::Null).is_empty());
        assert_eq!(request("ma")["subtype"], "file_suggestions");
    }

    #[test]
    fn the_best_match_comes_first_and_the_walk_is_bounded() {
        let dir = tree(&["a/b/c/deep_config.rs", "config.rs", "src/configure.rs"]);
        assert_eq!(suggest(dir.path(), "config", 1), ["config.rs"]);
        let few = scan(dir.path(), Instant::now() + SCAN_TIME, 2);
        assert_eq!(few.len(), 2);
        assert!(scan(dir.path(), Instant::now(), 100).is_empty());
    }
}
