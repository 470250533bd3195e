//! The one escaper for markup: JUnit XML, the site's HTML and the timeline's SVG all pass
//! every piece of text through [`escape`], so what one of them can carry the others can too.
//!
//! Besides the five markup characters, it drops what XML 1.0 forbids outright (the C0
//! controls other than tab, newline and carriage return, and U+FFFE/U+FFFF) and what HTML
//! forbids in text (the C1 controls and DEL). A CI parser refuses a document holding one, and
//! a browser shows an ESC from a pasted terminal line as garbage, so each becomes a space:
//! the words on either side stay apart, and nothing of the text is hidden.

/// Escape text for XML, HTML and SVG content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // `&apos;` is XML's and HTML5's but not HTML4's; a number is every reader's.
            '\'' => out.push_str("&#39;"),
            c if forbidden(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether markup may not carry `c` at all, escaped or not.
fn forbidden(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_characters_become_entities() {
        assert_eq!(
            escape(r#"a<b>&"c"'d'"#),
            "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;"
        );
    }

    #[test]
    fn forbidden_controls_become_spaces_and_whitespace_stays() {
        assert_eq!(escape("a\u{1}b\u{1b}[31mc"), "a b [31mc");
        assert_eq!(escape("\u{0}\u{7f}\u{85}\u{9f}\u{fffe}\u{ffff}"), "      ");
        assert_eq!(escape("tab\tnew\nret\r"), "tab\tnew\nret\r");
        assert_eq!(escape("Grüße — 東京"), "Grüße — 東京");
    }
}
