//! kafka-config-operator: layered Kafka configuration for clients and Kafka's tools, rendered by
//! one documented precedence into the files they run with.

pub mod cli;
pub mod engine;
pub mod manifest;
/// The controller (feature `operator`, on by default; without it the crate is the engine and the
/// offline CLI).
#[cfg(feature = "operator")]
pub mod operator;
pub mod output;
pub mod status;

// Declared here, not in main.rs, so that every binary of the crate built for musl (the operator
// the image ships, and the bench drivers that measure it) runs with the same allocator.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
