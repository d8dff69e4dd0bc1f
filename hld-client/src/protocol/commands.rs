//! What a reply box completes: the slash commands a session's `claude` reported
//! (`listSlashCommands`) and the files an `@` mention can name (`suggestFiles`).

use serde::{Deserialize, Serialize};

use super::SessionIdParams;

open_enum!(
    /// What a completion entry is.
    SlashCommandKind {
        /// A slash command, built in or from `.claude/commands` (`/compact`, `/review`, …).
        Command = "command",
        /// A skill, invoked like a command.
        Skill = "skill",
        /// A subagent, named in a message (`@agent-Explore`) rather than run as a command.
        Agent = "agent",
    }
);

/// One command, skill or agent `claude` reported at `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlashCommand {
    /// The name without the leading `/` (`compact`).
    pub name: String,
    /// What it does, as `claude` describes it.
    #[serde(default)]
    pub description: String,
    /// What it takes after the name (`[issue description]`), when it takes something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// `command`, `skill` or `agent`.
    pub kind: SlashCommandKind,
}

/// Result of `listSlashCommands`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListSlashCommandsResult {
    /// Commands and skills by name, then agents by name.
    pub commands: Vec<SlashCommand>,
}

method!(
    /// The slash commands, skills and agents the session's `claude` reported when it started
    /// (the `initialize` control request), for `/` completion in a reply box.
    ///
    /// The list is stored with the session, so a session whose process is gone still has the
    /// one its last process reported; a session whose process never started has none.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"listSlashCommands","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13"},"id":1}
    /// {"jsonrpc":"2.0","result":{"commands":[{"name":"compact","description":"Clear conversation history but keep a summary in context","kind":"command"},{"name":"debug","description":"Enable debug logging for this session","argument_hint":"[issue description]","kind":"skill"},{"name":"Explore","description":"Fast read-only search agent for locating code","kind":"agent"}]},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session.
    ListSlashCommands, "listSlashCommands", "List the slash commands, skills and agents of a session's claude",
    ["session_id: string"], "{commands: SlashCommand[]}",
    SessionIdParams, ListSlashCommandsResult
);

/// Params of `suggestFiles`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuggestFilesParams {
    /// The session, whose working directory is searched.
    pub session_id: String,
    /// What follows the `@`: a fuzzy match on the path (empty lists files near the top).
    #[serde(default)]
    pub query: String,
    /// At most this many (default 20, at most 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
}

/// One file or directory an `@` mention can name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSuggestion {
    /// The path relative to the session's working directory; a directory ends in `/`.
    pub path: String,
}

/// Result of `suggestFiles`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuggestFilesResult {
    /// Best match first.
    pub files: Vec<FileSuggestion>,
}

method!(
    /// Files of the session's working directory that match what the user typed after `@`.
    ///
    /// A live process answers (the CLI's `file_suggestions`); otherwise the daemon scans the
    /// working directory itself, skipping what `.gitignore` and `.ignore` exclude and `.git`,
    /// and stops after a bounded time, returning what it found.
    ///
    /// ```json
    /// {"jsonrpc":"2.0","method":"suggestFiles","params":{"session_id":"4f7c1a52-9a0e-4d8b-b7a4-2f0c8e6d9b13","query":"main"},"id":1}
    /// {"jsonrpc":"2.0","result":{"files":[{"path":"src/main.rs"},{"path":"hld/src/main.rs"}]},"id":1}
    /// ```
    ///
    /// -32602 for an unknown session, a session without a working directory, or a limit
    /// outside 1–200.
    SuggestFiles, "suggestFiles", "Files of a session's working directory for an @ mention",
    ["session_id: string", "query: string", "limit?: number"], "{files: FileSuggestion[]}",
    SuggestFilesParams, SuggestFilesResult
);
