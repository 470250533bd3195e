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
    /// The offending line of text, for the caret display.
    pub source_line: String,
    /// How many characters to underline.
    pub width: usize,
}

impl Located {
    /// Locate `span` (byte offsets) in `text`.
    pub fn at(file: &str, text: &str, span: Option<Range<usize>>, message: String) -> Located {
        let Some(span) = span else {
            return Located {
                file: file.to_string(),
                line: 0,
                column: 0,
                message,
                source_line: String::new(),
                width: 0,
            };
        };
        let start = floor_char_boundary(text, span.start.min(text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let end = floor_char_boundary(text, span.end.clamp(start, line_end));
        Located {
            file: file.to_string(),
            line,
            column,
            message,
            source_line: text[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
            width: text[start..end].chars().count().max(1),
        }
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
            " ".repeat(self.column - 1),
            "^".repeat(self.width)
        )
    }
}

/// Every mistake found in one file.
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

/// Parse `text` as TOML into `T`, turning a syntax or shape error into a located one.
pub fn from_toml<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Result<T, TomlErrors> {
    toml::from_str(text).map_err(|e| {
        TomlErrors(vec![Located::at(
            file,
            text,
            e.span(),
            e.message().trim_end().to_string(),
        )])
    })
}
