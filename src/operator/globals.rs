//! GlobalClientDefaults: their status (`Valid`, `selectedConfigs`, `syncedConfigs`, `history`), and which KafkaToolConfigs an
//! edit must re-reconcile (those it selects after the edit, and those it was applied to before).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use sha2::Digest as _;

use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::globals::GlobalDefaults;
use crate::engine::render::{UNKEYED_PREFIX, hash_label};
use crate::operator::apply;
use crate::operator::config_id::ConfigId;
use crate::operator::context::{Context, lock};
use crate::operator::crd::{GlobalClientDefaults, GlobalClientDefaultsStatus, KafkaToolConfig};
use crate::operator::reconcile::now;
use crate::operator::{authors, history};
use crate::status;

/// How often the leader refreshes GlobalClientDefaults status (`selectedConfigs` moves with
/// configs and namespace labels, which have no single trigger).
pub const STATUS_EVERY: Duration = Duration::from_secs(5);
const STATUS_SETTLE: Duration = Duration::from_millis(250);

fn as_defaults(global: &GlobalClientDefaults) -> GlobalDefaults {
    GlobalDefaults {
        name: global.name_any(),
        spec: global.spec.config.clone(),
    }
}

/// Whether `global` selects `config` now (namespace labels from the cache).
fn selects(ctx: &Context, global: &GlobalDefaults, config: &KafkaToolConfig) -> bool {
    let Some(tool) = ToolCatalogue::get().tool(&config.spec.config.tool) else {
        return false;
    };
    let labels = ctx.namespace_labels(&config.namespace().unwrap_or_default());
    global.selects(&tool.name, &labels)
}

/// The configs to re-reconcile after an edit (or deletion) of `global`.
pub fn affected(ctx: &Context, global: &GlobalClientDefaults) -> Vec<ObjectRef<KafkaToolConfig>> {
    let defaults = as_defaults(global);
    let mut keys: BTreeSet<ConfigId> = lock(&ctx.index)
        .applied_by(&defaults.name)
        .into_iter()
        .collect();
    for config in ctx.all_configs() {
        if selects(ctx, &defaults, &config) {
            keys.insert(ConfigId::of(&config));
        }
    }
    keys.iter().map(ConfigId::object_ref).collect()
}

/// The status a GlobalClientDefaults should have now.
pub fn desired_status(
    ctx: &Context,
    global: &GlobalClientDefaults,
    now: &str,
) -> GlobalClientDefaultsStatus {
    let defaults = as_defaults(global);
    let problems = defaults.problems();
    let previous = global
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or(&[]);
    let generation = global.meta().generation;
    let conditions = status::global_conditions(&problems, previous, generation, now);
    let (mut selected, mut synced) = (0usize, 0usize);
    for config in ctx.all_configs() {
        if !selects(ctx, &defaults, &config) {
            continue;
        }
        selected += 1;
        if rendered_from(&config, &defaults.name, generation) {
            synced += 1;
        }
    }
    let mut status = GlobalClientDefaultsStatus {
        observed_generation: generation,
        conditions,
        selected_configs: i64::try_from(selected).unwrap_or(i64::MAX),
        synced_configs: i64::try_from(synced).unwrap_or(i64::MAX),
        history: global
            .status
            .as_ref()
            .map(|s| s.history.clone())
            .unwrap_or_default(),
    };
    record_revision(global, &mut status, now);
    status
}

/// Whether a config's live output was rendered with `global` at `generation`, and is Ready.
fn rendered_from(config: &KafkaToolConfig, global: &str, generation: Option<i64>) -> bool {
    config.status.as_ref().is_some_and(|s| {
        s.ready_status().is_some_and(|(ready, _)| ready == "True")
            && s.inputs.as_ref().is_some_and(|i| {
                i.global_client_defaults
                    .iter()
                    .any(|g| g.name == global && g.generation == generation)
            })
    })
}

/// A history entry for a new spec (its hash differs from the last entry's): who changed it, from
/// the cache's kept managedFields entry, and why: a `kafkaconfig.dev/change-cause` that no kept
/// entry has as its cause yet (a GlobalClientDefaults has no `inputs` to remember it in), or the
/// generation.
fn record_revision(
    global: &GlobalClientDefaults,
    status: &mut GlobalClientDefaultsStatus,
    now: &str,
) {
    let spec = serde_json::to_vec(&global.spec.config).unwrap_or_default();
    let hash = hash_label(UNKEYED_PREFIX, &sha2::Sha256::digest(&spec));
    if status.history.last().is_some_and(|h| h.hash == hash) {
        return;
    }
    let annotation = global
        .annotations()
        .get(crate::output::CHANGE_CAUSE_ANNOTATION)
        .map(String::as_str)
        .filter(|a| !status.history.iter().any(|h| h.cause == a.trim()));
    let generation = global.meta().generation.unwrap_or(0);
    let cause = match history::new_annotation(annotation, None) {
        Some(text) => text.to_string(),
        None if status.history.is_empty() => format!("first revision (generation {generation})"),
        None => format!("spec changed (generation {generation})"),
    };
    let mut history = crate::status::KafkaToolConfigStatus {
        history: std::mem::take(&mut status.history),
        ..Default::default()
    };
    let by = authors::author("GlobalClientDefaults", &global.metadata, authors::SPEC);
    status::record_history(&mut history, &hash, now, Vec::new(), cause, by);
    status.history = history.history;
}

/// Leader-only loop that keeps every GlobalClientDefaults status current, writing only changes.
pub async fn keep_status(ctx: Arc<Context>) {
    let api: Api<apply::Written<GlobalClientDefaults>> = Api::all(ctx.client.clone());
    let mut ticker = tokio::time::interval(STATUS_EVERY);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = ctx.globals_status_wake.notified() => {
                // Let a burst of reconciles finish before counting.
                tokio::time::sleep(STATUS_SETTLE).await;
            }
        }
        if !ctx.is_leader() {
            continue;
        }
        let now = now();
        for global in ctx.caches.globals.state() {
            let desired = desired_status(&ctx, &global, &now);
            if global.status.as_ref() == Some(&desired) {
                continue;
            }
            if let Err(error) =
                apply::write_status(&api, &ctx.metrics, &global.name_any(), None, &desired).await
            {
                tracing::warn!(global = %global.name_any(), %error, "cannot write GlobalClientDefaults status");
            }
        }
    }
}
