//! The CRDs' apply-time rules (issue 26 item 2) on the real control plane: `kubectl apply` of the
//! generated CRDs succeeds (so every CEL rule compiles and its estimated cost is within the API
//! server's budget, which refuses the CRD otherwise), each bad KafkaToolConfig is refused with the
//! rule's message, and the offline gate refuses the same manifest (its twin rules). Also: the
//! category is `kafkaconfig`, and `kubectl get kafka` is not ours.
//!
//! Needs `KCO_E2E_KUBECONFIG` like tests/e2e_operator.rs (`#[ignore]`d otherwise; it fails rather
//! than skips without it). Run:
//! `KCO_E2E_KUBECONFIG=e2e/.run/kubeconfig cargo test --test e2e_crd_rules -- --include-ignored`

mod support;

use std::path::Path;

use kafka_config_operator::manifest::Workspace;
use support::*;

const CEL_NS: &str = "kco-e2e-crd-rules";

fn config(name: &str, spec_tail: &str) -> String {
    format!(
        "apiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: {name}, namespace: {CEL_NS}}}\nspec:\n  tool: kafka-console-producer\n{spec_tail}"
    )
}

/// (case, spec tail, words of the API server's refusal)
fn refused() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "output name not DNS-1123",
            "  output: {name: My_Output}\n".into(),
            "spec.output.name: Invalid value: \"My_Output\": must be a DNS-1123 subdomain",
        ),
        (
            "output name over 253 characters",
            format!("  output: {{name: {}}}\n", "a".repeat(254)),
            "spec.output.name: Too long: may not be more than 253",
        ),
        (
            "immutable output name over the limit",
            format!("  output: {{name: {}, immutable: true}}\n", "a".repeat(245)),
            "name may have at most 244",
        ),
        (
            "relative mountPath",
            "  output: {mountPath: etc/kafka}\n".into(),
            "spec.output.mountPath: Invalid value: \"etc/kafka\": must be an absolute, normalised path",
        ),
        (
            "mountPath with ..",
            "  output: {mountPath: /etc/../root}\n".into(),
            "must be an absolute, normalised path",
        ),
        (
            "keep without immutable",
            "  output: {keep: 2}\n".into(),
            "keep counts previous immutable outputs: set immutable: true, or remove keep",
        ),
        (
            "duplicate env names",
            "  env: [{name: A, value: one}, {name: A, value: two}]\n".into(),
            "spec.env[1]: Duplicate value: {\"name\":\"A\"}",
        ),
        (
            "duplicate rollout targets",
            "  rollout: {targets: [{kind: Deployment, name: a}, {kind: Deployment, name: a}]}\n"
                .into(),
            "spec.rollout.targets[1]: Duplicate value",
        ),
        (
            "kafkaVersion that is no release number",
            "  kafkaVersion: 4.x\n".into(),
            "spec.kafkaVersion: Invalid value: \"4.x\": must be a Kafka release number",
        ),
        (
            "properties section that is no role (strict field validation)",
            "  properties: {producr: {linger.ms: 5}}\n".into(),
            "unknown field \"spec.properties.producr\"",
        ),
    ]
}

#[test]
#[ignore = "needs KCO_E2E_KUBECONFIG"]
fn crd_rules_refuse_bad_configs_at_kubectl_apply() {
    let cluster = Cluster::from_env();
    step("the generated CRDs apply: every rule compiles within the CEL cost budget");
    cluster.install_crds_and_rbac();
    let _ = cluster.run(&["delete", "namespace", CEL_NS, "--wait=true"], None);
    cluster.kubectl(&["create", "namespace", CEL_NS]);

    for (case, tail, words) in refused() {
        step(case);
        let manifest = config("bad", &tail);
        let refusal = match cluster.run(&["apply", "-f", "-"], Some(&manifest)) {
            Ok(out) => panic!("{case}: the API server accepted it: {out}"),
            Err(refusal) => refusal,
        };
        assert!(refusal.contains(words), "{case}: {refusal}");
        let mut workspace = Workspace::default();
        let offline = workspace.add_documents(Path::new("bad.yaml"), &manifest);
        assert!(offline.is_err(), "{case}: the offline gate accepted it");
    }

    step("a config using every ruled field within the rules applies");
    let good = config(
        "good",
        "  kafkaVersion: '4.1'\n  env: [{name: A, value: one}, {name: B, value: two}]\n  properties: {producer: {linger.ms: 5}}\n  output: {name: good-out, immutable: true, keep: 2, mountPath: /etc/kafka}\n  rollout: {targets: [{kind: Deployment, name: a}, {kind: StatefulSet, name: a}]}\n",
    );
    cluster.apply_yaml(&good);

    step("category kafkaconfig lists both kinds; `kafka` is not ours");
    let listed = cluster.kubectl(&["get", "kafkaconfig", "-n", CEL_NS, "-o", "name"]);
    assert!(
        listed.contains("kafkatoolconfig.kafkaconfig.dev/good"),
        "{listed}"
    );
    let kafka = cluster.run(&["get", "kafka", "-n", CEL_NS, "-o", "name"], None);
    let ours = kafka
        .as_ref()
        .is_ok_and(|out| out.contains("kafkatoolconfig"));
    assert!(!ours, "kubectl get kafka lists our kind: {kafka:?}");
    cluster.kubectl(&["delete", "namespace", CEL_NS, "--wait=false"]);
}
