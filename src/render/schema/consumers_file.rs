//! The schema of `consumers.toml`: who reads the store's datasets, and their webhooks.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::{CONSUMER_NAME, DATASET_NAME};
use crate::consumers::{ConsumerKind, WebhookKind};

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Consumer {
    team: Option<String>,
    /// `automation` for CI robots and monitors: their reads never hold a line back from
    /// retiring (they are still told) [consumer].
    kind: Option<ConsumerKind>,
    /// Mailboxes, e.g. `Atlas Team <atlas@example.org>`: one each, so one `@` and no line
    /// break.
    #[schemars(length(min = 1))]
    #[schemars(extend("items" = { "type": "string", "pattern": r"^[^@\x00-\x1f\x7f-\x9f]*@[^@\x00-\x1f\x7f-\x9f]*$" }))]
    contacts: Vec<String>,
    /// The datasets it reads (dataset name → what it relies on). Absent: it may read any
    /// dataset and relies on everything.
    #[schemars(extend("propertyNames" = { "pattern": DATASET_NAME }))]
    datasets: Option<BTreeMap<String, Subscription>>,
    /// The principals it reads as, exact strings or globs (`*`, `?`, `[…]`): an IAM ARN, an
    /// API key, a user name. A source's consumer value is looked up here first, then as a
    /// consumer name.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "pattern": r"\S" }))]
    identities: Option<Vec<String>>,
    /// Webhooks told too, each once per notice (docs/src/guides/webhooks.md).
    webhooks: Option<Vec<Webhook>>,
}

/// A generic webhook signs, so it names its secret; no other kind has one.
fn webhook_rules() -> serde_json::Value {
    serde_json::json!([{
        "if": { "properties": { "kind": { "const": "generic" } } },
        "then": { "required": ["secret_env"] },
        "else": { "not": { "required": ["secret_env"] } }
    }])
}

/// One webhook of a consumer. The URL and secret stay in the environment.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("allOf" = webhook_rules()))]
#[allow(dead_code)]
struct Webhook {
    kind: WebhookKind,
    /// The environment variable holding the URL (a credential, never written here).
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    url_env: String,
    /// generic only (and required there): the variable holding the `whsec_<base64>` secret.
    #[schemars(regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    secret_env: Option<String>,
    /// Unique within the consumer; defaults to the kind. Its ledger channel is
    /// `webhook:<name>`.
    #[schemars(regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"))]
    name: Option<String>,
}

/// One dataset a consumer reads.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Subscription {
    /// Clause names and clause keys it relies on (`crs`, `required_attributes.class`).
    /// Absent: everything.
    #[schemars(extend("uniqueItems" = true, "items" = { "type": "string", "pattern": r"^[a-z][a-z0-9_]*(\.[^\x00-\x1f\x7f-\x9f]+)?$" }))]
    uses: Option<Vec<String>>,
}

/// `consumers.toml`: who reads the store's datasets.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub(super) struct ConsumersFile {
    /// Consumer name ([A-Za-z0-9_-]) → team and contacts.
    #[schemars(extend("propertyNames" = { "pattern": CONSUMER_NAME }))]
    consumers: Option<BTreeMap<String, Consumer>>,
}
