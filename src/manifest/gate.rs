//! The offline gate's strictness: what `kubectl apply` would refuse is an error here too.
//!
//! Unknown fields are found by walking the document against the JSON schema of the spec types
//! (the same types the CRD schema is generated from), and type errors carry the nested field path
//! (`serde_path_to_error`). Only the offline reader does this: the operator's own deserialization
//! stays tolerant of unknown fields, because the API server prunes them before the operator sees
//! an object (docs/decisions.md, "The gate is strict, the operator tolerant").

use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::locate::{Step, path_text};
use crate::engine::safe_text;
use crate::engine::spec::{GlobalClientDefaultsSpec, ToolConfigSpec};
use crate::engine::suggest;

/// A field the schema does not know, or a value of the wrong type.
#[derive(Debug, Clone)]
pub struct Finding {
    pub steps: Vec<Step>,
    pub message: String,
}

/// The fields of `metadata` a manifest may carry (ObjectMeta's, as `kubectl get -o yaml` prints
/// them).
const METADATA_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "selfLink",
];

/// The top-level fields of each kind the reader takes as input.
fn top_fields(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "KafkaToolConfig" | "GlobalClientDefaults" => {
            &["apiVersion", "kind", "metadata", "spec", "status"]
        }
        "ConfigMap" => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "binaryData",
            "immutable",
        ],
        "Secret" => &[
            "apiVersion",
            "kind",
            "metadata",
            "data",
            "stringData",
            "immutable",
            "type",
        ],
        "Namespace" => &["apiVersion", "kind", "metadata", "spec", "status"],
        _ => return None,
    })
}

/// The unknown fields of a document of `kind` (empty for kinds the reader does not take).
pub fn unknown_fields(kind: &str, doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(top) = top_fields(kind) else {
        return out;
    };
    let Some(object) = doc.as_object() else {
        return out;
    };
    for key in object.keys() {
        if !top.contains(&key.as_str()) {
            out.push(unknown(
                vec![Step::Key(key.clone())],
                key,
                top.iter().copied(),
            ));
        }
    }
    if let Some(metadata) = object.get("metadata").and_then(Value::as_object) {
        for key in metadata.keys() {
            if !METADATA_FIELDS.contains(&key.as_str()) {
                let steps = vec![Step::Key("metadata".into()), Step::Key(key.clone())];
                out.push(unknown(steps, key, METADATA_FIELDS.iter().copied()));
            }
        }
    }
    let spec_schema = match kind {
        "KafkaToolConfig" => Some(schema_of::<ToolConfigSpec>(&TOOL_CONFIG)),
        "GlobalClientDefaults" => Some(schema_of::<GlobalClientDefaultsSpec>(&GLOBAL_DEFAULTS)),
        _ => None,
    };
    if let (Some(schema), Some(spec)) = (spec_schema, object.get("spec")) {
        let mut at = vec![Step::Key("spec".into())];
        walk(spec, schema, &mut at, &mut out);
    }
    out
}

/// The spec of a document as `T`; a type error names the nested field.
pub fn typed_spec<T: DeserializeOwned>(spec: Value) -> Result<T, Finding> {
    serde_path_to_error::deserialize(spec).map_err(|error| {
        let mut steps = vec![Step::Key("spec".into())];
        for segment in error.path().iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => steps.push(Step::Index(*index)),
                serde_path_to_error::Segment::Map { key } => steps.push(Step::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        let inner = error
            .into_inner()
            .to_string()
            .replace("a map produced by LiteMap", "a mapping");
        // An untagged enum's own words say nothing to a person.
        let message = if inner.contains("untagged enum Scalar") {
            "must be a string, number or boolean, not a list or a mapping".to_string()
        } else {
            safe_text::cut(&inner, safe_text::QUOTE_BYTES).into_owned()
        };
        Finding { steps, message }
    })
}

impl Finding {
    /// `spec.outptu: unknown field; did you mean output?`
    pub fn text(&self) -> String {
        let path = path_text(&self.steps);
        let path = safe_text::cut(&path, safe_text::QUOTE_BYTES);
        format!("{}: {}", path.escape_debug(), self.message)
    }
}

fn unknown<'a>(
    steps: Vec<Step>,
    key: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> Finding {
    let hint = suggest::closest(key, known.clone())
        .map(|s| format!("did you mean {s}? "))
        .unwrap_or_default();
    let mut known: Vec<&str> = known.collect();
    known.sort_unstable();
    Finding {
        steps,
        message: format!("unknown field; {hint}known here: {}", known.join(", ")),
    }
}

static TOOL_CONFIG: OnceLock<Value> = OnceLock::new();
static GLOBAL_DEFAULTS: OnceLock<Value> = OnceLock::new();

/// The JSON schema of `T` with every subschema inlined, so the walk needs no `$ref`s.
fn schema_of<T: schemars::JsonSchema>(cell: &'static OnceLock<Value>) -> &'static Value {
    cell.get_or_init(|| {
        let generator = schemars::generate::SchemaSettings::draft2020_12()
            .with(|s| s.inline_subschemas = true)
            .into_generator();
        generator.into_root_schema_for::<T>().to_value()
    })
}

/// Reports every key of an object that its schema does not declare, at any depth.
fn walk(value: &Value, schema: &Value, at: &mut Vec<Step>, out: &mut Vec<Finding>) {
    if schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        == Some(true)
    {
        return;
    }
    // `Option<T>` is `anyOf: [T, null]`: walk with the variant that describes a structure.
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(variants) = schema.get(combinator).and_then(Value::as_array) {
            for variant in variants {
                walk(value, variant, at, out);
            }
            return;
        }
    }
    match value {
        Value::Object(object) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            if properties.is_none() && additional.is_none() {
                return;
            }
            for (key, child) in object {
                let child_schema = properties.and_then(|p| p.get(key)).or(additional);
                at.push(Step::Key(key.clone()));
                match child_schema {
                    Some(child_schema) => walk(child, child_schema, at, out),
                    None => {
                        let known = properties
                            .into_iter()
                            .flat_map(|p| p.keys())
                            .map(String::as_str);
                        out.push(unknown(at.clone(), key, known));
                    }
                }
                at.pop();
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (index, item) in items.iter().enumerate() {
                    at.push(Step::Index(index));
                    walk(item, item_schema, at, out);
                    at.pop();
                }
            }
        }
        _ => {}
    }
}
