//! Claude Code's sub-agents, as CodeLayer's `@` mentions offer them: the Markdown files of a
//! directory's `.claude/agents/` (local) and of `~/.claude/agents/` (global), each named by its
//! YAML front matter (`name`, `description`). A local agent hides a global one of its name.
//! The front matter is read event by event ([`yaml_rust2::parser`]), never built into a tree,
//! so no nesting in a file can exhaust the stack; a file that is not an agent is skipped.

use std::io::Read;
use std::path::Path;

use yaml_rust2::parser::{Event, Parser};

/// The most of an agent file read: its front matter comes first.
const MAX_READ: u64 = 64 * 1024;
/// The most entries of one agents directory looked at.
const MAX_FILES: usize = 1000;

/// Where an agent is defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The working directory's `.claude/agents/`.
    Local,
    /// The user's `~/.claude/agents/`.
    Global,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Local => "local",
            Source::Global => "global",
        }
    }
}

/// A sub-agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// Lower-case letters and hyphens, as Claude Code names them.
    pub name: String,
    /// Empty when the front matter has none.
    pub description: String,
    pub source: Source,
}

impl Agent {
    /// How a prompt mentions it: `@agent-<name>`, as Claude Code reads it.
    pub fn mention(&self) -> String {
        format!("@agent-{}", self.name)
    }
}

/// The agents of `working_dir` and of `home` (`None`: no home known), sorted by name, a local
/// one hiding a global one of its name. Blocking: it reads the file system.
pub fn discover(working_dir: &Path, home: Option<&Path>) -> Vec<Agent> {
    let local = agents_in(&working_dir.join(".claude/agents"), Source::Local);
    let global = home.map_or_else(Vec::new, |home| {
        agents_in(&home.join(".claude/agents"), Source::Global)
    });
    let mut agents: Vec<Agent> = Vec::new();
    for agent in local.into_iter().chain(global) {
        if !agents.iter().any(|a| a.name == agent.name) {
            agents.push(agent);
        }
    }
    agents.sort_by(|a, b| a.name.cmp(&b.name));
    agents
}

/// The agents defined by the `*.md` files of `dir` (none if it cannot be read).
fn agents_in(dir: &Path, source: Source) -> Vec<Agent> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut agents: Vec<Agent> = Vec::new();
    for entry in entries.take(MAX_FILES).flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "md") || !path.is_file() {
            continue;
        }
        let Some((name, description)) = read_head(&path).as_deref().and_then(front_matter) else {
            tracing::debug!(file = %path.display(), "not a sub-agent: no name in its front matter");
            continue;
        };
        if !agents.iter().any(|a| a.name == name) {
            agents.push(Agent {
                name,
                description,
                source,
            });
        }
    }
    agents
}

/// The first [`MAX_READ`] bytes of `path`, as text.
fn read_head(path: &Path) -> Option<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_READ)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The `name` and `description` of the front matter that opens `text` (between a first line
/// `---` and the next), if it names an agent: a name of lower-case letters and hyphens.
fn front_matter(text: &str) -> Option<(String, String)> {
    let mut lines = text.split_inclusive('\n');
    if lines.next()?.trim_end() != "---" {
        return None;
    }
    let mut yaml = String::new();
    let closed = lines.any(|line| {
        let end = line.trim_end() == "---";
        if !end {
            yaml.push_str(line);
        }
        end
    });
    if !closed {
        return None;
    }
    let fields = top_level_strings(&yaml)?;
    let field = |key: &str| {
        fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let name = field("name").filter(|n| valid_name(n))?;
    Some((name, field("description").unwrap_or_default()))
}

/// Whether `name` is one Claude Code gives an agent: lower-case letters and hyphens.
fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
}

/// The keys of the top-level mapping of the YAML document `yaml` whose values are scalars,
/// with their values; `None` if it is not valid YAML or not a mapping. Reads the parser's
/// events in a loop, counting depth, so nesting costs no stack.
fn top_level_strings(yaml: &str) -> Option<Vec<(String, String)>> {
    let mut parser = Parser::new_from_str(yaml);
    let mut depth = 0usize;
    let mut is_mapping = false;
    // Nodes at depth 1 alternate key, value; `key` holds a scalar key awaiting its value.
    let mut at_key = true;
    let mut key: Option<String> = None;
    let mut fields = Vec::new();
    loop {
        let (event, _) = parser.next_token().ok()?;
        match event {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                if depth == 0 {
                    is_mapping = matches!(event, Event::MappingStart(..));
                } else if depth == 1 {
                    // A collection as key or value: no scalar field here.
                    key = None;
                    at_key = !at_key;
                }
                depth += 1;
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            Event::Scalar(value, ..) if depth == 1 => {
                if at_key {
                    key = Some(value);
                } else if let Some(key) = key.take() {
                    fields.push((key, value));
                }
                at_key = !at_key;
            }
            Event::Alias(_) if depth == 1 => {
                key = None;
                at_key = !at_key;
            }
            _ => {}
        }
    }
    is_mapping.then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn front_matter_names_an_agent_or_nothing() {
        let agent = "---\nname: code-reviewer\ndescription: |\n  Reviews code.\n  Twice.\ntools: Read, Grep\n---\nYou review.\n";
        assert_eq!(
            front_matter(agent),
            Some(("code-reviewer".into(), "Reviews code.\nTwice.\n".into()))
        );
        let crlf = "---\r\nname: \"planner\"\r\n---\r\n";
        assert_eq!(front_matter(crlf), Some(("planner".into(), String::new())));
        for not_one in [
            "no front matter",
            "---\nname: open-ended\n",
            "---\nname: Upper\n---\n",
            "---\nname: [a, b]\n---\n",
            "---\n- name\n- x\n---\n",
            "---\nname: : :\n  bad: [\n---\n",
            "",
        ] {
            assert_eq!(front_matter(not_one), None, "{not_one:?}");
        }
        // Nesting costs no stack: deep is read, too deep (the scanner's limit) refused.
        let deep = |n: usize| {
            format!(
                "---\nname: deep\nx: {}{}\n---\n",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        assert_eq!(
            front_matter(&deep(200)),
            Some(("deep".into(), String::new()))
        );
        assert_eq!(front_matter(&deep(50_000)), None);
        let indented: String = (0..1_000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let block = format!("---\nname: block\nx:\n{indented}---\n");
        assert_eq!(front_matter(&block), Some(("block".into(), String::new())));
        let nested = "---\nmeta:\n  name: inner\nname: outer\n---\n";
        assert_eq!(front_matter(nested), Some(("outer".into(), String::new())));
    }

    #[test]
    fn local_agents_hide_global_ones_of_their_name() {
        let work = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let local = work.path().join(".claude/agents");
        let global = home.path().join(".claude/agents");
        write(
            &local,
            "a.md",
            "---\nname: shared\ndescription: mine\n---\n",
        );
        write(&local, "notes.txt", "---\nname: not-md\n---\n");
        write(
            &global,
            "b.md",
            "---\nname: shared\ndescription: theirs\n---\n",
        );
        write(&global, "c.md", "---\nname: helper\n---\n");
        let found = discover(work.path(), Some(home.path()));
        let shown: Vec<(&str, &str, Source)> = found
            .iter()
            .map(|a| (a.name.as_str(), a.description.as_str(), a.source))
            .collect();
        assert_eq!(
            shown,
            [
                ("helper", "", Source::Global),
                ("shared", "mine", Source::Local)
            ]
        );
        assert_eq!(found[0].mention(), "@agent-helper");
        assert!(discover(&work.path().join("missing"), None).is_empty());
    }
}
