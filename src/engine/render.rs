//! Rendering: one `.properties` file per config-file option of the tool, `tool.args`, and the
//! content hash that rolls workloads when, and only when, the content changes.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use crate::engine::args;
use crate::engine::catalogue::configs::ConfigCatalogue;
use crate::engine::catalogue::tools::Tool;
use crate::engine::mirror_maker;
pub use crate::engine::model::{HashKey, HashKeyError, Rendered, SecretMount};
use crate::engine::model::{PlainArgs, Request, RoleView};
use crate::engine::outcome::{Problem, Reason, Warning};
use crate::engine::properties;
use crate::engine::sensitive;
use crate::engine::spec::{OutputKind, Role, SecretsMode};
use crate::engine::taint::{SecretSource, Value};

/// The key holding the tool's arguments, one per line.
pub const TOOL_ARGS_KEY: &str = "tool.args";
/// Kubernetes refuses objects over 1 MiB; leave room for metadata.
pub const MAX_OUTPUT_BYTES: usize = 1_000_000;

/// One role's entries as they are written to its file, in key order.
type Entries<'v> = Vec<(&'v str, Cow<'v, str>)>;

pub const DIRECTORY_PROVIDER: (&str, &str) = (
    "dir",
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
);
pub const FILE_PROVIDER: (&str, &str) = (
    "file",
    "org.apache.kafka.common.config.provider.FileConfigProvider",
);

/// The files of a tool: a file name and the roles it serves.
pub fn file_layout(tool: &Tool, roles: &[Role]) -> Vec<(String, Vec<Role>)> {
    if tool.shares_one_file() {
        return vec![("client.properties".to_string(), roles.to_vec())];
    }
    roles
        .iter()
        .map(|role| {
            let name = match role {
                Role::MirrorMaker => "mm2.properties".to_string(),
                other => [other.as_str(), ".properties"].concat(),
            };
            (name, vec![*role])
        })
        .collect()
}

pub fn render(
    req: &Request<'_>,
    tool: &'static Tool,
    views: &BTreeMap<Role, RoleView>,
    plain: &PlainArgs,
    warnings: &mut Vec<Warning>,
) -> Result<Rendered, Vec<Problem>> {
    let output = req.spec.output();
    let deferred = output.secrets() == SecretsMode::Deferred;
    // Secret data goes into the files only when they are bound for a Secret.
    let to_secret = output.kind() == OutputKind::Secret && !deferred;
    let mount_path = output.mount_path();
    let roles: Vec<Role> = views.keys().copied().collect();
    let mut problems = Vec::new();
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut sensitive_keys: BTreeSet<String> = BTreeSet::new();
    let mut mounts: BTreeSet<SecretMount> = BTreeSet::new();
    let mut referenced_secret_keys: BTreeSet<SecretSource> = BTreeSet::new();
    let mut paths = Vec::new();

    for (file_name, file_roles) in file_layout(tool, &roles) {
        let mut uses_dir = false;
        let mut uses_file = false;
        // Each role's entries as they are written, in key order.
        let mut by_role: Vec<(Role, Entries)> = Vec::new();
        // Keys whose values are Secret data: MirrorMaker's warnings must not quote them.
        let mut secret_keys: BTreeSet<&str> = BTreeSet::new();
        for role in &file_roles {
            let Some(view) = views.get(role) else {
                continue;
            };
            let mut values = Vec::with_capacity(view.keys.len());
            for (merged_key, provenance, contribution) in view.file_entries() {
                let key = merged_key.expose_for_output();
                // Deferred writes each key name into the ConfigMap: a key that is Secret
                // content (read from a Secret file, not a name Kafka defines) cannot go there.
                if deferred && merged_key.is_secret() {
                    problems.push(Problem::new(
                        Reason::SensitiveValueInConfigMap,
                        contribution.source.clone(),
                        format!(
                            "{} is not a Kafka key name, and output.secrets: Deferred would write it \
                             into the ConfigMap; check the file's syntax (line continuations)",
                            merged_key.shown()
                        ),
                    ));
                    continue;
                }
                let value = match &contribution.value {
                    Value::Plain(text) => Cow::Borrowed(text.as_ref()),
                    Value::Secret(secret) if deferred => {
                        let written = secret.deferred(mount_path, key);
                        uses_dir |= written.uses_dir;
                        uses_file |= written.uses_file;
                        for from in written.sources {
                            mounts.insert(SecretMount {
                                mount_path: format!("{mount_path}/secrets/{}", from.name),
                                secret: from.name.clone(),
                            });
                            referenced_secret_keys.insert(from);
                        }
                        Cow::Owned(written.text)
                    }
                    Value::Secret(secret) if to_secret => {
                        Cow::Borrowed(secret.expose_for_secret_output())
                    }
                    // Bound for a ConfigMap: refused below (SensitiveValueInConfigMap), and
                    // the file keeps the redaction in its place, never the data.
                    Value::Secret(secret) => Cow::Owned(secret.redacted()),
                };
                let secret_material = (!deferred && contribution.is_secret_sourced())
                    || (sensitive::is_password(provenance.def, key)
                        && !value.is_empty()
                        && !sensitive::has_provider_reference(
                            &value,
                            &provider_names_with(view, deferred),
                        ));
                if secret_material {
                    let shown = merged_key.shown();
                    sensitive_keys.insert(format!("{file_name}: {shown}"));
                }
                if contribution.is_secret_sourced() {
                    secret_keys.insert(key);
                }
                values.push((key, value));
            }
            by_role.push((*role, values));
        }
        let mirror_maker = file_roles.contains(&Role::MirrorMaker);
        let text = match by_role.as_slice() {
            // One role and nothing to add: the view is in key order, so it is written as it is.
            [(_, values)]
                if !mirror_maker
                    && !uses_dir
                    && !uses_file
                    && output.render_defaults != Some(true) =>
            {
                properties::store(values.iter().map(|(k, v)| (*k, v.as_ref())))
            }
            _ => {
                let mut content = merge_roles(
                    tool,
                    &file_name,
                    &file_roles,
                    by_role,
                    output.render_defaults == Some(true),
                    &mut problems,
                );
                if mirror_maker {
                    mirror_maker::resolve_overrides(&mut content, &secret_keys, warnings);
                }
                if uses_dir || uses_file {
                    declare_providers(&mut content, uses_dir, uses_file, &file_name, &mut problems);
                }
                properties::store(content.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            }
        };
        paths.push([mount_path, "/", &file_name].concat());
        files.insert(file_name, text);
    }

    if !tool.select_roles || tool.positional_config_file {
        let version = req
            .spec
            .kafka_version
            .as_deref()
            .unwrap_or(&ConfigCatalogue::get().kafka_version);
        let built = args::build(tool, views, plain, &paths, version, warnings);
        // Sized for the words as they are (a redacted one may be longer): written without
        // regrowing in the common case.
        let mut text = String::with_capacity(built.iter().map(|arg| arg.value.len() + 1).sum());
        for arg in &built {
            let secret = match &arg.value {
                Value::Plain(plain) => {
                    text.push_str(plain);
                    text.push('\n');
                    continue;
                }
                Value::Secret(secret) => secret,
            };
            if to_secret {
                text.push_str(secret.expose_for_secret_output());
            } else if deferred {
                // Deferred means no Secret byte outside a Secret, and tool.args is plain text.
                let from: Vec<String> = secret.sources().iter().map(ToString::to_string).collect();
                problems.push(Problem::new(
                    Reason::SensitiveArgument,
                    TOOL_ARGS_KEY,
                    format!(
                        "{} would carry data of {} in {TOOL_ARGS_KEY}, which output.secrets: \
                         Deferred keeps out of the output: set the value in a file or property \
                         instead of an argument, or use output.kind: Secret without Deferred",
                        arg.argument,
                        from.join(", ")
                    ),
                ));
            } else {
                sensitive_keys.insert(format!("{TOOL_ARGS_KEY}: {}", arg.argument));
                text.push_str(&secret.redacted());
            }
            text.push('\n');
        }
        files.insert(TOOL_ARGS_KEY.to_string(), text);
    }

    if output.kind() == OutputKind::ConfigMap && !sensitive_keys.is_empty() {
        problems.push(Problem::new(
            Reason::SensitiveValueInConfigMap,
            "spec.output.kind",
            format!(
                "sensitive values cannot be written to a ConfigMap ({}); use output.kind: Secret, or \
                 output.secrets: Deferred for values that come from Secrets",
                sensitive_keys.into_iter().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let size: usize = files.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_OUTPUT_BYTES {
        problems.push(Problem::new(
            Reason::OutputTooLarge,
            "spec",
            format!("the rendered files are {size} bytes; Kubernetes objects are limited to 1 MiB"),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let hash = content_hash(&files, &referenced_secret_keys, req);
    Ok(Rendered {
        kind: output.kind(),
        name: output
            .name
            .clone()
            .unwrap_or_else(|| [req.name, "-kafka"].concat()),
        files,
        hash,
        secret_mounts: mounts.into_iter().collect(),
    })
}

/// The file's keys when it is more than one role's entries as they are: each role's entries
/// in turn (a key two roles set differently is a conflict), then its Kafka defaults.
fn merge_roles(
    tool: &Tool,
    file_name: &str,
    file_roles: &[Role],
    by_role: Vec<(Role, Entries)>,
    render_defaults: bool,
    problems: &mut Vec<Problem>,
) -> BTreeMap<String, String> {
    let mut content: BTreeMap<String, String> = BTreeMap::new();
    let mut owner: BTreeMap<&str, Role> = BTreeMap::new();
    for (role, values) in by_role {
        for (key, value) in values {
            if let Some(previous) = content.get(key)
                && previous.as_str() != value
            {
                problems.push(Problem::new(
                    Reason::RoleConflict,
                    format!("{file_name}: {key}"),
                    format!(
                        "{} reads one file for {}; {key} differs between {} and {role}: set it in common, \
                         or the same in each role",
                        tool.name,
                        file_roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", "),
                        owner.get(key).map(|r| r.as_str()).unwrap_or("another role")
                    ),
                ));
                continue;
            }
            owner.insert(key, role);
            content.insert(key.to_string(), value.into_owned());
        }
        if render_defaults {
            add_kafka_defaults(role, &mut content);
        }
    }
    content
}

fn provider_names_with(view: &RoleView, deferred: bool) -> BTreeSet<String> {
    let mut names = view.providers.clone();
    if deferred {
        names.insert(DIRECTORY_PROVIDER.0.to_string());
        names.insert(FILE_PROVIDER.0.to_string());
    }
    names
}

/// Adds the providers Deferred references need to `config.providers`, keeping the user's own.
fn declare_providers(
    content: &mut BTreeMap<String, String>,
    uses_dir: bool,
    uses_file: bool,
    file_name: &str,
    problems: &mut Vec<Problem>,
) {
    let mut names: Vec<String> = content
        .get("config.providers")
        .map(|v| {
            v.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    for ((name, class), used) in [(DIRECTORY_PROVIDER, uses_dir), (FILE_PROVIDER, uses_file)] {
        if !used {
            continue;
        }
        let class_key = format!("config.providers.{name}.class");
        match content.get(&class_key) {
            Some(existing) if existing != class => problems.push(Problem::new(
                Reason::InvalidValue,
                format!("{file_name}: {class_key}"),
                format!("output.secrets: Deferred needs the config provider {name:?} to be {class}, but it is {existing}"),
            )),
            _ => {
                content.insert(class_key, class.to_string());
            }
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    content.insert("config.providers".to_string(), names.join(","));
}

fn add_kafka_defaults(role: Role, content: &mut BTreeMap<String, String>) {
    for (key, default) in rendered_defaults(role) {
        content
            .entry(key.to_string())
            .or_insert_with(|| default.to_string());
    }
}

/// What `output.renderDefaults` writes for a role where the key is unset: every key of Kafka's
/// catalogue that has a default, except passwords.
pub fn rendered_defaults(role: Role) -> impl Iterator<Item = (&'static str, &'static str)> {
    ConfigCatalogue::get()
        .set_for(role)
        .into_iter()
        .flat_map(|set| &set.keys)
        .filter(|(_, def)| !def.is_password())
        .filter_map(|(key, def)| Some((key.as_str(), def.default.as_deref()?)))
}

/// How a keyed content hash is labelled in annotations and status (HMAC-SHA256 with the
/// installation's [`HashKey`]).
pub const KEYED_PREFIX: &str = "hmac-sha256:";
/// How an unkeyed content hash is labelled: the offline CLI without `--hash-key-file`, and every
/// hash an operator before the keyed hash wrote (still read when comparing stored hashes).
pub const UNKEYED_PREFIX: &str = "sha256:";

/// The content hash: every file (name and content, length-prefixed so no two layouts collide)
/// and, for Deferred outputs, the referenced Secret data (a rotated password rolls workloads).
/// `hmac-sha256:` under the request's key; `sha256:` without one (the offline CLI without
/// `--hash-key-file`). Same construction either way, so it changes when, and only when, the
/// content (or the key) changes.
fn content_hash(
    files: &BTreeMap<String, String>,
    secret_keys: &BTreeSet<SecretSource>,
    req: &Request<'_>,
) -> String {
    match req.hash_key {
        Some(key) => {
            let mut mac = key.mac();
            feed_content(&mut mac, files, secret_keys, req);
            hash_label(KEYED_PREFIX, &hmac::Mac::finalize(mac).into_bytes())
        }
        None => {
            let mut hasher = Sha256::new();
            feed_content(&mut hasher, files, secret_keys, req);
            hash_label(UNKEYED_PREFIX, &hasher.finalize())
        }
    }
}

fn feed_content(
    out: &mut impl sha2::digest::Update,
    files: &BTreeMap<String, String>,
    secret_keys: &BTreeSet<SecretSource>,
    req: &Request<'_>,
) {
    for (name, content) in files {
        out.update(&(name.len() as u64).to_le_bytes());
        out.update(name.as_bytes());
        out.update(&(content.len() as u64).to_le_bytes());
        out.update(content.as_bytes());
    }
    for SecretSource {
        name: secret, key, ..
    } in secret_keys
    {
        let data = req.sources.secret(secret).and_then(|s| s.data.get(key));
        out.update(b"secret\0");
        out.update(&(secret.len() as u64).to_le_bytes());
        out.update(secret.as_bytes());
        out.update(&(key.len() as u64).to_le_bytes());
        out.update(key.as_bytes());
        match data {
            Some(bytes) => out.update(&Sha256::digest(bytes)),
            None => out.update(b"absent"),
        }
    }
}

/// `<prefix><hex>`: how a content hash is written in annotations and status
/// ([`KEYED_PREFIX`] or [`UNKEYED_PREFIX`]).
pub fn hash_label(prefix: &str, digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(prefix.len() + 2 * digest.len());
    hex.push_str(prefix);
    // By table rather than `{:02x}`: one formatter call per byte cost more than the rest of
    // writing the label (it runs for every render).
    for byte in digest {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::{HashKey, HashKeyError, KEYED_PREFIX, UNKEYED_PREFIX, hash_label};

    #[test]
    fn a_hash_label_is_the_digest_in_lowercase_hex() {
        assert_eq!(
            hash_label(UNKEYED_PREFIX, &[0x00, 0x0f, 0xa5, 0xff]),
            "sha256:000fa5ff"
        );
        let digest: Vec<u8> = (0..=255).collect();
        let expected: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hash_label(KEYED_PREFIX, &digest),
            format!("hmac-sha256:{expected}")
        );
    }

    #[test]
    fn a_hash_key_is_32_bytes_and_never_printed() {
        assert_eq!(
            HashKey::new(vec![7; 44]).map(|_| ()),
            Err(HashKeyError { found: 44 })
        );
        let key = HashKey::new(vec![0xab; 32]).expect("32 bytes");
        assert_eq!(format!("{key:?}"), "HashKey([32 bytes])");
        let id = key.id();
        assert_eq!(id.len(), 16);
        assert!(!id.contains("abab"), "{id}");
        assert_ne!(id, HashKey::new(vec![0xac; 32]).expect("32 bytes").id());
    }
}
