//! The key-help line of each screen, and fitting it to the terminal's width.

/// The key-help line of each screen.
pub fn hints(screen: crate::app::Screen) -> &'static str {
    use crate::app::Screen;
    match screen {
        Screen::Sessions => "j/k move · Enter open · / search · f filter · Tab archived · c new · ^G approval · U usage · ? help · q quit",
        Screen::Conversation => "j/k scroll · G follow · a/d decide · r reply · S-Tab mode · M model · x unqueue · t thinking · i expand · Esc back · ? help",
        Screen::Approvals => "j/k move · a/y approve · d/n deny · r answer · Enter session · Esc back · ? help",
        Screen::Review => "j/k files · Enter hunks · ]/[ next/prev · m merge · X discard · Esc back · ? help",
        Screen::Usage => "cost per day and by model, as the daemon stored them · Esc back · ? help",
    }
}

/// `hints` in `width` columns: whole hints dropped from the end, but never `? help`, which
/// leads to the rest.
pub fn fit_hints(hints: &str, width: usize) -> String {
    if hints.chars().count() <= width {
        return hints.to_owned();
    }
    let mut parts: Vec<&str> = hints.split(" · ").collect();
    let help = parts
        .iter()
        .position(|p| *p == "? help")
        .map(|i| parts.remove(i));
    loop {
        let shown = parts
            .iter()
            .chain(&help)
            .copied()
            .collect::<Vec<_>>()
            .join(" · ");
        if shown.chars().count() <= width || parts.is_empty() {
            return shown;
        }
        parts.pop();
    }
}
