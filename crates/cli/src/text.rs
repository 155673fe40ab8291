//! Messages: one line each, and never an unbounded echo of the user's input.

use std::borrow::Cow;

/// Input longer than this many characters is shown as an excerpt.
const EXCERPT_AFTER: usize = 80;

/// How many characters an excerpt keeps.
const EXCERPT_KEEP: usize = 48;

/// No message line is longer than this many characters: a safety net behind [`excerpt`], for
/// input echoed by code that does not know it is echoing input (a parser's message).
const LINE_LIMIT: usize = 1000;

/// `text` itself when short, else its first characters, an ellipsis and its length:
/// `aaaa…` (104857600 bytes).
pub(crate) fn excerpt(text: &str) -> Cow<'_, str> {
    if text.chars().count() <= EXCERPT_AFTER {
        return Cow::Borrowed(text);
    }
    let head: String = text.chars().take(EXCERPT_KEEP).collect();
    Cow::Owned(format!("{head}… ({} bytes)", text.len()))
}

/// `message` on one line: runs of whitespace (newlines included) become one space, and a line
/// longer than [`LINE_LIMIT`] keeps its start and its end around an ellipsis.
pub(crate) fn one_line(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    shorten(line, LINE_LIMIT)
}

/// `text` itself when at most `limit` characters long, else its start and its end around an
/// ellipsis that says how much was left out.
fn shorten(text: String, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text;
    }
    let head: String = text.chars().take(limit * 3 / 4).collect();
    let tail: String = text.chars().skip(count - limit / 5).collect();
    format!(
        "{head} … ({} characters left out) … {tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

/// clap's error as one line: the message with the names it lists (clap puts the missing
/// arguments on the lines after "were not provided:"), without the usage block, and with
/// every quoted value cut to an excerpt.
pub(crate) fn clap_message(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let message = rendered
        .split("\nUsage:")
        .next()
        .unwrap_or(&rendered)
        .trim()
        .trim_start_matches("error:")
        .trim();
    let message = message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join("; ")
        .replace(":;", ":");
    // A value with quotes of its own defeats the excerpts: the length bound still holds.
    shorten(shorten_quoted(&message), CLAP_LIMIT)
}

/// The longest clap message kept whole (its names come first, the flag it concerns last).
const CLAP_LIMIT: usize = 600;

/// Every `'…'` or `` `…` `` segment of `message` cut to an [`excerpt`].
pub(crate) fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * LINE_LIMIT));
    let mut rest = message;
    while let Some(open) = rest.find(['\'', '`']) {
        let quote = &rest[open..=open];
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                out.push_str(&excerpt(&after[..close]));
                out.push_str(quote);
                rest = &after[close + 1..];
            }
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_input_becomes_an_excerpt_with_its_length() {
        assert_eq!(excerpt("short"), "short");
        let long = "x".repeat(100_000);
        let shown = excerpt(&long);
        assert!(shown.starts_with(&"x".repeat(EXCERPT_KEEP)), "{shown}");
        assert!(shown.ends_with("… (100000 bytes)"), "{shown}");
        assert!(shown.chars().count() < 80);
    }

    #[test]
    fn quoted_values_are_shortened_and_lines_bounded() {
        let message = format!("invalid value '{}' for '--lps <LPS>'", "9".repeat(5000));
        let shown = shorten_quoted(&message);
        assert!(shown.contains("'--lps <LPS>'"), "{shown}");
        assert!(shown.contains("(5000 bytes)"), "{shown}");
        let line = one_line(&format!("a\n b {} end", "y ".repeat(10_000)));
        assert!(line.chars().count() <= LINE_LIMIT + 60, "{}", line.len());
        assert!(
            line.starts_with("a b y") && line.ends_with("y end"),
            "{line}"
        );
        // An unmatched quote keeps the text as it is.
        assert_eq!(shorten_quoted("it's fine"), "it's fine");
    }
}
