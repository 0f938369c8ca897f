//! MirrorMaker 2 client settings (KIP-781): `{cluster}.{producer,consumer,admin}.k` beats the
//! Connect-style `{producer,consumer,admin}.override.k`, and overrides are ignored — visibly — when
//! `connector.client.config.override.policy` is not `All`. The rendered `mm2.properties` carries
//! the resolved per-cluster keys, so no setting depends on how a MirrorMaker release reads them.

use std::collections::BTreeMap;

use crate::engine::outcome::{Reason, Warning};
use crate::engine::spec::Role;

const POLICY_KEY: &str = "connector.client.config.override.policy";
/// Connect's per-connector client overrides (KIP-458): producer, consumer and admin alike.
const OVERRIDE_ROLES: [&str; 3] = ["producer", "consumer", "admin"];

/// Expands `{role}.override.k` into `{cluster}.{role}.k` for every cluster that does not set it.
pub fn resolve_overrides(content: &mut BTreeMap<String, String>, warnings: &mut Vec<Warning>) {
    let clusters: Vec<String> = content
        .get("clusters")
        .map(|v| {
            v.split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default();
    // Standalone MirrorMaker has no policy setting: it falls back to All (KIP-781 rule 2).
    let policy = content
        .get(POLICY_KEY)
        .map(|p| p.trim().to_string())
        .unwrap_or_else(|| "All".into());
    let overrides: Vec<(String, &str, String)> = content
        .iter()
        .filter_map(|(key, value)| {
            OVERRIDE_ROLES.iter().find_map(|role| {
                key.strip_prefix(&format!("{role}.override."))
                    .map(|k| (k.to_string(), *role, value.clone()))
            })
        })
        .collect();
    for (key, role, value) in overrides {
        let override_key = format!("{role}.override.{key}");
        if !policy.eq_ignore_ascii_case("All") {
            warnings.push(warning(
                &override_key,
                format!("{override_key} is ignored: {POLICY_KEY} is {policy}, not All (KIP-781)"),
            ));
            continue;
        }
        for cluster in &clusters {
            let cluster_key = format!("{cluster}.{role}.{key}");
            match content.get(&cluster_key) {
                Some(existing) if existing != &value => warnings.push(warning(
                    &override_key,
                    format!("{cluster_key} beats {override_key} for cluster {cluster} (KIP-781)"),
                )),
                Some(_) => {}
                None => {
                    content.insert(cluster_key, value.clone());
                }
            }
        }
    }
}

fn warning(key: &str, message: String) -> Warning {
    Warning {
        key: key.to_string(),
        role: Some(Role::MirrorMaker),
        reason: Reason::OverrideIgnored,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cluster_specific_keys_beat_overrides_and_gaps_are_filled() {
        let mut content = map(&[
            ("clusters", "a, b"),
            ("producer.override.acks", "1"),
            ("b.producer.acks", "all"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut content, &mut warnings);
        assert_eq!(content["a.producer.acks"], "1");
        assert_eq!(content["b.producer.acks"], "all");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0]
                .message
                .contains("b.producer.acks beats producer.override.acks")
        );
    }

    #[test]
    fn admin_overrides_resolve_like_producer_and_consumer_overrides() {
        let mut content = map(&[
            ("clusters", "a, b"),
            ("admin.override.request.timeout.ms", "60000"),
            ("b.admin.request.timeout.ms", "30000"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut content, &mut warnings);
        assert_eq!(content["a.admin.request.timeout.ms"], "60000");
        assert_eq!(content["b.admin.request.timeout.ms"], "30000");
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0]
                .message
                .contains("b.admin.request.timeout.ms beats admin.override.request.timeout.ms"),
            "{}",
            warnings[0].message
        );

        let mut ignored = map(&[
            ("clusters", "a"),
            ("admin.override.request.timeout.ms", "60000"),
            ("connector.client.config.override.policy", "None"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut ignored, &mut warnings);
        assert!(!ignored.contains_key("a.admin.request.timeout.ms"));
        assert_eq!(warnings[0].key, "admin.override.request.timeout.ms");
        assert_eq!(warnings[0].reason, Reason::OverrideIgnored);
    }

    #[test]
    fn overrides_are_reported_as_ignored_unless_the_policy_is_all() {
        let mut content = map(&[
            ("clusters", "a"),
            ("consumer.override.max.poll.records", "10"),
            ("connector.client.config.override.policy", "None"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut content, &mut warnings);
        assert!(!content.contains_key("a.consumer.max.poll.records"));
        assert_eq!(warnings[0].reason, Reason::OverrideIgnored);
        assert!(warnings[0].message.contains("is ignored"));
    }
}
