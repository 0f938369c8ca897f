//! MirrorMaker 2 client settings (KIP-781): `{cluster}.{producer,consumer,admin}.k` beats the
//! Connect-style `{producer,consumer,admin}.override.k`, and overrides are ignored — visibly — when
//! `connector.client.config.override.policy` is not `All`. The rendered `mm2.properties` carries
//! the resolved per-cluster keys, so no setting depends on how a MirrorMaker release reads them.

use std::collections::{BTreeMap, BTreeSet};

use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::globals::GlobalDefaults;
use crate::engine::key::is_kafka_name;
use crate::engine::layers::{Contribution, Layer, Provenance};
use crate::engine::model::RoleView;
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::policy::PolicyMatcher;
use crate::engine::spec::Role;

/// The client key a MirrorMaker spelling sets for some cluster or client it builds:
/// `{cluster}.k`, `{cluster}.{role}.k`, `{role}.override.k`, `{source}->{target}.….k` all set the
/// client key `k`. `None` for a top-level key (a client key itself, or MirrorMaker's own).
///
/// MirrorMaker reads a cluster's clients from `{cluster}.`-prefixed keys first, then the
/// top-level client keys (`MirrorMakerConfig.clusterProps`), so any of these spellings beats a
/// top-level value for the cluster or client it names.
pub fn client_key(key: &str) -> Option<&'static str> {
    let catalogue = ConfigCatalogue::get();
    let client_def = |k: &str| {
        [Role::Producer, Role::Consumer, Role::Admin]
            .into_iter()
            .find_map(|role| catalogue.key(role, k))
    };
    if client_def(key).is_some() {
        return None;
    }
    // The longest dot-suffix that is a client key, named as the catalogue spells it (so a check
    // of a key that is Secret content can answer with it: `Key::inspect`).
    key.match_indices('.')
        .find_map(|(at, _)| client_def(&key[at + 1..]))
        .map(|def| def.name.as_str())
}

/// One client setting of one cluster as MirrorMaker builds it, and the spelling it came from.
pub struct ClusterClientValue<'v> {
    pub cluster: String,
    /// `producer`, `consumer` or `admin`.
    pub client: &'static str,
    pub key: String,
    /// The `mm2.properties` key the value comes from (`us-east.producer.acks`, `acks`, …).
    pub spelling: String,
    pub contribution: &'v Contribution,
}

/// Top-level keys MirrorMaker copies into every cluster's clients (`MirrorClientConfig`'s
/// client config: the connection and its security settings).
fn inherited_by_clusters(key: &str) -> bool {
    key == "bootstrap.servers"
        || key == "security.protocol"
        || key.starts_with("ssl.")
        || key.starts_with("sasl.")
}

/// The effective client settings of each cluster and client MirrorMaker builds, highest first:
/// `{cluster}.{client}.k`, then `{client}.override.k` (policy `All` only, KIP-781), then
/// `{cluster}.k` and then a top-level `k`, both only for connection/security keys (the ones
/// `MirrorMakerConfig.clusterProps` copies into clients). For `explain`.
pub fn cluster_clients(view: &RoleView) -> Vec<ClusterClientValue<'_>> {
    let value = |key: &str| view.effective_value(key);
    // Cluster names read from a Secret are not used: each would be shown in `explain`.
    let clusters: Vec<String> = value("clusters")
        .and_then(|c| c.value.as_plain())
        .map(|clusters| {
            clusters
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let overrides_apply = value(POLICY_KEY).is_none_or(|p| {
        p.value
            .inspect(|policy| policy.trim().eq_ignore_ascii_case("All"))
    });
    let mut out = Vec::new();
    for cluster in &clusters {
        for client in OVERRIDE_ROLES {
            // client key -> (rank, spelling, value); the highest rank wins.
            let mut keys: BTreeMap<&str, (u8, &str, &Contribution)> = BTreeMap::new();
            // A key that is Secret content (read from a Secret file, not a MirrorMaker spelling
            // of a Kafka key) is left out: its spelling would be shown.
            for key in view.keys.keys().filter_map(|k| k.public_text()) {
                let Some(winner) = value(key) else {
                    continue;
                };
                let Some((rank, client_key)) = spelling_rank(key, cluster, client, overrides_apply)
                else {
                    continue;
                };
                let slot = keys.entry(client_key).or_insert((rank, key, winner));
                if rank > slot.0 {
                    *slot = (rank, key, winner);
                }
            }
            for (key, (_, spelling, contribution)) in keys {
                out.push(ClusterClientValue {
                    cluster: cluster.clone(),
                    client,
                    key: key.to_string(),
                    spelling: spelling.to_string(),
                    contribution,
                });
            }
        }
    }
    out
}

/// Where `key` ranks for `client` of `cluster` (3 highest) and which client key it sets.
fn spelling_rank<'k>(
    key: &'k str,
    cluster: &str,
    client: &str,
    overrides_apply: bool,
) -> Option<(u8, &'k str)> {
    if let Some(rest) = key.strip_prefix(cluster).and_then(|r| r.strip_prefix('.')) {
        if let Some(k) = rest.strip_prefix(client).and_then(|r| r.strip_prefix('.')) {
            return Some((3, k));
        }
        // Another client's key of this cluster is not this client's.
        if OVERRIDE_ROLES
            .iter()
            .any(|r| rest.strip_prefix(r).is_some_and(|t| t.starts_with('.')))
        {
            return None;
        }
        // `MirrorMakerConfig.clusterProps` copies only client connection/security keys of
        // `{cluster}.k` into the cluster's clients.
        return inherited_by_clusters(rest).then_some((1, rest));
    }
    if let Some(k) = key
        .strip_prefix(client)
        .and_then(|r| r.strip_prefix(".override."))
    {
        return overrides_apply.then_some((2, k));
    }
    inherited_by_clusters(key).then_some((0, key))
}

/// `overridePolicy` and `enforced` for MirrorMaker 2, judged on the client configuration of each
/// cluster and client role MirrorMaker builds (issue 23): a Denylist on `security.*` refuses
/// `a.security.protocol` as it refuses `security.protocol`, and a key that would beat an enforced
/// value for one cluster is refused, naming the spelling used.
pub(crate) fn check_policy(
    view: &RoleView,
    applied: &[&GlobalDefaults],
    problems: &mut Vec<Problem>,
) {
    let user_sources = |p: &Provenance| -> Vec<String> {
        p.chain
            .iter()
            .filter(|c| c.layer.is_user_layer())
            .map(|c| c.source.to_string())
            .collect()
    };
    for global in applied
        .iter()
        .filter(|g| g.applies_to_role(Role::MirrorMaker))
    {
        let Some(policy) = &global.spec.override_policy else {
            continue;
        };
        let matcher = PolicyMatcher::new(policy);
        let mut refused = Vec::new();
        for (key, provenance) in &view.keys {
            let sources = user_sources(provenance);
            if sources.is_empty() {
                continue;
            }
            // Judged on the text; shown only through the key (`client_key` of a key that is
            // Secret content is `None`: no suffix of it is a Kafka key).
            let judged = key.inspect(client_key);
            if !key.inspect(|k| matcher.allows(judged.unwrap_or(k))) {
                let as_client = match judged {
                    None => String::new(),
                    Some(judged) => {
                        format!(", which sets {judged} for a cluster or client MirrorMaker builds")
                    }
                };
                let shown = key.shown();
                refused.push(format!("{shown}{as_client} ({})", sources.join(", ")));
            }
        }
        if !refused.is_empty() {
            problems.push(Problem::new(
                Reason::OverrideNotAllowed,
                "spec (mirror-maker)",
                format!(
                    "GlobalClientDefaults {} (overridePolicy {:?}) does not allow this config to set: {}",
                    global.name,
                    policy.mode(),
                    refused.join("; ")
                ),
            ));
        }
    }
    // Enforced top-level client keys: no per-cluster or per-client spelling may beat them.
    for (key, provenance) in &view.keys {
        let Some(judged) = key.inspect(client_key) else {
            continue;
        };
        let sources = user_sources(provenance);
        if sources.is_empty() {
            continue;
        }
        let Some(enforced) = view.keys.get(judged).and_then(|p| {
            p.chain
                .first()
                .filter(|winner| winner.layer == Layer::Enforced)
        }) else {
            continue;
        };
        problems.push(Problem::new(
            Reason::OverrideNotAllowed,
            "spec (mirror-maker)",
            format!(
                "{} ({}) would beat {judged} enforced by {} for a cluster or client MirrorMaker builds",
                key.shown(),
                sources.join(", "),
                enforced.source
            ),
        ));
    }
}

const POLICY_KEY: &str = "connector.client.config.override.policy";
/// Connect's per-connector client overrides (KIP-458): producer, consumer and admin alike.
const OVERRIDE_ROLES: [&str; 3] = ["producer", "consumer", "admin"];

/// Expands `{role}.override.k` into `{cluster}.{role}.k` for every cluster that does not set it.
/// `secret_keys` are the keys whose values are Secret data (the content is bound for a Secret):
/// warnings do not quote those (`clusters`, the policy).
pub fn resolve_overrides(
    content: &mut BTreeMap<String, String>,
    secret_keys: &BTreeSet<&str>,
    warnings: &mut Vec<Warning>,
) {
    let clusters_secret = secret_keys.contains("clusters");
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
        // A key read from a Secret file that Kafka does not define is Secret content
        // (`engine::key`): warnings name its role only.
        let hidden = secret_keys.contains(override_key.as_str()) && !is_kafka_name(&override_key);
        let shown = if hidden {
            format!("[a {role}.override key from a Secret]")
        } else {
            override_key.clone()
        };
        if !policy.eq_ignore_ascii_case("All") {
            let policy = if secret_keys.contains(POLICY_KEY) {
                "a value from a Secret"
            } else {
                &policy
            };
            warnings.push(warning(
                &shown,
                format!("{shown} is ignored: {POLICY_KEY} is {policy}, not All (KIP-781)"),
            ));
            continue;
        }
        for cluster in &clusters {
            let cluster_key = format!("{cluster}.{role}.{key}");
            match content.get(&cluster_key) {
                Some(existing) if existing != &value => warnings.push(warning(
                    &shown,
                    if hidden {
                        format!("a per-cluster key beats {shown} for a cluster (KIP-781)")
                    } else if clusters_secret {
                        format!(
                            "a per-cluster {role}.{key} beats {override_key} for a cluster named in a Secret (KIP-781)"
                        )
                    } else {
                        format!(
                            "{cluster_key} beats {override_key} for cluster {cluster} (KIP-781)"
                        )
                    },
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
        resolve_overrides(&mut content, &BTreeSet::new(), &mut warnings);
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
        resolve_overrides(&mut content, &BTreeSet::new(), &mut warnings);
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
        resolve_overrides(&mut ignored, &BTreeSet::new(), &mut warnings);
        assert!(!ignored.contains_key("a.admin.request.timeout.ms"));
        assert_eq!(warnings[0].key, "admin.override.request.timeout.ms");
        assert_eq!(warnings[0].reason, Reason::OverrideIgnored);
    }

    #[test]
    fn warnings_do_not_quote_secret_cluster_names_or_policy() {
        let secret = BTreeSet::from(["clusters", POLICY_KEY]);
        let mut content = map(&[
            ("clusters", "hunter2"),
            ("admin.override.request.timeout.ms", "60000"),
            ("hunter2.admin.request.timeout.ms", "30000"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut content, &secret, &mut warnings);
        let mut ignored = map(&[
            ("clusters", "a"),
            ("admin.override.request.timeout.ms", "60000"),
            (POLICY_KEY, "hunter3"),
        ]);
        resolve_overrides(&mut ignored, &secret, &mut warnings);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        for warning in &warnings {
            assert!(!warning.message.contains("hunter"), "{}", warning.message);
        }
    }

    #[test]
    fn overrides_are_reported_as_ignored_unless_the_policy_is_all() {
        let mut content = map(&[
            ("clusters", "a"),
            ("consumer.override.max.poll.records", "10"),
            ("connector.client.config.override.policy", "None"),
        ]);
        let mut warnings = Vec::new();
        resolve_overrides(&mut content, &BTreeSet::new(), &mut warnings);
        assert!(!content.contains_key("a.consumer.max.poll.records"));
        assert_eq!(warnings[0].reason, Reason::OverrideIgnored);
        assert!(warnings[0].message.contains("is ignored"));
    }
}
