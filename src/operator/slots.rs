//! The reconcile slots: at most [`RECONCILE_SLOTS`] reconciles do API work at once (all scopes
//! together), and how many do now.
//!
//! Unbounded, a relist of 10,000 configs started as many concurrent requests, which the API
//! server answers with 429s; each reconcile mostly waits on the API server, so a few dozen keep
//! it busy. Custom for the burst p99 (≤ 2 s): a tokio semaphore hands out permits in the order
//! they were asked for, so under a burst the oldest edit is rendered first, while kube-runtime's
//! own limit parks the surplus in a hash set and releases it in hash order (some edits waited
//! until the whole burst was done).

use tokio::sync::{Semaphore, SemaphorePermit, watch};

use crate::operator::metrics::Metrics;

pub const RECONCILE_SLOTS: usize = 32;

pub struct Slots {
    permits: Semaphore,
    /// Slots held now: queued Events wait until none is (`reconcile::deliver_events`).
    held: watch::Sender<usize>,
}

impl Default for Slots {
    fn default() -> Self {
        Slots {
            permits: Semaphore::new(RECONCILE_SLOTS),
            held: watch::Sender::new(0),
        }
    }
}

impl Slots {
    /// Waits for a slot, first come first served. It counts (in the in-flight gauge too) until
    /// it is dropped, also when the reconcile's future is (a shutdown, a lost Lease).
    pub async fn acquire<'a>(&'a self, metrics: &'a Metrics) -> Slot<'a> {
        // Never `None`: the semaphore is never closed.
        let permit = self.permits.acquire().await.ok();
        metrics.started();
        self.held.send_modify(|n| *n += 1);
        Slot {
            _permit: permit,
            slots: self,
            metrics,
        }
    }

    /// Returns once no reconcile holds a slot.
    pub async fn idle(&self) {
        // Never an error: `self` holds the sender.
        let _ = self.held.subscribe().wait_for(|n| *n == 0).await;
    }
}

pub struct Slot<'a> {
    _permit: Option<SemaphorePermit<'a>>,
    slots: &'a Slots,
    metrics: &'a Metrics,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.metrics.finished();
        self.slots.held.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use std::task::Poll;
    use std::time::Duration;

    use super::*;

    /// A slot given back goes to the first who asked for one, at most [`RECONCILE_SLOTS`] are
    /// held at once, and `idle` returns once the last one is given back.
    #[tokio::test]
    async fn slots_are_first_come_first_served_and_counted_until_dropped() {
        let (slots, metrics) = (Slots::default(), Metrics::new());
        let mut held: Vec<Slot<'_>> =
            futures::future::join_all((0..RECONCILE_SLOTS).map(|_| slots.acquire(&metrics))).await;
        assert_eq!(metrics.in_flight.get(), RECONCILE_SLOTS as i64);
        let mut first = Box::pin(slots.acquire(&metrics));
        assert!(
            futures::poll!(first.as_mut()).is_pending(),
            "all slots held"
        );
        let mut second = Box::pin(slots.acquire(&metrics));
        assert!(
            futures::poll!(second.as_mut()).is_pending(),
            "all slots held"
        );
        drop(held.pop());
        // Polled first, the second waiter still waits: the slot is the first one's.
        assert!(futures::poll!(second.as_mut()).is_pending());
        let Poll::Ready(first_slot) = futures::poll!(first.as_mut()) else {
            panic!("the first waiter got no slot");
        };
        let mut idle = Box::pin(slots.idle());
        assert!(futures::poll!(idle.as_mut()).is_pending());
        drop((held, first_slot, second));
        tokio::time::timeout(Duration::from_secs(1), idle)
            .await
            .expect("idle once every slot is back");
        assert_eq!(metrics.in_flight.get(), 0);
    }
}
