//! A string-keyed map kept as a sorted `Vec`, for the spec's maps (`args`, `properties`).
//!
//! They hold one to a few dozen entries, and every KafkaToolConfig the operator caches has them:
//! a `BTreeMap` allocates a node of eleven slots for its first entry (about 560 bytes for
//! `args: {topic: …}`), which was 5 MB of a 10,000-config cache (docs/BENCHMARKS.md, issue 7).
//! Same JSON and schema as `BTreeMap<String, V>`, same order (by key), same lookups.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, PartialEq)]
pub struct SmallMap<V> {
    /// Sorted by key, keys unique.
    entries: Vec<(String, V)>,
}

impl<V> Default for SmallMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> SmallMap<V> {
    pub const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Like `BTreeMap::insert`: the value that was there, if any.
    pub fn insert(&mut self, key: String, value: V) -> Option<V> {
        match self.position(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.position(key).ok().map(|i| self.entries.remove(i).1)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_, V> {
        Iter {
            inner: self.entries.iter(),
        }
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &String> {
        self.entries.iter().map(|(k, _)| k)
    }
}

/// `(&key, &value)` in key order, as `BTreeMap::iter` yields them.
pub struct Iter<'a, V> {
    inner: std::slice::Iter<'a, (String, V)>,
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a String, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|(k, v)| (k, v))
    }
}

impl<V> ExactSizeIterator for Iter<'_, V> {}

impl<'a, V> IntoIterator for &'a SmallMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<V> IntoIterator for SmallMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

/// Later entries win over earlier ones with the same key, as inserting them into a `BTreeMap` in
/// turn would.
impl<V> FromIterator<(String, V)> for SmallMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(iter: I) -> Self {
        let mut entries: Vec<(String, V)> = iter.into_iter().collect();
        // Stable: equal keys keep their order, so the last of them is the one to keep.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut unique: Vec<(String, V)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match unique.last_mut() {
                Some(last) if last.0 == entry.0 => *last = entry,
                _ => unique.push(entry),
            }
        }
        unique.shrink_to_fit();
        Self { entries: unique }
    }
}

impl<V, const N: usize> From<[(String, V); N]> for SmallMap<V> {
    fn from(entries: [(String, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<V: fmt::Debug> fmt::Debug for SmallMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: Serialize> Serialize for SmallMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SmallMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(PhantomData<V>);

        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = SmallMap<V>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(256));
                while let Some(entry) = access.next_entry::<String, V>()? {
                    entries.push(entry);
                }
                Ok(entries.into_iter().collect())
            }
        }

        deserializer.deserialize_map(MapVisitor(PhantomData))
    }
}

/// The schema of `BTreeMap<String, V>`: the CRD does not change.
impl<V: JsonSchema> JsonSchema for SmallMap<V> {
    fn inline_schema() -> bool {
        <BTreeMap<String, V>>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <BTreeMap<String, V>>::schema_id()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <BTreeMap<String, V>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Built from the same entries in the same order, it equals a BTreeMap: lookups,
        /// iteration order, later-wins, JSON both ways.
        #[test]
        fn behaves_as_a_btreemap(entries in proptest::collection::vec(("[a-d]{0,3}", any::<u8>()), 0..24),
                                 probes in proptest::collection::vec("[a-d]{0,3}", 0..8)) {
            let entries: Vec<(String, u8)> = entries;
            let small: SmallMap<u8> = entries.iter().cloned().collect();
            let mut inserted = SmallMap::new();
            let mut btree = BTreeMap::new();
            for (k, v) in &entries {
                prop_assert_eq!(inserted.insert(k.clone(), *v), btree.insert(k.clone(), *v));
            }
            prop_assert_eq!(&small, &inserted);
            prop_assert_eq!(small.len(), btree.len());
            prop_assert!(small.iter().eq(btree.iter()));
            prop_assert!(small.iter().rev().eq(btree.iter().rev()));
            for probe in probes.iter().chain(entries.iter().map(|(k, _)| k)) {
                prop_assert_eq!(small.get(probe), btree.get(probe));
                prop_assert_eq!(small.contains_key(probe), btree.contains_key(probe));
            }
            let json = serde_json::to_string(&small).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&json, &serde_json::to_string(&btree).map_err(|e| TestCaseError::fail(e.to_string()))?);
            let back: SmallMap<u8> = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&back, &small);
            let mut removed = small.clone();
            for probe in &probes {
                prop_assert_eq!(removed.remove(probe), btree.remove(probe));
            }
            prop_assert!(removed.iter().eq(btree.iter()));
        }
    }

    #[test]
    fn duplicate_yaml_keys_read_as_a_btreemap_reads_them() {
        let text = "a: 1\nb: 2\na: 3\n";
        let small: Result<SmallMap<u8>, _> = serde_saphyr::from_str(text);
        let btree: Result<BTreeMap<String, u8>, _> = serde_saphyr::from_str(text);
        assert_eq!(small.is_ok(), btree.is_ok());
        assert_eq!(
            small.ok().map(|m| m.into_iter().collect::<Vec<_>>()),
            btree.ok().map(|m| m.into_iter().collect::<Vec<_>>())
        );
    }

    #[test]
    fn one_entry_costs_one_small_allocation() {
        let map = SmallMap::from([("topic".to_string(), 1u64)]);
        assert_eq!(map.entries.capacity(), 1);
        assert_eq!(std::mem::size_of::<SmallMap<u64>>(), 24);
    }

    #[test]
    fn schema_is_the_btreemaps() {
        let ours = schemars::schema_for!(SmallMap<u32>);
        let theirs = schemars::schema_for!(BTreeMap<String, u32>);
        assert_eq!(ours, theirs);
    }
}
