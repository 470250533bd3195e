//! A Parquet log read by the scanner crate alone, into a plain count: row groups in parallel
//! give what the rows say one by one, in row order, whatever the column layouts.

use std::sync::Arc;

use arrow_array::types::{Int32Type, TimestampMillisecondType};
use arrow_array::{ArrayRef, DictionaryArray, PrimitiveArray, RecordBatch, StringArray};

use super::{scan_parquet, ParquetLog};
use crate::reads::blocks::Accumulator;
use crate::reads::fields::Mapping;
use crate::reads::tally::Tally;

/// Row `i` of the log: (milliseconds, consumer or a null, dataset, contract).
fn row(i: usize) -> (i64, Option<String>, &'static str, String) {
    let consumer = (i % 7 != 3).then(|| format!("c{}", i % 4));
    let dataset = if i.is_multiple_of(3) {
        "rivers"
    } else {
        "roads"
    };
    (
        1_790_000_000_000 + i as i64 * 61_000,
        consumer,
        dataset,
        format!("1.{}.0", i % 2),
    )
}

#[test]
fn row_groups_in_parallel_fold_what_the_rows_say_in_row_order() {
    let rows: Vec<_> = (0..23).map(row).collect();
    // `at` a timestamp in milliseconds, `dataset` dictionary-encoded, `consumer` with nulls,
    // and a column the reader never decodes; row groups of five rows.
    let at: ArrayRef = Arc::new(PrimitiveArray::<TimestampMillisecondType>::from(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
    ));
    let consumer: ArrayRef = Arc::new(StringArray::from(
        rows.iter().map(|r| r.1.clone()).collect::<Vec<_>>(),
    ));
    let dataset: ArrayRef = Arc::new(
        rows.iter()
            .map(|r| r.2)
            .collect::<DictionaryArray<Int32Type>>(),
    );
    let contract: ArrayRef = Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| r.3.clone()),
    ));
    let extra: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|_| "x")));
    let batch = RecordBatch::try_from_iter([
        ("extra", extra),
        ("contract", contract),
        ("dataset", dataset),
        ("at", at),
        ("consumer", consumer),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.parquet");
    let props = parquet::file::properties::WriterProperties::builder()
        .set_max_row_group_row_count(Some(5))
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();

    // What the rows say, worked out from them: the reads of roads by contract, and the rows
    // without a consumer (1-based), each malformed whatever its dataset.
    let mut want = Tally::for_request(&vec!["roads".to_string()]);
    want.lines = rows.len() as u64;
    let mut want_bad = Vec::new();
    for (i, (_, consumer, dataset, contract)) in rows.iter().enumerate() {
        match consumer {
            None => {
                want.malformed += 1;
                want_bad.push((i as u64 + 1, "`consumer` is null".to_string()));
            }
            Some(_) if *dataset == "roads" => {
                *want
                    .reads
                    .entry((0, contract.as_bytes().to_vec()))
                    .or_default() += 1;
            }
            Some(_) => {}
        }
    }
    assert!(want_bad.len() >= 2 && want.reads.len() == 2, "{want:?}");

    let mapping = Mapping::default();
    let req = vec!["roads".to_string()];
    let mut got = Tally::for_request(&req);
    let mut bad = Vec::new();
    scan_parquet(
        &path,
        &req,
        &mut got,
        &mut |m| bad.push((m.line, m.reason.clone())),
        &mapping,
    )
    .unwrap();
    assert_eq!(got, want);
    assert_eq!(bad, want_bad);

    // A row group at a time: every row, numbered from 1 across the groups.
    let log = ParquetLog::open(&path, &mapping).unwrap();
    assert_eq!(log.row_groups(), 5);
    let mut numbers = Vec::new();
    for g in 0..log.row_groups() {
        log.read_group(&path, g, &mut |n, r| {
            let (ms, consumer, dataset, contract) = &rows[n as usize - 1];
            match r {
                Ok(r) => {
                    let at = r.at.instant().unwrap().timestamp_millis();
                    assert_eq!(at, *ms);
                    assert_eq!(Some(r.consumer), consumer.as_deref());
                    assert_eq!((r.dataset, r.contract), (*dataset, contract.as_str()));
                }
                Err(reason) => {
                    assert!(consumer.is_none(), "row {n}: {reason}");
                }
            }
            numbers.push(n);
        })
        .unwrap();
    }
    assert_eq!(numbers, (1..=rows.len() as u64).collect::<Vec<_>>());
}

#[test]
fn a_missing_column_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.parquet");
    let strings = |v: &str| Arc::new(StringArray::from_iter_values([v])) as ArrayRef;
    let batch = RecordBatch::try_from_iter([
        ("at", strings("2026-11-28T03:00:00Z")),
        ("consumer", strings("a")),
        ("contract", strings("1.0.0")),
    ])
    .unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let e = ParquetLog::open(&path, &Mapping::default())
        .err()
        .expect("no `dataset` column");
    assert_eq!(e.path, path);
    assert!(e.source.to_string().contains("no column `dataset`"), "{e}");
}
