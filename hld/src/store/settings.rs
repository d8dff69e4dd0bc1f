//! How a session's `claude` runs and what it reported about itself: the model and permission
//! mode (plan mode ends when its plan is approved); the slash commands, skills and agents it
//! answered to `initialize` (the skills named by its `init` line, stored with each turn). And
//! the user's settings CodeLayer keeps here (its telemetry choice, advanced providers).

use hld_client::protocol::{PermissionMode, SlashCommand, SlashCommandKind};
use rusqlite::{params, Connection, OptionalExtension};

use super::error::{Result, StoreError};
use super::ops::to_json;
use super::types::Change;
use super::writer::Writer;

impl Writer {
    /// Sets the model and the permission mode a session's `claude` runs with, those given;
    /// each is written alone, so that a plan approved meanwhile is not undone.
    pub(crate) fn set_run_settings(
        &mut self,
        id: &str,
        model: Option<&str>,
        mode: Option<&PermissionMode>,
    ) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE sessions SET model = COALESCE(?2, model),
                    permission_mode = COALESCE(?3, permission_mode)
                 WHERE id = ?1",
            )?
            .execute(params![id, model, mode.map(PermissionMode::as_str)])?;
        Ok(())
    }

    /// `claude` reported the permission mode it runs in: stored, and published if it changed
    /// (Claude may enter plan mode itself, with `EnterPlanMode`).
    pub(super) fn follow_mode(
        &mut self,
        id: &str,
        mode: &PermissionMode,
        out: &mut Vec<Change>,
    ) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET permission_mode = ?2 WHERE id = ?1 AND permission_mode != ?2",
            )?
            .execute(params![id, mode.as_str()])?;
        if changed == 1 {
            self.settings_changed(id, false, out)?;
        }
        Ok(())
    }

    /// A session's plan was approved: it runs in `default` mode from now on (`claude` itself
    /// leaves plan mode when its `ExitPlanMode` is allowed).
    pub(super) fn leave_plan_mode(&mut self, id: &str, out: &mut Vec<Change>) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached(
                "UPDATE sessions SET permission_mode = 'default'
                 WHERE id = ?1 AND permission_mode = 'plan'",
            )?
            .execute([id])?;
        if changed == 1 {
            self.settings_changed(id, false, out)?;
        }
        Ok(())
    }

    /// Stores the commands and agents a session's `claude` answered to `initialize`.
    pub(crate) fn set_slash_commands(&mut self, id: &str, commands: &[SlashCommand]) -> Result<()> {
        let changed = self
            .conn
            .prepare_cached("UPDATE sessions SET slash_commands = ?2 WHERE id = ?1")?
            .execute(params![id, to_json(Some(&commands))?])?;
        if changed == 0 {
            return Err(StoreError::SessionNotFound(id.into()));
        }
        Ok(())
    }
}

/// A session's slash commands, skills and agents: commands and skills by name, then agents by
/// name (empty when its `claude` never answered `initialize`); `None` for an unknown session.
pub(crate) fn slash_commands(
    conn: &rusqlite::Connection,
    id: &str,
) -> Result<Option<Vec<SlashCommand>>> {
    let row: Option<(Option<String>, Option<String>)> = conn
        .prepare_cached("SELECT slash_commands, skills FROM sessions WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((commands, skills)) = row else {
        return Ok(None);
    };
    let mut commands: Vec<SlashCommand> = match commands {
        Some(json) => serde_json::from_str(&json)?,
        None => Vec::new(),
    };
    let skills: Vec<String> = match skills {
        Some(json) => serde_json::from_str(&json)?,
        None => Vec::new(),
    };
    for command in &mut commands {
        if command.kind == SlashCommandKind::Command && skills.contains(&command.name) {
            command.kind = SlashCommandKind::Skill;
        }
    }
    commands.sort_by(|a, b| {
        let agent = |c: &SlashCommand| c.kind == SlashCommandKind::Agent;
        (agent(a), &a.name).cmp(&(agent(b), &b.name))
    });
    Ok(Some(commands))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Modes, SessionOptions};
    use crate::store::{NewSession, SessionUpdate, Store};

    fn command(name: &str, kind: SlashCommandKind) -> SlashCommand {
        SlashCommand {
            name: name.into(),
            description: String::new(),
            argument_hint: None,
            kind,
        }
    }

    #[tokio::test]
    async fn skills_are_told_apart_and_agents_listed_last() {
        let (_dir, store) = Store::open_temp();
        let new = NewSession {
            id: "s1".into(),
            run_id: "r1".into(),
            parent_session_id: None,
            query: "q".into(),
            summary: "q".into(),
            options: SessionOptions::default(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            title: None,
            modes: Modes::default(),
        };
        store
            .write(move |w, _| w.create_session(&new))
            .await
            .unwrap();
        let listed = |store: &Store| {
            let store = store.clone();
            async move { store.read(|c| slash_commands(c, "s1")).await.unwrap() }
        };
        assert_eq!(listed(&store).await, Some(Vec::new()));
        let reported = vec![
            command("review", SlashCommandKind::Command),
            command("Explore", SlashCommandKind::Agent),
            command("debug", SlashCommandKind::Command),
        ];
        store
            .write(move |w, _| w.set_slash_commands("s1", &reported))
            .await
            .unwrap();
        let init = SessionUpdate {
            skills: Some(vec!["debug".into()]),
            ..SessionUpdate::default()
        };
        let ingest = crate::store::Ingest {
            update: Some(init),
            ..Default::default()
        };
        store
            .write(move |w, out| w.ingest("s1", ingest, out))
            .await
            .unwrap();
        assert_eq!(
            listed(&store).await,
            Some(vec![
                command("debug", SlashCommandKind::Skill),
                command("review", SlashCommandKind::Command),
                command("Explore", SlashCommandKind::Agent),
            ])
        );
        assert_eq!(
            store.read(|c| slash_commands(c, "nope")).await.unwrap(),
            None
        );
    }
}

/// The user's settings CodeLayer keeps in the daemon (one row, made at the first change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSettings {
    pub advanced_providers: bool,
    /// `None` until the user chose.
    pub opt_in_telemetry: Option<bool>,
    pub created_at: String,
    pub updated_at: String,
}

/// The user's settings, if any was ever set.
pub(crate) fn user_settings(conn: &Connection) -> Result<Option<UserSettings>> {
    let found = conn
        .prepare_cached(
            "SELECT advanced_providers, opt_in_telemetry, created_at, updated_at
             FROM user_settings WHERE id = 1",
        )?
        .query_row([], |r| {
            Ok(UserSettings {
                advanced_providers: r.get(0)?,
                opt_in_telemetry: r.get(1)?,
                created_at: r.get(2)?,
                updated_at: r.get(3)?,
            })
        })
        .optional()?;
    Ok(found)
}

impl Writer {
    /// Sets the user's settings given (the others kept), and returns them all.
    pub(crate) fn set_user_settings(
        &mut self,
        advanced_providers: Option<bool>,
        opt_in_telemetry: Option<bool>,
    ) -> Result<UserSettings> {
        let now = crate::time::now();
        self.conn
            .prepare_cached(
                "INSERT INTO user_settings (id, advanced_providers, opt_in_telemetry,
                    created_at, updated_at)
                 VALUES (1, COALESCE(?1, 0), ?2, ?3, ?3)
                 ON CONFLICT (id) DO UPDATE SET
                    advanced_providers = COALESCE(?1, advanced_providers),
                    opt_in_telemetry = COALESCE(?2, opt_in_telemetry),
                    updated_at = ?3",
            )?
            .execute(params![advanced_providers, opt_in_telemetry, now])?;
        user_settings(&self.conn)?.ok_or_else(|| StoreError::Invalid("no user settings".into()))
    }
}
