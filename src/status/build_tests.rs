//! kstatus's `Stalled` and `Reconciling` beside `Ready`, in each state a status can describe.

use super::*;
use crate::engine::outcome::{Shadowed, Warning};

fn evaluation(args: serde_json::Value) -> Evaluation {
    evaluation_of(serde_json::json!({"tool": "kafka-console-producer", "args": args}))
}

fn valid() -> Evaluation {
    evaluation(serde_json::json!({"topic": "orders", "bootstrap-server": "kafka:9092"}))
}

/// No bootstrap server: `MissingRequired`, which only an edit of the spec can fix.
fn invalid() -> Evaluation {
    evaluation(serde_json::json!({"topic": "orders"}))
}

fn status_of(type_: &str, status: &KafkaToolConfigStatus) -> Option<(String, String)> {
    status
        .condition(type_)
        .map(|c| (c.status.clone(), c.reason.clone()))
}

fn built(
    ev: &Evaluation,
    live: &Live,
    previous: Option<&KafkaToolConfigStatus>,
) -> KafkaToolConfigStatus {
    build(ev, Some(3), previous, live, "2026-12-06T10:00:00Z")
}

#[test]
fn a_rendered_config_has_neither_stalled_nor_reconciling() {
    let ev = valid();
    let live = Live {
        hash: ev.rendered.as_ref().map(|r| r.hash.clone()),
        write_failure: None,
    };
    let status = built(&ev, &live, None);
    assert_eq!(
        status_of(READY, &status),
        Some(("True".into(), "Rendered".into()))
    );
    assert_eq!(status_of(STALLED, &status), None);
    assert_eq!(status_of(RECONCILING, &status), None);
}

#[test]
fn an_invalid_spec_is_stalled_with_readys_reason_and_message() {
    let status = built(&invalid(), &Live::default(), None);
    let ready = status.condition(READY).expect("Ready");
    let stalled = status.condition(STALLED).expect("Stalled");
    assert_eq!(ready.status, "False");
    assert_eq!(stalled.status, "True");
    assert_eq!(stalled.reason, "MissingRequired");
    assert_eq!(
        (&stalled.reason, &stalled.message),
        (&ready.reason, &ready.message)
    );
    assert_eq!(stalled.observed_generation, Some(3));
    assert_eq!(status_of(RECONCILING, &status), None);
    // Ready first, kstatus's next: what `kubectl get -o yaml` shows on top.
    let order: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(order, [READY, STALLED, SOURCES_RESOLVED, VALID]);
}

#[test]
fn a_write_that_is_retried_is_reconciling_and_one_refused_for_good_is_stalled() {
    let ev = valid();
    for (retried, set, absent) in [(true, RECONCILING, STALLED), (false, STALLED, RECONCILING)] {
        let live = Live {
            hash: Some("sha256:previous".into()),
            write_failure: Some(WriteFailure {
                reason: "OutputWriteFailed".into(),
                message: "cannot write ConfigMap team-a/orders-kafka: 422 Invalid: denied".into(),
                retried,
            }),
        };
        let status = built(&ev, &live, None);
        let ready = status.condition(READY).expect("Ready");
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            ("False", "OutputWriteFailed")
        );
        assert!(
            ready.message.contains("422 Invalid: denied"),
            "{}",
            ready.message
        );
        let condition = status.condition(set).expect("the kstatus condition");
        assert_eq!(condition.status, "True");
        assert!(
            condition.message.contains("422 Invalid: denied"),
            "{}",
            condition.message
        );
        if retried {
            assert_eq!(condition.reason, PROGRESSING_WITH_RETRY);
        }
        assert_eq!(status_of(absent, &status), None, "retried: {retried}");
    }
}

#[test]
fn a_fixed_spec_drops_stalled_and_an_unchanged_one_keeps_its_transition_time() {
    let stalled = built(&invalid(), &Live::default(), None);
    let again = build(
        &invalid(),
        Some(3),
        Some(&stalled),
        &Live::default(),
        "2026-12-06T11:00:00Z",
    );
    assert_eq!(
        again
            .condition(STALLED)
            .map(|c| c.last_transition_time.as_str()),
        Some("2026-12-06T10:00:00Z")
    );
    let ev = valid();
    let live = Live {
        hash: ev.rendered.as_ref().map(|r| r.hash.clone()),
        write_failure: None,
    };
    let fixed = build(&ev, Some(4), Some(&again), &live, "2026-12-06T12:00:00Z");
    assert_eq!(status_of(STALLED, &fixed), None);
    assert_eq!(
        status_of(READY, &fixed),
        Some(("True".into(), "Rendered".into()))
    );
    // Ready changed (False → True): its transition time is now, not the earlier Ready's.
    assert_eq!(
        fixed
            .condition(READY)
            .map(|c| c.last_transition_time.as_str()),
        Some("2026-12-06T12:00:00Z")
    );
}

#[test]
fn an_invalid_global_client_defaults_is_stalled() {
    let problem = invalid().problems.first().cloned().expect("a problem");
    let conditions = global_conditions(&[problem], &[], Some(2), "2026-12-06T10:00:00Z");
    let of = |type_: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == type_)
            .map(|c| c.status.as_str())
    };
    assert_eq!((of(VALID), of(STALLED)), (Some("False"), Some("True")));
    let fine = global_conditions(&[], &[], Some(2), "2026-12-06T10:00:00Z");
    assert!(fine.iter().all(|c| c.type_ != STALLED), "{fine:?}");
}

/// A condition lists every problem, `; `-separated, until the next would take it over
/// `MAX_CONDITION_MESSAGE` bytes; the rest are counted. Ready's reason is the first problem's.
#[test]
fn problems_are_listed_until_the_message_is_full_then_counted() {
    let problem = |reason, len: usize| {
        let prefix = Problem::new(reason, "", "").to_string().len();
        Problem::new(reason, "", "x".repeat(len - prefix))
    };
    // Each under a problem's own cut (`MAX_MESSAGE_BYTES`), together with their `; ` exactly
    // the condition's bound.
    let first = problem(Reason::MissingRequired, 4100);
    let fills = problem(Reason::InvalidValue, MAX_CONDITION_MESSAGE - 4100 - 2);
    assert_eq!(format!("{first}; {fills}").len(), MAX_CONDITION_MESSAGE);
    assert_eq!(
        summarize(std::slice::from_ref(&first)),
        (Reason::MissingRequired, first.to_string())
    );
    let full = [first.clone(), fills.clone()];
    assert_eq!(
        summarize(&full),
        (Reason::MissingRequired, format!("{first}; {fills}"))
    );
    // One byte more fits only if the separator is not counted: it is.
    let one_over = [
        first.clone(),
        problem(Reason::InvalidValue, fills.to_string().len() + 1),
    ];
    assert_eq!(
        summarize(&one_over),
        (
            Reason::MissingRequired,
            format!("{first}; and 1 more problem (`validate` lists them all)")
        )
    );
    let over = [
        first.clone(),
        fills.clone(),
        problem(Reason::InvalidValue, 30),
        fills,
    ];
    assert_eq!(
        summarize(&over),
        (
            Reason::MissingRequired,
            format!(
                "{first}; {}; and 2 more problems (`validate` lists them all)",
                over[1]
            )
        )
    );
}

/// What `build` does not decide (the rollout's targets, the inputs read) comes from the
/// previous status; the reconcile's later steps replace it.
#[test]
fn the_previous_rollout_and_inputs_are_carried() {
    let mut previous = built(&valid(), &Live::default(), None);
    previous.rollout = vec![RolloutStatus {
        kind: "Deployment".into(),
        name: "orders-app".into(),
        hash: Some("sha256:1".into()),
        via: None,
        updated: Some(1),
        ready: Some(1),
        total: Some(1),
    }];
    previous.inputs = Some(InputsStatus {
        operator: "0.1.0".into(),
        ..InputsStatus::default()
    });
    let next = built(&valid(), &Live::default(), Some(&previous));
    assert_eq!(
        (&next.rollout, &next.inputs),
        (&previous.rollout, &previous.inputs)
    );
}

/// Exactly as many warnings, or shadowing layers, as the status lists: no "more" entry; one more:
/// the entry that counts what is left out.
#[test]
fn the_status_says_more_only_past_its_limits() {
    let warning = |n: usize| Warning {
        key: format!("unknown.{n}"),
        role: None,
        reason: Reason::UnknownKey,
        message: "not a known key".into(),
    };
    let shadowed = |over: usize| Shadowed {
        key: "acks".into(),
        role: Role::Producer,
        winner: "args",
        over: (0..over).map(|n| format!("layer {n}").into()).collect(),
    };
    for extra in [0, 1] {
        let mut ev = valid();
        ev.warnings = (0..MAX_STATUS_WARNINGS + extra).map(warning).collect();
        ev.shadowed = vec![shadowed(MAX_SHADOWED_OVER + extra)];
        let status = built(&ev, &Live::default(), None);
        let more: Vec<&str> = status
            .warnings
            .iter()
            .filter(|w| w.reason == "MoreWarnings")
            .map(|w| w.message.as_str())
            .collect();
        let over = &status.shadowed[0].over;
        if extra == 0 {
            assert!(more.is_empty(), "{more:?}");
            assert_eq!(over.len(), MAX_SHADOWED_OVER, "{over:?}");
        } else {
            assert_eq!(
                more,
                [
                    "1 more warnings are not listed; run `kafka-config-operator validate` or `explain` to see all"
                ]
            );
            assert_eq!(over.last().map(String::as_str), Some("(and 1 more)"));
            assert_eq!(over.len(), MAX_SHADOWED_OVER + 1);
        }
    }
}

/// A history entry names at most `MAX_CHANGED_KEYS` keys and counts the rest; a hash that is
/// already the last entry's adds nothing.
#[test]
fn a_history_entry_counts_the_changed_keys_it_does_not_name() {
    let mut status = KafkaToolConfigStatus::default();
    let keys = |n: usize| (0..n).map(|k| format!("key.{k}")).collect::<Vec<_>>();
    let record = |status: &mut KafkaToolConfigStatus, hash: &str, n: usize| {
        record_history(
            status,
            hash,
            "2026-12-06T10:00:00Z",
            keys(n),
            String::new(),
            None,
        );
    };
    record(&mut status, "sha256:a", MAX_CHANGED_KEYS);
    record(&mut status, "sha256:b", MAX_CHANGED_KEYS + 2);
    record(&mut status, "sha256:b", 1);
    let entries: Vec<(i64, usize, Option<&str>)> = status
        .history
        .iter()
        .map(|h| {
            let last = h.changed_keys.last().map(String::as_str);
            (h.revision, h.changed_keys.len(), last)
        })
        .collect();
    assert_eq!(
        entries,
        [
            (
                1,
                MAX_CHANGED_KEYS,
                Some(keys(MAX_CHANGED_KEYS)[MAX_CHANGED_KEYS - 1].as_str())
            ),
            (2, MAX_CHANGED_KEYS + 1, Some("(and 2 more)"))
        ]
    );
}
