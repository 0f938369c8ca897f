//! The installation's content-hash key (docs/references-and-secrets.md, "The content hash"): 32
//! random bytes in a Secret of the operator's own namespace, created by the operator on its first
//! start. Not templated by the chart: a random value in a template changes on every
//! `helm template`, which Argo CD runs on every sync, so every sync would roll every workload.
//!
//! Replicas start together: each reads the Secret; when it is absent each creates one, one of
//! the creates wins and the others get 409 AlreadyExists and read the winner's key, so every
//! replica hashes with the same key. The key never leaves this process except into that Secret:
//! logs and status carry only its [`HashKey::id`].

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tracing::info;

use crate::engine::render::{HashKey, HashKeyError};
use crate::output::{MANAGED_BY_LABEL, MANAGER};

/// The Secret's default name (`run --hash-key-secret`).
pub const DEFAULT_SECRET: &str = "kafka-config-operator-hash-key";
/// The data key holding the 32 raw bytes.
pub const DATA_KEY: &str = "key";

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "cannot {verb} the content-hash key Secret {namespace}/{name}: {source}; the operator \
         needs get and create on it (the chart's Role `…-hash-key`)"
    )]
    Api {
        verb: &'static str,
        namespace: String,
        name: String,
        /// Boxed: kube's error is large, and this one is returned by value.
        #[source]
        source: Box<kube::Error>,
    },
    #[error(
        "the content-hash key Secret {namespace}/{name} has no data key `{DATA_KEY}`; delete the \
         Secret and start the operator again to have a new key created (every workload then \
         rolls once)"
    )]
    Missing { namespace: String, name: String },
    #[error(
        "the content-hash key Secret {namespace}/{name}, key `{DATA_KEY}`: {source}; delete the \
         Secret and start the operator again to have a new key created (every workload then \
         rolls once)"
    )]
    Invalid {
        namespace: String,
        name: String,
        #[source]
        source: HashKeyError,
    },
    #[error(
        "the content-hash key Secret {namespace}/{name} was created by another replica and \
         deleted before it could be read; start again"
    )]
    Vanished { namespace: String, name: String },
    #[error("the operating system's random number generator failed: {0}")]
    Random(String),
}

/// Where the key lives.
#[derive(Debug, Clone)]
pub struct KeySecret<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
}

impl KeySecret<'_> {
    fn api_error(&self, verb: &'static str, source: kube::Error) -> KeyError {
        KeyError::Api {
            verb,
            namespace: self.namespace.to_string(),
            name: self.name.to_string(),
            source: Box::new(source),
        }
    }

    /// The key of an existing Secret.
    fn key_of(&self, secret: Secret) -> Result<HashKey, KeyError> {
        let bytes = secret
            .data
            .and_then(|mut data| data.remove(DATA_KEY))
            .ok_or_else(|| KeyError::Missing {
                namespace: self.namespace.to_string(),
                name: self.name.to_string(),
            })?;
        HashKey::new(bytes.0).map_err(|source| KeyError::Invalid {
            namespace: self.namespace.to_string(),
            name: self.name.to_string(),
            source,
        })
    }

    fn new_secret(&self, key: Vec<u8>) -> Secret {
        Secret {
            metadata: ObjectMeta {
                name: Some(self.name.to_string()),
                namespace: Some(self.namespace.to_string()),
                labels: Some(BTreeMap::from([(
                    MANAGED_BY_LABEL.to_string(),
                    MANAGER.to_string(),
                )])),
                ..ObjectMeta::default()
            },
            data: Some(BTreeMap::from([(DATA_KEY.to_string(), ByteString(key))])),
            type_: Some("Opaque".to_string()),
            // Rotation is delete-and-restart (docs): an edit in place would leave running
            // replicas on the old key while a restarted one uses the new, and the workloads
            // would roll at every change of leader.
            immutable: Some(true),
            ..Secret::default()
        }
    }
}

/// Reads the key, or creates it when the Secret does not exist (on 409, another replica created
/// it first: its key is read).
pub async fn ensure(client: &Client, at: &KeySecret<'_>) -> Result<HashKey, KeyError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), at.namespace);
    if let Some(secret) = api
        .get_opt(at.name)
        .await
        .map_err(|e| at.api_error("read", e))?
    {
        let key = at.key_of(secret)?;
        info!(namespace = at.namespace, secret = at.name, key_id = %key.id(), "read the content-hash key");
        return Ok(key);
    }
    let mut bytes = vec![0u8; HashKey::LEN];
    getrandom::fill(&mut bytes).map_err(|e| KeyError::Random(e.to_string()))?;
    let secret = at.new_secret(bytes);
    let key = at.key_of(secret.clone())?;
    match api.create(&PostParams::default(), &secret).await {
        Ok(_) => {
            info!(namespace = at.namespace, secret = at.name, key_id = %key.id(), "created the content-hash key");
            Ok(key)
        }
        Err(kube::Error::Api(status)) if status.is_already_exists() => {
            // Another replica won the race: everyone must hash with the same key.
            let secret = api
                .get_opt(at.name)
                .await
                .map_err(|e| at.api_error("read", e))?
                .ok_or_else(|| KeyError::Vanished {
                    namespace: at.namespace.to_string(),
                    name: at.name.to_string(),
                })?;
            let key = at.key_of(secret)?;
            info!(namespace = at.namespace, secret = at.name, key_id = %key.id(), "read the content-hash key another replica created");
            Ok(key)
        }
        Err(e) => Err(at.api_error("create", e)),
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use http::{Method, StatusCode};
    use serde_json::{Value, json};

    use super::*;
    use crate::operator::fixtures::{self, Exchange, Received, api_status};

    const SECRET_PATH: &str = "/api/v1/namespaces/kco/secrets/kafka-config-operator-hash-key";
    const SECRETS: &str = "/api/v1/namespaces/kco/secrets";
    const AT: KeySecret<'static> = KeySecret {
        namespace: "kco",
        name: DEFAULT_SECRET,
    };

    fn stored(key: &[u8]) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": DEFAULT_SECRET, "namespace": "kco", "resourceVersion": "5"},
            "type": "Opaque",
            "immutable": true,
            "data": {DATA_KEY: base64::engine::general_purpose::STANDARD.encode(key)},
        })
    }

    fn sent_key(request: &Received) -> Vec<u8> {
        let text = request.body["data"][DATA_KEY].as_str().expect("data.key");
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .expect("base64")
    }

    /// Runs `ensure` against `scenario`; returns its result and what the API server got.
    async fn ensure_against(scenario: Vec<Exchange>) -> (Result<HashKey, KeyError>, Vec<Received>) {
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(scenario);
        let result = ensure(&client, &AT).await;
        drop(client);
        (result, fixtures::finish(scenario).await)
    }

    #[tokio::test]
    async fn the_first_start_creates_the_secret_with_32_random_bytes() {
        let (key, received) = ensure_against(vec![
            Exchange::get_absent(SECRET_PATH),
            Exchange::new(Method::POST, SECRETS, |request| {
                assert_eq!(request.body["metadata"]["name"], DEFAULT_SECRET);
                assert_eq!(request.body["immutable"], true);
                assert_eq!(
                    request.body["metadata"]["labels"][MANAGED_BY_LABEL],
                    MANAGER
                );
                (StatusCode::CREATED, request.body.clone())
            }),
        ])
        .await;
        let key = key.expect("a key");
        let sent = sent_key(&received[1]);
        assert_eq!(sent.len(), HashKey::LEN);
        assert_ne!(sent, vec![0u8; HashKey::LEN], "random, not zeros");
        assert_eq!(key.id(), HashKey::new(sent).expect("32 bytes").id());
    }

    #[tokio::test]
    async fn an_existing_secret_is_read_and_nothing_is_written() {
        let (key, received) =
            ensure_against(vec![Exchange::get(SECRET_PATH, stored(&[7; 32]))]).await;
        let expected = HashKey::new(vec![7; 32]).expect("32 bytes");
        assert_eq!(key.expect("a key").id(), expected.id());
        assert_eq!(received.len(), 1);
    }

    #[tokio::test]
    async fn losing_the_create_race_reads_the_other_replicas_key() {
        let (key, received) = ensure_against(vec![
            Exchange::get_absent(SECRET_PATH),
            Exchange::new(Method::POST, SECRETS, |_| {
                (
                    StatusCode::CONFLICT,
                    api_status(
                        409,
                        "AlreadyExists",
                        "secrets \"kafka-config-operator-hash-key\" already exists",
                    ),
                )
            }),
            Exchange::get(SECRET_PATH, stored(&[9; 32])),
        ])
        .await;
        let theirs = HashKey::new(vec![9; 32]).expect("32 bytes");
        assert_eq!(key.expect("the other replica's key").id(), theirs.id());
        let ours = HashKey::new(sent_key(&received[1])).expect("32 bytes");
        assert_ne!(ours.id(), theirs.id(), "ours was discarded");
    }

    #[tokio::test]
    async fn a_key_of_the_wrong_length_is_refused_without_printing_it() {
        let (key, _) = ensure_against(vec![Exchange::get(
            SECRET_PATH,
            stored(b"correct-horse-battery-staple"),
        )])
        .await;
        let error = key.expect_err("28 bytes are not a key");
        let message = error.to_string();
        assert!(matches!(error, KeyError::Invalid { .. }), "{message}");
        assert!(
            message.contains("kco/kafka-config-operator-hash-key"),
            "{message}"
        );
        assert!(!message.contains("horse"), "{message}");
    }

    #[tokio::test]
    async fn a_secret_without_the_key_is_refused() {
        let mut secret = stored(&[7; 32]);
        secret["data"] = json!({"other": "eA=="});
        let (key, _) = ensure_against(vec![Exchange::get(SECRET_PATH, secret)]).await;
        assert!(matches!(key, Err(KeyError::Missing { .. })));
    }
}
