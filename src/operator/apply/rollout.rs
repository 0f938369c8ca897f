//! Rolling the targets: the hash annotation on each target's pod template and, with
//! `output.immutable`, the name in the volume that mounts this config's output.
//!
//! Every kind goes through one code path on `DynamicObject` (the pod template is read as a
//! `PodTemplateSpec` from `spec.template`), so Argo Rollouts (`argoproj.io/v1alpha1 Rollout`) needs
//! no dependency of its own.

use k8s_openapi::api::core::v1::Volume;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};

use super::*;
use crate::engine::spec::OutputKind;

/// A workload to roll: named by the config's `rollout.targets`, or opting in through the
/// `kafkaconfig.dev/config` annotation on the workload itself.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub kind: RolloutKind,
    pub name: String,
    /// True when only the workload's annotation names the config.
    pub opted_in: bool,
}

impl Target {
    /// `rollout.targets` first, then the opt-ins not already named there, each once.
    pub fn merged(spec: &[RolloutTarget], opted_in: &[(RolloutKind, String)]) -> Vec<Target> {
        let named = spec.iter().map(|t| (t.kind, &t.name, false));
        let opted_in = opted_in.iter().map(|(kind, name)| (*kind, name, true));
        let mut targets: Vec<Target> = Vec::new();
        for (kind, name, opted_in) in named.chain(opted_in) {
            if !targets.iter().any(|x| x.kind == kind && &x.name == name) {
                targets.push(Target {
                    kind,
                    name: name.clone(),
                    opted_in,
                });
            }
        }
        targets
    }
}

/// A config's targets (its `rollout.targets`, then its opt-ins) and, with `output.immutable`,
/// the object they are to mount for the live `hash`.
pub fn targets_of<'a>(
    spec: &ToolConfigSpec,
    opted_in: &[(RolloutKind, String)],
    hash: Option<&str>,
    rendered: Option<&'a Rendered>,
) -> (Vec<Target>, Option<Mount<'a>>) {
    let named = spec
        .rollout
        .as_ref()
        .map(|r| r.targets.as_slice())
        .unwrap_or(&[]);
    let mount = match (hash, rendered) {
        (Some(hash), Some(rendered)) if spec.output().immutable == Some(true) => Some(Mount {
            kind: rendered.kind,
            base: &rendered.name,
            name: output::immutable_name(&rendered.name, hash),
        }),
        _ => None,
    };
    (Target::merged(named, opted_in), mount)
}

/// The value `status.rollout[].via` takes for a workload that opted in by annotation.
pub const VIA_ANNOTATION: &str = "Annotation";

/// The output a rollout makes the targets mount (only with `output.immutable`).
#[derive(Debug, Clone)]
pub struct Mount<'a> {
    pub kind: OutputKind,
    /// The output's base name (`output.name`, default `<config>-kafka`).
    pub base: &'a str,
    /// The immutable object to mount now, `<base>-<hash8>`.
    pub name: String,
}

/// The API resource of a target kind.
pub fn api_resource(kind: RolloutKind) -> ApiResource {
    match kind {
        RolloutKind::Deployment => ApiResource::erase::<Deployment>(&()),
        RolloutKind::StatefulSet => ApiResource::erase::<StatefulSet>(&()),
        RolloutKind::DaemonSet => ApiResource::erase::<DaemonSet>(&()),
        RolloutKind::Rollout => ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Rollout"),
            "rollouts",
        ),
    }
}

/// Whether `name` is an output of `base`: the base name itself, or `<base>-<8 hex>`.
fn is_output_name(name: &str, base: &str) -> bool {
    match name.strip_prefix(base) {
        Some("") => true,
        Some(rest) => rest.strip_prefix('-').is_some_and(|hex| {
            hex.len() == 8
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }),
        None => false,
    }
}

/// The rule that finds the volume(s) mounting this config's output (documented in
/// docs/rollouts.md): a `configMap` volume (ConfigMap output) or `secret` volume (Secret output)
/// whose object name is the output's base name or `<base>-<8 hex>`. Returns each such volume's
/// name and the object it mounts now.
pub fn mounting_volumes(volumes: &[Volume], kind: OutputKind, base: &str) -> Vec<(String, String)> {
    volumes
        .iter()
        .filter_map(|v| {
            let source = match kind {
                OutputKind::ConfigMap => v.config_map.as_ref().map(|c| c.name.clone()),
                OutputKind::Secret => v.secret.as_ref().and_then(|s| s.secret_name.clone()),
            }?;
            is_output_name(&source, base).then(|| (v.name.clone(), source))
        })
        .collect()
}

/// The server-side apply patch that sets the hash annotation and, for `mount`, every mounting
/// volume's object name: only those fields, so the operator's field manager owns nothing else.
/// Every mounting volume is named in each apply (also one already right): a field the manager
/// stops applying would be removed.
fn patch(
    kind: RolloutKind,
    name: &str,
    hash: &str,
    volumes: &[String],
    mount: Option<&Mount<'_>>,
) -> serde_json::Value {
    let resource = api_resource(kind);
    let mut template = json!({"metadata": {"annotations": {HASH_ANNOTATION: hash}}});
    if let Some(mount) = mount
        && !volumes.is_empty()
    {
        let items: Vec<serde_json::Value> = volumes
            .iter()
            .map(|v| match mount.kind {
                OutputKind::ConfigMap => json!({"name": v, "configMap": {"name": mount.name}}),
                OutputKind::Secret => json!({"name": v, "secret": {"secretName": mount.name}}),
            })
            .collect();
        template["spec"] = json!({"volumes": items});
    }
    json!({
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name},
        "spec": {"template": template}
    })
}

/// Rolls each target whose template does not carry `hash` (or, with `mount`, does not mount
/// it yet), and reports what each target carries now. A missing target is reported (hash
/// absent), not an error.
pub async fn roll_out(
    client: &Client,
    metrics: &Metrics,
    namespace: &str,
    targets: &[Target],
    hash: &str,
    mount: Option<&Mount<'_>>,
) -> Result<Vec<RolloutStatus>, Error> {
    let mut statuses = Vec::new();
    for target in targets {
        let mut attempts = 0;
        let current = loop {
            attempts += 1;
            match roll(client, metrics, namespace, target, hash, mount).await {
                Ok(current) => break current,
                // Changed since the read: read it again.
                Err(Error::Kube(kube::Error::Api(s)))
                    if s.is_conflict() && attempts < ROLL_ATTEMPTS => {}
                // Deleted between the read and the volume rename (a merge patch does not
                // create): reported missing, as a target the read did not find.
                Err(Error::Kube(kube::Error::Api(s))) if s.is_not_found() => break None,
                Err(error) => return Err(error),
            }
        };
        statuses.push(RolloutStatus {
            kind: format!("{:?}", target.kind),
            name: target.name.clone(),
            hash: current,
            via: target.opted_in.then(|| VIA_ANNOTATION.to_string()),
            // Filled from the workload watch (`sync_status::record`).
            updated: None,
            ready: None,
            total: None,
        });
    }
    Ok(statuses)
}

/// The pod template of a workload read as a `DynamicObject`.
pub fn dynamic_template(workload: &DynamicObject) -> Option<PodTemplateSpec> {
    workload
        .data
        .pointer("/spec/template")
        .and_then(|t| serde_json::from_value(t.clone()).ok())
}

/// How many times a target is read and rolled when each write finds it changed since the read.
const ROLL_ATTEMPTS: u32 = 2;

/// Rolls one target from a fresh read. Every write carries the uid and resourceVersion read, so
/// a workload changed, deleted, or deleted and created again by someone else since the read
/// answers 409 (the server-side apply would otherwise write into, or even create, an object that
/// was never read). With a resourceVersion alone, an apply onto a deleted object creates it
/// (checked on the control plane, `e2e_workloads`); the uid makes that a 409 too.
async fn roll(
    client: &Client,
    metrics: &Metrics,
    namespace: &str,
    target: &Target,
    hash: &str,
    mount: Option<&Mount<'_>>,
) -> Result<Option<String>, Error> {
    let resource = api_resource(target.kind);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let name = target.name.as_str();
    let Some(workload) = api.get_opt(name).await? else {
        return Ok(None);
    };
    let template = dynamic_template(&workload);
    let live = template_hash(template.as_ref());
    let volumes = match (mount, template.as_ref().and_then(|t| t.spec.as_ref())) {
        (Some(mount), Some(spec)) => mounting_volumes(
            spec.volumes.as_deref().unwrap_or_default(),
            mount.kind,
            mount.base,
        ),
        _ => Vec::new(),
    };
    let stale_volume = mount.is_some_and(|m| volumes.iter().any(|(_, source)| *source != m.name));
    if live.as_deref() == Some(hash) && !stale_volume {
        return Ok(live);
    }
    let names: Vec<String> = volumes.into_iter().map(|(volume, _)| volume).collect();
    let mut version = workload.metadata.resource_version.clone();
    let mut body = if target.kind == RolloutKind::Rollout {
        // Argo's CRD leaves the pod template unstructured, and server-side apply treats an
        // unstructured list as one atomic value: applying one volume would drop the others.
        // The annotation (a map) applies as for the other kinds; the volume names are replaced
        // by a merge patch guarded by the resourceVersion read.
        // The rename first: it carries the resourceVersion read, which the apply would change.
        if let (Some(mount), true) = (mount, stale_volume) {
            version = rename_volumes_in_place(&api, name, &workload, mount).await?;
        }
        patch(target.kind, name, hash, &[], None)
    } else {
        patch(target.kind, name, hash, &names, mount)
    };
    let read = [
        ("uid", &workload.metadata.uid),
        ("resourceVersion", &version),
    ];
    for (field, value) in read {
        if let Some(value) = value {
            body["metadata"][field] = json!(value);
        }
    }
    api.patch(name, &apply_params(), &Patch::Apply(&body))
        .await?;
    metrics.write("Workload");
    tracing::info!(workload = %name, kind = ?target.kind, %hash, volumes = ?names, "rolled out the new configuration hash");
    Ok(Some(hash.to_string()))
}

/// A merge patch of the whole volume list with only the mounting volumes' object names changed,
/// for kinds whose pod template has no schema (a merge patch replaces a list as a whole). It
/// carries the resourceVersion read: a concurrent edit fails it with 409, and the roll starts
/// again from a fresh read. Returns the workload's resourceVersion after the patch.
async fn rename_volumes_in_place(
    api: &Api<DynamicObject>,
    name: &str,
    workload: &DynamicObject,
    mount: &Mount<'_>,
) -> Result<Option<String>, Error> {
    let field = match mount.kind {
        OutputKind::ConfigMap => "/configMap/name",
        OutputKind::Secret => "/secret/secretName",
    };
    let Some(serde_json::Value::Array(mut volumes)) = workload
        .data
        .pointer("/spec/template/spec/volumes")
        .cloned()
    else {
        return Ok(workload.metadata.resource_version.clone());
    };
    for volume in &mut volumes {
        let typed: Option<Volume> = serde_json::from_value(volume.clone()).ok();
        let mounts = typed.is_some_and(|v| {
            !mounting_volumes(std::slice::from_ref(&v), mount.kind, mount.base).is_empty()
        });
        if mounts && let Some(slot) = volume.pointer_mut(field) {
            *slot = json!(mount.name);
        }
    }
    let body = json!({
        "metadata": {"resourceVersion": workload.metadata.resource_version},
        "spec": {"template": {"spec": {"volumes": volumes}}}
    });
    let params = PatchParams {
        field_manager: Some(MANAGER.to_string()),
        ..PatchParams::default()
    };
    let renamed = api.patch(name, &params, &Patch::Merge(&body)).await?;
    Ok(renamed.metadata.resource_version)
}

#[cfg(test)]
#[path = "roll_tests.rs"]
mod roll_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMapVolumeSource, SecretVolumeSource};

    fn cm_volume(name: &str, source: &str) -> Volume {
        Volume {
            name: name.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: source.into(),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_volume_mounting_the_output_is_found_by_its_base_name_or_a_hash_suffix() {
        let volumes = vec![
            cm_volume("kafka-config", "orders-kafka-0a1b2c3d"),
            cm_volume("other", "orders-kafka-extra"),
            cm_volume("base", "orders-kafka"),
            cm_volume("upper", "orders-kafka-0A1B2C3D"),
            cm_volume("longer", "orders-kafka-0a1b2c3d4"),
            cm_volume("prefix", "orders-kafkaa1b2c3d4"),
        ];
        let found = mounting_volumes(&volumes, OutputKind::ConfigMap, "orders-kafka");
        assert_eq!(
            found,
            vec![
                (
                    "kafka-config".to_string(),
                    "orders-kafka-0a1b2c3d".to_string()
                ),
                ("base".to_string(), "orders-kafka".to_string()),
            ]
        );
        // A Secret output is looked for in secret volumes only.
        assert!(mounting_volumes(&volumes, OutputKind::Secret, "orders-kafka").is_empty());
        let secret = Volume {
            name: "s".into(),
            secret: Some(SecretVolumeSource {
                secret_name: Some("orders-kafka-ffffffff".into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            mounting_volumes(&[secret], OutputKind::Secret, "orders-kafka").len(),
            1
        );
    }

    #[test]
    fn the_apply_patch_names_only_the_annotation_and_the_mounting_volumes() {
        let mount = Mount {
            kind: OutputKind::ConfigMap,
            base: "orders-kafka",
            name: "orders-kafka-12345678".into(),
        };
        let body = patch(
            RolloutKind::StatefulSet,
            "brokers",
            "hmac-sha256:12345678ff",
            &["kafka-config".to_string()],
            Some(&mount),
        );
        assert_eq!(
            body,
            json!({
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "brokers"},
                "spec": {"template": {
                    "metadata": {"annotations": {HASH_ANNOTATION: "hmac-sha256:12345678ff"}},
                    "spec": {"volumes": [{"name": "kafka-config", "configMap": {"name": "orders-kafka-12345678"}}]}
                }}
            })
        );
        let plain = patch(RolloutKind::Deployment, "api", "h", &[], None);
        assert!(plain["spec"]["template"].get("spec").is_none(), "{plain}");
    }

    #[test]
    fn only_an_immutable_output_with_a_live_hash_is_mounted_by_name() {
        let rendered = Rendered {
            kind: OutputKind::Secret,
            name: "orders-kafka".into(),
            files: BTreeMap::new(),
            hash: "sha256:ffff".into(),
            secret_mounts: Vec::new(),
        };
        let spec = |immutable: bool| -> ToolConfigSpec {
            serde_json::from_value(json!({
                "tool": "kafka-console-producer",
                "output": {"immutable": immutable},
                "rollout": {"targets": [{"kind": "Deployment", "name": "api"}]}
            }))
            .expect("a valid spec")
        };
        // The live hash names the object, not the render's (a failed write keeps the old one).
        let (targets, mount) =
            targets_of(&spec(true), &[], Some("sha256:0a1b2c3d99"), Some(&rendered));
        let mount = mount.expect("mounted by name");
        assert_eq!(
            (mount.kind, mount.base, mount.name.as_str()),
            (OutputKind::Secret, "orders-kafka", "orders-kafka-0a1b2c3d")
        );
        assert_eq!(targets.len(), 1);
        assert!(
            targets_of(
                &spec(false),
                &[],
                Some("sha256:0a1b2c3d99"),
                Some(&rendered)
            )
            .1
            .is_none()
        );
        assert!(
            targets_of(&spec(true), &[], None, Some(&rendered))
                .1
                .is_none()
        );
    }

    #[test]
    fn spec_targets_come_first_and_an_opt_in_already_named_is_listed_once() {
        let spec = vec![RolloutTarget {
            kind: RolloutKind::Deployment,
            name: "api".into(),
        }];
        let merged = Target::merged(
            &spec,
            &[
                (RolloutKind::Deployment, "api".into()),
                (RolloutKind::DaemonSet, "agent".into()),
            ],
        );
        assert_eq!(
            merged,
            vec![
                Target {
                    kind: RolloutKind::Deployment,
                    name: "api".into(),
                    opted_in: false
                },
                Target {
                    kind: RolloutKind::DaemonSet,
                    name: "agent".into(),
                    opted_in: true
                },
            ]
        );
    }
}
