//! The JSON number grammar, strict: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
//! Both hand-written paths of the reader read numbers through it: the coordinate scanner wants
//! the value, the plain-feature path only the type and the text, and a grammar written twice
//! could come to accept different texts.

/// What a JSON number is made of, as [`number`] found it.
pub(super) struct Number {
    /// The byte after its last.
    pub end: usize,
    pub negative: bool,
    /// Its digits, before and after the point, as one integer: exact while there are at most
    /// 19 of them.
    pub mantissa: u64,
    /// How many digits `mantissa` took.
    pub digits: usize,
    /// How many of them follow the point (0: no point).
    pub fraction: usize,
    /// Whether it has an exponent part.
    pub has_exponent: bool,
    /// The exponent's value (0 without one); `None` when it has more than six digits.
    pub exponent: Option<i64>,
}

impl Number {
    /// Whether it is written as an integer: no point and no exponent.
    pub fn integral(&self) -> bool {
        self.fraction == 0 && !self.has_exponent
    }
}

/// The JSON number that starts at `b[start]`, or `None` when the text there is not one.
///
/// Always inlined: it is the inner loop of the coordinate scan, and as a call that returns
/// the parts, profiling took 5 % longer; inlined, it takes what the scanner with its own copy
/// of the grammar took (bench/RESULTS.md, "One JSON number grammar").
#[inline(always)]
pub(super) fn number(b: &[u8], start: usize) -> Option<Number> {
    let mut i = start;
    let mut mantissa: u64 = 0;
    let mut count = 0usize;
    let mut digits = |i: &mut usize| {
        let s = *i;
        while let Some(&c @ b'0'..=b'9') = b.get(*i) {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            count += 1;
            *i += 1;
        }
        *i - s
    };
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return None,
    }
    let mut fraction = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        fraction = digits(&mut i);
        if fraction == 0 {
            return None;
        }
    }
    let mut exponent = Some(0);
    let has_exponent = matches!(b.get(i), Some(b'e' | b'E'));
    if has_exponent {
        i += 1;
        let sign = match b.get(i) {
            Some(b'-') => -1,
            Some(b'+') => 1,
            _ => 0,
        };
        if sign != 0 {
            i += 1;
        }
        let s = i;
        let mut e: i64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            e = e.saturating_mul(10).saturating_add(i64::from(c - b'0'));
            i += 1;
        }
        if i == s {
            return None;
        }
        exponent = (i - s <= 6).then_some(if sign < 0 { -e } else { e });
    }
    Some(Number {
        end: i,
        negative,
        mantissa,
        digits: count,
        fraction,
        has_exponent,
        exponent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_takes_json_numbers_and_only_those() {
        for good in [
            "0",
            "-0",
            "12",
            "-3.25",
            "1e5",
            "1E+5",
            "2.5e-3",
            "0.0",
            "1e0000001",
        ] {
            let n = number(good.as_bytes(), 0).unwrap_or_else(|| panic!("{good}"));
            assert_eq!(n.end, good.len(), "{good}");
            // The standard parser agrees that it is a number.
            assert!(good.parse::<f64>().is_ok(), "{good}");
        }
        for bad in ["", "-", "+1", ".5", "1.", "1e", "1e+", "-.5", "e5", "x"] {
            assert!(number(bad.as_bytes(), 0).is_none(), "{bad}");
        }
        // A leading zero ends the number: `01` is `0` followed by something else.
        assert_eq!(number(b"01", 0).map(|n| n.end), Some(1));
    }

    #[test]
    fn the_parts_are_the_digits_the_point_and_the_exponent() {
        let n = number(b"[-12.50e-3,", 1).unwrap();
        assert_eq!(n.end, 10);
        assert!(n.negative);
        assert_eq!((n.mantissa, n.digits, n.fraction), (1250, 4, 2));
        assert_eq!((n.has_exponent, n.exponent), (true, Some(-3)));
        assert!(!n.integral());
        let n = number(b"42", 0).unwrap();
        assert!(n.integral());
        assert_eq!(n.exponent, Some(0));
        // An exponent of more than six digits is left to the full parser.
        assert_eq!(number(b"1e1234567", 0).unwrap().exponent, None);
    }
}
