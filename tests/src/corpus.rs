//! Many sessions with generated, realistic-looking text, written straight into a database in
//! the daemon's own schema: the search e2e test and the search benchmark fill theirs here.
//!
//! Text comes from a fixed word list drawn with Zipf-like frequencies (a few words are in most
//! sessions, most words in few) plus made-up project names (each in a handful of sessions),
//! from a seeded generator: the same seed gives the same database.

use std::path::Path;

use anyhow::Context;
use rusqlite::{params, Connection};

/// Words of coding-agent prompts, most frequent first (drawn with weight `1 / (rank + 1)`).
/// No word starts with `q`, `x` or `z`, nor does any made-up name: tests plant words with those
/// letters and expect no generated session to match them.
#[rustfmt::skip]
pub const WORDS: &[&str] = &[
    "the", "to", "and", "a", "in", "fix", "test", "of", "for", "it", "is", "that", "add", "this",
    "with", "on", "error", "when", "update", "file", "make", "use", "so", "function", "can", "not",
    "should", "api", "from", "new", "code", "tests", "we", "check", "please", "data", "failing",
    "build", "config", "user", "run", "change", "type", "support", "remove", "module", "src",
    "handle", "return", "refactor", "value", "server", "client", "request", "response", "database",
    "sql", "parser", "flaky", "docs", "readme", "migration", "endpoint", "logging", "cache",
    "performance", "memory", "async", "rust", "python", "typescript", "component", "state",
    "session", "approval", "daemon", "socket", "event", "stream", "schema", "index", "table",
    "column", "field", "struct", "trait", "method", "class", "interface", "import", "export",
    "dependency", "version", "release", "branch", "commit", "merge", "review", "pull", "issue",
    "bug", "crash", "panic", "timeout", "retry", "network", "connection", "auth", "token", "login",
    "password", "permission", "security", "input", "output", "format", "json", "yaml", "string",
    "number", "list", "map", "array", "loop", "thread", "lock", "mutex", "channel", "worker",
    "backlog", "job", "task", "script", "command", "flag", "option", "argument", "default", "path",
    "directory", "folder", "files", "upload", "download", "parse", "render", "display", "view",
    "page", "button", "form", "style", "layout", "theme", "color", "font", "icon", "image", "video",
    "audio", "search", "filter", "sort", "order", "group", "count", "total", "sum", "average",
    "metric", "chart", "report", "dashboard", "monitor", "alert", "notify", "email", "message",
    "chat", "reply", "comment", "thread-safe", "benchmark", "profile", "slow", "fast", "faster",
    "optimize", "improve", "clean", "cleanup", "rename", "move", "split", "extract", "inline",
    "delete", "create", "write", "read", "open", "close", "start", "stop", "restart", "deploy",
    "docker", "kubernetes", "terraform", "ci", "pipeline", "workflow", "action", "lint", "clippy",
    "warning", "unused", "dead", "variable", "constant", "enum", "generic", "lifetime", "borrow",
    "clone", "serde", "tokio", "sqlite", "postgres", "redis", "kafka", "grpc", "http", "websocket",
    "tls", "certificate", "proxy", "header", "cookie", "cors", "route", "router", "middleware",
    "handler", "controller", "service", "repository", "model", "migration-script", "seed",
    "fixture", "mock", "stub", "snapshot", "golden", "coverage", "integration", "unit", "e2e",
    "regression", "edge", "case", "empty", "null", "missing", "invalid", "wrong", "broken", "works",
    "local", "remote", "production", "staging", "environment", "variable-name", "secret", "key",
    "hash", "encrypt", "decrypt", "sign", "verify", "upgrade", "downgrade", "pin", "lockfile",
    "cargo", "npm", "pip", "poetry", "gradle", "maven", "webpack", "vite", "react", "vue", "svelte",
    "django", "flask", "rails", "lexer", "tokenizer", "compiler", "interpreter", "ast", "grammar",
    "syntax", "semantic", "scheduler", "cron", "backoff", "jitter", "throttle", "rate", "limit",
    "pagination", "cursor", "offset", "batch", "bulk", "transaction", "rollback", "deadlock",
    "race", "condition", "leak", "allocation", "buffer", "overflow", "underflow", "encoding",
    "utf8", "unicode", "locale", "timezone", "date", "time", "duration", "interval", "calendar",
];

/// Syllables of the made-up project names (three each: 4,096 names).
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "ta", "vo", "se", "bi", "du", "fe", "go", "hi", "ja", "po", "wu",
];

/// The searchable text of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    /// The title given at launch, if one was.
    pub title: Option<String>,
    /// The query (the summary is derived from it, as the daemon does).
    pub query: String,
}

/// A seeded generator of session text (splitmix64: no dependency, stable across versions).
#[derive(Debug, Clone)]
pub struct Generator {
    state: u64,
    /// The rank in [`WORDS`] of each 16-bit draw: Zipf weights, quantised to 1/65536 (the
    /// rarest word has 30 of them). A table, so that a debug build draws fast.
    ranks: Vec<u16>,
}

impl Generator {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Generator {
        let total: f64 = (1..=WORDS.len()).map(|r| 1.0 / r as f64).sum();
        let mut ranks = Vec::with_capacity(1 << 16);
        let mut upto = 0.0;
        for rank in 0..WORDS.len() {
            upto += 1.0 / (rank as f64 + 1.0) / total;
            let end = if rank + 1 == WORDS.len() {
                1 << 16
            } else {
                (upto * 65536.0).round() as usize
            };
            ranks.resize(end.max(ranks.len()), rank as u16);
        }
        Generator { state: seed, ranks }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn word(&mut self) -> &'static str {
        let draw = (self.next() & 0xffff) as usize;
        WORDS[usize::from(self.ranks[draw])]
    }

    /// A made-up project name, e.g. `kalomi`.
    pub fn name(&mut self) -> String {
        (0..3)
            .map(|_| SYLLABLES[self.below(SYLLABLES.len())])
            .collect()
    }

    fn words(&mut self, n: usize, out: &mut String) {
        for i in 0..n {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(self.word());
        }
    }

    /// One session's text: a query line of 6 to 20 words, with a project name or two in half
    /// of them and a second line of 5 to 24 words in a third, and a title of 2 to 6 words in
    /// two of five.
    pub fn text(&mut self) -> Text {
        let mut query = String::with_capacity(256);
        let first = 6 + self.below(15);
        self.words(first, &mut query);
        for _ in 0..[0, 0, 1, 2][self.below(4)] {
            query.push_str(" in ");
            query.push_str(&self.name());
        }
        if self.below(3) == 0 {
            query.push('\n');
            let more = 5 + self.below(20);
            self.words(more, &mut query);
        }
        let title = (self.below(5) < 2).then(|| {
            let mut title = String::new();
            let n = 2 + self.below(5);
            self.words(n, &mut title);
            let mut chars = title.chars();
            match chars.next() {
                Some(c) => c.to_uppercase().chain(chars).collect(),
                None => title,
            }
        });
        Text { title, query }
    }
}

/// The daemon's summary ([`hld::store::summarize`]) of a generated query, which is ASCII
/// words separated by one space or one line break: the break becomes a space and the text is
/// cut at 50 characters. Ten times faster than the general one in a debug build.
fn generated_summary(query: &str) -> String {
    let mut bytes = query.as_bytes().to_vec();
    for b in &mut bytes {
        if *b == b'\n' {
            *b = b' ';
        }
    }
    if bytes.len() > 50 {
        bytes.truncate(47);
        bytes.extend_from_slice(b"...");
    }
    String::from_utf8(bytes).expect("generated text is ASCII")
}

/// The id of generated session `i` (UUID-shaped).
pub fn session_id(i: usize) -> String {
    format!("5e55104e-0000-4000-8000-{i:012}")
}

/// Where the planted sessions go among `count` generated ones: spread evenly, so that their
/// row ids are scattered through the table. Planted session `k` is written right after
/// generated session `planted_at(count, planted, k)` and has id `session_id(count + k)`.
fn planted_at(count: usize, planted: usize, k: usize) -> usize {
    (k + 1) * count / (planted + 1)
}

/// Creates a database at `path` in the daemon's schema (by the daemon's own code, closed
/// cleanly) holding `count` sessions generated from `seed`, with `planted` sessions spread
/// among them, all written in one transaction. Returns the ids of the planted sessions (in
/// order).
///
/// Every tenth generated session is archived; all are completed, created five minutes apart.
pub fn fill(path: &Path, count: usize, seed: u64, planted: &[Text]) -> anyhow::Result<Vec<String>> {
    let store = hld::store::Store::open(path).context("create the schema")?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(store.close())?;
    let mut conn = Connection::open(path)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "cache_size", -262_144)?;
    let start = chrono::DateTime::parse_from_rfc3339("2025-01-01T00:00:00Z")?.to_utc();
    let mut generator = Generator::new(seed);
    let mut planted_ids = Vec::new();
    let tx = conn.transaction()?;
    // The search index is built once at the end ('rebuild', as migration 7 does for the rows
    // it finds) instead of row by row by the insert trigger, which is put back as it was: the
    // same index, three times faster in a debug build.
    let trigger: String = tx.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'sessions_fts_insert'",
        [],
        |r| r.get(0),
    )?;
    tx.execute_batch("DROP TRIGGER sessions_fts_insert")?;
    {
        let mut stmt = tx.prepare(
            "INSERT INTO sessions (id, run_id, claude_session_id, query, summary, title, model,
                working_dir, archived, initial_status, status, created_at, last_activity_at,
                completed_at, cost_usd, num_turns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'starting', 'completed', ?10, ?10, ?10,
                ?11, ?12)",
        )?;
        let mut next_plant = 0;
        let mut written = 0usize;
        let mut write = |i: usize, text: &Text, summary: String, archived: bool| {
            let at = (start + chrono::Duration::minutes(5 * written as i64))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            written += 1;
            stmt.execute(params![
                session_id(i),
                format!("run-{i}"),
                format!("c1a0de00-0000-4000-8000-{i:012}"),
                text.query,
                summary,
                text.title,
                ["opus", "sonnet", "haiku"][i % 3],
                format!("/home/dev/src/project-{}", i % 40),
                archived,
                at,
                (i % 500) as f64 / 100.0,
                1 + (i % 30) as i64,
            ])
        };
        for i in 0..count {
            let text = generator.text();
            write(i, &text, generated_summary(&text.query), i % 10 == 9)?;
            while next_plant < planted.len() && planted_at(count, planted.len(), next_plant) == i {
                let (id, text) = (count + next_plant, &planted[next_plant]);
                write(id, text, hld::store::summarize(&text.query), false)?;
                planted_ids.push(session_id(id));
                next_plant += 1;
            }
        }
        for (k, text) in planted.iter().enumerate().skip(next_plant) {
            write(count + k, text, hld::store::summarize(&text.query), false)?;
            planted_ids.push(session_id(count + k));
        }
    }
    tx.execute_batch("INSERT INTO sessions_fts (sessions_fts) VALUES ('rebuild')")?;
    tx.execute_batch(&trigger)?;
    tx.commit()?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(planted_ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_text() {
        let a: Vec<Text> = {
            let mut g = Generator::new(7);
            (0..50).map(|_| g.text()).collect()
        };
        let mut g = Generator::new(7);
        assert_eq!(a, (0..50).map(|_| g.text()).collect::<Vec<_>>());
        assert_ne!(Generator::new(8).text(), a[0]);
    }

    #[test]
    fn generated_summaries_are_the_daemons() {
        let mut g = Generator::new(3);
        for _ in 0..2000 {
            let query = g.text().query;
            assert_eq!(generated_summary(&query), hld::store::summarize(&query));
        }
    }

    #[test]
    fn every_word_can_be_drawn_the_first_most_often() {
        let g = Generator::new(1);
        assert_eq!(g.ranks.len(), 1 << 16);
        let mut counts = vec![0usize; WORDS.len()];
        for &r in &g.ranks {
            counts[usize::from(r)] += 1;
        }
        assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
        assert!(counts.windows(2).all(|w| w[0] + 1 >= w[1]), "{counts:?}");
    }

    #[test]
    fn no_generated_word_starts_with_q_x_or_z() {
        for w in WORDS {
            assert!(!w.starts_with(['q', 'x', 'z']), "{w}");
        }
        for s in SYLLABLES {
            assert!(!s.starts_with(['q', 'x', 'z']), "{s}");
        }
    }
}
