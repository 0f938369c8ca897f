//! kafka-config-operator: layered Kafka configuration for clients and Kafka's tools, rendered by
//! one documented precedence into the files they run with.

pub mod engine;
