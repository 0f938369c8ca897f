//! `render --workload`: for each config, the fragment a user pastes into the workload that runs
//! it — the workload's opt-in annotation `kafkaconfig.dev/config`, and in `spec.template` the
//! volumes (the output, and every Secret a `Deferred` config's files point at), the container's
//! volumeMounts and launch line, and the current content hash (so a workload created with the
//! fragment is not rolled again at once). docs/workloads.md explains each part.

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{CliError, HashKeyArg, Invalid, RenderFormat, UNKEYED_NOTE, evaluate_manifest};
use crate::engine::catalogue::options::ToolOptions;
use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::model::Rendered;
use crate::engine::safe_text;
use crate::engine::spec::{OutputKind, ToolConfigSpec};
use crate::manifest::{ToolConfigManifest, Workspace};
use crate::output::{self, HASH_ANNOTATION};

/// The opt-in annotation on a workload (`operator::workloads` reads it).
pub const CONFIG_ANNOTATION: &str = "kafkaconfig.dev/config";
/// Where the `apache/kafka` image keeps Kafka's scripts.
pub const KAFKA_BIN: &str = "/opt/kafka/bin";
/// The name of the volume that mounts the output (the operator finds it by its source's name,
/// not by this name: docs/rollouts.md).
pub const OUTPUT_VOLUME: &str = "kafka-config";

/// The launch line of docs/workloads.md: `tool.args` read one argument per line, each passed as
/// one argument, with no word splitting, globbing or expansion.
pub fn launch_line(mount_path: &str, script: &str) -> String {
    format!("mapfile -t A < {mount_path}/tool.args && exec {KAFKA_BIN}/{script} \"${{A[@]}}\"")
}

/// The `apache/kafka` script that starts `tool` (`kafka-server` → `kafka-server-start.sh`).
pub fn script(tool: &str) -> String {
    match tool {
        "kafka-server" => "kafka-server-start.sh".to_string(),
        other => format!("{other}.sh"),
    }
}

/// The `apache/kafka` image tag for `kafkaVersion`: the version itself when it names a patch
/// release, the catalogue's release of that line for `major.minor`, else `major.minor.0`.
pub fn image_tag(kafka_version: Option<&str>) -> String {
    let options = ToolOptions::get();
    let Some(version) = kafka_version else {
        return options.kafka_version.clone();
    };
    if version.split('.').count() >= 3 {
        return version.to_string();
    }
    options
        .releases()
        .iter()
        .find(|r| r.kafka_version.starts_with(&format!("{version}.")))
        .map(|r| r.kafka_version.clone())
        .unwrap_or_else(|| format!("{version}.0"))
}

/// A volume name (a DNS label) for a Secret mount: `secret-<name>`, dots made dashes, cut to 63.
fn secret_volume(secret: &str) -> String {
    let name = format!("secret-{}", secret.replace('.', "-"));
    safe_text::head(&name, 63).trim_end_matches('-').to_string()
}

/// The workload fragment of one rendered config: `metadata` and `spec.template`.
pub fn fragment(config: &ToolConfigManifest, spec: &ToolConfigSpec, rendered: &Rendered) -> Value {
    let mount_path = spec.output().mount_path().to_string();
    let output_name = output::output_name(spec, rendered);
    let output_volume = match rendered.kind {
        OutputKind::ConfigMap => json!({"name": OUTPUT_VOLUME, "configMap": {"name": output_name}}),
        OutputKind::Secret => json!({"name": OUTPUT_VOLUME, "secret": {"secretName": output_name}}),
    };
    let mut volumes = vec![output_volume];
    let mut mounts =
        vec![json!({"name": OUTPUT_VOLUME, "mountPath": mount_path, "readOnly": true})];
    for mount in &rendered.secret_mounts {
        let volume = secret_volume(&mount.secret);
        volumes.push(json!({"name": volume, "secret": {"secretName": mount.secret}}));
        mounts.push(json!({"name": volume, "mountPath": mount.mount_path, "readOnly": true}));
    }
    let tool = ToolCatalogue::get()
        .tool(&spec.tool)
        .map(|t| t.name.clone())
        .unwrap_or_else(|| spec.tool.clone());
    let container = if rendered.files.contains_key("tool.args") {
        json!({
            "name": tool,
            "image": format!("apache/kafka:{}", image_tag(spec.kafka_version.as_deref())),
            "command": ["bash", "-c", launch_line(&mount_path, &script(&tool))],
            "volumeMounts": mounts,
        })
    } else {
        // `tool: client`: the application reads the files; only the mounts are its.
        json!({"name": "app", "volumeMounts": mounts})
    };
    // The opt-in is the workload's own annotation (the operator watches workloads' metadata);
    // the hash is the pod template's, what a rollout changes.
    json!({
        "metadata": {"annotations": {CONFIG_ANNOTATION: config.metadata.name}},
        "spec": {"template": {
            "metadata": {"annotations": {HASH_ANNOTATION: rendered.hash}},
            "spec": {"containers": [container], "volumes": volumes},
        }},
    })
}

/// What `render --workload` prints, and whether every config was valid.
pub fn workload_text(workspace: &Workspace, format: RenderFormat) -> (String, bool) {
    let mut all_valid = true;
    let mut entries = Vec::new();
    for config in &workspace.configs {
        let ev = evaluate_manifest(workspace, config);
        let Some(rendered) = &ev.rendered else {
            all_valid = false;
            continue;
        };
        entries.push((config, fragment(config, &config.spec, rendered)));
    }
    let text = match format {
        RenderFormat::Json => {
            let array: Vec<Value> = entries
                .iter()
                .map(|(config, fragment)| {
                    json!({
                        "config": {"namespace": config.namespace, "name": config.metadata.name},
                        "workload": fragment,
                    })
                })
                .collect();
            format!("{}\n", super::to_json_pretty(&array))
        }
        RenderFormat::Yaml | RenderFormat::Properties => {
            let mut out = String::new();
            for (config, fragment) in &entries {
                out.push_str(&format!(
                    "---\n# KafkaToolConfig {}/{}: merge into the Deployment/StatefulSet/DaemonSet that runs it (docs/workloads.md)\n",
                    config.namespace, config.metadata.name
                ));
                // The launch line stays on one line, as written in docs/workloads.md.
                let mut options = serde_saphyr::SerializerOptions::default();
                options.prefer_block_scalars = false;
                match serde_saphyr::to_string_with_options(fragment, options) {
                    Ok(yaml) => out.push_str(&yaml),
                    Err(e) => out.push_str(&format!("# cannot print the fragment: {e}\n")),
                }
            }
            out
        }
    };
    (text, all_valid)
}

/// `render --workload`.
pub fn render_workload(
    paths: &[PathBuf],
    format: RenderFormat,
    hash_key: &HashKeyArg,
) -> Result<Result<(), Invalid>, CliError> {
    if matches!(format, RenderFormat::Properties) {
        return Err(CliError::Usage(
            "render --workload prints YAML or JSON (-o yaml|json), not properties".into(),
        ));
    }
    let workspace = hash_key.load(paths)?;
    let (text, all_valid) = workload_text(&workspace, format);
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if workspace.hash_key.is_none() {
        eprintln!("{UNKEYED_NOTE}");
    }
    Ok(if all_valid { Ok(()) } else { Err(Invalid) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_line_is_the_documented_one() {
        assert_eq!(
            launch_line("/etc/kafka-config", &script("kafka-console-consumer")),
            "mapfile -t A < /etc/kafka-config/tool.args && exec /opt/kafka/bin/kafka-console-consumer.sh \"${A[@]}\""
        );
        assert_eq!(script("kafka-server"), "kafka-server-start.sh");
    }

    #[test]
    fn the_image_tag_follows_kafka_version() {
        let newest = ToolOptions::get().kafka_version.clone();
        assert_eq!(image_tag(None), newest);
        assert_eq!(image_tag(Some("4.1.1")), "4.1.1");
        let line = newest
            .rsplit_once('.')
            .map_or(newest.as_str(), |(line, _)| line);
        assert_eq!(image_tag(Some(line)), newest);
        assert_eq!(image_tag(Some("3.9")), "3.9.0");
    }

    #[test]
    fn a_secret_volume_name_is_a_dns_label() {
        assert_eq!(secret_volume("kafka-sasl"), "secret-kafka-sasl");
        assert_eq!(secret_volume("a.b"), "secret-a-b");
        let long = secret_volume(&"x".repeat(300));
        assert_eq!(long.len(), 63);
        // Not a DNS name, but it must not panic ("€" is 3 bytes: byte 63 is inside one).
        assert_eq!(
            secret_volume(&"€".repeat(30)),
            format!("secret-{}", "€".repeat(18))
        );
    }
}
