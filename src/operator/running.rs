//! How many reconciles run now, at most [`RECONCILE_CONCURRENCY`] in every watched scope
//! together: the in-flight gauge, and what queued Events wait for.
//!
//! Unbounded, a relist of 10,000 configs started as many concurrent requests, which the API
//! server answers with 429s; each reconcile mostly waits on the API server, so a few dozen keep
//! it busy. Custom for the burst p99 (≤ 2 s): a tokio semaphore hands out permits in the order
//! they were asked for, so under a burst the oldest edit is rendered first, while kube-runtime's
//! own limit parks the surplus in a hash set and releases it in hash order. Measured on
//! 2026-12-06/07 (`docs/BENCHMARKS.md`): with kube-runtime's limit alone the 10k burst p99 was
//! 0.48–3.50 s over nine runs (two over the target), with this 0.49–0.81 s over seven.

use std::sync::atomic::AtomicI64;

use prometheus_client::metrics::gauge::Gauge;
use tokio::sync::{Semaphore, SemaphorePermit, watch};

/// Reconciles that do API work at once, in every watched scope together.
pub const RECONCILE_CONCURRENCY: usize = 32;

/// Reconciles kube-runtime admits at once per scope, to wait for a permit. Bounded because every
/// admitted reconcile holds a future and a tracing span (whose slab never shrinks): admitting a
/// whole relist of 10,000 configs cost 35 MiB at the restart peak. Beyond this many,
/// kube-runtime releases the surplus in hash order, so it is well above what a burst keeps
/// waiting.
pub const ADMITTED_PER_SCOPE: u16 = 256;

/// The permits, the number of reconciles holding one, and the in-flight gauge that shows it.
pub struct Running {
    permits: Semaphore,
    count: watch::Sender<usize>,
    gauge: Gauge<i64, AtomicI64>,
}

impl Running {
    pub fn new(gauge: Gauge<i64, AtomicI64>) -> Self {
        Running {
            permits: Semaphore::new(RECONCILE_CONCURRENCY),
            count: watch::Sender::new(0),
            gauge,
        }
    }

    /// Waits for a permit, first come first served. It counts until the guard is dropped, also
    /// when the reconcile's future is (a shutdown, a lost Lease).
    pub async fn enter(&self) -> Reconciling<'_> {
        // Never `None`: the semaphore is never closed.
        let permit = self.permits.acquire().await.ok();
        self.add(1);
        Reconciling {
            running: self,
            _permit: permit,
        }
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
pub struct Reconciling<'a> {
    running: &'a Running,
    _permit: Option<SemaphorePermit<'a>>,
}

impl Drop for Reconciling<'_> {
    fn drop(&mut self) {
        self.running.add(-1);
    }
}

#[cfg(test)]
mod tests {
    use std::task::Poll;
    use std::time::Duration;

    use super::*;

    /// A permit given back goes to the first who asked for one, at most
    /// [`RECONCILE_CONCURRENCY`] run at once, each counts until its guard is dropped, and `idle`
    /// returns once the last one is.
    #[tokio::test]
    async fn reconciles_run_first_come_first_served_and_count_until_dropped() {
        let metrics = crate::operator::metrics::Metrics::new();
        let running = Running::new(metrics.in_flight.clone());
        let mut held: Vec<Reconciling<'_>> =
            futures::future::join_all((0..RECONCILE_CONCURRENCY).map(|_| running.enter())).await;
        assert_eq!(metrics.in_flight.get(), RECONCILE_CONCURRENCY as i64);
        let mut first = Box::pin(running.enter());
        assert!(
            futures::poll!(first.as_mut()).is_pending(),
            "all permits held"
        );
        let mut second = Box::pin(running.enter());
        assert!(
            futures::poll!(second.as_mut()).is_pending(),
            "all permits held"
        );
        drop(held.pop());
        // Polled first, the second waiter still waits: the permit is the first one's.
        assert!(futures::poll!(second.as_mut()).is_pending());
        let Poll::Ready(first_in) = futures::poll!(first.as_mut()) else {
            panic!("the first waiter got no permit");
        };
        let mut idle = Box::pin(running.idle());
        assert!(futures::poll!(idle.as_mut()).is_pending());
        drop((held, second));
        assert!(futures::poll!(idle.as_mut()).is_pending(), "one still runs");
        assert_eq!(metrics.in_flight.get(), 1);
        drop(first_in);
        tokio::time::timeout(Duration::from_secs(1), idle)
            .await
            .expect("idle once every reconcile is done");
        assert_eq!(metrics.in_flight.get(), 0);
    }
}
