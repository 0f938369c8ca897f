//! Kafka's own truth, embedded at build time: its config definitions and its tools.

pub mod configs;
pub mod options;
pub mod tools;
