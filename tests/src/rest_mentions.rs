//! Strict mirrors of the REST shapes of what CodeLayer's `@` mentions and its launcher's
//! directory picker read (hld-rest.md section 4; upstream's `FileMatch`, `SearchMetadata`,
//! `Agent`): unwrapped, camelCase, unknown fields refused.

use serde::Deserialize;

/// `POST /fuzzy-search/files`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSearch {
    pub results: Vec<FileMatch>,
    pub metadata: SearchMetadata,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FileMatch {
    pub path: String,
    pub display_path: String,
    pub score: u64,
    pub matched_indexes: Vec<usize>,
    pub is_directory: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchMetadata {
    pub total_scanned: u64,
    pub total_matches: u64,
    pub duration_ms: u64,
    pub timed_out: bool,
}

/// `POST /agents/discover`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agents {
    pub agents: Vec<Agent>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Agent {
    pub name: String,
    pub mention_text: String,
    pub source: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// `POST /directories`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MadeDirectory {
    pub path: String,
    pub created: bool,
}

/// `GET /config/status`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigStatus {
    pub openrouter: KeyStatus,
    pub baseten: KeyStatus,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyStatus {
    pub api_key_configured: bool,
}
