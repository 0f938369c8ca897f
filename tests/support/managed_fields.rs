//! managedFields in tests: what a field manager owns, as Argo CD's `managedFieldsManagers`
//! reads it.

use serde_json::{Value, json};

/// Copies into `desired` the leaves of a managedFields `fieldsV1` set from `live` (`f:name` a
/// field, `k:{...}` the list item with those keys).
pub fn copy_managed_fields(fields: &Value, live: &Value, desired: &mut Value) {
    let Some(map) = fields.as_object() else {
        return;
    };
    for (key, sub) in map {
        if let Some(field) = key.strip_prefix("f:") {
            let Some(live_value) = live.get(field) else {
                continue;
            };
            let leaf = sub
                .as_object()
                .is_none_or(|o| o.is_empty() || o.keys().all(|k| k == "."));
            if leaf {
                desired[field] = live_value.clone();
            } else {
                if desired.get(field).is_none() {
                    desired[field] = if live_value.is_array() {
                        json!([])
                    } else {
                        json!({})
                    };
                }
                copy_managed_fields(sub, live_value, &mut desired[field]);
            }
        } else if let Some(item) = key.strip_prefix("k:") {
            let Ok(keys) = serde_json::from_str::<serde_json::Map<String, Value>>(item) else {
                continue;
            };
            let matches = |v: &Value| keys.iter().all(|(k, want)| v.get(k) == Some(want));
            let Some(live_item) = live.as_array().and_then(|a| a.iter().find(|v| matches(v)))
            else {
                continue;
            };
            let Some(list) = desired.as_array_mut() else {
                continue;
            };
            match list.iter_mut().find(|v| matches(v)) {
                Some(desired_item) => copy_managed_fields(sub, live_item, desired_item),
                None => list.push(live_item.clone()),
            }
        }
    }
}
