//! Writes: the output object, rollout annotations, old immutable outputs and status. Every write
//! is conditional — nothing is written when the live state already matches — and every update
//! is server-side apply with the field manager `kafka-config-operator`, so an unchanged world
//! costs zero writes and other managers' fields are never clobbered.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{ConfigMap, PodTemplateSpec, Secret};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::engine::render::Rendered;
use crate::engine::spec::{RolloutKind, RolloutTarget, ToolConfigSpec};
use crate::operator::context::Error;
use crate::operator::dereference::get_at_least;
use crate::operator::metrics::Metrics;
use crate::operator::ownership::{foreign_content_owner, hash_of, is_controlled_by};
use crate::operator::versions::Cached;
use crate::output::{self, CONFIG_LABEL, HASH_ANNOTATION, MANAGER, OutputObject, Owner};
use crate::status::RolloutStatus;

mod prune;
mod rollout;

use prune::template_hash;
pub use prune::{
    GcPending, InUse, OldOutput, PrunePlan, daemonset_settled, hashes_in_use, plan_prune,
    prune_immutable, statefulset_settled,
};
pub use rollout::{
    Mount, Target, VIA_ANNOTATION, api_resource, mounting_volumes, roll_out, targets_of,
};

/// The response of a write of a `K`, of which nothing is read: parsing the whole object (its
/// managedFields, an output's files, a status's history) for nothing was garbage on every
/// write, 10,000 objects' worth in an initial sync.
#[derive(Clone, Debug, Deserialize)]
pub struct Written<K> {
    #[serde(skip)]
    meta: kube::core::ObjectMeta,
    #[serde(skip)]
    kind: std::marker::PhantomData<K>,
}

impl<K: Resource<DynamicType = ()>> Resource for Written<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    /// Empty: nothing of the response is read.
    fn meta(&self) -> &kube::core::ObjectMeta {
        &self.meta
    }

    fn meta_mut(&mut self) -> &mut kube::core::ObjectMeta {
        &mut self.meta
    }
}

/// What the output looks like after [`ensure_output`].
#[derive(Debug, Default)]
pub struct OutputState {
    /// Hash of the content in our output object now.
    pub hash: Option<String>,
    /// Files before this reconcile's write (to name the changed keys), when we wrote.
    pub previous_files: Option<BTreeMap<String, String>>,
    pub wrote: bool,
    /// Set when an object we do not own holds the name (`OutputConflict`).
    pub conflict: Option<String>,
}

/// How many times an output update reads and applies when each apply finds the object changed
/// since its read (409).
const UPDATE_ATTEMPTS: u32 = 2;

fn apply_params() -> PatchParams {
    PatchParams::apply(MANAGER).force()
}

/// An output object (ConfigMap or Secret): what the write paths need of it, and its files for
/// the changed-keys diff.
trait OutputFiles:
    Resource<DynamicType = (), Scope = NamespaceResourceScope>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
{
    fn files(&self) -> BTreeMap<String, String>;
}

impl OutputFiles for ConfigMap {
    fn files(&self) -> BTreeMap<String, String> {
        self.data.clone().unwrap_or_default()
    }
}

impl OutputFiles for Secret {
    fn files(&self) -> BTreeMap<String, String> {
        self.data
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.0).into_owned()))
            .collect()
    }
}

/// Creates, applies or leaves alone the output object of a valid config.
pub async fn ensure_output(
    client: &Client,
    metrics: &Metrics,
    owner: &Owner<'_>,
    spec: &ToolConfigSpec,
    rendered: &Rendered,
    previous_status_hash: Option<&str>,
    cached: Cached,
) -> Result<OutputState, Error> {
    let write = OutputWrite {
        client,
        metrics,
        namespace: owner.namespace,
        uid: owner.uid.ok_or(Error::MissingField("metadata.uid"))?,
        rendered,
        immutable: spec.output().immutable == Some(true),
        previous_status_hash,
    };
    match output::build(owner, spec, rendered) {
        OutputObject::ConfigMap(cm) => write.ensure(cm, cached).await,
        OutputObject::Secret(secret) => write.ensure(secret, cached).await,
    }
}

/// What every step of one output write needs.
struct OutputWrite<'a> {
    client: &'a Client,
    metrics: &'a Metrics,
    namespace: &'a str,
    /// The owning config's.
    uid: &'a str,
    rendered: &'a Rendered,
    immutable: bool,
    previous_status_hash: Option<&'a str>,
}

impl OutputWrite<'_> {
    async fn ensure<K: OutputFiles>(
        &self,
        object: K,
        cached: Cached,
    ) -> Result<OutputState, Error> {
        let api: Api<K> = Api::namespaced(self.client.clone(), self.namespace);
        let (name, uid, hash) = (object.name_any(), self.uid, &self.rendered.hash);
        // The watch cache saves a read on the common paths; whenever it could be stale in a way
        // that matters, the API server decides: a create of a name someone took meanwhile fails
        // with 409, and an update reads the object (and its owner) first.
        let cached_version = match &cached {
            Cached::Present {
                resource_version, ..
            } => Some(resource_version.to_string()),
            Cached::Absent | Cached::Unknown => None,
        };
        let existing = match cached {
            Cached::Absent => match self.create(&api, &object).await {
                Err(Error::Kube(kube::Error::Api(status))) if status.is_already_exists() => {
                    read_meta(&api, &name, uid).await?
                }
                created => return created,
            },
            Cached::Present {
                output: Some(meta), ..
            } if meta.controlled_by(uid) => Some(LiveOutput {
                controlled: true,
                hash: meta.hash(),
                foreign_data: meta.foreign_data,
            }),
            _ => read_meta(&api, &name, uid).await?,
        };
        match existing {
            // create, not apply: if someone else creates the name meanwhile, we get 409 and
            // never take over their object.
            None => self.create(&api, &object).await,
            Some(live) if !live.controlled => Ok(conflict(&K::kind(&()), &name)),
            Some(live)
                if (live.hash.as_deref() == Some(hash.as_str()) && !live.foreign_data)
                    || self.immutable =>
            {
                // Immutable objects are content-addressed: same name, same content.
                Ok(OutputState {
                    hash: live.hash.or_else(|| Some(hash.clone())),
                    ..OutputState::default()
                })
            }
            Some(_) => self.read_and_update(&api, object, cached_version).await,
        }
    }

    /// Reads the output and applies the new content onto exactly the object and version read.
    /// First at least the cached version (answered from the API server's watch cache); if the
    /// object changed after that read, or was deleted or replaced by someone else's (which the
    /// owner check never saw), the apply is refused with 409 and the latest version (a quorum
    /// read) decides once more.
    async fn read_and_update<K: OutputFiles>(
        &self,
        api: &Api<K>,
        object: K,
        cached_version: Option<String>,
    ) -> Result<OutputState, Error> {
        let (name, uid, hash) = (object.name_any(), self.uid, &self.rendered.hash);
        let mut at_least = cached_version;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let old = match get_at_least(api, &name, at_least.as_deref()).await? {
                // The cache is behind the object (its watch is down or relisting after a 410,
                // or has not brought in our last write yet): what was read decides, so content
                // the output already holds is not written again.
                Some(old) if holds(old.meta(), uid, hash) => {
                    return Ok(OutputState {
                        hash: Some(hash.clone()),
                        ..OutputState::default()
                    });
                }
                Some(old) if is_controlled_by(old.meta(), uid) => old,
                Some(_) => return Ok(conflict(&K::kind(&()), &name)),
                // Deleted meanwhile: create it again.
                None => return self.create(api, &object).await,
            };
            match self.update(&name, &object, old).await {
                Err(Error::Kube(kube::Error::Api(status)))
                    if status.is_conflict() && attempts < UPDATE_ATTEMPTS =>
                {
                    at_least = None;
                }
                written => return written,
            }
        }
    }

    /// Creates the output; for an immutable output, the previous revision's files name the
    /// changed keys in history.
    async fn create<K: OutputFiles>(&self, api: &Api<K>, object: &K) -> Result<OutputState, Error> {
        let params = PostParams {
            field_manager: Some(MANAGER.to_string()),
            ..PostParams::default()
        };
        api.create(&params, object).await?;
        self.metrics.write(&K::kind(&()));
        let mut state = OutputState {
            wrote: true,
            hash: Some(self.rendered.hash.clone()),
            ..OutputState::default()
        };
        if self.immutable
            && let Some(prev) = self.previous_status_hash
        {
            let prev_name = output::immutable_name(&self.rendered.name, prev);
            if let Some(old) = api.get_opt(&prev_name).await?
                && is_controlled_by(old.meta(), self.uid)
            {
                state.previous_files = Some(old.files());
            }
        }
        Ok(state)
    }

    /// Applies new content over an output we control (`old`, just read), only onto the object
    /// and version read: the API server answers 409 if it changed since, was deleted (the uid:
    /// server-side apply would otherwise create it) or replaced by another object.
    async fn update<K: OutputFiles>(
        &self,
        name: &str,
        object: &K,
        old: K,
    ) -> Result<OutputState, Error> {
        let mut guarded = object.clone();
        guarded.meta_mut().uid = old.meta().uid.clone();
        guarded.meta_mut().resource_version = old.meta().resource_version.clone();
        let written: Api<Written<K>> = Api::namespaced(self.client.clone(), self.namespace);
        written
            .patch(name, &apply_params(), &Patch::Apply(&guarded))
            .await?;
        self.metrics.write(&K::kind(&()));
        Ok(OutputState {
            previous_files: Some(old.files()),
            wrote: true,
            hash: Some(self.rendered.hash.clone()),
            conflict: None,
        })
    }
}

/// Whether an output object, as read from the API server, is ours and already holds the content
/// hashed `hash`: our hash annotation on files no other manager wrote.
fn holds(meta: &kube::core::ObjectMeta, uid: &str, hash: &str) -> bool {
    is_controlled_by(meta, uid)
        && hash_of(meta).as_deref() == Some(hash)
        && !foreign_content_owner(meta)
}

/// What decides between create, leave alone, update and conflict.
struct LiveOutput {
    controlled: bool,
    hash: Option<String>,
    foreign_data: bool,
}

async fn read_meta<K>(api: &Api<K>, name: &str, uid: &str) -> Result<Option<LiveOutput>, Error>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug,
{
    Ok(api
        .get_metadata_opt(name)
        .await?
        .map(|existing| LiveOutput {
            controlled: is_controlled_by(&existing.metadata, uid),
            hash: hash_of(&existing.metadata),
            foreign_data: foreign_content_owner(&existing.metadata),
        }))
}

fn conflict(kind: &str, name: &str) -> OutputState {
    OutputState {
        conflict: Some(format!(
            "{kind} {name} already exists and is not controlled by this KafkaToolConfig; the operator \
             never overwrites it: delete or rename it, or set spec.output.name"
        )),
        ..OutputState::default()
    }
}

/// Applies `status` on the status subresource (the caller has checked it changed). With
/// `resource_version`, only onto that version of the object (the one the status was built from):
/// the API server answers 409 Conflict when the object moved on since.
pub async fn write_status<K>(
    api: &Api<Written<K>>,
    metrics: &Metrics,
    name: &str,
    resource_version: Option<&str>,
    status: &impl Serialize,
) -> Result<(), Error>
where
    K: Resource<DynamicType = ()> + Clone + Debug,
{
    let mut patch = json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "status": status,
    });
    if let Some(version) = resource_version {
        patch["metadata"] = json!({ "resourceVersion": version });
    }
    api.patch_status(name, &apply_params(), &Patch::Apply(&patch))
        .await?;
    metrics.write("Status");
    Ok(())
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod update_tests;

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::{DaemonSetStatus, StatefulSetSpec, StatefulSetStatus};

    use super::*;

    /// History names the keys a Secret output's write changed: its files are its data as text.
    #[test]
    fn a_secret_outputs_files_are_its_data_as_text() {
        let secret = Secret {
            data: Some(BTreeMap::from([(
                "client.properties".to_string(),
                k8s_openapi::ByteString(b"linger.ms=5\n".to_vec()),
            )])),
            ..Secret::default()
        };
        let files =
            BTreeMap::from([("client.properties".to_string(), "linger.ms=5\n".to_string())]);
        assert_eq!(secret.files(), files);
        assert_eq!(Secret::default().files(), BTreeMap::new());
    }

    fn statefulset(
        generation: i64,
        replicas: i32,
        status: Option<StatefulSetStatus>,
    ) -> StatefulSet {
        StatefulSet {
            metadata: kube::api::ObjectMeta {
                generation: Some(generation),
                ..Default::default()
            },
            spec: Some(StatefulSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            }),
            status,
        }
    }

    fn sts_status(
        observed: i64,
        current: &str,
        update: &str,
        updated: i32,
        replicas: i32,
    ) -> StatefulSetStatus {
        StatefulSetStatus {
            observed_generation: Some(observed),
            current_revision: Some(current.into()),
            update_revision: Some(update.into()),
            updated_replicas: Some(updated),
            replicas,
            ..Default::default()
        }
    }

    #[test]
    fn an_output_read_with_the_rendered_hash_is_not_written_again() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
            FieldsV1, ManagedFieldsEntry, OwnerReference,
        };
        // After a 410 the version cache still had the output at our previous hash, so the
        // reconcile read it: the read object is what decides.
        let read = |owner_uid: &str, hash: &str, editors: &[&str]| kube::api::ObjectMeta {
            owner_references: Some(vec![OwnerReference {
                controller: Some(true),
                uid: owner_uid.into(),
                ..OwnerReference::default()
            }]),
            annotations: Some([(HASH_ANNOTATION.to_string(), hash.to_string())].into()),
            managed_fields: Some(
                [MANAGER]
                    .iter()
                    .chain(editors)
                    .map(|manager| ManagedFieldsEntry {
                        manager: Some(manager.to_string()),
                        fields_v1: Some(FieldsV1(json!({"f:data": {"f:producer.properties": {}}}))),
                        ..ManagedFieldsEntry::default()
                    })
                    .collect(),
            ),
            ..kube::api::ObjectMeta::default()
        };
        assert!(holds(&read("u1", "sha256:new", &[]), "u1", "sha256:new"));
        // Another content, another owner, or files someone else wrote: written.
        assert!(!holds(&read("u1", "sha256:old", &[]), "u1", "sha256:new"));
        assert!(!holds(&read("u2", "sha256:new", &[]), "u1", "sha256:new"));
        assert!(!holds(
            &read("u1", "sha256:new", &["kubectl-edit"]),
            "u1",
            "sha256:new"
        ));
        let mut unannotated = read("u1", "sha256:new", &[]);
        unannotated.annotations = None;
        assert!(!holds(&unannotated, "u1", "sha256:new"));
    }

    #[test]
    fn a_statefulset_is_settled_only_when_every_pod_runs_the_update_revision() {
        let done = sts_status(2, "web-b", "web-b", 3, 3);
        assert!(statefulset_settled(&statefulset(2, 3, Some(done))));
        // Not yet observed the new spec, mid-rollout, surplus pods, no status at all.
        assert!(!statefulset_settled(&statefulset(
            3,
            3,
            Some(sts_status(2, "web-b", "web-b", 3, 3))
        )));
        assert!(!statefulset_settled(&statefulset(
            2,
            3,
            Some(sts_status(2, "web-a", "web-b", 1, 3))
        )));
        assert!(!statefulset_settled(&statefulset(
            2,
            3,
            Some(sts_status(2, "web-b", "web-b", 3, 4))
        )));
        assert!(!statefulset_settled(&statefulset(2, 3, None)));
    }

    #[test]
    fn a_daemonset_is_settled_only_when_every_scheduled_pod_is_updated_and_available() {
        let set = |observed: i64, updated: i32, unavailable: i32| DaemonSet {
            metadata: kube::api::ObjectMeta {
                generation: Some(4),
                ..Default::default()
            },
            spec: None,
            status: Some(DaemonSetStatus {
                observed_generation: Some(observed),
                desired_number_scheduled: 5,
                current_number_scheduled: 5,
                updated_number_scheduled: Some(updated),
                number_unavailable: Some(unavailable),
                ..Default::default()
            }),
        };
        assert!(daemonset_settled(&set(4, 5, 0)));
        assert!(!daemonset_settled(&set(3, 5, 0)));
        assert!(!daemonset_settled(&set(4, 4, 0)));
        assert!(!daemonset_settled(&set(4, 5, 1)));
    }
}
