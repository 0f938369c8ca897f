//! The API server's rules, checked offline with the same limits, so that the gate does not say
//! yes to what `kubectl apply` or the operator's write would be refused: object names (DNS-1123,
//! k8s.io/apimachinery `validation.IsDNS1123Subdomain`/`IsDNS1123Label`), label values
//! (`IsValidLabelValue`), object sizes, and the CRDs' own apply-time (CEL) rules of
//! `engine::spec`, one twin each.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::engine::render::Rendered;
use crate::engine::safe_text;
use crate::engine::spec::ToolConfigSpec;

/// A DNS-1123 subdomain (object names) is at most this long.
pub const MAX_SUBDOMAIN: usize = 253;
/// A DNS-1123 label (namespace names) and a label value are at most this long.
pub const MAX_LABEL: usize = 63;
/// `-<hash8>` of an immutable output's name.
const IMMUTABLE_SUFFIX: usize = 9;
/// etcd's default request limit (`--max-request-bytes`, 1.5 MiB): a larger object is not stored.
pub const MAX_OBJECT_BYTES: usize = 1_572_864;
/// A ConfigMap's `data` + `binaryData`, or a Secret's `data`, hold at most 1 MiB
/// (`core.MaxSecretSize`, and ValidateConfigMap's total size).
pub const MAX_DATA_BYTES: usize = 1_048_576;

fn shown(text: &str) -> String {
    format!("{:?}", safe_text::cut(text, safe_text::QUOTE_BYTES))
}

fn is_label_part(part: &str) -> bool {
    let edge = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = part.as_bytes();
    // No length of its own: a subdomain's parts are not limited to 63 (the regex has none).
    bytes.first().is_some_and(edge)
        && bytes.last().is_some_and(edge)
        && bytes.iter().all(|b| edge(b) || *b == b'-')
}

/// Why `name` is not a DNS-1123 subdomain, if it is not.
pub fn subdomain_problem(name: &str) -> Option<String> {
    if name.len() > MAX_SUBDOMAIN {
        return Some(format!(
            "must be no more than {MAX_SUBDOMAIN} characters (has {})",
            name.len()
        ));
    }
    (!name.split('.').all(is_label_part)).then(|| {
        format!(
            "{} is not a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting \
             and ending with a letter or digit",
            shown(name)
        )
    })
}

/// Why `name` is not a DNS-1123 label (a namespace name), if it is not.
pub fn label_problem(name: &str) -> Option<String> {
    if name.len() > MAX_LABEL {
        return Some(format!(
            "must be no more than {MAX_LABEL} characters (has {})",
            name.len()
        ));
    }
    (!is_label_part(name)).then(|| {
        format!(
            "{} is not a DNS-1123 label: lower-case letters, digits and '-', starting and ending \
             with a letter or digit",
            shown(name)
        )
    })
}

/// Why `value` cannot be a label value, if it cannot.
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.len() > MAX_LABEL {
        return Some(format!(
            "must be no more than {MAX_LABEL} characters (has {})",
            value.len()
        ));
    }
    let bytes = value.as_bytes();
    let edge = |b: u8| b.is_ascii_alphanumeric();
    let ok = bytes.is_empty()
        || (edge(bytes[0])
            && edge(bytes[bytes.len() - 1])
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')));
    (!ok).then(|| {
        format!(
            "{} is not a label value: letters, digits, '-', '_' and '.', starting and ending \
             with a letter or digit",
            shown(value)
        )
    })
}

/// What the API server refuses in a document's metadata and size, as `(field, why)`.
pub fn object_problems(kind: &str, doc: &Value, name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let name_problem = if kind == "Namespace" {
        label_problem(name)
    } else {
        subdomain_problem(name)
    };
    out.extend(name_problem.map(|why| ("metadata.name".to_string(), why)));
    let metadata = doc.get("metadata");
    if let Some(namespace) = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
    {
        out.extend(label_problem(namespace).map(|why| ("metadata.namespace".to_string(), why)));
    }
    if let Some(labels) = metadata
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
    {
        for (key, value) in labels {
            let problem = match value.as_str() {
                Some(value) => label_value_problem(value),
                None => Some("must be a string".to_string()),
            };
            if let Some(why) = problem {
                out.push((format!("metadata.labels.{key}"), why));
            }
        }
    }
    let data = data_bytes(kind, doc);
    if data > MAX_DATA_BYTES {
        out.push((
            "data".to_string(),
            format!("holds {data} bytes; a {kind} holds at most {MAX_DATA_BYTES}"),
        ));
    }
    let size = serde_json::to_vec(doc).map_or(0, |bytes| bytes.len());
    if size > MAX_OBJECT_BYTES {
        out.push((
            String::new(),
            format!("the object is {size} bytes; the API server stores at most {MAX_OBJECT_BYTES}"),
        ));
    }
    out
}

/// The bytes a ConfigMap's or Secret's data holds once stored (base64 fields decoded).
fn data_bytes(kind: &str, doc: &Value) -> usize {
    let sum = |field: &str, base64: bool| -> usize {
        doc.get(field)
            .and_then(Value::as_object)
            .map(|map| {
                map.values()
                    .filter_map(Value::as_str)
                    .map(|v| {
                        if base64 {
                            let v = v.trim();
                            (v.len() / 4 * 3)
                                .saturating_sub(v.len() - v.trim_end_matches('=').len())
                        } else {
                            v.len()
                        }
                    })
                    .sum()
            })
            .unwrap_or(0)
    };
    match kind {
        "ConfigMap" => sum("data", false) + sum("binaryData", true),
        "Secret" => sum("data", true) + sum("stringData", false),
        _ => 0,
    }
}

/// The CRD's apply-time (CEL and list-map) rules of a KafkaToolConfig spec, as `(field, why)`,
/// with the messages of the rules in `engine::spec`: the API server would refuse the object.
pub fn spec_rule_problems(spec: &ToolConfigSpec) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(version) = &spec.kafka_version {
        let numeric = version.len() <= 32
            && version.split('.').count() <= 3
            && version
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !numeric {
            out.push((
                "spec.kafkaVersion".into(),
                "must be a Kafka release number: major.minor or major.minor.patch (4.1, 3.9.1)"
                    .into(),
            ));
        }
    }
    if let Some(output) = &spec.output {
        let immutable = output.immutable == Some(true);
        if output.keep.is_some() && !immutable {
            out.push((
                "spec.output".into(),
                "keep counts previous immutable outputs: set immutable: true, or remove keep"
                    .into(),
            ));
        }
        if let Some(name) = &output.name {
            if let Some(why) = subdomain_problem(name) {
                out.push(("spec.output.name".into(), why));
            } else if immutable && name.len() > MAX_SUBDOMAIN - IMMUTABLE_SUFFIX {
                out.push((
                    "spec.output".into(),
                    "with immutable: true the output is named <name>-<hash8>, which must fit in \
                     253 characters: name may have at most 244"
                        .into(),
                ));
            }
        }
        if let Some(path) = &output.mount_path {
            let why = if path.len() > 4096 {
                Some("must be no more than 4096 characters".to_string())
            } else {
                safe_text::mount_path_problem(path)
            };
            out.extend(why.map(|why| ("spec.output.mountPath".to_string(), why)));
        }
    }
    let mut names = BTreeSet::new();
    for (index, env) in spec.env.iter().enumerate() {
        if !names.insert(env.name.as_str()) {
            out.push((
                format!("spec.env[{index}]"),
                format!("duplicate entries for key [name={}]", shown(&env.name)),
            ));
        }
    }
    let mut targets = BTreeSet::new();
    let rollout = spec.rollout.as_ref().map(|r| r.targets.as_slice());
    for (index, target) in rollout.unwrap_or_default().iter().enumerate() {
        if !targets.insert((target.kind, target.name.as_str())) {
            out.push((
                format!("spec.rollout.targets[{index}]"),
                format!(
                    "duplicate entries for key [kind={:?},name={}]",
                    target.kind,
                    shown(&target.name)
                ),
            ));
        }
    }
    out
}

/// What the API server would answer to the operator's write of this output, when it would refuse
/// it: `(reason, message)` as the operator reports a refused write in `Ready`.
pub fn write_refusal(
    config_name: &str,
    namespace: &str,
    output_name: &str,
    rendered: &Rendered,
) -> Option<(String, String)> {
    let kind = rendered.kind_str();
    let field_problem = subdomain_problem(output_name)
        .map(|why| ("metadata.name", why))
        .or_else(|| {
            label_value_problem(config_name)
                .map(|why| ("metadata.labels[kafkaconfig.dev/config]", why))
        })?;
    let (field, why) = field_problem;
    Some((
        "OutputWriteFailed".to_string(),
        format!(
            "cannot write {kind} {namespace}/{}: 422 Invalid: {field}: {why} (checked offline \
             with the API server's limits)",
            safe_text::cut(output_name, safe_text::QUOTE_BYTES)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_api_servers_dns_rules() {
        for ok in ["a", "orders-kafka", "a.b-c.d", &"a".repeat(253)] {
            assert_eq!(subdomain_problem(ok), None, "{ok}");
        }
        for bad in ["", "Bad_Name", "-a", "a-", "a..b", ".a", &"a".repeat(254)] {
            assert!(subdomain_problem(bad).is_some(), "{bad:?} accepted");
        }
        assert_eq!(label_problem(&"a".repeat(63)), None);
        assert!(label_problem(&"a".repeat(64)).is_some());
        assert!(label_problem("a.b").is_some());
    }

    #[test]
    fn label_values_are_at_most_63_characters_of_the_allowed_set() {
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("Orders_1.x"), None);
        assert!(label_value_problem(&"a".repeat(64)).is_some());
        assert!(label_value_problem("a b").is_some());
        assert!(label_value_problem("_a").is_some());
    }
}
