//! What the state answers and keeps up to date: the rows shown, the open conversation's
//! rendered lines and marks, the flash message.

use super::*;

/// Which sessions the list shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    All,
    Active,
    Waiting,
    Completed,
    Interrupted,
    Failed,
}

impl Filter {
    const ORDER: [Filter; 6] = [
        Filter::All,
        Filter::Active,
        Filter::Waiting,
        Filter::Completed,
        Filter::Interrupted,
        Filter::Failed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Active => "active",
            Filter::Waiting => "waiting",
            Filter::Completed => "completed",
            Filter::Interrupted => "interrupted",
            Filter::Failed => "failed",
        }
    }

    pub(super) fn next(self) -> Filter {
        let i = Filter::ORDER.iter().position(|f| *f == self).unwrap_or(0);
        Filter::ORDER[(i + 1) % Filter::ORDER.len()]
    }

    pub(super) fn admits(self, s: &SessionInfo) -> bool {
        match self {
            Filter::All => true,
            Filter::Active => s.status.is_active(),
            Filter::Waiting => s.status == SessionStatus::WaitingInput,
            Filter::Completed => s.status == SessionStatus::Completed && !s.interrupted,
            Filter::Interrupted => s.interrupted,
            Filter::Failed => s.status == SessionStatus::Failed,
        }
    }
}

/// A one-line message in the key-help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
}

impl State {
    pub fn new(now: DateTime<Utc>, width: u16, height: u16, bell: bool) -> State {
        State {
            now,
            width,
            height,
            link: Link::Connecting,
            context: None,
            here: None,
            sessions: Vec::new(),
            drafts: Vec::new(),
            approvals: Vec::new(),
            marks: HashMap::new(),
            ruled: HashMap::new(),
            screen: Screen::Sessions,
            list: SessionList::default(),
            conversation: None,
            unsent: HashMap::new(),
            approval_selected: 0,
            approval_scroll: 0,
            modal: None,
            flash: None,
            bell,
            frame: 0,
            activity: Default::default(),
            chord: false,
            quit_asked: None,
            stats: HashMap::new(),
            review: None,
            windows: Vec::new(),
            usage: None,
            notified: HashSet::new(),
            fleet: Fleet::default(),
        }
    }

    /// Whether any session is running (the spinner animates only then).
    pub fn animating(&self) -> bool {
        self.sessions.iter().any(|s| s.status.is_active())
    }

    /// The session list's rows, as shown: one per chain leaf that the filter and search
    /// admit, followed by its ancestors when expanded.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let by_id: HashMap<&str, &SessionInfo> =
            self.sessions.iter().map(|s| (s.id.as_str(), s)).collect();
        let parents: HashSet<&str> = self
            .sessions
            .iter()
            .filter_map(|s| s.parent_session_id.as_deref())
            .collect();
        let search = self.list.search.as_deref().map(str::to_lowercase);
        let admits = |s: &SessionInfo| search.as_deref().is_none_or(|q| matches(s, q));
        if self.list.view == ListView::Drafts {
            let row = |session| Row {
                session,
                depth: 0,
                chain: 1,
                expanded: false,
            };
            return self.drafts.iter().filter(|d| admits(d)).map(row).collect();
        }
        let mut rows = Vec::new();
        for leaf in self
            .sessions
            .iter()
            .filter(|s| !parents.contains(s.id.as_str()))
        {
            if leaf.control.archived != (self.list.view == ListView::Archived)
                || !self.list.filter.admits(leaf)
                || !admits(leaf)
            {
                continue;
            }
            let mut ancestors = Vec::new();
            let mut next = leaf.parent_session_id.as_deref();
            while let Some(parent) = next.and_then(|id| by_id.get(id)) {
                // A cycle cannot come from the daemon, but the list must not hang on one.
                if ancestors.len() > self.sessions.len() {
                    break;
                }
                ancestors.push(*parent);
                next = parent.parent_session_id.as_deref();
            }
            let expanded = self.list.expanded.contains(&leaf.id);
            let chain = ancestors.len() + 1;
            rows.push(Row {
                session: leaf,
                depth: 0,
                chain,
                expanded,
            });
            if expanded {
                for (i, session) in ancestors.into_iter().enumerate() {
                    rows.push(Row {
                        session,
                        depth: i + 1,
                        chain,
                        expanded,
                    });
                }
            }
        }
        rows
    }

    /// Pending approvals of `session_id`.
    pub fn pending_of(&self, session_id: &str) -> usize {
        self.approvals
            .iter()
            .filter(|a| a.session_id == session_id)
            .count()
    }

    /// Rows of the conversation body.
    pub fn conversation_height(&self) -> usize {
        let below = self.conversation.as_ref().map_or(0, |c| {
            c.queue_rows() + if c.reply.is_some() { REPLY_ROWS } else { 0 }
        });
        // The line above that says why a failed session stopped (its usage limit, its error).
        let failed = self
            .conversation
            .as_ref()
            .and_then(|c| self.sessions.iter().find(|s| s.id == c.session_id))
            .is_some_and(|s| s.status == SessionStatus::Failed);
        let chrome = CHROME_ROWS + below + u16::from(failed);
        usize::from(self.height.saturating_sub(chrome))
    }

    /// The first line shown of the open conversation.
    pub fn conversation_top(&self) -> usize {
        let Some(c) = &self.conversation else {
            return 0;
        };
        let last_top = c.total_lines().saturating_sub(self.conversation_height());
        if c.follow {
            last_top
        } else {
            c.scroll.min(last_top)
        }
    }

    pub(super) fn selected_session(&self) -> Option<&SessionInfo> {
        match self.screen {
            Screen::Sessions => self.rows().get(self.list.selected).map(|r| r.session),
            Screen::Conversation => {
                let id = &self.conversation.as_ref()?.session_id;
                self.sessions.iter().find(|s| &s.id == id)
            }
            Screen::Approvals => {
                let a = self.approvals.get(self.approval_selected)?;
                self.sessions.iter().find(|s| s.id == a.session_id)
            }
            Screen::Review => {
                let id = &self.review.as_ref()?.session_id;
                self.sessions.iter().find(|s| &s.id == id)
            }
            Screen::Usage => None,
        }
    }

    pub(super) fn mark_for(&self, event: &ConversationEvent) -> Option<Mark> {
        // A result's is its call's: a denial's reason shown there is not shown again.
        if event.event_type == ConversationEventType::ToolResult {
            let call = event.tool_result_for_id.as_deref()?;
            return self.marks.get(call).cloned();
        }
        if event.event_type != ConversationEventType::ToolCall {
            return None;
        }
        let ruled = || {
            event
                .approval_id
                .as_deref()
                .and_then(|id| self.ruled.get(id))
        };
        if let Some(mark) = event
            .tool_id
            .as_deref()
            .and_then(|id| self.marks.get(id))
            .or_else(ruled)
        {
            return Some(mark.clone());
        }
        let status = event.approval_status.as_deref()?;
        let status = serde_json::from_value(serde_json::Value::String(status.to_owned())).ok()?;
        Some(Mark {
            status,
            comment: None,
        })
    }

    pub(super) fn render_block(
        &self,
        event: &ConversationEvent,
        options: Options,
    ) -> Vec<Line<'static>> {
        render::event_lines(event, self.mark_for(event).as_ref(), options, self.width)
    }

    /// Renders the open conversation again (after a resize or a change of options).
    pub(super) fn rerender(&mut self) {
        if let Some(mut c) = self.conversation.take() {
            c.blocks = c
                .events
                .iter()
                .map(|e| self.render_block(e, c.options))
                .collect();
            self.conversation = Some(c);
        }
    }

    /// Renders again the open conversation's tool call that `tool_use_id` names.
    pub(super) fn rerender_tool(&mut self, tool_use_id: &str) {
        self.rerender_where(|e| e.tool_id.as_deref() == Some(tool_use_id));
    }

    /// Renders again the open conversation's events that `hit`.
    pub(super) fn rerender_where(&mut self, hit: impl Fn(&ConversationEvent) -> bool) {
        let Some(mut c) = self.conversation.take() else {
            return;
        };
        for i in 0..c.events.len() {
            if hit(&c.events[i]) {
                c.blocks[i] = self.render_block(&c.events[i], c.options);
            }
        }
        self.conversation = Some(c);
    }

    /// Adds events to the open conversation in id order; one it has already (a tool call
    /// whose approval state changed, a result completed) replaces the one shown.
    pub(super) fn add_events(&mut self, events: Vec<ConversationEvent>) {
        let Some(mut c) = self.conversation.take() else {
            return;
        };
        for event in events {
            let block = self.render_block(&event, c.options);
            match c.events.binary_search_by_key(&event.id, |e| e.id) {
                Ok(i) => {
                    c.events[i] = event;
                    c.blocks[i] = block;
                }
                Err(at) => {
                    c.events.insert(at, event);
                    c.blocks.insert(at, block);
                }
            }
        }
        self.conversation = Some(c);
    }

    pub(super) fn flash(&mut self, text: impl Into<String>, error: bool) {
        self.flash = Some(Flash {
            text: text.into(),
            error,
        });
    }

    pub(super) fn set_mark(
        &mut self,
        approval: &Approval,
        status: ApprovalStatus,
        comment: Option<String>,
    ) {
        if let Some(tool) = approval.tool_use_id.clone() {
            self.marks.insert(tool.clone(), Mark { status, comment });
            self.rerender_tool(&tool);
        }
    }
}

fn matches(s: &SessionInfo, query: &str) -> bool {
    [
        Some(&s.summary),
        Some(&s.query),
        Some(&s.id),
        s.model.as_ref(),
        s.working_dir.as_ref(),
    ]
    .into_iter()
    .flatten()
    .any(|field| field.to_lowercase().contains(query))
}
