//! Opening connections (pragmas) and the versioned schema migrations.

use std::path::Path;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, TransactionBehavior};

use super::error::{Result, StoreError};

/// How long a connection waits for a lock held by another connection before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Prepared statements the writer keeps: it uses about 30, over rusqlite's default of 16.
const WRITER_STATEMENTS: usize = 64;

mod migrations;

use migrations::MIGRATIONS;

pub(super) fn latest_version() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Opens the writing connection, creating the file, in WAL mode (kept by the file for readers).
pub(super) fn open_writer(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Invalid(format!(
            "could not switch the database to WAL (journal mode is {mode})"
        )));
    }
    configure(&conn)?;
    conn.set_prepared_statement_cache_capacity(WRITER_STATEMENTS);
    Ok(conn)
}

/// Opens a read connection (`query_only`, so a bug cannot write through it).
pub(super) fn open_reader(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(path, OpenFlags::default())?;
    configure(&conn)?;
    conn.pragma_update(None, "query_only", true)?;
    Ok(conn)
}

fn configure(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "foreign_keys", true)?;
    // WAL + NORMAL: a killed hld loses nothing acknowledged; an OS crash may lose the last commits.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Savepoints' journals (one per command of a group commit) are kept in memory, not spilled.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // A plan must not depend on bound values, or SQLite re-prepares cached statements that
    // compare a parameter with a partial index's condition.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

/// Brings the schema up to [`latest_version`], or refuses a newer hld's. Each migration
/// re-reads the version in its own `IMMEDIATE` transaction, so none is applied twice.
pub(super) fn migrate(conn: &mut Connection) -> Result<()> {
    migrate_up_to(conn, latest_version())
}

/// Applies the migrations up to and including `target` (tests build old databases with it).
pub(super) fn migrate_up_to(conn: &mut Connection, target: i64) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (
            version INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL,
            description TEXT NOT NULL
        )",
    )?;
    let supported = latest_version();
    // Migrations drop tables others refer to; each checks foreign keys itself before commit.
    conn.pragma_update(None, "foreign_keys", false)?;
    let result = apply(conn, target, supported);
    conn.pragma_update(None, "foreign_keys", true)?;
    result
}

/// Applies the missing migrations up to `target`, with one info line for all.
fn apply(conn: &mut Connection, target: i64, supported: i64) -> Result<()> {
    // The schema version found and the versions applied since.
    let mut applied: Option<(i64, Vec<i64>)> = None;
    for m in MIGRATIONS.iter().take_while(|m| m.version <= target) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = current_version(&tx)?;
        if current > supported {
            return Err(StoreError::SchemaTooNew {
                found: current,
                supported,
            });
        }
        if current >= m.version {
            continue;
        }
        tx.execute_batch(m.sql)?;
        let violations: i64 =
            tx.query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })?;
        if violations > 0 {
            return Err(StoreError::Invalid(format!(
                "migration {} would leave {violations} broken references",
                m.version
            )));
        }
        tx.execute(
            "INSERT INTO schema_version (version, applied_at, description) VALUES (?1, ?2, ?3)",
            (m.version, crate::time::now(), m.description),
        )?;
        tx.commit()?;
        tracing::debug!(
            version = m.version,
            description = %m.description,
            "applied migration"
        );
        applied
            .get_or_insert_with(|| (current, Vec::new()))
            .1
            .push(m.version);
    }
    if let Some((from, versions)) = applied {
        tracing::info!(
            from,
            to = versions.last().copied().unwrap_or(from),
            count = versions.len(),
            "applied database migrations"
        );
    }
    Ok(())
}

/// The highest version recorded in `schema_version` (0 for a new database).
pub(super) fn current_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )?)
}
