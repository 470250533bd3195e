//! CSV logs: a header naming the columns, then one read per record.

use std::io::BufReader;
use std::path::Path;

use super::{fold, LogError, Malformed, Scan, ScanRequest, BUFFER};

pub(super) fn scan_csv<R: std::io::Read>(
    path: &Path,
    file: R,
    req: &ScanRequest,
    scan: &mut Scan,
    on_malformed: &mut dyn FnMut(&Malformed),
) -> Result<(), LogError> {
    let io = |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        // A row with a missing or extra field is reported as malformed, not a fatal error.
        .flexible(true)
        .from_reader(BufReader::with_capacity(BUFFER, file));
    let headers = match reader.byte_headers() {
        Ok(h) => h.clone(),
        Err(e) => return csv_failure(path, e, scan, on_malformed, io),
    };
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim_ascii() == name.as_bytes())
    };
    let (Some(at), Some(consumer), Some(dataset), Some(contract)) =
        (col("at"), col("consumer"), col("dataset"), col("contract"))
    else {
        scan.stats.malformed += 1;
        on_malformed(&Malformed {
            file: path.to_path_buf(),
            line: 1,
            reason: "the header must name the columns at, consumer, dataset and contract; \
                     the file is skipped"
                .to_string(),
        });
        return Ok(());
    };
    scan.stats.lines += 1;
    let mut record = csv::ByteRecord::new();
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                if let csv::ErrorKind::Io(_) = e.kind() {
                    return csv_failure(path, e, scan, on_malformed, io);
                }
                scan.stats.lines += 1;
                scan.stats.malformed += 1;
                on_malformed(&Malformed {
                    file: path.to_path_buf(),
                    line: e.position().map_or(0, |p| p.line()),
                    reason: e.to_string(),
                });
                continue;
            }
        }
        scan.stats.lines += 1;
        let number = record.position().map_or(0, |p| p.line());
        let field = |i: usize| -> Result<&str, String> {
            let raw = record.get(i).ok_or_else(|| {
                format!("expected {} fields, found {}", headers.len(), record.len())
            })?;
            std::str::from_utf8(raw).map_err(|_| "a field is not UTF-8".to_string())
        };
        let result = (|| {
            let ds = field(dataset)?;
            if !req.datasets.contains(ds) {
                return Ok(());
            }
            fold(
                scan,
                req,
                field(at)?,
                field(consumer)?,
                ds,
                field(contract)?,
            )
        })();
        if let Err(reason) = result {
            scan.stats.malformed += 1;
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line: number,
                reason,
            });
        }
    }
    Ok(())
}

/// A CSV error before or between records: I/O is the environment's, anything else makes the
/// file unusable and is reported as malformed at its position.
fn csv_failure(
    path: &Path,
    e: csv::Error,
    scan: &mut Scan,
    on_malformed: &mut dyn FnMut(&Malformed),
    io: impl Fn(std::io::Error) -> LogError,
) -> Result<(), LogError> {
    let line = e.position().map_or(1, |p| p.line());
    match e.into_kind() {
        csv::ErrorKind::Io(source) => Err(io(source)),
        other => {
            scan.stats.malformed += 1;
            on_malformed(&Malformed {
                file: path.to_path_buf(),
                line,
                reason: format!("{other:?}"),
            });
            Ok(())
        }
    }
}
