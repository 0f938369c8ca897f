//! kafka-config-operator: layered Kafka configuration for clients and Kafka's tools, rendered by
//! one documented precedence into the files they run with.

pub mod engine;
pub mod status;
pub mod manifest;
pub mod output;
pub mod operator;
pub mod cli;
