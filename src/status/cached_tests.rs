//! The cache copy of a status against the status it was made from.

use super::*;

fn condition(type_: &str, status: &str, reason: &str) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: reason.into(),
        message: format!("{type_} is {status}: a message of some length"),
        observed_generation: Some(7),
        last_transition_time: "2026-12-03T10:00:00Z".into(),
    }
}

fn full_status() -> KafkaToolConfigStatus {
    KafkaToolConfigStatus {
        observed_generation: Some(7),
        conditions: vec![
            condition(READY, "True", "Rendered"),
            condition("SourcesResolved", "True", "AllFound"),
            condition("Valid", "True", "Valid"),
        ],
        config_hash: Some("sha256:ab".into()),
        output: Some(Box::new(OutputStatus {
            kind: "ConfigMap".into(),
            name: "orders-kafka".into(),
            keys: vec!["producer.properties".into(), "tool.args".into()],
            secret_mounts: Vec::new(),
        })),
        warnings: vec![StatusWarning {
            key: "lingr.ms".into(),
            role: None,
            reason: "UnknownKey".into(),
            message: "did you mean linger.ms?".into(),
        }],
        shadowed: vec![ShadowedKey {
            key: "acks".into(),
            role: Role::Producer,
            winner: "args".into(),
            over: vec!["properties".into()],
        }],
        history: vec![HistoryEntry {
            revision: 1,
            hash: "sha256:ab".into(),
            time: "2026-12-03T10:00:00Z".into(),
            changed_keys: vec!["acks".into()],
            cause: "created".into(),
            by: Some(Author {
                kind: "KafkaToolConfig".into(),
                name: "orders".into(),
                manager: "kubectl-client-side-apply".into(),
                operation: Some("Update".into()),
                time: Some("2026-12-03T09:59:58Z".into()),
            }),
        }],
        rollout: Vec::new(),
        inputs: Some(InputsStatus {
            operator: "0.1.0".into(),
            hash_key: Some("0123456789abcdef".into()),
            sources: vec![SourceVersion {
                kind: "ConfigMap".into(),
                name: "base".into(),
                resource_version: Some("42".into()),
            }],
            global_client_defaults: vec![GlobalVersion {
                name: "prod".into(),
                generation: Some(2),
            }],
            change_cause: Some("0123456789abcdef".into()),
        }),
        kept: None,
    }
}

#[test]
fn the_cached_projection_keeps_what_proves_a_config_unchanged() {
    let full = full_status();
    let cached = full.clone().cached();
    assert_eq!(cached.observed_generation, full.observed_generation);
    assert_eq!(cached.config_hash, full.config_hash);
    assert_eq!(cached.inputs, full.inputs);
    let rebuilt = cached.rebuilt().expect("a projection");
    let ready = rebuilt.condition(READY).expect("Ready is kept");
    assert_eq!(
        (
            ready.status.as_str(),
            ready.reason.as_str(),
            ready.observed_generation
        ),
        ("True", "Rendered", Some(7))
    );
    assert_eq!(cached.ready_status(), Some(("True", Some(7))));
    assert_eq!(full.ready_status(), Some(("True", Some(7))));
    assert!(cached.has_conditions());
    let output = cached.output.as_ref().expect("the output is kept");
    assert_eq!(
        (output.kind.as_str(), output.name.as_str()),
        ("ConfigMap", "orders-kafka")
    );
}

#[test]
fn the_cached_projection_drops_messages_history_and_explanations() {
    let cached = full_status().cached();
    assert!(cached.conditions.is_empty());
    assert!(cached.warnings.is_empty() && cached.shadowed.is_empty());
    assert!(cached.history.is_empty() && cached.rollout.is_empty());
    assert!(cached.output.as_ref().is_some_and(|o| o.keys.is_empty()));
    // projecting twice changes nothing
    assert_eq!(cached.clone().cached(), cached);
}

fn evaluation(linger: &str) -> Evaluation {
    evaluation_of(serde_json::json!({
        "tool": "kafka-console-producer",
        "args": {"topic": "orders", "bootstrap-server": "kafka:9092"},
        "properties": {"producer": {"linger.ms": linger, "lingr.ms": "1"}},
    }))
}

/// The status a reconcile writes: built on `previous`, with a history entry when the hash
/// changed.
fn next(
    previous: Option<&KafkaToolConfigStatus>,
    linger: &str,
    now: &str,
) -> KafkaToolConfigStatus {
    let ev = evaluation(linger);
    let hash = ev.rendered.as_ref().expect("rendered").hash.clone();
    let live = Live {
        hash: Some(hash.clone()),
        write_failure: None,
    };
    let mut status = build(&ev, Some(1), previous, &live, now);
    if previous.and_then(|p| p.config_hash.as_deref()) != Some(hash.as_str()) {
        record_history(
            &mut status,
            &hash,
            now,
            vec!["linger.ms".into()],
            "spec changed".into(),
            None,
        );
    }
    status
}

#[test]
fn the_next_status_built_from_the_projection_is_the_one_built_from_the_stored_status() {
    let mut stored = next(None, "5", "2026-12-03T10:00:00Z");
    for (i, linger) in ["6", "7", "6"].iter().enumerate() {
        let now = format!("2026-12-03T1{}:00:00Z", i + 1);
        let projection = stored.clone().cached();
        let rebuilt = projection.rebuilt().expect("a projection");
        let from_stored = next(Some(&stored), linger, &now);
        assert_eq!(next(Some(&rebuilt), linger, &now), from_stored);
        assert!(projection.differs_from_stored(&from_stored));
        stored = from_stored;
    }
    assert_eq!(stored.history.len(), 4);
    // Nothing changed: the digest says so, and no history entry is added.
    let projection = stored.clone().cached();
    let again = next(projection.rebuilt().as_ref(), "6", "2026-12-03T20:00:00Z");
    assert_eq!(again, stored);
    assert!(!projection.differs_from_stored(&again));
    // A status that is no projection is never taken for one.
    assert!(stored.rebuilt().is_none());
    assert!(stored.differs_from_stored(&again));
}

#[test]
fn the_word_table_is_bounded_and_a_status_whose_words_do_not_fit_is_cached_whole() {
    let full = full_status();
    // Room for the fixed words and one more.
    let mut words = Words::new(FIXED_WORDS.len() + 1);
    assert_eq!(words.word(READY), Some(WORD_READY));
    assert_eq!(words.word("Rendered"), Some(Word(6)));
    assert_eq!(words.word("AllFound"), None, "full");
    assert_eq!(
        words.word("Rendered"),
        Some(Word(6)),
        "a known word still is"
    );
    assert_eq!(words.texts.len(), FIXED_WORDS.len() + 1);
    // `full` needs AllFound, key and file names: it is kept whole, and compared as it is.
    let cached = full.clone().cached_in(&mut words);
    assert_eq!(cached, full);
    assert!(cached.rebuilt().is_none());
    assert_eq!(cached.ready_status(), Some(("True", Some(7))));
    assert_eq!(
        words.texts.len(),
        FIXED_WORDS.len() + 1,
        "the table did not grow"
    );
    // With room, the same status is projected.
    let mut words = Words::new(64);
    let projected = full.clone().cached_in(&mut words);
    assert!(projected.kept.is_some() && projected.conditions.is_empty());
    assert_eq!(projected.clone().cached_in(&mut words), projected);
}

#[test]
fn the_projection_keeps_history_and_times_exactly_even_when_unusual() {
    let mut full = full_status();
    full.conditions[1].last_transition_time = "2026-12-03T10:00:00.5+01:00".into();
    full.conditions[2].type_ = "Custom".into();
    full.conditions[2].status = "Maybe".into();
    full.history.push(HistoryEntry {
        revision: 2,
        hash: "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
        time: "2026-12-03T11:00:00Z".into(),
        changed_keys: vec!["acks".into(), "tool.args".into()],
        cause: "ConfigMap base changed".into(),
        by: Some(Author {
            kind: "ConfigMap".into(),
            name: "base".into(),
            manager: "argocd-controller".into(),
            operation: None,
            time: Some("an hour ago".into()),
        }),
    });
    // Keyed (the current form) after unkeyed (an operator before the keyed hash): both read back.
    full.history.push(HistoryEntry {
        revision: 3,
        hash: "hmac-sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
        time: "2026-12-03T12:00:00Z".into(),
        changed_keys: Vec::new(),
        cause: "the content-hash key changed".into(),
        by: None,
    });
    full.history.push(HistoryEntry {
        revision: 4,
        hash: "sha256:ABC".into(),
        time: "yesterday".into(),
        changed_keys: Vec::new(),
        cause: String::new(),
        by: None,
    });
    full.rollout.push(RolloutStatus {
        kind: "Deployment".into(),
        name: "orders-api".into(),
        hash: Some("sha256:ab".into()),
        via: Some("Annotation".into()),
        updated: Some(1),
        ready: Some(0),
        total: Some(2),
    });
    full.output
        .as_mut()
        .expect("an output")
        .secret_mounts
        .push(SecretMountStatus {
            secret: "sasl".into(),
            mount_path: "/etc/kafka-config/secrets/sasl".into(),
        });
    let rebuilt = full.clone().cached().rebuilt().expect("a projection");
    assert_eq!(rebuilt.history, full.history);
    let times = |s: &KafkaToolConfigStatus| {
        s.conditions
            .iter()
            .map(|c| {
                (
                    c.type_.clone(),
                    c.status.clone(),
                    c.last_transition_time.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(times(&rebuilt), times(&full));
    assert_eq!(rebuilt.output, full.output);
    assert_eq!(rebuilt.rollout, full.rollout);
    assert_eq!(
        rebuilt.condition(READY).map(|c| c.reason.as_str()),
        Some("Rendered")
    );
}

#[test]
fn a_keyed_and_an_unkeyed_hash_of_the_same_digest_never_compare_equal() {
    let hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    let keyed = ContentHash::new(&format!("hmac-sha256:{hex}"));
    let unkeyed = ContentHash::new(&format!("sha256:{hex}"));
    assert!(matches!(keyed, ContentHash::HmacSha256(_)));
    assert!(matches!(unkeyed, ContentHash::Sha256(_)));
    assert_ne!(keyed, unkeyed);
    assert!(keyed.is(&format!("hmac-sha256:{hex}")));
    assert!(!keyed.is(&format!("sha256:{hex}")));
    assert!(!unkeyed.is(&format!("hmac-sha256:{hex}")));
    assert_eq!(keyed.text(), format!("hmac-sha256:{hex}"));
    assert_eq!(unkeyed.text(), format!("sha256:{hex}"));
    // Anything else is kept as it was.
    assert_eq!(ContentHash::new("hmac-sha256:AB").text(), "hmac-sha256:AB");
}

proptest::proptest! {
    /// The compact forms of times and hashes are exact: any text reads back as it was, also
    /// near-forms (offsets, fractions, upper-case hex, a digit short) that must stay text.
    #[test]
    fn times_and_hashes_read_back_as_they_were(
        secs in -62_135_596_800i64..253_402_300_799,
        digest in proptest::array::uniform32(proptest::num::u8::ANY),
        text in "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?(Z|[+-][0-9]{2}:[0-9]{2})|(hmac-)?sha256:([0-9a-f]{63,65}|[0-9a-fA-F]{64})|\\PC{0,40}",
    ) {
        let time = chrono::DateTime::from_timestamp(secs, 0)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            .unwrap_or_default();
        proptest::prop_assert_eq!(Time::new(&time), Time::Seconds(secs));
        let keyed = hash_label(KEYED_PREFIX, &digest);
        let unkeyed = hash_label(UNKEYED_PREFIX, &digest);
        proptest::prop_assert_eq!(ContentHash::new(&keyed), ContentHash::HmacSha256(digest));
        proptest::prop_assert_eq!(ContentHash::new(&unkeyed), ContentHash::Sha256(digest));
        proptest::prop_assert!(!ContentHash::new(&keyed).is(&unkeyed));
        for text in [time.as_str(), keyed.as_str(), unkeyed.as_str(), text.as_str()] {
            proptest::prop_assert_eq!(Time::new(text).text(), text);
            proptest::prop_assert_eq!(ContentHash::new(text).text(), text);
            proptest::prop_assert!(ContentHash::new(text).is(text));
        }
    }
}
