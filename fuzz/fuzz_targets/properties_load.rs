//! `engine::properties::load` on arbitrary bytes: never panics, and whatever it accepts survives
//! a round trip through `store`: `load(store(load(x))) == load(x)` (keys and values, in order).
#![no_main]

use kafka_config_operator::engine::properties;
use libfuzzer_sys::fuzz_target;

fn pairs(entries: &[properties::Entry]) -> Vec<(&str, &str)> {
    entries
        .iter()
        .map(|e| (e.key.as_str(), e.value.as_str()))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    // The decoded-text entry point must not panic either (YAML `data:` values take this path).
    let _ = properties::load_str(&String::from_utf8_lossy(data));

    let Ok(first) = properties::load(data) else {
        return;
    };
    for entry in &first {
        assert!(entry.line >= 1, "line numbers are 1-based: {entry:?}");
    }
    let stored = properties::store(pairs(&first));
    assert!(stored.is_ascii(), "store writes pure ASCII: {stored:?}");
    let second = properties::load(stored.as_bytes())
        .unwrap_or_else(|e| panic!("store produced a file load rejects: {e}\n{stored:?}"));
    assert_eq!(pairs(&first), pairs(&second), "round trip changed entries\n{stored:?}");
    // One entry per line: a value can never inject another key.
    assert_eq!(stored.lines().count(), first.len(), "store wrote extra lines\n{stored:?}");
    // And the map view agrees.
    let map = properties::load_map(stored.as_bytes()).expect("loads");
    let expected: std::collections::BTreeMap<String, String> = first
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect();
    assert_eq!(map, expected);
});
