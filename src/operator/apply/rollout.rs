//! The hash annotation on each rollout target's pod template.

use super::*;

/// Sets the hash annotation on each target's pod template when it differs, and reports what each
/// target carries now. A missing target is reported (hash absent), not an error.
pub async fn roll_out(
    client: &Client,
    metrics: &Metrics,
    namespace: &str,
    targets: &[RolloutTarget],
    hash: &str,
) -> Result<Vec<RolloutStatus>, Error> {
    let mut statuses = Vec::new();
    for target in targets {
        let current = match target.kind {
            RolloutKind::Deployment => {
                let api: Api<Deployment> = Api::namespaced(client.clone(), namespace);
                roll::<Deployment>(&api, metrics, &target.name, hash, |d| {
                    d.spec.as_ref().map(|s| &s.template)
                })
                .await?
            }
            RolloutKind::StatefulSet => {
                let api: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
                roll::<StatefulSet>(&api, metrics, &target.name, hash, |s| {
                    s.spec.as_ref().map(|s| &s.template)
                })
                .await?
            }
            RolloutKind::DaemonSet => {
                let api: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
                roll::<DaemonSet>(&api, metrics, &target.name, hash, |s| {
                    s.spec.as_ref().map(|s| &s.template)
                })
                .await?
            }
        };
        statuses.push(RolloutStatus {
            kind: format!("{:?}", target.kind),
            name: target.name.clone(),
            hash: current,
            // Filled from the workload watch (`sync_status::record`).
            updated: None,
            ready: None,
            total: None,
        });
    }
    Ok(statuses)
}

async fn roll<K>(
    api: &Api<K>,
    metrics: &Metrics,
    name: &str,
    hash: &str,
    template: impl Fn(&K) -> Option<&PodTemplateSpec>,
) -> Result<Option<String>, Error>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
{
    let Some(workload) = api.get_opt(name).await? else {
        return Ok(None);
    };
    let live = template_hash(template(&workload));
    if live.as_deref() == Some(hash) {
        return Ok(live);
    }
    // Only the one annotation: SSA makes us the manager of exactly that field.
    let patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": {"name": name},
        "spec": {"template": {"metadata": {"annotations": {HASH_ANNOTATION: hash}}}}
    });
    api.patch(name, &apply_params(), &Patch::Apply(&patch))
        .await?;
    metrics.write("Workload");
    tracing::info!(workload = %name, kind = %K::kind(&()), %hash, "rolled out the new configuration hash");
    Ok(Some(hash.to_string()))
}
