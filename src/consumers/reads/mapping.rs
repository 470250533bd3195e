//! A source's field mapping as the scanner crate's readers take it: the main crate builds the
//! scanner's [`Mapping`] from a [`Source`]'s plain values (its `fields` and the constants that
//! stand for a field), so the scanner never names a `Source`.

use contracts_scan::reads::fields::Mapping;

use crate::model::source::Source;

/// The mapping of `source`.
pub(crate) fn mapping_of(source: &Source) -> Mapping {
    Mapping::new(
        &source.fields,
        source.dataset.clone(),
        source.contract.as_ref().map(ToString::to_string),
    )
}
