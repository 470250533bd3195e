//! Parquet logs (`.parquet`), the format data platforms export access logs to: one read per
//! row, in the columns `at`, `consumer`, `dataset` and `contract` (other columns are never
//! decoded: the reader asks for these four by projection). Row groups are read in parallel
//! ([`scan_parquet`], folded into the caller's [`Fold`]: the `contracts` crate's scan), or
//! one at a time ([`ParquetLog::read_group`], each row handed to a closure).
//!
//! Column types: `consumer`, `dataset` and `contract` are strings (plain, large, view or
//! dictionary-encoded); `at` is an RFC 3339 string or a timestamp of any unit — a timestamp
//! with a time zone is an instant, one without is taken as UTC. A row's "line" in messages is
//! its 1-based row number in the file.
//!
//! Read summaries in Parquet are read with the same string columns (`parquet_summary.rs`).

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;

use super::blocks::{fold, Fold, Malformed, ReadError};
use super::field_names::AtUnit;
use super::fields::{epoch_nanos, Mapping, Num};
use super::timestamps::At;

/// One row's fields; `at` is an instant when the column is a timestamp.
pub struct Row<'a> {
    pub at: At<'a>,
    pub consumer: &'a str,
    pub dataset: &'a str,
    pub contract: &'a str,
}

/// An open Parquet log: its metadata, the source's mapping, and where its columns are.
pub struct ParquetLog<'m> {
    meta: ArrowReaderMetadata,
    roots: Vec<usize>,
    mapping: &'m Mapping,
}

/// A file that is not the Parquet log (or summary) it should be, as an I/O error of it.
pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> ReadError {
    ReadError {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, reason.into()),
    }
}

/// Whether a column of type `t` holds strings (in any of arrow's layouts).
pub(crate) fn string_type(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, v) => string_type(v),
        _ => false,
    }
}

impl<'m> ParquetLog<'m> {
    /// Read the footer and check the columns; the error names what is missing or mistyped.
    pub fn open(path: &Path, mapping: &'m Mapping) -> Result<ParquetLog<'m>, ReadError> {
        let file = File::open(path).map_err(|source| ReadError {
            path: path.to_path_buf(),
            source,
        })?;
        let meta = catch_unwind(AssertUnwindSafe(|| {
            ArrowReaderMetadata::load(&file, Default::default())
        }))
        .map_err(|_| invalid(path, "the Parquet footer is damaged"))?
        .map_err(|e| invalid(path, format!("not a readable Parquet file: {e}")))?;
        let schema = meta.schema().clone();
        let mut roots = Vec::new();
        let epoch = mapping.unit() != AtUnit::Rfc3339;
        for (slot, name) in mapping.columns().iter().enumerate() {
            let Some(name) = name else {
                continue;
            };
            let (i, field) = schema.column_with_name(name).ok_or_else(|| {
                invalid(
                    path,
                    format!("no column `{name}` (the source reads its reads from it)"),
                )
            })?;
            let t = field.data_type();
            let ok = match slot {
                0 if epoch => matches!(t, DataType::Int64 | DataType::Int32 | DataType::Float64),
                0 => string_type(t) || matches!(t, DataType::Timestamp(..)),
                _ => string_type(t),
            };
            if !ok {
                let want = match slot {
                    0 if epoch => "an integer or a double (epoch time)",
                    0 => "a string or a timestamp",
                    _ => "a string",
                };
                return Err(invalid(
                    path,
                    format!("column `{name}` is {t}, expected {want}"),
                ));
            }
            roots.push(i);
        }
        Ok(ParquetLog {
            meta,
            roots,
            mapping,
        })
    }

    /// How many row groups the file has.
    pub fn row_groups(&self) -> usize {
        self.meta.metadata().num_row_groups()
    }

    /// Rows before row group `g`: its first row is number this + 1.
    fn rows_before(&self, g: usize) -> u64 {
        let md = self.meta.metadata();
        (0..g)
            .map(|i| md.row_group(i).num_rows().max(0) as u64)
            .sum()
    }

    /// Hand each row of row group `g` to `each` with its 1-based row number, or the reason it
    /// cannot be a read. Only the four columns are decoded.
    pub fn read_group(
        &self,
        path: &Path,
        g: usize,
        each: &mut dyn FnMut(u64, Result<Row<'_>, String>),
    ) -> Result<(), ReadError> {
        let first = self.rows_before(g) + 1;
        catch_unwind(AssertUnwindSafe(|| {
            self.read_group_unguarded(path, g, first, each)
        }))
        .unwrap_or_else(|_| Err(invalid(path, format!("row group {g} is damaged"))))
    }

    fn read_group_unguarded(
        &self,
        path: &Path,
        g: usize,
        first: u64,
        each: &mut dyn FnMut(u64, Result<Row<'_>, String>),
    ) -> Result<(), ReadError> {
        // A file of its own per row group: row groups read at the same time must not share a
        // seek offset.
        let file = File::open(path).map_err(|source| ReadError {
            path: path.to_path_buf(),
            source,
        })?;
        let mask = ProjectionMask::roots(self.meta.parquet_schema(), self.roots.iter().copied());
        let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(file, self.meta.clone())
            .with_row_groups(vec![g])
            .with_projection(mask)
            .with_batch_size(64 * 1024)
            .build()
            .map_err(|e| invalid(path, format!("row group {g}: {e}")))?;
        let mut row = first;
        for batch in reader {
            let batch = batch.map_err(|e| invalid(path, format!("row group {g}: {e}")))?;
            let column = |slot: usize| -> Result<Option<&ArrayRef>, ReadError> {
                let Some(name) = &self.mapping.columns()[slot] else {
                    return Ok(None);
                };
                batch
                    .column_by_name(name)
                    .map(Some)
                    .ok_or_else(|| invalid(path, format!("row group {g} has no `{name}`")))
            };
            let strings = |slot: usize| -> Result<Option<Strings<'_>>, ReadError> {
                column(slot)?
                    .map(|c| {
                        Strings::of(c).ok_or_else(|| {
                            invalid(path, format!("column of `{}` changed type", NAMES[slot]))
                        })
                    })
                    .transpose()
            };
            let at = column(0)?.ok_or_else(|| invalid(path, "no `at` column".to_string()))?;
            let at = Instants::of(at, self.mapping.unit())
                .ok_or_else(|| invalid(path, "column `at` changed type".to_string()))?;
            let (consumer, dataset, contract) = (strings(1)?, strings(2)?, strings(3)?);
            for i in 0..batch.num_rows() {
                let fields = (|| {
                    let dataset = value(&dataset, i, 2)?;
                    let at = at.get(i).ok_or("`at` is null")?;
                    let consumer = value(&consumer, i, 1)?.unwrap_or_default();
                    let contract = value(&contract, i, 3)?;
                    let m = self.mapping;
                    Ok(Row {
                        at,
                        consumer,
                        dataset: dataset.or(m.constant_dataset()).unwrap_or_default(),
                        contract: contract.or(m.constant_contract()).unwrap_or_default(),
                    })
                })();
                each(row, fields);
                row += 1;
            }
        }
        Ok(())
    }
}

/// A string column of any of the layouts arrow gives.
pub(crate) enum Strings<'a> {
    Utf8(&'a arrow_array::StringArray),
    Large(&'a arrow_array::LargeStringArray),
    View(&'a arrow_array::StringViewArray),
    Dict {
        array: &'a dyn Array,
        keys: Vec<usize>,
        values: Box<Strings<'a>>,
    },
}

impl<'a> Strings<'a> {
    pub(crate) fn of(c: &'a ArrayRef) -> Option<Strings<'a>> {
        Self::of_array(c.as_ref())
    }

    fn of_array(c: &'a dyn Array) -> Option<Strings<'a>> {
        Some(match c.data_type() {
            DataType::Utf8 => Strings::Utf8(c.as_string::<i32>()),
            DataType::LargeUtf8 => Strings::Large(c.as_string::<i64>()),
            DataType::Utf8View => Strings::View(c.as_string_view()),
            DataType::Dictionary(..) => {
                let d = c.as_any_dictionary_opt()?;
                Strings::Dict {
                    array: c,
                    keys: d.normalized_keys(),
                    values: Box::new(Strings::of_array(d.values().as_ref())?),
                }
            }
            _ => return None,
        })
    }

    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            Strings::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Large(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::View(a) => a.is_valid(i).then(|| a.value(i)),
            Strings::Dict {
                array,
                keys,
                values,
            } => {
                if array.is_null(i) {
                    return None;
                }
                values.get(*keys.get(i)?)
            }
        }
    }
}

/// Row `i` of a mapped column (`None`: the slot is a constant); a null is an error.
fn value<'b>(s: &Option<Strings<'b>>, i: usize, slot: usize) -> Result<Option<&'b str>, String> {
    match s {
        None => Ok(None),
        Some(s) => s
            .get(i)
            .map(Some)
            .ok_or_else(|| format!("`{}` is null", NAMES[slot])),
    }
}

/// The names of a row's parts, for messages.
const NAMES: [&str; 4] = ["at", "consumer", "dataset", "contract"];

/// The `at` column: strings, or timestamps (instants in UTC) as the column's integers and
/// the nanoseconds in its unit, the typed array found once per batch, not per row; or epoch
/// numbers in the source's unit.
enum Instants<'a> {
    Text(Strings<'a>),
    Epoch {
        array: &'a dyn Array,
        unit: AtUnit,
    },
    Stamp {
        array: &'a dyn Array,
        values: &'a [i64],
        unit: TimeUnit,
    },
}

impl<'a> Instants<'a> {
    fn of(c: &'a ArrayRef, unit: AtUnit) -> Option<Instants<'a>> {
        if unit != AtUnit::Rfc3339 {
            return Some(Instants::Epoch {
                array: c.as_ref(),
                unit,
            });
        }
        let values: &'a [i64] = match c.data_type() {
            DataType::Timestamp(TimeUnit::Second, _) => {
                c.as_primitive::<TimestampSecondType>().values()
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                c.as_primitive::<TimestampMillisecondType>().values()
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                c.as_primitive::<TimestampMicrosecondType>().values()
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                c.as_primitive::<TimestampNanosecondType>().values()
            }
            _ => return Strings::of(c).map(Instants::Text),
        };
        let DataType::Timestamp(unit, _) = c.data_type() else {
            return None;
        };
        Some(Instants::Stamp {
            array: c.as_ref(),
            values,
            unit: *unit,
        })
    }

    fn get(&self, i: usize) -> Option<At<'a>> {
        match self {
            Instants::Text(s) => s.get(i).map(At::text),
            Instants::Epoch { array, unit } => {
                use arrow_array::types::{Float64Type, Int32Type, Int64Type};
                if array.is_null(i) {
                    return None;
                }
                let n = match array.data_type() {
                    DataType::Int64 => Num::Int(array.as_primitive::<Int64Type>().value(i)),
                    DataType::Int32 => {
                        Num::Int(i64::from(array.as_primitive::<Int32Type>().value(i)))
                    }
                    _ => Num::Float(array.as_primitive::<Float64Type>().value(i)),
                };
                Some(epoch_nanos(n, *unit).map_or(At::text("out of range"), At::UtcNanos))
            }
            Instants::Stamp {
                array,
                values,
                unit,
            } => {
                if array.is_null(i) {
                    return None;
                }
                let v = *values.get(i)?;
                let per = match unit {
                    TimeUnit::Second => 1_000_000_000,
                    TimeUnit::Millisecond => 1_000_000,
                    TimeUnit::Microsecond => 1_000,
                    TimeUnit::Nanosecond => 1,
                };
                if let Some(ns) = v.checked_mul(per) {
                    return Some(At::UtcNanos(ns));
                }
                // Beyond the nanosecond range (about 1677 to 2262): chrono's own range.
                let t = match unit {
                    TimeUnit::Second => chrono::DateTime::from_timestamp(v, 0),
                    TimeUnit::Millisecond => chrono::DateTime::from_timestamp_millis(v),
                    TimeUnit::Microsecond => chrono::DateTime::from_timestamp_micros(v),
                    TimeUnit::Nanosecond => Some(chrono::DateTime::from_timestamp_nanos(v)),
                };
                // Out of chrono's range: a text the date parser refuses, so the row is
                // reported as malformed.
                Some(t.map_or(At::text("out of range"), |t| At::Instant(t.fixed_offset())))
            }
        }
    }
}

/// One row group's scan: its reads, its malformed rows (row number, reason), its row count
/// and the error that stopped it, if one did.
type GroupScan<S> = (S, Vec<(u64, String)>, u64, Option<ReadError>);

/// Scan a Parquet log: row groups in parallel, each into its own accumulator; malformed rows
/// are reported in row order.
pub fn scan_parquet<S: Fold>(
    path: &Path,
    req: &S::Request,
    scan: &mut S,
    on_malformed: &mut dyn FnMut(&Malformed),
    mapping: &Mapping,
) -> Result<(), ReadError> {
    let log = ParquetLog::open(path, mapping)?;
    let groups: Vec<usize> = (0..log.row_groups()).collect();
    let parts: Vec<GroupScan<S>> = groups
        .par_iter()
        .map(|&g| {
            let mut acc = S::for_request(req);
            let mut bad = Vec::new();
            let mut rows = 0u64;
            let result = log.read_group(path, g, &mut |row, fields| {
                rows += 1;
                // `fold` skips the other datasets' reads first.
                let judged = fields.and_then(|r| {
                    let (c, d, v) = (r.consumer, r.dataset, r.contract);
                    fold(
                        &mut acc,
                        req,
                        r.at,
                        c.as_bytes(),
                        d.as_bytes(),
                        v.as_bytes(),
                    )
                });
                if let Err(reason) = judged {
                    acc.count_malformed();
                    bad.push((row, reason));
                }
            });
            acc.flush();
            (acc, bad, rows, result.err())
        })
        .collect();
    let mut failure = None;
    for (acc, bad, rows, err) in parts {
        // Row groups after a damaged one still count, as blocks of a text log before a
        // failure do; the file is reported as not read to its end.
        scan.count_lines(rows);
        for (line, reason) in bad {
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line,
                reason,
            });
        }
        scan.absorb(acc);
        if failure.is_none() {
            failure = err;
        }
    }
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
#[path = "parquet_rows_tests.rs"]
mod tests;
