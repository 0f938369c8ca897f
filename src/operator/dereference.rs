//! Reads exactly the ConfigMaps and Secrets a spec references, with one `get` each: Secret
//! content is never cached by the controller, it lives only for the duration of a reconcile.

use std::collections::BTreeMap;
use std::fmt::Debug;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::GetParams;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

use crate::engine::sources::{SourceData, SourceKind, SourceRef, SourceSet};

/// The sources of one namespace and the resourceVersion each had when read (None: absent).
pub struct Fetched {
    pub sources: SourceSet,
    pub versions: BTreeMap<SourceRef, Option<String>>,
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
    let Some(version) = resource_version else {
        return api.get_opt(name).await;
    };
    match api.get_with(name, &GetParams::at(version)).await {
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
) -> Result<Fetched, kube::Error> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let mut fetched = Fetched {
        sources: SourceSet::default(),
        versions: BTreeMap::new(),
    };
    for r in refs {
        let at_least = cached(r);
        let at_least = at_least.as_deref();
        let version = match r.kind {
            SourceKind::ConfigMap => match get_at_least(&config_maps, &r.name, at_least).await? {
                Some(cm) => {
                    let version = cm.metadata.resource_version.clone();
                    fetched
                        .sources
                        .config_maps
                        .insert(r.name.clone(), config_map_data(cm));
                    version
                }
                None => None,
            },
            SourceKind::Secret => match get_at_least(&secrets, &r.name, at_least).await? {
                Some(secret) => {
                    let version = secret.metadata.resource_version.clone();
                    fetched
                        .sources
                        .secrets
                        .insert(r.name.clone(), secret_data(secret));
                    version
                }
                None => None,
            },
        };
        fetched.versions.insert(r.clone(), version);
    }
    Ok(fetched)
}

fn config_map_data(cm: ConfigMap) -> SourceData {
    let mut data: BTreeMap<String, Vec<u8>> = cm
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.into_bytes()))
        .collect();
    for (k, v) in cm.binary_data.unwrap_or_default() {
        data.insert(k, v.0);
    }
    SourceData { data }
}

fn secret_data(secret: Secret) -> SourceData {
    let mut data: BTreeMap<String, Vec<u8>> = secret
        .data
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, v.0))
        .collect();
    // stringData is write-only in the API, but a cached object built by hand may carry it.
    for (k, v) in secret.string_data.unwrap_or_default() {
        data.entry(k).or_insert_with(|| v.into_bytes());
    }
    SourceData { data }
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
        let source = config_map_data(cm);
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
        assert_eq!(secret_data(secret).data["password"], b"s3cret");
    }
}
