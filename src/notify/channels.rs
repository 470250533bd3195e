//! Every channel of a run behind one `Transport`: mail through the SMTP relay, each
//! `webhook:<name>` through the webhook poster.

use std::time::Duration;

use super::plan::Notice;
use super::run::{Clock, DeliveryError, Transport};
use super::webhook::{ca_roots, WebhookError, WebhookTransport};
use crate::consumers::Registry;

/// Every channel of a run: mail through `mail`, each `webhook:<name>` through `hooks`. A
/// webhook's failure never ends the batch: mail and the other webhooks go on.
pub struct Channels<'a> {
    pub mail: Box<dyn Transport + 'a>,
    pub hooks: WebhookTransport<'a>,
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
            true => super::send::MailTransport::new(
                super::send::Mailer::new(&config.smtp, root, env)?,
                messages,
            ),
            false => super::send::MailTransport::idle(),
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

    fn usage(&self) -> super::run::Usage {
        super::run::Usage {
            requests: self.hooks.requests,
            ..self.mail.usage()
        }
    }
}
