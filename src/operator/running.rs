//! How many reconciles run now: the in-flight gauge, and what queued Events wait for.
//!
//! How many may run is kube-runtime's own limit (`controller::Config::concurrency`), which
//! applies to one controller: [`RECONCILE_CONCURRENCY`] is shared out between the watched scopes
//! ([`concurrency_per_scope`]). Unbounded, a relist of 10,000 configs started as
//! many concurrent requests, which the API server answers with 429s, and every admitted reconcile
//! holds a future and a tracing span (admitting a whole relist cost 35 MiB at the restart peak);
//! each mostly waits on the API server, so a few dozen keep it busy. A first-come-first-served
//! semaphore of our own was measured against that limit (2026-12-07, `docs/BENCHMARKS.md`): the
//! burst p99 target (≤ 2 s) holds with either, so the limit is kube-runtime's.

use std::sync::atomic::AtomicI64;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::watch;

/// Reconciles that run at once, in every watched scope together.
pub const RECONCILE_CONCURRENCY: u16 = 32;

/// Each scope's share of [`RECONCILE_CONCURRENCY`] (each has its own controller), at least one:
/// a list of many namespaces must not multiply the requests a relist sends at once.
pub fn concurrency_per_scope(scopes: usize) -> u16 {
    let scopes = u16::try_from(scopes).unwrap_or(u16::MAX).max(1);
    (RECONCILE_CONCURRENCY / scopes).max(1)
}

/// The number of reconciles running now, in every scope, and the in-flight gauge that shows it.
pub struct Running {
    count: watch::Sender<usize>,
    gauge: Gauge<i64, AtomicI64>,
}

impl Running {
    pub fn new(gauge: Gauge<i64, AtomicI64>) -> Self {
        Running {
            count: watch::Sender::new(0),
            gauge,
        }
    }

    /// Counts a reconcile until the guard is dropped, also when the reconcile's future is (a
    /// shutdown, a lost Lease).
    pub fn enter(&self) -> Reconciling<'_> {
        self.add(1);
        Reconciling(self)
    }

    fn add(&self, delta: isize) {
        self.count.send_modify(|n| {
            *n = n.saturating_add_signed(delta);
            self.gauge.set(i64::try_from(*n).unwrap_or(i64::MAX));
        });
    }

    /// Returns once no reconcile runs.
    pub async fn idle(&self) {
        // Never an error: `self` holds the sender.
        let _ = self.count.subscribe().wait_for(|n| *n == 0).await;
    }
}

/// One running reconcile, counted until dropped.
pub struct Reconciling<'a>(&'a Running);

impl Drop for Reconciling<'_> {
    fn drop(&mut self) {
        self.0.add(-1);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn scopes_share_the_limit_and_each_runs_at_least_one() {
        assert_eq!(concurrency_per_scope(0), 32);
        assert_eq!(concurrency_per_scope(1), 32);
        assert_eq!(concurrency_per_scope(2), 16);
        assert_eq!(concurrency_per_scope(3), 10);
        assert_eq!(concurrency_per_scope(32), 1);
        assert_eq!(concurrency_per_scope(100), 1);
        assert_eq!(concurrency_per_scope(usize::MAX), 1);
    }

    /// Each reconcile counts until its guard is dropped, and `idle` returns once the last one is.
    #[tokio::test]
    async fn reconciles_count_until_dropped_and_idle_waits_for_the_last() {
        let metrics = crate::operator::metrics::Metrics::new();
        let running = Running::new(metrics.in_flight.clone());
        let first = running.enter();
        let second = running.enter();
        assert_eq!(metrics.in_flight.get(), 2);
        let mut idle = Box::pin(running.idle());
        assert!(futures::poll!(idle.as_mut()).is_pending());
        drop(first);
        assert!(futures::poll!(idle.as_mut()).is_pending(), "one still runs");
        assert_eq!(metrics.in_flight.get(), 1);
        drop(second);
        tokio::time::timeout(Duration::from_secs(1), idle)
            .await
            .expect("idle once every reconcile is done");
        assert_eq!(metrics.in_flight.get(), 0);
    }
}
