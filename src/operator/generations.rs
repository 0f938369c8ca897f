//! The generation filter on the KafkaToolConfig watch: a config passes when it is new or its
//! generation (or uid: deleted and created again) changed, so status writes never trigger a
//! reconcile. Replaces kube-runtime's `predicate_filter(predicates::generation)`, whose cache
//! keeps name, namespace and uid as three strings per config (about 190 bytes, 1.9 MB at
//! N = 10,000); here the namespace is shared and the uid an integer (about 80 bytes).
//!
//! Fed from two places of one watch stream: [`Generations::observe`] sees every event (a
//! deletion forgets the config, a relist forgets those it no longer lists), and
//! [`Generations::changed`] decides for each applied object.
//!
//! A relist (after a 410, or any watch error) fills kube-runtime's store only at its end
//! (`InitDone`): until then the store still holds the configs as they were before the watch went
//! down. A config whose generation changed meanwhile is therefore not passed when it is listed
//! (its reconcile would render the old spec, and the filter would never pass the new generation
//! again) but released by [`Generations::observe`] at `InitDone`, once the store has it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;

use crate::operator::crd::KafkaToolConfig;
use crate::operator::index::{intern, release};
use crate::operator::versions::Compact;

#[derive(Debug, Default)]
pub struct Generations {
    namespaces: HashSet<Arc<str>>,
    seen: HashMap<(Arc<str>, Box<str>), Seen>,
    /// Counts relists: entries not listed by the latest one are dropped when it completes.
    epoch: u32,
    /// The first list is complete: an `Init` starts a relist.
    listed: bool,
    /// During a relist, the configs it found changed, released when it completes (kept across
    /// attempts: a relist that fails is started again, and lists them again as seen).
    deferred: Option<HashSet<(Arc<str>, Box<str>)>>,
}

#[derive(Debug, Default)]
struct Seen {
    uid: Option<Compact>,
    generation: Option<i64>,
    epoch: u32,
}

impl Generations {
    fn key(&mut self, config: &KafkaToolConfig) -> (Arc<str>, Box<str>) {
        let namespace = config.metadata.namespace.as_deref().unwrap_or_default();
        let name = config.metadata.name.as_deref().unwrap_or_default();
        (intern(&mut self.namespaces, namespace), name.into())
    }

    /// Whether an applied config should reconcile now: new, or another generation or uid, and
    /// not listed by a relist (see the module documentation).
    pub fn changed(&mut self, config: &KafkaToolConfig) -> bool {
        if !self.differs(config) {
            return false;
        }
        if self.deferred.is_none() {
            return true;
        }
        let key = self.key(config);
        if let Some(deferred) = self.deferred.as_mut() {
            deferred.insert(key);
        }
        false
    }

    /// New, or another generation or uid than last seen (and now recorded as seen).
    fn differs(&mut self, config: &KafkaToolConfig) -> bool {
        let key = self.key(config);
        let uid = config.metadata.uid.as_deref().map(Compact::new);
        let generation = config.metadata.generation;
        // A new entry differs: its generation is None.
        let seen = self.seen.entry(key).or_default();
        seen.epoch = self.epoch;
        if seen.uid == uid && seen.generation == generation && generation.is_some() {
            return false;
        }
        (seen.uid, seen.generation) = (uid, generation);
        true
    }

    /// Every event of the watch, after the cache has applied it. Returns the configs a relist
    /// found changed when it completes (the store has them now): they are to be reconciled.
    pub fn observe(
        &mut self,
        event: &watcher::Event<KafkaToolConfig>,
    ) -> Vec<ObjectRef<KafkaToolConfig>> {
        match event {
            watcher::Event::Init => {
                self.epoch = self.epoch.wrapping_add(1);
                if self.listed && self.deferred.is_none() {
                    self.deferred = Some(HashSet::new());
                }
            }
            watcher::Event::InitApply(config) => {
                let key = self.key(config);
                let epoch = self.epoch;
                if let Some(seen) = self.seen.get_mut(&key) {
                    seen.epoch = epoch;
                }
            }
            watcher::Event::InitDone => {
                let epoch = self.epoch;
                self.seen.retain(|_, seen| seen.epoch == epoch);
                self.listed = true;
                let released = self
                    .deferred
                    .take()
                    .into_iter()
                    .flatten()
                    .filter(|key| self.seen.contains_key(key))
                    .map(|(namespace, name)| ObjectRef::new(&name).within(&namespace))
                    .collect();
                // Namespaces of configs the relist no longer lists, and of InitApply events.
                self.namespaces.retain(|ns| Arc::strong_count(ns) > 1);
                return released;
            }
            watcher::Event::Delete(config) => {
                let (namespace, name) = self.key(config);
                self.seen.remove(&(namespace.clone(), name));
                release(&mut self.namespaces, namespace);
            }
            watcher::Event::Apply(_) => {}
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str, uid: &str, generation: i64) -> KafkaToolConfig {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "kafkaconfig.dev/v1alpha1",
            "kind": "KafkaToolConfig",
            "metadata": {"name": name, "namespace": "team-a", "uid": uid, "generation": generation},
            "spec": {"tool": "kafka-console-producer"},
        }))
        .expect("a valid KafkaToolConfig")
    }

    #[test]
    fn a_config_passes_when_new_or_its_generation_or_uid_changed() {
        let mut generations = Generations::default();
        let uid = "0b7e1c4e-9a3f-4c2d-8e5f-1a2b3c4d5e6f";
        assert!(generations.changed(&config("a", uid, 1)));
        // a status write: same generation
        assert!(!generations.changed(&config("a", uid, 1)));
        assert!(generations.changed(&config("a", uid, 2)));
        // deleted and created again under the same name
        assert!(generations.changed(&config("a", "other-uid", 1)));
        assert!(!generations.changed(&config("a", "other-uid", 1)));
        generations.observe(&watcher::Event::Delete(config("a", "other-uid", 1)));
        assert!(generations.changed(&config("a", "other-uid", 1)));
    }

    #[test]
    fn a_config_changed_while_the_watch_was_down_passes_when_the_relist_has_filled_the_store() {
        let mut generations = Generations::default();
        let refs = |configs: &[&str]| -> Vec<ObjectRef<KafkaToolConfig>> {
            configs
                .iter()
                .map(|name| ObjectRef::new(name).within("team-a"))
                .collect()
        };
        // The first list passes everything at once (kube-runtime holds reconciles until its
        // store is ready).
        assert!(generations.observe(&watcher::Event::Init).is_empty());
        generations.observe(&watcher::Event::InitApply(config("a", "u1", 1)));
        assert!(generations.changed(&config("a", "u1", 1)));
        generations.observe(&watcher::Event::InitApply(config("b", "u2", 1)));
        assert!(generations.changed(&config("b", "u2", 1)));
        assert!(generations.observe(&watcher::Event::InitDone).is_empty());
        // 410: a first relist attempt lists `a` at its new generation, then fails; the store
        // still holds generation 1, so `a` is not passed yet.
        generations.observe(&watcher::Event::Init);
        generations.observe(&watcher::Event::InitApply(config("a", "u1", 2)));
        assert!(!generations.changed(&config("a", "u1", 2)));
        // The next attempt lists it again (seen by now) and completes: `a` is released.
        generations.observe(&watcher::Event::Init);
        for c in [config("a", "u1", 2), config("b", "u2", 1)] {
            generations.observe(&watcher::Event::InitApply(c.clone()));
            assert!(!generations.changed(&c));
        }
        assert_eq!(generations.observe(&watcher::Event::InitDone), refs(&["a"]));
        // Watching again: edits pass at once.
        assert!(generations.changed(&config("b", "u2", 2)));
        assert!(generations.observe(&watcher::Event::InitDone).is_empty());
    }

    #[test]
    fn a_config_a_relist_found_changed_and_then_no_longer_lists_is_not_released() {
        let mut generations = Generations::default();
        generations.observe(&watcher::Event::Init);
        assert!(generations.changed(&config("a", "u1", 1)));
        generations.observe(&watcher::Event::InitDone);
        generations.observe(&watcher::Event::Init);
        assert!(!generations.changed(&config("a", "u1", 2)));
        // deleted before the next attempt lists
        generations.observe(&watcher::Event::Init);
        assert!(generations.observe(&watcher::Event::InitDone).is_empty());
    }

    #[test]
    fn a_namespace_is_forgotten_with_its_last_config() {
        let in_ns = |name: &str, ns: &str| {
            let mut c = config(name, name, 1);
            c.metadata.namespace = Some(ns.into());
            c
        };
        let mut generations = Generations::default();
        assert!(generations.changed(&in_ns("a", "pr-1")));
        assert!(generations.changed(&in_ns("b", "pr-1")));
        assert!(generations.changed(&in_ns("c", "pr-2")));
        assert!(generations.changed(&in_ns("d", "stays")));
        generations.observe(&watcher::Event::Delete(in_ns("a", "pr-1")));
        assert_eq!(generations.namespaces.len(), 3);
        generations.observe(&watcher::Event::Delete(in_ns("b", "pr-1")));
        generations.observe(&watcher::Event::Delete(in_ns("x", "never-seen")));
        assert_eq!(generations.namespaces.len(), 2);
        // pr-2 deleted while the watch was down: the relist does not list it
        generations.observe(&watcher::Event::Init);
        generations.observe(&watcher::Event::InitApply(in_ns("d", "stays")));
        generations.observe(&watcher::Event::InitDone);
        let namespaces: Vec<&str> = generations.namespaces.iter().map(|n| &**n).collect();
        assert_eq!(namespaces, ["stays"]);
        assert!(!generations.changed(&in_ns("d", "stays")));
    }

    #[test]
    fn a_relist_forgets_configs_it_no_longer_lists() {
        let mut generations = Generations::default();
        assert!(generations.changed(&config("kept", "u1", 1)));
        assert!(generations.changed(&config("gone", "u2", 1)));
        generations.observe(&watcher::Event::Init);
        generations.observe(&watcher::Event::InitApply(config("kept", "u1", 1)));
        generations.observe(&watcher::Event::InitDone);
        assert_eq!(generations.seen.len(), 1);
        // listed again unchanged: no reconcile from the filter
        assert!(!generations.changed(&config("kept", "u1", 1)));
        assert!(generations.changed(&config("gone", "u2", 1)));
    }
}
