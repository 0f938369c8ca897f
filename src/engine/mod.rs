//! The engine: layered Kafka configuration, merged by one precedence, explained, validated and
//! rendered. It knows nothing of Kubernetes; the operator and the CLI fill a [`Request`].

pub mod arg_check;
pub mod args;
pub mod bootstrap;
pub mod catalogue;
mod checks;
pub mod evaluate;
pub mod globals;
pub mod key;
pub mod layers;
mod merge;
pub mod mirror_maker;
pub mod model;
pub mod outcome;
pub mod policy;
pub mod properties;
pub mod reference;
pub mod render;
pub mod safe_text;
pub mod secret;
pub mod sensitive;
pub mod sources;
pub mod spec;
pub mod suggest;
pub mod taint;
pub mod tool_cli;
pub mod validate;

pub use evaluate::evaluate;
pub use model::{Evaluation, Request, RoleView};
