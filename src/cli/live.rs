//! `explain -n NS NAME`: `explain` for a live KafkaToolConfig, read through the kubeconfig.

use std::io::Write as _;

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams};
use kube::{Client, ResourceExt};

use super::{CliError, Invalid, TextFormat, explain_entries, print_explain};
use crate::engine::globals::GlobalDefaults;
use crate::engine::safe_text::printable;
use crate::engine::{Request, evaluate};
use crate::operator::OperatorError;
use crate::operator::crd::{GlobalClientDefaults, KafkaToolConfig};

/// `explain -n NS NAME`: the provenance table of a live KafkaToolConfig, read through the kubeconfig.
pub async fn explain_live(
    namespace: String,
    name: String,
    key: Option<String>,
    format: TextFormat,
) -> Result<Result<(), Invalid>, CliError> {
    let client = Client::try_default().await.map_err(OperatorError::Client)?;
    let api: Api<KafkaToolConfig> = Api::namespaced(client.clone(), &namespace);
    let config = api
        .get_opt(&name)
        .await
        .map_err(OperatorError::Kube)?
        .ok_or_else(|| OperatorError::NotFound {
            namespace: namespace.clone(),
            name: name.clone(),
        })?;
    let spec = &config.spec.config;
    let refs = crate::engine::sources::referenced_sources(spec);
    let fetched = crate::operator::dereference::fetch_sources(&client, &namespace, &refs, |_| None)
        .await
        .map_err(|e| match e {
            crate::operator::context::Error::Kube(e) => CliError::from(OperatorError::Kube(e)),
            other => CliError::Usage(other.to_string()),
        })?;
    let mut stderr = std::io::stderr().lock();
    // Namespace labels and GlobalClientDefaults need cluster-wide read access, which a tenant
    // may lack: explain what we can and say what is missing.
    let labels = match Api::<Namespace>::all(client.clone())
        .get_metadata_opt(&namespace)
        .await
    {
        Ok(ns) => ns.map(|n| n.labels().clone()).unwrap_or_default(),
        Err(e) => {
            let line = format!(
                "warning: cannot read namespace {namespace} labels ({e}); GlobalClientDefaults selection may differ"
            );
            let _ = writeln!(stderr, "{}", printable(&line));
            Default::default()
        }
    };
    let globals: Vec<GlobalDefaults> = match Api::<GlobalClientDefaults>::all(client.clone())
        .list(&ListParams::default())
        .await
    {
        Ok(list) => list
            .items
            .into_iter()
            .map(|g| GlobalDefaults {
                name: g.name_any(),
                spec: g.spec.config,
            })
            .collect(),
        Err(e) => {
            let line = format!(
                "warning: cannot list GlobalClientDefaults ({e}); cluster defaults are not shown"
            );
            let _ = writeln!(stderr, "{}", printable(&line));
            Vec::new()
        }
    };
    let ev = evaluate(&Request {
        name: &name,
        namespace: &namespace,
        spec,
        namespace_labels: &labels,
        globals: &globals,
        sources: &fetched.sources,
        hash_key: None,
    });
    for problem in ev.source_problems.iter().chain(&ev.problems) {
        let line = format!("KafkaToolConfig {namespace}/{name}: {problem}");
        let _ = writeln!(stderr, "{}", printable(&line));
    }
    drop(stderr);
    let entries = explain_entries(&namespace, &name, &ev, key.as_deref());
    print_explain(&entries, format)?;
    Ok(if ev.is_valid() { Ok(()) } else { Err(Invalid) })
}
