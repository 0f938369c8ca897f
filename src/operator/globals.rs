//! GlobalClientDefaults: their status (`Valid`, `selectedConfigs`), and which KafkaToolConfigs an
//! edit must re-reconcile (those it selects after the edit, and those it was applied to before).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use crate::engine::catalogue::tools::ToolCatalogue;
use crate::engine::globals::GlobalDefaults;
use crate::operator::apply;
use crate::operator::config_id::ConfigId;
use crate::operator::context::{Context, lock};
use crate::operator::crd::{GlobalClientDefaults, GlobalClientDefaultsStatus, KafkaToolConfig};
use crate::operator::reconcile::now;
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
            keys.insert(ConfigId::new(
                config.namespace().unwrap_or_default(),
                config.name_any(),
            ));
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
    let selected = ctx
        .all_configs()
        .iter()
        .filter(|c| selects(ctx, &defaults, c))
        .count();
    GlobalClientDefaultsStatus {
        observed_generation: generation,
        conditions,
        selected_configs: i64::try_from(selected).unwrap_or(i64::MAX),
    }
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
        for global in ctx.globals.state() {
            let desired = desired_status(&ctx, &global, &now);
            if global.status.as_ref() == Some(&desired) {
                continue;
            }
            if let Err(error) =
                apply::write_status(&api, &ctx.metrics, &global.name_any(), &desired).await
            {
                tracing::warn!(global = %global.name_any(), %error, "cannot write GlobalClientDefaults status");
            }
        }
    }
}
