//! Table columns that share a width by priority, and text cut to fit with an ellipsis: what a
//! list shows when the terminal is narrow, and what it does with the room when it is wide.

use std::sync::OnceLock;

use ratatui::text::Span;
use unicode_truncate::UnicodeTruncateStr;
use unicode_width::UnicodeWidthStr;

/// The columns ratatui's `Table` leaves between two columns.
pub const SPACING: u16 = 1;

/// One column of a table: the columns it needs to be shown at all, the columns its content
/// would take, what it claims of that when the optional columns are placed, and whether it
/// takes what is left once every column has what it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    pub min: u16,
    pub want: u16,
    pub claim: u16,
    pub fill: bool,
}

impl Column {
    /// A column of one width.
    pub const fn fixed(width: u16) -> Column {
        Column {
            min: width,
            want: width,
            claim: width,
            fill: false,
        }
    }

    /// A column that takes what its content takes, `want`, growing to it from `min` (or less,
    /// if the content is narrower).
    pub fn flexible(min: u16, want: usize) -> Column {
        let want = u16::try_from(want).unwrap_or(u16::MAX);
        Column {
            min: min.min(want),
            want,
            claim: want,
            fill: false,
        }
    }

    /// The column that takes what is left (a title, a tool's input): flexible, claiming at
    /// most `FILL_CLAIM`.
    pub fn fill(min: u16, want: usize) -> Column {
        Column {
            fill: true,
            ..Column::flexible(min, want).claiming(FILL_CLAIM)
        }
    }

    /// This column claiming at most `most` of its content (never less than its `min`) when
    /// the optional columns are placed: one long row then does not hide them for every row.
    pub fn claiming(self, most: u16) -> Column {
        Column {
            claim: self.want.min(most.max(self.min)),
            ..self
        }
    }
}

/// The least a `fill` column takes when its `min` does not fit.
const FILL_LEAST: u16 = 6;
/// The most a `fill` column claims when the optional columns are placed.
const FILL_CLAIM: u16 = 40;

/// The widths of `columns` (0: not shown) in `width` columns. `essential` and `optional` list
/// the columns' indices, most important first. An essential column is shown with its `min`
/// while it fits (a `fill` one, the title, with what is left if that is at least
/// `FILL_LEAST`); an optional one only while every column shown has room for its `claim`
/// and its own `min` fits too, so that the columns that tell rows apart are not cut to make
/// room for the others. Then, most important first, each column grows to its `want` (a title
/// that fits whole is not cut for a directory's last components); what is left goes to the
/// first `fill` column.
pub fn fit(columns: &[Column], essential: &[usize], optional: &[usize], width: u16) -> Vec<u16> {
    let mut widths = vec![0; columns.len()];
    let mut shown: Vec<usize> = Vec::new();
    // The columns taken by those shown: at their `min`, and at their `claim`.
    let (mut least, mut claimed) = (0u16, 0u16);
    for (i, is_essential) in essential
        .iter()
        .map(|&i| (i, true))
        .chain(optional.iter().map(|&i| (i, false)))
    {
        let gap = if shown.is_empty() { 0 } else { SPACING };
        let before = if is_essential { least } else { claimed };
        let room = width.saturating_sub(before.saturating_add(gap));
        let min = match columns[i].min > room {
            true if is_essential && columns[i].fill && room >= FILL_LEAST => room,
            true => break,
            false => columns[i].min,
        };
        least += gap + min;
        claimed = claimed.saturating_add(gap + columns[i].claim);
        widths[i] = min;
        shown.push(i);
    }
    let mut left = width - least;
    for &i in &shown {
        let grow = columns[i].want.saturating_sub(widths[i]).min(left);
        widths[i] += grow;
        left -= grow;
    }
    if let Some(&i) = shown.iter().find(|&&i| columns[i].fill) {
        widths[i] += left;
    }
    widths
}

/// `text` in at most `width` columns: cut at the end with `…` when it is longer.
pub fn ellipsize(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let (kept, _) = text.unicode_truncate(width.saturating_sub(1));
    if width == 0 {
        String::new()
    } else {
        format!("{kept}…")
    }
}

/// `spans` in at most `width` columns: those that fit whole, then the next one cut with `…`
/// and a space (for what follows them).
pub fn ellipsize_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let mut left = width;
    let mut kept = Vec::new();
    for span in spans {
        if span.width() <= left {
            left -= span.width();
            kept.push(span);
            continue;
        }
        if left >= 2 {
            let cut = ellipsize(span.content.trim_end(), left - 1);
            kept.push(Span::styled(format!("{cut} "), span.style));
        }
        break;
    }
    kept
}

/// A working directory in at most `width` columns: `~` for `home`, then its last components
/// behind `…/`, the last one cut with `…` if even it is too long.
pub fn short_dir(dir: &str, home: Option<&str>, width: usize) -> String {
    let dir = match home.filter(|h| h.len() > 1) {
        Some(home) if dir == home => "~".to_owned(),
        Some(home) => match dir.strip_prefix(home).filter(|rest| rest.starts_with('/')) {
            Some(rest) => format!("~{rest}"),
            None => dir.to_owned(),
        },
        None => dir.to_owned(),
    };
    if dir.width() <= width {
        return dir;
    }
    let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    let mut tail = String::new();
    for part in parts.iter().rev() {
        let longer = if tail.is_empty() {
            part.to_string()
        } else {
            format!("{part}/{tail}")
        };
        if longer.width() + 2 > width && !tail.is_empty() {
            break;
        }
        tail = longer;
    }
    match format!("…/{tail}") {
        shown if shown.width() <= width => shown,
        // Only the last component is left: it alone, cut if it must be.
        _ => ellipsize(&tail, width),
    }
}

/// The user's home directory, as `HOME` names it.
pub fn home() -> Option<&'static str> {
    static HOME: OnceLock<Option<String>> = OnceLock::new();
    HOME.get_or_init(|| std::env::var("HOME").ok()).as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_that_do_not_fit_are_cut_with_an_ellipsis_and_a_space() {
        let spans = || vec![Span::raw("⏵⏵ "), Span::raw("⎇ feature/a-long-branch ")];
        let texts = |spans: Vec<Span>| {
            spans
                .iter()
                .map(|s| s.content.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            texts(ellipsize_spans(spans(), 40)),
            ["⏵⏵ ", "⎇ feature/a-long-branch "]
        );
        assert_eq!(texts(ellipsize_spans(spans(), 13)), ["⏵⏵ ", "⎇ featur… "]);
        assert_eq!(texts(ellipsize_spans(spans(), 4)), ["⏵⏵ "]);
        assert_eq!(texts(ellipsize_spans(spans(), 2)), ["… "]);
        assert!(ellipsize_spans(spans(), 1).is_empty());
    }

    #[test]
    fn important_columns_are_shown_first_and_grow_first() {
        let title = Column::fill(20, 40);
        // Status, title, directory (essential); model, cost (optional).
        let columns = [
            Column::fixed(13),
            title,
            Column::flexible(10, 30),
            Column::flexible(8, 20),
            Column::fixed(6),
        ];
        let fit = |width| fit(&columns, &[0, 1, 2], &[3, 4], width);
        // Too narrow for the title's least: the first alone; then the title takes what is
        // left, short of its `min`.
        assert_eq!(fit(19), [13, 0, 0, 0, 0]);
        assert_eq!(fit(20), [13, 6, 0, 0, 0]);
        assert_eq!(fit(30), [13, 16, 0, 0, 0]);
        // A column never takes more than its content.
        let narrow = [Column::fixed(13), Column::flexible(16, 9)];
        assert_eq!(super::fit(&narrow, &[0, 1], &[], 40), [13, 9]);
        // Narrow: the essential ones, the title growing first.
        assert_eq!(fit(50), [13, 25, 10, 0, 0]);
        // No optional column while the title and directory lack room for their content.
        assert_eq!(fit(90), [13, 45, 30, 0, 0]);
        // Then the model, but no cost while the model lacks room for its content.
        assert_eq!(fit(100), [13, 40, 30, 14, 0]);
        // Wide: all at their content; the title takes the rest.
        assert_eq!(fit(130), [13, 57, 30, 20, 6]);
    }

    #[test]
    fn a_long_column_counts_only_its_claim_when_the_optional_ones_are_placed() {
        // Title (claiming 40 of 60), directory (claiming 20 of 40); cost (optional).
        let columns = [
            Column::fill(20, 60),
            Column::flexible(16, 40).claiming(20),
            Column::fixed(6),
        ];
        let fit = |width| fit(&columns, &[0, 1], &[2], width);
        assert_eq!(fit(67), [50, 16, 0]);
        // Room for what both claim and for the cost: the cost is shown; the title grows first.
        assert_eq!(fit(68), [44, 16, 6]);
        assert_eq!(fit(110), [62, 40, 6]);
        // A claim is never below the least a column takes.
        assert_eq!(Column::flexible(16, 40).claiming(8).claim, 16);
    }

    #[test]
    fn text_is_cut_with_an_ellipsis() {
        assert_eq!(ellipsize("opus-4-8[1m]", 10), "opus-4-8[…");
        assert_eq!(ellipsize("opus-4-8", 10), "opus-4-8");
        assert_eq!(ellipsize("日本語のモデル", 7), "日本語…");
        assert_eq!(ellipsize("abc", 0), "");
    }

    #[test]
    fn directories_keep_home_as_tilde_and_their_last_components() {
        let home = Some("/home/me");
        assert_eq!(short_dir("/home/me/src/hld", home, 40), "~/src/hld");
        assert_eq!(short_dir("/home/me", home, 40), "~");
        assert_eq!(short_dir("/home/meg/x", home, 40), "/home/meg/x");
        assert_eq!(short_dir("/srv/work/a/b/repo", home, 12), "…/a/b/repo");
        assert_eq!(short_dir("/srv/work/a/b/repo", home, 8), "…/b/repo");
        assert_eq!(
            short_dir("/srv/work/alpha-service", home, 13),
            "alpha-service"
        );
        assert_eq!(
            short_dir("/srv/a-very-long-repository-name", home, 10),
            "a-very-lo…"
        );
        assert_eq!(short_dir("/srv/work", None, 40), "/srv/work");
    }
}
