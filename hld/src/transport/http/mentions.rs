//! What CodeLayer's `@` mentions offer: files and folders fuzzy-matched below the directories
//! asked (`POST /fuzzy-search/files`, [`crate::files::search`]) and Claude Code's sub-agents
//! (`POST /agents/discover`, [`crate::agents`]). Both answer unwrapped, in camelCase, as
//! upstream does; the paths are the user's own, as everything behind the guard is.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hld_client::config::expand_tilde;
use hyper::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};

use super::api::{blocking, invalid, Call};
use super::guard::{json, Refusal};
use super::Reply;
use crate::agents;
use crate::files::{self, Searched, Walk};

/// How long a search walks before it answers with what it found (upstream's cap).
const SEARCH_TIME: Duration = Duration::from_secs(5);
/// The most entries a search reads, so that a huge tree cannot take the daemon's memory.
const SEARCH_ENTRIES: usize = 500_000;
/// The most directories one search may name.
const MAX_PATHS: usize = 10;
/// The largest `limit`, and the one when none is given.
const MAX_LIMIT: usize = 1000;
const DEFAULT_LIMIT: usize = 20;

/// The reply to `call` if it is one of these routes.
pub async fn route(call: &Call<'_>) -> Option<Result<Reply, Refusal>> {
    let reply = match (call.method.as_str(), call.segments.as_slice()) {
        ("POST", ["fuzzy-search", "files"]) => fuzzy_search(call).await,
        ("POST", ["agents", "discover"]) => discover_agents(call).await,
        _ => return None,
    };
    Some(reply)
}

/// The body of `POST /fuzzy-search/files`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchBody {
    query: Option<String>,
    paths: Option<Vec<String>>,
    limit: Option<i64>,
    files_only: Option<bool>,
    respect_gitignore: Option<bool>,
}

/// A search as asked, checked.
#[derive(Debug, PartialEq)]
struct Search {
    roots: Vec<PathBuf>,
    query: String,
    limit: usize,
    /// Set for a query that is a path: only the directory it names, one level deep.
    max_depth: Option<usize>,
}

impl SearchBody {
    /// The search asked for, or why it cannot be made (upstream's checks and messages).
    fn check(&self) -> Result<Search, Refusal> {
        let query = self.query.clone().unwrap_or_default();
        if query.is_empty() {
            return Err(invalid("query cannot be empty"));
        }
        let paths = self.paths.as_deref().unwrap_or_default();
        if paths.is_empty() {
            return Err(invalid("at least one path required"));
        }
        if paths.len() > MAX_PATHS {
            return Err(invalid(format!("maximum {MAX_PATHS} paths allowed")));
        }
        let limit = match self.limit {
            None => DEFAULT_LIMIT,
            Some(n) => usize::try_from(n)
                .ok()
                .filter(|n| (1..=MAX_LIMIT).contains(n))
                .ok_or_else(|| invalid(format!("limit must be between 1 and {MAX_LIMIT}")))?,
        };
        let search = match split_path_query(&query) {
            Some((dir, pattern)) => Search {
                roots: vec![expand_tilde(dir)],
                query: pattern.to_owned(),
                limit,
                max_depth: Some(1),
            },
            None => Search {
                roots: paths.iter().map(|p| expand_tilde(p)).collect(),
                query,
                limit,
                max_depth: None,
            },
        };
        if let Some(bad) = search
            .roots
            .iter()
            .find(|r| !r.is_absolute() || !r.is_dir())
        {
            return Err(invalid(format!(
                "Invalid search paths: {} is not a directory (an absolute path or ~)",
                bad.display()
            )));
        }
        Ok(search)
    }
}

/// A query that is a path (it starts with `/` or `~`), split into the directory to list and
/// the pattern for its entries: `/a/b` → (`/a`, `b`), `/a/` → (`/a`, ``), `~` → (`~`, ``).
fn split_path_query(query: &str) -> Option<(&str, &str)> {
    if !query.starts_with(['/', '~']) {
        return None;
    }
    Some(match query.rfind('/') {
        None => (query, ""),
        Some(0) => ("/", &query[1..]),
        Some(i) => (&query[..i], &query[i + 1..]),
    })
}

/// `POST /fuzzy-search/files {query, paths, limit?, filesOnly?, respectGitignore?}`: the
/// entries below `paths` (at most 10; what git ignores skipped unless `respectGitignore` is
/// false) that fuzzy-match `query`, best first, at most `limit` (1–1000, 20) →
/// `{results: [{path, displayPath, score, matchedIndexes, isDirectory}], metadata:
/// {totalScanned, totalMatches, durationMs, timedOut}}`. A query that is a path (`/…`, `~/…`)
/// lists that directory's entries matching its last part instead. The walk stops after 5 s
/// (or 500,000 entries) and answers what it found, `timedOut` set.
async fn fuzzy_search(call: &Call<'_>) -> Result<Reply, Refusal> {
    let body: SearchBody = call.json()?;
    let search = body.check()?;
    let started = Instant::now();
    let walk = Walk {
        files_only: body.files_only.unwrap_or(false),
        respect_ignore: body.respect_gitignore.unwrap_or(true),
        max_depth: search.max_depth,
        deadline: started + SEARCH_TIME,
        max: SEARCH_ENTRIES,
    };
    let searched =
        blocking(move || files::search(&search.roots, &search.query, search.limit, &walk)).await?;
    let took = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(json(StatusCode::OK, &search_shape(searched, took)))
}

/// The reply of `fuzzy-search/files` for what was found in `took` ms.
fn search_shape(searched: Searched, took: u64) -> Value {
    let results: Vec<Value> = searched
        .found
        .into_iter()
        .map(|f| {
            json!({
                "path": f.entry.path,
                "displayPath": f.entry.relative,
                "score": f.score,
                "matchedIndexes": f.indices,
                "isDirectory": f.entry.is_dir,
            })
        })
        .collect();
    json!({
        "results": results,
        "metadata": {
            "totalScanned": searched.scanned,
            "totalMatches": searched.matches,
            "durationMs": took,
            "timedOut": searched.cut_short,
        },
    })
}

/// The body of `POST /agents/discover`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoverBody {
    working_dir: Option<String>,
}

/// `POST /agents/discover {workingDir}`: Claude Code's sub-agents of that directory (`~`
/// expanded) and of the user's home → `{agents: [{name, mentionText, source, description}]}`,
/// sorted by name. No `workingDir` → no agents, as upstream answers.
async fn discover_agents(call: &Call<'_>) -> Result<Reply, Refusal> {
    let body: DiscoverBody = call.json()?;
    let Some(dir) = body.working_dir.filter(|d| !d.trim().is_empty()) else {
        return Ok(json(StatusCode::OK, &json!({"agents": []})));
    };
    let dir = expand_tilde(&dir);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let found = blocking(move || agents::discover(&dir, home.as_deref())).await?;
    let agents: Vec<Value> = found
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "mentionText": a.mention(),
                "source": a.source.as_str(),
                "description": a.description,
            })
        })
        .collect();
    Ok(json(StatusCode::OK, &json!({ "agents": agents })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(query: &str, paths: &[&str], limit: Option<i64>) -> SearchBody {
        SearchBody {
            query: Some(query.to_owned()),
            paths: Some(paths.iter().map(|p| (*p).to_owned()).collect()),
            limit,
            files_only: None,
            respect_gitignore: None,
        }
    }

    #[test]
    fn a_query_that_is_a_path_lists_its_directory() {
        assert_eq!(split_path_query("main"), None);
        assert_eq!(split_path_query("/"), Some(("/", "")));
        assert_eq!(split_path_query("/usr"), Some(("/", "usr")));
        assert_eq!(split_path_query("/usr/"), Some(("/usr", "")));
        assert_eq!(split_path_query("/usr/li"), Some(("/usr", "li")));
        assert_eq!(split_path_query("~"), Some(("~", "")));
        assert_eq!(split_path_query("~/Doc"), Some(("~", "Doc")));
    }

    #[test]
    fn searches_are_checked_as_upstream_checks_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        let message = |b: SearchBody| b.check().unwrap_err().message;
        assert_eq!(message(body("", &[root], None)), "query cannot be empty");
        assert_eq!(message(body("a", &[], None)), "at least one path required");
        assert_eq!(
            message(body("a", &[root; 11], None)),
            "maximum 10 paths allowed"
        );
        for limit in [0, 1001, -1] {
            let refused = message(body("a", &[root], Some(limit)));
            assert_eq!(refused, "limit must be between 1 and 1000");
        }
        assert!(message(body("a", &["relative"], None)).starts_with("Invalid search paths"));
        let missing = format!("{root}/missing");
        assert!(message(body("a", &[&missing], None)).contains("missing"));
        let search = body("main", &[root], None).check().unwrap();
        assert_eq!(
            search,
            Search {
                roots: vec![dir.path().to_path_buf()],
                query: "main".into(),
                limit: 20,
                max_depth: None
            }
        );
        let listing = body(&format!("{root}/ma"), &["/elsewhere"], Some(5))
            .check()
            .unwrap();
        assert_eq!((listing.query.as_str(), listing.max_depth), ("ma", Some(1)));
        assert_eq!(listing.roots, [dir.path()]);
    }
}
