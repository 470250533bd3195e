//! Every channel of a run behind one `Transport`: mail through the SMTP relay (`send`), each
//! `webhook:<name>` through the webhook poster (`webhook`). Both transports are put behind the
//! trait here, above the two, so that neither the relay nor the poster names the run.

use std::time::Duration;

use lettre::Message;

use super::plan::Notice;
use super::run::{Clock, DeliveryError, Transport, Usage};
use super::send::{MailError, Mailer};
use super::webhook::{ca_roots, WebhookError, WebhookTransport};
use crate::consumers::Registry;

/// Every channel of a run: mail through `mail`, each `webhook:<name>` through `hooks`. A
/// webhook's failure never ends the batch: mail and the other webhooks go on.
pub struct Channels<'a> {
    pub mail: Box<dyn Transport + 'a>,
    pub hooks: WebhookTransport<'a>,
    /// The run's clock, read at the edge for each stamp ([`Transport::now`]).
    pub clock: Clock<'a>,
}

/// Why the channels of a run could not be opened: nothing was claimed or sent.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The relay's settings or credentials.
    #[error(transparent)]
    Mail(#[from] super::send::MailError),
    /// `[notify] ca_file` is missing, unreadable or holds no certificate.
    #[error(transparent)]
    CaFile(WebhookError),
}

impl<'a> Channels<'a> {
    /// The channels of a run that sends `todo`, under `config`: the relay (its credentials
    /// read through `env`) only when a mail is due, so a run with webhook deliveries alone
    /// does not depend on it; then `[notify] ca_file`, read before anything is claimed, and
    /// the webhooks' settings. `messages` are the rendered mails by Message-ID; `root` is the
    /// store's root, which relative files are read from.
    pub fn open(
        config: &crate::model::config::Config,
        root: &std::path::Path,
        registry: &Registry,
        env: impl Fn(&str) -> Option<String> + Copy + 'a,
        clock: Clock<'a>,
        todo: &[super::run::Todo],
        messages: std::collections::BTreeMap<String, lettre::Message>,
    ) -> Result<Channels<'a>, OpenError> {
        let mail = match todo.iter().any(|t| t.notice.channel == super::ledger::MAIL) {
            true => MailTransport::new(Mailer::new(&config.smtp, root, env)?, messages, clock),
            false => MailTransport::idle(clock),
        };
        let roots = match &config.notify.ca_file {
            Some(file) => ca_roots(root, file).map_err(OpenError::CaFile)?,
            None => Vec::new(),
        };
        let hooks = WebhookTransport::new(
            registry.clone(),
            env,
            clock,
            config.notify.registry_url.clone(),
        )
        .with_timeout(Duration::from_secs(config.notify.webhook_timeout_seconds))
        .with_roots(roots);
        Ok(Channels {
            mail: Box::new(mail),
            hooks,
            clock,
        })
    }
}

impl Transport for Channels<'_> {
    fn open(&mut self) -> Result<(), DeliveryError> {
        self.mail.open()
    }

    fn deliver(&mut self, notice: &Notice) -> Result<(), DeliveryError> {
        match notice.channel.as_str() {
            super::ledger::MAIL => self.mail.deliver(notice),
            _ => Ok(self.hooks.send(notice)?),
        }
    }

    fn close(&mut self) {
        self.mail.close();
    }

    fn usage(&self) -> Usage {
        Usage {
            requests: self.hooks.requests,
            ..self.mail.usage()
        }
    }

    fn now(&self) -> chrono::DateTime<chrono::FixedOffset> {
        (self.clock)()
    }
}

/// The mail transport of a run: the [`Mailer`] and every notice's rendered message, by
/// Message-ID.
pub struct MailTransport<'a> {
    mailer: Option<Mailer>,
    messages: std::collections::BTreeMap<String, Message>,
    connections: u64,
    clock: Clock<'a>,
}

impl<'a> MailTransport<'a> {
    pub fn new(
        mailer: Mailer,
        messages: std::collections::BTreeMap<String, Message>,
        clock: Clock<'a>,
    ) -> MailTransport<'a> {
        MailTransport {
            mailer: Some(mailer),
            messages,
            connections: 0,
            clock,
        }
    }

    /// The mail transport of a run with no mail to send: it opens nothing.
    pub fn idle(clock: Clock<'a>) -> MailTransport<'a> {
        MailTransport {
            mailer: None,
            messages: Default::default(),
            connections: 0,
            clock,
        }
    }

    /// SMTP connections opened so far.
    pub fn connections(&self) -> u64 {
        self.mailer
            .as_ref()
            .map_or(self.connections, |m| m.connections)
    }
}

impl Transport for MailTransport<'_> {
    fn open(&mut self) -> Result<(), DeliveryError> {
        match &mut self.mailer {
            Some(m) => Ok(m.open()?),
            None => Ok(()),
        }
    }

    fn deliver(&mut self, notice: &Notice) -> Result<(), DeliveryError> {
        let (Some(mailer), Some(message)) =
            (&mut self.mailer, self.messages.get(&notice.message_id))
        else {
            return Err(MailError::Build {
                consumer: notice.consumer.clone(),
                reason: "the notice was not rendered".into(),
            }
            .into());
        };
        Ok(mailer.send(message)?)
    }

    fn close(&mut self) {
        if let Some(m) = self.mailer.take() {
            self.connections = m.connections;
            m.close();
        }
    }

    fn usage(&self) -> Usage {
        Usage {
            connections: self.connections(),
            requests: 0,
        }
    }

    fn now(&self) -> chrono::DateTime<chrono::FixedOffset> {
        (self.clock)()
    }
}
