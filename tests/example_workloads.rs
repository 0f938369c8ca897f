//! Every folder of `examples/` has a `workload.yaml`: the Deployment, StatefulSet or Job that runs
//! its configs. Each holds what `render --workload` prints for its config (the golden files of
//! tests/examples.rs record that output): the output volume and every Deferred Secret volume,
//! the container's mounts and the launch line, and — for a kind the operator rolls — the opt-in
//! annotation. The content hash is not in Git (the cluster's is keyed): it is the one part left
//! out. docs/workloads.md shows the same manifests.

use std::path::{Path, PathBuf};

use kafka_config_operator::cli::{RenderFormat, workload_text};
use kafka_config_operator::manifest::Workspace;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (every example has a workload.yaml)",
            path.display()
        )
    });
    serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `whole` holds `part`: every key of an object with an equal or holding value, every item
/// of an array held by some item of the whole's array.
fn holds(whole: &Value, part: &Value) -> bool {
    match (whole, part) {
        (Value::Object(w), Value::Object(p)) => {
            p.iter().all(|(k, v)| w.get(k).is_some_and(|x| holds(x, v)))
        }
        (Value::Array(w), Value::Array(p)) => p.iter().all(|v| w.iter().any(|x| holds(x, v))),
        _ => whole == part,
    }
}

#[test]
fn every_example_workload_holds_what_render_workload_prints_for_its_config() {
    let mut checked = 0;
    for dir in example_dirs() {
        let workspace = Workspace::load(std::slice::from_ref(&dir)).expect("the example loads");
        let (json, valid) = workload_text(&workspace, RenderFormat::Json);
        assert!(valid, "{}", dir.display());
        let fragments: Vec<Value> = serde_json::from_str(&json).expect("render --workload -o json");
        let workloads = documents(&dir.join("workload.yaml"));
        for entry in fragments {
            let config = &entry["config"]["name"];
            let namespace = &entry["config"]["namespace"];
            let mut fragment = entry["workload"].clone();
            // Not in Git: the cluster's hash is keyed with the installation's key.
            fragment["spec"]["template"]["metadata"] = serde_json::json!({});
            let workload = workloads
                .iter()
                .find(|w| {
                    w["metadata"]["namespace"] == *namespace
                        && holds(
                            &w["spec"]["template"]["spec"]["volumes"],
                            &fragment["spec"]["template"]["spec"]["volumes"],
                        )
                })
                .unwrap_or_else(|| {
                    panic!(
                        "{}/workload.yaml: no workload in {namespace} mounts the output of {config}",
                        dir.display()
                    )
                });
            if workload["kind"] == "Job" {
                // A Job's template is immutable: not a rollout target, no opt-in.
                fragment["metadata"] = serde_json::json!({});
            }
            assert!(
                holds(workload, &fragment),
                "{}/workload.yaml ({} {}) lacks part of `render --workload` for {config}:\n{}",
                dir.display(),
                workload["kind"],
                workload["metadata"]["name"],
                serde_json::to_string_pretty(&fragment).unwrap_or_default()
            );
            checked += 1;
        }
    }
    assert!(
        checked >= 10,
        "every config of examples/ is checked: {checked}"
    );
}

#[test]
fn the_holds_check_sees_a_missing_mount() {
    let whole = serde_json::json!({"a": [{"name": "x", "path": "/p"}], "b": 1});
    assert!(holds(&whole, &serde_json::json!({"a": [{"name": "x"}]})));
    assert!(!holds(&whole, &serde_json::json!({"a": [{"name": "y"}]})));
    assert!(!holds(&whole, &serde_json::json!({"b": 2})));
}

#[test]
fn docs_workloads_shows_the_example_manifests_as_they_are() {
    let doc = std::fs::read_to_string(root().join("docs/workloads.md")).expect("docs/workloads.md");
    for folder in [
        "console-consumer",
        "consumer-groups",
        "broker-global",
        "deferred-secrets",
    ] {
        let path = root().join("examples").join(folder).join("workload.yaml");
        let text = std::fs::read_to_string(&path).expect("workload.yaml");
        let body: String = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(
            doc.contains(&format!("```yaml\n{body}```")),
            "docs/workloads.md does not show {} as it is",
            path.display()
        );
    }
}
