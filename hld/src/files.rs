//! Files for an `@` mention: the live `claude`'s `file_suggestions` (claude-code.md 3.4), or,
//! when none answers, a walk of the working directory with the `ignore` crate (what
//! `.gitignore` and `.ignore` exclude is skipped, and `.git`), bounded in time and entries,
//! and a fuzzy match of the relative paths (`nucleo-matcher`, helix's matcher), best first.
//! [`search`] is the same walk and match over several directories, scored, for CodeLayer's
//! `POST /fuzzy-search/files`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use serde_json::{json, Value};

/// How long a scan walks before it matches what it found.
pub const SCAN_TIME: Duration = Duration::from_millis(200);
/// The most entries a scan collects.
pub const SCAN_ENTRIES: usize = 50_000;

/// The control request that asks `claude` for the files matching `query`.
pub fn request(query: &str) -> Value {
    json!({"subtype": "file_suggestions", "query": query})
}

/// The paths of `claude`'s answer, `{"suggestions": [{"path", "score"?}]}`, best first,
/// without `.git/`, which `claude` lists among a directory's entries: as in a scan, what a
/// mention means is never inside it.
pub fn answered(answer: &Value) -> Vec<String> {
    let suggestions = answer["suggestions"].as_array().into_iter().flatten();
    suggestions
        .filter_map(|s| s["path"].as_str().filter(|p| !p.is_empty()))
        .filter(|p| !(*p == ".git" || p.starts_with(".git/")))
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
    let walk = Walk {
        files_only: false,
        respect_ignore: true,
        max_depth: None,
        deadline,
        max,
    };
    let (entries, _) = walk.run(std::slice::from_ref(&root.to_path_buf()));
    entries
        .into_iter()
        .map(|e| {
            if e.is_dir {
                format!("{}/", e.relative)
            } else {
                e.relative
            }
        })
        .collect()
}

/// A walk of directories: what it keeps, and when it stops. `.git` is always skipped (its
/// objects are never what a mention means); hidden files are kept; symbolic links are not
/// followed, so a link loop cannot hold it.
#[derive(Debug, Clone)]
pub struct Walk {
    /// Files only, no directories.
    pub files_only: bool,
    /// Skip what `.gitignore`, `.ignore` and git's excludes exclude (a `.gitignore` counts
    /// outside a git repository too, as a person expects).
    pub respect_ignore: bool,
    /// How far below each root (1: its children); `None`: all the way.
    pub max_depth: Option<usize>,
    /// When the walk stops, whatever it has.
    pub deadline: Instant,
    /// The most entries kept, over all roots.
    pub max: usize,
}

/// An entry a walk found: a file or directory below one of its roots (never a root itself).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its path, as under its root (absolute when the root is).
    pub path: String,
    /// Its path relative to its root.
    pub relative: String,
    pub is_dir: bool,
}

impl Walk {
    /// The entries below `roots`, in walk order, and whether the walk was cut short by its
    /// deadline or its `max`. Paths that are not UTF-8 are skipped: they cannot be answered in
    /// JSON as they are. Blocking: it reads the file system.
    pub fn run(&self, roots: &[PathBuf]) -> (Vec<Entry>, bool) {
        let mut entries = Vec::new();
        for root in roots {
            let walk = ignore::WalkBuilder::new(root)
                .standard_filters(self.respect_ignore)
                .hidden(false)
                .require_git(false)
                .max_depth(self.max_depth)
                .filter_entry(|entry| entry.file_name() != ".git")
                .build();
            for entry in walk {
                if entries.len() >= self.max || Instant::now() >= self.deadline {
                    return (entries, true);
                }
                let Ok(entry) = entry else { continue };
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if entry.depth() == 0 || (is_dir && self.files_only) {
                    continue;
                }
                let (Some(path), Ok(relative)) =
                    (entry.path().to_str(), entry.path().strip_prefix(root))
                else {
                    continue;
                };
                let Some(relative) = relative.to_str() else {
                    continue;
                };
                entries.push(Entry {
                    path: path.to_owned(),
                    relative: relative.to_owned(),
                    is_dir,
                });
            }
        }
        (entries, false)
    }
}

/// What each matched character of a file's name adds to its score, so that a match within
/// the name outranks one spread over the directories above it (upstream's weight).
const NAME_BONUS: u32 = 30;

/// An entry [`search`] matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub entry: Entry,
    /// Higher is better.
    pub score: u32,
    /// The positions (in characters) of `entry.path` that the query matched, ascending.
    pub indices: Vec<u32>,
}

/// What [`search`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Searched {
    /// The best matches, best first.
    pub found: Vec<Found>,
    /// How many entries the walk read.
    pub scanned: usize,
    /// How many matched, before the limit.
    pub matches: usize,
    /// Whether the walk was cut short.
    pub cut_short: bool,
}

/// The entries below `roots` (walked as `walk` says) that fuzzy-match `query`, best first, at
/// most `limit`. A match within an entry's name scores above one of its relative path, which
/// is tried only when the name does not match; ties go to the shorter path. An empty query
/// matches every entry, in walk order. Blocking: it reads the file system.
pub fn search(roots: &[PathBuf], query: &str, limit: usize, walk: &Walk) -> Searched {
    let (entries, cut_short) = walk.run(roots);
    let scanned = entries.len();
    if query.is_empty() {
        let found: Vec<Found> = entries
            .into_iter()
            .map(|entry| Found {
                entry,
                score: 0,
                indices: Vec::new(),
            })
            .collect();
        let matches = found.len();
        return Searched {
            found: found.into_iter().take(limit).collect(),
            scanned,
            matches,
            cut_short,
        };
    }
    let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let mut found: Vec<Found> = entries
        .into_iter()
        .filter_map(|entry| score(&pattern, &mut matcher, entry))
        .collect();
    found.sort_by(|a, b| {
        let (a, b) = ((a.score, &a.entry.path), (b.score, &b.entry.path));
        b.0.cmp(&a.0)
            .then(a.1.len().cmp(&b.1.len()))
            .then_with(|| a.1.cmp(b.1))
    });
    let matches = found.len();
    found.truncate(limit);
    Searched {
        found,
        scanned,
        matches,
        cut_short,
    }
}

/// `entry` scored by `pattern`: its name first (with [`NAME_BONUS`]), else its relative path.
fn score(pattern: &Pattern, matcher: &mut Matcher, entry: Entry) -> Option<Found> {
    let name = entry.relative.rsplit('/').next().unwrap_or_default();
    let mut chars = Vec::new();
    let mut indices = Vec::new();
    let (score, matched) =
        match pattern.indices(Utf32Str::new(name, &mut chars), matcher, &mut indices) {
            Some(score) => {
                let bonus =
                    NAME_BONUS.saturating_mul(u32::try_from(indices.len()).unwrap_or(u32::MAX));
                (score.saturating_add(bonus), name)
            }
            None => {
                indices.clear();
                let relative = entry.relative.as_str();
                let score =
                    pattern.indices(Utf32Str::new(relative, &mut chars), matcher, &mut indices)?;
                (score, relative)
            }
        };
    // The matched text ends `entry.path`: its positions there are shifted by what precedes it.
    let offset = entry
        .path
        .chars()
        .count()
        .saturating_sub(matched.chars().count());
    let offset = u32::try_from(offset).unwrap_or(u32::MAX);
    indices.sort_unstable();
    indices.dedup();
    for i in &mut indices {
        *i = i.saturating_add(offset);
    }
    Some(Found {
        entry,
        score,
        indices,
    })
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
    fn a_search_scores_names_first_and_says_what_it_read() {
        let dir = tree(&["src/main.rs", "main/lib.rs", "docs/domain.md", "README.md"]);
        let roots = [dir.path().to_path_buf()];
        let walk = Walk {
            files_only: false,
            respect_ignore: true,
            max_depth: None,
            deadline: Instant::now() + SCAN_TIME,
            max: 100,
        };
        let found = search(&roots, "main", 10, &walk);
        let relative: Vec<&str> = found
            .found
            .iter()
            .map(|f| f.entry.relative.as_str())
            .collect();
        assert_eq!(relative.len(), 4, "{relative:?}");
        assert_eq!(
            relative[3], "main/lib.rs",
            "a match of the path alone comes last"
        );
        for f in &found.found {
            let chars: Vec<char> = f.entry.path.chars().collect();
            let matched: String = f.indices.iter().map(|&i| chars[i as usize]).collect();
            assert_eq!(matched.to_lowercase(), "main", "{f:?}");
        }
        assert_eq!(
            (found.scanned, found.matches, found.cut_short),
            (7, 4, false)
        );
        let files = search(
            &roots,
            "main",
            10,
            &Walk {
                files_only: true,
                ..walk.clone()
            },
        );
        assert!(files.found.iter().all(|f| !f.entry.is_dir) && files.matches == 3);
        let all = search(&roots, "", 3, &walk);
        assert_eq!((all.found.len(), all.matches), (3, 7));
        let few = search(
            &roots,
            "",
            10,
            &Walk {
                max: 2,
                ..walk.clone()
            },
        );
        assert!(few.cut_short && few.scanned == 2);
        let top = search(
            &roots,
            "",
            10,
            &Walk {
                max_depth: Some(1),
                ..walk
            },
        );
        assert_eq!(top.scanned, 4, "the root's children only");
    }

    #[test]
    fn claudes_answer_reads_as_paths() {
        let answer = json!({"suggestions": [{"path": ".git/"}, {"path": "src/"},
            {"path": "src/main.rs", "score": 0.5}, {"score": 1}, {"path": ""},
            {"path": ".git/config"}, {"path": ".github/"}]});
        assert_eq!(answered(&answer), ["src/", "src/main.rs", ".github/"]);
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
