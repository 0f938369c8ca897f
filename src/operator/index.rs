//! The reverse index from a source (namespace, kind, name) to the KafkaToolConfigs that read it,
//! and from a GlobalClientDefaults to the configs it was applied to. Maintained from each
//! reconcile's `Evaluation`, so one ConfigMap edit re-reconciles only its dependants and a
//! GlobalClientDefaults edit reaches the configs it selected *before* the edit too.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::sources::{SourceKind, SourceRef};

/// A KafkaToolConfig, by namespace and name.
pub type ConfigKey = (String, String);

/// A source object, by namespace, kind and name.
pub type SourceKey = (String, SourceKind, String);

#[derive(Debug, Default)]
pub struct ReverseIndex {
    dependants: BTreeMap<SourceKey, BTreeSet<ConfigKey>>,
    /// What each config referenced at its last reconcile, to remove stale edges.
    references: BTreeMap<ConfigKey, BTreeSet<SourceKey>>,
    /// GlobalClientDefaults name → configs it was applied to.
    globals: BTreeMap<String, BTreeSet<ConfigKey>>,
    applied: BTreeMap<ConfigKey, BTreeSet<String>>,
}

impl ReverseIndex {
    /// Replaces what `config` depends on.
    pub fn record(&mut self, config: &ConfigKey, sources: &[SourceRef], globals: &[String]) {
        self.forget(config);
        let keys: BTreeSet<SourceKey> = sources
            .iter()
            .map(|s| (config.0.clone(), s.kind, s.name.clone()))
            .collect();
        for key in &keys {
            self.dependants
                .entry(key.clone())
                .or_default()
                .insert(config.clone());
        }
        self.references.insert(config.clone(), keys);
        let names: BTreeSet<String> = globals.iter().cloned().collect();
        for name in &names {
            self.globals
                .entry(name.clone())
                .or_default()
                .insert(config.clone());
        }
        self.applied.insert(config.clone(), names);
    }

    /// Drops every edge of a config (deleted, or about to be re-recorded).
    pub fn forget(&mut self, config: &ConfigKey) {
        if let Some(old) = self.references.remove(config) {
            for key in old {
                if let Some(set) = self.dependants.get_mut(&key) {
                    set.remove(config);
                    if set.is_empty() {
                        self.dependants.remove(&key);
                    }
                }
            }
        }
        if let Some(old) = self.applied.remove(config) {
            for name in old {
                if let Some(set) = self.globals.get_mut(&name) {
                    set.remove(config);
                    if set.is_empty() {
                        self.globals.remove(&name);
                    }
                }
            }
        }
    }

    /// The configs that read this source.
    pub fn dependants(&self, namespace: &str, kind: SourceKind, name: &str) -> Vec<ConfigKey> {
        self.dependants
            .get(&(namespace.to_string(), kind, name.to_string()))
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The configs a GlobalClientDefaults was applied to at their last reconcile.
    pub fn applied_by(&self, global: &str) -> Vec<ConfigKey> {
        self.globals
            .get(global)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(name: &str) -> SourceRef {
        SourceRef {
            kind: SourceKind::ConfigMap,
            name: name.into(),
        }
    }

    fn key(ns: &str, name: &str) -> ConfigKey {
        (ns.into(), name.into())
    }

    #[test]
    fn a_source_maps_only_to_configs_of_its_namespace_that_read_it() {
        let mut index = ReverseIndex::default();
        index.record(&key("a", "one"), &[cm("base")], &[]);
        index.record(&key("a", "two"), &[cm("other")], &[]);
        index.record(&key("b", "three"), &[cm("base")], &[]);
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "base"),
            vec![key("a", "one")]
        );
        assert!(index.dependants("a", SourceKind::Secret, "base").is_empty());
    }

    #[test]
    fn re_recording_drops_stale_edges() {
        let mut index = ReverseIndex::default();
        index.record(&key("a", "one"), &[cm("base")], &["prod".into()]);
        index.record(&key("a", "one"), &[cm("next")], &[]);
        assert!(
            index
                .dependants("a", SourceKind::ConfigMap, "base")
                .is_empty()
        );
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "next"),
            vec![key("a", "one")]
        );
        assert!(index.applied_by("prod").is_empty());
        index.forget(&key("a", "one"));
        assert!(
            index
                .dependants("a", SourceKind::ConfigMap, "next")
                .is_empty()
        );
    }
}
