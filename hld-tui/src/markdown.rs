//! Markdown as styled lines: headings, lists, block quotes, code blocks and inline styles, for
//! assistant text and plans. The text is cleaned by the caller.

use pulldown_cmark::{CodeBlockKind, Event as Md, HeadingLevel, Parser, Tag, TagEnd};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

const DIM: Style = Style::new().add_modifier(Modifier::DIM);

/// Assistant markdown: headings, lists, block quotes, code blocks and inline styles.
pub fn lines(text: &str) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut styles: Vec<Style> = vec![Style::new()];
    let mut lists: Vec<Option<u64>> = Vec::new();
    let mut in_code = false;
    let mut quote = 0usize;
    let flush = |spans: &mut Vec<Span<'static>>, out: &mut Vec<Line<'static>>| {
        if !spans.is_empty() {
            out.push(Line::from(std::mem::take(spans)));
        }
    };
    let prefix = |quote: usize, lists: &[Option<u64>]| {
        "│ ".repeat(quote) + &"  ".repeat(lists.len().saturating_sub(1))
    };
    for event in Parser::new(text) {
        let style = *styles.last().unwrap_or(&Style::new());
        match event {
            Md::Start(Tag::Heading { level, .. }) => {
                flush(&mut spans, &mut out);
                let hashes = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    _ => "### ",
                };
                let h = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
                spans.push(Span::styled(hashes, h));
                styles.push(h);
            }
            Md::End(TagEnd::Heading(_)) => {
                styles.pop();
                flush(&mut spans, &mut out);
                out.push(Line::default());
            }
            Md::Start(Tag::Emphasis) => styles.push(style.add_modifier(Modifier::ITALIC)),
            Md::Start(Tag::Strong) => styles.push(style.add_modifier(Modifier::BOLD)),
            Md::Start(Tag::Strikethrough) => styles.push(style.add_modifier(Modifier::CROSSED_OUT)),
            Md::Start(Tag::Link { .. }) => {
                styles.push(style.fg(Color::Blue).add_modifier(Modifier::UNDERLINED))
            }
            Md::End(TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Link) => {
                styles.pop();
            }
            Md::Start(Tag::BlockQuote(_)) => {
                flush(&mut spans, &mut out);
                quote += 1;
            }
            Md::End(TagEnd::BlockQuote(_)) => {
                flush(&mut spans, &mut out);
                quote = quote.saturating_sub(1);
            }
            Md::Start(Tag::List(start)) => {
                flush(&mut spans, &mut out);
                lists.push(start);
            }
            Md::End(TagEnd::List(_)) => {
                flush(&mut spans, &mut out);
                lists.pop();
                if lists.is_empty() {
                    out.push(Line::default());
                }
            }
            Md::Start(Tag::Item) => {
                flush(&mut spans, &mut out);
                let bullet = match lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "• ".to_owned(),
                };
                spans.push(Span::raw(prefix(quote, &lists) + &bullet));
            }
            Md::End(TagEnd::Item) => flush(&mut spans, &mut out),
            Md::End(TagEnd::Paragraph) => {
                flush(&mut spans, &mut out);
                // Paragraphs are set apart, except the items of a tight list.
                if lists.is_empty() {
                    out.push(Line::default());
                }
            }
            Md::Start(Tag::Paragraph) if spans.is_empty() && quote > 0 => {
                spans.push(Span::styled(prefix(quote, &lists), DIM));
            }
            Md::Start(Tag::CodeBlock(kind)) => {
                flush(&mut spans, &mut out);
                in_code = true;
                let lang = match kind {
                    CodeBlockKind::Fenced(lang) => lang.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                out.push(Line::styled(format!("┌─ {lang}"), DIM));
            }
            Md::End(TagEnd::CodeBlock) => {
                in_code = false;
                out.push(Line::styled("└─", DIM));
                out.push(Line::default());
            }
            Md::Text(t) if in_code => {
                for l in t.lines() {
                    out.push(Line::from(vec![
                        Span::styled("│ ", DIM),
                        Span::styled(l.to_owned(), Style::new().fg(Color::Yellow)),
                    ]));
                }
            }
            Md::Text(t) => spans.push(Span::styled(t.into_string(), style)),
            Md::Code(t) => spans.push(Span::styled(
                t.into_string(),
                Style::new().fg(Color::Yellow),
            )),
            Md::SoftBreak => spans.push(Span::raw(" ")),
            Md::HardBreak => flush(&mut spans, &mut out),
            Md::Rule => {
                flush(&mut spans, &mut out);
                out.push(Line::styled("────────", DIM));
            }
            Md::Html(t) | Md::InlineHtml(t) => spans.push(Span::styled(t.into_string(), DIM)),
            _ => {}
        }
    }
    flush(&mut spans, &mut out);
    while out.last().is_some_and(|l| l.width() == 0) {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn markdown_renders_headings_lists_and_code() {
        let lines = lines("# Title\n\n- one\n- two\n\n1. first\n\n```rust\nfn main() {}\n```\n");
        assert_eq!(
            text(&lines),
            [
                "# Title",
                "",
                "• one",
                "• two",
                "",
                "1. first",
                "",
                "┌─ rust",
                "│ fn main() {}",
                "└─"
            ]
        );
    }
}
