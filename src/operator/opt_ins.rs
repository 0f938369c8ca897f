//! The index of workloads that opt in with `kafkaconfig.dev/config` (kept by the watches of
//! `workloads.rs`, read by every reconcile): which workloads exist, and which configs each one's
//! annotation names.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::engine::spec::RolloutKind;

/// A workload: its kind, namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkloadKey {
    pub kind: RolloutKind,
    pub namespace: String,
    pub name: String,
}

/// Which workloads exist and which configs their annotation names, indexed both ways (every
/// reconcile asks for its config's opt-ins: a lookup, not a scan of all workloads).
#[derive(Debug, Default)]
pub struct OptIns {
    workloads: BTreeMap<WorkloadKey, Vec<String>>,
    /// (namespace, config) → the workloads whose annotation names it.
    by_config: HashMap<(String, String), BTreeSet<(RolloutKind, String)>>,
}

impl OptIns {
    /// The workloads whose annotation names `config` in `namespace`.
    pub fn targets(&self, namespace: &str, config: &str) -> Vec<(RolloutKind, String)> {
        self.by_config
            .get(&(namespace.to_string(), config.to_string()))
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn index(&mut self, key: &WorkloadKey, configs: &[String], add: bool) {
        for config in configs {
            let slot = (key.namespace.clone(), config.clone());
            let workload = (key.kind, key.name.clone());
            if add {
                self.by_config.entry(slot).or_default().insert(workload);
            } else if let Some(set) = self.by_config.get_mut(&slot) {
                set.remove(&workload);
                if set.is_empty() {
                    self.by_config.remove(&slot);
                }
            }
        }
    }

    /// Records a workload as it is now (`None`: deleted). Returns whether it appeared or went
    /// away, and the configs its annotation named before or names now when that changed too.
    pub fn observe(&mut self, key: WorkloadKey, names: Option<Vec<String>>) -> (bool, Vec<String>) {
        let before = match &names {
            Some(names) => self.workloads.insert(key.clone(), names.clone()),
            None => self.workloads.remove(&key),
        };
        if let Some(before) = &before {
            self.index(&key, before, false);
        }
        if let Some(names) = &names {
            self.index(&key, names, true);
        }
        // Some/None differ exactly when the workload appeared or went away.
        let appeared_or_gone = before.is_none() != names.is_none();
        if before == names {
            return (false, Vec::new());
        }
        let affected: BTreeSet<String> = before.into_iter().chain(names).flatten().collect();
        (appeared_or_gone, affected.into_iter().collect())
    }

    /// Forgets the workloads of `kind` (in `scope`, or everywhere) a relist did not list.
    pub fn retain_listed(
        &mut self,
        kind: RolloutKind,
        scope: Option<&str>,
        listed: &HashSet<WorkloadKey>,
    ) -> Vec<WorkloadKey> {
        let gone: Vec<WorkloadKey> = self
            .workloads
            .keys()
            .filter(|k| k.kind == kind && scope.is_none_or(|s| s == k.namespace))
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect();
        for key in &gone {
            if let Some(names) = self.workloads.remove(key) {
                self.index(key, &names, false);
            }
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> WorkloadKey {
        WorkloadKey {
            kind: RolloutKind::Deployment,
            namespace: "team-a".into(),
            name: name.into(),
        }
    }

    #[test]
    fn a_workload_appearing_or_changing_its_annotation_names_the_configs_to_reconcile() {
        let mut opt_ins = OptIns::default();
        // Created with the annotation: appeared, and names orders.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["orders".into()])),
            (true, vec!["orders".to_string()])
        );
        assert_eq!(
            opt_ins.targets("team-a", "orders"),
            [(RolloutKind::Deployment, "api".to_string())]
        );
        assert!(opt_ins.targets("team-b", "orders").is_empty());
        // A status update (same annotation): nothing to do.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["orders".into()])),
            (false, vec![])
        );
        // Moved to another config: both hear of it.
        assert_eq!(
            opt_ins.observe(key("api"), Some(vec!["payments".into()])),
            (false, vec!["orders".to_string(), "payments".to_string()])
        );
        assert!(opt_ins.targets("team-a", "orders").is_empty());
        assert_eq!(opt_ins.targets("team-a", "payments").len(), 1);
        // Deleted: gone, the config it named hears of it.
        assert_eq!(
            opt_ins.observe(key("api"), None),
            (true, vec!["payments".to_string()])
        );
        // A workload without the annotation appears: only `rollout.targets` can name it.
        assert_eq!(opt_ins.observe(key("plain"), Some(vec![])), (true, vec![]));
    }

    #[test]
    fn a_relist_forgets_the_workloads_it_no_longer_lists_in_its_scope_only() {
        let mut opt_ins = OptIns::default();
        opt_ins.observe(key("kept"), Some(vec!["orders".into()]));
        opt_ins.observe(key("gone"), Some(vec!["orders".into()]));
        let mut elsewhere = key("other-ns");
        elsewhere.namespace = "team-b".into();
        opt_ins.observe(elsewhere.clone(), Some(vec!["orders".into()]));
        let listed: HashSet<WorkloadKey> = [key("kept")].into();
        let gone = opt_ins.retain_listed(RolloutKind::Deployment, Some("team-a"), &listed);
        assert_eq!(gone, vec![key("gone")]);
        assert_eq!(opt_ins.targets("team-b", "orders").len(), 1);
        assert_eq!(
            opt_ins.targets("team-a", "orders"),
            [(RolloutKind::Deployment, "kept".to_string())]
        );
    }
}
