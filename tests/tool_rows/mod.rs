//! Every row of the tool catalogue against Kafka's truth, table-driven (a module of
//! `tests/engine_rules.rs`).
//!
//! The truth is `catalogue/reference/kafka-tools.yaml`, a copy of the design's
//! `../shared/reference/kafka-tools.yaml` (a fact table read from Apache Kafka's source); when the
//! shared file is present the copy must equal it. For each of its 30 tools the embedded catalogue
//! (`catalogue/tools.yaml`) must agree on the main class, roles, config-file option and its older
//! spelling, every required argument group, every option (key, roles, default, when it is
//! applied, flag, side effects, conditions), every tool default and every key the tool forces.
//! Where the catalogue deliberately differs (each checked against Kafka's source or bytecode),
//! the difference is listed in [`ALLOWED_DIFFERENCES`] with the reason; a difference that is not
//! listed, or a listed one that no longer occurs, fails the test. The three rows that are not
//! command-line tools (`client`, `kafka-server`, `connect-mirror-maker`) are checked against
//! their explicit expectations below.
//!
//! The behaviour half: every key a tool forces, set by the user to another value, is rendered
//! with a `ForcedByTool` warning in `Modern` and loses to the tool's value in `Legacy`; every
//! key a tool forces through an option it always applies is carried by that option in `Modern`
//! and forced to the option's value in `Legacy`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kafka_config_operator::cli::evaluate_manifest;
use kafka_config_operator::engine::Evaluation;
use kafka_config_operator::engine::catalogue::tools::{Applied, Tool, ToolCatalogue, ToolOption};
use kafka_config_operator::engine::layers::Layer;
use kafka_config_operator::engine::outcome::Reason;
use kafka_config_operator::engine::spec::Role;
use kafka_config_operator::manifest::Workspace;
use serde_json::Value;

/// Differences between the catalogue and the reference that are deliberate: (difference as the
/// comparison prints it, why). Each was checked against Kafka's source (kafka-tools 4.3.1 sources
/// jar) or bytecode (`javap` of kafka-tools 4.0.0 … 4.4.0), as catalogue/README.md describes.
const ALLOWED_DIFFERENCES: &[(&str, &str)] = &[
    (
        "kafka-share-consumer-perf-test: forcedLegacy share-consumer client.id: reference \"with --threads N > 1, each share consumer gets client.id '<resolved client.id>-<i>' (i = 1..N), overriding the user value\", catalogue dynamic",
        "computed only with --threads N > 1, so it is dynamic but not alwaysComputed (no ForcedByTool warning for the single-consumer default)",
    ),
    // kafka-configs.sh runs the Scala kafka.admin.ConfigCommand (kafka_2.13) up to 4.3, the
    // catalogue's release; the reference reads trunk, where it moved to Java in kafka-tools 4.4.0.
    (
        "kafka-configs: mainClass: reference org.apache.kafka.tools.ConfigCommand, catalogue kafka.admin.ConfigCommand",
        "the class of the catalogue's release (4.3.1); the Java class ships from 4.4.0",
    ),
    // The reference describes values the tool computes at run time as text; the catalogue keeps
    // the literal part where there is one and documents the rest under `dynamic`.
    (
        "kafka-console-consumer: toolDefaults consumer auto.offset.reset: reference \"latest (earliest when --from-beginning)\", catalogue tool default \"latest\"",
        "latest is the tool default; earliest comes from the --from-beginning flag option",
    ),
    (
        "kafka-console-share-consumer: toolDefaults share-consumer group.id: reference \"console-share-consumer (when no group id given anywhere)\", catalogue tool default \"console-share-consumer\"",
        "a tool default applies exactly when no layer gives a group id: the reference's condition",
    ),
    (
        "kafka-e2e-latency: forcedLegacy producer max.block.ms: reference \"9223372036854775807 (Long.MAX_VALUE)\", catalogue forced \"9223372036854775807\"",
        "the literal value of Long.MAX_VALUE, which the reference names in parentheses",
    ),
    // ConsoleProducer merges --max-partition-memory-bytes (deprecated) after --batch-size with
    // the same default 16384; the catalogue gives the default once, to --batch-size, so the
    // deprecated option is never written into tool.args when the user did not give it.
    (
        "kafka-console-producer: option --max-partition-memory-bytes: default reference \"16384\", catalogue none",
        "same default as --batch-size, which carries it",
    ),
    // VerifiableShareConsumer --ack-pattern (kafka-tools 4.4.0 and trunk; absent in 4.3.1, the
    // catalogue's release, checked in the 4.3.1 sources jar and the 4.4.0 bytecode): when given,
    // the tool puts share.acknowledgement.mode=explicit after loading the file. The option's own
    // value is the pattern, not the key's value, which the catalogue's option model (option value
    // = key value, or a bare flag) cannot express without an engine change (evaluate.rs
    // option_value, args.rs); and rendering it would make a 4.3.1 tool fail on an unknown option.
    (
        "kafka-verifiable-share-consumer: option --ack-pattern: missing from the catalogue",
        "4.4.0+ only, and its value is not the key's value: needs an engine change",
    ),
];

fn reference_text() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = std::fs::read_to_string(root.join("catalogue/reference/kafka-tools.yaml"))
        .expect("catalogue/reference/kafka-tools.yaml");
    if let Ok(shared) = std::fs::read_to_string(root.join("../shared/reference/kafka-tools.yaml")) {
        assert_eq!(
            copy, shared,
            "catalogue/reference/kafka-tools.yaml differs from ../shared/reference/kafka-tools.yaml: copy it again and review the catalogue"
        );
    }
    copy
}

fn reference_tools() -> Vec<Value> {
    let reference: Value = serde_saphyr::from_str(&reference_text()).expect("reference parses");
    reference["tools"].as_array().expect("tools").clone()
}

/// A scalar of the reference as text (`None` for null).
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// A reference value that describes a run-time value instead of giving it literally.
fn is_description(value: &str) -> bool {
    value.contains(char::is_whitespace) || value.contains('<')
}

fn strip_dashes(option: &str) -> String {
    option.trim_start_matches('-').to_string()
}

/// `role` of a reference option: one role or a list.
fn role_names(value: &Value) -> BTreeSet<String> {
    match value {
        Value::String(s) => BTreeSet::from([s.clone()]),
        Value::Array(items) => items.iter().filter_map(text).collect(),
        _ => BTreeSet::new(),
    }
}

fn option_roles(tool: &Tool, option: &ToolOption) -> BTreeSet<String> {
    let roles = if option.roles.is_empty() {
        &tool.roles
    } else {
        &option.roles
    };
    roles.iter().map(|r| r.to_string()).collect()
}

fn applied_name(applied: Applied) -> &'static str {
    match applied {
        Applied::AlwaysOverrides => "always-overrides",
        Applied::WhenAbsentOrExplicit => "when-absent-or-explicit",
        Applied::ExplicitOverrides => "explicit-overrides",
        Applied::WhenAbsent => "when-absent",
        Applied::BeforeFile => "before-file",
    }
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "none".to_string(), |v| format!("{v:?}"))
}

/// Whether an option the tool always applies sets `key` for `role`: the tool forces the key
/// through the option (its value, or its default).
fn forced_through_option(tool: &Tool, role: Role, key: &str) -> bool {
    tool.options_for(role)
        .any(|o| o.key == key && o.applied == Applied::AlwaysOverrides)
}

fn always_computed(tool: &Tool, role: Role, key: &str) -> bool {
    tool.always_computed
        .get(&role)
        .is_some_and(|keys| keys.iter().any(|k| k == key))
}

fn dynamic_has(tool: &Tool, role: Role, key: &str) -> bool {
    tool.dynamic.get(&role).is_some_and(|m| m.contains_key(key))
}

/// A map of role name → key → value of the reference (`toolDefaults`, `forcedLegacy`).
fn role_maps(value: &Value) -> BTreeMap<String, BTreeMap<String, Option<String>>> {
    value
        .as_object()
        .map(|roles| {
            roles
                .iter()
                .map(|(role, keys)| {
                    let keys = keys
                        .as_object()
                        .map(|m| m.iter().map(|(k, v)| (k.clone(), text(v))).collect())
                        .unwrap_or_default();
                    (role.clone(), keys)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every difference between one reference row and its catalogue row.
fn compare_row(row: &Value, tool: &Tool, out: &mut Vec<String>) {
    let name = &tool.name;
    let mut differ = |what: String| out.push(format!("{name}: {what}"));

    let main_class = text(&row["mainClass"]);
    if main_class != tool.main_class {
        differ(format!(
            "mainClass: reference {}, catalogue {}",
            main_class.unwrap_or_default(),
            tool.main_class.clone().unwrap_or_default()
        ));
    }

    let roles: BTreeSet<String> = row["roles"]
        .as_array()
        .map(|r| r.iter().filter_map(text).collect())
        .unwrap_or_default();
    let catalogue_roles: BTreeSet<String> = tool.roles.iter().map(|r| r.to_string()).collect();
    if roles != catalogue_roles {
        differ(format!(
            "roles: reference {roles:?}, catalogue {catalogue_roles:?}"
        ));
    }

    // Every role reads the same config-file option (one shared file where there are several).
    let file_options: BTreeSet<String> = row["configFileOptions"]
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(text)
                .map(|o| strip_dashes(&o))
                .collect()
        })
        .unwrap_or_default();
    let catalogue_file = tool.config_file.as_ref().map(|c| c.option.clone());
    if file_options.iter().cloned().collect::<Vec<_>>()
        != catalogue_file.iter().cloned().collect::<Vec<_>>()
    {
        differ(format!(
            "config-file option: reference {file_options:?}, catalogue {catalogue_file:?}"
        ));
    }
    let legacy: BTreeSet<String> = row["deprecatedConfigFileOptions"]
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(text)
                .map(|o| strip_dashes(&o))
                .collect()
        })
        .unwrap_or_default();
    let catalogue_legacy = tool.config_file.as_ref().and_then(|c| c.legacy.clone());
    if legacy.iter().cloned().collect::<Vec<_>>()
        != catalogue_legacy.iter().cloned().collect::<Vec<_>>()
    {
        differ(format!(
            "deprecated config-file option: reference {legacy:?}, catalogue {catalogue_legacy:?}"
        ));
    }

    let required: Vec<Vec<String>> = row["required"]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .map(|g| {
                    g.as_array()
                        .map(|g| {
                            g.iter()
                                .filter_map(text)
                                .map(|o| strip_dashes(&o))
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default();
    if required != tool.required {
        differ(format!(
            "required: reference {required:?}, catalogue {:?}",
            tool.required
        ));
    }

    let reference_options = row["options"].as_array().cloned().unwrap_or_default();
    for option in &reference_options {
        let option_name = strip_dashes(&text(&option["option"]).unwrap_or_default());
        let Some(ours) = tool.option(&option_name) else {
            differ(format!(
                "option --{option_name}: missing from the catalogue"
            ));
            continue;
        };
        let mut differ_option = |what: String| differ(format!("option --{option_name}: {what}"));
        let key = text(&option["key"]).unwrap_or_default();
        if key != ours.key {
            differ_option(format!("key reference {key}, catalogue {}", ours.key));
        }
        let roles = role_names(&option["role"]);
        if roles != option_roles(tool, ours) {
            differ_option(format!(
                "roles reference {roles:?}, catalogue {:?}",
                option_roles(tool, ours)
            ));
        }
        let applied = text(&option["applied"]).unwrap_or_default();
        if applied != applied_name(ours.applied) {
            differ_option(format!(
                "applied reference {applied}, catalogue {}",
                applied_name(ours.applied)
            ));
        }
        let kind = text(&option["type"]).unwrap_or_default();
        if (kind == "flag") != ours.is_flag() {
            differ_option(format!(
                "type reference {kind}, catalogue flag {}",
                shown(ours.flag.as_deref())
            ));
        }
        if kind.contains("optional value") != ours.when_empty.is_some() {
            differ_option(format!(
                "type reference {kind}, catalogue whenEmpty {}",
                shown(ours.when_empty.as_deref())
            ));
        }
        // A default the tool computes at run time is documented under `dynamic`, not rendered.
        let default = text(&option["default"]);
        match default.as_deref() {
            Some(d) if is_description(d) => {
                let documented = ours.default.is_none()
                    && ours
                        .roles
                        .iter()
                        .chain(&tool.roles)
                        .any(|r| dynamic_has(tool, *r, &ours.key));
                if !documented {
                    differ_option(format!(
                        "default reference {d:?} (run time), catalogue {} and not dynamic",
                        shown(ours.default.as_deref())
                    ));
                }
            }
            d if d != ours.default.as_deref() => differ_option(format!(
                "default reference {}, catalogue {}",
                shown(d),
                shown(ours.default.as_deref())
            )),
            _ => {}
        }
        let removes = text(&option["sideEffect"]).and_then(|s| {
            s.strip_prefix("removes ")
                .and_then(|s| s.strip_suffix(" from props"))
                .map(str::to_string)
        });
        if removes != ours.removes {
            differ_option(format!(
                "removes reference {}, catalogue {}",
                shown(removes.as_deref()),
                shown(ours.removes.as_deref())
            ));
        }
        let deprecated = option["deprecated"].as_bool().unwrap_or(false);
        if deprecated != ours.deprecated {
            differ_option(format!(
                "deprecated reference {deprecated}, catalogue {}",
                ours.deprecated
            ));
        }
        // "only when group protocol is CONSUMER" → onlyWhen {group.protocol, consumer}.
        let only_when = text(&option["condition"]).and_then(|c| {
            c.strip_prefix("only when group protocol is ")
                .map(|v| format!("group.protocol={}", v.to_ascii_lowercase()))
        });
        let ours_only_when = ours
            .only_when
            .as_ref()
            .map(|o| format!("{}={}", o.key, o.value.to_ascii_lowercase()));
        if only_when != ours_only_when {
            differ_option(format!(
                "condition reference {}, catalogue onlyWhen {}",
                shown(only_when.as_deref()),
                shown(ours_only_when.as_deref())
            ));
        }
    }
    for ours in &tool.options {
        let listed = reference_options
            .iter()
            .any(|o| text(&o["option"]).is_some_and(|n| strip_dashes(&n) == ours.name));
        if !listed {
            differ(format!("option --{}: not in the reference", ours.name));
        }
    }

    // Tool defaults: literal values are catalogue tool defaults, described ones are dynamic.
    let defaults = role_maps(&row["toolDefaults"]);
    for (role_name, keys) in &defaults {
        let Some(role) = Role::parse(role_name) else {
            differ(format!("toolDefaults: unknown role {role_name}"));
            continue;
        };
        for (key, value) in keys {
            let value = value.clone().unwrap_or_default();
            let ours = tool.tool_defaults.get(&role).and_then(|m| m.get(key));
            let fine = if is_description(&value) {
                ours.is_none() && dynamic_has(tool, role, key)
            } else {
                ours == Some(&value)
            };
            if !fine {
                let catalogue = match ours {
                    Some(v) => format!("tool default {v:?}"),
                    None if dynamic_has(tool, role, key) => "dynamic".to_string(),
                    None => "none".to_string(),
                };
                differ(format!(
                    "toolDefaults {role} {key}: reference {value:?}, catalogue {catalogue}"
                ));
            }
        }
    }
    for (role, keys) in &tool.tool_defaults {
        for key in keys.keys() {
            if !defaults
                .get(role.as_str())
                .is_some_and(|m| m.contains_key(key))
            {
                differ(format!("toolDefaults {role} {key}: not in the reference"));
            }
        }
    }

    // Forced keys: a literal is a catalogue forced value; a key an always-applied option sets is
    // forced through that option; a described value the tool computes is dynamic.
    let forced = role_maps(&row["forcedLegacy"]);
    for (role_name, keys) in &forced {
        let Some(role) = Role::parse(role_name) else {
            differ(format!("forcedLegacy: unknown role {role_name}"));
            continue;
        };
        for (key, value) in keys {
            let value = value.clone().unwrap_or_default();
            let ours = tool.forced.get(&role).and_then(|m| m.get(key));
            let fine = match ours {
                Some(v) => !is_description(&value) && v == &value,
                None => {
                    forced_through_option(tool, role, key)
                        || (is_description(&value)
                            && dynamic_has(tool, role, key)
                            && always_computed(tool, role, key))
                }
            };
            if !fine {
                let catalogue = match ours {
                    Some(v) => format!("forced {v:?}"),
                    None if dynamic_has(tool, role, key) => "dynamic".to_string(),
                    None => "not forced".to_string(),
                };
                differ(format!(
                    "forcedLegacy {role} {key}: reference {value:?}, catalogue {catalogue}"
                ));
            }
        }
    }
    // A value computed on every run is a forced value without a literal: the reference lists it.
    for (role, keys) in &tool.always_computed {
        for key in keys {
            let listed = forced
                .get(role.as_str())
                .and_then(|m| m.get(key))
                .is_some_and(|v| v.as_deref().is_some_and(is_description));
            if !listed || !dynamic_has(tool, *role, key) {
                differ(format!(
                    "alwaysComputed {role} {key}: not a described forcedLegacy value with a dynamic entry"
                ));
            }
        }
    }
    for (role, keys) in &tool.forced {
        for key in keys.keys() {
            if !forced
                .get(role.as_str())
                .is_some_and(|m| m.contains_key(key))
            {
                differ(format!("forced {role} {key}: not in the reference"));
            }
        }
    }
    for (role, keys) in &tool.dynamic {
        for key in keys.keys() {
            let in_reference = [&defaults, &forced]
                .iter()
                .any(|m| m.get(role.as_str()).is_some_and(|m| m.contains_key(key)))
                || reference_options.iter().any(|o| {
                    text(&o["key"]).as_deref() == Some(key.as_str())
                        && text(&o["default"]).is_some_and(|d| is_description(&d))
                });
            if !in_reference {
                differ(format!("dynamic {role} {key}: not in the reference"));
            }
        }
    }
}

/// A row that is not a command-line tool of the KIP-1137 table, as it must be.
struct OtherRow {
    name: &'static str,
    roles: &'static [Role],
    main_class: Option<&'static str>,
    select_roles: bool,
    positional_config_file: bool,
    local_only_keys: &'static [&'static str],
}

const OTHER_ROWS: &[OtherRow] = &[
    OtherRow {
        name: "client",
        roles: &[
            Role::Producer,
            Role::Consumer,
            Role::Admin,
            Role::ShareConsumer,
        ],
        main_class: None,
        select_roles: true,
        positional_config_file: false,
        local_only_keys: &[],
    },
    OtherRow {
        name: "kafka-server",
        roles: &[Role::Broker, Role::Controller],
        main_class: Some("kafka.Kafka"),
        select_roles: true,
        positional_config_file: true,
        // DESIGN 2.2: the protected per-broker list of the global broker config seed.
        local_only_keys: &[
            "node.id",
            "broker.id",
            "listeners",
            "advertised.listeners",
            "log.dirs",
            "controller.quorum.voters",
        ],
    },
    OtherRow {
        name: "connect-mirror-maker",
        roles: &[Role::MirrorMaker],
        main_class: Some("org.apache.kafka.connect.mirror.MirrorMaker"),
        select_roles: false,
        positional_config_file: true,
        local_only_keys: &[],
    },
];

#[test]
fn every_tool_row_matches_kafkas_reference_except_the_listed_differences() {
    let catalogue = ToolCatalogue::get();
    let rows = reference_tools();
    assert_eq!(rows.len(), 30, "the 30 tools of the KIP-1137 table");
    let mut differences = Vec::new();
    let mut seen = BTreeSet::new();
    for row in &rows {
        let script = text(&row["script"]).expect("script");
        let name = script.strip_suffix(".sh").unwrap_or(&script).to_string();
        match catalogue.tool(&name) {
            Some(tool) => compare_row(row, tool, &mut differences),
            None => differences.push(format!("{name}: missing from the catalogue")),
        }
        seen.insert(name);
    }
    for row in OTHER_ROWS {
        let name = row.name;
        let tool = catalogue.tool(name).expect("row in the catalogue");
        assert_eq!(tool.roles, row.roles, "{name}: roles");
        assert_eq!(
            tool.main_class.as_deref(),
            row.main_class,
            "{name}: main class"
        );
        assert_eq!(tool.select_roles, row.select_roles, "{name}: selects roles");
        assert_eq!(
            tool.positional_config_file, row.positional_config_file,
            "{name}: positional file"
        );
        assert_eq!(
            tool.local_only_keys, row.local_only_keys,
            "{name}: local-only keys"
        );
        // Not command-line tools: nothing is mapped from options, defaulted or forced.
        assert!(tool.config_file.is_none(), "{name}: config-file option");
        assert!(tool.options.is_empty(), "{name}: options");
        assert!(tool.required.is_empty(), "{name}: required");
        assert!(tool.tool_defaults.is_empty(), "{name}: tool defaults");
        assert!(tool.forced.is_empty(), "{name}: forced");
        seen.insert(name.to_string());
    }
    let rows_in_catalogue: BTreeSet<String> = catalogue.names().map(str::to_string).collect();
    assert_eq!(
        rows_in_catalogue, seen,
        "every catalogue row is checked: 30 from the reference and 3 more"
    );

    let found: BTreeSet<&str> = differences.iter().map(String::as_str).collect();
    let allowed: BTreeSet<&str> = ALLOWED_DIFFERENCES.iter().map(|(d, _)| *d).collect();
    let unexpected: Vec<&&str> = found.difference(&allowed).collect();
    let stale: Vec<&&str> = allowed.difference(&found).collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "catalogue/tools.yaml and the reference differ where no reason is recorded:\n  {}\nallowed differences that no longer occur:\n  {}",
        unexpected
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("\n  "),
        stale
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

// ---- behaviour: every forced key ----

const BASE: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: base, namespace: ns}
data:
  client.properties: |
    bootstrap.servers=file:9092
"#;

/// A value of the same kind as `forced` but different from it, valid for `key`.
fn other_value(key: &str, forced: &str) -> String {
    let other = match key {
        "auto.offset.reset" => {
            if forced == "earliest" {
                "latest"
            } else {
                "earliest"
            }
        }
        "share.acknowledgement.mode" => "implicit",
        "group.protocol" => {
            if forced.eq_ignore_ascii_case("classic") {
                "consumer"
            } else {
                "classic"
            }
        }
        "bootstrap.servers" => "other:9092",
        "compression.type" => {
            if forced == "zstd" {
                "lz4"
            } else {
                "zstd"
            }
        }
        _ => match forced {
            "false" => "true",
            "true" => "false",
            _ if forced.parse::<i64>().is_ok() => "1",
            _ if forced.contains('.') => "com.example.Custom",
            _ => "other",
        },
    };
    other.to_string()
}

/// A config of `tool` with bootstrap.servers from a file, every other required argument given,
/// and `key` set to `value` in the properties' `section` (a role, or `common`).
fn evaluate_config(tool: &Tool, section: &str, key: &str, value: &str, legacy: bool) -> Evaluation {
    let mut args: Vec<String> = Vec::new();
    for group in &tool.required {
        let first = &group[0];
        let bootstrap = group.iter().any(|n| n.starts_with("bootstrap-"));
        if !bootstrap && !tool.is_config_file_option(first) {
            args.push(format!("{first}: \"1\""));
        }
    }
    let precedence = if legacy { "Legacy" } else { "Modern" };
    let yaml = format!(
        "{BASE}\n---\napiVersion: kafkaconfig.dev/v1alpha1\nkind: KafkaToolConfig\nmetadata: {{name: t, namespace: ns}}\nspec:\n  tool: {}\n  precedence: {precedence}\n  args: {{{}}}\n  properties: {{{section}: {{{key}: \"{value}\"}}}}\n  configFiles: [{{configMapKeyRef: {{name: base, key: client.properties}}}}]\n",
        tool.name,
        args.join(", "),
    );
    let mut workspace = Workspace::default();
    workspace
        .add_documents(Path::new("test.yaml"), &yaml)
        .expect("valid manifests");
    let config = workspace.configs.first().expect("a KafkaToolConfig");
    evaluate_manifest(&workspace, config)
}

/// [`evaluate_config`], which must be valid.
fn config(tool: &Tool, section: &str, key: &str, value: &str, legacy: bool) -> Evaluation {
    let ev = evaluate_config(tool, section, key, value, legacy);
    assert!(
        ev.is_valid(),
        "{} {section} {key}={value} (legacy: {legacy}): {:?} {:?}",
        tool.name,
        ev.problems,
        ev.source_problems
    );
    ev
}

fn effective(ev: &Evaluation, role: Role, key: &str) -> Option<(String, Layer)> {
    ev.views
        .get(&role)?
        .effective_value(key)
        .map(|c| (c.value.shown().into_owned(), c.layer))
}

fn forced_by_tool_warning(ev: &Evaluation, role: Role, key: &str, tool: &str) -> bool {
    ev.warnings.iter().any(|w| {
        w.reason == Reason::ForcedByTool && w.key == key && w.message.contains(tool) && {
            // Warnings about tool.args name no role; the others name the key's role.
            w.role.is_none_or(|r| r == role)
        }
    })
}

fn tool_args(ev: &Evaluation) -> Vec<String> {
    let rendered = ev.rendered.as_ref().expect("rendered");
    rendered.files["tool.args"]
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn every_forced_key_warns_in_modern_and_is_forced_in_legacy() {
    let mut checked = 0;
    for tool in &ToolCatalogue::get().tools {
        for (role, keys) in &tool.forced {
            for (key, forced) in keys {
                let other = other_value(key, forced);
                let modern = config(tool, role.as_str(), key, &other, false);
                assert_eq!(
                    effective(&modern, *role, key),
                    Some((other.clone(), Layer::Properties)),
                    "{} Modern renders the user's {key}",
                    tool.name
                );
                assert!(
                    forced_by_tool_warning(&modern, *role, key, &tool.name),
                    "{} Modern: no ForcedByTool for {role} {key}: {:?}",
                    tool.name,
                    modern.warnings
                );

                let legacy = config(tool, role.as_str(), key, &other, true);
                assert_eq!(
                    effective(&legacy, *role, key),
                    Some((forced.clone(), Layer::ForcedByTool)),
                    "{} Legacy forces {key}",
                    tool.name
                );
                assert!(
                    forced_by_tool_warning(&legacy, *role, key, &tool.name),
                    "{} Legacy: no ForcedByTool for {role} {key}: {:?}",
                    tool.name,
                    legacy.warnings
                );
                checked += 1;
            }
        }
    }
    // The literal forced keys of the reference's forcedLegacy column (see ALLOWED_DIFFERENCES).
    assert_eq!(checked, 34, "forced keys checked");
}

#[test]
fn every_key_forced_through_an_always_applied_option_is_carried_in_modern_and_forced_in_legacy() {
    let mut checked = 0;
    for tool in &ToolCatalogue::get().tools {
        for option in tool
            .options
            .iter()
            .filter(|o| o.applied == Applied::AlwaysOverrides && o.only_when.is_none())
        {
            // Options without a default force only what the user gives them.
            let Some(default) = &option.default else {
                continue;
            };
            let role = tool
                .roles
                .iter()
                .copied()
                .find(|r| option.feeds(*r, tool))
                .expect("an option feeds a role");
            let other = other_value(&option.key, default);
            // A tool that reads one file for several roles needs one value for all of them.
            let section = if tool.shares_one_file() {
                "common"
            } else {
                role.as_str()
            };
            let modern = config(tool, section, &option.key, &other, false);
            assert_eq!(
                effective(&modern, role, &option.key),
                Some((other.clone(), Layer::Properties)),
                "{} Modern renders the user's {}",
                tool.name,
                option.key
            );
            let args = tool_args(&modern);
            let carried = match &option.flag {
                Some(flag) if flag == &other => args.contains(&format!("--{}", option.name)),
                Some(_) => forced_by_tool_warning(&modern, role, &option.key, &tool.name),
                None => args
                    .windows(2)
                    .any(|w| w[0] == format!("--{}", option.name) && w[1] == other),
            };
            assert!(
                carried,
                "{} Modern: --{} does not carry {}={other}: {args:?} {:?}",
                tool.name, option.name, option.key, modern.warnings
            );

            let legacy = config(tool, section, &option.key, &other, true);
            assert_eq!(
                effective(&legacy, role, &option.key),
                Some((default.clone(), Layer::ForcedByTool)),
                "{} Legacy forces {} through --{}",
                tool.name,
                option.key,
                option.name
            );
            checked += 1;
        }
    }
    // console-producer --compression-codec; consumer-perf-test --socket-buffer-size, --fetch-size,
    // --from-latest; share-consumer-perf-test --group, --socket-buffer-size, --fetch-size;
    // streams-application-reset --bootstrap-server; verifiable-consumer --group-protocol,
    // --enable-autocommit, --reset-policy.
    assert_eq!(checked, 11, "options that force a default");
}
