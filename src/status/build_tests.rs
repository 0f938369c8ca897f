//! kstatus's `Stalled` and `Reconciling` beside `Ready`, in each state a status can describe.

use super::*;

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
