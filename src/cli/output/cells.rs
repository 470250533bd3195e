//! The vocabulary of a table: a column's [`Role`], a cell's [`Tone`] and the typed values
//! that carry one.

use crate::consumers::standing::Status as Standing;
use crate::model::waiver::WaiverState;
use crate::model::{ConsumerVerdict, Verdict};
use crate::release::validate::Status as ValidationStatus;

/// What a column holds, which decides how it may give way on a narrow terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Identifiers, dates, versions, numbers, verdicts: a shortened one is wrong, not short,
    /// so it is never cut (a last column may wrap at its spaces).
    Key,
    /// Free text (a rationale, a team, a list of addresses): the first to give way.
    Text,
    /// A finding, an error or the evidence of one: never cut, it wraps instead.
    Whole,
}

/// A column of a table: its header and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub header: &'static str,
    pub role: Role,
}

/// A column of identifiers, dates, versions, numbers or verdicts.
pub const fn key(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Key,
    }
}

/// A column of free text.
pub const fn text(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Text,
    }
}

/// A column of findings or errors.
pub const fn whole(header: &'static str) -> Col {
    Col {
        header,
        role: Role::Whole,
    }
}

/// What a value means to the reader, which alone decides its colour: a cell is coloured
/// because it holds a verdict, a result or a state, never because of the words it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// All is well: compatible, pass, current, live, sent (green).
    Good,
    /// Something is broken or someone is at risk: breaking, fail, still on an old line,
    /// an unknown reader, a notice that failed (red).
    Bad,
    /// Worth a look, not a failure: advisory, silent, upcoming, planned, stale (yellow).
    Warn,
    /// Over or out of play: not evaluated, retired, expired (dim).
    Muted,
}

impl Tone {
    /// The ANSI code of the tone's colour.
    pub(super) fn ansi(self) -> &'static str {
        match self {
            Tone::Good => "32",
            Tone::Bad => "31",
            Tone::Warn => "33",
            Tone::Muted => "2",
        }
    }
}

/// One cell of a table: the text printed and, when the cell holds a typed value that has one,
/// its [`Tone`]. Text alone ([`Cell::plain`], or a `String` through `From`) is never coloured,
/// whatever it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub(super) text: String,
    pub(super) tone: Option<Tone>,
}

impl Cell {
    /// A cell that is only text: an identifier, a date, a rationale.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            tone: None,
        }
    }

    /// A cell of `text` that holds a value of `tone`: for a value whose type the library does
    /// not name (a line's state, a notice's outcome) or whose text differs from its type's
    /// (`FAIL` for [`ValidationStatus::Fail`]).
    pub fn toned(text: impl Into<String>, tone: Option<Tone>) -> Cell {
        Cell {
            text: text.into(),
            tone,
        }
    }

    /// A cell holding a typed value: its text is the value's, its tone the value's own.
    pub fn of<T: Toned + std::fmt::Display>(value: T) -> Cell {
        Cell::toned(value.to_string(), value.tone())
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn tone(&self) -> Option<Tone> {
        self.tone
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::plain(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::plain(text)
    }
}

/// A domain value that has a [`Tone`] when it is shown in a table.
pub trait Toned {
    fn tone(&self) -> Option<Tone>;
}

/// `impl Toned` for a domain enum: each pattern of its values and the tone they have.
macro_rules! toned {
    ($t:ty { $($pat:pat => $tone:ident),+ $(,)? }) => {
        impl Toned for $t {
            fn tone(&self) -> Option<Tone> {
                Some(match self {
                    $($pat => Tone::$tone),+
                })
            }
        }
    };
}

toned!(Verdict {
    Verdict::Compatible => Good,
    Verdict::Breaking => Bad,
});

toned!(ValidationStatus {
    ValidationStatus::Pass => Good,
    ValidationStatus::Fail => Bad,
    ValidationStatus::AdvisoryFail | ValidationStatus::Waived => Warn,
    ValidationStatus::NotEvaluated => Muted,
});

toned!(Standing {
    Standing::Current | Standing::Migrated => Good,
    Standing::StillOn | Standing::Unknown => Bad,
    Standing::Silent | Standing::Unsubscribed | Standing::UnknownVersion => Warn,
    Standing::Automation | Standing::Incidental => Muted,
});

toned!(ConsumerVerdict {
    ConsumerVerdict::Unaffected => Good,
    ConsumerVerdict::Breaks => Bad,
});

toned!(WaiverState {
    WaiverState::Live => Good,
    WaiverState::Upcoming => Warn,
    WaiverState::Expired | WaiverState::Revoked => Muted,
});

/// The state of a line ([`crate::model::LineState`]), toned.
pub fn line_state(state: crate::model::window::LineState) -> Cell {
    use crate::model::window::LineState;
    let tone = match state {
        LineState::Live => Tone::Good,
        LineState::Upcoming => Tone::Warn,
        LineState::Retired => Tone::Muted,
    };
    Cell::toned(state.as_str(), Some(tone))
}

/// How `show` says a contract holds a clause (`enforced`, `advisory`, `not evaluated`, and
/// `not evaluated (unknown to this build)`): an enforced clause is the norm and stays plain.
pub fn clause_status(status: &'static str) -> Cell {
    let tone = match status {
        "advisory" => Some(Tone::Warn),
        s if s.starts_with("not evaluated") => Some(Tone::Muted),
        _ => None,
    };
    Cell::toned(status, tone)
}

/// The outcome of one notice in `notify` (`planned`, `sent`, `recovered`, `failed`,
/// `unsent`), as the notifier records it.
pub fn notice_status(status: &'static str) -> Cell {
    let tone = match status {
        "sent" | "recovered" => Some(Tone::Good),
        "failed" => Some(Tone::Bad),
        "planned" | "unsent" => Some(Tone::Warn),
        _ => None,
    };
    Cell::toned(status, tone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_typed_value_has_its_tone() {
        assert_eq!(Cell::of(ValidationStatus::Fail).tone(), Some(Tone::Bad));
        assert_eq!(Cell::of(ValidationStatus::Pass).tone(), Some(Tone::Good));
        assert_eq!(
            Cell::of(ValidationStatus::NotEvaluated).tone(),
            Some(Tone::Muted)
        );
        assert_eq!(Cell::of(Standing::StillOn).tone(), Some(Tone::Bad));
        assert_eq!(Cell::of(Standing::Current).tone(), Some(Tone::Good));
        assert_eq!(Cell::of(Standing::Silent).tone(), Some(Tone::Warn));
        assert_eq!(Cell::of(ConsumerVerdict::Breaks).tone(), Some(Tone::Bad));
        assert_eq!(WaiverState::Expired.tone(), Some(Tone::Muted));
        assert_eq!(
            line_state(crate::model::window::LineState::Retired).tone(),
            Some(Tone::Muted)
        );
        assert_eq!(notice_status("failed").tone(), Some(Tone::Bad));
        assert_eq!(clause_status("advisory").tone(), Some(Tone::Warn));
        assert_eq!(clause_status("enforced").tone(), None);
        assert_eq!(Cell::from("breaking".to_string()).tone(), None);
    }
}
