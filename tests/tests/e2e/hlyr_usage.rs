//! `hlyr usage`: what the sessions of known usage (`cost::known_usage`) cost, as an aligned
//! table with a total row (by day, model or directory) and as `--json`; `--since`.

use hld_client::protocol::{GetUsage, GetUsageParams, UsageGroupBy};

use serde_json::json;

use crate::cost::known_usage;
use crate::hlyr::hlyr;
use crate::schema;

/// The lines of a table without styles, each checked to end where the header ends (the
/// figures are right-aligned, the cost last).
#[track_caller]
fn table(stdout: &str) -> Vec<String> {
    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    let width = lines[0].chars().count();
    for line in &lines {
        assert_eq!(line.chars().count(), width, "{stdout}");
    }
    lines
}

/// A row's cells (split on runs of two or more spaces).
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

#[test]
fn hlyr_usage_prints_a_table_by_day_model_or_directory_and_json() {
    let k = known_usage();
    let d = &k.d;

    let by_day = hlyr(d, &["usage"]);
    by_day.assert_code(0);
    let lines = table(&by_day.stdout);
    assert_eq!(
        cells(&lines[0]),
        [
            "DAY",
            "TURNS",
            "SESSIONS",
            "INPUT",
            "OUTPUT",
            "CACHE WRITE",
            "CACHE READ",
            "COST"
        ]
    );
    let day = d
        .request::<GetUsage>(GetUsageParams::default())
        .rows
        .remove(0)
        .key;
    let all = ["4", "3", "627", "63", "3k", "11k", "$0.0174"];
    assert_eq!(cells(&lines[1])[0], day);
    assert_eq!(cells(&lines[1])[1..], all);
    assert_eq!(cells(&lines[2]), [&["total"][..], &all].concat());
    assert_eq!(lines.len(), 3, "{}", by_day.stdout);

    let by_model = hlyr(d, &["usage", "--by", "model"]);
    by_model.assert_code(0);
    let lines = table(&by_model.stdout);
    let rows: Vec<Vec<&str>> = lines.iter().map(|l| cells(l)).collect();
    assert_eq!(rows[0][0], "MODEL");
    assert_eq!(
        rows[1],
        [k.sonnet, "3", "2", "600", "60", "3k", "11k", "$0.0173"]
    );
    assert_eq!(rows[2], [k.haiku, "1", "1", "20", "2", "0", "0", "$0.0001"]);
    assert_eq!(rows[3], [k.opus, "1", "1", "7", "1", "0", "0", "$0.0000"]);
    assert_eq!(rows[4][0], "total");

    // Directories under the home are written `~`.
    let by_dir = hlyr(d, &["usage", "--by", "dir"]);
    let lines = table(&by_dir.stdout);
    let keys: Vec<&str> = lines.iter().map(|l| cells(l)[0]).collect();
    assert_eq!(keys, ["DIR", "~/shop", "~/blog", "total"]);

    // --json: the daemon's result, as it came.
    let json = hlyr(d, &["usage", "--by", "model", "--json"]);
    json.assert_code(0);
    let printed = json.json_as("usage");
    let result = d.request::<GetUsage>(GetUsageParams {
        since: None,
        group_by: UsageGroupBy::Model,
    });
    assert_eq!(printed, serde_json::to_value(&result).unwrap());

    // --since: a day, a duration back from now.
    let later = hlyr(d, &["usage", "--since", "2099-01-01"]);
    later.assert_code(0);
    assert_eq!(later.stdout.trim(), "no usage since 2099-01-01");
    let hour = hlyr(d, &["usage", "--since", "1h", "--json"]).json_as("usage");
    assert_eq!(hour["total"]["turns"], 4);
    let bad = hlyr(d, &["usage", "--since", "yesterday"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("`yesterday` is not a day"), "{bad:#?}");
}

#[test]
fn the_usage_schema_rejects_a_row_without_its_key() {
    let totals = json!({"input_tokens": 1, "output_tokens": 2, "cache_creation_input_tokens": 3,
        "cache_read_input_tokens": 4, "cost_usd": 0.5, "sessions": 1, "turns": 1});
    let mut row = totals.clone();
    row["key"] = json!("2026-11-29");
    let usage = json!({"group_by": "day", "rows": [row], "total": totals});
    schema::check("usage", &usage);
    let mut keyless = usage.clone();
    keyless["rows"] = json!([totals]);
    assert!(!schema::violations("usage", &keyless).is_empty());
    let mut extra = usage;
    extra["total"]["key"] = json!("all");
    assert!(!schema::violations("usage", &extra).is_empty());
}
