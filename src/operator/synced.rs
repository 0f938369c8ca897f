//! A flag set once a watch's cache has its first full list.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set once a cache has its first full list. kube-runtime's `Store::wait_until_ready` wakes only
/// the most recent of several concurrent waiters (a oneshot underneath), and the controller itself
/// waits on it, so our own waits use this flag, set from the watch stream's `InitDone`.
#[derive(Debug, Clone, Default)]
pub struct Synced(Arc<AtomicBool>);

impl Synced {
    pub fn mark(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    pub async fn wait(&self) {
        while !self.is_set() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
