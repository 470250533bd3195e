//! One classified error for every command (SPEC §8 exit codes): the library's typed errors are
//! mapped here, once, to a class, a message and an optional hint.

use std::process::ExitCode;

use crate::model::TomlErrors;
use crate::store::{GitError, StoreError};

/// What a command that ran to the end found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: nothing to report.
    Clean,
    /// Exit 1: the command ran and found violations.
    Findings,
}

impl Outcome {
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Clean => ExitCode::SUCCESS,
            Outcome::Findings => ExitCode::from(1),
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
}

impl ErrorClass {
    pub fn exit_code(self) -> ExitCode {
        match self {
            ErrorClass::Input => ExitCode::from(2),
            ErrorClass::Environment => ExitCode::from(3),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CommandError {
    pub class: ErrorClass,
    pub message: String,
    pub hint: Option<String>,
}

impl CommandError {
    pub fn input(message: impl Into<String>) -> CommandError {
        CommandError {
            class: ErrorClass::Input,
            message: message.into(),
            hint: None,
        }
    }

    pub fn environment(message: impl Into<String>) -> CommandError {
        CommandError {
            class: ErrorClass::Environment,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> CommandError {
        self.hint = Some(hint.into());
        self
    }
}

impl From<TomlErrors> for CommandError {
    fn from(e: TomlErrors) -> Self {
        CommandError::input(e.to_string())
    }
}

impl From<std::io::Error> for CommandError {
    /// A bare I/O error is the environment's; callers that know a path is user input map it
    /// themselves (see `Context::read_input`).
    fn from(e: std::io::Error) -> Self {
        CommandError::environment(e.to_string())
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        let hint = match &e {
            StoreError::NotAStore { .. } => {
                Some("run `contracts init`, or point --repo at a store".to_string())
            }
            StoreError::Git(GitError::Open { .. }) => {
                Some("run inside a store's repository, or pass --repo DIR".to_string())
            }
            StoreError::Git(g) => g.hint(),
            _ => None,
        };
        let class = if e.is_input() {
            ErrorClass::Input
        } else {
            ErrorClass::Environment
        };
        CommandError {
            class,
            message: e.to_string(),
            hint,
        }
    }
}
