//! Tables fitted to the terminal: columns aligned on the width a terminal gives their visible
//! text, and, when a table is wider than the terminal, the columns that matter least cut
//! first (each down to a minimum), then whole lines; a row never wraps.

use crate::output::{paint, BOLD};

/// A column giving way when the table is too wide: it is cut down to `min` columns, keeping
/// its start (or its end, for paths, whose last part tells them apart); with `min` 0 it is
/// left out whole. A column may give way in several steps (named again with a lower `min`).
#[derive(Debug, Clone, Copy)]
pub struct Gives {
    pub column: usize,
    pub min: usize,
    pub keep_end: bool,
}

impl Gives {
    /// Column `column`, cut at its end down to `min` columns.
    pub const fn start(column: usize, min: usize) -> Gives {
        Gives {
            column,
            min,
            keep_end: false,
        }
    }

    /// Column `column`, cut at its start down to `min` columns.
    pub const fn end(column: usize, min: usize) -> Gives {
        Gives {
            column,
            min,
            keep_end: true,
        }
    }
}

/// The last column is not cut below this many columns; past that whole lines are cut.
const MIN_LAST_COLUMN: usize = 10;

/// Aligns rows under a bold header, fitted to [`terminal_width`]: the last column is cut with
/// `…` first, then, on a very narrow terminal, every line. Cells may hold styles.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let last = Gives::start(header.len().saturating_sub(1), MIN_LAST_COLUMN);
    fit_table(header, rows, &[last], terminal_width())
}

/// [`table`] whose columns give way in the order of `gives` (the one that matters least
/// first) when it is too wide.
pub fn table_giving(header: &[&str], rows: &[Vec<String>], gives: &[Gives]) -> String {
    fit_table(header, rows, gives, terminal_width())
}

/// The width tables must fit: `COLUMNS` when set, else the terminal's when stdout is one;
/// `None` (no limit) for output to a pipe or file.
pub fn terminal_width() -> Option<usize> {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return Some(columns);
    }
    console::Term::stdout()
        .size_checked()
        .map(|(_, columns)| usize::from(columns))
}

/// [`table_giving`] for a given width.
pub fn fit_table(
    header: &[&str],
    rows: &[Vec<String>],
    gives: &[Gives],
    width: Option<usize>,
) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| visible_width(h)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(visible_width(cell));
        }
    }
    // Two spaces between the columns shown (an empty column is left out, gap and all).
    let gaps = 2 * widths.iter().filter(|w| **w > 0).count().saturating_sub(1);
    if let Some(limit) = width {
        let mut over = (gaps + widths.iter().sum::<usize>()).saturating_sub(limit);
        for give in gives {
            let Some(w) = widths.get_mut(give.column).filter(|w| **w > 0) else {
                continue;
            };
            if over == 0 {
                break;
            }
            if give.min == 0 {
                // Left out, with the gap before the next column.
                over = over.saturating_sub(*w + 2);
                *w = 0;
            } else {
                let taken = over.min(w.saturating_sub(give.min));
                *w -= taken;
                over -= taken;
            }
        }
    }
    let keep_end = |i: usize| gives.iter().any(|g| g.column == i && g.keep_end);
    let line = |cells: Vec<String>| {
        let cells: Vec<(usize, String)> = cells
            .into_iter()
            .enumerate()
            .filter(|(i, _)| widths[*i] > 0)
            .collect();
        let last = cells.len().saturating_sub(1);
        let mut out = String::new();
        for (at, (i, cell)) in cells.into_iter().enumerate() {
            let cell = if keep_end(i) {
                cut_start(&cell, widths[i])
            } else {
                cut(&cell, widths[i])
            };
            if at < last {
                let pad = widths[i] - visible_width(&cell) + 2;
                out.push_str(&cell);
                out.push_str(&" ".repeat(pad));
            } else {
                out.push_str(&cell);
            }
        }
        match width {
            Some(limit) => cut(&out, limit),
            None => out,
        }
    };
    let head = header.iter().map(|h| paint(BOLD, h)).collect();
    std::iter::once(line(head))
        .chain(rows.iter().map(|r| line(r.clone())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The columns a terminal gives `text` once its styles are stripped.
fn visible_width(text: &str) -> usize {
    use unicode_width::UnicodeWidthStr;
    anstream::adapter::strip_str(text).to_string().width()
}

/// `text` cut to `width` columns, its last one a `…`, keeping its styles (and ending them
/// when it was cut inside one); unchanged when it fits.
pub fn cut(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if visible_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    let mut styled = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // A CSI sequence (anstyle writes no other): copied whole, taking no room.
            out.push(c);
            if chars.peek() == Some(&'[') {
                for c in chars.by_ref() {
                    out.push(c);
                    if ('\x40'..='\x7e').contains(&c) && c != '[' {
                        break;
                    }
                }
            }
            styled = true;
            continue;
        }
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    if styled {
        out.push_str("\x1b[0m");
    }
    out
}

/// `text` (unstyled) cut to `width` columns at its start, its first one a `…`; unchanged
/// when it fits.
fn cut_start(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    if visible_width(text) <= width {
        return text.to_owned();
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        kept.push(c);
        used += w;
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::GREEN;

    fn plain(text: &str) -> String {
        anstream::adapter::strip_str(text).to_string()
    }

    #[test]
    fn tables_align_on_visible_width() {
        let rows = vec![
            vec![paint(GREEN, "ok"), "x".to_owned()],
            vec!["longer".to_owned(), "y".to_owned()],
        ];
        let text = fit_table(&["A", "B"], &rows, &[], None);
        assert_eq!(plain(&text), "A       B\nok      x\nlonger  y");
    }

    #[test]
    fn tables_are_cut_to_the_width_never_wrapped() {
        let rows = vec![
            vec!["abc".to_owned(), paint(GREEN, "a long summary here")],
            vec!["d".to_owned(), "日本語のタイトルです".to_owned()],
        ];
        let last = [Gives::start(1, MIN_LAST_COLUMN)];
        let plain = |width| plain(&fit_table(&["ID", "SUMMARY"], &rows, &last, Some(width)));
        // Wide enough: unchanged.
        assert_eq!(
            plain(80),
            "ID   SUMMARY\nabc  a long summary here\nd    日本語のタイトルです"
        );
        // The last column is cut first, counting double-width characters as two columns.
        let cut16 = plain(16);
        assert_eq!(cut16, "ID   SUMMARY\nabc  a long sum…\nd    日本語のタ…");
        for line in cut16.lines() {
            assert!(visible_width(line) <= 16, "{line:?}");
        }
        // Too narrow for even that: whole lines are cut.
        for line in plain(8).lines() {
            assert!(visible_width(line) <= 8, "{line:?}");
            assert!(line.ends_with('…') || line.len() <= 8, "{line:?}");
        }
        // A style cut in the middle is ended.
        let styled = fit_table(&["ID", "SUMMARY"], &rows, &last, Some(16));
        let row = styled.lines().nth(1).unwrap();
        assert!(row.ends_with("…\x1b[0m"), "{row:?}");
    }

    /// Columns give way in the order given, each down to its minimum, a path keeping its
    /// end; the ones not named keep their width.
    #[test]
    fn columns_give_way_least_important_first() {
        let rows = vec![vec![
            "id".to_owned(),
            "claude-opus-4-8[1m]".to_owned(),
            "~/src/project".to_owned(),
            "Fix the login form".to_owned(),
        ]];
        let gives = [
            Gives::start(1, 5),
            Gives::end(2, 8),
            Gives::start(1, 0),
            Gives::start(3, 10),
        ];
        let fit = |width| {
            let text = fit_table(&["ID", "MODEL", "DIR", "TITLE"], &rows, &gives, Some(width));
            plain(&text).lines().nth(1).unwrap().to_owned()
        };
        assert_eq!(
            fit(80),
            "id  claude-opus-4-8[1m]  ~/src/project  Fix the login form"
        );
        // The model goes first, down to its minimum.
        assert_eq!(
            fit(50),
            "id  claude-opu…  ~/src/project  Fix the login form"
        );
        // Then the directory, keeping its end; the title last.
        assert_eq!(fit(40), "id  clau…  …/project  Fix the login form");
        // Then the model is left out, header and all, before the title is cut.
        assert_eq!(fit(38), "id  …project  Fix the login form");
        assert_eq!(fit(30), "id  …project  Fix the login f…");
        let header = fit_table(&["ID", "MODEL", "DIR", "TITLE"], &rows, &gives, Some(30));
        assert_eq!(plain(&header).lines().next(), Some("ID  DIR       TITLE"));
    }

    /// An empty column (`watch`'s context column without contexts) takes no room, not even
    /// its gap: a table that fits exactly is not cut.
    #[test]
    fn an_empty_column_takes_no_room() {
        let rows = vec![vec![
            "id".to_owned(),
            String::new(),
            "Fix the login".to_owned(),
        ]];
        let last = [Gives::start(2, MIN_LAST_COLUMN)];
        let text = fit_table(&["ID", "", "TITLE"], &rows, &last, Some(17));
        assert_eq!(plain(&text), "ID  TITLE\nid  Fix the login");
    }
}
