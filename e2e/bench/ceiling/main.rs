//! The ceiling of an initial sync on this API server (issue 30, part 2): a minimal kube-rs client
//! with no engine that makes, for each config, the writes the operator's initial sync must make —
//! server-side apply of the output ConfigMap (owned by the config) and one server-side apply of
//! the config's status — with the operator's concurrency (`RECONCILE_CONCURRENCY`). Started by
//! `e2e/bench/peer/run.py`; prints a JSON summary.
//!
//!   sync-ceiling --keys FILE [--template FILE]
//!
//! `--keys`: one `namespace name` per line, KafkaToolConfigs that exist. `--template`: an output
//! ConfigMap and a status the operator wrote (`{"config", "output", "status"}`), replayed for each
//! config with the config's name in place of the template's: the same bytes the operator writes.
//! Without it, a made-up output of ~2 KB of properties and a small status (hash, output, Valid,
//! Ready: about 0.6 KB).

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Instant;

const MANAGER: &str = "kafka-config-operator";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (keys_file, template) = match args.as_slice() {
        [_, flag, file] if flag == "--keys" => (file.clone(), None),
        [_, flag, file, t, template] if flag == "--keys" && t == "--template" => {
            let text = std::fs::read_to_string(template)?;
            let value: Value = serde_json::from_str(&text)?;
            let config = value["config"]
                .as_str()
                .ok_or("template: no config")?
                .to_string();
            (file.clone(), Some((config, text)))
        }
        _ => return Err("usage: sync-ceiling --keys FILE [--template FILE]".into()),
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
    let slots = 32; // src/operator/running.rs RECONCILE_CONCURRENCY
    let writes = futures::stream::iter(keys.iter())
        .map(|(ns, name)| {
            let client = client.clone();
            let resource = resource.clone();
            let uid = uids.get(&(ns.clone(), name.clone())).cloned();
            let writes = match &template {
                Some((config, text)) => replayed(config, text, ns, name, uid.as_deref()),
                None => made_up(ns, name, uid.as_deref()),
            };
            async move { sync_one(client, &resource, ns, name, writes).await }
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
               "writes_per_config": 2, "replayed": template.is_some(),
               "status_bytes": status_bytes(&template, &keys)})
    );
    if failed > 0 {
        return Err(format!("{failed} configs failed").into());
    }
    Ok(())
}

/// The output ConfigMap and the status of one config.
type Writes = Result<(Value, Value), String>;

/// The template's output and status with `name` for the template's config name, in `ns`, owned
/// by `uid`.
fn replayed(config: &str, template: &str, ns: &str, name: &str, uid: Option<&str>) -> Writes {
    let value: Value =
        serde_json::from_str(&template.replace(config, name)).map_err(|e| e.to_string())?;
    let mut output = value["output"].clone();
    output["metadata"]["namespace"] = json!(ns);
    output["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
        "name": name, "uid": uid.unwrap_or_default(), "controller": true, "blockOwnerDeletion": true}]);
    Ok((output, value["status"].clone()))
}

/// An output of ~2 KB of properties and a small status, made up.
fn made_up(ns: &str, name: &str, uid: Option<&str>) -> Writes {
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
                                 "name": name, "uid": uid.unwrap_or_default(), "controller": true,
                                 "blockOwnerDeletion": true}],
        },
        "data": {"client.properties": properties, "tool.args": format!("--topic\nbench-{name}\n")},
    });
    let status = json!({
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
    });
    Ok((output, status))
}

/// The first config's status, serialized compactly: its size in bytes.
fn status_bytes(template: &Option<(String, String)>, keys: &[(String, String)]) -> usize {
    let Some((ns, name)) = keys.first() else {
        return 0;
    };
    let writes = match template {
        Some((config, text)) => replayed(config, text, ns, name, None),
        None => made_up(ns, name, None),
    };
    writes.map_or(0, |(_, status)| status.to_string().len())
}

async fn sync_one(
    client: kube::Client,
    resource: &ApiResource,
    ns: &str,
    name: &str,
    writes: Writes,
) -> Result<(), Box<dyn std::error::Error>> {
    let (output, status) = writes?;
    let output_name = output["metadata"]["name"]
        .as_str()
        .ok_or("output without a name")?
        .to_string();
    let params = PatchParams::apply(MANAGER).force();
    let cms: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    cms.patch(&output_name, &params, &Patch::Apply(&output))
        .await?;
    let configs: Api<DynamicObject> = Api::namespaced_with(client, ns, resource);
    let status = json!({
        "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig", "status": status,
    });
    configs
        .patch_status(name, &params, &Patch::Apply(&status))
        .await?;
    Ok(())
}
