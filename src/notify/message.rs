//! A notice as text: subject and plain-text body rendered with minijinja from
//! `notice.subject.j2` and `notice.txt.j2`. The built-in templates are embedded in the binary;
//! a store overrides either by keeping a file of the same name in its `templates/` folder.
//! Undefined variables are errors, so a typo in a store's template fails the run before any
//! mail is sent instead of mailing a blank; the error names the template, its line and the
//! expression that failed.
//!
//! A store's template is code run by a cron job, so it runs on a budget: [`FUEL`] units of
//! minijinja's fuel per render (one per instruction, and one per 64 bytes of every string
//! made, so a loop or a 100 MB string stops early), and at most [`MAX_BYTES`] of output,
//! refused as it is written.

use minijinja::{context, Environment, UndefinedBehavior};
use serde::Serialize;

use super::plan::Notice;
use crate::model::history::ChangeRecord;
use crate::model::impact::touches;
use crate::model::{Change, Kind};
use crate::render::delta::{delta, words};
use crate::render::html::dataset_page;

pub const SUBJECT: &str = "notice.subject.j2";
pub const BODY: &str = "notice.txt.j2";
const BUILTIN_SUBJECT: &str = include_str!("../../templates/notice.subject.j2");
const BUILTIN_BODY: &str = include_str!("../../templates/notice.txt.j2");

/// Engine steps one render may take.
pub const FUEL: u64 = 200_000;
/// Bytes one rendered template may produce.
pub const MAX_BYTES: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("template {template}: {message}")]
    Template { template: String, message: String },
    #[error(
        "template {template}: the rendered text passed {MAX_BYTES} bytes and was refused \
         (a notice is a short email)"
    )]
    TooLarge { template: String },
    #[error("template {SUBJECT} rendered {0:?}: a subject must be one non-empty line")]
    Subject(String),
}

/// The two templates, built-in or the store's own.
pub struct Templates {
    env: Environment<'static>,
    /// `[notify] registry_url`: where `contracts site` is published.
    registry_url: Option<String>,
}

/// The values behind a breaking change record, read from the two contracts it compares, so
/// the notice can say what changed and not only which clause.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChangeValues {
    pub old: Option<serde_json::Value>,
    pub new: Option<serde_json::Value>,
}

/// One rendered notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
}

/// The breaking change records a notice tells: a consumer that declared what it uses is told
/// only those that touch it (the domain's rule, `model::impact`); one that declared nothing
/// relies on everything and is told every one.
pub fn told<'a>(
    notice: &Notice,
    changes: &'a [(&'a ChangeRecord, ChangeValues)],
) -> Vec<&'a (&'a ChangeRecord, ChangeValues)> {
    changes
        .iter()
        .filter(|(c, v)| {
            let change = Change {
                clause: c.clause.clone(),
                kind: c.kind.unwrap_or(Kind::Fixed),
                old: v.old.clone(),
                new: v.new.clone(),
                direction: c.direction,
                verdict: c.verdict,
            };
            notice
                .uses
                .as_ref()
                .is_none_or(|uses| uses.iter().any(|u| touches(u, &change)))
        })
        .collect()
}

/// A breaking change as a template sees it.
#[derive(Serialize)]
struct ChangeView<'a> {
    clause: &'a str,
    kind: String,
    direction: String,
    from: String,
    to: String,
    rationale: &'a str,
    /// The old and new value in words ("-" when unknown or absent).
    old_value: String,
    new_value: String,
    /// What changed, key by key for a map: "`CNTY_` removed (was float64); ...".
    change: String,
}

impl Templates {
    /// Compile the templates; `subject`/`body` are the store's overrides, if any.
    pub fn new(subject: Option<String>, body: Option<String>) -> Result<Templates, RenderError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // Spans of failing expressions, for the error message, in release builds too.
        env.set_debug(true);
        env.set_fuel(Some(FUEL));
        // Plain text: never HTML-escape a rationale.
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        for (name, source) in [
            (
                SUBJECT,
                subject.unwrap_or_else(|| BUILTIN_SUBJECT.to_string()),
            ),
            (BODY, body.unwrap_or_else(|| BUILTIN_BODY.to_string())),
        ] {
            env.add_template_owned(name, source)
                .map_err(|e| template_error(name, &e))?;
        }
        Ok(Templates {
            env,
            registry_url: None,
        })
    }

    /// Link each notice to its dataset's page of the registry published at `url`.
    pub fn with_registry_url(mut self, url: Option<String>) -> Templates {
        self.registry_url = url.map(|u| u.trim_end_matches('/').to_string());
        self
    }

    /// Render one notice. `changes` are the breaking change records of the new line(s);
    /// `sender` is the `from` mailbox; `lookback_days` says how far back "still reads" looked.
    pub fn render(
        &self,
        notice: &Notice,
        changes: &[&ChangeRecord],
        sender: &str,
        lookback_days: i64,
    ) -> Result<Rendered, RenderError> {
        let bare: Vec<(&ChangeRecord, ChangeValues)> = changes
            .iter()
            .map(|c| (*c, ChangeValues::default()))
            .collect();
        self.render_with_values(notice, &bare, sender, lookback_days)
    }

    /// [`Templates::render`], with each change record's old and new value.
    pub fn render_with_values(
        &self,
        notice: &Notice,
        changes: &[(&ChangeRecord, ChangeValues)],
        sender: &str,
        lookback_days: i64,
    ) -> Result<Rendered, RenderError> {
        let total = changes.len();
        let changes = told(notice, changes);
        let other_changes = total - changes.len();
        let declared = notice.uses.is_some();
        let uses: Vec<String> = notice
            .uses
            .iter()
            .flatten()
            .map(|u| u.to_string())
            .collect();
        let changes: Vec<ChangeView> = changes
            .iter()
            .map(|(c, v)| ChangeView {
                clause: &c.clause,
                kind: c.kind.map_or_else(|| "-".to_string(), |k| k.to_string()),
                direction: c.direction.to_string(),
                from: c.from.clone().unwrap_or_default(),
                to: c.to.clone(),
                rationale: &c.rationale,
                old_value: words(v.old.as_ref()),
                new_value: words(v.new.as_ref()),
                change: if v.old.is_none() && v.new.is_none() {
                    String::new()
                } else {
                    delta(v.old.as_ref(), v.new.as_ref())
                },
            })
            .collect();
        let page_url = self
            .registry_url
            .as_ref()
            .map(|u| format!("{u}/{}", dataset_page(&notice.dataset)));
        let ctx = context! {
            dataset => &notice.dataset,
            consumer => &notice.consumer,
            team => &notice.team,
            line => notice.line,
            milestone => notice.milestone.to_string(),
            recipients => &notice.recipients,
            sunset => notice.sunset.to_string(),
            last_day => notice.sunset.pred_opt().map(|d| d.to_string()),
            days_left => notice.days_left.max(0),
            days_overdue => (-notice.days_left).max(0),
            overdue => notice.days_left <= 0,
            old_version => notice.old_version.to_string(),
            reads_version => notice.reads_version.to_string(),
            new_line => notice.new_line,
            new_version => notice.new_version.to_string(),
            message_id => &notice.message_id,
            affected => !changes.is_empty(),
            declared => declared,
            uses => uses,
            other_changes => other_changes,
            changes => minijinja::value::Serde(&changes),
            sender => sender,
            lookback_days => lookback_days,
            registry_url => &self.registry_url,
            page_url => page_url,
            kind => match &notice.milestone {
                super::plan::Milestone::Published => "published",
                super::plan::Milestone::Waiver(_) => "waiver",
                super::plan::Milestone::Deprecated(..) => "deprecation",
                _ => "countdown",
            },
            opens => notice.opens.map(|d| d.to_string()),
            // The milestones this message serves beside `milestone`: `published` when the
            // countdown tells the window's opening too.
            also => notice.also.iter().map(ToString::to_string).collect::<Vec<_>>(),
            announced => notice.also.contains(&super::plan::Milestone::Published),
            waiver => notice.waiver.as_ref().map(|w| context! {
                id => &w.id,
                clause => &w.clause,
                bound => words(w.bound.as_ref()),
                release => &w.release,
                measured => w.measured.as_ref().map(|m| words(Some(m))),
                granted => w.granted.to_string(),
                until => w.until.to_string(),
                by => &w.by,
                reason => &w.reason,
            }),
            // The day the key may go is the notice's `sunset`; its last promised day is
            // `remove_after`.
            deprecation => notice.deprecation.as_ref().map(|d| context! {
                key => &d.key,
                attribute => &d.attribute,
                reason => &d.reason,
                replacement => &d.replacement,
                remove_after => d.remove_after.to_string(),
                version => d.version.to_string(),
                evidence => d.evidence.as_str(),
                key_last_read => d.key_last_read.map(|t| t.to_rfc3339()),
                // Whether its `uses` names the key too (an observed use may be declared).
                in_uses => notice
                    .uses
                    .as_deref()
                    .is_some_and(|u| crate::consumers::attributes::declares(u, &d.key)),
            }),
        };
        let subject = self.render_one(SUBJECT, &ctx)?;
        let subject = subject.trim().to_string();
        if subject.is_empty() || subject.contains(['\r', '\n']) {
            return Err(RenderError::Subject(subject));
        }
        let body = self.render_one(BODY, &ctx)?;
        Ok(Rendered { subject, body })
    }

    fn render_one(&self, name: &str, ctx: &minijinja::Value) -> Result<String, RenderError> {
        let mut out = Capped {
            bytes: Vec::new(),
            over: false,
        };
        let rendered = self
            .env
            .get_template(name)
            .and_then(|t| t.render_captured_to(ctx, &mut out).map(|_| ()));
        if out.over {
            return Err(RenderError::TooLarge {
                template: name.to_string(),
            });
        }
        rendered.map_err(|e| template_error(name, &e))?;
        String::from_utf8(out.bytes).map_err(|_| RenderError::Template {
            template: name.to_string(),
            message: "rendered text is not UTF-8".to_string(),
        })
    }
}

/// A writer that refuses to grow past [`MAX_BYTES`].
struct Capped {
    bytes: Vec<u8>,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_BYTES {
            self.over = true;
            return Err(std::io::Error::other("rendered text too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// minijinja's error as one line: the line in the template, what went wrong, and the text of
/// the expression that failed (`datset` for a typo), then the rest of its chain.
fn template_error(name: &str, e: &minijinja::Error) -> RenderError {
    use minijinja::ErrorKind;
    let what = match e.kind() {
        ErrorKind::UndefinedError => "undefined variable or attribute".to_string(),
        ErrorKind::OutOfFuel => {
            format!(
                "the template ran out of fuel ({FUEL}: one per step and per 64 bytes made) \
                 and was stopped (does it loop?)"
            )
        }
        _ => e
            .detail()
            .map_or_else(|| e.kind().to_string(), str::to_string),
    };
    let mut message = match e.line() {
        Some(line) => format!("line {line}: {what}"),
        None => what,
    };
    let expr = e
        .range()
        .zip(e.template_source())
        .and_then(|(r, src)| src.get(r))
        .map(str::trim)
        .filter(|x| !x.is_empty() && x.len() <= 200);
    if let Some(x) = expr {
        message.push_str(&format!(" in `{x}`"));
    }
    if matches!(e.kind(), ErrorKind::UndefinedError | ErrorKind::OutOfFuel) {
        if let Some(d) = e.detail() {
            message.push_str(&format!(" ({d})"));
        }
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message.push_str(&format!(": {s}"));
        source = s.source();
    }
    RenderError::Template {
        template: name.to_string(),
        message,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::notify::plan::Milestone;
    use semver::Version;

    /// A notice to roads' flood-model, `days_left` before the sunset of 2027-01-15.
    pub(crate) fn notice(days_left: i64) -> Notice {
        let sunset: chrono::NaiveDate = "2027-01-15".parse().unwrap();
        Notice {
            dataset: "roads".into(),
            consumer: "flood-model".into(),
            team: Some("Hydrology".into()),
            line: 1,
            milestone: if days_left > 0 {
                Milestone::Before(30)
            } else {
                Milestone::Overdue(1)
            },
            also: Vec::new(),
            recipients: vec!["a@example.org".into()],
            sunset,
            days_left,
            old_version: Version::new(1, 1, 0),
            reads_version: Version::new(1, 0, 0),
            new_line: 2,
            new_version: Version::new(2, 0, 0),
            message_id: "<m@example.org>".into(),
            uses: None,
            verdict: None,
            breaking_changes: Vec::new(),
            told: Vec::new(),
            opens: None,
            waiver: None,
            deprecation: None,
            channel: "mail".into(),
        }
    }

    fn change() -> ChangeRecord {
        crate::model::history::parse_history(
            "h",
            "[[change]]\nat = 2026-10-01T00:00:00Z\nfrom = \"1.1.0\"\nto = \"2.0.0\"\n\
             clause = \"crs\"\nkind = \"fixed\"\ndirection = \"changed\"\nverdict = \"breaking\"\n\
             rationale = \"Use <BNG> & metres.\"\n",
        )
        .unwrap()
        .change
        .remove(0)
    }

    #[test]
    fn the_builtin_templates_name_what_a_consumer_needs() {
        let t = Templates::new(None, None).unwrap();
        let c = change();
        let r = t
            .render(&notice(17), &[&c], "Data Platform <dp@example.org>", 30)
            .unwrap();
        assert!(
            r.subject.contains("roads") && r.subject.contains("2027-01-15"),
            "{}",
            r.subject
        );
        assert!(r.subject.contains("17 days left"), "{}", r.subject);
        for needle in [
            "roads",
            "1.0.0",
            "1.1.0",
            "2.0.0",
            "2027-01-15",
            "17 days left",
            "crs",
            "Use <BNG> & metres.",
            "How to migrate",
        ] {
            assert!(
                r.body.contains(needle),
                "missing {needle:?} in:\n{}",
                r.body
            );
        }
        let over = t.render(&notice(-3), &[], "dp@example.org", 30).unwrap();
        assert!(over.subject.contains("3 days ago"), "{}", over.subject);
        assert!(over.body.contains("No breaking change"), "{}", over.body);
    }

    #[test]
    fn a_deprecation_notice_says_how_the_consumer_was_found_to_use_the_key() {
        use crate::consumers::attributes::KeyUse;
        let t = Templates::new(None, None).unwrap();
        let seen = |uses: &str| {
            let mut n = notice(40);
            n.milestone = Milestone::Deprecated(
                "optional_attributes.pop_est".into(),
                Box::new(Milestone::Published),
            );
            n.uses = Some(vec![crate::model::Use::parse(uses).unwrap()]);
            n.deprecation = Some(crate::notify::plan::DeprecationFacts {
                key: "optional_attributes.pop_est".into(),
                attribute: Some("pop_est".into()),
                reason: "census".into(),
                replacement: None,
                remove_after: "2027-01-14".parse().unwrap(),
                version: Version::new(1, 1, 0),
                evidence: KeyUse::Observed,
                key_last_read: Some("2026-11-28T03:00:00Z".parse().unwrap()),
            });
            t.render(&n, &[], "x", 30).unwrap()
        };
        let r = seen("optional_attributes.name");
        assert!(r.subject.contains("pop_est is deprecated"), "{}", r.subject);
        for needle in [
            "was seen reading pop_est (last on 2026-11-28T03:00:00+00:00)",
            "though its `uses` does not name it",
            "instead:      nothing replaces it",
            "Please stop relying on it before 2027-01-14 is over.",
        ] {
            assert!(r.body.contains(needle), "lacks {needle:?}: {}", r.body);
        }
        let r = seen("optional_attributes.pop_est");
        assert!(r.body.contains("and declared it uses it"), "{}", r.body);
        assert!(!r.body.contains("does not name it"), "{}", r.body);
    }

    #[test]
    fn a_store_template_overrides_and_typos_fail() {
        let t = Templates::new(Some("{{ dataset }} by {{ sunset }}".into()), None).unwrap();
        let r = t.render(&notice(5), &[], "dp@example.org", 30).unwrap();
        assert_eq!(r.subject, "roads by 2027-01-15");
        let t = Templates::new(None, Some("{{ datset }}".into())).unwrap();
        let e = t.render(&notice(5), &[], "dp@example.org", 30).unwrap_err();
        assert!(e.to_string().contains(BODY), "{e}");
        let t = Templates::new(Some("a\nb".into()), None).unwrap();
        assert!(matches!(
            t.render(&notice(5), &[], "x", 30),
            Err(RenderError::Subject(_))
        ));
    }

    #[test]
    fn an_error_names_the_line_and_the_expression() {
        let t =
            Templates::new(None, Some("Hello\n\n{{ team }} and {{ datset }}\n".into())).unwrap();
        let e = t.render(&notice(5), &[], "x", 30).unwrap_err().to_string();
        assert!(e.contains("notice.txt.j2"), "{e}");
        assert!(e.contains("line 3"), "{e}");
        assert!(e.contains("`datset`"), "{e}");
    }

    #[test]
    fn a_looping_template_runs_out_of_fuel_and_a_huge_one_is_refused() {
        let looping =
            "{% for a in range(10000) %}{% for b in range(10000) %}{% endfor %}{% endfor %}";
        let t = Templates::new(None, Some(looping.into())).unwrap();
        let e = t.render(&notice(5), &[], "x", 30).unwrap_err().to_string();
        assert!(e.contains("out of fuel") && e.contains("line 1"), "{e}");
        // A string repeated is charged by its length and runs out of fuel.
        let t = Templates::new(None, Some("{{ \"x\" * 100000000 }}".into())).unwrap();
        let e = t.render(&notice(5), &[], "x", 30).unwrap_err().to_string();
        assert!(e.contains("out of fuel"), "{e}");
        // 800 bytes doubled 17 times is 104,857,600 bytes (100 MiB) in a few dozen steps:
        // minijinja charges fuel per byte made (64 bytes a step), so it stops too.
        let doubling = format!(
            "{{% set s = \"x\" * 800 %}}{}{{{{ s }}}}",
            "{% set s = s ~ s %}".repeat(17)
        );
        let t = Templates::new(None, Some(doubling)).unwrap();
        let e = t.render(&notice(5), &[], "x", 30).unwrap_err().to_string();
        assert!(e.contains("out of fuel"), "{e}");
        // 2,000,000 bytes fit the fuel (about 33,000 steps) but not the size limit.
        let big = "{% set s = \"x\" * 100000 %}{% for i in range(20) %}{{ s }}{% endfor %}";
        let t = Templates::new(None, Some(big.into())).unwrap();
        let r = t.render(&notice(5), &[], "x", 30);
        assert!(matches!(r, Err(RenderError::TooLarge { .. })), "{r:?}");
        // The built-in templates fit the budget with room to spare.
        let c = change();
        let many: Vec<&ChangeRecord> = std::iter::repeat_n(&c, 50).collect();
        Templates::new(None, None)
            .unwrap()
            .render(&notice(5), &many, "x", 30)
            .unwrap();
    }
}
