//! The reverse index from a source (namespace, kind, name) to the KafkaToolConfigs that read it,
//! and from a GlobalClientDefaults to the configs it was applied to. Maintained from each
//! reconcile's `Evaluation`, so one ConfigMap edit re-reconciles only its dependants and a
//! GlobalClientDefaults edit reaches the configs it selected *before* the edit too.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::engine::sources::{SourceKind, SourceRef};

/// A KafkaToolConfig, by namespace and name.
pub type ConfigKey = (String, String);

/// A source object, by namespace, kind and name.
pub type SourceKey = (String, SourceKind, String);

/// Every key is allocated once and shared between the forward and the reverse maps: at 10,000
/// configs the index was the operator's largest structure after its caches.
#[derive(Debug, Default)]
pub struct ReverseIndex {
    dependants: HashMap<Arc<SourceKey>, BTreeSet<Arc<ConfigKey>>>,
    /// GlobalClientDefaults name → configs it was applied to.
    globals: HashMap<String, BTreeSet<Arc<ConfigKey>>>,
    /// What each config referenced at its last reconcile, to remove stale edges.
    edges: HashMap<Arc<ConfigKey>, Edges>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Edges {
    sources: Vec<Arc<SourceKey>>,
    globals: Vec<String>,
}

impl ReverseIndex {
    /// Replaces what `config` depends on (nothing to do when it did not change: the common case).
    pub fn record(&mut self, config: &ConfigKey, sources: &[SourceRef], globals: &[String]) {
        let mut wanted: Vec<(SourceKind, &str)> =
            sources.iter().map(|s| (s.kind, s.name.as_str())).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut names: Vec<String> = globals.to_vec();
        names.sort_unstable();
        names.dedup();
        if let Some(edges) = self.edges.get(config)
            && edges.globals == names
            && edges.sources.len() == wanted.len()
            && edges
                .sources
                .iter()
                .zip(&wanted)
                .all(|(have, (kind, name))| have.1 == *kind && have.2 == *name)
        {
            return;
        }
        self.forget(config);
        let id = Arc::new(config.clone());
        let mut edges = Edges {
            sources: Vec::with_capacity(wanted.len()),
            globals: names,
        };
        for (kind, name) in wanted {
            let probe: SourceKey = (config.0.clone(), kind, name.to_string());
            let key = match self.dependants.get_key_value(&probe) {
                Some((key, _)) => key.clone(),
                None => Arc::new(probe),
            };
            self.dependants
                .entry(key.clone())
                .or_default()
                .insert(id.clone());
            edges.sources.push(key);
        }
        for name in &edges.globals {
            self.globals
                .entry(name.clone())
                .or_default()
                .insert(id.clone());
        }
        self.edges.insert(id, edges);
    }

    /// Drops every edge of a config (deleted, or about to be re-recorded).
    pub fn forget(&mut self, config: &ConfigKey) {
        let Some(old) = self.edges.remove(config) else {
            return;
        };
        for key in old.sources {
            if let Some(set) = self.dependants.get_mut(&key) {
                set.remove(config);
                if set.is_empty() {
                    self.dependants.remove(&key);
                }
            }
        }
        for name in old.globals {
            if let Some(set) = self.globals.get_mut(&name) {
                set.remove(config);
                if set.is_empty() {
                    self.globals.remove(&name);
                }
            }
        }
    }

    /// The configs that read this source.
    pub fn dependants(&self, namespace: &str, kind: SourceKind, name: &str) -> Vec<ConfigKey> {
        self.dependants
            .get(&(namespace.to_string(), kind, name.to_string()))
            .map(|s| s.iter().map(|c| (**c).clone()).collect())
            .unwrap_or_default()
    }

    /// The configs a GlobalClientDefaults was applied to at their last reconcile.
    pub fn applied_by(&self, global: &str) -> Vec<ConfigKey> {
        self.globals
            .get(global)
            .map(|s| s.iter().map(|c| (**c).clone()).collect())
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
    fn recording_the_same_edges_again_keeps_them() {
        let mut index = ReverseIndex::default();
        let sources = [cm("base"), cm("base"), cm("other")];
        index.record(&key("a", "one"), &sources, &["prod".into()]);
        index.record(&key("a", "one"), &sources, &["prod".into()]);
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "base"),
            vec![key("a", "one")]
        );
        assert_eq!(index.applied_by("prod"), vec![key("a", "one")]);
        // A changed global list is a change, even with the same sources.
        index.record(&key("a", "one"), &sources, &[]);
        assert!(index.applied_by("prod").is_empty());
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "other"),
            vec![key("a", "one")]
        );
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
        index.record(&key("a", "two"), &[cm("next")], &[]);
        index.forget(&key("a", "one"));
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "next"),
            vec![key("a", "two")]
        );
        index.forget(&key("a", "two"));
        assert!(
            index
                .dependants("a", SourceKind::ConfigMap, "next")
                .is_empty()
        );
    }
}
