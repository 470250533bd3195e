//! The one enum of what a consumption source is written as: the logs of reads (JSON Lines,
//! CSV, Parquet, the read summary) and the platforms' access logs. A `[[consumption.source]]`
//! names it by [`LogFormat::as_str`]; every reader dispatches on it.

use std::fmt;

/// What a log file is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LogFormat {
    /// JSON Lines: one object per line.
    Jsonl,
    /// CSV with a header naming the columns.
    Csv,
    /// Parquet, one read per row.
    Parquet,
    /// A read summary (rows of day, consumer, dataset, contract, reads, first and last read).
    Summary,
    /// Amazon S3 server access logs.
    S3Access,
    /// CloudFront standard logs (tab-separated, `#Fields` header).
    Cloudfront,
    /// The Apache/nginx combined log format, optionally with fields appended.
    Combined,
    /// PostgreSQL server logs with pgaudit's `AUDIT:` entries.
    Pgaudit,
    /// Snowflake's `ACCESS_HISTORY` view exported as JSON Lines or CSV.
    SnowflakeAccessHistory,
    /// BigQuery's Data Access audit log (Cloud Logging entries) as JSON Lines.
    BigqueryAudit,
    /// Databricks' `system.access.column_lineage` exported as CSV.
    DatabricksColumnLineage,
}

impl LogFormat {
    pub const ALL: [LogFormat; 11] = [
        LogFormat::Jsonl,
        LogFormat::Csv,
        LogFormat::Parquet,
        LogFormat::Summary,
        LogFormat::S3Access,
        LogFormat::Cloudfront,
        LogFormat::Combined,
        LogFormat::Pgaudit,
        LogFormat::SnowflakeAccessHistory,
        LogFormat::BigqueryAudit,
        LogFormat::DatabricksColumnLineage,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::Jsonl => "jsonl",
            LogFormat::Csv => "csv",
            LogFormat::Parquet => "parquet",
            LogFormat::Summary => "summary",
            LogFormat::S3Access => "s3-access",
            LogFormat::Cloudfront => "cloudfront",
            LogFormat::Combined => "combined",
            LogFormat::Pgaudit => "pgaudit",
            LogFormat::SnowflakeAccessHistory => "snowflake-access-history",
            LogFormat::BigqueryAudit => "bigquery-audit",
            LogFormat::DatabricksColumnLineage => "databricks-column-lineage",
        }
    }

    pub fn parse(s: &str) -> Option<LogFormat> {
        LogFormat::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// A platform's access log (a request per line or row, mapped to reads by `match`
    /// templates), as opposed to a log of reads.
    pub fn is_access_log(self) -> bool {
        !matches!(
            self,
            LogFormat::Jsonl | LogFormat::Csv | LogFormat::Parquet | LogFormat::Summary
        )
    }

    /// The field an access log's principal is read from when the source names none; `None`
    /// for a log of reads, whose consumer is a mapped field.
    pub fn default_principal(self) -> Option<&'static str> {
        match self {
            LogFormat::S3Access => Some("requester"),
            LogFormat::Cloudfront => Some("c-ip"),
            LogFormat::Combined => Some("remote_user"),
            LogFormat::Pgaudit => Some("user_name"),
            LogFormat::SnowflakeAccessHistory => Some("user_name"),
            LogFormat::BigqueryAudit => Some("protoPayload.authenticationInfo.principalEmail"),
            LogFormat::DatabricksColumnLineage => Some("created_by"),
            LogFormat::Jsonl | LogFormat::Csv | LogFormat::Parquet | LogFormat::Summary => None,
        }
    }

    /// The format a file name implies (`.jsonl`, `.ndjson`, `.csv`, each optionally `.gz`,
    /// and `.parquet`); `None` when it implies none. Access logs have no extension of their
    /// own, so their sources name the format.
    pub fn from_name(name: &str) -> Option<LogFormat> {
        let (gzipped, plain) = match name.strip_suffix(".gz") {
            Some(plain) => (true, plain),
            None => (false, name),
        };
        let ext = plain.rsplit_once('.').map(|(_, e)| e)?;
        match ext {
            "jsonl" | "ndjson" => Some(LogFormat::Jsonl),
            "csv" => Some(LogFormat::Csv),
            // A Parquet file compresses its own pages; a gzipped one is not a Parquet file.
            "parquet" if !gzipped => Some(LogFormat::Parquet),
            _ => None,
        }
    }
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_from_names() {
        assert_eq!(LogFormat::from_name("a.jsonl.gz"), Some(LogFormat::Jsonl));
        assert_eq!(
            LogFormat::from_name("logs/*.ndjson"),
            Some(LogFormat::Jsonl)
        );
        assert_eq!(LogFormat::from_name("a.csv"), Some(LogFormat::Csv));
        assert_eq!(LogFormat::from_name("a.parquet"), Some(LogFormat::Parquet));
        assert_eq!(LogFormat::from_name("a.parquet.gz"), None);
        assert_eq!(LogFormat::from_name("consumption/*"), None);
        for f in LogFormat::ALL {
            assert_eq!(LogFormat::parse(f.as_str()), Some(f));
        }
    }
}
