//! Where in a TOML text a mistake is, as the file, line and column a user can jump to.

use std::fmt;
use std::ops::Range;

/// One located mistake in a text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The file as the user named it (or a `dataset@version` ref).
    pub file: String,
    /// 1-based line; 0 when the mistake has no place in the text (a missing key).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    pub message: String,
    /// The offending line of text, for the caret display: at most [`EXCERPT`] characters
    /// around the column, `…` marking what is cut (a value may be megabytes long).
    pub source_line: String,
    /// Where the caret starts in `source_line` (0-based, in characters).
    pub caret: usize,
    /// How many characters to underline.
    pub width: usize,
}

/// The most characters of an offending line, or of a message, that an error quotes.
pub const EXCERPT: usize = 80;

/// At most `EXCERPT` characters of `line` around the 0-based character `at`, with where `at`
/// lands in the excerpt.
fn excerpt(line: &str, at: usize) -> (String, usize) {
    let chars = line.chars().count();
    if chars <= EXCERPT {
        return (line.to_string(), at);
    }
    let start = at.saturating_sub(EXCERPT / 4).min(chars - EXCERPT);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(line.chars().skip(start).take(EXCERPT));
    if start + EXCERPT < chars {
        out.push('…');
    }
    (out, at - start + usize::from(start > 0))
}

/// A message cut to a few hundred characters: parsers quote the offending value whole.
pub fn short(message: &str) -> String {
    const MAX: usize = 4 * EXCERPT;
    let chars = message.chars().count();
    if chars <= MAX {
        return message.to_string();
    }
    let head: String = message.chars().take(MAX - EXCERPT / 2).collect();
    let tail: String = message.chars().skip(chars - EXCERPT / 2).collect();
    format!("{head}… ({} characters cut) …{tail}", chars - MAX)
}

impl Located {
    /// Locate `span` (byte offsets) in `text`. Its line is counted from the top: for the
    /// places of many entries of one file, a [`Locator`] counts the lines once.
    pub fn at(file: &str, text: &str, span: Option<Range<usize>>, message: String) -> Located {
        Located::with_line(file, text, span, message, |start| {
            memchr::memchr_iter(b'\n', &text.as_bytes()[..start]).count() + 1
        })
    }

    /// [`Located::at`], the line of a byte offset told by `line_of`.
    fn with_line(
        file: &str,
        text: &str,
        span: Option<Range<usize>>,
        message: String,
        line_of: impl FnOnce(usize) -> usize,
    ) -> Located {
        let Some(span) = span else {
            return Located {
                file: file.to_string(),
                line: 0,
                column: 0,
                message: short(&message),
                source_line: String::new(),
                caret: 0,
                width: 0,
            };
        };
        let start = floor_char_boundary(text, span.start.min(text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = line_of(start);
        let column = text[line_start..start].chars().count() + 1;
        let end = floor_char_boundary(text, span.end.clamp(start, line_end));
        let (source_line, caret) = excerpt(
            text[line_start..line_end].trim_end_matches('\r'),
            column - 1,
        );
        let width = text[start..end]
            .chars()
            .count()
            .clamp(1, source_line.chars().count().saturating_sub(caret).max(1));
        Located {
            file: file.to_string(),
            line,
            column,
            message: short(&message),
            source_line,
            caret,
            width,
        }
    }
}

/// Locates spans of one text, its line starts found once: `consumers.toml` keeps the place
/// of every identity and every `uses` entry, and counting the lines from the top for each
/// made reading a registry grow with the square of its size.
pub struct Locator<'t> {
    file: &'t str,
    text: &'t str,
    /// The byte offset of each line's start, the first line's (0) first.
    starts: Vec<usize>,
}

impl<'t> Locator<'t> {
    pub fn new(file: &'t str, text: &'t str) -> Locator<'t> {
        let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1);
        Locator {
            file,
            text,
            starts: std::iter::once(0).chain(newlines).collect(),
        }
    }

    /// [`Located::at`] of `span` in the text.
    pub fn at(&self, span: Range<usize>, message: String) -> Located {
        Located::with_line(self.file, self.text, Some(span), message, |start| {
            self.starts.partition_point(|&s| s <= start)
        })
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            return write!(f, "{}: {}", self.file, self.message);
        }
        write!(
            f,
            "{}:{}:{}: {}\n  |\n  | {}\n  | {}{}",
            self.file,
            self.line,
            self.column,
            self.message,
            self.source_line,
            " ".repeat(self.caret),
            "^".repeat(self.width)
        )
    }
}

/// Every mistake found in one file.
#[cfg(test)]
mod tests {
    use super::*;

    /// At every offset of a text with empty lines, CRLF, multi-byte characters and no
    /// final newline, the line index gives what counting from the top gives.
    #[test]
    fn a_locator_places_every_offset_as_counting_from_the_top_does() {
        let text = "a = 1\n\nname = \"é\u{1F600}x\"\r\n[t]\n  key = [1, 2]\nlast";
        let locator = Locator::new("f.toml", text);
        for start in 0..=text.len() {
            for end in start..=(start + 3).min(text.len()) {
                let message = format!("at {start}..{end}");
                assert_eq!(
                    locator.at(start..end, message.clone()),
                    Located::at("f.toml", text, Some(start..end), message),
                    "{start}..{end}"
                );
            }
        }
        // And the lines are right: the last line is the sixth.
        assert_eq!(
            locator.at(text.len() - 1..text.len(), String::new()).line,
            6
        );
        assert_eq!(locator.at(0..1, String::new()).line, 1);
        assert_eq!(locator.at(6..6, String::new()).line, 2);
    }

    #[test]
    fn a_huge_value_is_quoted_as_a_short_excerpt() {
        let value = "x".repeat(10_000_000);
        let text = format!("a = 1\nname = \"{value}\"\n");
        let start = text.find("\"x").unwrap();
        let e = Located::at(
            "f.toml",
            &text,
            Some(start..text.len() - 1),
            format!("bad {value}"),
        );
        let shown = e.to_string();
        assert!(shown.len() < 2_000, "{} bytes", shown.len());
        assert!(shown.starts_with("f.toml:2:8: bad xxx"), "{}", &shown[..40]);
        assert_eq!((e.line, e.column, e.caret), (2, 8, 7));
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TomlErrors(pub Vec<Located>);

impl fmt::Display for TomlErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl TomlErrors {
    /// Every mistake of a file, listed as a reader meets them: by line, then column (a
    /// mistake with no place in the text first). The checks run clause by clause, in name
    /// order, which is not the file's.
    pub fn in_line_order(mut errors: Vec<Located>) -> TomlErrors {
        errors.sort_by_key(|e| (e.line, e.column));
        TomlErrors(errors)
    }
}

/// Parse `text` as TOML into `T`, turning a syntax or shape error into a located one. Every
/// unknown key of the file is reported, not only the first ([`from_toml_all`]).
pub fn from_toml<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, TomlErrors> {
    match from_toml_all(file, text) {
        (Some(value), errors) if errors.is_empty() => Ok(value),
        (_, errors) => Err(TomlErrors::in_line_order(errors)),
    }
}

/// How many unknown keys one file may report before the rest are left for the next run: each
/// costs one more parse of the file.
const MAX_UNKNOWN_KEYS: usize = 64;

/// Parse `text` into `T`, collecting every unknown key on the way: the deserializer stops at
/// the first one, so each is reported with its place and then commented out of a working copy
/// (its first byte becomes `#`, so every later place in the file stays where it was) and the
/// copy is parsed again. Returns the value the file has without its unknown keys, if it has
/// one, and the errors. A key that cannot be commented out alone (one inside an inline
/// table, or after another on its line) ends the search: what that would leave is not the
/// user's text, so only the errors found so far, all real, are reported.
pub fn from_toml_all<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> (Option<T>, Vec<Located>) {
    let mut work = text.to_string();
    let mut errors = Vec::new();
    loop {
        let e = match toml::from_str::<T>(&work) {
            Ok(value) => return (Some(value), errors),
            Err(e) => e,
        };
        let message = e.message().trim_end();
        let first_error = errors.is_empty();
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            // Only unknown keys were taken out, so a key missing from the copy is missing
            // from the file.
            errors.push(missing(file, text, e.span(), field));
            return (None, errors);
        }
        let unknown = message.starts_with("unknown field `");
        let start = e.span().map(|s| s.start).filter(|&i| i < work.len());
        match start.filter(|&i| unknown && line_starts_at(&work, i)) {
            Some(i) if errors.len() < MAX_UNKNOWN_KEYS => {
                errors.push(Located::at(file, text, e.span(), message.to_string()));
                work.replace_range(i..i + 1, "#");
            }
            _ => {
                // The first error is the file's own; a later one other than an unknown key
                // may come of the copy, and is left for the run after the fixes.
                if first_error || unknown {
                    errors.push(Located::at(file, text, e.span(), message.to_string()));
                }
                return (None, errors);
            }
        }
    }
}

/// Whether only blanks stand between the start of its line and byte `i`, and that byte is a
/// one-byte character: a key there can be commented out without touching another (nor
/// turning the lines of a multi-line string into keys).
fn line_starts_at(text: &str, i: usize) -> bool {
    if !text.is_char_boundary(i) || !text.as_bytes()[i].is_ascii() {
        return false;
    }
    let line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[i..].find('\n').map_or(text.len(), |n| i + n);
    // A multi-line string's lines would be read as keys once its first line is a comment.
    let line = &text[i..line_end];
    text[line_start..i].bytes().all(|b| b == b' ' || b == b'\t')
        && !line.contains("\"\"\"")
        && !line.contains("\'\'\'")
}

/// A required key that is absent. The parser's span is the table that lacks it: at the top
/// level that starts at the file's first line (often a comment), no place to point at, so
/// the file is named alone; in a `[table]`, the error points at the table's header line.
fn missing(file: &str, text: &str, span: Option<Range<usize>>, field: &str) -> Located {
    let top = || Located::at(file, text, None, format!("the file has no `{field}`"));
    let Some(span) = span else {
        return top();
    };
    let start = floor_char_boundary(text, span.start.min(text.len()));
    if text[start..].starts_with('{') {
        // An inline table: point at its brace.
        return Located::at(
            file,
            text,
            Some(start..start + 1),
            format!("this table has no `{field}`"),
        );
    }
    // The `[header]` line at or before the table's first key.
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let header = text[..line_start.max(start)]
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(0))
        .filter(|&i| i <= start && text[i..].trim_start().starts_with('['))
        .max()
        .unwrap_or(line_start);
    if !text[header..].trim_start().starts_with('[') {
        return top();
    }
    let end = text[header..].find('\n').map_or(text.len(), |i| header + i);
    let name = text[header..end].trim();
    Located::at(
        file,
        text,
        Some(header..end),
        format!("{name} has no `{field}`"),
    )
}
