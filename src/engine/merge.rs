//! Layers → references: every layer's raw values for a role, lowest precedence first, then each
//! key's provenance chain with its references resolved. Also the two changes the operator makes
//! to merged views (one connection key, Deferred's config providers).

use std::borrow::{Borrow, Cow};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::catalogue::tools::{Applied, OnlyWhen, Tool, ToolOption};
use crate::engine::globals::{GlobalDefaults, role_entries};
use crate::engine::key::Key;
use crate::engine::layers::{Contribution, Layer, Provenance, Source};
use crate::engine::model::RoleView;
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::reference::{self, Bindings, Mode};
use crate::engine::render::{DIRECTORY_PROVIDER, FILE_PROVIDER};
use crate::engine::sources::{FileEntry, LoadedFile};
use crate::engine::spec::{Precedence, Role, Scalar, ToolConfigSpec, properties_label};
use crate::engine::taint::{SecretOrigin, Value};

/// A value before references are resolved (Secret data when read from a Secret's file).
pub(crate) struct Raw<'a> {
    /// The key, to group the layers' values (its text is never shown: `contribution` names a
    /// key only when its value is plain, which a key read from a Secret file never has).
    key: RawKey<'a>,
    /// The key of a Secret file's entry that is Secret content, when the entry lends it: the
    /// merged key carries it.
    secret_key: Option<&'a Key>,
    layer: Layer,
    source: Source,
    text: Value,
    /// Set for values an option contributes only under a condition (`onlyWhen`).
    only_when: Option<&'a OnlyWhen>,
}

/// A raw value's key: the text of a spec or file key, a key of the catalogue (which a merged
/// view borrows), or the key of a file entry given away by the file's last reader (so the
/// merged view keeps it instead of a copy).
enum RawKey<'a> {
    Text(&'a str),
    Catalogue(&'static str),
    Owned(Key),
}

impl<'a> Raw<'a> {
    /// A value with no condition.
    fn new(key: &'a str, layer: Layer, source: impl Into<Source>, text: impl Into<Value>) -> Self {
        Raw {
            key: RawKey::Text(key),
            secret_key: None,
            layer,
            source: source.into(),
            text: text.into(),
            only_when: None,
        }
    }
}

/// The value an option puts into its key when given as `value`, or `None` when it puts nothing.
pub fn option_value(option: &ToolOption, value: &Scalar) -> Result<Option<String>, String> {
    if let Some(flag_value) = &option.flag {
        return match value {
            Scalar::Bool(true) => Ok(Some(flag_value.clone())),
            Scalar::Bool(false) => Ok(None),
            Scalar::Str(s) if s == "true" || s.is_empty() => Ok(Some(flag_value.clone())),
            Scalar::Str(s) if s == "false" => Ok(None),
            _ => Err(format!("--{} is a flag: use true or false", option.name)),
        };
    }
    if let Some(when_empty) = &option.when_empty {
        match value {
            Scalar::Bool(true) => return Ok(Some(when_empty.clone())),
            Scalar::Str(s) if s.is_empty() => return Ok(Some(when_empty.clone())),
            _ => {}
        }
    }
    Ok(Some(value.to_text()))
}

/// The raw values of every layer for one role, lowest precedence first. `last_role`: no role
/// after this one is collected, so the files' values are taken out of `files`, not copied.
pub(crate) fn collect<'a>(
    tool: &'static Tool,
    spec: &'a ToolConfigSpec,
    role: Role,
    last_role: bool,
    files: &'a mut [LoadedFile],
    applied: &[&'a GlobalDefaults],
    problems: &mut Vec<Problem>,
) -> Vec<Raw<'a>> {
    let legacy = spec.precedence() == Precedence::Legacy;
    // Sized once for the files' lines, the spec's properties and the tool's own values, instead
    // of regrown (and moved) while they are pushed; GlobalClientDefaults' values may add more.
    let capacity = files.iter().map(|f| f.entries.len()).sum::<usize>()
        + role_entries(&spec.properties, role).count()
        + tool.tool_defaults.get(&role).map_or(0, BTreeMap::len)
        + tool.forced.get(&role).map_or(0, BTreeMap::len)
        + 2 * tool.options.len();
    let mut raws: Vec<Raw<'a>> = Vec::with_capacity(capacity);
    // The catalogue's labels and values are borrowed for the evaluation, not copied for every
    // value.
    let push =
        |raws: &mut Vec<Raw<'a>>, key: &'static str, layer, source: &'static str, text: Value| {
            raws.push(Raw {
                key: RawKey::Catalogue(key),
                ..Raw::new("", layer, source, text)
            })
        };
    // Values an option contributes carry the option's condition.
    let push_option = |raws: &mut Vec<Raw<'a>>,
                       option: &'static ToolOption,
                       layer,
                       source: &'static str,
                       text: Value| {
        raws.push(Raw {
            key: RawKey::Catalogue(&option.key),
            only_when: option.only_when.as_ref(),
            ..Raw::new("", layer, source, text)
        })
    };

    push_globals(&mut raws, applied, role, Layer::ClusterDefaults);

    if let Some(defaults) = tool.tool_defaults.get(&role) {
        let label = tool.default_label();
        for (key, value) in defaults {
            push(
                &mut raws,
                key,
                Layer::ToolDefaults,
                label,
                catalogue_value(value),
            );
        }
    }
    for option in tool.options_for(role) {
        if let Some(default) = &option.default
            && !matches!(
                option.applied,
                Applied::ExplicitOverrides | Applied::WhenAbsent
            )
        {
            push_option(
                &mut raws,
                option,
                Layer::ToolDefaults,
                option.default_label(),
                catalogue_value(default),
            );
        }
    }

    let mut arg_values: Vec<(&'static ToolOption, String)> = Vec::new();
    for option in tool.options_for(role) {
        if let Some(value) = spec.args.get(&option.name) {
            match option_value(option, value) {
                Ok(Some(text)) => arg_values.push((option, text)),
                Ok(None) => {}
                Err(message) => problems.push(Problem::new(
                    Reason::InvalidArgument,
                    format!("spec.args.{}", option.name),
                    message,
                )),
            }
        }
    }
    // Legacy: options the tool puts before loading the file, or only when the key is absent,
    // lose to the file.
    let is_before_file =
        |o: &ToolOption| legacy && matches!(o.applied, Applied::BeforeFile | Applied::WhenAbsent);
    for (option, text) in arg_values.iter().filter(|(o, _)| is_before_file(o)) {
        push_option(
            &mut raws,
            option,
            Layer::Args,
            option.args_label(),
            Value::from(text.as_str()),
        );
    }

    for file in files {
        let file_role = spec.config_files.get(file.index).and_then(|f| f.role);
        if file_role.is_some_and(|r| r != role) {
            continue;
        }
        // A file no later role reads gives its values away instead of copying each one.
        let last_reader = file_role.is_some() || last_role;
        // One label for the file's lines, each a `Source::Line` of it.
        let file_label: Arc<str> = file.source_file().into();
        for FileEntry { key, value, line } in &mut file.entries {
            let source = Source::Line {
                file: Arc::clone(&file_label),
                line: *line,
            };
            let raw = if last_reader {
                Raw {
                    key: RawKey::Owned(std::mem::replace(key, Key::new(String::new()))),
                    ..Raw::new("", Layer::ConfigFiles, source, std::mem::take(value))
                }
            } else {
                let key: &'a Key = key;
                Raw {
                    secret_key: key.is_secret().then_some(key),
                    ..Raw::new(key.borrow(), Layer::ConfigFiles, source, value.clone())
                }
            };
            raws.push(raw);
        }
    }

    for (section, key, value) in role_entries(&spec.properties, role) {
        let source = match properties_label(section) {
            Some(label) => Source::from(label),
            None => Source::from(format!("properties.{section}")),
        };
        raws.push(Raw::new(key, Layer::Properties, source, value.to_text()));
    }

    for (option, text) in arg_values.iter().filter(|(o, _)| !is_before_file(o)) {
        push_option(
            &mut raws,
            option,
            Layer::Args,
            option.args_label(),
            Value::from(text.as_str()),
        );
    }

    push_globals(&mut raws, applied, role, Layer::Enforced);

    if legacy {
        if let Some(forced) = tool.forced.get(&role) {
            for (key, value) in forced {
                push(
                    &mut raws,
                    key,
                    Layer::ForcedByTool,
                    tool.forced_label(),
                    catalogue_value(value),
                );
            }
        }
        for option in tool
            .options_for(role)
            .filter(|o| o.applied == Applied::AlwaysOverrides)
        {
            let given = arg_values
                .iter()
                .find(|(o, _)| o.name == option.name)
                .map(|(_, t)| Value::from(t.as_str()));
            if let Some(text) = given.or_else(|| option.default.as_deref().map(catalogue_value)) {
                let source = option.forced_label();
                push_option(&mut raws, option, Layer::ForcedByTool, source, text);
            }
        }
    }
    // Drop what a conditional option contributed when its condition does not hold (most
    // tools have no conditional option: then there is nothing to look at).
    if raws.iter().any(|raw| raw.only_when.is_some()) {
        let holds: Vec<bool> = raws
            .iter()
            .map(|raw| {
                raw.only_when.is_none_or(|condition| {
                    let value = raws
                        .iter()
                        .rev()
                        .find(|r| r.key() == condition.key && r.only_when.is_none());
                    match value {
                        Some(r) => r.text.inspect(|text| condition.holds(Some(text))),
                        None => condition.holds(None),
                    }
                })
            })
            .collect();
        let mut keep = holds.into_iter();
        raws.retain(|_| keep.next().unwrap_or(true));
    }
    raws
}

/// A value of the catalogue (read once per process), borrowed instead of copied.
fn catalogue_value(text: &'static str) -> Value {
    Value::Plain(Cow::Borrowed(text))
}

/// Layer 1 (`defaults`) or 6 (`enforced`) of every applied GlobalClientDefaults, in order.
fn push_globals<'a>(
    raws: &mut Vec<Raw<'a>>,
    applied: &[&'a GlobalDefaults],
    role: Role,
    layer: Layer,
) {
    for global in applied.iter().filter(|g| g.applies_to_role(role)) {
        let (props, field) = match layer {
            Layer::Enforced => (&global.spec.enforced, "enforced"),
            _ => (&global.spec.defaults, "defaults"),
        };
        for (section, key, value) in role_entries(props, role) {
            let source = format!("GlobalClientDefaults {} {field}.{section}", global.name);
            raws.push(Raw::new(key, layer, source, value.to_text()));
        }
    }
}

/// A raw value with its references resolved, taking its text and source out of `raw`; the
/// problem when a reference does not resolve.
fn contribution(
    raw: &mut Raw<'_>,
    bindings: &Bindings,
    providers: &BTreeSet<String>,
    mode: Mode,
) -> Result<Contribution, Problem> {
    let text = std::mem::take(&mut raw.text);
    let source = std::mem::take(&mut raw.source);
    let from_secret = text.is_secret();
    match reference::resolve_value(text, bindings, providers, mode) {
        Ok(value) => Ok(Contribution {
            layer: raw.layer,
            source,
            value,
        }),
        Err(error) => {
            // Inside Secret data the error names the Secret, never the reference, and the key
            // (which may be Secret content too) is left out.
            let message = if from_secret {
                error.to_string()
            } else {
                format!("{}: {error}", raw.key())
            };
            Err(Problem::new(error.reason(), source, message))
        }
    }
}

/// Resolves references and builds each key's chain, highest precedence first, ending with Kafka's
/// default (layer 0, for `explain`) when the key has one.
pub(crate) fn resolve(
    role: Role,
    mut raws: Vec<Raw<'_>>,
    bindings: &Bindings,
    mode: Mode,
    problems: &mut Vec<Problem>,
) -> RoleView {
    // The providers in force are those of the config.providers value that wins.
    let providers = raws
        .iter()
        .rev()
        .find(|r| r.key() == "config.providers")
        .and_then(|r| r.text.as_plain())
        .and_then(|text| reference::resolve(text, bindings, &BTreeSet::new(), Mode::Lenient).ok())
        // Provider names read from a Secret are not used: they would be echoed as plain text.
        .and_then(|value| value.as_plain().map(reference::provider_names))
        .unwrap_or_default();
    // Each key's values, lowest layer first: the position of every raw, in order. Sorted
    // stably, by key alone: equal keys keep their positions' order, and the runs already in key
    // order (a file's lines often are, the spec's maps always) are merged instead of re-sorted.
    // Each position is sorted next to its key's text, so a comparison reads no raw.
    let order: Vec<usize> = {
        let mut keyed: Vec<(&str, usize)> = raws.iter().map(Raw::key).zip(0..).collect();
        keyed.sort_by_key(|(key, _)| *key);
        keyed.into_iter().map(|(_, at)| at).collect()
    };
    let set = ConfigCatalogue::get().set_for(role);
    // Built in key order and collected at the end: a BTreeMap is bulk-built from sorted input
    // without searching the tree for every key.
    let mut keys = Vec::with_capacity(order.len());
    // Values whose references do not resolve, reported in the order of the layers.
    let mut failures: Vec<(usize, Problem)> = Vec::new();
    let mut rest = &order[..];
    while let Some(&first) = rest.first() {
        let same = rest
            .iter()
            .take_while(|&&at| raws[at].key() == raws[first].key())
            .count();
        let (positions, later) = rest.split_at(same);
        rest = later;
        let mut chain = Vec::with_capacity(positions.len() + 1);
        for &at in positions.iter().rev() {
            match contribution(&mut raws[at], bindings, &providers, mode) {
                Ok(contribution) => chain.push(contribution),
                Err(problem) => failures.push((at, problem)),
            }
        }
        if chain.is_empty() {
            continue;
        }
        let key = merged_key(&mut raws, positions);
        let def = set.and_then(|set| set.get(key.borrow()));
        if let Some(default) = def.and_then(|def| def.default.as_ref()) {
            chain.push(Contribution::new(
                Layer::KafkaDefaults,
                "Kafka default",
                catalogue_value(default),
            ));
        }
        keys.push((key, Provenance { chain, def }));
    }
    failures.sort_by_key(|(at, _)| *at);
    problems.extend(failures.into_iter().map(|(_, problem)| problem));
    RoleView {
        keys: keys.into_iter().collect(),
        providers,
    }
}

impl Raw<'_> {
    fn key(&self) -> &str {
        match &self.key {
            RawKey::Text(text) | RawKey::Catalogue(text) => text,
            RawKey::Owned(key) => key.borrow(),
        }
    }

    /// The key of a Secret file's entry that is Secret content.
    fn secret_key(&self) -> Option<&Key> {
        match &self.key {
            RawKey::Owned(key) if key.is_secret() => Some(key),
            _ => self.secret_key,
        }
    }
}

/// The key of a merged view for the raw values at `positions` (all of one key), taken out of
/// them when a file entry gave its key away. Secret content when any layer read it from a Secret
/// file that Kafka does not define (named by the highest such line): the same text elsewhere does
/// not make it public.
fn merged_key(raws: &mut [Raw<'_>], positions: &[usize]) -> Key {
    let from_secret = positions
        .iter()
        .rev()
        .find(|&&at| raws[at].secret_key().is_some());
    let from_file = || {
        positions
            .iter()
            .rev()
            .find(|&&at| matches!(raws[at].key, RawKey::Owned(_)))
    };
    let Some(&at) = from_secret.or_else(from_file) else {
        let catalogue = positions.iter().find_map(|&at| match raws[at].key {
            RawKey::Catalogue(text) => Some(text),
            _ => None,
        });
        return match catalogue {
            Some(text) => Key::from_catalogue(text),
            None => Key::new(positions.first().map_or("", |&at| raws[at].key())),
        };
    };
    match &mut raws[at].key {
        RawKey::Owned(key) => std::mem::replace(key, Key::new(String::new())),
        RawKey::Text(_) | RawKey::Catalogue(_) => raws[at]
            .secret_key()
            .cloned()
            .unwrap_or_else(|| Key::new(raws[at].key())),
    }
}

/// Tools connect through one of `--bootstrap-server` / `--bootstrap-controller`: when both keys are
/// set, the one from the higher layer is used and the other is left out of the file (the tool
/// drops it, or the client refuses both), with a warning.
pub(crate) fn choose_one_connection(
    tool: &Tool,
    views: &mut BTreeMap<Role, RoleView>,
    warnings: &mut Vec<Warning>,
) {
    for group in tool.required.iter().filter(|g| g.len() > 1) {
        let options: Vec<&ToolOption> = group.iter().filter_map(|n| tool.option(n)).collect();
        if options.len() < 2 {
            continue;
        }
        for (role, view) in views.iter_mut() {
            let present: Vec<(&ToolOption, Layer, Source)> = options
                .iter()
                .filter(|o| o.feeds(*role, tool))
                .filter_map(|o| {
                    view.file_value(&o.key)
                        .map(|c| (*o, c.layer, c.source.clone()))
                })
                .collect();
            let Some((chosen, _, chosen_source)) = present
                .iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.name.cmp(&a.0.name)))
                .cloned()
            else {
                continue;
            };
            for (dropped, _, source) in present.iter().filter(|(o, _, _)| o.name != chosen.name) {
                view.keys.remove(dropped.key.as_str());
                warnings.push(Warning {
                    key: dropped.key.clone(),
                    role: Some(*role),
                    reason: Reason::ConflictingKeys,
                    message: format!(
                        "{} connects through one of --{}: {} (from {chosen_source}) is used, so {} (from {source}) is left out",
                        tool.name,
                        group.join(" / --"),
                        chosen.key,
                        dropped.key
                    ),
                });
            }
        }
    }
}

/// `output.secrets: Deferred` needs Kafka's directory and file config providers; declaring them
/// here (layer `operator`) makes `explain` show every key the file will hold.
pub(crate) fn declare_deferred_providers(role: Role, view: &mut RoleView) {
    let (mut dir, mut file) = (false, false);
    for (_, _, contribution) in view.file_entries() {
        match contribution.value.secret().map(|s| s.origin()) {
            Some(SecretOrigin::Parts(_)) => dir = true,
            Some(SecretOrigin::File { .. }) => file = true,
            None => {}
        }
    }
    if !dir && !file {
        return;
    }
    let mut names: Vec<String> = view
        .file_value("config.providers")
        .and_then(|c| c.value.as_plain())
        .map(|value| {
            value
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let source = "output.secrets: Deferred";
    for (used, (name, class)) in [(dir, DIRECTORY_PROVIDER), (file, FILE_PROVIDER)] {
        if !used {
            continue;
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
        let class_key = format!("config.providers.{name}.class");
        if view.file_value(&class_key).is_none() {
            add_operator_value(view, role, &class_key, class, source);
        }
        view.providers.insert(name.to_string());
    }
    let joined = names.join(",");
    if view
        .file_value("config.providers")
        .is_none_or(|c| !c.value.is(&joined))
    {
        add_operator_value(view, role, "config.providers", &joined, source);
    }
}

fn add_operator_value(
    view: &mut RoleView,
    role: Role,
    key: &str,
    value: &str,
    source: &'static str,
) {
    let provenance = view
        .keys
        .entry(Key::new(key))
        .or_insert_with(|| Provenance {
            chain: Vec::new(),
            def: ConfigCatalogue::get().key(role, key),
        });
    let at = provenance
        .chain
        .iter()
        .position(|c| c.layer != Layer::ForcedByTool)
        .unwrap_or(provenance.chain.len());
    provenance
        .chain
        .insert(at, Contribution::new(Layer::Operator, source, value));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::engine::layers::Source;

    #[test]
    fn a_line_source_is_the_file_label_colon_line() {
        for line in [0, 1, 9, 10, 99, 100, 4_294_967_295] {
            let source = Source::Line {
                file: Arc::from("configFiles[0] c/k"),
                line,
            };
            assert_eq!(source.to_string(), format!("configFiles[0] c/k:{line}"));
            assert_eq!(source.text(), format!("configFiles[0] c/k:{line}"));
        }
    }
}
