//! Reads exactly the ConfigMaps and Secrets a spec references, with one `get` each: Secret
//! content is never cached by the controller, it lives only for the duration of a reconcile.
//! Their data become sources through the conversion the offline reader uses too
//! (`output::config_map_source`, `output::secret_source`).

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::GetParams;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use crate::engine::globals::GlobalDefaults;
use crate::engine::sources::{SourceKind, SourceRef, SourceSet};
use crate::engine::spec::ToolConfigSpec;
use crate::operator::authors::{self, DATA};
use crate::operator::context::{Context, Error};
use crate::operator::versions::Cached;
use crate::output::{config_map_source, secret_source};
use crate::status::Author;

/// The sources of one namespace and the resourceVersion each had when read (None: absent).
#[derive(Default)]
pub struct Fetched {
    pub sources: SourceSet,
    pub versions: BTreeMap<SourceRef, Option<String>>,
    /// Who last changed each one's data (from its managedFields; never its content).
    pub authors: BTreeMap<SourceRef, Author>,
}

/// The object at `resource_version` or newer, which the API server answers from its watch cache;
/// the latest (a quorum read from etcd) when no version is known. `None`: it does not exist.
pub async fn get_at_least<K>(
    api: &Api<K>,
    name: &str,
    resource_version: Option<&str>,
) -> Result<Option<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let params = resource_version.map(GetParams::at).unwrap_or_default();
    match api.get_with(name, &params).await {
        Ok(object) => Ok(Some(object)),
        Err(kube::Error::Api(status)) if status.is_not_found() => Ok(None),
        Err(error) => Err(error),
    }
}

/// Reads each source, at least at the version `cached` says it has (the watch caches saw that
/// version, so the API server's watch cache has it too and answers without etcd).
pub async fn fetch_sources(
    client: &Client,
    namespace: &str,
    refs: &[SourceRef],
    cached: impl Fn(&SourceRef) -> Option<String>,
) -> Result<Fetched, Error> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let mut fetched = Fetched::default();
    for r in refs {
        let at_least = cached(r);
        let at_least = at_least.as_deref();
        let version = match r.kind {
            SourceKind::ConfigMap => match get_at_least(&config_maps, &r.name, at_least).await? {
                Some(cm) => {
                    let version = cm.metadata.resource_version.clone();
                    if let Some(author) = authors::author("ConfigMap", &cm.metadata, DATA) {
                        fetched.authors.insert(r.clone(), author);
                    }
                    let data = config_map_source(cm).map_err(|source| Error::InvalidSource {
                        kind: "ConfigMap",
                        namespace: namespace.to_string(),
                        name: r.name.clone(),
                        source,
                    })?;
                    fetched.sources.config_maps.insert(r.name.clone(), data);
                    version
                }
                None => None,
            },
            SourceKind::Secret => match get_at_least(&secrets, &r.name, at_least).await? {
                Some(secret) => {
                    let version = secret.metadata.resource_version.clone();
                    if let Some(author) = authors::author("Secret", &secret.metadata, DATA) {
                        fetched.authors.insert(r.clone(), author);
                    }
                    fetched
                        .sources
                        .secrets
                        .insert(r.name.clone(), secret_source(secret));
                    version
                }
                None => None,
            },
        };
        fetched.versions.insert(r.clone(), version);
    }
    Ok(fetched)
}

/// What a reconcile renders from besides the spec: the referenced sources, the namespace's
/// labels and the GlobalClientDefaults, read in this order (the caches after the sources).
pub struct Dereferenced {
    pub fetched: Fetched,
    pub labels: BTreeMap<String, String>,
    pub globals: Vec<GlobalDefaults>,
}

/// The dereference step: reads each source the spec references at least at the version the
/// version cache holds, then the namespace's labels and the GlobalClientDefaults from the
/// caches. Errors: [`Error::Dereference`], [`Error::InvalidSource`].
pub async fn dereference(
    ctx: &Context,
    spec: &ToolConfigSpec,
    namespace: &str,
) -> Result<Dereferenced, Error> {
    let referenced = crate::engine::sources::referenced_sources(spec);
    let fetched = fetch_sources(&ctx.client, namespace, &referenced, |source| {
        match ctx
            .versions(source.kind, namespace)?
            .get(namespace, &source.name)
        {
            Cached::Present {
                resource_version, ..
            } => Some(resource_version.to_string()),
            Cached::Absent | Cached::Unknown => None,
        }
    })
    .await
    .map_err(|error| error.in_step(Error::Dereference))?;
    Ok(Dereferenced {
        fetched,
        labels: ctx.namespace_labels(namespace),
        globals: ctx.global_defaults(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;

    #[test]
    fn config_map_binary_data_is_readable_as_a_source() {
        let cm = ConfigMap {
            data: Some(BTreeMap::from([("a.properties".into(), "a=1".into())])),
            binary_data: Some(BTreeMap::from([(
                "b.properties".into(),
                ByteString(b"b=2".to_vec()),
            )])),
            ..ConfigMap::default()
        };
        let source = config_map_source(cm).expect("distinct keys");
        let data = &source.data;
        assert_eq!(data["a.properties"], b"a=1");
        assert_eq!(data["b.properties"], b"b=2");
    }

    #[test]
    fn secret_data_is_decoded_bytes() {
        let secret = Secret {
            data: Some(BTreeMap::from([(
                "password".into(),
                ByteString(b"s3cret".to_vec()),
            )])),
            ..Secret::default()
        };
        assert_eq!(secret_source(secret).data["password"], b"s3cret");
    }

    #[test]
    fn a_config_map_with_a_key_in_data_and_binary_data_is_refused_as_the_api_server_does() {
        let cm = ConfigMap {
            data: Some(BTreeMap::from([("a.properties".into(), "a=1".into())])),
            binary_data: Some(BTreeMap::from([(
                "a.properties".into(),
                ByteString(b"a=2".to_vec()),
            )])),
            ..ConfigMap::default()
        };
        assert_eq!(
            config_map_source(cm).map(|_| ()).map_err(|e| e.to_string()),
            Err(
                "data[a.properties]: Invalid value: \"a.properties\": duplicate of key present in binaryData"
                    .to_string()
            )
        );
    }

    #[test]
    fn string_data_of_a_secret_wins_over_data_as_the_api_server_stores_it() {
        // The API server never returns stringData; a hand-built object may carry both, and then
        // it means what it would mean once stored.
        let secret = Secret {
            data: Some(BTreeMap::from([(
                "password".into(),
                ByteString(b"from-data".to_vec()),
            )])),
            string_data: Some(BTreeMap::from([(
                "password".into(),
                "from-stringData".into(),
            )])),
            ..Secret::default()
        };
        assert_eq!(secret_source(secret).data["password"], b"from-stringData");
    }
}
