//! The key map, written once: `update` dispatches on the same keys that the help screen and
//! the key-help line list.

/// One entry of the help screen: where it applies, the keys, and what they do.
pub struct Binding {
    pub scope: &'static str,
    pub keys: &'static str,
    pub action: &'static str,
}

const fn bind(scope: &'static str, keys: &'static str, action: &'static str) -> Binding {
    Binding {
        scope,
        keys,
        action,
    }
}

/// The key that jumps to the oldest pending approval from anywhere. Ctrl+J is Enter to a
/// terminal, so CodeLayer's ⌘⇧J becomes Ctrl+G ("go to approval").
pub const JUMP_TO_APPROVAL: char = 'g';

/// Every binding, as the help screen shows them.
pub const BINDINGS: &[Binding] = &[
    bind("Global", "?", "help"),
    bind("Global", "q  Ctrl+C", "quit (q: back first)"),
    bind("Global", "1 2 gs ga", "sessions; approvals"),
    bind("Global", "Ctrl+G", "oldest pending approval"),
    bind("Global", "c", "new session"),
    bind("Global", "Y", "copy id (OSC 52)"),
    bind("Global", "B", "bell on/off"),
    bind("Sessions", "j k gg G", "move; first, last"),
    bind("Sessions", "Enter", "open conversation"),
    bind("Sessions", "Space  →", "show/hide the chain"),
    bind("Sessions", "/", "search (Esc clears)"),
    bind("Sessions", "f", "filter by status"),
    bind("Sessions", "Tab", "archived / others"),
    bind("Sessions", "e  R", "archive; rename"),
    bind("Sessions", "Alt+A", "auto-accept edits"),
    bind("Sessions", "Alt+Y", "bypass (asks how long)"),
    bind("Sessions", "✎  ⚠15m", "auto-accept; bypass, left"),
    bind("Sessions", "p", "open parent"),
    bind("Sessions", "Ctrl+X", "interrupt (asks)"),
    bind("Conversation", "j k ^D ^U", "scroll; half a page"),
    bind("Conversation", "g g  G", "top; bottom + follow"),
    bind("Conversation", "a  d", "approve, deny"),
    bind("Conversation", "r  Enter", "reply (continue)"),
    bind("Conversation", "t  i", "thinking; long output"),
    bind("Conversation", "p  e  R", "parent; archive; rename"),
    bind("Conversation", "Alt+A Alt+Y", "auto-accept; bypass"),
    bind("Conversation", "Ctrl+X", "interrupt (asks)"),
    bind("Conversation", "Esc", "back"),
    bind("Approvals", "j k  ↓ ↑", "move"),
    bind("Approvals", "a  y", "approve"),
    bind("Approvals", "d  n", "deny (comment optional)"),
    bind("Approvals", "r  Enter", "answer; open session"),
    bind("Forms", "Tab  S-Tab", "next, previous field"),
    bind("Forms", "← →  ↑ ↓", "choices; recent dirs"),
    bind("Forms", "Ctrl+S", "submit"),
    bind("Forms", "Esc", "cancel"),
];

/// The key-help line of each screen.
pub fn hints(screen: crate::app::Screen) -> &'static str {
    use crate::app::Screen;
    match screen {
        Screen::Sessions => "j/k move · Enter open · / search · f filter · Tab archived · c new · ^G approval · ? help · q quit",
        Screen::Conversation => "j/k scroll · G follow · a/d decide · r reply · t thinking · i expand · p parent · Esc back · ? help",
        Screen::Approvals => "j/k move · a/y approve · d/n deny · r answer · Enter session · Esc back · ? help",
    }
}
