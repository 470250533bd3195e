//! Calendar days as people type them: on the command line (`--today`, `--on`), in the
//! environment (`CONTRACTS_TODAY`) and in TOML. One wording for every mistake, in the user's
//! terms rather than the date parser's ("trailing input", "expected a TOML datetime").

use chrono::NaiveDate;

/// What every date error says is expected.
pub const EXPECTED: &str = "expected a date YYYY-MM-DD such as 2027-03-05";

/// A day written `YYYY-MM-DD`, exactly.
pub fn parse_day(text: &str) -> Result<NaiveDate, String> {
    let b = text.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return Err(format!("`{text}`: {EXPECTED}"));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .map_err(|_| format!("`{text}` is not a calendar day ({EXPECTED})"))
}

/// A TOML date value (no time, no offset) as a calendar day: for the files the tool writes
/// itself, where a quoted day cannot occur.
pub fn toml_date(d: &toml::value::Datetime) -> Result<NaiveDate, String> {
    toml_day(&toml::Value::Datetime(*d))
}

/// A day in a TOML file: a bare TOML date (`2027-03-05`, unquoted). A quoted string or a
/// date-time is refused with what to write instead.
pub fn toml_day(value: &toml::Value) -> Result<NaiveDate, String> {
    const UNQUOTED: &str = "(unquoted in TOML)";
    match value {
        toml::Value::Datetime(d) => match (d.date, d.time, d.offset) {
            (Some(date), None, None) => NaiveDate::from_ymd_opt(
                i32::from(date.year),
                u32::from(date.month),
                u32::from(date.day),
            )
            .ok_or_else(|| format!("{d} is not a calendar day ({EXPECTED})")),
            _ => Err(format!("{EXPECTED}, without a time, found {d}")),
        },
        toml::Value::String(s) => Err(match parse_day(s) {
            Ok(_) => format!("{EXPECTED} {UNQUOTED}: write {s} without the quotes"),
            Err(_) => format!("{EXPECTED} {UNQUOTED}, found the string \"{s}\""),
        }),
        other => Err(format!(
            "{EXPECTED} {UNQUOTED}, found a {}",
            other.type_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_day, toml_day};

    #[test]
    fn every_wrong_day_gets_the_same_wording() {
        assert_eq!(parse_day("2027-03-05").unwrap().to_string(), "2027-03-05");
        for bad in [
            "05-03-2027",
            "2027/03/05",
            "tomorrow",
            "2027-3-5",
            " 2027-03-05",
            "",
        ] {
            let e = parse_day(bad).unwrap_err();
            assert!(
                e.contains("expected a date YYYY-MM-DD such as 2027-03-05"),
                "{e}"
            );
        }
        assert!(parse_day("2027-02-30")
            .unwrap_err()
            .contains("not a calendar day"));
    }

    #[test]
    fn toml_days_are_bare_dates() {
        let v: toml::Table = toml::from_str("a = 2027-01-15\nb = \"15/01/2027\"\nc = \"2027-01-15\"\nd = 2027-01-15T10:00:00\ne = 3").unwrap();
        assert_eq!(toml_day(&v["a"]).unwrap().to_string(), "2027-01-15");
        assert!(toml_day(&v["b"])
            .unwrap_err()
            .contains("found the string \"15/01/2027\""));
        assert!(toml_day(&v["c"])
            .unwrap_err()
            .contains("write 2027-01-15 without the quotes"));
        assert!(toml_day(&v["d"]).unwrap_err().contains("without a time"));
        assert!(toml_day(&v["e"]).unwrap_err().contains("found a integer"));
    }
}
