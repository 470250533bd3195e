//! One classified error for every command (docs/src/reference/exit-codes.md): the library's typed
//! errors are mapped here, once, to a class, a message and an optional hint.

use crate::notify::run::{DeliveryError, RunError};
use std::process::ExitCode;

use crate::consumers::LogError;
use crate::model::TomlErrors;
use crate::notify::send::MailError;
use crate::release::ReleaseError;
use crate::store::{GitError, StoreError};

/// What a command that ran to the end found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: nothing to report.
    Clean,
    /// Exit 1: the command ran and found violations.
    Findings,
    /// Exit 4: a gate would have said "nobody reads it", but a consumption source is blind
    /// (it gave no read, or mostly requests no template maps), so it cannot tell. Apart from
    /// 1, so that a job waiting for consumers to move can tell "not yet" from "a source
    /// needs a person".
    CannotTell,
}

impl Outcome {
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Findings => ExitCode::from(1),
            Outcome::CannotTell => ExitCode::from(4),
        }
    }

    pub fn findings_if(found: bool) -> Outcome {
        if found {
            Outcome::Findings
        } else {
            Outcome::Clean
        }
    }
}

/// Why a command could not run to the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Exit 2: bad usage, bad input or bad configuration; fix the input and run again.
    Input,
    /// Exit 3: the environment failed (git, SMTP, I/O); the input may be fine.
    Environment,
    /// Exit 130, the shell's number for a process ended by Ctrl-C: the user stopped the
    /// command (a PostGIS scan, cancelled on the server) and nothing was written.
    Interrupted,
}

impl ErrorClass {
    pub fn exit_code(self) -> ExitCode {
        match self {
            ErrorClass::Input => ExitCode::from(2),
            ErrorClass::Environment => ExitCode::from(3),
            ErrorClass::Interrupted => ExitCode::from(130),
        }
    }
}

/// A command that could not run to the end: its class (the exit code), what went wrong, the
/// library error behind it (whose causes are printed as "caused by: …", so a gix or I/O cause
/// reaches the user), and what to do about it.
#[derive(Debug)]
pub struct CommandError {
    pub kind: ErrorClass,
    pub message: String,
    pub source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    pub hints: Vec<String>,
}

impl CommandError {
    pub fn input(message: impl Into<String>) -> CommandError {
        CommandError::new(ErrorClass::Input, message)
    }

    pub fn environment(message: impl Into<String>) -> CommandError {
        CommandError::new(ErrorClass::Environment, message)
    }

    fn new(kind: ErrorClass, message: impl Into<String>) -> CommandError {
        CommandError {
            kind,
            message: message.into(),
            source: None,
            hints: Vec::new(),
        }
    }

    /// A library error of `kind`: its Display is the message, its causes the chain.
    pub fn from_error<E>(kind: ErrorClass, e: E) -> CommandError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        CommandError {
            kind,
            message: e.to_string(),
            source: Some(Box::new(e)),
            hints: Vec::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> CommandError {
        self.hints.push(hint.into());
        self
    }

    /// The error with `hint` under it, when there is one.
    fn with_hint_if(self, hint: Option<impl Into<String>>) -> CommandError {
        match hint {
            Some(h) => self.with_hint(h),
            None => self,
        }
    }

    /// The causes under the message, outermost first. A cause whose text the lines before it
    /// already say (thiserror messages often embed their source) is left out, so nothing is
    /// printed twice.
    pub fn causes(&self) -> Vec<String> {
        let mut said = self.message.clone();
        let mut out = Vec::new();
        let mut next = self.source.as_deref().and_then(|e| e.source());
        while let Some(cause) = next {
            let text = cause.to_string();
            if !text.is_empty() && !said.contains(&text) {
                said.push('\n');
                said.push_str(&text);
                out.push(text);
            }
            next = cause.source();
        }
        out
    }

    /// What the user reads on stderr: the error, each cause and each hint on its own line.
    pub fn render(&self) -> String {
        let mut out = format!("error: {}\n", self.message);
        for cause in self.causes() {
            out.push_str(&format!("caused by: {cause}\n"));
        }
        for hint in &self.hints {
            out.push_str(&format!("hint: {hint}\n"));
        }
        out
    }
}

impl From<TomlErrors> for CommandError {
    fn from(e: TomlErrors) -> Self {
        CommandError::from_error(ErrorClass::Input, e)
    }
}

impl From<std::io::Error> for CommandError {
    /// A bare I/O error is the environment's; callers that know a path is user input map it
    /// themselves (see `Context::read_input`).
    fn from(e: std::io::Error) -> Self {
        CommandError::from_error(ErrorClass::Environment, e)
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        let hint = match &e {
            StoreError::NotAStore { .. } => {
                Some("run `contracts init`, or point --repo at a store".to_string())
            }
            StoreError::Git(GitError::NoRepository { .. }) => Some(
                "run `contracts init DIR` to make a store, or run inside one (or pass --repo DIR)"
                    .to_string(),
            ),
            StoreError::Git(GitError::Open { .. }) => {
                Some("run inside a store's repository, or pass --repo DIR".to_string())
            }
            StoreError::Git(g) => g.hint(),
            _ => None,
        };
        let kind = if e.is_input() {
            ErrorClass::Input
        } else {
            ErrorClass::Environment
        };
        CommandError::from_error(kind, e).with_hint_if(hint)
    }
}

impl From<GitError> for CommandError {
    fn from(e: GitError) -> Self {
        StoreError::from(e).into()
    }
}

impl From<ReleaseError> for CommandError {
    /// A release error is about a file the user named: bad input, exit 2; object storage
    /// that cannot be reached or refuses the credentials is the environment, exit 3.
    fn from(e: ReleaseError) -> Self {
        if let ReleaseError::Remote(r) = &e {
            let (class, hint) = remote_class(r);
            return CommandError::from_error(class, e).with_hint_if(hint);
        }
        if let ReleaseError::Postgis(p) = &e {
            let (class, hint) = if matches!(
                p,
                crate::release::postgis::PostgisError::Interrupted { .. }
            ) {
                (ErrorClass::Interrupted, None)
            } else if matches!(p, crate::release::postgis::PostgisError::Timeout { .. }) {
                (
                    ErrorClass::Environment,
                    Some("allow the scan longer: &statement_timeout=30min in the URL (or in options, PGOPTIONS or the role's settings)"),
                )
            } else if p.is_environment() {
                (
                    ErrorClass::Environment,
                    Some("check the server, PGHOST, PGPORT, PGUSER and the password (PGPASSWORD or the password file)"),
                )
            } else {
                (ErrorClass::Input, None)
            };
            return CommandError::from_error(class, e).with_hint_if(hint);
        }
        let hint = match &e {
            ReleaseError::Corrupt { .. } => Some("the file is damaged or truncated; re-export it"),
            ReleaseError::Unsupported { .. } => {
                Some("the file is valid: convert it to a kind this build reads (e.g. with ogr2ogr)")
            }
            ReleaseError::UnknownFormat { .. } => Some("name the file with its format's extension"),
            _ => None,
        };
        CommandError::from_error(ErrorClass::Input, e).with_hint_if(hint)
    }
}

/// How an object-store failure is classified, wherever it came from: a URL that names
/// nothing is bad input; a store that refuses the credentials or cannot be reached is the
/// environment, with what to check.
fn remote_class(r: &crate::objects::RemoteError) -> (ErrorClass, Option<&'static str>) {
    use crate::objects::RemoteFailure;
    match r.failure {
        RemoteFailure::BadUrl | RemoteFailure::NotFound => (ErrorClass::Input, None),
        RemoteFailure::Denied => (
            ErrorClass::Environment,
            Some("the store refused the credentials: check AWS_*, GOOGLE_* or AZURE_* in the environment"),
        ),
        RemoteFailure::Unavailable => (
            ErrorClass::Environment,
            Some("the store could not be reached; for a local S3 server set AWS_ENDPOINT_URL and AWS_ALLOW_HTTP=true"),
        ),
    }
}

impl From<LogError> for CommandError {
    /// A log that cannot be read is the environment's; a bad `[consumption] sources` pattern
    /// or an unknown log format is configuration; a remote source as its store's failure is.
    fn from(e: LogError) -> Self {
        if let LogError::Remote(r) = &e {
            let (class, hint) = remote_class(r);
            return CommandError::from_error(class, e).with_hint_if(hint);
        }
        let kind = match e {
            LogError::Remote(_) => ErrorClass::Environment,
            LogError::Io { .. } => ErrorClass::Environment,
            LogError::Pattern { .. } | LogError::UnknownFormat { .. } => ErrorClass::Input,
        };
        CommandError::from_error(kind, e)
    }
}

impl From<crate::consumers::summary::WriteError> for CommandError {
    /// A summary that cannot be written (a full disk, no permission) is the environment's.
    fn from(e: crate::consumers::summary::WriteError) -> Self {
        CommandError::from_error(ErrorClass::Environment, e)
    }
}

impl From<crate::audit::AuditError> for CommandError {
    /// A `[store] since` the walk cannot start from is said at its place in contracts.toml,
    /// classified as the store error behind it.
    fn from(e: crate::audit::AuditError) -> Self {
        use crate::audit::AuditError;
        match e {
            AuditError::Read(e) => e.into(),
            AuditError::ConfiguredSince { message, source } if source.is_input() => {
                CommandError::input(message)
            }
            AuditError::ConfiguredSince { message, .. } => CommandError::environment(message),
        }
    }
}

impl From<crate::consumers::registry::LoadError> for CommandError {
    fn from(e: crate::consumers::registry::LoadError) -> Self {
        use crate::consumers::registry::LoadError;
        match e {
            LoadError::Store(e) => e.into(),
            LoadError::Registry(e) => e.into(),
        }
    }
}

impl From<crate::consumers::scan_report::ScanError> for CommandError {
    fn from(e: crate::consumers::scan_report::ScanError) -> Self {
        use crate::consumers::scan_report::ScanError;
        match e {
            ScanError::Store(e) => e.into(),
            ScanError::Log(e) => e.into(),
        }
    }
}

impl From<crate::release::assemble::AssembleError> for CommandError {
    /// A release that cannot be read is classified as the readers' errors are; a saved
    /// profile that is unreadable, not a profile or not mergeable is bad input.
    fn from(e: crate::release::assemble::AssembleError) -> Self {
        use crate::release::assemble::AssembleError;
        match e {
            AssembleError::Read(e) => e.into(),
            e => CommandError::input(e.to_string()),
        }
    }
}

impl From<MailError> for CommandError {
    fn from(e: MailError) -> Self {
        let kind = if e.is_input() {
            ErrorClass::Input
        } else {
            ErrorClass::Environment
        };
        CommandError::from_error(kind, e)
    }
}

/// A run's error as the CLI says it: classified, with what was (not) done as a hint.
impl From<RunError> for CommandError {
    fn from(e: RunError) -> CommandError {
        let plain = |e: &RunError| match e.is_input() {
            true => CommandError::input(e.to_string()),
            false => CommandError::environment(e.to_string()),
        };
        match e {
            RunError::Store(e) => e.into(),
            RunError::Message(e) => e.into(),
            RunError::Templates(_) | RunError::Render { .. } => CommandError::input(e.to_string()),
            RunError::Identity(e) => CommandError::from(e)
                .with_hint("nothing was sent: a notice is sent only once it can be recorded"),
            RunError::Open {
                source: DeliveryError::Mail(e),
                pending,
            } => CommandError::from(e).with_hint(format!(
                "nothing was sent or recorded; the next run tries the {pending} notice(s) again"
            )),
            RunError::Open {
                source: DeliveryError::Webhook(_),
                ..
            } => plain(&e),
            RunError::Confirm {
                ref journal,
                stale_minutes,
                ..
            } => {
                let hint = format!(
                    "their claims stay open and this run's journal ({}) says they went out: a run \
                 on this machine more than {stale_minutes} min from now records them without \
                 sending them again",
                    journal.display()
                );
                plain(&e).with_hint(hint)
            }
            RunError::Stopped { .. } => plain(&e).with_hint("the next run sends them"),
            RunError::Undelivered { .. } => plain(&e).with_hint("the next run retries them"),
            // A claim refused by the store's content (a linked `notifications/`) is input,
            // as it is for `propose` and `sunset`; a store that moved is the environment.
            RunError::Journal { .. } | RunError::Claim { .. } => plain(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer: {inner}")]
    struct Embeds {
        #[source]
        inner: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("the store moved")]
    struct Hides {
        #[source]
        inner: Embeds,
    }

    #[test]
    fn a_cause_the_message_does_not_say_is_printed_once_and_an_embedded_one_is_not() {
        let io = std::io::Error::other("disk on fire");
        let e = CommandError::from_error(
            ErrorClass::Environment,
            Hides {
                inner: Embeds { inner: io },
            },
        )
        .with_hint("run again");
        assert_eq!(
            e.render(),
            "error: the store moved\ncaused by: outer: disk on fire\nhint: run again\n"
        );
        let io = std::io::Error::other("disk on fire");
        let e = CommandError::from_error(ErrorClass::Environment, Embeds { inner: io });
        assert_eq!(e.render(), "error: outer: disk on fire\n");
        assert_eq!(e.kind.exit_code(), ExitCode::from(3));
    }
}
