//! Old immutable outputs: which ones a rollout target may still run, and deleting the rest.

use kube::api::{ApiResource, DynamicObject, Preconditions};

use super::rollout::{self, Target};
use super::*;
use crate::engine::spec::OutputKind;
use crate::status::HistoryEntry;

/// An old (not current) immutable output of ours, as seen by [`plan_prune`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldOutput {
    pub name: String,
    /// Its `kafkaconfig.dev/config-hash` annotation.
    pub hash: Option<String>,
    /// The revision of `status.history` that last made its hash current, if still listed.
    pub revision: Option<i64>,
    pub created: Option<Timestamp>,
}

/// What [`plan_prune`] decided.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PrunePlan {
    /// Beyond the newest `keep` and referenced by no rollout target: delete.
    pub delete: Vec<String>,
    /// Beyond the newest `keep` but still referenced: kept until the targets move on.
    pub held: Vec<String>,
}

/// What the rollout targets still run or may run: config hashes (pod-template annotations) and
/// the names of the objects their volumes mount.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct InUse {
    pub hashes: BTreeSet<String>,
    pub names: BTreeSet<String>,
}

impl InUse {
    fn add(&mut self, template: Option<&PodTemplateSpec>) {
        self.hashes.extend(template_hash(template));
        let volumes = template
            .and_then(|t| t.spec.as_ref())
            .and_then(|s| s.volumes.as_ref());
        for volume in volumes.into_iter().flatten() {
            self.names
                .extend(volume.config_map.as_ref().map(|c| c.name.clone()));
            self.names
                .extend(volume.secret.as_ref().and_then(|s| s.secret_name.clone()));
        }
    }

    fn holds(&self, output: &OldOutput) -> bool {
        self.names.contains(&output.name)
            || output
                .hash
                .as_ref()
                .is_some_and(|h| self.hashes.contains(h))
    }
}

/// Garbage collection of old immutable outputs (pure): the newest `keep` are always kept; an older
/// one is deleted only when nothing in `in_use` references it (by hash or by name). Newest is
/// decided by the history revision that made each hash current, then by creation time (whole
/// seconds: two outputs written within one second tie on it), then by name.
pub fn plan_prune(mut old: Vec<OldOutput>, keep: usize, in_use: &InUse) -> PrunePlan {
    old.sort_by(|a, b| (b.revision, b.created, &b.name).cmp(&(a.revision, a.created, &a.name)));
    let mut plan = PrunePlan::default();
    for object in old.into_iter().skip(keep) {
        if in_use.holds(&object) {
            plan.held.push(object.name);
        } else {
            plan.delete.push(object.name);
        }
    }
    plan
}

pub(super) fn template_hash(template: Option<&PodTemplateSpec>) -> Option<String> {
    template.and_then(|t| t.metadata.as_ref()).and_then(hash_of)
}

/// The error to give while a workload's controller has not seen its latest spec:
/// `status.observedGeneration` (a number, or for an Argo Rollout the same number as a string)
/// against `metadata.generation`.
/// None yet: no controller at work (just created, or none installed), re-checked at the slower
/// pace (`RolloutInProgress`); behind: it is about to act (`NotObserved`).
fn unobserved(workload: &DynamicObject, what: impl Fn() -> String) -> Option<Error> {
    let observed = workload
        .data
        .pointer("/status/observedGeneration")
        .and_then(|g| {
            g.as_i64()
                .or_else(|| g.as_str().and_then(|s| s.parse().ok()))
        });
    match (observed, workload.metadata.generation) {
        (None, Some(_)) => Some(Error::RolloutInProgress(what())),
        (Some(observed), Some(generation)) if observed < generation => {
            Some(Error::NotObserved(what()))
        }
        _ => None,
    }
}

/// What the rollout targets still run or may run: each target's pod template and, for a
/// Deployment or an Argo Rollout, each of its ReplicaSets that still has replicas (desired or
/// actual). Until a target's controller has seen its latest spec (it may yet create a ReplicaSet
/// for a template in between, or not have scaled the old one), and while a StatefulSet or
/// DaemonSet rolls, which outputs are mounted is not known: `Error::RolloutInProgress`.
pub async fn hashes_in_use(
    client: &Client,
    namespace: &str,
    targets: &[Target],
) -> Result<InUse, Error> {
    let mut in_use = InUse::default();
    for target in targets {
        let what = || format!("{:?} {}", target.kind, target.name);
        match target.kind {
            RolloutKind::Deployment | RolloutKind::Rollout => {
                let resource = rollout::api_resource(target.kind);
                let api: Api<DynamicObject> =
                    Api::namespaced_with(client.clone(), namespace, &resource);
                // Absent, or (a Rollout) its CRD is not installed: a 404 either way.
                let Some(workload) = api.get_opt(&target.name).await? else {
                    continue;
                };
                if let Some(error) = unobserved(&workload, what) {
                    return Err(error);
                }
                in_use.add(rollout::dynamic_template(&workload).as_ref());
                let Some(uid) = workload.uid() else {
                    continue;
                };
                let selector = workload
                    .data
                    .pointer("/spec/selector/matchLabels")
                    .and_then(|l| l.as_object())
                    .map(|labels| {
                        labels
                            .iter()
                            .filter_map(|(k, v)| Some(format!("{k}={}", v.as_str()?)))
                            .collect::<Vec<_>>()
                            .join(",")
                    })
                    .unwrap_or_default();
                let rs_api: Api<ReplicaSet> = Api::namespaced(client.clone(), namespace);
                let lp = ListParams::default().labels(&selector);
                for rs in rs_api.list(&lp).await? {
                    let desired = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                    let actual = rs.status.as_ref().map(|s| s.replicas).unwrap_or(0);
                    if is_controlled_by(rs.meta(), &uid) && (desired > 0 || actual > 0) {
                        in_use.add(rs.spec.as_ref().and_then(|s| s.template.as_ref()));
                    }
                }
            }
            // Their old pods run from ControllerRevisions, which say which template each pod
            // has only through pod labels; until the rollout has finished, every old output may
            // still be mounted, so nothing is pruned (the caller re-checks soon).
            RolloutKind::StatefulSet => {
                let api: Api<StatefulSet> = Api::namespaced(client.clone(), namespace);
                if let Some(s) = api.get_opt(&target.name).await? {
                    if !statefulset_settled(&s) {
                        return Err(Error::RolloutInProgress(what()));
                    }
                    in_use.add(s.spec.as_ref().map(|s| &s.template));
                }
            }
            RolloutKind::DaemonSet => {
                let api: Api<DaemonSet> = Api::namespaced(client.clone(), namespace);
                if let Some(d) = api.get_opt(&target.name).await? {
                    if !daemonset_settled(&d) {
                        return Err(Error::RolloutInProgress(what()));
                    }
                    in_use.add(d.spec.as_ref().map(|s| &s.template));
                }
            }
        }
    }
    Ok(in_use)
}

/// Every pod of the StatefulSet runs the current template: the controller has seen the latest
/// spec, and the current revision is the update revision with all replicas updated.
pub fn statefulset_settled(set: &StatefulSet) -> bool {
    let Some(status) = &set.status else {
        return false;
    };
    let replicas = set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    status.observed_generation >= set.metadata.generation
        && status.current_revision.is_some()
        && status.current_revision == status.update_revision
        && status.updated_replicas.unwrap_or(0) >= replicas
        && status.replicas <= replicas
}

/// Every scheduled pod of the DaemonSet runs the current template.
pub fn daemonset_settled(set: &DaemonSet) -> bool {
    let Some(status) = &set.status else {
        return false;
    };
    status.observed_generation >= set.metadata.generation
        && status.updated_number_scheduled.unwrap_or(0) >= status.desired_number_scheduled
        && status.current_number_scheduled <= status.desired_number_scheduled
        && status.number_unavailable.unwrap_or(0) == 0
}

/// When old immutable outputs are to be checked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPending {
    /// Nothing held back.
    No,
    /// A target still references some, or rolls (pods are replaced in seconds to minutes).
    Held,
    /// A target's controller has not observed its latest spec (milliseconds, usually).
    Observing,
}

/// With `output.immutable`, deletes our previous outputs beyond the newest `keep` that no rollout
/// target references any more. Says whether some are held back because a target still
/// references them (or that could not be checked), so the caller re-checks. `current`: the
/// current output's name (never deleted); `history`: `status.history` (the order of contents).
pub async fn prune_immutable(
    client: &Client,
    metrics: &Metrics,
    owner: &Owner<'_>,
    spec: &ToolConfigSpec,
    current: &str,
    targets: &[Target],
    history: &[HistoryEntry],
) -> Result<GcPending, Error> {
    let keep = spec.output().keep.unwrap_or(3) as usize;
    let uid = owner.uid.ok_or(Error::MissingField("metadata.uid"))?;
    let in_use = match hashes_in_use(client, owner.namespace, targets).await {
        Ok(in_use) => in_use,
        Err(Error::RolloutInProgress(target)) => {
            tracing::debug!(%target, "rollout in progress; old immutable outputs kept for now");
            return Ok(GcPending::Held);
        }
        Err(Error::NotObserved(target)) => {
            tracing::debug!(%target, "latest spec not observed yet; old immutable outputs kept for now");
            return Ok(GcPending::Observing);
        }
        Err(error) => {
            // Never delete what may still be mounted: skip this round (e.g. no RBAC to list
            // ReplicaSets) and try again later.
            tracing::warn!(%error, "cannot tell which immutable outputs the rollout targets still use; not pruning");
            return Ok(GcPending::Held);
        }
    };
    let resource = match spec.output().kind() {
        OutputKind::ConfigMap => ApiResource::erase::<ConfigMap>(&()),
        OutputKind::Secret => ApiResource::erase::<Secret>(&()),
    };
    let kind = &resource.kind;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), owner.namespace, &resource);
    let selector = format!("{CONFIG_LABEL}={}", owner.name);
    let listed: Vec<_> = api
        .list_metadata(&ListParams::default().labels(&selector))
        .await?
        .items
        .into_iter()
        .filter(|o| {
            is_controlled_by(&o.metadata, uid) && o.metadata.name.as_deref() != Some(current)
        })
        .collect();
    // The delete names the uid listed: an object deleted and created again under the same name
    // in between (somebody else's, or not ours) is refused by the API server (409), not deleted.
    let uids: BTreeMap<&str, &str> = listed
        .iter()
        .filter_map(|o| Some((o.metadata.name.as_deref()?, o.metadata.uid.as_deref()?)))
        .collect();
    let old: Vec<OldOutput> = listed
        .iter()
        .filter_map(|o| {
            let hash = hash_of(&o.metadata);
            Some(OldOutput {
                revision: history
                    .iter()
                    .filter(|entry| Some(&entry.hash) == hash.as_ref())
                    .map(|entry| entry.revision)
                    .max(),
                hash,
                created: o.metadata.creation_timestamp.as_ref().map(|t| t.0),
                name: o.metadata.name.clone()?,
            })
        })
        .collect();
    let plan = plan_prune(old, keep, &in_use);
    for name in &plan.held {
        tracing::debug!(%kind, %name, "old immutable output still used by a rollout target; kept");
    }
    for name in &plan.delete {
        let Some(&listed_uid) = uids.get(name.as_str()) else {
            continue;
        };
        let only_this = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(listed_uid.to_string()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match api.delete(name, &only_this).await {
            Ok(_) => {
                metrics.write("Delete");
                tracing::info!(%kind, %name, "deleted an old immutable output");
            }
            Err(kube::Error::Api(s)) if s.is_not_found() => {}
            Err(e) => {
                tracing::warn!(%kind, %name, error = %e, "cannot delete an old immutable output")
            }
        }
    }
    Ok(if plan.held.is_empty() {
        GcPending::No
    } else {
        GcPending::Held
    })
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
