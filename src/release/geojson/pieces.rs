//! What every walker of a GeoJSON document uses, below all of them: the nesting limit, the
//! excerpt of a value quoted in an error, the borrowed-string seed ([`Text`]) and the refusal
//! of a member given twice ([`Members`]). `mod.rs` and each file of the walk name this file,
//! and it names none of them.

use serde::de;

/// Nesting deeper than this (collections in collections, arrays in coordinates) is refused:
/// real data nests a few levels, and a crafted file must not exhaust the stack.
pub(super) const MAX_DEPTH: usize = 32;

/// At most this many characters of a value from the file are quoted in an error.
const EXCERPT: usize = 40;

/// A value from the file, cut to a short excerpt for an error message.
pub(super) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT) {
        None => format!("`{s}`"),
        Some((at, _)) => format!("`{}…` ({} bytes)", &s[..at], s.len()),
    }
}

/// A key or a short string value, borrowed from the input when it holds no escape (the
/// parallel reader's slices), copied otherwise: one allocation less per member of every
/// feature. The same values and errors as `String`'s.
pub(super) struct Text;

seed! {
    Text => std::borrow::Cow<'de, str>, deserialize_str, "a string";
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(v))
    }
}

/// Refuses a member given twice in one object.
#[derive(Default)]
pub(super) struct Members(Vec<&'static str>);

impl Members {
    pub(super) fn first<E: de::Error>(&mut self, name: &'static str) -> Result<(), E> {
        if self.0.contains(&name) {
            return Err(E::custom(format!("member `{name}` is given twice")));
        }
        self.0.push(name);
        Ok(())
    }
}
