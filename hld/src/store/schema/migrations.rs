//! The versioned schema migrations, oldest first.

/// One schema step, applied in order in its own transaction. Never edit a released one: append.
pub(super) struct Migration {
    pub(super) version: i64,
    pub(super) description: &'static str,
    pub(super) sql: &'static str,
}

pub(super) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "sessions, conversation events, MCP servers, raw events and approvals",
        sql: r#"
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    claude_session_id TEXT,
    parent_session_id TEXT REFERENCES sessions(id),
    query TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    model TEXT,
    working_dir TEXT,
    max_turns INTEGER,
    system_prompt TEXT,
    append_system_prompt TEXT,
    custom_instructions TEXT,
    permission_prompt_tool TEXT,
    allowed_tools TEXT,
    disallowed_tools TEXT,
    has_mcp_config INTEGER NOT NULL DEFAULT 0,
    no_approvals INTEGER NOT NULL DEFAULT 0,
    initial_status TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('starting', 'running', 'waiting_input', 'completing', 'completed', 'failed')),
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    completed_at TEXT,
    error_message TEXT,
    cost_usd REAL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    duration_ms INTEGER,
    num_turns INTEGER,
    result_content TEXT,
    result_is_error INTEGER,
    interrupted INTEGER NOT NULL DEFAULT 0,
    exit_code INTEGER
);
CREATE INDEX idx_sessions_claude ON sessions(claude_session_id, created_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_status ON sessions(status);
CREATE INDEX idx_sessions_activity ON sessions(last_activity_at, created_at);

CREATE TABLE conversation_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    claude_session_id TEXT NOT NULL DEFAULT '',
    sequence INTEGER NOT NULL,
    event_type TEXT NOT NULL CHECK (event_type IN
        ('message', 'tool_call', 'tool_result', 'system', 'thinking')),
    created_at TEXT NOT NULL,
    role TEXT,
    content TEXT,
    tool_id TEXT,
    tool_name TEXT,
    tool_input_json TEXT,
    tool_result_for_id TEXT,
    tool_result_content TEXT,
    is_completed INTEGER NOT NULL DEFAULT 0,
    is_error INTEGER NOT NULL DEFAULT 0,
    approval_status TEXT,
    approval_id TEXT,
    parent_tool_use_id TEXT,
    UNIQUE (session_id, sequence)
);
CREATE INDEX idx_events_claude ON conversation_events(claude_session_id, sequence);
CREATE INDEX idx_events_tool ON conversation_events(session_id, tool_id);

CREATE TABLE mcp_servers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    name TEXT NOT NULL,
    command TEXT,
    args_json TEXT,
    env_json TEXT,
    extra_json TEXT,
    UNIQUE (session_id, name)
);

CREATE TABLE raw_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    event_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_raw_events_session ON raw_events(session_id, id);

CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    run_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('function_call', 'human_contact')),
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
        ('pending', 'approved', 'denied', 'responded')),
    tool_name TEXT,
    tool_input TEXT,
    tool_use_id TEXT,
    message TEXT,
    subject TEXT,
    comment TEXT,
    requested_at TEXT NOT NULL,
    timeout_at TEXT,
    responded_at TEXT
);
CREATE INDEX idx_approvals_pending ON approvals(requested_at) WHERE status = 'pending';
CREATE INDEX idx_approvals_session ON approvals(session_id, status);
CREATE INDEX idx_approvals_tool_use ON approvals(session_id, tool_use_id);
"#,
    },
    Migration {
        version: 2,
        description: "approvals: source (local or cloud) and the status resolved",
        // SQLite cannot alter a CHECK constraint, so the table is rebuilt.
        sql: r#"
CREATE TABLE approvals_v2 (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    run_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('function_call', 'human_contact')),
    source TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'cloud')),
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
        ('pending', 'approved', 'denied', 'responded', 'resolved')),
    tool_name TEXT,
    tool_input TEXT,
    tool_use_id TEXT,
    message TEXT,
    subject TEXT,
    comment TEXT,
    requested_at TEXT NOT NULL,
    timeout_at TEXT,
    responded_at TEXT
);
INSERT INTO approvals_v2 (id, session_id, run_id, type, source, status, tool_name,
    tool_input, tool_use_id, message, subject, comment, requested_at, timeout_at, responded_at)
SELECT id, session_id, run_id, type, 'local', status, tool_name, tool_input, tool_use_id,
    message, subject, comment, requested_at, timeout_at, responded_at
FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v2 RENAME TO approvals;
CREATE INDEX idx_approvals_pending ON approvals(requested_at) WHERE status = 'pending';
CREATE INDEX idx_approvals_session ON approvals(session_id, status);
CREATE INDEX idx_approvals_tool_use ON approvals(session_id, tool_use_id);
"#,
    },
    Migration {
        version: 3,
        description: "conversation events: a CHECK without an IN list, tool ids indexed only \
            where present",
        // An `IN` CHECK builds a temporary index per inserted row; comparisons do not.
        sql: r#"
CREATE TABLE conversation_events_v3 (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    claude_session_id TEXT NOT NULL DEFAULT '',
    sequence INTEGER NOT NULL,
    event_type TEXT NOT NULL CHECK (event_type = 'message' OR event_type = 'tool_call'
        OR event_type = 'tool_result' OR event_type = 'system' OR event_type = 'thinking'),
    created_at TEXT NOT NULL,
    role TEXT,
    content TEXT,
    tool_id TEXT,
    tool_name TEXT,
    tool_input_json TEXT,
    tool_result_for_id TEXT,
    tool_result_content TEXT,
    is_completed INTEGER NOT NULL DEFAULT 0,
    is_error INTEGER NOT NULL DEFAULT 0,
    approval_status TEXT,
    approval_id TEXT,
    parent_tool_use_id TEXT,
    UNIQUE (session_id, sequence)
);
INSERT INTO conversation_events_v3 SELECT * FROM conversation_events;
DELETE FROM sqlite_sequence WHERE name = 'conversation_events_v3';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'conversation_events_v3', seq FROM sqlite_sequence
    WHERE name = 'conversation_events';
DROP TABLE conversation_events;
ALTER TABLE conversation_events_v3 RENAME TO conversation_events;
CREATE INDEX idx_events_claude ON conversation_events(claude_session_id, sequence);
CREATE INDEX idx_events_tool ON conversation_events(session_id, tool_id)
    WHERE tool_id IS NOT NULL;
"#,
    },
    Migration {
        version: 4,
        description: "approvals: no index on (session_id, status)",
        // Lookups by session use `idx_approvals_tool_use` or `idx_approvals_pending`.
        sql: "DROP INDEX idx_approvals_session;",
    },
    Migration {
        version: 5,
        description: "approvals: a CHECK on status without an IN list",
        // As for conversation events (version 3): the status CHECK as comparisons.
        sql: r#"
CREATE TABLE approvals_v5 (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    run_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('function_call', 'human_contact')),
    source TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'cloud')),
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status = 'pending' OR status = 'approved'
        OR status = 'denied' OR status = 'responded' OR status = 'resolved'),
    tool_name TEXT,
    tool_input TEXT,
    tool_use_id TEXT,
    message TEXT,
    subject TEXT,
    comment TEXT,
    requested_at TEXT NOT NULL,
    timeout_at TEXT,
    responded_at TEXT
);
INSERT INTO approvals_v5 (id, session_id, run_id, type, source, status, tool_name,
    tool_input, tool_use_id, message, subject, comment, requested_at, timeout_at, responded_at)
SELECT id, session_id, run_id, type, source, status, tool_name, tool_input, tool_use_id,
    message, subject, comment, requested_at, timeout_at, responded_at
FROM approvals;
DROP TABLE approvals;
ALTER TABLE approvals_v5 RENAME TO approvals;
CREATE INDEX idx_approvals_pending ON approvals(requested_at) WHERE status = 'pending';
CREATE INDEX idx_approvals_tool_use ON approvals(session_id, tool_use_id);
"#,
    },
    Migration {
        version: 6,
        description: "conversation events: the subtype of system events (api_retry)",
        sql: "ALTER TABLE conversation_events ADD COLUMN subtype TEXT;",
    },
    Migration {
        version: 7,
        description: "sessions: title, archive, approval modes, extra directories, cache and \
            context tokens, full-text search; a deleted parent may leave its children",
        // A deleted session's continuations keep a parent id naming no session: the table is
        // rebuilt without that foreign key. Search: an FTS5 index kept in step by triggers.
        sql: r#"
CREATE TABLE sessions_v7 (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    claude_session_id TEXT,
    parent_session_id TEXT,
    query TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    title TEXT,
    model TEXT,
    working_dir TEXT,
    additional_directories TEXT,
    max_turns INTEGER,
    system_prompt TEXT,
    append_system_prompt TEXT,
    custom_instructions TEXT,
    permission_prompt_tool TEXT,
    allowed_tools TEXT,
    disallowed_tools TEXT,
    has_mcp_config INTEGER NOT NULL DEFAULT 0,
    no_approvals INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    auto_accept_edits INTEGER NOT NULL DEFAULT 0,
    dangerously_skip_permissions INTEGER NOT NULL DEFAULT 0,
    dangerously_skip_permissions_expires_at TEXT,
    initial_status TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('starting', 'running', 'waiting_input', 'completing', 'completed', 'failed')),
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    completed_at TEXT,
    error_message TEXT,
    cost_usd REAL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    cache_creation_input_tokens INTEGER,
    cache_read_input_tokens INTEGER,
    effective_context_tokens INTEGER,
    context_limit INTEGER,
    duration_ms INTEGER,
    num_turns INTEGER,
    result_content TEXT,
    result_is_error INTEGER,
    interrupted INTEGER NOT NULL DEFAULT 0,
    exit_code INTEGER
);
INSERT INTO sessions_v7 (id, run_id, claude_session_id, parent_session_id, query, summary,
    model, working_dir, max_turns, system_prompt, append_system_prompt, custom_instructions,
    permission_prompt_tool, allowed_tools, disallowed_tools, has_mcp_config, no_approvals,
    initial_status, status, created_at, last_activity_at, completed_at, error_message,
    cost_usd, input_tokens, output_tokens, duration_ms, num_turns, result_content,
    result_is_error, interrupted, exit_code)
SELECT id, run_id, claude_session_id, parent_session_id, query, summary,
    model, working_dir, max_turns, system_prompt, append_system_prompt, custom_instructions,
    permission_prompt_tool, allowed_tools, disallowed_tools, has_mcp_config, no_approvals,
    initial_status, status, created_at, last_activity_at, completed_at, error_message,
    cost_usd, input_tokens, output_tokens, duration_ms, num_turns, result_content,
    result_is_error, interrupted, exit_code
FROM sessions;
DROP TABLE sessions;
ALTER TABLE sessions_v7 RENAME TO sessions;
CREATE INDEX idx_sessions_claude ON sessions(claude_session_id, created_at);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX idx_sessions_status ON sessions(status);
CREATE INDEX idx_sessions_activity ON sessions(last_activity_at, created_at);
CREATE INDEX idx_sessions_bypass ON sessions(dangerously_skip_permissions_expires_at)
    WHERE dangerously_skip_permissions_expires_at IS NOT NULL;

ALTER TABLE approvals ADD COLUMN decided_by TEXT;

CREATE VIRTUAL TABLE sessions_fts USING fts5(
    title, query, summary, content = 'sessions', content_rowid = 'rowid'
);
CREATE TRIGGER sessions_fts_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts (rowid, title, query, summary)
        VALUES (new.rowid, new.title, new.query, new.summary);
END;
CREATE TRIGGER sessions_fts_delete AFTER DELETE ON sessions BEGIN
    INSERT INTO sessions_fts (sessions_fts, rowid, title, query, summary)
        VALUES ('delete', old.rowid, old.title, old.query, old.summary);
END;
CREATE TRIGGER sessions_fts_update AFTER UPDATE OF title, query, summary ON sessions BEGIN
    INSERT INTO sessions_fts (sessions_fts, rowid, title, query, summary)
        VALUES ('delete', old.rowid, old.title, old.query, old.summary);
    INSERT INTO sessions_fts (rowid, title, query, summary)
        VALUES (new.rowid, new.title, new.query, new.summary);
END;
INSERT INTO sessions_fts (sessions_fts) VALUES ('rebuild');
"#,
    },
    Migration {
        version: 8,
        description: "live sessions: whether a process is attached and until when it stays \
            warm; the messages sent into sessions",
        sql: r#"
ALTER TABLE sessions ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN live_until TEXT;
CREATE TABLE queued_messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status = 'queued' OR status = 'delivered'
        OR status = 'cancelled' OR status = 'undelivered'),
    created_at TEXT NOT NULL,
    settled_at TEXT,
    error TEXT
);
CREATE INDEX idx_queued_messages_session ON queued_messages(session_id, created_at)
    WHERE status = 'queued';
"#,
    },
    Migration {
        version: 9,
        description: "the permission mode a session runs in; the slash commands and agents its \
            claude reported at initialize, and the skills among them (JSON)",
        sql: r#"
ALTER TABLE sessions ADD COLUMN permission_mode TEXT NOT NULL DEFAULT 'default';
ALTER TABLE sessions ADD COLUMN slash_commands TEXT;
ALTER TABLE sessions ADD COLUMN skills TEXT;
"#,
    },
    Migration {
        version: 10,
        description: "the image files attached to messages",
        sql: r#"
ALTER TABLE queued_messages ADD COLUMN images TEXT;
"#,
    },
    Migration {
        version: 11,
        description: "the git worktrees isolated sessions run in, and the one each session uses",
        sql: r#"
CREATE TABLE worktrees (
    id TEXT PRIMARY KEY,
    repository TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    branch TEXT NOT NULL,
    base_branch TEXT NOT NULL,
    base_commit TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('creating', 'active', 'merged', 'discarded')),
    setup_output TEXT,
    created_at TEXT NOT NULL
);
ALTER TABLE sessions ADD COLUMN worktree_id TEXT;
CREATE INDEX idx_sessions_worktree ON sessions(worktree_id) WHERE worktree_id IS NOT NULL;
"#,
    },
    Migration {
        version: 12,
        description: "what each turn cost, per model; a session stored before counts as one \
            turn of its stored totals",
        sql: r#"
CREATE TABLE usage_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    turn INTEGER NOT NULL,
    ended_at TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cache_creation_input_tokens INTEGER NOT NULL,
    cache_read_input_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL
);
CREATE INDEX idx_usage_turns_ended ON usage_turns(ended_at);
CREATE INDEX idx_usage_turns_session ON usage_turns(session_id, turn);
INSERT INTO usage_turns (session_id, turn, ended_at, model, input_tokens, output_tokens,
    cache_creation_input_tokens, cache_read_input_tokens, cost_usd)
SELECT id, 1, COALESCE(completed_at, last_activity_at), COALESCE(model, ''),
    COALESCE(input_tokens, 0), COALESCE(output_tokens, 0),
    COALESCE(cache_creation_input_tokens, 0), COALESCE(cache_read_input_tokens, 0),
    COALESCE(cost_usd, 0)
FROM sessions WHERE cost_usd IS NOT NULL OR input_tokens IS NOT NULL
    OR output_tokens IS NOT NULL;
"#,
    },
    Migration {
        version: 13,
        description: "usage limits: the one a session stopped on, whether it resumes when the \
            limit resets, and the latest state of each window",
        sql: r#"
ALTER TABLE sessions ADD COLUMN usage_limit_kind TEXT;
ALTER TABLE sessions ADD COLUMN usage_limit_resets_at TEXT;
ALTER TABLE sessions ADD COLUMN resume_on_reset INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_sessions_limit_reset ON sessions(usage_limit_resets_at)
    WHERE usage_limit_resets_at IS NOT NULL;
CREATE TABLE rate_limit_windows (
    kind TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    utilization REAL,
    resets_at TEXT,
    updated_at TEXT NOT NULL,
    session_id TEXT NOT NULL
);
"#,
    },
    Migration {
        version: 14,
        description: "drafts: sessions being composed or set aside, with their editor contents",
        sql: r#"
ALTER TABLE sessions ADD COLUMN draft TEXT CHECK (draft IN ('draft', 'discarded'));
ALTER TABLE sessions ADD COLUMN editor_state TEXT;
CREATE INDEX idx_sessions_draft ON sessions(draft) WHERE draft IS NOT NULL;
"#,
    },
    Migration {
        version: 15,
        description: "user settings: CodeLayer's telemetry choice and advanced providers",
        sql: r#"
CREATE TABLE user_settings (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    advanced_providers INTEGER NOT NULL DEFAULT 0,
    opt_in_telemetry INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"#,
    },
];
