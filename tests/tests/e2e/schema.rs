//! The JSON Schemas of hlyr's `--json` output, one per kind of thing it prints
//! (`tests/schemas/<kind>.json`, each with the `$id` `urn:hlyr:<kind>` that the others refer
//! to it by), and checking what a command printed against one.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use jsonschema::{Retrieve, Uri, Validator};
use serde_json::Value;

/// Every schema, by kind.
fn schemas() -> &'static HashMap<String, Value> {
    static SCHEMAS: OnceLock<HashMap<String, Value>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| {
                let path = entry.unwrap().path();
                let kind = path.file_stem().unwrap().to_string_lossy().into_owned();
                let text = std::fs::read_to_string(&path).unwrap();
                let schema: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(
                    schema["$id"],
                    format!("urn:hlyr:{kind}"),
                    "{}",
                    path.display()
                );
                (kind, schema)
            })
            .collect()
    })
}

/// Finds `urn:hlyr:<kind>` among the schemas; nothing is fetched from anywhere else.
struct Local;

impl Retrieve for Local {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        uri.as_str()
            .strip_prefix("urn:hlyr:")
            .and_then(|kind| schemas().get(kind))
            .cloned()
            .ok_or_else(|| format!("no schema {uri}").into())
    }
}

/// The validator of `kind`, built once.
fn validator(kind: &str) -> &'static Validator {
    static VALIDATORS: OnceLock<HashMap<String, Validator>> = OnceLock::new();
    let validators = VALIDATORS.get_or_init(|| {
        schemas()
            .iter()
            .map(|(kind, schema)| {
                let validator = jsonschema::options()
                    .with_retriever(Local)
                    .should_validate_formats(true)
                    .build(schema)
                    .unwrap_or_else(|e| panic!("schema {kind}: {e}"));
                (kind.clone(), validator)
            })
            .collect()
    });
    validators
        .get(kind)
        .unwrap_or_else(|| panic!("no schema for {kind} in tests/schemas"))
}

/// The ways `value` breaks schema `kind` (none when it fits).
pub(crate) fn violations(kind: &str, value: &Value) -> Vec<String> {
    validator(kind)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Fails the test unless `value` fits schema `kind`.
#[track_caller]
pub(crate) fn check(kind: &str, value: &Value) {
    let broken = violations(kind, value);
    assert!(
        broken.is_empty(),
        "not a valid {kind}:\n  {}\n{value:#}",
        broken.join("\n  ")
    );
}

/// Every schema builds, and its `$ref`s resolve.
pub(crate) fn kinds() -> Vec<&'static str> {
    let mut kinds: Vec<&str> = schemas().keys().map(String::as_str).collect();
    kinds.sort_unstable();
    for kind in &kinds {
        validator(kind);
    }
    kinds
}
