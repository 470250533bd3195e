//! `match` templates: which dataset and version a requested path or key is.
//!
//! A template is a path of `/`-separated segments. A segment is `**` (any number of
//! segments, none included) or text with `{dataset}` and `{contract}` captures and `*`
//! wildcards, neither of which crosses a `/`: `"/datasets/{dataset}/v{contract}/**"`,
//! `"{dataset}/{contract}/*.parquet"`. One leading `/` is ignored on both sides, so that one
//! template serves an S3 key (`datasets/roads/...`) and an HTTP path (`/datasets/roads/...`).
//! A capture is never empty and takes as much of its segment as it can while the rest of the
//! template still matches (`{dataset}-{contract}.parquet` reads `road-network-2.0.0.parquet`
//! as `road-network` and `2.0.0`); `*` may be empty. The path is matched decoded.

use std::fmt;

/// A template that could not be read: the text, the 1-based column (in characters) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`match` template {template:?}, column {column}: {reason}")]
pub struct TemplateError {
    pub template: String,
    pub column: usize,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    Dataset,
    Contract,
    /// A line (major version) number: the read is of the newest version of that line valid
    /// on its day (a view per line, `roads_v1`).
    Line,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Text(String),
    Star,
    Capture(Capture),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    AnyDepth,
    Parts(Vec<Part>),
}

/// One compiled `match` template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    text: String,
    segments: Vec<Segment>,
    dataset: bool,
    contract: bool,
    line: bool,
}

/// What a template took from a path: the dataset and version, where it names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Captures<'p> {
    pub dataset: Option<&'p str>,
    pub contract: Option<&'p str>,
    /// The digits of a `{line}` capture.
    pub line: Option<&'p str>,
}

impl Template {
    /// Read a template; the error names the column of the offending text.
    pub fn parse(text: &str) -> Result<Template, TemplateError> {
        let err = |byte: usize, reason: &str| TemplateError {
            template: text.to_string(),
            column: text[..byte.min(text.len())].chars().count() + 1,
            reason: reason.to_string(),
        };
        if text.trim().is_empty() {
            return Err(err(0, "a template is empty"));
        }
        let body_start = usize::from(text.starts_with('/'));
        let mut segments = Vec::new();
        let (mut dataset, mut contract, mut line) = (false, false, false);
        let mut offset = body_start;
        for seg in text[body_start..].split('/') {
            if seg == "**" {
                segments.push(Segment::AnyDepth);
                offset += seg.len() + 1;
                continue;
            }
            let mut parts = Vec::new();
            let mut text_part = String::new();
            let mut chars = seg.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                let at = offset + i;
                match c {
                    '*' => {
                        if chars.peek().is_some_and(|&(_, n)| n == '*') {
                            return Err(err(at, "`**` must be a whole segment"));
                        }
                        if !text_part.is_empty() {
                            parts.push(Part::Text(std::mem::take(&mut text_part)));
                        }
                        parts.push(Part::Star);
                    }
                    '{' => {
                        let rest = &seg[i + 1..];
                        let Some(close) = rest.find('}') else {
                            return Err(err(at, "a `{` is not closed"));
                        };
                        let name = &rest[..close];
                        let capture = match name {
                            "dataset" => Capture::Dataset,
                            "contract" => Capture::Contract,
                            "line" => Capture::Line,
                            _ => {
                                return Err(err(
                                    at,
                                    &format!(
                                        "`{{{name}}}` is not a placeholder (they are {{dataset}}, {{contract}} and {{line}})"
                                    ),
                                ))
                            }
                        };
                        let seen = match capture {
                            Capture::Dataset => &mut dataset,
                            Capture::Contract => &mut contract,
                            Capture::Line => &mut line,
                        };
                        if *seen {
                            return Err(err(at, &format!("`{{{name}}}` is used twice")));
                        }
                        *seen = true;
                        if !text_part.is_empty() {
                            parts.push(Part::Text(std::mem::take(&mut text_part)));
                        }
                        parts.push(Part::Capture(capture));
                        // Skip the name and the closing brace.
                        for _ in 0..=close {
                            chars.next();
                        }
                    }
                    '}' => return Err(err(at, "a `}` is not opened")),
                    c => text_part.push(c),
                }
            }
            if !text_part.is_empty() {
                parts.push(Part::Text(text_part));
            }
            segments.push(Segment::Parts(parts));
            offset += seg.len() + 1;
        }
        if contract && line {
            return Err(err(
                0,
                "{contract} and {line} both say which version: use one",
            ));
        }
        Ok(Template {
            text: text.to_string(),
            segments,
            dataset,
            contract,
            line,
        })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the template captures the dataset (else the source must name it).
    pub fn captures_dataset(&self) -> bool {
        self.dataset
    }

    /// Whether the template captures the version, or the line it is the newest of (else
    /// the source must name it).
    pub fn captures_contract(&self) -> bool {
        self.contract || self.line
    }

    /// Whether the template captures a line (`{line}`), resolved to a version per day.
    pub fn captures_line(&self) -> bool {
        self.line
    }

    /// What the template takes from `path` (decoded), or `None` when it does not match.
    pub fn matches<'p>(&self, path: &'p str) -> Option<Captures<'p>> {
        let path = path.strip_prefix('/').unwrap_or(path);
        let mut caps = Captures::default();
        match_segments(&self.segments, Some(path), &mut caps).then_some(caps)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// `rest` holds the segments not yet matched, joined by `/`; `None` once none is left (so
/// that an empty last segment, as in `a/`, is still one to match).
fn match_segments<'p>(
    segments: &[Segment],
    rest: Option<&'p str>,
    caps: &mut Captures<'p>,
) -> bool {
    let Some((first, more)) = segments.split_first() else {
        return rest.is_none();
    };
    match first {
        Segment::AnyDepth => {
            if match_segments(more, rest, caps) {
                return true;
            }
            let Some(r) = rest else { return false };
            for (i, _) in r.match_indices('/') {
                if match_segments(more, Some(&r[i + 1..]), caps) {
                    return true;
                }
            }
            match_segments(more, None, caps)
        }
        Segment::Parts(parts) => {
            let Some(r) = rest else { return false };
            let (segment, next) = match r.find('/') {
                Some(i) => (&r[..i], Some(&r[i + 1..])),
                None => (r, None),
            };
            let saved = *caps;
            if match_parts(parts, segment, caps) && match_segments(more, next, caps) {
                return true;
            }
            *caps = saved;
            false
        }
    }
}

/// Whether `parts` match all of `s`; captures are longest first, so backtracking tries the
/// longer value before the shorter.
fn match_parts<'p>(parts: &[Part], s: &'p str, caps: &mut Captures<'p>) -> bool {
    let Some((first, more)) = parts.split_first() else {
        return s.is_empty();
    };
    match first {
        Part::Text(t) => s
            .strip_prefix(t.as_str())
            .is_some_and(|r| match_parts(more, r, caps)),
        Part::Star | Part::Capture(_) => {
            let least = usize::from(matches!(first, Part::Capture(_)));
            let ends = s
                .char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(s.len()))
                .filter(|&e| e >= least)
                .collect::<Vec<_>>();
            for &end in ends.iter().rev() {
                let saved = *caps;
                if let Part::Capture(c) = first {
                    match c {
                        Capture::Dataset => caps.dataset = Some(&s[..end]),
                        Capture::Contract => caps.contract = Some(&s[..end]),
                        // A line is a number: `roads_v1_old` is no line.
                        Capture::Line if s[..end].bytes().all(|b| b.is_ascii_digit()) => {
                            caps.line = Some(&s[..end])
                        }
                        Capture::Line => continue,
                    }
                }
                if match_parts(more, &s[end..], caps) {
                    return true;
                }
                *caps = saved;
            }
            false
        }
    }
}

/// Several templates, tried in order: the first that matches wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Templates(Vec<Template>);

impl From<Vec<Template>> for Templates {
    fn from(templates: Vec<Template>) -> Templates {
        Templates(templates)
    }
}

impl Templates {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Template> {
        self.0.iter()
    }

    /// The captures of the first template that matches `path`.
    pub fn first_match<'p>(&self, path: &'p str) -> Option<Captures<'p>> {
        self.0.iter().find_map(|t| t.matches(path))
    }

    /// [`Templates::first_match`], its answer for each path kept in `kept`: a log names a few
    /// tables or prefixes again and again, and matching a path against the templates was a
    /// tenth of a warehouse scan. A match depends on the path's text alone, so the kept
    /// answer is where each capture lies in it.
    pub fn first_match_kept<'p>(
        &self,
        path: &'p str,
        kept: &mut KeptMatches,
    ) -> Option<Captures<'p>> {
        if let Some(answer) = kept.answers.get(path) {
            let at = |r: &Option<(usize, usize)>| r.and_then(|(a, b)| path.get(a..b));
            return answer.map(|[d, c, l]| Captures {
                dataset: at(&d),
                contract: at(&c),
                line: at(&l),
            });
        }
        let caps = self.first_match(path);
        if kept.answers.len() >= KEPT_PATHS {
            kept.answers.clear();
        }
        let base = path.as_ptr() as usize;
        // Each capture is a slice of `path`: its place is its distance from the start.
        let place = |c: Option<&str>| {
            c.map(|c| {
                (
                    c.as_ptr() as usize - base,
                    c.as_ptr() as usize - base + c.len(),
                )
            })
        };
        let answer = caps
            .as_ref()
            .map(|c| [place(c.dataset), place(c.contract), place(c.line)]);
        kept.answers.insert(path.to_string(), answer);
        caps
    }
}

/// How many paths [`KeptMatches`] holds before it starts again: enough for every table of a
/// warehouse, bounded for a log of unique keys.
const KEPT_PATHS: usize = 4096;

/// The answers of [`Templates::first_match_kept`] for the paths seen: for each, where its
/// dataset, contract and line captures lie, or `None` when no template matches it.
#[derive(Debug, Default)]
pub struct KeptMatches {
    answers: crate::reads::hash::NameMap<Option<[Place; 3]>>,
}

/// Where a capture lies in its path (start and end), if the template has it.
type Place = Option<(usize, usize)>;

#[cfg(test)]
mod tests {
    use super::*;

    fn caps<'p>(t: &str, path: &'p str) -> Option<(Option<&'p str>, Option<&'p str>)> {
        Template::parse(t)
            .unwrap()
            .matches(path)
            .map(|c| (c.dataset, c.contract))
    }

    /// What `caps` gives for dataset `roads` at `version`.
    fn roads(version: &str) -> Option<(Option<&str>, Option<&str>)> {
        Some((Some("roads"), Some(version)))
    }

    #[test]
    fn a_kept_answer_is_the_answer_of_the_templates() {
        let templates: Templates = vec![
            Template::parse("/datasets/{dataset}/v{contract}/**").unwrap(),
            Template::parse("gis/public/{dataset}_v{line}").unwrap(),
        ]
        .into();
        fn described(c: Option<Captures<'_>>) -> Option<[Option<String>; 3]> {
            let own = |s: Option<&str>| s.map(str::to_string);
            c.map(|c| [own(c.dataset), own(c.contract), own(c.line)])
        }
        let paths = [
            "/datasets/roads/v2.0.0/part-0.parquet",
            "gis/public/roads_v1",
            "gis/public/roads_v12",
            "gis/public/towns",
            "/datasets/rivers/v1.0.0/a/b/c.parquet",
        ];
        let mut kept = KeptMatches::default();
        // Each path asked three times: the first answer is worked out, the others kept; and
        // past the bound, where the kept answers start again.
        for round in 0..3 {
            for p in paths {
                let got = described(templates.first_match_kept(p, &mut kept));
                assert_eq!(
                    got,
                    described(templates.first_match(p)),
                    "{p}, round {round}"
                );
            }
        }
        for n in 0..KEPT_PATHS + 10 {
            let p = format!("gis/public/t{n}_v{}", n % 7);
            let got = described(templates.first_match_kept(&p, &mut kept));
            let line = (n % 7).to_string();
            assert_eq!(got, Some([Some(format!("t{n}")), None, Some(line)]));
        }
        assert!(kept.answers.len() <= KEPT_PATHS);
        let got = described(templates.first_match_kept(paths[0], &mut kept));
        assert_eq!(got, described(templates.first_match(paths[0])));
    }

    #[test]
    fn a_path_template_takes_dataset_and_version() {
        let t = "/datasets/{dataset}/v{contract}/**";
        assert_eq!(
            caps(t, "/datasets/roads/v2.0.0/part-0.parquet"),
            roads("2.0.0")
        );
        assert_eq!(
            caps(t, "/datasets/roads/v2.0.0/2024/01/part-0.parquet"),
            roads("2.0.0")
        );
        // `**` may be no segment at all, and the leading slash is optional on both sides.
        assert_eq!(caps(t, "datasets/roads/v2.0.0"), roads("2.0.0"));
        assert_eq!(caps(t, "/datasets/roads/2.0.0/x.parquet"), None);
        assert_eq!(caps(t, "/datasets/roads"), None);
        assert_eq!(caps(t, "/other/roads/v2.0.0/x"), None);
    }

    #[test]
    fn a_key_template_with_a_wildcard_stays_in_its_segment() {
        let t = "{dataset}/{contract}/*.parquet";
        assert_eq!(caps(t, "roads/2.0.0/part-0.parquet"), roads("2.0.0"));
        assert_eq!(caps(t, "roads/2.0.0/.parquet"), roads("2.0.0"));
        assert_eq!(caps(t, "roads/2.0.0/a/b.parquet"), None);
        assert_eq!(caps(t, "roads/2.0.0/part-0.csv"), None);
        assert_eq!(caps(t, "/roads/2.0.0/x.parquet"), roads("2.0.0"));
    }

    #[test]
    fn captures_take_the_longest_value_that_leaves_a_match() {
        let t = "files/{dataset}-{contract}.parquet";
        assert_eq!(
            caps(t, "files/road-network-2.0.0.parquet"),
            Some((Some("road-network"), Some("2.0.0")))
        );
        // A capture is never empty.
        assert_eq!(caps(t, "files/-2.0.0.parquet"), None);
        assert_eq!(caps("{dataset}/**", "roads"), Some((Some("roads"), None)));
        assert_eq!(caps("{dataset}/**", "/"), None);
    }

    #[test]
    fn any_depth_in_the_middle_backtracks() {
        let t = "**/{dataset}/v{contract}/*.fgb";
        assert_eq!(caps(t, "a/b/c/roads/v1.0.0/x.fgb"), roads("1.0.0"));
        assert_eq!(caps(t, "roads/v1.0.0/x.fgb"), roads("1.0.0"));
        // The nearest fit for the first `v`-segment that leaves the rest matching.
        assert_eq!(caps(t, "vx/v1/roads/v1.0.0/x.fgb"), roads("1.0.0"));
    }

    #[test]
    fn the_first_template_that_matches_wins() {
        let ts = Templates::from(
            [
                "/v/{contract}/{dataset}.parquet",
                "/{dataset}/{contract}/**",
            ]
            .map(|t| Template::parse(t).unwrap())
            .to_vec(),
        );
        let c = ts.first_match("/v/2.0.0/roads.parquet").unwrap();
        assert_eq!((c.dataset, c.contract), (Some("roads"), Some("2.0.0")));
        let c = ts.first_match("/roads/1.0.0/x").unwrap();
        assert_eq!((c.dataset, c.contract), (Some("roads"), Some("1.0.0")));
        assert!(ts.first_match("/roads").is_none());
    }

    #[test]
    fn bad_templates_name_the_column() {
        let e = Template::parse("/datasets/{name}/**").unwrap_err();
        assert_eq!(e.column, 11, "{e}");
        assert!(e.reason.contains("{name}"), "{e}");
        let e = Template::parse("/a/b**").unwrap_err();
        assert_eq!(e.column, 5, "{e}");
        let e = Template::parse("{dataset}/{dataset}").unwrap_err();
        assert_eq!(e.column, 11, "{e}");
        assert!(Template::parse("{dataset").is_err());
        assert!(Template::parse("a}").is_err());
        assert!(Template::parse("").is_err());
    }
}
