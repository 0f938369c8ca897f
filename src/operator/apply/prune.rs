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
mod tests {
    use http::{Method, StatusCode};
    use serde_json::{Value, json};

    use super::*;
    use crate::operator::fixtures::{self, Exchange, Received, api_status};

    const CONFIG_MAPS: &str = "/api/v1/namespaces/team-a/configmaps";

    /// An old immutable output of config `orders` (uid `config-uid`), as a metadata list has it.
    fn listed(name: &str, uid: &str, second: u32) -> Value {
        listed_under("config-uid", name, uid, second)
    }

    /// An output labelled for config `orders`, controlled by `controller`.
    fn listed_under(controller: &str, name: &str, uid: &str, second: u32) -> Value {
        json!({
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": {
                "name": name, "namespace": "team-a", "uid": uid,
                "creationTimestamp": format!("2026-12-07T10:00:{second:02}Z"),
                "labels": {CONFIG_LABEL: "orders"},
                "annotations": {HASH_ANNOTATION: format!("hash-{name}")},
                "ownerReferences": [{
                    "apiVersion": "kafkaconfig.dev/v1alpha1", "kind": "KafkaToolConfig",
                    "name": "orders", "uid": controller, "controller": true
                }]
            }
        })
    }

    /// A delete of `name` that must name `uid` as its precondition; answered with `status`.
    fn delete(name: &str, uid: &'static str, status: StatusCode) -> Exchange {
        Exchange::new(
            Method::DELETE,
            format!("{CONFIG_MAPS}/{name}"),
            move |r: &Received| {
                assert_eq!(r.body["preconditions"]["uid"], uid, "{}", r.body);
                match status {
                    StatusCode::OK => (status, json!({"kind": "Status", "status": "Success"})),
                    _ => (
                        status,
                        api_status(409, "Conflict", "Precondition failed: UID"),
                    ),
                }
            },
        )
    }

    const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/team-a/deployments/web";
    const REPLICA_SETS: &str = "/apis/apps/v1/namespaces/team-a/replicasets";

    /// A pod template mounting ConfigMap `volume`, annotated with `hash`.
    fn template(hash: &str, volume: &str) -> Value {
        json!({
            "metadata": {"annotations": {HASH_ANNOTATION: hash}},
            "spec": {
                "containers": [{"name": "app", "image": "apache/kafka"}],
                "volumes": [{"name": "kafka-config", "configMap": {"name": volume}}]
            }
        })
    }

    /// Deployment `web` at `generation`, its controller at `observed` (None: not yet).
    fn deployment(generation: i64, observed: Option<Value>) -> Value {
        let mut object = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "name": "web", "namespace": "team-a", "uid": "web-uid", "generation": generation
            },
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": template("h3", "orders-out-3")
            }
        });
        if let Some(observed) = observed {
            object["status"] = json!({"observedGeneration": observed});
        }
        object
    }

    /// A ReplicaSet controlled by `owner`, with `desired` and `actual` replicas.
    fn replica_set(name: &str, owner: &str, hash: &str, [desired, actual]: [i32; 2]) -> Value {
        json!({
            "metadata": {
                "name": name, "namespace": "team-a",
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                    "uid": owner, "controller": true
                }]
            },
            "spec": {
                "replicas": desired,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template(hash, &format!("orders-out-{hash}"))
            },
            "status": {"replicas": actual}
        })
    }

    fn web() -> Vec<Target> {
        vec![Target {
            kind: RolloutKind::Deployment,
            name: "web".into(),
            opted_in: false,
        }]
    }

    #[tokio::test]
    async fn a_deployment_holds_its_template_and_every_replica_set_of_its_with_pods() {
        let (client, api_server) = fixtures::client();
        let replica_sets = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSetList", "metadata": {},
            "items": [
                replica_set("web-2", "web-uid", "h2", [0, 1]),
                replica_set("web-1", "web-uid", "h1", [0, 0]),
                replica_set("other", "other-uid", "h0", [1, 1]),
                replica_set("web-4", "web-uid", "h4", [1, 0]),
            ]
        });
        let scenario = api_server.run(vec![
            Exchange::get(DEPLOYMENT, deployment(2, Some(json!(2)))),
            Exchange::new(Method::GET, REPLICA_SETS, move |r: &Received| {
                assert!(r.query.contains("labelSelector=app%3Dweb"), "{}", r.query);
                (StatusCode::OK, replica_sets)
            }),
        ]);
        let in_use = hashes_in_use(&client, "team-a", &web()).await;
        drop(client);
        fixtures::finish(scenario).await;
        let in_use = in_use.expect("the targets read");
        // The template, the ReplicaSet still scaling down and the one scaling up; not the
        // scaled-down one, nor one that another Deployment controls.
        assert_eq!(in_use.hashes, ["h2", "h3", "h4"].map(String::from).into());
        assert_eq!(
            in_use.names,
            ["orders-out-3", "orders-out-h2", "orders-out-h4"]
                .map(String::from)
                .into()
        );
    }

    #[tokio::test]
    async fn a_stateful_set_or_daemon_set_is_known_to_hold_only_its_template_once_settled() {
        let stateful_set = |updated: i32| {
            json!({
                "apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "team-a", "generation": 1},
                "spec": {
                    "replicas": 2, "serviceName": "db",
                    "selector": {"matchLabels": {"app": "db"}},
                    "template": template("h5", "orders-out-5")
                },
                "status": {
                    "observedGeneration": 1, "replicas": 2, "updatedReplicas": updated,
                    "currentRevision": "db-1", "updateRevision": "db-1"
                }
            })
        };
        let daemon_set = |unavailable: i32| {
            json!({
                "apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": "agent", "namespace": "team-a", "generation": 1},
                "spec": {
                    "selector": {"matchLabels": {"app": "agent"}},
                    "template": template("h6", "orders-out-6")
                },
                "status": {
                    "observedGeneration": 1, "desiredNumberScheduled": 3,
                    "currentNumberScheduled": 3, "numberMisscheduled": 0, "numberReady": 3,
                    "updatedNumberScheduled": 3, "numberUnavailable": unavailable
                }
            })
        };
        let targets = [
            (RolloutKind::StatefulSet, "db", "statefulsets"),
            (RolloutKind::DaemonSet, "agent", "daemonsets"),
        ]
        .map(|(kind, name, plural)| {
            let target = Target {
                kind,
                name: name.into(),
                opted_in: false,
            };
            (
                target,
                format!("/apis/apps/v1/namespaces/team-a/{plural}/{name}"),
            )
        });
        let ask = |answers: [Value; 2]| {
            let (client, api_server) = fixtures::client();
            let [db, agent] = answers;
            let scenario = api_server.run(vec![
                Exchange::get(targets[0].1.clone(), db),
                Exchange::get(targets[1].1.clone(), agent),
            ]);
            let targets: Vec<Target> = targets.iter().map(|(t, _)| t.clone()).collect();
            async move {
                let in_use = hashes_in_use(&client, "team-a", &targets).await;
                drop(client);
                fixtures::finish(scenario).await;
                in_use
            }
        };
        let in_use = ask([stateful_set(2), daemon_set(0)])
            .await
            .expect("settled");
        assert_eq!(in_use.hashes, ["h5", "h6"].map(String::from).into());
        // Rolling: which ControllerRevision each pod runs is not known, so nothing is pruned.
        let rolling = ask([stateful_set(2), daemon_set(1)]).await;
        assert_eq!(
            rolling.map_err(|e| e.metric_label()),
            Err("RolloutInProgress")
        );
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(vec![Exchange::get(targets[0].1.clone(), stateful_set(1))]);
        let rolling = hashes_in_use(&client, "team-a", &[targets[0].0.clone()]).await;
        drop(client);
        fixtures::finish(scenario).await;
        assert_eq!(
            rolling.map_err(|e| e.metric_label()),
            Err("RolloutInProgress")
        );
    }

    #[tokio::test]
    async fn nothing_is_known_in_use_while_a_deployment_is_unobserved_or_unreadable() {
        for (answer, expected) in [
            (deployment(2, None), "RolloutInProgress"),
            (deployment(3, Some(json!(2))), "NotObserved"),
            // An Argo Rollout's observedGeneration is a string.
            (deployment(3, Some(json!("2"))), "NotObserved"),
        ] {
            let (client, api_server) = fixtures::client();
            let scenario = api_server.run(vec![Exchange::get(DEPLOYMENT, answer)]);
            let in_use = hashes_in_use(&client, "team-a", &web()).await;
            drop(client);
            fixtures::finish(scenario).await;
            let error = in_use.expect_err("not known");
            assert_eq!(error.metric_label(), expected, "{error}");
        }
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(vec![Exchange::new(Method::GET, DEPLOYMENT, |_| {
            (StatusCode::FORBIDDEN, api_status(403, "Forbidden", "no"))
        })]);
        let in_use = hashes_in_use(&client, "team-a", &web()).await;
        drop(client);
        fixtures::finish(scenario).await;
        assert_eq!(in_use.expect_err("unreadable").metric_label(), "Forbidden");
    }

    #[tokio::test]
    async fn an_old_output_is_deleted_only_under_the_uid_it_was_listed_with() {
        let (client, api_server) = fixtures::client();
        let scenario = api_server.run(vec![
            Exchange::get(
                CONFIG_MAPS,
                json!({
                    "apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                    "metadata": {},
                    "items": [
                        listed("orders-out-4", "uid-4", 4),
                        listed("orders-out-3", "uid-3", 3),
                        listed("orders-out-2", "uid-2", 2),
                        listed("orders-out-1", "uid-1", 1),
                        // Labelled for this config, but an earlier config of the same name's.
                        listed_under("earlier-uid", "orders-out-0", "uid-0", 0),
                    ]
                }),
            ),
            delete("orders-out-3", "uid-3", StatusCode::OK),
            // Replaced under the same name since the list: refused, and not an error.
            delete("orders-out-2", "uid-2", StatusCode::CONFLICT),
        ]);
        // The history orders before creation times: out-1's content was made current last.
        let history =
            [("hash-orders-out-3", 4), ("hash-orders-out-1", 5)].map(|(hash, revision)| {
                HistoryEntry {
                    revision,
                    hash: hash.to_string(),
                    time: String::new(),
                    changed_keys: Vec::new(),
                    cause: String::new(),
                    by: None,
                }
            });
        let spec: ToolConfigSpec = serde_json::from_value(json!({
            "tool": "kafka-console-producer",
            "output": {"name": "orders-out", "immutable": true, "keep": 1}
        }))
        .expect("a valid spec");
        let owner = Owner {
            name: "orders",
            namespace: "team-a",
            uid: Some("config-uid"),
        };
        let pending = prune_immutable(
            &client,
            &Metrics::new(),
            &owner,
            &spec,
            "orders-out-4",
            &[],
            &history,
        )
        .await;
        drop(client);
        let received = fixtures::finish(scenario).await;
        assert_eq!(pending.expect("pruned"), GcPending::No);
        assert_eq!(received.len(), 3);
    }

    fn old(name: &str, hash: &str, secs: i64) -> OldOutput {
        OldOutput {
            name: name.to_string(),
            hash: Some(hash.to_string()),
            revision: None,
            created: Some(Timestamp::from_second(secs).expect("valid timestamp")),
        }
    }

    fn set(hashes: &[&str]) -> InUse {
        InUse {
            hashes: hashes.iter().map(|h| h.to_string()).collect(),
            names: BTreeSet::new(),
        }
    }

    #[test]
    fn outputs_written_within_one_second_are_ordered_by_their_history_revision() {
        // creationTimestamp has whole seconds: h1 and h2 tie on it, and the name alone would
        // call h1 ("…-d7…") the newer one and delete h2 (the CI flake of 2026-12-06).
        let revised = |name: &str, hash: &str, revision: i64| OldOutput {
            revision: Some(revision),
            ..old(name, hash, 30)
        };
        let plan = plan_prune(
            vec![
                revised("c-d710bed5", "h1", 1),
                revised("c-aedb5ed9", "h2", 2),
            ],
            1,
            &set(&[]),
        );
        assert_eq!(plan.delete, vec!["c-d710bed5"]);
        // A hash no longer in history is older than every one still listed.
        let plan = plan_prune(
            vec![old("c-ffffffff", "h0", 40), revised("c-00000000", "h9", 9)],
            1,
            &set(&[]),
        );
        assert_eq!(plan.delete, vec!["c-ffffffff"]);
    }

    #[test]
    fn an_output_a_volume_still_names_is_held_whatever_its_hash() {
        let in_use = InUse {
            hashes: BTreeSet::new(),
            names: ["c-1".to_string()].into(),
        };
        let plan = plan_prune(vec![old("c-1", "h1", 1), old("c-2", "h2", 2)], 0, &in_use);
        assert_eq!(plan.held, vec!["c-1"]);
        assert_eq!(plan.delete, vec!["c-2"]);
    }

    #[test]
    fn keeps_the_newest_and_deletes_unused_older_ones() {
        let plan = plan_prune(
            vec![
                old("c-1", "h1", 1),
                old("c-3", "h3", 3),
                old("c-2", "h2", 2),
            ],
            1,
            &set(&[]),
        );
        assert_eq!(plan.delete, vec!["c-2", "c-1"]);
        assert!(plan.held.is_empty());
    }

    #[test]
    fn never_deletes_a_hash_a_target_still_uses() {
        let plan = plan_prune(
            vec![
                old("c-1", "h1", 1),
                old("c-2", "h2", 2),
                old("c-3", "h3", 3),
            ],
            1,
            &set(&["h1"]),
        );
        assert_eq!(plan.delete, vec!["c-2"]);
        assert_eq!(plan.held, vec!["c-1"]);
        // keep 0: even the newest old one goes once unused
        let plan = plan_prune(vec![old("c-1", "h1", 1)], 0, &set(&[]));
        assert_eq!(plan.delete, vec!["c-1"]);
        let plan = plan_prune(vec![old("c-1", "h1", 1)], 0, &set(&["h1"]));
        assert_eq!(plan.held, vec!["c-1"]);
        assert!(plan.delete.is_empty());
    }

    #[test]
    fn within_keep_nothing_is_deleted_and_missing_hashes_are_unused() {
        let plan = plan_prune(vec![old("c-1", "h1", 1), old("c-2", "h2", 2)], 3, &set(&[]));
        assert_eq!(plan, PrunePlan::default());
        let mut unannotated = old("c-0", "", 0);
        unannotated.hash = None;
        let plan = plan_prune(vec![unannotated, old("c-1", "h1", 1)], 1, &set(&["h1"]));
        assert_eq!(plan.delete, vec!["c-0"]);
        // same timestamp: the name decides, deterministically
        let plan = plan_prune(vec![old("c-a", "ha", 5), old("c-b", "hb", 5)], 1, &set(&[]));
        assert_eq!(plan.delete, vec!["c-a"]);
    }
}
