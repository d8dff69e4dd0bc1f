//! Completion in the reply box: `/` at the start of the text completes the session's slash
//! commands (`listSlashCommands`, loaded when the box opens) and `@` completes files
//! (`suggestFiles`, asked again as the text after `@` changes; an answer for any other text is
//! dropped). The list shows while the cursor is in such a token; Tab or Enter takes the chosen
//! entry, Esc closes the list until the cursor leaves the token.

use hld_client::protocol::SlashCommandKind;

use super::*;

/// What a token completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// `/name`: a slash command or skill.
    Command,
    /// `@path`: a file or directory of the session's working directory.
    File,
}

impl Trigger {
    /// The character that starts the token.
    pub fn sigil(self) -> char {
        match self {
            Trigger::Command => '/',
            Trigger::File => '@',
        }
    }
}

/// One entry of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// What follows the sigil once taken (`compact`, `src/main.rs`).
    pub text: String,
    /// A command's description and argument hint; empty for a file.
    pub detail: String,
}

/// The list shown for the token at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub trigger: Trigger,
    /// The row and column (in characters) of the token's sigil.
    pub at: (usize, usize),
    /// What follows the sigil, up to the cursor.
    pub query: String,
    pub choices: Vec<Choice>,
    pub selected: usize,
    /// A `suggestFiles` for `query` is on its way (the choices are the previous query's).
    pub loading: bool,
}

/// The reply box's completion state.
#[derive(Debug, Default)]
pub struct Completer {
    /// The session's commands and skills; `None` until `listSlashCommands` answers.
    pub commands: Option<Vec<SlashCommand>>,
    /// The list, while the cursor is in a token.
    pub open: Option<Completion>,
    /// The token whose list Esc closed (its sigil's row and column).
    dismissed: Option<(usize, usize)>,
}

/// The token at `cursor` (row, column in characters) of `lines`: `/…` that starts the text,
/// or `@…` at a line's start or after a space. Its trigger, the column of its sigil, and
/// what follows the sigil up to the cursor.
fn token(lines: &[String], cursor: (usize, usize)) -> Option<(Trigger, usize, String)> {
    let (row, col) = cursor;
    let before: Vec<char> = lines.get(row)?.chars().take(col).collect();
    let start = before
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |i| i + 1);
    let word: String = before[start..].iter().collect();
    let mut chars = word.chars();
    let trigger = match chars.next()? {
        '@' => Trigger::File,
        '/' if row == 0 && start == 0 => Trigger::Command,
        _ => return None,
    };
    Some((trigger, start, chars.collect()))
}

/// The commands and skills whose names start with `query`, then those that contain it, each
/// group in the order listed. Agents are not commands: a message names them.
fn matching(commands: &[SlashCommand], query: &str) -> Vec<Choice> {
    let query = query.to_lowercase();
    let usable = || {
        commands
            .iter()
            .filter(|c| c.kind != SlashCommandKind::Agent)
    };
    let starts = usable().filter(|c| c.name.to_lowercase().starts_with(&query));
    let contains = usable().filter(|c| {
        let name = c.name.to_lowercase();
        !name.starts_with(&query) && name.contains(&query)
    });
    starts
        .chain(contains)
        .map(|c| Choice {
            text: c.name.clone(),
            // The description first: a narrow list cuts the hint.
            detail: match c.argument_hint.as_deref().filter(|h| !h.trim().is_empty()) {
                Some(hint) => format!("{}  {hint}", render::first_line(&c.description)),
                None => render::first_line(&c.description),
            },
        })
        .collect()
}

/// Opens, updates or closes the list for the token now at the reply box's cursor; asks the
/// daemon for files when an `@` token's text changed.
pub(super) fn refresh(state: &mut State) -> Vec<Command> {
    let Some(c) = state.conversation.as_mut() else {
        return Vec::new();
    };
    let complete = &mut c.complete;
    let Some(reply) = &c.reply else {
        complete.open = None;
        complete.dismissed = None;
        return Vec::new();
    };
    let (row, _) = reply.cursor();
    let Some((trigger, col, query)) = token(reply.lines(), reply.cursor()) else {
        complete.open = None;
        complete.dismissed = None;
        return Vec::new();
    };
    let at = (row, col);
    if complete.dismissed == Some(at) {
        return Vec::new();
    }
    complete.dismissed = None;
    if let Some(open) = &complete.open {
        if open.trigger == trigger && open.at == at && open.query == query {
            return Vec::new();
        }
    }
    match trigger {
        Trigger::Command => {
            let choices = matching(complete.commands.as_deref().unwrap_or_default(), &query);
            complete.open = Some(Completion {
                trigger,
                at,
                query,
                choices,
                selected: 0,
                loading: false,
            });
            Vec::new()
        }
        Trigger::File => {
            // The previous answer stays shown until this one arrives.
            let shown = complete
                .open
                .take()
                .filter(|o| o.trigger == Trigger::File)
                .map(|o| o.choices)
                .unwrap_or_default();
            complete.open = Some(Completion {
                trigger,
                at,
                query: query.clone(),
                choices: shown,
                selected: 0,
                loading: true,
            });
            vec![Command::SuggestFiles {
                session_id: c.session_id.clone(),
                query,
            }]
        }
    }
}

/// `listSlashCommands` answered for `session_id`.
pub(super) fn commands(state: &mut State, session_id: &str, commands: Vec<SlashCommand>) {
    let Some(c) = state
        .conversation
        .as_mut()
        .filter(|c| c.session_id == session_id)
    else {
        return;
    };
    if let Some(open) = c
        .complete
        .open
        .as_mut()
        .filter(|o| o.trigger == Trigger::Command)
    {
        open.choices = matching(&commands, &open.query);
        open.selected = 0;
    }
    c.complete.commands = Some(commands);
}

/// `suggestFiles` answered `files` for `query` of `session_id`: shown if the list still
/// completes that text.
pub(super) fn files(state: &mut State, session_id: &str, query: &str, files: Vec<String>) {
    let open = state
        .conversation
        .as_mut()
        .filter(|c| c.session_id == session_id)
        .and_then(|c| c.complete.open.as_mut())
        .filter(|o| o.trigger == Trigger::File && o.query == query);
    if let Some(open) = open {
        open.choices = files
            .into_iter()
            .map(|text| Choice {
                text,
                detail: String::new(),
            })
            .collect();
        open.selected = 0;
        open.loading = false;
    }
}

/// Whether the list is open with entries to choose from.
pub(super) fn choosing(c: &Conversation) -> bool {
    c.complete
        .open
        .as_ref()
        .is_some_and(|o| !o.choices.is_empty())
}

/// Moves the chosen entry down or up, round the list.
pub(super) fn step(c: &mut Conversation, down: bool) {
    if let Some(open) = c.complete.open.as_mut().filter(|o| !o.choices.is_empty()) {
        let n = open.choices.len();
        open.selected = if down {
            (open.selected + 1) % n
        } else {
            (open.selected + n - 1) % n
        };
    }
}

/// Closes the list until the cursor leaves its token.
pub(super) fn dismiss(c: &mut Conversation) {
    if let Some(open) = c.complete.open.take() {
        c.complete.dismissed = Some(open.at);
    }
}

/// Replaces the token with the chosen entry: `/name ` or `@path ` (a directory without the
/// space, so that its files are listed next). False when the token is that entry already.
pub(super) fn accept(c: &mut Conversation) -> bool {
    let (Some(open), Some(reply)) = (&c.complete.open, c.reply.as_mut()) else {
        return false;
    };
    let Some(choice) = open.choices.get(open.selected) else {
        return false;
    };
    let sigil = open.trigger.sigil();
    let end = if open.trigger == Trigger::File && choice.text.ends_with('/') {
        ""
    } else {
        " "
    };
    if choice.text == open.query {
        return false;
    }
    let (_, col) = reply.cursor();
    for _ in open.at.1..col {
        reply.delete_char();
    }
    reply.insert_str(format!("{sigil}{}{end}", choice.text));
    c.complete.open = None;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Option<(Trigger, usize, String)> {
        let lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
        let row = lines.len() - 1;
        let col = lines[row].chars().count();
        token(&lines, (row, col))
    }

    #[test]
    fn a_token_is_a_slash_at_the_start_or_an_at_after_a_space() {
        assert_eq!(at("/com"), Some((Trigger::Command, 0, "com".into())));
        assert_eq!(at("/"), Some((Trigger::Command, 0, String::new())));
        assert_eq!(at("/compact now"), None);
        assert_eq!(at("see /usr"), None);
        assert_eq!(at("one\n/two"), None);
        assert_eq!(
            at("look at @src/ma"),
            Some((Trigger::File, 8, "src/ma".into()))
        );
        assert_eq!(at("fix\n@é"), Some((Trigger::File, 0, "é".into())));
        assert_eq!(at("mail me@example"), None);
        assert_eq!(at("@src/main.rs "), None);
    }

    #[test]
    fn commands_that_start_with_the_text_come_first_and_agents_are_left_out() {
        let command = |name: &str, kind| SlashCommand {
            name: name.into(),
            description: format!("{name} it"),
            argument_hint: None,
            kind,
        };
        let commands = [
            command("review", SlashCommandKind::Command),
            command("compact", SlashCommandKind::Command),
            command("security-review", SlashCommandKind::Skill),
            command("reviewer", SlashCommandKind::Agent),
        ];
        let names: Vec<String> = matching(&commands, "REV")
            .into_iter()
            .map(|c| c.text)
            .collect();
        assert_eq!(names, ["review", "security-review"]);
        assert_eq!(matching(&commands, "").len(), 3);
    }
}
