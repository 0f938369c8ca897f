//! The periodic work over every cached config: the resync safety net and the readiness gauge.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::reflector::{ObjectRef, Store};

use crate::operator::context::Context;
use crate::operator::crd::KafkaToolConfig;

/// How often a healthy config is re-checked without any trigger (drift of the output object is
/// also caught by the owned-object watch; this is the safety net for missed events). Not a
/// requeue per config: kube-runtime's scheduler kept an entry (about 700 bytes) for each of
/// them, 7 MB at N = 10,000; [`keep_resyncing`] walks the cache instead.
pub const RESYNC: Duration = Duration::from_secs(600);
/// [`RESYNC`] is served in this many slices, one per tick, so a period's reconciles are spread
/// evenly instead of arriving as one wave.
const RESYNC_SLICES: u32 = 600;
/// How often `kafka_config_configs` is recounted from the cache. Counting on every reconcile
/// made an initial sync of N configs cost O(N²); the count lags the cache by at most this.
const READY_GAUGE_PERIOD: Duration = Duration::from_secs(2);

/// Keeps `kafka_config_configs` current: one O(N) count of the cache per period.
pub async fn keep_ready_gauge(ctx: Arc<Context>) {
    let mut tick = tokio::time::interval(READY_GAUGE_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        update_ready_gauge(&ctx);
    }
}

/// Reconciles every cached config once per [`RESYNC`], starting one period after the start (a
/// start reconciles everything anyway): each tick sends the configs whose name falls in that
/// tick's slice, so the cost is spread evenly and nothing is kept per config.
pub async fn keep_resyncing(
    configs: Store<KafkaToolConfig>,
    send: impl Fn(ObjectRef<KafkaToolConfig>) + Send,
) {
    let every = RESYNC / RESYNC_SLICES;
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + RESYNC, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut slice = 0;
    loop {
        tick.tick().await;
        for config in configs.state() {
            if resync_slice(&config) == slice {
                send(ObjectRef::from_obj(&*config));
            }
        }
        slice = (slice + 1) % RESYNC_SLICES;
    }
}

/// The slice of [`RESYNC`] a config is resynced in: stable for its name.
fn resync_slice(config: &KafkaToolConfig) -> u32 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    config.metadata.namespace.hash(&mut hasher);
    config.metadata.name.hash(&mut hasher);
    (hasher.finish() % u64::from(RESYNC_SLICES)) as u32
}

fn update_ready_gauge(ctx: &Context) {
    let (mut ready, mut not_ready, mut unknown) = (0, 0, 0);
    for config in ctx.all_configs() {
        match config
            .status
            .as_ref()
            .and_then(|s| s.ready_status())
            .map(|(status, _)| status)
        {
            Some("True") => ready += 1,
            Some("False") => not_ready += 1,
            _ => unknown += 1,
        }
    }
    ctx.metrics.set_configs(ready, not_ready, unknown);
}
