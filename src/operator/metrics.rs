//! Prometheus metrics (`kafka_config_*`): what an on-call engineer needs to tell a healthy
//! controller from a stuck one — reconcile rate, errors by reason, duration, writes by kind (the
//! "zero writes on resync" promise is checked against this), configs by Ready status.

use std::sync::atomic::AtomicI64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// One label: `reason`, `kind` or `ready`.
type Label = [(&'static str, String); 1];

/// Every metric the controller exports, registered once in [`Metrics::new`].
pub struct Metrics {
    registry: Registry,
    pub reconciles: Counter,
    /// Reconciles that proved from the watch caches that nothing changed: no request at all.
    pub unchanged: Counter,
    pub reconcile_errors: Family<Label, Counter>,
    pub reconcile_duration: Histogram,
    pub writes: Family<Label, Counter>,
    pub configs: Family<Label, Gauge>,
    /// Reconciles running now: the closest thing to a queue depth kube-runtime lets us observe.
    pub in_flight: Gauge<i64, AtomicI64>,
    pub leader: Gauge<i64, AtomicI64>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut metrics = Metrics {
            registry: Registry::with_prefix("kafka_config"),
            reconciles: Counter::default(),
            unchanged: Counter::default(),
            reconcile_errors: Family::default(),
            reconcile_duration: Histogram::new([
                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ]),
            writes: Family::default(),
            configs: Family::default(),
            in_flight: Gauge::default(),
            leader: Gauge::default(),
        };
        let registry = &mut metrics.registry;
        registry.register(
            "reconciles",
            "Reconciles run by the leader",
            metrics.reconciles.clone(),
        );
        registry.register(
            "reconciles_unchanged",
            "Reconciles that found, from the watch caches alone, that nothing changed (no API request)",
            metrics.unchanged.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Failed reconciles, by reason",
            metrics.reconcile_errors.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Time one reconcile takes",
            metrics.reconcile_duration.clone(),
        );
        registry.register(
            "writes",
            "Objects written (created, applied, patched or deleted), by kind",
            metrics.writes.clone(),
        );
        registry.register(
            "configs",
            "KafkaToolConfigs by their Ready condition",
            metrics.configs.clone(),
        );
        registry.register(
            "reconciles_in_flight",
            "Reconciles running now",
            metrics.in_flight.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the leader Lease",
            metrics.leader.clone(),
        );
        metrics
    }

    pub fn write(&self, kind: &str) {
        self.writes.get_or_create(&[("kind", kind.into())]).inc();
    }

    pub fn error(&self, reason: &str) {
        let labels = [("reason", reason.into())];
        self.reconcile_errors.get_or_create(&labels).inc();
    }

    /// Sets the `configs{ready}` gauge from counts of True / False / Unknown.
    pub fn set_configs(&self, ready: i64, not_ready: i64, unknown: i64) {
        for (label, value) in [("true", ready), ("false", not_ready), ("unknown", unknown)] {
            self.configs
                .get_or_create(&[("ready", label.into())])
                .set(value);
        }
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }

    pub fn leader(&self, is_leader: bool) {
        self.leader.set(i64::from(is_leader));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_carry_the_kafka_config_prefix() {
        let metrics = Metrics::new();
        metrics.reconciles.inc();
        metrics.write("ConfigMap");
        metrics.error("Kube");
        metrics.set_configs(1, 0, 2);
        let text = metrics.encode().expect("encodes");
        assert!(text.contains("kafka_config_reconciles_total 1"), "{text}");
        assert!(
            text.contains("kafka_config_writes_total{kind=\"ConfigMap\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kafka_config_reconcile_errors_total{reason=\"Kube\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kafka_config_configs{ready=\"unknown\"} 2"),
            "{text}"
        );
        assert!(
            text.contains("kafka_config_reconcile_duration_seconds_bucket"),
            "{text}"
        );
    }

    /// docs/metrics.md is the operator's metrics reference: a metric it does not name is a drift.
    #[test]
    fn every_metric_is_documented() {
        let doc = include_str!("../../docs/metrics.md");
        let metrics = Metrics::new();
        // A family without a child prints no TYPE line: give each one a sample.
        metrics.write("ConfigMap");
        metrics.error("Kube");
        metrics.set_configs(1, 0, 0);
        let text = metrics.encode().expect("encodes");
        let metrics: Vec<(&str, &str)> = text
            .lines()
            .filter_map(|line| line.strip_prefix("# TYPE "))
            .filter_map(|line| line.split_once(' '))
            .collect();
        assert!(metrics.len() >= 8, "{text}");
        for (name, kind) in metrics {
            // OpenMetrics TYPE lines name a counter without the `_total` its samples carry.
            let shown = match kind {
                "counter" => format!("`{name}_total`"),
                _ => format!("`{name}`"),
            };
            assert!(
                doc.contains(&shown),
                "docs/metrics.md does not name {shown}"
            );
        }
    }
}
