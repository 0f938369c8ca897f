//! The reference grammar: resolution, literals, provider references, Secret data, limits.

use super::*;
use crate::engine::taint::{SecretOrigin, SecretSource, SecretText};

fn literal(v: &str) -> Value {
    Value::from(v)
}

proptest::proptest! {
    /// The search for `$` first finds what the search for `${` finds.
    #[test]
    fn a_reference_starts_where_the_two_byte_search_finds_it(text in "[a${}\u{e9}]{0,12}") {
        proptest::prop_assert_eq!(find_reference_start(&text), text.find("${"));
    }
}

/// The text of a result, whatever its kind (tests only).
fn text_of(value: Value) -> String {
    match value {
        Value::Plain(text) => text.into_owned(),
        Value::Secret(secret) => secret.expose_for_secret_output().to_string(),
    }
}

fn bindings() -> Bindings {
    let mut b = Bindings::default();
    b.system_properties
        .insert("app.tier".into(), literal("gold"));
    b.env.insert("REGION".into(), literal("eu-west-1"));
    b.env.insert("EVIL".into(), literal("${env.REGION}"));
    b.env.insert(
        "PW".into(),
        Value::Secret(SecretText::from_key(
            "s3cret".into(),
            SecretSource::new("team-a", "kafka-sasl", "password"),
        )),
    );
    b
}

fn strict(text: &str) -> Result<String, ReferenceError> {
    resolve(text, &bindings(), &BTreeSet::new(), Mode::Strict).map(text_of)
}

fn lenient(text: &str) -> Result<String, ReferenceError> {
    resolve(text, &bindings(), &BTreeSet::new(), Mode::Lenient).map(text_of)
}

#[test]
fn env_and_system_properties_resolve() {
    assert_eq!(
        strict("${env.REGION}/${app.tier}").as_deref(),
        Ok("eu-west-1/gold")
    );
}

#[test]
fn first_name_that_resolves_wins_then_default() {
    assert_eq!(
        strict("${missing,env.REGION:x}").as_deref(),
        Ok("eu-west-1")
    );
    assert_eq!(
        strict("${missing,env.NOPE:fallback:with:colons}").as_deref(),
        Ok("fallback:with:colons")
    );
    assert_eq!(strict("${missing:}").as_deref(), Ok(""));
}

#[test]
fn strict_fails_lenient_is_empty() {
    assert!(matches!(
        strict("a${env.NOPE}b"),
        Err(ReferenceError::Unresolved { .. })
    ));
    assert_eq!(lenient("a${env.NOPE}b").as_deref(), Ok("ab"));
}

#[test]
fn substituted_text_is_not_scanned_again() {
    assert_eq!(strict("${env.EVIL}").as_deref(), Ok("${env.REGION}"));
}

#[test]
fn double_dollar_is_a_literal() {
    assert_eq!(
        strict("$${env.REGION} $x").as_deref(),
        Ok("${env.REGION} $x")
    );
}

#[test]
fn declared_provider_references_stay_verbatim() {
    let providers = provider_names("dir, vault");
    let r = resolve(
        "${dir:/mnt/s:pw} ${vault:a:b}",
        &bindings(),
        &providers,
        Mode::Strict,
    );
    assert_eq!(
        r.map(text_of).as_deref(),
        Ok("${dir:/mnt/s:pw} ${vault:a:b}")
    );
    // Not declared: it is an ordinary reference whose default is "/mnt/s:pw".
    assert_eq!(strict("${dir:/mnt/s:pw}").as_deref(), Ok("/mnt/s:pw"));
}

#[test]
fn secret_parts_are_located() {
    let r = resolve(
        "user=u pw=${env.PW};",
        &bindings(),
        &BTreeSet::new(),
        Mode::Strict,
    )
    .expect("resolves");
    let secret = r.secret().expect("a Secret part taints the value");
    assert_eq!(secret.expose_for_secret_output(), "user=u pw=s3cret;");
    let SecretOrigin::Parts(parts) = secret.origin() else {
        panic!("a substitution is a part: {secret:?}");
    };
    assert_eq!(parts.len(), 1);
    assert_eq!(
        &secret.expose_for_secret_output()[parts[0].range.clone()],
        "s3cret"
    );
    assert_eq!(
        r.shown(),
        "[from Secret team-a/kafka-sasl key password]",
        "messages show where it came from"
    );
}

#[test]
fn expansion_is_bounded_while_it_is_built() {
    let mut b = Bindings::default();
    b.env.insert("BIG".into(), literal(&"x".repeat(100_000)));
    let many = "${env.BIG}".repeat(10_000);
    let started = std::time::Instant::now();
    let r = resolve(&many, &b, &BTreeSet::new(), Mode::Strict);
    assert!(
        matches!(
            r,
            Err(ReferenceError::TooLarge {
                what: "one value",
                ..
            })
        ),
        "{r:?}"
    );
    // Many values of 900 KB each: the evaluation's budget ends it.
    let nine = "${env.BIG}".repeat(9);
    let mut refused = false;
    for _ in 0..40 {
        if let Err(ReferenceError::TooLarge { what, .. }) =
            resolve(&nine, &b, &BTreeSet::new(), Mode::Strict)
        {
            assert_eq!(what, "all values together");
            refused = true;
            break;
        }
    }
    assert!(refused);
    // Not a timing test: a sanity bound, far above what it takes (milliseconds).
    assert!(started.elapsed().as_secs() < 30);
}

/// The limits are exact: a value may reach `MAX_EXPANDED_VALUE` bytes and not one more,
/// whether a substitution lands on the limit or jumps over it; the evaluation's budget lets
/// exactly `EXPANSION_BUDGET` bytes be substituted.
#[test]
fn expansion_limits_are_exact() {
    let mut b = Bindings::default();
    let half = MAX_EXPANDED_VALUE / 2;
    b.env.insert("HALF".into(), literal(&"x".repeat(half)));
    b.env.insert(
        "TWO_FIFTHS".into(),
        literal(&"y".repeat(MAX_EXPANDED_VALUE * 2 / 5)),
    );
    let none = BTreeSet::new();
    let one_value = |r: Result<Value, ReferenceError>| {
        matches!(
            r,
            Err(ReferenceError::TooLarge {
                what: "one value",
                ..
            })
        )
    };
    let at_limit = resolve("${env.HALF}${env.HALF}", &b, &none, Mode::Strict);
    assert_eq!(at_limit.map(|v| v.len()), Ok(MAX_EXPANDED_VALUE));
    // The literal text before a reference counts too.
    assert!(one_value(resolve(
        "a${env.HALF}${env.HALF}",
        &b,
        &none,
        Mode::Strict
    )));
    // 0.4 MB, 0.8 MB, then 1.2 MB: over the limit without landing on it.
    let over = "${env.TWO_FIFTHS}".repeat(3);
    assert!(one_value(resolve(&over, &b, &none, Mode::Strict)));

    let budget = Bindings {
        env: b.env.clone(),
        ..Bindings::default()
    };
    for round in 0..EXPANSION_BUDGET / MAX_EXPANDED_VALUE {
        let r = resolve("${env.HALF}${env.HALF}", &budget, &none, Mode::Strict);
        assert!(r.is_ok(), "round {round} is within the budget: {r:?}");
    }
    let spent = resolve("${env.HALF}", &budget, &none, Mode::Strict);
    assert!(
        matches!(
            spent,
            Err(ReferenceError::TooLarge {
                what: "all values together",
                limit: EXPANSION_BUDGET
            })
        ),
        "{spent:?}"
    );
}

/// The error quotes the unresolved reference's body and its names, each cut to a short line.
#[test]
fn an_unresolved_reference_is_quoted_and_cut() {
    assert_eq!(
        strict("a=${env.NOPE, app.none} ${env.REGION}"),
        Err(ReferenceError::Unresolved {
            text: "env.NOPE, app.none".into(),
            names: vec!["env.NOPE".into(), "app.none".into()],
        })
    );
    let long = format!("env.{}", "N".repeat(200));
    let Err(ReferenceError::Unresolved { text, names }) = strict(&format!("${{{long}}}")) else {
        panic!("unresolved");
    };
    let cut = format!("{}…(204 bytes)", &long[..80]);
    assert_eq!((text, names), (cut.clone(), vec![cut]));
}

#[test]
fn substitutes_is_true_only_for_what_resolving_would_replace_or_refuse() {
    let providers = provider_names("file");
    for (text, substitutes_something) in [
        ("plain", false),
        ("$${env.X} is a literal", false),
        ("${file:/etc/kafka/pw:password}", false),
        ("${env.X}", true),
        ("${other:/etc/kafka/pw:password}", true),
        ("${env.X:default}", true),
        // Lenient: left as it is.
        ("${env.X", false),
        ("${env.X:${env.Y}}", true),
    ] {
        assert_eq!(
            substitutes(text, &providers),
            substitutes_something,
            "{text}"
        );
    }
}

#[test]
fn a_reference_inside_secret_data_is_resolved_and_never_quoted() {
    let from = SecretSource::new("team-a", "creds", "client.properties");
    let resolve_in_file = |text: &str| {
        let file = Value::Secret(SecretText::from_file(text.to_string(), from.clone(), 5));
        resolve_value(file, &bindings(), &BTreeSet::new(), Mode::Strict)
    };
    let resolved = resolve_in_file("x-${env.REGION}").expect("resolves");
    let secret = resolved.secret().expect("still Secret data");
    assert_eq!(secret.expose_for_secret_output(), "x-eu-west-1");
    assert!(matches!(
        secret.origin(),
        SecretOrigin::File { line: 5, .. }
    ));
    let error = resolve_in_file("${hunter2body}").expect_err("unresolved");
    assert_eq!(error.reason(), Reason::UnresolvedReference);
    let message = error.to_string();
    assert!(!message.contains("hunter2body"), "{message}");
    assert!(message.contains("Secret team-a/creds key client.properties"));
}

#[test]
fn nested_reference_is_refused_in_both_modes() {
    for mode in [Mode::Strict, Mode::Lenient] {
        let r = resolve(
            "${env.REGION:${env.B}}",
            &bindings(),
            &BTreeSet::new(),
            mode,
        );
        assert_eq!(r, Err(ReferenceError::Nested { offset: 0 }), "{mode:?}");
        let r = resolve("x ${env.NOPE:$${y}}", &bindings(), &BTreeSet::new(), mode);
        assert_eq!(r, Err(ReferenceError::Nested { offset: 2 }), "{mode:?}");
    }
}

#[test]
fn unterminated_reference_is_an_error_only_when_strict() {
    assert!(matches!(
        strict("x${env.REGION"),
        Err(ReferenceError::Unterminated { offset: 1 })
    ));
    assert_eq!(lenient("x${env.REGION").as_deref(), Ok("x${env.REGION"));
}
