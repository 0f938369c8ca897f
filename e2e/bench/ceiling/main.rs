//! The ceiling of an initial sync on this API server (issue 30, part 2): a minimal kube-rs client
//! with no engine that makes, for each config, the writes the operator's initial sync must make —
//! server-side apply of the output ConfigMap (owned by the config, ~2 KB of properties, the hash
//! annotation) and one server-side apply of the config's status — with the operator's
//! concurrency (`RECONCILE_SLOTS`). Started by `e2e/bench/peer/run.py`; prints a JSON summary.
//!
//!   sync-ceiling --keys FILE    # FILE: one `namespace name` per line, KafkaToolConfigs that exist

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;
use std::collections::HashMap;
use std::time::Instant;

const MANAGER: &str = "kafka-config-operator";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let keys_file = match args.as_slice() {
        [_, flag, file] if flag == "--keys" => file.clone(),
        _ => return Err("usage: sync-ceiling --keys FILE".into()),
    };
    let keys: Vec<(String, String)> = std::fs::read_to_string(&keys_file)?
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(ns, name)| (ns.to_string(), name.to_string()))
        .collect();
    let client = kube::Client::try_default().await?;
    let started = Instant::now();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("kafkaconfig.dev", "v1alpha1", "KafkaToolConfig"),
        "kafkatoolconfigs",
    );
    // The operator knows each config's uid from its cache; so does this client, from one list.
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let mut uids = HashMap::new();
    let mut params = ListParams::default().limit(500);
    loop {
        let page = all.list(&params).await?;
        for o in &page.items {
            if let (Some(ns), Some(name), Some(uid)) =
                (&o.metadata.namespace, &o.metadata.name, &o.metadata.uid)
            {
                uids.insert((ns.clone(), name.clone()), uid.clone());
            }
        }
        match page.metadata.continue_ {
            Some(c) if !c.is_empty() => params = params.continue_token(&c),
            _ => break,
        }
    }
    let slots = 32; // src/operator/context.rs RECONCILE_SLOTS
    let writes = futures::stream::iter(keys.iter())
        .map(|(ns, name)| {
            let client = client.clone();
            let resource = resource.clone();
            let uid = uids.get(&(ns.clone(), name.clone())).cloned();
            async move { sync_one(client, &resource, ns, name, uid).await }
        })
        .buffer_unordered(slots)
        .collect::<Vec<_>>()
        .await;
    let seconds = started.elapsed().as_secs_f64();
    let failed = writes.iter().filter(|r| r.is_err()).count();
    if let Some(Err(e)) = writes.iter().find(|r| r.is_err()) {
        eprintln!("first failure: {e}");
    }
    println!(
        "{}",
        json!({"configs": keys.len(), "failed": failed, "seconds": seconds,
               "configs_per_s": (keys.len() - failed) as f64 / seconds, "concurrency": slots,
               "writes_per_config": 2})
    );
    if failed > 0 {
        return Err(format!("{failed} configs failed").into());
    }
    Ok(())
}

async fn sync_one(
    client: kube::Client,
    resource: &ApiResource,
    ns: &str,
    name: &str,
    uid: Option<String>,
) -> Result<(), kube::Error> {
    let uid = uid.unwrap_or_default();
    let hash = format!("hmac-sha256:{:064x}", name.len() as u64 * 7919);
    let properties: String = (0..20)
        .map(|k| {
            format!("# property {k} of {name}: why it is set.\nkey.number.{k}=value-{k}-{name}\n")
        })
        .collect();
    let output = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {
            "name": format!("{name}-ceiling"), "namespace": ns,
            "labels": {"app.kubernetes.io/managed-by": "sync-ceiling", "kafkaconfig.dev/config": name},
            "annotations": {"kafkaconfig.dev/config-hash": hash},
            "ownerReferences": [{"apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                                 "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}],
        },
        "data": {"client.properties": properties, "tool.args": format!("--topic\nbench-{name}\n")},
    });
    let params = PatchParams::apply(MANAGER).force();
    let cms: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    cms.patch(&format!("{name}-ceiling"), &params, &Patch::Apply(&output))
        .await?;
    let configs: Api<DynamicObject> = Api::namespaced_with(client, ns, resource);
    let status = json!({
        "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
        "status": {
            "observedGeneration": 1, "configHash": hash,
            "output": {"kind": "ConfigMap", "name": format!("{name}-ceiling"),
                       "keys": ["client.properties", "tool.args"]},
            "conditions": [
                {"type": "Valid", "status": "True", "reason": "Valid", "message": "every key checked",
                 "lastTransitionTime": "2026-12-06T00:00:00Z", "observedGeneration": 1},
                {"type": "Ready", "status": "True", "reason": "Rendered",
                 "message": format!("output ConfigMap {name}-ceiling is current"),
                 "lastTransitionTime": "2026-12-06T00:00:00Z", "observedGeneration": 1},
            ],
        },
    });
    configs
        .patch_status(name, &params, &Patch::Apply(&status))
        .await?;
    Ok(())
}
