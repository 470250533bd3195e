//! The run's journal of delivered notices: one line per notice the relay accepted, written to
//! the file (one `write`, no buffer in the process) before the next notice is sent, in
//! `.git/contracts-notify/<run>.log` (local to the checkout, never committed). A killed process
//! cannot lose a line the kernel has; a power cut can lose the last seconds of it, which are
//! then resent. (An fsync per notice would cost a disk flush per mail: a batch of 10,000
//! notices runs at thousands a second.)
//!
//! The ledger's confirmation is one commit for the whole batch, after the last send: a commit
//! per notice would rewrite the ledger file once per notice. So a run killed mid-batch leaves
//! open claims for notices it already delivered. The next run that takes over such a stale
//! claim reads the dead run's journal first: a notice in it is confirmed in the ledger without
//! being sent again. Only the notice whose SMTP transaction the kill interrupted (accepted by
//! the relay, not yet journalled) can go out twice, with the same Message-ID. A claim taken
//! over on another host has no journal there and is resent, as docs/src/commands/notify.md says.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, FixedOffset};

use super::ledger::Key;

/// A delivered notice as journalled: (dataset, key).
pub type Delivered = (String, Key);

fn file(dir: &Path, run: &str) -> PathBuf {
    dir.join(format!("{run}.log"))
}

/// This run's journal, open for appending.
pub struct Journal {
    path: PathBuf,
    file: std::fs::File,
}

impl Journal {
    /// Create the journal of `run` in `dir`.
    pub fn create(dir: &Path, run: &str) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        let path = file(dir, run);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        Ok(Journal { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Record one delivered notice, a line for each milestone it serves (`keys`), in the
    /// kernel's hands before this returns. The lines go in one write, so a kill does not
    /// leave one milestone of a message journalled and the other not.
    pub fn record(
        &mut self,
        dataset: &str,
        keys: &[Key],
        at: DateTime<FixedOffset>,
    ) -> std::io::Result<()> {
        let mut lines = String::new();
        for key in keys {
            // Every field is a validated name, a number, a milestone or an instant: no spaces.
            // Mail is written without its channel, as before webhooks.
            let channel = match key.3.as_str() {
                super::ledger::MAIL => String::new(),
                c => format!("{c} "),
            };
            lines.push_str(&format!(
                "{dataset} {} {} {} {channel}{}\n",
                key.0,
                key.1,
                key.2,
                crate::model::history::instant_text(&at)
            ));
        }
        self.file.write_all(lines.as_bytes())
    }

    /// The batch is confirmed in the ledger: the journal is no longer needed.
    pub fn remove(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the journal of `run` says was delivered, with when. A journal that does not exist
/// says nothing; a torn last line (the run was killed while writing it) is skipped.
pub fn read(dir: &Path, run: &str) -> HashMap<Delivered, DateTime<FixedOffset>> {
    let Ok(text) = std::fs::read_to_string(file(dir, run)) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let (dataset, consumer, line, milestone, channel, at) = match f.as_slice() {
                [d, c, l, m, at] => (d, c, l, m, super::ledger::MAIL, at),
                [d, c, l, m, ch, at] => (d, c, l, m, *ch, at),
                _ => return None,
            };
            let line = line.parse().ok()?;
            let at = DateTime::parse_from_rfc3339(at).ok()?;
            Some((
                (
                    dataset.to_string(),
                    (
                        consumer.to_string(),
                        line,
                        milestone.to_string(),
                        channel.to_string(),
                    ),
                ),
                at,
            ))
        })
        .collect()
}

/// Remove the journal of a dead run once everything in it is confirmed.
pub fn remove_run(dir: &Path, run: &str) {
    let _ = std::fs::remove_file(file(dir, run));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_reads_back_and_skips_a_torn_line() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("contracts-notify");
        let mut j = Journal::create(&d, "host.1.2").unwrap();
        let at: DateTime<FixedOffset> = "2026-11-29T06:15:00Z".parse().unwrap();
        let k: Key = ("atlas".into(), 1, "before-60".into(), "mail".into());
        j.record("roads", std::slice::from_ref(&k), at).unwrap();
        let hook: Key = ("atlas".into(), 1, "before-60".into(), "webhook:ops".into());
        j.record("roads", std::slice::from_ref(&hook), at).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(b"roads flood-model 1 bef")
            .unwrap();
        let got = read(&d, "host.1.2");
        assert_eq!(got.len(), 2);
        assert_eq!(got[&("roads".to_string(), k)], at);
        assert_eq!(got[&("roads".to_string(), hook)], at);
        assert!(read(&d, "other.run").is_empty());
        j.remove();
        assert!(read(&d, "host.1.2").is_empty());
    }
}
