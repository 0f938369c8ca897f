//! Status writes refused because the config moved on (409): the reconcile runs again on the
//! newer version the watch brings in, and gives up after three runs.

use super::*;

/// A status write refused because the config moved on (409): the answer to it, and the config
/// at resourceVersion `version` brought into the cache `after` the refusal, as the watch would.
fn refused_then_watched(
    ctx: &Arc<crate::operator::context::Context>,
    writer: &Arc<std::sync::Mutex<kube::runtime::reflector::store::Writer<KafkaToolConfig>>>,
    newer: KafkaToolConfig,
    after: Duration,
) -> impl FnOnce(&Received) -> (StatusCode, Value) + Send + 'static {
    let (ctx, writer) = (ctx.clone(), writer.clone());
    move |_| {
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let event = kube::runtime::watcher::Event::Apply(newer);
            writer
                .lock()
                .expect("the writer")
                .apply_watcher_event(&event);
            ctx.caches.configs_seen.bump();
        });
        (
            StatusCode::CONFLICT,
            api_status(409, "Conflict", "the object has been modified"),
        )
    }
}

/// Issue 29: no write-through cache of status writes. A reconcile that starts before the watch
/// has brought in the config's last status write builds on the cache's older status; the status
/// write is made onto the cached resourceVersion, so the API server refuses it, and the reconcile
/// runs again on the newer version once the watch has brought it in: history is never rolled
/// back, and the config is not read.
#[tokio::test]
async fn a_status_built_on_a_stale_cache_is_refused_and_built_again_on_the_newer_one() {
    let (status, output) = first_render().await;
    let hash = status["configHash"].clone();
    // Stored by an earlier reconcile, not in the cache yet: revision 1, of another hash.
    let old = format!("hmac-sha256:{}", "ab".repeat(32));
    let mut stored = status.clone();
    stored["configHash"] = json!(old);
    stored["history"][0]["hash"] = json!(old);
    let mut newer = cached(config(Some(stored)));
    newer.metadata.resource_version = Some("105".into());

    let (ctx, api_server, writer) = fixtures::context_with_watch(&[config(None)], Vec::new());
    let writer = Arc::new(std::sync::Mutex::new(writer));
    let refused = refused_then_watched(&ctx, &writer, newer, Duration::from_millis(50));
    let scenario = api_server.run(vec![
        Exchange::get(SOURCE, source()),
        Exchange::get_absent(OUTPUT),
        Exchange::new(Method::POST, CONFIG_MAPS, created),
        Exchange::new(Method::PATCH, STATUS, move |request| {
            assert_eq!(request.body["metadata"]["resourceVersion"], "100");
            refused(request)
        }),
        Exchange::get(SOURCE, source()),
        Exchange::get(OUTPUT, partial_metadata(&output)),
        Exchange::new(Method::PATCH, STATUS, |request| {
            assert_eq!(request.body["metadata"]["resourceVersion"], "105");
            status_applied(request)
        }),
        Exchange::new(Method::POST, EVENTS, |request| {
            assert_eq!(request.body["reason"], "Rendered");
            event_stored(request)
        }),
    ]);
    let result = reconcile(Arc::new(config(None)), ctx).await;
    drop(writer);
    let received = fixtures::finish(scenario).await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    let written = &received[6].body["status"];
    assert_eq!(written["configHash"], hash);
    let history = written["history"].as_array().expect("history");
    assert_eq!(history.len(), 2, "built on the newer status: {written}");
    assert_eq!(history[0]["hash"], json!(old));
    assert_eq!(history[1]["hash"], hash);
    assert_eq!(history[1]["revision"], 2);
}

/// A run whose status write was refused (the config moved on) had written the output already;
/// the run on the newer version finds the output current, and its history entry still names
/// only the key that changed since the files the output held before the first run's write.
#[tokio::test]
async fn a_run_again_after_a_refused_status_names_only_the_keys_its_write_changed() {
    let (status, output) = first_render().await;
    let edited = {
        let mut edited = source();
        edited["metadata"]["resourceVersion"] = json!("44");
        edited["data"]["client.properties"] =
            json!("bootstrap.servers=kafka-0.kafka:9092\nlinger.ms=50\n");
        edited
    };
    let mut newer = cached(config(Some(status.clone())));
    newer.metadata.resource_version = Some("105".into());
    let (ctx, api_server, writer) = fixtures::context_with_watch(
        &[cached(config(Some(status)))],
        fixtures::listed_versions(&[edited.clone(), output.clone()]),
    );
    let writer = Arc::new(std::sync::Mutex::new(writer));
    let refused = refused_then_watched(&ctx, &writer, newer, Duration::from_millis(50));
    // What the output holds after the first run's write; the version cache never sees it here.
    let stored = Arc::new(std::sync::Mutex::new(Value::Null));
    let (keep, read) = (stored.clone(), stored.clone());
    let scenario = api_server.run(vec![
        Exchange::get(SOURCE, edited.clone()),
        Exchange::get(OUTPUT, output),
        Exchange::new(Method::PATCH, OUTPUT, move |request| {
            let mut object = request.body.clone();
            object["metadata"]["resourceVersion"] = json!("43");
            *keep.lock().expect("stored") = object.clone();
            (StatusCode::OK, object)
        }),
        Exchange::new(Method::PATCH, STATUS, refused),
        Exchange::get(SOURCE, edited),
        Exchange::new(Method::GET, OUTPUT, move |_| {
            (StatusCode::OK, read.lock().expect("stored").clone())
        }),
        Exchange::new(Method::PATCH, STATUS, |request| {
            assert_eq!(request.body["metadata"]["resourceVersion"], "105");
            status_applied(request)
        }),
        Exchange::new(Method::POST, EVENTS, event_stored),
    ]);
    let result = reconcile(Arc::new(cached(config(None))), ctx).await;
    drop(writer);
    let received = fixtures::finish(scenario).await;
    assert_eq!(result.expect("the reconcile"), Action::await_change());
    assert_eq!(writes(&received).len(), 4, "{received:?}");
    let written = &received[6].body["status"];
    let history = written["history"].as_array().expect("history");
    assert_eq!(history.len(), 2, "{written}");
    assert_eq!(history[1]["changedKeys"], json!(["linger.ms"]), "{written}");
}

/// A config that keeps moving (every status write refused) is an error after three runs, retried
/// with backoff: the reconcile does not spin.
#[tokio::test]
async fn a_config_that_keeps_moving_is_a_stale_status_error_after_three_runs() {
    let (ctx, api_server, writer) = fixtures::context_with_watch(&[config(None)], Vec::new());
    let writer = Arc::new(std::sync::Mutex::new(writer));
    let version = |v: &str| {
        let mut newer = config(None);
        newer.metadata.resource_version = Some(v.into());
        newer
    };
    let mut scenario = Vec::new();
    for newer in ["101", "102", "103"] {
        scenario.push(Exchange::get(SOURCE, source()));
        scenario.push(Exchange::get_absent(OUTPUT));
        scenario.push(Exchange::new(Method::POST, CONFIG_MAPS, created));
        let refused = refused_then_watched(&ctx, &writer, version(newer), Duration::ZERO);
        scenario.push(Exchange::new(Method::PATCH, STATUS, refused));
    }
    // A first reconcile that fails says "Reconciling", onto the version it was handed: refused.
    let refused = refused_then_watched(&ctx, &writer, version("104"), Duration::ZERO);
    scenario.push(Exchange::new(Method::PATCH, STATUS, refused));
    let scenario = api_server.run(scenario);
    let result = reconcile(Arc::new(config(None)), ctx).await;
    drop(writer);
    let received = fixtures::finish(scenario).await;
    assert!(
        matches!(result, Err(Error::StaleStatus)),
        "{result:?} after {received:?}"
    );
    let versions: Vec<&Value> = received
        .iter()
        .filter(|r| r.method == Method::PATCH)
        .map(|r| &r.body["metadata"]["resourceVersion"])
        .collect();
    assert_eq!(
        versions,
        [&json!("100"), &json!("101"), &json!("102"), &json!("100")]
    );
}
