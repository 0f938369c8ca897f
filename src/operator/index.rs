//! The reverse index from a source (namespace, kind, name) to the KafkaToolConfigs that read it,
//! and from a GlobalClientDefaults to the configs it was applied to. Maintained from each
//! reconcile's `Evaluation`, so one ConfigMap edit re-reconciles only its dependants and a
//! GlobalClientDefaults edit reaches the configs it selected *before* the edit too.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::engine::sources::{SourceKind, SourceRef};

pub use crate::operator::config_id::ConfigId;

/// A source object, by namespace, kind and name.
pub type SourceKey = (String, SourceKind, String);

/// A config as the index keeps it: the namespace shared by every entry of that namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Config {
    namespace: Arc<str>,
    name: Box<str>,
}

impl Config {
    fn key(&self) -> ConfigId {
        ConfigId::new(&*self.namespace, &*self.name)
    }
}

/// A source as the index keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Source {
    namespace: Arc<str>,
    kind: SourceKind,
    name: Box<str>,
}

/// The configs that read one source: nearly always one, which needs no set.
#[derive(Debug)]
enum Dependants {
    One(Arc<Config>),
    Many(BTreeSet<Arc<Config>>),
}

impl Dependants {
    fn insert(&mut self, config: Arc<Config>) {
        match self {
            Dependants::One(only) if *only == config => {}
            Dependants::One(only) => {
                *self = Dependants::Many(BTreeSet::from([only.clone(), config]));
            }
            Dependants::Many(set) => {
                set.insert(config);
            }
        }
    }

    /// Removes `config`; true when none is left.
    fn remove(&mut self, config: &Config) -> bool {
        match self {
            Dependants::One(only) => **only == *config,
            Dependants::Many(set) => {
                set.remove(config);
                if set.len() == 1
                    && let Some(last) = set.pop_first()
                {
                    *self = Dependants::One(last);
                    return false;
                }
                set.is_empty()
            }
        }
    }

    fn keys(&self) -> Vec<ConfigId> {
        match self {
            Dependants::One(only) => vec![only.key()],
            Dependants::Many(set) => set.iter().map(|c| c.key()).collect(),
        }
    }
}

/// Every key is allocated once and shared between the forward and the reverse maps, namespaces
/// once for the whole index, and a source read by one config (the common case) keeps no set: at
/// 10,000 configs the index was the operator's largest structure after its caches (about 7 MB
/// before these, 700 bytes per config with its source and its output).
#[derive(Debug, Default)]
pub struct ReverseIndex {
    namespaces: HashSet<Arc<str>>,
    dependants: HashMap<Arc<Source>, Dependants>,
    /// GlobalClientDefaults name → configs it was applied to.
    globals: HashMap<Box<str>, BTreeSet<Arc<Config>>>,
    /// What each config referenced at its last reconcile, to remove stale edges.
    edges: HashMap<Arc<Config>, Edges>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Edges {
    sources: Box<[Arc<Source>]>,
    globals: Box<[Box<str>]>,
}

/// The one shared copy of `namespace` in `namespaces`.
pub(crate) fn intern(namespaces: &mut HashSet<Arc<str>>, namespace: &str) -> Arc<str> {
    if let Some(shared) = namespaces.get(namespace) {
        return shared.clone();
    }
    let shared: Arc<str> = namespace.into();
    namespaces.insert(shared.clone());
    shared
}

/// Drops `namespace` from `namespaces` when the set's handle and this one are the last: nothing
/// of the namespace is left. Namespaces come and go (one per pull request, say); a long-running
/// operator must not keep them all.
pub(crate) fn release(namespaces: &mut HashSet<Arc<str>>, namespace: Arc<str>) {
    if Arc::strong_count(&namespace) == 2 {
        namespaces.remove(&*namespace);
    }
}

impl ReverseIndex {
    /// The index's own form of a config key, when its namespace is known.
    fn probe(&self, config: &ConfigId) -> Option<Config> {
        Some(Config {
            namespace: self.namespaces.get(config.namespace.as_str())?.clone(),
            name: config.name.as_str().into(),
        })
    }

    /// Replaces what `config` depends on (nothing to do when it did not change: the common case).
    pub fn record(&mut self, config: &ConfigId, sources: &[SourceRef], globals: &[String]) {
        let mut wanted: Vec<(SourceKind, &str)> =
            sources.iter().map(|s| (s.kind, s.name.as_str())).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut names: Vec<&str> = globals.iter().map(String::as_str).collect();
        names.sort_unstable();
        names.dedup();
        if let Some(probe) = self.probe(config)
            && let Some(edges) = self.edges.get(&probe)
            && edges.globals.len() == names.len()
            && edges.globals.iter().zip(&names).all(|(a, b)| **a == **b)
            && edges.sources.len() == wanted.len()
            && edges
                .sources
                .iter()
                .zip(&wanted)
                .all(|(have, (kind, name))| have.kind == *kind && *have.name == **name)
        {
            return;
        }
        self.forget(config);
        let namespace = intern(&mut self.namespaces, &config.namespace);
        let id = Arc::new(Config {
            namespace: namespace.clone(),
            name: config.name.as_str().into(),
        });
        let mut edge_sources = Vec::with_capacity(wanted.len());
        for (kind, name) in wanted {
            let probe = Source {
                namespace: namespace.clone(),
                kind,
                name: name.into(),
            };
            let key = match self.dependants.get_key_value(&probe) {
                Some((key, _)) => key.clone(),
                None => Arc::new(probe),
            };
            self.dependants
                .entry(key.clone())
                .or_insert_with(|| Dependants::One(id.clone()))
                .insert(id.clone());
            edge_sources.push(key);
        }
        for name in &names {
            self.globals
                .entry((*name).into())
                .or_default()
                .insert(id.clone());
        }
        let edges = Edges {
            sources: edge_sources.into_boxed_slice(),
            globals: names.iter().map(|n| (*n).into()).collect(),
        };
        self.edges.insert(id, edges);
    }

    /// Drops every edge of a config (deleted, or about to be re-recorded), and its namespace
    /// when no other config of the index is in it.
    pub fn forget(&mut self, config: &ConfigId) {
        let Some(probe) = self.probe(config) else {
            return;
        };
        if let Some(old) = self.edges.remove(&probe) {
            for key in old.sources.iter() {
                if let Some(dependants) = self.dependants.get_mut(key)
                    && dependants.remove(&probe)
                {
                    self.dependants.remove(key);
                }
            }
            for name in old.globals.iter() {
                if let Some(set) = self.globals.get_mut(name) {
                    set.remove(&probe);
                    if set.is_empty() {
                        self.globals.remove(name);
                    }
                }
            }
        }
        release(&mut self.namespaces, probe.namespace);
    }

    /// Forgets every config `keep` says no to (deleted while the watch was down: no Delete
    /// event came for it).
    pub fn retain(&mut self, keep: impl Fn(&ConfigId) -> bool) {
        let gone: Vec<ConfigId> = self
            .edges
            .keys()
            .map(|config| config.key())
            .filter(|key| !keep(key))
            .collect();
        for config in &gone {
            self.forget(config);
        }
    }

    /// The configs that read this source.
    pub fn dependants(&self, namespace: &str, kind: SourceKind, name: &str) -> Vec<ConfigId> {
        let Some(namespace) = self.namespaces.get(namespace) else {
            return Vec::new();
        };
        let probe = Source {
            namespace: namespace.clone(),
            kind,
            name: name.into(),
        };
        self.dependants
            .get(&probe)
            .map(Dependants::keys)
            .unwrap_or_default()
    }

    /// The configs a GlobalClientDefaults was applied to at their last reconcile.
    pub fn applied_by(&self, global: &str) -> Vec<ConfigId> {
        self.globals
            .get(global)
            .map(|s| s.iter().map(|c| c.key()).collect())
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

    fn key(ns: &str, name: &str) -> ConfigId {
        ConfigId::new(ns, name)
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
    fn a_namespace_is_forgotten_with_its_last_config() {
        let mut index = ReverseIndex::default();
        index.record(&key("pr-1", "one"), &[cm("base")], &["prod".into()]);
        index.record(&key("pr-1", "two"), &[cm("base"), cm("extra")], &[]);
        index.record(&key("stays", "three"), &[cm("base")], &[]);
        index.forget(&key("pr-1", "one"));
        // another config still reads from pr-1
        assert_eq!(
            index.dependants("pr-1", SourceKind::ConfigMap, "base"),
            vec![key("pr-1", "two")]
        );
        index.forget(&key("pr-1", "two"));
        index.forget(&key("pr-2", "never-recorded"));
        let namespaces: Vec<&str> = index.namespaces.iter().map(|n| &**n).collect();
        assert_eq!(namespaces, ["stays"]);
        // re-recorded while the namespace is the config's alone: still there afterwards
        index.record(&key("stays", "three"), &[cm("other")], &[]);
        assert_eq!(
            index.dependants("stays", SourceKind::ConfigMap, "other"),
            vec![key("stays", "three")]
        );
        index.retain(|_| false);
        assert!(index.namespaces.is_empty());
        assert!(index.dependants.is_empty() && index.edges.is_empty());
    }

    #[test]
    fn a_config_no_longer_kept_leaves_no_edge() {
        let mut index = ReverseIndex::default();
        index.record(&key("a", "one"), &[cm("base")], &["prod".into()]);
        index.record(&key("a", "two"), &[cm("base")], &[]);
        index.retain(|config| config.name != "one");
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "base"),
            vec![key("a", "two")]
        );
        assert!(index.applied_by("prod").is_empty());
        index.retain(|_| false);
        assert!(index.edges.is_empty() && index.dependants.is_empty() && index.globals.is_empty());
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
    fn a_source_shared_by_several_configs_keeps_each_until_it_is_forgotten() {
        let mut index = ReverseIndex::default();
        for name in ["one", "two", "three"] {
            index.record(&key("a", name), &[cm("shared")], &[]);
        }
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "shared"),
            vec![key("a", "one"), key("a", "three"), key("a", "two")]
        );
        index.forget(&key("a", "three"));
        index.forget(&key("a", "one"));
        assert_eq!(
            index.dependants("a", SourceKind::ConfigMap, "shared"),
            vec![key("a", "two")]
        );
        index.record(&key("a", "two"), &[], &[]);
        assert!(
            index
                .dependants("a", SourceKind::ConfigMap, "shared")
                .is_empty()
        );
        assert!(index.dependants.is_empty());
        assert!(
            index
                .dependants("unknown", SourceKind::ConfigMap, "shared")
                .is_empty()
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
