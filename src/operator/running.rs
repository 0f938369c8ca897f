//! How many reconciles run now: the in-flight gauge, and what queued Events wait for.
//!
//! How many may run is kube-runtime's own limit (`controller::Config::concurrency`,
//! [`RECONCILE_CONCURRENCY`] per watched scope). Unbounded, a relist of 10,000 configs started as
//! many concurrent requests, which the API server answers with 429s, and every admitted reconcile
//! holds a future and a tracing span (admitting a whole relist cost 35 MiB at the restart peak);
//! each mostly waits on the API server, so a few dozen keep it busy. A first-come-first-served
//! semaphore of our own was measured against that limit (2026-12-07, `docs/BENCHMARKS.md`): the
//! burst p99 target (≤ 2 s) holds with either, so the limit is kube-runtime's.

use tokio::sync::watch;

use crate::operator::metrics::Metrics;

/// Reconciles one controller (one watched scope) runs at once.
pub const RECONCILE_CONCURRENCY: u16 = 32;

/// The number of reconciles running now, in every scope.
pub struct Running(watch::Sender<usize>);

impl Default for Running {
    fn default() -> Self {
        Running(watch::Sender::new(0))
    }
}

impl Running {
    /// Counts a reconcile until the guard is dropped, also when the reconcile's future is (a
    /// shutdown, a lost Lease); the in-flight gauge shows the count.
    pub fn enter<'a>(&'a self, metrics: &'a Metrics) -> Reconciling<'a> {
        self.add(metrics, 1);
        Reconciling {
            running: self,
            metrics,
        }
    }

    fn add(&self, metrics: &Metrics, delta: isize) {
        self.0.send_modify(|n| {
            *n = n.saturating_add_signed(delta);
            metrics.in_flight.set(i64::try_from(*n).unwrap_or(i64::MAX));
        });
    }

    /// Returns once no reconcile runs.
    pub async fn idle(&self) {
        // Never an error: `self` holds the sender.
        let _ = self.0.subscribe().wait_for(|n| *n == 0).await;
    }
}

/// One running reconcile, counted until dropped.
pub struct Reconciling<'a> {
    running: &'a Running,
    metrics: &'a Metrics,
}

impl Drop for Reconciling<'_> {
    fn drop(&mut self) {
        self.running.add(self.metrics, -1);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Each reconcile counts until its guard is dropped, and `idle` returns once the last one is.
    #[tokio::test]
    async fn reconciles_count_until_dropped_and_idle_waits_for_the_last() {
        let (running, metrics) = (Running::default(), Metrics::new());
        let first = running.enter(&metrics);
        let second = running.enter(&metrics);
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
