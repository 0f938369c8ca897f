//! A flag set once a watch's cache has its first full list: a `tokio::sync::watch` value, so a
//! waiter wakes when it is set instead of polling.

use tokio::sync::watch;

/// Set once a cache has its first full list. Custom because kube-runtime 5.0's
/// `Store::wait_until_ready` wakes only the most recent of several concurrent waiters (a oneshot
/// underneath, `DelayedInit`) and the controller itself waits on it; besides, the version caches
/// and the workload watches have no `Store`. Set from each watch stream's `InitDone`.
#[derive(Debug, Clone, Default)]
pub struct Synced(watch::Sender<bool>);

impl Synced {
    pub fn mark(&self) {
        self.0.send_replace(true);
    }

    pub fn is_set(&self) -> bool {
        *self.0.borrow()
    }

    pub async fn wait(&self) {
        // Never an error: `self` holds a sender.
        let _ = self.0.subscribe().wait_for(|set| *set).await;
    }

    /// A flag set once every one of `flags` is (checked by a spawned task).
    pub fn all(flags: Vec<Synced>) -> Synced {
        let all = Synced::default();
        tokio::spawn({
            let all = all.clone();
            async move {
                for flag in flags {
                    flag.wait().await;
                }
                all.mark();
            }
        });
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_waiter_wakes_once_all_flags_are_set() {
        let (a, b) = (Synced::default(), Synced::default());
        let all = Synced::all(vec![a.clone(), b.clone()]);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let all = all.clone();
                tokio::spawn(async move { all.wait().await })
            })
            .collect();
        a.mark();
        tokio::task::yield_now().await;
        assert!(!all.is_set(), "one of two flags is not all");
        b.mark();
        for waiter in waiters {
            tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
                .await
                .expect("every waiter wakes")
                .expect("the waiter does not panic");
        }
        assert!(all.is_set());
    }
}
