//! The REST routes of CodeLayer's `@` mentions and directory picker over real HTTP, on real
//! directories and a real git repository: `POST /fuzzy-search/files` (what git ignores, files
//! only, several roots, a path typed as the query, the limit and every refusal),
//! `POST /agents/discover` (local agents hiding global ones), `POST /directories` (`mkdir -p`,
//! its failure as upstream answers it) and `GET /config/status`. Each reply is decoded by the
//! strict mirrors of `hld_e2e::rest_mentions`; the search and agents are pinned by golden files.

use std::path::Path;

use hld_e2e::rest::{call, daemon_with};
use hld_e2e::rest_mentions::{Agent, Agents, ConfigStatus, FileSearch, MadeDirectory};
use hld_e2e::DaemonOptions;
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

use super::golden::golden;
use super::worktrees::git;

/// `POST {api}/{path}` with `body` as CodeLayer sends it: its status and JSON body.
async fn post(api: &str, path: &str, body: Value) -> (StatusCode, Value) {
    let request = Client::new()
        .post(format!("{api}/{path}"))
        .header("x-client", "codelayer")
        .json(&body);
    call(request).await
}

/// Writes `text` at `dir/name`, making its directories.
fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A successful search of `body`, strictly decoded.
async fn search(api: &str, body: Value) -> FileSearch {
    let (status, reply) = post(api, "fuzzy-search/files", body).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    serde_json::from_value(reply.clone()).unwrap_or_else(|e| panic!("{e}: {reply}"))
}

/// The display paths of a search's results, in order.
fn shown(found: &FileSearch) -> Vec<&str> {
    found
        .results
        .iter()
        .map(|r| r.display_path.as_str())
        .collect()
}

#[tokio::test]
async fn files_are_fuzzy_found_below_the_directories_asked() {
    let (d, _address, base) = daemon_with(DaemonOptions::fake_claude());
    let api = format!("{base}/api/v1");
    let work = d.dir.join("work");
    for file in [
        "src/main.rs",
        "src/lib.rs",
        "build/main_out.rs",
        "docs/guide.md",
        "README.md",
    ] {
        write(&work, file, "x");
    }
    write(&work, ".gitignore", "build/\n");
    git(&work, &["init", "-q"]);
    let notes = d.dir.join("notes");
    write(&notes, "main_notes.txt", "x");
    let root = work.display().to_string();

    let (status, body) = post(
        &api,
        "fuzzy-search/files",
        json!({"query": "main", "paths": [root]}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The golden file's `matchedIndexes` count the characters of the real path (its private
    // directory is `/tmp/hld-` and six random characters), not of the normalised one.
    let found: FileSearch = golden(&d, "rest/fuzzy_search_files", &body);
    assert_eq!(
        shown(&found),
        ["src/main.rs"],
        "what git ignores and .git are skipped"
    );
    let best = &found.results[0];
    assert_eq!(best.path, work.join("src/main.rs").display().to_string());
    assert!(!best.is_directory && best.score > 0);
    let chars: Vec<char> = best.path.chars().collect();
    let matched: String = best.matched_indexes.iter().map(|&i| chars[i]).collect();
    assert_eq!(matched, "main", "{:?}", best.matched_indexes);
    assert_eq!(found.metadata.total_matches, 1);
    assert!(found.metadata.total_scanned >= 7, "{:?}", found.metadata);
    assert!(!found.metadata.timed_out);

    let everything = search(
        &api,
        json!({"query": "main", "paths": [root, notes], "respectGitignore": false}),
    )
    .await;
    let mut names = shown(&everything);
    names.sort_unstable();
    assert_eq!(
        names,
        ["build/main_out.rs", "main_notes.txt", "src/main.rs"],
        "ignored files when asked, and every root"
    );
    let limited = search(
        &api,
        json!({"query": "main", "paths": [root, notes], "respectGitignore": false, "limit": 1}),
    )
    .await;
    assert_eq!(limited.results.len(), 1);
    assert_eq!(limited.metadata.total_matches, 3);

    let dirs = search(&api, json!({"query": "src", "paths": [root]})).await;
    assert_eq!(shown(&dirs)[0], "src");
    assert!(dirs.results[0].is_directory);
    let files = search(
        &api,
        json!({"query": "src", "paths": [root], "filesOnly": true}),
    )
    .await;
    assert!(!files.results.is_empty());
    assert!(files.results.iter().all(|r| !r.is_directory), "{files:?}");

    // A query that is a path lists that directory, one level deep, whatever `paths` says.
    let typed = search(&api, json!({"query": format!("{root}/sr"), "paths": ["/"]})).await;
    assert_eq!(shown(&typed), ["src"]);
    let home = search(&api, json!({"query": "~/", "paths": [root], "limit": 1000})).await;
    let listed = shown(&home);
    assert!(
        listed.contains(&"work") && listed.contains(&"notes"),
        "{listed:?}"
    );
    assert!(!listed.contains(&"work/src"), "{listed:?}");

    let missing = d.dir.join("missing").display().to_string();
    let eleven: Vec<&str> = vec![root.as_str(); 11];
    for (bad, why) in [
        (
            json!({"query": "", "paths": [root]}),
            "query cannot be empty",
        ),
        (json!({"query": "a"}), "at least one path required"),
        (
            json!({"query": "a", "paths": eleven}),
            "maximum 10 paths allowed",
        ),
        (
            json!({"query": "a", "paths": [root], "limit": 0}),
            "limit must be",
        ),
        (
            json!({"query": "a", "paths": [root], "limit": 1001}),
            "limit must be",
        ),
        (
            json!({"query": "a", "paths": [missing]}),
            "Invalid search paths",
        ),
        (
            json!({"query": "a", "paths": "not a list"}),
            "bad request body",
        ),
    ] {
        let (status, body) = post(&api, "fuzzy-search/files", bad.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "HLD-3001", "{bad}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(why), "{bad}: {message}");
    }
}

#[tokio::test]
async fn sub_agents_are_discovered_and_a_local_one_hides_a_global_one() {
    let (d, _address, base) = daemon_with(DaemonOptions::fake_claude());
    let api = format!("{base}/api/v1");
    let work = d.dir.join("work");
    let agent = |name: &str, description: &str| {
        format!("---\nname: {name}\ndescription: {description}\ntools: Read, Grep\n---\nYou are {name}.\n")
    };
    write(
        &work,
        ".claude/agents/reviewer.md",
        &agent("code-reviewer", "Reviews the diff"),
    );
    write(
        &work,
        ".claude/agents/broken.md",
        "---\nname: [unclosed\n---\n",
    );
    write(
        &work,
        ".claude/agents/README.txt",
        &agent("not-an-agent", "a text file"),
    );
    // The daemon's home is its private directory: `~/.claude/agents` is the global one.
    write(
        &d.dir,
        ".claude/agents/reviewer.md",
        &agent("code-reviewer", "The global one"),
    );
    write(
        &d.dir,
        ".claude/agents/planner.md",
        "---\nname: planner\n---\nPlans.\n",
    );

    let (status, body) = post(&api, "agents/discover", json!({"workingDir": work})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let found: Agents = golden(&d, "rest/agents_discover", &body);
    assert_eq!(
        found.agents,
        [
            Agent {
                name: "code-reviewer".into(),
                mention_text: "@agent-code-reviewer".into(),
                source: "local".into(),
                description: Some("Reviews the diff".into()),
            },
            Agent {
                name: "planner".into(),
                mention_text: "@agent-planner".into(),
                source: "global".into(),
                description: Some(String::new()),
            },
        ]
    );
    let (_, body) = post(&api, "agents/discover", json!({"workingDir": "~/nowhere"})).await;
    let global: Agents = serde_json::from_value(body).unwrap();
    let sources: Vec<&str> = global.agents.iter().map(|a| a.source.as_str()).collect();
    assert_eq!(sources, ["global", "global"]);
    let (status, body) = post(&api, "agents/discover", json!({})).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"agents": []})));
}

#[tokio::test]
async fn directories_are_made_and_config_status_tells_which_keys_are_set() {
    let options = DaemonOptions::fake_claude()
        .env("OPENROUTER_API_KEY", "sk-or-secret")
        .env("BASETEN_API_KEY", "");
    let (d, _address, base) = daemon_with(options);
    let api = format!("{base}/api/v1");

    let deep = d.dir.join("new/deeper");
    let (status, body) = post(&api, "directories", json!({"path": deep})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let made: MadeDirectory = serde_json::from_value(body).unwrap();
    assert_eq!(made.path, deep.display().to_string());
    assert!(made.created && deep.is_dir());
    let (_, body) = post(&api, "directories", json!({"path": deep})).await;
    let again: MadeDirectory = serde_json::from_value(body).unwrap();
    assert!(!again.created, "it was there already");
    let (_, body) = post(&api, "directories", json!({"path": "~/from-home/x"})).await;
    let home: MadeDirectory = serde_json::from_value(body).unwrap();
    assert_eq!(home.path, d.dir.join("from-home/x").display().to_string());
    assert!(d.dir.join("from-home/x").is_dir());

    write(&d.dir, "a-file", "x");
    let (status, body) = post(
        &api,
        "directories",
        json!({"path": d.dir.join("a-file/sub")}),
    )
    .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        body,
        json!({"error": {"code": "CREATE_DIRECTORY_FAILED", "message": ""}})
    );
    let (status, body) = post(&api, "directories", json!({"path": " "})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], "HLD-3001");

    let (status, body) = call(Client::new().get(format!("{api}/config/status"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let keys: ConfigStatus =
        serde_json::from_value(body.clone()).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert!(keys.openrouter.api_key_configured);
    assert!(!keys.baseten.api_key_configured, "an empty key is no key");
    assert!(!body.to_string().contains("sk-or-secret"), "{body}");
}
