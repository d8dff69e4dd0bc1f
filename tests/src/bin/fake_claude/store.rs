//! Conversations persisted between runs, so `--resume` works: `$FAKE_CLAUDE_HOME/<id>.json`
//! (default `$HOME/.fake-claude`) holding the prompts so far and the working directory.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One stored conversation.
#[derive(Debug, Serialize, Deserialize)]
pub struct Conversation {
    pub session_id: String,
    pub cwd: PathBuf,
    /// Every prompt of the conversation, oldest first.
    pub prompts: Vec<String>,
    /// The conversation this one was forked from (`--fork-session`).
    #[serde(default)]
    pub forked_from: Option<String>,
}

/// The directory of stored conversations.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// `$FAKE_CLAUDE_HOME`, else `$HOME/.fake-claude`, else a directory under the temp dir.
    pub fn from_env() -> Self {
        let dir = std::env::var_os("FAKE_CLAUDE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".fake-claude")))
            .unwrap_or_else(|| std::env::temp_dir().join("fake-claude"));
        Self { dir }
    }

    /// The conversation `id` if it was stored from `cwd`, or from another worktree of the same
    /// git repository (the real CLI keeps sessions per working directory, and falls back to
    /// the repository's other worktrees: its `tengu_resume_worktree_fallback`).
    pub fn load(&self, id: &str, cwd: &Path) -> Option<Conversation> {
        let text = std::fs::read_to_string(self.path(id)).ok()?;
        let conversation: Conversation = serde_json::from_str(&text).ok()?;
        let same_repo = || {
            let common = |dir: &Path| {
                let out = std::process::Command::new("git")
                    .arg("-C")
                    .arg(dir)
                    .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
                    .output()
                    .ok()?;
                out.status.success().then_some(out.stdout)
            };
            common(cwd).is_some_and(|c| Some(c) == common(&conversation.cwd))
        };
        (conversation.cwd == cwd || same_repo()).then_some(conversation)
    }

    /// Whether any conversation `id` exists.
    pub fn exists(&self, id: &str) -> bool {
        self.path(id).exists()
    }

    /// Writes the conversation (atomically, via a rename).
    pub fn save(&self, conversation: &Conversation) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let path = self.path(&conversation.session_id);
        crate::record::write_json_atomically(&path, &serde_json::to_value(conversation)?)
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }
}
