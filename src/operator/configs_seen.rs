//! A count of the KafkaToolConfig watch events the caches have applied, for the tasks that wait
//! until the cache has caught up with a write (the watch brings each write back a few
//! milliseconds after it): a reconcile whose status write found its config stale, a queued
//! `Rendered` Event, an output event of our own write.

use std::time::Duration;

use tokio::sync::watch;

#[derive(Debug, Clone, Default)]
pub struct ConfigsSeen(watch::Sender<u64>);

impl ConfigsSeen {
    /// The caches have applied one more config watch event.
    pub fn bump(&self) {
        self.0.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The first `Some` answer of `check`, asked now and again after each config watch event;
    /// `None` if `patience` runs out first.
    pub async fn wait_for<T>(
        &self,
        patience: Duration,
        mut check: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        // Subscribed before the first look: an event applied in between is not missed.
        let mut seen = self.0.subscribe();
        let wait = async {
            loop {
                if let Some(found) = check() {
                    return Some(found);
                }
                // Never an error: `self` holds the sender.
                if seen.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(patience, wait).await.ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// The check is asked again after each event, and the wait ends with its first answer; with
    /// no answer it ends when its patience does.
    #[tokio::test(start_paused = true)]
    async fn waits_for_the_event_that_brings_the_answer() {
        let seen = ConfigsSeen::default();
        let events = Arc::new(AtomicU32::new(0));
        let bumps = tokio::spawn({
            let (seen, events) = (seen.clone(), events.clone());
            async move {
                for _ in 0..3 {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    events.fetch_add(1, Ordering::SeqCst);
                    seen.bump();
                }
            }
        });
        let answer = seen
            .wait_for(Duration::from_secs(5), || {
                let n = events.load(Ordering::SeqCst);
                (n >= 2).then_some(n)
            })
            .await;
        assert_eq!(answer, Some(2));
        let started = tokio::time::Instant::now();
        let none: Option<()> = seen.wait_for(Duration::from_secs(5), || None).await;
        assert_eq!(none, None);
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        bumps.await.expect("the bumps");
    }
}
