//! Read summaries in Parquet (docs/src/reference/consumption-log.md#read-summaries): rows of
//! `day`, `consumer`, `dataset`, `contract`, `reads`, `first_at`, `last_at` and `registered`
//! ([`COLUMNS`]), read into plain [`SummaryRow`]s with the string columns of the Parquet logs
//! of reads (`parquet_rows.rs`). What a row means (its instants, its version) is checked by
//! the `contracts` crate, as a JSON Lines row of a summary is.

use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use arrow_schema::DataType;
use chrono::NaiveDate;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use parquet::file::reader::ChunkReader;

use super::blocks::ReadError;
use super::parquet_rows::{invalid, string_type, Strings};

/// The columns of a Parquet summary, in the order written (a reader finds them by name).
pub const COLUMNS: [&str; 8] = [
    "day",
    "consumer",
    "dataset",
    "contract",
    "reads",
    "first_at",
    "last_at",
    "registered",
];

/// One row of a summary as written: a JSON object per line, or a Parquet row. Nothing is
/// checked but the types and nulls: what its instants and version mean is the `contracts`
/// crate's check.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryRow {
    pub day: NaiveDate,
    pub consumer: String,
    pub dataset: String,
    pub contract: String,
    pub reads: u64,
    pub first_at: String,
    pub last_at: String,
    pub registered: bool,
}

/// The type a column of a Parquet read summary has: `day` a string or a DATE, `reads` an
/// integer, `registered` a boolean, the others strings.
fn summary_column_fits(name: &str, t: &DataType) -> Result<(), &'static str> {
    let fits = match name {
        "day" => string_type(t) || matches!(t, DataType::Date32),
        "reads" => t.is_integer(),
        "registered" => matches!(t, DataType::Boolean),
        _ => string_type(t),
    };
    if fits {
        return Ok(());
    }
    Err(match name {
        "day" => "a string (YYYY-MM-DD) or a DATE",
        "reads" => "an integer",
        "registered" => "a boolean",
        _ => "a string",
    })
}

/// Row `i` of an integer column of any width, as an `i128` (`None`: a null).
fn integer(array: &dyn Array, i: usize) -> Option<i128> {
    use arrow_array::types::{
        Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
    };
    if array.is_null(i) {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int8 => i128::from(array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => i128::from(array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => i128::from(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => i128::from(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => i128::from(array.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => i128::from(array.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => i128::from(array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => i128::from(array.as_primitive::<UInt64Type>().value(i)),
        _ => return None,
    })
}

/// Row `i` of the `day` column: a DATE, or the text of one (`YYYY-MM-DD`).
fn summary_day(
    array: &dyn Array,
    strings: &Option<Strings<'_>>,
    i: usize,
) -> Result<NaiveDate, String> {
    use arrow_array::types::Date32Type;
    if let Some(s) = strings {
        let text = s.get(i).ok_or("`day` is null")?;
        return text
            .parse::<NaiveDate>()
            .map_err(|e| format!("`day` {text:?} is not a date (YYYY-MM-DD): {e}"));
    }
    if array.is_null(i) {
        return Err("`day` is null".to_string());
    }
    let days = array.as_primitive::<Date32Type>().value(i);
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(chrono::Duration::days(i64::from(days))))
        .ok_or_else(|| format!("`day` {days} (days since 1970-01-01) is out of range"))
}

/// Hand each row of the Parquet read summary `input` (the file `path`, or its fetched bytes)
/// to `each` with its 1-based row number: the row as `check` makes it of a [`SummaryRow`]
/// (the caller's check of what its values mean), or why it is malformed. Columns are found by
/// name in any order; other columns are not decoded. A missing column, or one of another
/// type, is an error naming it, and no row is read. `check` is a type parameter, not a
/// closure behind a pointer, so that the row is built where the check takes it: passed on
/// through another call, a row cost a hundred instructions more (callgrind).
pub fn read_summary<T, C: Fn(SummaryRow) -> Result<T, String>>(
    path: &Path,
    input: ParquetInput,
    check: C,
    each: &mut dyn FnMut(u64, Result<T, String>),
) -> Result<(), ReadError> {
    match input {
        ParquetInput::File(f) => read_summary_from(path, f, &check, each),
        ParquetInput::Bytes(b) => read_summary_from(path, b, &check, each),
    }
}

/// A Parquet file's bytes: a local file, or a fetched object read whole (a summary is small).
pub enum ParquetInput {
    File(File),
    Bytes(bytes::Bytes),
}

fn read_summary_from<R: ChunkReader + 'static, T, C: Fn(SummaryRow) -> Result<T, String>>(
    path: &Path,
    input: R,
    check: &C,
    each: &mut dyn FnMut(u64, Result<T, String>),
) -> Result<(), ReadError> {
    catch_unwind(AssertUnwindSafe(|| {
        read_summary_unguarded(path, input, check, each)
    }))
    .unwrap_or_else(|_| Err(invalid(path, "the Parquet summary is damaged")))
}

fn read_summary_unguarded<R: ChunkReader + 'static, T, C: Fn(SummaryRow) -> Result<T, String>>(
    path: &Path,
    input: R,
    check: &C,
    each: &mut dyn FnMut(u64, Result<T, String>),
) -> Result<(), ReadError> {
    let meta = ArrowReaderMetadata::load(&input, Default::default())
        .map_err(|e| invalid(path, format!("not a readable Parquet file: {e}")))?;
    let schema = meta.schema().clone();
    let mut roots = Vec::new();
    for name in COLUMNS {
        let (i, field) = schema.column_with_name(name).ok_or_else(|| {
            invalid(
                path,
                format!(
                    "no column `{name}` (a read summary has {})",
                    COLUMNS.join(", ")
                ),
            )
        })?;
        let t = field.data_type();
        summary_column_fits(name, t)
            .map_err(|want| invalid(path, format!("column `{name}` is {t}, expected {want}")))?;
        roots.push(i);
    }
    let mask = ProjectionMask::roots(meta.parquet_schema(), roots);
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(input, meta)
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| invalid(path, e.to_string()))?;
    let mut number = 0u64;
    for batch in reader {
        let batch = batch.map_err(|e| invalid(path, e.to_string()))?;
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| invalid(path, format!("a batch has no column `{name}`")))
        };
        let strings = |name: &str| {
            column(name).and_then(|c| {
                Strings::of(c).ok_or_else(|| invalid(path, format!("column `{name}` changed type")))
            })
        };
        let day = column("day")?;
        let day_text = string_type(day.data_type())
            .then(|| strings("day"))
            .transpose()?;
        let consumer = strings("consumer")?;
        let dataset = strings("dataset")?;
        let contract = strings("contract")?;
        let first_at = strings("first_at")?;
        let last_at = strings("last_at")?;
        let reads = column("reads")?;
        let registered = column("registered")?;
        let registered = registered
            .as_boolean_opt()
            .ok_or_else(|| invalid(path, "column `registered` changed type".to_string()))?;
        for i in 0..batch.num_rows() {
            number += 1;
            let row = (|| {
                let text = |s: &Strings<'_>, name: &str| {
                    s.get(i)
                        .map(str::to_string)
                        .ok_or_else(|| format!("`{name}` is null"))
                };
                let day = summary_day(day.as_ref(), &day_text, i)?;
                let reads = integer(reads.as_ref(), i).ok_or("`reads` is null")?;
                let reads = u64::try_from(reads)
                    .map_err(|_| format!("`reads` is {reads}: a row counts at least one read"))?;
                if registered.is_null(i) {
                    return Err("`registered` is null".to_string());
                }
                check(SummaryRow {
                    day,
                    consumer: text(&consumer, "consumer")?,
                    dataset: text(&dataset, "dataset")?,
                    contract: text(&contract, "contract")?,
                    reads,
                    first_at: text(&first_at, "first_at")?,
                    last_at: text(&last_at, "last_at")?,
                    registered: registered.value(i),
                })
            })();
            each(number, row);
        }
    }
    Ok(())
}
