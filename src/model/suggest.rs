//! "Did you mean": the nearest known name to a misspelt one, so a typo in a clause, dataset
//! or registry entry leads to the fix instead of a stranger error downstream (a misspelt
//! clause would otherwise read as a new custom clause and the real one as removed).

/// The known name nearest to `typed`, when it is near enough to be a plausible typo: at most
/// a third of the name's length in edits (and at least one), counting a swap of two
/// neighbouring letters as one edit.
pub fn nearest<'a, I>(typed: &str, known: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let allowed = (typed.chars().count() / 3).max(1);
    known
        .into_iter()
        .filter(|k| *k != typed)
        .map(|k| (strsim::damerau_levenshtein(typed, k), k))
        .filter(|(d, _)| *d <= allowed)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, k)| k)
}

/// How many known names are listed in full when none is near.
const LISTED: usize = 12;

/// A hint for an unknown name among `known`: the nearest one, or the whole list when it is
/// short, or nothing.
pub fn hint<'a, I>(typed: &str, known: I, what: &str) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let known: Vec<&str> = known.into_iter().collect();
    if let Some(k) = nearest(typed, known.iter().copied()) {
        return Some(format!("did you mean `{k}`?"));
    }
    match known.len() {
        0 => None,
        n if n <= LISTED => Some(format!(
            "the {what} are: {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{hint, nearest};

    #[test]
    fn a_typo_finds_its_name_and_a_stranger_finds_none() {
        let clauses = [
            "permitted_geometry",
            "required_attributes",
            "crs",
            "envelope",
        ];
        assert_eq!(
            nearest("permited_geometry", clauses),
            Some("permitted_geometry")
        );
        assert_eq!(nearest("envlope", clauses), Some("envelope"));
        assert_eq!(nearest("csr", clauses), Some("crs"));
        assert_eq!(nearest("population", clauses), None);
        // The name itself is not a suggestion for itself.
        assert_eq!(nearest("crs", ["crs"]), None);
    }

    #[test]
    fn few_names_are_listed_when_none_is_near() {
        assert_eq!(
            hint("lakes", ["roads", "rivers"], "datasets").as_deref(),
            Some("the datasets are: `roads`, `rivers`")
        );
        assert_eq!(
            hint("taxi-zone", ["taxi-zones", "roads"], "datasets").as_deref(),
            Some("did you mean `taxi-zones`?")
        );
        assert_eq!(hint("x", [], "datasets"), None);
    }
}
