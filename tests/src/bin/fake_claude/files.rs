//! `file_suggestions` (claude-code.md §3.4): the paths an `@` mention completes to, as the
//! real CLI answers them, `{"suggestions": [{"path": …}]}`, at most 15, directories ending
//! in `/`. An empty query lists the working directory's own entries (`.git/` and ignored
//! ones included, as the real CLI does); otherwise the files and directories that
//! `.gitignore` keeps (never `.git`) whose path holds the query's characters in order,
//! shortest first. (The real CLI answers `[]` until its file index is built, in the first
//! seconds; the fake's is ready at once.)

use std::path::Path;

use serde::Serialize;

/// The most suggestions the real CLI returns (its typeahead's limit).
const LIMIT: usize = 15;

/// One suggestion.
#[derive(Debug, Serialize)]
pub struct Suggestion {
    path: String,
}

/// The suggestions for `query` in `cwd`.
pub fn suggest(cwd: &Path, query: &str) -> Vec<Suggestion> {
    let mut paths = if query.is_empty() {
        top_level(cwd)
    } else {
        let query = query.to_lowercase();
        let mut found: Vec<String> = walk(cwd)
            .into_iter()
            .filter(|p| in_order(&p.to_lowercase(), &query))
            .collect();
        found.sort_by_key(|p| (p.len(), p.clone()));
        found
    };
    paths.truncate(LIMIT);
    paths.into_iter().map(|path| Suggestion { path }).collect()
}

fn top_level(cwd: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cwd) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type().is_ok_and(|t| t.is_dir()) {
                true => format!("{name}/"),
                false => name,
            }
        })
        .collect()
}

fn walk(cwd: &Path) -> Vec<String> {
    let walk = ignore::WalkBuilder::new(cwd)
        .hidden(false)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    walk.flatten()
        .filter_map(|entry| {
            let relative = entry.path().strip_prefix(cwd).ok()?.to_str()?.to_owned();
            let dir = entry.file_type().is_some_and(|t| t.is_dir());
            match (relative.is_empty(), dir) {
                (true, _) => None,
                (false, true) => Some(format!("{relative}/")),
                (false, false) => Some(relative),
            }
        })
        .collect()
}

/// Whether `path` holds the characters of `query` in order.
fn in_order(path: &str, query: &str) -> bool {
    let mut rest = path.chars();
    query.chars().all(|q| rest.any(|c| c == q))
}
