//! The `match` templates of an access-log source tried on a sample of its newest requests,
//! for `check`: a template with one wrong segment matches nothing, and every read it should
//! have made silently becomes an "unmatched" request. Only requests that would be reads but
//! for their path are tried (a GET or HEAD of an object that succeeded), so listings and
//! failures do not count against a template.

use std::collections::VecDeque;
use std::io::BufRead;

use super::{AccessError, AccessLog, KeptMatches, NotReadReason, Parsed};

/// What the templates of a source made of a sample of its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSample {
    /// Requests tried: the newest ones that would be reads but for their path.
    pub requests: u64,
    /// Each template as written, with the number of those requests it was the first to
    /// match.
    pub matched: Vec<(String, u64)>,
    /// The path of a tried request no template matched, if any did not.
    pub unmatched_example: Option<String>,
}

impl AccessLog {
    /// Try the templates on the newest `keep` requests of `input` that would be reads but
    /// for their path. Lines the format cannot read are passed over (the scan reports them).
    pub fn sample_templates<R: BufRead>(
        &self,
        input: R,
        keep: usize,
    ) -> Result<TemplateSample, AccessError> {
        let mut newest: VecDeque<String> = VecDeque::with_capacity(keep.min(4096));
        let mut kept = KeptMatches::default();
        self.each_line(input, |_, _, parsed| {
            let Ok(Parsed::Request(req)) = parsed else {
                return;
            };
            // The rule of the scan itself: a read, or no read only for its path.
            let read_but_for_path = matches!(
                self.judge(&req, &mut kept),
                Ok(_) | Err(NotReadReason::Unmatched)
            );
            if !read_but_for_path || keep == 0 {
                return;
            }
            if newest.len() == keep {
                newest.pop_front();
            }
            newest.push_back(req.path.into_owned());
        })?;
        let mut matched: Vec<(String, u64)> =
            self.templates.iter().map(|t| (t.to_string(), 0)).collect();
        let mut unmatched_example = None;
        for path in &newest {
            match self
                .templates
                .iter()
                .position(|t| t.matches(path).is_some())
            {
                Some(i) => matched[i].1 += 1,
                None => {
                    unmatched_example.get_or_insert_with(|| path.clone());
                }
            }
        }
        Ok(TemplateSample {
            requests: newest.len() as u64,
            matched,
            unmatched_example,
        })
    }
}

#[cfg(test)]
mod tests {
    /// A line in the field order of AWS's S3 server access log format.
    fn line(key: &str, op: &str, status: u16) -> String {
        let method = if op.contains("HEAD") { "HEAD" } else { "GET" };
        format!(
            "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be open-data \
             [27/Nov/2026:10:00:00 +0000] 2001:db8::7 arn:aws:iam::1:user/a 3E57427F3EXAMPLE \
             {op} {key} \"{method} /{key} HTTP/1.1\" {status} - 10 104857600 70 10 \"-\" \
             \"GDAL/3.8.4\" - s9lzHYrFp76ZVxRcpX9= SigV4 ECDHE-RSA-AES128-GCM-SHA256 \
             AuthHeader open-data.s3.eu-west-1.amazonaws.com TLSv1.3 - -\n"
        )
    }

    #[test]
    fn each_template_counts_the_newest_reads_it_would_make() {
        let log = super::super::tests::s3_log(&[
            "datasets/{dataset}/v{contract}/*",
            "legacy/{dataset}/{contract}/*",
        ]);
        let mut text = String::new();
        // The oldest request falls out of a sample of three.
        text += &line("legacy/roads/1.0.0/a.parquet", "REST.GET.OBJECT", 200);
        text += &line("datasets/roads/v1.1.0/a.parquet", "REST.GET.OBJECT", 200);
        // A listing and a refused GET are not tried.
        text += &line("-", "REST.GET.BUCKET", 200);
        text += &line("README.md", "REST.GET.OBJECT", 403);
        text += &line("datasets/roads/v2.0.0/a.parquet", "REST.HEAD.OBJECT", 200);
        text += &line("README.md", "REST.GET.OBJECT", 200);
        let sample = log.sample_templates(text.as_bytes(), 3).unwrap();
        assert_eq!(sample.requests, 3);
        assert_eq!(
            sample.matched,
            vec![
                ("datasets/{dataset}/v{contract}/*".to_string(), 2),
                ("legacy/{dataset}/{contract}/*".to_string(), 0)
            ]
        );
        assert_eq!(sample.unmatched_example.as_deref(), Some("README.md"));
    }
}
