//! An `overridePolicy` made ready to judge many keys: exact keys in a set, `prefix*` patterns in a
//! sorted list where no prefix starts another one, so each key costs one lookup and one binary
//! search instead of a pass over every pattern (20,000 patterns × 10,000 keys took 10.7 s).

use std::collections::HashSet;

use crate::engine::spec::{OverrideMode, OverridePolicy};

pub struct PolicyMatcher<'p> {
    mode: OverrideMode,
    exact: HashSet<&'p str>,
    /// Sorted; none is a prefix of another, so the only candidate for a key is the greatest
    /// prefix not after it (every string between a prefix of `k` and `k` starts with it).
    prefixes: Vec<&'p str>,
}

impl<'p> PolicyMatcher<'p> {
    pub fn new(policy: &'p OverridePolicy) -> Self {
        let mut exact = HashSet::new();
        let mut prefixes: Vec<&str> = Vec::new();
        for pattern in &policy.keys {
            match pattern.strip_suffix('*') {
                Some(prefix) => prefixes.push(prefix),
                None => {
                    exact.insert(pattern.as_str());
                }
            }
        }
        prefixes.sort_unstable();
        prefixes.dedup();
        // Sorted, a prefix comes right before the patterns it covers: keep only the shortest.
        let mut kept: Vec<&str> = Vec::with_capacity(prefixes.len());
        for prefix in prefixes {
            if kept.last().is_none_or(|last| !prefix.starts_with(last)) {
                kept.push(prefix);
            }
        }
        Self {
            mode: policy.mode(),
            exact,
            prefixes: kept,
        }
    }

    fn listed(&self, key: &str) -> bool {
        if self.exact.contains(key) {
            return true;
        }
        let after = self.prefixes.partition_point(|p| *p <= key);
        after > 0 && key.starts_with(self.prefixes[after - 1])
    }

    pub fn allows(&self, key: &str) -> bool {
        match self.mode {
            OverrideMode::All => true,
            OverrideMode::None => false,
            OverrideMode::Allowlist => self.listed(key),
            OverrideMode::Denylist => !self.listed(key),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn policy(mode: OverrideMode, keys: &[&str]) -> OverridePolicy {
        OverridePolicy {
            mode: Some(mode),
            keys: keys.iter().map(|k| k.to_string()).collect(),
        }
    }

    #[test]
    fn exact_keys_and_prefixes() {
        let p = policy(
            OverrideMode::Denylist,
            &["ssl.*", "ss*", "acks", "sasl.jaas.config", "*x"],
        );
        let m = PolicyMatcher::new(&p);
        for denied in ["ssl.keystore.location", "ssx", "acks", "sasl.jaas.config"] {
            assert!(!m.allows(denied), "{denied}");
        }
        for allowed in ["sasl.mechanism", "acks2", "linger.ms", "s", ""] {
            assert!(m.allows(allowed), "{allowed}");
        }
        // `*` alone is the empty prefix: every key.
        let all = policy(OverrideMode::Allowlist, &["*"]);
        assert!(PolicyMatcher::new(&all).allows("anything"));
    }

    proptest! {
        #[test]
        fn agrees_with_the_pattern_by_pattern_rule(
            keys in prop::collection::vec("[ab.]{0,4}\\*?", 0..12),
            key in "[ab.]{0,6}",
            allow in any::<bool>(),
        ) {
            let mode = if allow { OverrideMode::Allowlist } else { OverrideMode::Denylist };
            let p = OverridePolicy { mode: Some(mode), keys };
            prop_assert_eq!(PolicyMatcher::new(&p).allows(&key), p.allows(&key));
        }
    }
}
