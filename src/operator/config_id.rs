//! One KafkaToolConfig, by namespace and name: the key of every per-config table of the operator.

use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use crate::operator::crd::KafkaToolConfig;

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConfigId {
    pub namespace: String,
    pub name: String,
}

impl ConfigId {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The id of a config object (its namespace empty if it has none).
    pub fn of(config: &KafkaToolConfig) -> Self {
        Self::new(config.namespace().unwrap_or_default(), config.name_any())
    }

    /// The reference the caches and the controller's queue use.
    pub fn object_ref(&self) -> ObjectRef<KafkaToolConfig> {
        ObjectRef::new(&self.name).within(&self.namespace)
    }
}
