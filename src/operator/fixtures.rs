//! Test helpers (kube-rs/controller-rs `fixtures.rs` style): a [`Context`] whose client talks to
//! a mocked API server, and an [`ApiServer`] scenario that expects each request in turn (method,
//! path, body) and answers it with a canned response. Any request the scenario does not expect
//! fails the test, so a scenario that lists only reads proves that a reconcile wrote nothing.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::Client;
use kube::client::Body;
use kube::core::PartialObjectMeta;
use kube::runtime::{reflector, watcher};
use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tower_test::mock::{self, Handle};

use crate::engine::render::HashKey;
use crate::operator::configs_seen::ConfigsSeen;
use crate::operator::context::{Caches, Context, ScopeVersions};
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};
use crate::operator::metrics::Metrics;
use crate::operator::synced::Synced;
use crate::operator::versions::ObjectVersions;

/// How long a scenario waits for the next request (or for the client to go away).
const PATIENCE: Duration = Duration::from_secs(10);

/// A request as the mocked API server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: Method,
    pub path: String,
    pub query: String,
    /// The JSON body; `Value::Null` when there is none.
    pub body: Value,
}

impl std::fmt::Display for Received {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}?{}", self.method, self.path, self.query)
    }
}

/// Asserts what it needs of a request and returns the response: status code and JSON body.
type Answer = Box<dyn FnOnce(&Received) -> (StatusCode, Value) + Send>;

/// One expected request and the answer to it.
pub struct Exchange {
    method: Method,
    path: String,
    answer: Answer,
}

impl Exchange {
    pub fn new(
        method: Method,
        path: impl Into<String>,
        answer: impl FnOnce(&Received) -> (StatusCode, Value) + Send + 'static,
    ) -> Self {
        Exchange {
            method,
            path: path.into(),
            answer: Box::new(answer),
        }
    }

    /// A GET answered with `object` (200).
    pub fn get(path: impl Into<String>, object: Value) -> Self {
        Exchange::new(Method::GET, path, move |_| (StatusCode::OK, object))
    }

    /// A GET of something that does not exist (404).
    pub fn get_absent(path: impl Into<String>) -> Self {
        Exchange::new(Method::GET, path, |_| {
            (
                StatusCode::NOT_FOUND,
                api_status(404, "NotFound", "not found"),
            )
        })
    }
}

/// The body of an API server error (`kind: Status`).
pub fn api_status(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    })
}

/// The mocked API server's end of the client.
pub struct ApiServer(Handle<Request<Body>, Response<Body>>);

impl ApiServer {
    /// Answers `exchanges` in order, then requires that nothing else is sent until every client
    /// of the context is dropped. Returns every request received; panics (failing the test when
    /// joined with [`finish`]) on a request out of order or not expected at all.
    pub fn run(self, exchanges: Vec<Exchange>) -> JoinHandle<Vec<Received>> {
        let mut handle = self.0;
        tokio::spawn(async move {
            let mut received = Vec::new();
            for expected in exchanges {
                let next = tokio::time::timeout(PATIENCE, handle.next_request()).await;
                let Ok(Some((request, send))) = next else {
                    panic!(
                        "expected {} {}, but no request came; received: {}",
                        expected.method,
                        expected.path,
                        list(&received)
                    );
                };
                let request = read(request).await;
                assert_eq!(
                    (&request.method, request.path.as_str()),
                    (&expected.method, expected.path.as_str()),
                    "request {} out of the scenario; received before: {}",
                    request,
                    list(&received)
                );
                let (status, body) = (expected.answer)(&request);
                received.push(request);
                let response = Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(serde_json::to_vec(&body).expect("JSON")))
                    .expect("a response");
                send.send_response(response);
            }
            // The client goes away when the test drops the context: anything before is extra.
            match tokio::time::timeout(PATIENCE, handle.next_request()).await {
                Ok(None) => {}
                Ok(Some((request, _))) => panic!(
                    "unexpected request {} after the scenario; received before: {}",
                    read(request).await,
                    list(&received)
                ),
                Err(_) => panic!("the client was not dropped: the test must drop its context"),
            }
            received
        })
    }
}

async fn read(request: Request<Body>) -> Received {
    let (parts, body) = request.into_parts();
    let bytes = body.collect_bytes().await.expect("a request body");
    Received {
        method: parts.method,
        path: parts.uri.path().to_string(),
        query: parts.uri.query().unwrap_or_default().to_string(),
        body: if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("a JSON request body")
        },
    }
}

fn list(received: &[Received]) -> String {
    let all: Vec<String> = received.iter().map(ToString::to_string).collect();
    format!("[{}]", all.join(", "))
}

/// Waits for a scenario, re-raising its panic (the assertion that failed) in the test.
pub async fn finish(scenario: JoinHandle<Vec<Received>>) -> Vec<Received> {
    match scenario.await {
        Ok(received) => received,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}

/// A context as `run` builds it, leading and with synced caches, whose client talks to the
/// returned [`ApiServer`]; its KafkaToolConfig cache holds `configs` (as given: the caller
/// compacts statuses the way the controller's cache does, if it wants to). `versions`: the
/// ConfigMap and Secret version caches (none: every source and output is read from the API
/// server).
pub fn context(
    configs: &[KafkaToolConfig],
    versions: Vec<ScopeVersions>,
) -> (Arc<Context>, ApiServer) {
    let (ctx, api_server, _writer) = context_with_watch(configs, versions);
    (ctx, api_server)
}

/// [`context`], and the writer of its KafkaToolConfig cache: what its watch would bring in.
pub fn context_with_watch(
    configs: &[KafkaToolConfig],
    versions: Vec<ScopeVersions>,
) -> (
    Arc<Context>,
    ApiServer,
    reflector::store::Writer<KafkaToolConfig>,
) {
    let (client, api_server) = client();
    let (store, mut writer) = reflector::store::<KafkaToolConfig>();
    for config in configs {
        writer.apply_watcher_event(&watcher::Event::Apply(config.clone()));
    }
    (
        Arc::new(test_context(client, vec![store], versions)),
        api_server,
        writer,
    )
}

/// A context over `configs` and `versions`, leading (no campaign) and with every cache synced;
/// Events are published by the reconcile itself (no queue).
pub fn test_context(
    client: Client,
    configs: Vec<reflector::Store<KafkaToolConfig>>,
    versions: Vec<ScopeVersions>,
) -> Context {
    let synced = Synced::default();
    synced.mark();
    let caches = Caches {
        namespaces: reflector::store::<PartialObjectMeta<Namespace>>().0,
        globals: reflector::store::<GlobalClientDefaults>().0,
        configs,
        versions,
        synced,
        pods_synced: Vec::new(),
        configs_seen: ConfigsSeen::default(),
    };
    let leader = tokio::sync::watch::channel(true).1;
    Context::new(
        client,
        Arc::new(Metrics::new()),
        caches,
        leader,
        None,
        test_hash_key(),
        None,
    )
}

/// A client that talks to the returned mocked API server.
pub fn client() -> (Client, ApiServer) {
    let (service, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(service, "default"), ApiServer(handle))
}

/// The content-hash key of every test context (the operator reads its own from a Secret).
pub fn test_hash_key() -> HashKey {
    HashKey::new(vec![0x5a; HashKey::LEN]).expect("a key of the right length")
}

/// The version caches of all namespaces after their first list, as the metadata-only watches
/// fill them: `config_maps` are the objects listed (JSON, as the API server stores them); no
/// Secrets.
pub fn listed_versions(config_maps: &[Value]) -> Vec<ScopeVersions> {
    let listed = ObjectVersions::default();
    listed.observe::<ConfigMap>(&watcher::Event::Init);
    for object in config_maps {
        let meta: PartialObjectMeta<ConfigMap> = serde_json::from_value(json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": object["metadata"].clone(),
        }))
        .expect("an object's metadata");
        listed.observe(&watcher::Event::InitApply(meta));
    }
    listed.observe::<ConfigMap>(&watcher::Event::InitDone);
    let secrets = ObjectVersions::default();
    secrets.observe::<Secret>(&watcher::Event::Init);
    secrets.observe::<Secret>(&watcher::Event::InitDone);
    vec![ScopeVersions {
        scope: None,
        config_maps: Arc::new(listed),
        secrets: Arc::new(secrets),
    }]
}
