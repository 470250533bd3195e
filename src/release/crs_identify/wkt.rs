//! The WKT parser: a text (WKT1, ESRI WKT or WKT2) as a tree of `KEYWORD[arg, …]` nodes,
//! and the look-ups identification needs on it. Lenient by intent: both bracket styles, any
//! keyword, unquoted words kept as strings; a text nested deeper than 16 levels is refused.

/// A WKT node: `KEYWORD[arg, arg, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Wkt {
    Str(String),
    Num(f64),
    Node(String, Vec<Wkt>),
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Wkt> {
        if depth > 16 {
            return None;
        }
        self.ws();
        let c = *self.s.get(self.pos)?;
        if c == b'"' {
            let start = self.pos + 1;
            let end = start + self.s[start..].iter().position(|&b| b == b'"')?;
            self.pos = end + 1;
            return Some(Wkt::Str(
                String::from_utf8_lossy(&self.s[start..end]).into_owned(),
            ));
        }
        let start = self.pos;
        while self.pos < self.s.len() && !b"[](),\"".contains(&self.s[self.pos]) {
            self.pos += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.pos]).ok()?.trim();
        self.ws();
        match self.s.get(self.pos) {
            Some(b'[') | Some(b'(') => {
                self.pos += 1;
                let mut args = Vec::new();
                loop {
                    self.ws();
                    match self.s.get(self.pos)? {
                        b']' | b')' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => self.pos += 1,
                        _ => args.push(self.value(depth + 1)?),
                    }
                }
                Some(Wkt::Node(word.to_ascii_uppercase(), args))
            }
            _ => word
                .parse::<f64>()
                .ok()
                .map(Wkt::Num)
                .or_else(|| Some(Wkt::Str(word.to_string()))),
        }
    }
}

impl Wkt {
    pub(super) fn keyword(&self) -> &str {
        match self {
            Wkt::Node(k, _) => k,
            _ => "",
        }
    }

    pub(super) fn args(&self) -> &[Wkt] {
        match self {
            Wkt::Node(_, a) => a,
            _ => &[],
        }
    }

    pub(super) fn name(&self) -> Option<&str> {
        match self.args().first()? {
            Wkt::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn child(&self, keyword: &str) -> Option<&Wkt> {
        self.args().iter().find(|a| a.keyword() == keyword)
    }

    /// `AUTHORITY["EPSG","27700"]` (WKT1) or `ID["EPSG",27700]` (WKT2) directly on this node.
    pub(super) fn authority(&self) -> Option<String> {
        let a = self.child("AUTHORITY").or_else(|| self.child("ID"))?;
        let org = a.name()?;
        let code = match a.args().get(1)? {
            Wkt::Str(s) => s.clone(),
            Wkt::Num(n) => format!("{n}"),
            _ => return None,
        };
        Some(format!("{}:{}", org.to_ascii_uppercase(), code))
    }

    pub(super) fn child_any(&self, keywords: &[&str]) -> Option<&Wkt> {
        self.args().iter().find(|a| keywords.contains(&a.keyword()))
    }

    /// The unit factor of a `UNIT`/`LENGTHUNIT`/`ANGLEUNIT` child.
    pub(super) fn unit(&self, keywords: &[&str]) -> Option<f64> {
        num(self.child_any(keywords)?.args().get(1))
    }
}

/// A number argument, written as a number or as a string holding one.
pub(super) fn num(w: Option<&Wkt>) -> Option<f64> {
    match w? {
        Wkt::Num(n) => Some(*n),
        Wkt::Str(s) => s.parse().ok(),
        _ => None,
    }
}

pub(super) fn parse(text: &str) -> Option<Wkt> {
    Parser {
        s: text.trim().trim_start_matches('\u{feff}').as_bytes(),
        pos: 0,
    }
    .value(0)
}
